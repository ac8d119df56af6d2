// The built-in fault kinds: each one's JSON (defaults, errors, canonical form) and the plan it
// fills.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/distribution/distribution.hpp"
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

std::shared_ptr<const fault_config> parse(const json& fault) {
    const fault_kind* kind = builtins().find(fault.at("kind").get<std::string>());
    REQUIRE(kind != nullptr);
    return kind->parse(fault);
}

// The path of the rule_error parsing `fault` throws, or "<no error>". Any other exception
// escapes and fails the test.
std::string error_path(const json& fault) {
    try {
        (void)parse(fault);
    } catch (const rule_error& e) {
        return e.path();
    }
    return "<no error>";
}

std::string error_message(const json& fault) {
    try {
        (void)parse(fault);
    } catch (const rule_error& e) {
        return e.message();
    }
    return "<no error>";
}

constexpr const char* draw_key = "r|POST /pay";

// The action `p` holds, as A; fails the test when it holds another.
template <class A>
const A& as(const plan& p) {
    const A* a = std::get_if<A>(&p.act);
    REQUIRE(a != nullptr);
    return *a;
}

// A phantom plan's client outcome; fails the test for any other action.
client_outcome phantom_client(const plan& p) {
    if (const auto* before = std::get_if<actions::phantom_before>(&p.act)) return before->client;
    return as<actions::phantom_after>(p).client;
}

plan apply(const fault_config& config, std::uint64_t k = 0, std::uint64_t seed = 7) {
    random_source rng(seed);
    plan p;
    config.apply(apply_context{rng, draw_key, k, front::gateway}, p);
    return p;
}

// parse(to_json()) gives the same canonical form, so a listed rule can be sent back as is.
void check_round_trip(const json& fault) {
    auto config = parse(fault);
    const json canonical = config->to_json();
    INFO(canonical.dump());
    CHECK(canonical.at("kind") == fault.at("kind"));
    CHECK(parse(canonical)->to_json() == canonical);
}

}  // namespace

TEST_CASE("fault registry: builtins by name, sorted, no duplicates", "[unit]") {
    CHECK(builtins().names() == std::vector<std::string>{"delay", "function_error",
                                                         "gateway_error", "hang", "phantom",
                                                         "refuse", "reset", "slow_response",
                                                         "throttle"});
    for (const auto& name : builtins().names()) {
        const fault_kind* k = builtins().find(name);
        REQUIRE(k != nullptr);
        CHECK(k->name == name);
        CHECK_FALSE(k->summary.empty());
        CHECK(k->parse != nullptr);
    }
    CHECK(builtins().find("bandwidth") == nullptr);

    fault_registry r;
    register_builtin_faults(r);
    CHECK_THROWS_AS(register_builtin_faults(r), std::logic_error);
    CHECK_THROWS_AS(r.add(fault_kind{"", "no name", builtins().find("reset")->parse}),
                    std::logic_error);
    CHECK_THROWS_AS(r.add(fault_kind{"custom", "no parser", nullptr}), std::logic_error);
}

TEST_CASE("every kind: a fault that is not an object, or has an unknown key, is a rule_error",
          "[unit]") {
    for (const auto& name : builtins().names()) {
        INFO(name);
        const fault_kind* k = builtins().find(name);
        try {
            (void)k->parse(json::array());
            FAIL("no error for an array");
        } catch (const rule_error& e) {
            CHECK(e.path() == "fault");
        }
        try {
            (void)k->parse(json{{"kind", name}, {"surprise", 1}});
            FAIL("no error for an unknown key");
        } catch (const rule_error& e) {
            CHECK(e.path() == "fault.surprise");
            CHECK(e.message().rfind("unknown key 'surprise'; allowed: kind", 0) == 0);
        }
    }
}

TEST_CASE("phantom: defaults to half after, client sees timeout", "[unit]") {
    auto config = parse({{"kind", "phantom"}});
    CHECK(config->to_json() ==
          json{{"kind", "phantom"}, {"after_share", 0.5}, {"client_sees", "timeout"}});
    CHECK(config->describe() == "phantom (after 50%, client sees timeout)");

    // Before and after both occur, each exactly where the "fault-phantom" draw says.
    const random_source rng(7);
    int after = 0;
    for (std::uint64_t k = 0; k < 400; ++k) {
        const plan p = apply(*config, k);
        const bool expect_after = rng.uniform("fault-phantom", draw_key, k) < 0.5;
        CHECK((expect_after ? is<actions::phantom_after>(p) : is<actions::phantom_before>(p)));
        CHECK(phantom_client(p) == client_outcome::timeout);
        CHECK(p.delay_ms == 0);
        after += expect_after;
    }
    CHECK(after > 150);
    CHECK(after < 250);
}

TEST_CASE("phantom: when, after_share and client_sees", "[unit]") {
    auto before = parse({{"kind", "phantom"}, {"when", "before"}, {"client_sees", "reset"}});
    CHECK(before->to_json() ==
          json{{"kind", "phantom"}, {"when", "before"}, {"client_sees", "reset"}});
    CHECK(before->describe() == "phantom (before, client sees reset)");
    auto after = parse({{"kind", "phantom"}, {"when", "after"}, {"client_sees", "hang"}});
    CHECK(after->describe() == "phantom (after, client sees hang)");
    for (std::uint64_t k = 0; k < 50; ++k) {
        CHECK(is<actions::phantom_before>(apply(*before, k)));
        CHECK(phantom_client(apply(*before, k)) == client_outcome::reset);
        CHECK(is<actions::phantom_after>(apply(*after, k)));
        CHECK(phantom_client(apply(*after, k)) == client_outcome::hang);
    }
    // A share of exactly 0 or 1 is listed as "when".
    CHECK(parse({{"kind", "phantom"}, {"after_share", 1}})->to_json().at("when") == "after");
    CHECK(parse({{"kind", "phantom"}, {"after_share", 0.25}})->describe() ==
          "phantom (after 25%, client sees timeout)");

    check_round_trip({{"kind", "phantom"}});
    check_round_trip({{"kind", "phantom"}, {"when", "before"}});
    check_round_trip({{"kind", "phantom"}, {"after_share", 0.1}, {"client_sees", "hang"}});
}

TEST_CASE("phantom: errors", "[unit]") {
    CHECK(error_path({{"kind", "phantom"}, {"when", "during"}}) == "fault.when");
    CHECK(error_path({{"kind", "phantom"}, {"when", 1}}) == "fault.when");
    CHECK(error_path({{"kind", "phantom"}, {"when", "after"}, {"after_share", 0.5}}) ==
          "fault.after_share");
    CHECK(error_path({{"kind", "phantom"}, {"after_share", 1.5}}) == "fault.after_share");
    CHECK(error_path({{"kind", "phantom"}, {"after_share", -0.1}}) == "fault.after_share");
    CHECK(error_path({{"kind", "phantom"}, {"after_share", "half"}}) == "fault.after_share");
    CHECK(error_path({{"kind", "phantom"}, {"client_sees", "502"}}) == "fault.client_sees");
    CHECK(error_path({{"kind", "phantom"}, {"client_sees", true}}) == "fault.client_sees");
    CHECK(error_message({{"kind", "phantom"}, {"client_sees", "502"}}) ==
          "expected \"timeout\", \"hang\" or \"reset\", got \"502\"");
}

TEST_CASE("delay: a distribution, a duration or a number of ms; never negative", "[unit]") {
    auto fixed = parse({{"kind", "delay"}, {"duration", "fixed(300ms)"}});
    CHECK(fixed->to_json() == json{{"kind", "delay"}, {"duration", "fixed(300ms)"}});
    CHECK(fixed->describe() == "delay fixed(300ms)");
    const plan p = apply(*fixed);
    CHECK(is<actions::pass>(p));
    CHECK(p.delay_ms == 300);
    CHECK(p.injects());

    CHECK(parse({{"kind", "delay"}, {"duration", 250}})->to_json().at("duration") ==
          "fixed(250ms)");
    CHECK(parse({{"kind", "delay"}, {"duration", "1.5s"}})->to_json().at("duration") ==
          "fixed(1500ms)");

    // Each sample is the "fault-delay" draw of the rule's key and k, clamped at 0.
    const std::string text = "normal(mean=0, stddev=10ms)";
    auto normal = parse({{"kind", "delay"}, {"duration", text}});
    const distribution d = parse_distribution(text);
    const random_source rng(7);
    bool clamped = false;
    for (std::uint64_t k = 0; k < 100; ++k) {
        const double expected = d.sample(rng, "fault-delay", draw_key, k);
        const plan q = apply(*normal, k);
        CHECK(is<actions::pass>(q));
        CHECK(q.delay_ms == (expected > 0 ? expected : 0));
        clamped |= expected < 0;
    }
    CHECK(clamped);

    check_round_trip({{"kind", "delay"}, {"duration", "lognormal(median=200ms, p99=2s)"}});
    check_round_trip({{"kind", "delay"}, {"duration", "mixture(0.9: fixed(0), 0.1: fixed(5s))"}});
    check_round_trip({{"kind", "delay"}, {"duration", 42}});
}

TEST_CASE("delay: errors", "[unit]") {
    CHECK(error_path({{"kind", "delay"}}) == "fault.duration");
    CHECK(error_path({{"kind", "delay"}, {"duration", -5}}) == "fault.duration");
    CHECK(error_path({{"kind", "delay"}, {"duration", true}}) == "fault.duration");
    CHECK(error_path({{"kind", "delay"}, {"duration", "-5ms"}}) == "fault.duration");
    CHECK(error_path({{"kind", "delay"}, {"duration", "5 parsecs"}}) == "fault.duration");
    CHECK(error_path({{"kind", "delay"}, {"duration", "lognormal(median=2s)"}}) ==
          "fault.duration");
    // The distribution parser's message and where in the text it stopped.
    CHECK(error_message({{"kind", "delay"}, {"duration", "fixed(120sec)"}}) ==
          "unknown unit 'sec' (use ms, s, min or h) at offset 9");
    CHECK(error_message({{"kind", "delay"}, {"duration", "gamma(1)"}}).find("at offset 0") !=
          std::string::npos);
}

TEST_CASE("gateway_error: one of API Gateway's own statuses, required", "[unit]") {
    for (int status : {429, 500, 502, 503, 504}) {
        auto config = parse({{"kind", "gateway_error"}, {"status", status}});
        CHECK(config->describe() == "gateway_error " + std::to_string(status));
        const plan p = apply(*config);
        CHECK(is<actions::gateway_error>(p));
        CHECK(as<actions::gateway_error>(p).status == status);
        check_round_trip({{"kind", "gateway_error"}, {"status", status}});
    }
    CHECK(parse({{"kind", "gateway_error"}, {"status", 503.0}})->to_json() ==
          json{{"kind", "gateway_error"}, {"status", 503}});

    CHECK(error_path({{"kind", "gateway_error"}}) == "fault.status");
    CHECK(error_path({{"kind", "gateway_error"}, {"status", 404}}) == "fault.status");
    CHECK(error_path({{"kind", "gateway_error"}, {"status", -503}}) == "fault.status");
    CHECK(error_path({{"kind", "gateway_error"}, {"status", 503.5}}) == "fault.status");
    CHECK(error_path({{"kind", "gateway_error"}, {"status", "503"}}) == "fault.status");
    CHECK(error_message({{"kind", "gateway_error"}, {"status", 404}}) ==
          "expected one of 429, 500, 502, 503, 504, got 404");
}

TEST_CASE("function_error: exit by default, after 0 ms", "[unit]") {
    auto config = parse({{"kind", "function_error"}});
    CHECK(config->to_json() == json{{"kind", "function_error"}, {"mode", "exit"}, {"after", 0}});
    CHECK(config->describe() == "function_error exit after 0ms");
    plan p = apply(*config);
    CHECK(is<actions::function_exit>(p));
    CHECK(as<actions::function_exit>(p).kill_after_ms == 0);

    auto later = parse({{"kind", "function_error"}, {"mode", "exit"}, {"after", "50ms"}});
    CHECK(later->describe() == "function_error exit after 50ms");
    CHECK(as<actions::function_exit>(apply(*later)).kill_after_ms == 50);
    CHECK(as<actions::function_exit>(apply(*parse({{"kind", "function_error"}, {"after", 1500}})))
              .kill_after_ms == 1500);

    check_round_trip({{"kind", "function_error"}});
    check_round_trip({{"kind", "function_error"}, {"after", "2s"}});
}

TEST_CASE("function_error: handler mode answers the handler's error", "[unit]") {
    auto config = parse({{"kind", "function_error"}, {"mode", "handler"}});
    CHECK(config->to_json() == json{{"kind", "function_error"},
                                    {"mode", "handler"},
                                    {"error_type", "Error"},
                                    {"error_message", "coldbrew injected a function error"}});
    plan p = apply(*config);
    CHECK(is<actions::handler_error>(p));
    CHECK(as<actions::handler_error>(p).error_type == "Error");
    CHECK(as<actions::handler_error>(p).error_message == "coldbrew injected a function error");

    auto custom = parse({{"kind", "function_error"},
                         {"mode", "handler"},
                         {"error_type", "TypeError"},
                         {"error_message", ""}});
    CHECK(custom->describe() == "function_error handler (TypeError: )");
    p = apply(*custom);
    CHECK(as<actions::handler_error>(p).error_type == "TypeError");
    CHECK(as<actions::handler_error>(p).error_message.empty());

    check_round_trip({{"kind", "function_error"}, {"mode", "handler"}});
    check_round_trip({{"kind", "function_error"},
                      {"mode", "handler"},
                      {"error_type", "Timeout"},
                      {"error_message", "took too long"}});
}

TEST_CASE("function_error: errors, including keys of the other mode", "[unit]") {
    CHECK(error_path({{"kind", "function_error"}, {"mode", "crash"}}) == "fault.mode");
    CHECK(error_path({{"kind", "function_error"}, {"mode", 1}}) == "fault.mode");
    CHECK(error_path({{"kind", "function_error"}, {"after", -1}}) == "fault.after");
    CHECK(error_path({{"kind", "function_error"}, {"after", "soon"}}) == "fault.after");
    CHECK(error_path({{"kind", "function_error"}, {"after", json::object()}}) == "fault.after");
    CHECK(error_path({{"kind", "function_error"}, {"mode", "handler"}, {"after", 5}}) ==
          "fault.after");
    CHECK(error_path({{"kind", "function_error"}, {"error_type", "Error"}}) ==
          "fault.error_type");
    CHECK(error_path({{"kind", "function_error"}, {"mode", "exit"}, {"error_message", "x"}}) ==
          "fault.error_message");
    CHECK(error_path({{"kind", "function_error"}, {"mode", "handler"}, {"error_type", ""}}) ==
          "fault.error_type");
    CHECK(error_path({{"kind", "function_error"}, {"mode", "handler"}, {"error_type", 5}}) ==
          "fault.error_type");
    CHECK(error_path({{"kind", "function_error"}, {"mode", "handler"}, {"error_message", 5}}) ==
          "fault.error_message");
    CHECK(error_message({{"kind", "function_error"}, {"error_type", "Error"}}) ==
          "only applies to mode \"handler\" (mode is \"exit\")");
}

TEST_CASE("throttle: Lambda's throttle reasons", "[unit]") {
    auto config = parse({{"kind", "throttle"}});
    CHECK(config->to_json() ==
          json{{"kind", "throttle"}, {"reason", "ConcurrentInvocationLimitExceeded"}});
    CHECK(config->describe() == "throttle (ConcurrentInvocationLimitExceeded)");
    plan p = apply(*config);
    CHECK(is<actions::throttle>(p));
    CHECK(as<actions::throttle>(p).reason == "ConcurrentInvocationLimitExceeded");

    for (const char* reason :
         {"ConcurrentInvocationLimitExceeded", "FunctionInvocationRateLimitExceeded",
          "ReservedFunctionConcurrentInvocationLimitExceeded",
          "ReservedFunctionInvocationRateLimitExceeded", "CallerRateLimitExceeded"}) {
        CHECK(as<actions::throttle>(apply(*parse({{"kind", "throttle"}, {"reason", reason}})))
                  .reason == reason);
        check_round_trip({{"kind", "throttle"}, {"reason", reason}});
    }
    CHECK(error_path({{"kind", "throttle"}, {"reason", "TooManyRequests"}}) == "fault.reason");
    CHECK(error_path({{"kind", "throttle"}, {"reason", 429}}) == "fault.reason");
}

TEST_CASE("reset: no options", "[unit]") {
    auto config = parse({{"kind", "reset"}});
    CHECK(config->to_json() == json{{"kind", "reset"}});
    CHECK(config->describe() == "reset");
    CHECK(is<actions::reset>(apply(*config)));
    check_round_trip({{"kind", "reset"}});
    CHECK(error_path({{"kind", "reset"}, {"client_sees", "timeout"}}) == "fault.client_sees");
}

TEST_CASE("slow_response: a positive, finite rate in bytes per second", "[unit]") {
    auto config = parse({{"kind", "slow_response"}, {"bytes_per_s", 1024}});
    CHECK(config->to_json() == json{{"kind", "slow_response"}, {"bytes_per_s", 1024}});
    CHECK(config->describe() == "slow_response 1024 B/s");
    plan p = apply(*config);
    CHECK(is<actions::slow_response>(p));
    CHECK(as<actions::slow_response>(p).bytes_per_s == 1024);
    check_round_trip({{"kind", "slow_response"}, {"bytes_per_s", 0.5}});

    CHECK(error_path({{"kind", "slow_response"}}) == "fault.bytes_per_s");
    CHECK(error_path({{"kind", "slow_response"}, {"bytes_per_s", 0}}) == "fault.bytes_per_s");
    CHECK(error_path({{"kind", "slow_response"}, {"bytes_per_s", -1}}) == "fault.bytes_per_s");
    CHECK(error_path({{"kind", "slow_response"}, {"bytes_per_s", "fast"}}) ==
          "fault.bytes_per_s");
    // JSON text cannot say infinity or NaN, but a json built in code (from YAML) can.
    CHECK(error_path({{"kind", "slow_response"},
                      {"bytes_per_s", std::numeric_limits<double>::infinity()}}) ==
          "fault.bytes_per_s");
    CHECK(error_path({{"kind", "slow_response"},
                      {"bytes_per_s", std::numeric_limits<double>::quiet_NaN()}}) ==
          "fault.bytes_per_s");
}

TEST_CASE("every kind: the fronts it applies to", "[unit]") {
    // A Task state's invocation is a request too: the request kinds apply to the states front.
    const std::vector<front> requests{front::gateway, front::invoke, front::states};
    const std::vector<front> all{front::gateway, front::invoke, front::dependency, front::states};
    const std::vector<front> proxied{front::gateway, front::invoke, front::dependency};
    const std::vector<front> dependency{front::dependency};
    const std::pair<const char*, std::vector<front>> expected[] = {
        {"phantom", requests},     {"gateway_error", requests}, {"function_error", requests},
        {"throttle", requests},    {"delay", all},              {"reset", all},
        {"slow_response", proxied}, {"refuse", dependency},     {"hang", dependency},
    };
    for (const auto& [name, fronts] : expected) {
        INFO(name);
        const fault_kind* k = builtins().find(name);
        REQUIRE(k != nullptr);
        CHECK(k->fronts == fronts);
        for (front f : {front::gateway, front::invoke, front::dependency, front::states})
            CHECK(k->applies_to(f) ==
                  (std::find(fronts.begin(), fronts.end(), f) != fronts.end()));
        // Only refuse is limited to connections.
        CHECK(k->connect_only == (std::string(name) == "refuse"));
    }
    CHECK(builtins().find("phantom")->fronts_phrase() == "the gateway, invoke and states fronts");
    CHECK(builtins().find("delay")->fronts_phrase() ==
          "the gateway, invoke, dependency and states fronts");
    CHECK(builtins().find("hang")->fronts_phrase() == "the dependency front");
    // A kind that says nothing applies to the request fronts.
    const fault_kind custom{"custom", "test kind", builtins().find("reset")->parse};
    CHECK(custom.applies_to(front::gateway));
    CHECK(custom.applies_to(front::invoke));
    CHECK(custom.applies_to(front::states));
    CHECK_FALSE(custom.applies_to(front::dependency));
}

TEST_CASE("refuse: no options", "[unit]") {
    auto config = parse({{"kind", "refuse"}});
    CHECK(config->to_json() == json{{"kind", "refuse"}});
    CHECK(config->describe() == "refuse");
    const plan p = apply(*config);
    CHECK(is<actions::refuse>(p));
    CHECK(p.injects());
    check_round_trip({{"kind", "refuse"}});
    CHECK(error_path({{"kind", "refuse"}, {"close_after", "1s"}}) == "fault.close_after");
}

TEST_CASE("hang: held until the client leaves, or closed after a duration", "[unit]") {
    auto forever = parse({{"kind", "hang"}});
    CHECK(forever->to_json() == json{{"kind", "hang"}});
    CHECK(forever->describe() == "hang until the client leaves");
    plan p = apply(*forever);
    CHECK(is<actions::hang>(p));
    CHECK(as<actions::hang>(p).close_after_ms == 0);
    CHECK(p.injects());
    check_round_trip({{"kind", "hang"}});

    auto closing = parse({{"kind", "hang"}, {"close_after", "30s"}});
    CHECK(closing->to_json() == json{{"kind", "hang"}, {"close_after", 30000}});
    CHECK(closing->describe() == "hang, close after 30s");
    p = apply(*closing);
    CHECK(is<actions::hang>(p));
    CHECK(as<actions::hang>(p).close_after_ms == 30000);
    check_round_trip({{"kind", "hang"}, {"close_after", "1.5s"}});
    CHECK(parse({{"kind", "hang"}, {"close_after", 250}})->to_json() ==
          json{{"kind", "hang"}, {"close_after", 250}});
    // An explicit 0 is the default, so it is left out of the canonical form.
    CHECK(parse({{"kind", "hang"}, {"close_after", "0s"}})->to_json() == json{{"kind", "hang"}});

    CHECK(error_path({{"kind", "hang"}, {"close_after", "-1s"}}) == "fault.close_after");
    CHECK(error_path({{"kind", "hang"}, {"close_after", -5}}) == "fault.close_after");
    CHECK(error_path({{"kind", "hang"}, {"close_after", "soon"}}) == "fault.close_after");
    CHECK(error_path({{"kind", "hang"}, {"close_after", true}}) == "fault.close_after");
    CHECK(error_path({{"kind", "hang"},
                      {"close_after", std::numeric_limits<double>::infinity()}}) ==
          "fault.close_after");
    CHECK(error_path({{"kind", "hang"}, {"timeout", "1s"}}) == "fault.timeout");
    CHECK(error_message({{"kind", "hang"}, {"timeout", "1s"}}) ==
          "unknown key 'timeout'; allowed: kind, close_after");
}
