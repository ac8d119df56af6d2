#include "emulator/telemetry/request_stats.hpp"
#include "tests/catch.hpp"

#include <cmath>
#include <limits>

using coldbrew::telemetry::latency_histogram;
using coldbrew::telemetry::request_end;
using coldbrew::telemetry::request_record;
using coldbrew::telemetry::request_stats;

namespace {

request_record rec(std::string front, std::string route, int status, double start_ms,
                   double latency_ms) {
    request_record r;
    r.front = std::move(front);
    r.route = std::move(route);
    r.function = "Hello";
    r.method = "GET";
    r.status = status;
    r.start_ms = start_ms;
    r.latency_ms = latency_ms;
    return r;
}

} // namespace

TEST_CASE("latency histogram: upper-inclusive fixed buckets, exact sum, percentiles", "[unit]") {
    latency_histogram h;
    h.record(1.0); // exactly on the first bound: le="0.001" counts it
    h.record(1.5);
    h.record(30000); // the last finite bound
    h.record(45000); // only in +Inf
    h.record(-3);    // counts as 0
    h.record(std::numeric_limits<double>::quiet_NaN());
    CHECK(h.count() == 6);
    CHECK(h.cumulative_count(0) == 3); // 1.0, -3 → 0, NaN → 0
    CHECK(h.cumulative_count(1) == 4); // + 1.5 (≤ 2.5)
    CHECK(h.cumulative_count(latency_histogram::bounds_ms.size() - 1) == 5);
    CHECK(h.sum_ms() == Approx(1.0 + 1.5 + 30000 + 45000));
    CHECK(h.min_ms() == 0);
    CHECK(h.max_ms() == Approx(45000));

    latency_histogram u;
    for (int i = 1; i <= 1000; ++i)
        u.record(i);
    CHECK(u.quantile_ms(0.5) == Approx(500).epsilon(0.005));
    CHECK(u.quantile_ms(0.95) == Approx(950).epsilon(0.005));
    CHECK(u.quantile_ms(0.99) == Approx(990).epsilon(0.005));
    CHECK(u.mean_ms() == Approx(500.5));
    // Buckets are cumulative and never decrease.
    for (std::size_t i = 1; i < latency_histogram::bounds_ms.size(); ++i)
        CHECK(u.cumulative_count(i) >= u.cumulative_count(i - 1));
    CHECK(u.cumulative_count(6) == 100); // ≤ 100 ms

    latency_histogram m = h;
    m.merge(u);
    CHECK(m.count() == 1006);
    CHECK(m.cumulative_count(6) == h.cumulative_count(6) + 100);
}

TEST_CASE("request stats: counts by (front, route, status) and totals per front", "[unit]") {
    request_stats s;
    s.record(rec("gateway", "GET /hello", 200, 0, 4));
    s.record(rec("gateway", "GET /hello", 200, 10, 6));
    auto faulted = rec("gateway", "GET /hello", 0, 20, 30);
    faulted.end = request_end::injected_fault;
    faulted.fault_kind = "reset";
    s.record(faulted);
    auto cold = rec("invoke", "Invoke Hello", 200, 30, 900);
    cold.cold_start = true;
    s.record(cold);
    auto gone = rec("gateway", "(no route)", 0, 40, 2);
    gone.end = request_end::client_gone;
    gone.function.clear();
    s.record(gone);

    const auto& routes = s.routes();
    REQUIRE(routes.size() == 3);
    const auto& hello = routes.at({"gateway", "GET /hello"});
    CHECK(hello.by_status.at(200) == 2);
    CHECK(hello.by_status.at(0) == 1);
    CHECK(hello.latency.count() == 3);
    CHECK(hello.function == "Hello");
    CHECK(routes.at({"gateway", "(no route)"}).function.empty());

    const auto& gw = s.fronts().at("gateway");
    CHECK(gw.requests == 4);
    CHECK(gw.by_end.at(request_end::served) == 2);
    CHECK(gw.by_end.at(request_end::injected_fault) == 1);
    CHECK(gw.by_end.at(request_end::client_gone) == 1);
    CHECK(gw.faults_by_kind.at("reset") == 1);
    CHECK(gw.cold_starts == 0);
    CHECK(s.fronts().at("invoke").cold_starts == 1);
    CHECK(s.all().requests == 5);
    CHECK(s.all().latency.max_ms() == Approx(900));

    // First receipt 0 ms, last end 30 + 900 ms: 5 requests in 0.93 s.
    CHECK(*s.first_start_ms() == 0);
    CHECK(*s.last_end_ms() == Approx(930));
    CHECK(s.mean_rps() == Approx(5 / 0.93));
}

TEST_CASE("request stats: reset forgets requests and Init Durations", "[unit]") {
    request_stats s;
    s.record(rec("gateway", "GET /hello", 200, 0, 4));
    s.record_init("Hello", 812.5);
    s.record_init("Hello", 640);
    s.reset();
    CHECK(s.routes().empty());
    CHECK(s.fronts().empty());
    CHECK(s.all().requests == 0);
    CHECK_FALSE(s.first_start_ms());
    CHECK(s.mean_rps() == 0);
    // The pools' cold-start counters are zeroed with them: a summary after a reset must not
    // show Init Durations of cold starts it no longer counts.
    CHECK(s.init_durations().empty());
    s.record_init("Hello", 300);
    CHECK(s.init_durations().at("Hello").count() == 1);
}

TEST_CASE("request ends have the names the metrics use", "[unit]") {
    using coldbrew::telemetry::to_string;
    CHECK(to_string(request_end::served) == "served");
    CHECK(to_string(request_end::injected_fault) == "injected_fault");
    CHECK(to_string(request_end::handler_error) == "handler_error");
    CHECK(to_string(request_end::emulator_error) == "emulator_error");
    CHECK(to_string(request_end::client_gone) == "client_gone");
}
