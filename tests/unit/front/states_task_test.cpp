// The live task runner without sockets or processes: Task attempts go through the executor to a
// fake pool on a manual scheduler, and what the Task sees is checked for each outcome a fault
// or the function gives.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/front/executor.hpp"
#include "emulator/front/states_task.hpp"
#include "models/faults/faults.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using namespace coldbrew;
namespace mf = coldbrew::models::faults;
using json = nlohmann::json;

namespace {

struct fake_pool final : front::function_target {
    config::function fn;
    std::vector<functions::invocation> calls;
    const config::function& function() const override { return fn; }
    void invoke(functions::invocation inv) override { calls.push_back(std::move(inv)); }
    void answer(std::size_t i, functions::invocation_result r) {
        auto done = std::move(calls.at(i).on_done);
        REQUIRE(done);
        done(std::move(r));
    }
};

const std::string exec_arn = "arn:aws:states:us-east-1:123456789012:execution:checkout-flow:run-1";

struct fixture {
    fixture() : sched(1.0, &clock), faults(registry, 7) {
        spdlog::set_level(spdlog::level::warn);
        mf::register_builtin_faults(registry);
        pool.fn.name = "Charge";
        pool.fn.function_name = "charge-fn";
        pool.fn.timeout_s = 3;
        stack.functions.push_back(pool.fn);
        config::state_machine m;
        m.name = "Checkout";
        m.state_machine_name = "checkout-flow";
        m.function_arns["${ChargeArn}"] = "Charge";
        stack.state_machines.push_back(m);

        front::executor_deps d;
        d.clock = &clock;
        d.rng = &rng;
        d.scheduler = &sched;
        d.faults = &faults;
        d.stats = stats;
        d.stats_origin = clock.steady();
        ex = std::make_unique<front::executor>(d);
        front::states_task_deps td;
        td.stack = &stack;
        td.ex = ex.get();
        td.clock = &clock;
        td.rng = &rng;
        td.scheduler = &sched;
        td.find = [this](std::string_view n) -> front::function_target* {
            return n == "Charge" ? &pool : nullptr;
        };
        td.enqueue = [this](const std::string& f, const std::string&, std::string payload) {
            queued.emplace_back(f, std::move(payload));
        };
        runner = std::make_unique<front::states_task_runner>(std::move(td));

        invoke_state.name = "Pay";
        invoke_state.type = states::state_type::task;
        invoke_state.resource = "arn:aws:states:::lambda:invoke";
        invoke_state.target.what = states::task_resource::kind::lambda_invoke;
    }

    void rule(json j) {
        auto rules = faults.rules();
        rules.push_back(mf::parse_rule(j, registry, "r" + std::to_string(rules.size())));
        faults.set_rules(std::move(rules), sched.now_ms());
    }

    // Runs one attempt of `st` with `params`; the outcome lands in `got`.
    states::task_runner::handle run(const states::state& st, json params) {
        states::task_call c;
        c.state_name = st.name;
        c.path = st.name;
        c.task = &st;
        c.parameters = std::move(params);
        c.timeout_ms = 99999999000.0;
        c.execution_arn = exec_arn;
        return runner->run(c, [this](states::task_outcome o) {
            ++calls_done;
            got = std::move(o);
        });
    }
    json invoke_params(std::string name = "Charge") {
        return {{"FunctionName", std::move(name)}, {"Payload", {{"amount", 5}}}};
    }
    const admin::request_outcomes& st() const { return ex->outcomes(mf::front::states); }

    testing::manual_clock clock;
    testing::manual_scheduler sched;
    models::random_source rng{42};
    mf::fault_registry registry;
    mf::decider faults;
    std::shared_ptr<telemetry::request_stats> stats = std::make_shared<telemetry::request_stats>();
    config::stack stack;
    fake_pool pool;
    std::unique_ptr<front::executor> ex;
    std::unique_ptr<front::states_task_runner> runner;
    states::state invoke_state;
    std::optional<states::task_outcome> got;
    int calls_done = 0;
    std::vector<std::pair<std::string, std::string>> queued;
};

functions::invocation_result ok(std::string payload) {
    functions::invocation_result r;
    r.request_id = "req-1";
    r.payload = std::move(payload);
    return r;
}

}  // namespace

TEST_CASE("states task: a FunctionName resolves by name, logical id, ARN and the loader's map", "[unit]") {
    fixture f;
    const auto& m = f.stack.state_machines[0];
    auto name = [&](std::string_view n) {
        auto t = front::resolve_task_function(f.stack, m, n);
        return t.function ? t.function->name : std::string("(none)");
    };
    CHECK(name("Charge") == "Charge");
    CHECK(name("charge-fn") == "Charge");
    CHECK(name("arn:aws:lambda:us-east-1:123456789012:function:charge-fn") == "Charge");
    CHECK(name("arn:aws:lambda:us-east-1:123456789012:function:charge-fn:$LATEST") == "Charge");
    CHECK(name("123456789012:function:charge-fn") == "Charge");
    CHECK(name("charge-fn:$LATEST") == "Charge");
    CHECK(name("${ChargeArn}") == "Charge");
    // One version runs here: an alias or a version is not served.
    CHECK(name("charge-fn:live") == "(none)");
    CHECK(name("arn:aws:lambda:us-east-1:123456789012:function:charge-fn:7") == "(none)");
    CHECK(name("Refund") == "(none)");
    CHECK(front::resolve_task_function(f.stack, m, "Refund").arn ==
          "arn:aws:lambda:us-east-1:123456789012:function:Refund");
}

TEST_CASE("states task: an execution ARN names its machine by deployed name", "[unit]") {
    fixture f;
    CHECK(front::machine_of_execution(f.stack, exec_arn) == &f.stack.state_machines[0]);
    CHECK(front::machine_of_execution(
              f.stack, "arn:aws:states:us-east-1:123456789012:express:checkout-flow:n:uuid") ==
          &f.stack.state_machines[0]);
    CHECK(front::machine_of_execution(f.stack, "arn:aws:states:us-east-1:1:execution:other:n") == nullptr);
    CHECK(front::machine_of_execution(f.stack, "garbage") == nullptr);
}

TEST_CASE("states task: what a Task sees of each invocation outcome", "[unit]") {
    auto o = front::task_outcome_of(ok(R"({"id":"ch_1"})"), true);
    REQUIRE(o.ok);
    CHECK(o.output["Payload"] == json{{"id", "ch_1"}});
    CHECK(o.output["StatusCode"] == 200);
    CHECK(o.output["ExecutedVersion"] == "$LATEST");
    CHECK(o.output["SdkResponseMetadata"]["RequestId"] == "req-1");
    CHECK(o.output["SdkHttpMetadata"]["HttpStatusCode"] == 200);
    CHECK(front::task_outcome_of(ok(R"({"id":"ch_1"})"), false).output == json{{"id", "ch_1"}});
    // A number too large for a double is no JSON here: the text, as a string (it threw).
    CHECK(front::task_outcome_of(ok(R"({"n":1e999})"), false).output == R"({"n":1e999})");

    functions::invocation_result e;
    e.kind = functions::outcome::function_error;
    e.error_type = "CardDeclined";
    e.payload = R"({"errorType":"CardDeclined","errorMessage":"no"})";
    o = front::task_outcome_of(e, true);
    CHECK_FALSE(o.ok);
    CHECK(o.error == "CardDeclined");
    CHECK(o.cause == e.payload);

    e.error_type.clear();
    e.payload = R"({"errorMessage":"oops"})";
    CHECK(front::task_outcome_of(e, true).error == "Lambda.Unknown");
    e.error_type = "Sandbox.Timedout";
    CHECK(front::task_outcome_of(e, false).error == "Sandbox.Timedout");

    functions::invocation_result t;
    t.kind = functions::outcome::throttled;
    t.throttle_reason = "ReservedFunctionConcurrentInvocationLimitExceeded";
    CHECK(front::task_outcome_of(t, true).error == "Lambda.TooManyRequestsException");
}

TEST_CASE("states task: the function's answer reaches the Task on a later turn", "[unit]") {
    fixture f;
    f.run(f.invoke_state, f.invoke_params());
    REQUIRE(f.pool.calls.size() == 1);
    CHECK(json::parse(f.pool.calls[0].payload) == json{{"amount", 5}});
    f.pool.answer(0, ok(R"({"id":"ch_1"})"));
    CHECK(f.calls_done == 0);  // never from inside the answer
    f.sched.run_due();
    REQUIRE(f.got);
    CHECK(f.got->ok);
    CHECK(f.got->output["Payload"]["id"] == "ch_1");
    CHECK(f.st().served == 1);
    CHECK(f.runner->in_flight() == 0);
}

TEST_CASE("states task: injected faults on the states front", "[unit]") {
    fixture f;
    SECTION("throttle") {
        f.rule({{"front", "states"}, {"state_machine", "Checkout"}, {"state", "Pay"},
                {"fault", {{"kind", "throttle"}}}});
        f.run(f.invoke_state, f.invoke_params());
        CHECK(f.pool.calls.empty());
        CHECK_FALSE(f.got);
        f.sched.run_due();
        REQUIRE(f.got);
        CHECK(f.got->error == "Lambda.TooManyRequestsException");
        CHECK(f.st().injected_fault == 1);
    }
    SECTION("service error") {
        f.rule({{"state_machine", "checkout-flow"}, {"fault", {{"kind", "gateway_error"}, {"status", 502}}}});
        f.run(f.invoke_state, f.invoke_params());
        f.sched.run_due();
        REQUIRE(f.got);
        CHECK(f.got->error == "Lambda.ServiceException");
    }
    SECTION("a rule for another state does not fire") {
        f.rule({{"state_machine", "Checkout"}, {"state", "Ship"}, {"fault", {{"kind", "throttle"}}}});
        f.run(f.invoke_state, f.invoke_params());
        CHECK(f.pool.calls.size() == 1);
    }
    SECTION("phantom after: the function runs, the Task times out after its timeout and Init limit") {
        f.rule({{"front", "states"}, {"fault", {{"kind", "phantom"}, {"when", "after"}}}});
        f.run(f.invoke_state, f.invoke_params());
        REQUIRE(f.pool.calls.size() == 1);  // its side effects happen
        f.pool.answer(0, ok("{}"));
        f.sched.advance(12999);
        CHECK_FALSE(f.got);
        f.sched.advance(1);
        REQUIRE(f.got);
        CHECK(f.got->error == "States.Timeout");
        CHECK(f.st().injected_fault == 1);
    }
    SECTION("phantom before, with the state's TimeoutSeconds: the interpreter's timer ends it") {
        f.invoke_state.timeout_s = 2;
        f.rule({{"front", "states"}, {"fault", {{"kind", "phantom"}, {"when", "before"}}}});
        states::task_call c;
        c.state_name = "Pay";
        c.path = "Pay";
        c.task = &f.invoke_state;
        c.parameters = f.invoke_params();
        c.timeout_ms = 2000;
        c.execution_arn = exec_arn;
        auto h = f.runner->run(c, [&](states::task_outcome o) { f.got = std::move(o); });
        CHECK(f.pool.calls.empty());
        f.sched.advance(1999);
        CHECK_FALSE(f.got);
        // The interpreter gives up at 2 s and cancels: nothing more comes, the fault ends.
        REQUIRE(h.cancel);
        h.cancel();
        f.sched.advance(60000);
        CHECK_FALSE(f.got);
        CHECK(f.ex->held_count() == 0);
        CHECK(f.runner->in_flight() == 0);
    }
}

TEST_CASE("states task: an unknown function, an Event invocation, another service", "[unit]") {
    fixture f;
    SECTION("unknown function") {
        f.run(f.invoke_state, f.invoke_params("Refund"));
        f.sched.run_due();
        REQUIRE(f.got);
        CHECK(f.got->error == "Lambda.ResourceNotFoundException");
        CHECK(f.got->cause.find("Function not found: arn:aws:lambda:us-east-1:123456789012:function:Refund") == 0);
    }
    SECTION("InvocationType Event is queued and answers 202") {
        auto p = f.invoke_params();
        p["InvocationType"] = "Event";
        f.run(f.invoke_state, p);
        f.sched.run_due();
        REQUIRE(f.got);
        CHECK(f.got->ok);
        CHECK(f.got->output["StatusCode"] == 202);
        REQUIRE(f.queued.size() == 1);
        CHECK(f.queued[0].first == "Charge");
        CHECK(f.pool.calls.empty());
    }
    SECTION("a plain function ARN gets the effective input and answers the result") {
        states::state plain = f.invoke_state;
        plain.resource = "arn:aws:lambda:us-east-1:123456789012:function:charge-fn";
        plain.target.what = states::task_resource::kind::lambda_arn;
        f.run(plain, {{"amount", 9}});
        REQUIRE(f.pool.calls.size() == 1);
        CHECK(json::parse(f.pool.calls[0].payload) == json{{"amount", 9}});
        f.pool.answer(0, ok(R"({"paid":true})"));
        f.sched.run_due();
        REQUIRE(f.got);
        CHECK(f.got->output == json{{"paid", true}});
    }
    SECTION("dynamodb") {
        states::state ddb = f.invoke_state;
        ddb.resource = "arn:aws:states:::dynamodb:putItem";
        ddb.target.what = states::task_resource::kind::service;
        f.run(ddb, json::object());
        CHECK(f.calls_done == 0);
        f.sched.run_due();
        REQUIRE(f.got);
        CHECK(f.got->error == "States.TaskFailed");
        CHECK(f.got->cause.find("arn:aws:states:::dynamodb:putItem") != std::string::npos);
        CHECK(f.st().served == 0);  // not a request of the executor
    }
}

TEST_CASE("states task: a cancelled attempt's late answer goes nowhere", "[unit]") {
    fixture f;
    auto h = f.run(f.invoke_state, f.invoke_params());
    REQUIRE(f.pool.calls.size() == 1);
    REQUIRE(h.cancel);
    h.cancel();
    f.pool.answer(0, ok("{}"));
    f.sched.advance(100);
    CHECK(f.calls_done == 0);
    CHECK(f.runner->in_flight() == 0);
}
