// The gateway front's Step Functions routes against a fake starter, on the manual scheduler:
// the request path they share with function routes (faults, phantoms, delays, the
// integration timeout) and what the client gets.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/front/executor.hpp"
#include "emulator/front/gateway_front.hpp"
#include "models/faults/faults.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using namespace coldbrew;
namespace mf = coldbrew::models::faults;
using json = nlohmann::json;

namespace {

struct client final : http::responder::target {
    std::optional<http::response> got;
    bool was_reset = false;
    std::function<void()> close_fn;

    void send(http::response res, const http::send_options& o) override {
        got = std::move(res);
        if (auto f = o.on_finished) f();
    }
    void reset() override { was_reset = true; }
    bool alive() const override { return !got && !was_reset; }
    void on_close(std::function<void()> fn) override { close_fn = std::move(fn); }
};

struct fake_starter final : front::state_machine_starter {
    struct call {
        const config::route* route;
        std::string input, name, trace;
        std::function<void(int, std::string)> done;
    };
    std::vector<call> calls;
    bool throws = false;
    // Answers at once when set.
    std::optional<std::pair<int, std::string>> instant;

    void start(const config::route& route, std::string input, std::string name,
               std::string trace, std::function<void(int, std::string)> done) override {
        if (throws) throw std::runtime_error("boom");
        if (instant) {
            done(instant->first, instant->second);
            return;
        }
        calls.push_back({&route, std::move(input), std::move(name), std::move(trace), std::move(done)});
    }
    void answer(std::size_t i, int status, std::string body) {
        auto d = std::move(calls.at(i).done);
        REQUIRE(d);
        d(status, std::move(body));
    }
};

struct function_pool final : front::function_target {
    config::function fn;
    int invoked = 0;
    const config::function& function() const override { return fn; }
    void invoke(functions::invocation) override { ++invoked; }
};

constexpr const char* started_body = R"({"executionArn":"arn:aws:states:us-east-1:123456789012:execution:flow-sm:e1","startDate":1764686400.5})";

struct fixture {
    explicit fixture(bool with_starter = true) : sched(1.0, &clock), faults(registry, 7) {
        spdlog::set_level(spdlog::level::off);
        mf::register_builtin_faults(registry);
        stack.settings.region = "us-east-1";
        stack.settings.account_id = "123456789012";
        pool.fn.name = "Hello";
        pool.fn.function_name = "hello-fn";
        stack.functions.push_back(pool.fn);
        config::state_machine m;
        m.name = "Flow";
        m.state_machine_name = "flow-sm";
        m.type = config::state_machine::kind::express;
        stack.state_machines.push_back(m);

        config::api rest;
        rest.id = "ServerlessRestApi";
        rest.kind = config::api_kind::rest;
        rest.stage = "Prod";
        stack.apis.push_back(rest);
        config::api http;
        http.id = "Http";
        http.kind = config::api_kind::http;
        http.stage = "$default";
        stack.apis.push_back(http);

        config::route start;  // a SAM Api event on the machine
        start.api_id = rest.id;
        start.method = "POST";
        start.path = "/start";
        start.state_machine = "Flow";
        start.payload_format_version = "1.0";
        start.integration_timeout_ms = 29000;
        stack.routes.push_back(start);

        config::route sync;  // HTTP API StepFunctions-StartSyncExecution
        sync.api_id = http.id;
        sync.method = "POST";
        sync.path = "/sync";
        sync.state_machine = "Flow";
        sync.state_machine_action = config::route::sfn_action::start_sync_execution;
        sync.state_machine_request_template =
            json{{"StateMachineArn", "arn:aws:states:us-east-1:123456789012:stateMachine:flow-sm"},
                 {"Input", "$request.body"},
                 {"Name", "$request.header.x-run"}}
                .dump();
        sync.payload_format_version = "1.0";
        sync.integration_timeout_ms = 30000;
        stack.routes.push_back(sync);

        config::route hello;
        hello.api_id = rest.id;
        hello.method = "GET";
        hello.path = "/hello";
        hello.function = "Hello";
        hello.payload_format_version = "1.0";
        hello.integration_timeout_ms = 29000;
        stack.routes.push_back(hello);

        front::executor_deps d;
        d.clock = &clock;
        d.rng = &rng;
        d.scheduler = &sched;
        d.faults = &faults;
        d.stats = stats;
        d.stats_origin = clock.steady();
        ex = std::make_unique<front::executor>(d);
        auto find = [this](std::string_view name) -> front::function_target* {
            return name == "Hello" ? &pool : nullptr;
        };
        gateway = std::make_unique<front::gateway_front>(stack, *ex, clock, rng, find, sched,
                                                         front::jwt_key_sets{},
                                                         with_starter ? &starter : nullptr);
    }

    void rule(json j) {
        auto rules = faults.rules();
        rules.push_back(mf::parse_rule(j, registry, "r" + std::to_string(rules.size())));
        faults.set_rules(std::move(rules), sched.now_ms());
    }

    std::shared_ptr<client> send(std::string method, std::string target, std::string body,
                                 http::header_list headers = {{"Content-Type", "application/json"}}) {
        auto c = std::make_shared<client>();
        http::request req;
        req.method = std::move(method);
        req.target = std::move(target);
        req.headers = std::move(headers);
        req.body = std::move(body);
        gateway->handle(std::move(req), http::responder(c));
        return c;
    }
    std::shared_ptr<client> post_start(std::string body = R"({"order":1})") {
        return send("POST", "/start", std::move(body));
    }

    const admin::request_outcomes& gw() const { return ex->outcomes(mf::front::gateway); }

    testing::manual_clock clock;
    testing::manual_scheduler sched;
    models::random_source rng{42};
    mf::fault_registry registry;
    mf::decider faults;
    std::shared_ptr<telemetry::request_stats> stats = std::make_shared<telemetry::request_stats>();
    config::stack stack;
    function_pool pool;
    fake_starter starter;
    std::unique_ptr<front::executor> ex;
    std::unique_ptr<front::gateway_front> gateway;
};

}  // namespace

TEST_CASE("gateway sfn: a SAM Api event route starts an execution with the body as input",
          "[unit]") {
    fixture f;
    auto c = f.post_start(R"({"order": 1})");
    REQUIRE(f.starter.calls.size() == 1);
    const auto& call = f.starter.calls[0];
    CHECK(call.route == &f.stack.routes[0]);
    CHECK(json::parse(call.input) == json::parse(R"({"order":1})"));
    CHECK(call.name.empty());  // drawn by the service
    CHECK(call.trace.starts_with("Root=1-"));
    CHECK(call.trace.find("Sampled=0") != std::string::npos);
    CHECK(!c->got);
    f.starter.answer(0, 200, started_body);
    REQUIRE(c->got);
    CHECK(c->got->status == 200);
    CHECK(c->got->body == started_body);
    CHECK(c->got->header("Content-Type") == "application/json");
    CHECK(!c->got->header("x-amzn-RequestId").value_or("").empty());
    CHECK(f.gw().served == 1);
    CHECK(f.ex->open_requests() == 0);

    SECTION("a caller's trace header goes on") {
        auto t = f.send("POST", "/start", "{}",
                        {{"Content-Type", "application/json"},
                         {"X-Amzn-Trace-Id", "Root=1-5e5fffc5-0123456789abcdef01234567;Sampled=1"}});
        REQUIRE(f.starter.calls.size() == 2);
        CHECK(f.starter.calls[1].trace == "Root=1-5e5fffc5-0123456789abcdef01234567;Sampled=1");
    }
}

TEST_CASE("gateway sfn: the service's errors and unreadable requests", "[unit]") {
    fixture f;
    SECTION("a 400 from Step Functions passes through") {
        auto c = f.post_start();
        const std::string err = R"({"__type":"InvalidExecutionInput","message":"bad"})";
        f.starter.answer(0, 400, err);
        REQUIRE(c->got);
        CHECK(c->got->status == 400);
        CHECK(c->got->body == err);
        CHECK(f.gw().served == 1);
    }
    SECTION("a body that is not JSON: API Gateway's 400, nothing started, no fault decided") {
        f.rule({{"fault", {{"kind", "gateway_error"}, {"status", 503}}}});
        auto c = f.post_start("not json");
        REQUIRE(c->got);
        CHECK(c->got->status == 400);
        CHECK(f.starter.calls.empty());
        CHECK(f.faults.counters().decisions == 0);
        CHECK(f.gw().served == 1);
    }
    SECTION("a body with a single quote reaches Step Functions unreadable: its 400, no start") {
        auto c = f.post_start(R"({"who":"O'Brien"})");
        REQUIRE(c->got);
        CHECK(c->got->status == 400);
        CHECK(json::parse(c->got->body)["__type"] == "SerializationException");
        CHECK(f.starter.calls.empty());
    }
    SECTION("a starter that answers at once") {
        f.starter.instant = std::make_pair(200, std::string(started_body));
        auto c = f.post_start();
        REQUIRE(c->got);
        CHECK(c->got->status == 200);
        CHECK(f.ex->open_requests() == 0);
    }
    SECTION("a starter that throws: 500, counted once") {
        f.starter.throws = true;
        auto c = f.post_start();
        REQUIRE(c->got);
        CHECK(c->got->status == 500);
        CHECK(f.ex->open_requests() == 0);
    }
}

TEST_CASE("gateway sfn: the route's guards come first", "[unit]") {
    fixture f;
    f.stack.routes[0].api_key_required = true;  // REST: x-api-key must name a key of a plan
    auto c = f.post_start();
    REQUIRE(c->got);
    CHECK(c->got->status == 403);
    CHECK(f.starter.calls.empty());
}

TEST_CASE("gateway sfn: without a starter the route answers 500", "[unit]") {
    fixture f(false);
    auto c = f.post_start();
    REQUIRE(c->got);
    CHECK(c->got->status == 500);
    f.gateway->set_state_machine_starter(&f.starter);
    auto d = f.post_start();
    CHECK(f.starter.calls.size() == 1);
}

TEST_CASE("gateway sfn: HTTP API StartSyncExecution waits for the execution", "[unit]") {
    fixture f;
    auto c = f.send("POST", "/sync", R"({"amount":5})",
                    {{"Content-Type", "application/json"}, {"X-Run", "run-7"}});
    REQUIRE(f.starter.calls.size() == 1);
    CHECK(f.starter.calls[0].route->state_machine_action ==
          config::route::sfn_action::start_sync_execution);
    CHECK(f.starter.calls[0].input == R"({"amount":5})");
    CHECK(f.starter.calls[0].name == "run-7");
    f.sched.advance(10000);
    CHECK(!c->got);
    const std::string done = R"({"status":"SUCCEEDED","output":"{\"ok\":true}"})";
    f.starter.answer(0, 200, done);
    REQUIRE(c->got);
    CHECK(c->got->status == 200);
    CHECK(c->got->body == done);
    CHECK(c->got->header("apigw-requestid").has_value());

    SECTION("an execution that outlasts the integration timeout: 503, and its late answer goes nowhere") {
        auto slow = f.send("POST", "/sync", "{}");
        REQUIRE(f.starter.calls.size() == 2);
        f.sched.advance(29999);
        CHECK(!slow->got);
        f.sched.advance(1);
        REQUIRE(slow->got);
        CHECK(slow->got->status == 503);
        CHECK(f.gw().handler_error == 1);
        f.starter.answer(1, 200, done);
        CHECK(slow->got->status == 503);
        CHECK(f.ex->open_requests() == 0);
    }
    SECTION("HTTP APIs pass the service's other statuses through") {
        auto e = f.send("POST", "/sync", "{}");
        f.starter.answer(1, 500, R"({"__type":"ServiceUnavailable"})");
        REQUIRE(e->got);
        CHECK(e->got->status == 500);
        CHECK(json::parse(e->got->body)["__type"] == "ServiceUnavailable");
    }
}

TEST_CASE("gateway sfn: fault rules and phantoms apply to state machine routes", "[unit]") {
    SECTION("phantom before: nothing starts; the client waits out the integration timeout") {
        fixture f;
        f.rule({{"fault", {{"kind", "phantom"}, {"when", "before"}}}});
        auto c = f.post_start();
        CHECK(f.starter.calls.empty());
        f.sched.advance(29000);
        REQUIRE(c->got);
        CHECK(c->got->status == 504);
        CHECK(c->got->header(front::fault_header).value_or("") ==
              "phantom; rule=r0; action=phantom_before");
        CHECK(f.gw().injected_fault == 1);
    }
    SECTION("phantom after: the execution starts, the client never hears of it") {
        fixture f;
        f.rule({{"route", "POST /start"}, {"fault", {{"kind", "phantom"}, {"when", "after"}}}});
        auto c = f.post_start();
        REQUIRE(f.starter.calls.size() == 1);
        f.starter.answer(0, 200, started_body);
        CHECK(!c->got);
        f.sched.advance(29000);
        REQUIRE(c->got);
        CHECK(c->got->status == 504);
        CHECK(f.gw().injected_fault == 1);
    }
    SECTION("a delay comes before the start") {
        fixture f;
        f.rule({{"route", "POST /start"}, {"fault", {{"kind", "delay"}, {"duration", "fixed(500ms)"}}}});
        auto c = f.post_start();
        CHECK(f.starter.calls.empty());
        f.sched.advance(500);
        REQUIRE(f.starter.calls.size() == 1);
        f.starter.answer(0, 200, started_body);
        REQUIRE(c->got);
        CHECK(c->got->status == 200);
    }
    SECTION("an injected gateway error answers without starting") {
        fixture f;
        f.rule({{"method", "POST"}, {"fault", {{"kind", "gateway_error"}, {"status", 502}}}});
        auto c = f.post_start();
        REQUIRE(c->got);
        CHECK(c->got->status == 502);
        CHECK(f.starter.calls.empty());
    }
    SECTION("a rule naming a function does not fire on a state machine route") {
        fixture f;
        f.rule({{"function", "Hello"}, {"fault", {{"kind", "gateway_error"}, {"status", 503}}}});
        auto c = f.post_start();
        REQUIRE(f.starter.calls.size() == 1);
        f.starter.answer(0, 200, started_body);
        REQUIRE(c->got);
        CHECK(c->got->status == 200);
        auto h = f.send("GET", "/hello", "");
        REQUIRE(h->got);
        CHECK(h->got->status == 503);
        CHECK(f.pool.invoked == 0);
    }
    SECTION("the nth-request selector counts state machine requests like any other") {
        fixture f;
        f.rule({{"route", "POST /start"}, {"nth", 2}, {"fault", {{"kind", "gateway_error"}, {"status", 503}}}});
        auto a = f.post_start();
        auto b = f.post_start();
        REQUIRE(b->got);
        CHECK(b->got->status == 503);
        CHECK(f.starter.calls.size() == 1);
    }
}
