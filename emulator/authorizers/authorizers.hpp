#pragma once
// API Gateway Lambda authorizers as plain functions: identity sources, the authorizer's
// event, its answer (an IAM policy or a simple response), the policy evaluated for a method
// ARN, the result cache, what reaches the integration's event, and the gateway's answers
// when authorization fails. No sockets and no clock: time comes in as an argument. The
// gateway front end (emulator/front/gateway_front.cpp) invokes the authorizer function
// through the executor, which gives it its own fault decision, cold starts and span.
//
// AWS facts: each function's comment names its source (API Gateway developer guide pages
// "Use API Gateway Lambda authorizers", "Input to an API Gateway Lambda authorizer", "Output
// from an API Gateway Lambda authorizer", HTTP API "Working with AWS Lambda authorizers for
// HTTP APIs"; SAM CLI samcli/local/apigw/authorizers/ where AWS leaves a detail unsaid).
// [CAPTURED] below: events API Gateway delivered, recorded by the Powertools maintainers in
// aws-powertools/powertools-lambda-typescript#2624 and kept as
// packages/parser/tests/events/apigw-rest/*.json and apigw-http/*.json.
// An authorizer is REST's when its payload_format_version is "" and an HTTP API's otherwise.

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/gateway/gateway.hpp"
#include "emulator/http/message.hpp"

namespace coldbrew::authorizers {

// The identity a request presents to an authorizer: the values of its identity sources, in
// the authorizer's order.
struct identity {
    bool complete = false;            // every source present and non-empty
    std::vector<std::string> values;  // one per identity source (a missing one is "")
    std::string token;                // TOKEN: the header's value as sent
};

// Reads `a`'s identity sources from the request (headers case-insensitively, query strings
// decoded, stage variables of m.api, context variables from `info`: requestId, stage, …).
// A JWT authorizer's single source is read the same way.
// Syntax: REST "method.request.header.X", "method.request.querystring.X", "stageVariables.X",
// "context.X"; HTTP API "$request.header.X", "$request.querystring.X", "$stageVariables.X",
// "$context.X" (CloudFormation AWS::ApiGateway::Authorizer IdentitySource; HTTP API guide,
// "Identity sources"). A source that is absent, or present and empty, leaves `complete` false:
// API Gateway then answers 401 without calling the function ("present, not null and
// non-empty", IdentitySource; HTTP APIs treat an empty value as missing too, unverified: the
// guide says only "doesn't include"). Context variables are the requestContext fields of the route's
// event ("context.identity.sourceIp", "$context.routeKey", …); an unknown one is absent.
// Duplicate headers or query parameters: REST reads the last value (as the 1.0 event's
// `headers` holds it), HTTP APIs the comma-joined values (as 2.0 does); unverified. A TOKEN
// authorizer without identity sources reads Authorization (SAM's default Header).
identity read_identity(const config::authorizer& a, const http::request& req,
                       const gateway::route_match& m, const gateway::request_info& info);

// TOKEN authorizers: whether the token passes IdentityValidationExpression (the whole token
// must match; an empty expression passes everything). A token that fails gets 401 and the
// authorizer is not called (Authorizer.identityValidationExpression, API Gateway API
// reference). Whole-token matching is unverified (AWS says "match"; SAM's documented example
// `Bearer.*` reads as a whole-token pattern). The expression is ECMAScript syntax here, which
// agrees with Java's on the patterns people write; one that does not compile passes nothing.
// Compiled once per authorizer, when the gateway starts: matching is on every request.
class token_validator {
public:
    explicit token_validator(const config::authorizer& a);
    bool passes(std::string_view token) const;

private:
    bool any_ = true;               // no expression: every token passes
    std::optional<std::regex> re_;  // nullopt with !any_: the expression does not compile
};

// "arn:aws:execute-api:{region}:{account}:{api id}/{stage}/{METHOD}/{path without its leading
// slash}" — REST methodArn and HTTP API routeArn both name the request's actual path (not the
// resource template) and method ([CAPTURED] ".../prod/POST/lambda-request",
// ".../$default/POST/lambda"). The path is the event's `path`: without the stage prefix,
// percent-decoded (decoding unverified). An HTTP API without a stage name is "$default".
std::string method_arn(const config::api& api, const gateway::route_match& m,
                       const http::request& req, std::string_view region,
                       std::string_view account_id);

// The event the authorizer function receives (JSON text):
//   REST TOKEN: {"type":"TOKEN","authorizationToken":…,"methodArn":…} (input guide; the
//   [CAPTURED] event has methodArn second, the guide's order is kept).
//   REST REQUEST: type, methodArn, resource, path, httpMethod, headers, multiValueHeaders,
//   queryStringParameters, multiValueQueryStringParameters, pathParameters, stageVariables,
//   requestContext — the 1.0 proxy event's fields without body and isBase64Encoded, and with
//   {} where the proxy event has null ([CAPTURED] apigw-rest/authorizer-request.json; the
//   input guide's sample has "pathParameters": {} too).
//   HTTP API, the authorizer's payload format version (not the route's):
//   1.0: version "1.0", type "REQUEST", methodArn, identitySource (the values joined with
//   ','), authorizationToken (the same string), then the 1.0 fields as for REST REQUEST (HTTP
//   API guide sample; its multiValue* keys are absent there, kept here as the 1.0 event has
//   them, unverified);
//   2.0: version, type, routeArn, identitySource (a list), routeKey, rawPath, rawQueryString,
//   cookies, headers, queryStringParameters, requestContext, pathParameters, stageVariables —
//   absent values omitted as in 2.0 events, no body ([CAPTURED] apigw-http/authorizer-request).
// requestContext never carries an `authorizer` here (info.authorizer_json is ignored).
std::string build_event(const config::authorizer& a, const http::request& req,
                        const gateway::route_match& m, const gateway::request_info& info,
                        const identity& id, std::string_view arn);

// An authorizer's answer, parsed: what is cached and what evaluate() judges.
struct result {
    bool simple = false;         // an HTTP API simple response ({"isAuthorized": …})
    bool is_authorized = false;  // simple only
    std::string principal_id;    // IAM form
    nlohmann::json policy;       // IAM form: the policyDocument object
    // The answer's context: an object, or null when it gave none. REST: string, number and
    // boolean values only; HTTP APIs: any JSON (the HTTP API guide's examples return arrays
    // and maps, which reach requestContext.authorizer.lambda).
    nlohmann::json context;
    std::string usage_identifier_key;  // REST usageIdentifierKey ("" when absent)
};

// Parses the authorizer function's successful output for `a` (simple responses when
// a.simple_responses and payload format 2.0, else the IAM policy form). nullopt when
// malformed; `why` then says why, in words for the log. Malformed (API Gateway answers 500,
// AuthorizerConfigurationException "Could not parse policy"; HTTP API guide
// "Troubleshooting"): not a JSON object; IAM form without a string principalId or an object
// policyDocument, a Statement that is not an object or a non-empty list of objects, a
// statement without Effect "Allow"/"Deny" or without string-or-list Action/Resource (or
// NotAction/NotResource) (SAM CLI LambdaAuthorizerIAMPolicyValidator); a context that is not
// an object; on REST a context value that is not a string, number or boolean (output guide:
// "you cannot set a JSON object or array"; null too, per dherault/serverless-offline#1376,
// checked against AWS); simple form without a boolean isAuthorized.
std::optional<result> parse_result(const config::authorizer& a, std::string_view output,
                                   std::string* why = nullptr);

// IAM policy evaluation for execute-api:Invoke on `arn`: a Statement (object or list) whose
// Action ("execute-api:Invoke", "execute-api:*", "*", or a list) and Resource (string or
// list, '*' and '?' wildcards, ARN segments compared as IAM does) match; an explicit Deny
// wins over any Allow; no match denies.
// IAM rules (IAM User Guide, "IAM JSON policy elements: Resource" and "Action"): actions
// compare case-insensitively, with '*' and '?'; in a Resource, '*' and '?' stay within one
// colon-separated segment, except that a '*' ending a segment may run past colons, and '*'
// matches '/' (so ".../*/GET/*" covers every stage and path). NotAction / NotResource invert
// the match. Condition blocks are not evaluated (coldbrew has no condition keys): a statement
// with one applies as if it had none.
enum class effect { allow, deny, no_match };
effect evaluate_policy(const nlohmann::json& policy_document, std::string_view arn);

// What API Gateway does with a request given the authorizer's result. REST words the two
// 403s differently (AWS Knowledge Center "troubleshoot HTTP 403 Forbidden errors when using a
// Lambda authorizer"), so they are two verdicts; HTTP APIs answer both alike.
enum class verdict {
    allow,
    unauthorized,   // 401 (missing identity, failed validation expression, "Unauthorized")
    deny,           // 403: an explicit Deny, or a simple response's isAuthorized false
    implicit_deny,  // 403: no statement allows it (also a cached policy for another path)
    failure,        // 500 (malformed answer, the function failed)
};
verdict judge(const result& r, std::string_view arn);

// The authorizer function reported an error (its payload is Lambda's error JSON):
// errorMessage "Unauthorized" means 401 (the TOKEN blueprint's callback("Unauthorized")),
// anything else 500. The match is exact: "Unauthorized: bad signature" is a 500 with
// {"message": null} (auth0-samples/jwt-rsa-aws-custom-authorizer#6, aws/aws-lambda-go#81).
// HTTP APIs are treated alike (unverified).
verdict judge_function_error(std::string_view error_payload);

// requestContext.authorizer as the integration's event carries it, for the route's payload
// format version. 1.0 (REST, HTTP API 1.0): {"principalId", context keys…, "integrationLatency"}
// with context values as strings; HTTP API 2.0: {"lambda": context}. `latency_ms` is the
// authorizer call's modeled duration (0 on a cache hit).
// REST: context values stringified ("1", "true"; output guide: "The returned values are all
// stringified"), integrationLatency a whole number of ms ([CAPTURED] {"principalId":"user",
// "integrationLatency":422}). HTTP API 2.0: "lambda" is null when the answer had no context
// ([CAPTURED] apigw-http/lambda-authorizer-auth.json); principalId does not appear. HTTP API
// 1.0: principalId (IAM form) and the context as returned, as SAM CLI passes them, plus
// integrationLatency as on REST (unverified).
nlohmann::json event_authorizer(const config::authorizer& a, const result& r,
                                std::string_view payload_format_version, double latency_ms);

// The gateway's answers for a request its authorizer turned away, with AWS's status, body and
// x-amzn-ErrorType: REST 401 {"message":"Unauthorized"} (UnauthorizedException),
// 403 {"Message":"User is not authorized to access this resource with an explicit deny"}
// (AccessDeniedException), 500 {"message": null} (AuthorizerConfigurationException); HTTP API
// 401 {"message":"Unauthorized"}, 403 {"message":"Forbidden"}, 500 {"message":"Internal
// Server Error"}. The request id headers are stamped (gateway::stamp_request_id).
// REST implicit_deny: 403 {"Message":"User is not authorized to access this resource"}. The
// capital M of both 403 bodies is what curl shows (82-byte body in public captures); the
// Knowledge Center article writes "message". HTTP API responses carry no x-amzn-ErrorType
// (as gateway::error_response). verdict::allow has no answer: std::invalid_argument.
http::response answer(config::api_kind kind, verdict v, const std::string& request_id);

// The key a result is cached under: the authorizer's name and its identity values. nullopt:
// this authorizer's results are not cached (TTL 0, or no identity sources).
// (HTTP API guide, "Caching authorizer responses": the identity sources are the key, caching
// needs at least one; REST TOKEN: the token.) The authorizer's function is part of the key
// too, so two APIs with a same-named authorizer do not share results. JWT authorizers: never.
std::optional<std::string> cache_key(const config::authorizer& a, const identity& id);

// Authorizer results by cache key, each kept for its authorizer's TTL. Times are the
// scheduler's modeled milliseconds (an injected clock), so a test advances them.
// A cached IAM result is judged again for each request's ARN (judge), so a policy naming one
// path denies another path within the TTL, as on AWS (Knowledge Center "API Gateway proxy
// resource with a Lambda authorizer that has caching activated returning HTTP 403").
class result_cache {
public:
    // The result stored under `key` and not expired at `now_ms` (an entry lives while
    // now_ms < stored-at + ttl_ms); an expired entry found here is dropped. The pointer is
    // valid until the next call that changes the cache.
    const result* find(const std::string& key, double now_ms);
    // Stores (or replaces) the result for `key`; a ttl_ms <= 0 stores nothing.
    void put(const std::string& key, result r, double ttl_ms, double now_ms);
    void clear();
    std::size_t size() const noexcept { return entries_.size(); }

private:
    struct entry {
        result r;
        double expires_ms = 0;
    };
    std::map<std::string, entry, std::less<>> entries_;
};

}  // namespace coldbrew::authorizers
