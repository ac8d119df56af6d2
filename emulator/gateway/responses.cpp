// Response mapping (function output -> client response) and the gateway's own error
// responses. Spec §4.2, §4.4, §4.5, §8.

#include "emulator/codec/base64.hpp"
#include "emulator/gateway/detail.hpp"
#include "emulator/gateway/gateway.hpp"

#include <array>
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

// statusCode: an integer 100–599. A numeric string ("200") and an integral float (200.0) are
// accepted too (unverified; AWS's parser is lenient about quoted numbers in practice).
std::optional<int> status_of(const json& v) {
    long long n = 0;
    if (v.is_number_integer()) {
        n = v.get<long long>();
    } else if (v.is_number_float()) {
        double d = v.get<double>();
        if (d != static_cast<double>(static_cast<long long>(d))) return std::nullopt;
        n = static_cast<long long>(d);
    } else if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s.empty() || s.size() > 3) return std::nullopt;
        for (char c : s)
            if (c < '0' || c > '9') return std::nullopt;
        n = std::stoll(s);
    } else {
        return std::nullopt;
    }
    if (n < 100 || n > 599) return std::nullopt;
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
std::optional<std::string> body_of(const json& obj) {
    auto it = obj.find("body");
    if (it == obj.end() || it->is_null()) return std::string();
    if (!it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

std::optional<bool> flag_of(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return false;
    if (!it->is_boolean()) return std::nullopt; // unverified: strict
    return it->get<bool>();
}

// `headers`: object of scalars; null values are skipped (unverified).
bool read_headers(const json& obj, http::header_list& out) {
    auto it = obj.find("headers");
    if (it == obj.end() || it->is_null()) return true;
    if (!it->is_object()) return false;
    for (const auto& [name, v] : it->items()) {
        if (v.is_null()) continue;
        auto text = scalar_text(v);
        if (!text) return false;
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
                                     const config::api& api) {
    const bool rest = api.kind == config::api_kind::rest;
    json out = json::parse(output, nullptr, false);
    if (out.is_discarded() || !out.is_object()) return std::nullopt;

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
            if (!ok) return std::nullopt;
        }
    }

    auto sc = out.find("statusCode");
    if (sc == out.end()) return std::nullopt; // required for 1.0 on both kinds (spec §4.4)
    auto status = status_of(*sc);
    if (!status) return std::nullopt;

    auto body = body_of(out);
    if (!body) return std::nullopt;
    auto is_b64 = flag_of(out, "isBase64Encoded");
    if (!is_b64) return std::nullopt;
    if (!*is_b64 && rest && out.contains("base64Encoded")) {
        is_b64 = flag_of(out, "base64Encoded");
        if (!is_b64) return std::nullopt;
    }

    http::header_list single;
    if (!read_headers(out, single)) return std::nullopt;

    // multiValueHeaders: object of arrays of scalars (a string value is malformed,
    // serverless-offline#1082). Merged with headers; on the same name (any case)
    // multiValueHeaders wins [REST-PROXY].
    http::header_list multi;
    std::vector<std::string> multi_names;
    if (auto mv = out.find("multiValueHeaders"); mv != out.end() && !mv->is_null()) {
        if (!mv->is_object()) return std::nullopt;
        for (const auto& [name, values] : mv->items()) {
            if (values.is_null()) continue;
            if (!values.is_array()) return std::nullopt;
            multi_names.push_back(name);
            for (const auto& v : values) {
                if (v.is_null()) continue;
                auto text = scalar_text(v);
                if (!text) return std::nullopt;
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
        if (!bytes) return std::nullopt;
        res.body = std::move(*bytes);
    } else {
        res.body = std::move(*body); // {statusCode:200} alone is 200 with no body (spec §8)
    }
    return res;
}

// Payload format 2.0: [HTTP-LAMBDA], spec §4.4.
std::optional<http::response> map_v2(std::string_view output, const config::api& api) {
    json out = json::parse(output, nullptr, false);
    if (out.is_discarded()) return std::nullopt; // valid JSON is required

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

    auto status = status_of(out["statusCode"]);
    if (!status) return std::nullopt;
    res.status = *status;
    auto body = body_of(out); // a non-string body is malformed (unverified for 2.0)
    if (!body) return std::nullopt;
    auto is_b64 = flag_of(out, "isBase64Encoded");
    if (!is_b64) return std::nullopt;

    http::header_list headers;
    if (!read_headers(out, headers)) return std::nullopt;
    for (auto& [name, value] : headers)
        add_function_header(res, api.kind, std::move(name), std::move(value));

    // Each cookies[] entry becomes its own Set-Cookie (spec §8).
    if (auto c = out.find("cookies"); c != out.end() && !c->is_null()) {
        if (!c->is_array()) return std::nullopt;
        for (const auto& cookie : *c) {
            if (!cookie.is_string()) return std::nullopt;
            res.add("Set-Cookie", cookie.get<std::string>());
        }
    }
    // multiValueHeaders and unknown keys are ignored in 2.0.

    // Unverified for an explicit 2.0 response; the documented default of inference.
    if (!res.header("Content-Type")) res.add("Content-Type", "application/json");

    if (*is_b64) { // HTTP APIs always decode
        auto bytes = codec::base64_decode(*body);
        if (!bytes) return std::nullopt;
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

http::response error_response(config::api_kind kind, gateway_error error,
                              const std::string& request_id) {
    error_shape shape = shape_of(kind, error);
    http::response res;
    res.status = shape.status;
    res.body = shape.body;
    res.add("Content-Type", "application/json");
    // HTTP API error responses are not known to carry x-amzn-ErrorType (unverified).
    if (shape.error_type) res.add("x-amzn-ErrorType", shape.error_type);
    stamp_request_id(res, kind, request_id);
    return res;
}

http::response map_response(std::string_view output, const http::request& req, const route_match& m,
                            const std::string& request_id) {
    const config::api& api = *m.api;
    auto res = m.route->payload_format_version == "2.0" && api.kind == config::api_kind::http
                   ? map_v2(output, api)
                   : map_v1(output, req, api);
    if (!res) return error_response(api.kind, gateway_error::integration_failure, request_id);
    stamp_request_id(*res, api.kind, request_id);
    return std::move(*res);
}

} // namespace coldbrew::gateway
