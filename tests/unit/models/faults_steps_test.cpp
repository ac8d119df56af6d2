// The decision steps the decider is made of (matches, in_window, fires, apply, log_line),
// called one by one as the simulator calls them, give the decider's decisions.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/faults/faults.hpp"
#include "models/random/random_source.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;
using namespace coldbrew::models::faults;

namespace {

const fault_registry& builtins() {
    static const fault_registry registry = [] {
        fault_registry r;
        register_builtin_faults(r);
        return r;
    }();
    return registry;
}

rule parse(const char* text) {
    return parse_rule(nlohmann::json::parse(text), builtins(), "rule-1");
}

}  // namespace

TEST_CASE("faults: the decision steps, called in order, are the decider", "[unit]") {
    const std::vector<rule> rules = {
        parse(R"j({"name": "third", "route": "POST /pay", "nth": 3,
                  "fault": {"kind": "phantom", "after_share": 0.5}})j"),
        parse(R"j({"name": "hdr", "headers": {"x-a": "1"}, "fault": {"kind": "reset"}})j"),
        parse(R"j({"name": "fifth", "function": "Pay", "every_nth": 5,
                  "fault": {"kind": "gateway_error", "status": 502}})j"),
        parse(R"j({"name": "win", "probability": 0.3, "window": {"from": "1s", "until": "3s"},
                  "fault": {"kind": "delay", "duration": "lognormal(median=10ms, p99=90ms)"}})j"),
        parse(R"j({"name": "inv", "front": "invoke", "first": 4,
                  "fault": {"kind": "throttle"}})j"),
        parse(R"j({"name": "p", "probability": 0.25, "method": "post", "path": "/p*",
                  "fault": {"kind": "function_error", "after": "5ms"}})j"),
    };
    decider d(builtins(), 9);
    d.set_rules(rules, 0.0);
    const random_source rng(9);
    std::map<std::string, std::uint64_t> seen;

    const std::vector<std::pair<std::string, std::string>> with_header = {{"X-A", "1"}};
    std::uint64_t fired = 0;
    for (int i = 0; i < 400; ++i) {
        request_facts f;
        const int pick = i % 3;
        f.where = pick == 2 ? front::invoke : front::gateway;
        f.route = pick == 0 ? "POST /pay" : pick == 1 ? "GET /status" : "Invoke Pay";
        f.method = pick == 1 ? "GET" : "POST";
        f.path = pick == 0 ? "/pay" : pick == 1 ? "/status" : "/2015-03-31/functions/x/invocations";
        f.function = "Pay";
        f.function_name = "stack-Pay-1";
        if (i % 7 == 0) f.headers = &with_header;
        const double now_ms = i * 10.0;

        decision want = d.decide(f, now_ms);

        decision got;
        got.where = f.where;
        for (const rule& r : rules) {
            if (!matches(r, *builtins().find(r.kind), f)) continue;
            if (!in_window(r, now_ms)) continue;
            const std::string key = r.name + "|" + std::string(f.route);
            const std::uint64_t k = seen[key]++;
            if (!fires(r, rng, key, k)) continue;
            got.rule = r.name;
            got.kind = r.kind;
            got.k = k;
            apply(r, rng, key, k, f.where, got.p);
            got.log_line = log_line(f, got);
            break;
        }
        CAPTURE(i, want.log_line);
        CHECK(got.rule == want.rule);
        CHECK(got.k == want.k);
        CHECK(got.log_line == want.log_line);
        CHECK(got.p.delay_ms == want.p.delay_ms);
        fired += !want.rule.empty();
    }
    CHECK(fired > 50);
    // Every rule fired at least once, the header rule included.
    for (const rule& r : rules) CHECK(d.counters().by_rule.count(r.name) == 1);
}

TEST_CASE("faults: selectors choose by the 0-based index k", "[unit]") {
    const rule nth = parse(R"j({"nth": 3, "fault": {"kind": "reset"}})j");
    const rule every = parse(R"j({"every_nth": 2, "fault": {"kind": "reset"}})j");
    const rule first = parse(R"j({"first": 2, "fault": {"kind": "reset"}})j");
    const rule any = parse(R"j({"fault": {"kind": "reset"}})j");
    std::vector<bool> n, e, f;
    for (std::uint64_t k = 0; k < 5; ++k) {
        n.push_back(selects(nth, k));
        e.push_back(selects(every, k));
        f.push_back(selects(first, k));
        CHECK(selects(any, k));
    }
    CHECK(n == std::vector<bool>{false, false, true, false, false});
    CHECK(e == std::vector<bool>{false, true, false, true, false});
    CHECK(f == std::vector<bool>{true, true, false, false, false});
    // Probability 0 never fires, 1 always, without a draw.
    const random_source rng(1);
    CHECK_FALSE(fires(parse(R"j({"probability": 0, "fault": {"kind": "reset"}})j"), rng, "a|b", 0));
    CHECK(fires(any, rng, "a|b", 12345));
}
