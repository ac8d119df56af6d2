#include "emulator/front/gateway_front.hpp"

#include <spdlog/spdlog.h>

namespace coldbrew::front {

namespace mf = models::faults;
using gateway::gateway_error;

namespace {

// How API Gateway words what the executor does to one routed request.
class gateway_protocol final : public protocol {
public:
    gateway_protocol(http::request req, gateway::route_match match, gateway::request_info info)
        : req_(std::move(req)), match_(std::move(match)), info_(std::move(info)),
          request_id_(info_.request_id), kind_(match_.api->kind) {}

    const http::request& req() const noexcept { return req_; }
    const gateway::route_match& match() const noexcept { return match_; }

    // API Gateway's integration request: the route's Lambda event.
    void integration_request(functions::invocation& inv, telemetry::request_trace* t) override {
        if (t) t->begin("gateway.request_mapping");
        inv.payload = match_.route->payload_format_version == "1.0"
                          ? gateway::build_event_v1(req_, match_, info_)
                          : gateway::build_event_v2(req_, match_, info_);
        inv.trace_id = info_.trace_id.find("Sampled=") != std::string::npos
                           ? info_.trace_id
                           : info_.trace_id + ";Sampled=0";
    }

    // A lost answer: the client waits out the integration timeout (injected, so modeled).
    double lost_wait_ms() const override { return integration_timeout_ms(); }
    http::response lost_answer() override {
        return gateway::error_response(kind_, gateway_error::integration_timeout, request_id_);
    }
    // Integration timeout: REST 29 s → 504, HTTP API 30 s → 503 (spec §4.5, §6.14). The
    // function keeps running to its own timeout, as on AWS.
    std::optional<double> integration_timeout_real_ms() const override {
        return integration_timeout_ms();
    }
    http::response timed_out() override { return lost_answer(); }
    http::response service_error(int status) override {
        return gateway::status_error_response(kind_, status, request_id_);
    }
    // What API Gateway answers when the function reports an error.
    http::response handler_error(const std::string&, const std::string&) override {
        return gateway::error_response(kind_, gateway_error::integration_failure, request_id_);
    }
    // Lambda refused the invoke: behind API Gateway a 500 (spec §4.5).
    http::response throttled(const std::string&) override { return rejected(); }
    http::response unavailable() override { return rejected(); }

    mapped map_result(const functions::invocation_result& r) override {
        switch (r.kind) {
        case functions::outcome::success: {
            std::string why;
            auto res = gateway::map_response(r.payload, req_, match_, request_id_, &why);
            // Worded as API Gateway's execution log says it.
            if (!why.empty())
                spdlog::warn("{} {}: Execution failed due to configuration error: Malformed "
                             "Lambda proxy response ({})",
                             req_.method, req_.path(), why);
            return {std::move(res), !why.empty()};
        }
        case functions::outcome::function_error:
            return {handler_error({}, {}), true};
        case functions::outcome::too_large:
            return {gateway::error_response(kind_, gateway_error::request_too_large, request_id_)};
        case functions::outcome::throttled:
        case functions::outcome::unavailable:  // coldbrew is shutting down
            return {rejected()};
        }
        return {rejected()};
    }

private:
    double integration_timeout_ms() const {
        return static_cast<double>(std::max<std::int64_t>(1, match_.route->integration_timeout_ms));
    }
    http::response rejected() {
        return gateway::error_response(kind_, gateway_error::lambda_rejected, request_id_);
    }

    http::request req_;
    gateway::route_match match_;
    gateway::request_info info_;
    std::string request_id_;
    config::api_kind kind_;
};

}  // namespace

gateway_front::gateway_front(const config::stack& stack, executor& ex, const coldbrew::clock& clock,
                             const models::random_source& rng, function_lookup find)
    : stack_(stack), ex_(ex), clock_(clock), rng_(rng), find_(std::move(find)), routes_(stack) {
    bool any_rest = false;
    for (const auto& a : stack_.apis) any_rest |= a.kind == config::api_kind::rest;
    default_kind_ = any_rest || stack_.apis.empty() ? config::api_kind::rest : config::api_kind::http;
}

std::function<http::response(http::parse_failure)> gateway_front::parse_failure_answer() {
    return ex_.recording_parse_failures(mf::front::gateway, [this](http::parse_failure f) {
        auto id = models::uuid_v4(rng_, "gateway-request-id", "gateway", next_request_index_++);
        if (f == http::parse_failure::body_too_large)
            return gateway::error_response(default_kind_, gateway_error::request_too_large, id);
        http::response res;
        res.status = f == http::parse_failure::header_too_large ? 431 : 400;
        res.set("Content-Type", "application/json");
        res.body = R"({"message":"Bad Request"})";
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
    const auto kind = match->api->kind;

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
    ++next_request_index_;
    const std::string route_key = match->route->path == "$default"
                                      ? std::string("$default")
                                      : match->route->method + " " + match->route->path;
    const auto& function = match->route->function;
    r->set_route(route_key, function);
    r->start_trace(info.trace_id, request_id, route_key, "gateway.receive");
    if (auto* t = r->trace()) {
        t->annotate_root("http.request.method", req.method);
        t->annotate_root("url.path", std::string(req.path()));
        t->annotate_root("http.route", route_key);
        t->annotate_root("faas.invoked_name", function);
        t->annotate_root("aws.request_id", request_id);
    }

    auto* target = find_(function);
    if (!target || ex_.stopping()) {
        r->answer(gateway::error_response(kind, gateway_error::lambda_rejected, request_id));
        return;
    }

    // The request moves into its protocol, which lives as long as the request: the facts
    // point into it.
    auto proto = std::make_unique<gateway_protocol>(std::move(req), std::move(*match), std::move(info));
    mf::request_facts facts;
    facts.where = mf::front::gateway;
    facts.function = target->function().name;
    facts.function_name = target->function().function_name;
    facts.route = route_key;
    facts.method = proto->req().method;
    facts.path = proto->match().path;
    facts.headers = &proto->req().headers;
    ex_.run(r, std::move(proto), facts, *target, functions::invocation{});
}

}  // namespace coldbrew::front
