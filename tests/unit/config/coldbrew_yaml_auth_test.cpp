// coldbrew.yaml `api_keys` and `authorizers`: local key values and JWKS for the template's
// REST API keys and JWT authorizers.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

using strings = std::vector<std::string>;

// A REST API with a key-required route and a declared key, and an HTTP API with a JWT
// authorizer.
const std::string service = R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  apiGateway:
    apiKeys: [partner]
  httpApi:
    authorizers:
      cognito:
        identitySource: $request.header.Authorization
        issuerUrl: https://issuer.example.com
        audience: client-1
functions:
  hello:
    handler: hello.handler
    events:
      - http: {method: get, path: private, private: true}
      - http: {method: get, path: open}
      - httpApi: {method: get, path: /jwt, authorizer: {name: cognito}}
)";

const config::api_key* key_of(const config::stack& s, const std::string& name) {
    for (const auto& k : s.api_keys)
        if (k.name == name) return &k;
    return nullptr;
}

const config::usage_plan* plan_of(const config::stack& s, const std::string& name) {
    for (const auto& p : s.usage_plans)
        if (p.name == name) return &p;
    return nullptr;
}

} // namespace

TEST_CASE("coldbrew.yaml api_keys: a declared key takes the value and state", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"(api_keys:
  partner: {value: partner-key-0123456789, enabled: false}
)");
    const auto s = app.serverless(service);
    const auto* k = key_of(s, "partner");
    REQUIRE(k);
    CHECK(k->value == "partner-key-0123456789");
    CHECK_FALSE(k->enabled);
    CHECK(s.api_keys.size() == 1);
    CHECK_FALSE(plan_of(s, "coldbrew.yaml"));
    CHECK(plan_of(s, "shop-dev")->keys == strings{"partner"});
}

TEST_CASE("coldbrew.yaml api_keys: a new name adds a key to the plan coldbrew.yaml", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"(api_keys:
  local: local-key-0123456789abc
  drawn:
  second: {enabled: true}
)");
    const auto s = app.serverless(service);
    REQUIRE(s.api_keys.size() == 4);
    const auto* local = key_of(s, "local");
    REQUIRE(local);
    CHECK(local->value == "local-key-0123456789abc");
    CHECK(local->enabled);
    CHECK(local->where.line == 2);
    CHECK(key_of(s, "drawn")->value.empty());  // drawn from the seed at start
    const auto* plan = plan_of(s, "coldbrew.yaml");
    REQUIRE(plan);
    CHECK(plan->keys == strings{"local", "drawn", "second"});
    // Only the REST API with a key-required route; no limits.
    CHECK(plan->api_ids == strings{"ApiGatewayRestApi"});
    CHECK_FALSE(plan->rate_limit);
    CHECK_FALSE(plan->quota_limit);
    CHECK(plan->where.line == 2);
    // The template's own key keeps its plan and no value.
    CHECK(key_of(s, "partner")->value.empty());
}

TEST_CASE("coldbrew.yaml api_keys with no key-required route: the plan covers no API",
          "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "api_keys: {local: local-key-0123456789abc}\n");
    const auto s = app.serverless(R"(service: shop
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello: {handler: h.h, events: [{http: GET a}]}
)");
    const auto* plan = plan_of(s, "coldbrew.yaml");
    REQUIRE(plan);
    CHECK(plan->api_ids.empty());
}

TEST_CASE("coldbrew.yaml api_keys errors carry their key path", "[unit]") {
    temp_app app;
    auto load = [&](const std::string& yaml) {
        app.write("coldbrew.yaml", yaml);
        return error_of([&] { app.serverless(service); });
    };
    auto e = load("api_keys:\n  partner: short\n");
    CHECK(e.key_path() == "api_keys.partner");
    CHECK(contains(e.message(), "at least 20 characters"));
    CHECK(e.where().line == 2);
    e = load("api_keys:\n  partner: {valeu: partner-key-0123456789}\n");
    CHECK(e.key_path() == "api_keys.partner.valeu");
    CHECK(contains(e.message(), "did you mean 'value'"));
    e = load("api_keys:\n  partner: {enabled: maybe}\n");
    CHECK(e.key_path() == "api_keys.partner.enabled");
    e = load("api_keys:\n  partner: {value: [a]}\n");
    CHECK(e.key_path() == "api_keys.partner.value");
    e = load("api_keys: [partner]\n");
    CHECK(e.key_path() == "api_keys");
    e = load("api_key: {}\n");
    CHECK(contains(e.message(), "did you mean 'api_keys'"));
}

TEST_CASE("coldbrew.yaml authorizers: jwks file made absolute, or a URL", "[unit]") {
    temp_app app;
    app.write("keys/jwks.json", R"({"keys": []})");
    app.write("coldbrew.yaml", R"(authorizers:
  cognito:
    jwks: keys/jwks.json
)");
    const auto s = app.serverless(service);
    const auto* http = s.find_api("HttpApi");
    REQUIRE(http);
    REQUIRE(http->authorizers.size() == 1);
    const auto& a = http->authorizers[0];
    CHECK(a.jwks == (app.dir() / "keys" / "jwks.json").string());
    CHECK(a.jwks_where.line == 3);
    CHECK(a.jwks_where.column == 11);
    CHECK(contains(a.jwks_where.file, "coldbrew.yaml"));

    temp_app app2;
    app2.write("coldbrew.yaml", "authorizers:\n  cognito: {jwks: 'https://idp.example.com/jwks'}\n");
    const auto s2 = app2.serverless(service);
    CHECK(s2.find_api("HttpApi")->authorizers[0].jwks == "https://idp.example.com/jwks");

    // Without coldbrew.yaml the issuer's discovery document names the keys.
    temp_app app3;
    const auto s3 = app3.serverless(service);
    CHECK(s3.find_api("HttpApi")->authorizers[0].jwks.empty());
    CHECK(s3.find_api("HttpApi")->authorizers[0].jwks_where.line == 0);
}

TEST_CASE("coldbrew.yaml authorizers errors: unknown name, keys, missing file, bad URL",
          "[unit]") {
    temp_app app;
    app.write("jwks.json", "{}");
    auto load = [&](const std::string& yaml) {
        app.write("coldbrew.yaml", yaml);
        return error_of([&] { app.serverless(service); });
    };
    auto e = load("authorizers:\n  cognit: {jwks: jwks.json}\n");
    CHECK(e.key_path() == "authorizers.cognit");
    CHECK(contains(e.message(), "no JWT authorizer named 'cognit'"));
    CHECK(contains(e.message(), "did you mean 'cognito'"));
    CHECK(e.where().line == 2);
    e = load("authorizers:\n  cognito: {jwk: jwks.json}\n");
    CHECK(e.key_path() == "authorizers.cognito.jwk");
    CHECK(contains(e.message(), "did you mean 'jwks'"));
    e = load("authorizers:\n  cognito: {}\n");
    CHECK(e.key_path() == "authorizers.cognito");
    CHECK(contains(e.message(), "needs jwks"));
    e = load("authorizers:\n  cognito: {jwks: missing.json}\n");
    CHECK(e.key_path() == "authorizers.cognito.jwks");
    CHECK(contains(e.message(), "does not exist"));
    e = load("authorizers:\n  cognito: {jwks: .}\n");
    CHECK(contains(e.message(), "is not a regular file"));
    e = load("authorizers:\n  cognito: {jwks: 'ftp://x/jwks'}\n");
    CHECK(contains(e.message(), "only http:// and https://"));
    e = load("authorizers:\n  cognito: {jwks: 'https:///jwks'}\n");
    CHECK(contains(e.message(), "has no host"));
    e = load("authorizers:\n  cognito: {jwks: ''}\n");
    CHECK(contains(e.message(), "must not be empty"));
}

TEST_CASE("coldbrew.yaml authorizers: a Lambda authorizer's name is no JWT authorizer",
          "[unit]") {
    temp_app app;
    app.write("jwks.json", "{}");
    app.write("coldbrew.yaml", "authorizers:\n  auth: {jwks: jwks.json}\n");
    const auto e = error_of([&] {
        app.serverless(R"(service: shop
provider: {name: aws, runtime: nodejs20.x}
functions:
  auth: {handler: a.h}
  hello: {handler: h.h, events: [{http: {method: get, path: a, authorizer: auth}}]}
)");
    });
    CHECK(e.key_path() == "authorizers.auth");
    CHECK(contains(e.message(), "it declares none"));
}
