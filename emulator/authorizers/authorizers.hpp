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

#include <cstdint>
#include <map>
#include <optional>
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
identity read_identity(const config::authorizer& a, const http::request& req,
                       const gateway::route_match& m, const gateway::request_info& info);

// TOKEN authorizers: whether the token passes IdentityValidationExpression (the whole token
// must match; an empty expression passes everything). A token that fails gets 401 and the
// authorizer is not called.
bool token_passes(const config::authorizer& a, std::string_view token);

// "arn:aws:execute-api:{region}:{account}:{api id}/{stage}/{METHOD}/{path without its leading
// slash}" — REST methodArn and HTTP API routeArn both name the request's actual path (not the
// resource template) and method.
std::string method_arn(const config::api& api, const gateway::route_match& m,
                       const http::request& req, std::string_view region,
                       std::string_view account_id);

// The event the authorizer function receives (JSON text):
//   REST TOKEN: {"type":"TOKEN","authorizationToken":…,"methodArn":…}
//   REST REQUEST: {"type":"REQUEST","methodArn",…, then the request's proxy-event fields}
//   HTTP API 1.0 / 2.0: the route's proxy event in that payload format version, with
//   "type":"REQUEST", the methodArn (1.0) or routeArn (2.0), and identitySource.
std::string build_event(const config::authorizer& a, const http::request& req,
                        const gateway::route_match& m, const gateway::request_info& info,
                        const identity& id, std::string_view arn);

// An authorizer's answer, parsed: what is cached and what evaluate() judges.
struct result {
    bool simple = false;         // an HTTP API simple response ({"isAuthorized": …})
    bool is_authorized = false;  // simple only
    std::string principal_id;    // IAM form
    nlohmann::json policy;       // IAM form: the policyDocument object
    nlohmann::json context;      // object; string, number and boolean values only
    std::string usage_identifier_key;  // REST usageIdentifierKey ("" when absent)
};

// Parses the authorizer function's successful output for `a` (simple responses when
// a.simple_responses, else the IAM policy form). nullopt when malformed (not an object,
// no policyDocument, a context value that is an object or array, …); `why` then says why, in
// words for the log.
std::optional<result> parse_result(const config::authorizer& a, std::string_view output,
                                   std::string* why = nullptr);

// IAM policy evaluation for execute-api:Invoke on `arn`: a Statement (object or list) whose
// Action ("execute-api:Invoke", "execute-api:*", "*", or a list) and Resource (string or
// list, '*' and '?' wildcards, ARN segments compared as IAM does) match; an explicit Deny
// wins over any Allow; no match denies.
enum class effect { allow, deny, no_match };
effect evaluate_policy(const nlohmann::json& policy_document, std::string_view arn);

// What API Gateway does with a request given the authorizer's result.
enum class verdict {
    allow,
    unauthorized,  // 401 (missing identity, failed validation expression, "Unauthorized")
    deny,          // 403 (explicit deny, or no statement allows it)
    failure,       // 500 (malformed answer, the function failed)
};
verdict judge(const result& r, std::string_view arn);

// The authorizer function reported an error (its payload is Lambda's error JSON):
// errorMessage "Unauthorized" means 401 (the TOKEN blueprint's callback("Unauthorized")),
// anything else 500.
verdict judge_function_error(std::string_view error_payload);

// requestContext.authorizer as the integration's event carries it, for the route's payload
// format version. 1.0 (REST, HTTP API 1.0): {"principalId", context keys…, "integrationLatency"}
// with context values as strings; HTTP API 2.0: {"lambda": context}. `latency_ms` is the
// authorizer call's modeled duration (0 on a cache hit).
nlohmann::json event_authorizer(const config::authorizer& a, const result& r,
                                std::string_view payload_format_version, double latency_ms);

// The gateway's answers for a request its authorizer turned away, with AWS's status, body and
// x-amzn-ErrorType: REST 401 {"message":"Unauthorized"} (UnauthorizedException),
// 403 {"Message":"User is not authorized to access this resource with an explicit deny"}
// (AccessDeniedException), 500 {"message": null} (AuthorizerConfigurationException); HTTP API
// 401 {"message":"Unauthorized"}, 403 {"message":"Forbidden"}, 500 {"message":"Internal
// Server Error"}. The request id headers are stamped (gateway::stamp_request_id).
http::response answer(config::api_kind kind, verdict v, const std::string& request_id);

// The key a result is cached under: the authorizer's name and its identity values. nullopt:
// this authorizer's results are not cached (TTL 0, or no identity sources).
std::optional<std::string> cache_key(const config::authorizer& a, const identity& id);

// Authorizer results by cache key, each kept for its authorizer's TTL. Times are the
// scheduler's modeled milliseconds (an injected clock), so a test advances them.
class result_cache {
public:
    // The result stored under `key` and not expired at `now_ms`.
    const result* find(const std::string& key, double now_ms);
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
