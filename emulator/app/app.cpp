#include "emulator/app/app.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "emulator/gateway/gateway.hpp"
#include "emulator/invoke/invoke_api.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::app {

namespace {
// API Gateway payload quota: 10 MB (shared spec §4.6 [APIGW-LIMITS]).
constexpr std::size_t gateway_max_payload_bytes = 10 * 1024 * 1024;
}  // namespace

struct app::gateway_state {
    explicit gateway_state(const config::stack& s) : routes(s) {}
    gateway::route_table routes;
    std::uint64_t next_request_index = 0;
    config::api_kind default_kind = config::api_kind::rest;
};

namespace {

// One request in flight through the gateway: answered by the function's result or by the
// integration timeout, whichever comes first.
struct pending_request : std::enable_shared_from_this<pending_request> {
    http::request req;
    http::responder respond;
    gateway::route_match match;
    std::string request_id;
    std::string method, path;
    uv_timer_t* timer = nullptr;
    std::chrono::steady_clock::time_point started;
    const coldbrew::clock* clock = nullptr;
    bool answered = false;

    ~pending_request() { close_timer(); }

    void close_timer() {
        if (!timer) return;
        uv_timer_stop(timer);
        timer->data = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(timer),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
        timer = nullptr;
    }

    void answer(http::response res) {
        if (answered) return;
        answered = true;
        close_timer();
        double ms = std::chrono::duration<double, std::milli>(clock->steady() - started).count();
        spdlog::info("{} {} {} {:.2f} ms", method, path, res.status, ms);
        respond(std::move(res));
    }
};

}  // namespace

app::app(const config::stack& stack, app_dependencies deps)
    : stack_(stack), deps_(std::move(deps)), supervisor_(deps_.loop, deps_.reaper) {
    pool_ctx_.loop = deps_.loop;
    pool_ctx_.clock = deps_.clock;
    pool_ctx_.rng = deps_.rng;
    pool_ctx_.supervisor = &supervisor_;
    pool_ctx_.logs = deps_.logs;
    pool_ctx_.settings = &stack_.settings;
    pool_ctx_.runtimes_dir = deps_.runtimes_dir;
    pool_ctx_.host_env = deps_.host_env;
    pool_ctx_.decisions = deps_.decisions;
    pool_ctx_.cpu = deps_.cpu;
    for (const auto& fn : stack_.functions) {
        const auto* model = deps_.models->find(fn.name);
        pools_.emplace(fn.name, std::make_unique<functions::function_pool>(
                                    fn, *model, deps_.models->account(), pool_ctx_));
    }
    events_ = std::make_unique<invoke::event_queue>(
        deps_.loop, *deps_.clock, stack_.settings.time_scale, stack_.settings.region,
        stack_.settings.account_id,
        [this](const std::string& function, functions::invocation inv) {
            if (auto* pool = find_pool(function)) pool->invoke(std::move(inv));
        });
    for (const auto& fn : stack_.functions) {
        invoke::async_function_config cfg;
        cfg.retry.maximum_retry_attempts = fn.async.maximum_retry_attempts;
        cfg.retry.maximum_event_age_ms = fn.async.maximum_event_age_s * 1000.0;
        cfg.on_success = fn.async.on_success;
        cfg.on_failure = fn.async.on_failure;
        events_->configure(fn.name, fn.function_name, std::move(cfg));
    }
    gateway_ = std::make_unique<gateway_state>(stack_);
    bool any_rest = false;
    for (const auto& a : stack_.apis) any_rest |= a.kind == config::api_kind::rest;
    gateway_->default_kind = any_rest || stack_.apis.empty() ? config::api_kind::rest
                                                             : config::api_kind::http;
    drain_timer_ = new uv_timer_t;
    uv_timer_init(deps_.loop, drain_timer_);
    drain_timer_->data = this;
}

app::~app() {
    if (gateway_server_) gateway_server_->close();
    if (invoke_server_) invoke_server_->close();
    events_.reset();
    pools_.clear();
    drain_timer_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(drain_timer_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

std::error_code app::start_gateway() {
    http::server_options opts;
    opts.body_limit = gateway_max_payload_bytes;
    auto kind = gateway_->default_kind;
    auto* state = gateway_.get();
    auto* rng = deps_.rng;
    opts.on_parse_failure = [kind, state, rng](http::parse_failure f) {
        auto id = models::uuid_v4(*rng, "gateway-request-id", "gateway", state->next_request_index++);
        if (f == http::parse_failure::body_too_large)
            return gateway::error_response(kind, gateway::gateway_error::request_too_large, id);
        http::response res;
        res.status = f == http::parse_failure::header_too_large ? 431 : 400;
        res.set("Content-Type", "application/json");
        res.body = R"({"message":"Bad Request"})";
        gateway::stamp_request_id(res, kind, id);
        return res;
    };
    gateway_server_ = std::make_unique<http::server>(
        deps_.loop,
        [this](http::request req, http::responder respond) {
            on_gateway_request(std::move(req), std::move(respond));
        },
        std::move(opts));
    return gateway_server_->listen(stack_.settings.host, stack_.settings.gateway_port);
}

int app::gateway_port() const { return gateway_server_ ? gateway_server_->port() : 0; }

std::error_code app::start_invoke() {
    http::server_options opts;
    // Above the 6 MB synchronous limit, so an oversized payload is read and answered with
    // Lambda's 413 rather than a dropped connection.
    opts.body_limit = 8 * 1024 * 1024;
    auto* rng = deps_.rng;
    auto* next_index = &next_invoke_index_;
    opts.on_parse_failure = [rng, next_index](http::parse_failure f) {
        return invoke::malformed_request(
            f == http::parse_failure::body_too_large,
            models::uuid_v4(*rng, "invoke-request-id", "invoke", (*next_index)++));
    };
    invoke_server_ = std::make_unique<http::server>(
        deps_.loop,
        [this](http::request req, http::responder respond) {
            on_invoke_request(std::move(req), std::move(respond));
        },
        std::move(opts));
    if (auto ec = invoke_server_->listen(stack_.settings.host, stack_.settings.invoke_port))
        return ec;
    // Handlers reach it on loopback whatever address it listens on.
    const std::string host = stack_.settings.host == "0.0.0.0" ? "127.0.0.1" : stack_.settings.host;
    pool_ctx_.invoke_endpoint = "http://" + host + ":" + std::to_string(invoke_server_->port());
    return {};
}

int app::invoke_port() const { return invoke_server_ ? invoke_server_->port() : 0; }

void app::start_provisioned() {
    for (auto& [_, p] : pools_) p->start_provisioned();
}

functions::function_pool* app::find_pool(std::string_view name) {
    // The logical id (what routes and coldbrew.yaml use) or the deployed FunctionName (what an
    // SDK caller passes).
    if (auto it = pools_.find(name); it != pools_.end()) return it->second.get();
    for (auto& [_, p] : pools_)
        if (p->function().function_name == name) return p.get();
    return nullptr;
}

std::vector<std::pair<std::string, invoke::event_queue::stats>> app::async_stats() const {
    std::vector<std::pair<std::string, invoke::event_queue::stats>> out;
    for (const auto& [name, _] : pools_) out.emplace_back(name, events_->counters(name));
    return out;
}

void app::on_invoke_request(http::request req, http::responder respond) {
    // One id per request, drawn before parsing: errors carry x-amzn-RequestId too, and an
    // invocation's awsRequestId is the id of the request that made it.
    const invoke::context ctx{
        stack_.settings.region, stack_.settings.account_id,
        models::uuid_v4(*deps_.rng, "invoke-request-id", "invoke", next_invoke_index_++)};
    const auto& id = ctx.request_id;
    auto parsed = invoke::parse_invoke(req, ctx);
    if (auto* res = std::get_if<http::response>(&parsed)) {
        respond(std::move(*res));
        return;
    }
    auto& call = std::get<invoke::invoke_request>(parsed);
    auto* pool = find_pool(call.function);
    if (!pool || !invoke::serves_qualifier(call)) {
        respond(invoke::function_not_found(call, ctx));
        return;
    }
    if (shutting_down_) {
        functions::invocation_result r;
        r.kind = functions::outcome::unavailable;
        r.request_id = id;
        r.message = "coldbrew is shutting down";
        respond(invoke::service_error_response(r));
        return;
    }
    switch (call.type) {
    case invoke::invocation_type::dry_run:
        respond(invoke::dry_run_ok(id));
        return;
    case invoke::invocation_type::event:
        events_->enqueue(pool->function().name, id, std::move(call.payload));
        respond(invoke::accepted_event(id));
        return;
    case invoke::invocation_type::request_response:
        break;
    }
    functions::invocation inv;
    inv.payload = std::move(call.payload);
    inv.client_context = call.client_context;
    inv.request_id = id;
    inv.capture_log = call.tail_log;
    inv.on_done = [respond = std::move(respond),
                   call = std::move(call)](functions::invocation_result r) mutable {
        respond(invoke::invocation_response(r, call));
    };
    pool->invoke(std::move(inv));
}

bool app::invoke(const std::string& function, functions::invocation inv) {
    auto it = pools_.find(function);
    if (it == pools_.end()) return false;
    it->second->invoke(std::move(inv));
    return true;
}

std::size_t app::in_flight() const {
    std::size_t n = 0;
    for (const auto& [_, p] : pools_) n += p->in_flight();
    return n;
}

std::vector<std::pair<std::string, functions::pool_stats>> app::stats() const {
    std::vector<std::pair<std::string, functions::pool_stats>> out;
    for (const auto& [name, p] : pools_) out.emplace_back(name, p->stats());
    return out;
}

void app::on_gateway_request(http::request req, http::responder respond) {
    auto& gw = *gateway_;
    auto p = std::make_shared<pending_request>();
    p->clock = deps_.clock;
    p->started = deps_.clock->steady();
    p->request_id = models::uuid_v4(*deps_.rng, "gateway-request-id", "gateway", gw.next_request_index);
    p->method = req.method;
    p->path = std::string(req.path());
    p->respond = std::move(respond);

    auto match = gw.routes.match(req.method, req.path());
    if (!match) {
        ++gw.next_request_index;
        p->answer(gateway::error_response(gw.routes.miss_kind(req.path()),
                                          gateway::gateway_error::missing_route, p->request_id));
        return;
    }
    auto kind = match->api->kind;

    gateway::request_info info;
    info.request_id = p->request_id;
    // On AWS extendedRequestId is the value of the x-amz-apigw-id response header.
    info.extended_request_id = gateway::apigw_id_for(p->request_id);
    info.epoch_ms = deps_.clock->epoch_ms();
    info.account_id = stack_.settings.account_id;
    info.source_ip = req.remote_ip;
    if (auto t = req.header("X-Amzn-Trace-Id")) {
        info.trace_id = std::string(*t);
    } else {
        char epoch[16];
        std::snprintf(epoch, sizeof(epoch), "%08llx",
                      static_cast<unsigned long long>(info.epoch_ms / 1000));
        info.trace_id = std::string("Root=1-") + epoch + "-" +
                        models::random_hex(*deps_.rng, "gateway-trace-id", "gateway",
                                           gw.next_request_index, 24);
    }
    ++gw.next_request_index;

    std::string event = match->route->payload_format_version == "1.0"
                            ? gateway::build_event_v1(req, *match, info)
                            : gateway::build_event_v2(req, *match, info);

    auto pool_it = pools_.find(match->route->function);
    if (pool_it == pools_.end() || shutting_down_) {
        p->answer(gateway::error_response(kind, gateway::gateway_error::lambda_rejected,
                                          p->request_id));
        return;
    }

    p->req = std::move(req);
    p->match = std::move(*match);

    // Integration timeout: REST 29 s → 504, HTTP API 30 s → 503 (spec §4.5, §6.14). The
    // function keeps running to its own timeout, as on AWS.
    p->timer = new uv_timer_t;
    uv_timer_init(deps_.loop, p->timer);
    // The invocation's callback owns the request while the timer runs; the request's
    // destructor clears this pointer.
    p->timer->data = p.get();
    uv_timer_start(
        p->timer,
        [](uv_timer_t* t) {
            auto* self = static_cast<pending_request*>(t->data);
            if (!self) return;
            self->answer(gateway::error_response(self->match.api->kind,
                                                 gateway::gateway_error::integration_timeout,
                                                 self->request_id));
        },
        static_cast<std::uint64_t>(std::max<std::int64_t>(1, p->match.route->integration_timeout_ms)),
        0);

    functions::invocation inv;
    inv.payload = std::move(event);
    inv.trace_id = info.trace_id + ";Sampled=0";
    if (info.trace_id.find("Sampled=") != std::string::npos) inv.trace_id = info.trace_id;
    inv.on_done = [p](functions::invocation_result r) {
        auto kind = p->match.api->kind;
        switch (r.kind) {
        case functions::outcome::success: {
            std::string why;
            auto res = gateway::map_response(r.payload, p->req, p->match, p->request_id, &why);
            // Worded as API Gateway's execution log says it.
            if (!why.empty())
                spdlog::warn("{} {}: Execution failed due to configuration error: Malformed "
                             "Lambda proxy response ({})",
                             p->method, p->path, why);
            p->answer(std::move(res));
            break;
        }
        case functions::outcome::function_error:
            p->answer(gateway::error_response(kind, gateway::gateway_error::integration_failure,
                                              p->request_id));
            break;
        case functions::outcome::too_large:
            p->answer(gateway::error_response(kind, gateway::gateway_error::request_too_large,
                                              p->request_id));
            break;
        case functions::outcome::throttled:
        case functions::outcome::unavailable:
            p->answer(gateway::error_response(kind, gateway::gateway_error::lambda_rejected,
                                              p->request_id));
            break;
        }
    };
    pool_it->second->invoke(std::move(inv));
}

void app::shutdown(std::uint64_t drain_ms, std::function<void()> done) {
    if (shutting_down_) {
        for (auto& [_, p] : pools_) p->shutdown();
        return;
    }
    shutting_down_ = true;
    on_shutdown_done_ = std::move(done);
    if (gateway_server_) gateway_server_->stop_accepting();
    if (invoke_server_) invoke_server_->stop_accepting();
    // Events waiting for a retry go to their failure destination now; attempts in flight
    // finish (or fail) during the drain and are recorded by the queue.
    events_->shutdown();
    drain_deadline_ms_ = drain_ms;
    // Poll every 10 ms until nothing is in flight or the drain period is over.
    uv_timer_start(
        drain_timer_,
        [](uv_timer_t* t) {
            auto* self = static_cast<app*>(t->data);
            if (!self) return;
            bool expired = self->drain_deadline_ms_ < 10;
            self->drain_deadline_ms_ = expired ? 0 : self->drain_deadline_ms_ - 10;
            if (self->in_flight() > 0 && !expired) return;
            uv_timer_stop(t);
            for (auto& [_, p] : self->pools_) p->shutdown();
            if (auto done = std::move(self->on_shutdown_done_)) done();
        },
        0, 10);
}

}  // namespace coldbrew::app
