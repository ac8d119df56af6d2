// Asynchronous invocation settings: SAM EventInvokeConfig and coldbrew.yaml `async`.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {
const char* const with_event_config = R"(Resources:
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      EventInvokeConfig:
        MaximumRetryAttempts: 1
        MaximumEventAgeInSeconds: 120
        DestinationConfig:
          OnFailure: {Type: SQS, Destination: arn:aws:sqs:us-east-1:123456789012:dlq}
  Plain:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
)";
}  // namespace

TEST_CASE("async: Lambda's defaults, EventInvokeConfig, and a warning for AWS destinations", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_event_config);
    const auto* plain = s.find_function("Plain");
    CHECK(plain->async.maximum_retry_attempts == 2);
    CHECK(plain->async.maximum_event_age_s == 21600);
    CHECK_FALSE(plain->async.on_failure);
    const auto* w = s.find_function("Worker");
    CHECK(w->async.maximum_retry_attempts == 1);
    CHECK(w->async.maximum_event_age_s == 120);
    bool warned = false;
    for (const auto& line : s.warnings) warned |= contains(line, "destinations are not delivered");
    CHECK(warned);
}

TEST_CASE("async: coldbrew.yaml sets retries, age and JSONL destinations relative to itself", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"(functions:
  Worker:
    async:
      maximum_retry_attempts: 0
      maximum_event_age_s: 60
      on_failure: out/failed.jsonl
      on_success: /tmp/ok.jsonl
)");
    const auto s = app.sam(with_event_config);
    const auto* w = s.find_function("Worker");
    CHECK(w->async.maximum_retry_attempts == 0);
    CHECK(w->async.maximum_event_age_s == 60);
    CHECK(w->async.on_failure == app.dir() / "out" / "failed.jsonl");
    CHECK(w->async.on_success == std::filesystem::path("/tmp/ok.jsonl"));
}

TEST_CASE("async: out-of-range values are errors at their key", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "functions:\n  Worker:\n    async:\n      maximum_retry_attempts: 3\n");
    auto e = error_of([&] { app.sam(with_event_config); });
    CHECK(e.where().line == 4);
    CHECK(e.key_path() == "functions.Worker.async.maximum_retry_attempts");
    app.write("coldbrew.yaml", "functions:\n  Worker:\n    async:\n      maximum_event_age_s: 59\n");
    e = error_of([&] { app.sam(with_event_config); });
    CHECK(e.key_path() == "functions.Worker.async.maximum_event_age_s");
    app.write("coldbrew.yaml", "functions:\n  Worker:\n    async:\n      on_falure: x.jsonl\n");
    e = error_of([&] { app.sam(with_event_config); });
    CHECK(contains(e.message(), "did you mean"));
}

TEST_CASE("async: serverless.yml maximumRetryAttempts and maximumEventAge", "[unit]") {
    temp_app app;
    app.mkdir("src");
    app.write("serverless.yml", R"(service: svc
provider:
  name: aws
  runtime: python3.12
functions:
  worker:
    handler: src/app.handler
    maximumRetryAttempts: 0
    maximumEventAge: 300
)");
    const auto s = config::load_stack(app.dir(), {});
    const auto* w = s.find_function("worker");
    REQUIRE(w);
    CHECK(w->async.maximum_retry_attempts == 0);
    CHECK(w->async.maximum_event_age_s == 300);
}
