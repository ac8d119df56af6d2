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
// own. REST: the generated mock's 200 with its static Access-Control-Allow-* headers, for any
// Origin and whether or not it is a preflight. HTTP API: 204 with the headers for an allowed
// Origin and requested method/headers; otherwise API Gateway's answer for a disallowed
// preflight. Request id headers stamped.
http::response preflight_response(const config::api& api, const config::cors_config& cors,
                                  const http::request& req, const std::string& request_id);

// HTTP API: adds Access-Control-Allow-Origin (and -Credentials, -Expose-Headers) to an actual
// response when its Origin is allowed, replacing what the integration set, as API Gateway
// does. REST: nothing (the function's proxy response carries its own).
void add_cors_headers(const config::api& api, const config::cors_config& cors,
                      const http::request& req, http::response& res);

}  // namespace coldbrew::gateway
