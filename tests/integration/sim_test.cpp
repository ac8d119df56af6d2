// `coldbrew sim` on every what-if scenario shipped in examples/whatif/: the real binary, a
// modest request count, the JSON report's fields, and an --ensure gate's exit status.

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;

namespace {

struct result {
    int code = -1;
    std::string out, err;
};

result run_sim(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"sim"};
    args.insert(args.end(), extra.begin(), extra.end());
    coldbrew_process p(args);
    result r;
    r.code = p.wait_exit(std::chrono::seconds(120)).value_or(-1);
    r.out = p.stdout_text();
    r.err = p.stderr_text();
    return r;
}

std::string scenario(const char* name) {
    return (source_dir() / "examples" / "whatif" / name).string();
}

}  // namespace

TEST_CASE("sim: every example scenario runs and reports", "[integration]") {
    for (const char* name : {"compounding.yaml", "payments.yaml", "hot-key.yaml", "burst.yaml"}) {
        CAPTURE(name);
        const result r = run_sim({scenario(name), "--requests", "20000", "--threads", "2", "--json"});
        REQUIRE(r.code == 0);
        const auto j = nlohmann::json::parse(r.out);
        REQUIRE(j.contains("runs"));  // every example compares variants
        REQUIRE(j["runs"].size() >= 2);
        for (const auto& run : j["runs"]) {
            const auto& rep = run["report"];
            CHECK(rep["requests"].get<std::uint64_t>() >= 20000);
            CHECK(rep["availability"]["percent"].get<double>() > 0);
            CHECK(rep["availability"]["ci95_percent"].size() == 2);
            CHECK(rep["latency_ms"].contains("p99.9"));
            CHECK(rep["cost"].contains("per_million_requests"));
            CHECK(rep["cost"]["prices_date"] == "2026-08");
            CHECK(!rep["components"].empty());
        }
    }
}

TEST_CASE("sim: the same seed gives the same JSON at any thread count", "[integration]") {
    const result one = run_sim({scenario("compounding.yaml"), "--requests", "50000", "--threads", "1", "--json"});
    const result three = run_sim({scenario("compounding.yaml"), "--requests", "50000", "--threads", "3", "--json"});
    REQUIRE(one.code == 0);
    CHECK(one.out == three.out);
}

TEST_CASE("sim: --ensure gates exit 1 and say which failed", "[integration]") {
    const result ok = run_sim({scenario("compounding.yaml"), "--requests", "20000", "--ensure",
                               "availability >= 90%", "--ensure", "p95 < 10s"});
    CHECK(ok.code == 0);
    const result bad = run_sim({scenario("compounding.yaml"), "--requests", "20000", "--ensure",
                                "availability >= 99.999%", "--ensure", "p99 < 1ms"});
    CHECK(bad.code == 1);
    CHECK(bad.err.find("ensure failed: availability >= 99.999%") != std::string::npos);
    CHECK(bad.err.find("ensure failed: p99 < 1ms") != std::string::npos);
    const result config = run_sim({scenario("compounding.yaml"), "--set", "components.api.latncy=fixed(1ms)"});
    CHECK(config.code == 2);
    CHECK(config.err.find("did you mean 'latency'") != std::string::npos);
}

TEST_CASE("sim: three parts merged give the single run's JSON byte for byte", "[integration]") {
    // burst.yaml: the events engine, one replication per pass of 1,360 requests, so 20,000
    // requests are 15 replications spread over the 3 parts. The report has no wall-clock field:
    // nothing is excluded from the comparison.
    const std::string s = scenario("burst.yaml");
    const result whole = run_sim({s, "--requests", "20000", "--threads", "2", "--json"});
    REQUIRE(whole.code == 0);
    const auto dir = std::filesystem::temp_directory_path() /
                     ("coldbrew-shard-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<std::string> merge = {"merge"};
    for (int k = 0; k < 3; ++k) {
        const result part = run_sim({s, "--requests", "20000", "--threads", "1", "--shard",
                                     std::to_string(k) + "/3", "--json"});
        REQUIRE(part.code == 0);
        const auto file = dir / ("part-" + std::to_string(k) + ".json");
        std::ofstream(file) << part.out;
        merge.push_back(file.string());
    }
    merge.push_back("--json");
    const result merged = run_sim(merge);
    CHECK(merged.code == 0);
    CHECK(merged.out == whole.out);
    // A part missing is refused.
    const result missing = run_sim({"merge", merge[1], merge[3]});
    CHECK(missing.code == 2);
    CHECK(missing.err.find("parts missing of 3: 1") != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("sim: an app directory runs as the stack up runs, route by route", "[integration]") {
    const std::string app = (source_dir() / "examples" / "payments").string();
    const result r = run_sim({app, "--requests", "20000", "--threads", "2", "--json"});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["requests"].get<std::uint64_t>() == 20000);
    REQUIRE(j.contains("entries"));
    std::vector<std::string> routes;
    for (const auto& e : j["entries"]) routes.push_back(e["name"].get<std::string>());
    CHECK(routes == std::vector<std::string>{"POST /{variant}/payment_intents",
                                             "POST /{variant}/payment_intents/{id}/confirm",
                                             "GET /{variant}/payment_intents/{id}", "GET /{variant}/charges"});
    CHECK(j["stack"]["not_simulated"].empty());
    bool payments = false;
    for (const auto& c : j["components"]) payments = payments || c["name"] == "Payments";
    CHECK(payments);
}
