// SAM's UnescapeMappingTemplate on a state machine's Api event: the route carries SAM's
// second request template (the one that undoes escapeJavaScript's \'); without it the route
// has none and the gateway uses SAM's first.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::temp_app;

namespace {

std::string machine_with_api_event(const std::string& extra) {
    return R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: order-flow
      Definition: {StartAt: A, States: {A: {Type: Pass, End: true}}}
      Events:
        Start:
          Type: Api
          Properties: {Path: /orders, Method: post)" +
           extra + R"(}
)";
}

}  // namespace

TEST_CASE("SAM state machine: UnescapeMappingTemplate gives the route SAM's unescaping template",
          "[unit]") {
    temp_app app;
    const auto on = app.sam(machine_with_api_event(", UnescapeMappingTemplate: true"));
    REQUIRE(on.routes.size() == 1);
    const auto& t = on.routes[0].state_machine_request_template;
    CHECK(t == R"~({"input": "$util.escapeJavaScript($input.json('$')).replaceAll("\\'","'")", )~"
               R"~("stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:order-flow"})~");

    temp_app off_app;
    const auto off = off_app.sam(machine_with_api_event(", UnescapeMappingTemplate: false"));
    REQUIRE(off.routes.size() == 1);
    CHECK(off.routes[0].state_machine_request_template.empty());
}
