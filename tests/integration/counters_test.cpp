// Counters that agree: a run with phantoms and injected exits on both fronts, where every
// place that counts faults (GET /counters, GET /metrics, the run summary) gives the same
// totals, and the reset endpoints reset all of it.

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

std::uint64_t sum(const json& counts) {
    std::uint64_t n = 0;
    for (const auto& [_, v] : counts.items()) n += v.get<std::uint64_t>();
    return n;
}

// The sum of every sample of a metric family whose labels include `label` (or all of them).
double metric_total(const std::string& text, const std::string& name,
                    const std::string& label = {}) {
    double total = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(name, 0) != 0) continue;
        const auto rest = line.substr(name.size());
        if (rest.empty() || (rest[0] != '{' && rest[0] != ' ')) continue;  // another family
        if (!label.empty() && rest.find(label) == std::string::npos) continue;
        total += std::stod(line.substr(line.rfind(' ') + 1));
    }
    return total;
}

// A number from the environment, for running the soak larger by hand:
//   COLDBREW_SOAK_REQUESTS=10000 COLDBREW_SOAK_PERCENT=1 build/tests/integration_tests 'counters: by-kind*'
int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

}  // namespace

TEST_CASE("counters: by-kind, by-rule and by-action totals equal the injected outcomes",
          "[integration]") {
    temp_dir dir;
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
)");
    // time_scale 0.01: a phantom's 2 s integration timeout answers after 20 ms. Exits are
    // killed 2 ms (modeled 200 ms) after delivery while the handler sleeps 0 or 10 ms, so some
    // handlers answer before their kill (a missed fault) and others do not.
    const std::string percent = std::to_string(env_int("COLDBREW_SOAK_PERCENT", 3)) + "%";
    dir.write("coldbrew.yaml", "time_scale: 0.01\nmax_environments: 8\ngateway:\n"
                               "  integration_timeout_ms: 2000\nfaults:\n  rules:\n"
                               "    - name: lose\n      probability: " + percent + "\n"
                               "      fault: { kind: phantom, after_share: 0.5, client_sees: timeout }\n"
                               "    - name: crash\n      probability: " + percent + "\n"
                               "      fault: { kind: function_error, mode: exit, after: 200ms }\n");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                         "--admin-port", "0", "--seed", "5"});
    const int port = cb.wait_for_port();
    const int invoke = cb.wait_for_invoke_port();
    const int admin = cb.wait_for_admin_port();

    const int per_thread = env_int("COLDBREW_SOAK_REQUESTS", 600) / 4;
    std::atomic<int> answered{0};
    auto worker = [&](int t) {
        for (int i = 0; i < per_thread; ++i) {
            const json body{{"sleep_ms", (i % 2) * 10}};
            auto r = t % 2 ? http_attempt(invoke, "POST", "/2015-03-31/functions/pay-fn/invocations",
                                          body.dump())
                           : http_attempt(port, "POST", "/pay", body.dump());
            if (r.end == http_attempt_result::ending::answered) ++answered;
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    const int total_requests = 4 * per_thread;

    auto counters = json::parse(http_request(admin, "GET", "/counters").body);
    INFO(counters.dump(2));
    if (std::getenv("COLDBREW_SOAK_PRINT")) std::printf("%s\n", counters.dump(2).c_str());
    const auto& faults = counters["faults"];
    const auto& req = counters["requests"];
    const auto injected = req["gateway"]["injected_fault"].get<std::uint64_t>() +
                          req["invoke"]["injected_fault"].get<std::uint64_t>();
    std::uint64_t all = 0;
    for (const auto& front : {"gateway", "invoke"})
        for (const auto& [_, n] : req[front].items()) all += n.get<std::uint64_t>();
    CHECK(all == static_cast<std::uint64_t>(total_requests));
    CHECK(injected > 10);
    CHECK(sum(faults["by_kind"]) == injected);
    CHECK(sum(faults["by_rule"]) == injected);
    CHECK(sum(faults["by_action"]) == injected);
    CHECK(faults["active"] == 0);
    CHECK(req["gateway"]["emulator_error"] == 0);
    CHECK(req["invoke"]["emulator_error"] == 0);

    const auto metrics = http_request(admin, "GET", "/metrics").body;
    CHECK(metric_total(metrics, "coldbrew_faults_injected_total") == static_cast<double>(injected));
    CHECK(metric_total(metrics, "coldbrew_fault_rule_injected_total") == static_cast<double>(injected));
    CHECK(metric_total(metrics, "coldbrew_request_outcomes_total", "outcome=\"injected_fault\"") ==
          static_cast<double>(injected));
    CHECK(metric_total(metrics, "coldbrew_requests_total") == total_requests);
    CHECK(metric_total(metrics, "coldbrew_faults_missed_total") ==
          static_cast<double>(faults["missed"].get<std::uint64_t>()));

    cb.signal(SIGINT);
    REQUIRE(cb.wait_exit(std::chrono::seconds(20)) == 0);
    const auto out = cb.stdout_text();
    INFO(out);
    if (std::getenv("COLDBREW_SOAK_PRINT"))
        std::printf("%s\n", out.substr(out.find("coldbrew: run summary")).c_str());
    // The summary's faults line adds up to the outcomes' injected faults.
    std::smatch m;
    const std::string faults_line = [&] {
        const auto at = out.find("  faults injected ....... ");
        REQUIRE(at != std::string::npos);
        return out.substr(at, out.find('\n', at) - at);
    }();
    std::uint64_t in_summary = 0;
    const std::regex count(R"(([a-z_]+): (\d+))");
    for (auto it = std::sregex_iterator(faults_line.begin(), faults_line.end(), count);
         it != std::sregex_iterator(); ++it)
        if ((*it)[1] != "missed") in_summary += std::stoull((*it)[2]);
    CHECK(in_summary == injected);
    const std::regex outcomes(R"(all fronts[\s\S]*?outcomes \.+ \d+ served, (\d+) injected fault)");
    REQUIRE(std::regex_search(out, m, outcomes));
    CHECK(std::stoull(m[1]) == injected);
}

TEST_CASE("counters: both reset endpoints reset everything they show", "[integration]") {
    temp_dir dir;
    write_fake_app(dir, "", R"(  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Rest:
          Type: Api
          Properties:
            Path: /hello
            Method: get
)");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                         "--admin-port", "0", "--seed", "5"});
    const int port = cb.wait_for_port();
    const int admin = cb.wait_for_admin_port();
    for (const char* reset : {"/counters/reset", "/reset"}) {
        INFO(reset);
        for (int i = 0; i < 3; ++i) REQUIRE(http_request(port, "GET", "/hello").status == 200);
        auto before = json::parse(http_request(admin, "GET", "/counters").body);
        CHECK(before["functions"]["Hello"]["invocations"] == 3);
        REQUIRE(http_request(admin, "POST", reset).status == 200);
        auto after = json::parse(http_request(admin, "GET", "/counters").body);
        INFO(after.dump(2));
        CHECK(after["functions"]["Hello"]["invocations"] == 0);
        CHECK(after["functions"]["Hello"]["cold_starts"] == 0);
        CHECK(after["requests"]["gateway"]["served"] == 0);
        // Gauges say what is there now: the warm environment stays.
        CHECK(after["functions"]["Hello"]["environments"] == 1);
        const auto metrics = http_request(admin, "GET", "/metrics").body;
        CHECK(metric_total(metrics, "coldbrew_invocations_total") == 0);
        CHECK(metric_total(metrics, "coldbrew_init_duration_seconds_count") == 0);
        CHECK(metric_total(metrics, "coldbrew_requests_total") == 0);
    }
    REQUIRE(http_request(port, "GET", "/hello").status == 200);
    cb.signal(SIGINT);
    REQUIRE(cb.wait_exit(std::chrono::seconds(20)) == 0);
    const auto out = cb.stdout_text();
    INFO(out);
    // The summary counts from the last reset and says so; a warm request is no cold start.
    CHECK(out.find("since the counters were reset") != std::string::npos);
    CHECK(out.find("    requests ............ 1\n") != std::string::npos);
    CHECK(out.find("    cold starts ......... 0") != std::string::npos);
    CHECK(out.find("  Init Duration") == std::string::npos);
    CHECK(out.find("coldbrew: Hello: 1 invocations, 0 cold starts") != std::string::npos);
}
