#pragma once
// API Gateway's Step Functions integrations as plain functions: the StartExecution /
// StartSyncExecution request API Gateway builds from a client request, what the Step
// Functions service gets of it, and how its answer reaches the client. No sockets and no
// service here: emulator/front/gateway_front.cpp hands the request to the app's
// state_machine_starter through the executor, as it invokes a function.
//
// The request (sources named per function):
//  - REST, SAM `Api` event on a state machine: SAM generates the integration's
//    `application/json` request template
//      {"input": "$util.escapeJavaScript($input.json('$'))", "stateMachineArn": "<arn>"}
//    (samtranslator/model/stepfunctions/events.py, Api._generate_request_template), so the
//    execution input is the request body's JSON, escaped into a string. Evaluated literally:
//    escapeJavaScript turns ' into \' which is not a JSON escape, so a body holding a single
//    quote makes a request Step Functions cannot read (what SAM's UnescapeMappingTemplate,
//    `.replaceAll("\\'","'")`, is for).
//  - REST with an explicit template (route::state_machine_request_template): that template,
//    in the VTL subset check_request_template accepts.
//  - HTTP API subtype StepFunctions-StartExecution / -StartSyncExecution: request parameters
//    (route::state_machine_request_template holds them as a JSON object) StateMachineArn,
//    Input, Name, Region, TraceHeader, each a static value or one mapping expression
//    (API Gateway developer guide, "Integration subtype reference" and "Transform API
//    requests and responses for HTTP APIs").

#include "emulator/config/stack.hpp"
#include "emulator/gateway/gateway.hpp"
#include "emulator/http/message.hpp"

#include <string>
#include <string_view>
#include <variant>

namespace coldbrew::gateway {

// "" when coldbrew evaluates `vtl`, else why not, in a sentence naming the first construct it
// does not evaluate. The subset: literal text; $input.json('<path>'), $input.path('<path>'),
// $input.body, $input.params('<name>'), $context.<name> (the REST requestContext names:
// requestId, extendedRequestId, httpMethod, resourcePath, resourceId, path, stage, apiId,
// accountId, protocol, domainName, domainPrefix, requestTime, requestTimeEpoch,
// identity.sourceIp, identity.userAgent, identity.apiKey, identity.apiKeyId),
// $util.escapeJavaScript(<expr>), .replaceAll('<regex>', '<text>') after any of them, and
// quoted string literals as arguments. <path> is $, then .name, ['name'] or [index] steps.
// No directives (#set, #if, #foreach …) and no other references ($stageVariables, $util.*).
std::string check_request_template(std::string_view vtl);

// "" when coldbrew evaluates these HTTP API request parameters (a JSON object text, as the
// loader keeps them), else why not. Keys: StateMachineArn, Input, Name, Region, TraceHeader;
// each value static text or one of $request.body, $request.body.<name>[.<name>…],
// $request.header.<name>, $request.querystring.<name>, $request.path.<name>,
// $context.requestId and the other $context names of payload format 2.0's requestContext
// (accountId, apiId, domainName, domainPrefix, http.method, http.path, http.protocol,
// http.sourceIp, http.userAgent, requestId, routeKey, stage, time, timeEpoch).
std::string check_request_parameters(std::string_view params_json);

// Every route of `stack` with a state machine: its template or parameters are checked as
// above. Throws config::config_error at the route (key path "<METHOD> <path>" of its API)
// naming what is not evaluated. Called while the stack is validated, before anything listens.
void check_state_machine_routes(const config::stack& stack);

// The SAM `Api` event template for a machine (see the header comment).
std::string sam_request_template(std::string_view state_machine_arn);

// The body API Gateway sends to Step Functions for this request (JSON text, as the template
// made it: it may not be JSON at all), or the gateway's own answer when it cannot build one:
//  - REST: the route's template (SAM's when it has none) when the request's Content-Type is
//    application/json or absent (API Gateway takes an absent one for application/json);
//    another Content-Type passes the body through unchanged, the integration's
//    passthroughBehavior being WHEN_NO_MATCH (SAM sets none; API Gateway's default).
//    A template reading $input.json or $input.path of a body that is not JSON: 400
//    {"message": "Could not parse request body into json: …"} (API Gateway's wording for
//    it; the detail after the colon is coldbrew's). An empty body reads as {} (unverified).
//  - HTTP API: {"stateMachineArn", "input", "name", "traceHeader"} from the parameters;
//    a parameter whose source is absent (no such header, query parameter, body field) is
//    left out (unverified). $request.body.<name> of a body that is not JSON: 400
//    {"message":"Bad Request"} (unverified).
// `state_machine_arn`: the route's machine's ARN, for SAM's template.
std::variant<std::string, http::response> build_start_request(const http::request& req,
                                                              const route_match& m,
                                                              const request_info& info,
                                                              std::string_view state_machine_arn);

// What the starter gets of a StartExecution request body, or the answer Step Functions gives
// a body it cannot read (AWS JSON 1.0 protocol, API Reference "Common Errors"):
// not a JSON object, or a member of the wrong type → 400 SerializationException; no
// stateMachineArn → 400 ValidationException. The machine started is the route's (the loader
// resolved the template's ARN to it); input defaults to "{}" as StartExecution's does.
struct start_call {
    std::string input = "{}";
    std::string name;          // "" = drawn by the service
    std::string trace_header;  // "" = the request's X-Amzn-Trace-Id
};
struct service_answer {
    int status = 200;
    std::string body;  // JSON text
};
std::variant<start_call, service_answer> read_start_request(std::string_view body);

// The client's response for the service's answer:
//  - REST: SAM's integration responses are "200" → 200 and "400" → 400 with no templates
//    (samtranslator/swagger/swagger.py add_state_machine_integration), so those pass the
//    service's body through as application/json; a status no response pattern matches
//    (the service's 5xx) gets 500 {"message": "Internal server error"} (no default
//    response is configured; unverified). OpenAPI-defined integrations' own `responses` are
//    not read: they are answered the same way.
//  - HTTP API: the service's status and body (AWS service integrations have no response
//    mapping; unverified).
// With the gateway's request id headers (stamp_request_id).
http::response map_start_answer(config::api_kind kind, const service_answer& answer,
                                const std::string& request_id);

// $util.escapeJavaScript: commons-lang StringEscapeUtils.escapeJavaScript rules (the API
// Gateway mapping template reference: "Escapes the characters in a string using JavaScript
// string rules"): " ' \ / escaped with a backslash, \b \t \n \f \r, other control characters
// and every character above U+007F as \uXXXX (UTF-16, upper-case hex). Invalid UTF-8 bytes
// become \uFFFD.
std::string escape_javascript(std::string_view s);

}  // namespace coldbrew::gateway
