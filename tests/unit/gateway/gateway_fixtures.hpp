#pragma once
// Hand-built stacks and requests for the gateway unit tests (no YAML).

#include "emulator/config/stack.hpp"
#include "emulator/gateway/gateway.hpp"
#include "emulator/http/message.hpp"

#include <string>
#include <utility>
#include <vector>

namespace coldbrew::gateway::testing {

inline config::api rest_api(std::string id = "ServerlessRestApi", std::string stage = "Prod",
                            std::vector<std::string> binary = {}) {
    config::api a;
    a.id = std::move(id);
    a.kind = config::api_kind::rest;
    a.stage = std::move(stage);
    a.binary_media_types = std::move(binary);
    return a;
}

inline config::api http_api(std::string id = "ServerlessHttpApi", std::string stage = "$default") {
    config::api a;
    a.id = std::move(id);
    a.kind = config::api_kind::http;
    a.stage = std::move(stage);
    return a;
}

inline config::route route(std::string api_id, std::string method, std::string path,
                           std::string function, std::string payload = "1.0") {
    config::route r;
    r.api_id = std::move(api_id);
    r.method = std::move(method);
    r.path = std::move(path);
    r.function = std::move(function);
    r.payload_format_version = std::move(payload);
    return r;
}

inline http::request request(std::string method, std::string target, http::header_list headers = {},
                             std::string body = {}) {
    http::request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.headers = std::move(headers);
    r.body = std::move(body);
    return r;
}

inline request_info info() {
    request_info i;
    i.request_id = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef";
    i.extended_request_id = "K2G9wEbUoAMEvag=";
    i.epoch_ms = 1583349317135; // 04/Mar/2020:19:15:17 +0000
    i.trace_id = "Root=1-5e5fffc5-0123456789abcdef01234567";
    i.account_id = "123456789012";
    i.source_ip = "192.0.2.7";
    return i;
}

} // namespace coldbrew::gateway::testing
