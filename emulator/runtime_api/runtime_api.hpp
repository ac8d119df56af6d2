#pragma once
// The Lambda Runtime API (2018-06-01) as plain functions: classify a runtime's HTTP call,
// check it against the environment's phase, and build the exact responses. The execution
// environment (emulator/functions/) owns the listener and acts on the answers.
//
// Endpoints, status codes and error bodies: shared spec §1.2–1.4 [RTAPI][OAS], error bodies
// mirrored from the RIE (internal/lambda/rapi/rendering/render_error.go).

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "emulator/http/message.hpp"

namespace coldbrew::runtime_api {

// Largest response a runtime may post: 6 MiB + 100 bytes (RIE interop/model.go MaxPayloadSize;
// production message "…exceeded maximum allowed payload size (6291556 bytes)").
inline constexpr std::size_t max_response_bytes = 6 * 1024 * 1024 + 100;

struct next_call {};                       // GET  /runtime/invocation/next
struct response_call {                     // POST /runtime/invocation/{id}/response
    std::string request_id;
    std::string body;
    // Lambda-Runtime-Function-Response-Mode: streaming. Its bytes are paced as a streamed
    // response (first 6 MB at the environment's bandwidth, the rest at 2 MBps).
    bool streamed = false;
};
struct error_call {                        // POST /runtime/invocation/{id}/error
    std::string request_id;
    std::string error_type;                // Lambda-Runtime-Function-Error-Type, may be empty
    std::string body;
};
struct init_error_call {                   // POST /runtime/init/error
    std::string error_type;
    std::string body;
};
// Anything else: the response to send right away (404 for unknown paths, 405, 400 …).
struct rejected_call {
    http::response response;
};

using call = std::variant<next_call, response_call, error_call, init_error_call, rejected_call>;

// Classifies a request made by the runtime. Streaming responses
// (Lambda-Runtime-Function-Response-Mode) other than "buffered"/"streaming" are rejected
// with 400 InvalidFunctionResponseMode.
call parse_call(const http::request& req);

// The phases of one execution environment as the Runtime API sees them.
enum class phase {
    initializing,  // process started, no /next yet
    waiting,       // /next is held open, no invocation delivered
    invoking,      // an event was delivered; expecting /response or /error
    finishing,     // answered; the next /next starts the wait again
    init_failed,   // /init/error was posted
};

// nullopt when `c` is allowed in phase `p` for the invocation `current_request_id`;
// otherwise the AWS-shaped rejection: 400 InvalidRequestID for a wrong id, 403
// InvalidStateTransition for a call out of order (e.g. /response twice, /init/error after
// init), 413 RequestEntityTooLarge for a response over max_response_bytes.
std::optional<http::response> check_call(phase p, const std::string& current_request_id,
                                         const call& c);

struct invocation_headers {
    std::string request_id;
    std::int64_t deadline_ms = 0;  // absolute, Unix epoch milliseconds
    std::string invoked_function_arn;
    std::string trace_id;          // "Root=1-…;Parent=…;Sampled=0"
    std::string client_context;    // JSON text, omitted when empty
    std::string cognito_identity;  // JSON text, omitted when empty
};

// 200 to /next: the event as body, all invoke headers (spec §1.3; always the six the RIE
// sends when set — runtimes hard-require some of them, RIE#11).
http::response next_response(const invocation_headers& h, std::string event);

// 202 {"status":"OK"}.
http::response accepted();

// {"errorMessage": message, "errorType": type} with `status`.
http::response error_response(int status, const std::string& error_type,
                              const std::string& message);

// Lambda's body for a platform-detected function error (interop/model.go
// GetErrorResponseWithFormattedErrorMessage):
// {"errorType":T,"errorMessage":"RequestId: <id> Error: <message>"}
std::string platform_error_body(const std::string& error_type, const std::string& request_id,
                                const std::string& message);

// Normalises what a runtime posted to /error or /init/error into the body the caller gets and
// its error type: the body is passed through when it is a JSON object; otherwise one is built
// from the Lambda-Runtime-Function-Error-Type header. The type is the header when it matches
// (Runtime|Function)\.[A-Z][a-zA-Z]+, else errorType from the body, else Runtime.Unknown /
// Function.Unknown (RIE fatalerror.go).
struct function_error {
    std::string error_type;
    std::string body;
};
function_error normalise_error(const std::string& header_type, const std::string& body);

}  // namespace coldbrew::runtime_api
