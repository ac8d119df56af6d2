#include "emulator/app/app.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include <list>

#include <nlohmann/json.hpp>

#include "emulator/config/fault_rules.hpp"
#include "emulator/functions/service_errors.hpp"
#include "emulator/gateway/gateway.hpp"
#include "emulator/invoke/invoke_api.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::app {

namespace {
// API Gateway payload quota: 10 MB (shared spec §4.6 [APIGW-LIMITS]).
constexpr std::size_t gateway_max_payload_bytes = 10 * 1024 * 1024;

namespace mf = models::faults;
using action = mf::plan::action;

// A one-shot loop timer owned by a request; closing is deferred to libuv, so it may be
// destroyed from inside its own callback.
class one_shot {
public:
    explicit one_shot(uv_loop_t* loop) : timer_(new uv_timer_t) {
        uv_timer_init(loop, timer_);
        timer_->data = this;
    }
    ~one_shot() {
        uv_timer_stop(timer_);
        timer_->data = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(timer_),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }
    one_shot(const one_shot&) = delete;
    one_shot& operator=(const one_shot&) = delete;

    void start(double ms, std::function<void()> fn) {
        fn_ = std::move(fn);
        uv_timer_start(
            timer_,
            [](uv_timer_t* t) {
                auto* self = static_cast<one_shot*>(t->data);
                if (!self) return;
                auto fn = std::move(self->fn_);  // may destroy *self
                if (fn) fn();
            },
            // A huge draw (a delay's tail, 1e300 ms) would overflow the cast: cap at ~31 years.
            static_cast<std::uint64_t>(std::clamp(ms, 0.0, 1e12) + 0.5), 0);
    }
    void stop() {
        uv_timer_stop(timer_);
        fn_ = nullptr;
    }

private:
    uv_timer_t* timer_;
    std::function<void()> fn_;
};

// The header that names an injected fault on any response the client gets because of it.
constexpr const char* fault_header = "X-Coldbrew-Fault";

std::string fault_header_value(const mf::decision& d) {
    return d.kind + "; rule=" + d.rule + "; action=" + std::string(mf::to_string(d.p.act));
}

// A front-end request's trace: the X-Ray header's root is the trace id (a header without a
// usable root gets one drawn for the request) and its Parent the root span's parent.
std::shared_ptr<telemetry::request_trace> start_trace(
    const app_dependencies& d, double time_scale, std::string_view xray,
    const std::string& request_id, std::string name, std::chrono::steady_clock::time_point started) {
    const auto h = telemetry::parse_xray_header(xray);
    telemetry::request_trace::params tp;
    const auto id = telemetry::otlp_trace_id(h.root);
    tp.trace_id = id ? *id : models::random_hex(*d.rng, "trace-id", request_id, 0, 32);
    if (!telemetry::is_hex_id(tp.trace_id, 32)) tp.trace_id.back() = '1';
    if (id && telemetry::is_hex_id(h.parent, 16)) tp.parent_span_id = h.parent;
    tp.id_key = request_id;
    tp.name = std::move(name);
    tp.start = started;
    tp.time_scale = time_scale;
    return std::make_shared<telemetry::request_trace>(*d.clock, *d.rng, d.traces, std::move(tp));
}

// The fault decision on its span: which rule fired and what it planned.
void trace_decision(telemetry::request_trace* t, const mf::decision& d) {
    if (!t || d.rule.empty()) return;
    t->annotate("coldbrew.fault.rule", d.rule);
    t->annotate("coldbrew.fault.kind", d.kind);
    t->annotate("coldbrew.fault.action", std::string(mf::to_string(d.p.act)));
    if (d.overflow) t->annotate("coldbrew.fault.overflow", true);
}
}  // namespace

struct app::gateway_state {
    explicit gateway_state(const config::stack& s) : routes(s) {}
    gateway::route_table routes;
    std::uint64_t next_request_index = 0;
    config::api_kind default_kind = config::api_kind::rest;
};

// One client request as the telemetry sees it. It wraps the server's responder, so every
// way a request of the gateway or the Invoke API can end passes through it: an answer (the
// record is written when its last byte was handed to the socket, or when the connection
// closed first), a reset, or the request dropped unanswered. The front end only annotates it
// (route, function, outcome, fault, cold start); the record is written exactly once.
struct exchange final : http::responder::target, std::enable_shared_from_this<exchange> {
    http::responder inner;
    std::weak_ptr<telemetry::request_stats> stats;  // expired: the app is gone, nothing to do
    const coldbrew::clock* clock = nullptr;
    std::chrono::steady_clock::time_point origin;   // the app's start: start_ms counts from it
    std::chrono::steady_clock::time_point started;  // receipt
    telemetry::request_record rec;
    bool used = false;
    bool recorded = false;

    ~exchange() override { finish(); }  // dropped unanswered: no status

    // The outcome the front end counted (faulted_request::count); served unless told.
    void ended(telemetry::request_end e, const std::string& fault_kind = {}) {
        rec.end = e;
        rec.fault_kind = fault_kind;
    }

    void send(http::response res, const http::send_options& opts) override {
        if (std::exchange(used, true)) return;
        rec.status = res.status;
        // The server calls on_finished once the answer is handed over, or drops it unused when
        // the connection is already gone; either way the record is written, once.
        struct finisher {
            std::shared_ptr<exchange> ex;
            bool sent = false;
            ~finisher() {
                if (sent) return;
                ex->rec.status = 0;
                ex->finish();
            }
        };
        auto f = std::make_shared<finisher>();  // in place: a temporary's end would record
        f->ex = shared_from_this();
        http::send_options o;
        o.bytes_per_s = opts.bytes_per_s;
        o.on_finished = [f, then = opts.on_finished] {
            f->sent = true;
            if (then) then();
            f->ex->finish();
        };
        inner.send(std::move(res), o);
    }
    void reset() override {
        if (std::exchange(used, true)) return;
        inner.reset();
        finish();
    }
    bool alive() const override { return !used && inner.alive(); }

    void finish() noexcept {
        if (std::exchange(recorded, true)) return;
        auto s = stats.lock();
        if (!s || !clock) return;
        try {
            const auto now = clock->steady();
            rec.start_ms = std::chrono::duration<double, std::milli>(started - origin).count();
            rec.latency_ms = std::chrono::duration<double, std::milli>(now - started).count();
            // Nothing else explains a request without an answer: its client left first.
            if (rec.status == 0 && rec.end == telemetry::request_end::served)
                rec.end = telemetry::request_end::client_gone;
            s->record(rec);
        } catch (...) {
            // Telemetry never takes a request down (this may run in a destructor).
        }
    }
};

namespace {
// A request the server cannot parse is answered by the server itself (on_parse_failure); it
// is recorded here, with that answer's status and no latency (it is answered as it is read).
std::function<http::response(http::parse_failure)> recording_parse_failures(
    const char* front, std::function<http::response(http::parse_failure)> answer,
    std::weak_ptr<telemetry::request_stats> stats, const coldbrew::clock* clock,
    std::chrono::steady_clock::time_point origin) {
    return [=, answer = std::move(answer)](http::parse_failure f) {
        auto res = answer(f);
        if (auto s = stats.lock()) {
            telemetry::request_record r;
            r.front = front;
            r.route = "(malformed)";
            r.status = res.status;
            r.start_ms = std::chrono::duration<double, std::milli>(clock->steady() - origin).count();
            s->record(r);
        }
        return res;
    };
}
}  // namespace

// What every request a fault may touch carries: its answer, its fault decision and the
// counters it ends in. The fault ends (decider::finished) when the client has its answer (a
// slow answer: all of it), its connection is reset, or it went away; exactly one outcome is
// counted per request.
struct faulted_request : std::enable_shared_from_this<faulted_request> {
    http::responder respond;
    std::unique_ptr<one_shot> timer;  // the integration timeout, or a phantom's wait
    std::unique_ptr<one_shot> delay;  // an injected delay before the integration
    bool answered = false;
    bool held = false;    // deliberately unanswered (client_sees: hang)
    bool missed = false;  // the plan did not happen (the handler answered before the kill)
    mf::decision fault;
    mf::decider* decider = nullptr;
    admin::request_outcomes* outcomes = nullptr;
    // The request's trace (null: not traced) and the front end naming its phases.
    std::shared_ptr<telemetry::request_trace> trace;
    const char* front = "gateway";
    std::shared_ptr<exchange> ex;  // the request's record; `respond` answers through it

    virtual ~faulted_request() = default;

    // The answer is going out: its status on the root span, and the sending phase(s), which
    // seal the trace against an invocation that outlives the answer.
    void trace_send(const http::response& res, bool shaped) {
        if (!trace) return;
        trace->annotate_root("http.response.status_code", static_cast<std::int64_t>(res.status));
        if (res.status >= 500)
            trace->set_status(telemetry::status_code::error, "HTTP " + std::to_string(res.status));
        if (!shaped) {
            trace->begin_final(std::string(front) + ".send");
            return;
        }
        trace->begin_final("network.shaping");
        trace->annotate("coldbrew.direction", std::string("to_client"));
        trace->annotate("coldbrew.bytes_per_s", fault.p.bytes_per_s);
    }
    void trace_sent(bool shaped) {
        if (!trace) return;
        if (shaped) trace->begin_final(std::string(front) + ".send");
        trace->finish();
    }
    void trace_ended(const char* why) {
        if (!trace) return;
        if (!trace->sealed()) trace->set_status(telemetry::status_code::error, why);
        trace->finish();
    }

    // A rule fired for this request (a zero delay included) and its effect happened.
    bool injected() const { return !fault.rule.empty() && !fault.overflow && !missed; }

    void end_fault() {
        if (decider && fault.id) decider->finished(std::exchange(fault.id, 0));
    }

    void count(bool handler_caused) {
        if (trace)
            trace->annotate_root("coldbrew.outcome", std::string(injected()       ? "injected_fault"
                                                                 : handler_caused ? "handler_error"
                                                                                  : "served"));
        if (ex)
            ex->ended(injected()       ? telemetry::request_end::injected_fault
                      : handler_caused ? telemetry::request_end::handler_error
                                       : telemetry::request_end::served,
                      injected() ? fault.kind : std::string());
        if (!outcomes) return;
        if (injected())
            ++outcomes->injected_fault;
        else
            ++(handler_caused ? outcomes->handler_error : outcomes->served);
    }

    // `handler_caused`: the answer reports the handler's failure (error, crash, timeout,
    // malformed response) rather than a result or the front end's own refusal.
    void send(http::response res, bool handler_caused) {
        if (answered) return;
        answered = true;
        timer.reset();
        delay.reset();
        count(handler_caused);
        if (injected()) res.set(fault_header, fault_header_value(fault));
        http::send_options opts;
        const bool shaped = fault.p.act == action::slow_response && injected();
        trace_send(res, shaped);
        if (shaped) {
            // The fault lasts while the answer trickles.
            opts.bytes_per_s = fault.p.bytes_per_s;
            opts.on_finished = [self = shared_from_this()] {
                self->end_fault();
                self->trace_sent(true);
            };
        } else {
            end_fault();
        }
        respond.send(std::move(res), opts);
        if (!shaped) trace_sent(false);
    }

    // The front end's answer; the gateway's also writes its access-log line.
    virtual void answer(http::response res, bool handler_caused = false) {
        send(std::move(res), handler_caused);
    }

    virtual void reset_connection() {
        if (answered) return;
        answered = true;
        timer.reset();
        delay.reset();
        count(false);
        end_fault();
        respond.reset();
        trace_ended("connection reset");
    }

    // Holds the request unanswered (client_sees: hang) until its client leaves.
    void hold() {
        if (answered) return;
        answered = held = true;
        count(false);
    }

    // The client went away, or coldbrew is stopping: nothing more happens to this request.
    // Waits are cancelled (which frees the request), and the connection is closed.
    void abandon() {
        if (!answered) {
            answered = true;
            count(false);
        }
        timer.reset();
        delay.reset();
        end_fault();
        trace_ended(held ? "held without an answer"
                         : "abandoned: client gone or coldbrew stopping");
        held = false;
        respond.reset();
    }
};

// Requests an injected fault keeps waiting (a delay, a phantom's timeout, a hang): checked
// every 250 ms, so one whose client left is abandoned at once (its fault ends and its socket
// closes) instead of holding a slot of max_active_faults and a file descriptor; at shutdown
// every one is abandoned so nothing outlives the drain.
struct app::fault_state {
    explicit fault_state(uv_loop_t* loop) : sweep(new uv_timer_t) {
        uv_timer_init(loop, sweep);
        sweep->data = this;
    }
    ~fault_state() {
        uv_timer_stop(sweep);
        sweep->data = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(sweep),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }
    void watch(std::shared_ptr<faulted_request> r) {
        watched.push_back(std::move(r));
        if (uv_is_active(reinterpret_cast<uv_handle_t*>(sweep))) return;
        uv_timer_start(
            sweep,
            [](uv_timer_t* t) {
                auto* self = static_cast<fault_state*>(t->data);
                if (!self) return;
                self->watched.remove_if([](const std::shared_ptr<faulted_request>& r) {
                    if (r->answered && !r->held) return true;  // done; its answer is out
                    if (r->respond.alive()) return false;
                    r->abandon();
                    return true;
                });
                if (self->watched.empty()) uv_timer_stop(t);
            },
            250, 250);
    }
    void abandon_all() {
        auto all = std::move(watched);
        watched.clear();
        for (auto& r : all) r->abandon();
        uv_timer_stop(sweep);
    }
    uv_timer_t* sweep;
    std::list<std::shared_ptr<faulted_request>> watched;
};

// One request in flight through the gateway: answered by the function's result or by the
// integration timeout, whichever comes first.
struct pending_request : faulted_request {
    http::request req;
    gateway::route_match match;
    std::string request_id;
    std::string method, path;
    std::chrono::steady_clock::time_point started;
    const coldbrew::clock* clock = nullptr;

    void answer(http::response res, bool handler_caused = false) override {
        if (answered) return;
        double ms = std::chrono::duration<double, std::milli>(clock->steady() - started).count();
        spdlog::info("{} {} {} {:.2f} ms{}", method, path, res.status, ms,
                     injected() ? "  (fault " + fault.rule + ")" : std::string());
        send(std::move(res), handler_caused);
    }

    void reset_connection() override {
        if (answered) return;
        spdlog::info("{} {} connection reset  (fault {})", method, path, fault.rule);
        faulted_request::reset_connection();
    }
};

app::app(const config::stack& stack, app_dependencies deps)
    : stack_(stack), deps_(std::move(deps)), supervisor_(deps_.loop, deps_.reaper) {
    if (!deps_.scheduler) throw std::invalid_argument("app: no scheduler");
    pool_ctx_.loop = deps_.loop;
    pool_ctx_.clock = deps_.clock;
    pool_ctx_.scheduler = deps_.scheduler;
    pool_ctx_.rng = deps_.rng;
    pool_ctx_.supervisor = &supervisor_;
    pool_ctx_.logs = deps_.logs;
    pool_ctx_.settings = &stack_.settings;
    pool_ctx_.runtimes_dir = deps_.runtimes_dir;
    pool_ctx_.host_env = deps_.host_env;
    pool_ctx_.decisions = deps_.decisions;
    pool_ctx_.cpu = deps_.cpu;
    pool_ctx_.on_answered = [stats = request_stats_](const config::function& fn,
                                                     const functions::invocation_result& r) {
        if (r.init_duration_ms) stats->record_init(fn.name, *r.init_duration_ms);
    };
    pool_ctx_.bandwidth = &deps_.models->profile().bandwidth;
    if (!stack_.settings.dependencies.empty()) {
        proxy::proxy_context pc;
        pc.loop = deps_.loop;
        pc.scheduler = deps_.scheduler;
        pc.rng = deps_.rng;
        pc.faults = deps_.faults;
        pc.decisions = deps_.decisions;
        pc.host = "127.0.0.1";  // handlers run here; the proxies never face the network
        proxies_ = std::make_unique<proxy::proxy_set>(stack_.settings.dependencies, std::move(pc));
        pool_ctx_.proxies = proxies_.get();
    }
    for (const auto& fn : stack_.functions) {
        const auto* model = deps_.models->find(fn.name);
        pools_.emplace(fn.name, std::make_unique<functions::function_pool>(
                                    fn, *model, deps_.models->account(), pool_ctx_));
    }
    events_ = std::make_unique<invoke::event_queue>(
        *deps_.scheduler, *deps_.clock, stack_.settings.region, stack_.settings.account_id,
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
    built_at_ = deps_.clock->steady();
    faults_ = std::make_unique<fault_state>(deps_.loop);

    admin_ctx_.faults = deps_.faults;
    admin_ctx_.registry = deps_.fault_registry;
    admin_ctx_.configured_rules = &deps_.configured_rules;
    admin_ctx_.configured_max_active = stack_.settings.faults.max_active_faults;
    admin_ctx_.decisions = deps_.decisions;
    admin_ctx_.rule_warnings = [this](const mf::rule& r) { return config::rule_warnings(stack_, r); };
    admin_ctx_.now_ms = [this] { return fault_clock_ms(); };
    admin_ctx_.request_counters = [this] {
        return nlohmann::json{{"gateway", outcomes_gateway_.to_json()},
                              {"invoke", outcomes_invoke_.to_json()}};
    };
    admin_ctx_.function_counters = [this] {
        auto out = nlohmann::json::object();
        for (const auto& [name, st] : stats()) {
            out[name] = {{"invocations", st.invocations},   {"cold_starts", st.cold_starts},
                         {"throttles", st.throttles},       {"waits", st.waits},
                         {"function_errors", st.function_errors}, {"timeouts", st.timeouts},
                         {"evictions", st.evictions},       {"provisioned", st.provisioned},
                         {"environments", st.environments}, {"busy", st.busy}};
        }
        return out;
    };
    admin_ctx_.reset_request_counters = [this] {
        outcomes_gateway_ = {};
        outcomes_invoke_ = {};
        request_stats_->reset();
        if (proxies_) proxies_->reset_counters();
    };
    if (proxies_) admin_ctx_.proxy_counters = [this] { return proxies_->to_json(); };
    admin_ctx_.request_stats = request_stats_.get();
}

std::error_code app::start_dependencies(std::string& failed) {
    if (!proxies_) return {};
    return proxies_->start(failed);
}

double app::fault_clock_ms() const {
    return std::chrono::duration<double, std::milli>(deps_.clock->steady() - built_at_).count();
}

void app::record_decision(const mf::decision& d) {
    if (!d.log_line.empty() && deps_.decisions) deps_.decisions->write(d.log_line);
}

app::~app() {
    if (gateway_server_) gateway_server_->close();
    if (invoke_server_) invoke_server_->close();
    if (admin_server_) admin_server_->close();
    faults_->abandon_all();
    events_.reset();
    pools_.clear();
    drain_timer_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(drain_timer_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

std::shared_ptr<exchange> app::track(const char* front, const http::request& req,
                                     http::responder respond) {
    auto ex = std::make_shared<exchange>();
    ex->inner = std::move(respond);
    ex->stats = request_stats_;
    ex->clock = deps_.clock;
    ex->origin = built_at_;
    ex->started = deps_.clock->steady();
    ex->rec.front = front;
    ex->rec.method = req.method;
    // Until the front end finds more. Never the client's own path or name: label values
    // stay bounded by the stack.
    ex->rec.route = std::string_view(front) == "gateway" ? "(no route)" : "(malformed)";
    return ex;
}

std::error_code app::start_gateway() {
    http::server_options opts;
    opts.body_limit = gateway_max_payload_bytes;
    auto kind = gateway_->default_kind;
    auto* state = gateway_.get();
    auto* rng = deps_.rng;
    opts.on_parse_failure = [kind, state, rng, this](http::parse_failure f) {
        ++outcomes_gateway_.served;  // the gateway's own 400/413/431
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
    opts.on_parse_failure = recording_parse_failures("gateway", std::move(opts.on_parse_failure),
                                                     request_stats_, deps_.clock, built_at_);
    gateway_server_ = std::make_unique<http::server>(
        deps_.loop,
        [this](http::request req, http::responder respond) {
            auto ex = track("gateway", req, std::move(respond));
            // No exception crosses a loop callback: a bug answers 500 and is counted.
            http::responder fallback(ex);  // copies share one answer
            try {
                on_gateway_request(std::move(req), http::responder(ex), ex);
            } catch (const std::exception& e) {
                ++outcomes_gateway_.emulator_error;
                ex->ended(telemetry::request_end::emulator_error);
                spdlog::error("gateway: internal error: {}", e.what());
                fallback(gateway::error_response(gateway_->default_kind,
                                                 gateway::gateway_error::lambda_rejected, ""));
            }
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
    opts.on_parse_failure = [rng, next_index, this](http::parse_failure f) {
        ++outcomes_invoke_.served;  // Lambda's own 400/413
        return invoke::malformed_request(
            f == http::parse_failure::body_too_large,
            models::uuid_v4(*rng, "invoke-request-id", "invoke", (*next_index)++));
    };
    opts.on_parse_failure = recording_parse_failures("invoke", std::move(opts.on_parse_failure),
                                                     request_stats_, deps_.clock, built_at_);
    invoke_server_ = std::make_unique<http::server>(
        deps_.loop,
        [this](http::request req, http::responder respond) {
            auto ex = track("invoke", req, std::move(respond));
            http::responder fallback(ex);  // copies share one answer
            try {
                on_invoke_request(std::move(req), http::responder(ex), ex);
            } catch (const std::exception& e) {
                ++outcomes_invoke_.emulator_error;
                ex->ended(telemetry::request_end::emulator_error);
                spdlog::error("invoke API: internal error: {}", e.what());
                fallback(invoke::to_response(functions::service_exception("Internal error."), ""));
            }
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

std::error_code app::start_admin() {
    if (!deps_.faults || !deps_.fault_registry) return std::make_error_code(std::errc::invalid_argument);
    http::server_options opts;
    opts.body_limit = 1024 * 1024;  // rules, a seed: small documents
    opts.on_parse_failure = [](http::parse_failure f) {
        http::response res;
        res.status = f == http::parse_failure::body_too_large     ? 413
                     : f == http::parse_failure::header_too_large ? 431
                                                                  : 400;
        res.set("Content-Type", "application/json");
        res.body = f == http::parse_failure::body_too_large
                       ? "{\"message\":\"request body over 1 MiB\"}\n"
                       : "{\"message\":\"malformed HTTP request\"}\n";
        return res;
    };
    admin_server_ = std::make_unique<http::server>(
        deps_.loop,
        [this](http::request req, http::responder respond) {
            respond(admin::handle(req, admin_ctx_));
        },
        std::move(opts));
    return admin_server_->listen(stack_.settings.host, stack_.settings.admin_port);
}

int app::admin_port() const { return admin_server_ ? admin_server_->port() : 0; }

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

void app::on_invoke_request(http::request req, http::responder respond,
                            const std::shared_ptr<exchange>& ex) {
    const auto started = deps_.clock->steady();
    // One id per request, drawn before parsing: errors carry x-amzn-RequestId too, and an
    // invocation's awsRequestId is the id of the request that made it.
    const invoke::context ctx{
        stack_.settings.region, stack_.settings.account_id,
        models::uuid_v4(*deps_.rng, "invoke-request-id", "invoke", next_invoke_index_++)};
    const auto& id = ctx.request_id;
    auto parsed = invoke::parse_invoke(req, ctx);
    if (auto* res = std::get_if<http::response>(&parsed)) {
        ++outcomes_invoke_.served;  // Lambda's own answer to a malformed call
        respond(std::move(*res));
        return;
    }
    auto& call = std::get<invoke::invoke_request>(parsed);
    auto* pool = find_pool(call.function);
    if (!pool || !invoke::serves_qualifier(call)) {
        ++outcomes_invoke_.served;
        ex->rec.route = "(no function)";
        respond(invoke::function_not_found(call, ctx));
        return;
    }
    ex->rec.route = "Invoke " + pool->function().name;  // the route key fault rules use
    ex->rec.function = pool->function().name;
    if (shutting_down_) {
        ++outcomes_invoke_.served;
        functions::invocation_result r;
        r.kind = functions::outcome::unavailable;
        r.request_id = id;
        r.message = "coldbrew is shutting down";
        respond(invoke::service_error_response(r));
        return;
    }
    switch (call.type) {
    case invoke::invocation_type::dry_run:
        ++outcomes_invoke_.served;
        respond(invoke::dry_run_ok(id));
        return;
    case invoke::invocation_type::event:
        // Asynchronous invocations are accepted and queued; faults apply to synchronous
        // invocations, where a client waits for the answer.
        ++outcomes_invoke_.served;
        events_->enqueue(pool->function().name, id, std::move(call.payload));
        respond(invoke::accepted_event(id));
        return;
    case invoke::invocation_type::request_response:
        break;
    }
    invoke_sync(*pool, std::move(call), ctx, std::move(respond),
                std::string(req.header("X-Amzn-Trace-Id").value_or("")), started, ex);
}

namespace {

// A synchronous Invoke in flight, with its fault decision.
struct pending_invoke : faulted_request {
    invoke::invoke_request call;
    std::string request_id;
};

}  // namespace

void app::invoke_sync(functions::function_pool& pool, invoke::invoke_request call,
                      const invoke::context& ctx, http::responder respond,
                      std::string trace_header, std::chrono::steady_clock::time_point started,
                      std::shared_ptr<exchange> ex) {
    auto p = std::make_shared<pending_invoke>();
    p->request_id = ctx.request_id;
    p->respond = std::move(respond);
    p->ex = std::move(ex);
    p->decider = deps_.faults;
    p->outcomes = &outcomes_invoke_;
    p->front = "invoke";
    const auto& fn = pool.function();
    // The caller's X-Amzn-Trace-Id reaches the function, as on Lambda. Without one the
    // invocation gets a root of its own, its Parent the Invoke's root span (a draw that does
    // not depend on whether traces are written).
    std::string root_header = trace_header;
    if (root_header.empty()) {
        char epoch[16];
        std::snprintf(epoch, sizeof(epoch), "%08llx",
                      static_cast<unsigned long long>(deps_.clock->epoch_ms() / 1000));
        root_header = std::string("Root=1-") + epoch + "-" +
                      models::random_hex(*deps_.rng, "invoke-trace-id", p->request_id, 0, 24);
    }
    if (deps_.traces) {
        p->trace = start_trace(deps_, stack_.settings.time_scale, root_header, p->request_id,
                               "Invoke " + fn.name, started);
        p->trace->begin("invoke.receive");
        p->trace->annotate_root("http.request.method", std::string("POST"));
        p->trace->annotate_root("url.path",
                                "/2015-03-31/functions/" + call.as_given + "/invocations");
        p->trace->annotate_root("faas.invoked_name", fn.name);
        p->trace->annotate_root("aws.request_id", p->request_id);
        p->trace->begin("fault.decision");
    }
    if (deps_.faults) {
        const std::string route_key = "Invoke " + fn.name;
        mf::request_facts facts;
        facts.where = mf::front::invoke;
        facts.function = fn.name;
        facts.function_name = fn.function_name;
        facts.route = route_key;
        facts.method = "POST";
        facts.path = "/2015-03-31/functions/" + call.as_given + "/invocations";
        p->fault = deps_.faults->decide(facts, fault_clock_ms());
        record_decision(p->fault);
        trace_decision(p->trace.get(), p->fault);
    }
    functions::invocation inv;
    inv.payload = std::move(call.payload);
    inv.client_context = call.client_context;
    inv.request_id = p->request_id;
    inv.capture_log = call.tail_log;
    if (trace_header.empty())
        inv.trace_id = root_header + ";Parent=" +
                       telemetry::draw_span_id(*deps_.rng, p->request_id, 0) + ";Sampled=0";
    else if (trace_header.find("Sampled=") == std::string::npos)
        inv.trace_id = trace_header + ";Sampled=0";
    else
        inv.trace_id = trace_header;
    p->call = std::move(call);

    auto run = [this, p, &pool, inv = std::move(inv), timeout_s = fn.timeout_s]() mutable {
        const auto& plan = p->fault.p;
        const double scale = stack_.settings.time_scale;
        switch (plan.act) {
        case action::phantom_before:
        case action::phantom_after:
            // Lambda's Invoke has no integration timeout: a lost answer holds the connection
            // for as long as the function could have run (its timeout, scaled), then answers
            // Lambda's 500 ServiceException, which SDKs retry. What AWS sends here is not
            // documented; this is coldbrew's choice.
            lose(p, timeout_s * 1000.0 * scale, [p] {
                return invoke::to_response(
                    functions::service_exception("The invocation's response was lost."),
                    p->request_id);
            }, pool, std::move(inv));
            return;
        case action::gateway_error: {
            if (plan.status == 429) {
                p->answer(invoke::throttled("CallerRateLimitExceeded", p->request_id));
                return;
            }
            auto e = functions::service_exception("coldbrew injected a service error.");
            e.status = plan.status;
            p->answer(invoke::to_response(e, p->request_id));
            return;
        }
        case action::handler_error: {
            functions::invocation_result r;
            r.kind = functions::outcome::function_error;
            r.request_id = p->request_id;
            r.error_type = plan.error_type;
            r.payload = nlohmann::json{{"errorMessage", plan.error_message},
                                       {"errorType", plan.error_type}}
                            .dump();
            p->answer(invoke::invocation_response(r, p->call));
            return;
        }
        case action::throttle:
            p->answer(invoke::throttled(plan.throttle_reason, p->request_id));
            return;
        case action::reset:
            p->reset_connection();
            return;
        case action::function_exit:
            inv.kill_after_ms = plan.kill_after_ms * scale;
            break;
        case action::pass:
        case action::slow_response:
        case action::refuse:  // dependency-only: never planned on the invoke front
        case action::hang:
            break;
        }
        inv.on_done = [p](functions::invocation_result r) {
            if (p->trace) p->trace->begin("invoke.response_mapping");
            if (p->ex) p->ex->rec.cold_start = r.cold_start;
            const bool handler_caused = r.kind == functions::outcome::function_error;
            // The handler answered before the injected kill: no fault reached the client.
            if (p->fault.p.act == action::function_exit && r.kind == functions::outcome::success)
                p->missed = true;
            p->answer(invoke::invocation_response(r, p->call), handler_caused);
        };
        inv.trace = p->trace;
        pool.invoke(std::move(inv));
    };
    if (p->fault.p.delay_ms > 0) {
        if (p->trace) {
            p->trace->begin("fault.delay");
            p->trace->annotate_modeled(p->fault.p.delay_ms);
        }
        faults_->watch(p);
        p->timer = std::make_unique<one_shot>(deps_.loop);
        p->timer->start(p->fault.p.delay_ms * stack_.settings.time_scale, std::move(run));
        return;
    }
    run();
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

void app::on_gateway_request(http::request req, http::responder respond,
                             const std::shared_ptr<exchange>& ex) {
    auto& gw = *gateway_;
    auto p = std::make_shared<pending_request>();
    p->clock = deps_.clock;
    p->started = deps_.clock->steady();
    p->request_id = models::uuid_v4(*deps_.rng, "gateway-request-id", "gateway", gw.next_request_index);
    p->method = req.method;
    p->path = std::string(req.path());
    p->respond = std::move(respond);
    p->ex = ex;
    p->outcomes = &outcomes_gateway_;
    p->decider = deps_.faults;

    auto match = gw.routes.match(req.method, req.path());
    if (!match) {
        ++gw.next_request_index;
        // The gateway's own answer is traced too: a caller's header still joins it, and a
        // request that matched nothing is often the one being debugged.
        if (deps_.traces) {
            const auto xray = req.header("X-Amzn-Trace-Id");
            p->trace = start_trace(deps_, stack_.settings.time_scale,
                                   xray ? std::string(*xray) : std::string(), p->request_id,
                                   req.method + " (no route)", p->started);
            p->trace->begin("gateway.receive");
            p->trace->annotate_root("http.request.method", req.method);
            p->trace->annotate_root("url.path", p->path);
            p->trace->annotate_root("aws.request_id", p->request_id);
        }
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
    const std::string route_key = match->route->path == "$default"
                                      ? std::string("$default")
                                      : match->route->method + " " + match->route->path;
    ex->rec.route = route_key;
    ex->rec.function = match->route->function;
    if (deps_.traces) {
        p->trace = start_trace(deps_, stack_.settings.time_scale, info.trace_id, p->request_id,
                               route_key, p->started);
        p->trace->begin("gateway.receive");
        p->trace->annotate_root("http.request.method", req.method);
        p->trace->annotate_root("url.path", p->path);
        p->trace->annotate_root("http.route", route_key);
        p->trace->annotate_root("faas.invoked_name", match->route->function);
        p->trace->annotate_root("aws.request_id", p->request_id);
    }

    auto pool_it = pools_.find(match->route->function);
    if (pool_it == pools_.end() || shutting_down_) {
        p->answer(gateway::error_response(kind, gateway::gateway_error::lambda_rejected,
                                          p->request_id));
        return;
    }
    auto& pool = *pool_it->second;

    // The one decision point: every routed request is decided before anything else happens
    // to it (Envoy's fault filter sits before the router for the same reason).
    if (p->trace) p->trace->begin("fault.decision");
    if (deps_.faults) {
        mf::request_facts facts;
        facts.where = mf::front::gateway;
        facts.function = pool.function().name;
        facts.function_name = pool.function().function_name;
        facts.route = route_key;
        facts.method = req.method;
        facts.path = match->path;
        facts.headers = &req.headers;
        p->fault = deps_.faults->decide(facts, fault_clock_ms());
        record_decision(p->fault);
        trace_decision(p->trace.get(), p->fault);
    }

    // API Gateway's integration request: the route's Lambda event.
    if (p->trace) p->trace->begin("gateway.request_mapping");
    std::string event = match->route->payload_format_version == "1.0"
                            ? gateway::build_event_v1(req, *match, info)
                            : gateway::build_event_v2(req, *match, info);
    p->req = std::move(req);
    p->match = std::move(*match);

    functions::invocation inv;
    inv.payload = std::move(event);
    inv.trace_id = info.trace_id + ";Sampled=0";
    if (info.trace_id.find("Sampled=") != std::string::npos) inv.trace_id = info.trace_id;

    // An injected delay is gateway-side latency before the integration is called, so the
    // integration timeout starts after it.
    if (p->fault.p.delay_ms > 0) {
        if (p->trace) {
            p->trace->begin("fault.delay");
            p->trace->annotate_modeled(p->fault.p.delay_ms);
        }
        p->delay = std::make_unique<one_shot>(deps_.loop);
        faults_->watch(p);
        p->delay->start(p->fault.p.delay_ms * stack_.settings.time_scale,
                        [this, p, &pool, inv = std::move(inv)]() mutable {
                            if (shutting_down_) {
                                p->answer(gateway::error_response(
                                    p->match.api->kind, gateway::gateway_error::lambda_rejected,
                                    p->request_id));
                                return;
                            }
                            gateway_integrate(p, pool, std::move(inv));
                        });
        return;
    }
    gateway_integrate(p, pool, std::move(inv));
}

void app::lose(const std::shared_ptr<faulted_request>& p, double wait_ms,
               std::function<http::response()> timed_out, functions::function_pool& pool,
               functions::invocation inv) {
    const bool after = p->fault.p.act == action::phantom_after;
    // The client's wait is the fault's; a phantom-after invocation runs untraced beside it.
    if (p->trace) p->trace->begin("fault.phantom");
    switch (p->fault.p.client) {
    case mf::client_outcome::timeout:
        faults_->watch(p);
        p->timer = std::make_unique<one_shot>(deps_.loop);
        p->timer->start(wait_ms, [p, timed_out = std::move(timed_out)] { p->answer(timed_out()); });
        break;
    case mf::client_outcome::hang:
        p->hold();
        faults_->watch(p);
        spdlog::info("request held without an answer  (fault {})", p->fault.rule);
        break;
    case mf::client_outcome::reset:
        // Phantom-after: the answer is lost on its way back, so the reset waits for it.
        if (!after) p->reset_connection();
        break;
    }
    if (!after) return;
    // The function runs and its side effects happen; its answer goes nowhere.
    const bool reset_after = p->fault.p.client == mf::client_outcome::reset;
    inv.on_done = [p, reset_after](functions::invocation_result) {
        if (reset_after) p->reset_connection();
    };
    pool.invoke(std::move(inv));
}

// The integration: invoke the function (or not, as the fault plan says) and answer.
void app::gateway_integrate(const std::shared_ptr<pending_request>& p, functions::function_pool& pool,
                            functions::invocation inv) {
    const auto kind = p->match.api->kind;
    const auto& plan = p->fault.p;
    const double scale = stack_.settings.time_scale;
    const auto integration_timeout_ms =
        static_cast<double>(std::max<std::int64_t>(1, p->match.route->integration_timeout_ms));

    switch (plan.act) {
    case action::phantom_before:
    case action::phantom_after:
        // The client sees the gateway's timeout error once the integration timeout (scaled:
        // the wait is injected) has passed, nothing, or a reset, as the plan says.
        lose(p, integration_timeout_ms * scale, [p, kind] {
            return gateway::error_response(kind, gateway::gateway_error::integration_timeout,
                                           p->request_id);
        }, pool, std::move(inv));
        return;
    case action::gateway_error:
        p->answer(gateway::status_error_response(kind, plan.status, p->request_id));
        return;
    case action::handler_error:
        // What API Gateway answers when the function reports an error.
        p->answer(gateway::error_response(kind, gateway::gateway_error::integration_failure,
                                          p->request_id));
        return;
    case action::throttle:
        // Lambda refused the invoke: behind API Gateway a 500 (spec §4.5).
        p->answer(gateway::error_response(kind, gateway::gateway_error::lambda_rejected,
                                          p->request_id));
        return;
    case action::reset:
        p->reset_connection();
        return;
    case action::function_exit:
        inv.kill_after_ms = plan.kill_after_ms * scale;
        break;
    case action::pass:
    case action::slow_response:
    case action::refuse:  // dependency-only: never planned on the gateway front
    case action::hang:
        break;
    }

    // Integration timeout: REST 29 s → 504, HTTP API 30 s → 503 (spec §4.5, §6.14). The
    // function keeps running to its own timeout, as on AWS.
    p->timer = std::make_unique<one_shot>(deps_.loop);
    p->timer->start(integration_timeout_ms, [p, kind] {
        p->answer(gateway::error_response(kind, gateway::gateway_error::integration_timeout,
                                          p->request_id),
                  true);
    });

    inv.on_done = [p](functions::invocation_result r) {
        if (p->trace) p->trace->begin("gateway.response_mapping");
        if (p->ex) p->ex->rec.cold_start = r.cold_start;
        auto kind = p->match.api->kind;
        // The handler answered before the injected kill: no fault reached the client.
        if (p->fault.p.act == action::function_exit && r.kind == functions::outcome::success)
            p->missed = true;
        switch (r.kind) {
        case functions::outcome::success: {
            std::string why;
            auto res = gateway::map_response(r.payload, p->req, p->match, p->request_id, &why);
            // Worded as API Gateway's execution log says it.
            if (!why.empty())
                spdlog::warn("{} {}: Execution failed due to configuration error: Malformed "
                             "Lambda proxy response ({})",
                             p->method, p->path, why);
            p->answer(std::move(res), !why.empty());
            break;
        }
        case functions::outcome::function_error:
            p->answer(gateway::error_response(kind, gateway::gateway_error::integration_failure,
                                              p->request_id),
                      true);
            break;
        case functions::outcome::too_large:
            p->answer(gateway::error_response(kind, gateway::gateway_error::request_too_large,
                                              p->request_id));
            break;
        case functions::outcome::throttled:
            p->answer(gateway::error_response(kind, gateway::gateway_error::lambda_rejected,
                                              p->request_id));
            break;
        case functions::outcome::unavailable:  // coldbrew is shutting down
            p->answer(gateway::error_response(kind, gateway::gateway_error::lambda_rejected,
                                              p->request_id));
            break;
        }
    };
    inv.trace = p->trace;
    pool.invoke(std::move(inv));
}

void app::close_front_ends() {
    faults_->abandon_all();
    if (gateway_server_) gateway_server_->close();
    if (invoke_server_) invoke_server_->close();
    if (admin_server_) admin_server_->close();
    if (proxies_) proxies_->close();
}

void app::shutdown(std::uint64_t drain_ms, std::function<void()> done) {
    if (shutting_down_) {
        close_front_ends();
        for (auto& [_, p] : pools_) p->shutdown();
        return;
    }
    shutting_down_ = true;
    on_shutdown_done_ = std::move(done);
    if (gateway_server_) gateway_server_->stop_accepting();
    if (invoke_server_) invoke_server_->stop_accepting();
    if (admin_server_) admin_server_->stop_accepting();
    // Hung requests are never answered; their connections close with the servers.
    faults_->abandon_all();
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
            // What is still open (a slow answer trickling, a client that keeps its
            // connection) ends with the drain.
            self->close_front_ends();
            for (auto& [_, p] : self->pools_) p->shutdown();
            if (auto done = std::move(self->on_shutdown_done_)) done();
        },
        0, 10);
}

}  // namespace coldbrew::app
