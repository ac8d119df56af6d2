#pragma once
// The Step Functions service of a stack: its state machines (parsed once) and every execution
// started on them, with the rules retry strategies depend on, as the Step Functions API
// states them (API Reference: StartExecution, StartSyncExecution, DescribeExecution,
// GetExecutionHistory, StopExecution, ListExecutions, SendTaskSuccess/Failure/Heartbeat):
//  - Standard executions are exactly-once per name: StartExecution with the name of a
//    running execution and the same input returns that execution (no new one starts); with
//    another input, or once that execution has ended, it fails ExecutionAlreadyExists. (AWS
//    keeps names for 90 days; here, for the run.) A name is 1–80 characters, none of them
//    whitespace, < > { } [ ] ? * " # % \ ^ | ~ ` $ & , ; : / or a control character (API
//    Reference, StartExecution "name"; only letters, digits, - and _ is what CloudWatch
//    Logs needs, not a rule of the API).
//  - Express executions started asynchronously (StartExecution) are at-least-once: the name
//    is not checked for duplicates and each call starts one. StartSyncExecution is for
//    Express machines only (a Standard one: StateMachineTypeNotSupported) and ends the
//    execution after 5 minutes (modeled) with status TIMED_OUT.
//  - Express executions' history is not kept by AWS (it goes to CloudWatch Logs):
//    DescribeExecution and GetExecutionHistory answer ExecutionDoesNotExist for them
//    (AWS: "Express state machine executions are not supported"); coldbrew keeps it for its
//    own traces and the admin API.
// Each operation is a plain function of its request JSON; errors are api_error values with
// AWS's error names, which the HTTP front (emulator/front/sfn_front.hpp) words as AWS JSON 1.0
// errors (400 {"__type": "<name>", "message": …}).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/states/definition.hpp"
#include "emulator/states/execution.hpp"

namespace coldbrew::states {

// An error answer of the Step Functions API: `type` as AWS names it ("ExecutionAlreadyExists",
// "StateMachineDoesNotExist", "InvalidArn", "InvalidName", "InvalidExecutionInput",
// "ExecutionDoesNotExist", "TaskDoesNotExist", "InvalidToken", "TaskTimedOut",
// "StateMachineTypeNotSupported", "ValidationException", "UnknownOperationException"…).
struct api_error {
    std::string type;
    std::string message;
    int status = 400;
};

// ARNs as AWS forms them: arn:aws:states:<region>:<account>:stateMachine:<name>,
// …:execution:<machine name>:<execution name> (Standard) and
// …:express:<machine name>:<execution name>:<uuid> (Express).
std::string state_machine_arn(const config::settings& s, std::string_view machine_name);

struct service_deps {
    const coldbrew::clock* clock = nullptr;
    sched::scheduler* scheduler = nullptr;
    const models::random_source* rng = nullptr;  // execution names and ids
    task_runner* tasks = nullptr;
    // An execution started / ended (START and END log lines, counters, traces). May be empty.
    std::function<void(const execution&)> on_start;
    std::function<void(const execution&)> on_end;
};

// Counters per state machine (GET /metrics, the run summary).
struct machine_stats {
    std::uint64_t started = 0, succeeded = 0, failed = 0, timed_out = 0, aborted = 0;
    std::uint64_t duplicate_starts = 0;  // StartExecution answered with an existing execution
    std::uint64_t retries = 0;           // retries made by Retry fields
    std::uint64_t caught = 0;            // errors handled by a Catch
    std::uint64_t state_transitions = 0;
};

class service {
public:
    // Parses every state machine of `stack` (parse_definition); throws config::config_error
    // at the machine's definition with the definition_error's path as key path. `stack` must
    // outlive the service.
    service(const config::stack& stack, service_deps deps);
    ~service();
    service(const service&) = delete;
    service& operator=(const service&) = delete;

    struct start_request {
        std::string state_machine_arn;  // or the machine's logical id / deployed name
        std::optional<std::string> name;  // drawn (a UUID) when absent
        std::string input = "{}";       // JSON text
        std::string trace_header;       // X-Amzn-Trace-Id, when called with one
    };
    struct started {
        std::string execution_arn;
        double start_ms = 0;
        bool existing = false;  // a Standard name already used with the same input
    };
    // StartExecution. Async: the execution runs on the loop after this returns.
    std::variant<started, api_error> start_execution(const start_request& req);
    // StartSyncExecution: `done` gets the DescribeExecution-like answer of the ended
    // execution ({executionArn, stateMachineArn, name, startDate, stopDate, status, input,
    // output | error, cause, billingDetails}) or an api_error, once, on the loop.
    void start_sync_execution(const start_request& req,
                              std::function<void(std::variant<json, api_error>)> done);

    // The other operations, each taking the request's JSON body and answering its JSON.
    std::variant<json, api_error> describe_execution(const json& req) const;
    std::variant<json, api_error> get_execution_history(const json& req) const;
    std::variant<json, api_error> stop_execution(const json& req);
    std::variant<json, api_error> list_executions(const json& req) const;
    std::variant<json, api_error> list_state_machines(const json& req) const;
    std::variant<json, api_error> describe_state_machine(const json& req) const;
    std::variant<json, api_error> send_task_success(const json& req);
    std::variant<json, api_error> send_task_failure(const json& req);
    std::variant<json, api_error> send_task_heartbeat(const json& req);

    // The parsed machine of a state machine of the stack (by logical id); null when unknown.
    std::shared_ptr<const machine> find(std::string_view name) const;
    const execution* find_execution(std::string_view arn) const;

    // Counters by state machine logical id, in template order.
    std::vector<std::pair<std::string, machine_stats>> stats() const;
    void reset_counters();
    // Executions running now.
    std::size_t running() const noexcept;
    // Aborts every running execution (shutdown): their tasks are cancelled.
    void stop_all();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace coldbrew::states
