#pragma once
// Lambda's own service errors, as the Invoke API returns them and the AWS SDKs parse them:
// HTTP status, the error code (sent as x-amzn-ErrorType) and the JSON body (shared spec §3.3,
// Lambda service model as shipped in @aws-sdk/client-lambda).

#include <string>
#include <string_view>

namespace coldbrew::functions {

struct service_error {
    int status = 500;
    std::string error_type;  // x-amzn-ErrorType, e.g. "TooManyRequestsException"
    std::string body;        // JSON
};

// 429 TooManyRequestsException: {"Type":"User","message":"Rate Exceeded.","Reason":"<reason>"}.
// `reason` is a ThrottleReason: ReservedFunctionConcurrentInvocationLimitExceeded,
// ConcurrentInvocationLimitExceeded, FunctionInvocationRateLimitExceeded, … The message text
// is the one commonly seen ("Rate Exceeded."); AWS does not document it (spec §3.3).
service_error too_many_requests(std::string_view reason);

}  // namespace coldbrew::functions
