// coldbrew.yaml memory_budget_mb end to end: three small Node.js functions under a budget no
// environment fits in, so each idle environment is evicted once it has stated its memory, and
// every eviction is a decision-log line with reason "memory-budget".

#include <signal.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

TEST_CASE("memory_budget_mb: idle environments past the budget are evicted and logged",
          "[integration]") {
    temp_dir dir;
    std::string resources;
    for (const char* fn : {"BudgetA", "BudgetB", "BudgetC"}) {
        resources += std::string("  ") + fn + R"(:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: node
)";
    }
    write_fake_app(dir, "    Timeout: 10\n    MemorySize: 128\n", resources);
    dir.write("node/index.mjs", "export const handler = async () => ({ ok: true });\n");
    dir.write("coldbrew.yaml", "standby: 0\nmemory_budget_mb: 1\ndecision_log: decisions.jsonl\n"
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
