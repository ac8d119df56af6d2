// coldbrew.yaml: coldbrew's own options beside the template; unknown keys are errors.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const two_functions = R"(Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      Environment:
        Variables: {FROM_TEMPLATE: t, SHARED: template}
      Events:
        Get: {Type: Api, Properties: {Path: /hello, Method: get}}
        Http: {Type: HttpApi}
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      Environment:
        Variables:
          REGION: !Sub ${AWS::Region}
          ARN: !GetAtt Hello.Arn
)";

} // namespace

TEST_CASE("coldbrew.yaml absent: default settings", "[unit]") {
    temp_app app;
    const auto s = app.sam(two_functions);
    CHECK_FALSE(s.coldbrew_file);
    CHECK(s.settings.host == "127.0.0.1");
    CHECK(s.settings.gateway_port == 3000);
    CHECK(s.settings.invoke_port == 3001);
    CHECK(s.settings.admin_port == 3002);
    CHECK_FALSE(s.settings.seed);
    CHECK(s.settings.time_scale == 1.0);
    CHECK(s.settings.region == "us-east-1");
    CHECK(s.settings.account_id == "123456789012");
    // A local safety cap, well above what a laptop test needs; AWS's own default is the
    // account's 1000 [QUOTA].
    CHECK(s.settings.default_max_environments == 100);
    CHECK(s.find_function("Hello")->max_environments == 100);
}

TEST_CASE("coldbrew.yaml top-level settings: host, ports, seed, time_scale", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"(host: 0.0.0.0
ports: {gateway: 0, invoke: 0, admin: 9002}
seed: 18446744073709551615
time_scale: 0.01
max_environments: 3
)");
    const auto s = app.sam(two_functions);
    REQUIRE(s.coldbrew_file);
    CHECK(*s.coldbrew_file == app.dir() / "coldbrew.yaml");
    CHECK(s.settings.host == "0.0.0.0");
    CHECK(s.settings.gateway_port == 0);
    CHECK(s.settings.invoke_port == 0);
    CHECK(s.settings.admin_port == 9002);
    CHECK(s.settings.seed == 18446744073709551615ull);
    CHECK(s.settings.time_scale == 0.01);
    CHECK(s.settings.default_max_environments == 3);
    CHECK(s.find_function("Hello")->max_environments == 3);
}

TEST_CASE("coldbrew.yaml admin: host and token; request_timeout_ms", "[unit]") {
    temp_app app;
    const auto defaults = app.sam(two_functions);
    CHECK(defaults.settings.admin_host == "127.0.0.1");
    CHECK(defaults.settings.admin_token.empty());
    CHECK(defaults.settings.request_timeout_ms == 30000);

    app.write("coldbrew.yaml", "host: 0.0.0.0\nadmin: {host: 0.0.0.0, token: abcdefghijklmnop}\n"
                               "request_timeout_ms: 250\n");
    const auto s = app.sam(two_functions);
    CHECK(s.settings.host == "0.0.0.0");
    CHECK(s.settings.admin_host == "0.0.0.0");
    CHECK(s.settings.admin_token == "abcdefghijklmnop");
    CHECK(s.settings.request_timeout_ms == 250);

    app.write("coldbrew.yaml", "admin: {token: short}\n");
    auto e = error_of([&] { app.sam(two_functions); });
    CHECK(e.key_path() == "admin.token");
    CHECK(contains(e.message(), "at least 16 characters"));
    app.write("coldbrew.yaml", "admin: {token: 'has a space in it'}\n");
    CHECK(error_of([&] { app.sam(two_functions); }).key_path() == "admin.token");
    app.write("coldbrew.yaml", "admin: {hots: 0.0.0.0}\n");
    CHECK(error_of([&] { app.sam(two_functions); }).key_path() == "admin.hots");
    app.write("coldbrew.yaml", "request_timeout_ms: 0\n");
    CHECK(error_of([&] { app.sam(two_functions); }).key_path() == "request_timeout_ms");
}

TEST_CASE("coldbrew.yaml region and account_id feed the template's pseudo-parameters", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "region: eu-central-1\naccount_id: '000000000042'\n");
    const auto s = app.sam(two_functions);
    const auto& env = s.find_function("Worker")->environment;
    CHECK(env.at("REGION") == "eu-central-1");
    CHECK(env.at("ARN") == "arn:aws:lambda:eu-central-1:000000000042:function:Hello");
    CHECK(s.settings.account_id == "000000000042");
}

TEST_CASE("coldbrew.yaml per-function overrides win", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"(max_environments: 4
functions:
  Hello:
    memory_mb: 2048
    timeout_s: 60
    max_environments: 1
    environment: {SHARED: coldbrew, NEW: n}
)");
    const auto s = app.sam(two_functions);
    const auto* hello = s.find_function("Hello");
    CHECK(hello->memory_mb == 2048);
    CHECK(hello->timeout_s == 60);
    CHECK(hello->max_environments == 1);
    CHECK(hello->environment == std::map<std::string, std::string>{
                                    {"FROM_TEMPLATE", "t"}, {"SHARED", "coldbrew"}, {"NEW", "n"}});
    const auto* worker = s.find_function("Worker");
    CHECK(worker->memory_mb == 128);
    CHECK(worker->max_environments == 4);
}

TEST_CASE("coldbrew.yaml gateway.integration_timeout_ms applies to every route", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "gateway:\n  integration_timeout_ms: 1500\n");
    const auto s = app.sam(two_functions);
    REQUIRE(s.routes.size() == 2);
    for (const auto& r : s.routes)
        CHECK(r.integration_timeout_ms == 1500);
}

TEST_CASE("coldbrew.yaml unknown key: error with position and suggestion", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "host: localhost\ntime_scael: 2\n");
    const auto e = error_of([&] { app.sam(two_functions); });
    CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
    CHECK(e.where().line == 2);
    CHECK(e.where().column == 1);
    CHECK(e.key_path() == "time_scael");
    CHECK(contains(e.message(), "did you mean 'time_scale'"));
}

TEST_CASE("coldbrew.yaml unknown nested key is an error", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "ports:\n  gatway: 3000\n");
    auto e = error_of([&] { app.sam(two_functions); });
    CHECK(e.key_path() == "ports.gatway");
    CHECK(e.where().line == 2);
    CHECK(e.where().column == 3);
    CHECK(contains(e.message(), "did you mean 'gateway'"));

    app.write("coldbrew.yaml", "functions:\n  Hello:\n    memory: 512\n");
    e = error_of([&] { app.sam(two_functions); });
    CHECK(e.key_path() == "functions.Hello.memory");
}

TEST_CASE("coldbrew.yaml override for an unknown function is an error", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "functions:\n  Helo:\n    timeout_s: 5\n");
    const auto e = error_of([&] { app.sam(two_functions); });
    CHECK(e.key_path() == "functions.Helo");
    CHECK(e.where().line == 2);
    CHECK(contains(e.message(), "did you mean 'Hello'"));
}

TEST_CASE("coldbrew.yaml value validation", "[unit]") {
    temp_app app;
    struct bad_case {
        const char* yaml;
        const char* key_path;
    };
    for (const auto& c :
         {bad_case{"time_scale: 0\n", "time_scale"}, bad_case{"time_scale: 1001\n", "time_scale"},
          bad_case{"time_scale: fast\n", "time_scale"},
          bad_case{"ports: {gateway: 70000}\n", "ports.gateway"},
          bad_case{"ports: {gateway: 4000, invoke: 4000}\n", "ports.invoke"},
          bad_case{"seed: -1\n", "seed"}, bad_case{"account_id: '1234'\n", "account_id"},
          bad_case{"region: Mars\n", "region"},
          bad_case{"max_environments: 0\n", "max_environments"},
          bad_case{"functions: {Hello: {memory_mb: 100}}\n", "functions.Hello.memory_mb"},
          bad_case{"functions: {Hello: {timeout_s: 1000}}\n", "functions.Hello.timeout_s"},
          bad_case{"gateway: {integration_timeout_ms: 10}\n", "gateway.integration_timeout_ms"},
          bad_case{"- a list\n", ""}}) {
        app.write("coldbrew.yaml", c.yaml);
        const auto e = error_of([&] { app.sam(two_functions); });
        INFO(c.yaml);
        CHECK(e.key_path() == c.key_path);
        CHECK(e.where().line > 0);
    }
}

TEST_CASE("coldbrew.yaml empty file is an empty configuration", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "# nothing yet\n");
    const auto s = app.sam(two_functions);
    CHECK(s.coldbrew_file);
    CHECK(s.settings.gateway_port == 3000);
}

TEST_CASE("coldbrew.yaml region wins over serverless provider.region", "[unit]") {
    temp_app app;
    const char* yaml =
        "service: s\nprovider: {name: aws, runtime: nodejs20.x, region: eu-west-1}\n"
        "functions:\n  f:\n    handler: h.h\n    environment: {R: '${aws:region}'}\n";
    CHECK(app.serverless(yaml).functions.at(0).environment.at("R") == "eu-west-1");
    app.write("coldbrew.yaml", "region: us-west-2\n");
    const auto s = app.serverless(yaml);
    CHECK(s.settings.region == "us-west-2");
    CHECK(s.functions.at(0).environment.at("R") == "us-west-2");
}

TEST_CASE("format_config_error: file:line:column: key.path: message", "[unit]") {
    CHECK(config::format_config_error({"t.yaml", 3, 7}, "Resources.F.Properties.Timeout", "bad") ==
          "t.yaml:3:7: Resources.F.Properties.Timeout: bad");
    CHECK(config::format_config_error({"t.yaml", 0, 0}, "", "file not found") ==
          "t.yaml: file not found");
    const config::config_error e({"c.yaml", 1, 2}, "ports", "oops");
    CHECK(std::string(e.what()) == "c.yaml:1:2: ports: oops");
    CHECK(e.where().line == 1);
    CHECK(e.key_path() == "ports");
    CHECK(e.message() == "oops");
}

TEST_CASE("coldbrew.yaml nested YAML aliases are a config error, not an exhausted heap", "[unit]") {
    temp_app app;
    std::string bomb = "functions:\n  Hello:\n    environment: {}\nx0: &x0 [x,x,x,x,x,x,x,x,x,x]\n";
    for (int i = 1; i <= 6; ++i) {
        bomb += "x" + std::to_string(i) + ": &x" + std::to_string(i) + " [";
        for (int j = 0; j < 10; ++j)
            bomb += (j ? ",*x" : "*x") + std::to_string(i - 1);
        bomb += "]\n";
    }
    app.write("coldbrew.yaml", bomb);
    const auto e = error_of([&] { app.sam(two_functions); });
    CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
    CHECK(e.where().line > 0);
    CHECK(e.message() == "document expands to more than 1000000 nodes (YAML aliases?)");
}
