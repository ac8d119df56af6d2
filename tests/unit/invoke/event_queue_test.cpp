#include "emulator/invoke/event_queue.hpp"

#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using coldbrew::functions::invocation;
using coldbrew::functions::invocation_result;
using coldbrew::functions::outcome;
using coldbrew::invoke::async_function_config;
using coldbrew::invoke::destination_record;
using coldbrew::invoke::event_queue;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What the fake pool does with one attempt.
enum class act { succeed, fail, throttle, unavailable, defer };

// Stands in for function_pool::invoke: answers each attempt as scripted per request id
// (success when the script runs out), synchronously, or keeps it for the test to answer.
struct fake_pool {
    struct call {
        std::string function, request_id, payload;
        double modeled_ms;  // the scheduler's clock when the attempt started
    };

    coldbrew::testing::manual_scheduler* scheduler = nullptr;
    double attempt_modeled_ms = 0;  // each attempt takes this long (modeled)
    std::map<std::string, std::deque<act>> script;
    std::vector<call> calls;
    std::vector<invocation> deferred;

    void operator()(const std::string& function, invocation inv) {
        calls.push_back({function, inv.request_id, inv.payload, scheduler->now_ms()});
        if (attempt_modeled_ms > 0) scheduler->advance(attempt_modeled_ms);
        act a = act::succeed;
        if (auto& s = script[inv.request_id]; !s.empty()) {
            a = s.front();
            s.pop_front();
        }
        if (a == act::defer) {
            deferred.push_back(std::move(inv));
            return;
        }
        inv.on_done(answer(a, inv.request_id, calls.size()));
    }

    static invocation_result answer(act a, const std::string& request_id, std::size_t n) {
        invocation_result r;
        r.request_id = request_id;
        switch (a) {
        case act::succeed:
        case act::defer:
            r.kind = outcome::success;
            r.payload = R"({"ok":true,"call":)" + std::to_string(n) + "}";
            break;
        case act::fail:
            r.kind = outcome::function_error;
            r.error_type = "Error";
            r.payload = R"({"errorType":"Error","errorMessage":"boom )" + std::to_string(n) + "\"}";
            break;
        case act::throttle:
            r.kind = outcome::throttled;
            r.throttle_reason = "ReservedFunctionConcurrentInvocationLimitExceeded";
            break;
        case act::unavailable:
            r.kind = outcome::unavailable;
            r.message = "coldbrew is shutting down";
            break;
        }
        return r;
    }
};

// Modeled time moves only as the test runs the scheduler; at the default scale of 0.001 the
// manual clock (record timestamps) moves 1 ms per modeled second.
struct fixture {
    explicit fixture(double time_scale = 0.001) : scheduler(time_scale, &clock) {
        std::random_device rd;
        dir = fs::temp_directory_path() / ("coldbrew-event-queue-test-" +
                                           std::to_string(::getpid()) + "-" +
                                           std::to_string(rd()) + std::to_string(rd()));
        fs::create_directories(dir);
        pool.scheduler = &scheduler;
        queue = std::make_unique<event_queue>(
            scheduler, clock, "us-east-1", "123456789012",
            [this](const std::string& f, invocation inv) { pool(f, std::move(inv)); });
    }
    ~fixture() {
        queue.reset();
        // Every timer the queue set is gone with it.
        CHECK(scheduler.pending() == 0);
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    fixture(const fixture&) = delete;
    fixture& operator=(const fixture&) = delete;

    async_function_config destinations() const {
        async_function_config cfg;
        cfg.on_success = dir / "success.jsonl";
        cfg.on_failure = dir / "failure.jsonl";
        return cfg;
    }

    // Fires the timers one due time after another until none is left (bounded, so a bug
    // fails, not hangs).
    void run() {
        for (int i = 0; i < 1000 && scheduler.pending() > 0; ++i) step();
        REQUIRE(scheduler.pending() == 0);
    }
    // Fires timers until `n` attempts have started.
    void run_until_calls(std::size_t n) {
        for (int i = 0; i < 1000 && pool.calls.size() < n && scheduler.pending() > 0; ++i) step();
        REQUIRE(pool.calls.size() == n);
    }
    void step() { scheduler.advance(scheduler.next_due() - scheduler.now_ms()); }

    std::vector<std::string> lines(const std::string& name) const {
        std::vector<std::string> out;
        std::ifstream in(dir / name);
        for (std::string line; std::getline(in, line);) out.push_back(line);
        return out;
    }
    std::vector<json> records(const std::string& name) const {
        std::vector<json> out;
        for (const auto& l : lines(name)) out.push_back(json::parse(l));
        return out;
    }

    coldbrew::testing::manual_clock clock;  // 2023-11-14T22:13:20.000Z
    coldbrew::testing::manual_scheduler scheduler;
    fs::path dir;
    fake_pool pool;
    std::unique_ptr<event_queue> queue;
};

constexpr const char* arn = "arn:aws:lambda:us-east-1:123456789012:function:hello-dev:$LATEST";

}  // namespace

TEST_CASE("event queue: the first attempt runs on the next loop turn; success goes to on_success",
          "[unit]") {
    fixture f;
    f.queue->configure("Hello", "hello-dev", f.destinations());
    f.queue->enqueue("Hello", "req-1", R"({"n": 1})");
    CHECK(f.pool.calls.empty());  // never inside enqueue
    CHECK(f.queue->counters("Hello").pending == 1);
    f.run();

    REQUIRE(f.pool.calls.size() == 1);
    CHECK(f.pool.calls[0].function == "Hello");
    CHECK(f.pool.calls[0].request_id == "req-1");
    CHECK(f.pool.calls[0].payload == R"({"n": 1})");

    // The whole line, pinning Lambda's field order.
    const auto lines = f.lines("success.jsonl");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] ==
          R"({"version":"1.0","timestamp":"2023-11-14T22:13:20.000Z","requestContext":)"
          R"({"requestId":"req-1","functionArn":")" +
              std::string(arn) +
              R"(","condition":"Success","approximateInvokeCount":1},"requestPayload":{"n":1},)"
              R"("responseContext":{"statusCode":200,"executedVersion":"$LATEST"},)"
              R"("responsePayload":{"ok":true,"call":1}})");
    CHECK_FALSE(fs::exists(f.dir / "failure.jsonl"));

    const auto s = f.queue->counters("Hello");
    CHECK(s.accepted == 1);
    CHECK(s.succeeded == 1);
    CHECK(s.retried == 0);
    CHECK(s.failed == 0);
    CHECK(s.pending == 0);
    CHECK(f.queue->counters("Other").accepted == 0);
}

TEST_CASE("event queue: function errors retry twice, ~1 min then ~2 min, then RetriesExhausted",
          "[unit]") {
    fixture f;
    f.queue->configure("Hello", "hello-dev", f.destinations());
    f.pool.script["req-1"] = {act::fail, act::fail, act::fail, act::fail};
    f.queue->enqueue("Hello", "req-1", R"({"n":1})");
    f.run();

    REQUIRE(f.pool.calls.size() == 3);
    for (const auto& c : f.pool.calls) CHECK(c.request_id == "req-1");  // reused, as on Lambda
    CHECK(f.pool.calls[0].modeled_ms == 0);  // on the next loop turn
    CHECK(f.pool.calls[1].modeled_ms - f.pool.calls[0].modeled_ms == 60000);
    CHECK(f.pool.calls[2].modeled_ms - f.pool.calls[1].modeled_ms == 120000);

    const auto failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 1);
    const auto& r = failures[0];
    CHECK(r["requestContext"]["condition"] == "RetriesExhausted");
    CHECK(r["requestContext"]["approximateInvokeCount"] == 3);
    CHECK(r["requestContext"]["requestId"] == "req-1");
    CHECK(r["requestContext"]["functionArn"] == arn);
    CHECK(r["requestPayload"] == json{{"n", 1}});
    CHECK(r["responseContext"] ==
          json{{"statusCode", 200}, {"executedVersion", "$LATEST"}, {"functionError", "Unhandled"}});
    CHECK(r["responsePayload"]["errorMessage"] == "boom 3");  // the last attempt's error
    CHECK_FALSE(fs::exists(f.dir / "success.jsonl"));

    const auto s = f.queue->counters("Hello");
    CHECK(s.retried == 2);
    CHECK(s.failed == 1);
    CHECK(s.succeeded == 0);
    CHECK(s.pending == 0);
}

TEST_CASE("event queue: a retry that succeeds is recorded as Success with its invoke count",
          "[unit]") {
    fixture f;
    f.queue->configure("Hello", "hello-dev", f.destinations());
    f.pool.script["req-1"] = {act::fail};
    f.queue->enqueue("Hello", "req-1", "{}");
    f.run();

    REQUIRE(f.pool.calls.size() == 2);
    const auto ok = f.records("success.jsonl");
    REQUIRE(ok.size() == 1);
    CHECK(ok[0]["requestContext"]["condition"] == "Success");
    CHECK(ok[0]["requestContext"]["approximateInvokeCount"] == 2);
    CHECK(ok[0]["responsePayload"] == json{{"ok", true}, {"call", 2}});
    CHECK_FALSE(ok[0]["responseContext"].contains("functionError"));
    CHECK_FALSE(fs::exists(f.dir / "failure.jsonl"));
    CHECK(f.queue->counters("Hello").retried == 1);
}

TEST_CASE("event queue: throttles back off 1, 2, 4 s and do not use up MaximumRetryAttempts",
          "[unit]") {
    fixture f;
    auto cfg = f.destinations();
    cfg.retry.maximum_retry_attempts = 0;
    f.queue->configure("Hello", "hello-dev", cfg);
    f.pool.script["req-1"] = {act::throttle, act::throttle, act::throttle};
    f.queue->enqueue("Hello", "req-1", "{}");
    f.run();

    REQUIRE(f.pool.calls.size() == 4);
    CHECK(f.pool.calls[1].modeled_ms - f.pool.calls[0].modeled_ms == 1000);
    CHECK(f.pool.calls[2].modeled_ms - f.pool.calls[1].modeled_ms == 2000);
    CHECK(f.pool.calls[3].modeled_ms - f.pool.calls[2].modeled_ms == 4000);
    const auto ok = f.records("success.jsonl");
    REQUIRE(ok.size() == 1);
    CHECK(ok[0]["requestContext"]["approximateInvokeCount"] == 4);
    CHECK(f.queue->counters("Hello").retried == 3);
}

TEST_CASE("event queue: an event throttled past its maximum age ends with EventAgeExceeded",
          "[unit]") {
    fixture f;
    auto cfg = f.destinations();
    cfg.retry.maximum_event_age_ms = 60000;
    f.queue->configure("Hello", "hello-dev", cfg);
    // Each attempt takes 10 modeled s and the waits count toward the age too: the attempts
    // end at age 10, 21, 33, 47 and 65 s, after waits of 1, 2, 4 and 8 s; a sixth would
    // start at 65 + 16 s, past the 60 s maximum.
    f.pool.attempt_modeled_ms = 10000;
    f.pool.script["req-1"] = std::deque<act>(20, act::throttle);
    f.queue->enqueue("Hello", "req-1", "{}");
    f.run();

    CHECK(f.pool.calls.size() == 5);
    const auto failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 1);
    const auto& r = failures[0];
    CHECK(r["requestContext"]["condition"] == "EventAgeExceeded");
    CHECK(r["requestContext"]["approximateInvokeCount"] == 5);
    // The function never ran: the throttle as the Invoke API answers it.
    CHECK(r["responseContext"] == json{{"statusCode", 429}});
    CHECK(r["responsePayload"]["Reason"] == "ReservedFunctionConcurrentInvocationLimitExceeded");
    CHECK(r["timestamp"] == "2023-11-14T22:13:20.065Z");  // 65 modeled s × 0.001
    CHECK(f.pool.calls[4].modeled_ms == 55000);
    const auto s = f.queue->counters("Hello");
    CHECK(s.retried == 4);
    CHECK(s.failed == 1);
}

TEST_CASE("event queue: with a 60 s maximum age a function error is not retried", "[unit]") {
    fixture f;
    auto cfg = f.destinations();
    cfg.retry.maximum_event_age_ms = 60000;
    f.queue->configure("Hello", "hello-dev", cfg);
    f.pool.script["req-1"] = {act::fail, act::fail};
    f.queue->enqueue("Hello", "req-1", "{}");
    f.run();

    CHECK(f.pool.calls.size() == 1);
    const auto failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 1);
    CHECK(failures[0]["requestContext"]["condition"] == "EventAgeExceeded");
    CHECK(failures[0]["responseContext"]["functionError"] == "Unhandled");
}

TEST_CASE("event queue: without destinations an event is still counted and nothing is written",
          "[unit]") {
    fixture f;
    async_function_config cfg;
    cfg.retry.maximum_retry_attempts = 0;
    f.queue->configure("Hello", "hello-dev", cfg);
    f.pool.script["bad"] = {act::fail};
    f.queue->enqueue("Hello", "bad", "{}");
    f.queue->enqueue("Hello", "good", "{}");
    // An unconfigured function runs with the defaults.
    f.queue->enqueue("Unconfigured", "other", "{}");
    f.run();

    CHECK(f.pool.calls.size() == 3);
    const auto s = f.queue->counters("Hello");
    CHECK(s.accepted == 2);
    CHECK(s.succeeded == 1);
    CHECK(s.failed == 1);
    CHECK(s.pending == 0);
    CHECK(f.queue->counters("Unconfigured").succeeded == 1);
    CHECK(fs::is_empty(f.dir));
}

TEST_CASE("event queue: shutdown ends queued events with EmulatorShutdown; in-flight results "
          "still count",
          "[unit]") {
    fixture f;
    f.queue->configure("Hello", "hello-dev", f.destinations());
    f.pool.script["waiting"] = {act::fail};  // then waits ~1 min for its retry
    f.pool.script["in-flight-ok"] = {act::defer};
    f.pool.script["in-flight-error"] = {act::defer};
    f.queue->enqueue("Hello", "waiting", R"({"k":"waiting"})");
    f.queue->enqueue("Hello", "in-flight-ok", "{}");
    f.queue->enqueue("Hello", "in-flight-error", "{}");
    f.run_until_calls(3);
    f.queue->enqueue("Hello", "not-started", R"({"k":"not-started"})");
    CHECK(f.queue->counters("Hello").pending == 4);

    f.queue->shutdown();
    auto failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 2);  // in the order accepted
    CHECK(failures[0]["requestContext"]["requestId"] == "waiting");
    CHECK(failures[0]["requestContext"]["condition"] == "EmulatorShutdown");
    CHECK(failures[0]["requestContext"]["approximateInvokeCount"] == 1);
    CHECK(failures[0]["responseContext"]["functionError"] == "Unhandled");
    CHECK(failures[0]["requestPayload"] == json{{"k", "waiting"}});
    CHECK(failures[1]["requestContext"]["requestId"] == "not-started");
    CHECK(failures[1]["requestContext"]["condition"] == "EmulatorShutdown");
    CHECK(failures[1]["requestContext"]["approximateInvokeCount"] == 0);
    CHECK_FALSE(failures[1].contains("responseContext"));
    CHECK_FALSE(failures[1].contains("responsePayload"));
    CHECK(f.queue->counters("Hello").pending == 2);

    // Answers to attempts in flight still arrive before the pool shuts down.
    REQUIRE(f.pool.deferred.size() == 2);
    f.pool.deferred[0].on_done(fake_pool::answer(act::succeed, "in-flight-ok", 7));
    f.pool.deferred[1].on_done(fake_pool::answer(act::fail, "in-flight-error", 8));
    const auto ok = f.records("success.jsonl");
    REQUIRE(ok.size() == 1);
    CHECK(ok[0]["requestContext"]["requestId"] == "in-flight-ok");
    failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 3);
    CHECK(failures[2]["requestContext"]["requestId"] == "in-flight-error");
    CHECK(failures[2]["requestContext"]["condition"] == "EmulatorShutdown");  // no retry
    CHECK(failures[2]["responsePayload"]["errorMessage"] == "boom 8");

    // After shutdown an event is ended at once, never run.
    f.queue->enqueue("Hello", "late", "{}");
    failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 4);
    CHECK(failures[3]["requestContext"]["requestId"] == "late");
    CHECK(failures[3]["requestContext"]["approximateInvokeCount"] == 0);

    CHECK(f.scheduler.pending() == 0);  // nothing left to run
    CHECK(f.pool.calls.size() == 3);
    const auto s = f.queue->counters("Hello");
    CHECK(s.accepted == 5);
    CHECK(s.succeeded == 1);
    CHECK(s.failed == 4);
    CHECK(s.pending == 0);
}

TEST_CASE("event queue: destruction ends in-flight events; a later answer is ignored", "[unit]") {
    fixture f;
    f.queue->configure("Hello", "hello-dev", f.destinations());
    f.pool.script["req-1"] = {act::defer};
    f.queue->enqueue("Hello", "req-1", "{}");
    f.run_until_calls(1);
    f.queue.reset();

    auto failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 1);
    CHECK(failures[0]["requestContext"]["condition"] == "EmulatorShutdown");
    CHECK(failures[0]["requestContext"]["approximateInvokeCount"] == 1);

    REQUIRE(f.pool.deferred.size() == 1);
    f.pool.deferred[0].on_done(fake_pool::answer(act::succeed, "req-1", 2));
    CHECK(f.records("failure.jsonl").size() == 1);
    CHECK_FALSE(fs::exists(f.dir / "success.jsonl"));
}

TEST_CASE("event queue: a pool that is shutting down ends the event with EmulatorShutdown",
          "[unit]") {
    fixture f;
    f.queue->configure("Hello", "hello-dev", f.destinations());
    f.pool.script["req-1"] = {act::unavailable};
    f.queue->enqueue("Hello", "req-1", "{}");
    f.run();

    CHECK(f.pool.calls.size() == 1);
    const auto failures = f.records("failure.jsonl");
    REQUIRE(failures.size() == 1);
    CHECK(failures[0]["requestContext"]["condition"] == "EmulatorShutdown");
    CHECK(failures[0]["responseContext"] == json{{"statusCode", 500}});
    CHECK(failures[0]["responsePayload"]["Type"] == "Service");
}

TEST_CASE("event queue: destination files are appended to, shared, one compact line a record",
          "[unit]") {
    fixture f;
    const auto shared = f.dir / "out" / "nested" / "failures.jsonl";
    fs::create_directories(shared.parent_path());
    std::ofstream(shared) << "earlier line\n";

    async_function_config cfg;
    cfg.retry.maximum_retry_attempts = 0;
    cfg.on_failure = shared;
    f.queue->configure("A", "a-fn", cfg);
    f.queue->configure("B", "b-fn", cfg);
    f.pool.script["a"] = {act::fail};
    f.pool.script["b"] = {act::fail};
    // Pretty-printed, with an integer too large for 64 bits: kept exactly, on one line.
    f.queue->enqueue("A", "a", "{\n  \"big\": 123456789012345678901234567890,\n  \"s\": \"x\\ny\"\n}");
    f.queue->enqueue("B", "b", "[1, 2.50]");
    f.run();

    const auto lines = f.lines("out/nested/failures.jsonl");
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "earlier line");
    CHECK(lines[1].find(R"("requestPayload":{"big":123456789012345678901234567890,"s":"x\ny"})") !=
          std::string::npos);
    CHECK(json::parse(lines[1])["requestContext"]["functionArn"] ==
          "arn:aws:lambda:us-east-1:123456789012:function:a-fn:$LATEST");
    CHECK(lines[2].find(R"("requestPayload":[1,2.50])") != std::string::npos);
    CHECK(json::parse(lines[2])["requestContext"]["functionArn"] ==
          "arn:aws:lambda:us-east-1:123456789012:function:b-fn:$LATEST");
}

TEST_CASE("event queue: destination_record text for payloads that are not JSON", "[unit]") {
    destination_record r;
    r.timestamp = "2019-11-14T18:16:05.568Z";
    r.request_id = "id";
    r.function_arn = "arn";
    r.condition = "RetriesExhausted";
    r.approximate_invoke_count = 3;
    r.request_payload = "not json \"quoted\"";
    r.response = destination_record::response_context{};
    r.response_payload = "";
    CHECK(r.to_json() ==
          R"({"version":"1.0","timestamp":"2019-11-14T18:16:05.568Z","requestContext":)"
          R"({"requestId":"id","functionArn":"arn","condition":"RetriesExhausted",)"
          R"("approximateInvokeCount":3},"requestPayload":"not json \"quoted\"",)"
          R"("responseContext":{"statusCode":200},"responsePayload":null})");
    // Bytes that are not UTF-8 are replaced, never thrown on.
    r.request_payload = "\xff\xfe";
    CHECK(json::parse(r.to_json())["requestPayload"] == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("event queue: ISO 8601 timestamps in UTC with milliseconds", "[unit]") {
    using std::chrono::milliseconds;
    using tp = std::chrono::system_clock::time_point;
    CHECK(coldbrew::invoke::iso8601_utc(tp(milliseconds(0))) == "1970-01-01T00:00:00.000Z");
    CHECK(coldbrew::invoke::iso8601_utc(tp(milliseconds(1573755365568))) ==
          "2019-11-14T18:16:05.568Z");
    CHECK(coldbrew::invoke::iso8601_utc(tp(milliseconds(-1))) == "1969-12-31T23:59:59.999Z");
}

TEST_CASE("event queue: invalid settings are refused", "[unit]") {
    coldbrew::testing::manual_clock clock;
    coldbrew::testing::manual_scheduler scheduler;
    auto noop = [](const std::string&, invocation) {};
    event_queue q(scheduler, clock, "us-east-1", "1", noop);
    async_function_config cfg;
    cfg.retry.maximum_retry_attempts = 3;
    CHECK_THROWS_AS(q.configure("Hello", "hello", cfg), std::invalid_argument);
    cfg.retry.maximum_retry_attempts = 2;
    cfg.retry.maximum_event_age_ms = 30000;
    CHECK_THROWS_AS(q.configure("Hello", "hello", cfg), std::invalid_argument);
}
