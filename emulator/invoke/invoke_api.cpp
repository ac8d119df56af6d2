#include "emulator/invoke/invoke_api.hpp"

#include "emulator/codec/base64.hpp"

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace coldbrew::invoke {

namespace {

constexpr std::string_view invoke_prefix = "/2015-03-31/functions/";
constexpr std::string_view invoke_suffix = "/invocations";

// FunctionName's pattern as the Lambda model states it (and ValidationException quotes it).
constexpr std::string_view function_name_pattern =
    R"((arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_\.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?)";
constexpr std::size_t max_function_name_chars = 170;
constexpr std::string_view qualifier_pattern = "(|[a-zA-Z0-9$_-]+)";
constexpr std::size_t max_qualifier_chars = 128;

// The same pattern in ECMAScript syntax ('-' last in a class, where Java reads "9-_" as
// literals). Groups: 3 region + ':', 8 account + ':', 10 name, 12 qualifier.
const std::regex& function_name_regex() {
    static const std::regex re(
        R"(^(arn:(aws[a-zA-Z\-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9_.\-]+)(:(\$LATEST|[a-zA-Z0-9_\-]+))?$)");
    return re;
}

bool is_qualifier_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '$' ||
           c == '_' || c == '-';
}

std::string violation(std::string_view value, std::string_view member, std::string_view rule) {
    std::string s = "Value '";
    s += value;
    s += "' at '";
    s += member;
    s += "' failed to satisfy constraint: Member must ";
    s += rule;
    return s;
}

// The first value of `key` in a raw query string, decoded; nullopt when absent.
std::optional<std::string> query_value(std::string_view query, std::string_view key) {
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        auto eq = pair.find('=');
        auto k = http::percent_decode(pair.substr(0, eq), true);
        if (k != key) continue;
        return eq == std::string_view::npos ? std::string{}
                                            : http::percent_decode(pair.substr(eq + 1), true);
    }
    return std::nullopt;
}

// A header's value, nullopt when absent or empty.
std::optional<std::string_view> header_value(const http::request& req, std::string_view name) {
    auto v = req.header(name);
    if (!v || v->empty()) return std::nullopt;
    return v;
}

// "" when `payload` is JSON; otherwise the parser's reason.
std::string parse_error_detail(const std::string& payload) {
    if (nlohmann::json::accept(payload)) return {};
    try {
        auto j = nlohmann::json::parse(payload); // throws: accept() said it is not JSON
        (void)j;
        return "invalid JSON";
    } catch (const nlohmann::json::exception& e) {
        // A syntax error, or a number too large for a double (out_of_range.406: unverified
        // what Lambda does with one; refused as not JSON here rather than answered with a
        // 500). Drop nlohmann's "[json.exception.parse_error.101] " tag.
        std::string what = e.what();
        auto close = what.find("] ");
        return close == std::string::npos ? what : what.substr(close + 2);
    }
}

std::string arn(std::string_view region, std::string_view account, std::string_view name,
                const std::optional<std::string>& qualifier) {
    std::string s = "arn:aws:lambda:";
    s += region;
    s += ':';
    s += account;
    s += ":function:";
    s += name;
    if (qualifier) {
        s += ':';
        s += *qualifier;
    }
    return s;
}

} // namespace

std::variant<invoke_request, http::response> parse_invoke(const http::request& req,
                                                          const context& ctx) {
    auto fail = [&](const functions::service_error& e) { return to_response(e, ctx.request_id); };

    // Route: exactly one raw path segment between the prefix and the suffix.
    std::string_view path = req.path();
    bool routed = req.method == "POST" &&
                  path.size() >= invoke_prefix.size() + invoke_suffix.size() &&
                  path.substr(0, invoke_prefix.size()) == invoke_prefix &&
                  path.substr(path.size() - invoke_suffix.size()) == invoke_suffix;
    std::string_view segment;
    if (routed) {
        segment = path.substr(invoke_prefix.size(),
                              path.size() - invoke_prefix.size() - invoke_suffix.size());
        routed = segment.find('/') == std::string_view::npos;
    }
    if (!routed) {
        return fail(
            functions::unknown_operation("coldbrew serves only the Invoke operation (POST "
                                         "/2015-03-31/functions/{FunctionName}/invocations); got " +
                                         req.method + " " + std::string(path)));
    }

    invoke_request out;
    out.as_given = http::percent_decode(segment);

    // Constraint checks, collected as the AWS front end reports them.
    std::vector<std::string> violations;
    std::optional<std::string> path_qualifier;
    std::string arn_region; // without ':'; empty when not given
    std::string arn_account;
    if (out.as_given.size() > max_function_name_chars) {
        violations.push_back(
            violation(out.as_given, "functionName", "have length less than or equal to 170"));
    } else {
        std::smatch m;
        if (std::regex_match(out.as_given, m, function_name_regex())) {
            if (m[3].matched) arn_region = m[3].str().substr(0, m[3].length() - 1);
            if (m[8].matched) arn_account = m[8].str().substr(0, m[8].length() - 1);
            out.function = m[10].str();
            if (m[12].matched) path_qualifier = m[12].str();
        } else if (out.as_given.empty()) {
            violations.push_back(
                violation(out.as_given, "functionName", "have length greater than or equal to 1"));
        } else {
            violations.push_back(violation(out.as_given, "functionName",
                                           "satisfy regular expression pattern: " +
                                               std::string(function_name_pattern)));
        }
    }

    std::optional<std::string> query_qualifier = query_value(req.query(), "Qualifier");
    if (query_qualifier && query_qualifier->empty()) query_qualifier.reset();
    if (query_qualifier) {
        bool ok = true;
        for (char c : *query_qualifier)
            ok = ok && is_qualifier_char(c);
        if (query_qualifier->size() > max_qualifier_chars)
            violations.push_back(
                violation(*query_qualifier, "qualifier", "have length less than or equal to 128"));
        else if (!ok)
            violations.push_back(
                violation(*query_qualifier, "qualifier",
                          "satisfy regular expression pattern: " + std::string(qualifier_pattern)));
    }

    if (auto t = header_value(req, "X-Amz-Invocation-Type")) {
        if (*t == "RequestResponse")
            out.type = invocation_type::request_response;
        else if (*t == "Event")
            out.type = invocation_type::event;
        else if (*t == "DryRun")
            out.type = invocation_type::dry_run;
        else
            violations.push_back(violation(
                *t, "invocationType", "satisfy enum value set: [DryRun, RequestResponse, Event]"));
    }
    bool tail = false;
    if (auto l = header_value(req, "X-Amz-Log-Type")) {
        if (*l == "Tail")
            tail = true;
        else if (*l != "None")
            // The order of the set in AWS's message is unverified.
            violations.push_back(violation(*l, "logType", "satisfy enum value set: [None, Tail]"));
    }
    if (!violations.empty()) return fail(functions::validation_failed(violations));

    // Payload size, before any work on the body.
    const std::size_t limit = out.type == invocation_type::event
                                  ? max_event_request_bytes
                                  : functions::max_sync_request_bytes;
    if (req.body.size() > limit) {
        return fail(functions::request_too_large(
            out.type == invocation_type::event
                ? std::to_string(req.body.size()) +
                      " byte payload is too large for the Event invocation type (limit " +
                      std::to_string(limit) + " bytes)"
                : "Request must be smaller than " + std::to_string(limit) +
                      " bytes for the InvokeFunction operation"));
    }

    if (!arn_region.empty() && arn_region != ctx.region) {
        return fail(functions::resource_not_found("Functions from '" + arn_region +
                                                  "' are not reachable in this region ('" +
                                                  ctx.region + "')"));
    }
    if (query_qualifier && path_qualifier && *query_qualifier != *path_qualifier) {
        return fail(functions::invalid_parameter_value(
            "The derived qualifier from the function name does not match the specified "
            "qualifier."));
    }
    out.qualifier = path_qualifier ? path_qualifier : query_qualifier;
    if (!arn_account.empty() && arn_account != ctx.account_id) {
        return fail(functions::resource_not_found("Function not found: " +
                                                  arn(arn_region.empty() ? ctx.region : arn_region,
                                                      arn_account, out.function, out.qualifier)));
    }

    if (auto cc = header_value(req, "X-Amz-Client-Context")) {
        if (cc->size() > max_client_context_bytes) {
            return fail(functions::invalid_request_content(
                "Client context must be at most " + std::to_string(max_client_context_bytes) +
                " bytes of base64-encoded data."));
        }
        auto decoded = codec::base64_decode(*cc);
        bool object = false;
        if (decoded) {
            auto j = nlohmann::json::parse(*decoded, nullptr, false);
            object = !j.is_discarded() && j.is_object();
        }
        if (!object) {
            return fail(functions::invalid_request_content(
                "Client context must be a valid Base64-encoded JSON object."));
        }
        if (out.type == invocation_type::request_response) out.client_context = std::move(*decoded);
    }

    out.payload = req.body.empty() ? std::string("{}") : req.body;
    if (auto detail = parse_error_detail(out.payload); !detail.empty()) {
        return fail(functions::invalid_request_content(
            "Could not parse request body into json: Could not parse payload into json: " +
            detail));
    }
    out.tail_log = tail && out.type == invocation_type::request_response;
    return out;
}

bool serves_qualifier(const invoke_request& r) {
    return !r.qualifier || *r.qualifier == "$LATEST";
}

std::string function_arn(const invoke_request& r, const context& ctx) {
    return arn(ctx.region, ctx.account_id, r.function, r.qualifier);
}

http::response function_not_found(const invoke_request& r, const context& ctx) {
    return to_response(functions::resource_not_found("Function not found: " + function_arn(r, ctx)),
                       ctx.request_id);
}

http::response throttled(std::string_view reason, std::string_view request_id) {
    return to_response(functions::too_many_requests(reason), request_id);
}

http::response invocation_response(const functions::invocation_result& r,
                                   const invoke_request& req) {
    using functions::outcome;
    if (r.kind != outcome::success && r.kind != outcome::function_error)
        return service_error_response(r);
    http::response res;
    res.status = 200;
    res.set("Content-Type", "application/json");
    res.set("x-amzn-RequestId", r.request_id);
    // coldbrew runs $LATEST only (serves_qualifier).
    res.set("X-Amz-Executed-Version", "$LATEST");
    if (r.kind == outcome::function_error) res.set("X-Amz-Function-Error", "Unhandled");
    if (req.tail_log) {
        std::string_view log(r.log);
        if (log.size() > log_tail_bytes) log = log.substr(log.size() - log_tail_bytes);
        res.set("X-Amz-Log-Result", codec::base64_encode(log));
    }
    res.body = r.payload;
    return res;
}

http::response service_error_response(const functions::invocation_result& r) {
    using functions::outcome;
    switch (r.kind) {
    case outcome::throttled:
        return throttled(r.throttle_reason, r.request_id);
    case outcome::too_large:
        return to_response(functions::request_too_large(r.message), r.request_id);
    case outcome::unavailable:
        return to_response(functions::service_exception(r.message), r.request_id);
    case outcome::success:
    case outcome::function_error:
        break;
    }
    return to_response(
        functions::service_exception("The invocation ran; it is not a service error."),
        r.request_id);
}

http::response malformed_request(bool body_too_large, std::string_view request_id) {
    if (body_too_large) {
        return to_response(
            functions::request_too_large("Request must be smaller than " +
                                         std::to_string(functions::max_sync_request_bytes) +
                                         " bytes for the InvokeFunction operation"),
            request_id);
    }
    return to_response(functions::invalid_request_content("The request could not be parsed."),
                       request_id);
}

http::response accepted_event(std::string_view request_id) {
    http::response res;
    res.status = 202;
    res.set("x-amzn-RequestId", std::string(request_id));
    return res;
}

http::response dry_run_ok(std::string_view request_id) {
    http::response res;
    res.status = 204;
    res.set("x-amzn-RequestId", std::string(request_id));
    return res;
}

http::response to_response(const functions::service_error& e, std::string_view request_id) {
    http::response res;
    res.status = e.status;
    res.set("Content-Type", "application/json");
    res.set("x-amzn-ErrorType", e.error_type);
    res.set("x-amzn-RequestId", std::string(request_id));
    if (e.retry_after_s) res.set("Retry-After", std::to_string(*e.retry_after_s));
    res.body = e.body;
    return res;
}

} // namespace coldbrew::invoke
