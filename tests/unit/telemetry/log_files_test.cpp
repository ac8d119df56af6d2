#include "emulator/telemetry/log_files.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <vector>

using namespace coldbrew::telemetry;
using coldbrew::testing::manual_clock;

namespace {

struct capture final : log_sink {
    std::vector<std::pair<std::string, std::string>> lines;
    void write(std::string_view function, std::string_view line) override {
        lines.emplace_back(function, line);
    }
};

// 2023-11-14T22:13:20.000Z
constexpr std::int64_t epoch_ms = 1700000000000;

nlohmann::json json_of(const platform_json_result& r) {
    REQUIRE(r.what == platform_json_result::kind::json);
    return nlohmann::json::parse(r.line);
}

std::vector<std::string> read_lines(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

} // namespace

TEST_CASE("log format names", "[unit]") {
    CHECK(parse_log_format("json") == log_format::json);
    CHECK(parse_log_format("JSON") == log_format::json);
    CHECK(parse_log_format("Text") == log_format::text);
    CHECK_FALSE(parse_log_format("yaml"));
    CHECK(std::string(to_string(log_format::json)) == "JSON");
    log_formats f;
    f.set("Api", log_format::json);
    CHECK(f.of("Api") == log_format::json);
    CHECK(f.of("Other") == log_format::text);
    CHECK(f.any_json());
    CHECK_FALSE(log_formats().any_json());
    CHECK(log_formats(log_format::json).of("Other") == log_format::json);
}

TEST_CASE("JSON log format: START is platform.start", "[unit]") {
    const std::string line = start_line("8476a536-e9f4-41e8-9739-2dfe598c3fcd");
    auto j =
        json_of(platform_json(line, epoch_ms, "arn:aws:lambda:us-east-1:123456789012:function:f"));
    CHECK(j["time"] == "2023-11-14T22:13:20.000Z");
    CHECK(j["type"] == "platform.start");
    CHECK(j["record"]["requestId"] == "8476a536-e9f4-41e8-9739-2dfe598c3fcd");
    CHECK(j["record"]["functionArn"] == "arn:aws:lambda:us-east-1:123456789012:function:f");
    CHECK(j["record"]["version"] == "$LATEST");
    // Key order as Lambda writes it: time, type, record.
    CHECK(platform_json(line, epoch_ms).line ==
          R"({"time":"2023-11-14T22:13:20.000Z","type":"platform.start","record":)"
          R"({"requestId":"8476a536-e9f4-41e8-9739-2dfe598c3fcd","version":"$LATEST"}})");
}

TEST_CASE("JSON log format: END has no counterpart", "[unit]") {
    CHECK(platform_json(end_line("abc"), epoch_ms).what == platform_json_result::kind::dropped);
}

TEST_CASE("JSON log format: REPORT is platform.report with metrics and status", "[unit]") {
    report r;
    r.request_id = "id-1";
    r.duration_ms = 4157.156;
    r.memory_size_mb = 256;
    r.max_memory_used_mb = 99;
    auto warm = json_of(platform_json(report_line(r), epoch_ms));
    CHECK(warm["type"] == "platform.report");
    CHECK(warm["record"]["requestId"] == "id-1");
    CHECK(warm["record"]["status"] == "success");
    const auto& m = warm["record"]["metrics"];
    CHECK(m["durationMs"] == 4157.16);
    CHECK(m["billedDurationMs"] == 4158);
    CHECK(m["billedDurationMs"].is_number_integer());
    CHECK(m["memorySizeMB"] == 256);
    CHECK(m["maxMemoryUsedMB"] == 99);
    CHECK_FALSE(m.contains("initDurationMs"));
    CHECK_FALSE(warm["record"].contains("coldbrew"));
    CHECK_FALSE(warm["record"].contains("errorType"));

    r.init_duration_ms = 841.6;
    r.modeled_init_ms = 800;
    r.time_scale = 0.01;
    auto cold = json_of(platform_json(report_line(r), epoch_ms));
    CHECK(cold["record"]["metrics"]["initDurationMs"] == 841.6);
    CHECK(cold["record"]["metrics"]["billedDurationMs"] == 4999);
    CHECK(cold["record"]["coldbrew"]["modeledInitDurationMs"] == 800.0);
    CHECK(cold["record"]["coldbrew"]["timeScale"] == 0.01);

    r.init_duration_ms.reset();
    r.status = "error";
    r.error_type = "Runtime.ExitError";
    auto failed = json_of(platform_json(report_line(r), epoch_ms));
    CHECK(failed["record"]["status"] == "error");
    CHECK(failed["record"]["errorType"] == "Runtime.ExitError");
    r.status = "timeout";
    r.error_type.clear();
    CHECK(json_of(platform_json(report_line(r), epoch_ms))["record"]["status"] == "timeout");
}

TEST_CASE("JSON log format: INIT_REPORT is platform.initReport", "[unit]") {
    auto j = json_of(platform_json(init_report_error_line(206.72, "Runtime.ExitError"), epoch_ms));
    CHECK(j["type"] == "platform.initReport");
    CHECK(j["record"]["phase"] == "init");
    CHECK(j["record"]["status"] == "error");
    CHECK(j["record"]["errorType"] == "Runtime.ExitError");
    CHECK(j["record"]["metrics"]["durationMs"] == 206.72);
}

TEST_CASE("JSON log format: other lines are not platform lines", "[unit]") {
    for (const char* line :
         {"hello from the handler", "START of something", "START RequestId: a b Version: 1",
          "REPORT RequestId: x\tDuration: fast\t",
          "END RequestId: ", "REPORT RequestId: x\tDuration: 1.00 ms\tBilled Duration: 1 ms\t",
          "2024-01-01T00:00:00.000Z id Task timed out after 3.00 seconds",
          R"({"level":"INFO","message":"hi"})"}) {
        CAPTURE(line);
        CHECK(platform_json(line, epoch_ms).what == platform_json_result::kind::not_platform);
    }
}

TEST_CASE("json_log_sink converts platform lines of JSON functions only", "[unit]") {
    manual_clock clock(epoch_ms);
    capture out;
    log_formats formats;
    formats.set("JsonFn", log_format::json);
    json_log_sink sink(out, clock, formats, {{"JsonFn", "arn:aws:lambda:us-east-1:1:function:j"}});
    sink.write("TextFn", start_line("r1"));
    sink.write("JsonFn", start_line("r2"));
    sink.write("JsonFn", "handler says hi");
    sink.write("JsonFn", end_line("r2"));
    REQUIRE(out.lines.size() == 3);
    CHECK(out.lines[0].second == "START RequestId: r1 Version: $LATEST");
    auto j = nlohmann::json::parse(out.lines[1].second);
    CHECK(j["type"] == "platform.start");
    CHECK(j["record"]["functionArn"] == "arn:aws:lambda:us-east-1:1:function:j");
    CHECK(out.lines[1].first == "JsonFn");
    CHECK(out.lines[2].second == "handler says hi");
}

TEST_CASE("log_file_sink: one file per function, timestamped text or JSON lines", "[unit]") {
    auto dir = std::filesystem::temp_directory_path() /
               ("coldbrew-logdir-" + std::to_string(::getpid())) / "nested";
    std::filesystem::remove_all(dir.parent_path());
    manual_clock clock(epoch_ms + 123);
    capture out;
    log_formats formats;
    formats.set("JsonFn", log_format::json);
    {
        log_file_sink files(out, clock, formats, dir);
        REQUIRE_FALSE(files.open());
        json_log_sink json(files, clock, formats);
        json.write("TextFn", start_line("r1"));
        json.write("TextFn", "hello");
        clock.advance(std::chrono::milliseconds(1001));
        json.write("TextFn", end_line("r1"));
        json.write("JsonFn", start_line("r2"));
        json.write("JsonFn", "plain handler line");
        json.write("JsonFn", end_line("r2"));
        json.write("../odd/name", "x");
        CHECK(files.write_errors() == 0);
        CHECK(files.file_for("../odd/name") == dir / ".._odd_name.log");
    }
    // Passed on to the terminal sink as well.
    CHECK(out.lines.size() == 6);
    CHECK(read_lines(dir / "TextFn.log") ==
          std::vector<std::string>{"2023-11-14T22:13:20.123Z START RequestId: r1 Version: $LATEST",
                                   "2023-11-14T22:13:20.123Z hello",
                                   "2023-11-14T22:13:21.124Z END RequestId: r1"});
    auto json_lines = read_lines(dir / "JsonFn.log");
    REQUIRE(json_lines.size() == 2);
    CHECK(nlohmann::json::parse(json_lines[0])["time"] == "2023-11-14T22:13:21.124Z");
    CHECK(json_lines[1] == "plain handler line");
    CHECK(std::filesystem::exists(dir / ".._odd_name.log"));
    // Appended, not truncated, by a second run.
    {
        log_file_sink files(out, clock, formats, dir);
        REQUIRE_FALSE(files.open());
        files.write("TextFn", "again");
    }
    CHECK(read_lines(dir / "TextFn.log").size() == 4);
    std::filesystem::remove_all(dir.parent_path());
}
