// serverless.yml authorization, CORS, API keys and usage plans (serverless v3
// lib/plugins/aws/package/compile/events/api-gateway/lib/*.js and http-api.js).

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const std::string head = "service: shop\nprovider:\n  name: aws\n  runtime: nodejs20.x\n";

const config::api& api_of(const config::stack& s, const std::string& id) {
    const auto* a = s.find_api(id);
    REQUIRE(a);
    return *a;
}

const config::route& route_at(const config::stack& s, const std::string& method,
                              const std::string& path) {
    auto it = std::find_if(s.routes.begin(), s.routes.end(), [&](const config::route& r) {
        return r.method == method && r.path == path;
    });
    REQUIRE(it != s.routes.end());
    return *it;
}

const config::authorizer* authorizer_of(const config::api& a, const std::string& name) {
    for (const auto& z : a.authorizers)
        if (z.name == name) return &z;
    return nullptr;
}

using strings = std::vector<std::string>;

} // namespace

TEST_CASE("serverless http authorizer: a function key is a TOKEN authorizer with the defaults",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  auth:
    handler: auth.handler
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: hello, authorizer: auth}
      - http: {method: get, path: open}
)");
    const auto& rest = api_of(s, "ApiGatewayRestApi");
    REQUIRE(rest.authorizers.size() == 1);
    const auto& a = rest.authorizers[0];
    CHECK(a.name == "auth");
    CHECK(a.function == "auth");
    CHECK(a.kind == config::authorizer::type::token);
    CHECK(a.result_ttl_s == 300);
    CHECK(a.identity_sources == strings{"method.request.header.Authorization"});
    CHECK(a.validation_expression.empty());
    CHECK(a.payload_format_version.empty());
    CHECK(a.where.line == 11);
    CHECK(route_at(s, "GET", "/hello").authorizer == "auth");
    CHECK(route_at(s, "GET", "/open").authorizer.empty());
    CHECK(rest.api_key_source == "HEADER");
}

TEST_CASE("serverless http authorizer map: request type, TTL, sources, expression", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  auth:
    handler: auth.handler
  hello:
    handler: hello.handler
    events:
      - http:
          method: get
          path: a
          authorizer:
            name: auth
            type: REQUEST
            resultTtlInSeconds: 0
            identitySource: method.request.header.X-Token, method.request.querystring.q
      - http:
          method: get
          path: b
          authorizer: {name: tok, arn: 'arn:aws:lambda:us-east-1:123456789012:function:shop-dev-auth', identityValidationExpression: '^Bearer .+$', resultTtlInSeconds: 60}
)");
    const auto& rest = api_of(s, "ApiGatewayRestApi");
    const auto* req = authorizer_of(rest, "auth");
    REQUIRE(req);
    CHECK(req->kind == config::authorizer::type::request);
    CHECK(req->result_ttl_s == 0);
    CHECK(req->identity_sources ==
          strings{"method.request.header.X-Token", "method.request.querystring.q"});
    // An ARN naming a function of this service (its deployed name) calls that function.
    const auto* tok = authorizer_of(rest, "tok");
    REQUIRE(tok);
    CHECK(tok->function == "auth");
    CHECK(tok->kind == config::authorizer::type::token);
    CHECK(tok->result_ttl_s == 60);
    CHECK(tok->validation_expression == "^Bearer .+$");
    CHECK(route_at(s, "GET", "/b").authorizer == "tok");
}

TEST_CASE("serverless REQUEST authorizer with TTL 0 and no identitySource has no source",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  auth: {handler: auth.handler}
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: a, authorizer: {name: auth, type: request, resultTtlInSeconds: 0}}
)");
    const auto* a = authorizer_of(api_of(s, "ApiGatewayRestApi"), "auth");
    REQUIRE(a);
    CHECK(a->identity_sources.empty());

    temp_app app2;
    const auto s2 = app2.serverless(head + R"(functions:
  auth: {handler: auth.handler}
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: a, authorizer: {name: auth, type: request}}
)");
    const auto* b = authorizer_of(api_of(s2, "ApiGatewayRestApi"), "auth");
    REQUIRE(b);
    CHECK(b->identity_sources == strings{"method.request.header.Authorization"});
}

TEST_CASE("serverless authorizer ARNs: Fn::GetAtt of a function, the name from the ARN, and an "
          "outside ARN left unguarded with a warning",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  my-auth: {handler: auth.handler}
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: a, authorizer: {name: viaGetAtt, arn: {Fn::GetAtt: [MyDashauthLambdaFunction, Arn]}}}
      - http: {method: get, path: b, authorizer: 'arn:aws:lambda:us-east-1:123456789012:function:other-prod-check'}
)");
    const auto& rest = api_of(s, "ApiGatewayRestApi");
    const auto* g = authorizer_of(rest, "viaGetAtt");
    REQUIRE(g);
    CHECK(g->function == "my-auth");
    CHECK(route_at(s, "GET", "/a").authorizer == "viaGetAtt");
    CHECK(authorizer_of(rest, "check") == nullptr);
    CHECK(route_at(s, "GET", "/b").authorizer.empty());
    CHECK(any_contains(s.warnings, ":11:50: functions.hello.events[1].http.authorizer: authorizer "
                                   "check is not a function of this service"));
}

TEST_CASE("serverless aws_iam, Cognito and authorizerId: not checked, warned, route unguarded",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: a, authorizer: aws_iam}
      - http: {method: get, path: b, authorizer: {type: AWS_IAM}}
      - http: {method: get, path: c, authorizer: {name: pool, arn: 'arn:aws:cognito-idp:us-east-1:123456789012:userpool/us-east-1_abc'}}
      - http: {method: get, path: d, authorizer: {name: pool2, type: COGNITO_USER_POOLS, arn: {Ref: Pool}}}
      - http: {method: get, path: e, authorizer: {type: CUSTOM, authorizerId: abc123}}
)");
    const auto& rest = api_of(s, "ApiGatewayRestApi");
    CHECK(rest.authorizers.empty());
    for (const auto* p : {"/a", "/b", "/c", "/d", "/e"})
        CHECK(route_at(s, "GET", p).authorizer.empty());
    CHECK(any_contains(s.warnings, "events[0].http.authorizer: AWS_IAM authorization is not "
                                   "checked locally: requests reach the function unauthenticated"));
    CHECK(any_contains(s.warnings, "events[1].http.authorizer: AWS_IAM authorization"));
    CHECK(any_contains(s.warnings, "events[2].http.authorizer: the Cognito user pool authorizer pool "
                                   "is not checked locally"));
    CHECK(any_contains(s.warnings, "events[3].http.authorizer: the Cognito user pool authorizer pool2"));
    CHECK(any_contains(s.warnings, "events[4].http.authorizer: the authorizer managed outside"));
}

TEST_CASE("serverless http authorizer errors carry their key path", "[unit]") {
    temp_app app;
    auto load = [&](const std::string& authorizer) {
        return error_of([&] {
            app.serverless(head + "functions:\n  auth: {handler: a.h}\n  hello:\n    handler: h.h\n"
                                  "    events:\n      - http:\n          method: get\n"
                                  "          path: a\n          authorizer: " +
                           authorizer + "\n");
        });
    };
    auto e = load("{name: auth, resultTtlInSeconds: 7200}");
    CHECK(e.key_path() == "functions.hello.events[0].http.authorizer.resultTtlInSeconds");
    CHECK(e.where().line == 13);
    e = load("{name: auth, type: tokn}");
    CHECK(e.key_path() == "functions.hello.events[0].http.authorizer.type");
    CHECK(contains(e.message(), "did you mean token?"));
    e = load("{resultTtlInSeconds: 5}");
    CHECK(e.key_path() == "functions.hello.events[0].http.authorizer");
    CHECK(contains(e.message(), "needs a name"));
    e = load("{name: auth, identitySource: ' , '}");
    CHECK(e.key_path() == "functions.hello.events[0].http.authorizer.identitySource");
    e = load("''");
    CHECK(contains(e.message(), "must not be empty"));
}

TEST_CASE("serverless private: true requires an API key; no key declared is warned", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: a, private: true}
      - http: {method: get, path: b, private: false}
)");
    CHECK(route_at(s, "GET", "/a").api_key_required);
    CHECK_FALSE(route_at(s, "GET", "/b").api_key_required);
    CHECK(any_contains(s.warnings, "private: true but provider.apiGateway.apiKeys declares no key"));

    const auto e = error_of([&] {
        app.serverless(head + "functions:\n  hello:\n    handler: h.h\n    events:\n"
                              "      - http: {method: get, path: a, private: yes}\n");
    });
    CHECK(e.key_path() == "functions.hello.events[0].http.private");
}

TEST_CASE("serverless cors: true gives serverless' defaults and the path's methods plus OPTIONS",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: 'users/{id}', cors: true}
      - http: {method: post, path: '/users/{id}/', cors: true}
      - http: {method: get, path: plain}
      - http: {method: any, path: any, cors: true}
)");
    const auto& rest = api_of(s, "ApiGatewayRestApi");
    CHECK_FALSE(rest.cors);
    REQUIRE(rest.path_cors.size() == 2);
    REQUIRE(rest.path_cors.count("/users/{id}"));
    const auto& c = rest.path_cors.at("/users/{id}");
    CHECK(c.allow_origins == strings{"*"});
    CHECK(c.allow_headers == strings{"Content-Type", "X-Amz-Date", "Authorization", "X-Api-Key",
                                     "X-Amz-Security-Token", "X-Amz-User-Agent",
                                     "X-Amzn-Trace-Id"});
    // validate.js unites the later event's methods first.
    CHECK(c.allow_methods == strings{"OPTIONS", "POST", "GET"});
    CHECK_FALSE(c.allow_credentials);
    CHECK_FALSE(c.max_age_s);
    CHECK(c.where.line == 9);
    // cors.js writes ANY as the six methods it stands for.
    CHECK(rest.path_cors.at("/any").allow_methods ==
          strings{"OPTIONS", "DELETE", "GET", "HEAD", "PATCH", "POST", "PUT"});
    CHECK_FALSE(rest.path_cors.count("/plain"));
}

TEST_CASE("serverless cors map: origin(s), headers, methods, credentials, maxAge; merged per path",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  hello:
    handler: hello.handler
    events:
      - http:
          method: get
          path: a
          cors:
            origin: 'https://one.example.com'
            headers: X-One
            allowCredentials: true
            maxAge: 600
            cacheControl: 'max-age=600'
      - http:
          method: put
          path: a
          cors: {origin: 'https://two.example.com', headers: [X-Two], methods: [patch]}
      - http:
          method: get
          path: b
          cors: {origins: ['https://*.example.com', 'https://x.org']}
      - http:
          method: get
          path: c
          cors: {origin: 'https://a.org, https://b.org'}
      - http: {method: get, path: d, cors: false}
)");
    const auto& rest = api_of(s, "ApiGatewayRestApi");
    const auto& a = rest.path_cors.at("/a");
    CHECK(a.allow_origins == strings{"https://two.example.com"});  // the last origin
    CHECK(a.allow_headers == strings{"X-Two", "X-One"});
    CHECK(a.allow_methods == strings{"PATCH", "OPTIONS", "PUT", "GET"});
    CHECK(a.allow_credentials);  // any event allowing them
    CHECK(a.max_age_s == 600);   // the last event setting it
    CHECK(any_contains(s.warnings, "functions.hello.events[0].http.cors.cacheControl: ignored"));
    const auto& b = rest.path_cors.at("/b");
    CHECK(b.allow_origins == strings{"https://*.example.com", "https://x.org"});
    CHECK(b.allow_headers.size() == 7);
    CHECK(rest.path_cors.at("/c").allow_origins == strings{"https://a.org", "https://b.org"});
    CHECK_FALSE(rest.path_cors.count("/d"));

    const auto e = error_of([&] {
        app.serverless(head + "functions:\n  hello:\n    handler: h.h\n    events:\n"
                              "      - http: {method: get, path: a, cors: {maxAge: 0}}\n");
    });
    CHECK(e.key_path() == "functions.hello.events[0].http.cors.maxAge");
}

TEST_CASE("serverless httpApi JWT and request authorizers with their defaults", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  httpApi:
    authorizers:
      cognito:
        identitySource: $request.header.Authorization
        issuerUrl: https://cognito-idp.us-east-1.amazonaws.com/us-east-1_abc
        audience: client-1
      multi:
        type: jwt
        identitySource: [$request.header.Authorization]
        issuerUrl: https://issuer.example.com
        audience: [a1, a2]
      custom:
        type: request
        functionName: auth
      simple:
        type: request
        functionArn: {Fn::GetAtt: [AuthLambdaFunction, Arn]}
        identitySource: [$request.header.X-Key, $request.querystring.k]
        resultTtlInSeconds: 30
        enableSimpleResponses: true
        payloadVersion: '2.0'
      old:
        type: request
        functionName: auth
        payloadVersion: '1.0'
functions:
  auth: {handler: auth.handler}
  hello:
    handler: hello.handler
    events:
      - httpApi: {method: get, path: /a, authorizer: {name: cognito, scopes: [read, write]}}
      - httpApi: {method: get, path: /b, authorizer: custom}
      - httpApi: {method: get, path: /c}
)");
    const auto& http = api_of(s, "HttpApi");
    REQUIRE(http.authorizers.size() == 5);
    const auto* jwt = authorizer_of(http, "cognito");
    REQUIRE(jwt);
    CHECK(jwt->kind == config::authorizer::type::jwt);
    CHECK(jwt->issuer == "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_abc");
    CHECK(jwt->audience == strings{"client-1"});
    CHECK(jwt->identity_sources == strings{"$request.header.Authorization"});
    CHECK(jwt->jwks.empty());
    CHECK(jwt->where.line == 7);
    CHECK(authorizer_of(http, "multi")->audience == strings{"a1", "a2"});
    const auto* custom = authorizer_of(http, "custom");
    REQUIRE(custom);
    CHECK(custom->kind == config::authorizer::type::request);
    CHECK(custom->function == "auth");
    CHECK(custom->identity_sources.empty());
    CHECK(custom->payload_format_version == "2.0");
    CHECK_FALSE(custom->simple_responses);
    CHECK(custom->result_ttl_s == 300);
    const auto* simple = authorizer_of(http, "simple");
    REQUIRE(simple);
    CHECK(simple->function == "auth");
    CHECK(simple->identity_sources == strings{"$request.header.X-Key", "$request.querystring.k"});
    CHECK(simple->result_ttl_s == 30);
    CHECK(simple->simple_responses);
    CHECK(authorizer_of(http, "old")->payload_format_version == "1.0");
    const auto& a = route_at(s, "GET", "/a");
    CHECK(a.authorizer == "cognito");
    CHECK(a.authorization_scopes == strings{"read", "write"});
    CHECK(route_at(s, "GET", "/b").authorizer == "custom");
    CHECK(route_at(s, "GET", "/b").authorization_scopes.empty());
    CHECK(route_at(s, "GET", "/c").authorizer.empty());
}

TEST_CASE("serverless httpApi event authorizers aws_iam and id are warned and unguarded",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(functions:
  hello:
    handler: hello.handler
    events:
      - httpApi: {method: get, path: /a, authorizer: {type: aws_iam}}
      - httpApi: {method: get, path: /b, authorizer: {id: abc123}}
)");
    CHECK(route_at(s, "GET", "/a").authorizer.empty());
    CHECK(route_at(s, "GET", "/b").authorizer.empty());
    CHECK(any_contains(s.warnings, "functions.hello.events[0].httpApi.authorizer: AWS_IAM "
                                   "authorization is not checked locally"));
    CHECK(any_contains(s.warnings, "functions.hello.events[1].httpApi.authorizer: the authorizer "
                                   "managed outside this service (id)"));
    const auto e = error_of([&] {
        app.serverless(head + "functions:\n  hello:\n    handler: h.h\n    events:\n"
                              "      - httpApi: {method: get, path: /a, authorizer: {type: aws_iam, "
                              "scopes: [x]}}\n");
    });
    CHECK(e.key_path() == "functions.hello.events[0].httpApi.authorizer");
}

TEST_CASE("serverless httpApi authorizer errors", "[unit]") {
    temp_app app;
    auto load = [&](const std::string& def) {
        return error_of([&] {
            app.serverless(head + "  httpApi:\n    authorizers:\n      z: " + def +
                           "\nfunctions:\n  auth: {handler: a.h}\n");
        });
    };
    auto e = load("{identitySource: $request.header.Authorization, audience: x}");
    CHECK(e.key_path() == "provider.httpApi.authorizers.z");
    CHECK(contains(e.message(), "needs issuerUrl"));
    e = load("{issuerUrl: https://i, audience: x}");
    CHECK(contains(e.message(), "needs identitySource"));
    e = load("{type: request}");
    CHECK(contains(e.message(), "needs functionName"));
    e = load("{type: request, functionName: auth, functionArn: 'arn:aws:lambda:r:1:function:x'}");
    CHECK(contains(e.message(), "both functionName and functionArn"));
    e = load("{type: request, functionName: auth, resultTtlInSeconds: 10}");
    CHECK(e.key_path() == "provider.httpApi.authorizers.z.resultTtlInSeconds");
    CHECK(contains(e.message(), "needs identitySource"));
    e = load("{type: request, functionName: auth, payloadVersion: '3.0'}");
    CHECK(e.key_path() == "provider.httpApi.authorizers.z.payloadVersion");
    e = load("{type: request, functionName: auth, payloadVersion: '1.0', enableSimpleResponses: true}");
    CHECK(e.key_path() == "provider.httpApi.authorizers.z.enableSimpleResponses");
    e = load("{type: lambda, functionName: auth}");
    CHECK(e.key_path() == "provider.httpApi.authorizers.z.type");
}

TEST_CASE("serverless provider.httpApi.cors: true and map forms", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  httpApi:
    cors: true
functions:
  hello:
    handler: hello.handler
    events:
      - httpApi: {method: post, path: /a}
      - httpApi: 'GET /b'
)");
    const auto& http = api_of(s, "HttpApi");
    REQUIRE(http.cors);
    CHECK(http.cors->allow_origins == strings{"*"});
    CHECK(http.cors->allow_headers.size() == 7);
    CHECK(http.cors->allow_methods == strings{"OPTIONS", "POST", "GET"});
    CHECK_FALSE(http.cors->allow_credentials);
    CHECK(http.cors->expose_headers.empty());
    CHECK_FALSE(http.cors->max_age_s);
    CHECK(http.cors->where.line == 6);
    CHECK(http.path_cors.empty());

    temp_app app2;
    const auto s2 = app2.serverless(head + R"(  httpApi:
    cors:
      allowedOrigins: [https://app.example.com]
      allowedHeaders: [X-Custom]
      allowedMethods: [get, POST]
      allowCredentials: true
      exposedResponseHeaders: [X-Trace]
      maxAge: 3600
functions:
  hello:
    handler: hello.handler
    events:
      - httpApi: '*'
)");
    const auto& c = *api_of(s2, "HttpApi").cors;
    CHECK(c.allow_origins == strings{"https://app.example.com"});
    CHECK(c.allow_headers == strings{"X-Custom"});
    CHECK(c.allow_methods == strings{"GET", "POST"});
    CHECK(c.allow_credentials);
    CHECK(c.expose_headers == strings{"X-Trace"});
    CHECK(c.max_age_s == 3600);

    // Without allowedMethods: OPTIONS and every route's method, ANY as all of them.
    temp_app app3;
    const auto s3 = app3.serverless(head + R"(  httpApi:
    cors: {allowedOrigins: https://one.example.com}
functions:
  hello:
    handler: hello.handler
    events:
      - httpApi: '*'
)");
    const auto& c3 = *api_of(s3, "HttpApi").cors;
    CHECK(c3.allow_origins == strings{"https://one.example.com"});
    CHECK(c3.allow_headers.size() == 7);
    CHECK(c3.allow_methods ==
          strings{"OPTIONS", "GET", "POST", "PUT", "PATCH", "HEAD", "DELETE"});

    temp_app app4;
    const auto s4 = app4.serverless(head + "  httpApi:\n    cors: false\nfunctions:\n  hello:\n"
                                           "    handler: h.h\n    events:\n      - httpApi: '*'\n");
    CHECK_FALSE(api_of(s4, "HttpApi").cors);
}

TEST_CASE("serverless apiKeys without usagePlan: one plan for the stage's REST API", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  apiGateway:
    apiKeySourceType: authorizer
    apiKeys:
      - plain
      - name: full
        value: abcdefghijklmnopqrstuvwxyz
        enabled: false
        description: ignored
      - value: 0123456789abcdefghij
functions:
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: a, private: true}
)");
    REQUIRE(s.api_keys.size() == 3);
    CHECK(s.api_keys[0].name == "plain");
    CHECK(s.api_keys[0].value.empty());
    CHECK(s.api_keys[0].enabled);
    CHECK(s.api_keys[0].where.line == 8);
    CHECK(s.api_keys[1].name == "full");
    CHECK(s.api_keys[1].value == "abcdefghijklmnopqrstuvwxyz");
    CHECK_FALSE(s.api_keys[1].enabled);
    CHECK(s.api_keys[2].name == "ApiGatewayApiKey3");
    REQUIRE(s.usage_plans.size() == 1);
    const auto& plan = s.usage_plans[0];
    CHECK(plan.name == "shop-dev");
    CHECK(plan.api_ids == strings{"ApiGatewayRestApi"});
    CHECK(plan.keys == strings{"plain", "full", "ApiGatewayApiKey3"});
    CHECK_FALSE(plan.rate_limit);
    CHECK_FALSE(plan.burst_limit);
    CHECK_FALSE(plan.quota_limit);
    CHECK(api_of(s, "ApiGatewayRestApi").api_key_source == "AUTHORIZER");
    CHECK_FALSE(any_contains(s.warnings, "declares no key"));
}

TEST_CASE("serverless usagePlan map: quota and throttle on the one plan", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  apiGateway:
    apiKeys: [k1]
    usagePlan:
      quota: {limit: 5000, offset: 2, period: MONTH}
      throttle: {burstLimit: 200, rateLimit: 100}
functions:
  hello:
    handler: hello.handler
    events:
      - http: GET a
)");
    REQUIRE(s.usage_plans.size() == 1);
    const auto& p = s.usage_plans[0];
    CHECK(p.quota_limit == 5000);
    CHECK(p.quota_offset == 2);
    CHECK(p.quota_period == "MONTH");
    CHECK(p.burst_limit == 200);
    CHECK(p.rate_limit == 100.0);
    CHECK(p.keys == strings{"k1"});
    CHECK(p.where.line == 8);
}

TEST_CASE("serverless usagePlan list: named plans, keys grouped by plan name", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  apiGateway:
    apiKeys:
      - free: [free-key, {name: free-two, value: 'aaaaaaaaaaaaaaaaaaaa'}]
      - paid: [{value: 'bbbbbbbbbbbbbbbbbbbb'}]
    usagePlan:
      - free:
          quota: {limit: 100, period: DAY}
      - paid:
          throttle: {rateLimit: 50}
functions:
  hello:
    handler: hello.handler
    events:
      - http: GET a
)");
    REQUIRE(s.usage_plans.size() == 2);
    CHECK(s.usage_plans[0].name == "shop-free-dev");
    CHECK(s.usage_plans[0].keys == strings{"free-key", "free-two"});
    CHECK(s.usage_plans[0].quota_limit == 100);
    CHECK(s.usage_plans[0].quota_period == "DAY");
    CHECK(s.usage_plans[1].name == "shop-paid-dev");
    CHECK(s.usage_plans[1].keys == strings{"ApiGatewayApiKeypaid1"});
    CHECK(s.usage_plans[1].rate_limit == 50.0);
    CHECK_FALSE(s.usage_plans[1].quota_limit);
    for (const auto& p : s.usage_plans)
        CHECK(p.api_ids == strings{"ApiGatewayRestApi"});
    CHECK(s.api_keys.size() == 3);
}

TEST_CASE("serverless usage plans without a REST API cover none", "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  apiGateway:
    apiKeys: [k]
functions:
  hello:
    handler: hello.handler
    events:
      - httpApi: '*'
)");
    REQUIRE(s.usage_plans.size() == 1);
    CHECK(s.usage_plans[0].api_ids.empty());
}

TEST_CASE("serverless API key and usage plan errors carry their key path", "[unit]") {
    temp_app app;
    auto load = [&](const std::string& gateway) {
        return error_of([&] {
            app.serverless(head + "  apiGateway:\n" + gateway +
                           "functions:\n  hello:\n    handler: h.h\n    events:\n"
                           "      - http: GET a\n");
        });
    };
    auto e = load("    apiKeys: [{name: k, value: short}]\n");
    CHECK(e.key_path() == "provider.apiGateway.apiKeys[0].value");
    CHECK(contains(e.message(), "at least 20 characters"));
    e = load("    apiKeys: [k, k]\n");
    CHECK(e.key_path() == "provider.apiGateway.apiKeys[1]");
    CHECK(contains(e.message(), "used twice"));
    e = load("    apiKeys: [{fre: [k]}]\n    usagePlan:\n      - free: {}\n");
    CHECK(e.key_path() == "provider.apiGateway.apiKeys[0].fre");
    CHECK(contains(e.message(), "did you mean"));
    e = load("    apiKeys: [k]\n    usagePlan:\n      - free: {}\n");
    CHECK(e.key_path() == "provider.apiGateway.apiKeys[0]");
    CHECK(contains(e.message(), "under a plan's name"));
    e = load("    usagePlan: {quota: {limit: 10}}\n");
    CHECK(e.key_path() == "provider.apiGateway.usagePlan.quota");
    CHECK(contains(e.message(), "needs a period"));
    e = load("    usagePlan: {quota: {limit: 10, period: YEAR}}\n");
    CHECK(e.key_path() == "provider.apiGateway.usagePlan.quota.period");
    e = load("    usagePlan: {quota: {limit: 10, period: WEEK, offset: 11}}\n");
    CHECK(e.key_path() == "provider.apiGateway.usagePlan.quota.offset");
    e = load("    usagePlan: {throttle: {rateLimit: fast}}\n");
    CHECK(e.key_path() == "provider.apiGateway.usagePlan.throttle.rateLimit");
    e = load("    apiKeySourceType: QUERY\n");
    CHECK(e.key_path() == "provider.apiGateway.apiKeySourceType");
}

TEST_CASE("serverless v1 provider.apiKeys and provider.usagePlan are ignored with a warning",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  apiKeys: [k]
  usagePlan: {throttle: {rateLimit: 1}}
functions:
  hello: {handler: h.h, events: [{http: GET a}]}
)");
    CHECK(s.api_keys.empty());
    CHECK(s.usage_plans.empty());
    CHECK(any_contains(s.warnings, "provider.apiKeys: ignored, as serverless v3 ignores it"));
    CHECK(any_contains(s.warnings, "provider.usagePlan: ignored"));
}

TEST_CASE("serverless httpApi functionArn: !GetAtt of a function, or an outside function left "
          "unguarded with a warning",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(head + R"(  httpApi:
    authorizers:
      local:
        type: request
        functionArn: !GetAtt AuthLambdaFunction.Arn
      remote:
        type: request
        functionArn: arn:aws:lambda:us-east-1:123456789012:function:elsewhere
functions:
  auth: {handler: auth.handler}
  hello:
    handler: hello.handler
    events:
      - httpApi: {method: get, path: /a, authorizer: local}
      - httpApi: {method: get, path: /b, authorizer: remote}
)");
    const auto& http = api_of(s, "HttpApi");
    REQUIRE(http.authorizers.size() == 1);
    CHECK(http.authorizers[0].name == "local");
    CHECK(http.authorizers[0].function == "auth");
    CHECK(route_at(s, "GET", "/a").authorizer == "local");
    CHECK(route_at(s, "GET", "/b").authorizer.empty());
    CHECK(any_contains(s.warnings, "provider.httpApi.authorizers.remote.functionArn: authorizer "
                                   "remote is not a function of this service"));
}
