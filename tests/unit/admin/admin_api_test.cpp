#include "emulator/admin/admin_api.hpp"
#include "emulator/telemetry/run_recorder.hpp"
#include "models/sim/record.hpp"
#include "tests/catch.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace coldbrew;
using nlohmann::json;
namespace faults = coldbrew::models::faults;

namespace {

faults::fault_registry builtin_registry() {
    faults::fault_registry r;
    faults::register_builtin_faults(r);
    return r;
}

// A rule that fires on every request: the gateway answers 503 itself.
json rule_503(const std::string& name = "") {
    json j = {{"fault", {{"kind", "gateway_error"}, {"status", 503}}}};
    if (!name.empty()) j["name"] = name;
    return j;
}

// A rule the registry rejects at "fault.status".
json bad_status_rule() {
    return {{"fault", {{"kind", "gateway_error"}, {"status", 418}}}};
}

struct admin_fixture {
    faults::fault_registry registry = builtin_registry();
    faults::decider decider{registry, 42};
    std::vector<faults::rule> configured;
    telemetry::decision_log log;
    double now = 1000; // manual wall clock, ms
    int request_resets = 0;
    admin::admin_context ctx;

    admin_fixture() {
        ctx.faults = &decider;
        ctx.registry = &registry;
        ctx.configured_rules = &configured;
        ctx.decisions = &log;
        ctx.now_ms = [this] { return now; };
        ctx.request_counters = [] {
            return json{{"gateway", {{"served", 3}}}, {"invoke", json::object()}};
        };
        ctx.function_counters = [] { return json{{"Payments", {{"warm", 1}}}}; };
        ctx.reset_request_counters = [this] { ++request_resets; };
    }

    http::response call(std::string method, std::string target, std::string body = "",
                        http::header_list headers = {}) {
        http::request req;
        req.method = std::move(method);
        req.target = std::move(target);
        req.body = std::move(body);
        req.headers = std::move(headers);
        auto res = admin::handle(req, ctx);
        // Every answer, error or not, is one JSON object and a newline.
        CHECK(res.header("Content-Type").value_or("") == "application/json");
        CHECK((!res.body.empty() && res.body.back() == '\n'));
        CHECK(json::parse(res.body, nullptr, false).is_object());
        return res;
    }

    http::response call(std::string method, std::string target, const json& body) {
        return call(std::move(method), std::move(target), body.dump());
    }

    // The decision for one gateway request to GET /x at `now`.
    faults::decision decide() {
        faults::request_facts facts;
        facts.where = faults::front::gateway;
        facts.function = "Api";
        facts.function_name = "app-Api";
        facts.route = "GET /x";
        facts.method = "GET";
        facts.path = "/x";
        auto d = decider.decide(facts, now);
        decider.finished(d.id);
        return d;
    }

    std::vector<std::string> rule_names() const {
        std::vector<std::string> out;
        for (const auto& r : decider.rules())
            out.push_back(r.name);
        return out;
    }
};

json body_of(const http::response& res) {
    return json::parse(res.body);
}

// A 4xx about the body names the key it is about.
void check_path(const http::response& res, int status, const std::string& path) {
    CHECK(res.status == status);
    auto b = body_of(res);
    CHECK(b.contains("message"));
    REQUIRE(b.contains("path"));
    CHECK(b["path"] == path);
}

} // namespace

TEST_CASE("admin: POST /faults adds one rule; GET and DELETE by name", "[unit]") {
    admin_fixture f;
    auto added = f.call("POST", "/faults", rule_503("lose"));
    REQUIRE(added.status == 201);
    auto rules = body_of(added)["rules"];
    REQUIRE(rules.size() == 1);
    CHECK(rules[0]["name"] == "lose");
    CHECK(rules[0] == f.decider.rules().at(0).to_json());

    auto all = body_of(f.call("GET", "/faults"));
    CHECK(all["seed"] == 42);
    CHECK(all["max_active_faults"].is_null());
    CHECK(all["rules"] == rules);

    auto one = f.call("GET", "/faults/lose");
    CHECK(one.status == 200);
    CHECK(body_of(one) == rules[0]);

    auto removed = f.call("DELETE", "/faults/lose");
    CHECK(removed.status == 200);
    CHECK(body_of(removed)["removed"] == 1);
    CHECK(f.decider.rules().empty());
    CHECK(f.call("GET", "/faults/lose").status == 404);
    CHECK(f.call("DELETE", "/faults/lose").status == 404);
}

TEST_CASE("admin: with access rules, a foreign Origin or a missing token changes nothing", "[unit]") {
    admin_fixture f;
    http::access_policy p;
    p.listen_host = "0.0.0.0";
    p.listen_port = 3002;
    p.bearer_token = "0123456789abcdef";
    f.ctx.access = &p;
    auto cross = f.call("POST", "/faults", rule_503("evil").dump(),
                        {{"Origin", "http://evil.example"}, {"Authorization", "Bearer 0123456789abcdef"}});
    CHECK(cross.status == 403);
    CHECK(cross.header("x-amzn-ErrorType").value_or("") == "AccessDeniedException");
    auto none = f.call("POST", "/faults", rule_503("evil").dump());
    CHECK(none.status == 401);
    CHECK(none.header("WWW-Authenticate").value_or("").rfind("Bearer", 0) == 0);
    auto wrong = f.call("POST", "/counters/reset", "", {{"Authorization", "Bearer 0123456789abcdeF"}});
    CHECK(wrong.status == 403);
    CHECK(f.request_resets == 0);
    CHECK(f.decider.rules().empty());
    auto ok = f.call("POST", "/faults", rule_503("good").dump(), {{"Authorization", "Bearer 0123456789abcdef"}});
    CHECK(ok.status == 201);
    CHECK(f.decider.rules().size() == 1);
}

TEST_CASE("admin: rule names in the path are percent-decoded", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults", rule_503("lose:third")).status == 201);
    auto one = f.call("GET", "/faults/lose%3Athird");
    CHECK(one.status == 200);
    CHECK(body_of(one)["name"] == "lose:third");
    CHECK(f.call("DELETE", "/faults/lose%3athird").status == 200);
    CHECK(f.decider.rules().empty());
    // A name that is not UTF-8 still gets a JSON 404 (checked by call()).
    CHECK(f.call("GET", "/faults/%FF%FE").status == 404);
}

TEST_CASE("admin: unnamed rules added together get distinct default names", "[unit]") {
    admin_fixture f;
    auto batch =
        f.call("POST", "/faults", json::array({rule_503(), rule_503(), rule_503("named")}));
    REQUIRE(batch.status == 201);
    auto rules = body_of(batch)["rules"];
    REQUIRE(rules.size() == 3);
    CHECK(rules[0]["name"] != rules[1]["name"]);
    CHECK(rules[2]["name"] == "named");

    auto later = f.call("POST", "/faults", rule_503());
    REQUIRE(later.status == 201);
    auto name = body_of(later)["rules"][0]["name"];
    CHECK(name != rules[0]["name"]);
    CHECK(name != rules[1]["name"]);
    CHECK(f.decider.rules().size() == 4);
}

TEST_CASE("admin: default names skip names taken in the batch and by kept rules", "[unit]") {
    admin_fixture f;
    auto first =
        f.call("POST", "/faults", json::array({rule_503("rule-2"), rule_503(), rule_503()}));
    REQUIRE(first.status == 201);
    auto more =
        f.call("POST", "/faults", json::array({rule_503(), rule_503("rule-9"), rule_503()}));
    REQUIRE(more.status == 201);
    auto names = f.rule_names();
    REQUIRE(names.size() == 6);
    std::sort(names.begin(), names.end());
    CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());

    auto put = f.call("PUT", "/faults", json::array({rule_503(), rule_503("rule-1"), rule_503()}));
    REQUIRE(put.status == 200);
    names = f.rule_names();
    std::sort(names.begin(), names.end());
    CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}

TEST_CASE("admin: a batch with one bad rule adds none and names the key", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults", rule_503("kept")).status == 201);

    check_path(f.call("POST", "/faults", json::array({rule_503("a"), bad_status_rule()})), 400,
               "[1].fault.status");
    check_path(f.call("POST", "/faults", bad_status_rule()), 400, "fault.status");
    json unknown = rule_503("b");
    unknown["bogus"] = 1;
    check_path(f.call("POST", "/faults", json::array({unknown})), 400, "[0].bogus");
    check_path(f.call("POST", "/faults", json::array()), 400, "");
    check_path(f.call("POST", "/faults", json(42)), 400, "");
    check_path(f.call("POST", "/faults", std::string("{\"name\":")), 400, "");
    check_path(f.call("POST", "/faults", std::string()), 400, "");

    CHECK(f.rule_names() == std::vector<std::string>{"kept"});
}

TEST_CASE("admin: a duplicate rule name is a 409 and adds nothing", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults", rule_503("a")).status == 201);
    check_path(f.call("POST", "/faults", rule_503("a")), 409, "name");
    check_path(f.call("POST", "/faults", json::array({rule_503("b"), rule_503("a")})), 409,
               "[1].name");
    check_path(f.call("POST", "/faults", json::array({rule_503("c"), rule_503("c")})), 409,
               "[1].name");
    CHECK(f.rule_names() == std::vector<std::string>{"a"});
}

TEST_CASE("admin: PUT /faults replaces every rule and sets the cap", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults", rule_503("old")).status == 201);

    auto bare = f.call("PUT", "/faults", json::array({rule_503("x"), rule_503("y")}));
    REQUIRE(bare.status == 200);
    CHECK(body_of(bare)["rules"].size() == 2);
    CHECK(body_of(bare)["max_active_faults"].is_null());
    CHECK(f.rule_names() == std::vector<std::string>{"x", "y"});

    auto capped =
        f.call("PUT", "/faults", json{{"rules", {rule_503("z")}}, {"max_active_faults", 2}});
    REQUIRE(capped.status == 200);
    CHECK(body_of(capped)["max_active_faults"] == 2);
    CHECK(body_of(f.call("GET", "/faults"))["max_active_faults"] == 2);
    CHECK(f.decider.max_active() == std::optional<std::size_t>(2));

    // Absent keeps the cap; null removes it.
    REQUIRE(f.call("PUT", "/faults", json{{"rules", json::array()}}).status == 200);
    CHECK(f.decider.max_active() == std::optional<std::size_t>(2));
    CHECK(f.decider.rules().empty());
    auto uncapped =
        f.call("PUT", "/faults", json{{"rules", {rule_503("w")}}, {"max_active_faults", nullptr}});
    REQUIRE(uncapped.status == 200);
    CHECK(body_of(uncapped)["max_active_faults"].is_null());
    CHECK_FALSE(f.decider.max_active());
}

TEST_CASE("admin: a PUT that fails keeps the old rules and cap", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("PUT", "/faults", json{{"rules", {rule_503("old")}}, {"max_active_faults", 2}})
                .status == 200);
    const std::vector<std::string> old{"old"};

    check_path(
        f.call("PUT", "/faults",
               json{{"rules", {rule_503("n"), bad_status_rule()}}, {"max_active_faults", 5}}),
        400, "rules[1].fault.status");
    check_path(f.call("PUT", "/faults", json::array({bad_status_rule()})), 400, "[0].fault.status");
    check_path(f.call("PUT", "/faults", json{{"rules", json::array()}, {"max_rules", 1}}), 400,
               "max_rules");
    check_path(f.call("PUT", "/faults", json{{"max_active_faults", 3}}), 400, "rules");
    check_path(f.call("PUT", "/faults", json{{"rules", rule_503("n")}}), 400, "rules");
    for (const json& bad : {json(0), json(-1), json(1.5), json("2"), json(true)})
        check_path(
            f.call("PUT", "/faults", json{{"rules", json::array()}, {"max_active_faults", bad}}),
            400, "max_active_faults");
    check_path(f.call("PUT", "/faults", json("rules")), 400, "");

    check_path(f.call("PUT", "/faults",
                      json{{"rules", {rule_503("d"), rule_503("d")}}, {"max_active_faults", 5}}),
               409, "rules[1].name");
    check_path(f.call("PUT", "/faults", json::array({rule_503("d"), rule_503("d")})), 409,
               "[1].name");

    CHECK(f.rule_names() == old);
    CHECK(f.decider.max_active() == std::optional<std::size_t>(2));
}

TEST_CASE("admin: DELETE /faults removes every rule", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults", json::array({rule_503("a"), rule_503("b")})).status == 201);
    auto res = f.call("DELETE", "/faults");
    CHECK(res.status == 200);
    CHECK(body_of(res)["removed"] == 2);
    CHECK(f.decider.rules().empty());
    CHECK(body_of(f.call("DELETE", "/faults"))["removed"] == 0);
}

TEST_CASE("admin: the seed reads and sets as a number or a decimal string", "[unit]") {
    admin_fixture f;
    CHECK(body_of(f.call("GET", "/seed")) == json{{"seed", 42}});

    auto set = f.call("PUT", "/seed", json{{"seed", 7}});
    CHECK(set.status == 200);
    CHECK(body_of(set)["seed"] == 7);
    CHECK(f.decider.seed() == 7);

    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    auto text = f.call("PUT", "/seed", json{{"seed", "18446744073709551615"}});
    CHECK(text.status == 200);
    CHECK(f.decider.seed() == max);
    CHECK(body_of(f.call("GET", "/seed"))["seed"].get<std::uint64_t>() == max);
    CHECK(body_of(f.call("GET", "/faults"))["seed"].get<std::uint64_t>() == max);

    CHECK(f.call("PUT", "/seed", std::string(R"({"seed":18446744073709551615})")).status == 200);
    CHECK(f.call("PUT", "/seed", json{{"seed", "0"}}).status == 200);
    CHECK(f.decider.seed() == 0);

    for (std::string bad :
         {R"({"seed":18446744073709551616})", R"({"seed":"18446744073709551616"})",
          R"({"seed":-1})", R"({"seed":"-1"})", R"({"seed":1.5})", R"({"seed":"12a"})",
          R"({"seed":" 12"})", R"({"seed":""})", R"({"seed":null})", R"({"seed":[1]})", R"({})"})
        check_path(f.call("PUT", "/seed", bad), 400, "seed");
    check_path(f.call("PUT", "/seed", json{{"seed", 1}, {"salt", 2}}), 400, "salt");
    check_path(f.call("PUT", "/seed", json(5)), 400, "");
    CHECK(f.decider.seed() == 0);
}

TEST_CASE("admin: counters report decisions, and reset zeroes them", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults", rule_503("fire")).status == 201);
    CHECK(f.decide().rule == "fire");
    CHECK(f.decide().rule == "fire");

    auto counters = body_of(f.call("GET", "/counters"));
    CHECK(counters["requests"]["gateway"]["served"] == 3);
    CHECK(counters["functions"]["Payments"]["warm"] == 1);
    const auto& fc = counters["faults"];
    CHECK(fc["by_kind"]["gateway_error"] == 2);
    CHECK(fc["by_rule"]["fire"] == 2);
    CHECK(fc["by_action"][std::string(faults::action_name(faults::actions::gateway_error{}))] ==
          2);
    CHECK(fc["decisions"] == 2);
    CHECK(fc["overflow"] == 0);
    CHECK(fc["active"] == 0);
    CHECK(fc["by_front"] == json{{"gateway", 2}});
    CHECK(fc["missed"] == 0);
    CHECK(fc["missed_by_kind"] == json::object());

    auto reset = f.call("POST", "/counters/reset");
    CHECK(reset.status == 200);
    CHECK(body_of(reset)["reset"] == true);
    CHECK(f.request_resets == 1);
    auto after = body_of(f.call("GET", "/counters"))["faults"];
    CHECK(after["decisions"] == 0);
    CHECK(after["by_rule"].value("fire", 0) == 0);
    CHECK(f.rule_names() == std::vector<std::string>{"fire"}); // rules stay
}

TEST_CASE("admin: counters say which faults did not happen, and reset zeroes them", "[unit]") {
    admin_fixture f;
    REQUIRE(f.call("POST", "/faults",
                   json{{"name", "crash"}, {"fault", {{"kind", "function_error"}}}})
                .status == 201);
    const auto answered_first = f.decide();
    REQUIRE(answered_first.rule == "crash");
    CHECK(f.decide().rule == "crash");
    f.decider.missed(answered_first);

    auto fc = body_of(f.call("GET", "/counters"))["faults"];
    CHECK(fc["missed"] == 1);
    CHECK(fc["missed_by_kind"] == json{{"function_error", 1}});
    CHECK(fc["by_kind"] == json{{"function_error", 1}});
    CHECK(fc["by_rule"] == json{{"crash", 1}});
    CHECK(fc["by_action"] == json{{"function_exit", 1}});
    CHECK(fc["by_front"] == json{{"gateway", 1}});
    CHECK(fc["decisions"] == 2);

    REQUIRE(f.call("POST", "/counters/reset").status == 200);
    fc = body_of(f.call("GET", "/counters"))["faults"];
    CHECK(fc["missed"] == 0);
    CHECK(fc["missed_by_kind"] == json::object());
    CHECK(fc["by_front"] == json::object());
}

TEST_CASE("admin: counters without the app's callbacks are empty objects", "[unit]") {
    admin_fixture f;
    f.ctx.request_counters = nullptr;
    f.ctx.function_counters = nullptr;
    f.ctx.reset_request_counters = nullptr;
    auto counters = body_of(f.call("GET", "/counters"));
    CHECK(counters["requests"] == json::object());
    CHECK(counters["functions"] == json::object());
    CHECK(counters["faults"]["by_kind"] == json::object());
    CHECK(f.call("POST", "/counters/reset").status == 200);
}

TEST_CASE("admin: decisions page through the log with since", "[unit]") {
    admin_fixture f;
    f.log.write(R"({"event":"created","n":0})");
    f.log.write(R"({"event":"reused","n":1})");
    f.log.write(R"({"event":"evicted","n":2})");

    auto all = body_of(f.call("GET", "/decisions"));
    CHECK(all["next"] == 3);
    CHECK(all["dropped"] == 0);
    REQUIRE(all["decisions"].size() == 3);
    CHECK(all["decisions"][0] == json{{"event", "created"}, {"n", 0}});
    CHECK(all["decisions"][2]["event"] == "evicted");

    auto tail = body_of(f.call("GET", "/decisions?since=2"));
    CHECK(tail["next"] == 3);
    REQUIRE(tail["decisions"].size() == 1);
    CHECK(tail["decisions"][0]["n"] == 2);

    auto caught_up = body_of(f.call("GET", "/decisions?x=1&since=3"));
    CHECK(caught_up["next"] == 3);
    CHECK(caught_up["decisions"].empty());

    // Lines that left the memory buffer are counted, not served.
    f.log.set_capacity(2);
    f.log.write(R"({"event":"created","n":3})");
    auto trimmed = body_of(f.call("GET", "/decisions?since=0"));
    CHECK(trimmed["dropped"] == 2);
    REQUIRE(trimmed["decisions"].size() == 2);
    CHECK(trimmed["decisions"][0]["n"] == 2);
    CHECK(trimmed["next"] == 4);

    for (const char* bad : {"/decisions?since=abc", "/decisions?since=-1", "/decisions?since=",
                            "/decisions?since=1.5", "/decisions?since=99999999999999999999"}) {
        INFO(bad);
        CHECK(f.call("GET", bad).status == 400);
    }
}

TEST_CASE("admin: decisions come at most 10,000 per call", "[unit]") {
    admin_fixture f;
    for (int i = 0; i < 10005; ++i)
        f.log.write(R"({"event":"reused"})");
    auto first = body_of(f.call("GET", "/decisions"));
    CHECK(first["decisions"].size() == 10000);
    CHECK(first["next"] == 10000);
    auto rest = body_of(f.call("GET", "/decisions?since=10000"));
    CHECK(rest["decisions"].size() == 5);
    CHECK(rest["next"] == 10005);
}

TEST_CASE("admin: decisions without a log are an empty list", "[unit]") {
    admin_fixture f;
    f.ctx.decisions = nullptr;
    auto res = f.call("GET", "/decisions?since=4");
    CHECK(res.status == 200);
    CHECK(body_of(res)["decisions"] == json::array());
    CHECK(body_of(res)["dropped"] == 0);
}

TEST_CASE("admin: POST /reset restores the configured rules and cap, keeps the seed", "[unit]") {
    admin_fixture f;
    f.configured.push_back(faults::parse_rule(rule_503("configured"), f.registry, "rule-0"));
    f.ctx.configured_max_active = 3;
    f.decider.set_rules(f.configured, f.now);

    REQUIRE(f.call("PUT", "/faults",
                   json{{"rules", {rule_503("ad-hoc")}}, {"max_active_faults", nullptr}})
                .status == 200);
    REQUIRE(f.call("PUT", "/seed", json{{"seed", 9}}).status == 200);
    f.decide();
    f.now += 5000;

    auto res = f.call("POST", "/reset");
    REQUIRE(res.status == 200);
    auto rules = body_of(res)["rules"];
    REQUIRE(rules.size() == 1);
    CHECK(rules[0] == f.configured[0].to_json());
    CHECK(f.rule_names() == std::vector<std::string>{"configured"});
    CHECK(f.decider.max_active() == std::optional<std::size_t>(3));
    CHECK(f.decider.seed() == 9);
    CHECK(f.decider.counters().decisions == 0);
    CHECK(f.request_resets == 1);

    // Nothing configured: no rules.
    f.ctx.configured_rules = nullptr;
    f.ctx.configured_max_active.reset();
    CHECK(body_of(f.call("POST", "/reset"))["rules"] == json::array());
    CHECK_FALSE(f.decider.max_active());
}

TEST_CASE("admin: unknown endpoints are 404, other methods 405 with Allow", "[unit]") {
    admin_fixture f;
    for (const char* target :
         {"/", "/fault", "/faults/", "/faults/a/b", "/counters/x", "/seed/1"}) {
        INFO(target);
        CHECK(f.call("GET", target).status == 404);
    }
    auto patch = f.call("PATCH", "/faults");
    CHECK(patch.status == 405);
    CHECK(patch.header("Allow").value_or("") == "GET, POST, PUT, DELETE");
    auto seed = f.call("POST", "/seed", json{{"seed", 1}});
    CHECK(seed.status == 405);
    CHECK(seed.header("Allow").value_or("") == "GET, PUT");
    CHECK(f.decider.seed() == 42);
    CHECK(f.call("PUT", "/faults/x").header("Allow").value_or("") == "GET, DELETE");
    CHECK(f.call("GET", "/reset").status == 405);
    CHECK(f.call("GET", "/counters/reset").status == 405);
    CHECK(f.call("DELETE", "/decisions").status == 405);
    // The query is not part of the route.
    CHECK(f.call("GET", "/faults?verbose=1").status == 200);
}

TEST_CASE("admin: a body must be JSON by Content-Type when one is given", "[unit]") {
    admin_fixture f;
    const std::string body = rule_503("typed").dump();
    CHECK(f.call("POST", "/faults", body, {{"Content-Type", "text/plain"}}).status == 415);
    CHECK(f.call("POST", "/faults", body, {{"content-type", "multipart/form-data; boundary=x"}})
              .status == 415);
    CHECK(f.call("PUT", "/seed", R"({"seed":1})", {{"Content-Type", "application/jsonx"}}).status ==
          415);
    CHECK(f.decider.rules().empty());
    CHECK(f.decider.seed() == 42);

    // curl -d's default label.
    CHECK(f.call("POST", "/faults", rule_503("curl").dump(),
                 {{"Content-Type", "application/x-www-form-urlencoded"}})
              .status == 201);
    CHECK(f.call("POST", "/faults", body, {{"content-type", "Application/JSON; charset=utf-8"}})
              .status == 201);
    CHECK(f.call("DELETE", "/faults/typed").status == 200);
    CHECK(f.call("POST", "/faults", body).status == 201); // curl -d without -H
}

TEST_CASE("admin: a wiring bug is a 500, never an exception", "[unit]") {
    admin_fixture f;
    f.ctx.faults = nullptr;
    auto res = f.call("GET", "/faults");
    CHECK(res.status == 500);
    CHECK(body_of(res).contains("message"));

    admin_fixture g;
    g.ctx.now_ms = nullptr;
    CHECK(g.call("POST", "/faults", rule_503("x")).status == 500);
    CHECK(g.decider.rules().empty());
}

TEST_CASE("admin: request outcomes as JSON", "[unit]") {
    admin::request_outcomes o;
    o.served = 5;
    o.injected_fault = 2;
    o.handler_error = 1;
    CHECK(o.to_json() ==
          json{{"served", 5}, {"injected_fault", 2}, {"handler_error", 1}, {"emulator_error", 0}});
}

TEST_CASE("admin: with a run record, every change that succeeds is recorded, at its time", "[unit]") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("coldbrew-admin-record-" + std::to_string(::getpid()) + ".jsonl");
    admin_fixture f;
    {
        telemetry::run_recorder rec;
        REQUIRE_FALSE(rec.open(path, {}));
        f.ctx.recorder = &rec;
        CHECK(f.call("POST", "/faults", rule_503("a")).status == 201);
        CHECK(f.call("POST", "/faults", bad_status_rule()).status == 400);  // changes nothing
        f.now = 2000;
        CHECK(f.call("PUT", "/faults", json{{"rules", json::array({rule_503("b")})},
                                             {"max_active_faults", 2}})
                  .status == 200);
        CHECK(f.call("DELETE", "/faults/b").status == 200);
        CHECK(f.call("DELETE", "/faults/nope").status == 404);
        CHECK(f.call("PUT", "/seed", json{{"seed", 7}}).status == 200);
        CHECK(f.call("POST", "/counters/reset").status == 200);
        CHECK(f.call("POST", "/reset").status == 200);
        CHECK(f.call("DELETE", "/faults").status == 200);
    }
    const auto back = models::sim::read_record(path);
    std::filesystem::remove(path);
    std::vector<std::string> ops;
    for (const auto& e : back.events) ops.push_back(std::get<models::sim::recorded_rules>(e).op);
    CHECK(ops == std::vector<std::string>{"add", "replace", "remove", "seed", "reset", "restore",
                                          "clear"});
    const auto& add = std::get<models::sim::recorded_rules>(back.events[0]);
    CHECK(add.at_ms == 1000);
    CHECK(add.rules.at(0).at("name") == "a");
    const auto& replace = std::get<models::sim::recorded_rules>(back.events[1]);
    CHECK(replace.at_ms == 2000);
    CHECK(replace.max_active_faults == std::optional<std::optional<std::uint64_t>>(2));
    CHECK(std::get<models::sim::recorded_rules>(back.events[2]).name == "b");
    CHECK(std::get<models::sim::recorded_rules>(back.events[3]).seed == 7);
}

TEST_CASE("admin API: GET /ready is 503 until the app says it is ready, then 200 with its addresses",
          "[unit]") {
    admin_fixture f;
    auto before = f.call("GET", "/ready");
    CHECK(before.status == 503);
    CHECK(nlohmann::json::parse(before.body)["ready"] == false);
    bool ready = false;
    f.ctx.readiness = [&ready] {
        return ready ? nlohmann::json{{"ready", true}, {"gateway", "http://127.0.0.1:1"}}
                     : nlohmann::json{{"ready", false}, {"message", "starting"}};
    };
    auto starting = f.call("GET", "/ready");
    CHECK(starting.status == 503);
    CHECK(nlohmann::json::parse(starting.body)["message"] == "starting");
    ready = true;
    auto now = f.call("GET", "/ready");
    CHECK(now.status == 200);
    CHECK(nlohmann::json::parse(now.body)["gateway"] == "http://127.0.0.1:1");
    CHECK(f.call("POST", "/ready").status == 405);
}
