// Cold starts as the model sets them, end to end: the local init runs inside the modeled Init
// Duration instead of before it, an init that outlasts the model is reported as an overrun,
// standby environments take the local start off a burst's path, and a failed init states what
// was waited. The fake handler's FAKE_INIT_SLEEP_MS stands for a slow local process start.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

// One function, Fake, on the fake handler behind a REST API; `variables` go to its
// Environment (the fake's start-up switches).
struct init_app {
    temp_dir dir;
    init_app(const std::string& coldbrew_yaml, const std::string& variables) {
        write_fake_app(dir, "    Timeout: 10\n    MemorySize: 1024\n", R"(  Fake:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables: {)" + variables + R"(}
      Events:
        Rest:
          Type: Api
          Properties: {Path: /fake, Method: post}
)");
        dir.write("coldbrew.yaml", coldbrew_yaml);
    }
};

struct running {
    coldbrew_process proc;
    int port;
    int admin;
    running(const init_app& app, std::vector<std::string> extra)
        : proc(args(app, std::move(extra))), port(proc.wait_for_port()),
          admin(proc.wait_for_admin_port()) {}
    static std::vector<std::string> args(const init_app& app, std::vector<std::string> extra) {
        std::vector<std::string> a{"up", app.dir.path().string(), "--port", "0", "--invoke-port",
                                   "0", "--admin-port", "0"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    http_reply post(const json& script = json::object()) {
        return http_request(port, "POST", "/fake", script.dump(),
                            {{"Content-Type", "application/json"}});
    }
    std::string line_starting(const std::string& prefix, int n = 1) {
        int seen = 0;
        auto line = proc.wait_for_line(
            [&](const std::string& l) { return l.rfind(prefix, 0) == 0 && ++seen == n; });
        REQUIRE(line);
        return *line;
    }
    std::string report(int n) { return line_starting("[Fake] REPORT RequestId:", n); }
    std::string metrics() { return http_request(admin, "GET", "/metrics").body; }
    void stop() {
        proc.signal(SIGINT);
        REQUIRE(proc.wait_exit() == 0);
    }
};

std::optional<double> field_ms(const std::string& line, const std::string& name) {
    std::smatch m;
    if (!std::regex_search(line, m, std::regex("\t" + name + ": ([0-9.]+) ms"))) return std::nullopt;
    return std::stod(m[1]);
}

// The value of the sample `name{function="Fake"…}` in a Prometheus text exposition.
std::optional<double> sample(const std::string& text, const std::string& name_and_labels) {
    auto at = text.find("\n" + name_and_labels + " ");
    if (at == std::string::npos) return std::nullopt;
    return std::stod(text.substr(at + name_and_labels.size() + 2));
}

double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("cold start: a local init shorter than the model runs inside the modeled wait",
          "[integration]") {
    init_app app("standby: 0\nfunctions:\n  Fake:\n    model: {init_duration: fixed(900ms)}\n",
                 "FAKE_INIT_SLEEP_MS: '400'");
    running cb(app, {"--seed", "5"});
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(cb.post().status == 200);
    const double elapsed = ms_since(t0);
    // 900 ms of model, not 400 of local start plus 900.
    CHECK(elapsed >= 900);
    CHECK(elapsed < 900 + 350);
    const auto rep = cb.report(1);
    CHECK(field_ms(rep, "Init Duration") == std::optional<double>(900.0));
    // Not the 400 ms local start: at most a loaded loop's lateness.
    CHECK(field_ms(rep, "Init Overrun").value_or(0) < 100);
}

TEST_CASE("cold start: a local init longer than the model is counted as an overrun, with advice",
          "[integration]") {
    temp_dir logs;
    const auto log_path = logs.path() / "decisions.jsonl";
    init_app app("standby: 0\nfunctions:\n  Fake:\n    model: {init_duration: fixed(100ms)}\n",
                 "FAKE_INIT_SLEEP_MS: '700'");
    running cb(app, {"--seed", "5", "--decision-log", log_path.string()});
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(cb.post().status == 200);
    CHECK(ms_since(t0) >= 700);  // the excess is real: the client waited for this machine
    const auto rep = cb.report(1);
    // REPORT states the model; the overrun is coldbrew's own field after AWS's.
    CHECK(field_ms(rep, "Init Duration") == std::optional<double>(100.0));
    const auto over = field_ms(rep, "Init Overrun");
    REQUIRE(over);
    CHECK(*over >= 500);
    CHECK(*over < 700 + 1000);
    // The burst (one cold start) ended with the pool idle: one line says so and what to set.
    REQUIRE(cb.proc.wait_for_line([](const std::string& l) {
        return l.find("Fake: 1 of 1 cold start in this burst waited longer than the modeled "
                      "Init Duration") != std::string::npos &&
               l.find("--standby 1") != std::string::npos;
    }));
    const auto m = cb.metrics();
    CHECK(sample(m, R"(coldbrew_init_overruns_total{function="Fake"})") == std::optional<double>(1));
    const auto secs = sample(m, R"(coldbrew_init_overrun_seconds_total{function="Fake"})");
    REQUIRE(secs);
    CHECK(*secs == Approx(*over / 1000.0).epsilon(0.01));
    cb.stop();
    const auto out = cb.proc.stdout_text();
    CHECK(out.find("local init overran the model") != std::string::npos);
    CHECK(out.find("1 of 1 cold start, by ") != std::string::npos);
    std::ifstream in(log_path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    CHECK(text.find(R"("event":"init_overrun","function":"Fake")") != std::string::npos);
}

TEST_CASE("standby: a ready standby environment serves the cold start in the modeled time",
          "[integration]") {
    // The local start (600 ms) is longer than the model (150 ms): without a standby
    // environment the client would wait for it.
    init_app app("functions:\n  Fake:\n    model: {init_duration: fixed(150ms)}\n",
                 "FAKE_INIT_SLEEP_MS: '600'");
    running cb(app, {"--seed", "5"});
    // The ports were reported once the standby environment had finished its init.
    auto m = cb.metrics();
    CHECK(sample(m, R"(coldbrew_standby_environments{function="Fake",state="ready"})") ==
          std::optional<double>(1));
    CHECK(sample(m, R"(coldbrew_execution_environments{function="Fake",state="idle"})") ==
          std::optional<double>(0));
    const auto t0 = std::chrono::steady_clock::now();
    auto r = cb.post();
    const double elapsed = ms_since(t0);
    REQUIRE(r.status == 200);
    CHECK(elapsed >= 150);
    CHECK(elapsed < 150 + 400);
    CHECK(json::parse(r.body)["env"]["AWS_LAMBDA_INITIALIZATION_TYPE"] == "on-demand");
    const auto rep = cb.report(1);
    CHECK(field_ms(rep, "Init Duration") == std::optional<double>(150.0));
    // The local init was done: at most a loaded loop's lateness, never the 600 ms start.
    CHECK(field_ms(rep, "Init Overrun").value_or(0) < 100);
    // The standby environment is refilled in the background.
    bool refilled = false;
    for (int i = 0; i < 100 && !refilled; ++i) {
        m = cb.metrics();
        refilled = sample(m, R"(coldbrew_standby_environments{function="Fake",state="ready"})") ==
                   std::optional<double>(1);
        if (!refilled) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(refilled);
    cb.stop();
}

TEST_CASE("standby: a burst of 16 first requests sees the modeled Init Durations drawn from the seed",
          "[integration]") {
    // The built-in profile's draws for provided.al2023 at 1024 MB, a local start of 400 ms
    // that would overrun most of them, and 16 standby environments.
    init_app app("max_environments: 32\n", "FAKE_INIT_SLEEP_MS: '400'");
    running cb(app, {"--seed", "21", "--standby", "16"});
    constexpr int n = 16;
    std::mutex mu;
    std::map<std::string, double> latency;  // request id → client-side latency
    std::vector<std::thread> clients;
    for (int i = 0; i < n; ++i)
        clients.emplace_back([&] {
            const auto t0 = std::chrono::steady_clock::now();
            auto r = cb.post({{"sleep_ms", 50}});
            const double ms = ms_since(t0);
            if (r.status != 200) return;
            const auto id = json::parse(r.body)["request_id"].get<std::string>();
            std::lock_guard<std::mutex> lock(mu);
            latency[id] = ms;
        });
    for (auto& t : clients) t.join();
    REQUIRE(latency.size() == n);
    std::vector<double> modeled;
    for (int i = 1; i <= n; ++i) {
        const auto rep = cb.report(i);
        std::smatch m;
        REQUIRE(std::regex_search(rep, m, std::regex("RequestId: ([0-9a-f-]+)\t")));
        const auto init = field_ms(rep, "Init Duration");
        REQUIRE(init);
        // The 400 ms local start was done: at most a loaded loop's lateness is left.
        CHECK(field_ms(rep, "Init Overrun").value_or(0) < 150);
        const double seen = latency.at(m[1]);
        modeled.push_back(*init);
        // What the client saw is the model's draw plus the handler's 50 ms, within a loose
        // band for a loaded 2-core machine.
        CHECK(seen >= *init + 50 - 5);
        CHECK(seen <= *init + 50 + 400);
    }
    // The draws differ (they come from the seed, per environment), so the check above
    // followed each one rather than one fixed figure.
    std::sort(modeled.begin(), modeled.end());
    CHECK(modeled.back() - modeled.front() > 1.0);
}

TEST_CASE("failed init: INIT_REPORT and REPORT state what was waited; the next one starts afresh",
          "[integration]") {
    // A modeled 5 s init that never completes: the failure is answered when it happens.
    init_app app("functions:\n  Fake:\n    model: {init_duration: fixed(5s)}\n",
                 "FAKE_INIT_ERROR: '1'");
    running cb(app, {"--seed", "5"});
    // The standby environment failed its init the same way; no more are started.
    REQUIRE(cb.proc.wait_for_line([](const std::string& l) {
        return l.find("a standby execution environment ended during its init") != std::string::npos;
    }));
    for (int i = 1; i <= 2; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = cb.post();
        CHECK(r.status == 502);
        CHECK(ms_since(t0) < 3000);
        // The standby's own INIT_REPORT came first; each request then has its own.
        const auto init_report = cb.line_starting("[Fake] INIT_REPORT Init Duration:", i + 1);
        const auto rep = cb.report(i);
        std::smatch m;
        REQUIRE(std::regex_search(init_report, m, std::regex("Init Duration: ([0-9.]+) ms")));
        const double waited = std::stod(m[1]);
        const auto reported = field_ms(rep, "Init Duration");
        REQUIRE(reported);
        CHECK(*reported < 3000);  // not the modeled 5 s, which nobody waited
        CHECK(*reported == Approx(waited).margin(50));
        CHECK(rep.find("Status: error\tError Type: Runtime.FakeInitError") != std::string::npos);
    }
}
