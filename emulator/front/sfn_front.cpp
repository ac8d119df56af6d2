#include "emulator/front/sfn_front.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <utility>

namespace coldbrew::front {

using nlohmann::json;

namespace {

// The request members of the operations served, by JSON type (API Reference, each action's
// request syntax), so a member of another type is refused as the protocol's deserializer
// refuses it, before an operation sees it.
constexpr std::array<std::string_view, 11> string_members = {
    "stateMachineArn", "name", "input", "traceHeader", "executionArn", "error",
    "cause", "taskToken", "output", "nextToken", "statusFilter"};
constexpr std::array<std::string_view, 1> integer_members = {"maxResults"};
constexpr std::array<std::string_view, 2> boolean_members = {"reverseOrder",
                                                             "includeExecutionData"};

std::optional<std::string> wrong_member(const json& body) {
    for (auto name : string_members)
        if (auto it = body.find(name); it != body.end() && !it->is_string() && !it->is_null())
            return std::string(name);
    for (auto name : integer_members)
        if (auto it = body.find(name);
            it != body.end() && !it->is_number_integer() && !it->is_null())
            return std::string(name);
    for (auto name : boolean_members)
        if (auto it = body.find(name); it != body.end() && !it->is_boolean() && !it->is_null())
            return std::string(name);
    return std::nullopt;
}

states::api_error err(std::string type, std::string message, int status = 400) {
    return states::api_error{std::move(type), std::move(message), status};
}

}  // namespace

http::response sfn_error_response(const states::api_error& e, const std::string& request_id) {
    http::response res;
    res.status = e.status;
    res.set("Content-Type", std::string(sfn_content_type));
    res.set("x-amzn-RequestId", request_id);
    // Messages echo what a client sent (an operation name, a field): bytes that are not
    // UTF-8 become U+FFFD rather than a throw.
    res.body = json{{"__type", e.type}, {"message", e.message}}.dump(-1, ' ', false,
                                                                     json::error_handler_t::replace);
    return res;
}

http::response sfn_json_response(const json& body, const std::string& request_id) {
    http::response res;
    res.status = 200;
    res.set("Content-Type", std::string(sfn_content_type));
    res.set("x-amzn-RequestId", request_id);
    res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return res;
}

sfn_front::sfn_front(states::service& svc, const models::random_source& rng)
    : svc_(svc), rng_(rng) {}

std::string sfn_front::next_request_id() {
    return models::uuid_v4(rng_, "sfn-request-id", "sfn", next_index_++);
}

std::function<http::response(http::parse_failure)> sfn_front::parse_failure_answer() {
    return [this](http::parse_failure f) {
        if (f == http::parse_failure::body_too_large)
            return sfn_error_response(
                err("SerializationException", "The request body is too large.", 413),
                next_request_id());
        if (f == http::parse_failure::request_timeout)
            return sfn_error_response(
                err("RequestTimeoutException",
                    "Your socket connection to the server was not read from or written to "
                    "within the timeout period.",
                    408),
                next_request_id());
        return sfn_error_response(err("SerializationException", "The request is not HTTP."),
                                  next_request_id());
    };
}

void sfn_front::handle(http::request req, http::responder respond) {
    // One id per request, drawn first: error answers carry it too.
    const std::string id = next_request_id();
    try {
        route(req, respond, id);
    } catch (const std::exception& e) {
        spdlog::error("Step Functions API: internal error: {}", e.what());
        respond(sfn_error_response(err("InternalFailure", "Internal error.", 500), id));
    }
}

void sfn_front::route(const http::request& req, http::responder& respond, const std::string& id) {
    auto fail = [&](states::api_error e) { respond(sfn_error_response(e, id)); };
    if (access_) {
        if (auto d = http::check_access(req, *access_); !d.allowed())
            return fail(err("AccessDeniedException", d.reason, 403));
    }
    const auto target = req.header("X-Amz-Target").value_or("");
    if (req.method != "POST" || target.substr(0, sfn_target_prefix.size()) != sfn_target_prefix)
        return fail(err("UnknownOperationException", "The operation is not known."));
    const std::string op(target.substr(sfn_target_prefix.size()));

    // An empty body stands for {} (the protocol serializes an input without members so).
    json body = req.body.empty() ? json::object() : json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
        return fail(err("SerializationException", "The request body is not a JSON object."));
    if (auto bad = wrong_member(body))
        return fail(err("SerializationException",
                        "The value of '" + *bad + "' is not of the type the operation takes."));

    auto answer = [&](std::variant<json, states::api_error> r) {
        if (auto* e = std::get_if<states::api_error>(&r)) return fail(*e);
        respond(sfn_json_response(std::get<json>(r), id));
    };

    if (op == "StartExecution" || op == "StartSyncExecution") {
        auto arn = body.find("stateMachineArn");
        if (arn == body.end() || !arn->is_string())
            return fail(err("ValidationException",
                            "1 validation error detected: Value null at 'stateMachineArn' failed "
                            "to satisfy constraint: Member must not be null"));
        // The API takes ARNs only; coldbrew's own callers may name a machine by its id.
        const auto text = arn->get<std::string>();
        if (text.rfind("arn:aws:states:", 0) != 0 || text.find(":stateMachine:") == std::string::npos)
            return fail(err("InvalidArn", "Invalid State Machine Arn: '" + text + "'"));
        states::service::start_request sr;
        sr.state_machine_arn = text;
        if (auto n = body.find("name"); n != body.end() && n->is_string()) sr.name = n->get<std::string>();
        if (auto in = body.find("input"); in != body.end() && in->is_string()) sr.input = in->get<std::string>();
        if (auto th = body.find("traceHeader"); th != body.end() && th->is_string())
            sr.trace_header = th->get<std::string>();
        else if (auto h = req.header("X-Amzn-Trace-Id"))
            sr.trace_header = std::string(*h);
        if (op == "StartExecution") {
            auto r = svc_.start_execution(sr);
            if (auto* e = std::get_if<states::api_error>(&r)) return fail(*e);
            const auto& s = std::get<states::service::started>(r);
            return respond(sfn_json_response(
                json{{"executionArn", s.execution_arn}, {"startDate", s.start_ms / 1000.0}}, id));
        }
        // Answered when the execution ends; the responder is a no-op if the client left.
        svc_.start_sync_execution(sr, [respond, id](std::variant<json, states::api_error> r) mutable {
            if (auto* e = std::get_if<states::api_error>(&r))
                respond(sfn_error_response(*e, id));
            else
                respond(sfn_json_response(std::get<json>(r), id));
        });
        return;
    }
    if (op == "DescribeExecution") return answer(svc_.describe_execution(body));
    if (op == "GetExecutionHistory") return answer(svc_.get_execution_history(body));
    if (op == "StopExecution") return answer(svc_.stop_execution(body));
    if (op == "ListExecutions") return answer(svc_.list_executions(body));
    if (op == "ListStateMachines") return answer(svc_.list_state_machines(body));
    if (op == "DescribeStateMachine") return answer(svc_.describe_state_machine(body));
    if (op == "SendTaskSuccess") return answer(svc_.send_task_success(body));
    if (op == "SendTaskFailure") return answer(svc_.send_task_failure(body));
    if (op == "SendTaskHeartbeat") return answer(svc_.send_task_heartbeat(body));
    fail(err("UnknownOperationException",
             "The operation " + op + " is not known or not emulated by coldbrew."));
}

}  // namespace coldbrew::front
