#include "emulator/front/invoke_front.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "emulator/functions/service_errors.hpp"
#include "emulator/invoke/invoke_api.hpp"

namespace coldbrew::front {

namespace mf = models::faults;

namespace {

// How the Lambda Invoke API words what the executor does to one synchronous invocation.
class invoke_protocol final : public protocol {
public:
    invoke_protocol(invoke::invoke_request call, std::string request_id, int timeout_s)
        : call_(std::move(call)), request_id_(std::move(request_id)), timeout_s_(timeout_s) {}

    // Lambda's Invoke has no integration timeout: a lost answer holds the connection for as
    // long as the function could have run (its timeout, modeled), then answers Lambda's 500
    // ServiceException, which SDKs retry. What AWS sends here is not documented; this is
    // coldbrew's choice.
    double lost_wait_ms() const override { return timeout_s_ * 1000.0; }
    http::response lost_answer() override {
        return invoke::to_response(functions::service_exception("The invocation's response was lost."),
                                   request_id_);
    }
    std::optional<double> integration_timeout_real_ms() const override { return std::nullopt; }
    http::response timed_out() override { return lost_answer(); }
    http::response service_error(int status) override {
        if (status == 429) return invoke::throttled("CallerRateLimitExceeded", request_id_);
        auto e = functions::service_exception("coldbrew injected a service error.");
        e.status = status;
        return invoke::to_response(e, request_id_);
    }
    http::response handler_error(const std::string& type, const std::string& message) override {
        functions::invocation_result r;
        r.kind = functions::outcome::function_error;
        r.request_id = request_id_;
        r.error_type = type;
        r.payload = nlohmann::json{{"errorMessage", message}, {"errorType", type}}.dump();
        return invoke::invocation_response(r, call_);
    }
    http::response throttled(const std::string& reason) override {
        return invoke::throttled(reason, request_id_);
    }
    http::response unavailable() override {
        functions::invocation_result r;
        r.kind = functions::outcome::unavailable;
        r.request_id = request_id_;
        r.message = "coldbrew is shutting down";
        return invoke::service_error_response(r);
    }
    mapped map_result(const functions::invocation_result& r) override {
        return {invoke::invocation_response(r, call_), r.kind == functions::outcome::function_error};
    }

private:
    invoke::invoke_request call_;
    std::string request_id_;
    int timeout_s_;
};

}  // namespace

invoke_front::invoke_front(const config::stack& stack, executor& ex, const coldbrew::clock& clock,
                           const models::random_source& rng, function_lookup find,
                           enqueue_fn enqueue)
    : stack_(stack), ex_(ex), clock_(clock), rng_(rng), find_(std::move(find)),
      enqueue_(std::move(enqueue)) {}

std::function<http::response(http::parse_failure)> invoke_front::parse_failure_answer() {
    return ex_.recording_parse_failures(mf::front::invoke, [this](http::parse_failure f) {
        auto id = models::uuid_v4(rng_, "invoke-request-id", "invoke", next_index_++);
        if (f == http::parse_failure::request_timeout)
            // S3's wording for the same event (its RequestTimeout error), AWS's own words.
            return invoke::to_response(
                functions::request_timeout("Your socket connection to the server was not read "
                                           "from or written to within the timeout period."),
                id);
        return invoke::malformed_request(f == http::parse_failure::body_too_large, id);
    });
}

void invoke_front::handle(http::request req, http::responder respond) {
    auto r = ex_.begin(mf::front::invoke, req, std::move(respond));
    try {
        route(req, r);
    } catch (const std::exception& e) {
        spdlog::error("invoke API: internal error: {}", e.what());
        r->fail(invoke::to_response(functions::service_exception("Internal error."), ""));
    }
}

void invoke_front::route(const http::request& req, const std::shared_ptr<request>& r) {
    // One id per request, drawn before parsing: errors carry x-amzn-RequestId too, and an
    // invocation's awsRequestId is the id of the request that made it.
    const invoke::context ctx{stack_.settings.region, stack_.settings.account_id,
                              models::uuid_v4(rng_, "invoke-request-id", "invoke", next_index_++)};
    const auto& id = ctx.request_id;
    if (access_) {
        if (auto d = http::check_access(req, *access_); !d.allowed()) {
            r->set_route("(refused)");
            r->answer(invoke::to_response(functions::access_denied(d.reason), id));
            return;
        }
    }
    auto parsed = invoke::parse_invoke(req, ctx);
    if (auto* res = std::get_if<http::response>(&parsed)) {
        r->answer(std::move(*res));  // Lambda's own answer to a malformed call
        return;
    }
    auto& call = std::get<invoke::invoke_request>(parsed);
    auto* target = find_(call.function);
    if (!target || !invoke::serves_qualifier(call)) {
        r->set_route("(no function)");
        r->answer(invoke::function_not_found(call, ctx));
        return;
    }
    const auto& fn = target->function();
    const std::string route_key = "Invoke " + fn.name;  // the route key fault rules use
    r->set_route(route_key, fn.name);
    if (ex_.stopping()) {
        functions::invocation_result res;
        res.kind = functions::outcome::unavailable;
        res.request_id = id;
        res.message = "coldbrew is shutting down";
        r->answer(invoke::service_error_response(res));
        return;
    }
    switch (call.type) {
    case invoke::invocation_type::dry_run:
        r->answer(invoke::dry_run_ok(id));
        return;
    case invoke::invocation_type::event:
        // Asynchronous invocations are accepted and queued; faults apply to synchronous
        // invocations, where a client waits for the answer.
        enqueue_(fn.name, id, std::move(call.payload));
        r->answer(invoke::accepted_event(id));
        return;
    case invoke::invocation_type::request_response:
        break;
    }

    // The caller's X-Amzn-Trace-Id reaches the function, as on Lambda. Without one the
    // invocation gets a root of its own, its Parent the Invoke's root span (a draw that does
    // not depend on whether traces are written).
    const std::string trace_header(req.header("X-Amzn-Trace-Id").value_or(""));
    const std::string root_header =
        trace_header.empty() ? draw_xray_root(clock_, rng_, "invoke-trace-id", id, 0) : trace_header;
    const std::string path = "/2015-03-31/functions/" + call.as_given + "/invocations";
    r->start_trace(root_header, id, route_key, "invoke.receive");
    if (auto* t = r->trace()) {
        t->annotate_root("http.request.method", std::string("POST"));
        t->annotate_root("url.path", path);
        t->annotate_root("faas.invoked_name", fn.name);
        t->annotate_root("aws.request_id", id);
    }

    functions::invocation inv;
    inv.payload = std::move(call.payload);
    inv.client_context = call.client_context;
    inv.request_id = id;
    inv.capture_log = call.tail_log;
    if (trace_header.empty())
        inv.trace_id = root_header + ";Parent=" + telemetry::draw_span_id(rng_, id, 0) + ";Sampled=0";
    else if (trace_header.find("Sampled=") == std::string::npos)
        inv.trace_id = trace_header + ";Sampled=0";
    else
        inv.trace_id = trace_header;

    mf::request_facts facts;
    facts.where = mf::front::invoke;
    facts.function = fn.name;
    facts.function_name = fn.function_name;
    facts.route = route_key;
    facts.method = "POST";
    facts.path = path;
    ex_.run(r, std::make_unique<invoke_protocol>(std::move(call), id, fn.timeout_s), facts, *target,
            std::move(inv));
}

}  // namespace coldbrew::front
