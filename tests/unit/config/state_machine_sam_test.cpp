// SAM and CloudFormation state machines, their events, and function schedules as the SAM
// loader reads them into config::stack.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

// A rendered copy of SAM CLI's nodejs20.x step-func app template (aws-sam-cli-app-templates).
const std::filesystem::path step_func_fixture =
    std::filesystem::path(COLDBREW_FIXTURES_DIR) / "step-func";

const config::not_emulated* find_ignored(const config::stack& s, const std::string& what) {
    for (const auto& n : s.ignored)
        if (n.what == what) return &n;
    return nullptr;
}

const char* const header = R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: nodejs22.x
)";

const char* const pass_machine = "{StartAt: A, States: {A: {Type: Pass, End: true}}}";

}  // namespace

TEST_CASE("SAM CLI step-func sample: one state machine on three functions, a disabled schedule",
          "[unit]") {
    const auto s = config::load_stack(step_func_fixture, {});
    REQUIRE(s.functions.size() == 3);
    REQUIRE(s.state_machines.size() == 1);
    const auto& m = s.state_machines[0];
    CHECK(m.name == "StockTradingStateMachine");
    CHECK(m.state_machine_name == "StockTradingStateMachine");
    CHECK(m.type == config::state_machine::kind::standard);
    CHECK(m.definition_key == "Resources.StockTradingStateMachine.Properties.DefinitionUri");
    CHECK(m.where.file == (step_func_fixture / "statemachine" / "stock_trader.asl.json").string());
    REQUIRE(m.definition.is_object());
    CHECK(m.definition["StartAt"] == "Check Stock Value");
    const std::string checker = "arn:aws:lambda:us-east-1:123456789012:function:StockCheckerFunction";
    CHECK(m.definition["States"]["Check Stock Value"]["Resource"] == checker);
    // DDBPutItem: a !Sub of AWS::Partition; DDBTable: !Ref of the table, its logical id.
    CHECK(m.definition["States"]["Record Transaction"]["Resource"] ==
          "arn:aws:states:::dynamodb:putItem");
    CHECK(m.definition["States"]["Record Transaction"]["Parameters"]["TableName"] ==
          "TransactionTable");
    REQUIRE(m.function_arns.size() == 3);
    CHECK(m.function_arns.at(checker) == "StockCheckerFunction");
    CHECK(m.function_arns.at("arn:aws:lambda:us-east-1:123456789012:function:StockSellerFunction") ==
          "StockSellerFunction");
    CHECK(m.function_arns.at("arn:aws:lambda:us-east-1:123456789012:function:StockBuyerFunction") ==
          "StockBuyerFunction");

    REQUIRE(s.schedules.size() == 1);
    const auto& sc = s.schedules[0];
    CHECK(sc.name == "HourlyTradingSchedule");
    CHECK(sc.expression == "rate(1 hour)");
    CHECK_FALSE(sc.enabled);
    CHECK(sc.state_machine == "StockTradingStateMachine");
    CHECK(sc.function.empty());
    CHECK(sc.input.empty());

    CHECK(find_ignored(s, "AWS::Serverless::SimpleTable TransactionTable"));
    CHECK_FALSE(find_ignored(s, "AWS::Serverless::StateMachine StockTradingStateMachine"));
    CHECK(s.routes.empty());
}

TEST_CASE("SAM state machine: inline Definition, substitutions, Name, Type, Api event", "[unit]") {
    temp_app app;
    const auto s = app.sam(std::string(header) + R"(      FunctionName: hello-fn
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: order-flow
      Type: EXPRESS
      Role: arn:aws:iam::123456789012:role/flow
      Policies: [AWSLambdaRole]
      Tracing: {Enabled: true}
      Logging: {Level: ALL}
      DefinitionSubstitutions:
        HelloArn: !GetAtt Hello.Arn
        HelloName: !Ref Hello
        Limit: 3
      Definition:
        StartAt: Call
        States:
          Call:
            Type: Task
            Resource: arn:aws:states:::lambda:invoke
            Parameters: {FunctionName: "${HelloName}", Payload.$: "$"}
            Next: Again
          Again:
            Type: Task
            Resource: "${HelloArn}"
            Comment: "at most ${Limit}, ${Unknown} kept"
            TimeoutSeconds: 5
            End: true
      Events:
        Start:
          Type: Api
          Properties: {Path: /orders, Method: post}
)");
    REQUIRE(s.state_machines.size() == 1);
    const auto& m = s.state_machines[0];
    CHECK(m.name == "Flow");
    CHECK(m.state_machine_name == "order-flow");
    CHECK(m.type == config::state_machine::kind::express);
    CHECK(m.role_arn == "arn:aws:iam::123456789012:role/flow");
    CHECK(m.definition_key == "Resources.Flow.Properties.Definition");
    CHECK(m.where.line == 25);  // the map under Definition:
    const auto& states = m.definition["States"];
    CHECK(states["Call"]["Parameters"]["FunctionName"] == "hello-fn");
    CHECK(states["Again"]["Resource"] == "arn:aws:lambda:us-east-1:123456789012:function:hello-fn");
    CHECK(states["Again"]["Comment"] == "at most 3, ${Unknown} kept");
    CHECK(states["Again"]["TimeoutSeconds"] == 5);  // a number, not "5"
    CHECK(states["Again"]["End"] == true);
    CHECK(m.function_arns.size() == 2);
    CHECK(m.function_arns.at("hello-fn") == "Hello");
    CHECK(m.function_arns.at("arn:aws:lambda:us-east-1:123456789012:function:hello-fn") == "Hello");

    REQUIRE(s.routes.size() == 1);
    const auto& r = s.routes[0];
    CHECK(r.state_machine == "Flow");
    CHECK(r.function.empty());
    CHECK(r.state_machine_action == config::route::sfn_action::start_execution);
    CHECK(r.method == "POST");
    CHECK(r.path == "/orders");
    CHECK(r.api_id == "ServerlessRestApi");
    CHECK(r.payload_format_version == "1.0");
    REQUIRE(s.apis.size() == 1);
    CHECK(s.apis[0].id == "ServerlessRestApi");
    // Role, Policies, Tracing, Logging: no local effect, nothing said.
    for (const auto& w : s.warnings) UNSCOPED_INFO(w);
    CHECK(s.warnings.empty());
    CHECK(s.ignored.empty());
}

TEST_CASE("SAM state machine: Api event on an explicit API; two Api events on one path clash",
          "[unit]") {
    temp_app app;
    const std::string base = std::string(header) + R"(  Shop:
    Type: AWS::Serverless::Api
    Properties: {StageName: dev}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: )" + pass_machine + R"(
      Events:
        Start:
          Type: Api
          Properties: {Path: /go, Method: get, RestApiId: !Ref Shop}
)";
    const auto s = app.sam(base);
    REQUIRE(s.routes.size() == 1);
    CHECK(s.routes[0].api_id == "Shop");
    const auto e = error_of([&] {
        app.sam(base + R"(        Again:
          Type: Api
          Properties: {Path: /go, Method: GET, RestApiId: !Ref Shop}
)");
    });
    CHECK(contains(e.message(), "already served by Flow"));
}

TEST_CASE("SAM state machine: events other than Api and schedules", "[unit]") {
    temp_app app;
    const std::string base = std::string(header) + R"(  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: )" + pass_machine + R"(
      Events:
)";
    const auto s = app.sam(base + R"(        OnOrder:
          Type: EventBridgeRule
          Properties: {Pattern: {source: [shop]}}
)");
    const auto* n = find_ignored(s, "EventBridgeRule event OnOrder of Flow");
    REQUIRE(n);
    CHECK(n->kind == "event");

    const auto http = error_of([&] {
        app.sam(base + R"(        Start:
          Type: HttpApi
          Properties: {Path: /go, Method: get}
)");
    });
    CHECK(contains(http.message(), "no HttpApi event"));
    CHECK(http.where().line == 16);

    const auto typo = error_of([&] {
        app.sam(base + R"(        Start:
          Type: Shedule
          Properties: {Schedule: rate(1 hour)}
)");
    });
    CHECK(contains(typo.message(), "Schedule"));
}

TEST_CASE("SAM schedules: Schedule and ScheduleV2 on functions and state machines", "[unit]") {
    temp_app app;
    const auto s = app.sam(std::string(header) + R"y(      Events:
        Nightly:
          Type: Schedule
          Properties: {Schedule: "cron(0 3 * * ? *)", Input: '{"job": "nightly"}'}
        Later:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: at(2026-12-24T18:00:00)
            ScheduleExpressionTimezone: Europe/Berlin
            State: DISABLED
            FlexibleTimeWindow: {Mode: 'OFF'}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: )y" + pass_machine + R"(
      Events:
        Tick:
          Type: ScheduleV2
          Properties: {ScheduleExpression: rate(5 minutes), State: ENABLED}
)");
    REQUIRE(s.schedules.size() == 3);
    CHECK(s.schedules[0].name == "Nightly");
    CHECK(s.schedules[0].function == "Hello");
    CHECK(s.schedules[0].expression == "cron(0 3 * * ? *)");
    CHECK(s.schedules[0].enabled);
    CHECK(s.schedules[0].input == R"({"job": "nightly"})");
    CHECK(s.schedules[0].where.line == 11);
    CHECK(s.schedules[1].name == "Later");
    CHECK(s.schedules[1].timezone == "Europe/Berlin");
    CHECK_FALSE(s.schedules[1].enabled);
    CHECK(s.schedules[2].state_machine == "Flow");
    CHECK(s.schedules[2].expression == "rate(5 minutes)");
    CHECK(s.schedules[2].enabled);
    // No longer listed as not emulated.
    CHECK(s.ignored.empty());
    for (const auto& w : s.warnings) UNSCOPED_INFO(w);
    CHECK(s.warnings.empty());
}

TEST_CASE("SAM schedules: bad expressions, Input and flags are config errors", "[unit]") {
    temp_app app;
    auto load = [&](const std::string& props) {
        return error_of([&] {
            app.sam(std::string(header) + "      Events:\n        Tick:\n          Type: " + props);
        });
    };
    CHECK(contains(load("Schedule\n          Properties: {Schedule: rate(5 minute)}\n").message(),
                   "use '5 minutes'"));
    CHECK(contains(load("Schedule\n          Properties: {Schedule: rate(1 hours)}\n").message(),
                   "use '1 hour'"));
    CHECK(contains(load("Schedule\n          Properties: {Schedule: rate(0 hours)}\n").message(),
                   "positive"));
    CHECK(contains(load("Schedule\n          Properties: {Schedule: rate(5 weeks)}\n").message(),
                   "rate("));
    CHECK(contains(load("Schedule\n          Properties: {Schedule: \"cron(0 3 * * ?)\"}\n").message(),
                   "6 fields"));
    CHECK(contains(load("Schedule\n          Properties: {Schedule: every hour}\n").message(),
                   "not rate"));
    CHECK(contains(
        load("Schedule\n          Properties: {Schedule: at(2026-12-24T18:00:00)}\n").message(),
        "ScheduleV2"));
    CHECK(contains(
        load("ScheduleV2\n          Properties: {ScheduleExpression: at(2026-12-24 18:00)}\n")
            .message(),
        "yyyy-mm-ddThh:mm:ss"));
    CHECK(contains(load("Schedule\n          Properties: {Enabled: true}\n").message(),
                   "needs Schedule"));
    CHECK(contains(load("Schedule\n          Properties: {Schedule: rate(1 day), Enabled: true, "
                        "State: ENABLED}\n")
                       .message(),
                   "both Enabled and State"));
    CHECK(contains(
        load("Schedule\n          Properties: {Schedule: rate(1 day), State: ON}\n").message(),
        "ENABLED or DISABLED"));
    CHECK(contains(
        load("Schedule\n          Properties: {Schedule: rate(1 day), Input: '{oops'}\n").message(),
        "not valid JSON"));
}

TEST_CASE("SAM state machine: definition errors point at the template or the file", "[unit]") {
    temp_app app;
    const std::string base = std::string(header) + R"(  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
)";
    auto e = error_of([&] { app.sam(base + "      Type: STANDARD\n"); });
    CHECK(contains(e.message(), "needs Definition or DefinitionUri"));

    e = error_of([&] { app.sam(base + "      DefinitionUri: missing.asl.json\n"); });
    CHECK(contains(e.message(), "does not exist"));
    CHECK(e.where().line == 13);

    e = error_of([&] {
        app.sam(base + "      DefinitionUri: {Bucket: b, Key: flow.json}\n");
    });
    CHECK(contains(e.message(), "S3"));
    e = error_of([&] { app.sam(base + "      DefinitionUri: s3://b/flow.json\n"); });
    CHECK(contains(e.message(), "S3"));

    e = error_of([&] { app.sam(base + "      Definition: [1, 2]\n"); });
    CHECK(contains(e.message(), "must be a JSON object"));
    CHECK(e.key_path() == "Resources.Flow.Properties.Definition");

    e = error_of([&] {
        app.sam(base + "      Definition: " + pass_machine + "\n      DefinitionUri: f.json\n");
    });
    CHECK(contains(e.message(), "not both"));

    e = error_of([&] { app.sam(base + "      Definition: " + pass_machine + "\n      Type: FAST\n"); });
    CHECK(contains(e.message(), "STANDARD or EXPRESS"));

    app.write("bad.asl.json", "{\"StartAt\": \"A\",\n  \"States\": }");
    e = error_of([&] { app.sam(base + "      DefinitionUri: bad.asl.json\n"); });
    CHECK(contains(e.message(), "not valid JSON"));
    CHECK(e.where().file == (app.dir() / "bad.asl.json").string());
    CHECK(e.where().line == 2);  // where the parser stopped, not the file's first line

    app.write("list.asl.json", "[]");
    e = error_of([&] { app.sam(base + "      DefinitionUri: list.asl.json\n"); });
    CHECK(contains(e.message(), "must be a JSON object"));
}

TEST_CASE("SAM state machine: a YAML DefinitionUri, Globals.StateMachine, unknown keys warn",
          "[unit]") {
    temp_app app;
    app.write("flow.asl.yaml", "StartAt: A\nStates:\n  A: {Type: Pass, Result: \"${Greeting}\", End: true}\n");
    const auto s = app.sam(R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Globals:
  StateMachine:
    Type: EXPRESS
Resources:
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: flow.asl.yaml
      DefinitionSubstitutions: {Greeting: hi}
      Defintion: oops
)");
    REQUIRE(s.state_machines.size() == 1);
    CHECK(s.state_machines[0].type == config::state_machine::kind::express);
    CHECK(s.state_machines[0].definition["States"]["A"]["Result"] == "hi");
    CHECK(any_contains(s.warnings, "Defintion"));
}

TEST_CASE("SAM state machine: a substitution AWS alone knows stays a placeholder, with a warning",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(std::string(header) + R"(  Table:
    Type: AWS::DynamoDB::Table
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionSubstitutions: {TableArn: !GetAtt Table.Arn}
      Definition:
        StartAt: A
        States: {A: {Type: Pass, Result: "${TableArn}", End: true}}
)");
    CHECK(s.state_machines.at(0).definition["States"]["A"]["Result"] == "${TableArn}");
    CHECK(any_contains(s.warnings, "${TableArn} stays as written"));
}

TEST_CASE("CloudFormation state machine: DefinitionString, Definition, names, errors", "[unit]") {
    temp_app app;
    const auto s = app.sam(std::string(header) + R"(  Flow:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      StateMachineName: cfn-flow
      StateMachineType: EXPRESS
      RoleArn: arn:aws:iam::123456789012:role/x
      DefinitionString: !Sub |
        {"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "${Hello.Arn}", "End": true}}}
  Other:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      DefinitionSubstitutions: {Fn: !GetAtt Hello.Arn}
      Definition:
        StartAt: A
        States: {A: {Type: Task, Resource: "${Fn}", End: true}}
)");
    REQUIRE(s.state_machines.size() == 2);
    const auto& m = s.state_machines[0];
    CHECK(m.state_machine_name == "cfn-flow");
    CHECK(m.type == config::state_machine::kind::express);
    CHECK(m.definition_key == "Resources.Flow.Properties.DefinitionString");
    const std::string arn = "arn:aws:lambda:us-east-1:123456789012:function:Hello";
    CHECK(m.definition["States"]["A"]["Resource"] == arn);
    CHECK(m.function_arns.at(arn) == "Hello");
    CHECK(s.state_machines[1].state_machine_name == "Other");
    CHECK(s.state_machines[1].function_arns.at(arn) == "Hello");
    CHECK(s.ignored.empty());

    const std::string base = std::string(header) + R"(  Flow:
    Type: AWS::StepFunctions::StateMachine
    Properties:
)";
    auto e = error_of([&] { app.sam(base + "      DefinitionString: '{\"StartAt\": '\n"); });
    CHECK(contains(e.message(), "DefinitionString is not valid JSON"));
    CHECK(e.where().line == 13);
    e = error_of([&] {
        app.sam(base + "      DefinitionS3Location: {Bucket: b, Key: k}\n");
    });
    CHECK(contains(e.message(), "DefinitionS3Location"));
    CHECK(contains(e.message(), "S3"));
    e = error_of([&] {
        app.sam(base + "      DefinitionString: !Join ['', ['[', ']']]\n");
    });
    CHECK(contains(e.message(), "must be a JSON object"));
    e = error_of([&] { app.sam(base + "      StateMachineName: x\n"); });
    CHECK(contains(e.message(), "needs Definition or DefinitionString"));
}

TEST_CASE("state machines: two with one name, a condition-false one", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(std::string(header) + R"(  A:
    Type: AWS::Serverless::StateMachine
    Properties: {Name: same, Definition: )" + pass_machine + R"(}
  B:
    Type: AWS::StepFunctions::StateMachine
    Properties: {StateMachineName: same, Definition: )" + pass_machine + R"(}
)");
    });
    CHECK(contains(e.message(), "state machine name same is used by two"));

    const auto s = app.sam(R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Conditions:
  Never: !Equals [a, b]
Resources:
  A:
    Type: AWS::Serverless::StateMachine
    Condition: Never
    Properties: {Definition: )" + std::string(pass_machine) + R"(}
)");
    CHECK(s.state_machines.empty());
}
