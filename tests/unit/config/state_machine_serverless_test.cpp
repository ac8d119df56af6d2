// serverless-step-functions `stepFunctions.stateMachines` and `schedule` events as the
// serverless loader reads them into config::stack.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const service = R"(service: shop
plugins:
  - serverless-step-functions
provider:
  name: aws
  runtime: nodejs22.x
functions:
  hello:
    handler: handler.hello
  charge-card:
    handler: handler.charge
)";

}  // namespace

TEST_CASE("serverless-step-functions: machines, intrinsics naming functions, http and schedule",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(std::string(service) + R"y(stepFunctions:
  stateMachines:
    checkout:
      name: checkout-${sls:stage}
      type: EXPRESS
      events:
        - http:
            path: /checkout/
            method: POST
        - http: GET checkout/sync
        - schedule:
            rate: rate(10 minutes)
            enabled: false
            input: {key1: value1, n: 2}
        - schedule: cron(0 12 * * ? *)
        - eventBridge:
            event: {source: [shop]}
      definition:
        StartAt: A
        States:
          A:
            Type: Task
            Resource:
              Fn::GetAtt: [hello, Arn]
            Next: B
          B:
            Type: Task
            Resource: arn:aws:states:::lambda:invoke
            Parameters:
              FunctionName: {Ref: ChargeDashcardLambdaFunction}
            Next: C
          C:
            Type: Task
            Resource: {"Fn::Sub": "arn:aws:lambda:${AWS::Region}:${AWS::AccountId}:function:${self:service}-${sls:stage}-hello"}
            Next: D
          D:
            Type: Pass
            Parameters: {Table: {"Fn::ImportValue": "Other:Table"}}
            End: true
    sync:
      definition: '{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}'
      events:
        - http: {path: sync, method: post, action: StartSyncExecution, timeoutInMillis: 5000}
        - http: {path: status, method: post, action: DescribeExecution}
)y");
    REQUIRE(s.state_machines.size() == 2);
    const auto& m = s.state_machines[0];
    CHECK(m.name == "checkout");
    CHECK(m.state_machine_name == "checkout-dev");
    CHECK(m.type == config::state_machine::kind::express);
    CHECK(m.definition_key == "stepFunctions.stateMachines.checkout.definition");
    const std::string hello_arn = "arn:aws:lambda:us-east-1:123456789012:function:shop-dev-hello";
    const auto& st = m.definition["States"];
    CHECK(st["A"]["Resource"] == hello_arn);
    CHECK(st["B"]["Parameters"]["FunctionName"] == "shop-dev-charge-card");
    CHECK(st["C"]["Resource"] == hello_arn);
    CHECK(st["D"]["Parameters"]["Table"].is_object());  // left as written
    CHECK(any_contains(s.warnings, "Fn::ImportValue"));
    CHECK(m.function_arns.size() == 2);
    CHECK(m.function_arns.at(hello_arn) == "hello");
    CHECK(m.function_arns.at("shop-dev-charge-card") == "charge-card");
    CHECK(s.state_machines[1].type == config::state_machine::kind::standard);
    CHECK(s.state_machines[1].definition["StartAt"] == "P");

    REQUIRE(s.routes.size() == 3);
    CHECK(s.routes[0].state_machine == "checkout");
    CHECK(s.routes[0].method == "POST");
    CHECK(s.routes[0].path == "/checkout");
    CHECK(s.routes[0].api_id == "ApiGatewayRestApi");
    CHECK(s.routes[0].state_machine_action == config::route::sfn_action::start_execution);
    CHECK(s.routes[1].path == "/checkout/sync");
    CHECK(s.routes[1].method == "GET");
    CHECK(s.routes[2].state_machine == "sync");
    CHECK(s.routes[2].state_machine_action == config::route::sfn_action::start_sync_execution);
    CHECK(s.routes[2].integration_timeout_ms == 5000);
    REQUIRE(s.apis.size() == 1);
    CHECK(s.apis[0].stage == "dev");

    REQUIRE(s.schedules.size() == 2);
    CHECK(s.schedules[0].state_machine == "checkout");
    CHECK(s.schedules[0].expression == "rate(10 minutes)");
    CHECK_FALSE(s.schedules[0].enabled);
    CHECK(nlohmann::json::parse(s.schedules[0].input) == nlohmann::json{{"key1", "value1"}, {"n", 2}});
    CHECK(s.schedules[0].name == "checkout-schedule-1");
    CHECK(s.schedules[1].expression == "cron(0 12 * * ? *)");
    CHECK(s.schedules[1].enabled);
    CHECK(s.schedules[1].name == "checkout-schedule-2");

    bool event_bridge = false, describe = false;
    for (const auto& n : s.ignored) {
        if (n.what == "eventBridge event #4 of checkout") event_bridge = true;
        if (n.what == "http event POST status of sync") describe = true;
        CHECK_FALSE(contains(n.what, "serverless-step-functions"));
    }
    CHECK(event_bridge);
    CHECK(describe);
}

TEST_CASE("serverless schedule events on functions: forms, names, errors", "[unit]") {
    temp_app app;
    const auto s = app.serverless(std::string(service) + R"y(    events:
      - schedule: rate(1 minute)
      - schedule:
          rate:
            - rate(2 hours)
            - cron(0 3 * * ? *)
      - schedule:
          name: nightly
          rate: cron(0 1 * * ? *)
          method: scheduler
          timezone: Europe/Paris
          input: '{"a": 1}'
          inputPath: $.x
)y");
    REQUIRE(s.schedules.size() == 4);
    CHECK(s.schedules[0].function == "charge-card");
    CHECK(s.schedules[0].expression == "rate(1 minute)");
    CHECK(s.schedules[0].name == "charge-card-schedule-1");
    CHECK(s.schedules[2].expression == "cron(0 3 * * ? *)");
    CHECK(s.schedules[2].name == "charge-card-schedule-3");
    CHECK(s.schedules[3].name == "nightly");
    CHECK(s.schedules[3].timezone == "Europe/Paris");
    CHECK(s.schedules[3].input == R"({"a": 1})");
    CHECK(any_contains(s.warnings, "inputPath"));
    CHECK(s.ignored.empty());

    auto e = error_of([&] {
        app.serverless(std::string(service) + "    events:\n      - schedule: rate(2 hour)\n");
    });
    CHECK(contains(e.message(), "use '2 hours'"));
    e = error_of([&] {
        app.serverless(std::string(service) +
                       "    events:\n      - schedule: {rate: rate(1 day), timezone: UTC}\n");
    });
    CHECK(contains(e.message(), "method: scheduler"));
    e = error_of([&] {
        app.serverless(std::string(service) + "    events:\n      - schedule: {enabled: true}\n");
    });
    CHECK(contains(e.message(), "needs a rate"));
}

TEST_CASE("serverless-step-functions: definition errors, without the plugin, name clashes",
          "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.serverless(std::string(service) + "stepFunctions:\n  stateMachines:\n    a:\n      name: x\n");
    });
    CHECK(contains(e.message(), "needs a definition"));
    e = error_of([&] {
        app.serverless(std::string(service) +
                       "stepFunctions:\n  stateMachines:\n    a:\n      definition: '{\"StartAt\":'\n");
    });
    CHECK(contains(e.message(), "not valid JSON"));
    CHECK(e.where().line == 15);
    e = error_of([&] {
        app.serverless(std::string(service) +
                       "stepFunctions:\n  stateMachines:\n    a:\n      definition: [1]\n");
    });
    CHECK(contains(e.message(), "must be a JSON object"));
    e = error_of([&] {
        app.serverless(std::string(service) + R"(stepFunctions:
  stateMachines:
    a: {name: same, definition: {StartAt: A, States: {A: {Type: Pass, End: true}}}}
    b: {name: same, definition: {StartAt: A, States: {A: {Type: Pass, End: true}}}}
)");
    });
    CHECK(contains(e.message(), "used by two state machines"));

    const auto s = app.serverless(R"(service: shop
provider: {name: aws, runtime: nodejs22.x}
stepFunctions:
  stateMachines:
    a:
      type: STANDARD
      definition: {StartAt: A, States: {A: {Type: Pass, End: true}}}
)");
    REQUIRE(s.state_machines.size() == 1);
    CHECK(any_contains(s.warnings, "plugins: does not list"));
}

TEST_CASE("serverless: a function http route and a state machine http route on one path clash",
          "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless(R"(service: shop
plugins: [serverless-step-functions]
provider: {name: aws, runtime: nodejs22.x}
functions:
  hello:
    handler: handler.hello
    events: [{http: POST go}]
stepFunctions:
  stateMachines:
    a:
      definition: {StartAt: A, States: {A: {Type: Pass, End: true}}}
      events: [{http: POST go}]
)");
    });
    CHECK(contains(e.message(), "already served by hello"));
}
