#pragma once
// CORS as API Gateway and the templates' generated OPTIONS methods answer it, as plain
// functions (sources in each comment: API Gateway developer guide "Enabling CORS for a REST
// API resource" and "Configuring CORS for an HTTP API"; SAM's generated OPTIONS mock
// (samtranslator swagger generator add_cors); serverless v3
// lib/plugins/aws/package/compile/events/api-gateway/lib/cors.js).

#include <optional>
#include <string>
#include <string_view>

#include "emulator/config/stack.hpp"
#include "emulator/http/message.hpp"

namespace coldbrew::gateway {

// The CORS settings that apply to `resource_path` ("/pets/{id}") of `api`: REST path_cors
// for that path, else api.cors; nullptr when none.
const config::cors_config* cors_for(const config::api& api, std::string_view resource_path);

// Whether `req` is a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method.
bool is_preflight(const http::request& req);

// The answer to an OPTIONS request on a path of `api` with `cors` and no OPTIONS route of its
// own; request id headers stamped.
// REST, the OPTIONS mock SAM and serverless generate (samtranslator swagger.py add_cors and
// _options_method_response_for_cors; serverless cors.js compileCors): 200, Content-Type
// application/json, body "{}" (SAM's response template; serverless's is empty), for any
// Origin and whether or not it is a preflight, with Access-Control-Allow-Origin always,
// Access-Control-Allow-Headers and -Methods when their lists are not empty (joined with ','),
// Access-Control-Max-Age when set, Access-Control-Allow-Credentials "true" only when true
// (both generators omit it otherwise). Several allow_origins (serverless `origins`): the
// mock's template echoes an Origin matching one of them ('*' standing for one or more
// characters), else the first is sent.
// HTTP API ("Configure CORS for HTTP APIs": API Gateway answers preflights itself, even
// without an OPTIONS route; CORS headers need an Origin, and for OPTIONS an
// Access-Control-Request-Method too): a preflight gets 204 (an API Gateway v2 emulator's
// end-to-end test expects 204; not in the guide). When its Origin is allowed ("*", a
// "https://*" / "http://*" scheme wildcard, or an exact origin; the guide lists no subdomain
// wildcards, so "https://*.example.com" only matches itself), its requested method is in
// AllowMethods (or "*") and every requested header in AllowHeaders (case-insensitive, or
// "*"), the 204 carries Access-Control-Allow-Origin ("*" when any origin is allowed, else the
// Origin), -Allow-Methods, -Allow-Headers, -Max-Age (when set) and -Allow-Credentials (when
// true); otherwise the 204 carries no CORS headers (unverified: the browser then refuses).
// An OPTIONS that is not a preflight gets the HTTP API's missing-route 404 (unverified).
http::response preflight_response(const config::api& api, const config::cors_config& cors,
                                  const http::request& req, const std::string& request_id);

// HTTP API: removes the integration's own Access-Control-* headers ("If you configure CORS
// for an API, API Gateway ignores CORS headers returned from your backend integration") and,
// when the request's Origin is allowed, adds Access-Control-Allow-Origin, -Allow-Credentials
// (when true) and -Expose-Headers (when any). REST: nothing (the function's proxy response
// carries its own; SAM: "we cannot inject the headers into the actual response").
void add_cors_headers(const config::api& api, const config::cors_config& cors,
                      const http::request& req, http::response& res);

}  // namespace coldbrew::gateway
