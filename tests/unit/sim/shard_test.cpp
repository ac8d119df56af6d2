// Runs split into parts: a run_result read back from its JSON is the same result; parts of a
// run, through their part files, merge to the whole run's result and report, byte for byte,
// for both engines, any part count and any thread count; parts that do not make one whole run
// are refused.

#include <functional>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "emulator/config/scenario_loader.hpp"
#include "emulator/sim_cli/shard.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/part.hpp"
#include "models/sim/report.hpp"
#include "tests/catch.hpp"

using namespace coldbrew;
using models::sim::run;
using models::sim::run_result;

namespace {

// Fast engine: 5 chunks of 65,536 requests (the last one shorter; split 7 ways, two parts are
// empty), retries, lost answers and duplicate writes.
const char* fast_yaml = R"Y(
seed: 11
requests: 300000
components:
  api: {service: api_gateway, latency: "lognormal(median=2ms, p99=10ms)", calls: [fn]}
  fn:
    service: lambda
    runtime: nodejs20.x
    memory_mb: 512
    cold_start_share: 0.01
    latency: "lognormal(median=10ms, p99=40ms)"
    calls: [{call: db, retry: {policy: sdk-standard, max_attempts: 3, base: 10ms}}]
  db:
    service: dynamodb
    availability: 99%
    failures: {error: 0.5, phantom_after: 0.5}
    latency: "lognormal(median=4ms, p99=20ms)"
    timeout: 100ms
    writes: true
    idempotent: false
flow: [api]
)Y";

// Events engine: the pool policy (cold starts, keep-alive), a queue; a pass of the phases is
// one replication, 10 of them.
const char* events_yaml = R"Y(
seed: 5
requests: 3000
arrivals:
  phases:
    - {duration: 2s, arrivalRate: 50}
    - {duration: 1s, arrivalCount: 200}
components:
  api: {service: api_gateway, latency: "lognormal(median=3ms, p99=12ms)", calls: [fn]}
  fn:
    service: lambda
    runtime: nodejs20.x
    memory_mb: 1024
    package_mb: 5
    latency: "lognormal(median=30ms, p99=120ms)"
    timeout: 3s
    calls: [{call: db, cache: {hit_ratio: 0.3, latency: fixed(0.5ms)}}]
  db:
    service: dynamodb
    availability: 99.5%
    latency: "lognormal(median=6ms, p99=25ms)"
    capacity: {concurrency: 4, queue: 50}
    timeout: 1s
    retry: sdk-standard
flow: [api]
)Y";

config::loaded_scenario load(const std::string& yaml, const std::vector<config::scenario_override>& o = {}) {
    return config::load_scenario_text(yaml, "test.yaml", o);
}

std::string identity_of(const config::loaded_scenario& l) {
    std::vector<sim_cli::identity_run> ids;
    for (const auto& v : l.variants) ids.push_back({v.name, &v.scenario, v.profile.get()});
    return sim_cli::runs_identity(ids);
}

// Part k of n of `l`'s only run, as `sim --shard` writes it and `sim merge` reads it back.
sim_cli::part make_part(const config::loaded_scenario& l, std::uint64_t k, std::uint64_t n, unsigned threads) {
    sim_cli::part p;
    p.identity = identity_of(l);
    p.shard = {k, n};
    p.command.scenario = "test.yaml";
    models::sim::run_options ro;
    ro.threads = threads;
    ro.shard_index = k;
    ro.shard_count = n;
    p.runs.push_back({"run", run(l.variants[0].scenario, ro)});
    const auto text = sim_cli::part_to_json(p).dump();
    return sim_cli::part_from_json(nlohmann::json::parse(text), "part-" + std::to_string(k) + ".json");
}

void check_split(const char* yaml, const char* engine,
                 const std::function<void(models::sim::scenario&)>& edit = {}) {
    auto l = load(yaml);
    if (edit) edit(l.variants[0].scenario);
    const auto& s = l.variants[0].scenario;
    REQUIRE(models::sim::engine_for(s) == engine);
    const run_result whole = run(s, {2, {}});
    REQUIRE(whole.chunks >= 5);
    const std::string report = models::sim::report_json(s, whole).dump();
    // 1 and 2 threads per part for one split (the threads' share of the chunks differs, the
    // result must not), 2 for the others.
    const std::pair<std::uint64_t, unsigned> splits[] = {{1, 2}, {3, 1}, {3, 2}, {7, 2}};
    for (const auto& [n, threads] : splits) {
        {
            CAPTURE(n, threads);
            std::vector<sim_cli::part> parts;
            // In an order other than K's, as a shell glob of part-10 … part-2 would give.
            for (std::uint64_t k = n; k-- > 0;) parts.push_back(make_part(l, k, n, threads));
            for (const auto& p : parts) {
                CHECK(p.runs[0].result.requests < whole.requests + (n == 1 ? 1 : 0));
                CHECK(p.runs[0].result.chunks >= whole.chunks / n);
            }
            const auto merged = sim_cli::merge_parts(parts);
            REQUIRE(merged.size() == 1);
            CHECK(merged[0] == whole);
            CHECK(models::sim::report_json(s, merged[0]).dump() == report);
        }
    }
}

}  // namespace

TEST_CASE("sim part: a run_result read back from its JSON is the same result", "[unit]") {
    for (const char* yaml : {fast_yaml, events_yaml}) {
        const auto l = load(yaml, {{"requests", "3000"}});
        const run_result r = run(l.variants[0].scenario, {2, {}});
        REQUIRE(r.components.size() == 3);
        REQUIRE(r.latency.count() > 0);
        const auto back = models::sim::run_result_from_json(
            nlohmann::json::parse(models::sim::run_result_to_json(r).dump()), "p.json", "result");
        CHECK(back == r);
        CHECK(models::sim::run_result_to_json(back).dump() == models::sim::run_result_to_json(r).dump());
    }
    // Empty histograms and values past the top bucket keep their exact state.
    run_result r;
    r.engine = "fast";
    r.components.resize(1);
    r.latency.record_ns(0);
    r.latency.record_ns(1ull << 50);
    const auto back = models::sim::run_result_from_json(
        nlohmann::json::parse(models::sim::run_result_to_json(r).dump()), "p.json", "result");
    CHECK(back == r);
    CHECK(back.latency.max_ms() == r.latency.max_ms());
    CHECK(back.components[0].latency.count() == 0);
}

TEST_CASE("sim part: reading names the file and the key of a problem", "[unit]") {
    const auto l = load(fast_yaml, {{"requests", "1000"}});
    const auto good = nlohmann::json::parse(models::sim::run_result_to_json(run(l.variants[0].scenario)).dump());
    auto expect = [](const nlohmann::json& j, const std::string& key) {
        try {
            (void)models::sim::run_result_from_json(j, "part-3.json", "runs[0].result");
            FAIL("read without an error");
        } catch (const models::sim::part_error& e) {
            CHECK(e.file() == "part-3.json");
            CHECK(e.key() == key);
            CHECK(std::string(e.what()).rfind("part-3.json: " + key + ": ", 0) == 0);
        }
    };
    auto j = good;
    j["components"][1].erase("cold_starts");
    expect(j, "runs[0].result.components[1].cold_starts");
    j = good;
    j["components"][0]["attempt_failures"]["phantom"] = -1;
    expect(j, "runs[0].result.components[0].attempt_failures.phantom");
    j = good;
    j["latency"]["count"] = j["latency"]["count"].get<std::uint64_t>() + 1;
    expect(j, "runs[0].result.latency.count");
    j = good;
    j["latency"]["buckets"][0][0] = models::sim::histogram::bucket_count;
    expect(j, "runs[0].result.latency.buckets[0]");
    j = good;
    j["engine"] = "slow";
    expect(j, "runs[0].result.engine");
}

TEST_CASE("sim shard: the fast engine's parts merge to the whole run", "[unit]") {
    check_split(fast_yaml, "fast");
}

TEST_CASE("sim shard: the events engine's parts merge to the whole run", "[unit]") {
    check_split(events_yaml, "events");
}

TEST_CASE("sim shard: fault rules' counts merge to the whole run's", "[unit]") {
    // The api → fn hop stands for a live gateway request; two rules decide it, so every part
    // carries per-rule, per-action counts and the merge must add them exactly.
    static models::faults::fault_registry registry;
    if (registry.names().empty()) models::faults::register_builtin_faults(registry);
    auto with_rules = [](models::sim::scenario& s) {
        models::sim::live_request live;
        live.route = "GET /pay";
        live.function = "fn";
        live.method = "GET";
        live.path = "/pay";
        s.components[0].calls.at(0).live = live;
        s.fault_rules.push_back(models::faults::parse_rule(
            nlohmann::json::parse(R"J({"name":"lose","route":"GET /pay","probability":0.02,
                                      "fault":{"kind":"phantom","when":"after"}})J"),
            registry, "lose"));
        s.fault_rules.push_back(models::faults::parse_rule(
            nlohmann::json::parse(R"J({"name":"slow","function":"fn","probability":0.05,
                                      "fault":{"kind":"delay","duration":"fixed(20ms)"}})J"),
            registry, "slow"));
        s.fault_seed = 3;
    };
    check_split(events_yaml, "events", with_rules);
    // And the counts themselves travel: a run that fired faults reads back equal.
    auto l = load(events_yaml, {{"requests", "600"}});
    with_rules(l.variants[0].scenario);
    const run_result r = run(l.variants[0].scenario, {1, {}});
    REQUIRE(r.faults.total() > 0);
    const auto back = models::sim::run_result_from_json(
        nlohmann::json::parse(models::sim::run_result_to_json(r).dump()), "p.json", "result");
    CHECK(back == r);
}

TEST_CASE("sim shard: K/N is parsed and checked", "[unit]") {
    CHECK(sim_cli::parse_shard("0/1").count == 1);
    CHECK(sim_cli::parse_shard("6/7").index == 6);
    for (const char* bad : {"", "3", "7/7", "1/0", "-1/3", "a/3", "1/3x", "1/"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(sim_cli::parse_shard(bad), std::invalid_argument);
    }
    const auto l = load(fast_yaml, {{"requests", "1000"}});
    models::sim::run_options ro;
    ro.shard_index = 3;
    ro.shard_count = 3;
    CHECK_THROWS_AS(run(l.variants[0].scenario, ro), std::invalid_argument);
}

TEST_CASE("sim shard: the identity changes with the seed, the requests and every --set", "[unit]") {
    const std::string base = identity_of(load(fast_yaml));
    CHECK(identity_of(load(fast_yaml)) == base);
    CHECK(base.size() == 32);
    CHECK(identity_of(load(fast_yaml, {{"seed", "12"}})) != base);
    CHECK(identity_of(load(fast_yaml, {{"requests", "300001"}})) != base);
    CHECK(identity_of(load(fast_yaml, {{"components.db.timeout", "101ms"}})) != base);
    CHECK(identity_of(load(fast_yaml, {{"components.db.availability", "99.0001%"}})) != base);
    CHECK(identity_of(load(fast_yaml, {{"components.fn.memory_mb", "1024"}})) != base);
    CHECK(identity_of(load(fast_yaml, {{"components.api.latency", "lognormal(median=2ms, p99=11ms)"}})) != base);
    CHECK(identity_of(load(fast_yaml, {{"components.db.retry", "sdk-standard"}})) != base);
    // The same value written another way resolves the same.
    CHECK(identity_of(load(fast_yaml, {{"seed", "11"}})) == base);
}

TEST_CASE("sim shard: parts that do not make one whole run are refused", "[unit]") {
    const auto l = load(events_yaml, {{"requests", "1200"}});
    std::vector<sim_cli::part> parts;
    for (std::uint64_t k = 0; k < 3; ++k) parts.push_back(make_part(l, k, 3, 1));
    REQUIRE_NOTHROW(sim_cli::merge_parts(parts));
    auto refused = [](const std::vector<sim_cli::part>& ps, const std::string& words) {
        try {
            (void)sim_cli::merge_parts(ps);
            FAIL("merged");
        } catch (const std::invalid_argument& e) {
            CHECK_THAT(e.what(), Catch::Contains(words));
        }
    };
    // Another run: another seed.
    auto other = parts;
    other[1] = make_part(load(events_yaml, {{"requests", "1200"}, {"seed", "6"}}), 1, 3, 1);
    refused(other, "part-1.json is a part of another run than part-0.json");
    // A part missing.
    refused({parts[0], parts[2]}, "parts missing of 3: 1");
    // A part given twice.
    refused({parts[0], parts[1], parts[1], parts[2]}, "part 1 of 3 is given twice: part-1.json and part-1.json");
    // Parts of another split of the same run.
    auto split = parts;
    split[2] = make_part(l, 2, 4, 1);
    refused(split, "is part 2 of 4 but part-0.json is part 0 of 3");
    refused({}, "no part files");
}

TEST_CASE("sim shard: a part file is checked as it is read", "[unit]") {
    const auto l = load(events_yaml, {{"requests", "600"}});
    const auto p = make_part(l, 0, 2, 1);
    const auto good = nlohmann::json::parse(sim_cli::part_to_json(p).dump());
    auto expect = [](const nlohmann::json& j, const std::string& key) {
        try {
            (void)sim_cli::part_from_json(j, "p.json");
            FAIL("read");
        } catch (const models::sim::part_error& e) {
            CHECK(e.file() == "p.json");
            CHECK(e.key() == key);
        }
    };
    auto j = good;
    j["format"] = "something-else";
    expect(j, "format");
    j = good;
    j["version"] = 2;
    expect(j, "version");
    j = good;
    j["shard"]["index"] = 2;
    expect(j, "shard");
    j = good;
    j.erase("identity");
    expect(j, "identity");
    j = good;
    j["runs"][0]["result"]["components"][2]["latency"].erase("sum_us");
    expect(j, "runs[0].result.components[2].latency.sum_us");
    CHECK(sim_cli::part_from_json(good, "p.json").runs[0].result == p.runs[0].result);
}
