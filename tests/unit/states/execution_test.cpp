// The ASL interpreter on the manual scheduler with a scripted task runner: machines are
// built as parsed structs, so these cases test the walk itself (order, timing, events).
#include "emulator/states/execution.hpp"

#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "models/retry/backoff.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using namespace coldbrew;
using namespace coldbrew::states;
using coldbrew::testing::manual_clock;
using coldbrew::testing::manual_scheduler;

namespace {

constexpr const char* arn = "arn:aws:states:us-east-1:123456789012:execution:m:e1";

// Records every call; the test answers them when it likes.
struct scripted_runner : task_runner {
    struct pending {
        task_call call;
        std::function<void(task_outcome)> done;
        bool cancelled = false;
        double at_ms = 0;
    };
    std::vector<std::shared_ptr<pending>> calls;
    manual_scheduler* sched = nullptr;
    int running = 0, max_running = 0;

    handle run(const task_call& call, std::function<void(task_outcome)> done) override {
        auto p = std::make_shared<pending>();
        p->call = call;
        p->done = std::move(done);
        p->at_ms = sched ? sched->now_ms() : 0;
        calls.push_back(p);
        max_running = std::max(max_running, ++running);
        return handle{[this, p] {
            if (!p->cancelled) --running;
            p->cancelled = true;
        }};
    }
    void answer(std::size_t i, task_outcome o) {
        auto p = calls.at(i);
        if (!p->cancelled) --running;
        p->cancelled = true;
        p->done(std::move(o));
    }
    void succeed(std::size_t i, json out) { answer(i, task_outcome{true, std::move(out), "", ""}); }
    void fail(std::size_t i, std::string error, std::string cause = "boom") {
        answer(i, task_outcome{false, nullptr, std::move(error), std::move(cause)});
    }
};

state pass_state(std::string name, std::string next = "") {
    state s;
    s.name = std::move(name);
    s.type = state_type::pass;
    s.next = next;
    s.end = next.empty();
    return s;
}

state task_state(std::string name, std::string next = "") {
    state s;
    s.name = std::move(name);
    s.type = state_type::task;
    s.resource = "arn:aws:lambda:us-east-1:123456789012:function:work";
    s.target.what = task_resource::kind::lambda_arn;
    s.target.function = "work";
    s.next = next;
    s.end = next.empty();
    return s;
}

std::shared_ptr<machine> machine_of(std::vector<state> states) {
    auto m = std::make_shared<machine>();
    m->start_at = states.front().name;
    for (auto& s : states) {
        m->order.push_back(s.name);
        m->states.emplace(s.name, std::move(s));
    }
    return m;
}

struct fixture {
    manual_clock clock{1700000000000};
    manual_scheduler sched{1.0};
    models::random_source rng{42};
    scripted_runner runner;
    std::vector<history_event> events;
    std::vector<std::string> retries;
    int ends = 0;
    execution_status ended = execution_status::running;
    std::unique_ptr<execution> ex;

    fixture() { runner.sched = &sched; }

    execution& start(std::shared_ptr<const machine> m, json input = json::object()) {
        execution_info info;
        info.execution_arn = arn;
        info.name = "e1";
        info.state_machine_arn = "arn:aws:states:us-east-1:123456789012:stateMachine:m";
        info.state_machine_name = "m";
        info.role_arn = "arn:aws:iam::123456789012:role/r";
        execution_deps d;
        d.clock = &clock;
        d.scheduler = &sched;
        d.rng = &rng;
        d.tasks = &runner;
        d.on_event = [this](const history_event& e) { events.push_back(e); };
        d.on_end = [this](execution_status s, const json&, const std::string&,
                          const std::string&) {
            ++ends;
            ended = s;
        };
        d.on_retry = [this](const std::string& path, const std::string& error, int n) {
            retries.push_back(path + ":" + error + ":" + std::to_string(n));
        };
        ex = std::make_unique<execution>(std::move(m), info, std::move(input), std::move(d));
        ex->start();
        sched.run_due();
        return *ex;
    }

    std::vector<std::string> types() const {
        std::vector<std::string> t;
        for (auto& e : events) t.push_back(e.type);
        return t;
    }
    int count(const std::string& type) const {
        int n = 0;
        for (auto& e : events) n += e.type == type;
        return n;
    }
    const history_event* last(const std::string& type) const {
        for (auto it = events.rbegin(); it != events.rend(); ++it)
            if (it->type == type) return &*it;
        return nullptr;
    }
};

}  // namespace

TEST_CASE("execution: a Pass chain succeeds with Result, ResultPath and OutputPath", "[unit]") {
    auto a = pass_state("A", "B");
    a.result = json{{"x", 1}};
    a.result_path = "$.r";
    auto b = pass_state("B");
    b.output_path = "$.r";
    fixture f;
    auto& ex = f.start(machine_of({a, b}), json{{"in", true}});
    REQUIRE(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json{{"x", 1}});
    CHECK(f.ends == 1);
    CHECK(ex.state_transitions() == 2);
    CHECK(f.types() == std::vector<std::string>{"ExecutionStarted", "PassStateEntered",
                                                "PassStateExited", "PassStateEntered",
                                                "PassStateExited", "ExecutionSucceeded"});
    for (std::size_t i = 0; i < f.events.size(); ++i) {
        CHECK(f.events[i].id == static_cast<std::int64_t>(i + 1));
        CHECK(f.events[i].previous_id == static_cast<std::int64_t>(i));
    }
    CHECK(f.events[1].details["input"] == json{{"in", true}}.dump());
    auto j = f.events.back().to_json();
    CHECK(j["executionSucceededEventDetails"]["output"] == json{{"x", 1}}.dump());
    CHECK(f.events[1].to_json().contains("stateEnteredEventDetails"));
    CHECK(j["timestamp"].get<double>() == Approx(1700000000.0));
}

TEST_CASE("execution: Task input and output processing in the ASL order", "[unit]") {
    // The spec's example: InputPath narrows, Parameters builds, ResultSelector picks,
    // ResultPath places into the raw input, OutputPath narrows the result.
    auto t = task_state("T");
    t.input_path = "$.lib";
    t.parameters = json{{"who.$", "$.name"}, {"const", 7}, {"exec.$", "$$.Execution.Name"}};
    t.result_selector = json{{"v.$", "$.Payload.value"}};
    t.result_path = "$.out";
    t.output_path = "$.out";
    fixture f;
    auto& ex = f.start(machine_of({t}), json{{"lib", {{"name", "ada"}}}, {"keep", 1}});
    REQUIRE(f.runner.calls.size() == 1);
    CHECK(f.runner.calls[0]->call.parameters ==
          json{{"who", "ada"}, {"const", 7}, {"exec", "e1"}});
    CHECK(f.runner.calls[0]->call.path == "T");
    CHECK(f.types()[2] == "LambdaFunctionScheduled");
    CHECK(f.types()[3] == "LambdaFunctionStarted");
    f.runner.succeed(0, json{{"Payload", {{"value", 5}}}});
    f.sched.run_due();
    REQUIRE(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json{{"v", 5}});
    CHECK(f.count("LambdaFunctionSucceeded") == 1);
}

TEST_CASE("execution: a lambda:invoke Task records Task events with the resource", "[unit]") {
    auto t = task_state("T");
    t.resource = "arn:aws:states:::lambda:invoke";
    t.target = task_resource{task_resource::kind::lambda_invoke,
                             integration_pattern::request_response, "lambda", "invoke", "", ""};
    t.timeout_s = 30;
    fixture f;
    f.start(machine_of({t}));
    auto* s = f.last("TaskScheduled");
    REQUIRE(s);
    CHECK(s->details["resourceType"] == "lambda");
    CHECK(s->details["resource"] == "invoke");
    CHECK(s->details["region"] == "us-east-1");
    CHECK(s->details["timeoutInSeconds"] == 30);
    CHECK(f.count("TaskStarted") == 1);
    f.runner.fail(0, "Lambda.ServiceException", "5xx");
    f.sched.run_due();
    auto* fl = f.last("TaskFailed");
    REQUIRE(fl);
    CHECK(fl->details["error"] == "Lambda.ServiceException");
    CHECK(f.ex->status() == execution_status::failed);
    CHECK(f.ex->error() == "Lambda.ServiceException");
    CHECK(f.last("ExecutionFailed")->details["cause"] == "5xx");
}

TEST_CASE("execution: Retry waits interval x rate^(n-1), capped, then the state fails",
          "[unit]") {
    auto t = task_state("T");
    retrier r;
    r.error_equals = {"States.ALL"};
    r.interval_ms = 1000;
    r.backoff_rate = 2.0;
    r.max_attempts = 3;
    r.max_delay_ms = 3000;
    t.retry = {r};
    fixture f;
    auto& ex = f.start(machine_of({t}));
    std::vector<double> expected_at = {0, 1000, 3000, 6000};  // waits 1000, 2000, 3000 (cap)
    for (std::size_t i = 0; i < expected_at.size(); ++i) {
        REQUIRE(f.runner.calls.size() == i + 1);
        CHECK(f.runner.calls[i]->at_ms == Approx(expected_at[i]));
        CHECK(f.runner.calls[i]->call.attempt == static_cast<int>(i));
        f.runner.fail(i, "MyError");
        f.sched.run_due();
        if (i + 1 < expected_at.size()) {
            CHECK(ex.status() == execution_status::running);
            f.sched.advance(expected_at[i + 1] - f.sched.now_ms() - 1);
            CHECK(f.runner.calls.size() == i + 1);  // not a millisecond early
            f.sched.advance(1);
        }
    }
    CHECK(ex.status() == execution_status::failed);
    CHECK(ex.error() == "MyError");
    CHECK(f.retries == std::vector<std::string>{"T:MyError:1", "T:MyError:2", "T:MyError:3"});
    CHECK(ex.state_transitions() == 4);  // entered once, retried three times
    CHECK(f.count("TaskStateEntered") == 1);  // retries enter no state anew
    CHECK(f.count("LambdaFunctionScheduled") == 4);
}

TEST_CASE("execution: the first matching retrier handles, counts persist, FULL jitter draws",
          "[unit]") {
    auto t = task_state("T");
    retrier throttled;
    throttled.error_equals = {"Lambda.TooManyRequestsException"};
    throttled.interval_ms = 500;
    throttled.max_attempts = 1;
    throttled.backoff_rate = 1.0;
    retrier any;
    any.error_equals = {"States.ALL"};
    any.interval_ms = 10000;
    any.backoff_rate = 3.0;
    any.max_attempts = 2;
    any.full_jitter = true;
    t.retry = {throttled, any};
    fixture f;
    auto& ex = f.start(machine_of({t}));
    f.runner.fail(0, "Lambda.TooManyRequestsException");
    f.sched.run_due();
    f.sched.advance(500);
    REQUIRE(f.runner.calls.size() == 2);
    // The throttle retrier is used up; the next throttle goes to Catch/failure, not to
    // the States.ALL retrier (the first match handles, even exhausted).
    f.runner.fail(1, "Other");
    f.sched.run_due();
    const double u1 = f.rng.uniform("sfn-retry", std::string(arn) + "/T/1", 1);
    const double d1 = models::sfn_retry_delay_ms(any, 1, u1);
    CHECK(d1 >= 0);
    CHECK(d1 <= 10000);
    f.sched.advance(d1);
    REQUIRE(f.runner.calls.size() == 3);
    CHECK(f.runner.calls[2]->at_ms == Approx(500 + d1));
    f.runner.fail(2, "Lambda.TooManyRequestsException");
    f.sched.run_due();
    CHECK(ex.status() == execution_status::failed);
    CHECK(ex.error() == "Lambda.TooManyRequestsException");
}

TEST_CASE("execution: Catch after exhausted retries places Error and Cause at ResultPath",
          "[unit]") {
    auto t = task_state("T", "");
    retrier r;
    r.error_equals = {"States.TaskFailed"};
    r.max_attempts = 1;
    r.interval_ms = 100;
    t.retry = {r};
    catcher c;
    c.error_equals = {"States.ALL"};
    c.next = "Handled";
    c.result_path = "$.err";
    t.catches = {c};
    auto h = pass_state("Handled");
    fixture f;
    auto& ex = f.start(machine_of({t, h}), json{{"order", 9}});
    f.runner.fail(0, "HandlerError", "bad");
    f.sched.run_due();
    f.sched.advance(100);
    f.runner.fail(1, "HandlerError", "bad again");
    f.sched.run_due();
    REQUIRE(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() ==
          json{{"order", 9}, {"err", {{"Error", "HandlerError"}, {"Cause", "bad again"}}}});
    CHECK(f.count("LambdaFunctionFailed") == 2);
    CHECK(f.count("TaskStateExited") == 1);
}

TEST_CASE("execution: a Task past TimeoutSeconds times out and cancels its call", "[unit]") {
    auto t = task_state("T");
    t.timeout_s = 5;
    catcher tf;
    tf.error_equals = {"States.TaskFailed"};  // does not match States.Timeout
    tf.next = "Wrong";
    catcher to;
    to.error_equals = {"States.Timeout"};
    to.next = "Late";
    to.result_path = std::nullopt;
    t.catches = {tf, to};
    fixture f;
    auto& ex = f.start(machine_of({t, pass_state("Wrong"), pass_state("Late")}),
                       json{{"a", 1}});
    CHECK(f.runner.calls[0]->call.timeout_ms == Approx(5000));
    f.sched.advance(4999);
    CHECK(ex.status() == execution_status::running);
    f.sched.advance(1);
    CHECK(f.runner.calls[0]->cancelled);
    CHECK(f.count("LambdaFunctionTimedOut") == 1);
    f.runner.calls[0]->done(task_outcome{true, json{{"late", true}}, "", ""});  // ignored
    f.sched.run_due();
    REQUIRE(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json{{"a", 1}});
    CHECK(f.events[f.events.size() - 3].details["name"] == "Late");
}

TEST_CASE("execution: .waitForTaskToken waits for the token, heartbeats restart the clock",
          "[unit]") {
    auto t = task_state("T");
    t.resource = "arn:aws:states:::lambda:invoke.waitForTaskToken";
    t.target = task_resource{task_resource::kind::lambda_invoke,
                             integration_pattern::wait_for_task_token, "lambda", "invoke", "",
                             ""};
    t.parameters = json{{"token.$", "$$.Task.Token"}};
    t.heartbeat_s = 10;
    t.timeout_s = 100;
    fixture f;
    auto& ex = f.start(machine_of({t}));
    auto token = f.runner.calls[0]->call.task_token;
    REQUIRE(!token.empty());
    CHECK(f.runner.calls[0]->call.parameters == json{{"token", token}});
    CHECK(f.last("TaskScheduled")->details["resource"] == "invoke.waitForTaskToken");
    CHECK(f.last("TaskScheduled")->details["heartbeatInSeconds"] == 10);
    f.runner.succeed(0, json{{"StatusCode", 200}});  // the message went out: still waiting
    f.sched.run_due();
    CHECK(ex.waits_on(token));
    f.sched.advance(9000);
    CHECK(ex.send_task_heartbeat(token));
    f.sched.advance(9000);
    CHECK(ex.status() == execution_status::running);
    CHECK_FALSE(ex.send_task_success("other", json::object()));
    CHECK(ex.send_task_success(token, json{{"approved", true}}));
    f.sched.run_due();
    REQUIRE(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json{{"approved", true}});
    CHECK_FALSE(ex.waits_on(token));
    CHECK_FALSE(ex.send_task_success(token, json::object()));
}

TEST_CASE("execution: a missed heartbeat is States.Timeout; a failure token fails", "[unit]") {
    auto t = task_state("T");
    t.target = task_resource{task_resource::kind::lambda_invoke,
                             integration_pattern::wait_for_task_token, "lambda", "invoke", "",
                             ""};
    t.heartbeat_s = 10;
    fixture f;
    SECTION("heartbeat") {
        auto& ex = f.start(machine_of({t}));
        f.sched.advance(10000);
        CHECK(ex.status() == execution_status::failed);
        CHECK(ex.error() == "States.Timeout");
        CHECK(f.count("TaskTimedOut") == 1);
        CHECK(f.runner.calls[0]->cancelled);
    }
    SECTION("failure") {
        auto& ex = f.start(machine_of({t}));
        auto token = f.runner.calls[0]->call.task_token;
        CHECK(ex.send_task_failure(token, "Rejected", "no"));
        f.sched.run_due();
        CHECK(ex.status() == execution_status::failed);
        CHECK(ex.error() == "Rejected");
        CHECK(ex.cause() == "no");
    }
    SECTION("the call itself fails") {
        auto& ex = f.start(machine_of({t}));
        f.runner.fail(0, "Lambda.ResourceNotFoundException");
        f.sched.run_due();
        CHECK(ex.status() == execution_status::failed);
        CHECK(ex.error() == "Lambda.ResourceNotFoundException");
    }
}

TEST_CASE("execution: Wait states wait modeled time; a past timestamp goes on at once",
          "[unit]") {
    state w1;
    w1.name = "W1";
    w1.type = state_type::wait;
    w1.seconds = 3;
    w1.next = "W2";
    state w2;
    w2.name = "W2";
    w2.type = state_type::wait;
    w2.seconds_path = "$.s";
    w2.next = "W3";
    state w3;
    w3.name = "W3";
    w3.type = state_type::wait;
    w3.timestamp = "2001-01-01T00:00:00Z";
    w3.end = true;
    fixture f;
    auto& ex = f.start(machine_of({w1, w2, w3}), json{{"s", 2}});
    f.sched.advance(2999);
    CHECK(f.count("WaitStateExited") == 0);
    f.sched.advance(1);
    CHECK(f.count("WaitStateExited") == 1);
    f.sched.advance(2000);
    f.sched.run_due();
    CHECK(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json{{"s", 2}});
    CHECK(f.events.back().timestamp_ms == Approx(1700000000000.0 + 5000));
}

TEST_CASE("execution: a Wait whose SecondsPath is not a number fails States.Runtime", "[unit]") {
    state w;
    w.name = "W";
    w.type = state_type::wait;
    w.seconds_path = "$.s";
    w.end = true;
    fixture f;
    auto& ex = f.start(machine_of({w}), json{{"s", "soon"}});
    CHECK(ex.status() == execution_status::failed);
    CHECK(ex.error() == "States.Runtime");
}

TEST_CASE("execution: Fail uses Error/Cause and ErrorPath/CausePath", "[unit]") {
    state fl;
    fl.name = "F";
    fl.type = state_type::fail;
    fixture f;
    SECTION("literal") {
        fl.error = "Bad";
        fl.cause = "why";
        auto& ex = f.start(machine_of({fl}));
        CHECK(ex.status() == execution_status::failed);
        CHECK(ex.error() == "Bad");
        CHECK(ex.cause() == "why");
        CHECK(f.count("FailStateEntered") == 1);
    }
    SECTION("paths") {
        fl.error_path = "$.e";
        fl.cause_path = "$.c";
        auto& ex = f.start(machine_of({fl}), json{{"e", "E1"}, {"c", "C1"}});
        CHECK(ex.error() == "E1");
        CHECK(ex.cause() == "C1");
    }
}

TEST_CASE("execution: Succeed ends with its OutputPath", "[unit]") {
    state s;
    s.name = "S";
    s.type = state_type::succeed;
    s.output_path = "$.a";
    fixture f;
    auto& ex = f.start(machine_of({s}), json{{"a", {{"b", 1}}}});
    CHECK(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json{{"b", 1}});
}

TEST_CASE("execution: Parallel gives outputs in order; one failure cancels the others",
          "[unit]") {
    state p;
    p.name = "P";
    p.type = state_type::parallel;
    p.end = true;
    p.branches = {machine_of({task_state("A")}), machine_of({task_state("B")}),
                  machine_of({pass_state("C")})};
    fixture f;
    SECTION("success") {
        auto& ex = f.start(machine_of({p}), json{{"x", 1}});
        f.sched.run_due();
        REQUIRE(f.runner.calls.size() == 2);
        CHECK(f.runner.calls[0]->call.path == "P/branch 0/A");
        f.runner.succeed(1, "b");
        f.sched.run_due();
        f.runner.succeed(0, "a");
        f.sched.run_due();
        REQUIRE(ex.status() == execution_status::succeeded);
        CHECK(*ex.output() == json::array({"a", "b", {{"x", 1}}}));
        CHECK(f.count("ParallelStateStarted") == 1);
        CHECK(f.count("ParallelStateSucceeded") == 1);
    }
    SECTION("failure") {
        catcher c;
        c.error_equals = {"Boom"};
        c.next = "After";
        p.catches = {c};
        p.end = false;
        p.next = "";
        auto& ex = f.start(machine_of({p, pass_state("After")}));
        f.sched.run_due();
        f.runner.fail(0, "Boom", "first");
        f.sched.run_due();
        CHECK(f.runner.calls[1]->cancelled);
        CHECK(f.runner.running == 0);
        CHECK(f.count("ParallelStateFailed") == 1);
        REQUIRE(ex.status() == execution_status::succeeded);
        CHECK((*ex.output())["Error"] == "Boom");
        f.runner.calls[1]->done(task_outcome{true, 1, "", ""});  // late answer: ignored
        f.sched.run_due();
        CHECK(f.ends == 1);
    }
}

TEST_CASE("execution: Map keeps MaxConcurrency, orders outputs, reads $$.Map.Item", "[unit]") {
    state m;
    m.name = "Each";
    m.type = state_type::map;
    m.end = true;
    m.items_path = "$.items";
    m.max_concurrency = 2;
    m.item_selector = json{{"i.$", "$$.Map.Item.Index"}, {"v.$", "$$.Map.Item.Value"}};
    m.item_processor = machine_of({task_state("Work")});
    fixture f;
    auto& ex = f.start(machine_of({m}), json{{"items", {10, 20, 30, 40, 50}}});
    f.sched.run_due();
    CHECK(f.runner.calls.size() == 2);
    CHECK(f.last("MapStateStarted")->details["length"] == 5);
    // Answer out of order; never more than two at once.
    std::size_t answered = 0;
    while (answered < 5) {
        REQUIRE(f.runner.calls.size() > answered);
        std::size_t i = f.runner.calls.size() - 1;
        while (f.runner.calls[i]->cancelled) --i;
        const auto& p = f.runner.calls[i]->call.parameters;
        f.runner.succeed(i, p["v"].get<int>() + p["i"].get<int>());
        ++answered;
        f.sched.run_due();
    }
    CHECK(f.runner.max_running == 2);
    REQUIRE(ex.status() == execution_status::succeeded);
    CHECK(*ex.output() == json::array({10, 21, 32, 43, 54}));
    CHECK(f.count("MapIterationStarted") == 5);
    CHECK(f.count("MapIterationSucceeded") == 5);
    CHECK(f.runner.calls[0]->call.path == "Each/Work");
}

TEST_CASE("execution: Map tolerated failures, and beyond them the threshold error", "[unit]") {
    state m;
    m.name = "Each";
    m.type = state_type::map;
    m.end = true;
    m.item_processor = machine_of({task_state("Work")});
    fixture f;
    SECTION("within") {
        m.tolerated_failure_count = 1;
        auto& ex = f.start(machine_of({m}), json::array({1, 2, 3}));
        f.sched.run_due();
        f.runner.fail(1, "Err", "c");
        f.runner.succeed(0, "ok0");
        f.runner.succeed(2, "ok2");
        f.sched.run_due();
        REQUIRE(ex.status() == execution_status::succeeded);
        CHECK((*ex.output())[1]["Error"] == "Err");
        CHECK((*ex.output())[2] == "ok2");
    }
    SECTION("beyond") {
        m.tolerated_failure_percentage = 40;  // 2 of 3 is 66 %
        auto& ex = f.start(machine_of({m}), json::array({1, 2, 3}));
        f.sched.run_due();
        f.runner.fail(0, "Err");
        f.sched.run_due();
        CHECK(ex.status() == execution_status::running);  // 33 % tolerated
        f.runner.fail(1, "Err");
        f.sched.run_due();
        CHECK(ex.status() == execution_status::failed);
        CHECK(ex.error() == "States.ExceedToleratedFailureThreshold");
        CHECK(f.runner.calls[2]->cancelled);
        CHECK(f.count("MapIterationAborted") == 1);
    }
    SECTION("no tolerance: the iteration's error") {
        auto& ex = f.start(machine_of({m}), json::array({1, 2}));
        f.sched.run_due();
        f.runner.fail(0, "Err");
        f.sched.run_due();
        CHECK(ex.error() == "Err");
    }
    SECTION("ItemsPath not an array") {
        auto& ex = f.start(machine_of({m}), json{{"a", 1}});
        CHECK(ex.status() == execution_status::failed);
        CHECK(ex.error() == "States.Runtime");
    }
    SECTION("empty") {
        auto& ex = f.start(machine_of({m}), json::array());
        f.sched.run_due();
        CHECK(ex.status() == execution_status::succeeded);
        CHECK(*ex.output() == json::array());
    }
}

TEST_CASE("execution: the machine's TimeoutSeconds times the execution out", "[unit]") {
    auto m = machine_of({task_state("T")});
    m->timeout_s = 60;
    fixture f;
    auto& ex = f.start(m);
    f.sched.advance(60000);
    CHECK(ex.status() == execution_status::timed_out);
    CHECK(ex.error() == "States.Timeout");
    CHECK(f.runner.calls[0]->cancelled);
    CHECK(f.events.back().type == "ExecutionTimedOut");
    CHECK(ex.stop_ms() == Approx(1700000000000.0 + 60000));
    CHECK(f.sched.pending() == 0);
}

TEST_CASE("execution: stop() aborts and cancels, once", "[unit]") {
    fixture f;
    auto& ex = f.start(machine_of({task_state("T")}));
    ex.stop("Manual", "operator");
    CHECK(ex.status() == execution_status::aborted);
    CHECK(f.runner.calls[0]->cancelled);
    CHECK(f.events.back().type == "ExecutionAborted");
    CHECK(f.events.back().details["error"] == "Manual");
    ex.stop("Again", "");
    CHECK(f.ends == 1);
    f.runner.calls[0]->done(task_outcome{true, 1, "", ""});
    f.sched.run_due();
    CHECK(ex.status() == execution_status::aborted);
}

TEST_CASE("execution: 10,000 transitions run without deep recursion", "[unit]") {
    std::vector<state> states;
    const int n = 10000;
    for (int i = 0; i < n; ++i)
        states.push_back(
            pass_state("S" + std::to_string(i), i + 1 < n ? "S" + std::to_string(i + 1) : ""));
    fixture f;
    auto& ex = f.start(machine_of(std::move(states)), json{{"k", 1}});
    CHECK(ex.status() == execution_status::succeeded);
    CHECK(ex.state_transitions() == static_cast<std::uint64_t>(n));
    CHECK(*ex.output() == json{{"k", 1}});
}

TEST_CASE("execution: a processing failure is States.Runtime and not caught", "[unit]") {
    auto t = task_state("T");
    t.input_path = "$.missing";
    catcher c;
    c.error_equals = {"States.ALL"};
    c.next = "H";
    t.catches = {c};
    fixture f;
    auto& ex = f.start(machine_of({t, pass_state("H")}), json::object());
    CHECK(ex.status() == execution_status::failed);
    CHECK(ex.error() == "States.Runtime");
    CHECK(f.runner.calls.empty());
}

TEST_CASE("execution: destroying a running execution leaves nothing to call back", "[unit]") {
    fixture f;
    f.start(machine_of({task_state("T")}));
    auto done = f.runner.calls[0]->done;
    f.ex.reset();
    CHECK(f.runner.calls[0]->cancelled);
    done(task_outcome{true, 1, "", ""});
    f.sched.advance(1e9);
    CHECK(f.ends == 0);
}
