// The states front: a state machine's Task invocations decided like any request, matched by
// the rule fields state_machine and state as well as by function.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/faults/faults.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models::faults;
using json = nlohmann::json;

namespace {

const fault_registry& registry() {
    static const fault_registry r = [] {
        fault_registry out;
        register_builtin_faults(out);
        return out;
    }();
    return r;
}

rule parse(const char* text) { return parse_rule(json::parse(text), registry(), "rule-1"); }

std::string error_of(const char* text) {
    try {
        (void)parse(text);
    } catch (const rule_error& e) {
        return e.path() + "|" + e.message();
    }
    return "<no error>";
}

// A Task "Charge" of the machine "Checkout" (deployed as "checkout-dev") invoking Payments.
struct task_call {
    front where = front::states;
    std::string function = "Payments";
    std::string machine = "Checkout";
    std::string machine_name = "checkout-dev";
    std::string state = "Charge";
    std::string state_path = "Charge";
    std::string route = "Checkout Charge";

    request_facts facts() const {
        request_facts f;
        f.where = where;
        f.function = function;
        f.function_name = "payments-dev-Payments";
        f.route = route;
        f.method = "POST";
        f.path = "/2015-03-31/functions/Payments/invocations";
        if (where == front::states) {
            f.state_machine = machine;
            f.state_machine_name = machine_name;
            f.state = state;
            f.state_path = state_path;
        }
        return f;
    }
};

bool fires(const char* rule_text, const task_call& call = {}) {
    decider d(registry(), 7);
    d.set_rules({parse(rule_text)}, 0);
    return !d.decide(call.facts(), 0).rule.empty();
}

}  // namespace

TEST_CASE("states front: \"front\": \"states\" parses and round-trips", "[unit]") {
    const rule r = parse(R"({"name":"t","front":"states","state_machine":"Checkout",
                              "state":"Charge","fault":{"kind":"throttle"}})");
    REQUIRE(r.only_front);
    CHECK(*r.only_front == front::states);
    CHECK(r.state_machine == "Checkout");
    CHECK(r.state == "Charge");
    const json j = r.to_json();
    CHECK(j["front"] == "states");
    CHECK(j["state_machine"] == "Checkout");
    CHECK(j["state"] == "Charge");
    const rule again = parse_rule(j, registry(), "x");
    CHECK(again.to_json() == j);
    CHECK(r.describe().find("state machine Checkout, state Charge") != std::string::npos);
    // Without them, the keys are left out of the canonical form.
    const json plain = parse(R"({"fault":{"kind":"throttle"}})").to_json();
    CHECK_FALSE(plain.contains("state_machine"));
    CHECK_FALSE(plain.contains("state"));
}

TEST_CASE("states front: state_machine and state are errors with another front", "[unit]") {
    CHECK(error_of(R"({"front":"invoke","state":"Charge","fault":{"kind":"throttle"}})") ==
          "state|only applies to the states front, not the invoke front");
    CHECK(error_of(R"({"front":"gateway","state_machine":"M","fault":{"kind":"throttle"}})") ==
          "state_machine|only applies to the states front, not the gateway front");
    CHECK(error_of(R"({"dependency":"redis","state":"S","fault":{"kind":"reset"}})") ==
          "state|only applies to the states front, not the dependency front");
    CHECK(error_of(R"({"state":"","fault":{"kind":"throttle"}})").rfind("state|", 0) == 0);
    CHECK(error_of(R"({"state_machine":3,"fault":{"kind":"throttle"}})")
              .rfind("state_machine|", 0) == 0);
    CHECK(error_of(R"({"front":"step","fault":{"kind":"throttle"}})").rfind("front|", 0) == 0);
    // Kinds that mean nothing for a Task's call.
    CHECK(error_of(R"({"front":"states","fault":{"kind":"hang"}})").rfind("fault.kind|", 0) ==
          0);
    CHECK(error_of(R"({"front":"states","fault":{"kind":"slow_response","bytes_per_s":10}})")
              .rfind("fault.kind|", 0) == 0);
    // Any front (the default) may name a state: it can only match the states front.
    CHECK(error_of(R"({"state":"Charge","fault":{"kind":"throttle"}})") == "<no error>");
}

TEST_CASE("states front: state_machine matches the logical id or the name", "[unit]") {
    CHECK(fires(R"({"state_machine":"Checkout","fault":{"kind":"throttle"}})"));
    CHECK(fires(R"({"state_machine":"checkout-dev","fault":{"kind":"throttle"}})"));
    CHECK_FALSE(fires(R"({"state_machine":"Refunds","fault":{"kind":"throttle"}})"));
}

TEST_CASE("states front: state matches the Task's name or its path", "[unit]") {
    task_call nested;
    nested.state = "Charge";
    nested.state_path = "Each/Charge";
    CHECK(fires(R"({"state":"Charge","fault":{"kind":"throttle"}})", nested));
    CHECK(fires(R"({"state":"Each/Charge","fault":{"kind":"throttle"}})", nested));
    CHECK_FALSE(fires(R"({"state":"Each","fault":{"kind":"throttle"}})", nested));
    CHECK_FALSE(fires(R"({"state":"Refund","fault":{"kind":"throttle"}})"));
}

TEST_CASE("states front: a state rule never matches the invoke or gateway front", "[unit]") {
    task_call invoke;
    invoke.where = front::invoke;
    invoke.route = "Invoke Payments";
    CHECK_FALSE(fires(R"({"state":"Charge","fault":{"kind":"throttle"}})", invoke));
    CHECK_FALSE(fires(R"({"state_machine":"Checkout","fault":{"kind":"throttle"}})", invoke));
}

TEST_CASE("states front: a function-only rule matches Task invocations too", "[unit]") {
    CHECK(fires(R"({"function":"Payments","fault":{"kind":"throttle"}})"));
    CHECK(fires(R"({"function":"payments-dev-Payments","fault":{"kind":"phantom"}})"));
    // "front": "invoke" keeps a rule to the Invoke API.
    CHECK_FALSE(fires(R"({"front":"invoke","function":"Payments","fault":{"kind":"throttle"}})"));
    CHECK(fires(R"({"front":"states","function":"Payments","fault":{"kind":"throttle"}})"));
    // ... and "front": "states" keeps it from the Invoke API.
    task_call invoke;
    invoke.where = front::invoke;
    CHECK_FALSE(fires(R"({"front":"states","fault":{"kind":"throttle"}})", invoke));
}

TEST_CASE("states front: kinds that apply, and a route of \"<machine> <state>\"", "[unit]") {
    for (const char* text : {
             R"({"route":"Checkout Charge","fault":{"kind":"phantom"}})",
             R"j({"route":"Checkout Charge","fault":{"kind":"delay","duration":"fixed(10ms)"}})j",
             R"({"route":"Checkout Charge","fault":{"kind":"gateway_error","status":500}})",
             R"({"route":"Checkout Charge","fault":{"kind":"throttle"}})",
             R"({"route":"Checkout Charge","fault":{"kind":"reset"}})",
         }) {
        INFO(text);
        CHECK(fires(text));
    }
    // A dependency-only kind for any front is skipped here, and not counted.
    decider d(registry(), 7);
    d.set_rules({parse(R"({"fault":{"kind":"hang"}})")}, 0);
    CHECK(d.decide(task_call{}.facts(), 0).rule.empty());
}

TEST_CASE("states front: the decision line names the machine and the state", "[unit]") {
    decider d(registry(), 7);
    d.set_rules({parse(R"({"name":"slow","state":"Charge","fault":{"kind":"throttle"}})")}, 0);
    const decision first = d.decide(task_call{}.facts(), 0);
    REQUIRE(first.rule == "slow");
    CHECK(first.where == front::states);
    const json line = json::parse(first.log_line);
    CHECK(line["front"] == "states");
    CHECK(line["route"] == "Checkout Charge");
    CHECK(line["state_machine"] == "Checkout");
    CHECK(line["state"] == "Charge");
    // Key order is stable: the machine and state follow the method.
    CHECK(first.log_line.find("\"method\"") < first.log_line.find("\"state_machine\""));
    CHECK(first.log_line.find("\"state_machine\"") < first.log_line.find("\"rule\""));
    // A retry is a new request: k advances.
    CHECK(d.decide(task_call{}.facts(), 0).k == 1);
    CHECK(d.counters().by_front.at("states") == 2);

    // Other fronts' lines do not gain the keys.
    decider g(registry(), 7);
    g.set_rules({parse(R"({"fault":{"kind":"throttle"}})")}, 0);
    task_call invoke;
    invoke.where = front::invoke;
    const json other = json::parse(g.decide(invoke.facts(), 0).log_line);
    CHECK_FALSE(other.contains("state_machine"));
    CHECK_FALSE(other.contains("state"));
}
