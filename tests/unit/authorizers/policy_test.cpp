#include "tests/unit/authorizers/authorizer_fixtures.hpp"

#include <nlohmann/json.hpp>

using namespace coldbrew;
using namespace coldbrew::authorizers;
using namespace coldbrew::authorizers::testing;
using nlohmann::json;

namespace {

const std::string arn = "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/Prod/GET/pets/7";

json statement(const char* effect, json resource, json action = "execute-api:Invoke") {
    return json{{"Effect", effect}, {"Action", std::move(action)}, {"Resource", std::move(resource)}};
}

json policy(json statements) {
    return json{{"Version", "2012-10-17"}, {"Statement", std::move(statements)}};
}

std::string iam_output(json statements, json extra = json::object()) {
    json out = {{"principalId", "user-1"}, {"policyDocument", policy(std::move(statements))}};
    for (auto& [k, v] : extra.items())
        out[k] = v;
    return out.dump();
}

config::authorizer http_authorizer(bool simple) {
    auto a = request_authorizer({"$request.header.Authorization"}, "2.0");
    a.simple_responses = simple;
    return a;
}

} // namespace

TEST_CASE("policy: exact ARN, '*' and '?' wildcards over the ARN", "[unit]") {
    auto allow = [](json resource) {
        return evaluate_policy(policy(json::array({statement("Allow", resource)})), arn);
    };
    CHECK(allow(arn) == effect::allow);
    CHECK(allow("*") == effect::allow);
    CHECK(allow("arn:aws:execute-api:*") == effect::allow); // a final '*' runs past colons
    CHECK(allow("arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*") == effect::allow);
    CHECK(allow("arn:aws:execute-api:*:*:abcdef1234/*/GET/*") == effect::allow); // '*' spans '/'
    CHECK(allow("arn:aws:execute-api:us-east-?:123456789012:abcdef1234/Prod/GET/pets/?") ==
          effect::allow);
    CHECK(allow("arn:aws:execute-api:us-east-1:123456789012:abcdef1234/Prod/POST/*") ==
          effect::no_match);
    CHECK(allow("arn:aws:execute-api:us-east-1:123456789012:abcdef1234/Prod/GET/pets") ==
          effect::no_match); // no implied prefix
    CHECK(allow("arn:aws:execute-api:us-east-1:123456789012:abcdef1234/Prod/GET/pets/??") ==
          effect::no_match);
    CHECK(allow("arn:aws:execute-api:us-east-1:999999999999:*") == effect::no_match);
    // Inside a segment, '*' and '?' do not cross a colon.
    CHECK(allow("arn:aws:execute-api:us*1:123456789012:abcdef1234/*") == effect::allow);
    CHECK(allow("arn:aws:execute-api:us-east-1*012:abcdef1234/*") == effect::no_match);
    CHECK(allow("arn:aws:execute-api:us-east-1?123456789012:abcdef1234/*") == effect::no_match);
    // ARNs compare case-sensitively.
    CHECK(allow("arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/GET/*") ==
          effect::no_match);
}

TEST_CASE("policy: Resource lists, Action forms and case", "[unit]") {
    auto with_action = [](json action) {
        return evaluate_policy(policy(json::array({statement("Allow", "*", action)})), arn);
    };
    CHECK(with_action("execute-api:Invoke") == effect::allow);
    CHECK(with_action("execute-api:invoke") == effect::allow); // actions are case-insensitive
    CHECK(with_action("execute-api:*") == effect::allow);
    CHECK(with_action("*") == effect::allow);
    CHECK(with_action("execute-api:Inv*") == effect::allow);
    CHECK(with_action(json::array({"s3:GetObject", "execute-api:Invoke"})) == effect::allow);
    CHECK(with_action("execute-api:ManageConnections") == effect::no_match);
    CHECK(with_action(json::array({"s3:*", "lambda:InvokeFunction"})) == effect::no_match);

    json list = json::array({"arn:aws:execute-api:*:*:other/*", arn});
    CHECK(evaluate_policy(policy(json::array({statement("Allow", list)})), arn) == effect::allow);
}

TEST_CASE("policy: a single Statement object, several statements, explicit Deny wins", "[unit]") {
    CHECK(evaluate_policy(policy(statement("Allow", arn)), arn) == effect::allow);
    CHECK(evaluate_policy(policy(statement("Deny", arn)), arn) == effect::deny);

    json allow_all_deny_one = json::array(
        {statement("Allow", "*"), statement("Deny", "arn:aws:execute-api:*:*:*/Prod/GET/pets/*")});
    CHECK(evaluate_policy(policy(allow_all_deny_one), arn) == effect::deny);
    CHECK(evaluate_policy(policy(allow_all_deny_one),
                          "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/Prod/GET/other") ==
          effect::allow);

    json deny_first = json::array({statement("Deny", "*"), statement("Allow", arn)});
    CHECK(evaluate_policy(policy(deny_first), arn) == effect::deny);

    json unrelated = json::array({statement("Deny", "arn:aws:execute-api:*:*:*/Prod/POST/*"),
                                  statement("Allow", "arn:aws:execute-api:*:*:*/Prod/GET/*")});
    CHECK(evaluate_policy(policy(unrelated), arn) == effect::allow);

    CHECK(evaluate_policy(policy(json::array({statement("Deny", "arn:x")})), arn) ==
          effect::no_match);
}

TEST_CASE("policy: NotResource and NotAction invert the match", "[unit]") {
    json not_res = {{"Effect", "Deny"},
                    {"Action", "execute-api:Invoke"},
                    {"NotResource", "arn:aws:execute-api:*:*:*/Prod/GET/pets/*"}};
    json st = json::array({statement("Allow", "*"), not_res});
    CHECK(evaluate_policy(policy(st), arn) == effect::allow);
    CHECK(evaluate_policy(policy(st), "arn:aws:execute-api:us-east-1:1:a/Prod/DELETE/x") ==
          effect::deny);

    json not_action = {{"Effect", "Allow"}, {"NotAction", "s3:*"}, {"Resource", "*"}};
    CHECK(evaluate_policy(policy(json::array({not_action})), arn) == effect::allow);
}

TEST_CASE("parse_result: a good IAM answer, with context and usageIdentifierKey", "[unit]") {
    std::string why = "unset";
    auto r = parse_result(token_authorizer(),
                          iam_output(json::array({statement("Allow", arn)}),
                                     {{"context", {{"user", "u"}, {"n", 7}, {"ok", true}}},
                                      {"usageIdentifierKey", "key-value-123"}}),
                          &why);
    REQUIRE(r);
    CHECK(why.empty());
    CHECK_FALSE(r->simple);
    CHECK(r->principal_id == "user-1");
    CHECK(r->policy["Version"] == "2012-10-17");
    CHECK(r->context == json{{"user", "u"}, {"n", 7}, {"ok", true}});
    CHECK(r->usage_identifier_key == "key-value-123");
    CHECK(judge(*r, arn) == verdict::allow);
}

TEST_CASE("parse_result: no context is null", "[unit]") {
    auto r = parse_result(token_authorizer(), iam_output(statement("Allow", "*")));
    REQUIRE(r);
    CHECK(r->context.is_null());
    CHECK(r->usage_identifier_key.empty());
}

TEST_CASE("parse_result: malformed IAM answers, each with its reason", "[unit]") {
    auto rest = token_authorizer();
    json good_policy = policy(json::array({statement("Allow", "*")}));
    auto bad = [&](const std::string& output) {
        std::string why;
        auto r = parse_result(rest, output, &why);
        CHECK_FALSE(r);
        CHECK_FALSE(why.empty());
        return why;
    };
    CHECK(bad("not json") == "authorizer output is not JSON");
    bad("null");
    bad(R"("Allow")");
    bad(json{{"policyDocument", good_policy}}.dump());                       // no principalId
    bad(json{{"principalId", 7}, {"policyDocument", good_policy}}.dump());   // not a string
    bad(json{{"principalId", "u"}}.dump());                                  // no policyDocument
    bad(json{{"principalId", "u"}, {"policyDocument", "Allow"}}.dump());
    bad(iam_output(json::array()));                                          // no statements
    bad(iam_output("Allow"));
    bad(iam_output(json::array({"Allow"})));
    bad(iam_output(json::array({statement("Permit", "*")})));
    bad(iam_output(json::array({statement("allow", "*")})));
    bad(iam_output(json::array({json{{"Effect", "Allow"}, {"Resource", "*"}}}))); // no Action
    bad(iam_output(json::array({json{{"Effect", "Allow"}, {"Action", "execute-api:Invoke"}}})));
    bad(iam_output(json::array({statement("Allow", 7)})));
    bad(iam_output(json::array({statement("Allow", "*", json::array({1}))})));
    // REST context values: strings, numbers and booleans only.
    for (json v : {json::array({"a"}), json{{"k", "v"}}, json(nullptr)}) {
        INFO(v.dump());
        std::string why = bad(iam_output(statement("Allow", "*"), {{"context", {{"list", v}}}}));
        CHECK(why.find("'list'") != std::string::npos);
    }
    bad(iam_output(statement("Allow", "*"), {{"context", "text"}}));
    bad(iam_output(statement("Allow", "*"), {{"usageIdentifierKey", 5}}));
}

TEST_CASE("parse_result: HTTP API context may hold any JSON", "[unit]") {
    auto r = parse_result(http_authorizer(false),
                          iam_output(statement("Allow", "*"),
                                     {{"context", {{"list", {1, 2}}, {"map", {{"a", "b"}}}}}}));
    REQUIRE(r);
    CHECK(r->context["list"] == json::array({1, 2}));
}

TEST_CASE("parse_result: HTTP API simple responses", "[unit]") {
    auto a = http_authorizer(true);
    auto yes = parse_result(a, R"({"isAuthorized": true, "context": {"tier": "gold"}})");
    REQUIRE(yes);
    CHECK(yes->simple);
    CHECK(yes->is_authorized);
    CHECK(yes->context == json{{"tier", "gold"}});
    CHECK(judge(*yes, arn) == verdict::allow);

    auto no = parse_result(a, R"({"isAuthorized": false})");
    REQUIRE(no);
    CHECK(judge(*no, arn) == verdict::deny);

    std::string why;
    CHECK_FALSE(parse_result(a, R"({"isAuthorized": "true"})", &why));
    CHECK(why == "simple response needs a boolean isAuthorized");
    CHECK_FALSE(parse_result(a, R"({"context": {}})"));
    // Without EnableSimpleResponses an HTTP API answer is the IAM form.
    CHECK_FALSE(parse_result(http_authorizer(false), R"({"isAuthorized": true})"));
    // Simple responses exist for payload format 2.0 only.
    auto v1 = request_authorizer({"$request.header.Authorization"}, "1.0");
    v1.simple_responses = true;
    CHECK_FALSE(parse_result(v1, R"({"isAuthorized": true})"));
}

TEST_CASE("judge: explicit deny, implicit deny, and a cached policy for another path",
          "[unit]") {
    auto r = parse_result(token_authorizer(), iam_output(statement("Allow", arn)));
    REQUIRE(r);
    CHECK(judge(*r, arn) == verdict::allow);
    CHECK(judge(*r, "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/Prod/GET/pets/8") ==
          verdict::implicit_deny);
    auto d = parse_result(token_authorizer(), iam_output(statement("Deny", "*")));
    REQUIRE(d);
    CHECK(judge(*d, arn) == verdict::deny);
}

TEST_CASE("judge_function_error: only the exact message Unauthorized is a 401", "[unit]") {
    CHECK(judge_function_error(R"({"errorMessage":"Unauthorized","errorType":"Error"})") ==
          verdict::unauthorized);
    CHECK(judge_function_error(R"({"errorType":"Exception","errorMessage":"Unauthorized"})") ==
          verdict::unauthorized);
    CHECK(judge_function_error(R"({"errorMessage":"Unauthorized: expired"})") == verdict::failure);
    CHECK(judge_function_error(R"({"errorMessage":"unauthorized"})") == verdict::failure);
    CHECK(judge_function_error(R"({"errorMessage":"boom","errorType":"Error"})") ==
          verdict::failure);
    CHECK(judge_function_error("not json") == verdict::failure);
    CHECK(judge_function_error(R"({"errorType":"Runtime.ExitError"})") == verdict::failure);
}
