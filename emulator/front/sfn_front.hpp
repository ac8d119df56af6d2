#pragma once
// The Step Functions API on its own port (settings::sfn_port), as SDKs call it: the AWS JSON
// 1.0 protocol. Every call is POST / with `X-Amz-Target: AWSStepFunctions.<Operation>` and
// `Content-Type: application/x-amz-json-1.0` and a JSON object body; the answer is 200 with
// `Content-Type: application/x-amz-json-1.0` and the operation's JSON, or 400 with
// {"__type": "<ErrorName>", "message": "…"}; every answer carries `x-amzn-RequestId`.
//
// Sources: the AWS Step Functions API Reference ("Common Parameters", each action's request
// and response syntax, "Errors"); the Smithy awsJson1_0 protocol (target header, content
// type, error body: the SDKs read the error name from `__type`, dropping any "namespace#"
// prefix and ":…" suffix, and the message from `message` or `Message`; Step Functions sends
// the lower-case `message`). The AWS SDK for JavaScript v3 (@aws-sdk/client-sfn) sends these
// headers, and reads its endpoint from `endpoint` or, as every SDK with service-specific
// endpoints, AWS_ENDPOINT_URL_SFN (then AWS_ENDPOINT_URL); boto3 reads
// AWS_ENDPOINT_URL_SFN too (SDKs and Tools reference guide, "Service-specific endpoints").
// StartSyncExecution carries the host prefix "sync-" in the API model (AWS's sync-states
// endpoint): SDKs prepend it to the endpoint's host unless told not to (JS v3
// `disableHostPrefix: true`, boto3 `inject_host_prefix=False`); with 127.0.0.1 or
// localhost the prefixed host does not resolve, so local callers turn it off.
//
// Which operations answer: StartExecution, StartSyncExecution, DescribeExecution,
// GetExecutionHistory, StopExecution, ListExecutions, ListStateMachines,
// DescribeStateMachine, SendTaskSuccess, SendTaskFailure, SendTaskHeartbeat. Any other
// target (CreateStateMachine, an unknown name, none) is UnknownOperationException; a body
// that is not a JSON object, or a member of the wrong JSON type, is SerializationException.
// The API calls themselves are not faulted: faults apply to the Tasks' invocations.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "emulator/http/access.hpp"
#include "emulator/http/message.hpp"
#include "emulator/http/server.hpp"
#include "emulator/states/service.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::front {

inline constexpr std::string_view sfn_content_type = "application/x-amz-json-1.0";
inline constexpr std::string_view sfn_target_prefix = "AWSStepFunctions.";

// The 400 answer to an api_error (its status when not 400), with the request id.
http::response sfn_error_response(const states::api_error& e, const std::string& request_id);
// The 200 answer to an operation's JSON.
http::response sfn_json_response(const nlohmann::json& body, const std::string& request_id);

class sfn_front {
public:
    // `svc` and `rng` must outlive it.
    sfn_front(states::service& svc, const models::random_source& rng);

    // The server's request handler: answers on `respond` now, or (StartSyncExecution) when
    // the execution ends. No exception leaves: a bug answers 500 InternalFailure.
    void handle(http::request req, http::responder respond);
    // The answer to bytes that are not an HTTP request (400 SerializationException, 413 for a
    // body over the server's limit).
    std::function<http::response(http::parse_failure)> parse_failure_answer();
    // Who may call (emulator/http/access.hpp), once the listener's port is known; a refusal
    // is 403 AccessDeniedException in the JSON 1.0 error shape. Unset: anyone.
    void set_access(http::access_policy policy) { access_ = std::move(policy); }

private:
    void route(const http::request& req, http::responder& respond, const std::string& id);
    std::string next_request_id();

    states::service& svc_;
    const models::random_source& rng_;
    std::optional<http::access_policy> access_;
    std::uint64_t next_index_ = 0;
};

}  // namespace coldbrew::front
