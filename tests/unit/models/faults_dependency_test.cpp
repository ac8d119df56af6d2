// The dependency front of the fault model: rules naming a dependency and a phase, which kinds
// apply to which front, decisions on "<dependency> <phase>" routes, and availability rules.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/faults/faults.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;
using namespace coldbrew::models::faults;
using json = nlohmann::json;

namespace {

const fault_registry& builtins() {
    static const fault_registry registry = [] {
        fault_registry r;
        register_builtin_faults(r);
        return r;
    }();
    return registry;
}

rule parse(const json& j) {
    return parse_rule(j, builtins(), "rule-1");
}

rule parse(const char* text) {
    return parse(json::parse(text));
}

struct failure {
    std::string path = "<no error>";
    std::string message;
};

failure failure_of(const char* text) {
    try {
        (void)parse(text);
    } catch (const rule_error& e) {
        return {e.path(), e.message()};
    }
    return {};
}

// A connection to a dependency, or a request turn on it, as the proxy describes it.
struct dependency_event {
    std::string dependency = "redis";
    dependency_phase on = dependency_phase::request;
    std::string function = "Worker";
    std::string route;

    request_facts facts() {
        route = dependency + " " + std::string(to_string(on));
        request_facts f;
        f.where = front::dependency;
        f.function = function;
        f.route = route;
        f.dependency = dependency;
        f.on = on;
        return f;
    }
};

dependency_event connect_to(const std::string& dependency) {
    dependency_event e;
    e.dependency = dependency;
    e.on = dependency_phase::connect;
    return e;
}

dependency_event request_on(const std::string& dependency) {
    dependency_event e;
    e.dependency = dependency;
    e.on = dependency_phase::request;
    return e;
}

request_facts gateway_request() {
    request_facts f;
    f.where = front::gateway;
    f.function = "Worker";
    f.route = "POST /pay";
    f.method = "POST";
    f.path = "/pay";
    return f;
}

request_facts invoke_request() {
    request_facts f;
    f.where = front::invoke;
    f.function = "Worker";
    f.route = "Invoke Worker";
    return f;
}

decider with_rules(std::initializer_list<const char*> texts, std::uint64_t seed = 42) {
    decider d(builtins(), seed);
    std::vector<rule> rules;
    for (const char* t : texts)
        rules.push_back(parse(t));
    d.set_rules(std::move(rules), 0);
    return d;
}

bool fires(decider& d, request_facts facts) {
    return !d.decide(facts, 0).rule.empty();
}

bool fires(decider& d, dependency_event e) {
    return fires(d, e.facts());
}

}  // namespace

// --- parsing ------------------------------------------------------------------------------

TEST_CASE("dependency rules: a dependency implies its front; on picks a phase", "[unit]") {
    const rule r = parse(R"({"name": "stall", "dependency": "redis", "on": "request",
                             "probability": 0.1,
                             "fault": {"kind": "hang", "close_after": "30s"}})");
    CHECK(r.only_front == front::dependency);
    CHECK(r.dependency == "redis");
    CHECK(r.on == dependency_phase::request);
    CHECK(r.kind == "hang");
    const json canonical = r.to_json();
    CHECK(canonical == json::parse(R"({"name": "stall", "front": "dependency",
                                       "dependency": "redis", "on": "request",
                                       "probability": 0.1,
                                       "fault": {"kind": "hang", "close_after": 30000}})"));
    const rule again = parse(canonical);
    CHECK(again.to_json() == canonical);
    CHECK(again.describe() == r.describe());
    CHECK(r.describe() == "stall: dependency redis, on request, 10% → hang, close after 30s");

    // The front may be given too, as long as it agrees.
    const rule both = parse(R"({"front": "dependency", "dependency": "db",
                                "fault": {"kind": "refuse"}})");
    CHECK(both.only_front == front::dependency);
    CHECK_FALSE(both.on);
    CHECK(both.describe() == "rule-1: dependency db → refuse");

    // Every dependency, connections only.
    const rule any = parse(R"({"front": "dependency", "on": "connect",
                               "fault": {"kind": "delay", "duration": "2ms"}})");
    CHECK(any.dependency.empty());
    CHECK(any.on == dependency_phase::connect);
    CHECK(any.to_json() == json::parse(R"j({"name": "rule-1", "front": "dependency",
                                           "on": "connect", "fault": {"kind": "delay",
                                           "duration": "fixed(2ms)"}})j"));
    CHECK(parse(any.to_json()).to_json() == any.to_json());
    CHECK(any.describe() == "rule-1: dependency only, on connect → delay fixed(2ms)");

    // A function matcher works there too (the environment that opened the connection).
    CHECK(parse(R"({"dependency": "redis", "function": "Worker",
                    "fault": {"kind": "reset"}})")
              .function == "Worker");
}

TEST_CASE("dependency rules: errors name the key", "[unit]") {
    struct bad {
        const char* rule;
        const char* path;
    };
    const bad cases[] = {
        {R"({"front": "upstream", "fault": {"kind": "reset"}})", "front"},
        {R"({"dependency": "", "fault": {"kind": "reset"}})", "dependency"},
        {R"({"dependency": 5, "fault": {"kind": "reset"}})", "dependency"},
        {R"({"dependency": ["redis"], "fault": {"kind": "reset"}})", "dependency"},
        {R"({"front": "gateway", "dependency": "redis", "fault": {"kind": "reset"}})", "front"},
        {R"({"front": "invoke", "dependency": "redis", "fault": {"kind": "reset"}})", "front"},
        {R"({"on": "connect", "fault": {"kind": "reset"}})", "on"},
        {R"({"front": "any", "on": "connect", "fault": {"kind": "reset"}})", "on"},
        {R"({"front": "gateway", "on": "request", "fault": {"kind": "reset"}})", "on"},
        {R"({"dependency": "redis", "on": "accept", "fault": {"kind": "reset"}})", "on"},
        {R"({"dependency": "redis", "on": "Connect", "fault": {"kind": "reset"}})", "on"},
        {R"({"dependency": "redis", "on": 1, "fault": {"kind": "reset"}})", "on"},
        {R"({"dependency": "redis", "on": null, "fault": {"kind": "reset"}})", "on"},
        // Kinds that mean nothing on the rule's front.
        {R"({"dependency": "redis", "fault": {"kind": "phantom"}})", "fault.kind"},
        {R"({"front": "dependency", "fault": {"kind": "gateway_error", "status": 503}})",
         "fault.kind"},
        {R"({"dependency": "redis", "fault": {"kind": "function_error"}})", "fault.kind"},
        {R"({"dependency": "redis", "fault": {"kind": "throttle"}})", "fault.kind"},
        {R"({"front": "gateway", "fault": {"kind": "hang"}})", "fault.kind"},
        {R"({"front": "invoke", "fault": {"kind": "refuse"}})", "fault.kind"},
        // refuse decides connections only.
        {R"({"dependency": "redis", "on": "request", "fault": {"kind": "refuse"}})", "on"},
        // The kind's own keys are still checked first.
        {R"({"dependency": "redis", "fault": {"kind": "hang", "close_after": "x"}})",
         "fault.close_after"},
    };
    for (const auto& c : cases) {
        INFO(c.rule);
        CHECK(failure_of(c.rule).path == c.path);
    }
    // Valid: the kinds the dependency front takes, and any-front rules of any kind.
    for (const char* ok : {
             R"({"dependency": "redis", "fault": {"kind": "delay", "duration": "5ms"}})",
             R"({"dependency": "redis", "fault": {"kind": "reset"}})",
             R"({"dependency": "redis", "fault": {"kind": "slow_response", "bytes_per_s": 10}})",
             R"({"dependency": "redis", "on": "connect", "fault": {"kind": "refuse"}})",
             R"({"dependency": "redis", "fault": {"kind": "hang"}})",
             R"({"fault": {"kind": "refuse"}})",
             R"({"front": "any", "fault": {"kind": "hang"}})",
             R"({"fault": {"kind": "phantom"}})",
         }) {
        INFO(ok);
        CHECK(failure_of(ok).path == "<no error>");
    }
}

TEST_CASE("dependency rules: error messages say which fronts a kind applies to", "[unit]") {
    CHECK(failure_of(R"({"dependency": "redis", "fault": {"kind": "phantom"}})").message ==
          "'phantom' applies to the gateway, invoke and states fronts, not the dependency front");
    CHECK(failure_of(R"({"front": "gateway", "fault": {"kind": "hang"}})").message ==
          "'hang' applies to the dependency front, not the gateway front");
    CHECK(failure_of(R"({"front": "dependency", "fault": {"kind": "throttle"}})").message ==
          "'throttle' applies to the gateway, invoke and states fronts, not the dependency front");
    CHECK(failure_of(R"({"front": "weird", "fault": {"kind": "reset"}})").message ==
          R"(expected "gateway", "invoke", "dependency", "states" or "any", got "weird")");
    CHECK(failure_of(R"({"on": "connect", "fault": {"kind": "reset"}})").message ==
          R"(only applies to the dependency front (give "dependency" or "front": "dependency"))");
    CHECK(failure_of(R"({"dependency": "x", "on": "later", "fault": {"kind": "reset"}})")
              .message == R"(expected "connect" or "request", got "later")");
    CHECK(failure_of(R"({"front": "invoke", "dependency": "x", "fault": {"kind": "reset"}})")
              .message.find("not invoke") != std::string::npos);
    CHECK(failure_of(R"({"dependency": "x", "on": "request", "fault": {"kind": "refuse"}})")
              .message.find("only applies when a connection is made") != std::string::npos);
}

TEST_CASE("dependency rules: rules built in code are checked when set", "[unit]") {
    decider d(builtins(), 1);
    rule hang_on_gateway = parse(R"({"fault": {"kind": "hang"}})");
    hang_on_gateway.only_front = front::gateway;
    try {
        d.set_rules({parse(R"({"name": "ok", "fault": {"kind": "reset"}})"), hang_on_gateway},
                    0);
        FAIL("a hang rule for the gateway front was accepted");
    } catch (const rule_error& e) {
        CHECK(e.path() == "[1].fault.kind");
    }
    rule on_without_front = parse(R"({"fault": {"kind": "reset"}})");
    on_without_front.on = dependency_phase::connect;
    try {
        d.add_rules({on_without_front}, 0);
        FAIL("a phase without the dependency front was accepted");
    } catch (const rule_error& e) {
        CHECK(e.path() == "[0].on");
    }
    rule named_on_invoke = parse(R"({"fault": {"kind": "reset"}})");
    named_on_invoke.dependency = "redis";
    named_on_invoke.only_front = front::invoke;
    try {
        d.add_rules({named_on_invoke}, 0);
        FAIL("a dependency on the invoke front was accepted");
    } catch (const rule_error& e) {
        CHECK(e.path() == "[0].front");
    }
    CHECK(d.rules().empty());  // all or nothing
}

// --- deciding -----------------------------------------------------------------------------

TEST_CASE("decide: a rule for any front skips the fronts its kind does not apply to", "[unit]") {
    // refuse and hang apply to dependencies only; phantom to the request fronts only. With the
    // default front ("any") they never fire elsewhere, and are not counted there either.
    auto d = with_rules({R"({"name": "refuse-every-2nd", "every_nth": 2,
                             "fault": {"kind": "refuse"}})",
                         R"({"name": "lose", "fault": {"kind": "phantom", "when": "before"}})"});
    // Gateway and invoke: refuse is skipped, phantom fires.
    for (int i = 0; i < 3; ++i) {
        const decision g = d.decide(gateway_request(), 0);
        CHECK(g.rule == "lose");
        CHECK(is<actions::phantom_before>(g.p));
        d.finished(g.id);
        const decision v = d.decide(invoke_request(), 0);
        CHECK(v.rule == "lose");
        d.finished(v.id);
    }
    CHECK(d.counters().by_rule.count("refuse-every-2nd") == 0);
    // Dependency connections: refuse counts from 0 (the requests above did not advance it),
    // and phantom never fires, even when refuse passes.
    const decision first = d.decide(connect_to("redis").facts(), 0);
    CHECK(first.rule.empty());
    const decision second = d.decide(connect_to("redis").facts(), 0);
    CHECK(second.rule == "refuse-every-2nd");
    CHECK(second.k == 1);
    CHECK(is<actions::refuse>(second.p));
    // A request turn: refuse is for connections only; phantom does not apply.
    CHECK_FALSE(fires(d, request_on("redis")));
    CHECK_FALSE(fires(d, request_on("redis")));
    CHECK(d.counters().by_rule.at("lose") == 6);
}

TEST_CASE("decide: dependency name, phase and function", "[unit]") {
    {
        auto d = with_rules({R"({"dependency": "redis", "fault": {"kind": "reset"}})"});
        CHECK(fires(d, connect_to("redis")));
        CHECK(fires(d, request_on("redis")));  // no "on": both phases
        CHECK_FALSE(fires(d, connect_to("postgres")));
        CHECK_FALSE(fires(d, request_on("postgres")));
        CHECK_FALSE(fires(d, gateway_request()));
        CHECK_FALSE(fires(d, invoke_request()));
    }
    {
        auto d = with_rules({R"({"dependency": "redis", "on": "connect",
                                 "fault": {"kind": "reset"}})"});
        CHECK(fires(d, connect_to("redis")));
        CHECK_FALSE(fires(d, request_on("redis")));
    }
    {
        auto d = with_rules({R"({"dependency": "redis", "on": "request",
                                 "fault": {"kind": "reset"}})"});
        CHECK_FALSE(fires(d, connect_to("redis")));
        CHECK(fires(d, request_on("redis")));
    }
    {
        // Every dependency; a reset also applies to the request fronts, but the front limits it.
        auto d = with_rules({R"({"front": "dependency", "fault": {"kind": "reset"}})"});
        CHECK(fires(d, request_on("redis")));
        CHECK(fires(d, connect_to("s3")));
        CHECK_FALSE(fires(d, gateway_request()));
    }
    {
        // A reset for any front fires everywhere.
        auto d = with_rules({R"({"fault": {"kind": "reset"}})"});
        CHECK(fires(d, request_on("redis")));
        CHECK(fires(d, gateway_request()));
        CHECK(fires(d, invoke_request()));
    }
    {
        auto d = with_rules({R"({"dependency": "redis", "function": "Worker",
                                 "fault": {"kind": "reset"}})"});
        CHECK(fires(d, request_on("redis")));
        dependency_event outside = request_on("redis");
        outside.function = "";  // a client outside any function
        CHECK_FALSE(fires(d, outside));
        dependency_event other = request_on("redis");
        other.function = "Api";
        CHECK_FALSE(fires(d, other));
    }
    {
        // Route matchers see "<dependency> <phase>".
        auto d = with_rules({R"({"front": "dependency", "route": "redis connect",
                                 "fault": {"kind": "reset"}})"});
        CHECK(fires(d, connect_to("redis")));
        CHECK_FALSE(fires(d, request_on("redis")));
        CHECK_FALSE(fires(d, connect_to("db")));
    }
}

TEST_CASE("decide: dependency counting is per '<dependency> <phase>' route", "[unit]") {
    auto d = with_rules({R"({"name": "second", "dependency": "redis", "nth": 2,
                             "fault": {"kind": "reset"}})"});
    CHECK_FALSE(fires(d, connect_to("redis")));  // "redis connect" k = 0
    CHECK_FALSE(fires(d, request_on("redis")));  // "redis request" k = 0
    const decision turn = d.decide(request_on("redis").facts(), 0);
    CHECK(turn.rule == "second");                // "redis request" k = 1
    CHECK(turn.k == 1);
    const decision conn = d.decide(connect_to("redis").facts(), 0);
    CHECK(conn.rule == "second");                // "redis connect" k = 1
    CHECK(conn.k == 1);
    CHECK_FALSE(fires(d, request_on("redis")));  // k = 2

    // Two dependencies under one rule count apart as well.
    auto e = with_rules({R"({"name": "first", "front": "dependency", "first": 1,
                             "fault": {"kind": "reset"}})"});
    CHECK(fires(e, request_on("redis")));
    CHECK(fires(e, request_on("db")));
    CHECK_FALSE(fires(e, request_on("redis")));
    CHECK_FALSE(fires(e, request_on("db")));
}

TEST_CASE("decide: the same seed gives the same dependency decisions", "[unit]") {
    const auto run = [](std::uint64_t seed) {
        auto d = with_rules({R"j({"name": "slow", "dependency": "redis", "on": "request",
                                 "probability": 0.2,
                                 "fault": {"kind": "delay",
                                           "duration": "lognormal(median=5ms, p99=50ms)"}})j",
                             R"({"name": "flaky", "dependency": "redis", "probability": 0.3,
                                 "fault": {"kind": "reset"}})"},
                            seed);
        std::vector<std::string> lines;
        for (int i = 0; i < 200; ++i) {
            const decision dec = d.decide(
                (i % 4 == 0 ? connect_to("redis") : request_on("redis")).facts(), 0);
            lines.push_back(dec.log_line);
            if (dec.id) d.finished(dec.id);
        }
        return lines;
    };
    const auto a = run(11);
    CHECK(a == run(11));
    CHECK(a != run(12));
    // Both rules fired at least once, so the comparison covers their draws.
    std::string all;
    for (const auto& l : a)
        all += l;
    CHECK(all.find(R"("rule":"slow")") != std::string::npos);
    CHECK(all.find(R"("rule":"flaky")") != std::string::npos);
}

TEST_CASE("decide: dependency decision lines name the dependency and the phase", "[unit]") {
    auto d = with_rules({R"({"name": "stall", "dependency": "redis", "on": "request",
                             "fault": {"kind": "hang", "close_after": "30s"}})",
                         R"({"name": "closed", "dependency": "db", "fault": {"kind": "refuse"}})",
                         R"({"name": "wait", "dependency": "s3", "on": "connect",
                             "fault": {"kind": "delay", "duration": "1.5ms"}})",
                         R"({"name": "forever", "dependency": "queue",
                             "fault": {"kind": "hang"}})"});
    CHECK(d.decide(request_on("redis").facts(), 0).log_line ==
          R"({"event":"fault","front":"dependency","route":"redis request","dependency":"redis",)"
          R"("on":"request","rule":"stall","kind":"hang","k":0,"action":"hang",)"
          R"("close_after_ms":30000.0})");
    const decision refused = d.decide(connect_to("db").facts(), 0);
    CHECK(is<actions::refuse>(refused.p));
    CHECK(refused.log_line ==
          R"({"event":"fault","front":"dependency","route":"db connect","dependency":"db",)"
          R"("on":"connect","rule":"closed","kind":"refuse","k":0,"action":"refuse"})");
    CHECK(d.decide(connect_to("s3").facts(), 0).log_line ==
          R"({"event":"fault","front":"dependency","route":"s3 connect","dependency":"s3",)"
          R"("on":"connect","rule":"wait","kind":"delay","k":0,"action":"pass","delay_ms":1.5})");
    const decision held = d.decide(connect_to("queue").facts(), 0);
    REQUIRE(is<actions::hang>(held.p));
    CHECK(std::get<actions::hang>(held.p.act).close_after_ms == 0);
    CHECK(held.log_line.find(R"("action":"hang","close_after_ms":0.0})") != std::string::npos);
    CHECK(d.counters().by_action.at("hang") == 2);
    CHECK(d.counters().by_action.at("refuse") == 1);
    CHECK(d.counters().active == 4);
}

// --- availability rules -------------------------------------------------------------------

TEST_CASE("availability_rule: a dependency fails 1 - SLA of the time", "[unit]") {
    const rule r = availability_rule("redis", 95, "reset", dependency_phase::request, builtins());
    CHECK(r.name == "availability-redis");
    CHECK(r.only_front == front::dependency);
    CHECK(r.dependency == "redis");
    CHECK(r.on == dependency_phase::request);
    CHECK(r.kind == "reset");
    CHECK(r.probability == Approx(0.05));
    CHECK(parse(r.to_json()).to_json() == r.to_json());

    decider d(builtins(), 2026);
    d.set_rules({r}, 0);
    int fired = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        const decision dec = d.decide(request_on("redis").facts(), 0);
        if (dec.rule.empty()) continue;
        ++fired;
        CHECK(is<actions::reset>(dec.p));
        d.finished(dec.id);
    }
    // 5,000 expected; the standard deviation is sqrt(n p (1 - p)) ≈ 69, so ±300 is over 4σ.
    CHECK(fired > 4700);
    CHECK(fired < 5300);
    // Other dependencies, connections (on: request) and the request fronts are untouched.
    for (int i = 0; i < 200; ++i) {
        CHECK_FALSE(fires(d, request_on("db")));
        CHECK_FALSE(fires(d, connect_to("redis")));
        CHECK_FALSE(fires(d, gateway_request()));
    }

    const rule perfect = availability_rule("db", 100, "hang", std::nullopt, builtins());
    CHECK(perfect.probability == 0);
    CHECK_FALSE(perfect.on);
    CHECK(availability_rule("db", 99.95, "hang", std::nullopt, builtins()).probability ==
          0.0005);
}

TEST_CASE("availability_rule: outcomes, and refuse decides connections", "[unit]") {
    const rule refuse = availability_rule("db", 90, "refuse", dependency_phase::request,
                                          builtins());
    CHECK(refuse.kind == "refuse");
    CHECK(refuse.on == dependency_phase::connect);
    CHECK(availability_rule("db", 90, "refuse", std::nullopt, builtins()).on ==
          dependency_phase::connect);

    const rule hang = availability_rule("db", 90, "hang", std::nullopt, builtins());
    CHECK(hang.kind == "hang");
    CHECK(hang.fault->to_json() == json{{"kind", "hang"}});

    // Without a phase the rule decides connections and request turns alike, each route
    // counted apart.
    decider d(builtins(), 5);
    d.set_rules({availability_rule("db", 50, "reset", std::nullopt, builtins())}, 0);
    int connects = 0, turns = 0;
    for (int i = 0; i < 2000; ++i) {
        connects += fires(d, connect_to("db"));
        turns += fires(d, request_on("db"));
    }
    CHECK(connects > 850);
    CHECK(connects < 1150);
    CHECK(turns > 850);
    CHECK(turns < 1150);
}

TEST_CASE("availability_rule: errors", "[unit]") {
    for (double sla : {0.0, -1.0, 100.5, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
        INFO(sla);
        CHECK_THROWS_AS(availability_rule("db", sla, "reset", std::nullopt, builtins()),
                        rule_error);
    }
    for (const char* outcome : {"", "phantom", "delay", "Reset", "timeout"}) {
        INFO(outcome);
        try {
            (void)availability_rule("db", 99, outcome, std::nullopt, builtins());
            FAIL("an unknown outcome was accepted");
        } catch (const rule_error& e) {
            CHECK(e.path().empty());
            CHECK(e.message().find(R"("refuse", "reset" or "hang")") != std::string::npos);
        }
    }
    for (const char* name : {"", "has space", "a|b", "x/y"}) {
        INFO(name);
        CHECK_THROWS_AS(availability_rule(name, 99, "reset", std::nullopt, builtins()),
                        rule_error);
    }
    CHECK_THROWS_AS(availability_rule(std::string(52, 'a'), 99, "reset", std::nullopt,
                                      builtins()),
                    rule_error);
    CHECK(availability_rule(std::string(51, 'a'), 99, "reset", std::nullopt, builtins()).name ==
          "availability-" + std::string(51, 'a'));

    // Phantoms are not a dependency's SLA.
    try {
        (void)sla_rule(front::dependency, 99, 0.5, client_outcome::timeout, builtins());
        FAIL("an SLA phantom for the dependency front was accepted");
    } catch (const rule_error& e) {
        CHECK(e.path() == "front");
    }
}
