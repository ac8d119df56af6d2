#pragma once
// The live task runner of a stack's state machines (states::task_runner): each Task attempt
// that invokes one of the stack's functions is a request of the shared request path
// (front::executor, architecture principle 8) on the "states" fault front, so fault rules
// naming the state machine and the state decide it, its outcome is counted
// (executor::outcomes(front::states)) and recorded like the gateway's and the Invoke API's
// requests, and it is traced as the function's invocation. Its "client" is the Task: the
// protocol here words each answer as what the Task sees (states::task_outcome).
//
// Which function (resolve_task_function):
//  - arn:aws:states:::lambda:invoke[.waitForTaskToken]: Parameters.FunctionName — a name, a
//    logical id, a full or partial ARN ("arn:aws:lambda:<region>:<account>:function:<name>",
//    "<account>:function:<name>"), each optionally with ":<qualifier>" — first as the loader
//    resolved it (config::state_machine::function_arns), then by logical id or deployed
//    FunctionName. Only no qualifier or "$LATEST" is served (coldbrew runs one version).
//  - arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>] (a plain ARN): the same.
//  An unknown function fails the attempt with Lambda.ResourceNotFoundException, cause
//  "Function not found: <arn> (Service: AWSLambda; Status Code: 404; Error Code:
//  ResourceNotFoundException; Request ID: <id>; Proxy: null)" (the form Step Functions gives
//  an AWS SDK error's cause; developer guide, "Handle Lambda service exceptions" names the
//  Lambda.<exception> errors).
//
// What the Task sees (task_outcome), per outcome of its invocation:
//  - success, lambda:invoke: the Invoke answer {"ExecutedVersion": "$LATEST", "Payload": <the
//    result, parsed JSON>, "SdkHttpMetadata": {"AllHttpHeaders", "HttpHeaders",
//    "HttpStatusCode": 200}, "SdkResponseMetadata": {"RequestId"}, "StatusCode": 200}
//    (developer guide, "Invoke an AWS Lambda function with Step Functions", its output
//    example); a plain ARN: the result itself. Payload "InvocationType": "Event" queues the
//    invocation (as the Invoke API's Event type does) and answers StatusCode 202, Payload "".
//  - a function error: error = its errorType, cause = the error JSON text the function
//    answered ({"errorMessage", "errorType", "stackTrace"}), as Step Functions reports
//    Lambda's function errors; without an errorType, Lambda.Unknown (developer guide, "Handle
//    Lambda service exceptions": unhandled errors are Lambda.Unknown). A function that runs
//    past its timeout answers errorType Sandbox.Timedout (Lambda's timeout error; shared spec
//    §1.7), which is therefore the error the Task sees. (The guide's note lists timeouts
//    under Lambda.Unknown, from when the timeout's payload carried no errorType.)
//  - a throttle (the pool's, or an injected one): Lambda.TooManyRequestsException (same
//    guide page); an injected service error: Lambda.ServiceException, whatever its status.
//  - a lost answer (an injected phantom, before or after the invocation): nothing comes back,
//    and the Task ends as States.Timeout once its wait is over: the state's TimeoutSeconds
//    when it has one (the interpreter's own timer), else the function's timeout plus the
//    10 s Init limit, after which Lambda's own synchronous invoke would have answered. This
//    is exactly what `coldbrew sim` does for a phantom on a Step Functions call to a function
//    (models/sim/engine.cpp: the hop's timeout is the step's timeout, else the function's
//    timeout + 10 s, and a phantom there is States.Timeout to the retriers), so a seed gives
//    the same retries live and simulated. A phantom whose client outcome is "hang" is held
//    until the state's TimeoutSeconds (or a stop); "reset" is Lambda.SdkClientException (the
//    SDK's name for a broken connection; same guide page).
//  - coldbrew stopping: Lambda.ServiceException.
// Other Task resources (another service's integration, aws-sdk:…, an activity) fail with
// States.TaskFailed and a cause naming the resource as not emulated; they are not requests
// of the executor (nothing is invoked), so faults do not apply to them.
//
// Every outcome reaches the interpreter on the loop in a callback of its own (a 0 ms timer),
// never from inside run(), as task_runner requires.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/front/executor.hpp"
#include "emulator/front/gateway_front.hpp"
#include "emulator/states/execution.hpp"

namespace coldbrew::front {

// The function a Task names: `function` is the function::name ("" when unknown);
// `qualifier` the ":<qualifier>" part without the colon; `arn` the function's ARN as Lambda
// would word it in an error (with the qualifier when one was given).
struct task_function {
    const config::function* function = nullptr;
    std::string qualifier;
    std::string arn;
};
// `name` as a lambda:invoke FunctionName or a plain ARN's text, for the state machine `m`.
// A qualifier other than "$LATEST" leaves `function` null (not served).
task_function resolve_task_function(const config::stack& stack, const config::state_machine& m,
                                    std::string_view name);

// The machine an execution ARN belongs to (…:execution:<name>:… or …:express:<name>:…), by
// deployed name; null when none.
const config::state_machine* machine_of_execution(const config::stack& stack,
                                                  std::string_view execution_arn);

// What a function's answer is to the Task (see above), for `lambda_invoke` (the Invoke
// answer) or a plain ARN (the result).
states::task_outcome task_outcome_of(const functions::invocation_result& r, bool lambda_invoke);

// The X-Amzn-Trace-Id an attempt's invocation carries, given by whoever traces executions
// (the app): "" when not traced.
using task_trace_header = std::function<std::string(const states::task_call&)>;
// Queues an asynchronous invocation (InvocationType Event): function::name, request id,
// payload.
using task_enqueue = std::function<void(const std::string& function, const std::string& id,
                                        std::string payload)>;

struct states_task_deps {
    const config::stack* stack = nullptr;
    executor* ex = nullptr;
    const coldbrew::clock* clock = nullptr;
    const models::random_source* rng = nullptr;
    sched::scheduler* scheduler = nullptr;  // the 0 ms timers that deliver outcomes
    function_lookup find;                   // by function::name
    task_enqueue enqueue;                   // may be empty: Event invocations then fail
    task_trace_header trace_header;         // may be empty
};

class states_task_runner final : public states::task_runner {
public:
    explicit states_task_runner(states_task_deps deps);
    ~states_task_runner() override;
    states_task_runner(const states_task_runner&) = delete;
    states_task_runner& operator=(const states_task_runner&) = delete;

    handle run(const states::task_call& call,
               std::function<void(states::task_outcome)> done) override;

    // Task attempts begun and not yet answered.
    std::size_t in_flight() const noexcept;

private:
    struct shared;
    void deliver_later(std::function<void(states::task_outcome)> done, states::task_outcome o);

    states_task_deps deps_;
    std::shared_ptr<shared> shared_;
    std::uint64_t next_index_ = 0;
};

}  // namespace coldbrew::front
