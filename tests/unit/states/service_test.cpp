// The Step Functions service: starts, duplicates, sync Express, stop, listings, task tokens,
// error names, counters. Every execution runs on the manual scheduler.
#include <catch2/catch.hpp>

#include <string>

#include "emulator/config/config_error.hpp"
#include "tests/unit/states/sfn_fixture.hpp"

using namespace coldbrew;
using coldbrew::testing::sfn_world;
using nlohmann::json;

namespace {

states::service::start_request start_of(const std::string& machine, std::string input = "{}",
                                        std::optional<std::string> name = std::nullopt) {
    states::service::start_request r;
    r.state_machine_arn = sfn_world::arn(machine);
    r.input = std::move(input);
    r.name = std::move(name);
    return r;
}

template <class T>
const states::api_error& error_of(const T& v) {
    REQUIRE(std::holds_alternative<states::api_error>(v));
    return std::get<states::api_error>(v);
}
template <class T>
const json& json_of(const T& v) {
    if (auto* e = std::get_if<states::api_error>(&v)) FAIL(e->type + ": " + e->message);
    return std::get<json>(v);
}
states::service::started started_of(const std::variant<states::service::started, states::api_error>& v) {
    if (auto* e = std::get_if<states::api_error>(&v)) FAIL(e->type + ": " + e->message);
    return std::get<states::service::started>(v);
}

const states::machine_stats& stats_of(const states::service& svc, const std::string& machine) {
    static states::machine_stats none;
    static std::vector<std::pair<std::string, states::machine_stats>> keep;
    keep = svc.stats();
    for (const auto& [name, s] : keep)
        if (name == machine) return s;
    FAIL("no machine " + machine);
    return none;
}

}  // namespace

TEST_CASE("service: a Standard execution starts, ends and is described with its history", "[unit]") {
    sfn_world w;
    auto s = started_of(w.svc->start_execution(start_of("Pass", R"({"a":1})", "run-1")));
    CHECK(s.execution_arn == "arn:aws:states:us-east-1:123456789012:execution:Pass:run-1");
    CHECK_FALSE(s.existing);
    w.sched.run_due();

    auto d = json_of(w.svc->describe_execution({{"executionArn", s.execution_arn}}));
    CHECK(d["status"] == "SUCCEEDED");
    CHECK(d["name"] == "run-1");
    CHECK(d["stateMachineArn"] == sfn_world::arn("Pass"));
    CHECK(d["input"] == R"({"a":1})");
    CHECK(d["inputDetails"]["included"] == true);
    CHECK(json::parse(d["output"].get<std::string>()) == json{{"ok", true}});
    CHECK(d["startDate"].is_number());
    CHECK(d["stopDate"].is_number());
    CHECK(d["startDate"].get<double>() == Approx(1700000000.0));
    CHECK_FALSE(d.contains("error"));
    CHECK(w.ended == std::vector<std::string>{s.execution_arn});

    auto h = json_of(w.svc->get_execution_history({{"executionArn", s.execution_arn}}));
    REQUIRE(h["events"].size() >= 2);
    CHECK(h["events"].front()["type"] == "ExecutionStarted");
    CHECK(h["events"].back()["type"] == "ExecutionSucceeded");
    CHECK_FALSE(h.contains("nextToken"));

    SECTION("paging and reverse order") {
        const auto all = h["events"];
        auto p1 = json_of(w.svc->get_execution_history(
            {{"executionArn", s.execution_arn}, {"maxResults", 1}, {"reverseOrder", true}}));
        REQUIRE(p1["events"].size() == 1);
        CHECK(p1["events"][0]["type"] == "ExecutionSucceeded");
        REQUIRE(p1["nextToken"].is_string());
        json rest = json::array();
        json tok = p1["nextToken"];
        while (tok.is_string()) {
            auto p = json_of(w.svc->get_execution_history(
                {{"executionArn", s.execution_arn}, {"maxResults", 1}, {"reverseOrder", true},
                 {"nextToken", tok}}));
            for (auto& e : p["events"]) rest.push_back(e);
            tok = p.value("nextToken", json());
        }
        CHECK(rest.size() == all.size() - 1);
        CHECK(rest.back()["type"] == "ExecutionStarted");
    }
    SECTION("includeExecutionData false leaves out input and output") {
        auto p = json_of(w.svc->get_execution_history(
            {{"executionArn", s.execution_arn}, {"includeExecutionData", false}}));
        const auto& details = p["events"][0]["executionStartedEventDetails"];
        CHECK_FALSE(details.contains("input"));
        CHECK(h["events"][0]["executionStartedEventDetails"].contains("input"));
    }
    SECTION("a bad token and a page over 1000 are refused") {
        CHECK(error_of(w.svc->get_execution_history(
                           {{"executionArn", s.execution_arn}, {"nextToken", "nonsense"}}))
                  .type == "InvalidToken");
        CHECK(error_of(w.svc->get_execution_history(
                           {{"executionArn", s.execution_arn}, {"maxResults", 1001}}))
                  .type == "ValidationException");
    }
    CHECK(stats_of(*w.svc, "Pass").started == 1);
    CHECK(stats_of(*w.svc, "Pass").succeeded == 1);
}

TEST_CASE("service: execution names are drawn from the seed when absent", "[unit]") {
    sfn_world a, b;
    auto x = started_of(a.svc->start_execution(start_of("Pass")));
    auto y = started_of(b.svc->start_execution(start_of("Pass")));
    auto z = started_of(a.svc->start_execution(start_of("Pass")));
    CHECK(x.execution_arn == y.execution_arn);
    CHECK(x.execution_arn != z.execution_arn);
    const auto name = x.execution_arn.substr(x.execution_arn.rfind(':') + 1);
    CHECK(name == models::uuid_v4(a.rng, "sfn-execution", "Pass", 0));
}

TEST_CASE("service: a Standard name is used once", "[unit]") {
    sfn_world w;
    auto first = started_of(w.svc->start_execution(start_of("Waiter", R"({"k":1})", "once")));
    w.sched.run_due();

    // Running, same input: the same execution, none started.
    auto again = started_of(w.svc->start_execution(start_of("Waiter", R"({"k":1})", "once")));
    CHECK(again.existing);
    CHECK(again.execution_arn == first.execution_arn);
    CHECK(again.start_ms == first.start_ms);
    CHECK(w.svc->running() == 1);
    CHECK(stats_of(*w.svc, "Waiter").started == 1);
    CHECK(stats_of(*w.svc, "Waiter").duplicate_starts == 1);

    // Running, another input (the same JSON written otherwise is another text).
    const states::api_error e = error_of(w.svc->start_execution(start_of("Waiter", R"({"k":2})", "once")));
    CHECK(e.type == "ExecutionAlreadyExists");
    CHECK(e.status == 400);
    CHECK(error_of(w.svc->start_execution(start_of("Waiter", R"({ "k": 1 })", "once"))).type ==
          "ExecutionAlreadyExists");

    // Ended: refused whatever the input.
    w.sched.advance(600000);
    CHECK(w.svc->running() == 0);
    CHECK(error_of(w.svc->start_execution(start_of("Waiter", R"({"k":1})", "once"))).type ==
          "ExecutionAlreadyExists");
    // The name is the machine's: another machine may use it.
    CHECK(started_of(w.svc->start_execution(start_of("Pass", "{}", "once"))).existing == false);
}

TEST_CASE("service: Express starts are at-least-once and not described", "[unit]") {
    sfn_world w;
    auto a = started_of(w.svc->start_execution(start_of("FastX", "{}", "same")));
    auto b = started_of(w.svc->start_execution(start_of("FastX", "{}", "same")));
    CHECK(a.execution_arn != b.execution_arn);
    CHECK(a.execution_arn.rfind("arn:aws:states:us-east-1:123456789012:express:FastX:same:", 0) == 0);
    CHECK_FALSE(a.existing);
    CHECK_FALSE(b.existing);
    w.sched.run_due();
    CHECK(stats_of(*w.svc, "FastX").started == 2);
    CHECK(stats_of(*w.svc, "FastX").succeeded == 2);
    CHECK(error_of(w.svc->describe_execution({{"executionArn", a.execution_arn}})).type ==
          "ExecutionDoesNotExist");
    CHECK(error_of(w.svc->get_execution_history({{"executionArn", a.execution_arn}})).type ==
          "ExecutionDoesNotExist");
    CHECK(error_of(w.svc->list_executions({{"stateMachineArn", sfn_world::arn("FastX")}})).type ==
          "StateMachineTypeNotSupported");
    // coldbrew keeps them for itself.
    const auto* kept = w.svc->find_execution(a.execution_arn);
    REQUIRE(kept != nullptr);
    CHECK(kept->status() == states::execution_status::succeeded);
}

TEST_CASE("service: StartSyncExecution", "[unit]") {
    sfn_world w;
    std::optional<std::variant<json, states::api_error>> got;
    auto done = [&](std::variant<json, states::api_error> r) { got = std::move(r); };

    SECTION("refuses a Standard machine") {
        w.svc->start_sync_execution(start_of("Pass"), done);
        REQUIRE(got);
        CHECK(error_of(*got).type == "StateMachineTypeNotSupported");
        CHECK(w.svc->running() == 0);
    }
    SECTION("answers a success once it ends") {
        auto req = start_of("FastX", R"({"x":1})", "s1");
        req.trace_header = "Root=1-abc";
        w.svc->start_sync_execution(req, done);
        w.sched.run_due();
        REQUIRE(got);
        const auto& j = json_of(*got);
        CHECK(j["status"] == "SUCCEEDED");
        CHECK(j["name"] == "s1");
        CHECK(j["executionArn"].get<std::string>().find(":express:FastX:s1:") != std::string::npos);
        CHECK(json::parse(j["output"].get<std::string>()) == json{{"ok", true}});
        CHECK(j["input"] == R"({"x":1})");
        CHECK(j["traceHeader"] == "Root=1-abc");
        CHECK(j["billingDetails"]["billedMemoryUsedInMB"] == 64);
        CHECK(j["billingDetails"]["billedDurationInMilliseconds"] == 100);
        CHECK(j["startDate"].is_number());
        CHECK(j["stopDate"].is_number());
    }
    SECTION("answers a failure with its error and cause") {
        w.svc->start_sync_execution(start_of("FailX"), done);
        w.sched.run_due();
        REQUIRE(got);
        const auto& j = json_of(*got);
        CHECK(j["status"] == "FAILED");
        CHECK(j["error"] == "Boom");
        CHECK(j["cause"] == "bad");
        CHECK_FALSE(j.contains("output"));
        CHECK(stats_of(*w.svc, "FailX").failed == 1);
    }
    SECTION("times out after 5 minutes, modeled") {
        w.svc->start_sync_execution(start_of("SlowX"), done);
        w.sched.advance(299999);
        CHECK_FALSE(got);
        w.sched.advance(1);
        REQUIRE(got);
        const auto& j = json_of(*got);
        CHECK(j["status"] == "TIMED_OUT");
        CHECK(j["billingDetails"]["billedDurationInMilliseconds"] == 300000);
        CHECK(w.svc->running() == 0);
        CHECK(stats_of(*w.svc, "SlowX").timed_out == 1);
        CHECK(stats_of(*w.svc, "SlowX").aborted == 0);
        // Nothing is left to fire: the Wait was cancelled with the execution.
        got.reset();
        w.sched.advance(600000);
        CHECK_FALSE(got);
    }
    SECTION("validation errors are answered at once") {
        w.svc->start_sync_execution(start_of("FastX", "not json"), done);
        REQUIRE(got);
        CHECK(error_of(*got).type == "InvalidExecutionInput");
    }
}

TEST_CASE("service: StopExecution aborts a running execution", "[unit]") {
    sfn_world w;
    auto s = started_of(w.svc->start_execution(start_of("Waiter", "{}", "stop-me")));
    w.sched.run_due();
    auto r = json_of(w.svc->stop_execution(
        {{"executionArn", s.execution_arn}, {"error", "Halt"}, {"cause", "by hand"}}));
    CHECK(r["stopDate"].is_number());
    auto d = json_of(w.svc->describe_execution({{"executionArn", s.execution_arn}}));
    CHECK(d["status"] == "ABORTED");
    CHECK(d["error"] == "Halt");
    CHECK(d["cause"] == "by hand");
    CHECK(w.svc->running() == 0);
    CHECK(stats_of(*w.svc, "Waiter").aborted == 1);
    CHECK(error_of(w.svc->stop_execution({{"executionArn", s.execution_arn},
                                          {"error", std::string(257, 'e')}}))
              .type == "ValidationException");
    CHECK(error_of(w.svc->stop_execution({})).type == "ValidationException");
}

TEST_CASE("service: ListExecutions filters by status and pages, most recent first", "[unit]") {
    sfn_world w;
    std::vector<std::string> arns;
    for (int i = 0; i < 3; ++i)
        arns.push_back(started_of(w.svc->start_execution(
                                      start_of("Waiter", "{}", "e" + std::to_string(i))))
                           .execution_arn);
    w.sched.run_due();
    (void)json_of(w.svc->stop_execution({{"executionArn", arns[1]}}));

    auto all = json_of(w.svc->list_executions({{"stateMachineArn", sfn_world::arn("Waiter")}}));
    REQUIRE(all["executions"].size() == 3);
    CHECK(all["executions"][0]["executionArn"] == arns[2]);
    CHECK(all["executions"][2]["executionArn"] == arns[0]);
    CHECK(all["executions"][1]["status"] == "ABORTED");
    CHECK(all["executions"][1]["stopDate"].is_number());
    CHECK_FALSE(all["executions"][0].contains("stopDate"));

    auto aborted = json_of(w.svc->list_executions(
        {{"stateMachineArn", sfn_world::arn("Waiter")}, {"statusFilter", "ABORTED"}}));
    REQUIRE(aborted["executions"].size() == 1);
    CHECK(aborted["executions"][0]["name"] == "e1");
    auto running = json_of(w.svc->list_executions(
        {{"stateMachineArn", sfn_world::arn("Waiter")}, {"statusFilter", "RUNNING"}}));
    CHECK(running["executions"].size() == 2);

    auto p1 = json_of(w.svc->list_executions(
        {{"stateMachineArn", sfn_world::arn("Waiter")}, {"maxResults", 2}}));
    CHECK(p1["executions"].size() == 2);
    REQUIRE(p1["nextToken"].is_string());
    auto p2 = json_of(w.svc->list_executions(
        {{"stateMachineArn", sfn_world::arn("Waiter")}, {"maxResults", 2},
         {"nextToken", p1["nextToken"]}}));
    REQUIRE(p2["executions"].size() == 1);
    CHECK(p2["executions"][0]["executionArn"] == arns[0]);
    CHECK_FALSE(p2.contains("nextToken"));

    // Other machines' executions are not listed.
    CHECK(json_of(w.svc->list_executions({{"stateMachineArn", sfn_world::arn("Pass")}}))["executions"]
              .empty());
    CHECK(error_of(w.svc->list_executions(
                       {{"stateMachineArn", sfn_world::arn("Waiter")}, {"statusFilter", "DONE"}}))
              .type == "ValidationException");
    // A history token is not a listing's.
    auto h = json_of(w.svc->get_execution_history({{"executionArn", arns[0]}, {"maxResults", 1}}));
    REQUIRE(h["nextToken"].is_string());
    CHECK(error_of(w.svc->list_executions(
                       {{"stateMachineArn", sfn_world::arn("Waiter")}, {"nextToken", h["nextToken"]}}))
              .type == "InvalidToken");
    CHECK(error_of(w.svc->list_executions({{"stateMachineArn", "Waiter"}})).type == "InvalidArn");
    CHECK(error_of(w.svc->list_executions({{"stateMachineArn", sfn_world::arn("Nope")}})).type ==
          "StateMachineDoesNotExist");
    CHECK(error_of(w.svc->list_executions(json::object())).type == "ValidationException");
}

TEST_CASE("service: state machines are listed and described", "[unit]") {
    sfn_world w;
    auto l = json_of(w.svc->list_state_machines(json::object()));
    REQUIRE(l["stateMachines"].size() == w.stack.state_machines.size());
    CHECK(l["stateMachines"][0]["stateMachineArn"] == sfn_world::arn("Pass"));
    CHECK(l["stateMachines"][0]["type"] == "STANDARD");
    CHECK(l["stateMachines"][5]["type"] == "EXPRESS");
    CHECK(l["stateMachines"][0]["creationDate"].is_number());
    auto p = json_of(w.svc->list_state_machines({{"maxResults", 3}}));
    CHECK(p["stateMachines"].size() == 3);
    CHECK(p["nextToken"].is_string());

    auto d = json_of(w.svc->describe_state_machine({{"stateMachineArn", sfn_world::arn("Fail")}}));
    CHECK(d["name"] == "Fail");
    CHECK(d["status"] == "ACTIVE");
    CHECK(json::parse(d["definition"].get<std::string>()) == json::parse(testing::fail_definition));
    CHECK(error_of(w.svc->describe_state_machine({{"stateMachineArn", sfn_world::arn("X")}})).type ==
          "StateMachineDoesNotExist");
    CHECK(w.svc->find("Token") != nullptr);
    CHECK(w.svc->find("Nope") == nullptr);
}

TEST_CASE("service: task tokens", "[unit]") {
    sfn_world w;
    auto s = started_of(w.svc->start_execution(start_of("Token", "{}", "t1")));
    w.sched.run_due();
    REQUIRE(w.tasks.calls.size() == 1);
    const std::string token = w.tasks.calls[0]->call.task_token;
    REQUIRE_FALSE(token.empty());
    CHECK(w.tasks.calls[0]->call.parameters["Payload"]["token"] == token);
    // The invocation itself answers; the Task waits for the token.
    w.tasks.calls[0]->done(states::task_outcome{true, json{{"StatusCode", 202}}, "", ""});
    w.sched.run_due();
    CHECK(w.svc->running() == 1);

    CHECK(error_of(w.svc->send_task_success({{"taskToken", "unknown"}, {"output", "{}"}})).type ==
          "TaskDoesNotExist");
    CHECK(error_of(w.svc->send_task_success({{"taskToken", ""}, {"output", "{}"}})).type ==
          "InvalidToken");
    CHECK(error_of(w.svc->send_task_heartbeat(json::object())).type == "ValidationException");
    CHECK(error_of(w.svc->send_task_success({{"taskToken", token}, {"output", "{nope"}})).type ==
          "InvalidOutput");
    CHECK(json_of(w.svc->send_task_heartbeat({{"taskToken", token}})) == json::object());

    SECTION("success") {
        CHECK(json_of(w.svc->send_task_success({{"taskToken", token}, {"output", R"({"r":7})"}})) ==
              json::object());
        w.sched.run_due();
        auto d = json_of(w.svc->describe_execution({{"executionArn", s.execution_arn}}));
        CHECK(d["status"] == "SUCCEEDED");
        CHECK(json::parse(d["output"].get<std::string>()) == json{{"r", 7}});
        // Used: the token is no longer waited on.
        CHECK(error_of(w.svc->send_task_success({{"taskToken", token}, {"output", "{}"}})).type ==
              "TaskDoesNotExist");
    }
    SECTION("failure") {
        CHECK(json_of(w.svc->send_task_failure(
                  {{"taskToken", token}, {"error", "Declined"}, {"cause", "card"}})) == json::object());
        w.sched.run_due();
        auto d = json_of(w.svc->describe_execution({{"executionArn", s.execution_arn}}));
        CHECK(d["status"] == "FAILED");
        CHECK(d["error"] == "Declined");
        CHECK(d["cause"] == "card");
    }
}

TEST_CASE("service: retries and catches are counted", "[unit]") {
    sfn_world w;
    (void)started_of(w.svc->start_execution(start_of("Retry")));
    w.sched.run_due();
    REQUIRE(w.tasks.calls.size() == 1);
    w.tasks.calls[0]->done(states::task_outcome{false, json(), "Oops", "first"});
    w.sched.advance(1000);
    REQUIRE(w.tasks.calls.size() == 2);
    w.tasks.calls[1]->done(states::task_outcome{false, json(), "Oops", "second"});
    w.sched.run_due();
    const auto& st = stats_of(*w.svc, "Retry");
    CHECK(st.retries == 1);
    CHECK(st.succeeded == 1);
    CHECK(st.state_transitions > 0);
    w.svc->reset_counters();
    CHECK(stats_of(*w.svc, "Retry").retries == 0);
}

TEST_CASE("service: StartExecution validation", "[unit]") {
    sfn_world w;
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "{}", "has space"))).type == "InvalidName");
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "{}", std::string(81, 'n')))).type ==
          "InvalidName");
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "{}", ""))).type == "InvalidName");
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "{}", "a:b"))).type == "InvalidName");
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "{}", "tab\tx"))).type == "InvalidName");
    CHECK(started_of(w.svc->start_execution(start_of("Pass", "{}", std::string(80, 'n')))).existing ==
          false);
    CHECK(started_of(w.svc->start_execution(start_of("Pass", "{}", "Ünïcode.ok-1_2"))).existing ==
          false);
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "{not json"))).type ==
          "InvalidExecutionInput");
    CHECK(error_of(w.svc->start_execution(start_of("Pass", "\"" + std::string(262144, 'x') + "\"")))
              .type == "InvalidExecutionInput");
    CHECK(error_of(w.svc->start_execution(start_of("Nope"))).type == "StateMachineDoesNotExist");
    auto bad = start_of("Pass");
    bad.state_machine_arn = "arn:aws:states:us-east-1:123456789012:activity:Pass";
    CHECK(error_of(w.svc->start_execution(bad)).type == "InvalidArn");
    // coldbrew's own callers name a machine by its logical id.
    auto by_id = start_of("Pass");
    by_id.state_machine_arn = "Pass";
    CHECK_FALSE(started_of(w.svc->start_execution(by_id)).execution_arn.empty());

    CHECK(error_of(w.svc->describe_execution({{"executionArn", "nope"}})).type == "InvalidArn");
    CHECK(error_of(w.svc->describe_execution(
                       {{"executionArn", "arn:aws:states:us-east-1:123456789012:execution:Pass:x"}}))
              .type == "ExecutionDoesNotExist");
    CHECK(error_of(w.svc->describe_execution(json::object())).type == "ValidationException");
}

TEST_CASE("service: a definition that does not parse stops the start at its key", "[unit]") {
    config::stack stack;
    stack.state_machines.push_back(testing::sfn_machine(
        "Bad", R"({"StartAt":"Missing","States":{"A":{"Type":"Pass","End":true}}})"));
    testing::manual_clock clock;
    testing::manual_scheduler sched;
    models::random_source rng(1);
    states::service_deps d{&clock, &sched, &rng, nullptr, {}, {}};
    try {
        states::service svc(stack, d);
        FAIL("no error");
    } catch (const config::config_error& e) {
        CHECK(e.where().file == "template.yaml");
        CHECK(e.where().line == 10);
        CHECK(e.key_path().rfind("Resources.Bad.Properties.Definition", 0) == 0);
        CHECK_FALSE(e.message().empty());
    }
}

TEST_CASE("service: stop_all aborts what runs", "[unit]") {
    sfn_world w;
    (void)started_of(w.svc->start_execution(start_of("Waiter")));
    (void)started_of(w.svc->start_execution(start_of("Token")));
    w.sched.run_due();
    CHECK(w.svc->running() == 2);
    w.svc->stop_all();
    CHECK(w.svc->running() == 0);
    CHECK(w.ended.size() == 2);
    REQUIRE(w.tasks.calls.size() == 1);
    CHECK(w.tasks.calls[0]->cancelled);
}
