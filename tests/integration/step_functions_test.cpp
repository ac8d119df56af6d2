// Step Functions end to end on the real binary with real node handlers
// (tests/fixtures/sfn-flow, and the SAM CLI's step-func sample in tests/fixtures/step-func):
// gateway routes that start executions, the Step Functions API (raw AWS JSON 1.0 calls and the
// AWS SDK for JavaScript v3), faults injected between a state machine and its Tasks' function,
// retries and catches as the history and the counters show them, and schedules firing in
// modeled time. Every run uses a small time_scale, so each case takes a second or two.

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

const std::string standard_arn = "arn:aws:states:us-east-1:123456789012:stateMachine:standard-flow";

std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        auto candidate = std::filesystem::path(dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::absolute(candidate).string();
    }
    return {};
}

// A copy of a fixture app in a directory of its own.
struct fixture_app {
    temp_dir dir;
    explicit fixture_app(const std::string& name) {
        std::filesystem::copy(source_dir() / "tests" / "fixtures" / name, dir.path(),
                              std::filesystem::copy_options::recursive |
                                  std::filesystem::copy_options::overwrite_existing);
    }
};

struct running {
    coldbrew_process proc;
    int port = 0, admin = 0, sfn = 0;

    running(const fixture_app& app, const std::string& time_scale,
            std::vector<std::string> extra = {})
        : proc(args(app, time_scale, std::move(extra))) {
        port = proc.wait_for_port();
        admin = proc.wait_for_admin_port();
        const std::string marker = "Step Functions API listening on http://";
        auto line = proc.wait_for_line(
            [&](const std::string& l) { return l.find(marker) != std::string::npos; });
        REQUIRE(line);
        sfn = std::stoi(line->substr(line->rfind(':') + 1));
    }
    static std::vector<std::string> args(const fixture_app& app, const std::string& time_scale,
                                         std::vector<std::string> extra) {
        std::vector<std::string> a{"up", app.dir.path().string(), "--port", "0", "--invoke-port", "0",
                                   "--admin-port", "0", "--sfn-port", "0", "--standby", "0",
                                   "--seed", "11", "--time-scale", time_scale};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    ~running() {
        // Graceful: coldbrew ends every handler process it started before it exits.
        proc.signal(SIGTERM);
        proc.wait_exit(std::chrono::seconds(10));
    }

    // One Step Functions API call; the answer's status and JSON body.
    std::pair<int, json> api(const std::string& op, const json& body) {
        auto r = http_request(sfn, "POST", "/", body.dump(),
                              {{"X-Amz-Target", "AWSStepFunctions." + op},
                               {"Content-Type", "application/x-amz-json-1.0"}});
        INFO(op << " → " << r.status << " " << r.body);
        return {r.status, r.body.empty() ? json() : json::parse(r.body)};
    }
    // DescribeExecution until the execution has ended (10 s at most).
    json ended(const std::string& arn) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            auto [status, d] = api("DescribeExecution", {{"executionArn", arn}});
            REQUIRE(status == 200);
            if (d["status"] != "RUNNING" || std::chrono::steady_clock::now() > until) return d;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    std::string start(const json& input, const std::string& name = "") {
        json req = {{"stateMachineArn", standard_arn}, {"input", input.dump()}};
        if (!name.empty()) req["name"] = name;
        auto [status, body] = api("StartExecution", req);
        REQUIRE(status == 200);
        return body["executionArn"].get<std::string>();
    }
    json history(const std::string& arn) {
        auto [status, h] = api("GetExecutionHistory", {{"executionArn", arn}});
        REQUIRE(status == 200);
        return h["events"];
    }
    json counters() { return json::parse(http_request(admin, "GET", "/counters").body); }
    void add_rule(const json& rule) {
        auto r = http_request(admin, "POST", "/faults", rule.dump(), {{"Content-Type", "application/json"}});
        INFO(r.body);
        REQUIRE(r.status == 201);
    }
};

// The events of `type` in a history, in order.
std::vector<json> events_of(const json& history, const std::string& type) {
    std::vector<json> out;
    for (const auto& e : history)
        if (e["type"] == type) out.push_back(e);
    return out;
}

}  // namespace

TEST_CASE("step functions: an HTTP API route runs an Express execution synchronously and answers its output",
          "[integration]") {
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    auto r = http_request(cb.port, "POST", "/sync", R"({"n": 21})", {{"Content-Type", "application/json"}});
    INFO(r.body);
    REQUIRE(r.status == 200);
    const auto body = json::parse(r.body);
    CHECK(body["status"] == "SUCCEEDED");
    const auto output = json::parse(body["output"].get<std::string>());
    CHECK(output == json{{"doubled", 42}, {"version", "$LATEST"}, {"status", 200}});
    // START and END lines name the execution, beside the function's own.
    auto end = cb.proc.wait_for_line([](const std::string& l) {
        return l.find("[ExpressFlow] END Execution arn:aws:states:us-east-1:123456789012:express:ExpressFlow:") !=
                   std::string::npos &&
               l.find(" SUCCEEDED ") != std::string::npos;
    });
    CHECK(end);
    const auto c = cb.counters();
    CHECK(c["state_machines"]["ExpressFlow"]["succeeded"] == 1);
    CHECK(c["requests"]["states"]["served"] == 1);
}

TEST_CASE("step functions: a SAM Api event starts a Standard execution that DescribeExecution reports",
          "[integration]") {
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    auto r = http_request(cb.port, "POST", "/start", R"({"n": 3})", {{"Content-Type", "application/json"}});
    INFO(r.body);
    REQUIRE(r.status == 200);
    const auto started = json::parse(r.body);
    const std::string arn = started["executionArn"];
    CHECK(arn.rfind("arn:aws:states:us-east-1:123456789012:execution:standard-flow:", 0) == 0);
    CHECK(started["startDate"].is_number());
    const auto d = cb.ended(arn);
    CHECK(d["status"] == "SUCCEEDED");
    CHECK(json::parse(d["output"].get<std::string>()) == json{{"n", 3}, {"doubled", 6}});
    // The lambda:invoke Task and the plain ARN Task record their own event types.
    const auto h = cb.history(arn);
    CHECK(events_of(h, "TaskSucceeded").size() == 1);
    CHECK(events_of(h, "LambdaFunctionSucceeded").size() == 1);
}

TEST_CASE("step functions: the AWS SDK starts, describes and reads the history of an execution",
          "[integration]") {
    const auto node = find_on_path("node");
    if (node.empty()) FAIL("node is not on PATH: run tools/setup.sh");
    const auto sdk = source_dir() / "tests" / "integration" / "sdk";
    if (!std::filesystem::exists(sdk / "node_modules" / "@aws-sdk" / "client-sfn" / "package.json"))
        FAIL("@aws-sdk/client-sfn is not installed in " << (sdk / "node_modules").string()
                                                       << ": run tools/setup.sh");
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    coldbrew_process driver({(sdk / "sfn_sdk.mjs").string(), "http://127.0.0.1:" + std::to_string(cb.sfn),
                             standard_arn, R"({"n": 5})", "sdk-run-1"},
                            {{"AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED", "true"}}, node);
    const auto code = driver.wait_exit(std::chrono::seconds(20));
    INFO(driver.stdout_text() << driver.stderr_text());
    REQUIRE(code == 0);
    const auto out = json::parse(driver.stdout_text());
    CHECK(out["error"].is_null());
    CHECK(out["start"]["executionArn"] ==
          "arn:aws:states:us-east-1:123456789012:execution:standard-flow:sdk-run-1");
    CHECK(out["describe"]["status"] == "SUCCEEDED");
    CHECK(out["describe"]["name"] == "sdk-run-1");
    CHECK(json::parse(out["describe"]["output"].get<std::string>()) == json{{"n", 5}, {"doubled", 10}});
    std::vector<std::string> types;
    for (const auto& e : out["history"]) types.push_back(e["type"]);
    REQUIRE(!types.empty());
    CHECK(types.front() == "ExecutionStarted");
    CHECK(types.back() == "ExecutionSucceeded");
    CHECK(std::count(types.begin(), types.end(), "TaskScheduled") == 1);
    CHECK(std::count(types.begin(), types.end(), "LambdaFunctionScheduled") == 1);
}

TEST_CASE("step functions: an injected throttle on a Task is retried, in the history and the counters",
          "[integration]") {
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    cb.add_rule({{"name", "throttle-charge"}, {"front", "states"}, {"state_machine", "StandardFlow"},
                 {"state", "Charge"}, {"first", 1}, {"fault", {{"kind", "throttle"}}}});
    const auto arn = cb.start({{"n", 4}});
    const auto d = cb.ended(arn);
    CHECK(d["status"] == "SUCCEEDED");
    CHECK(json::parse(d["output"].get<std::string>()) == json{{"n", 4}, {"doubled", 8}});
    const auto h = cb.history(arn);
    const auto failed = events_of(h, "TaskFailed");
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["taskFailedEventDetails"]["error"] == "Lambda.TooManyRequestsException");
    CHECK(events_of(h, "TaskScheduled").size() == 2);
    const auto c = cb.counters();
    CHECK(c["state_machines"]["StandardFlow"]["retries"] == 1);
    CHECK(c["state_machines"]["StandardFlow"]["caught"] == 0);
    CHECK(c["requests"]["states"]["injected_fault"] == 1);
    CHECK(c["faults"]["by_rule"]["throttle-charge"] == 1);
    // The Check state's function is the same one: the rule names the state, so it passed.
    CHECK(c["functions"]["Work"]["invocations"] == 2);
    const auto metrics = http_request(cb.admin, "GET", "/metrics").body;
    CHECK(metrics.find("coldbrew_sfn_retries_total{state_machine=\"StandardFlow\"} 1") != std::string::npos);
    CHECK(metrics.find("coldbrew_sfn_executions_total{state_machine=\"StandardFlow\",status=\"SUCCEEDED\"} 1") !=
          std::string::npos);
}

TEST_CASE("step functions: a Catch handles the error once the retries are exhausted", "[integration]") {
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    cb.add_rule({{"name", "always-throttle"}, {"state_machine", "StandardFlow"}, {"state", "Charge"},
                 {"fault", {{"kind", "throttle"}}}});
    const auto arn = cb.start({{"n", 1}});
    const auto d = cb.ended(arn);
    CHECK(d["status"] == "SUCCEEDED");  // Recovered, a Pass state, ends it
    const auto output = json::parse(d["output"].get<std::string>());
    CHECK(output["n"] == 1);
    CHECK(output["error"]["Error"] == "Lambda.TooManyRequestsException");
    const auto h = cb.history(arn);
    CHECK(events_of(h, "TaskFailed").size() == 3);  // the attempt and MaxAttempts 2 retries
    CHECK(events_of(h, "PassStateEntered").size() == 1);
    const auto c = cb.counters();
    CHECK(c["state_machines"]["StandardFlow"]["retries"] == 2);
    CHECK(c["state_machines"]["StandardFlow"]["caught"] == 1);
    CHECK(c["requests"]["states"]["injected_fault"] == 3);
    CHECK(c["functions"]["Work"]["invocations"] == 0);
}

TEST_CASE("step functions: a lost Task answer ends as States.Timeout after the function's timeout and is retried",
          "[integration]") {
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    cb.add_rule({{"name", "lose-charge"}, {"front", "states"}, {"state_machine", "standard-flow"},
                 {"state", "Charge"}, {"first", 1},
                 {"fault", {{"kind", "phantom"}, {"when", "after"}}}});
    const auto t0 = std::chrono::steady_clock::now();
    const auto arn = cb.start({{"n", 6}});
    const auto d = cb.ended(arn);
    const auto took = std::chrono::steady_clock::now() - t0;
    CHECK(d["status"] == "SUCCEEDED");
    CHECK(json::parse(d["output"].get<std::string>()) == json{{"n", 6}, {"doubled", 12}});
    const auto h = cb.history(arn);
    const auto failed = events_of(h, "TaskFailed");
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["taskFailedEventDetails"]["error"] == "States.Timeout");
    // The lost attempt waited (1 s timeout + 10 s Init limit) × 0.01 = 110 ms of real time.
    CHECK(took >= std::chrono::milliseconds(110));
    // The function ran for the lost attempt too: its side effects happened.
    auto c = cb.counters();
    for (int i = 0; i < 100 && c["functions"]["Work"]["invocations"] != 3; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        c = cb.counters();
    }
    CHECK(c["functions"]["Work"]["invocations"] == 3);
    CHECK(c["state_machines"]["StandardFlow"]["retries"] == 1);
    CHECK(c["requests"]["states"]["injected_fault"] == 1);
}

TEST_CASE("step functions: schedules fire a state machine and a function in modeled time", "[integration]") {
    fixture_app app("sfn-flow");
    // rate(1 minute) at time_scale 0.01: every 600 ms.
    running cb(app, "0.01");
    int ends = 0;
    auto second = cb.proc.wait_for_line(
        [&](const std::string& l) {
            return l.rfind("[TickFlow] END Execution arn:aws:states:us-east-1:123456789012:execution:TickFlow:", 0) == 0 &&
                   l.find(" SUCCEEDED ") != std::string::npos && ++ends == 2;
        },
        std::chrono::seconds(5));
    CHECK(second);
    auto tick = cb.proc.wait_for_line(
        [](const std::string& l) { return l.find("tick fired source=aws.events") != std::string::npos; },
        std::chrono::seconds(5));
    CHECK(tick);
    const auto c = cb.counters();
    CHECK(c["state_machines"]["TickFlow"]["succeeded"] >= 2);
    // The schedule's Input is the execution's input.
    auto [status, list] = cb.api("ListExecutions",
                                 {{"stateMachineArn", "arn:aws:states:us-east-1:123456789012:stateMachine:TickFlow"}});
    REQUIRE(status == 200);
    REQUIRE(!list["executions"].empty());
    const auto d = cb.ended(list["executions"][0]["executionArn"]);
    CHECK(json::parse(d["input"].get<std::string>()) == json{{"from", "schedule"}});
}

TEST_CASE("step functions: StartExecution with a name in use returns the same execution", "[integration]") {
    fixture_app app("sfn-flow");
    running cb(app, "0.01");
    const auto first = cb.start({{"n", 2}}, "order-1");
    const auto again = cb.start({{"n", 2}}, "order-1");
    CHECK(again == first);
    cb.ended(first);
    auto [status, err] = cb.api("StartExecution", {{"stateMachineArn", standard_arn},
                                                   {"input", json{{"n", 9}}.dump()},
                                                   {"name", "order-1"}});
    CHECK(status == 400);
    CHECK(err["__type"] == "ExecutionAlreadyExists");
    const auto c = cb.counters();
    CHECK(c["state_machines"]["StandardFlow"]["started"] == 1);
    CHECK(c["state_machines"]["StandardFlow"]["duplicate_starts"] == 1);
    CHECK(c["functions"]["Work"]["invocations"] == 2);
}

TEST_CASE("step functions: the SAM CLI step-func sample loads and runs until its DynamoDB Task",
          "[integration]") {
    fixture_app app("step-func");
    // Record Transaction retries States.TaskFailed for 20 + 200 + … + 200000 s: 2.2 s here.
    running cb(app, "0.00001");
    auto [status, started] = cb.api(
        "StartExecution",
        {{"stateMachineArn", "arn:aws:states:us-east-1:123456789012:stateMachine:StockTradingStateMachine"},
         {"input", "{}"}});
    REQUIRE(status == 200);
    const std::string arn = started["executionArn"];
    CHECK(arn.rfind("arn:aws:states:us-east-1:123456789012:execution:StockTradingStateMachine:", 0) == 0);
    const auto d = cb.ended(arn);
    CHECK(d["status"] == "FAILED");
    CHECK(d["error"] == "States.TaskFailed");
    CHECK(d["cause"].get<std::string>().find("dynamodb:putItem") != std::string::npos);
    const auto h = cb.history(arn);
    // Check Stock Value and Buy or Sell Stock ran their functions; the DynamoDB Task was tried
    // once and retried five times.
    CHECK(events_of(h, "LambdaFunctionSucceeded").size() == 2);
    CHECK(events_of(h, "ChoiceStateEntered").size() == 1);
    CHECK(events_of(h, "TaskFailed").size() == 6);
    const auto banner = cb.proc.stdout_text();
    CHECK(banner.find("Task Record Transaction of state machine StockTradingStateMachine") != std::string::npos);
    CHECK(banner.find("HourlyTradingSchedule  rate(1 hour)  -> state machine StockTradingStateMachine  (disabled)") !=
          std::string::npos);
}

TEST_CASE("step functions: an execution's trace holds its states, each Task attempt and the invocation",
          "[integration]") {
    fixture_app app("sfn-flow");
    const auto trace_file = app.dir.path() / "traces.jsonl";
    std::string arn;
    {
        running cb(app, "0.01", {"--trace-file", trace_file.string()});
        cb.add_rule({{"state_machine", "StandardFlow"}, {"state", "Charge"}, {"first", 1},
                     {"fault", {{"kind", "throttle"}}}});
        arn = cb.start({{"n", 1}});
        REQUIRE(cb.ended(arn)["status"] == "SUCCEEDED");
    }  // stopped: every trace is written
    std::ifstream in(trace_file);
    REQUIRE(in);
    std::map<std::string, std::vector<json>> by_trace;  // traceId → spans
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        const auto doc = json::parse(line);  // held: a temporary would end before the loop
        for (const auto& rs : doc["resourceSpans"])
            for (const auto& ss : rs["scopeSpans"])
                for (const auto& sp : ss["spans"]) by_trace[sp["traceId"]].push_back(sp);
    }
    const json* root = nullptr;
    std::string trace_id;
    for (const auto& [id, spans] : by_trace)
        for (const auto& sp : spans)
            if (sp["name"] == "Execution standard-flow") {
                root = &sp;
                trace_id = id;
            }
    std::string names;
    for (const auto& [id, sps] : by_trace)
        for (const auto& sp : sps) names += sp["name"].get<std::string>() + "; ";
    INFO(names);
    REQUIRE(root);
    const auto& spans = by_trace[trace_id];
    auto named = [&](const std::string& n) {
        return std::count_if(spans.begin(), spans.end(), [&](const json& sp) { return sp["name"] == n; });
    };
    CHECK(named("State Charge") == 1);
    CHECK(named("State Check") == 1);
    CHECK(named("Task attempt") == 3);  // Charge twice (one throttled), Check once
    // The Task invocations are the executor's traces, children of their attempts' spans.
    std::set<std::string> attempts;
    for (const auto& sp : spans)
        if (sp["name"] == "Task attempt") attempts.insert(sp["spanId"].get<std::string>());
    int invocations = 0;
    for (const auto& sp : spans)
        if (sp["name"] == "StandardFlow Charge" || sp["name"] == "StandardFlow Check") {
            ++invocations;
            CHECK(attempts.count(sp.value("parentSpanId", std::string())) == 1);
        }
    CHECK(invocations == 3);
}
