#include "emulator/telemetry/log_lines.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::telemetry;

TEST_CASE("START and END lines in Lambda's format", "[unit]") {
    CHECK(start_line("abc") == "START RequestId: abc Version: $LATEST");
    CHECK(end_line("abc") == "END RequestId: abc");
}

TEST_CASE("REPORT line: fields, order, tabs and two-decimal durations", "[unit]") {
    report r;
    r.request_id = "id-1";
    r.duration_ms = 4157.156;
    r.memory_size_mb = 256;
    r.max_memory_used_mb = 99;
    CHECK(report_line(r) ==
          "REPORT RequestId: id-1\tDuration: 4157.16 ms\tBilled Duration: 4158 ms\t"
          "Memory Size: 256 MB\tMax Memory Used: 99 MB\t");
    r.init_duration_ms = 841.6;
    CHECK(report_line(r) ==
          "REPORT RequestId: id-1\tDuration: 4157.16 ms\tBilled Duration: 4999 ms\t"
          "Memory Size: 256 MB\tMax Memory Used: 99 MB\tInit Duration: 841.60 ms\t");
    r.init_duration_ms.reset();
    r.status = "error";
    r.error_type = "Runtime.ExitError";
    CHECK(report_line(r).find("\tStatus: error\tError Type: Runtime.ExitError\t") != std::string::npos);
}

TEST_CASE("billed duration: 1 ms granularity, init included", "[unit]") {
    CHECK(billed_duration_ms(1.0, std::nullopt) == 1);
    CHECK(billed_duration_ms(1.006, std::nullopt) == 2);
    // Billed from the printed two-decimal figure: "1.00 ms" bills 1 ms.
    CHECK(billed_duration_ms(1.001, std::nullopt) == 1);
    CHECK(billed_duration_ms(0.2, 0.3) == 1);
    CHECK(billed_duration_ms(237.17, 48.26) == 286);
}

TEST_CASE("timeout message", "[unit]") {
    CHECK(timed_out_message(3) == "Task timed out after 3.00 seconds");
    CHECK(timed_out_message(0.5) == "Task timed out after 0.50 seconds");
}

TEST_CASE("platform timeout line and INIT_REPORT for a failed init", "[unit]") {
    CHECK(iso8601_ms(1542409706888) == "2018-11-16T23:08:26.888Z");
    CHECK(timed_out_line(1542409706888, "id-1", 3) ==
          "2018-11-16T23:08:26.888Z id-1 Task timed out after 3.00 seconds");
    CHECK(init_report_error_line(206.724, "Runtime.ExitError") ==
          "INIT_REPORT Init Duration: 206.72 ms\tPhase: init\tStatus: error\tError Type: Runtime.ExitError");
}

TEST_CASE("REPORT line: a scaled cold start states its modeled init and the time scale", "[unit]") {
    report r;
    r.request_id = "id-2";
    r.duration_ms = 10;
    r.init_duration_ms = 845.5;
    r.modeled_init_ms = 800;
    r.time_scale = 0.01;
    CHECK(report_line(r) ==
          "REPORT RequestId: id-2\tDuration: 10.00 ms\tBilled Duration: 856 ms\t"
          "Memory Size: 128 MB\tMax Memory Used: 0 MB\tInit Duration: 845.50 ms\t"
          "Modeled Init Duration: 800.00 ms\tTime Scale: 0.01\t");
    // At time_scale 1 the line is exactly AWS's.
    r.time_scale = 1;
    CHECK(report_line(r).find("Modeled") == std::string::npos);
    // Warm invocations have no Init Duration and say nothing about the model.
    r.time_scale = 0.01;
    r.init_duration_ms.reset();
    CHECK(report_line(r).find("Modeled") == std::string::npos);
}
