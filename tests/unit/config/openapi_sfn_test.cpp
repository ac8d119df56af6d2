// The Step Functions integrations read from an OpenAPI DefinitionBody.

#include "emulator/config/not_emulated.hpp"
#include "emulator/config/openapi_sfn.hpp"
#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

using namespace coldbrew::config;
using namespace coldbrew::config::detail;

namespace {

std::vector<state_machine> machines() {
    state_machine a;
    a.name = "PaymentFlow";
    a.state_machine_name = "PaymentFlow";
    a.type = state_machine::kind::express;
    state_machine b;
    b.name = "Audit";
    b.state_machine_name = "audit-machine";
    return {a, b};
}

ynode body(const std::string& yaml) { return load_yaml_text(yaml, "template.yaml"); }

}  // namespace

TEST_CASE("an HTTP API StepFunctions-StartSyncExecution integration becomes a route",
          "[unit][config][sfn]") {
    const settings s;
    const auto read = read_openapi_sfn(body(R"Y(
paths:
  /pay:
    post:
      x-amazon-apigateway-integration:
        integrationSubtype: StepFunctions-StartSyncExecution
        credentials: !GetAtt Role.Arn
        requestParameters:
          Input: $request.body
          StateMachineArn: !Ref PaymentFlow
        payloadFormatVersion: "1.0"
        type: aws_proxy
  /audit:
    get:
      x-amazon-apigateway-integration:
        integrationSubtype: StepFunctions-StartExecution
        requestParameters:
          StateMachineArn: {"Fn::GetAtt": [Audit, Arn]}
          Name: $context.requestId
  /other:
    get:
      x-amazon-apigateway-integration:
        type: aws_proxy
        uri: !GetAtt Fn.Arn
)Y"),
                                       true, machines(), s);
    REQUIRE(read.routes.size() == 2);
    CHECK(read.other_integrations == 1);
    const auto& pay = read.routes[0];
    CHECK(pay.method == "POST");
    CHECK(pay.path == "/pay");
    CHECK(pay.state_machine == "PaymentFlow");
    CHECK(pay.action == route::sfn_action::start_sync_execution);
    const auto params = nlohmann::json::parse(pay.request_template);
    CHECK(params["Input"] == "$request.body");
    CHECK(params["StateMachineArn"] ==
          "arn:aws:states:us-east-1:123456789012:stateMachine:PaymentFlow");
    CHECK(read.routes[1].state_machine == "Audit");
    CHECK(read.routes[1].action == route::sfn_action::start_execution);
    CHECK(nlohmann::json::parse(read.routes[1].request_template)["StateMachineArn"] ==
          "arn:aws:states:us-east-1:123456789012:stateMachine:audit-machine");
}

TEST_CASE("a REST states:action integration keeps its request template with the ARN in it",
          "[unit][config][sfn]") {
    const settings s;
    const auto read = read_openapi_sfn(body(R"Y(
paths:
  /orders:
    x-amazon-apigateway-any-method:
      x-amazon-apigateway-integration:
        type: aws
        httpMethod: POST
        uri: !Sub arn:aws:apigateway:${AWS::Region}:states:action/StartExecution
        requestTemplates:
          application/json: !Sub |
            {"input": "$util.escapeJavaScript($input.json('$'))", "stateMachineArn": "${Audit}"}
)Y"),
                                       false, machines(), s);
    REQUIRE(read.routes.size() == 1);
    CHECK(read.routes[0].method == "ANY");
    CHECK(read.routes[0].state_machine == "Audit");
    CHECK(read.routes[0].request_template.find(
              "\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:stateMachine:"
              "audit-machine\"") != std::string::npos);
    CHECK(read.routes[0].request_template.find("$input.json('$')") != std::string::npos);
}

TEST_CASE("a Step Functions integration naming no machine, or another action, stops the load",
          "[unit][config][sfn]") {
    const settings s;
    CHECK_THROWS_WITH(read_openapi_sfn(body(R"Y(
paths:
  /pay:
    post:
      x-amazon-apigateway-integration:
        integrationSubtype: StepFunctions-StartSyncExecution
        requestParameters: {StateMachineArn: !Ref Nope}
)Y"),
                                       true, machines(), s),
                      Catch::Contains("names no state machine"));
    CHECK_THROWS_WITH(read_openapi_sfn(body(R"Y(
paths:
  /pay:
    post:
      x-amazon-apigateway-integration:
        integrationSubtype: StepFunctions-StopExecution
        requestParameters: {StateMachineArn: !Ref PaymentFlow}
)Y"),
                                       true, machines(), s),
                      Catch::Contains("StopExecution is not emulated"));
    CHECK_THROWS_WITH(read_openapi_sfn(body(R"Y(
paths:
  /pay:
    post:
      x-amazon-apigateway-integration:
        type: aws
        uri: arn:aws:apigateway:us-east-1:states:action/StartExecution
)Y"),
                                       false, machines(), s),
                      Catch::Contains("requestTemplates"));
}


TEST_CASE("a SAM HttpApi DefinitionBody routes to a state machine declared after it, and until "
          "executions run the route is held as not emulated",
          "[unit][config][sfn]") {
    coldbrew::test::temp_app app;
    app.write("fn/app.mjs", "export const handler = async () => ({});\n");
    app.write("template.yaml", R"Y(AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      DefinitionBody:
        openapi: "3.0.1"
        paths:
          /pay:
            post:
              x-amazon-apigateway-integration:
                integrationSubtype: StepFunctions-StartSyncExecution
                requestParameters: {Input: $request.body, StateMachineArn: !Ref Flow}
                payloadFormatVersion: "1.0"
                type: aws_proxy
          /other:
            get:
              x-amazon-apigateway-integration: {type: aws_proxy, uri: !GetAtt Fn.Arn}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Type: EXPRESS
      Definition:
        StartAt: Go
        States:
          Go: {Type: Task, Resource: !GetAtt Fn.Arn, End: true}
  Fn:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: fn/, Handler: app.handler, Runtime: nodejs20.x}
)Y");
    auto s = load_stack(app.dir(), {});
    REQUIRE(s.routes.size() == 1);
    CHECK(s.routes[0].api_id == "Api");
    CHECK(s.routes[0].method == "POST");
    CHECK(s.routes[0].path == "/pay");
    CHECK(s.routes[0].state_machine == "Flow");
    CHECK(s.routes[0].state_machine_action == route::sfn_action::start_sync_execution);
    CHECK(std::any_of(s.warnings.begin(), s.warnings.end(), [](const std::string& w) {
        return w.find("1 operation(s) of the OpenAPI definition are not Step Functions") !=
               std::string::npos;
    }));

    // Served now: neither the state machine nor its route is named as not emulated.
    CHECK(std::none_of(s.ignored.begin(), s.ignored.end(), [](const not_emulated& n) {
        return n.what.find("Flow") != std::string::npos;
    }));
}

TEST_CASE("a request parameter that is not UTF-8 is replaced, not thrown (a fuzz crash)",
          "[unit][config][sfn]") {
    const settings s;
    const auto read = read_openapi_sfn(body("paths:\n  /pay:\n    post:\n"
                                            "      x-amazon-apigateway-integration:\n"
                                            "        integrationSubtype: StepFunctions-StartExecution\n"
                                            "        requestParameters:\n"
                                            "          StateMachineArn: !Ref PaymentFlow\n"
                                            "          Name: \"a\xff\xfe\"\n"),
                                       true, machines(), s);
    REQUIRE(read.routes.size() == 1);
    const auto params = nlohmann::json::parse(read.routes[0].request_template);
    CHECK(params["Name"] == "a\xEF\xBF\xBD\xEF\xBF\xBD");
}
