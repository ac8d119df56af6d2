// The gateway as API Gateway guards it, end to end on examples/auth with real node handlers:
// a REST Lambda TOKEN authorizer (allow, deny, missing token, a token failing the validation
// expression, the authorizer throwing), its result cache, an API key with a usage plan
// reaching 429, an HTTP API Lambda REQUEST authorizer with simple responses, a JWT authorizer
// with the example's test issuer, CORS preflight on both API kinds, and a fault rule naming
// the authorizer function.

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

const std::string api_key = "local-orders-key-0123456789";  // examples/auth/coldbrew.yaml

struct auth_app {
    coldbrew_process proc;
    int port;
    int admin;
    explicit auth_app(std::vector<std::string> extra = {})
        : proc(args(std::move(extra))), port(proc.wait_for_port()), admin(proc.wait_for_admin_port()) {}
    static std::vector<std::string> args(std::vector<std::string> extra) {
        std::vector<std::string> a{"up",          (source_dir() / "examples" / "auth").string(),
                                   "--port",      "0",
                                   "--invoke-port", "0",
                                   "--admin-port", "0",
                                   "--seed",      "7"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    http_reply get(const std::string& target, std::vector<std::pair<std::string, std::string>> h = {}) {
        return http_request(port, "GET", target, "", h);
    }
    std::int64_t invocations(const std::string& function) {
        auto c = json::parse(http_request(admin, "GET", "/counters").body);
        return c["functions"][function]["invocations"].get<std::int64_t>();
    }
    void stop() {
        proc.signal(SIGINT);
        REQUIRE(proc.wait_exit() == 0);
    }
};

// A token from the example's test issuer (examples/auth/issuer/token.js), claims merged over
// its defaults.
std::string token(const std::string& claims = "{}") {
    const std::string cmd = "node '" + (source_dir() / "examples" / "auth" / "issuer" / "token.js").string() +
                            "' '" + claims + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
    REQUIRE(p);
    std::string out;
    char buf[4096];
    while (auto n = std::fread(buf, 1, sizeof buf, p.get())) out.append(buf, n);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    REQUIRE(out.size() > 100);
    return out;
}

}  // namespace

TEST_CASE("auth: a REST TOKEN authorizer allows, denies and fails as API Gateway answers",
          "[integration]") {
    auth_app app;

    auto missing = app.get("/Prod/orders");
    CHECK(missing.status == 401);
    CHECK(json::parse(missing.body) == json{{"message", "Unauthorized"}});

    // Fails ValidationExpression: turned away without calling the authorizer.
    auto basic = app.get("/Prod/orders", {{"Authorization", "Basic abc"}});
    CHECK(basic.status == 401);
    CHECK(app.invocations("TokenAuthorizer") == 0);

    auto ok = app.get("/Prod/orders", {{"Authorization", "Bearer allow-alice"}});
    INFO(ok.body);
    REQUIRE(ok.status == 200);
    auto body = json::parse(ok.body);
    CHECK(body["authorizer"]["principalId"] == "alice");
    CHECK(body["authorizer"]["user"] == "alice");
    CHECK(app.invocations("TokenAuthorizer") == 1);

    // The result is cached by token for ReauthorizeEvery (60 s).
    CHECK(app.get("/Prod/orders", {{"Authorization", "Bearer allow-alice"}}).status == 200);
    CHECK(app.invocations("TokenAuthorizer") == 1);

    auto deny = app.get("/Prod/orders", {{"Authorization", "Bearer deny"}});
    CHECK(deny.status == 403);
    CHECK(deny.body.find("not authorized") != std::string::npos);

    auto unauthorized = app.get("/Prod/orders", {{"Authorization", "Bearer unauthorized"}});
    CHECK(unauthorized.status == 401);

    auto thrown = app.get("/Prod/orders", {{"Authorization", "Bearer boom"}});
    CHECK(thrown.status == 500);

    // An open route needs nothing.
    CHECK(app.get("/Prod/health").status == 200);

    // A cached policy is judged again for each method: orders-only allows GET /orders only.
    CHECK(app.get("/Prod/orders", {{"Authorization", "Bearer orders-only"}}).status == 200);
    auto post = http_request(app.port, "POST", "/Prod/orders", "{}",
                             {{"Authorization", "Bearer orders-only"}, {"x-api-key", api_key}});
    CHECK(post.status == 403);
    app.stop();
}

TEST_CASE("auth: an API key of a usage plan is required, then throttled at its burst",
          "[integration]") {
    auth_app app;
    const std::vector<std::pair<std::string, std::string>> bearer{{"Authorization", "Bearer allow-bob"}};

    auto no_key = http_request(app.port, "POST", "/Prod/orders", "{}", bearer);
    CHECK(no_key.status == 403);
    CHECK(json::parse(no_key.body) == json{{"message", "Forbidden"}});
    auto wrong = http_request(app.port, "POST", "/Prod/orders", "{}",
                              {{"Authorization", "Bearer allow-bob"}, {"x-api-key", "nope"}});
    CHECK(wrong.status == 403);

    // RateLimit 2/s, BurstLimit 2: a quick run of requests meets 429 Too Many Requests.
    int ok = 0, throttled = 0;
    std::string apikey_id;
    for (int i = 0; i < 6; ++i) {
        auto r = http_request(app.port, "POST", "/Prod/orders", "{}",
                              {{"Authorization", "Bearer allow-bob"}, {"x-api-key", api_key}});
        if (r.status == 200) {
            ++ok;
            apikey_id = json::parse(r.body)["apiKeyId"].get<std::string>();
        } else if (r.status == 429) {
            ++throttled;
            CHECK(json::parse(r.body) == json{{"message", "Too Many Requests"}});
        }
    }
    CHECK(ok >= 2);
    CHECK(throttled >= 1);
    CHECK(apikey_id.size() == 10);
    app.stop();
}

TEST_CASE("auth: an HTTP API REQUEST authorizer with simple responses", "[integration]") {
    auth_app app;
    CHECK(app.get("/v2/orders").status == 401);
    auto ok = app.get("/v2/orders", {{"x-user", "carol"}});
    INFO(ok.body);
    REQUIRE(ok.status == 200);
    CHECK(json::parse(ok.body)["authorizer"]["lambda"]["user"] == "carol");
    auto no = app.get("/v2/orders", {{"x-user", "mallory"}});
    CHECK(no.status == 403);
    CHECK(json::parse(no.body) == json{{"message", "Forbidden"}});
    // ReauthorizeEvery 0: every request calls the authorizer.
    const auto before = app.invocations("RequestAuthorizer");
    CHECK(app.get("/v2/orders", {{"x-user", "carol"}}).status == 200);
    CHECK(app.invocations("RequestAuthorizer") == before + 1);
    app.stop();
}

TEST_CASE("auth: a JWT authorizer checks signature, claims and scopes", "[integration]") {
    auth_app app;
    auto ok = app.get("/v2/me", {{"Authorization", "Bearer " + token()}});
    INFO(ok.body);
    REQUIRE(ok.status == 200);
    auto jwt = json::parse(ok.body)["authorizer"]["jwt"];
    CHECK(jwt["claims"]["sub"] == "alice");
    CHECK(jwt["scopes"] == json::array({"orders.read"}));

    auto none = app.get("/v2/me");
    CHECK(none.status == 401);
    auto expired = app.get("/v2/me", {{"Authorization", token(R"({"exp":-60})")}});
    CHECK(expired.status == 401);
    CHECK(expired.header("www-authenticate").value_or("").find("invalid_token") != std::string::npos);
    CHECK(app.get("/v2/me", {{"Authorization", token(R"({"aud":"someone-else"})")}}).status == 401);
    CHECK(app.get("/v2/me", {{"Authorization", token(R"({"kid":"unknown-key"})")}}).status == 401);
    auto scope = app.get("/v2/me", {{"Authorization", token(R"({"scope":"orders.write"})")}});
    CHECK(scope.status == 403);
    CHECK(scope.header("www-authenticate").value_or("").find("insufficient_scope") != std::string::npos);
    app.stop();
}

TEST_CASE("auth: CORS preflight on a REST and an HTTP API", "[integration]") {
    auth_app app;
    const std::vector<std::pair<std::string, std::string>> pre{
        {"Origin", "https://shop.example.com"}, {"Access-Control-Request-Method", "POST"}};

    // REST: SAM's OPTIONS mock, not behind the default authorizer here.
    auto rest = http_request(app.port, "OPTIONS", "/Prod/orders", "", pre);
    CHECK(rest.status == 200);
    CHECK(rest.header("Access-Control-Allow-Origin") == "https://shop.example.com");
    CHECK(rest.header("Access-Control-Allow-Methods").value_or("").find("POST") != std::string::npos);

    // HTTP API: the gateway answers the preflight and adds the origin to actual answers.
    auto http = http_request(app.port, "OPTIONS", "/v2/orders", "",
                             {{"Origin", "https://shop.example.com"},
                              {"Access-Control-Request-Method", "GET"},
                              {"Access-Control-Request-Headers", "x-user"}});
    CHECK(http.status == 204);
    CHECK(http.header("access-control-allow-origin") == "https://shop.example.com");
    CHECK(http.header("access-control-max-age") == "600");
    auto other = http_request(app.port, "OPTIONS", "/v2/orders", "",
                              {{"Origin", "https://evil.example"},
                               {"Access-Control-Request-Method", "GET"}});
    CHECK_FALSE(other.header("access-control-allow-origin"));
    auto actual = app.get("/v2/health", {{"Origin", "https://shop.example.com"}});
    CHECK(actual.status == 200);
    CHECK(actual.header("access-control-allow-origin") == "https://shop.example.com");
    app.stop();
}

TEST_CASE("auth: a fault rule naming the authorizer function acts on its invocation",
          "[integration]") {
    temp_dir out;
    const auto trace_file = out.path() / "traces.jsonl";
    auth_app app({"--trace-file", trace_file.string()});
    auto added = http_request(app.admin, "POST", "/faults", json{
        {"name", "authorizer-down"},
        {"function", "TokenAuthorizer"},
        {"first", 1},
        {"fault", {{"kind", "function_error"}, {"mode", "handler"},
                   {"error_type", "Error"}, {"error_message", "database unreachable"}}}}.dump(),
        {{"Content-Type", "application/json"}});
    REQUIRE(added.status == 201);
    // The route's own rules never see the authorizer's decision, and an SLA-less stack passes.
    auto failed = app.get("/Prod/orders", {{"Authorization", "Bearer allow-dave"}});
    CHECK(failed.status == 500);
    CHECK(failed.header("X-Coldbrew-Fault").value_or("").find("rule=authorizer-down") != std::string::npos);
    CHECK(app.invocations("TokenAuthorizer") == 0);  // answered without invoking it
    // Only the first: the next call reaches the real authorizer.
    CHECK(app.get("/Prod/orders", {{"Authorization", "Bearer allow-dave"}}).status == 200);
    CHECK(app.invocations("TokenAuthorizer") == 1);
    auto counters = json::parse(http_request(app.admin, "GET", "/counters").body);
    CHECK(counters["requests"]["gateway"]["injected_fault"] == 1);
    app.stop();

    // The authorizer's call is a span of its own, named for its function, in both traces.
    std::ifstream in(trace_file);
    int authorizer_spans = 0;
    for (std::string line; std::getline(in, line);) {
        const auto doc = json::parse(line);  // kept: the loop below reads into it
        for (const auto& rs : doc["resourceSpans"])
            for (const auto& ss : rs["scopeSpans"])
                for (const auto& span : ss["spans"]) {
                    if (span["name"] != "gateway.authorizer") continue;
                    ++authorizer_spans;
                    bool named = false;
                    for (const auto& a : span["attributes"])
                        named |= a["key"] == "faas.invoked_name" &&
                                 a["value"]["stringValue"] == "TokenAuthorizer";
                    CHECK(named);
                }
    }
    CHECK(authorizer_spans == 2);  // the injected failure's call included
}
