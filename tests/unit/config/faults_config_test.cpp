// coldbrew.yaml `faults:`: SLA phantoms, the phantom mix, the cap, and rules whose errors
// point at the key in the file.

#include "emulator/config/fault_rules.hpp"
#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;
namespace mf = coldbrew::models::faults;

namespace {
const char* const one_function = R"(Resources:
  Pay:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
)";

struct loaded {
    config::stack stack;
    std::vector<mf::rule> rules;
};

loaded load(temp_app& app, const std::string& coldbrew_yaml) {
    app.write("coldbrew.yaml", coldbrew_yaml);
    loaded out{app.sam(one_function), {}};
    mf::fault_registry kinds;
    mf::register_builtin_faults(kinds);
    out.rules = config::parse_fault_rules(out.stack.settings.faults, kinds);
    return out;
}
}  // namespace

TEST_CASE("faults config: off unless configured", "[unit]") {
    temp_app app;
    auto l = load(app, "time_scale: 1\n");
    CHECK(l.rules.empty());
    CHECK_FALSE(l.stack.settings.faults.max_active_faults);
    CHECK_FALSE(l.stack.settings.faults.sla_gateway_percent);
}

TEST_CASE("faults config: SLA phantoms, mix, cap and rules in file order", "[unit]") {
    temp_app app;
    auto l = load(app, R"yaml(faults:
  max_active_faults: 3
  sla: {gateway: 99.95%, invoke: 99.9}
  phantom: {after_share: 0.25, client_sees: reset}
  rules:
    - name: third
      route: POST /pay
      nth: 3
      headers: {x-test: "yes", x-present: true}
      probability: 50%
      fault: {kind: phantom, when: after}
    - fault: {kind: delay, duration: "lognormal(median=100ms, p99=1s)"}
)yaml");
    const auto& f = l.stack.settings.faults;
    CHECK(f.max_active_faults == std::optional<std::size_t>(3));
    CHECK(f.sla_gateway_percent == std::optional<double>(99.95));
    CHECK(f.sla_invoke_percent == std::optional<double>(99.9));
    REQUIRE(l.rules.size() == 4);
    CHECK(l.rules[0].name == "third");
    CHECK(l.rules[0].selector == mf::index_selector::nth);
    CHECK(l.rules[0].selector_n == 3);
    CHECK(l.rules[0].probability == 0.5);
    REQUIRE(l.rules[0].headers.size() == 2);
    // Sorted by name: x-present, x-test.
    CHECK_FALSE(l.rules[0].headers[0].second);
    CHECK(l.rules[0].headers[1].second == std::optional<std::string>("yes"));
    CHECK(l.rules[1].name == "rule-2");
    CHECK(l.rules[1].kind == "delay");
    CHECK(l.rules[2].name == "sla-gateway");
    CHECK(l.rules[2].probability == Approx(0.0005));
    CHECK(l.rules[2].to_json()["fault"]["client_sees"] == "reset");
    CHECK(l.rules[3].name == "sla-invoke");
    CHECK(l.rules[3].only_front == std::optional<mf::front>(mf::front::invoke));
}

TEST_CASE("faults config: errors name the file, line and key", "[unit]") {
    temp_app app;
    auto at = [&](const std::string& yaml) { return error_of([&] { load(app, yaml); }); };

    auto status = at("faults:\n  rules:\n    - name: x\n      fault: {kind: gateway_error, status: 418}\n");
    CHECK(status.where().line == 4);
    CHECK(status.where().column == 44);
    CHECK(status.key_path() == "faults.rules[0].fault.status");

    auto unknown = at("faults:\n  rules:\n    - name: x\n      nht: 3\n      fault: {kind: reset}\n");
    CHECK(unknown.where().line == 4);
    CHECK(unknown.where().column == 7);
    CHECK(contains(unknown.what(), "nht"));

    auto kind = at("faults:\n  rules:\n    - fault: {kind: phantm}\n");
    CHECK(kind.key_path() == "faults.rules[0].fault.kind");
    CHECK(contains(kind.what(), "phantom"));

    auto dup = at("faults:\n  rules:\n    - {name: a, fault: {kind: reset}}\n    - {name: a, fault: {kind: reset}}\n");
    CHECK(dup.where().line == 4);
    CHECK(dup.key_path() == "faults.rules[1].name");

    auto reserved = at("faults:\n  sla: {gateway: 99.9}\n  rules:\n    - {name: sla-gateway, fault: {kind: reset}}\n");
    CHECK(reserved.key_path() == "faults.rules[0].name");

    CHECK(at("faults:\n  sla: {gateway: 0%}\n").where().line == 2);
    CHECK(contains(at("faults:\n  sla: {gateway: 100.5}\n").what(), "at most 100"));
    CHECK(contains(at("faults:\n  sla: {gateway: lots}\n").what(), "percentage"));
    CHECK(contains(at("faults:\n  sla: {gatewya: 99}\n").what(), "did you mean 'gateway'"));
    CHECK(contains(at("faults:\n  phantom: {after_share: 1.5}\n").what(), "from 0 to 1"));
    CHECK(contains(at("faults:\n  phantom: {client_sees: nothing}\n").what(), "timeout, hang or reset"));
    CHECK(at("faults:\n  max_active_faults: 0\n").where().line == 2);
    CHECK(contains(at("faults:\n  rules: {name: x}\n").what(), "faults.rules"));
    CHECK(contains(at("faults:\n  rules:\n    - just text\n").what(), "faults.rules[0]"));
}

TEST_CASE("faults config: text that is not UTF-8 is an error, not a crash", "[unit]") {
    temp_app app;
    auto e = error_of([&] { load(app, "faults:\n  rules:\n    - {route: \"GET /\xff\", fault: {kind: reset}}\n"); });
    CHECK(e.where().line == 3);
    CHECK(contains(e.what(), "UTF-8"));
    // The SLA rules' names are only taken when an SLA is configured.
    auto l = load(app, "faults:\n  rules:\n    - {name: sla-gateway, fault: {kind: reset}}\n");
    CHECK(l.rules.size() == 1);
}

TEST_CASE("faults config: an SLA written as a fraction is an error, not 0.999%", "[unit]") {
    temp_app app;
    auto e = error_of([&] { load(app, "faults:\n  sla: {gateway: 0.999}\n"); });
    CHECK(contains(e.what(), "99.9%"));
    CHECK(load(app, "faults:\n  sla: {gateway: 0.5%}\n").rules.size() == 1);  // said with a %
}
