// The shared request path without sockets or sleeps: the gateway and Invoke API front ends
// drive the executor against a fake pool, on a manual scheduler and a manual clock.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/front/executor.hpp"
#include "emulator/front/gateway_front.hpp"
#include "emulator/front/invoke_front.hpp"
#include "models/faults/faults.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using namespace coldbrew;
namespace mf = coldbrew::models::faults;
using json = nlohmann::json;

namespace {

// The client side of one request: what it received, and a way to leave.
struct fake_client final : http::responder::target {
    std::optional<http::response> got;
    http::send_options opts;
    bool was_reset = false;
    bool gone = false;
    std::function<void()> close_fn;

    void send(http::response res, const http::send_options& o) override {
        if (gone) return;  // the server drops an answer to a client that left
        got = std::move(res);
        opts = o;
        // An unshaped answer is handed over at once; a trickled one when the test says so.
        if (!(o.bytes_per_s > 0)) finish();
    }
    void reset() override {
        if (!gone && !got) was_reset = true;
    }
    bool alive() const override { return !gone && !got && !was_reset; }
    void on_close(std::function<void()> fn) override {
        if (gone) {
            fn();
            return;
        }
        close_fn = std::move(fn);
    }
    void finish() {
        close_fn = nullptr;  // fully handed over: no close notification after it
        if (auto f = std::move(opts.on_finished)) f();
    }
    void leave() {
        gone = true;
        if (auto f = std::move(close_fn)) f();
    }
    std::string header(std::string_view name) const {
        if (!got) return {};
        return std::string(got->header(name).value_or(""));
    }
};

// A function the executor invokes; the test answers its invocations.
struct fake_pool final : front::function_target {
    config::function fn;
    std::vector<functions::invocation> calls;

    const config::function& function() const override { return fn; }
    void invoke(functions::invocation inv) override { calls.push_back(std::move(inv)); }

    void answer(std::size_t i, functions::outcome kind = functions::outcome::success,
                std::string payload = R"({"statusCode":200,"body":"hi"})") {
        functions::invocation_result r;
        r.kind = kind;
        r.payload = std::move(payload);
        if (kind == functions::outcome::function_error) r.error_type = "Runtime.ExitError";
        auto done = std::move(calls.at(i).on_done);
        REQUIRE(done);
        done(std::move(r));
    }
};

struct fixture {
    explicit fixture(double scale = 1.0) : sched(scale, &clock), faults(registry, 7) {
        spdlog::set_level(spdlog::level::warn);  // the gateway's access log
        mf::register_builtin_faults(registry);
        pool.fn.name = "Hello";
        pool.fn.function_name = "hello-fn";
        pool.fn.timeout_s = 3;
        stack.functions.push_back(pool.fn);
        config::api rest;
        rest.id = "ServerlessRestApi";
        rest.kind = config::api_kind::rest;
        rest.stage = "Prod";
        stack.apis.push_back(rest);
        config::route r;
        r.api_id = rest.id;
        r.method = "GET";
        r.path = "/hello";
        r.function = "Hello";
        r.payload_format_version = "1.0";
        r.integration_timeout_ms = 29000;
        stack.routes.push_back(r);

        front::executor_deps d;
        d.clock = &clock;
        d.rng = &rng;
        d.scheduler = &sched;
        d.faults = &faults;
        d.stats = stats;
        d.stats_origin = clock.steady();
        ex = std::make_unique<front::executor>(d);
        auto find = [this](std::string_view name) -> front::function_target* {
            return name == "Hello" || name == "hello-fn" ? &pool : nullptr;
        };
        gateway = std::make_unique<front::gateway_front>(stack, *ex, clock, rng, find, sched);
        invoke = std::make_unique<front::invoke_front>(
            stack, *ex, clock, rng, find,
            [this](const std::string&, const std::string&, std::string) { ++queued; });
    }

    void rule(json j) {
        auto rules = faults.rules();
        rules.push_back(mf::parse_rule(j, registry, "r" + std::to_string(rules.size())));
        faults.set_rules(std::move(rules), sched.now_ms());
    }

    std::shared_ptr<fake_client> get(std::string path = "/hello") {
        auto c = std::make_shared<fake_client>();
        http::request req;
        req.method = "GET";
        req.target = std::move(path);
        gateway->handle(std::move(req), http::responder(c));
        return c;
    }
    std::shared_ptr<fake_client> call(std::string body = "{}") {
        auto c = std::make_shared<fake_client>();
        http::request req;
        req.method = "POST";
        req.target = "/2015-03-31/functions/Hello/invocations";
        req.body = std::move(body);
        invoke->handle(std::move(req), http::responder(c));
        return c;
    }

    const admin::request_outcomes& gw() const { return ex->outcomes(mf::front::gateway); }
    const admin::request_outcomes& iv() const { return ex->outcomes(mf::front::invoke); }

    std::uint64_t fired() const {
        std::uint64_t n = 0;
        for (const auto& [_, v] : faults.counters().by_kind) n += v;
        return n;
    }
    std::uint64_t injected_outcomes() const { return gw().injected_fault + iv().injected_fault; }

    testing::manual_clock clock;
    testing::manual_scheduler sched;
    models::random_source rng{42};
    mf::fault_registry registry;
    mf::decider faults;
    std::shared_ptr<telemetry::request_stats> stats = std::make_shared<telemetry::request_stats>();
    config::stack stack;
    fake_pool pool;
    std::unique_ptr<front::executor> ex;
    std::unique_ptr<front::gateway_front> gateway;
    std::unique_ptr<front::invoke_front> invoke;
    int queued = 0;
};

}  // namespace

TEST_CASE("executor: a request without a fault is invoked and answered, once", "[unit]") {
    fixture f;
    auto c = f.get();
    REQUIRE(f.pool.calls.size() == 1);
    CHECK(!c->got);
    f.pool.answer(0);
    REQUIRE(c->got);
    CHECK(c->got->status == 200);
    CHECK(c->got->body == "hi");
    CHECK(c->header(front::fault_header).empty());
    CHECK(f.gw().served == 1);
    CHECK(f.stats->all().requests == 1);
    CHECK(f.ex->open_requests() == 0);

    auto i = f.call(R"({"a":1})");
    REQUIRE(f.pool.calls.size() == 2);
    CHECK(f.pool.calls[1].payload == R"({"a":1})");
    f.pool.answer(1, functions::outcome::success, R"({"ok":true})");
    REQUIRE(i->got);
    CHECK(i->got->status == 200);
    CHECK(f.iv().served == 1);
}

TEST_CASE("executor: the front ends' own answers are served and recorded", "[unit]") {
    fixture f;
    auto miss = f.get("/nope");
    REQUIRE(miss->got);
    CHECK(miss->got->status == 403);  // REST: Missing Authentication Token
    CHECK(f.pool.calls.empty());
    auto c = std::make_shared<fake_client>();
    http::request req;
    req.method = "POST";
    req.target = "/2015-03-31/functions/Nobody/invocations";
    f.invoke->handle(std::move(req), http::responder(c));
    REQUIRE(c->got);
    CHECK(c->got->status == 404);
    CHECK(f.gw().served == 1);
    CHECK(f.iv().served == 1);
    CHECK(f.stats->all().requests == 2);
}

TEST_CASE("executor: a delay is modeled time, scaled by the scheduler", "[unit]") {
    for (double scale : {1.0, 0.1}) {
        fixture f(scale);
        f.rule({{"fault", {{"kind", "delay"}, {"duration", "fixed(500ms)"}}}});
        const auto t0 = f.clock.steady();
        auto c = f.get();
        CHECK(f.pool.calls.empty());
        f.sched.advance(499);
        CHECK(f.pool.calls.empty());
        f.sched.advance(1);
        REQUIRE(f.pool.calls.size() == 1);
        // The clock moved by the real time the modeled 500 ms stands for.
        CHECK(std::chrono::duration<double, std::milli>(f.clock.steady() - t0).count() ==
              Approx(500 * scale));
        f.pool.answer(0);
        REQUIRE(c->got);
        CHECK(c->got->status == 200);
        CHECK(c->header(front::fault_header) == "delay; rule=r0; action=pass");
        CHECK(f.gw().injected_fault == 1);
        CHECK(f.fired() == f.injected_outcomes());
    }
}

TEST_CASE("executor: phantoms on the gateway: before, after, and what the client sees",
          "[unit]") {
    SECTION("before, timeout: never invoked; the integration timeout, then 504") {
        fixture f;
        f.rule({{"fault", {{"kind", "phantom"}, {"when", "before"}}}});
        auto c = f.get();
        CHECK(f.ex->held_count() == 1);
        f.sched.advance(28999);
        CHECK(!c->got);
        f.sched.advance(1);
        REQUIRE(c->got);
        CHECK(c->got->status == 504);
        CHECK(f.pool.calls.empty());
        CHECK(c->header(front::fault_header) == "phantom; rule=r0; action=phantom_before");
        CHECK(f.ex->held_count() == 0);
        CHECK(f.gw().injected_fault == 1);
    }
    SECTION("after, timeout: the function runs and its answer goes nowhere") {
        fixture f;
        f.rule({{"fault", {{"kind", "phantom"}, {"when", "after"}}}});
        auto c = f.get();
        REQUIRE(f.pool.calls.size() == 1);
        CHECK(!f.pool.calls[0].trace);  // runs untraced beside the client's wait
        f.pool.answer(0);
        CHECK(!c->got);
        f.sched.advance(29000);
        REQUIRE(c->got);
        CHECK(c->got->status == 504);
    }
    SECTION("after, reset: the reset waits for the lost answer") {
        fixture f;
        f.rule({{"fault", {{"kind", "phantom"}, {"when", "after"}, {"client_sees", "reset"}}}});
        auto c = f.get();
        REQUIRE(f.pool.calls.size() == 1);
        CHECK(!c->was_reset);
        f.pool.answer(0);
        CHECK(c->was_reset);
        CHECK(!c->got);
        CHECK(f.gw().injected_fault == 1);
    }
    SECTION("before, reset: at once") {
        fixture f;
        f.rule({{"fault", {{"kind", "phantom"}, {"when", "before"}, {"client_sees", "reset"}}}});
        auto c = f.get();
        CHECK(c->was_reset);
        CHECK(f.pool.calls.empty());
    }
    SECTION("hang: held until the client leaves, then the fault ends") {
        fixture f;
        f.rule({{"fault", {{"kind", "phantom"}, {"when", "before"}, {"client_sees", "hang"}}}});
        auto c = f.get();
        CHECK(f.faults.counters().active == 1);
        f.sched.advance(1e9);
        CHECK(!c->got);
        CHECK(f.ex->held_count() == 1);
        c->leave();
        CHECK(f.ex->held_count() == 0);
        CHECK(f.faults.counters().active == 0);
        CHECK(f.gw().injected_fault == 1);
        CHECK(f.stats->all().requests == 1);
    }
}

TEST_CASE("executor: the Invoke API's lost answer waits the function's timeout, scaled", "[unit]") {
    fixture f(0.01);
    f.rule({{"front", "invoke"}, {"fault", {{"kind", "phantom"}, {"when", "before"}}}});
    const auto t0 = f.clock.steady();
    auto c = f.call();
    f.sched.advance(2999);
    CHECK(!c->got);
    f.sched.advance(1);
    REQUIRE(c->got);
    CHECK(c->got->status == 500);
    CHECK(c->header("x-amzn-ErrorType").find("ServiceException") != std::string::npos);
    CHECK(std::chrono::duration<double, std::milli>(f.clock.steady() - t0).count() ==
          Approx(30.0));
}

TEST_CASE("executor: injected answers in each front's words", "[unit]") {
    struct expect {
        json fault;
        int gateway_status;
        int invoke_status;
        std::string action;
    };
    const std::vector<expect> cases = {
        {{{"kind", "gateway_error"}, {"status", 503}}, 503, 503, "gateway_error"},
        {{{"kind", "gateway_error"}, {"status", 429}}, 429, 429, "gateway_error"},
        {{{"kind", "function_error"}, {"mode", "handler"}}, 502, 200, "handler_error"},
        {{{"kind", "throttle"}}, 500, 429, "throttle"},
    };
    for (const auto& e : cases) {
        fixture f;
        f.rule({{"fault", e.fault}});
        auto g = f.get();
        auto i = f.call();
        CHECK(f.pool.calls.empty());  // none of these invokes
        REQUIRE(g->got);
        REQUIRE(i->got);
        CHECK(g->got->status == e.gateway_status);
        CHECK(i->got->status == e.invoke_status);
        CHECK(g->header(front::fault_header).find("action=" + e.action) != std::string::npos);
        if (e.action == "handler_error") CHECK(i->header("X-Amz-Function-Error") == "Unhandled");
        CHECK(f.gw().injected_fault == 1);
        CHECK(f.iv().injected_fault == 1);
        CHECK(f.fired() == f.injected_outcomes());
    }
}

TEST_CASE("executor: an injected reset resets, on both fronts", "[unit]") {
    fixture f;
    f.rule({{"fault", {{"kind", "reset"}}}});
    auto g = f.get();
    auto i = f.call();
    CHECK(g->was_reset);
    CHECK(i->was_reset);
    CHECK(f.pool.calls.empty());
    CHECK(f.injected_outcomes() == 2);
    CHECK(f.stats->all().by_status.at(0) == 2);
}

TEST_CASE("executor: an injected exit that came after the answer is missed, not injected",
          "[unit]") {
    fixture f;
    f.rule({{"fault", {{"kind", "function_error"}, {"mode", "exit"}, {"after", "100ms"}}}});
    auto killed = f.get();
    auto missed = f.get();
    REQUIRE(f.pool.calls.size() == 2);
    CHECK(f.pool.calls[0].kill_after_ms == Approx(100.0));  // modeled: the environment scales it
    // Counted when the outcome is: nothing yet, so nothing will have to be taken back.
    CHECK(f.fired() == 0);
    f.pool.answer(0, functions::outcome::function_error,
                  R"({"errorType":"Runtime.ExitError","errorMessage":"killed"})");
    CHECK(f.fired() == 1);
    f.pool.answer(1);  // the handler beat the kill
    REQUIRE(killed->got);
    REQUIRE(missed->got);
    CHECK(killed->got->status == 502);
    CHECK(killed->header(front::fault_header) == "function_error; rule=r0; action=function_exit");
    CHECK(missed->got->status == 200);
    CHECK(missed->header(front::fault_header).empty());
    CHECK(f.gw().injected_fault == 1);
    CHECK(f.gw().served == 1);
    CHECK(f.faults.counters().missed == 1);
    CHECK(f.fired() == 1);
    CHECK(f.faults.counters().by_rule.at("r0") == 1);
    CHECK(f.fired() == f.injected_outcomes());
    CHECK(f.faults.counters().active == 0);
}

TEST_CASE("executor: a slow response is sent at the modeled rate made real", "[unit]") {
    for (double scale : {1.0, 0.1}) {
        fixture f(scale);
        f.rule({{"fault", {{"kind", "slow_response"}, {"bytes_per_s", 1000}}}});
        auto c = f.get();
        f.pool.answer(0);
        REQUIRE(c->got);
        // At time_scale 0.1 the modeled 1,000 B/s is sent at 10,000 B/s.
        CHECK(c->opts.bytes_per_s == Approx(1000 / scale));
        // The fault stays active while the answer trickles.
        CHECK(f.faults.counters().active == 1);
        c->finish();
        CHECK(f.faults.counters().active == 0);
        CHECK(f.stats->all().requests == 1);
    }
}

TEST_CASE("executor: a client that leaves mid-delay or mid-phantom frees its fault at once",
          "[unit]") {
    fixture f;
    f.faults.set_max_active(1);
    f.rule({{"route", "GET /hello"}, {"fault", {{"kind", "delay"}, {"duration", "fixed(10s)"}}}});
    auto first = f.get();
    CHECK(f.faults.counters().active == 1);
    // The cap is reached: the next request passes untouched (overflow).
    auto second = f.get();
    REQUIRE(f.pool.calls.size() == 1);
    CHECK(f.faults.counters().overflow == 1);
    f.pool.answer(0);
    CHECK(second->got);
    first->leave();
    CHECK(f.faults.counters().active == 0);
    CHECK(f.ex->held_count() == 0);
    f.sched.advance(20000);
    CHECK(f.pool.calls.size() == 1);  // the delay's invocation never happens
    // The cap is free again: the next request is delayed.
    auto third = f.get();
    CHECK(f.faults.counters().active == 1);
    CHECK(f.pool.calls.size() == 1);

    fixture p;
    p.rule({{"fault", {{"kind", "phantom"}, {"when", "before"}}}});
    auto c = p.get();
    CHECK(p.faults.counters().active == 1);
    c->leave();
    CHECK(p.faults.counters().active == 0);
    CHECK(p.sched.pending() == 0);  // the phantom's wait is cancelled
    CHECK(p.gw().injected_fault == 1);
    CHECK(p.stats->all().by_end.at(telemetry::request_end::injected_fault) == 1);
}

TEST_CASE("executor: the integration timeout bounds the handler's real work", "[unit]") {
    fixture f(0.01);
    auto c = f.get();
    REQUIRE(f.pool.calls.size() == 1);
    // 29 s real: at time_scale 0.01 that is 2,900,000 modeled ms.
    f.sched.advance(2'899'999);
    CHECK(!c->got);
    f.sched.advance(1);
    REQUIRE(c->got);
    CHECK(c->got->status == 504);
    CHECK(f.gw().handler_error == 1);
    f.pool.answer(0);  // too late: nothing changes
    CHECK(f.gw().handler_error == 1);
    CHECK(f.gw().served == 0);
}

TEST_CASE("executor: shutdown ends held requests and refuses what a delay held back", "[unit]") {
    fixture f;
    f.rule({{"fault", {{"kind", "phantom"}, {"when", "before"}, {"client_sees", "hang"}}}});
    auto hung = f.get();
    CHECK(f.ex->held_count() == 1);
    f.ex->stop();
    f.ex->abandon_held();
    CHECK(f.ex->held_count() == 0);
    CHECK(f.faults.counters().active == 0);
    CHECK(f.stats->all().requests == 1);

    fixture d;
    d.rule({{"fault", {{"kind", "delay"}, {"duration", "fixed(1s)"}}}});
    auto c = d.get();
    d.ex->stop();
    d.sched.advance(1000);
    REQUIRE(c->got);
    CHECK(c->got->status == 500);  // API Gateway's answer when Lambda refuses the invoke
    CHECK(d.pool.calls.empty());
}

TEST_CASE("executor: outcomes and fault counters add up under a mix of faults", "[unit]") {
    fixture f;
    f.rule({{"probability", 0.05}, {"fault", {{"kind", "phantom"}, {"after_share", 0.5}}}});
    f.rule({{"probability", 0.05}, {"fault", {{"kind", "function_error"}, {"mode", "exit"}}}});
    f.rule({{"probability", 0.05}, {"fault", {{"kind", "delay"}, {"duration", "fixed(5ms)"}}}});
    std::vector<std::shared_ptr<fake_client>> clients;
    for (int i = 0; i < 400; ++i) {
        clients.push_back(i % 2 ? f.call() : f.get());
        // Exit faults: about half are killed before the handler answers.
        for (std::size_t k = 0; k < f.pool.calls.size(); ++k) {
            auto& inv = f.pool.calls[k];
            if (!inv.on_done) continue;
            const bool kill = inv.kill_after_ms && (k % 2 == 0);
            f.pool.answer(k, kill ? functions::outcome::function_error : functions::outcome::success,
                          kill ? R"({"errorType":"Runtime.ExitError"})" : R"({"statusCode":200})");
        }
        f.sched.advance(10);
    }
    f.sched.advance(60000);
    const auto& c = f.faults.counters();
    std::uint64_t by_rule = 0, by_action = 0;
    for (const auto& [_, n] : c.by_rule) by_rule += n;
    for (const auto& [_, n] : c.by_action) by_action += n;
    CHECK(f.fired() > 20);
    CHECK(c.missed > 0);
    CHECK(f.fired() == f.injected_outcomes());
    CHECK(by_rule == f.fired());
    CHECK(by_action == f.fired());
    const auto total = f.gw().served + f.gw().injected_fault + f.gw().handler_error +
                       f.iv().served + f.iv().injected_fault + f.iv().handler_error;
    CHECK(total == 400);
    CHECK(f.stats->all().requests == 400);
    CHECK(f.stats->all().faults_by_kind.size() <= c.by_kind.size());
    std::uint64_t recorded_faults = 0;
    for (const auto& [_, n] : f.stats->all().faults_by_kind) recorded_faults += n;
    CHECK(recorded_faults == f.fired());
    CHECK(c.active == 0);
    CHECK(f.ex->open_requests() == 0);
}

TEST_CASE("executor: counters reset to zero", "[unit]") {
    fixture f;
    f.get();
    f.pool.answer(0);
    CHECK(f.gw().served == 1);
    f.ex->reset_counters();
    CHECK(f.gw().served == 0);
}

TEST_CASE("executor: a fault in flight across a counter reset is counted on one side only",
          "[unit]") {
    fixture f;
    f.rule({{"fault", {{"kind", "delay"}, {"duration", "fixed(2s)"}}}});
    auto c = f.get();
    f.sched.advance(700);
    f.ex->reset_counters();
    f.faults.reset();
    f.sched.advance(1300);
    f.pool.answer(0);
    REQUIRE(c->got);
    CHECK(f.gw().injected_fault == 1);
    CHECK(f.fired() == 1);
    CHECK(f.faults.counters().by_front.at("gateway") == 1);
}

TEST_CASE("executor: a phantom-after reset whose client leaves ends at once", "[unit]") {
    fixture f;
    f.faults.set_max_active(1);
    f.rule({{"fault", {{"kind", "phantom"}, {"when", "after"}, {"client_sees", "reset"}}}});
    auto c = f.get();
    REQUIRE(f.pool.calls.size() == 1);
    CHECK(f.faults.counters().active == 1);
    c->leave();
    CHECK(f.faults.counters().active == 0);
    CHECK(f.ex->held_count() == 0);
    f.pool.answer(0);  // the lost answer comes back to nobody
    CHECK(!c->was_reset);
    CHECK(f.gw().injected_fault == 1);
    CHECK(f.fired() == 1);
}

namespace {

// GET /hello behind a REST Lambda TOKEN authorizer "TokenAuth" run by the function Auth.
struct auth_fixture {
    auth_fixture() {
        auth.fn.name = "Auth";
        auth.fn.function_name = "auth-fn";
        config::authorizer a;
        a.name = "TokenAuth";
        a.kind = config::authorizer::type::token;
        a.function = "Auth";
        a.identity_sources = {"method.request.header.Authorization"};
        a.result_ttl_s = 60;
        f.stack.functions.push_back(auth.fn);
        f.stack.apis[0].authorizers.push_back(a);
        f.stack.routes[0].authorizer = "TokenAuth";
        auto find = [this](std::string_view name) -> front::function_target* {
            if (name == "Auth") return &auth;
            return name == "Hello" ? &f.pool : nullptr;
        };
        f.gateway = std::make_unique<front::gateway_front>(f.stack, *f.ex, f.clock, f.rng, find, f.sched);
    }
    std::shared_ptr<fake_client> get(const std::string& token) {
        auto c = std::make_shared<fake_client>();
        http::request req;
        req.method = "GET";
        req.target = "/hello";
        if (!token.empty()) req.headers.emplace_back("Authorization", token);
        f.gateway->handle(std::move(req), http::responder(c));
        return c;
    }
    static std::string policy(const std::string& effect) {
        return json{{"principalId", "ada"},
                    {"policyDocument",
                     {{"Version", "2012-10-17"},
                      {"Statement",
                       {{{"Action", "execute-api:Invoke"}, {"Effect", effect}, {"Resource", "*"}}}}}},
                    {"context", {{"tier", "gold"}}}}
            .dump();
    }
    fixture f;
    fake_pool auth;
};

}  // namespace

TEST_CASE("executor: a Lambda authorizer is called first and its context reaches the function",
          "[unit]") {
    auth_fixture a;
    auto missing = a.get("");
    REQUIRE(missing->got);
    CHECK(missing->got->status == 401);
    CHECK(a.auth.calls.empty());

    auto c = a.get("Bearer t1");
    REQUIRE(a.auth.calls.size() == 1);
    const auto event = json::parse(a.auth.calls[0].payload);
    CHECK(event["type"] == "TOKEN");
    CHECK(event["authorizationToken"] == "Bearer t1");
    CHECK(a.f.pool.calls.empty());
    a.auth.answer(0, functions::outcome::success, auth_fixture::policy("Allow"));
    REQUIRE(a.f.pool.calls.size() == 1);
    const auto ctx = json::parse(a.f.pool.calls[0].payload)["requestContext"]["authorizer"];
    CHECK(ctx["principalId"] == "ada");
    CHECK(ctx["tier"] == "gold");
    a.f.pool.answer(0);
    REQUIRE(c->got);
    CHECK(c->got->status == 200);

    // Cached for the TTL (modeled time), then asked again.
    a.get("Bearer t1");
    CHECK(a.auth.calls.size() == 1);
    CHECK(a.f.pool.calls.size() == 2);
    a.f.pool.answer(1);
    a.f.sched.advance(60001);
    a.get("Bearer t1");
    CHECK(a.auth.calls.size() == 2);

    auto denied = a.get("Bearer t2");
    a.auth.answer(2, functions::outcome::success, auth_fixture::policy("Deny"));
    REQUIRE(denied->got);
    CHECK(denied->got->status == 403);
    auto failed = a.get("Bearer t3");
    a.auth.answer(3, functions::outcome::function_error, R"({"errorMessage":"boom"})");
    REQUIRE(failed->got);
    CHECK(failed->got->status == 500);
    CHECK(a.f.gw().handler_error == 1);
    CHECK(a.f.pool.calls.size() == 2);
}

TEST_CASE("executor: the authorizer is decided apart, by the rules naming its function", "[unit]") {
    auth_fixture a;
    // A route-only rule stays with the integration; a rule naming Auth acts on the authorizer.
    a.f.rule({{"name", "route-delay"}, {"route", "GET /hello"},
              {"fault", {{"kind", "delay"}, {"duration", "fixed(100ms)"}}}});
    a.f.rule({{"name", "auth-down"}, {"function", "Auth"}, {"first", 1},
              {"fault", {{"kind", "function_error"}, {"mode", "handler"},
                         {"error_type", "Error"}, {"error_message", "unreachable"}}}});
    auto c = a.get("Bearer t1");
    REQUIRE(c->got);  // answered without invoking the authorizer or the function
    CHECK(c->got->status == 500);
    CHECK(c->header(front::fault_header).find("rule=auth-down") != std::string::npos);
    CHECK(a.auth.calls.empty());
    CHECK(a.f.gw().injected_fault == 1);
    CHECK(a.f.faults.counters().by_rule.at("auth-down") == 1);
    CHECK(a.f.faults.counters().by_rule.count("route-delay") == 0);

    // The next request: the authorizer runs, then the route's own decision (its delay).
    auto d = a.get("Bearer t1");
    REQUIRE(a.auth.calls.size() == 1);
    a.auth.answer(0, functions::outcome::success, auth_fixture::policy("Allow"));
    CHECK(a.f.pool.calls.empty());
    a.f.sched.advance(100);
    REQUIRE(a.f.pool.calls.size() == 1);
    a.f.pool.answer(0);
    REQUIRE(d->got);
    CHECK(d->got->status == 200);
    CHECK(a.f.faults.counters().by_rule.at("route-delay") == 1);
    CHECK(a.f.fired() == a.f.injected_outcomes());

    // An injected Unauthorized from the authorizer is API Gateway's 401.
    std::vector<mf::rule> more;
    more.push_back(mf::parse_rule(json{{"name", "auth-401"}, {"function", "auth-fn"},
                                       {"fault", {{"kind", "function_error"}, {"mode", "handler"},
                                                  {"error_type", "Error"},
                                                  {"error_message", "Unauthorized"}}}},
                                  a.f.registry, "x"));
    a.f.faults.add_rules(std::move(more), a.f.sched.now_ms());
    auto u = a.get("Bearer fresh");
    REQUIRE(u->got);
    CHECK(u->got->status == 401);
}

TEST_CASE("executor: a delay on the authorizer is waited once, before its call", "[unit]") {
    auth_fixture a;
    a.f.rule({{"name", "slow-auth"}, {"function", "Auth"},
              {"fault", {{"kind", "delay"}, {"duration", "fixed(200ms)"}}}});
    auto c = a.get("Bearer t1");
    CHECK(a.auth.calls.empty());
    a.f.sched.advance(200);
    REQUIRE(a.auth.calls.size() == 1);
    a.auth.answer(0, functions::outcome::success, auth_fixture::policy("Allow"));
    // The integration follows at once: the delay was the authorizer's, not the route's.
    REQUIRE(a.f.pool.calls.size() == 1);
    const auto ctx = json::parse(a.f.pool.calls[0].payload)["requestContext"]["authorizer"];
    CHECK(ctx["integrationLatency"].get<double>() >= 200);
    a.f.pool.answer(0);
    REQUIRE(c->got);
    CHECK(c->got->status == 200);
    CHECK(c->header(front::fault_header).find("rule=slow-auth") != std::string::npos);
    CHECK(a.f.gw().injected_fault == 1);
}
