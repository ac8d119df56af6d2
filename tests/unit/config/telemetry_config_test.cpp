// coldbrew.yaml `telemetry:` (trace file, OTLP endpoint) and SAM's LoggingConfig.LogFormat.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <string>

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

std::string with_logging(const std::string& logging) {
    return R"(Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
)" + logging +
           R"(  Other:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
)";
}

} // namespace

TEST_CASE("telemetry: trace_file relative to coldbrew.yaml, otlp_endpoint as given", "[unit]") {
    temp_app app;
    app.mkdir("out");
    app.write("coldbrew.yaml", "telemetry:\n  trace_file: out/traces.jsonl\n"
                               "  otlp_endpoint: http://127.0.0.1:4318\n");
    const auto s = app.sam(with_logging(""));
    CHECK(s.settings.trace_file == app.dir() / "out" / "traces.jsonl");
    CHECK(s.settings.otlp_endpoint == "http://127.0.0.1:4318");

    app.write("coldbrew.yaml", "telemetry:\n  trace_file:\n");
    CHECK_FALSE(app.sam(with_logging("")).settings.trace_file);
}

TEST_CASE("telemetry: bad keys and values stop the load", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "telemetry:\n  otlp_endpoint: https://collector:4318\n");
    auto e = error_of([&] { app.sam(with_logging("")); });
    CHECK(contains(e.what(), "otlp_endpoint must be an http:// URL"));
    app.write("coldbrew.yaml", "telemetry:\n  trace_fle: t.jsonl\n");
    e = error_of([&] { app.sam(with_logging("")); });
    CHECK(contains(e.what(), "did you mean"));
    app.write("coldbrew.yaml", "telemetry:\n  trace_file: missing/t.jsonl\n");
    e = error_of([&] { app.sam(with_logging("")); });
    CHECK(contains(e.what(), "does not exist"));
}

TEST_CASE("SAM LoggingConfig.LogFormat selects a function's log format", "[unit]") {
    temp_app app;
    auto s = app.sam(with_logging("      LoggingConfig:\n        LogFormat: JSON\n"));
    REQUIRE(s.functions.size() == 2);
    CHECK(s.find_function("Hello")->log_format == "JSON");
    CHECK(s.find_function("Other")->log_format == "Text");
    auto e =
        error_of([&] { app.sam(with_logging("      LoggingConfig:\n        LogFormat: json\n")); });
    CHECK(contains(e.what(), "LogFormat must be Text or JSON"));
}
