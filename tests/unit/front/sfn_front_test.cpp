// The Step Functions API front: the AWS JSON 1.0 protocol (targets, content type, request
// ids, error bodies) over the service.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "emulator/front/sfn_front.hpp"
#include "tests/unit/states/sfn_fixture.hpp"

using namespace coldbrew;
using coldbrew::testing::sfn_world;
using nlohmann::json;

namespace {

struct front_world : sfn_world {
    front::sfn_front api{*svc, rng};

    // Sends one request; the answer, if one came (StartSyncExecution may come later).
    std::optional<http::response>* last = nullptr;
    std::optional<http::response> call(const std::string& target, const std::string& body,
                                       const std::string& method = "POST") {
        http::request req;
        req.method = method;
        req.target = "/";
        if (!target.empty()) req.headers.emplace_back("X-Amz-Target", target);
        req.headers.emplace_back("Content-Type", "application/x-amz-json-1.0");
        req.body = body;
        auto out = std::make_shared<std::optional<http::response>>();
        api.handle(std::move(req), http::responder([out](http::response r) { *out = std::move(r); }));
        held = out;
        return *out;
    }
    std::shared_ptr<std::optional<http::response>> held;
};

json body_of(const http::response& r) { return json::parse(r.body); }

void check_error(const std::optional<http::response>& r, const std::string& type, int status = 400) {
    REQUIRE(r);
    CHECK(r->status == status);
    CHECK(r->header("Content-Type") == "application/x-amz-json-1.0");
    CHECK(r->header("x-amzn-RequestId").has_value());
    const auto j = body_of(*r);
    CHECK(j["__type"] == type);
    CHECK(j["message"].is_string());
    CHECK(j.size() == 2);
}

}  // namespace

TEST_CASE("sfn front: StartExecution then DescribeExecution", "[unit]") {
    front_world w;
    auto r = w.call("AWSStepFunctions.StartExecution",
                    json{{"stateMachineArn", sfn_world::arn("Pass")}, {"name", "n1"},
                         {"input", R"({"a":1})"}}.dump());
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->header("Content-Type") == "application/x-amz-json-1.0");
    const auto id = std::string(r->header("x-amzn-RequestId").value_or(""));
    CHECK(id.size() == 36);
    const auto j = body_of(*r);
    CHECK(j["executionArn"] == "arn:aws:states:us-east-1:123456789012:execution:Pass:n1");
    CHECK(j["startDate"].is_number());
    CHECK(j.size() == 2);
    w.sched.run_due();

    auto d = w.call("AWSStepFunctions.DescribeExecution",
                    json{{"executionArn", j["executionArn"]}}.dump());
    REQUIRE(d);
    CHECK(d->status == 200);
    CHECK(body_of(*d)["status"] == "SUCCEEDED");
    // A request id per request.
    CHECK(d->header("x-amzn-RequestId") != id);
}

TEST_CASE("sfn front: targets", "[unit]") {
    front_world w;
    check_error(w.call("", "{}"), "UnknownOperationException");
    check_error(w.call("AWSStepFunctions.CreateStateMachine", "{}"), "UnknownOperationException");
    check_error(w.call("AWSStepFunctions.Nope", "{}"), "UnknownOperationException");
    check_error(w.call("Lambda.StartExecution", "{}"), "UnknownOperationException");
    // An operation name that is not UTF-8 is echoed with U+FFFD, not a 500.
    check_error(w.call("AWSStepFunctions.Bog\xffus", "{}"), "UnknownOperationException");
    check_error(w.call("AWSStepFunctions.ListStateMachines", "{}", "GET"), "UnknownOperationException");
    auto l = w.call("AWSStepFunctions.ListStateMachines", "{}");
    REQUIRE(l);
    CHECK(l->status == 200);
    CHECK(body_of(*l)["stateMachines"].size() == w.stack.state_machines.size());
    // An empty body is an input without members.
    auto e = w.call("AWSStepFunctions.ListStateMachines", "");
    REQUIRE(e);
    CHECK(e->status == 200);
}

TEST_CASE("sfn front: bodies it cannot read", "[unit]") {
    front_world w;
    check_error(w.call("AWSStepFunctions.StartExecution", "{not json"), "SerializationException");
    check_error(w.call("AWSStepFunctions.StartExecution", "[1,2]"), "SerializationException");
    check_error(w.call("AWSStepFunctions.StartExecution",
                       json{{"stateMachineArn", 5}}.dump()),
                "SerializationException");
    check_error(w.call("AWSStepFunctions.GetExecutionHistory",
                       json{{"executionArn", "arn:aws:states:us-east-1:123456789012:execution:Pass:x"},
                            {"maxResults", "10"}}.dump()),
                "SerializationException");
    check_error(w.call("AWSStepFunctions.GetExecutionHistory",
                       json{{"executionArn", "arn:aws:states:us-east-1:123456789012:execution:Pass:x"},
                            {"reverseOrder", "yes"}}.dump()),
                "SerializationException");
}

TEST_CASE("sfn front: the service's errors in AWS's words", "[unit]") {
    front_world w;
    check_error(w.call("AWSStepFunctions.StartExecution", "{}"), "ValidationException");
    check_error(w.call("AWSStepFunctions.StartExecution", json{{"stateMachineArn", "Pass"}}.dump()),
                "InvalidArn");
    check_error(w.call("AWSStepFunctions.StartExecution",
                       json{{"stateMachineArn", sfn_world::arn("Nope")}}.dump()),
                "StateMachineDoesNotExist");
    check_error(w.call("AWSStepFunctions.StartExecution",
                       json{{"stateMachineArn", sfn_world::arn("Pass")}, {"input", "{"}}.dump()),
                "InvalidExecutionInput");
    check_error(w.call("AWSStepFunctions.DescribeExecution",
                       json{{"executionArn", "arn:aws:states:us-east-1:123456789012:execution:Pass:none"}}.dump()),
                "ExecutionDoesNotExist");
    check_error(w.call("AWSStepFunctions.SendTaskSuccess",
                       json{{"taskToken", "abc"}, {"output", "{}"}}.dump()),
                "TaskDoesNotExist");
    check_error(w.call("AWSStepFunctions.StartSyncExecution",
                       json{{"stateMachineArn", sfn_world::arn("Pass")}}.dump()),
                "StateMachineTypeNotSupported");
}

TEST_CASE("sfn front: StartSyncExecution answers when the execution ends", "[unit]") {
    front_world w;
    auto r = w.call("AWSStepFunctions.StartSyncExecution",
                    json{{"stateMachineArn", sfn_world::arn("FastX")}, {"input", "{}"}}.dump());
    CHECK_FALSE(r);
    w.sched.run_due();
    REQUIRE(*w.held);
    const auto& res = **w.held;
    CHECK(res.status == 200);
    CHECK(res.header("Content-Type") == "application/x-amz-json-1.0");
    const auto j = body_of(res);
    CHECK(j["status"] == "SUCCEEDED");
    CHECK(j["billingDetails"].is_object());
}

TEST_CASE("sfn front: the trace header comes from the body or X-Amzn-Trace-Id", "[unit]") {
    front_world w;
    http::request req;
    req.method = "POST";
    req.target = "/";
    req.headers = {{"X-Amz-Target", "AWSStepFunctions.StartSyncExecution"},
                   {"X-Amzn-Trace-Id", "Root=1-5759e988-bd862e3fe1be46a994272793"}};
    req.body = json{{"stateMachineArn", sfn_world::arn("FastX")}}.dump();
    std::optional<http::response> got;
    w.api.handle(req, http::responder([&](http::response r) { got = std::move(r); }));
    w.sched.run_due();
    REQUIRE(got);
    CHECK(body_of(*got)["traceHeader"] == "Root=1-5759e988-bd862e3fe1be46a994272793");
}

TEST_CASE("sfn front: bytes that are not a request", "[unit]") {
    front_world w;
    auto answer = w.api.parse_failure_answer();
    auto big = answer(http::parse_failure::body_too_large);
    CHECK(big.status == 413);
    CHECK(body_of(big)["__type"] == "SerializationException");
    auto bad = answer(http::parse_failure::malformed);
    CHECK(bad.status == 400);
    CHECK(bad.header("x-amzn-RequestId").has_value());
}
