// SAM templates → authorizers, CORS, API keys and usage plans, and the cross-checks
// load_stack runs on them (stack.hpp check_access).

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>
#include <string>

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

// AuthFn (FunctionName auth-fn) and HelloFunction, whose Events are `events` (indented by 8
// spaces already), then the extra resources (indented by 2) and a top-level section before.
std::string sam_template(const std::string& events, const std::string& resources = "",
                         const std::string& before = "") {
    return "Transform: AWS::Serverless-2016-10-31\n" + before +
           "Resources:\n"
           "  AuthFn:\n"
           "    Type: AWS::Serverless::Function\n"
           "    Properties:\n"
           "      FunctionName: auth-fn\n"
           "      Runtime: python3.12\n"
           "      Handler: auth.handler\n"
           "      CodeUri: src\n"
           "  HelloFunction:\n"
           "    Type: AWS::Serverless::Function\n"
           "    Properties:\n"
           "      Runtime: python3.12\n"
           "      Handler: app.handler\n"
           "      CodeUri: src\n"
           "      Events:\n" +
           events + resources;
}

std::string rest_event(const std::string& name, const std::string& path,
                       const std::string& method, const std::string& extra = "",
                       const std::string& api = "MyApi") {
    return "        " + name +
           ":\n"
           "          Type: Api\n"
           "          Properties:\n"
           "            RestApiId: !Ref " + api + "\n"
           "            Path: " + path + "\n"
           "            Method: " + method + "\n" + extra;
}

std::string http_event(const std::string& name, const std::string& path,
                       const std::string& method, const std::string& extra = "") {
    return "        " + name +
           ":\n"
           "          Type: HttpApi\n"
           "          Properties:\n"
           "            ApiId: !Ref MyHttp\n"
           "            Path: " + path + "\n"
           "            Method: " + method + "\n" + extra;
}

// An AWS::Serverless::Api MyApi with `props` (indented by 6).
std::string rest_api(const std::string& props, const std::string& id = "MyApi") {
    return "  " + id +
           ":\n"
           "    Type: AWS::Serverless::Api\n"
           "    Properties:\n"
           "      StageName: prod\n" + props;
}

std::string http_api(const std::string& props) {
    return "  MyHttp:\n"
           "    Type: AWS::Serverless::HttpApi\n"
           "    Properties:\n" + props;
}

const config::route& route_at(const config::stack& s, const std::string& path,
                              const std::string& method = "GET") {
    auto it = std::find_if(s.routes.begin(), s.routes.end(), [&](const config::route& r) {
        return r.path == path && r.method == method;
    });
    REQUIRE(it != s.routes.end());
    return *it;
}

const config::api& api_of(const config::stack& s, const std::string& id) {
    const config::api* a = s.find_api(id);
    REQUIRE(a != nullptr);
    return *a;
}

const std::string token_auth = R"(      Auth:
        DefaultAuthorizer: TokenAuth
        Authorizers:
          TokenAuth:
            FunctionArn: !GetAtt AuthFn.Arn
)";

} // namespace

TEST_CASE("SAM TOKEN authorizer defaults: Authorization header, 300 s cache, guards every route",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(rest_event("A", "/a", "get") + rest_event("B", "/b", "post"),
                                        rest_api(token_auth)));
    const auto& a = api_of(s, "MyApi");
    REQUIRE(a.authorizers.size() == 1);
    const auto& z = a.authorizers[0];
    CHECK(z.name == "TokenAuth");
    CHECK(z.kind == config::authorizer::type::token);
    CHECK(z.function == "AuthFn");
    CHECK(z.identity_sources == std::vector<std::string>{"method.request.header.Authorization"});
    CHECK(z.validation_expression.empty());
    CHECK(z.result_ttl_s == 300);
    CHECK(z.payload_format_version.empty());
    CHECK(route_at(s, "/a").authorizer == "TokenAuth");
    CHECK(route_at(s, "/b", "POST").authorizer == "TokenAuth");
    CHECK_FALSE(route_at(s, "/a").api_key_required);
    CHECK(a.preflight_authorizer.empty());  // no Cors, no generated OPTIONS
    CHECK(a.api_key_source == "HEADER");
    CHECK_FALSE(any_contains(s.warnings, "not emulated"));
}

TEST_CASE("SAM TOKEN authorizer Identity: Header, ValidationExpression, ReauthorizeEvery",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(rest_event("A", "/a", "get"), rest_api(R"(      Auth:
        DefaultAuthorizer: T
        Authorizers:
          T:
            FunctionArn: !Sub ${AuthFn.Arn}
            FunctionPayloadType: TOKEN
            Identity: {Header: X-Token, ValidationExpression: '^Bearer .+$', ReauthorizeEvery: 0}
)")));
    const auto& z = api_of(s, "MyApi").authorizers.at(0);
    CHECK(z.function == "AuthFn");
    CHECK(z.identity_sources == std::vector<std::string>{"method.request.header.X-Token"});
    CHECK(z.validation_expression == "^Bearer .+$");
    CHECK(z.result_ttl_s == 0);
}

TEST_CASE("SAM REQUEST authorizer: identity sources in REST syntax, function by ARN string",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(rest_event("A", "/a", "get"), rest_api(R"(      Auth:
        DefaultAuthorizer: R
        Authorizers:
          R:
            FunctionArn: arn:aws:lambda:us-east-1:123456789012:function:auth-fn
            FunctionPayloadType: REQUEST
            Identity:
              Headers: [Authorization, X-Tenant]
              QueryStrings: [q]
              StageVariables: [v]
              Context: [requestId]
              ReauthorizeEvery: 60
)")));
    const auto& z = api_of(s, "MyApi").authorizers.at(0);
    CHECK(z.kind == config::authorizer::type::request);
    CHECK(z.function == "AuthFn");
    CHECK(z.identity_sources ==
          std::vector<std::string>{"method.request.header.Authorization",
                                   "method.request.header.X-Tenant",
                                   "method.request.querystring.q", "stageVariables.v",
                                   "context.requestId"});
    CHECK(z.result_ttl_s == 60);
}

TEST_CASE("SAM REQUEST authorizer without identity sources: only when not cached", "[unit]") {
    temp_app app;
    SECTION("ReauthorizeEvery: 0 is accepted, always called") {
        const auto s = app.sam(sam_template(rest_event("A", "/a", "get"), rest_api(R"(      Auth:
        Authorizers:
          R:
            FunctionArn: !GetAtt AuthFn.Arn
            FunctionPayloadType: REQUEST
            Identity: {ReauthorizeEvery: 0}
)")));
        const auto& z = api_of(s, "MyApi").authorizers.at(0);
        CHECK(z.identity_sources.empty());
        CHECK(z.result_ttl_s == 0);
        CHECK(route_at(s, "/a").authorizer.empty());  // no DefaultAuthorizer
    }
    SECTION("no Identity is an error at the authorizer, as SAM rejects it") {
        auto e = error_of([&] {
            app.sam(sam_template(rest_event("A", "/a", "get"), rest_api(R"(      Auth:
        Authorizers:
          R: {FunctionArn: !GetAtt AuthFn.Arn, FunctionPayloadType: REQUEST}
)")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.Authorizers.R");
        CHECK(contains(e.message(), "at least one identity source"));
    }
}

TEST_CASE("SAM event Auth overrides the API's default: another authorizer, NONE", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        rest_event("A", "/a", "get") +
            rest_event("B", "/b", "get", "            Auth: {Authorizer: NONE}\n") +
            rest_event("C", "/c", "get", "            Auth: {Authorizer: Other}\n"),
        rest_api(token_auth + "          Other: {FunctionArn: !GetAtt AuthFn.Arn}\n")));
    CHECK(route_at(s, "/a").authorizer == "TokenAuth");
    CHECK(route_at(s, "/b").authorizer.empty());
    CHECK(route_at(s, "/c").authorizer == "Other");
}

TEST_CASE("SAM Globals.Api Auth applies to the implicit ServerlessRestApi", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(R"(        A:
          Type: Api
          Properties: {Path: /a, Method: get}
)",
                                        "", "Globals:\n  Api:\n" + std::string(R"(    Auth:
      DefaultAuthorizer: G
      Authorizers:
        G: {FunctionArn: !GetAtt AuthFn.Arn}
      ApiKeyRequired: true
      UsagePlan: {CreateUsagePlan: PER_API}
)")));
    const auto& a = api_of(s, "ServerlessRestApi");
    REQUIRE(a.authorizers.size() == 1);
    CHECK(route_at(s, "/a").authorizer == "G");
    CHECK(route_at(s, "/a").api_key_required);
    REQUIRE(s.usage_plans.size() == 1);
    CHECK(s.usage_plans[0].name == "ServerlessRestApiUsagePlan");
    CHECK(s.usage_plans[0].api_ids == std::vector<std::string>{"ServerlessRestApi"});
    REQUIRE(s.api_keys.size() == 1);
    CHECK(s.api_keys[0].name == "ServerlessRestApiApiKey");
    CHECK(s.api_keys[0].value.empty());  // drawn at start
    CHECK(s.api_keys[0].enabled);
}

TEST_CASE("SAM authorizer errors carry the key path", "[unit]") {
    temp_app app;
    const std::string events = rest_event("A", "/a", "get");
    SECTION("unknown FunctionPayloadType") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api(R"(      Auth:
        Authorizers:
          T: {FunctionArn: !GetAtt AuthFn.Arn, FunctionPayloadType: COOKIE}
)")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.Authorizers.T.FunctionPayloadType");
        CHECK(e.where().line > 0);
    }
    SECTION("DefaultAuthorizer naming no authorizer") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api(R"(      Auth:
        DefaultAuthorizer: Missing
        Authorizers:
          T: {FunctionArn: !GetAtt AuthFn.Arn}
)")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.DefaultAuthorizer");
        CHECK(contains(e.message(), "Missing"));
        CHECK(contains(e.message(), "(T)"));
    }
    SECTION("event Authorizer naming no authorizer") {
        auto e = error_of([&] {
            app.sam(sam_template(
                rest_event("A", "/a", "get", "            Auth: {Authorizer: Nope}\n"),
                rest_api(token_auth)));
        });
        CHECK(e.key_path() ==
              "Resources.HelloFunction.Properties.Events.A.Properties.Auth.Authorizer");
    }
    SECTION("a FunctionArn outside the template") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api(R"(      Auth:
        Authorizers:
          T: {FunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:elsewhere'}
)")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.Authorizers.T.FunctionArn");
        CHECK(contains(e.message(), "must be a function of this template"));
    }
    SECTION("a FunctionArn that is not an ARN") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api(R"(      Auth:
        Authorizers:
          T: {FunctionArn: AuthFn}
)")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.Authorizers.T.FunctionArn");
    }
    SECTION("no FunctionArn") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api(R"(      Auth:
        Authorizers:
          T: {FunctionPayloadType: TOKEN}
)")));
        });
        CHECK(contains(e.message(), "needs a FunctionArn"));
    }
    SECTION("ReauthorizeEvery above an hour") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api(R"(      Auth:
        Authorizers:
          T: {FunctionArn: !GetAtt AuthFn.Arn, Identity: {ReauthorizeEvery: 3601}}
)")));
        });
        CHECK(e.key_path() ==
              "Resources.MyApi.Properties.Auth.Authorizers.T.Identity.ReauthorizeEvery");
    }
    SECTION("ApiKeyRequired not a boolean") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api("      Auth: {ApiKeyRequired: maybe}\n")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.ApiKeyRequired");
    }
}

TEST_CASE("SAM Cognito, AWS_IAM, ResourcePolicy: warned, routes run unauthenticated", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        rest_event("A", "/a", "get") +
            rest_event("B", "/b", "get", "            Auth: {Authorizer: AWS_IAM}\n"),
        rest_api(R"(      Auth:
        DefaultAuthorizer: Pool
        Authorizers:
          Pool: {UserPoolArn: arn:aws:cognito-idp:us-east-1:1:userpool/x}
        ResourcePolicy: {AwsAccountWhitelist: ['111111111111']}
)")));
    CHECK(route_at(s, "/a").authorizer.empty());
    CHECK(route_at(s, "/b").authorizer.empty());
    CHECK(api_of(s, "MyApi").authorizers.empty());
    CHECK(any_contains(s.warnings, "Resources.MyApi.Properties.Auth.Authorizers.Pool: Cognito "
                                   "authorizer Pool is not checked"));
    CHECK(any_contains(s.warnings, "Auth.DefaultAuthorizer: DefaultAuthorizer Pool is not checked"));
    CHECK(any_contains(s.warnings, "Events.B.Properties.Auth.Authorizer: authorizer AWS_IAM is not "
                                   "checked"));
    CHECK(any_contains(s.warnings, "Auth.ResourcePolicy: ResourcePolicy is not checked"));
}

TEST_CASE("SAM Cors string: origin unquoted, methods of each path plus OPTIONS", "[unit]") {
    temp_app app;
    SECTION("the same methods on every path: one api.cors") {
        const auto s = app.sam(sam_template(
            rest_event("A", "/a", "get") + rest_event("B", "/b", "get"),
            rest_api("      Cors: \"'*'\"\n" + token_auth)));
        const auto& a = api_of(s, "MyApi");
        REQUIRE(a.cors);
        CHECK(a.cors->allow_origins == std::vector<std::string>{"*"});
        CHECK(a.cors->allow_methods == std::vector<std::string>{"GET", "OPTIONS"});
        CHECK(a.cors->allow_headers.empty());
        CHECK_FALSE(a.cors->max_age_s);
        CHECK_FALSE(a.cors->allow_credentials);
        CHECK(a.path_cors.empty());
        // AddDefaultAuthorizerToCorsPreflight defaults to true.
        CHECK(a.preflight_authorizer == "TokenAuth");
    }
    SECTION("methods differing per path: path_cors, ANY is every method") {
        const auto s = app.sam(sam_template(
            rest_event("A", "/a", "get") + rest_event("A2", "/a", "post") +
                rest_event("B", "/b/{proxy+}", "any"),
            rest_api("      Cors: \"'https://app.example.com'\"\n")));
        const auto& a = api_of(s, "MyApi");
        CHECK_FALSE(a.cors);
        REQUIRE(a.path_cors.size() == 2);
        CHECK(a.path_cors.at("/a").allow_methods ==
              std::vector<std::string>{"GET", "OPTIONS", "POST"});
        CHECK(a.path_cors.at("/b/{proxy+}").allow_methods ==
              std::vector<std::string>{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"});
        CHECK(a.path_cors.at("/a").allow_origins ==
              std::vector<std::string>{"https://app.example.com"});
        CHECK(a.preflight_authorizer.empty());
    }
}

TEST_CASE("SAM Cors map: every field, and AddDefaultAuthorizerToCorsPreflight false", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(rest_event("A", "/a", "get"), rest_api(R"(      Cors:
        AllowOrigin: "'https://app.example.com'"
        AllowMethods: "'get,POST'"
        AllowHeaders: "'Content-Type,X-Api-Key'"
        MaxAge: "'600'"
        AllowCredentials: true
      Auth:
        DefaultAuthorizer: T
        AddDefaultAuthorizerToCorsPreflight: false
        Authorizers:
          T: {FunctionArn: !GetAtt AuthFn.Arn}
)")));
    const auto& a = api_of(s, "MyApi");
    REQUIRE(a.cors);
    CHECK(a.cors->allow_origins == std::vector<std::string>{"https://app.example.com"});
    CHECK(a.cors->allow_methods == std::vector<std::string>{"GET", "POST"});
    CHECK(a.cors->allow_headers == std::vector<std::string>{"Content-Type", "X-Api-Key"});
    CHECK(a.cors->max_age_s == 600);
    CHECK(a.cors->allow_credentials);
    CHECK(a.preflight_authorizer.empty());
}

TEST_CASE("SAM Cors map without AllowOrigin is an error at Cors", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(sam_template(rest_event("A", "/a", "get"),
                             rest_api("      Cors: {AllowMethods: \"'GET'\"}\n")));
    });
    CHECK(e.key_path() == "Resources.MyApi.Properties.Cors");
    CHECK(contains(e.message(), "AllowOrigin"));
}

TEST_CASE("SAM Globals.Api Cors applies to the implicit API", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template("        A:\n          Type: Api\n"
                                        "          Properties: {Path: /a, Method: put}\n",
                                        "", "Globals:\n  Api:\n    Cors: \"'*'\"\n"));
    const auto& a = api_of(s, "ServerlessRestApi");
    REQUIRE(a.cors);
    CHECK(a.cors->allow_methods == std::vector<std::string>{"OPTIONS", "PUT"});
}

TEST_CASE("SAM ApiKeyRequired: API default, event override, ApiKeySourceType", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        rest_event("A", "/a", "get") +
            rest_event("B", "/b", "get", "            Auth: {ApiKeyRequired: false}\n"),
        rest_api(R"(      ApiKeySourceType: AUTHORIZER
      Auth:
        ApiKeyRequired: true
        UsagePlan:
          CreateUsagePlan: PER_API
          UsagePlanName: gold
          Quota: {Limit: 1000, Period: WEEK, Offset: 100}
          Throttle: {BurstLimit: 20, RateLimit: 10.5}
)")));
    CHECK(route_at(s, "/a").api_key_required);
    CHECK_FALSE(route_at(s, "/b").api_key_required);
    CHECK(api_of(s, "MyApi").api_key_source == "AUTHORIZER");
    REQUIRE(s.usage_plans.size() == 1);
    const auto& p = s.usage_plans[0];
    CHECK(p.name == "MyApiUsagePlan");
    CHECK(p.api_ids == std::vector<std::string>{"MyApi"});
    CHECK(p.keys == std::vector<std::string>{"MyApiApiKey"});
    CHECK(p.quota_limit == 1000);
    CHECK(p.quota_period == "WEEK");
    CHECK(p.quota_offset == 100);
    CHECK(p.burst_limit == 20);
    CHECK(p.rate_limit == Approx(10.5));
    CHECK_FALSE(any_contains(s.warnings, "gets 403"));  // not "403" alone: paths may hold it
}

TEST_CASE("SAM SHARED usage plan: one plan and key for every API asking for it; NONE opts out",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        rest_event("A", "/a", "get") + rest_event("B", "/b", "get", "", "Second") +
            rest_event("C", "/c", "get", "", "Third"),
        rest_api("", "MyApi") + rest_api("", "Second") +
            rest_api("      Auth:\n        UsagePlan: {CreateUsagePlan: NONE}\n", "Third"),
        "Globals:\n  Api:\n    Auth:\n      UsagePlan: {CreateUsagePlan: SHARED}\n"));
    REQUIRE(s.usage_plans.size() == 1);
    CHECK(s.usage_plans[0].name == "ServerlessUsagePlan");
    CHECK(s.usage_plans[0].api_ids == std::vector<std::string>{"MyApi", "Second"});
    CHECK(s.usage_plans[0].keys == std::vector<std::string>{"ServerlessApiKey"});
    REQUIRE(s.api_keys.size() == 1);
    CHECK(s.api_keys[0].name == "ServerlessApiKey");
}

TEST_CASE("SAM usage plan errors: CreateUsagePlan, Quota.Period", "[unit]") {
    temp_app app;
    const std::string events = rest_event("A", "/a", "get");
    SECTION("unknown CreateUsagePlan") {
        auto e = error_of([&] {
            app.sam(sam_template(
                events, rest_api("      Auth:\n        UsagePlan: {CreateUsagePlan: ALL}\n")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.UsagePlan.CreateUsagePlan");
    }
    SECTION("missing CreateUsagePlan") {
        auto e = error_of([&] {
            app.sam(sam_template(
                events, rest_api("      Auth:\n        UsagePlan: {UsagePlanName: x}\n")));
        });
        CHECK(contains(e.message(), "CreateUsagePlan"));
    }
    SECTION("bad Quota.Period") {
        auto e = error_of([&] {
            app.sam(sam_template(events, rest_api("      Auth:\n        UsagePlan:\n"
                                                  "          CreateUsagePlan: PER_API\n"
                                                  "          Quota: {Limit: 5, Period: YEAR}\n")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.UsagePlan.Quota.Period");
    }
    SECTION("Quota.Offset above the limit (requests off the first period)") {
        auto e = error_of([&] {
            app.sam(sam_template(events,
                                 rest_api("      Auth:\n        UsagePlan:\n"
                                          "          CreateUsagePlan: PER_API\n"
                                          "          Quota: {Limit: 5, Period: WEEK, Offset: 6}\n")));
        });
        CHECK(e.key_path() == "Resources.MyApi.Properties.Auth.UsagePlan.Quota.Offset");
    }
}

TEST_CASE("SAM key-required routes without a usage plan: a warning that they get 403",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(rest_event("A", "/a", "get"),
                                        rest_api("      Auth: {ApiKeyRequired: true}\n")));
    CHECK(route_at(s, "/a").api_key_required);
    CHECK(any_contains(s.warnings, "MyApi has routes that require an API key but no usage plan"));
    CHECK(any_contains(s.warnings, "403 Forbidden"));
    CHECK(any_contains(s.warnings, "`api_keys` in coldbrew.yaml"));
}

TEST_CASE("SAM HTTP API JWT authorizer: issuer, audience, default identity source, scopes",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        http_event("A", "/a", "get") +
            http_event("B", "/b", "get",
                       "            Auth: {Authorizer: Jwt, AuthorizationScopes: [write]}\n") +
            http_event("C", "/c", "get", "            Auth: {Authorizer: NONE}\n"),
        http_api(R"(      Auth:
        DefaultAuthorizer: Jwt
        Authorizers:
          Jwt:
            JwtConfiguration:
              issuer: https://issuer.example.com
              audience: [app1, app2]
            AuthorizationScopes: [read]
)")));
    const auto& a = api_of(s, "MyHttp");
    REQUIRE(a.authorizers.size() == 1);
    const auto& z = a.authorizers[0];
    CHECK(z.kind == config::authorizer::type::jwt);
    CHECK(z.issuer == "https://issuer.example.com");
    CHECK(z.audience == std::vector<std::string>{"app1", "app2"});
    CHECK(z.identity_sources == std::vector<std::string>{"$request.header.Authorization"});
    CHECK(z.function.empty());
    CHECK(route_at(s, "/a").authorizer == "Jwt");
    CHECK(route_at(s, "/a").authorization_scopes == std::vector<std::string>{"read"});
    CHECK(route_at(s, "/b").authorization_scopes == std::vector<std::string>{"write"});
    CHECK(route_at(s, "/c").authorizer.empty());
    CHECK(route_at(s, "/c").authorization_scopes.empty());
}

TEST_CASE("SAM HTTP API Lambda authorizer: payload format, simple responses, identity", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(http_event("A", "/a", "get"), http_api(R"(      Auth:
        DefaultAuthorizer: L
        Authorizers:
          L:
            FunctionArn: !GetAtt AuthFn.Arn
            AuthorizerPayloadFormatVersion: 2.0
            EnableSimpleResponses: true
            Identity:
              Headers: [Authorization]
              QueryStrings: [token]
              StageVariables: [v]
              Context: [routeKey]
          Bare:
            FunctionArn: !GetAtt AuthFn.Arn
            AuthorizerPayloadFormatVersion: '1.0'
)")));
    const auto& a = api_of(s, "MyHttp");
    REQUIRE(a.authorizers.size() == 2);
    const auto& z = a.authorizers[0];
    CHECK(z.kind == config::authorizer::type::request);
    CHECK(z.function == "AuthFn");
    CHECK(z.payload_format_version == "2.0");
    CHECK(z.simple_responses);
    CHECK(z.identity_sources ==
          std::vector<std::string>{"$request.header.Authorization", "$request.querystring.token",
                                   "$stageVariables.v", "$context.routeKey"});
    CHECK(z.result_ttl_s == 300);
    CHECK(a.authorizers[1].payload_format_version == "1.0");
    CHECK_FALSE(a.authorizers[1].simple_responses);
    CHECK(a.authorizers[1].identity_sources.empty());
    CHECK(route_at(s, "/a").authorizer == "L");
    CHECK_FALSE(route_at(s, "/a").api_key_required);
}

TEST_CASE("SAM HTTP API authorizer errors", "[unit]") {
    temp_app app;
    const std::string events = http_event("A", "/a", "get");
    SECTION("AuthorizerPayloadFormatVersion is required") {
        auto e = error_of([&] {
            app.sam(sam_template(events, http_api(R"(      Auth:
        Authorizers:
          L: {FunctionArn: !GetAtt AuthFn.Arn}
)")));
        });
        CHECK(contains(e.message(), "AuthorizerPayloadFormatVersion"));
        CHECK(e.key_path() == "Resources.MyHttp.Properties.Auth.Authorizers.L");
    }
    SECTION("simple responses need 2.0") {
        auto e = error_of([&] {
            app.sam(sam_template(events, http_api(R"(      Auth:
        Authorizers:
          L: {FunctionArn: !GetAtt AuthFn.Arn, AuthorizerPayloadFormatVersion: '1.0',
              EnableSimpleResponses: true}
)")));
        });
        CHECK(e.key_path() == "Resources.MyHttp.Properties.Auth.Authorizers.L.EnableSimpleResponses");
    }
    SECTION("a JWT authorizer needs an issuer") {
        auto e = error_of([&] {
            app.sam(sam_template(events, http_api(R"(      Auth:
        Authorizers:
          J: {JwtConfiguration: {audience: [a]}}
)")));
        });
        CHECK(contains(e.message(), "issuer"));
    }
    SECTION("event Authorizer naming no authorizer") {
        auto e = error_of([&] {
            app.sam(sam_template(http_event("A", "/a", "get", "            Auth: {Authorizer: X}\n"),
                                 http_api("")));
        });
        CHECK(e.key_path() ==
              "Resources.HelloFunction.Properties.Events.A.Properties.Auth.Authorizer");
    }
}

TEST_CASE("SAM HTTP API EnableIamAuthorizer: warned, AWS_IAM routes unauthenticated", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        http_event("A", "/a", "get", "            Auth: {Authorizer: AWS_IAM}\n"),
        http_api("      Auth: {EnableIamAuthorizer: true}\n")));
    CHECK(route_at(s, "/a").authorizer.empty());
    CHECK(any_contains(s.warnings, "Auth.EnableIamAuthorizer: IAM authorization is not checked"));
}

TEST_CASE("SAM HTTP API CorsConfiguration: true, a map, Globals", "[unit]") {
    temp_app app;
    SECTION("true allows any origin") {
        const auto s = app.sam(
            sam_template(http_event("A", "/a", "get"), http_api("      CorsConfiguration: true\n")));
        const auto& a = api_of(s, "MyHttp");
        REQUIRE(a.cors);
        CHECK(a.cors->allow_origins == std::vector<std::string>{"*"});
    }
    SECTION("false is none") {
        const auto s = app.sam(sam_template(http_event("A", "/a", "get"),
                                            http_api("      CorsConfiguration: false\n")));
        CHECK_FALSE(api_of(s, "MyHttp").cors);
    }
    SECTION("a map") {
        const auto s = app.sam(sam_template(http_event("A", "/a", "get"), http_api(R"(      CorsConfiguration:
        AllowOrigins: [https://a.example.com, https://b.example.com]
        AllowHeaders: [authorization]
        AllowMethods: [get, post]
        ExposeHeaders: [x-request-id]
        MaxAge: 600
        AllowCredentials: true
)")));
        const auto& c = *api_of(s, "MyHttp").cors;
        CHECK(c.allow_origins ==
              std::vector<std::string>{"https://a.example.com", "https://b.example.com"});
        CHECK(c.allow_headers == std::vector<std::string>{"authorization"});
        CHECK(c.allow_methods == std::vector<std::string>{"GET", "POST"});
        CHECK(c.expose_headers == std::vector<std::string>{"x-request-id"});
        CHECK(c.max_age_s == 600);
        CHECK(c.allow_credentials);
    }
    SECTION("Globals.HttpApi on the implicit API") {
        const auto s = app.sam(
            sam_template("        A:\n          Type: HttpApi\n", "",
                         "Globals:\n  HttpApi:\n    CorsConfiguration: {AllowOrigins: ['*']}\n"));
        REQUIRE(api_of(s, "ServerlessHttpApi").cors);
    }
    SECTION("a wrong type") {
        auto e = error_of([&] {
            app.sam(sam_template(http_event("A", "/a", "get"),
                                 http_api("      CorsConfiguration: {MaxAge: soon}\n")));
        });
        CHECK(e.key_path() == "Resources.MyHttp.Properties.CorsConfiguration.MaxAge");
    }
}

TEST_CASE("AWS::ApiGateway ApiKey, UsagePlan and UsagePlanKey beside a SAM API", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template(
        rest_event("A", "/a", "get", "            Auth: {ApiKeyRequired: true}\n"),
        rest_api("") + R"(  Key:
    Type: AWS::ApiGateway::ApiKey
    Properties: {Name: partner, Value: abcdefghijklmnopqrstuvwxyz, Enabled: false}
  Plan:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      UsagePlanName: partners
      ApiStages: [{ApiId: !Ref MyApi, Stage: prod}]
      Quota: {Limit: 100, Period: DAY}
      Throttle: {RateLimit: 5}
  PlanKey:
    Type: AWS::ApiGateway::UsagePlanKey
    Properties: {KeyId: !Ref Key, KeyType: API_KEY, UsagePlanId: !Ref Plan}
  LegacyAuth:
    Type: AWS::ApiGateway::Authorizer
    Properties: {Name: x, RestApiId: !Ref MyApi, Type: TOKEN}
)"));
    REQUIRE(s.api_keys.size() == 1);
    CHECK(s.api_keys[0].name == "Key");
    CHECK(s.api_keys[0].value == "abcdefghijklmnopqrstuvwxyz");
    CHECK_FALSE(s.api_keys[0].enabled);
    REQUIRE(s.usage_plans.size() == 1);
    const auto& p = s.usage_plans[0];
    CHECK(p.name == "Plan");
    CHECK(p.api_ids == std::vector<std::string>{"MyApi"});
    CHECK(p.keys == std::vector<std::string>{"Key"});
    CHECK(p.quota_limit == 100);
    CHECK(p.quota_period == "DAY");
    CHECK(p.rate_limit == Approx(5));
    CHECK_FALSE(p.burst_limit);
    CHECK(any_contains(s.warnings, "Resources.LegacyAuth: AWS::ApiGateway::Authorizer attaches"));
    CHECK_FALSE(any_contains(s.warnings, "gets 403"));  // not "403" alone: paths may hold it
}

TEST_CASE("AWS::ApiGateway::UsagePlan errors: an HTTP API stage, a bad period", "[unit]") {
    temp_app app;
    SECTION("ApiId of an HTTP API") {
        auto e = error_of([&] {
            app.sam(sam_template(http_event("A", "/a", "get"), http_api("") + R"(  Plan:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      ApiStages: [{ApiId: !Ref MyHttp, Stage: $default}]
)"));
        });
        CHECK(contains(e.key_path(), "Resources.Plan.Properties.ApiStages[0].ApiId"));
    }
    SECTION("Quota.Period") {
        auto e = error_of([&] {
            app.sam(sam_template(rest_event("A", "/a", "get"), rest_api("") + R"(  Plan:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      ApiStages: [{ApiId: !Ref MyApi, Stage: prod}]
      Quota: {Limit: 1, Period: FORTNIGHT}
)"));
        });
        CHECK(e.key_path() == "Resources.Plan.Properties.Quota.Period");
    }
}

TEST_CASE("Cross-check: a usage plan naming a key that is not loaded", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(sam_template(rest_event("A", "/a", "get"), rest_api("") + R"(  Key:
    Type: AWS::ApiGateway::ApiKey
    Condition: Never
  Plan:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      ApiStages: [{ApiId: !Ref MyApi, Stage: prod}]
  PlanKey:
    Type: AWS::ApiGateway::UsagePlanKey
    Properties: {KeyId: !Ref Key, KeyType: API_KEY, UsagePlanId: !Ref Plan}
)",
                             "Conditions:\n  Never: !Equals [a, b]\n"));
    });
    CHECK(contains(e.message(), "usage plan Plan names API key Key, which is not defined"));
}

TEST_CASE("Cross-checks on a stack built by hand", "[unit]") {
    config::stack s;
    config::function fn;
    fn.name = "AuthFn";
    fn.function_name = "AuthFn";
    fn.handler = "h";
    s.functions.push_back(fn);
    config::api rest;
    rest.id = "Rest";
    rest.kind = config::api_kind::rest;
    config::api http;
    http.id = "Http";
    http.kind = config::api_kind::http;
    config::route r;
    r.api_id = "Rest";
    r.method = "GET";
    r.path = "/a";
    r.function = "AuthFn";
    config::authorizer token;
    token.name = "T";
    token.kind = config::authorizer::type::token;
    token.function = "AuthFn";
    token.where = {"serverless.yml", 7, 3};

    SECTION("a consistent stack passes") {
        rest.authorizers.push_back(token);
        r.authorizer = "T";
        s.apis = {rest, http};
        s.routes = {r};
        config::check_access(s);
        CHECK(s.warnings.empty());
    }
    SECTION("a route naming an authorizer its API lacks") {
        r.authorizer = "Missing";
        s.apis = {rest, http};
        s.routes = {r};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(contains(e.message(), "names authorizer Missing"));
    }
    SECTION("an authorizer whose function is not in the stack, at the authorizer") {
        token.function = "Gone";
        rest.authorizers.push_back(token);
        s.apis = {rest};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(e.where().line == 7);
        CHECK(contains(e.message(), "Gone"));
    }
    SECTION("a ValidationExpression that is not a regular expression, at the authorizer") {
        token.validation_expression = "^Bearer ([a-z";
        rest.authorizers.push_back(token);
        s.apis = {rest};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(e.where().line == 7);
        CHECK(contains(e.message(), "is not a regular expression"));
    }
    SECTION("TOKEN on an HTTP API") {
        http.authorizers.push_back(token);
        s.apis = {http};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(contains(e.message(), "TOKEN authorizer exists only on REST APIs"));
    }
    SECTION("JWT on a REST API") {
        token.kind = config::authorizer::type::jwt;
        rest.authorizers.push_back(token);
        s.apis = {rest};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(contains(e.message(), "JWT authorizer exists only on HTTP APIs"));
    }
    SECTION("an API key on an HTTP API route") {
        r.api_id = "Http";
        r.api_key_required = true;
        s.apis = {http};
        s.routes = {r};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(contains(e.message(), "only REST APIs have API keys"));
    }
    SECTION("a usage plan on an HTTP API or an unknown API") {
        config::usage_plan p;
        p.name = "P";
        p.api_ids = {"Http"};
        s.apis = {rest, http};
        s.usage_plans = {p};
        auto e = error_of([&] { config::check_access(s); });
        CHECK(contains(e.message(), "usage plan P names Http, which is not a REST API"));
    }
    SECTION("a plan without keys does not cover key-required routes") {
        r.api_key_required = true;
        config::usage_plan p;
        p.name = "P";
        p.api_ids = {"Rest"};
        s.apis = {rest};
        s.routes = {r};
        s.usage_plans = {p};
        config::check_access(s);
        CHECK(any_contains(s.warnings, "403 Forbidden"));
    }
}
