// What the loaders list as not emulated (stack::ignored), on fixture templates, and the block
// the CLI prints from it.

#include "emulator/config/not_emulated.hpp"
#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>
#include <sstream>

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::temp_app;

namespace {

const config::not_emulated* find(const config::stack& s, const std::string& what) {
    for (const auto& n : s.ignored)
        if (n.what == what) return &n;
    return nullptr;
}

bool any_what_contains(const config::stack& s, const std::string& part) {
    return std::any_of(s.ignored.begin(), s.ignored.end(),
                       [&](const config::not_emulated& n) { return contains(n.what, part); });
}

// Shaped like SAM CLI's step-functions sample (`sam init`, "Multi-step workflow"; the Step
// Functions developer guide's "Create a Step Functions state machine using AWS SAM"): a state
// machine from DefinitionUri running three functions on a schedule, writing to a SimpleTable.
const char* const step_func = R"yaml(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  StockTradingStateMachine:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: statemachine/stock_trader.asl.json
      DefinitionSubstitutions:
        StockCheckerFunctionArn: !GetAtt StockCheckerFunction.Arn
        DDBTable: !Ref TransactionTable
      Events:
        HourlyTradingSchedule:
          Type: Schedule
          Properties: {Description: hourly, Enabled: False, Schedule: "rate(1 hour)"}
      Policies:
        - LambdaInvokePolicy: {FunctionName: !Ref StockCheckerFunction}
  StockCheckerFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.lambdaHandler
      Runtime: nodejs22.x
      Architectures: [x86_64]
  StockSellerFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.lambdaHandler
      Runtime: nodejs22.x
      Policies: [AWSLambdaBasicExecutionRole]
  StockBuyerFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.lambdaHandler
      Runtime: nodejs22.x
      Policies: [AWSLambdaBasicExecutionRole]
      Events:
        Nightly:
          Type: Schedule
          Properties: {Schedule: "cron(0 3 * * ? *)"}
        Queue:
          Type: SQS
          Properties: {Queue: !GetAtt Orders.Arn}
  TransactionTable:
    Type: AWS::Serverless::SimpleTable
    Properties:
      PrimaryKey: {Name: Id, Type: String}
  Orders:
    Type: AWS::SQS::Queue
  StockRole:
    Type: AWS::IAM::Role
  AuditRole:
    Type: AWS::IAM::Role
  InvokePermission:
    Type: AWS::Lambda::Permission
Outputs:
  StockTradingStateMachineArn:
    Value: !Ref StockTradingStateMachine
)yaml";

}  // namespace

TEST_CASE("SAM step-functions sample: the table, queue and SQS event are listed; the state "
          "machine and schedules are not", "[unit]") {
    temp_app app;
    app.write("statemachine/stock_trader.asl.json",
              R"({"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "${StockCheckerFunctionArn}", "End": true}}})");
    const auto s = app.sam(step_func);
    REQUIRE(s.functions.size() == 3);

    // Loaded as a state machine, with its schedule and the function's.
    CHECK_FALSE(find(s, "AWS::Serverless::StateMachine StockTradingStateMachine"));
    REQUIRE(s.state_machines.size() == 1);
    REQUIRE(s.schedules.size() == 2);

    const auto* table = find(s, "AWS::Serverless::SimpleTable TransactionTable");
    REQUIRE(table);
    CHECK(table->where.line == 45);
    CHECK(contains(table->meaning, "nothing creates the table"));
    CHECK(contains(table->fix, "DynamoDB Local"));
    CHECK(contains(table->fix, "dependencies:"));

    const auto* queue = find(s, "AWS::SQS::Queue Orders");
    REQUIRE(queue);
    CHECK(queue->kind == "resource");

    CHECK_FALSE(find(s, "Schedule event Nightly of StockBuyerFunction"));
    CHECK(s.schedules[1].function == "StockBuyerFunction");
    CHECK(s.schedules[1].where.line == 39);
    const auto* sqs = find(s, "SQS event Queue of StockBuyerFunction");
    REQUIRE(sqs);
    CHECK(sqs->meaning == "nothing triggers StockBuyerFunction from the queue");
    // No longer a warning: listed once, in one place.
    CHECK_FALSE(any_contains(s.warnings, "not emulated"));

    // IAM: one entry per property whatever the number of functions.
    const auto* policies = find(s, "Policies of StockSellerFunction, StockBuyerFunction");
    REQUIRE(policies);
    CHECK(policies->kind == "property");
    CHECK(policies->where.line == 30);
    CHECK(contains(policies->meaning, "IAM is not enforced"));

    // No local effect: grouped by type, names joined.
    const auto* roles = find(s, "AWS::IAM::Role StockRole, AuditRole");
    REQUIRE(roles);
    CHECK_FALSE(roles->local_effect);
    REQUIRE(find(s, "AWS::Lambda::Permission InvokePermission"));
    REQUIRE(find(s, "Outputs StockTradingStateMachineArn"));

    // What coldbrew acts on is never listed.
    CHECK_FALSE(any_what_contains(s, "AWS::Serverless::Function"));
    CHECK_FALSE(any_what_contains(s, "StockCheckerFunction"));
}

TEST_CASE("SAM: resources coldbrew reads are not listed; AWS::Lambda::Function is", "[unit]") {
    temp_app app;
    app.mkdir("layer");
    const auto s = app.sam(R"(Transform: AWS::Serverless-2016-10-31
Conditions:
  Never: !Equals [a, b]
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      Layers: [!Ref Lib]
      Events:
        Get: {Type: Api, Properties: {Path: /x, Method: get, RestApiId: !Ref Rest}}
        Http: {Type: HttpApi}
  Rest:
    Type: AWS::Serverless::Api
    Properties: {StageName: v1}
  Http:
    Type: AWS::Serverless::HttpApi
  Lib:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: layer}
  Key:
    Type: AWS::ApiGateway::ApiKey
  Plan:
    Type: AWS::ApiGateway::UsagePlan
  PlanKey:
    Type: AWS::ApiGateway::UsagePlanKey
    Properties: {KeyId: !Ref Key, KeyType: API_KEY, UsagePlanId: !Ref Plan}
  Legacy:
    Type: AWS::Lambda::Function
  NotDeployed:
    Type: AWS::SNS::Topic
    Condition: Never
)");
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "AWS::Lambda::Function Legacy");
    CHECK(s.ignored[0].where.line == 30);
    CHECK(contains(s.ignored[0].fix, "AWS::Serverless::Function"));
    CHECK_FALSE(any_contains(s.warnings, "AWS::Lambda::Function"));
}

TEST_CASE("SAM: a misspelt event type stays a warning, a known one is listed", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      Events:
        Typo: {Type: Apii, Properties: {Path: /x, Method: get}}
        Rule: {Type: EventBridgeRule, Properties: {Pattern: {source: [x]}}}
)");
    CHECK(any_contains(s.warnings, "event type Apii is not emulated; event ignored (did you mean "
                                   "Api?)"));
    CHECK_FALSE(any_what_contains(s, "Apii"));
    const auto* rule = find(s, "EventBridgeRule event Rule of Fn");
    REQUIRE(rule);
    CHECK(rule->meaning == "nothing triggers Fn from EventBridge");
}

TEST_CASE("SAM function properties not acted on: listed once, Globals included", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Tracing: Active
Resources:
  A:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      FunctionUrlConfig: {AuthType: NONE}
      AutoPublishAlias: live
      SnapStart: {ApplyOn: PublishedVersions}
  B:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      Tracing: PassThrough
      AutoPublishAlias: live
      MemorySize: 256
      Timeout: 10
)");
    const auto* tracing = find(s, "Tracing of A");  // B passes traces through: nothing to say
    REQUIRE(tracing);
    CHECK(tracing->where.line == 4);  // the Globals value
    const auto* url = find(s, "FunctionUrlConfig of A");
    REQUIRE(url);
    CHECK(contains(url->fix, "HttpApi event"));
    REQUIRE(find(s, "SnapStart of A"));
    const auto* alias = find(s, "AutoPublishAlias A, B");
    REQUIRE(alias);
    CHECK_FALSE(alias->local_effect);
    // Properties coldbrew acts on are not listed.
    CHECK_FALSE(any_what_contains(s, "MemorySize"));
    CHECK_FALSE(any_what_contains(s, "Timeout"));
    CHECK(s.ignored.size() == 4);
}

TEST_CASE("serverless: plugins, resources, step functions and events not acted on", "[unit]") {
    temp_app app;
    app.write("handler.js", "");  // serverless-esbuild's entry for handler.hello
    const auto s = app.serverless(R"(service: shop
plugins:
  - serverless-offline
  - serverless-esbuild
  - serverless-step-functions
  - serverless-dynamodb-local
  - serverless-iam-roles-per-function
  - serverless-prune-plugin
  - serverless-python-requirements
provider:
  name: aws
  runtime: nodejs20.x
  iam:
    role:
      statements: [{Effect: Allow, Action: 'dynamodb:*', Resource: '*'}]
  tracing: {lambda: true}
functions:
  hello:
    handler: handler.hello
    url: true
    events:
      - http: GET hello
      - sqs: arn:aws:sqs:us-east-1:123456789012:orders
      - schedule: rate(1 minute)
stepFunctions:
  stateMachines:
    checkout:
      definition: {StartAt: A, States: {A: {Type: Pass, End: true}}}
resources:
  Resources:
    OrdersTable:
      Type: AWS::DynamoDB::Table
      Properties: {TableName: '${ssm:/shop/table}'}
    OrdersQueue:
      Type: AWS::SQS::Queue
    WorkerRole:
      Type: AWS::IAM::Role
  Outputs:
    TableName: {Value: !Ref OrdersTable}
)");
    REQUIRE(s.routes.size() == 1);
    CHECK_FALSE(any_what_contains(s, "serverless-offline"));
    CHECK_FALSE(any_what_contains(s, "serverless-esbuild"));
    // Its state machines load (stack::state_machines): the plugin is not listed.
    CHECK_FALSE(any_what_contains(s, "serverless-step-functions"));
    const auto* ddb = find(s, "plugin serverless-dynamodb-local");
    REQUIRE(ddb);
    CHECK(contains(ddb->fix, "dependencies:"));
    REQUIRE(find(s, "plugin serverless-python-requirements"));
    const auto* deploy_only =
        find(s, "plugin serverless-iam-roles-per-function, serverless-prune-plugin");
    REQUIRE(deploy_only);
    CHECK_FALSE(deploy_only->local_effect);

    const auto* table = find(s, "AWS::DynamoDB::Table OrdersTable");
    REQUIRE(table);
    CHECK(table->where.line == 31);
    REQUIRE(find(s, "AWS::SQS::Queue OrdersQueue"));
    REQUIRE(find(s, "AWS::IAM::Role WorkerRole"));
    REQUIRE(find(s, "Outputs TableName"));
    CHECK_FALSE(find(s, "AWS::StepFunctions::StateMachine checkout"));
    REQUIRE(s.state_machines.size() == 1);

    const auto* sqs = find(s, "sqs event #1 of hello");
    REQUIRE(sqs);
    CHECK(sqs->kind == "event");
    CHECK(sqs->where.line == 23);
    CHECK(sqs->meaning == "nothing triggers hello from the queue");
    CHECK_FALSE(find(s, "schedule event #2 of hello"));
    REQUIRE(s.schedules.size() == 1);
    CHECK_FALSE(any_contains(s.warnings, "not emulated"));

    REQUIRE(find(s, "url of hello"));
    REQUIRE(find(s, "iam of provider"));
    REQUIRE(find(s, "tracing of provider"));
}

TEST_CASE("serverless: plugins as {localPath, modules}; a plugin coldbrew does not know", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
plugins:
  localPath: ./plugins
  modules: [my-own-plugin]
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello: {handler: handler.hello, tracing: PassThrough}
)");
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "plugin my-own-plugin");
    CHECK(contains(s.ignored[0].meaning, "does not run"));
}

TEST_CASE("format_not_emulated: groups in order, no-local-effect on one line, once each",
          "[unit]") {
    const std::filesystem::path dir = "/app";
    std::vector<config::not_emulated> items = {
        {"property", "Tracing of A", {"/app/template.yaml", 9, 5}, "no X-Ray segments are sent",
         "coldbrew's own traces", true},
        {"resource", "AWS::IAM::Role R1, R2", {"/app/template.yaml", 30, 3}, "", "", false},
        {"event", "Schedule event Nightly of Report", {"/app/template.yaml", 22, 9},
         "nothing triggers Report on a schedule", "`coldbrew invoke Report -e event.json`", true},
        {"resource", "AWS::Serverless::SimpleTable Orders", {"/elsewhere/t.yaml", 40, 3},
         "nothing creates the table", "run DynamoDB Local", true},
        {"event", "Schedule event Nightly of Report", {"/app/template.yaml", 22, 9},
         "nothing triggers Report on a schedule", "`coldbrew invoke Report -e event.json`", true},
        {"resource", "Outputs Arn", {}, "", "", false},
        {"build", "BuildMethod rust-cargolambda of Fn", {"/app/template.yaml", 50, 7},
         "the function is not built", "", true},
    };
    const std::string text = config::format_not_emulated(items, dir);
    CHECK(text ==
          "Not emulated (6):\n"
          "  resource  AWS::Serverless::SimpleTable Orders  /elsewhere/t.yaml:40\n"
          "            nothing creates the table — fix: run DynamoDB Local\n"
          "  event     Schedule event Nightly of Report  template.yaml:22\n"
          "            nothing triggers Report on a schedule — fix: `coldbrew invoke Report -e "
          "event.json`\n"
          "  build     BuildMethod rust-cargolambda of Fn  template.yaml:50\n"
          "            the function is not built\n"
          "  property  Tracing of A  template.yaml:9\n"
          "            no X-Ray segments are sent — fix: coldbrew's own traces\n"
          "  no local effect: AWS::IAM::Role R1, R2; Outputs Arn\n");
    CHECK(config::format_not_emulated({}, dir).empty());
}

TEST_CASE("format_not_emulated: long text wraps under its column within the width", "[unit]") {
    std::vector<config::not_emulated> items = {
        {"resource", "AWS::SQS::Queue Q", {"/a/t.yaml", 3, 1},
         "one two three four five six seven eight nine ten eleven twelve", "", true},
    };
    const std::string text = config::format_not_emulated(items, "/a", 40);
    CHECK(text ==
          "Not emulated (1):\n"
          "  resource  AWS::SQS::Queue Q  t.yaml:3\n"
          "            one two three four five six\n"
          "            seven eight nine ten eleven\n"
          "            twelve\n");
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 40);
}

TEST_CASE("serverless resources as a list of sections; a file reference is not read", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello: {handler: handler.hello}
resources:
  - ${file(resources/extra.yml)}
  - Resources:
      Bucket: {Type: AWS::S3::Bucket}
      Broken: {Properties: {}}
)");
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "AWS::S3::Bucket Bucket");
    CHECK(s.ignored[0].where.line == 8);
    CHECK(contains(s.ignored[0].fix, "dependencies:"));
}

TEST_CASE("SAM Globals policies for every function make one entry naming each", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: app.handler
    CodeUri: src
    Role: arn:aws:iam::123456789012:role/app
Resources:
  A: {Type: AWS::Serverless::Function}
  B: {Type: AWS::Serverless::Function}
  C: {Type: AWS::Serverless::Function}
)");
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "Role of A, B, C");
    CHECK(s.ignored[0].where.line == 7);
    const std::string text = config::format_not_emulated(s.ignored, app.dir());
    CHECK(contains(text, "Not emulated (1):\n  property  Role of A, B, C  template.yaml:7\n"));
}

TEST_CASE("SAM: an ignored resource's unknown Condition does not stop loading", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties: {Runtime: python3.12, Handler: app.handler, CodeUri: src}
  Topic:
    Type: AWS::SNS::Topic
    Condition: NoSuchCondition
)");
    REQUIRE(s.functions.size() == 1);
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "AWS::SNS::Topic Topic");
}
