// parse_definition: every state type's fields, and the checks that make CreateStateMachine
// refuse a definition, each named by the path of the field at fault; classify_resource and
// task_states.
#include "emulator/states/definition.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::states;
using nlohmann::json;

namespace {

std::string error_path(const std::string& text) {
    try {
        parse_definition(json::parse(text));
    } catch (const definition_error& e) {
        return e.path();
    }
    return "(accepted)";
}

std::string error_message(const std::string& text) {
    try {
        parse_definition(json::parse(text));
    } catch (const definition_error& e) {
        return e.what();
    }
    return "(accepted)";
}

// One state "S" (then End) in a machine.
std::string one(const std::string& body) {
    return R"({"StartAt": "S", "States": {"S": )" + body + "}}";
}

}  // namespace

TEST_CASE("definition: every state type with its fields", "[unit]") {
    auto m = parse_definition(json::parse(R"({
      "Comment": "all types", "TimeoutSeconds": 300, "StartAt": "P",
      "States": {
        "P": {"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.p", "Next": "T"},
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"FunctionName": "Fn", "Payload.$": "$"},
              "ResultSelector": {"body.$": "$.Payload"}, "TimeoutSeconds": 10,
              "HeartbeatSeconds": 5, "InputPath": "$", "OutputPath": null,
              "Retry": [{"ErrorEquals": ["Lambda.ServiceException"], "IntervalSeconds": 2,
                         "MaxAttempts": 4, "BackoffRate": 1.5, "MaxDelaySeconds": 10,
                         "JitterStrategy": "FULL"},
                        {"ErrorEquals": ["States.ALL"]}],
              "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "F"}],
              "Next": "C"},
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "W"}],
              "Default": "Par"},
        "W": {"Type": "Wait", "SecondsPath": "$.wait", "Next": "Par"},
        "Par": {"Type": "Parallel", "Branches": [
                  {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": true}}}],
                "Next": "M"},
        "M": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2,
              "ItemSelector": {"v.$": "$$.Map.Item.Value"}, "ToleratedFailurePercentage": 10,
              "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "I",
                "States": {"I": {"Type": "Task", "Resource":
                  "arn:aws:lambda:us-east-1:123456789012:function:Resize:live", "End": true}}},
              "Next": "Done"},
        "Done": {"Type": "Succeed"},
        "F": {"Type": "Fail", "Error": "Failed", "CausePath": "$.error.Cause"}
      }})"));
    CHECK(m->start_at == "P");
    CHECK(m->timeout_s == 300);
    const state& t = *m->find("T");
    CHECK(t.type == state_type::task);
    CHECK(t.target.what == task_resource::kind::lambda_invoke);
    CHECK(t.timeout_s == 10);
    CHECK(t.heartbeat_s == 5);
    CHECK_FALSE(t.output_path.has_value());
    REQUIRE(t.retry.size() == 2);
    CHECK(t.retry[0].interval_ms == 2000);
    CHECK(t.retry[0].max_attempts == 4);
    CHECK(t.retry[0].backoff_rate == 1.5);
    CHECK(t.retry[0].max_delay_ms == 10000);
    CHECK(t.retry[0].full_jitter);
    CHECK(t.retry[1].interval_ms == 1000);  // defaults: 1 s, 3 attempts, rate 2
    CHECK(t.retry[1].max_attempts == 3);
    CHECK(t.retry[1].backoff_rate == 2.0);
    REQUIRE(t.catches.size() == 1);
    CHECK(t.catches[0].result_path == "$.error");
    CHECK(m->find("P")->result == json::parse(R"({"x": 1})"));
    CHECK(m->find("W")->seconds_path == "$.wait");
    CHECK(m->find("Par")->branches.size() == 1);
    const state& map = *m->find("M");
    CHECK(map.items_path == "$.items");
    CHECK(map.max_concurrency == 2);
    CHECK(map.item_selector.has_value());
    REQUIRE(map.item_processor);
    CHECK(map.item_processor->find("I")->target.function == "Resize");
    CHECK(map.item_processor->find("I")->target.qualifier == "live");
    CHECK(m->find("F")->cause_path == "$.error.Cause");
    const auto tasks = task_states(*m);
    REQUIRE(tasks.size() == 2);
    CHECK(tasks[0].path == "M/I");
    CHECK(tasks[1].path == "T");
}

TEST_CASE("definition: the legacy Map form (Iterator, Parameters)", "[unit]") {
    auto m = parse_definition(json::parse(one(R"({"Type": "Map", "Parameters": {"i.$": "$$.Map.Item.Index"},
        "Iterator": {"StartAt": "X", "States": {"X": {"Type": "Pass", "End": true}}}, "End": true})")));
    CHECK(m->find("S")->item_selector.has_value());
    CHECK(m->find("S")->item_processor->start_at == "X");
}

TEST_CASE("definition: structural errors name the field", "[unit]") {
    CHECK(error_path(R"({"States": {"A": {"Type": "Succeed"}}})") == "StartAt");
    CHECK(error_path(R"({"StartAt": "A"})") == "States");
    CHECK(error_path(R"({"StartAt": "B", "States": {"A": {"Type": "Succeed"}}})") == "StartAt");
    CHECK(error_path(one(R"({"Type": "Pass", "Next": "Nowhere"})")) == "States.S.Next");
    CHECK(error_path(one(R"({"Type": "Pass"})")) == "States.S");
    CHECK(error_path(one(R"({"Type": "Pass", "Next": "S", "End": true})")) == "States.S");
    CHECK(error_path(one(R"({"Type": "Dance", "End": true})")) == "States.S.Type");
    CHECK(error_path(one(R"({"Type": "Pass", "End": true, "Resource": "x"})")) ==
          "States.S.Resource");
    CHECK(error_path(one(R"({"Type": "Succeed", "Colour": "red"})")) == "States.S.Colour");
    CHECK(error_path(R"({"StartAt": "A", "States": {"A": {"Type": "Succeed"}}, "Extra": 1})") ==
          "Extra");
    // A branch cannot jump to a state outside it.
    CHECK(error_path(R"({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "End": true, "Branches": [
          {"StartAt": "B", "States": {"B": {"Type": "Pass", "Next": "P"}}}]}}})") ==
          "States.P.Branches[0].States.B.Next");
}

TEST_CASE("definition: a state nothing leads to is refused", "[unit]") {
    CHECK(error_path(R"({"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"},
        "B": {"Type": "Succeed"}, "Orphan": {"Type": "Succeed"}}})") == "States.Orphan");
    // Reached through a Choice, its Default and a Catch: accepted.
    CHECK(error_path(R"({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "T"}],
              "Default": "D"},
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true,
              "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "F"}]},
        "D": {"Type": "Succeed"}, "F": {"Type": "Fail"}}})") == "(accepted)");
    CHECK(error_path(R"({"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true,
        "Branches": [{"StartAt": "B", "States": {"B": {"Type": "Succeed"},
        "Lost": {"Type": "Succeed"}}}]}}})") == "States.P.Branches[0].States.Lost");
}

TEST_CASE("definition: field rules", "[unit]") {
    CHECK(error_path(one(R"({"Type": "Pass", "InputPath": "a.b", "End": true})")) ==
          "States.S.InputPath");
    CHECK(error_path(one(R"({"Type": "Pass", "ResultPath": "$.a[*]", "End": true})")) ==
          "States.S.ResultPath");
    CHECK(error_path(one(R"({"Type": "Pass", "ResultPath": "$$.x", "End": true})")) ==
          "States.S.ResultPath");
    CHECK(error_path(one(R"({"Type": "Pass", "Parameters": {"a.$": "nope"}, "End": true})")) ==
          "States.S.Parameters.a.$");
    CHECK(error_path(one(R"({"Type": "Pass", "Parameters": {"n": {"a.$": 3}}, "End": true})")) ==
          "States.S.Parameters.n.a.$");
    CHECK(error_path(one(R"({"Type": "Task", "End": true})")) == "States.S.Resource");
    CHECK(error_path(one(R"({"Type": "Task", "Resource": "nope", "End": true})")) ==
          "States.S.Resource");
    CHECK(error_path(one(R"({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
        "TimeoutSeconds": 0, "End": true})")) == "States.S.TimeoutSeconds");
    CHECK(error_path(one(R"({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
        "TimeoutSeconds": 1.5, "End": true})")) == "States.S.TimeoutSeconds");
    CHECK(error_path(one(R"({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
        "TimeoutSeconds": 10, "HeartbeatSeconds": 10, "End": true})")) ==
          "States.S.HeartbeatSeconds");
    CHECK(error_path(one(R"({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
        "TimeoutSeconds": 10, "TimeoutSecondsPath": "$.t", "End": true})")) == "States.S");
    CHECK(error_path(one(R"({"Type": "Wait", "End": true})")) == "States.S");
    CHECK(error_path(one(R"({"Type": "Wait", "Seconds": 1, "SecondsPath": "$.s", "End": true})")) ==
          "States.S");
    CHECK(error_path(one(R"({"Type": "Wait", "Timestamp": "tomorrow", "End": true})")) ==
          "States.S.Timestamp");
    CHECK(error_path(one(R"({"Type": "Fail", "Error": "E", "ErrorPath": "$.e"})")) == "States.S");
    CHECK(error_path(one(R"({"Type": "Choice", "Choices": []})")) == "States.S.Choices");
    CHECK(error_path(one(R"({"Type": "Choice", "Choices": [{"Variable": "$.a",
        "StringEquals": "x"}]})")) == "States.S.Choices[0].Next");
    CHECK(error_path(one(R"({"Type": "Choice", "Choices": [{"Variable": "$.a",
        "NumericEquals": "x", "Next": "S"}]})")) == "States.S.Choices[0].NumericEquals");
    CHECK(error_path(one(R"({"Type": "Choice", "Choices": [{"Variable": "$.a",
        "StringEquals": "x", "NumericEquals": 1, "Next": "S"}]})")) == "States.S.Choices[0]");
    CHECK(error_path(one(R"({"Type": "Choice", "Choices": [{"And": [{"Variable": "$.a",
        "IsPresent": true, "Next": "S"}], "Next": "S"}]})")) == "States.S.Choices[0].And[0].Next");
    CHECK(error_path(one(R"({"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "X",
        "States": {"X": {"Type": "Succeed"}}}, "ToleratedFailurePercentage": 101})")) ==
          "States.S.ToleratedFailurePercentage");
    CHECK(error_path(one(R"({"Type": "Map", "End": true, "ItemReader": {}, "ItemProcessor":
        {"StartAt": "X", "States": {"X": {"Type": "Succeed"}}}})")) == "States.S.ItemReader");
    CHECK(error_path(one(R"({"Type": "Map", "End": true})")) == "States.S.ItemProcessor");
}

TEST_CASE("definition: Retry and Catch rules", "[unit]") {
    auto task = [](const std::string& extra) {
        return one(R"({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true, )" +
                   extra + "}");
    };
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["States.ALL"]}, {"ErrorEquals": ["X"]}])")) ==
          "States.S.Retry[0].ErrorEquals");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["States.ALL", "X"]}])")) ==
          "States.S.Retry[0].ErrorEquals");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": []}])")) == "States.S.Retry[0].ErrorEquals");
    CHECK(error_path(task(R"("Retry": [{}])")) == "States.S.Retry[0].ErrorEquals");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["X"], "BackoffRate": 0.5}])")) ==
          "States.S.Retry[0].BackoffRate");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["X"], "IntervalSeconds": 0}])")) ==
          "States.S.Retry[0].IntervalSeconds");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["X"], "JitterStrategy": "SOME"}])")) ==
          "States.S.Retry[0].JitterStrategy");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["X"], "Colour": 1}])")) ==
          "States.S.Retry[0].Colour");
    CHECK(error_path(task(R"("Catch": [{"ErrorEquals": ["X"]}])")) == "States.S.Catch[0].Next");
    CHECK(error_path(task(R"("Catch": [{"ErrorEquals": ["X"], "Next": "Gone"}])")) ==
          "States.S.Catch[0].Next");
    CHECK(error_path(task(R"("Catch": [{"ErrorEquals": ["States.ALL"], "Next": "S"},
        {"ErrorEquals": ["X"], "Next": "S"}])")) == "States.S.Catch[0].ErrorEquals");
    CHECK(error_path(task(R"("Retry": [{"ErrorEquals": ["X"], "MaxAttempts": 0}])")) == "(accepted)");
}

TEST_CASE("definition: JSONata and variables are refused naming the state", "[unit]") {
    CHECK(error_path(R"({"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Succeed"}}})") ==
          "QueryLanguage");
    CHECK(error_path(one(R"({"Type": "Pass", "QueryLanguage": "JSONata", "End": true})")) ==
          "States.S.QueryLanguage");
    CHECK(error_message(one(R"({"Type": "Pass", "QueryLanguage": "JSONata", "End": true})"))
              .find("JSONata is not supported") != std::string::npos);
    CHECK(error_path(one(R"({"Type": "Pass", "Assign": {"x": 1}, "End": true})")) ==
          "States.S.Assign");
    CHECK(error_path(one(R"({"Type": "Pass", "QueryLanguage": "JSONPath", "End": true})")) ==
          "(accepted)");
}

TEST_CASE("definition: Task resources are classified", "[unit]") {
    auto k = [](const char* r) { return classify_resource(r); };
    CHECK(k("arn:aws:states:::lambda:invoke").what == task_resource::kind::lambda_invoke);
    CHECK(k("arn:aws:states:::lambda:invoke.waitForTaskToken").pattern ==
          integration_pattern::wait_for_task_token);
    CHECK(k("arn:aws:states:::lambda:invoke.sync").what == task_resource::kind::unknown);
    auto fn = k("arn:aws:lambda:us-east-1:123456789012:function:Charge");
    CHECK(fn.what == task_resource::kind::lambda_arn);
    CHECK(fn.function == "Charge");
    CHECK(fn.qualifier.empty());
    CHECK(k("arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:F:3").qualifier == "3");
    auto ddb = k("arn:aws:states:::dynamodb:putItem");
    CHECK(ddb.what == task_resource::kind::service);
    CHECK(ddb.service == "dynamodb");
    CHECK(ddb.action == "putItem");
    auto sqs = k("arn:aws:states:::sqs:sendMessage.waitForTaskToken");
    CHECK(sqs.service == "sqs");
    CHECK(sqs.pattern == integration_pattern::wait_for_task_token);
    auto sdk = k("arn:aws:states:::aws-sdk:s3:getObject");
    CHECK(sdk.service == "aws-sdk:s3");
    CHECK(sdk.action == "getObject");
    auto nested = k("arn:aws:states:::states:startExecution.sync:2");
    CHECK(nested.service == "states");
    CHECK(nested.pattern == integration_pattern::run_job);
    CHECK(k("arn:aws:states:us-east-1:123456789012:activity:Approve").what ==
          task_resource::kind::activity);
    CHECK(k("${ChargeFunctionArn}").what == task_resource::kind::unknown);
    CHECK(k("arn:aws:s3:::bucket").what == task_resource::kind::unknown);
}
