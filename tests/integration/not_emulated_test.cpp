// What the template holds that coldbrew does not act on, named at start by the real binary:
// `validate` on stdout, `invoke` on stderr (its stdout is the result alone).

#include <string>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;

namespace {

// Report runs nightly (a schedule coldbrew fires) and writes to Orders, which nothing creates
// locally; Archive's second Task writes to DynamoDB, which no Task can do here.
void write_app(temp_dir& dir) {
    write_fake_app(dir, "", R"yaml(  Report:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Nightly:
          Type: Schedule
          Properties: {Schedule: "rate(1 day)"}
  Orders:
    Type: AWS::Serverless::SimpleTable
  ReportRole:
    Type: AWS::IAM::Role
  Archive:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Run
        States:
          Run: {Type: Task, Resource: !GetAtt Report.Arn, Next: Store}
          Store:
            Type: Task
            Resource: arn:aws:states:::dynamodb:putItem
            Parameters: {TableName: Orders, Item: {}}
            End: true
)yaml");
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("not emulated: validate names the table, the DynamoDB Task and the role once", "[integration]") {
    temp_dir dir;
    write_app(dir);
    const run_result r = run_to_exit({"validate", dir.path().string()});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "Not emulated (3):\n"));
    CHECK(has(r.out, "  resource  AWS::Serverless::SimpleTable Orders  template.yaml:"));
    CHECK(has(r.out, "Task Store of state machine Archive (arn:aws:states:::dynamodb:putItem)"));
    // Schedules fire and state machines run: listed as served, not as not emulated.
    CHECK_FALSE(has(r.out, "schedule Nightly (rate(1 day)) of Report  template.yaml:"));
    CHECK(has(r.out, "  Nightly  rate(1 day)  -> Report\n"));
    CHECK(has(r.out, "  Archive  Archive  STANDARD  2 states  "));
    CHECK_FALSE(has(r.out, "state machine Archive  template.yaml"));
    CHECK(has(r.out, "  no local effect: AWS::IAM::Role ReportRole\n"));
    CHECK_FALSE(has(r.out, "warning: " + dir.path().string() + "/template.yaml"));
}

TEST_CASE("not emulated: invoke names it on stderr, stdout holds the result alone", "[integration]") {
    temp_dir dir;
    write_app(dir);
    const run_result r = run_to_exit({"invoke", "Report", "-t", dir.path().string(), "--event-json",
                          R"({"reply": {"ok": true}})"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.err, "Not emulated (3):"));
    CHECK_FALSE(has(r.out, "Not emulated"));
}
