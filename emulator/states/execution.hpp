#pragma once
// One state machine execution: the interpreter that walks a parsed definition
// (definition.hpp), applies each state's input and output processing (data.hpp), runs Tasks
// through an injected task_runner, waits on the injected scheduler (modeled time), and
// retries and catches errors as the Amazon States Language says.
//
// Source: the Amazon States Language specification (states-language.net/spec.html) and the
// developer guide (concepts-error-handling.md, state pages, "Execution history events"):
//  - Retry: the first retrier whose ErrorEquals matches handles the error; its attempt count
//    lasts for the state's whole execution; when it is exhausted (or none matches) the first
//    matching Catch moves on with the error output {"Error","Cause"} placed by its ResultPath;
//    otherwise the state, and the execution (or the enclosing branch), fails. Retry waits are
//    models::sfn_retry_delay_ms (the same function `coldbrew sim` uses), with FULL jitter's
//    uniform draw from (stream "sfn-retry", key "<execution arn>/<state path>/<retrier>",
//    index = retry number), so a seed gives the same waits live and simulated.
//  - States.Timeout when a Task runs past TimeoutSeconds (default 60 s… as AWS, 99999999 when
//    unset for Lambda; see execution.cpp) or sends no heartbeat within HeartbeatSeconds;
//    States.Timeout for the execution past the machine's TimeoutSeconds.
//  - Parallel: every branch gets the state's effective input; the result is the array of the
//    branches' outputs in order; the first branch to fail stops the others and fails the state.
//  - Map: one iteration per item of ItemsPath (ItemSelector with $$.Map.Item.Index/Value), at
//    most MaxConcurrency at once (0 = no limit), the result the array of outputs in order;
//    failures up to ToleratedFailureCount/Percentage are tolerated (the failed iterations'
//    outputs are their error objects), beyond them the state fails with
//    States.ExceedToleratedFailureThreshold.
// Every wait (Wait states, retry intervals, timeouts, heartbeats) is modeled time on the
// scheduler; the execution's wall clock ($$.State.EnteredTime, Wait Timestamp, event
// timestamps) is its start's wall time plus the modeled time elapsed since.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/clock/clock.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "emulator/states/definition.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::states {

// What a Task asks the outside to do, once per attempt.
struct task_call {
    std::string state_name; // the state's name
    std::string path;       // its path in the machine ("Fanout/branch 0/Check"), for facts
    const state* task = nullptr;
    json parameters;        // the effective parameters (after InputPath and Parameters)
    int attempt = 0;        // 0 the first, 1.. the retries
    std::string task_token; // .waitForTaskToken: the token also in $$.Task.Token; else ""
    std::optional<double> timeout_ms;    // modeled; the runner may use it for the invocation
    std::string execution_arn;
};

// How an attempt ended. `ok`: `output` is the task's result (for lambda:invoke, the Invoke
// answer; for a plain function ARN, the function's result). Else `error` is the error name
// retriers match (the function's errorType, "Lambda.TooManyRequestsException",
// "Lambda.ServiceException", "States.TaskFailed", …) and `cause` its text.
struct task_outcome {
    bool ok = true;
    json output;
    std::string error;
    std::string cause;
};

// Runs Task attempts (the live emulator: Lambda invocations through the request executor;
// tests: a script). done() is called once, on the loop, never from inside run(); after
// cancel() (timeout, stop) it may still be called and is ignored.
class task_runner {
public:
    virtual ~task_runner() = default;
    struct handle {
        std::function<void()> cancel;  // may be empty
    };
    virtual handle run(const task_call& call, std::function<void(task_outcome)> done) = 0;
};

enum class execution_status { running, succeeded, failed, timed_out, aborted };
std::string_view to_string(execution_status s);  // "RUNNING", "SUCCEEDED", "FAILED", …

// One history event, as GetExecutionHistory returns it: {"id", "previousEventId",
// "timestamp", "type", "<type>EventDetails": {…}} with AWS's event type names
// (ExecutionStarted, PassStateEntered, PassStateExited, TaskStateEntered, TaskScheduled,
// TaskStarted, TaskSucceeded, TaskFailed, TaskTimedOut, LambdaFunctionScheduled, …,
// ChoiceStateEntered, WaitStateEntered, ParallelStateStarted, MapIterationStarted,
// ExecutionSucceeded, ExecutionFailed, ExecutionTimedOut, ExecutionAborted).
struct history_event {
    std::int64_t id = 0;
    std::int64_t previous_id = 0;
    double timestamp_ms = 0;  // epoch ms (the execution's modeled wall clock)
    std::string type;
    json details;             // the …EventDetails object
    json to_json() const;     // timestamp as epoch seconds (a number), as the AWS JSON protocol
};

struct execution_info {
    std::string execution_arn;
    std::string name;
    std::string state_machine_arn;
    std::string state_machine_name;
    std::string role_arn;
    std::string redrive_count = "0";
};

struct execution_deps {
    const coldbrew::clock* clock = nullptr;        // wall time at start
    sched::scheduler* scheduler = nullptr;         // every wait
    const models::random_source* rng = nullptr;    // jitter, task tokens, States.UUID
    task_runner* tasks = nullptr;
    // Each history event as it happens (may be empty).
    std::function<void(const history_event&)> on_event;
    // The execution ended (once): its status, and output (succeeded) or error and cause.
    std::function<void(execution_status, const json& output, const std::string& error,
                       const std::string& cause)> on_end;
    // A state's attempt was retried (for counters and traces): state path, error, retry n.
    std::function<void(const std::string& path, const std::string& error, int retry)> on_retry;
    // A state's error was handled by a Catch (counters and traces): state path, error.
    std::function<void(const std::string& path, const std::string& error)> on_catch;
};

class execution {
public:
    // `machine` must outlive the execution.
    execution(std::shared_ptr<const machine> m, execution_info info, json input,
              execution_deps deps);
    ~execution();
    execution(const execution&) = delete;
    execution& operator=(const execution&) = delete;

    // Runs from StartAt; everything after the first event happens on the loop.
    void start();
    // StopExecution: aborts (ExecutionAborted with error and cause), cancelling running tasks
    // and timers. No effect once ended.
    void stop(const std::string& error, const std::string& cause);

    // SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat for a token this execution is
    // waiting on: true when it was (the Task ends, or its heartbeat timer restarts).
    bool send_task_success(const std::string& token, const json& output);
    bool send_task_failure(const std::string& token, const std::string& error,
                           const std::string& cause);
    bool send_task_heartbeat(const std::string& token);
    // Whether this execution issued `token` and still waits on it.
    bool waits_on(const std::string& token) const;

    execution_status status() const noexcept;
    const execution_info& info() const noexcept;
    const json& input() const noexcept;
    const std::vector<history_event>& history() const noexcept;
    // Set once ended.
    const std::optional<json>& output() const noexcept;
    const std::string& error() const noexcept;
    const std::string& cause() const noexcept;
    double start_ms() const noexcept;  // epoch ms
    std::optional<double> stop_ms() const noexcept;
    std::uint64_t state_transitions() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace coldbrew::states
