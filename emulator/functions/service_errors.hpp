#pragma once
// Lambda's own service errors, as the Invoke API returns them and the AWS SDKs parse them:
// HTTP status, the error code (sent as x-amzn-ErrorType) and the JSON body (shared spec §3.3,
// Lambda service model as shipped in @aws-sdk/client-lambda). The codes are the exact
// exception names; `sam local` sends shortened ones ("ResourceNotFound"), which the SDKs do
// not map to their exception classes (spec §6.5).
//
// Body field names follow the service model: `Type` and `Reason` capitalised; `Message`
// capitalised for ResourceNotFoundException and ServiceException, `message` lower-case for
// the others. Text that echoes client input is emitted as JSON even when it is not UTF-8
// (invalid bytes become U+FFFD).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::functions {

struct service_error {
    int status = 500;
    std::string error_type; // x-amzn-ErrorType, e.g. "TooManyRequestsException"
    std::string body;       // JSON
    // TooManyRequestsException's retryAfterSeconds, sent as the Retry-After header.
    std::optional<int> retry_after_s;
};

// Seconds coldbrew puts in Retry-After on a throttle. AWS documents the field
// (retryAfterSeconds) but not the value it sends; 1 s is coldbrew's choice (unverified). The
// JS SDK v3 waits at least this long before its own retry of a 429.
inline constexpr int throttle_retry_after_s = 1;

// 429 TooManyRequestsException: {"Type":"User","message":"Rate Exceeded.","Reason":"<reason>"},
// retry_after_s = throttle_retry_after_s. `reason` is a ThrottleReason:
// ReservedFunctionConcurrentInvocationLimitExceeded, ConcurrentInvocationLimitExceeded,
// FunctionInvocationRateLimitExceeded, … The message text is the one seen on Invoke throttles
// ("Rate Exceeded."); AWS does not document it (spec §3.3).
service_error too_many_requests(std::string_view reason);

// 404 ResourceNotFoundException: {"Type":"User","Message":"<message>"}; e.g. "Function not
// found: arn:aws:lambda:us-east-1:123456789012:function:my-fn" (spec §3.3).
service_error resource_not_found(std::string_view message);

// 413 with code RequestEntityTooLargeException (the model names it RequestTooLargeException;
// the wire code SDKs see is this one, spec §3.3): {"Type":"User","message":"<message>"}.
service_error request_too_large(std::string_view message);

// 400 InvalidRequestContentException: {"Type":"User","message":"<message>"}. Lambda's answer
// to a payload that is not JSON and to a malformed X-Amz-Client-Context (spec §3.3;
// boto/boto3#2153: "Client context must be a valid Base64-encoded JSON object.").
service_error invalid_request_content(std::string_view message);

// 400 InvalidParameterValueException: {"Type":"User","message":"<message>"} (spec §3.3).
service_error invalid_parameter_value(std::string_view message);

// 400 ValidationException: {"message":"<n> validation error(s) detected: <v1>; <v2>"}. The
// answer of the AWS front end when a member breaks the model's constraints (enum, pattern,
// length), each violation worded "Value '<v>' at '<member>' failed to satisfy constraint:
// Member must …" — as captured from Lambda for a bad X-Amz-Invocation-Type
// (ex-aws/ex_aws#442; AWS "Common Errors": ValidationException, 400). `violations` is not
// empty.
service_error validation_failed(const std::vector<std::string>& violations);

// 500 ServiceException: {"Type":"Service","Message":"<message>"} (spec §3.3; the Type value
// "Service" is unverified). SDKs treat it as transient and retry.
service_error service_exception(std::string_view message);

// 404 UnknownOperationException: {"message":"<message>"} — a request that names no operation
// coldbrew serves. The code is the one AWS REST-JSON front ends use for unrouted requests;
// status and body for Lambda are unverified.
service_error unknown_operation(std::string_view message);

// 403 AccessDeniedException: {"Type":"User","Message":"<message>"} (fields as the Lambda
// service model has them, spec §3.3). coldbrew sends it to a request its control-plane access
// rules refuse (emulator/http/access.hpp), where Lambda would refuse an unsigned caller.
service_error access_denied(std::string_view message);

// 408 RequestTimeoutException: {"message":"<message>"} — a request that did not arrive in
// full within the request timeout. AWS documents no answer for Lambda here; the code and
// status are coldbrew's choice (unverified).
service_error request_timeout(std::string_view message);

} // namespace coldbrew::functions
