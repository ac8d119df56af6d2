#include "emulator/report/report.hpp"
#include "emulator/telemetry/log_files.hpp"
#include "emulator/telemetry/log_lines.hpp"
#include "tests/catch.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace coldbrew::report;

namespace {

// tests/fixtures/report/, found from this file's own path so the test needs no set-up.
std::filesystem::path fixture(const char* name) {
    return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "fixtures" /
           "report" / name;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    REQUIRE(in);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

parse_result read_fixtures(std::initializer_list<const char*> names) {
    parse_result parsed;
    for (const char* name : names)
        parse_input(slurp(fixture(name)), name, function_from_path(name), parsed);
    return parsed;
}

const row& find_row(const table& t, const std::string& function, const char* bin) {
    for (const auto& r : t.rows) {
        const bool match = std::string(bin) == "total" ? r.total
                           : std::string(bin) == "-"
                               ? (!r.total && !r.bin_start_ms)
                               : (r.bin_start_ms && format_utc(*r.bin_start_ms) == bin);
        if (r.function == function && match) return r;
    }
    FAIL("no row " << function << " " << bin);
    throw;
}

} // namespace

TEST_CASE("report: coldbrew's REPORT lines read back exactly as telemetry writes them", "[unit]") {
    coldbrew::telemetry::report rep;
    rep.request_id = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";
    rep.duration_ms = 4157.16;
    rep.init_duration_ms = 841.6;
    rep.modeled_init_ms = 800;
    rep.time_scale = 0.01;
    rep.memory_size_mb = 256;
    rep.max_memory_used_mb = 99;
    rep.status = "error";
    rep.error_type = "Runtime.ExitError";
    const std::string line = coldbrew::telemetry::report_line(rep);
    // The extras sit between Init Duration and Status; they must not shift any field.
    REQUIRE(line.find("Modeled Init Duration: 800.00 ms\tTime Scale: 0.01\tStatus: error") !=
            std::string::npos);

    for (const std::string& shown : {line, "[checkout] " + line, "2026-11-30T23:28:02.123Z " + line,
                                     "2026-11-30T23:28:02.123Z [checkout] " + line}) {
        CAPTURE(shown);
        auto r = parse_line(shown);
        REQUIRE(r);
        CHECK(r->request_id == rep.request_id);
        CHECK(r->duration_ms == Approx(4157.16));
        CHECK(r->billed_duration_ms == Approx(4999)); // ceil(4157.16 + 841.60)
        CHECK(r->memory_size_mb == 256);
        CHECK(r->max_memory_used_mb == 99);
        REQUIRE(r->init_duration_ms);
        CHECK(*r->init_duration_ms == Approx(841.6));
        CHECK(r->status == "error");
        CHECK(r->error_type == "Runtime.ExitError");
        REQUIRE(r->time_scale);
        CHECK(*r->time_scale == Approx(0.01));
        CHECK(r->function == (shown.find("[checkout]") != std::string::npos ? "checkout" : ""));
        CHECK(r->timestamp_ms.has_value() == (shown[0] == '2'));
    }

    // A warm, successful invocation: no Init Duration, no Status.
    coldbrew::telemetry::report warm;
    warm.request_id = "r-2";
    warm.duration_ms = 1.5;
    warm.memory_size_mb = 128;
    warm.max_memory_used_mb = 40;
    auto w = parse_line(coldbrew::telemetry::report_line(warm));
    REQUIRE(w);
    CHECK_FALSE(w->init_duration_ms);
    CHECK(w->status.empty());
    CHECK_FALSE(w->time_scale);
}

TEST_CASE("report: coldbrew's JSON log format reads back as the text line does", "[unit]") {
    coldbrew::telemetry::report rep;
    rep.request_id = "5a1b";
    rep.duration_ms = 12.34;
    rep.init_duration_ms = 456.78;
    rep.modeled_init_ms = 450;
    rep.time_scale = 0.5;
    rep.memory_size_mb = 512;
    rep.max_memory_used_mb = 77;
    rep.status = "timeout";
    const auto j =
        coldbrew::telemetry::platform_json(coldbrew::telemetry::report_line(rep), 1796081160000);
    REQUIRE(j.what == coldbrew::telemetry::platform_json_result::kind::json);
    for (const std::string& shown : {j.line, "[checkout] " + j.line}) {
        CAPTURE(shown);
        auto r = parse_line(shown);
        REQUIRE(r);
        CHECK(r->timestamp_ms == 1796081160000); // the object's own "time"
        CHECK(r->request_id == "5a1b");
        CHECK(r->duration_ms == Approx(12.34));
        CHECK(*r->init_duration_ms == Approx(456.78));
        CHECK(r->memory_size_mb == 512);
        CHECK(r->max_memory_used_mb == 77);
        CHECK(r->status == "timeout");
        REQUIRE(r->time_scale);
        CHECK(*r->time_scale == Approx(0.5));
    }
    // A --log-dir text file's line: "<ISO-8601 ms>Z <line>".
    auto t = parse_line(coldbrew::telemetry::iso8601_ms(1796081160123) + " " +
                        coldbrew::telemetry::report_line(rep));
    REQUIRE(t);
    CHECK(t->timestamp_ms == 1796081160123);
}

TEST_CASE("report: the REPORT shapes AWS and its tools print", "[unit]") {
    SECTION("the Runtime Interface Emulator puts Init Duration first") {
        auto r = parse_line("REPORT RequestId: a\tInit Duration: 0.51 ms\tDuration: 2.10 "
                            "ms\tBilled Duration: 3 ms\t"
                            "Memory Size: 3008 MB\tMax Memory Used: 3008 MB\t");
        REQUIRE(r);
        CHECK(*r->init_duration_ms == Approx(0.51));
        CHECK(r->duration_ms == Approx(2.10));
        CHECK(r->memory_size_mb == 3008);
    }
    SECTION("an older platform's space before a tab") {
        auto r =
            parse_line("REPORT RequestId: faff6a71-7ea0-11e8-ac94-1710ce2fc493\tDuration: 1.79 ms\t"
                       "Billed Duration: 100 ms \tMemory Size: 128 MB\tMax Memory Used: 46 MB\t\n");
        REQUIRE(r);
        CHECK(r->billed_duration_ms == Approx(100));
        CHECK(r->max_memory_used_mb == 46);
    }
    SECTION("copied from the console, tabs turned to spaces") {
        auto r =
            parse_line("REPORT RequestId: f420d819-d07e-11e8-9ef2-4d8f649fd167 Duration: 158.15 ms "
                       "Billed Duration: 200 ms Memory Size: 128 MB Max Memory Used: 38 MB "
                       "Init Duration: 120.25 ms Status: timeout");
        REQUIRE(r);
        CHECK(r->duration_ms == Approx(158.15));
        CHECK(r->billed_duration_ms == Approx(200));
        CHECK(r->memory_size_mb == 128);
        CHECK(r->max_memory_used_mb == 38);
        CHECK(*r->init_duration_ms == Approx(120.25));
        CHECK(r->status == "timeout");
    }
    SECTION("fields the query does not use are ignored") {
        auto r = parse_line("REPORT RequestId: s\tDuration: 10.00 ms\tBilled Duration: 120 "
                            "ms\tMemory Size: 512 MB\t"
                            "Max Memory Used: 100 MB\tRestore Duration: 300.00 ms\tBilled Restore "
                            "Duration: 110 ms\t");
        REQUIRE(r);
        CHECK_FALSE(r->init_duration_ms); // SnapStart's restore is not @initDuration
    }
    SECTION("aws logs tail: timestamp, log stream, message") {
        auto r = parse_line(
            "2024-01-01T00:00:00.000000+00:00 2024/01/01/[$LATEST]abcd REPORT RequestId: x\t"
            "Duration: 5.00 ms\tBilled Duration: 5 ms\tMemory Size: 128 MB\tMax Memory Used: 64 "
            "MB\t");
        REQUIRE(r);
        CHECK(r->timestamp_ms == 1704067200000); // 2024-01-01T00:00:00Z
        CHECK(r->function.empty()); // "[$LATEST]" is part of the stream, not a function prefix
    }
    SECTION("aws logs tail --format short: timestamp, message") {
        auto r =
            parse_line("2024-01-01T00:00:01.250000+00:00 REPORT RequestId: x\tDuration: 5.00 ms\t"
                       "Memory Size: 128 MB\tMax Memory Used: 64 MB\t");
        REQUIRE(r);
        CHECK(r->timestamp_ms == 1704067201250);
    }
    SECTION("JSON log format") {
        auto r = parse_line(
            R"({"time":"2024-01-01T00:05:00.000Z","type":"platform.report","record":{"requestId":"j",)"
            R"("metrics":{"durationMs":12.5,"billedDurationMs":13,"memorySizeMB":512,"maxMemoryUsedMB":128,)"
            R"("initDurationMs":250.25},"status":"error","errorType":"Runtime.Unknown"}})");
        REQUIRE(r);
        CHECK(r->timestamp_ms == 1704067500000);
        CHECK(r->request_id == "j");
        CHECK(r->duration_ms == Approx(12.5));
        CHECK(r->memory_size_mb == 512);
        CHECK(r->max_memory_used_mb == 128);
        CHECK(*r->init_duration_ms == Approx(250.25));
        CHECK(r->status == "error");
        CHECK(r->error_type == "Runtime.Unknown");
        auto ok = parse_line(
            R"({"time":"2024-01-01T00:05:00.000Z","type":"platform.report","record":{"requestId":"k",)"
            R"("metrics":{"durationMs":1,"billedDurationMs":1,"memorySizeMB":128,"maxMemoryUsedMB":64},"status":"success"}})");
        REQUIRE(ok);
        CHECK(ok->status.empty());
        CHECK_FALSE(ok->init_duration_ms);
    }
}

TEST_CASE("report: other lines are skipped, broken REPORT lines are told apart", "[unit]") {
    for (
        const char* other :
        {"", "START RequestId: a Version: $LATEST", "END RequestId: a",
         "INIT_REPORT Init Duration: 206.72 ms\tPhase: init\tStatus: error\tError Type: "
         "Runtime.ExitError",
         "XRAY TraceId: 1-5\tSegmentId: 6\tSampled: true", "[checkout] charging order 1",
         "2024-01-01T00:00:00.000Z\ta\tINFO\tREPORT RequestId: this is handler output",
         "REPORTING for duty", "REPORT sent for order 5", "REPORT",
         "coldbrew up: gateway listening on http://127.0.0.1:3000",
         R"({"time":"2024-01-01T00:00:00.000Z","type":"platform.start","record":{"requestId":"a"}})",
         R"({"timestamp":"2024-01-01T00:00:00.000Z","level":"INFO","message":"hello"})"}) {
        CAPTURE(other);
        CHECK(classify_line(other).kind == line_kind::other);
    }
    for (
        const char* bad :
        {"REPORT RequestId: a\tDuration: 4x.00 ms\tMemory Size: 128 MB\tMax Memory Used: 64 MB\t",
         "REPORT RequestId: a\tDuration: 1.00 ms\tBilled Duration: 1 ms\tMemory Si", // cut off
         "REPORT RequestId: a\tDuration: 1.00 ms\tBilled Duration: 1 ms\t",          // no memory
         "REPORT RequestId: a\tDuration: 1.00 ms\tMemory Size: 0 MB\tMax Memory Used: 0 MB\t",
         "REPORT RequestId: a\tDuration: -1.00 ms\tMemory Size: 128 MB\tMax Memory Used: 1 MB\t",
         "REPORT RequestId: a\tDuration: 1.00 s\tMemory Size: 128 MB\tMax Memory Used: 1 MB\t", // wrong unit
         "REPORT RequestId: \tDuration: 1.00 ms\tMemory Size: 128 MB\tMax Memory Used: 1 MB\t", // no id
         "REPORT RequestId: a Duration: 1.00 ms Memory Size: 128 MB Max Memory", // cut off, no tabs
         "[fn] 2024-01-01T00:00:00Z REPORT RequestId: a\tDuration: nan ms\tMemory Size: 128 "
         "MB\tMax Memory Used: 1 MB",
         R"({"time":"2024-01-01T00:00:00.000Z","type":"platform.report","record":{"requestId":"a","metrics":{"durationMs":1}}})",
         R"({"time":"2024-01-01T00:00:00.000Z","type":"platform.report","record":{"requestId":"a","metr)",
         R"({"time":"yesterday","type":"platform.report","record":{"requestId":"a","metrics":{"durationMs":1,"memorySizeMB":128,"maxMemoryUsedMB":1}}})"}) {
        CAPTURE(bad);
        CHECK(classify_line(bad).kind == line_kind::malformed_report);
        CHECK_FALSE(parse_line(bad));
    }
}

TEST_CASE("report: timestamps, bins and file names", "[unit]") {
    CHECK(parse_timestamp("1970-01-01T00:00:00Z") == 0);
    CHECK(parse_timestamp("2026-11-30T23:26:00.000Z") == 1796081160000);
    CHECK(parse_timestamp("2026-11-30T23:26:00.5Z") == 1796081160500);
    CHECK(parse_timestamp("2026-11-30T23:26:00.123456789Z") == 1796081160123);
    CHECK(parse_timestamp("2026-12-01T00:26:00.000+01:00") == 1796081160000);
    CHECK(parse_timestamp("2026-11-30T18:26:00-0500") == 1796081160000);
    CHECK(parse_timestamp("2026-11-30T23:26:00") == 1796081160000); // no zone: UTC
    CHECK(parse_timestamp("2024-02-29T00:00:00Z") == 1709164800000);
    for (const char* no :
         {"2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-30 23:26:00Z",
          "2026-11-30T23:26:00.Z", "2026-11-30T23:26:00ZZ", "2026/11/30/[$LATEST]ab", "[fn]"})
        CHECK_FALSE(parse_timestamp(no));

    CHECK(format_utc(1796081160000) == "2026-11-30T23:26:00Z");
    CHECK(format_utc(0) == "1970-01-01T00:00:00Z");
    CHECK(format_utc(-1) == "1969-12-31T23:59:59Z");
    CHECK(format_utc(1709164800000) == "2024-02-29T00:00:00Z");

    CHECK(parse_bin("30s") == 30'000);
    CHECK(parse_bin("1m") == 60'000);
    CHECK(parse_bin("5m") == 300'000);
    CHECK(parse_bin("1h") == 3'600'000);
    CHECK(parse_bin("1d") == 86'400'000);
    for (const char* no : {"", "m", "0m", "-5m", "5", "5x", "1.5m", "5 m", "99999999s"})
        CHECK_FALSE(parse_bin(no));
    CHECK(bin_label(300'000) == "5m");
    CHECK(bin_label(7'200'000) == "2h");
    CHECK(bin_label(90'000) == "90s");

    CHECK(function_from_path("my-fn.json") == "my-fn");
    CHECK(function_from_path("/var/log/coldbrew/checkout.log") == "checkout");
    CHECK(function_from_path("_aws_lambda_my-fn.json") == "my-fn");
    CHECK(function_from_path("exports/aws-lambda-orders.txt") == "orders");
    CHECK(function_from_path("-") == "stdin");
    CHECK(function_from_path("noext") == "noext");
}

TEST_CASE("report: filter-log-events --output text, timestamp on the message's line or the next",
          "[unit]") {
    const std::string text =
        "EVENTS\t3700\t1704067200300\t2024/01/01/[$LATEST]ab\tREPORT RequestId: a\tDuration: 2.00 "
        "ms\t"
        "Billed Duration: 2 ms\tMemory Size: 128 MB\tMax Memory Used: 32 MB\t\t1704067200000\n"
        "EVENTS\t3701\t1704067500300\t2024/01/01/[$LATEST]ab\tREPORT RequestId: b\tDuration: 4.00 "
        "ms\t"
        "Billed Duration: 4 ms\tMemory Size: 128 MB\tMax Memory Used: 32 MB\t\n"
        "\t1704067500000\n";
    parse_result p;
    parse_input(text, "fn.txt", "fn", p);
    REQUIRE(p.records.size() == 2);
    CHECK(p.records[0].timestamp_ms == 1704067200000);
    CHECK(p.records[0].duration_ms == Approx(2));
    CHECK(p.records[1].timestamp_ms == 1704067500000);
    CHECK(p.records[1].request_id == "b");
    CHECK(p.malformed == 0);
}

// The fixtures hold two functions over three 5-minute bins of 2026-11-30 (23:15, 23:20,
// 23:25 UTC), one of each input format:
//   checkout.log   coldbrew --log-dir text ("<ISO ts> <line>"), scaled cold starts, an error
//                  REPORT and one malformed REPORT (line 14)
//   checkout.json  aws logs filter-log-events JSON, with a timeout REPORT
//   thumbnail.log  coldbrew --log-dir --log-format json (platform.report objects)
//   thumbnail.txt  aws logs tail
TEST_CASE("report: the fixture's numbers, by hand", "[unit]") {
    parse_result parsed =
        read_fixtures({"checkout.log", "checkout.json", "thumbnail.log", "thumbnail.txt"});
    CHECK(parsed.records.size() == 11); // checkout 6 (4 + 2), thumbnail 5 (2 + 3)
    CHECK(parsed.malformed == 1);
    CHECK(parsed.first_malformed == "checkout.log:14");

    const table t = aggregate(parsed.records, 300'000);
    CHECK(t.functions == 2);
    CHECK(t.invocations == 11);
    CHECK_FALSE(t.has_untimed);
    REQUIRE(t.time_scale);
    CHECK(*t.time_scale == Approx(0.01));
    REQUIRE(t.rows.size() == 8); // per function: 3 bins + total
    CHECK(t.rows[0].function == "checkout");
    CHECK(t.rows[3].total);
    CHECK(t.rows[4].function == "thumbnail");
    CHECK(t.rows[7].total);

    // checkout, 256 MB.
    // 23:15 — 23:15:10 cold (100 ms, init 800, 64 MB), 23:16:00 warm (50 ms, 64 MB).
    const row& c1 = find_row(t, "checkout", "2026-11-30T23:15:00Z");
    CHECK(c1.invocations == 2);
    CHECK(c1.cold_starts == 1);
    CHECK(c1.cold_start_pct == Approx(50.0)); // 1/2*100
    CHECK(*c1.max_init_ms == Approx(800.0));
    CHECK(c1.avg_duration_ms == Approx(75.0)); // (100+50)/2
    CHECK(c1.max_duration_ms == Approx(100.0));
    CHECK(c1.min_duration_ms == Approx(50.0));
    CHECK(c1.memory_mb == 256);
    CHECK(c1.avg_memory_used_pct == Approx(25.0)); // 64/256*100 = 25, twice
    // 23:20 — 23:21:00.5 the error REPORT (30 ms, 96 MB); 23:22's malformed line is not counted.
    const row& c2 = find_row(t, "checkout", "2026-11-30T23:20:00Z");
    CHECK(c2.invocations == 1);
    CHECK(c2.cold_starts == 0);
    CHECK(c2.cold_start_pct == Approx(0.0));
    CHECK_FALSE(c2.max_init_ms);
    CHECK(c2.avg_duration_ms == Approx(30.0));
    CHECK(c2.min_duration_ms == Approx(30.0));
    CHECK(c2.avg_memory_used_pct == Approx(37.5)); // 96/256*100
    // 23:25 — 23:26:00 warm (120 ms, 128 MB, JSON export), 23:28:02.123 cold (200 ms, init
    // 1000, 128 MB), 23:29:59.999 timeout (3000 ms, 192 MB, JSON export).
    const row& c3 = find_row(t, "checkout", "2026-11-30T23:25:00Z");
    CHECK(c3.invocations == 3);
    CHECK(c3.cold_starts == 1);
    CHECK(c3.cold_start_pct == Approx(100.0 / 3)); // 33.33
    CHECK(*c3.max_init_ms == Approx(1000.0));
    CHECK(c3.avg_duration_ms == Approx(3320.0 / 3)); // (120+200+3000)/3 = 1106.67
    CHECK(c3.max_duration_ms == Approx(3000.0));
    CHECK(c3.min_duration_ms == Approx(120.0));
    CHECK(c3.avg_memory_used_pct == Approx(175.0 / 3)); // (50+50+75)/3 = 58.33
    // total — 6 invocations, 2 cold.
    const row& ct = find_row(t, "checkout", "total");
    CHECK(ct.invocations == 6);
    CHECK(ct.cold_starts == 2);
    CHECK(ct.cold_start_pct == Approx(100.0 / 3)); // 2/6*100
    CHECK(*ct.max_init_ms == Approx(1000.0));
    CHECK(ct.avg_duration_ms == Approx(3500.0 / 6)); // (100+50+30+120+200+3000)/6 = 583.33
    CHECK(ct.max_duration_ms == Approx(3000.0));
    CHECK(ct.min_duration_ms == Approx(30.0));
    CHECK(ct.memory_mb == 256);
    CHECK(ct.avg_memory_used_pct == Approx(43.75)); // (25+25+37.5+50+50+75)/6 = 262.5/6

    // thumbnail, 1024 MB.
    // 23:15 — 23:17:30 cold (400 ms, init 1500, 256 MB), 23:18:00 warm (100 ms, 256 MB).
    const row& t1 = find_row(t, "thumbnail", "2026-11-30T23:15:00Z");
    CHECK(t1.invocations == 2);
    CHECK(t1.cold_starts == 1);
    CHECK(t1.cold_start_pct == Approx(50.0));
    CHECK(*t1.max_init_ms == Approx(1500.0));
    CHECK(t1.avg_duration_ms == Approx(250.0)); // (400+100)/2
    CHECK(t1.max_duration_ms == Approx(400.0));
    CHECK(t1.min_duration_ms == Approx(100.0));
    CHECK(t1.memory_mb == 1024);
    CHECK(t1.avg_memory_used_pct == Approx(25.0)); // 256/1024*100, twice
    // 23:20 — 23:24:00 warm (300 ms, 512 MB).
    const row& t2 = find_row(t, "thumbnail", "2026-11-30T23:20:00Z");
    CHECK(t2.invocations == 1);
    CHECK(t2.cold_starts == 0);
    CHECK_FALSE(t2.max_init_ms);
    CHECK(t2.avg_duration_ms == Approx(300.0));
    CHECK(t2.avg_memory_used_pct == Approx(50.0)); // 512/1024*100
    // 23:25 — 23:26:40 cold (500 ms, init 2000, 512 MB), 23:27:00 warm (100 ms, 768 MB).
    const row& t3 = find_row(t, "thumbnail", "2026-11-30T23:25:00Z");
    CHECK(t3.invocations == 2);
    CHECK(t3.cold_starts == 1);
    CHECK(t3.cold_start_pct == Approx(50.0));
    CHECK(*t3.max_init_ms == Approx(2000.0));
    CHECK(t3.avg_duration_ms == Approx(300.0)); // (500+100)/2
    CHECK(t3.max_duration_ms == Approx(500.0));
    CHECK(t3.min_duration_ms == Approx(100.0));
    CHECK(t3.avg_memory_used_pct == Approx(62.5)); // (50+75)/2
    // total — 5 invocations, 2 cold.
    const row& tt = find_row(t, "thumbnail", "total");
    CHECK(tt.invocations == 5);
    CHECK(tt.cold_starts == 2);
    CHECK(tt.cold_start_pct == Approx(40.0)); // 2/5*100
    CHECK(*tt.max_init_ms == Approx(2000.0));
    CHECK(tt.avg_duration_ms == Approx(280.0)); // (400+100+300+500+100)/5 = 1400/5
    CHECK(tt.max_duration_ms == Approx(500.0));
    CHECK(tt.min_duration_ms == Approx(100.0));
    CHECK(tt.avg_memory_used_pct == Approx(45.0)); // (25+25+50+50+75)/5 = 225/5

    // A wider bin folds the three into one: the same numbers as the totals.
    const table hour = aggregate(parsed.records, 3'600'000);
    REQUIRE(hour.rows.size() == 4);
    CHECK(format_utc(*hour.rows[0].bin_start_ms) == "2026-11-30T23:00:00Z");
    CHECK(hour.rows[0].invocations == 6);
    CHECK(hour.rows[0].avg_duration_ms == Approx(3500.0 / 6));
    CHECK(hour.rows[2].avg_memory_used_pct == Approx(45.0));
}

TEST_CASE("report: coldbrew up's stdout has no timestamps: one '-' bin, functions from the prefix",
          "[unit]") {
    parse_result parsed = read_fixtures({"up-stdout.log"});
    CHECK(parsed.malformed == 0);
    const table t = aggregate(parsed.records, 300'000);
    CHECK(t.has_untimed);
    CHECK_FALSE(t.time_scale);
    REQUIRE(t.rows.size() == 4); // checkout -, total; thumbnail -, total
    // checkout: one cold start, 10 ms, init 5 ms, 32 of 256 MB.
    const row& c = find_row(t, "checkout", "-");
    CHECK(c.invocations == 1);
    CHECK(c.cold_starts == 1);
    CHECK(c.cold_start_pct == Approx(100.0));
    CHECK(*c.max_init_ms == Approx(5.0));
    CHECK(c.avg_duration_ms == Approx(10.0));
    CHECK(c.avg_memory_used_pct == Approx(12.5)); // 32/256*100
    // thumbnail: warm, 20 ms, 512 of 1024 MB.
    const row& th = find_row(t, "thumbnail", "-");
    CHECK(th.cold_starts == 0);
    CHECK(th.avg_duration_ms == Approx(20.0));
    CHECK(th.avg_memory_used_pct == Approx(50.0));
    CHECK(render_table(t).find("without a timestamp") != std::string::npos);
}

TEST_CASE("report: a filter-log-events document: event timestamps, its file name as the function",
          "[unit]") {
    parse_result parsed = read_fixtures({"checkout.json"});
    REQUIRE(parsed.records.size() == 2);
    CHECK(parsed.records[0].function == "checkout");
    CHECK(parsed.records[0].timestamp_ms == 1796081160000); // 2026-11-30T23:26:00Z
    CHECK(parsed.records[1].status == "timeout");

    parse_result bad;
    parse_input(R"({"events":[{"timestamp":1,"message":"START RequestId: a"},)"
                R"({"timestamp":2,"message":"REPORT RequestId: a\tDuration: 1 ms\t"}]})",
                "x.json", "x", bad);
    CHECK(bad.records.empty());
    CHECK(bad.malformed == 1);
    CHECK(bad.first_malformed == "x.json:event 2");
}

TEST_CASE("report: JSON rows keep their key order and numbers; HTML is self-contained", "[unit]") {
    parse_result parsed =
        read_fixtures({"checkout.log", "checkout.json", "thumbnail.log", "thumbnail.txt"});
    const table t = aggregate(parsed.records, 300'000);
    const auto j = nlohmann::ordered_json::parse(render_json(t));
    REQUIRE(j.is_array());
    REQUIRE(j.size() == 8);
    std::vector<std::string> keys;
    for (const auto& [k, v] : j[0].items())
        keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"function", "bin_start", "total", "invocations",
                                           "cold_starts", "cold_start_pct", "max_init_ms",
                                           "avg_duration_ms", "max_duration_ms", "min_duration_ms",
                                           "memory_mb", "avg_memory_used_pct"});
    CHECK(j[0]["bin_start"] == "2026-11-30T23:15:00Z");
    CHECK(j[1]["max_init_ms"].is_null());
    CHECK(j[2]["avg_duration_ms"].get<double>() == Approx(1106.67)); // 3320/3, rounded
    CHECK(j[3]["total"] == true);
    CHECK(j[3]["bin_start"].is_null());
    CHECK(j[3]["cold_start_pct"].get<double>() == Approx(33.33));
    CHECK(j[3]["invocations"].is_number_integer());

    const std::string text = render_table(t);
    CHECK(text.find("2026-11-30 23:25:00") != std::string::npos);
    CHECK(text.find("1106.67") != std::string::npos);
    CHECK(text.find("Time Scale 0.01") != std::string::npos);

    const std::string html = render_html(t, {"checkout.log"});
    CHECK(html.find("<svg") != std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("href=") == std::string::npos);
    CHECK(html.find("http") == std::string::npos);
}
