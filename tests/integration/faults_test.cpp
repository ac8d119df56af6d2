// Fault injection end to end: rules from coldbrew.yaml and the admin API, every outcome a
// client can see, phantoms checked through the handler's own log, and determinism.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;
using ending = http_attempt_result::ending;

namespace {

// One function (FunctionName pay-fn) behind a REST route and an HTTP API route. The
// integration timeout is 2 s and time_scale 0.1, so a phantom's timeout answers after 200 ms.
struct fault_app {
    temp_dir dir;
    explicit fault_app(const std::string& coldbrew_yaml_extra = "") {
        write_fake_app(dir, "    Timeout: 5\n", R"(  Pay:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: pay-fn
      Events:
        Rest:
          Type: Api
          Properties:
            Path: /pay
            Method: post
        Http:
          Type: HttpApi
          Properties:
            Path: /v2/pay
            Method: post
)");
        dir.write("coldbrew.yaml", "time_scale: 0.1\ngateway:\n  integration_timeout_ms: 2000\n" +
                                       coldbrew_yaml_extra);
    }
};

struct running {
    coldbrew_process proc;
    int port, admin, invoke;
    explicit running(const fault_app& app, std::vector<std::string> extra = {})
        : proc(args(app, std::move(extra))),
          port(proc.wait_for_port()),
          admin(proc.wait_for_admin_port()),
          invoke(proc.wait_for_invoke_port()) {}
    static std::vector<std::string> args(const fault_app& app, std::vector<std::string> extra) {
        std::vector<std::string> a{"up", app.dir.path().string(), "--port", "0"};
        if (std::find(extra.begin(), extra.end(), "--seed") == extra.end())
            a.insert(a.end(), {"--seed", "11"});
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    // A request whose handler logs `marker` and answers with the echo.
    http_attempt_result pay(const std::string& marker, const std::string& path = "/pay",
                            std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        return http_attempt(port, "POST", path, json{{"log", marker}}.dump(),
                            {{"Content-Type", "application/json"}}, timeout);
    }
    http_reply admin_call(const std::string& method, const std::string& target, const json& body = nullptr) {
        return http_request(admin, method, target, body.is_null() ? "" : body.dump(),
                            {{"Content-Type", "application/json"}});
    }
    json admin_json(const std::string& method, const std::string& target, const json& body = nullptr,
                    int expect = 200) {
        auto r = admin_call(method, target, body);
        INFO(method << " " << target << " -> " << r.status << " " << r.body);
        REQUIRE(r.status == expect);
        return json::parse(r.body);
    }
    bool logged(const std::string& marker, std::chrono::milliseconds wait = std::chrono::seconds(5)) {
        return proc.wait_for_line([&](const std::string& l) { return l == "[Pay] " + marker; }, wait)
            .has_value();
    }
};

json rule(const std::string& name, json fault, json match = json::object()) {
    match["name"] = name;
    match["fault"] = std::move(fault);
    return match;
}

}  // namespace

TEST_CASE("faults: phantom before never invokes, phantom after runs and loses the answer",
          "[integration]") {
    fault_app app;
    running cb(app);
    CHECK(cb.proc.wait_for_line([](const std::string& l) { return l.rfind("Faults: none", 0) == 0; }));

    cb.admin_json("POST", "/faults",
                  rule("lose-second", {{"kind", "phantom"}, {"when", "before"}},
                       {{"route", "POST /pay"}, {"nth", 2}}),
                  201);
    auto first = cb.pay("before-1");
    auto second = cb.pay("before-2");
    auto third = cb.pay("before-3");
    REQUIRE(first.end == ending::answered);
    CHECK(first.reply.status == 200);
    CHECK_FALSE(first.reply.header("X-Coldbrew-Fault"));
    // REST: the integration timeout's 504 after 2 s × time_scale 0.1.
    REQUIRE(second.end == ending::answered);
    CHECK(second.reply.status == 504);
    CHECK(second.reply.body == R"({"message": "Endpoint request timed out"})");
    REQUIRE(second.reply.header("X-Coldbrew-Fault"));
    CHECK(second.reply.header("X-Coldbrew-Fault")->find("phantom; rule=lose-second") == 0);
    CHECK(second.elapsed >= std::chrono::milliseconds(180));
    CHECK(third.reply.status == 200);
    CHECK(cb.logged("before-1"));
    CHECK(cb.logged("before-3"));
    // Request 2 never reached the function: its marker is not in the handler's log, which
    // already shows request 3's.
    CHECK_FALSE(cb.logged("before-2", std::chrono::milliseconds(0)));

    // phantom after, on the HTTP API route (timeout answer: 503 Service Unavailable).
    cb.admin_json("PUT", "/faults",
                  {{"rules", {rule("lose-after", {{"kind", "phantom"}, {"when", "after"}},
                                   {{"route", "POST /v2/pay"}, {"nth", 1}})}}});
    auto lost = cb.pay("after-1", "/v2/pay");
    REQUIRE(lost.end == ending::answered);
    CHECK(lost.reply.status == 503);
    CHECK(lost.reply.body == R"({"message":"Service Unavailable"})");
    // The function ran: its side effect (the log line) happened although the client got
    // only the timeout.
    CHECK(cb.logged("after-1"));
    CHECK(cb.pay("after-2", "/v2/pay").reply.status == 200);

    auto counters = cb.admin_json("GET", "/counters");
    CHECK(counters["faults"]["by_action"]["phantom_before"] == 1);
    CHECK(counters["faults"]["by_action"]["phantom_after"] == 1);
    CHECK(counters["requests"]["gateway"]["injected_fault"] == 2);
    CHECK(counters["requests"]["gateway"]["served"] == 3);
    CHECK(counters["faults"]["active"] == 0);
    auto decisions = cb.admin_json("GET", "/decisions");
    int fault_lines = 0;
    for (const auto& d : decisions["decisions"])
        if (d.value("event", "") == "fault") ++fault_lines;
    CHECK(fault_lines == 2);
}

TEST_CASE("faults: every outcome a client can see", "[integration]") {
    fault_app app;
    running cb(app);
    auto only = [&](json fault, json match = json::object()) {
        match["route"] = "POST /pay";
        cb.admin_json("PUT", "/faults", {{"rules", {rule("r", std::move(fault), std::move(match))}}});
    };

    SECTION("hang: no answer until the client gives up") {
        only({{"kind", "phantom"}, {"when", "before"}, {"client_sees", "hang"}});
        auto r = cb.pay("hang", "/pay", std::chrono::milliseconds(800));
        CHECK(r.end == ending::timed_out);
        CHECK(r.bytes == 0);
    }
    SECTION("reset: the connection is reset") {
        only({{"kind", "reset"}});
        CHECK(cb.pay("reset").end == ending::reset);
        only({{"kind", "phantom"}, {"when", "after"}, {"client_sees", "reset"}});
        CHECK(cb.pay("reset-after").end == ending::reset);
        CHECK(cb.logged("reset-after"));  // it ran before the connection went
        CHECK_FALSE(cb.logged("reset", std::chrono::milliseconds(0)));
    }
    SECTION("gateway errors carry AWS's bodies and name the fault") {
        only({{"kind", "gateway_error"}, {"status", 503}});
        auto r = cb.pay("gw");
        CHECK(r.reply.status == 503);
        CHECK(r.reply.header("x-amzn-RequestId"));
        CHECK(r.reply.header("X-Coldbrew-Fault")->find("gateway_error; rule=r") == 0);
        only({{"kind", "throttle"}});
        CHECK(cb.pay("throttled").reply.status == 500);  // Lambda's 429 behind API Gateway
        only({{"kind", "function_error"}, {"mode", "handler"}});
        CHECK(cb.pay("handler").reply.body == R"({"message": "Internal server error"})");
        CHECK_FALSE(cb.logged("gw", std::chrono::milliseconds(0)));
    }
    SECTION("function_error exit kills the environment mid-invocation: Runtime.ExitError") {
        only({{"kind", "function_error"}, {"mode", "exit"}, {"after", "1s"}});
        auto r = http_attempt(cb.port, "POST", "/pay", json{{"log", "dying"}, {"sleep_ms", 3000}}.dump());
        CHECK(r.reply.status == 502);
        CHECK(r.reply.header("X-Coldbrew-Fault"));
        CHECK(cb.logged("dying"));
        CHECK(cb.proc.wait_for_line([](const std::string& l) {
            return l.find("[Pay] Runtime.ExitError") == 0;
        }));
        // The next request gets a fresh environment and is served.
        cb.admin_json("DELETE", "/faults");
        CHECK(cb.pay("after-crash").reply.status == 200);
    }
    SECTION("delay and slow_response: the answer comes, late") {
        only({{"kind", "delay"}, {"duration", "fixed(3s)"}});
        auto late = cb.pay("delayed");
        CHECK(late.reply.status == 200);
        CHECK(late.elapsed >= std::chrono::milliseconds(280));  // 3 s × time_scale 0.1
        CHECK(late.reply.header("X-Coldbrew-Fault")->find("delay; rule=r") == 0);
        only({{"kind", "slow_response"}, {"bytes_per_s", 2000}});
        auto slow = cb.pay("slow");
        REQUIRE(slow.reply.status == 200);
        CHECK(json::parse(slow.reply.body)["event"]["body"].is_string());
        // 2,000 B/s is a modeled rate: at time_scale 0.1 it is sent at 20,000 B/s, so the whole
        // response takes size/20000 s, less one 50 ms slice, and well under size/2000 s.
        const auto floor_ms = static_cast<long>(slow.bytes * 1000 / 20000) - 60;
        const auto unscaled_ms = static_cast<long>(slow.bytes * 1000 / 2000);
        CHECK(slow.elapsed.count() >= floor_ms);
        CHECK(slow.elapsed.count() < unscaled_ms);
    }
    SECTION("the Invoke endpoint takes the same rules") {
        cb.admin_json("PUT", "/faults",
                      {{"rules", {rule("inv", {{"kind", "throttle"}}, {{"front", "invoke"}, {"first", 1}})}}});
        auto r = http_request(cb.invoke, "POST", "/2015-03-31/functions/pay-fn/invocations", R"({"log":"x"})");
        CHECK(r.status == 429);
        CHECK(r.header("x-amzn-ErrorType") == std::optional<std::string>("TooManyRequestsException"));
        CHECK(json::parse(r.body)["Reason"] == "ConcurrentInvocationLimitExceeded");
        CHECK(r.header("X-Coldbrew-Fault"));
        auto ok = http_request(cb.invoke, "POST", "/2015-03-31/functions/pay-fn/invocations", R"({"log":"y"})");
        CHECK(ok.status == 200);
        cb.admin_json("PUT", "/faults",
                      {{"rules", {rule("inv-lost", {{"kind", "phantom"}, {"when", "after"}, {"client_sees", "reset"}},
                                       {{"function", "Pay"}, {"front", "invoke"}})}}});
        auto lost = http_attempt(cb.invoke, "POST", "/2015-03-31/functions/Pay/invocations",
                                 R"({"log":"invoked-lost"})");
        CHECK(lost.end == ending::reset);
        CHECK(cb.logged("invoked-lost"));
        auto counters = cb.admin_json("GET", "/counters");
        CHECK(counters["requests"]["invoke"]["injected_fault"] == 2);
        CHECK(counters["requests"]["invoke"]["served"] == 1);
    }
}

TEST_CASE("faults: max_active_faults caps simultaneous faults", "[integration]") {
    fault_app app("faults:\n  max_active_faults: 1\n  rules:\n"
                  "    - {name: hang-all, route: POST /pay, fault: {kind: phantom, when: before, client_sees: hang}}\n");
    running cb(app);
    CHECK(cb.proc.wait_for_line([](const std::string& l) { return l.find("hang-all") != std::string::npos; }));
    std::atomic<bool> done{false};
    http_attempt_result hung;
    std::thread first([&] {
        hung = cb.pay("first", "/pay", std::chrono::milliseconds(1500));
        done = true;
    });
    // Wait until the first request's fault is active, then a second one overflows the cap.
    bool active = false;
    for (int i = 0; i < 100 && !active; ++i) {
        active = cb.admin_json("GET", "/counters")["faults"]["active"] == 1;
        if (!active) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(active);
    auto second = cb.pay("second");
    CHECK(second.reply.status == 200);
    first.join();
    CHECK(hung.end == ending::timed_out);
    auto c = cb.admin_json("GET", "/counters");
    CHECK(c["faults"]["overflow"] == 1);
    // The client that gave up frees its fault.
    bool freed = false;
    for (int i = 0; i < 100 && !freed; ++i) {
        freed = cb.admin_json("GET", "/counters")["faults"]["active"] == 0;
        if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(freed);
}

TEST_CASE("faults: admin API round trips and POST /reset restores coldbrew.yaml's rules",
          "[integration]") {
    fault_app app("faults:\n  rules:\n    - {name: configured, nth: 5, fault: {kind: reset}}\n");
    running cb(app);
    auto listed = cb.admin_json("GET", "/faults");
    REQUIRE(listed["rules"].size() == 1);
    CHECK(listed["rules"][0]["name"] == "configured");
    CHECK(listed["seed"] == 11);

    auto bad = cb.admin_call("POST", "/faults", json::array({rule("ok", {{"kind", "reset"}}),
                                                              rule("bad", {{"kind", "gateway_error"}, {"status", 418}})}));
    CHECK(bad.status == 400);
    CHECK(json::parse(bad.body)["path"] == "[1].fault.status");
    CHECK(cb.admin_json("GET", "/faults")["rules"].size() == 1);  // nothing half-applied

    cb.admin_json("POST", "/faults", rule("extra", {{"kind", "delay"}, {"duration", 100}}), 201);
    CHECK(cb.admin_call("POST", "/faults", rule("extra", {{"kind", "reset"}})).status == 409);
    CHECK(cb.admin_json("GET", "/faults/extra")["fault"]["kind"] == "delay");
    CHECK(cb.admin_call("DELETE", "/faults/nope").status == 404);
    cb.admin_json("DELETE", "/faults/extra");
    CHECK(cb.admin_json("PUT", "/seed", {{"seed", "18446744073709551615"}})["seed"] ==
          18446744073709551615ULL);
    CHECK(cb.admin_call("PUT", "/seed", {{"seed", -1}}).status == 400);
    cb.admin_json("DELETE", "/faults");
    CHECK(cb.admin_json("GET", "/faults")["rules"].empty());
    cb.pay("one");
    CHECK(cb.admin_json("GET", "/counters")["requests"]["gateway"]["served"] == 1);
    auto reset = cb.admin_json("POST", "/reset");
    CHECK(reset["rules"].size() == 1);
    CHECK(cb.admin_json("GET", "/faults")["rules"][0]["name"] == "configured");
    CHECK(cb.admin_json("GET", "/counters")["requests"]["gateway"]["served"] == 0);
    auto page = cb.admin_json("GET", "/decisions?since=0");
    CHECK(page.contains("next"));
    CHECK(cb.admin_call("GET", "/decisions?since=x").status == 400);
    CHECK(cb.admin_call("GET", "/nope").status == 404);
}

TEST_CASE("faults: a bad rule in coldbrew.yaml stops the start with file, line and key",
          "[integration]") {
    fault_app app("faults:\n  rules:\n    - name: broken\n      fault: {kind: gateway_error, status: 418}\n");
    coldbrew_process proc({"up", app.dir.path().string(), "--port", "0"});
    CHECK(proc.wait_exit() == 2);
    const auto err = proc.stderr_text();
    CHECK(err.find("coldbrew.yaml:7:") != std::string::npos);
    CHECK(err.find("faults.rules[0].fault.status") != std::string::npos);
}

TEST_CASE("faults: one seed and one request sequence give the same decision log", "[integration]") {
    fault_app app("faults:\n  sla: {gateway: 80%}\n  phantom: {after_share: 0.5, client_sees: reset}\n"
                  "  rules:\n    - {name: coin, route: POST /v2/pay, probability: 0.4, "
                  "fault: {kind: gateway_error, status: 502}}\n");
    auto run = [&](const std::string& log) {
        running cb(app, {"--decision-log", (app.dir.path() / log).string(), "--seed", "99"});
        std::vector<int> seen;
        for (int i = 0; i < 12; ++i) {
            auto a = cb.pay("r" + std::to_string(i), i % 2 ? "/v2/pay" : "/pay");
            seen.push_back(a.end == ending::answered ? a.reply.status : -1);
        }
        cb.proc.signal(SIGINT);
        CHECK(cb.proc.wait_exit() == 0);
        return seen;
    };
    auto a = run("one.jsonl");
    auto b = run("two.jsonl");
    CHECK(a == b);
    // init_overrun lines read this machine, not the seed; everything else must repeat.
    auto read = [&](const std::string& name) {
        std::ifstream in(app.dir.path() / name);
        std::string out;
        for (std::string l; std::getline(in, l);)
            if (l.find(R"("event":"init_overrun")") == std::string::npos) out += l + "\n";
        return out;
    };
    const auto one = read("one.jsonl"), two = read("two.jsonl");
    CHECK(one == two);
    // Both kinds of fault fired at least once in this sequence, and the lines name the rule.
    CHECK(one.find(R"("rule":"sla-gateway")") != std::string::npos);
    CHECK(one.find(R"("rule":"coin")") != std::string::npos);
}

TEST_CASE("faults: SIGINT does not wait for requests a fault holds", "[integration]") {
    fault_app app("faults:\n  rules:\n"
                  "    - {name: hang, route: POST /pay, fault: {kind: phantom, when: before, client_sees: hang}}\n"
                  "    - {name: slow, route: POST /v2/pay, fault: {kind: delay, duration: 10min}}\n");
    running cb(app);
    http_attempt_result hung, delayed;
    std::thread a([&] { hung = cb.pay("held", "/pay", std::chrono::seconds(15)); });
    std::thread b([&] { delayed = cb.pay("late", "/v2/pay", std::chrono::seconds(15)); });
    bool both = false;
    for (int i = 0; i < 100 && !both; ++i) {
        both = cb.admin_json("GET", "/counters")["faults"]["active"] == 2;
        if (!both) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(both);
    const auto start = std::chrono::steady_clock::now();
    cb.proc.signal(SIGINT);
    CHECK(cb.proc.wait_exit(std::chrono::seconds(10)) == 0);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    a.join();
    b.join();
    // The held clients see their connection end, not an answer.
    CHECK(hung.end != ending::answered);
    CHECK(delayed.end != ending::answered);
    CHECK(cb.proc.stdout_text().find("2 injected faults") != std::string::npos);
}
