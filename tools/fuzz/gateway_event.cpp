// The gateway's request path: bytes as a client sends them → the server's parser → routing
// (and CORS preflight routing for OPTIONS) → the Lambda proxy event in both payload formats.
// Every event must be one JSON object (the function's runtime parses it).

#include "emulator/gateway/cors.hpp"
#include "emulator/gateway/gateway.hpp"
#include "tools/fuzz/gateway_stack.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>

using namespace coldbrew;

namespace {

void must_be_object(const std::string& event) {
    auto j = nlohmann::json::parse(event, nullptr, false);
    if (!j.is_object()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const config::stack stack = fuzz::gateway_stack();
    static const gateway::route_table table(stack);

    auto req = fuzz::parse_request(fuzz::as_text(data, size));
    if (!req) return 0;
    gateway::request_info info;
    info.request_id = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef";
    info.extended_request_id = gateway::apigw_id_for(info.request_id);
    info.epoch_ms = 1583349317135;
    info.trace_id = "Root=1-5e5fffc5-0123456789abcdef01234567";
    info.account_id = "123456789012";

    auto m = table.match(req->method, req->path());
    if (!m) {
        (void)table.miss_kind(req->path());
        if (auto pre = table.match_preflight(req->path())) {
            auto res = gateway::preflight_response(*pre->api, *pre->cors, *req, info.request_id);
            (void)res;
        }
        return 0;
    }
    must_be_object(gateway::build_event_v1(*req, *m, info));
    must_be_object(gateway::build_event_v2(*req, *m, info));
    if (m->api && m->api->cors) {
        http::response res;
        gateway::add_cors_headers(*m->api, *m->api->cors, *req, res);
    }
    return 0;
}
