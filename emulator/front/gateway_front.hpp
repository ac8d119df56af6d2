#pragma once
// API Gateway as a front end of the shared request path: routing, the Lambda proxy event,
// response mapping and the gateway's own error answers (emulator/gateway/ holds those as plain
// functions); everything else a request goes through is the executor's.

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>

#include "emulator/authorizers/authorizers.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/front/executor.hpp"
#include "emulator/gateway/api_keys.hpp"
#include "emulator/gateway/gateway.hpp"
#include "emulator/jwt/jwt.hpp"

namespace coldbrew::front {

// Finds what a route or an Invoke call names: the logical id, or (Invoke) the deployed
// FunctionName. Null when nothing has that name.
using function_lookup = std::function<function_target*(std::string_view name)>;

// API Gateway payload quota: 10 MB (shared spec §4.6 [APIGW-LIMITS]).
inline constexpr std::size_t gateway_max_payload_bytes = 10 * 1024 * 1024;

// API Gateway's "Total combined size of request line and header values": 10240 bytes, not
// adjustable, for HTTP APIs (docs.aws.amazon.com/apigateway/latest/developerguide/
// http-api-quotas.html) and REST APIs (…/api-gateway-execution-service-limits-table.html,
// which also caps a regional API's URL at 10240 characters). Over it the gateway answers
// 413 REQUEST_TOO_LARGE, or 414 when the request line alone is over (the 414 "Request URI
// too long" the quotas page, limits.html, names for a URI it will not take); see
// parse_failure_answer. http::server_options::line_and_values_limit counts the same bytes.
inline constexpr std::size_t gateway_line_and_values_limit = 10240;

// The keys of the stack's JWT authorizers, loaded at start (jwt::load_keys), by
// jwt_keys_name(api, authorizer).
using jwt_key_sets = std::map<std::string, jwt::key_set>;
std::string jwt_keys_name(const config::api& api, const config::authorizer& a);

// What a route with a Step Functions integration (config::route::state_machine set) starts:
// the app's, on top of states::service. The gateway builds the StartExecution request as API
// Gateway does (emulator/gateway/sfn_integration.hpp) and hands its parts here, after the
// route's guards and its fault decision, as it would invoke a function.
struct state_machine_starter {
    virtual ~state_machine_starter() = default;
    // Starts an execution of route.state_machine as route.state_machine_action says.
    // `input_json`: the execution input (JSON text, not checked here: the service answers
    // InvalidExecutionInput); `name`: the execution name, "" = drawn by the service;
    // `trace_header`: the X-Amzn-Trace-Id the gateway passes on. `done` is called exactly
    // once, on the loop (before start returns or later) with the Step Functions API's answer:
    //   start_execution       → 200, {"executionArn": …, "startDate": <epoch seconds>}
    //   start_sync_execution  → 200, the StartSyncExecution answer (status SUCCEEDED, FAILED,
    //                            TIMED_OUT, with output or error/cause)
    //   an error              → its status (400 for the API's errors), {"__type", "message"}
    //     as the Step Functions API words it (sfn_front).
    virtual void start(const config::route& route, std::string input_json, std::string name,
                       std::string trace_header,
                       std::function<void(int status, std::string body_json)> done) = 0;
};

class gateway_front;
class gateway_protocol;

class gateway_front {
public:
    // `stack`, `ex`, `clock`, `rng` and `scheduler` must outlive it. Every API key of the
    // stack has its value. `scheduler` gives the modeled time the authorizer result cache and
    // the usage plans' buckets run on.
    gateway_front(const config::stack& stack, executor& ex, const coldbrew::clock& clock,
                  const models::random_source& rng, function_lookup find,
                  sched::scheduler& scheduler, jwt_key_sets jwt_keys = {},
                  state_machine_starter* starter = nullptr);

    // The starter of the routes with a Step Functions integration (must outlive the front);
    // while there is none, such a route answers as a function that cannot be invoked (500).
    void set_state_machine_starter(state_machine_starter* starter) noexcept { starter_ = starter; }

    // Forgets cached authorizer results and refills the usage plans' buckets and quotas (the
    // admin API's counter reset).
    void reset_access();

    // The server's request handler. A bug answers API Gateway's 500 and is counted as an
    // emulator error; no exception leaves.
    void handle(http::request req, http::responder respond);
    // The gateway's answer to bytes that are not a request it can read (400, 413, 431).
    std::function<http::response(http::parse_failure)> parse_failure_answer();

private:
    friend class gateway_protocol;
    void route(http::request req, const std::shared_ptr<request>& r);
    void preflight(http::request req, const std::shared_ptr<request>& r,
                   gateway::route_table::preflight_match pm, const std::string& request_id,
                   std::uint64_t index);
    void start_state_machine(const std::shared_ptr<request>& r,
                             std::unique_ptr<gateway_protocol> proto);
    void guarded(http::request req, const std::shared_ptr<request>& r, gateway::route_match match,
                 gateway::request_info info, const std::string& route_key,
                 std::optional<http::response> mock);
    std::optional<http::response> check_api_key(gateway_protocol& p, std::string_view key);
    gateway::request_info request_info_for(const http::request& req, const std::string& request_id,
                                           std::uint64_t index) const;

    const config::stack& stack_;
    executor& ex_;
    const coldbrew::clock& clock_;
    const models::random_source& rng_;
    function_lookup find_;
    gateway::route_table routes_;
    config::api_kind default_kind_ = config::api_kind::rest;
    std::uint64_t next_request_index_ = 0;
    sched::scheduler& scheduler_;
    jwt_key_sets jwt_keys_;
    state_machine_starter* starter_ = nullptr;
    authorizers::result_cache auth_cache_;
    // TOKEN authorizers' validation expressions, compiled once.
    std::map<const config::authorizer*, authorizers::token_validator> token_validators_;
    gateway::api_key_gate api_keys_;
    // The OPTIONS routes of guarded REST preflights, made when first asked for.
    std::map<std::string, config::route> preflight_routes_;
};

}  // namespace coldbrew::front
