#pragma once
// The stack the gateway harnesses route against: a REST API with binary media types, CORS
// and a stage, HTTP APIs with payload format 2.0 and 1.0, a named stage, CORS and $default —
// every routing and event-building branch a request can reach. Built in code, once.

#include "emulator/config/stack.hpp"

namespace coldbrew::fuzz {

inline config::stack gateway_stack() {
    auto api = [](std::string id, config::api_kind kind, std::string stage) {
        config::api a;
        a.id = std::move(id);
        a.kind = kind;
        a.stage = std::move(stage);
        return a;
    };
    auto route = [](std::string api_id, std::string method, std::string path, std::string payload) {
        config::route r;
        r.api_id = std::move(api_id);
        r.method = std::move(method);
        r.path = std::move(path);
        r.function = "fn";
        r.payload_format_version = std::move(payload);
        return r;
    };
    config::cors_config cors;
    cors.allow_origins = {"https://*", "http://app.example.com"};
    cors.allow_methods = {"GET", "POST"};
    cors.allow_headers = {"content-type", "x-api-key"};
    cors.expose_headers = {"x-trace"};
    cors.max_age_s = 600;
    cors.allow_credentials = true;

    config::stack s;
    auto rest = api("ServerlessRestApi", config::api_kind::rest, "Prod");
    rest.binary_media_types = {"image/*", "application/pdf", "*/*+octet"};
    rest.stage_variables = {{"table", "users"}};
    rest.cors = cors;
    rest.cors->allow_origins = {"*"};
    auto http2 = api("ServerlessHttpApi", config::api_kind::http, "$default");
    http2.cors = cors;
    s.apis = {rest, http2, api("StagedHttpApi", config::api_kind::http, "v1"),
              api("V1HttpApi", config::api_kind::http, "$default")};
    s.routes = {
        route("ServerlessRestApi", "GET", "/hello", "1.0"),
        route("ServerlessRestApi", "ANY", "/pets/{id}", "1.0"),
        route("ServerlessRestApi", "POST", "/pets/{id}/toys/{toy}", "1.0"),
        route("ServerlessRestApi", "ANY", "/files/{proxy+}", "1.0"),
        route("ServerlessRestApi", "GET", "/", "1.0"),
        route("ServerlessHttpApi", "GET", "/v2/pets/{id}", "2.0"),
        route("ServerlessHttpApi", "ANY", "/v2/any", "2.0"),
        route("ServerlessHttpApi", "POST", "/v2/{proxy+}", "2.0"),
        route("StagedHttpApi", "GET", "/staged/{name}", "2.0"),
        route("V1HttpApi", "GET", "/v1fmt/{id}", "1.0"),
        route("ServerlessHttpApi", "ANY", "$default", "2.0"),
    };
    return s;
}

}  // namespace coldbrew::fuzz
