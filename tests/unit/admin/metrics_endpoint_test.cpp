// GET /metrics on the admin API: what the context's counters become in the exposition.
#include "emulator/admin/admin_api.hpp"
#include "tests/catch.hpp"

#include <nlohmann/json.hpp>
#include <string>

using namespace coldbrew;
using nlohmann::json;
namespace faults = coldbrew::models::faults;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

http::request get(std::string target, std::string method = "GET") {
    http::request req;
    req.method = std::move(method);
    req.target = std::move(target);
    return req;
}

} // namespace

TEST_CASE("admin GET /metrics: every counter of the context, as Prometheus text", "[unit]") {
    faults::fault_registry registry;
    faults::register_builtin_faults(registry);
    faults::decider decider{registry, 7};
    // A rule that fires on every gateway request: the decider counts it by kind and action.
    decider.set_rules(
        {faults::parse_rule(
            json{{"name", "always"}, {"fault", {{"kind", "gateway_error"}, {"status", 503}}}},
            registry, "")},
        0);
    faults::request_facts facts;
    facts.where = faults::front::gateway;
    facts.function = "Api";
    facts.route = "GET /x";
    facts.method = "GET";
    facts.path = "/x";
    for (int i = 0; i < 2; ++i)
        decider.finished(decider.decide(facts, 1).id);

    telemetry::request_stats stats;
    telemetry::request_record r;
    r.front = "gateway";
    r.route = "GET /x";
    r.status = 503;
    r.end = telemetry::request_end::injected_fault;
    r.latency_ms = 12;
    stats.record(r);
    stats.record_init("Api", 640);

    admin::admin_context ctx;
    ctx.faults = &decider;
    ctx.registry = &registry;
    ctx.now_ms = [] { return 1.0; };
    ctx.request_stats = &stats;
    ctx.request_counters = [] {
        return json{{"gateway", {{"served", 3}, {"injected_fault", 2}}},
                    {"invoke", json::object()}};
    };
    ctx.function_counters = [] {
        return json{
            {"Api", {{"invocations", 9}, {"cold_starts", 1}, {"environments", 2}, {"busy", 1}}}};
    };
    ctx.proxy_counters = [] {
        return json{{"db", {{"bytes_upstream", 10}, {"bytes_downstream", 20}, {"connections", 1}}}};
    };

    auto res = admin::handle(get("/metrics"), ctx);
    REQUIRE(res.status == 200);
    CHECK(res.header("Content-Type").value_or("") == "text/plain; version=0.0.4; charset=utf-8");
    const auto& t = res.body;
    INFO(t);
    CHECK(has_line(t, R"(coldbrew_requests_total{front="gateway",route="GET /x",status="503"} 1)"));
    CHECK(has_line(t,
                   R"(coldbrew_request_duration_seconds_count{front="gateway",route="GET /x"} 1)"));
    CHECK(has_line(t, R"(coldbrew_request_outcomes_total{front="gateway",outcome="served"} 3)"));
    CHECK(has_line(
        t, R"(coldbrew_request_outcomes_total{front="gateway",outcome="injected_fault"} 2)"));
    CHECK(has_line(t, R"(coldbrew_invocations_total{function="Api"} 9)"));
    CHECK(has_line(t, R"(coldbrew_cold_starts_total{function="Api"} 1)"));
    CHECK(has_line(t, R"(coldbrew_init_duration_seconds_count{function="Api"} 1)"));
    CHECK(has_line(t, R"(coldbrew_execution_environments{function="Api",state="busy"} 1)"));
    CHECK(has_line(t, R"(coldbrew_execution_environments{function="Api",state="idle"} 1)"));
    CHECK(has_line(
        t, R"(coldbrew_faults_injected_total{kind="gateway_error",action="gateway_error"} 2)"));
    CHECK(has_line(t, R"(coldbrew_fault_rule_injected_total{rule="always"} 2)"));
    CHECK(has_line(t, R"(coldbrew_fault_decisions_total 2)"));
    CHECK(has_line(
        t, R"(coldbrew_dependency_bytes_total{dependency="db",direction="downstream"} 20)"));

    // Only GET; the 404 for an unknown endpoint names it.
    auto post = admin::handle(get("/metrics", "POST"), ctx);
    CHECK(post.status == 405);
    CHECK(post.header("Allow").value_or("") == "GET");
    CHECK(admin::handle(get("/nope"), ctx).body.find("/metrics") != std::string::npos);
}

TEST_CASE("admin GET /metrics: a context without request records still answers", "[unit]") {
    faults::fault_registry registry;
    faults::register_builtin_faults(registry);
    faults::decider decider{registry, 7};
    admin::admin_context ctx;
    ctx.faults = &decider;
    ctx.registry = &registry;
    auto res = admin::handle(get("/metrics"), ctx);
    REQUIRE(res.status == 200);
    CHECK(res.body.find("# TYPE coldbrew_requests_total counter\n") != std::string::npos);
    CHECK(has_line(res.body, "coldbrew_faults_overflow_total 0"));
}

TEST_CASE("admin GET /metrics: faults that did not happen, by kind", "[unit]") {
    faults::fault_registry registry;
    faults::register_builtin_faults(registry);
    faults::decider decider{registry, 7};
    decider.set_rules({faults::parse_rule(json{{"name", "crash"},
                                               {"fault", {{"kind", "function_error"}}}},
                                          registry, "")},
                      0);
    faults::request_facts facts;
    facts.where = faults::front::invoke;
    facts.route = "Invoke Api";
    const auto answered_first = decider.decide(facts, 1);
    decider.finished(decider.decide(facts, 1).id);
    decider.missed(answered_first);

    admin::admin_context ctx;
    ctx.faults = &decider;
    ctx.registry = &registry;
    auto res = admin::handle(get("/metrics"), ctx);
    REQUIRE(res.status == 200);
    const auto& t = res.body;
    INFO(t);
    CHECK(t.find("# HELP coldbrew_faults_missed_total ") != std::string::npos);
    CHECK(t.find("# TYPE coldbrew_faults_missed_total counter\n") != std::string::npos);
    CHECK(has_line(t, R"(coldbrew_faults_missed_total{kind="function_error"} 1)"));
    CHECK(has_line(
        t, R"(coldbrew_faults_injected_total{kind="function_error",action="function_exit"} 1)"));
    CHECK(has_line(t, R"(coldbrew_fault_rule_injected_total{rule="crash"} 1)"));
}
