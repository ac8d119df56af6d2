#pragma once
// The Lambda Invoke API (2015-03-31) as plain functions: parse and validate a request, and
// build every answer — the invocation's result, 202 for Event, 204 for DryRun, and the
// service errors exactly as the AWS SDKs parse them (status, x-amzn-ErrorType, JSON body).
// No sockets: the caller owns the listener, looks the function up, and runs the invocation.
//
// AWS facts are from shared spec §3.1–3.3 and §1.9 [INVOKE][QUOTA][ASYNC1MB]; captured error
// texts name their source; choices where AWS is undocumented are marked "unverified".
//
// Every response carries x-amzn-RequestId (see context::request_id).

#include "emulator/functions/function_pool.hpp"
#include "emulator/functions/service_errors.hpp"
#include "emulator/http/message.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace coldbrew::invoke {

// Largest Event payload: 1 MB since Oct 2025, was 256 KB (spec §1.9 [ASYNC1MB]). The
// synchronous limit is functions::max_sync_request_bytes (6291456); both are inclusive.
inline constexpr std::size_t max_event_request_bytes = 1048576;
// Largest X-Amz-Client-Context header: "up to 3,583 bytes of base64-encoded data" [INVOKE];
// coldbrew applies it to the header as sent (the encoded text).
inline constexpr std::size_t max_client_context_bytes = 3583;
// X-Amz-Log-Result holds the base64 of the last 4 KB of the log [INVOKE] (spec §3.2).
inline constexpr std::size_t log_tail_bytes = 4096;

enum class invocation_type { request_response, event, dry_run };

struct invoke_request {
    // The function name, taken from a name, name:qualifier, partial ARN
    // ("123456789012:function:name[:qualifier]") or full ARN, after percent-decoding.
    std::string function;
    // From the FunctionName suffix or ?Qualifier= (they must agree): "$LATEST", a version
    // number or an alias; nullopt when neither gives one.
    std::optional<std::string> qualifier;
    std::string as_given; // the FunctionName path segment, decoded, for messages
    invocation_type type = invocation_type::request_response;
    // X-Amz-Log-Type: Tail. Always false unless type is request_response, since Lambda returns
    // the log for synchronous invocations only [INVOKE].
    bool tail_log = false;
    // X-Amz-Client-Context, base64-decoded: the JSON object text; "" when absent. Always ""
    // unless type is request_response: "Lambda passes the ClientContext object to your
    // function for synchronous invocations only" [INVOKE].
    std::string client_context;
    // The request body, checked to be JSON. An empty body becomes "{}", the event Lambda and
    // `sam local start-lambda` hand the function when no payload is sent (spec §3.4).
    std::string payload;
};

// One Invoke API request's surroundings: the account and region coldbrew pretends to be
// (config::settings; SAM CLI's defaults us-east-1 / 123456789012 unless configured) and the
// request id the caller drew for this request from the injected random source. Every
// response built with this context carries it as x-amzn-RequestId; on Lambda it is also the
// invocation's awsRequestId, so the caller passes the same id as
// functions::invocation::request_id (or to accepted_event / dry_run_ok).
struct context {
    std::string region = "us-east-1";
    std::string account_id = "123456789012";
    std::string request_id;
};

// Parses `POST /2015-03-31/functions/{FunctionName}/invocations[?Qualifier=…]`. Checks, in
// this order, answering with the first failure:
//  - any other method or path: 404 UnknownOperationException (unverified for Lambda);
//  - constraint violations, all of them in one 400 ValidationException (AWS's wording,
//    e.g. "Value 'dry_run' at 'invocationType' failed to satisfy constraint: Member must
//    satisfy enum value set: [DryRun, RequestResponse, Event]", ex-aws/ex_aws#442):
//    FunctionName length 1–170 and the model's pattern, Qualifier length 1–128 and pattern
//    (|[a-zA-Z0-9$_-]+), X-Amz-Invocation-Type in {RequestResponse, Event, DryRun},
//    X-Amz-Log-Type in {None, Tail} (values case-sensitive; an empty header is absent);
//  - payload over the limit of its invocation type (6291456 bytes for RequestResponse and
//    DryRun, 1048576 for Event; the limit itself is allowed): 413
//    RequestEntityTooLargeException, "Request must be smaller than 6291456 bytes for the
//    InvokeFunction operation" / "<N> byte payload is too large for the Event invocation
//    type (limit 1048576 bytes)" (spec §3.3, limit updated per §1.9);
//  - an ARN of another region: 404 ResourceNotFoundException "Functions from '<r>' are not
//    reachable in this region ('<ctx.region>')" (captured from Lambda,
//    alexcasalboni/aws-lambda-power-tuning#18); of another account: 404 "Function not found:
//    <that ARN>" (AWS would answer AccessDeniedException; coldbrew has no IAM);
//  - a qualifier in FunctionName that differs from ?Qualifier=: 400
//    InvalidParameterValueException "The derived qualifier from the function name does not
//    match the specified qualifier." (wording unverified);
//  - X-Amz-Client-Context longer than max_client_context_bytes, not base64, or not a JSON
//    object: 400 InvalidRequestContentException "Client context must be a valid
//    Base64-encoded JSON object." (boto/boto3#2153; the too-long wording is unverified);
//  - a payload that is not JSON (including invalid UTF-8): 400
//    InvalidRequestContentException "Could not parse request body into json: Could not parse
//    payload into json: <parser detail>" (prefix as Lambda words it,
//    awsdocs/aws-lambda-developer-guide#382; the detail is coldbrew's parser's).
// Content-Type is not checked: SDKs send binary/octet-stream, application/octet-stream or
// none, and no source shows Lambda answering 415 for any of them (`sam local` rejecting
// binary/octet-stream broke the JS SDK, aws/aws-sam-cli#591).
// Whether the function exists is the caller's question (function_not_found).
std::variant<invoke_request, http::response> parse_invoke(const http::request& req,
                                                          const context& ctx);

// True when coldbrew can run the qualifier asked for: none, or "$LATEST". coldbrew runs one
// version of each function; any other version or alias does not exist here, and the caller
// answers function_not_found, as Lambda does for an unknown version or alias.
bool serves_qualifier(const invoke_request& r);

// "arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]".
std::string function_arn(const invoke_request& r, const context& ctx);

// 404 ResourceNotFoundException {"Type":"User","Message":"Function not found: <function_arn>"}
// (spec §3.3, aarondfrancis/sidecar#23).
http::response function_not_found(const invoke_request& r, const context& ctx);

// 429 TooManyRequestsException {"Type":"User","message":"Rate Exceeded.","Reason":<reason>}
// with Retry-After: functions::throttle_retry_after_s (value unverified).
http::response throttled(std::string_view reason, std::string_view request_id);

// The answer to a RequestResponse invocation, for every outcome (the one place outcomes
// become HTTP), with x-amzn-RequestId = r.request_id:
//  - success, function_error: 200, body = r.payload, Content-Type application/json,
//    X-Amz-Executed-Version: $LATEST; function_error adds X-Amz-Function-Error: Unhandled
//    (spec §3.2, §6.6); with req.tail_log, X-Amz-Log-Result = base64 of the last
//    log_tail_bytes of r.log (the whole log when shorter; present even when empty);
//  - any other outcome: service_error_response(r).
http::response invocation_response(const functions::invocation_result& r,
                                   const invoke_request& req);

// Lambda's service error for an invocation the pool did not run, x-amzn-RequestId =
// r.request_id:
//  - throttled: 429 as throttled(r.throttle_reason, …);
//  - too_large: 413 RequestEntityTooLargeException, message r.message;
//  - unavailable (coldbrew shutting down): 500 ServiceException, message r.message, which
//    SDKs retry (what AWS answers here is not documented; a 503 would not map to a Lambda
//    exception);
//  - success, function_error (not service errors): 500 ServiceException, so a misuse still
//    answers in Lambda's shape.
http::response service_error_response(const functions::invocation_result& r);

// The answer to a request the HTTP server could not read: a body over the server's limit is
// 413 RequestEntityTooLargeException with the synchronous limit's message (the largest any
// invocation type allows); anything else (malformed HTTP, header too large) is 400
// InvalidRequestContentException "The request could not be parsed." (coldbrew's wording).
http::response malformed_request(bool body_too_large, std::string_view request_id);

// 202, empty body: an Event invocation was queued (spec §3.2).
http::response accepted_event(std::string_view request_id);

// 204, empty body: a DryRun whose checks passed (spec §3.2).
http::response dry_run_ok(std::string_view request_id);

// Any service error as its HTTP response: e.status, x-amzn-ErrorType: e.error_type,
// x-amzn-RequestId, Content-Type: application/json, Retry-After when e.retry_after_s is set.
http::response to_response(const functions::service_error& e, std::string_view request_id);

} // namespace coldbrew::invoke
