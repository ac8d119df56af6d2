// Fault rules (parsing, canonical JSON) and the decision point (matching, counting,
// probability, cap, counters, decision lines).

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/faults/faults.hpp"
#include "models/random/random_source.hpp"
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

rule parse(const json& j, const std::string& default_name = "rule-1") {
    return parse_rule(j, builtins(), default_name);
}

// Rule text; without this overload a C string would silently convert to a JSON string.
rule parse(const char* text, const std::string& default_name = "rule-1") {
    return parse(json::parse(text), default_name);
}

// The rule_error a rule gives, as "<path>|<message>", or "<no error>". Any other exception
// (a library one leaking out) escapes and fails the test.
struct rule_failure {
    std::string path;
    std::string message;
};

std::optional<rule_failure> failure(const json& j, const fault_registry& registry = builtins()) {
    try {
        (void)parse_rule(j, registry, "rule-1");
    } catch (const rule_error& e) {
        return rule_failure{e.path(), e.message()};
    }
    return std::nullopt;
}

std::string error_path(const json& j) {
    auto f = failure(j);
    return f ? f->path : "<no error>";
}

std::string error_message(const json& j) {
    auto f = failure(j);
    return f ? f->message : "<no error>";
}

// One request as the gateway or the invoke API would describe it.
struct request {
    front where = front::gateway;
    std::string function = "Payments";
    std::string function_name = "payments-dev-Payments";
    std::string route = "POST /pay";
    std::string method = "POST";
    std::string path = "/pay";
    std::vector<std::pair<std::string, std::string>> headers;
    bool no_headers = false;

    request_facts facts() const {
        request_facts f;
        f.where = where;
        f.function = function;
        f.function_name = function_name;
        f.route = route;
        f.method = method;
        f.path = path;
        f.headers = no_headers ? nullptr : &headers;
        return f;
    }
};

std::vector<rule> rules(std::initializer_list<const char*> texts) {
    std::vector<rule> out;
    for (const char* t : texts) out.push_back(parse(t));
    return out;
}

// A decider holding `texts` as its rules, added at t = 0.
decider with_rules(std::initializer_list<const char*> texts, std::uint64_t seed = 42) {
    decider d(builtins(), seed);
    d.set_rules(rules(texts), 0);
    return d;
}

bool fires(decider& d, const request& r = {}, double now_ms = 0) {
    return !d.decide(r.facts(), now_ms).rule.empty();
}

// Which of `n` identical requests (1-based) a rule fired on.
std::vector<int> fired_on(decider& d, int n, const request& r = {}) {
    std::vector<int> out;
    for (int i = 1; i <= n; ++i)
        if (fires(d, r)) out.push_back(i);
    return out;
}

}  // namespace

// --- rule parsing -------------------------------------------------------------------------

TEST_CASE("rule_error: what() is path: message, or the message alone", "[unit]") {
    rule_error with_path("fault.status", "expected one of 429");
    CHECK(std::string(with_path.what()) == "fault.status: expected one of 429");
    CHECK(with_path.path() == "fault.status");
    CHECK(with_path.message() == "expected one of 429");
    rule_error bare("", "a rule is a JSON object");
    CHECK(std::string(bare.what()) == "a rule is a JSON object");
}

TEST_CASE("to_string names fronts, client outcomes and actions", "[unit]") {
    CHECK(to_string(front::gateway) == "gateway");
    CHECK(to_string(front::invoke) == "invoke");
    CHECK(to_string(front::dependency) == "dependency");
    CHECK(to_string(front::states) == "states");
    CHECK(to_string(dependency_phase::connect) == "connect");
    CHECK(to_string(dependency_phase::request) == "request");
    CHECK(to_string(client_outcome::timeout) == "timeout");
    CHECK(to_string(client_outcome::hang) == "hang");
    CHECK(to_string(client_outcome::reset) == "reset");
    CHECK(action_name(actions::pass{}) == "pass");
    CHECK(action_name(actions::phantom_before{}) == "phantom_before");
    CHECK(action_name(actions::phantom_after{}) == "phantom_after");
    CHECK(action_name(actions::gateway_error{}) == "gateway_error");
    CHECK(action_name(actions::function_exit{}) == "function_exit");
    CHECK(action_name(actions::handler_error{}) == "handler_error");
    CHECK(action_name(actions::throttle{}) == "throttle");
    CHECK(action_name(actions::reset{}) == "reset");
    CHECK(action_name(actions::slow_response{}) == "slow_response");
    CHECK(action_name(actions::refuse{}) == "refuse");
    CHECK(action_name(actions::hang{}) == "hang");
}

TEST_CASE("parse_rule: only a fault is required; defaults match everything", "[unit]") {
    const rule r = parse(R"({"fault": {"kind": "reset"}})", "rule-7");
    CHECK(r.name == "rule-7");
    CHECK_FALSE(r.only_front);
    CHECK(r.function.empty());
    CHECK(r.route.empty());
    CHECK(r.method.empty());
    CHECK(r.path.empty());
    CHECK(r.headers.empty());
    CHECK(r.selector == index_selector::every);
    CHECK(r.probability == 1.0);
    CHECK_FALSE(r.window_from_ms);
    CHECK_FALSE(r.window_until_ms);
    CHECK(r.kind == "reset");
    REQUIRE(r.fault);
    CHECK(r.to_json() == json::parse(R"({"name": "rule-7", "fault": {"kind": "reset"}})"));
    CHECK(r.describe() == "rule-7: every request → reset");
    // "any" is the default front, so it is not listed.
    CHECK_FALSE(parse(R"({"front": "any", "fault": {"kind": "reset"}})").only_front);
}

TEST_CASE("parse_rule: every key, and the canonical JSON round trip", "[unit]") {
    const rule r = parse(R"({
        "name": "lose-third:confirm_v1.2",
        "front": "gateway",
        "function": "Payments",
        "route": "POST /v1/payment_intents/{id}/confirm",
        "method": "post",
        "path": "/v1/payment_intents/*",
        "headers": {"X-Scenario": "retry", "x-present": true},
        "nth": 3,
        "probability": "25%",
        "window": {"from": "10s", "until": 60000},
        "fault": {"kind": "phantom", "when": "after"}
    })");
    CHECK(r.name == "lose-third:confirm_v1.2");
    CHECK(r.only_front == front::gateway);
    CHECK(r.function == "Payments");
    CHECK(r.route == "POST /v1/payment_intents/{id}/confirm");
    CHECK(r.method == "POST");
    CHECK(r.path == "/v1/payment_intents/*");
    using header = std::pair<std::string, std::optional<std::string>>;
    CHECK(r.headers == std::vector<header>{{"x-present", std::nullopt}, {"x-scenario", "retry"}});
    CHECK(r.selector == index_selector::nth);
    CHECK(r.selector_n == 3);
    CHECK(r.probability == 0.25);
    CHECK(r.window_from_ms == 10000);
    CHECK(r.window_until_ms == 60000);
    CHECK(r.kind == "phantom");

    const json canonical = r.to_json();
    CHECK(canonical == json::parse(R"({
        "name": "lose-third:confirm_v1.2",
        "front": "gateway",
        "function": "Payments",
        "route": "POST /v1/payment_intents/{id}/confirm",
        "method": "POST",
        "path": "/v1/payment_intents/*",
        "headers": {"x-scenario": "retry", "x-present": true},
        "nth": 3,
        "probability": 0.25,
        "window": {"from": 10000, "until": 60000},
        "fault": {"kind": "phantom", "when": "after", "client_sees": "timeout"}
    })"));
    const rule again = parse(canonical);
    CHECK(again.to_json() == canonical);
    CHECK(again.headers == r.headers);
    CHECK(again.describe() == r.describe());
    CHECK(r.describe() ==
          "lose-third:confirm_v1.2: gateway only, function Payments, "
          "POST /v1/payment_intents/{id}/confirm, method POST, path /v1/payment_intents/*, "
          "header x-present present, header x-scenario=retry, nth 3, 25%, from 10s, until 1min "
          "→ phantom (after, client sees timeout)");

    CHECK(parse(R"({"every_nth": 5, "fault": {"kind": "reset"}})").to_json().at("every_nth") ==
          5);
    CHECK(parse(R"({"first": 2, "fault": {"kind": "reset"}})").to_json().at("first") == 2);
    CHECK(parse(R"({"first": 2.0, "fault": {"kind": "reset"}})").selector_n == 2);
    CHECK(parse(R"({"name": "lose-third", "route": "POST /pay", "nth": 3,
                    "fault": {"kind": "phantom", "when": "after"}})")
              .describe() == "lose-third: POST /pay, nth 3 → phantom (after, client sees timeout)");
}

TEST_CASE("parse_rule: probability as a number or a percentage", "[unit]") {
    const auto probability = [](const json& p) {
        return parse(json{{"probability", p}, {"fault", {{"kind", "reset"}}}}).probability;
    };
    CHECK(probability(0) == 0);
    CHECK(probability(1) == 1);
    CHECK(probability(0.5) == 0.5);
    CHECK(probability("25%") == 0.25);
    CHECK(probability("0.25%") == 0.0025);
    CHECK(probability("100%") == 1);
    CHECK(probability("0%") == 0);
    // The default is left out of the canonical form; anything else is a number.
    CHECK_FALSE(parse(R"({"probability": 1, "fault": {"kind": "reset"}})")
                    .to_json()
                    .contains("probability"));
}

TEST_CASE("parse_rule: windows are durations or ms, from before until", "[unit]") {
    const rule from_only = parse(R"({"window": {"from": "1.5s"}, "fault": {"kind": "reset"}})");
    CHECK(from_only.window_from_ms == 1500);
    CHECK_FALSE(from_only.window_until_ms);
    CHECK(from_only.to_json().at("window") == json{{"from", 1500}});
    const rule until_only = parse(R"({"window": {"until": "2min"}, "fault": {"kind": "reset"}})");
    CHECK_FALSE(until_only.window_from_ms);
    CHECK(until_only.window_until_ms == 120000);
    CHECK(parse(until_only.to_json()).to_json() == until_only.to_json());
    const rule empty = parse(R"({"window": {}, "fault": {"kind": "reset"}})");
    CHECK_FALSE(empty.to_json().contains("window"));
}

TEST_CASE("parse_rule: every error is a rule_error with the key's path", "[unit]") {
    struct bad {
        const char* rule;
        const char* path;
    };
    // Each rule is valid but for one key.
    const bad cases[] = {
        {R"([])", ""},
        {R"("phantom")", ""},
        {R"(null)", ""},
        {R"({"fault": {"kind": "reset"}, "nme": "x"})", "nme"},
        {R"({"name": "", "fault": {"kind": "reset"}})", "name"},
        {R"({"name": "has space", "fault": {"kind": "reset"}})", "name"},
        {R"({"name": "a|b", "fault": {"kind": "reset"}})", "name"},
        {R"({"name": "a/b", "fault": {"kind": "reset"}})", "name"},
        {R"({"name": 5, "fault": {"kind": "reset"}})", "name"},
        {R"({"front": "lambda", "fault": {"kind": "reset"}})", "front"},
        {R"({"front": 1, "fault": {"kind": "reset"}})", "front"},
        {R"({"function": "", "fault": {"kind": "reset"}})", "function"},
        {R"({"function": ["Payments"], "fault": {"kind": "reset"}})", "function"},
        {R"({"route": "", "fault": {"kind": "reset"}})", "route"},
        {R"({"route": 3, "fault": {"kind": "reset"}})", "route"},
        {R"({"path": "", "fault": {"kind": "reset"}})", "path"},
        {R"({"path": null, "fault": {"kind": "reset"}})", "path"},
        {R"({"method": "PO ST", "fault": {"kind": "reset"}})", "method"},
        {R"({"method": "", "fault": {"kind": "reset"}})", "method"},
        {R"({"method": 7, "fault": {"kind": "reset"}})", "method"},
        {R"({"headers": [], "fault": {"kind": "reset"}})", "headers"},
        {R"({"headers": "x-a", "fault": {"kind": "reset"}})", "headers"},
        {R"({"headers": {"bad name": "x"}, "fault": {"kind": "reset"}})", "headers.bad name"},
        {R"({"headers": {"x-a": false}, "fault": {"kind": "reset"}})", "headers.x-a"},
        {R"({"headers": {"x-a": 1}, "fault": {"kind": "reset"}})", "headers.x-a"},
        {R"({"headers": {"x-a": null}, "fault": {"kind": "reset"}})", "headers.x-a"},
        {R"({"headers": {"X-A": "1", "x-a": "2"}, "fault": {"kind": "reset"}})", "headers.x-a"},
        {R"({"nth": 0, "fault": {"kind": "reset"}})", "nth"},
        {R"({"nth": -2, "fault": {"kind": "reset"}})", "nth"},
        {R"({"nth": 1.5, "fault": {"kind": "reset"}})", "nth"},
        {R"({"nth": "3", "fault": {"kind": "reset"}})", "nth"},
        {R"({"nth": 1e300, "fault": {"kind": "reset"}})", "nth"},
        {R"({"nth": 18446744073709551615, "fault": {"kind": "reset"}})", "nth"},
        {R"({"every_nth": 0, "fault": {"kind": "reset"}})", "every_nth"},
        {R"({"every_nth": true, "fault": {"kind": "reset"}})", "every_nth"},
        {R"({"first": 0, "fault": {"kind": "reset"}})", "first"},
        {R"({"first": {}, "fault": {"kind": "reset"}})", "first"},
        {R"({"nth": 2, "every_nth": 3, "fault": {"kind": "reset"}})", "every_nth"},
        {R"({"nth": 2, "first": 3, "fault": {"kind": "reset"}})", "first"},
        {R"({"every_nth": 2, "first": 3, "fault": {"kind": "reset"}})", "first"},
        {R"({"probability": 1.5, "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": -0.1, "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": "0.25", "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": "abc%", "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": "101%", "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": "-5%", "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": "%", "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": "1e1%", "fault": {"kind": "reset"}})", "probability"},
        {R"({"probability": true, "fault": {"kind": "reset"}})", "probability"},
        {R"({"window": "10s", "fault": {"kind": "reset"}})", "window"},
        {R"({"window": {"since": "1s"}, "fault": {"kind": "reset"}})", "window.since"},
        {R"({"window": {"from": -1}, "fault": {"kind": "reset"}})", "window.from"},
        {R"({"window": {"from": "-1s"}, "fault": {"kind": "reset"}})", "window.from"},
        {R"({"window": {"from": "10 parsecs"}, "fault": {"kind": "reset"}})", "window.from"},
        {R"({"window": {"from": "2s", "until": "1s"}, "fault": {"kind": "reset"}})",
         "window.until"},
        {R"({"window": {"from": "1s", "until": 1000}, "fault": {"kind": "reset"}})",
         "window.until"},
        {R"({"window": {"until": true}, "fault": {"kind": "reset"}})", "window.until"},
        {R"({})", "fault"},
        {R"({"name": "x"})", "fault"},
        {R"({"fault": "phantom"})", "fault"},
        {R"({"fault": null})", "fault"},
        {R"({"fault": {}})", "fault.kind"},
        {R"({"fault": {"kind": 5}})", "fault.kind"},
        {R"({"fault": {"kind": "bandwidth"}})", "fault.kind"},
        {R"({"fault": {"kind": "gateway_error", "status": 404}})", "fault.status"},
        {R"({"fault": {"kind": "phantom", "status": 404}})", "fault.status"},
    };
    for (const auto& c : cases) {
        INFO(c.rule);
        CHECK(error_path(json::parse(c.rule)) == c.path);
    }
    CHECK(error_path(json{{"name", std::string(65, 'a')}, {"fault", {{"kind", "reset"}}}}) ==
          "name");
    CHECK(error_path(json{{"name", std::string(64, 'a')}, {"fault", {{"kind", "reset"}}}}) ==
          "<no error>");
    // A json built in code (from YAML) may hold what JSON text cannot.
    CHECK(error_path(json{{"probability", std::numeric_limits<double>::quiet_NaN()},
                          {"fault", {{"kind", "reset"}}}}) == "probability");
    CHECK(error_path(json{{"window", {{"from", std::numeric_limits<double>::infinity()}}},
                          {"fault", {{"kind", "reset"}}}}) == "window.from");
}

TEST_CASE("parse_rule: error messages say what was expected", "[unit]") {
    CHECK(error_message(json::array()) == "a rule is a JSON object");
    CHECK(error_message(json::parse(R"({"fault": {"kind": "reset"}, "nme": "x"})")) ==
          "unknown key 'nme'; allowed: name, front, function, route, method, path, headers, nth, "
          "every_nth, first, probability, window, dependency, on, state_machine, state, fault");
    CHECK(error_message(json::parse(R"({"fault": {"kind": "bandwidth"}})")) ==
          "unknown fault kind 'bandwidth'; known: delay, function_error, gateway_error, hang, "
          "phantom, refuse, reset, slow_response, throttle");
    CHECK(error_message(json::parse(R"({"nth": 2, "first": 3, "fault": {"kind": "reset"}})")) ==
          "cannot be combined with \"nth\" (use at most one of nth, every_nth, first)");
    CHECK(error_message(json::parse(R"({"probability": "101%", "fault": {"kind": "reset"}})")) ==
          "a percentage must be in [0%, 100%], got \"101%\"");
    CHECK(error_message(json::parse(R"({"window": {"from": "5s", "until": "1s"},
                                        "fault": {"kind": "reset"}})")) ==
          "must be later than window.from (5s), got 1s");
    CHECK(error_message(json::parse(R"({"window": {"from": "10 parsecs"},
                                        "fault": {"kind": "reset"}})"))
              .find("at offset 3") != std::string::npos);
    CHECK(error_message(json::parse(R"({"headers": {"X-A": "1", "x-a": "2"},
                                        "fault": {"kind": "reset"}})")) ==
          "header 'x-a' is given twice (header names are case-insensitive)");
}

namespace {

// A kind whose parser slips: reads with nlohmann's throwing accessors, or rejects a value by
// std::invalid_argument.
std::shared_ptr<const fault_config> sloppy_parse(const nlohmann::json& fault) {
    if (fault.contains("fail")) throw std::invalid_argument("bad value");
    (void)fault.at("size").get<int>();
    return nullptr;
}

}  // namespace

TEST_CASE("parse_rule: a kind parser's library exception becomes a rule_error", "[unit]") {
    fault_registry registry;
    registry.add({"sloppy", "test kind", &sloppy_parse});
    auto missing = failure(json::parse(R"({"fault": {"kind": "sloppy"}})"), registry);
    REQUIRE(missing);
    CHECK(missing->path == "fault");
    auto wrong_type = failure(json::parse(R"({"fault": {"kind": "sloppy", "size": "x"}})"),
                              registry);
    REQUIRE(wrong_type);
    CHECK(wrong_type->path == "fault");
    auto invalid = failure(json::parse(R"({"fault": {"kind": "sloppy", "fail": 1}})"), registry);
    REQUIRE(invalid);
    CHECK(invalid->path == "fault");
    CHECK(invalid->message == "bad value");
    // A parser that returns no config is an error too, not a rule that crashes later.
    auto none = failure(json::parse(R"({"fault": {"kind": "sloppy", "size": 1}})"), registry);
    REQUIRE(none);
    CHECK(none->path == "fault");
}

// --- matching -----------------------------------------------------------------------------

TEST_CASE("decide: front, function (logical id or FunctionName), route and method", "[unit]") {
    request invoke;
    invoke.where = front::invoke;
    invoke.route = "Invoke Payments";
    {
        auto d = with_rules({R"({"front": "gateway", "fault": {"kind": "reset"}})"});
        CHECK(fires(d));
        CHECK_FALSE(fires(d, invoke));
    }
    {
        auto d = with_rules({R"({"front": "invoke", "fault": {"kind": "reset"}})"});
        CHECK_FALSE(fires(d));
        CHECK(fires(d, invoke));
    }
    {
        auto d = with_rules({R"({"function": "Payments", "fault": {"kind": "reset"}})"});
        CHECK(fires(d));
        CHECK(fires(d, invoke));
        request other;
        other.function = "Orders";
        other.function_name = "payments-dev-Orders";
        CHECK_FALSE(fires(d, other));
    }
    {
        auto d = with_rules(
            {R"({"function": "payments-dev-Payments", "fault": {"kind": "reset"}})"});
        CHECK(fires(d));
        request other;
        other.function_name = "payments-prod-Payments";
        CHECK_FALSE(fires(d, other));
    }
    {
        auto d = with_rules({R"({"route": "POST /pay", "fault": {"kind": "reset"}})"});
        CHECK(fires(d));
        request other;
        other.route = "POST /pay/";
        CHECK_FALSE(fires(d, other));
        other.route = "post /pay";
        CHECK_FALSE(fires(d, other));
    }
    {
        auto d = with_rules({R"({"method": "post", "fault": {"kind": "reset"}})"});
        CHECK(fires(d));
        request lower;
        lower.method = "post";
        CHECK(fires(d, lower));
        request get;
        get.method = "GET";
        CHECK_FALSE(fires(d, get));
    }
}

TEST_CASE("decide: path globs, '*' spanning any run of characters", "[unit]") {
    struct glob_case {
        const char* pattern;
        const char* path;
        bool matches;
    };
    const glob_case cases[] = {
        {"/pay", "/pay", true},
        {"/pay", "/pay/", false},
        {"/pay", "/Pay", false},
        {"/v1/payment_intents/*", "/v1/payment_intents/pi_1/confirm", true},
        {"/v1/payment_intents/*", "/v1/payment_intents/", true},
        {"/v1/payment_intents/*", "/v1/payment_intents", false},
        {"*/confirm", "/a/b/confirm", true},
        {"*/confirm", "/a/confirm/x", false},
        {"/a*b*c", "/abc", true},
        {"/a*b*c", "/axxbyyc", true},
        {"/a*b*c", "/axxbyycbc", true},
        {"/a*b*c", "/axxbyy", false},
        {"*", "/anything/at/all", true},
        {"**", "/x", true},
        {"/x/*/y", "/x//y", true},
    };
    for (const auto& c : cases) {
        INFO(c.pattern << " vs " << c.path);
        auto d = with_rules({});
        d.set_rules({parse(json{{"path", c.pattern}, {"fault", {{"kind", "reset"}}}})}, 0);
        request r;
        r.path = c.path;
        CHECK(fires(d, r) == c.matches);
    }
}

TEST_CASE("decide: headers by case-insensitive name; value exact or merely present", "[unit]") {
    auto d = with_rules(
        {R"({"headers": {"X-Scenario": "retry", "x-present": true}, "fault": {"kind": "reset"}})"});
    request r;
    r.headers = {{"x-scenario", "retry"}, {"X-PRESENT", ""}};
    CHECK(fires(d, r));
    r.headers = {{"X-Scenario", "other"}, {"X-Scenario", "retry"}, {"x-present", "1"}};
    CHECK(fires(d, r));  // any of a repeated header
    r.headers = {{"x-scenario", "Retry"}, {"x-present", "1"}};
    CHECK_FALSE(fires(d, r));  // values are case-sensitive
    r.headers = {{"x-scenario", "retry"}};
    CHECK_FALSE(fires(d, r));  // every header must match
    r.no_headers = true;
    CHECK_FALSE(fires(d, r));

    auto any = with_rules({R"({"fault": {"kind": "reset"}})"});
    CHECK(fires(any, r));  // no header matchers: headers may be absent
}

TEST_CASE("decide: windows count from when the rule was added", "[unit]") {
    decider d(builtins(), 1);
    d.set_rules(rules({R"({"name": "w", "window": {"from": "10s", "until": "1min"},
                           "nth": 1, "fault": {"kind": "reset"}})"}),
                1000);
    const request r;
    CHECK_FALSE(fires(d, r, 1000));
    CHECK_FALSE(fires(d, r, 10999));
    // Requests outside the window are not counted: the first one inside is the 1st.
    const decision first = d.decide(r.facts(), 11000);
    CHECK(first.rule == "w");
    CHECK(first.k == 0);
    CHECK_FALSE(fires(d, r, 60999));  // nth 1 already used
    d.set_rules(rules({R"({"name": "w", "window": {"from": "10s", "until": "1min"},
                           "fault": {"kind": "reset"}})"}),
                1000);
    CHECK(fires(d, r, 60999));
    CHECK_FALSE(fires(d, r, 61000));  // until is exclusive

    // add_rules starts a new rule's window at its own time.
    d.add_rules(rules({R"({"name": "late", "window": {"until": "1s"},
                           "fault": {"kind": "reset"}})"}),
                100000);
    CHECK(d.decide(r.facts(), 100999).rule == "late");
    CHECK_FALSE(fires(d, r, 101000));
}

// --- counting, selectors and probability ---------------------------------------------------

TEST_CASE("decide: nth, every_nth and first count the requests the rule matched", "[unit]") {
    auto nth = with_rules({R"({"nth": 3, "fault": {"kind": "reset"}})"});
    CHECK(fired_on(nth, 10) == std::vector<int>{3});
    auto every = with_rules({R"({"every_nth": 4, "fault": {"kind": "reset"}})"});
    CHECK(fired_on(every, 12) == std::vector<int>{4, 8, 12});
    auto first = with_rules({R"({"first": 2, "fault": {"kind": "reset"}})"});
    CHECK(fired_on(first, 5) == std::vector<int>{1, 2});
    auto all = with_rules({R"({"fault": {"kind": "reset"}})"});
    CHECK(fired_on(all, 3) == std::vector<int>{1, 2, 3});

    // Requests the matchers turn away do not count.
    auto post = with_rules({R"({"method": "POST", "nth": 2, "fault": {"kind": "reset"}})"});
    request get;
    get.method = "GET";
    CHECK_FALSE(fires(post));
    CHECK_FALSE(fires(post, get));
    CHECK_FALSE(fires(post, get));
    const decision second = post.decide(request{}.facts(), 0);
    CHECK(second.rule == "rule-1");
    CHECK(second.k == 1);
}

TEST_CASE("decide: counting is per route", "[unit]") {
    auto d = with_rules({R"({"name": "second", "nth": 2, "fault": {"kind": "reset"}})"});
    request a;
    a.route = "POST /a";
    request b;
    b.route = "POST /b";
    CHECK_FALSE(fires(d, a));
    CHECK_FALSE(fires(d, b));
    const decision on_a = d.decide(a.facts(), 0);
    CHECK(on_a.rule == "second");
    CHECK(on_a.k == 1);
    CHECK(fires(d, b));
    CHECK_FALSE(fires(d, a));
}

TEST_CASE("decide: the probability draw is ('fault', '<rule>|<route>', k) of the seed",
          "[unit]") {
    auto d = with_rules({R"({"name": "quarter", "probability": 0.25,
                             "fault": {"kind": "reset"}})"},
                        99);
    const random_source rng(99);
    int fired = 0;
    for (std::uint64_t k = 0; k < 2000; ++k) {
        const bool expected = rng.uniform("fault", "quarter|POST /pay", k) < 0.25;
        CHECK(fires(d) == expected);
        fired += expected;
    }
    CHECK(fired > 400);
    CHECK(fired < 600);

    // The same seed and requests give the same decisions; another seed others.
    const auto pattern = [](std::uint64_t seed) {
        auto x = with_rules({R"({"probability": "50%", "fault": {"kind": "phantom"}})"}, seed);
        std::string out;
        for (int i = 0; i < 64; ++i) {
            const decision dec = x.decide(request{}.facts(), 0);
            out += dec.rule.empty() ? '-' : is<actions::phantom_after>(dec.p) ? 'A' : 'B';
        }
        return out;
    };
    CHECK(pattern(5) == pattern(5));
    CHECK(pattern(5) != pattern(6));

    auto never = with_rules({R"({"probability": 0, "fault": {"kind": "reset"}})"});
    CHECK(fired_on(never, 100).empty());
    auto always = with_rules({R"({"probability": "100%", "fault": {"kind": "reset"}})"});
    CHECK(fired_on(always, 100).size() == 100);
}

TEST_CASE("decide: the first rule that fires wins; later rules are not counted", "[unit]") {
    auto d = with_rules({R"({"name": "a", "first": 1, "fault": {"kind": "reset"}})",
                         R"({"name": "b", "nth": 2, "fault": {"kind": "throttle"}})"});
    // 1: a fires (b not evaluated). 2: a matches but is past its first 1, b is at k = 0.
    // 3: b's k = 1, its 2nd request.
    CHECK(d.decide(request{}.facts(), 0).rule == "a");
    CHECK(d.decide(request{}.facts(), 0).rule.empty());
    const decision third = d.decide(request{}.facts(), 0);
    CHECK(third.rule == "b");
    CHECK(third.kind == "throttle");
    CHECK(third.k == 1);
    CHECK(is<actions::throttle>(third.p));
}

// --- cap, counters, decision lines ----------------------------------------------------------

TEST_CASE("decide: max active faults; over the cap the request passes", "[unit]") {
    auto d = with_rules({R"({"name": "lose", "fault": {"kind": "phantom", "when": "after"}})"});
    CHECK_FALSE(d.max_active());
    d.set_max_active(1);
    CHECK(d.max_active() == 1u);

    const decision one = d.decide(request{}.facts(), 0);
    CHECK(is<actions::phantom_after>(one.p));
    CHECK(one.id != 0);
    CHECK(d.counters().active == 1);

    const decision two = d.decide(request{}.facts(), 0);
    CHECK(two.overflow);
    CHECK(is<actions::pass>(two.p));
    CHECK_FALSE(two.p.injects());
    CHECK(two.rule == "lose");
    CHECK(two.k == 1);
    CHECK(two.id == 0);
    CHECK(two.log_line ==
          R"({"event":"fault","front":"gateway","route":"POST /pay","method":"POST",)"
          R"("rule":"lose","kind":"phantom","k":1,"action":"pass","overflow":true})");
    CHECK(d.counters().overflow == 1);
    CHECK(d.counters().by_rule.at("lose") == 1);
    CHECK(d.counters().active == 1);

    d.finished(one.id);
    CHECK(d.counters().active == 0);
    d.finished(one.id);  // idempotent
    d.finished(12345);   // unknown ids are ignored
    CHECK(d.counters().active == 0);
    const decision three = d.decide(request{}.facts(), 0);
    CHECK_FALSE(three.overflow);
    CHECK(three.id != 0);
    CHECK(three.id != one.id);

    d.set_max_active(std::nullopt);
    CHECK_FALSE(d.decide(request{}.facts(), 0).overflow);
    CHECK(d.counters().active == 2);
}

TEST_CASE("decide: a plan that injects nothing is not an active fault", "[unit]") {
    auto d = with_rules({R"({"fault": {"kind": "delay", "duration": 0}})"});
    d.set_max_active(0);
    // The cap is checked before the kind runs: with a cap of 0 every firing overflows.
    CHECK(d.decide(request{}.facts(), 0).overflow);
    d.set_max_active(std::nullopt);
    const decision zero = d.decide(request{}.facts(), 0);
    CHECK(zero.rule == "rule-1");
    CHECK_FALSE(zero.p.injects());
    CHECK(zero.id == 0);
    CHECK(d.counters().active == 0);
    CHECK(d.counters().by_action.at("pass") == 1);
}

TEST_CASE("decide: counters by kind, action and rule", "[unit]") {
    auto d = with_rules({R"({"name": "errors", "every_nth": 2,
                             "fault": {"kind": "gateway_error", "status": 503}})",
                         R"({"name": "lost", "every_nth": 3, "fault": {"kind": "phantom",
                             "when": "before"}})"});
    for (int i = 0; i < 12; ++i) {
        const decision dec = d.decide(request{}.facts(), 0);
        if (dec.id) d.finished(dec.id);
    }
    const fault_counters& c = d.counters();
    CHECK(c.decisions == 12);
    CHECK(c.by_rule.at("errors") == 6);
    // "lost" sees only the 6 requests "errors" passed on: its 3rd and 6th.
    CHECK(c.by_rule.at("lost") == 2);
    CHECK(c.by_kind == std::map<std::string, std::uint64_t>{{"gateway_error", 6}, {"phantom", 2}});
    CHECK(c.by_action ==
          std::map<std::string, std::uint64_t>{{"gateway_error", 6}, {"phantom_before", 2}});
    CHECK(c.by_front == std::map<std::string, std::uint64_t>{{"gateway", 8}});
    CHECK(c.overflow == 0);
    CHECK(c.active == 0);
}

// The total of a counter map.
template <class Map>
std::uint64_t total(const Map& m) {
    std::uint64_t n = 0;
    for (const auto& [key, count] : m) n += count;
    return n;
}

// Every fired-fault map counts the same faults.
void check_sums_agree(const fault_counters& c, std::uint64_t expected) {
    CHECK(total(c.by_kind) == expected);
    CHECK(total(c.by_rule) == expected);
    CHECK(total(c.by_action) == expected);
    CHECK(total(c.by_kind_action) == expected);
    CHECK(total(c.by_front) == expected);
}

// Three fronts' worth of faults: "crash" kills the gateway's and invoke's every 2nd request
// (each route counted apart), "lost" loses the invoke requests "crash" passes on, "down"
// resets every redis connection.
struct missed_fixture {
    decider d = with_rules({R"({"name": "crash", "every_nth": 2,
                                "fault": {"kind": "function_error"}})",
                            R"({"name": "lost", "front": "invoke",
                                "fault": {"kind": "phantom", "when": "before"}})",
                            R"({"name": "down", "dependency": "redis",
                                "fault": {"kind": "reset"}})"});
    std::vector<decision> crashes;

    missed_fixture() {
        request invoke;
        invoke.where = front::invoke;
        invoke.route = "Invoke Payments";
        request_facts redis;
        redis.where = front::dependency;
        redis.route = "redis connect";
        redis.dependency = "redis";
        for (int i = 0; i < 6; ++i) keep(d.decide(request{}.facts(), 0));
        for (int i = 0; i < 4; ++i) keep(d.decide(invoke.facts(), 0));
        for (int i = 0; i < 2; ++i) keep(d.decide(redis, 0));
    }

    void keep(const decision& dec) {
        if (dec.rule == "crash")
            crashes.push_back(dec);
        else
            d.finished(dec.id);
    }
};

TEST_CASE("missed: a fault that did not happen leaves every count it was in", "[unit]") {
    missed_fixture f;
    decider& d = f.d;
    const fault_counters& c = d.counters();
    REQUIRE(f.crashes.size() == 5);  // 3 on the gateway, 2 on invoke
    CHECK(f.crashes[0].where == front::gateway);
    CHECK(f.crashes[3].where == front::invoke);
    CHECK(is<actions::function_exit>(f.crashes[0].p));
    check_sums_agree(c, 9);
    CHECK(c.by_front ==
          std::map<std::string, std::uint64_t>{{"dependency", 2}, {"gateway", 3}, {"invoke", 4}});
    CHECK(c.missed == 0);
    CHECK(c.missed_by_kind.empty());
    CHECK(c.active == 5);

    // One on each request front: the handler answered before the kill.
    d.missed(f.crashes[0]);
    d.missed(f.crashes[3]);
    check_sums_agree(c, 7);
    CHECK(c.by_kind == std::map<std::string, std::uint64_t>{
                           {"function_error", 3}, {"phantom", 2}, {"reset", 2}});
    CHECK(c.by_rule.at("crash") == 3);
    CHECK(c.by_action.at("function_exit") == 3);
    CHECK(c.by_kind_action.at({"function_error", "function_exit"}) == 3);
    CHECK(c.by_front ==
          std::map<std::string, std::uint64_t>{{"dependency", 2}, {"gateway", 2}, {"invoke", 3}});
    CHECK(c.missed == 2);
    CHECK(c.missed_by_kind == std::map<std::string, std::uint64_t>{{"function_error", 2}});
    CHECK(c.active == 3);  // missed finishes them
    CHECK(c.decisions == 12);  // they were still decided

    // A decision is taken back once.
    d.missed(f.crashes[0]);
    check_sums_agree(c, 7);
    CHECK(c.missed == 2);

    // Entries that drop to 0 leave the maps, as if the fault had never fired.
    for (const decision* dec : {&f.crashes[1], &f.crashes[2], &f.crashes[4]}) d.missed(*dec);
    check_sums_agree(c, 4);
    CHECK(c.by_kind == std::map<std::string, std::uint64_t>{{"phantom", 2}, {"reset", 2}});
    CHECK(c.by_rule.count("crash") == 0);
    CHECK(c.by_action.count("function_exit") == 0);
    CHECK(c.by_kind_action.count({"function_error", "function_exit"}) == 0);
    CHECK(c.by_front == std::map<std::string, std::uint64_t>{{"dependency", 2}, {"invoke", 2}});
    CHECK(c.missed == 5);
    CHECK(c.missed_by_kind == std::map<std::string, std::uint64_t>{{"function_error", 5}});
    CHECK(c.active == 0);
}

TEST_CASE("missed: no rule fired, or an overflow, was never counted: only finished", "[unit]") {
    auto d = with_rules(
        {R"({"name": "crash", "path": "/pay", "fault": {"kind": "function_error"}})"});
    request other;
    other.path = "/other";
    const decision none = d.decide(other.facts(), 0);
    REQUIRE(none.rule.empty());
    const decision fired = d.decide(request{}.facts(), 0);
    d.set_max_active(1);
    const decision over = d.decide(request{}.facts(), 0);
    REQUIRE(over.overflow);
    d.missed(none);
    d.missed(over);
    check_sums_agree(d.counters(), 1);
    CHECK(d.counters().missed == 0);
    CHECK(d.counters().overflow == 1);
    CHECK(d.counters().active == 1);
    d.missed(fired);
    check_sums_agree(d.counters(), 0);
    CHECK(d.counters().missed == 1);
    CHECK(d.counters().active == 0);
}

TEST_CASE("missed: a plan without an id is taken back each call while its counts last",
          "[unit]") {
    auto d = with_rules({R"({"name": "nothing", "fault": {"kind": "delay", "duration": 0}})"});
    const decision zero = d.decide(request{}.facts(), 0);
    REQUIRE(zero.id == 0);
    (void)d.decide(request{}.facts(), 0);
    check_sums_agree(d.counters(), 2);
    d.missed(zero);
    d.missed(zero);
    d.missed(zero);  // nothing left to take back
    check_sums_agree(d.counters(), 0);
    CHECK(d.counters().missed == 2);
    CHECK(d.counters().missed_by_kind == std::map<std::string, std::uint64_t>{{"delay", 2}});
}

TEST_CASE("missed: reset zeroes the new counters; a fault decided before it is only finished",
          "[unit]") {
    missed_fixture f;
    decider& d = f.d;
    d.missed(f.crashes[0]);
    REQUIRE(d.counters().missed == 1);

    d.reset();
    const fault_counters& c = d.counters();
    CHECK(c.missed == 0);
    CHECK(c.missed_by_kind.empty());
    CHECK(c.by_front.empty());
    check_sums_agree(c, 0);
    CHECK(c.active == 4);

    // Its count went with the reset: taking it back again would go below what was counted.
    d.missed(f.crashes[1]);
    check_sums_agree(c, 0);
    CHECK(c.missed == 0);
    CHECK(c.active == 3);

    // Counting restarted at k = 0: the 2nd gateway request crashes again.
    CHECK_FALSE(fires(d));
    const decision later = d.decide(request{}.facts(), 0);
    REQUIRE(later.rule == "crash");
    check_sums_agree(c, 1);
    CHECK(c.by_front == std::map<std::string, std::uint64_t>{{"gateway", 1}});
    d.missed(later);
    check_sums_agree(c, 0);
    CHECK(c.missed == 1);
    CHECK(c.missed_by_kind == std::map<std::string, std::uint64_t>{{"function_error", 1}});
}

TEST_CASE("decide: decision lines have a stable shape and no time", "[unit]") {
    auto d = with_rules({
        R"({"name": "g", "method": "GET", "fault": {"kind": "gateway_error", "status": 503}})",
        R"j({"name": "slow", "method": "PUT", "fault": {"kind": "delay",
             "duration": "fixed(1.23456ms)"}})j",
        R"({"name": "t", "front": "invoke", "fault": {"kind": "throttle"}})",
        R"({"name": "lose-third", "route": "POST /pay", "nth": 3,
            "fault": {"kind": "phantom", "when": "after"}})",
    });
    request get;
    get.method = "GET";
    get.route = "GET /pets/{id}";
    CHECK(d.decide(get.facts(), 0).log_line ==
          R"({"event":"fault","front":"gateway","route":"GET /pets/{id}","method":"GET",)"
          R"("rule":"g","kind":"gateway_error","k":0,"action":"gateway_error","status":503})");
    request put;
    put.method = "PUT";
    const decision slow = d.decide(put.facts(), 5000);
    CHECK(slow.p.delay_ms == Approx(1.23456));
    CHECK(slow.log_line ==
          R"({"event":"fault","front":"gateway","route":"POST /pay","method":"PUT",)"
          R"("rule":"slow","kind":"delay","k":0,"action":"pass","delay_ms":1.235})");
    request invoke;
    invoke.where = front::invoke;
    invoke.route = "Invoke Payments";
    CHECK(d.decide(invoke.facts(), 0).log_line ==
          R"({"event":"fault","front":"invoke","route":"Invoke Payments","method":"POST",)"
          R"("rule":"t","kind":"throttle","k":0,"action":"throttle",)"
          R"("reason":"ConcurrentInvocationLimitExceeded"})");

    const decision none = d.decide(request{}.facts(), 0);
    CHECK(none.rule.empty());
    CHECK(none.kind.empty());
    CHECK(none.log_line.empty());
    CHECK(is<actions::pass>(none.p));
    CHECK(none.id == 0);
    (void)d.decide(request{}.facts(), 0);
    const decision third = d.decide(request{}.facts(), 0);
    CHECK(third.log_line ==
          R"({"event":"fault","front":"gateway","route":"POST /pay","method":"POST",)"
          R"("rule":"lose-third","kind":"phantom","k":2,"action":"phantom_after",)"
          R"("client":"timeout"})");

    // Byte-identical in a second run with the same seed.
    auto again = with_rules({R"({"name": "lose-third", "route": "POST /pay", "nth": 3,
                                 "fault": {"kind": "phantom", "when": "after"}})"});
    (void)again.decide(request{}.facts(), 0);
    (void)again.decide(request{}.facts(), 0);
    CHECK(again.decide(request{}.facts(), 0).log_line == third.log_line);
}

TEST_CASE("decide: each action's detail in the decision line", "[unit]") {
    // The line as it is logged for a rule named "r" with `fault`, on one gateway request.
    const auto line = [](const char* fault) {
        decider d(builtins(), 3);
        d.set_rules({parse(json{{"name", "r"}, {"fault", json::parse(fault)}})}, 0);
        return d.decide(request{}.facts(), 0).log_line;
    };
    const std::string head =
        R"({"event":"fault","front":"gateway","route":"POST /pay","method":"POST","rule":"r",)";
    CHECK(line(R"({"kind": "phantom", "when": "before", "client_sees": "reset"})") ==
          head + R"("kind":"phantom","k":0,"action":"phantom_before","client":"reset"})");
    CHECK(line(R"({"kind": "function_error", "after": "12.34567ms"})") ==
          head + R"("kind":"function_error","k":0,"action":"function_exit",)" +
              R"("kill_after_ms":12.346})");
    CHECK(line(R"({"kind": "function_error", "mode": "handler", "error_type": "TypeError",
                   "error_message": "not in the line"})") ==
          head + R"("kind":"function_error","k":0,"action":"handler_error",)" +
              R"("error_type":"TypeError"})");
    CHECK(line(R"({"kind": "slow_response", "bytes_per_s": 1234.5})") ==
          head + R"("kind":"slow_response","k":0,"action":"slow_response","bytes_per_s":1234.5})");
    CHECK(line(R"({"kind": "reset"})") == head + R"("kind":"reset","k":0,"action":"reset"})");
}

// --- the rule set -------------------------------------------------------------------------

TEST_CASE("rules: set and add are all or nothing; names are unique", "[unit]") {
    decider d(builtins(), 1);
    d.set_rules(rules({R"({"name": "a", "fault": {"kind": "reset"}})",
                       R"({"name": "b", "fault": {"kind": "reset"}})"}),
                0);
    REQUIRE(d.rules().size() == 2);

    const auto error_of = [](auto&& change) -> std::pair<std::string, std::string> {
        try {
            change();
        } catch (const rule_error& e) {
            return {e.path(), e.message()};
        }
        return {"<no error>", ""};
    };
    auto dup = error_of([&] {
        d.set_rules(rules({R"({"name": "x", "fault": {"kind": "reset"}})",
                           R"({"name": "x", "fault": {"kind": "reset"}})"}),
                    0);
    });
    CHECK(dup.first == "[1].name");
    CHECK(dup.second == "a rule named 'x' already exists");
    CHECK(d.rules().size() == 2);
    CHECK(d.rules()[0].name == "a");

    auto existing = error_of([&] {
        d.add_rules(rules({R"({"name": "c", "fault": {"kind": "reset"}})",
                           R"({"name": "a", "fault": {"kind": "reset"}})"}),
                    0);
    });
    CHECK(existing.first == "[1].name");
    CHECK(d.rules().size() == 2);  // "c" was not added either

    std::vector<rule> no_fault(1);
    no_fault[0].name = "empty";
    CHECK(error_of([&] { d.add_rules(no_fault, 0); }).first == "[0].fault");
    std::vector<rule> bad_name = rules({R"({"fault": {"kind": "reset"}})"});
    bad_name[0].name = "no|pipes";
    CHECK(error_of([&] { d.add_rules(bad_name, 0); }).first == "[0].name");
    std::vector<rule> unknown_kind = rules({R"({"name": "k", "fault": {"kind": "reset"}})"});
    unknown_kind[0].kind = "bandwidth";
    CHECK(error_of([&] { d.add_rules(unknown_kind, 0); }).first == "[0].fault.kind");
    CHECK(d.rules().size() == 2);

    d.add_rules(rules({R"({"name": "c", "fault": {"kind": "reset"}})"}), 0);
    REQUIRE(d.rules().size() == 3);
    CHECK(d.rules()[2].name == "c");
    // set_rules may reuse the names it replaces.
    d.set_rules(rules({R"({"name": "a", "fault": {"kind": "reset"}})"}), 0);
    CHECK(d.rules().size() == 1);
}

TEST_CASE("rules: remove and clear; a re-added rule counts from 0", "[unit]") {
    auto d = with_rules({R"({"name": "once", "nth": 1, "fault": {"kind": "reset"}})",
                         R"({"name": "other", "route": "GET /x", "fault": {"kind": "reset"}})"});
    CHECK(fires(d));
    CHECK_FALSE(fires(d));
    CHECK(d.remove_rule("once"));
    CHECK_FALSE(d.remove_rule("once"));
    CHECK(d.rules().size() == 1);
    d.add_rules(rules({R"({"name": "once", "nth": 1, "fault": {"kind": "reset"}})"}), 0);
    CHECK(fires(d));
    d.clear_rules();
    CHECK(d.rules().empty());
    CHECK_FALSE(fires(d));
}

TEST_CASE("rules: default names count every rule ever added and skip taken ones", "[unit]") {
    decider d(builtins(), 1);
    CHECK(d.next_default_name() == "rule-1");
    d.set_rules(rules({R"({"name": "a", "fault": {"kind": "reset"}})",
                       R"({"name": "b", "fault": {"kind": "reset"}})"}),
                0);
    CHECK(d.next_default_name() == "rule-3");
    d.add_rules(rules({R"({"name": "rule-4", "fault": {"kind": "reset"}})"}), 0);
    CHECK(d.next_default_name() == "rule-5");
    d.add_rules(rules({R"({"name": "rule-5", "fault": {"kind": "reset"}})"}), 0);
    CHECK(d.next_default_name() == "rule-6");
    d.clear_rules();
    CHECK(d.next_default_name() == "rule-5");  // 4 rules were added; rule-5 is free again
    // A failed batch adds nothing to the count.
    try {
        d.add_rules(rules({R"({"name": "x", "fault": {"kind": "reset"}})",
                           R"({"name": "x", "fault": {"kind": "reset"}})"}),
                    0);
    } catch (const rule_error&) {
    }
    CHECK(d.next_default_name() == "rule-5");
}

TEST_CASE("rules: a new seed or a reset restarts counting; reset zeroes the counters", "[unit]") {
    auto d = with_rules({R"({"name": "once", "nth": 1,
                             "fault": {"kind": "phantom", "when": "after"}})"},
                        3);
    CHECK(d.seed() == 3);
    const decision held = d.decide(request{}.facts(), 0);
    REQUIRE(held.id != 0);
    CHECK_FALSE(fires(d));

    d.set_seed(4);
    CHECK(d.seed() == 4);
    CHECK(fires(d));
    CHECK(d.counters().by_rule.at("once") == 2);

    d.reset();
    CHECK(d.counters().decisions == 0);
    CHECK(d.counters().by_rule.empty());
    CHECK(d.counters().by_kind.empty());
    CHECK(d.counters().by_action.empty());
    CHECK(d.counters().overflow == 0);
    CHECK(d.counters().active == 2);  // the faults in flight are still in flight
    CHECK(d.rules().size() == 1);
    CHECK(d.seed() == 4);
    CHECK(fires(d));  // counting restarted
    CHECK(d.counters().decisions == 1);
    d.finished(held.id);
    CHECK(d.counters().active == 2);
}

// --- SLA rules ----------------------------------------------------------------------------

TEST_CASE("sla_rule: a phantom on every request of a front, 1 - SLA of the time", "[unit]") {
    const rule r = sla_rule(front::invoke, 95, 0.25, client_outcome::reset, builtins());
    CHECK(r.name == "sla-invoke");
    CHECK(r.only_front == front::invoke);
    CHECK(r.probability == Approx(0.05));
    CHECK(r.kind == "phantom");
    CHECK(r.selector == index_selector::every);
    REQUIRE(r.fault);
    CHECK(r.fault->to_json() ==
          json{{"kind", "phantom"}, {"after_share", 0.25}, {"client_sees", "reset"}});
    CHECK(parse(r.to_json()).to_json() == r.to_json());

    decider d(builtins(), 8);
    d.set_rules({r}, 0);
    request invoke;
    invoke.where = front::invoke;
    invoke.route = "Invoke Payments";
    int fired = 0, after = 0;
    for (int i = 0; i < 20000; ++i) {
        const decision dec = d.decide(invoke.facts(), 0);
        if (dec.rule.empty()) continue;
        ++fired;
        const auto* lost_after = std::get_if<actions::phantom_after>(&dec.p.act);
        const auto* lost_before = std::get_if<actions::phantom_before>(&dec.p.act);
        after += lost_after != nullptr;
        REQUIRE((lost_after || lost_before));
        CHECK((lost_after ? lost_after->client : lost_before->client) == client_outcome::reset);
        d.finished(dec.id);
    }
    CHECK(fired > 850);
    CHECK(fired < 1150);
    CHECK(after > fired / 8);
    CHECK(after < fired * 3 / 8);
    CHECK_FALSE(fires(d));  // the gateway front is untouched

    const rule perfect = sla_rule(front::gateway, 100, 0.5, client_outcome::timeout, builtins());
    CHECK(perfect.name == "sla-gateway");
    CHECK(perfect.probability == 0);
}

TEST_CASE("sla_rule: errors", "[unit]") {
    for (double sla : {0.0, -1.0, 100.5, std::numeric_limits<double>::quiet_NaN()}) {
        INFO(sla);
        CHECK_THROWS_AS(sla_rule(front::gateway, sla, 0.5, client_outcome::timeout, builtins()),
                        rule_error);
    }
    try {
        (void)sla_rule(front::gateway, 99, 1.5, client_outcome::timeout, builtins());
        FAIL("no error for after_share 1.5");
    } catch (const rule_error& e) {
        CHECK(e.path() == "fault.after_share");
    }
    const fault_registry empty;
    CHECK_THROWS_AS(sla_rule(front::gateway, 99, 0.5, client_outcome::timeout, empty),
                    std::logic_error);
}

TEST_CASE("counted_by_caller: fired faults are counted when the caller says what became of them",
          "[unit]") {
    decider d = with_rules({R"({"name": "crash", "fault": {"kind": "function_error"}})"});
    request_facts f = request{}.facts();
    f.counted_by_caller = true;
    const decision a = d.decide(f, 0), b = d.decide(f, 0), c = d.decide(f, 0);
    CHECK(a.deferred);
    const fault_counters& n = d.counters();
    // Decided and active, not yet counted as fired.
    CHECK(n.by_kind.empty());
    CHECK(n.by_front.empty());
    CHECK(n.active == 3);
    CHECK(n.decisions == 3);
    d.injected(a);
    d.finished(a.id);
    d.missed(b);
    check_sums_agree(n, 1);
    CHECK(n.by_kind == std::map<std::string, std::uint64_t>{{"function_error", 1}});
    CHECK(n.missed == 1);
    CHECK(n.missed_by_kind.at("function_error") == 1);
    CHECK(n.active == 1);
    // A reset in between: what ends after it is counted after it.
    d.reset();
    d.injected(c);
    check_sums_agree(n, 1);
    CHECK(n.by_rule.at("crash") == 1);
    // Not deferred: injected() adds nothing, its counts came with the decision.
    const decision now = d.decide(request{}.facts(), 0);
    CHECK_FALSE(now.deferred);
    check_sums_agree(n, 2);
    d.injected(now);
    check_sums_agree(n, 2);
}
