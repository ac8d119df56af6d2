#include "emulator/cli/test_command.hpp"

#include <stdexcept>

#include "tests/catch.hpp"

using namespace coldbrew;
using namespace coldbrew::cli;

namespace {

telemetry::request_record record(const std::string& route, const std::string& fn, int status,
                                 double latency_ms) {
    telemetry::request_record r;
    r.front = "gateway";
    r.route = route;
    r.function = fn;
    r.method = route.substr(0, route.find(' '));
    r.status = status;
    r.end = status >= 500 ? telemetry::request_end::injected_fault : telemetry::request_end::served;
    r.latency_ms = latency_ms;
    return r;
}

}  // namespace

TEST_CASE("test gates: the live grammar takes subjects, fault kinds, and refuses what a live run "
          "cannot measure",
          "[unit]") {
    auto g = parse_live_gate("p99[GET /pay] < 1s");
    CHECK(g.metric == "p99");
    CHECK(g.subject == "GET /pay");
    CHECK(g.threshold == 1000);
    CHECK(parse_live_gate("availability[ Pay ] >= 99.5%").subject == "Pay");
    CHECK(parse_live_gate("faults.phantom >= 1").metric == "faults.phantom");
    CHECK(parse_live_gate("emulator_errors == 0").threshold == 0);
    CHECK_THROWS_AS(parse_live_gate("duplicates == 0"), std::invalid_argument);
    CHECK_THROWS_AS(parse_live_gate("faults.nope >= 1"), std::invalid_argument);
    CHECK_THROWS_AS(parse_live_gate("emulator_errors[GET /pay] == 0"), std::invalid_argument);
    CHECK_THROWS_AS(parse_live_gate("p99[GET /pay < 1s"), std::invalid_argument);
    CHECK_THROWS_AS(parse_live_gate("faults. >= 1"), std::invalid_argument);
    // sim's grammar keeps its own metrics and takes no subject.
    CHECK_THROWS_AS(sim_cli::parse_ensure("p99[GET /pay] < 1s"), std::invalid_argument);
}

TEST_CASE("test gates: figures from the run's records, per route and per function", "[unit]") {
    telemetry::request_stats stats;
    stats.record(record("GET /pay", "Pay", 200, 10));
    stats.record(record("GET /pay", "Pay", 200, 30));
    stats.record(record("POST /pay", "Pay", 503, 300));
    stats.record(record("GET /other", "Other", 429, 5));
    run_figures run;
    run.requests = &stats;
    run.faults_by_kind = {{"phantom", 3}, {"delay", 1}};
    run.faults_missed_by_kind = {{"phantom", 1}};
    run.emulator_errors = 0;
    run.functions = {{"Pay", {5, 2, 0, 0, 0}}, {"Other", {1, 1, 0, 0, 0}}};

    auto figure = [&](const std::string& text) { return gate_figure(parse_live_gate(text), run); };
    CHECK(figure("requests >= 1") == 4.0);
    CHECK(figure("requests[Pay] >= 1") == 3.0);  // a function: every route reaching it
    CHECK(figure("availability >= 0%") == 50.0);  // a 503 and a 429 are not available
    CHECK(figure("availability[GET /pay] >= 0%") == 100.0);
    CHECK(figure("max[GET /pay] < 1s") == Approx(30).epsilon(0.01));
    CHECK(figure("faults.phantom >= 1") == 2.0);  // one taken back
    CHECK(figure("faults >= 1") == 3.0);
    CHECK(figure("faults.throttle == 0") == 0.0);
    CHECK(figure("cold_starts <= 5") == 3.0);
    CHECK(figure("cold_starts[Other] <= 5") == 1.0);
    CHECK_FALSE(figure("cold_starts[Nobody] <= 5"));
    CHECK_FALSE(figure("p99[GET /none] < 1s"));  // no requests: n/a, and the gate fails
    CHECK(figure("requests[GET /none] == 0") == 0.0);
}

TEST_CASE("test reports: JUnit escapes names and counts failures; durations parse", "[unit]") {
    test_outcome o;
    o.command = {"sh", "-c", "echo <&>"};
    o.command_status = 0;
    o.exit_status = 1;
    gate_result passed{parse_live_gate("requests >= 1"), 2.0, true};
    gate_result failed{parse_live_gate("p95 < 300ms"), 412.0, false};
    o.gates = {passed, failed};
    const auto xml = junit_xml(o, nullptr);
    CHECK(xml.find("tests=\"3\" failures=\"1\" errors=\"0\"") != std::string::npos);
    CHECK(xml.find("name=\"p95 &lt; 300ms\"") != std::string::npos);
    CHECK(xml.find("message=\"p95 = 412 ms, not &lt; 300 ms\"") != std::string::npos);
    CHECK(xml.find("echo &lt;&amp;&gt;") != std::string::npos);
    const auto md = markdown_summary(o, nullptr);
    CHECK(md.find("| `p95 < 300ms` | 412 ms | **fail** |") != std::string::npos);
    CHECK(summary_json(o, nullptr)["gates"][1]["passed"] == false);

    CHECK(parse_duration_ms("90s") == 90000);
    CHECK(parse_duration_ms("1500ms") == 1500);
    CHECK(parse_duration_ms("2m") == 120000);
    CHECK(parse_duration_ms("3") == 3000);
    CHECK_THROWS_AS(parse_duration_ms("soon"), std::invalid_argument);
    CHECK_THROWS_AS(parse_duration_ms("5 parsecs"), std::invalid_argument);
}
