// coldbrew.yaml memory_budget_mb end to end: three small Node.js functions under a budget no
// environment fits in, so each idle environment is evicted once it has stated its memory, and
// every eviction is a decision-log line with reason "memory-budget".

#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

// Small Node.js functions `names` (128 MB, no routes) and coldbrew.yaml `yaml`.
void write_node_app(temp_dir& dir, const std::vector<std::string>& names, const std::string& yaml) {
    std::string resources;
    for (const auto& fn : names) {
        resources += "  " + fn + R"(:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: node
)";
    }
    write_fake_app(dir, "    Timeout: 10\n    MemorySize: 128\n", resources);
    dir.write("node/index.mjs", "export const handler = async () => ({ ok: true });\n");
    dir.write("coldbrew.yaml", yaml);
}

}  // namespace

TEST_CASE("memory_budget_mb: idle environments past the budget are evicted and logged",
          "[integration]") {
    temp_dir dir;
    write_node_app(dir, {"BudgetA", "BudgetB", "BudgetC"},
                   "standby: 0\nmemory_budget_mb: 1\ndecision_log: decisions.jsonl\n"
                   "functions:\n"
                   "  BudgetA: {model: {init_duration: fixed(0)}}\n"
                   "  BudgetB: {model: {init_duration: fixed(0)}}\n"
                   "  BudgetC: {model: {init_duration: fixed(0)}}\n");
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "3"});
    proc.wait_for_port();
    const int invoke = proc.wait_for_invoke_port();
    for (const char* fn : {"BudgetA", "BudgetB", "BudgetC"}) {
        auto r = http_request(invoke, "POST", std::string("/2015-03-31/functions/") + fn + "/invocations", "{}");
        INFO(r.body);
        CHECK(r.status == 200);
    }
    proc.signal(SIGINT);
    REQUIRE(proc.wait_exit().has_value());

    std::ifstream in(dir.path() / "decisions.jsonl");
    std::string line;
    std::map<std::string, int> evicted;
    while (std::getline(in, line)) {
        const auto j = json::parse(line);
        if (j.value("event", "") == "discarded" && j.value("reason", "") == "memory-budget")
            ++evicted[j.value("function", "")];
    }
    // Every environment is over a 1 MB budget once it has stated its memory, and is idle by
    // then: each of the three goes, once.
    CHECK(evicted == std::map<std::string, int>{{"BudgetA", 1}, {"BudgetB", 1}, {"BudgetC", 1}});
}

TEST_CASE("memory_budget_mb: standby environments count, and go first", "[integration]") {
    // Default standby (one spare process per function): each is read once its init is done,
    // and under a 1 MB budget each is ended and not started again; requests still succeed.
    temp_dir dir;
    write_node_app(dir, {"SpareA", "SpareB"}, "memory_budget_mb: 1\n");
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "3"});
    proc.wait_for_port();
    const int admin = proc.wait_for_admin_port();
    const int invoke = proc.wait_for_invoke_port();
    auto spares_ended = [&] {
        const auto c = json::parse(http_request(admin, "GET", "/counters").body);
        int n = 0;
        for (const char* fn : {"SpareA", "SpareB"})
            n += c["functions"][fn].value("budget_evictions", 0);
        return n;
    };
    // The banner comes once standby has settled: both spares were read and ended by then.
    CHECK(spares_ended() == 2);
    for (const char* fn : {"SpareA", "SpareB"}) {
        auto r = http_request(invoke, "POST", std::string("/2015-03-31/functions/") + fn + "/invocations", "{}");
        CHECK(r.status == 200);
    }
    // Each served environment was then evicted too, and no spare came back.
    CHECK(spares_ended() == 4);
    proc.signal(SIGINT);
    REQUIRE(proc.wait_exit().has_value());
}
