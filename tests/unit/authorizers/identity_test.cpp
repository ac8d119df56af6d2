#include "tests/unit/authorizers/authorizer_fixtures.hpp"

using namespace coldbrew;
using namespace coldbrew::authorizers;
using namespace coldbrew::authorizers::testing;

TEST_CASE("identity: a TOKEN header is read case-insensitively, as sent", "[unit]") {
    stack_fixture f;
    auto req = request("GET", "/Prod/pets/1", {{"Host", "h"}, {"authorization", "Bearer abc"}});
    auto id = read_identity(token_authorizer(), req, f.match(req), info());
    CHECK(id.complete);
    CHECK(id.token == "Bearer abc");
    CHECK(id.values == std::vector<std::string>{"Bearer abc"});
}

TEST_CASE("identity: a missing or empty TOKEN header is incomplete", "[unit]") {
    stack_fixture f;
    auto missing = request("GET", "/pets/1", {{"Host", "h"}});
    auto id = read_identity(token_authorizer(), missing, f.match(missing), info());
    CHECK_FALSE(id.complete);
    CHECK(id.token.empty());

    auto empty = request("GET", "/pets/1", {{"Host", "h"}, {"Authorization", ""}});
    CHECK_FALSE(read_identity(token_authorizer(), empty, f.match(empty), info()).complete);
}

TEST_CASE("identity: a TOKEN authorizer without sources reads Authorization", "[unit]") {
    stack_fixture f;
    auto a = token_authorizer();
    a.identity_sources.clear();
    auto req = request("GET", "/pets/1", {{"Host", "h"}, {"Authorization", "t0k"}});
    auto id = read_identity(a, req, f.match(req), info());
    CHECK(id.complete);
    CHECK(id.token == "t0k");
}

TEST_CASE("identity: REST header, query string, stage variable and context sources", "[unit]") {
    stack_fixture f;
    auto a = request_authorizer({"method.request.header.X-User", "method.request.querystring.q",
                                 "stageVariables.env", "context.requestId",
                                 "context.identity.sourceIp", "context.httpMethod"});
    auto req = request("GET", "/pets/7?q=a%20b&q=last+one&z=1",
                       {{"Host", "h"}, {"x-user", "first"}, {"X-User", "alice"}});
    auto id = read_identity(a, req, f.match(req), info());
    CHECK(id.complete);
    REQUIRE(id.values.size() == 6);
    CHECK(id.values[0] == "alice");    // REST: the last header value
    CHECK(id.values[1] == "last one"); // decoded, the last value
    CHECK(id.values[2] == "test");
    CHECK(id.values[3] == info().request_id);
    CHECK(id.values[4] == "192.0.2.7");
    CHECK(id.values[5] == "GET");
}

TEST_CASE("identity: HTTP API sources, comma-joined duplicates, $context variables", "[unit]") {
    stack_fixture f;
    auto a = request_authorizer({"$request.header.X-User", "$request.querystring.q",
                                 "$stageVariables.env", "$context.routeKey",
                                 "$context.identity.sourceIp", "$context.stage"},
                                "2.0");
    auto req = request("GET", "/v2/pets/7?q=1&q=2",
                       {{"Host", "h"}, {"X-User", "a"}, {"x-user", "b"}});
    auto id = read_identity(a, req, f.match(req), info());
    CHECK(id.complete);
    REQUIRE(id.values.size() == 6);
    CHECK(id.values[0] == "a,b");
    CHECK(id.values[1] == "1,2");
    CHECK(id.values[2] == "test");
    CHECK(id.values[3] == "GET /v2/pets/{id}");
    CHECK(id.values[4] == "192.0.2.7"); // $context.identity.sourceIp: 2.0's http.sourceIp
    CHECK(id.values[5] == "$default");
}

TEST_CASE("identity: query names are case-sensitive; missing sources leave \"\"", "[unit]") {
    stack_fixture f;
    auto a = request_authorizer({"$request.querystring.Q", "$request.header.X-Present"}, "2.0");
    auto req = request("GET", "/v2/pets/7?q=1", {{"Host", "h"}, {"X-Present", "yes"}});
    auto id = read_identity(a, req, f.match(req), info());
    CHECK_FALSE(id.complete);
    CHECK(id.values == std::vector<std::string>{"", "yes"});
}

TEST_CASE("identity: each missing source kind makes the identity incomplete", "[unit]") {
    stack_fixture f;
    auto req = request("GET", "/pets/7?q=", {{"Host", "h"}});
    auto m = f.match(req);
    for (const char* source :
         {"method.request.header.X-None", "method.request.querystring.q", // present but empty
          "method.request.querystring.none", "stageVariables.none", "stageVariables.empty",
          "context.noSuchVariable", "context.identity.nothing", "something.else"}) {
        INFO(source);
        CHECK_FALSE(read_identity(request_authorizer({source}), req, m, info()).complete);
    }
}

TEST_CASE("identity: a REQUEST authorizer without sources is complete and empty", "[unit]") {
    stack_fixture f;
    auto req = request("GET", "/pets/7", {{"Host", "h"}});
    auto id = read_identity(request_authorizer({}), req, f.match(req), info());
    CHECK(id.complete);
    CHECK(id.values.empty());
}

TEST_CASE("validation expression: the whole token must match", "[unit]") {
    auto a = token_authorizer("Authorization", "Bearer [a-z]+");
    CHECK(token_validator(a).passes("Bearer abc"));
    CHECK_FALSE(token_validator(a).passes("Bearer abc123")); // a prefix match is not enough
    CHECK_FALSE(token_validator(a).passes("xBearer abc"));
    CHECK_FALSE(token_validator(a).passes(""));
    CHECK(token_validator(token_authorizer()).passes("anything at all"));
    CHECK(token_validator(token_authorizer()).passes(""));
    // An expression that does not compile lets nothing through.
    CHECK_FALSE(token_validator(token_authorizer("Authorization", "Bearer (")).passes("Bearer ("));
    // Longer than API Gateway's 10,240 bytes of headers: never matched, never recursed into.
    const auto long_token = "Bearer " + std::string(10240, 'a');
    CHECK_FALSE(token_validator(a).passes(long_token));
    CHECK(token_validator(a).passes("Bearer " + std::string(10000, 'a')));
}

TEST_CASE("method ARN: the actual method and path, without the stage prefix", "[unit]") {
    stack_fixture f;
    auto req = request("POST", "/Prod/a/b%20c", {{"Host", "h"}});
    auto m = f.match(req);
    CHECK(method_arn(*m.api, m, req, "eu-west-1", "123456789012") ==
          "arn:aws:execute-api:eu-west-1:123456789012:" + gateway::api_id_for(*m.api) +
              "/Prod/POST/a/b c");

    auto root = request("GET", "/", {{"Host", "h"}});
    auto rm = f.match(root);
    CHECK(method_arn(*rm.api, rm, root, "us-east-1", "1").ends_with("/Prod/GET/"));

    auto v2 = request("GET", "/v2/pets/9", {{"Host", "h"}});
    auto vm = f.match(v2);
    CHECK(method_arn(*vm.api, vm, v2, "us-east-1", "1").ends_with("/$default/GET/v2/pets/9"));
}
