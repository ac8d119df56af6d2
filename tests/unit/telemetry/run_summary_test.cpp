#include "emulator/telemetry/run_summary.hpp"
#include "tests/catch.hpp"

#include <cstdio>
#include <string>

using namespace coldbrew::telemetry;

namespace {

request_record rec(std::string front, int status, double start_ms, double latency_ms) {
    request_record r;
    r.front = std::move(front);
    r.route = r.front == "invoke" ? "Invoke Hello" : "GET /hello";
    r.function = "Hello";
    r.status = status;
    r.start_ms = start_ms;
    r.latency_ms = latency_ms;
    return r;
}

std::string fixed1(double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f", v);
    return buf;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("run summary: the numbers of a fixed run, aligned", "[unit]") {
    request_stats rs;
    // Gateway: 100 requests at 10 ms intervals, latency 1..100 ms; two of them faulted.
    for (int i = 0; i < 100; ++i) {
        auto r = rec("gateway", i < 98 ? 200 : 0, i * 10.0, i + 1.0);
        if (i >= 98) {
            r.end = request_end::injected_fault;
            r.fault_kind = "phantom";
        }
        r.cold_start = i == 0;
        rs.record(r);
    }
    // Invoke: one cold request that ends last (at 990 + 1010 = 2000 ms).
    auto inv = rec("invoke", 200, 990, 1010);
    inv.cold_start = true;
    rs.record(inv);
    rs.record_init("Hello", 800);
    rs.record_init("Hello", 1000);

    run_summary_input in;
    in.run_ms = 12400;
    in.requests = &rs;
    in.faults_by_kind = {{"phantom", 2}, {"delay", 0}};
    in.fault_overflow = 3;
    const auto text = render_run_summary(in);
    INFO(text);

    CHECK(text.rfind("coldbrew: run summary (12.4 s)\n", 0) == 0);
    // 101 requests from 0 to 2000 ms.
    CHECK(has(text, "    requests ............ 101 (50.5/sec mean)\n"));
    CHECK(has(text, "    requests ............ 100 (50.0/sec mean)\n"));
    CHECK(has(text, "    requests ............ 1\n"));
    // Gateway latencies 1..100: median 50, p95 95, p99 99, each within 0.4% (the
    // histogram's bucket midpoint), printed to 0.1 ms.
    const auto& gw = rs.fronts().at("gateway").latency;
    CHECK(gw.quantile_ms(0.5) == Approx(50).epsilon(0.004));
    CHECK(gw.quantile_ms(0.95) == Approx(95).epsilon(0.004));
    CHECK(gw.quantile_ms(0.99) == Approx(99).epsilon(0.004));
    CHECK(has(text, "    response time ....... min 1.0, median " + fixed1(gw.quantile_ms(0.5)) +
                        ", p95 " + fixed1(gw.quantile_ms(0.95)) + ", p99 " +
                        fixed1(gw.quantile_ms(0.99)) + ", max 100.0 ms\n"));
    CHECK(has(text, "    status codes ........ 200: 99, none: 2\n"));
    CHECK(has(text, "    outcomes ............ 99 served, 2 injected faults, 0 handler errors, "
                    "0 emulator errors\n"));
    CHECK(has(text, "    cold starts ......... 2 (2.0% of requests)\n"));
    CHECK(has(text, "    cold starts ......... 1 (100.0% of requests)\n"));
    CHECK(has(text, "  all fronts\n"));
    CHECK(has(text, "  gateway\n"));
    CHECK(has(text, "  invoke API\n"));
    // Kinds that fired no fault are left out.
    CHECK(has(text, "  faults injected ....... phantom: 2\n"));
    CHECK(has(text, "  faults held back ...... 3 (max_active_faults reached)\n"));
    CHECK(has(text, "  Init Duration\n    Hello ............... 2 cold starts, median 800.0, "
                    "max 1000.0 ms\n"));
    CHECK_FALSE(has(text, "time_scale"));
    CHECK(text.back() == '\n');
}

TEST_CASE("run summary: no requests, a scaled run, clients that left", "[unit]") {
    run_summary_input empty;
    empty.run_ms = 5000;
    CHECK(render_run_summary(empty) == "coldbrew: run summary (5.0 s): no requests\n"
                                       "  faults injected ....... none\n");

    request_stats rs;
    auto gone = rec("gateway", 0, 0, 3);
    gone.end = request_end::client_gone;
    rs.record(gone);
    run_summary_input in;
    in.run_ms = 1000;
    in.time_scale = 0.01;
    in.requests = &rs;
    const auto text = render_run_summary(in);
    INFO(text);
    CHECK(has(text, "time_scale 0.010"));
    CHECK(has(text, "0 served, 0 injected faults, 0 handler errors, 0 emulator errors, "
                    "1 client gone\n"));
    CHECK(has(text, "status codes ........ none: 1\n"));
    // One front: no totals repeating it.
    CHECK_FALSE(has(text, "all fronts"));
    CHECK(has(text, "\n  gateway\n"));
    // One request has no rate.
    CHECK(has(text, "    requests ............ 1\n"));
}

TEST_CASE("run summary: after a counter reset it says what it counts from", "[unit]") {
    run_summary_input in;
    in.run_ms = 9000;
    in.counters_reset_at_ms = 4200;
    in.fault_missed = 2;
    in.faults_by_kind = {{"function_error", 3}};
    const auto text = render_run_summary(in);
    CHECK(text.rfind("coldbrew: run summary (9.0 s; counted since the counters were reset, "
                     "4.2 s into the run): no requests\n",
                     0) == 0);
    CHECK(text.find("function_error: 3; missed: 2") != std::string::npos);
}
