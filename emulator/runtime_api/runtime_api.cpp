#include "emulator/runtime_api/runtime_api.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace coldbrew::runtime_api {

namespace {

constexpr std::string_view prefix = "/2018-06-01/runtime/";
constexpr std::string_view invocation = "invocation/";

rejected_call reject(int status, const std::string& type, const std::string& message) {
    return {error_response(status, type, message)};
}

// The text of a body built here: what a runtime or client sent may be any bytes, and bytes
// that are not UTF-8 become U+FFFD rather than an exception out of a loop callback.
std::string dump(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// (Runtime|Function)\.[A-Z][a-zA-Z]+, by hand: std::regex recurses per character and a
// header of tens of kilobytes would overflow the stack.
bool valid_error_type(std::string_view t) {
    std::string_view rest;
    if (t.starts_with("Runtime."))
        rest = t.substr(8);
    else if (t.starts_with("Function."))
        rest = t.substr(9);
    else
        return false;
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (rest.size() < 2 || rest[0] < 'A' || rest[0] > 'Z') return false;
    for (char c : rest)
        if (!alpha(c)) return false;
    return true;
}

const char* phase_name(phase p) {
    switch (p) {
    case phase::initializing: return "Initializing";
    case phase::waiting: return "Ready";
    case phase::invoking: return "Invoking";
    case phase::finishing: return "Responded";
    case phase::init_failed: return "InitError";
    }
    return "Unknown";
}

http::response invalid_transition(phase from, const char* to) {
    // RIE: "State transition from <A> to <B> failed for runtime. Error: <e>"
    return error_response(403, "InvalidStateTransition",
                          std::string("State transition from ") + phase_name(from) + " to " + to +
                              " failed for runtime. Error: State transition is not allowed");
}

}  // namespace

call parse_call(const http::request& req) {
    std::string_view path = req.path();
    if (path.substr(0, prefix.size()) != prefix)
        return reject(404, "NotFound", "Unknown Runtime API path: " + std::string(path));
    path.remove_prefix(prefix.size());

    auto mode = req.header("Lambda-Runtime-Function-Response-Mode");
    if (mode && !http::iequals(*mode, "buffered") && !http::iequals(*mode, "streaming"))
        return reject(400, "InvalidFunctionResponseMode", "Invalid function response mode");

    if (path == "invocation/next") {
        if (req.method != "GET") return reject(405, "MethodNotAllowed", "Method not allowed");
        return next_call{};
    }
    if (path == "init/error") {
        if (req.method != "POST") return reject(405, "MethodNotAllowed", "Method not allowed");
        auto type = req.header("Lambda-Runtime-Function-Error-Type");
        return init_error_call{type ? std::string(*type) : std::string(), req.body};
    }
    if (path.substr(0, invocation.size()) == invocation) {
        path.remove_prefix(invocation.size());
        auto slash = path.rfind('/');
        if (slash != std::string_view::npos) {
            std::string id(path.substr(0, slash));
            std::string_view verb = path.substr(slash + 1);
            if (verb == "response" || verb == "error") {
                if (req.method != "POST")
                    return reject(405, "MethodNotAllowed", "Method not allowed");
                if (verb == "response")
                    return response_call{std::move(id), req.body,
                                         mode && http::iequals(*mode, "streaming")};
                auto type = req.header("Lambda-Runtime-Function-Error-Type");
                return error_call{std::move(id), type ? std::string(*type) : std::string(),
                                  req.body};
            }
        }
    }
    return reject(404, "NotFound", "Unknown Runtime API path: " + std::string(req.path()));
}

std::optional<http::response> check_call(phase p, const std::string& current_request_id,
                                         const call& c) {
    auto check_id = [&](const std::string& id) -> std::optional<http::response> {
        if (id.empty() || id != current_request_id)
            return error_response(400, "InvalidRequestID", "Invalid request ID");
        return std::nullopt;
    };
    return std::visit(
        [&](const auto& v) -> std::optional<http::response> {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, next_call>) {
                if (p == phase::initializing || p == phase::finishing) return std::nullopt;
                return invalid_transition(p, "Ready");
            } else if constexpr (std::is_same_v<T, response_call>) {
                if (p != phase::invoking) {
                    if (auto bad = check_id(v.request_id)) return bad;
                    return invalid_transition(p, "InvocationResponse");
                }
                if (auto bad = check_id(v.request_id)) return bad;
                if (v.body.size() > max_response_bytes)
                    return error_response(413, "RequestEntityTooLarge",
                                          "Exceeded maximum allowed payload size (" +
                                              std::to_string(max_response_bytes) + " bytes).");
                return std::nullopt;
            } else if constexpr (std::is_same_v<T, error_call>) {
                if (p != phase::invoking) {
                    if (auto bad = check_id(v.request_id)) return bad;
                    return invalid_transition(p, "InvocationErrorResponse");
                }
                return check_id(v.request_id);
            } else if constexpr (std::is_same_v<T, init_error_call>) {
                if (p == phase::initializing) return std::nullopt;
                return invalid_transition(p, "InitError");
            } else {
                return v.response;
            }
        },
        c);
}

http::response next_response(const invocation_headers& h, std::string event) {
    http::response res;
    res.status = 200;
    res.body = std::move(event);
    res.headers.reserve(8);
    res.add("Content-Type", "application/json");
    res.add("Lambda-Runtime-Aws-Request-Id", h.request_id);
    res.add("Lambda-Runtime-Deadline-Ms", std::to_string(h.deadline_ms));
    res.add("Lambda-Runtime-Invoked-Function-Arn", h.invoked_function_arn);
    res.add("Lambda-Runtime-Trace-Id", h.trace_id);
    if (!h.client_context.empty()) res.add("Lambda-Runtime-Client-Context", h.client_context);
    if (!h.cognito_identity.empty())
        res.add("Lambda-Runtime-Cognito-Identity", h.cognito_identity);
    return res;
}

http::response accepted() {
    http::response res;
    res.status = 202;
    res.add("Content-Type", "application/json");
    res.body = R"({"status":"OK"})";
    return res;
}

http::response error_response(int status, const std::string& error_type,
                              const std::string& message) {
    http::response res;
    res.status = status;
    res.add("Content-Type", "application/json");
    nlohmann::ordered_json j;
    j["errorMessage"] = message;
    j["errorType"] = error_type;
    res.body = dump(j);
    return res;
}

std::string platform_error_body(const std::string& error_type, const std::string& request_id,
                                const std::string& message) {
    nlohmann::ordered_json j;
    j["errorType"] = error_type;
    j["errorMessage"] = "RequestId: " + request_id + " Error: " + message;
    return dump(j);
}

function_error normalise_error(const std::string& header_type, const std::string& body) {
    function_error out;
    auto parsed = nlohmann::json::parse(body, nullptr, false);
    bool object = parsed.is_object();
    std::string body_type;
    if (object) {
        auto it = parsed.find("errorType");
        if (it != parsed.end() && it->is_string()) body_type = it->get<std::string>();
    }
    if (valid_error_type(header_type))
        out.error_type = header_type;
    else if (!body_type.empty())
        out.error_type = body_type;
    else if (header_type.rfind("Function.", 0) == 0)
        out.error_type = "Function.Unknown";
    else
        out.error_type = header_type.empty() ? "Runtime.Unknown" : header_type;

    if (object) {
        out.body = body;
    } else {
        // No readable error body: Lambda builds one from the header [OAS].
        nlohmann::ordered_json j;
        j["errorType"] = out.error_type;
        j["errorMessage"] = body;
        out.body = dump(j);
    }
    return out;
}

}  // namespace coldbrew::runtime_api
