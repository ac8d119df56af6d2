#include "emulator/config/scenario_loader.hpp"
#include "models/sim/engine.hpp"

#include <string>

#include "tests/catch.hpp"

using namespace coldbrew;

namespace {

const std::string base = R"(name: t
components:
  api:
    service: api_gateway
    latency: lognormal(median=5ms, p99=20ms)
    calls: [db]
  db:
    service: dynamodb
    latency: fixed(8ms)
    retry: sdk-standard
flow: [api]
)";

config::config_error error_of(const std::string& yaml, const std::vector<config::scenario_override>& o = {}) {
    try {
        config::load_scenario_text(yaml, "s.yaml", o);
    } catch (const config::config_error& e) {
        return e;
    }
    FAIL("no config_error for:\n" << yaml);
    throw;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("scenario: a valid file, availability from the profile's SLA table", "[unit]") {
    const auto l = config::load_scenario_text(base, "s.yaml");
    REQUIRE(l.variants.size() == 1);
    const auto& s = l.variants[0].scenario;
    REQUIRE(s.components.size() == 2);
    CHECK(s.components[0].availability == Approx(0.9995));
    CHECK(s.components[0].timeout_ms == 29000);  // REST integration timeout
    CHECK(s.components[1].availability == Approx(0.9999));
    CHECK(s.components[1].availability_source.find("dynamodb") != std::string::npos);
    CHECK(s.components[1].retry.type == models::sim::retry_policy::kind::sdk_standard);
    CHECK(s.price.region == "us-east-1");
    CHECK(s.requests == 1000000);
}

TEST_CASE("scenario: errors name file, line, column and key path", "[unit]") {
    {
        const auto e = error_of(replace(base, "    latency: fixed(8ms)", "    latncy: fixed(8ms)"));
        CHECK(e.where().file == "s.yaml");
        CHECK(e.where().line == 9);
        CHECK(e.where().column == 5);
        CHECK(e.key_path() == "components.db.latncy");
        CHECK(e.message().find("did you mean 'latency'") != std::string::npos);
    }
    {
        const auto e = error_of(replace(base, "flow: [api]", "flow: [apii]"));
        CHECK(e.where().line == 11);
        CHECK(e.message().find("no component named 'apii'") != std::string::npos);
        CHECK(e.message().find("did you mean 'api'") != std::string::npos);
    }
    {
        const auto e = error_of(replace(base, "fixed(8ms)", "fixed(8 parsecs)"));
        CHECK(e.where().line == 9);
        CHECK(e.where().column >= 14);  // the value (exact column when read from a file)
        CHECK(e.key_path() == "components.db.latency");
    }
    {
        const auto e = error_of(replace(base, "service: dynamodb", "service: mainframe"));
        CHECK(e.message().find("no SLA for service 'mainframe'") != std::string::npos);
        CHECK(e.key_path() == "components.db.service");
    }
    {
        const auto e = error_of(replace(base, "retry: sdk-standard", "retry: {policy: client, jitter: fuzzy}"));
        CHECK(e.key_path() == "components.db.retry.jitter");
        CHECK(e.message().find("full") != std::string::npos);
    }
    {
        const auto e = error_of(replace(base, "retry: sdk-standard", "calls: [api]"));
        CHECK(e.message().find("cycle") != std::string::npos);
    }
    {
        const auto e = error_of(replace(base, "    latency: fixed(8ms)\n", "    latency: fixed(8ms)\n    runtime: nodejs20.x\n"));
        CHECK(e.key_path() == "components.db.runtime");
        CHECK(e.message().find("lambda only") != std::string::npos);
    }
    {
        const auto e = error_of(base + "arrivals: {phases: [{duration: 10s, arivalRate: 5}]}\n");
        CHECK(e.key_path() == "arrivals.phases[0].arivalRate");
        CHECK(e.message().find("did you mean 'arrivalRate'") != std::string::npos);
    }
}

TEST_CASE("scenario: overrides, variants and arrivals", "[unit]") {
    const auto l = config::load_scenario_text(
        base + R"(arrivals:
  phases:
    - {duration: 10s, arrivalRate: 5, rampTo: 50}
    - {duration: 1s, arrivalCount: 500}
variants:
  - {name: plain, set: {components.db.retry: none}}
  - {name: more, set: {components.db.retry.max_attempts: 5}}
)",
        "s.yaml", {{"requests", "1234", "--requests"}});
    REQUIRE(l.variants.size() == 2);
    CHECK(l.variants[0].name == "plain");
    CHECK(l.variants[0].scenario.components[1].retry.type == models::sim::retry_policy::kind::none);
    const auto& more = l.variants[1].scenario.components[1].retry;
    CHECK(more.type == models::sim::retry_policy::kind::sdk_standard);
    CHECK(more.sdk.max_attempts == 5);
    CHECK(l.variants[1].scenario.requests == 1234);
    const auto& phases = l.variants[0].scenario.arrival.phases;
    REQUIRE(phases.size() == 2);
    CHECK(phases[0].ramp_to == 50);
    CHECK(phases[1].arrival_count == 500u);

    const auto bad = error_of(base, {{"components.db.retry.max_attempts", "zero", "--set x"}});
    CHECK(bad.where().file == "--set x");
    CHECK(bad.key_path() == "components.db.retry.max_attempts");
    CHECK(config::parse_override("a.b=3", "x").path == "a.b");
}

TEST_CASE("scenario: a pass of phases must bring requests, and a bounded number of them", "[unit]") {
    const auto none = error_of(base + "arrivals: {phases: [{duration: 1s, arrivalRate: 0}]}\n");
    CHECK(std::string(none.what()).find("brings no request") != std::string::npos);
    const auto tiny = error_of(base + "arrivals: {phases: [{duration: 1s, arrivalRate: 0.001}]}\n");
    CHECK(std::string(tiny.what()).find("brings no request") != std::string::npos);
    const auto huge = error_of(base + "arrivals: {phases: [{duration: 1s, arrivalCount: 1000000000000}]}\n");
    CHECK(std::string(huge.what()).find("at most 5000000") != std::string::npos);
    CHECK_NOTHROW(config::load_scenario_text(
        base + "arrivals: {phases: [{duration: 10s, arrivalRate: 10}, {duration: 1h, arrivalRate: 0}]}\n",
        "s.yaml"));
}

TEST_CASE("scenario: a trailing quiet phase is simulated time too", "[unit]") {
    const auto l = config::load_scenario_text(
        base + "engine: events\nrequests: 100\narrivals: {phases: [{duration: 10s, arrivalRate: 10}, {duration: 1h, arrivalRate: 0}]}\n",
        "s.yaml");
    const auto r = coldbrew::models::sim::run(l.variants[0].scenario, {1, {}});
    CHECK(r.engine == "events");
    CHECK(static_cast<double>(r.simulated_us) / 1e6 >= 3610);
}

TEST_CASE("scenario: an empty parallel branch is an error", "[unit]") {
    const auto e = error_of(replace(base, "flow: [api]", "flow: [{parallel: [[], [api]]}]"));
    CHECK(std::string(e.what()).find("empty branch") != std::string::npos);
}

TEST_CASE("scenario: --set naming no component is an error with a suggestion", "[unit]") {
    const auto e = error_of(base, {config::parse_override("components.dbb.memory_mb=512", "--set")});
    CHECK(std::string(e.what()).find("did you mean 'db'") != std::string::npos);
}
