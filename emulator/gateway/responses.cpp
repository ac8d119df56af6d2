// Response mapping (function output -> client response) and the gateway's own error
// responses. Spec §4.2, §4.4, §4.5, §8.

#include "emulator/codec/base64.hpp"
#include "emulator/gateway/detail.hpp"
#include "emulator/gateway/gateway.hpp"

#include <array>
#include <stdexcept>
#include <nlohmann/json.hpp>

namespace coldbrew::gateway {

namespace {

using json = nlohmann::ordered_json; // keeps the function's header order

struct error_shape {
    int status;
    const char* body;
    const char* error_type; // x-amzn-ErrorType; REST only
};

// Exact bodies matter: REST's 502/504/500 bodies have a space after the colon, the 403 does
// not (Content-Length 36 / 41 / 42 in captured responses). [GWRESP][APIGW-ERR][HTTP-TS]
error_shape shape_of(config::api_kind kind, gateway_error error) {
    const bool rest = kind == config::api_kind::rest;
    switch (error) {
    case gateway_error::missing_route:
        // REST: aws/chalice#12; HTTP API: [HTTP-ROUTES].
        return rest ? error_shape{403, R"({"message":"Missing Authentication Token"})",
                                  "MissingAuthenticationTokenException"}
                    : error_shape{404, R"({"message":"Not Found"})", nullptr};
    case gateway_error::integration_failure:
        // REST: [APIGW-ERR], aws-amplify/amplify-js#6931; HTTP API: [HTTP-TS].
        return rest ? error_shape{502, R"({"message": "Internal server error"})",
                                  "InternalServerErrorException"}
                    : error_shape{500, R"({"message":"Internal Server Error"})", nullptr};
    case gateway_error::integration_timeout:
        // REST: gateway response INTEGRATION_TIMEOUT [GWRESP]; captured 504s carry
        // x-amzn-ErrorType InternalServerErrorException. HTTP API: serverless/serverless#11222.
        return rest ? error_shape{504, R"({"message": "Endpoint request timed out"})",
                                  "InternalServerErrorException"}
                    : error_shape{503, R"({"message":"Service Unavailable"})", nullptr};
    case gateway_error::lambda_rejected:
        // REST: [APIGW-ERR]. HTTP API: 500 with its usual body (unverified).
        return rest ? error_shape{500, R"({"message": "Internal server error"})",
                                  "InternalServerErrorException"}
                    : error_shape{500, R"({"message":"Internal Server Error"})", nullptr};
    case gateway_error::request_too_large:
        // 413 REQUEST_TOO_LARGE [GWRESP]. Body and error type unverified: this JSON body is
        // seen in the wild; a >10 MB request to a REST API has also been reported to get the
        // plain text "HTTP content length exceeded 10485760 bytes.".
        return error_shape{413, R"({"message":"Request Too Long"})",
                           rest ? "RequestTooLargeException" : nullptr};
    }
    return error_shape{500, R"({"message":"Internal Server Error"})", nullptr};
}

// REST remaps these function response headers to x-amzn-Remapped-<name> (captured REST
// responses show Content-Length, Connection, Date, Server, x-amzn-RequestId and
// X-Forwarded-For remapped; WWW-Authenticate and Authorization per [KNOWN]). HTTP APIs: the
// framing headers are dropped so the server's own Content-Length stands (unverified).
constexpr std::array rest_remapped{
    "Authorization",     "Connection",       "Content-Length",   "Date",           "Server",
    "Transfer-Encoding", "WWW-Authenticate", "x-amzn-RequestId", "X-Forwarded-For"};
constexpr std::array http_dropped{"Connection", "Content-Length", "Transfer-Encoding"};

void add_function_header(http::response& res, config::api_kind kind, std::string name,
                         std::string value) {
    if (kind == config::api_kind::rest) {
        for (const char* h : rest_remapped)
            if (http::iequals(name, h)) name = "x-amzn-Remapped-" + name;
    } else {
        for (const char* h : http_dropped)
            if (http::iequals(name, h)) return;
    }
    res.add(std::move(name), std::move(value));
}

// Every malformed-output path returns through here, so the reason always reaches the log.
std::nullopt_t fail(std::string& why, std::string reason) {
    why = std::move(reason);
    return std::nullopt;
}

// Function-supplied text for a log line: printable ASCII as is, anything else as \xNN, cut
// at 64 characters, so a hostile header name cannot forge log lines either.
std::string printable(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < 64; ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out.push_back(static_cast<char>(c));
        } else {
            out += "\\x";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0xf]);
        }
    }
    if (s.size() > 64) out += "...";
    return out;
}

// RFC 9110 §5.6.2 token: the only characters a field name may hold.
bool is_token(std::string_view s) {
    if (s.empty()) return false;
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
        if (!ok) return false;
    }
    return true;
}

// Header names and values are written to the wire as given, so a CR or LF in either would let
// the function inject header lines (or a whole response) into the client's stream. API
// Gateway does not pass such headers through; whether it drops the header or fails the
// response is unverified per case, and coldbrew fails the response (REST 502 / HTTP 500) so
// the mistake is visible. Values may hold obs-text (UTF-8 bytes) and HTAB, but not CR, LF or
// NUL (RFC 9110 §5.5 calls those three invalid and dangerous).
bool check_header(std::string_view name, std::string_view value, std::string& why) {
    if (!is_token(name)) {
        why = "invalid header name '" + printable(name) + "'";
        return false;
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
        why = "invalid value for header '" + std::string(name) + "' (CR, LF or NUL)";
        return false;
    }
    return true;
}

// statusCode: an integer 200–599. A numeric string ("200") and an integral float (200.0) are
// accepted too (unverified; AWS's parser is lenient about quoted numbers in practice).
// 1xx is refused: in HTTP/1.1 a 1xx is an interim response, and a client given one as the
// final answer keeps waiting for the real one or fails. How AWS treats a 1xx statusCode is
// unverified; coldbrew calls it a malformed proxy response.
std::optional<int> status_of(const json& v, std::string& why) {
    long long n = 0;
    if (v.is_number_integer()) {
        n = v.get<long long>();
    } else if (v.is_number_float()) {
        double d = v.get<double>();
        if (!(d >= -1e15 && d <= 1e15) || d != static_cast<double>(static_cast<long long>(d)))
            return fail(why, "statusCode is not an integer");
        n = static_cast<long long>(d);
    } else if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s.empty() || s.size() > 3) return fail(why, "statusCode is not an integer");
        for (char c : s)
            if (c < '0' || c > '9') return fail(why, "statusCode is not an integer");
        n = std::stoll(s);
    } else {
        return fail(why, "statusCode is not an integer");
    }
    if (n >= 100 && n <= 199)
        return fail(why, "statusCode " + std::to_string(n) + " is informational (1xx)");
    if (n < 200 || n > 599)
        return fail(why, "statusCode " + std::to_string(n) + " is not in 200-599");
    return static_cast<int>(n);
}

// Header values: string, number or bool become text; objects and arrays are malformed.
std::optional<std::string> scalar_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    return std::nullopt;
}

// Body: a string, or absent/null (empty). Anything else is malformed (spec §8).
std::optional<std::string> body_of(const json& obj, std::string& why) {
    auto it = obj.find("body");
    if (it == obj.end() || it->is_null()) return std::string();
    if (!it->is_string()) return fail(why, "body must be a string");
    return it->get<std::string>();
}

std::optional<bool> flag_of(const json& obj, const char* key, std::string& why) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return false;
    // Strict (unverified): "true" as a string is not accepted.
    if (!it->is_boolean()) return fail(why, std::string(key) + " must be a boolean");
    return it->get<bool>();
}

// `headers`: object of scalars; null values are skipped (unverified).
bool read_headers(const json& obj, http::header_list& out, std::string& why) {
    auto it = obj.find("headers");
    if (it == obj.end() || it->is_null()) return true;
    if (!it->is_object()) {
        why = "headers must be an object";
        return false;
    }
    for (const auto& [name, v] : it->items()) {
        if (v.is_null()) continue;
        auto text = scalar_text(v);
        if (!text) {
            why = "header '" + printable(name) + "' must be a string, number or boolean";
            return false;
        }
        if (!check_header(name, *text, why)) return false;
        out.emplace_back(name, std::move(*text));
    }
    return true;
}

// REST: decode an isBase64Encoded body only when the request's first Accept media type
// matches binaryMediaTypes ("API Gateway honors only the first Accept media type");
// otherwise the base64 text is sent as is [REST-PROXY], spec §4.2. With no Accept header the
// response Content-Type is matched instead (unverified).
bool rest_decodes(const http::request& req, const config::api& api,
                  std::string_view response_content_type) {
    if (auto accept = req.header("Accept")) {
        std::string_view first = accept->substr(0, accept->find(','));
        return detail::matches_any(api.binary_media_types, detail::media_type_of(first));
    }
    return detail::matches_any(api.binary_media_types,
                               detail::media_type_of(response_content_type));
}

// Payload format 1.0 (REST and HTTP API): spec §4.2, §4.4.
std::optional<http::response> map_v1(std::string_view output, const http::request& req,
                                     const config::api& api, std::string& why) {
    const bool rest = api.kind == config::api_kind::rest;
    json out = json::parse(output, nullptr, false);
    if (out.is_discarded()) return fail(why, "output is not valid JSON");
    if (!out.is_object()) return fail(why, "output is not a JSON object");

    if (rest) {
        // REST rejects unknown top-level keys; HTTP API ignores them (SAM CLI's
        // _invalid_apig_response_keys, PR #1154; spec §8 "verify": unverified against AWS).
        // base64Encoded is SAM's legacy alias of isBase64Encoded.
        static constexpr std::array allowed{
            "statusCode",      "body",    "headers",      "multiValueHeaders",
            "isBase64Encoded", "cookies", "base64Encoded"};
        for (const auto& [key, v] : out.items()) {
            bool ok = false;
            for (const char* a : allowed)
                ok = ok || key == a;
            if (!ok)
                return fail(why, "unknown key '" + printable(key) + "' in a REST proxy response");
        }
    }

    auto sc = out.find("statusCode");
    if (sc == out.end()) return fail(why, "statusCode missing"); // 1.0 on both kinds (§4.4)
    auto status = status_of(*sc, why);
    if (!status) return std::nullopt;

    auto body = body_of(out, why);
    if (!body) return std::nullopt;
    auto is_b64 = flag_of(out, "isBase64Encoded", why);
    if (!is_b64) return std::nullopt;
    if (!*is_b64 && rest && out.contains("base64Encoded")) {
        is_b64 = flag_of(out, "base64Encoded", why);
        if (!is_b64) return std::nullopt;
    }

    http::header_list single;
    if (!read_headers(out, single, why)) return std::nullopt;

    // multiValueHeaders: object of arrays of scalars (a string value is malformed,
    // serverless-offline#1082). Merged with headers; on the same name (any case)
    // multiValueHeaders wins [REST-PROXY].
    http::header_list multi;
    std::vector<std::string> multi_names;
    if (auto mv = out.find("multiValueHeaders"); mv != out.end() && !mv->is_null()) {
        if (!mv->is_object()) return fail(why, "multiValueHeaders must be an object");
        for (const auto& [name, values] : mv->items()) {
            if (values.is_null()) continue;
            if (!values.is_array())
                return fail(why, "multiValueHeaders '" + printable(name) + "' must be a list");
            multi_names.push_back(name);
            for (const auto& v : values) {
                if (v.is_null()) continue;
                auto text = scalar_text(v);
                if (!text)
                    return fail(why, "multiValueHeaders '" + printable(name) +
                                         "' values must be strings, numbers or booleans");
                if (!check_header(name, *text, why)) return std::nullopt;
                multi.emplace_back(name, std::move(*text));
            }
        }
    }

    http::response res;
    res.status = *status;
    for (auto& [name, value] : single) {
        bool overridden = false;
        for (const auto& m : multi_names)
            overridden = overridden || http::iequals(m, name);
        if (!overridden) add_function_header(res, api.kind, std::move(name), std::move(value));
    }
    for (auto& [name, value] : multi)
        add_function_header(res, api.kind, std::move(name), std::move(value));

    // Missing Content-Type -> application/json [KNOWN].
    if (!res.header("Content-Type")) res.add("Content-Type", "application/json");

    if (*is_b64 && (!rest || rest_decodes(req, api, *res.header("Content-Type")))) {
        // HTTP API always decodes (SAM "based on trials", spec §4.2).
        auto bytes = codec::base64_decode(*body);
        if (!bytes) return fail(why, "body is not valid base64");
        res.body = std::move(*bytes);
    } else {
        res.body = std::move(*body); // {statusCode:200} alone is 200 with no body (spec §8)
    }
    return res;
}

// Payload format 2.0: [HTTP-LAMBDA], spec §4.4.
std::optional<http::response> map_v2(std::string_view output, const config::api& api,
                                     std::string& why) {
    json out = json::parse(output, nullptr, false);
    if (out.is_discarded()) return fail(why, "output is not valid JSON"); // required

    http::response res;
    if (!out.is_object() || !out.contains("statusCode")) {
        // Inference: 200, application/json, the output as the body; a JSON string is sent
        // unquoted ("Hello from Lambda!" -> Hello from Lambda!), anything else verbatim
        // (including `null`, unverified).
        res.status = 200;
        res.add("Content-Type", "application/json");
        res.body = out.is_string() ? out.get<std::string>() : std::string(output);
        return res;
    }

    auto status = status_of(out["statusCode"], why);
    if (!status) return std::nullopt;
    res.status = *status;
    auto body = body_of(out, why); // a non-string body is malformed (unverified for 2.0)
    if (!body) return std::nullopt;
    auto is_b64 = flag_of(out, "isBase64Encoded", why);
    if (!is_b64) return std::nullopt;

    http::header_list headers;
    if (!read_headers(out, headers, why)) return std::nullopt;
    for (auto& [name, value] : headers)
        add_function_header(res, api.kind, std::move(name), std::move(value));

    // Each cookies[] entry becomes its own Set-Cookie (spec §8).
    if (auto c = out.find("cookies"); c != out.end() && !c->is_null()) {
        if (!c->is_array()) return fail(why, "cookies must be a list of strings");
        for (const auto& cookie : *c) {
            if (!cookie.is_string()) return fail(why, "cookies must be a list of strings");
            if (!check_header("Set-Cookie", cookie.get_ref<const std::string&>(), why))
                return std::nullopt;
            res.add("Set-Cookie", cookie.get<std::string>());
        }
    }
    // multiValueHeaders and unknown keys are ignored in 2.0.

    // Unverified for an explicit 2.0 response; the documented default of inference.
    if (!res.header("Content-Type")) res.add("Content-Type", "application/json");

    if (*is_b64) { // HTTP APIs always decode
        auto bytes = codec::base64_decode(*body);
        if (!bytes) return fail(why, "body is not valid base64");
        res.body = std::move(*bytes);
    } else {
        res.body = std::move(*body);
    }
    return res;
}
} // namespace

std::string apigw_id_for(std::string_view request_id) {
    // 11 bytes -> 16 base64 characters ending in '=', the shape of "K2G9wEbUoAMEvag=".
    std::string bytes;
    std::uint64_t a = detail::fnv1a64(request_id);
    std::uint64_t b = detail::fnv1a64(request_id, a);
    for (int i = 0; i < 8; ++i)
        bytes.push_back(static_cast<char>((a >> (8 * i)) & 0xff));
    for (int i = 0; i < 3; ++i)
        bytes.push_back(static_cast<char>((b >> (8 * i)) & 0xff));
    return codec::base64_encode(bytes);
}

void stamp_request_id(http::response& res, config::api_kind kind, const std::string& request_id) {
    res.set("x-amzn-RequestId", request_id);
    if (kind == config::api_kind::rest)
        res.set("x-amz-apigw-id", apigw_id_for(request_id)); // aws/chalice#12 headers
    else
        res.set("Apigw-Requestid", request_id); // HTTP API: same value as requestId
}

http::response error_response(config::api_kind kind, const error_shape& shape,
                              const std::string& request_id) {
    http::response res;
    res.status = shape.status;
    res.body = shape.body;
    res.add("Content-Type", "application/json");
    // HTTP API error responses are not known to carry x-amzn-ErrorType (unverified).
    if (shape.error_type) res.add("x-amzn-ErrorType", shape.error_type);
    stamp_request_id(res, kind, request_id);
    return res;
}

http::response error_response(config::api_kind kind, gateway_error error,
                              const std::string& request_id) {
    return error_response(kind, shape_of(kind, error), request_id);
}

http::response status_error_response(config::api_kind kind, int status,
                                     const std::string& request_id) {
    const bool rest = kind == config::api_kind::rest;
    error_shape shape{};
    switch (status) {
    case 429:
        shape = {429, R"({"message":"Too Many Requests"})",
                 rest ? "TooManyRequestsException" : nullptr};
        break;
    case 500: shape = shape_of(kind, gateway_error::lambda_rejected); break;
    case 502:
        shape = rest ? shape_of(kind, gateway_error::integration_failure)
                     : error_shape{502, R"({"message":"Bad Gateway"})", nullptr};
        break;
    case 503:
        shape = rest ? error_shape{503, R"({"message":"Service Unavailable"})",
                                   "ServiceUnavailableException"}
                     : shape_of(kind, gateway_error::integration_timeout);
        break;
    case 504:
        shape = rest ? shape_of(kind, gateway_error::integration_timeout)
                     : error_shape{504, R"({"message":"Gateway Timeout"})", nullptr};
        break;
    default: throw std::invalid_argument("no gateway error body for status " +
                                         std::to_string(status));
    }
    return error_response(kind, shape, request_id);
}

http::response map_response(std::string_view output, const http::request& req, const route_match& m,
                            const std::string& request_id, std::string* why) {
    const config::api& api = *m.api;
    std::string reason;
    auto res = m.route->payload_format_version == "2.0" && api.kind == config::api_kind::http
                   ? map_v2(output, api, reason)
                   : map_v1(output, req, api, reason);
    if (!res && reason.empty()) reason = "malformed output"; // every failure path sets one
    if (why) *why = res ? std::string() : std::move(reason);
    if (!res) return error_response(api.kind, gateway_error::integration_failure, request_id);
    stamp_request_id(*res, api.kind, request_id);
    return std::move(*res);
}

} // namespace coldbrew::gateway
