// The simulator decides fault rules through models/faults: a step that stands for a live
// request gets, attempt by attempt, the decisions a faults::decider gives for the same request
// sequence; selectors count per replication in event order; probabilities hold; each plan has
// its outcome (function_exit discards the environment); and the fast engine agrees with the
// events engine, where both apply, within the bands stated below.

#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/scenario_loader.hpp"
#include "models/faults/faults.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/report.hpp"
#include "tests/catch.hpp"

using namespace coldbrew;
namespace mf = models::faults;
namespace sim = models::sim;

namespace {

const mf::fault_registry& builtins() {
    static const mf::fault_registry registry = [] {
        mf::fault_registry r;
        mf::register_builtin_faults(r);
        return r;
    }();
    return registry;
}

mf::rule rule(const char* text) {
    return mf::parse_rule(nlohmann::json::parse(text), builtins(), "rule-x");
}

config::loaded_scenario load(const std::string& yaml) {
    return config::load_scenario_text(yaml, "test.yaml");
}

sim::live_request gateway(const std::string& method, const std::string& path,
                          const std::string& function) {
    sim::live_request l;
    l.where = mf::front::gateway;
    l.route = method + " " + path;
    l.method = method;
    l.path = path;
    l.function = function;
    l.function_name = "stack-" + function + "-ABC123";
    return l;
}

sim::live_request invoke(const std::string& function) {
    sim::live_request l;
    l.where = mf::front::invoke;
    l.route = "Invoke " + function;
    l.method = "POST";
    l.path = "/2015-03-31/functions/stack-" + function + "-ABC123/invocations";
    l.function = function;
    l.function_name = "stack-" + function + "-ABC123";
    return l;
}

mf::request_facts facts_of(const sim::live_request& l) {
    mf::request_facts f;
    f.where = l.where;
    f.route = l.route;
    f.function = l.function;
    f.function_name = l.function_name;
    f.method = l.method;
    f.path = l.path;
    f.state_machine = l.state_machine;
    f.state_machine_name = l.state_machine_name;
    f.state = l.state;
    f.state_path = l.state_path;
    return f;
}

struct recorded {
    std::uint64_t chunk;
    double at_ms;
    const sim::live_request* request;
    mf::decision d;
};

sim::run_result run_recording(const sim::scenario& s, std::vector<recorded>& out) {
    sim::run_options o;
    o.threads = 1;
    o.on_fault = [&](const sim::fault_record& r) {
        out.push_back({r.chunk, r.at_ms, r.request, r.decision});
    };
    return sim::run(s, o);
}

std::uint64_t fired(const sim::run_result& r, std::size_t rule_index) {
    std::uint64_t n = 0;
    for (std::size_t a = 0; a < sim::fault_action_count; ++a)
        n += r.faults.fired[rule_index * sim::fault_action_count + a];
    return n;
}

}  // namespace

TEST_CASE("sim: a live step's attempts get the decisions a faults::decider gives", "[unit]") {
    // One request at a time (10 per second, each done in well under 100 ms): the events
    // engine's attempt order is the order a live stack would see.
    auto l = load(R"Y(
requests: 600
seed: 3
engine: events
arrivals: {rate: 10}
components:
  pay: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(5ms),
        timeout: 3s}
  ledger: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(3ms),
           timeout: 3s}
flow:
  - {call: pay, timeout: 2s, retry: {policy: client, max_attempts: 3, base: 1ms, cap: 1ms}}
  - {call: ledger, timeout: 2s}
)Y");
    sim::scenario& s = l.variants[0].scenario;
    s.flow[0].live = gateway("POST", "/pay", "pay");
    s.flow[1].live = invoke("ledger");
    s.fault_seed = 77;
    s.fault_rules = {
        rule(R"j({"name": "lose-third", "route": "POST /pay", "nth": 3,
                 "fault": {"kind": "phantom", "when": "before", "client_sees": "reset"}})j"),
        rule(R"j({"name": "ledger-5th", "function": "stack-ledger-ABC123", "every_nth": 5,
                 "fault": {"kind": "gateway_error", "status": 503}})j"),
        rule(R"j({"name": "invoke-first", "front": "invoke", "first": 2,
                 "fault": {"kind": "throttle"}})j"),
        rule(R"j({"name": "needs-header", "headers": {"x-scenario": "retry"},
                 "fault": {"kind": "reset"}})j"),
        rule(R"j({"name": "flaky", "front": "gateway", "method": "post", "path": "/p*",
                 "probability": 0.1,
                 "fault": {"kind": "function_error", "mode": "handler"}})j"),
        rule(R"j({"name": "late", "function": "pay", "probability": 0.2, "window": {"from": "20s"},
                 "fault": {"kind": "delay", "duration": "lognormal(median=4ms, p99=30ms)"}})j"),
        rule(R"j({"name": "crash", "function": "pay", "probability": 0.05,
                 "fault": {"kind": "function_error", "after": "1ms"}})j"),
        rule(R"j({"name": "lost-after", "route": "POST /pay", "probability": 0.05,
                 "fault": {"kind": "phantom", "after_share": 0.5}})j"),
        mf::sla_rule(mf::front::invoke, 97.0, 0.5, mf::client_outcome::timeout, builtins()),
    };
    REQUIRE(sim::engine_for(s) == "events");

    std::vector<recorded> got;
    const sim::run_result r = run_recording(s, got);
    REQUIRE(r.requests == 600);
    REQUIRE(r.chunks == 1);

    // The same request sequence through the live decider, seeded alike, rules added at 0.
    mf::decider live(builtins(), s.fault_seed);
    live.set_rules(s.fault_rules, 0.0);
    std::map<std::string, std::uint64_t> fired_by_rule;
    std::uint64_t pay_attempts = 0, ledger_attempts = 0;
    for (const auto& g : got) {
        REQUIRE(g.request != nullptr);
        const mf::decision want = live.decide(facts_of(*g.request), g.at_ms);
        CAPTURE(g.request->route, g.at_ms, want.log_line, g.d.log_line);
        CHECK(g.d.rule == want.rule);
        CHECK(g.d.kind == want.kind);
        CHECK(g.d.k == want.k);
        CHECK(mf::action_name(g.d.p.act) == mf::action_name(want.p.act));
        CHECK(g.d.p.delay_ms == want.p.delay_ms);
        CHECK(g.d.log_line == want.log_line);
        if (!g.d.rule.empty()) ++fired_by_rule[g.d.rule];
        (g.request == &*s.flow[0].live ? pay_attempts : ledger_attempts) += 1;
    }
    // Every rule that can fire did, the header rule never did; nth fires once in the one
    // replication, "first" twice; the window kept "late" out of the first 20 s.
    CHECK(fired_by_rule["lose-third"] == 1);
    CHECK(fired_by_rule["invoke-first"] == 2);
    CHECK(fired_by_rule["ledger-5th"] > 0);
    CHECK(fired_by_rule.count("needs-header") == 0);
    for (const char* name : {"flaky", "late", "crash", "lost-after", "sla-invoke"})
        CHECK(fired_by_rule[name] > 0);
    for (const auto& g : got)
        if (g.d.rule == "late") CHECK(g.at_ms >= 20000);
    // Retries are decided too (k advances on each attempt), and ledger is only reached when
    // pay succeeded.
    CHECK(pay_attempts > r.requests);
    CHECK(ledger_attempts < r.requests);
    CHECK(pay_attempts + ledger_attempts == got.size());
    CHECK(r.faults.decisions == got.size());
    CHECK(r.components[0].attempts == pay_attempts);
    CHECK(r.components[1].attempts == ledger_attempts);

    // The report counts what fired, as the live summary does.
    const auto j = sim::report_json(s, r);
    REQUIRE(j.contains("faults"));
    CHECK(j["faults"]["by_rule"]["lose-third"].get<std::uint64_t>() == 1);
    CHECK(j["faults"]["by_kind"]["throttle"].get<std::uint64_t>() == 2);
    CHECK(!j.contains("approximations"));
    // The same seed gives the same decisions at any thread count.
    CHECK(sim::report_json(s, sim::run(s, {2, {}, {}})).dump() == j.dump());
}

TEST_CASE("sim: nth, every_nth and first count per replication in the events engine", "[unit]") {
    // Two replications of 10 requests (a phase of 10 arrivals); each request calls three
    // routes at once, one rule per route.
    auto l = load(R"Y(
requests: 20
arrivals: {phases: [{duration: 10s, arrivalCount: 10}]}
components:
  a: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(2ms), cold_start_share: 0}
  b: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(2ms), cold_start_share: 0}
  c: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(2ms), cold_start_share: 0}
flow:
  - parallel: [[a], [b], [c]]
)Y");
    sim::scenario& s = l.variants[0].scenario;
    auto& branches = s.flow[0].branches;
    branches[0][0].live = gateway("GET", "/a", "a");
    branches[1][0].live = gateway("GET", "/b", "b");
    branches[2][0].live = invoke("c");
    s.fault_rules = {
        rule(R"j({"name": "third-a", "route": "GET /a", "nth": 3,
                 "fault": {"kind": "gateway_error", "status": 500}})j"),
        rule(R"j({"name": "every-4th-b", "function": "b", "every_nth": 4,
                 "fault": {"kind": "throttle"}})j"),
        rule(R"j({"name": "first-2-c", "front": "invoke", "first": 2,
                 "fault": {"kind": "function_error", "mode": "handler"}})j"),
    };
    // Every function has a cold_start_share, but the selectors need the events engine.
    CHECK(sim::engine_for(s) == "events");
    std::vector<recorded> got;
    const sim::run_result r = run_recording(s, got);
    CHECK(r.chunks == 2);
    CHECK(fired(r, 0) == 2);      // the 3rd of each replication
    CHECK(fired(r, 1) == 2 * 2);  // 4th and 8th
    CHECK(fired(r, 2) == 2 * 2);  // 1st and 2nd
    for (const auto& g : got) {
        if (g.d.rule == "third-a") CHECK(g.d.k == 2);
        if (g.d.rule == "every-4th-b") CHECK((g.d.k == 3 || g.d.k == 7));
        if (g.d.rule == "first-2-c") CHECK(g.d.k < 2);
    }
    // Failed requests: 1, 2 (first-2-c), 3 (third-a), 4 and 8 (every-4th-b), per replication.
    CHECK(r.requests - r.successes == 10);

    // A forced fast engine refuses what it cannot decide in time order.
    s.engine = sim::scenario::mode::fast;
    CHECK_THROWS_AS(sim::run(s), std::invalid_argument);
    try {
        sim::run(s);
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("third-a") != std::string::npos);
        CHECK(std::string(e.what()).find("events engine") != std::string::npos);
    }
}

TEST_CASE("sim: a probability rule fires at its rate in both engines", "[unit]") {
    auto l = load(R"Y(
requests: 20000
arrivals: {rate: 200}
components:
  fn: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(4ms),
       cold_start_share: 0}
flow: [fn]
)Y");
    sim::scenario& s = l.variants[0].scenario;
    s.flow[0].live = gateway("POST", "/orders", "fn");
    s.fault_rules = {rule(R"j({"name": "p", "probability": 0.2,
                              "fault": {"kind": "function_error", "mode": "handler"}})j")};
    for (const auto mode : {sim::scenario::mode::fast, sim::scenario::mode::events}) {
        s.engine = mode;
        const sim::run_result r = sim::run(s, {2, {}, {}});
        CAPTURE(r.engine);
        const double n = static_cast<double>(r.faults.decisions);
        REQUIRE(n == 20000);
        const double rate = static_cast<double>(fired(r, 0)) / n;
        // 4.5 standard errors of a binomial proportion: a false alarm once in ~150,000 runs.
        CHECK(std::fabs(rate - 0.2) <= 4.5 * std::sqrt(0.2 * 0.8 / n));
        CHECK(r.requests - r.successes == fired(r, 0));
        CHECK(r.components[0].root_causes[sim::cause_error] == fired(r, 0));
        const auto j = sim::report_json(s, r);
        CHECK(j["faults"]["by_kind_action"][0]["action"] == "handler_error");
        // The fast engine says where it approximates: cold starts by share, rules per chunk.
        CHECK(j.contains("approximations") == (r.engine == "fast"));
    }
}

TEST_CASE("sim: a plan's outcome is the live executor's", "[unit]") {
    // One request per second to a 40 ms function; one rule fires on each request from the
    // 2nd: a delay, a lost request (the caller waits its timeout), an exit, an exit that comes
    // too late, a slow response. Each rule is "nth: 2": a rule counts the requests that reach
    // it, and the rules before it that fired kept it from counting theirs.
    auto l = load(R"Y(
requests: 6
engine: events
arrivals: {rate: 1}
client_timeout: 10s
components:
  fn: {service: lambda, runtime: nodejs20.x, availability: 100%, latency: fixed(40ms),
       timeout: 3s, provisioned_concurrency: 0}
flow: [{call: fn, timeout: 2s}]
)Y");
    sim::scenario& s = l.variants[0].scenario;
    s.flow[0].live = gateway("GET", "/x", "fn");
    s.fault_rules = {
        rule(R"j({"name": "d", "nth": 2, "fault": {"kind": "delay", "duration": "25ms"}})j"),
        rule(R"j({"name": "lost", "nth": 2, "fault": {"kind": "phantom", "when": "before"}})j"),
        rule(R"j({"name": "exit", "nth": 2, "fault": {"kind": "function_error", "after": "10ms"}})j"),
        rule(R"j({"name": "late-exit", "nth": 2,
                 "fault": {"kind": "function_error", "after": "500ms"}})j"),
        rule(R"j({"name": "slow", "nth": 2,
                 "fault": {"kind": "slow_response", "bytes_per_s": 1000}})j"),
    };
    const sim::run_result r = sim::run(s);
    const auto& k = r.components[0];
    // Request 3 is lost (phantom, waited 2 s), request 4 crashes (an error); the rest
    // succeed, request 5's exit comes after its answer (missed).
    CHECK(r.requests == 6);
    CHECK(r.successes == 4);
    CHECK(k.root_causes[sim::cause_phantom] == 1);
    CHECK(k.root_causes[sim::cause_error] == 1);
    CHECK(r.faults.missed[3] == 1);
    CHECK(fired(r, 3) == 0);
    CHECK(fired(r, 2) == 1);
    // The crash discarded the environment: request 5 starts cold again (1 and 5 cold; the
    // lost request 3 never reached the function).
    CHECK(k.cold_starts == 2);
    CHECK(k.invocations == 5);
    // slow_response is decided and counted, not simulated.
    const auto j = sim::report_json(s, r);
    CHECK(j["faults"]["not_simulated"]["slow_response"].get<std::uint64_t>() == 1);
    CHECK(j["faults"]["missed"].get<std::uint64_t>() == 1);
    CHECK(j["faults"]["by_action"]["function_exit"].get<std::uint64_t>() == 1);
    CHECK(j["faults"]["by_action"]["phantom_before"].get<std::uint64_t>() == 1);

    // A delay is waited before the attempt: every request takes 40 + 25 ms (fast engine, no
    // cold starts).
    s.fault_rules = {rule(R"j({"name": "d", "fault": {"kind": "delay", "duration": "25ms"}})j")};
    s.components[0].function.cold_start_share = 0;
    s.engine = sim::scenario::mode::fast;
    const sim::run_result d = sim::run(s);
    CHECK(d.successes == 6);
    CHECK(d.latency.quantile_ms(0.5) == Approx(65).epsilon(0.01));
    CHECK(d.latency.max_ms() == Approx(65).epsilon(0.01));
}

// Fast against events where both apply (every function has a cold_start_share, no capacity
// limit, probability rules only). Bands: availability within 4.5 standard errors of the
// difference of two binomial proportions; p50 within 2% and p99 within 8% (30,000 requests
// each: about five standard errors of a p99 estimate); both cold-start shares
// below 0.1% of invocations (the events engine's pool warms once and keeps its environment,
// the fast engine's share is 0.01%). The engines draw differently (different streams), so
// only these statistics, not the single requests, agree.
TEST_CASE("sim: the fast and events engines agree within stated bands", "[unit]") {
    auto l = load(R"Y(
requests: 30000
seed: 11
arrivals: {rate: 50}
components:
  fn: {service: lambda, runtime: python3.12, availability: 100%,
       latency: "lognormal(median=20ms, p99=60ms)", cold_start_share: 0.0001, calls: [db]}
  db: {service: dynamodb, availability: 99.5%, latency: "lognormal(median=5ms, p99=25ms)",
       timeout: 200ms, retry: {policy: client, max_attempts: 2, base: 5ms}}
flow: [fn]
)Y");
    sim::scenario& s = l.variants[0].scenario;
    s.flow[0].live = invoke("fn");
    s.fault_rules = {mf::sla_rule(mf::front::invoke, 99.0, 0.5, mf::client_outcome::reset,
                                  builtins())};
    s.engine = sim::scenario::mode::fast;
    const sim::run_result f = sim::run(s, {2, {}, {}});
    s.engine = sim::scenario::mode::events;
    const sim::run_result e = sim::run(s, {2, {}, {}});
    REQUIRE(f.engine == "fast");
    REQUIRE(e.engine == "events");
    const double n = 30000;
    const double af = static_cast<double>(f.successes) / n;
    const double ae = static_cast<double>(e.successes) / n;
    const double p = (af + ae) / 2;
    CHECK(std::fabs(af - ae) <= 4.5 * std::sqrt(2 * p * (1 - p) / n));
    for (const auto& [q, band] : {std::pair{0.5, 0.02}, std::pair{0.99, 0.08}}) {
        CAPTURE(q, f.latency.quantile_ms(q), e.latency.quantile_ms(q));
        CHECK(std::fabs(f.latency.quantile_ms(q) / e.latency.quantile_ms(q) - 1) <= band);
    }
    for (const auto* r : {&f, &e}) {
        const auto& fn = r->components[0];
        CHECK(static_cast<double>(fn.cold_starts) < 0.001 * static_cast<double>(fn.invocations));
    }
    // The report says which engine approximated cold starts.
    const auto jf = sim::report_json(s, f);
    REQUIRE(jf.contains("approximations"));
    CHECK(jf["approximations"][0]["model"] == "cold_start_share");
    CHECK(!sim::report_json(s, e).contains("approximations"));
}
