#pragma once
// API Gateway emulation as plain functions: routing, Lambda proxy event building (payload
// format 1.0 and 2.0), response mapping, and the gateway's own error responses. No sockets:
// emulator/gateway/gateway_server.cpp wires these to the HTTP listener and the function pool.
//
// AWS facts are from shared spec §4 (sources: REST-PROXY, APIGW-LAMBDA, HTTP-LAMBDA,
// HTTP-ROUTES, GWRESP, APIGW-ERR); each function's comment names the rule it implements.

#include "emulator/config/stack.hpp"
#include "emulator/http/message.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coldbrew::gateway {

struct route_match {
    const config::route* route = nullptr;
    const config::api* api = nullptr;
    // Path parameters in template order; for {proxy+} the rest of the path, e.g. {"proxy",
    // "a/b/c"}. REST: values as sent, still percent-encoded ("abc%2F100", "a%20b"); HTTP API:
    // percent-decoded (not '+'), the path having been decoded before matching (routing.cpp).
    std::vector<std::pair<std::string, std::string>> path_parameters;
    std::string path; // request path with any stage prefix removed, raw (not decoded)
};

// All routes of every API, served on one port at their paths as `sam local start-api` does.
// Routes of an API with a named stage (REST; HTTP API other than $default) also answer under a
// leading "/{stage}" segment, as AWS serves them; that form is tried first.
class route_table {
  public:
    explicit route_table(const config::stack& stack);

    // Priority per HTTP-ROUTES: exact path > {param} > {proxy+} > $default; an explicit method
    // beats ANY; HEAD is not implied by GET. "/{proxy+}" does not match "/". One trailing '/'
    // is ignored ("/hello/" is served by "/hello"); REST keeps "%2F" inside a segment, HTTP
    // APIs decode it into a separator (sources: routing.cpp).
    // nullopt when nothing matches.
    std::optional<route_match> match(std::string_view method, std::string_view raw_path) const;

    // Which API kind answers a miss: REST 403 "Missing Authentication Token" or HTTP API 404.
    // The kind of an API having a route on this path (any method), else of the API whose
    // named stage is the path's first segment, else REST if the stack has a REST API, else
    // HTTP.
    config::api_kind miss_kind(std::string_view raw_path) const;

    // An OPTIONS request that match() found no route for: the API whose CORS answers it
    // (gateway/cors.hpp) — the best route of any method on this path, by match()'s rules and
    // stage handling, among the routes whose API has CORS settings for their resource path
    // (cors_for); $default routes never count. `resource_path` is that route's template
    // ("/pets/{id}"). nullopt when no such route matches.
    struct preflight_match {
        const config::api* api = nullptr;
        const config::cors_config* cors = nullptr;
        std::string resource_path;
    };
    std::optional<preflight_match> match_preflight(std::string_view raw_path) const;

  private:
    const config::stack* stack_;
};

// Per-request values the gateway generates. All come from the injected clock and random
// source, so they are deterministic under a seed.
struct request_info {
    std::string request_id;          // requestContext.requestId; also x-amzn-RequestId
    std::string extended_request_id; // REST requestContext.extendedRequestId
    std::int64_t epoch_ms = 0;       // requestTimeEpoch / timeEpoch
    std::string trace_id;            // X-Amzn-Trace-Id value, "Root=1-xxxxxxxx-yyyy…"
    std::string account_id;          // "123456789012" by default
    std::string source_ip = "127.0.0.1";
    // requestContext.authorizer of the integration's event, as JSON text in the shape the
    // route's payload format version takes (authorizers::event_authorizer,
    // jwt::event_authorizer); "" when the route has no authorizer (REST events then carry
    // none, 2.0 events omit it).
    std::string authorizer_json;
    // REST requestContext.identity.apiKey / apiKeyId when the method required an API key.
    std::string api_key, api_key_id;
};

// A stable 10-character lower-case alphanumeric API id derived from the API's logical id,
// like the ids AWS assigns ("a1b2c3d4e5").
std::string api_id_for(const config::api& api);

// Payload format 1.0 event (REST, or HTTP API with PayloadFormatVersion 1.0, which adds
// "version":"1.0"). Empty collections and empty body are null; headers and
// queryStringParameters hold the last value, multiValue* all values in order; header names
// keep client casing (REST; HTTP APIs lower-case them); body is base64 with
// isBase64Encoded=true when the request Content-Type matches the API's binaryMediaTypes (REST;
// HTTP APIs apply build_event_v2's text rule).
std::string build_event_v1(const http::request& req, const route_match& m,
                           const request_info& info);

// Payload format 2.0 event: lower-cased header names, duplicates comma-joined, cookies in
// cookies[], absent values omitted, rawPath/rawQueryString as sent; non-text bodies base64.
std::string build_event_v2(const http::request& req, const route_match& m,
                           const request_info& info);

enum class gateway_error {
    missing_route,       // REST 403 Missing Authentication Token / HTTP 404 Not Found
    integration_failure, // function error or malformed proxy response: REST 502 / HTTP 500
    integration_timeout, // REST 504 Endpoint request timed out / HTTP 503 Service Unavailable
    lambda_rejected,     // Lambda refused the invoke (throttle): 500 Internal server error
    request_too_large,   // payload over 10 MB, or event over Lambda's 6 MB: 413
};

// The gateway's own error response: AWS's exact status, body and x-amzn-ErrorType.
http::response error_response(config::api_kind kind, gateway_error error,
                              const std::string& request_id);

// An error answer by status, for injected gateway errors: 429 (THROTTLED), 500, 502, 503
// or 504, with the body and x-amzn-ErrorType AWS gives that status where one is documented
// (500/502/504 as above; REST 429 per the THROTTLED gateway response [GWRESP], body
// unverified). Statuses API Gateway has no documented body for (REST 503, HTTP API 502/504)
// get {"message":"<reason phrase>"}. Any other status: std::invalid_argument.
http::response status_error_response(config::api_kind kind, int status,
                                     const std::string& request_id);

// Maps the function's successful output to the client response, per the route's payload
// format version. Malformed output (REST: body not a string, multiValueHeaders value not a
// list, unknown top-level key, missing/invalid statusCode, not a JSON object; 2.0: invalid
// JSON; both: a 1xx statusCode, a header name that is not an RFC 9110 token, a header value
// or cookie holding CR, LF or NUL) gives error_response(integration_failure). 2.0 infers a
// response when statusCode is missing. Adds Content-Type application/json when the function
// gave none; a function's Content-Length never reaches the client as such (REST remaps it to
// x-amzn-Remapped-Content-Length, HTTP APIs drop it), since the server sets its own.
// `why`, when given, receives the reason output was malformed, in words for API Gateway's
// execution log line "Malformed Lambda proxy response (<why>)" — e.g. "body must be a
// string", "statusCode missing", "invalid header name 'bad name'"; function-supplied text in
// it is escaped to printable ASCII. It is set to "" when the output mapped.
http::response map_response(std::string_view output, const http::request& req, const route_match& m,
                            const std::string& request_id, std::string* why = nullptr);

// The REST `x-amz-apigw-id` value for a request id: 16 base64 characters ending in '='
// ("K2G9wEbUoAMEvag=" in captured responses), stable for a given id. Callers may use it as
// request_info::extended_request_id, which on AWS carries the same value.
std::string apigw_id_for(std::string_view request_id);

// Headers every gateway response carries: x-amzn-RequestId (and apigw-requestid on HTTP APIs,
// x-amz-apigw-id on REST).
void stamp_request_id(http::response& res, config::api_kind kind, const std::string& request_id);

} // namespace coldbrew::gateway
