#include "emulator/front/gateway_front.hpp"

#include "emulator/gateway/cors.hpp"
#include "emulator/gateway/sfn_integration.hpp"

#include <spdlog/spdlog.h>

namespace coldbrew::front {

namespace mf = models::faults;
using gateway::gateway_error;

namespace {

// A route's Step Functions integration as the executor's target, so that the route meets the
// same guards, fault decision, phantoms, delays and integration timeout as a function's (one
// request path, architecture principle 8). Its invocation payload is the StartExecution
// request body API Gateway would send; the service's answer comes back in `answer` and, as the
// result's payload, to gateway_protocol::map_result. One per request, owned by its protocol.
class state_machine_target final : public function_target {
public:
    state_machine_target(state_machine_starter& starter, const config::route& route)
        : starter_(starter), route_(route), answer_(std::make_shared<gateway::service_answer>()) {
        none_.name = route.state_machine;
    }

    // No function: fault facts name none (rules by function never match a state machine
    // route; by route, method, path and header they do).
    const config::function& function() const override { return none_; }

    void invoke(functions::invocation inv) override {
        auto done = [answer = answer_, on_done = std::move(inv.on_done)](int status,
                                                                          std::string body) {
            *answer = {status, body};
            functions::invocation_result res;
            res.kind = functions::outcome::success;
            res.payload = std::move(body);
            if (on_done) on_done(std::move(res));
        };
        auto read = gateway::read_start_request(inv.payload);
        if (auto* refused = std::get_if<gateway::service_answer>(&read)) {
            done(refused->status, refused->body);
            return;
        }
        auto& call = std::get<gateway::start_call>(read);
        std::string trace = call.trace_header.empty() ? inv.trace_id : call.trace_header;
        // The done callback is the starter's to call; a starter that throws instead answers
        // as the service's failure (API Gateway's 500).
        auto shared_done = std::make_shared<decltype(done)>(std::move(done));
        try {
            starter_.start(route_, std::move(call.input), std::move(call.name), std::move(trace),
                           [shared_done](int status, std::string body) {
                               (*shared_done)(status, std::move(body));
                           });
        } catch (const std::exception& e) {
            spdlog::error("gateway: starting state machine {} failed: {}", route_.state_machine,
                          e.what());
            (*shared_done)(500, R"({"__type":"InternalFailure","message":"internal error"})");
        }
    }

    const std::shared_ptr<gateway::service_answer>& answer() const noexcept { return answer_; }

private:
    state_machine_starter& starter_;
    const config::route& route_;
    config::function none_;
    std::shared_ptr<gateway::service_answer> answer_;
};

}  // namespace

// How API Gateway words what the executor does to one routed request, and the steps that
// guard its route: the Lambda authorizer's call and what its result decides, the API key,
// CORS on an HTTP API's answers.
class gateway_protocol final : public protocol {
public:
    gateway_protocol(gateway_front& front, http::request req, gateway::route_match match,
                     gateway::request_info info)
        : front_(front), req_(std::move(req)), match_(std::move(match)), info_(std::move(info)),
          request_id_(info_.request_id), kind_(match_.api->kind) {
        if (kind_ == config::api_kind::http && match_.route)
            cors_ = gateway::cors_for(*match_.api, match_.route->path);
    }

    const http::request& req() const noexcept { return req_; }
    const gateway::route_match& match() const noexcept { return match_; }
    gateway::request_info& info() noexcept { return info_; }

    // An HTTP API's CORS headers on whatever the client gets (REST adds none: a proxy
    // integration sets its own).
    http::response finish(http::response res) const {
        if (cors_) gateway::add_cors_headers(*match_.api, *cors_, req_, res);
        return res;
    }

    void set_route_key(std::string key) { route_key_ = std::move(key); }

    // A Step Functions route: the StartExecution body built for this request, and the target
    // that starts it.
    function_target& start_state_machine(state_machine_starter& starter, std::string body) {
        start_body_ = std::move(body);
        sfn_target_ = std::make_unique<state_machine_target>(starter, *match_.route);
        return *sfn_target_;
    }
    const std::string& route_key() const noexcept { return route_key_; }

    // The route's Lambda authorizer and the request's method ARN.
    void use_authorizer(const config::authorizer& a, std::string arn) {
        authorizer_ = &a;
        arn_ = std::move(arn);
    }
    // The authorizer is to be called (its cache had nothing for this identity).
    void need_authorizer(function_target& target, authorizers::identity id,
                         std::optional<std::string> cache_key) {
        authorizer_target_ = &target;
        identity_ = std::move(id);
        cache_key_ = std::move(cache_key);
    }
    function_target* authorizer_target() const noexcept { return authorizer_target_; }
    bool has_mock() const noexcept { return mock_.has_value(); }
    // Answered instead of an integration once the authorizer allowed it: the REST preflight
    // mock behind AddDefaultAuthorizerToCorsPreflight.
    void answer_when_allowed(http::response res) { mock_ = std::move(res); }

    std::optional<authorizer_call> authorizer_request() override {
        if (!authorizer_ || !authorizer_target_) return std::nullopt;
        authorizer_call call;
        call.target = authorizer_target_;
        call.inv.payload =
            authorizers::build_event(*authorizer_, req_, match_, info_, identity_, arn_);
        call.inv.trace_id = sampled_trace_id();
        return call;
    }

    std::optional<early_answer> after_authorizer(const functions::invocation_result& r,
                                                 double latency_ms) override {
        using authorizers::verdict;
        const auto& a = *authorizer_;
        switch (r.kind) {
        case functions::outcome::success: {
            std::string why;
            auto parsed = authorizers::parse_result(a, r.payload, &why);
            if (!parsed) {
                spdlog::warn("{} {}: Execution failed due to configuration error: authorizer {} "
                             "gave an invalid answer ({})",
                             req_.method, req_.path(), a.name, why);
                return deny_with(verdict::failure, telemetry::request_end::handler_error);
            }
            if (cache_key_)
                front_.auth_cache_.put(*cache_key_, *parsed, a.result_ttl_s * 1000.0,
                                       front_.scheduler_.now_ms());
            return judged(*parsed, latency_ms);
        }
        case functions::outcome::function_error: {
            const auto v = authorizers::judge_function_error(r.payload);
            return deny_with(v, v == verdict::failure ? telemetry::request_end::handler_error
                                                      : telemetry::request_end::served);
        }
        case functions::outcome::throttled:
        case functions::outcome::too_large:
        case functions::outcome::unavailable:
            break;
        }
        // Lambda refused the authorizer's invoke: API Gateway cannot authorize (500).
        return deny_with(verdict::failure, telemetry::request_end::served);
    }

    // What a result (fresh or cached) decides for this request: nullopt to go on.
    std::optional<early_answer> judged(const authorizers::result& res, double latency_ms) {
        const auto v = authorizers::judge(res, arn_);
        if (v != authorizers::verdict::allow) return deny_with(v, telemetry::request_end::served);
        info_.authorizer_json =
            authorizers::event_authorizer(*authorizer_, res, match_.route->payload_format_version,
                                          latency_ms)
                .dump();
        usage_key_ = res.usage_identifier_key;
        return after_authorized();
    }

    // The steps after authorization: the API key from the authorizer, then the mock answer
    // of a guarded preflight.
    std::optional<early_answer> after_authorized() {
        if (match_.api->api_key_source == "AUTHORIZER" && match_.route->api_key_required) {
            if (auto no = front_.check_api_key(*this, usage_key_)) return early_answer{*no};
        }
        if (mock_) return early_answer{finish(*mock_)};
        return std::nullopt;
    }

    early_answer deny_with(authorizers::verdict v, telemetry::request_end outcome) {
        return early_answer{finish(authorizers::answer(kind_, v, request_id_)), outcome};
    }

    // API Gateway's integration request: the route's Lambda event.
    void integration_request(functions::invocation& inv, telemetry::request_trace* t) override {
        if (t) t->begin("gateway.request_mapping");
        if (sfn_target_) {
            inv.payload = start_body_;
            inv.trace_id = sampled_trace_id();
            return;
        }
        inv.payload = match_.route->payload_format_version == "1.0"
                          ? gateway::build_event_v1(req_, match_, info_)
                          : gateway::build_event_v2(req_, match_, info_);
        inv.trace_id = sampled_trace_id();
    }

    // A lost answer: the client waits out the integration timeout (injected, so modeled).
    double lost_wait_ms() const override { return integration_timeout_ms(); }
    http::response lost_answer() override {
        return finish(gateway::error_response(kind_, gateway_error::integration_timeout, request_id_));
    }
    // Integration timeout: REST 29 s → 504, HTTP API 30 s → 503 (spec §4.5, §6.14). The
    // function keeps running to its own timeout, as on AWS.
    std::optional<double> integration_timeout_real_ms() const override {
        return integration_timeout_ms();
    }
    http::response timed_out() override { return lost_answer(); }
    http::response service_error(int status) override {
        return finish(gateway::status_error_response(kind_, status, request_id_));
    }
    // What API Gateway answers when the function reports an error.
    http::response handler_error(const std::string&, const std::string&) override {
        return finish(gateway::error_response(kind_, gateway_error::integration_failure, request_id_));
    }
    // Lambda refused the invoke: behind API Gateway a 500 (spec §4.5).
    http::response throttled(const std::string&) override { return rejected(); }
    http::response unavailable() override { return rejected(); }

    mapped map_result(const functions::invocation_result& r) override {
        if (sfn_target_) {
            if (r.kind != functions::outcome::success) return {rejected()};
            return {finish(gateway::map_start_answer(kind_, *sfn_target_->answer(), request_id_))};
        }
        switch (r.kind) {
        case functions::outcome::success: {
            std::string why;
            auto res = gateway::map_response(r.payload, req_, match_, request_id_, &why);
            // Worded as API Gateway's execution log says it.
            if (!why.empty())
                spdlog::warn("{} {}: Execution failed due to configuration error: Malformed "
                             "Lambda proxy response ({})",
                             req_.method, req_.path(), why);
            return {finish(std::move(res)), !why.empty()};
        }
        case functions::outcome::function_error:
            return {handler_error({}, {}), true};
        case functions::outcome::too_large:
            return {finish(gateway::error_response(kind_, gateway_error::request_too_large, request_id_))};
        case functions::outcome::throttled:
        case functions::outcome::unavailable:  // coldbrew is shutting down
            return {rejected()};
        }
        return {rejected()};
    }

private:
    // The X-Ray header an invocation gets: the request's, unsampled unless it says otherwise.
    std::string sampled_trace_id() const {
        return info_.trace_id.find("Sampled=") != std::string::npos ? info_.trace_id
                                                                   : info_.trace_id + ";Sampled=0";
    }
    double integration_timeout_ms() const {
        return static_cast<double>(std::max<std::int64_t>(1, match_.route->integration_timeout_ms));
    }
    http::response rejected() {
        return finish(gateway::error_response(kind_, gateway_error::lambda_rejected, request_id_));
    }

    gateway_front& front_;
    http::request req_;
    gateway::route_match match_;
    gateway::request_info info_;
    std::string request_id_;
    config::api_kind kind_;
    const config::cors_config* cors_ = nullptr;
    const config::authorizer* authorizer_ = nullptr;
    function_target* authorizer_target_ = nullptr;
    authorizers::identity identity_;
    std::string arn_;
    std::optional<std::string> cache_key_;
    std::string usage_key_;
    std::optional<http::response> mock_;
    std::string route_key_;
    std::string start_body_;
    std::unique_ptr<state_machine_target> sfn_target_;
};

namespace {

// A routed request's trace: its root named for the route, with what it asked and reached.
void start_route_trace(request& r, const http::request& req, const std::string& trace_id,
                       const std::string& request_id, const std::string& route_key,
                       const std::string& function) {
    r.start_trace(trace_id, request_id, route_key, "gateway.receive");
    if (auto* t = r.trace()) {
        t->annotate_root("http.request.method", req.method);
        t->annotate_root("url.path", std::string(req.path()));
        t->annotate_root("http.route", route_key);
        if (!function.empty()) t->annotate_root("faas.invoked_name", function);
        t->annotate_root("aws.request_id", request_id);
    }
}

}  // namespace

std::string jwt_keys_name(const config::api& api, const config::authorizer& a) {
    return api.id + "/" + a.name;
}

gateway_front::gateway_front(const config::stack& stack, executor& ex, const coldbrew::clock& clock,
                             const models::random_source& rng, function_lookup find,
                             sched::scheduler& scheduler, jwt_key_sets jwt_keys,
                             state_machine_starter* starter)
    : stack_(stack), ex_(ex), clock_(clock), rng_(rng), find_(std::move(find)), routes_(stack),
      scheduler_(scheduler), jwt_keys_(std::move(jwt_keys)), starter_(starter), api_keys_(stack) {
    for (const auto& a : stack_.apis)
        for (const auto& z : a.authorizers)
            if (z.kind == config::authorizer::type::token) token_validators_.emplace(&z, z);
    bool any_rest = false;
    for (const auto& a : stack_.apis) any_rest |= a.kind == config::api_kind::rest;
    default_kind_ = any_rest || stack_.apis.empty() ? config::api_kind::rest : config::api_kind::http;
}

std::function<http::response(http::parse_failure)> gateway_front::parse_failure_answer() {
    return ex_.recording_parse_failures(mf::front::gateway, [this](http::parse_failure f) {
        auto id = models::uuid_v4(rng_, "gateway-request-id", "gateway", next_request_index_++);
        // Over the payload quota, or over "Total combined size of request line and header
        // values" (gateway_line_and_values_limit): 413 REQUEST_TOO_LARGE, the gateway
        // response for a request too large [GWRESP].
        if (f == http::parse_failure::body_too_large || f == http::parse_failure::header_too_large)
            return gateway::error_response(default_kind_, gateway_error::request_too_large, id);
        http::response res;
        res.set("Content-Type", "application/json");
        if (f == http::parse_failure::request_line_too_long) {
            // The limits page's "414 Request URI too long" for a URI API Gateway will not take
            // (APIGW-LIMITS); body unverified.
            res.status = 414;
            res.body = R"({"message":"Request URI too long"})";
        } else if (f == http::parse_failure::request_timeout) {
            // AWS documents no answer to a request that stops arriving; 408 with Connection:
            // close is HTTP's (RFC 9110 §15.5.9); body unverified.
            res.status = 408;
            res.body = R"({"message":"Request Timeout"})";
        } else {
            res.status = 400;
            res.body = R"({"message":"Bad Request"})";
        }
        gateway::stamp_request_id(res, default_kind_, id);
        return res;
    });
}

void gateway_front::handle(http::request req, http::responder respond) {
    auto r = ex_.begin(mf::front::gateway, req, std::move(respond));
    try {
        route(std::move(req), r);
    } catch (const std::exception& e) {
        spdlog::error("gateway: internal error: {}", e.what());
        r->fail(gateway::error_response(default_kind_, gateway_error::lambda_rejected, ""));
    }
}

void gateway_front::reset_access() {
    auth_cache_.clear();
    api_keys_.reset();
}

std::optional<http::response> gateway_front::check_api_key(gateway_protocol& p,
                                                           std::string_view key) {
    auto c = api_keys_.admit(*p.match().api, key, scheduler_.now_ms(), clock_.epoch_ms());
    if (c.r != gateway::api_key_gate::result::allowed)
        return p.finish(gateway::api_key_answer(c.r, p.info().request_id));
    p.info().api_key = std::string(key);
    p.info().api_key_id = c.key_id;
    return std::nullopt;
}

gateway::request_info gateway_front::request_info_for(const http::request& req,
                                                      const std::string& request_id,
                                                      std::uint64_t index) const {
    gateway::request_info info;
    info.request_id = request_id;
    // On AWS extendedRequestId is the value of the x-amz-apigw-id response header.
    info.extended_request_id = gateway::apigw_id_for(request_id);
    info.epoch_ms = clock_.epoch_ms();
    info.account_id = stack_.settings.account_id;
    info.source_ip = req.remote_ip;
    if (auto t = req.header("X-Amzn-Trace-Id"))
        info.trace_id = std::string(*t);
    else
        info.trace_id = draw_xray_root(clock_, rng_, "gateway-trace-id", "gateway", index);
    return info;
}

// An OPTIONS request no route takes, on a path whose API has CORS: the generated mock (REST)
// or API Gateway's own preflight answer (HTTP API). A REST API's DefaultAuthorizer guards the
// mock when SAM's AddDefaultAuthorizerToCorsPreflight says so.
void gateway_front::preflight(http::request req, const std::shared_ptr<request>& r,
                              gateway::route_table::preflight_match pm,
                              const std::string& request_id, std::uint64_t index) {
    const std::string route_key = "OPTIONS " + pm.resource_path;
    r->set_route(route_key);
    auto info = request_info_for(req, request_id, index);
    start_route_trace(*r, req, info.trace_id, request_id, route_key, {});
    auto answer = gateway::preflight_response(*pm.api, *pm.cors, req, request_id);
    const config::authorizer* guard = nullptr;
    if (pm.api->kind == config::api_kind::rest && !pm.api->preflight_authorizer.empty())
        for (const auto& a : pm.api->authorizers)
            if (a.name == pm.api->preflight_authorizer) guard = &a;
    if (!guard) {
        r->answer(std::move(answer));
        return;
    }
    // The mock behind an authorizer: routed as a route of its own whose integration never
    // runs (after_authorizer answers the mock).
    config::route mock_route;
    mock_route.api_id = pm.api->id;
    mock_route.method = "OPTIONS";
    mock_route.path = pm.resource_path;
    mock_route.payload_format_version = "1.0";
    mock_route.integration_timeout_ms = 29000;
    mock_route.authorizer = guard->name;
    auto& kept = preflight_routes_.emplace(route_key + "|" + pm.api->id, mock_route).first->second;
    gateway::route_match match;
    match.route = &kept;
    match.api = pm.api;
    // The path without its stage segment, as route_table::match gives it.
    std::string path(req.path());
    const std::string stage_prefix = "/" + pm.api->stage;
    if (path.starts_with(stage_prefix + "/")) path.erase(0, stage_prefix.size());
    match.path = std::move(path);
    guarded(std::move(req), r, std::move(match), std::move(info), route_key, std::move(answer));
}

void gateway_front::route(http::request req, const std::shared_ptr<request>& r) {
    const auto index = next_request_index_;
    const auto request_id = models::uuid_v4(rng_, "gateway-request-id", "gateway", index);
    const auto started = clock_.steady();
    r->on_answer([method = req.method, path = std::string(req.path()), started,
                  clock = &clock_](int status, const std::string& rule) {
        const std::string fault = rule.empty() ? std::string() : "  (fault " + rule + ")";
        if (status == 0) {
            spdlog::info("{} {} connection reset{}", method, path, fault);
            return;
        }
        const double ms = std::chrono::duration<double, std::milli>(clock->steady() - started).count();
        spdlog::info("{} {} {} {:.2f} ms{}", method, path, status, ms, fault);
    });

    auto match = routes_.match(req.method, req.path());
    if (req.method == "OPTIONS") {
        auto pm = routes_.match_preflight(req.path());
        // An HTTP API with CORS answers every preflight itself, whatever its routes ($default
        // and ANY included); a REST API's generated mock is the OPTIONS method of a path that
        // has none of its own (an explicit OPTIONS beats ANY).
        if (!pm && match && match->api->kind == config::api_kind::http && match->api->cors)
            pm = gateway::route_table::preflight_match{match->api, &*match->api->cors,
                                                       match->route->path};
        const bool answers =
            pm && (pm->api->kind == config::api_kind::http
                       ? gateway::is_preflight(req)
                       : !match || match->route->method == "ANY");
        if (answers) {
            ++next_request_index_;
            preflight(std::move(req), r, std::move(*pm), request_id, index);
            return;
        }
    }
    if (!match) {
        ++next_request_index_;
        // The gateway's own answer is traced too: a caller's header still joins it, and a
        // request that matched nothing is often the one being debugged.
        r->start_trace(req.header("X-Amzn-Trace-Id").value_or(""), request_id,
                       req.method + " (no route)", "gateway.receive");
        if (auto* t = r->trace()) {
            t->annotate_root("http.request.method", req.method);
            t->annotate_root("url.path", std::string(req.path()));
            t->annotate_root("aws.request_id", request_id);
        }
        r->answer(gateway::error_response(routes_.miss_kind(req.path()),
                                          gateway_error::missing_route, request_id));
        return;
    }
    auto info = request_info_for(req, request_id, index);
    ++next_request_index_;
    const std::string route_key = match->route->path == "$default"
                                      ? std::string("$default")
                                      : match->route->method + " " + match->route->path;
    const auto& function = match->route->function;
    r->set_route(route_key, function);
    start_route_trace(*r, req, info.trace_id, request_id, route_key, function);
    guarded(std::move(req), r, std::move(*match), std::move(info), route_key, std::nullopt);
}

// The route's guards, in API Gateway's order, then the integration: an API key from the
// x-api-key header (checked before the authorizer is called; unverified ordering, chosen so a
// keyless request costs no authorizer call), the authorizer (JWT checked here; a Lambda
// authorizer's cached result judged here, else called by the executor), an API key the
// authorizer returned (API key source AUTHORIZER), and the usage plan's rate and quota.
// `mock` is answered instead of an integration (a guarded REST preflight).
void gateway_front::guarded(http::request req, const std::shared_ptr<request>& r,
                            gateway::route_match match, gateway::request_info info,
                            const std::string& route_key, std::optional<http::response> mock) {
    const auto kind = match.api->kind;
    const auto& route = *match.route;
    const std::string request_id = info.request_id;
    // The request moves into its protocol, which lives as long as the request: the facts
    // point into it.
    auto proto = std::make_unique<gateway_protocol>(*this, std::move(req), std::move(match),
                                                    std::move(info));
    proto->set_route_key(route_key);
    auto& p = *proto;
    const auto& api = *p.match().api;
    if (mock) p.answer_when_allowed(std::move(*mock));

    if (route.api_key_required && api.api_key_source != "AUTHORIZER") {
        const auto key = p.req().header("x-api-key").value_or("");
        if (auto no = check_api_key(p, key)) {
            r->answer(std::move(*no));
            return;
        }
    }

    const config::authorizer* authorizer = nullptr;
    for (const auto& a : api.authorizers)
        if (!route.authorizer.empty() && a.name == route.authorizer) authorizer = &a;
    if (authorizer && authorizer->kind == config::authorizer::type::jwt) {
        const auto id = authorizers::read_identity(*authorizer, p.req(), p.match(), p.info());
        auto keys = jwt_keys_.find(jwt_keys_name(api, *authorizer));
        jwt::requirements need{authorizer->issuer, authorizer->audience, route.authorization_scopes};
        jwt::verdict v;
        if (!id.complete || id.values.empty() || keys == jwt_keys_.end()) {
            v.status = 401;
            v.error_description = id.complete ? "no keys" : "missing token";
        } else {
            v = jwt::validate(id.values.front(), keys->second, need, clock_.epoch_ms() / 1000);
        }
        if (auto* t = r->trace()) {
            t->begin("gateway.authorizer");
            t->annotate("coldbrew.authorizer", authorizer->name);
            t->annotate("coldbrew.authorizer.outcome", std::string(v.ok ? "allow" : "deny"));
        }
        if (!v.ok) {
            r->answer(p.finish(jwt::rejection(v, request_id)));
            return;
        }
        // Payload 2.0 has the claims under authorizer.jwt; 1.0 has them at authorizer itself.
        auto ctx = jwt::event_authorizer(v);
        p.info().authorizer_json =
            (route.payload_format_version == "1.0" ? ctx["jwt"] : ctx).dump();
        authorizer = nullptr;  // done
    }
    if (authorizer) {
        auto id = authorizers::read_identity(*authorizer, p.req(), p.match(), p.info());
        const bool needs_identity = authorizer->kind == config::authorizer::type::token ||
                                    !authorizer->identity_sources.empty();
        if ((needs_identity && !id.complete) ||
            (authorizer->kind == config::authorizer::type::token &&
             !token_validators_.at(authorizer).passes(id.token))) {
            // 401 without a call: the identity source is missing or fails its expression.
            r->answer(p.finish(authorizers::answer(kind, authorizers::verdict::unauthorized,
                                                   request_id)));
            return;
        }
        auto arn = authorizers::method_arn(api, p.match(), p.req(), stack_.settings.region,
                                           stack_.settings.account_id);
        auto key = authorizers::cache_key(*authorizer, id);
        const authorizers::result* cached =
            key ? auth_cache_.find(*key, scheduler_.now_ms()) : nullptr;
        p.use_authorizer(*authorizer, arn);
        if (cached) {
            if (auto* t = r->trace()) {
                t->begin("gateway.authorizer");
                t->annotate("coldbrew.authorizer", authorizer->name);
                t->annotate("coldbrew.authorizer.cached", true);
            }
            if (auto early = p.judged(*cached, 0)) {
                r->answer(std::move(early->res), early->outcome);
                return;
            }
        } else {
            auto* target = find_(authorizer->function);
            if (!target || ex_.stopping()) {
                r->answer(p.finish(authorizers::answer(kind, authorizers::verdict::failure,
                                                       request_id)));
                return;
            }
            p.need_authorizer(*target, std::move(id), std::move(key));
        }
    } else if (auto early = p.after_authorized()) {
        r->answer(std::move(early->res), early->outcome);
        return;
    }

    if (!route.state_machine.empty()) {
        start_state_machine(r, std::move(proto));
        return;
    }
    // A guarded preflight's integration never runs; its authorizer stands in as the target.
    auto* target = p.has_mock() && p.authorizer_target() ? p.authorizer_target()
                                                          : find_(route.function);
    if (!target || ex_.stopping()) {
        r->answer(p.finish(gateway::error_response(kind, gateway_error::lambda_rejected, request_id)));
        return;
    }
    mf::request_facts facts;
    facts.where = mf::front::gateway;
    facts.function = target->function().name;
    facts.function_name = target->function().function_name;
    facts.route = p.route_key();
    facts.method = p.req().method;
    facts.path = p.match().path;
    facts.headers = &p.req().headers;
    ex_.run(r, std::move(proto), facts, *target, functions::invocation{});
}

// A route with a Step Functions integration, its guards passed: API Gateway's StartExecution
// request is built now (a body its template cannot read is the gateway's own answer, before
// any fault is decided), then the executor runs it as a function's invocation.
void gateway_front::start_state_machine(const std::shared_ptr<request>& r,
                                        std::unique_ptr<gateway_protocol> proto) {
    auto& p = *proto;
    const auto kind = p.match().api->kind;
    const auto& route = *p.match().route;
    const auto* machine = stack_.find_state_machine(route.state_machine);
    if (!starter_ || !machine || ex_.stopping()) {
        r->answer(p.finish(gateway::error_response(kind, gateway_error::lambda_rejected,
                                                   p.info().request_id)));
        return;
    }
    if (auto* t = r->trace()) t->annotate_root("coldbrew.state_machine", route.state_machine);
    const std::string arn = "arn:aws:states:" + stack_.settings.region + ":" +
                            stack_.settings.account_id + ":stateMachine:" +
                            machine->state_machine_name;
    auto built = gateway::build_start_request(p.req(), p.match(), p.info(), arn);
    if (auto* refused = std::get_if<http::response>(&built)) {
        r->answer(p.finish(std::move(*refused)));
        return;
    }
    auto& target = p.start_state_machine(*starter_, std::move(std::get<std::string>(built)));
    mf::request_facts facts;
    facts.where = mf::front::gateway;
    facts.route = p.route_key();
    facts.method = p.req().method;
    facts.path = p.match().path;
    facts.headers = &p.req().headers;
    ex_.run(r, std::move(proto), facts, target, functions::invocation{});
}

}  // namespace coldbrew::front
