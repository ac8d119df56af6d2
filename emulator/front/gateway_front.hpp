#pragma once
// API Gateway as a front end of the shared request path: routing, the Lambda proxy event,
// response mapping and the gateway's own error answers (emulator/gateway/ holds those as plain
// functions); everything else a request goes through is the executor's.

#include <cstdint>
#include <functional>
#include <string_view>

#include "emulator/config/stack.hpp"
#include "emulator/front/executor.hpp"
#include "emulator/gateway/gateway.hpp"

namespace coldbrew::front {

// Finds what a route or an Invoke call names: the logical id, or (Invoke) the deployed
// FunctionName. Null when nothing has that name.
using function_lookup = std::function<function_target*(std::string_view name)>;

// API Gateway payload quota: 10 MB (shared spec §4.6 [APIGW-LIMITS]).
inline constexpr std::size_t gateway_max_payload_bytes = 10 * 1024 * 1024;

class gateway_front {
public:
    // `stack`, `ex`, `clock` and `rng` must outlive it.
    gateway_front(const config::stack& stack, executor& ex, const coldbrew::clock& clock,
                  const models::random_source& rng, function_lookup find);

    // The server's request handler. A bug answers API Gateway's 500 and is counted as an
    // emulator error; no exception leaves.
    void handle(http::request req, http::responder respond);
    // The gateway's answer to bytes that are not a request it can read (400, 413, 431).
    std::function<http::response(http::parse_failure)> parse_failure_answer();

private:
    void route(http::request req, const std::shared_ptr<request>& r);

    const config::stack& stack_;
    executor& ex_;
    const coldbrew::clock& clock_;
    const models::random_source& rng_;
    function_lookup find_;
    gateway::route_table routes_;
    config::api_kind default_kind_ = config::api_kind::rest;
    std::uint64_t next_request_index_ = 0;
};

}  // namespace coldbrew::front
