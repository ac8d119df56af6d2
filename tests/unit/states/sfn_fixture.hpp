#pragma once
// A stack of small state machines on a manual scheduler, with a scripted task runner, for the
// Step Functions service and front tests.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/states/service.hpp"
#include "models/random/random_source.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

namespace coldbrew::testing {

// Keeps every Task attempt; the test ends them.
class scripted_tasks final : public states::task_runner {
public:
    struct pending {
        states::task_call call;
        std::function<void(states::task_outcome)> done;
        bool cancelled = false;
    };
    handle run(const states::task_call& call,
               std::function<void(states::task_outcome)> done) override {
        calls.push_back(std::make_shared<pending>(pending{call, std::move(done)}));
        auto p = calls.back();
        return handle{[p] { p->cancelled = true; }};
    }
    std::vector<std::shared_ptr<pending>> calls;
};

inline config::state_machine sfn_machine(std::string name, const char* definition,
                                         bool express = false) {
    config::state_machine m;
    m.name = name;
    m.state_machine_name = name;
    m.type = express ? config::state_machine::kind::express : config::state_machine::kind::standard;
    m.definition = nlohmann::json::parse(definition);
    m.where = {"template.yaml", 10, 5};
    m.definition_key = "Resources." + name + ".Properties.Definition";
    return m;
}

inline constexpr const char* pass_definition =
    R"({"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"ok":true},"End":true}}})";
inline constexpr const char* fail_definition =
    R"({"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"bad"}}})";
inline constexpr const char* wait_definition =
    R"({"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":600,"Next":"D"},"D":{"Type":"Succeed"}}})";
inline constexpr const char* token_definition =
    R"({"StartAt":"T","States":{"T":{"Type":"Task",
        "Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters":{"FunctionName":"Fn","Payload":{"token.$":"$$.Task.Token"}},"End":true}}})";
inline constexpr const char* retry_definition =
    R"({"StartAt":"T","States":{
        "T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:Fn",
             "Retry":[{"ErrorEquals":["Oops"],"MaxAttempts":1,"IntervalSeconds":1}],
             "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},
        "Caught":{"Type":"Pass","End":true}}})";

struct sfn_world {
    manual_clock clock;
    manual_scheduler sched{1.0, &clock};
    models::random_source rng{42};
    scripted_tasks tasks;
    config::stack stack;
    std::vector<std::string> ended;  // execution ARNs, as on_end saw them
    std::unique_ptr<states::service> svc;

    sfn_world() {
        stack.state_machines.push_back(sfn_machine("Pass", pass_definition));
        stack.state_machines.push_back(sfn_machine("Fail", fail_definition));
        stack.state_machines.push_back(sfn_machine("Waiter", wait_definition));
        stack.state_machines.push_back(sfn_machine("Token", token_definition));
        stack.state_machines.push_back(sfn_machine("Retry", retry_definition));
        stack.state_machines.push_back(sfn_machine("FastX", pass_definition, true));
        stack.state_machines.push_back(sfn_machine("FailX", fail_definition, true));
        stack.state_machines.push_back(sfn_machine("SlowX", wait_definition, true));
        states::service_deps d;
        d.clock = &clock;
        d.scheduler = &sched;
        d.rng = &rng;
        d.tasks = &tasks;
        d.on_end = [this](const states::execution& e) { ended.push_back(e.info().execution_arn); };
        svc = std::make_unique<states::service>(stack, std::move(d));
    }
    static std::string arn(const std::string& machine) {
        return "arn:aws:states:us-east-1:123456789012:stateMachine:" + machine;
    }
};

}  // namespace coldbrew::testing
