// A what-if fitted to a recorded live run (`sim PATH --fit FILE`). examples/payments runs live
// under a fault rule added through the admin API; its record replays to the same decisions;
// the fitted run's latency percentiles and availability fall within the bands the README
// states; the sections --fit-out writes read back as coldbrew.yaml; ten times the traffic and
// a sweep over memory sizes run from the same record. examples/fanout's SDK calls are fitted
// as the orchestrator's calls.

#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

// The bands the README states for a fitted what-if against the live run it was fitted to.
bool within(double live, double sim, double share, double floor_ms) {
    return std::fabs(sim - live) <= std::max(share * live, floor_ms);
}

}  // namespace

TEST_CASE("fit: a what-if fitted to a recorded run of examples/payments reproduces its latency and availability",
          "[integration]") {
    const auto app = source_dir() / "examples" / "payments";
    temp_dir out;
    const auto rec = out.path() / "run.jsonl";
    const auto summary = out.path() / "live.json";
    const auto decisions = out.path() / "live-decisions.jsonl";
    const auto fitted = out.path() / "fitted.yaml";
    const std::string store = "StorePath=" + (out.path() / "store.db").string();
    const auto traffic = source_dir() / "tests" / "fixtures" / "fit" / "payments_traffic.py";

    // 120 checkouts from 4 clients: 420 requests.
    auto live = run_to_exit({"test", app.string(), "--seed", "7", "--record", rec.string(), "--decision-log",
                             decisions.string(), "--summary-json", summary.string(), "--log", (out.path() / "test.log").string(),
                             "--parameter-overrides", store, "--", "python3", traffic.string(), "120", "4"},
                            std::chrono::seconds(120));
    INFO(live.out << live.err << read_file(out.path() / "test.log"));
    REQUIRE(live.code == 0);
    const json run = json::parse(read_file(summary))["run"];
    const double live_requests = run["requests"].get<double>();
    REQUIRE(live_requests == 420);
    double live_failed = 0;
    for (const auto& [status, n] : run["by_status"].items())
        if (std::stoi(status) >= 500) live_failed += n.get<double>();
    CHECK(live_failed > 0);  // the rule added at run time fired
    const double live_availability = 100.0 * (1.0 - live_failed / live_requests);
    const double live_p50 = run["latency_ms"]["p50"].get<double>();
    const double live_p95 = run["latency_ms"]["p95"].get<double>();

    // The record replays to the live run's decisions: four clients at once on a cold pool,
    // and a rule added through the admin API part way.
    auto replay = run_to_exit({"sim", app.string(), "--replay", rec.string(), "--compare", decisions.string(),
                               "--parameter-overrides", store});
    INFO(replay.out << replay.err);
    CHECK(replay.code == 0);
    CHECK(replay.out.find("decision logs agree") != std::string::npos);

    auto sim = run_to_exit({"sim", app.string(), "--fit", rec.string(), "--requests", "20000", "--json", "--fit-out",
                            fitted.string(), "--parameter-overrides", store});
    INFO(sim.err);
    REQUIRE(sim.code == 0);
    const json report = json::parse(sim.out);
    const double sim_availability = report["availability"]["percent"].get<double>();
    const double sim_p50 = report["latency_ms"]["p50"].get<double>();
    const double sim_p95 = report["latency_ms"]["p95"].get<double>();
    INFO("live: availability " << live_availability << "% p50 " << live_p50 << " ms p95 " << live_p95
                               << " ms; fitted: availability " << sim_availability << "% p50 " << sim_p50
                               << " ms p95 " << sim_p95 << " ms");
    // The record's seed and the rule the admin API added carry over: the fitted run fails
    // confirms at the rule's rate, with the live run's draws for the first of them.
    CHECK(report["seed"] == 7);
    CHECK(report.dump().find("confirm-502") != std::string::npos);
    CHECK(std::fabs(sim_availability - live_availability) <= 2.0);
    CHECK(within(live_p50, sim_p50, 0.35, 1.5));
    CHECK(within(live_p95, sim_p95, 0.5, 5.0));
    // The routes' mix is the recorded one: confirms are 120 of 420.
    bool confirm_seen = false;
    for (const auto& e : report["entries"]) {
        if (e["name"] == "POST /{variant}/payment_intents/{id}/confirm") {
            confirm_seen = true;
            CHECK(e["weight_percent"].get<double>() == Approx(100.0 * 120 / 420).margin(0.01));
        }
    }
    CHECK(confirm_seen);

    // What was fitted reads back as coldbrew.yaml: a copy of the app with it (the sections, the
    // record's seed and the rule the admin API added) runs the fitted run again.
    {
        temp_dir copy;
        std::filesystem::copy(app, copy.path(), std::filesystem::copy_options::recursive);
        std::filesystem::remove(copy.path() / "coldbrew.yaml");
        const std::string text = read_file(fitted);
        CHECK(text.find("latency: \"percentiles(") != std::string::npos);
        CHECK(text.find("confirm-502") != std::string::npos);
        copy.write("coldbrew.yaml", "max_environments: 10\n" + text);
        auto again = run_to_exit({"sim", copy.path().string(), "--requests", "20000", "--json",
                                  "--parameter-overrides", store});
        INFO(again.err);
        REQUIRE(again.code == 0);
        const json r2 = json::parse(again.out);
        CHECK(within(sim_p50, r2["latency_ms"]["p50"].get<double>(), 0.1, 0.2));
        CHECK(r2["seed"] == 7);
        CHECK(r2["availability"]["percent"].get<double>() == Approx(sim_availability).margin(0.01));
    }

    // Ten times the traffic, from the same record.
    auto tenfold = run_to_exit({"sim", app.string(), "--fit", rec.string(), "--rate-scale", "10", "--requests",
                                "20000", "--json", "--parameter-overrides", store});
    INFO(tenfold.err);
    REQUIRE(tenfold.code == 0);
    const json r10 = json::parse(tenfold.out);
    CHECK(r10["requests"] == 20000);
    // The same requests in a tenth of the time.
    CHECK(r10["simulated_s"].get<double>() < report["simulated_s"].get<double>() / 5);

    // A sweep over memory sizes: the handler's CPU work (measured live where the kernel says)
    // takes longer with less memory, and the duration is billed at each size.
    auto sweep = run_to_exit({"sim", app.string(), "--fit", rec.string(), "--requests", "20000", "--json",
                              "--sweep", "components.Payments.memory_mb=128,1769", "--parameter-overrides", store});
    INFO(sweep.err);
    REQUIRE(sweep.code == 0);
    const json runs = json::parse(sweep.out)["runs"];
    REQUIRE(runs.size() == 2);
    const json& small = runs[0]["report"];
    const json& large = runs[1]["report"];
    CHECK(small["cost"]["per_million_requests"].get<double>() != large["cost"]["per_million_requests"].get<double>());
    if (read_file(rec).find("\"cpu_ms\"") != std::string::npos)
        CHECK(small["latency_ms"]["p50"].get<double>() > large["latency_ms"]["p50"].get<double>());
}

TEST_CASE("fit: calls a handler makes through the AWS SDK are fitted as its calls, not as client traffic",
          "[integration]") {
    const auto fanout = source_dir() / "examples" / "fanout";
    if (!std::filesystem::exists(fanout / "orchestrator" / "node_modules" / "@aws-sdk" / "client-lambda"))
        FAIL("@aws-sdk/client-lambda is not installed in examples/fanout/orchestrator: run tools/setup.sh");
    temp_dir out;
    const auto rec = out.path() / "run.jsonl";
    {
        coldbrew_process cb({"up", fanout.string(), "--port", "0", "--invoke-port", "0", "--seed", "1", "--record",
                             rec.string()});
        const int port = cb.wait_for_port();
        // Each request: the orchestrator invokes 3 workers at once through the SDK.
        for (int i = 0; i < 4; ++i)
            REQUIRE(http_request(port, "GET", "/fanout?workers=3&items=3000&seed=" + std::to_string(i)).status == 200);
        cb.signal(SIGINT);
        REQUIRE(cb.wait_exit() == 0);
    }
    const std::string record = read_file(rec);
    CHECK(record.find("\"parent\":0") != std::string::npos);  // the first request's workers

    auto sim = run_to_exit({"sim", fanout.string(), "--fit", rec.string(), "--requests", "2000"});
    INFO(sim.out << sim.err);
    REQUIRE(sim.code == 0);
    CHECK(sim.out.find("4 client requests") != std::string::npos);
    CHECK(sim.out.find("calls [Worker, Worker, Worker]") != std::string::npos);
    // The mix is the route alone: the workers' invocations came from inside the orchestrator.
    CHECK(sim.out.find("Invoke Worker") == std::string::npos);
}
