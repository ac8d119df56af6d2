#pragma once
// An Amazon States Language document, parsed and checked once before anything starts.
//
// Source: the Amazon States Language specification (states-language.net/spec.html) and the
// Step Functions developer guide (awsdocs/aws-step-functions-developer-guide): state types and
// their fields, the Paths and Reference Paths rules, Retry/Catch, Map and Parallel. Every
// check the spec calls an error ("MUST") is made here, so a bad definition stops the start
// with the state and field it is about, as CreateStateMachine would refuse it.
//
// Only JSONPath states run: a definition or state with `QueryLanguage: JSONata` is refused
// here (definition_error naming the state), as are Distributed Map states that read their
// items from S3 (`ItemReader`) and Activity tasks.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/retry/backoff.hpp"

namespace coldbrew::states {

using json = nlohmann::json;

// A definition the interpreter cannot run. `path` is the JSON path of the offending field
// inside the definition ("States.Charge.Retry[0].ErrorEquals", "StartAt").
class definition_error : public std::runtime_error {
public:
    definition_error(std::string path, const std::string& message)
        : std::runtime_error(path.empty() ? message : path + ": " + message),
          path_(std::move(path)) {}
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
};

enum class state_type { pass, task, choice, wait, succeed, fail, parallel, map };
std::string_view to_string(state_type t);  // "Pass", "Task", … as ASL writes them

// ---- Task resources ---------------------------------------------------------------------------

// How a Task's Resource is run (the "service integration pattern").
enum class integration_pattern { request_response, run_job /* .sync */, wait_for_task_token };

struct task_resource {
    enum class kind {
        lambda_invoke,  // arn:aws:states:::lambda:invoke[.waitForTaskToken]: Parameters
                        // FunctionName names the function; the result is the Invoke answer
                        // ({ExecutedVersion, Payload, SdkHttpMetadata, StatusCode, …})
        lambda_arn,     // arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]:
                        // the function's own result is the state's result
        service,        // another arn:aws:states:::<service>:<action>[.sync|.waitForTaskToken]
                        // or arn:aws:states:::aws-sdk:<service>:<action>
        activity,       // arn:aws:states:<region>:<account>:activity:<name>
        unknown,        // anything else (a ${placeholder} left unresolved, a typo)
    };
    kind what = kind::unknown;
    integration_pattern pattern = integration_pattern::request_response;
    std::string service;   // "lambda", "dynamodb", "sqs", "aws-sdk:s3", …
    std::string action;    // "invoke", "putItem", "sendMessage", "getObject", …
    std::string function;  // lambda_arn: the function name (or logical id) in the ARN
    std::string qualifier; // lambda_arn: ":<alias or version>" part without the colon
};

// Classifies a Resource string. Never throws; `unknown` when it fits no form.
task_resource classify_resource(std::string_view resource);

// ---- Choice rules -------------------------------------------------------------------------------

enum class comparison {
    // String / Numeric / Boolean / Timestamp comparisons, each also in its …Path form
    string_equals, string_less_than, string_greater_than, string_less_than_equals,
    string_greater_than_equals, string_matches,
    numeric_equals, numeric_less_than, numeric_greater_than, numeric_less_than_equals,
    numeric_greater_than_equals,
    boolean_equals,
    timestamp_equals, timestamp_less_than, timestamp_greater_than, timestamp_less_than_equals,
    timestamp_greater_than_equals,
    // type tests (operand: true or false)
    is_null, is_present, is_numeric, is_string, is_boolean, is_timestamp,
};

struct choice_rule {
    // A Boolean expression: exactly one of `all` (And), `any` (Or), `negate` (Not, one child)
    // or a comparison (variable + op + operand).
    enum class shape { comparison, and_, or_, not_ };
    shape form = shape::comparison;
    std::vector<choice_rule> children;  // And / Or: ≥ 1; Not: exactly 1
    std::string variable;               // a Path ("$.x", "$$.Execution.Input.y")
    comparison op = comparison::string_equals;
    json operand;                       // the literal (for …Path forms: the path string)
    bool operand_is_path = false;       // the …Path form: operand is a Path to compare with
    std::string next;                   // top-level rules only: the state to go to
};

// ---- Retry / Catch --------------------------------------------------------------------------

// A Retry entry: the retry model's own type, so the live interpreter and `coldbrew sim`
// compute delays with the same function (models::sfn_retry_delay_ms).
using retrier = models::sfn_retrier;

struct catcher {
    std::vector<std::string> error_equals;
    std::string next;
    std::optional<std::string> result_path = std::string("$");  // nullopt: "ResultPath": null
};

// ---- States ---------------------------------------------------------------------------------

struct machine;

struct state {
    std::string name;
    state_type type = state_type::pass;
    std::string comment;
    // Transition: `next` or `end` (Choice, Succeed, Fail have neither).
    std::string next;
    bool end = false;

    // Input and output processing (Pass, Task, Parallel, Map; InputPath/OutputPath also
    // Choice, Wait, Succeed). nullopt stands for an explicit JSON null (discard: {}).
    std::optional<std::string> input_path = std::string("$");
    std::optional<std::string> output_path = std::string("$");
    std::optional<std::string> result_path = std::string("$");
    std::optional<json> parameters;       // Parameters (Map: also ItemSelector)
    std::optional<json> result_selector;  // ResultSelector
    std::optional<json> result;           // Pass: Result

    // Task
    std::string resource;                // as written (after substitutions)
    task_resource target;                // classify_resource(resource)
    std::optional<double> timeout_s;     // TimeoutSeconds (default 60 for tasks; AWS: 99999999)
    std::optional<std::string> timeout_path;     // TimeoutSecondsPath
    std::optional<double> heartbeat_s;           // HeartbeatSeconds (< timeout)
    std::optional<std::string> heartbeat_path;   // HeartbeatSecondsPath
    std::optional<json> credentials;             // Credentials (kept, not acted on)

    // Task, Parallel, Map
    std::vector<retrier> retry;
    std::vector<catcher> catches;

    // Choice
    std::vector<choice_rule> choices;
    std::string default_next;  // Default; "" when none

    // Wait: exactly one of
    std::optional<double> seconds;
    std::optional<std::string> timestamp;  // RFC 3339
    std::optional<std::string> seconds_path, timestamp_path;

    // Fail: each may be absent
    std::optional<std::string> error, cause, error_path, cause_path;

    // Parallel
    std::vector<std::shared_ptr<const machine>> branches;

    // Map (inline; DISTRIBUTED without ItemReader runs inline too)
    std::shared_ptr<const machine> item_processor;  // ItemProcessor or Iterator
    std::string items_path = "$";                   // ItemsPath
    std::optional<json> item_selector;              // ItemSelector (or legacy Parameters)
    int max_concurrency = 0;                        // 0 = no limit (as AWS: up to 40 at once)
    std::optional<std::string> max_concurrency_path;
    std::optional<double> tolerated_failure_percentage;  // 0–100
    std::optional<std::string> tolerated_failure_percentage_path;
    std::optional<std::int64_t> tolerated_failure_count;
    std::optional<std::string> tolerated_failure_count_path;
};

// A state machine, or a Parallel branch, or a Map's item processor.
struct machine {
    std::string start_at;
    std::map<std::string, state, std::less<>> states;
    std::vector<std::string> order;  // state names as written
    std::optional<double> timeout_s; // TimeoutSeconds of the whole machine
    std::string comment;

    const state* find(std::string_view name) const;
};

// Parses and checks `doc` (an ASL document: the value of Definition, or DefinitionString
// parsed). Throws definition_error with the path of the first problem: missing StartAt or
// States, a Next naming no state, a state no one can leave (no Next/End), unknown fields,
// fields the state type does not have, a malformed Path, a Retry against the models' rules
// (models::validate), States.ALL not last, JSONata, an ItemReader.
std::shared_ptr<const machine> parse_definition(const json& doc);

// Every Task state of `m`, its branches and item processors, depth first, with its path for
// messages ("Charge", "Fanout/branch 0/Check", "Each/Resize").
struct task_ref {
    std::string path;
    const state* task = nullptr;
};
std::vector<task_ref> task_states(const machine& m);

}  // namespace coldbrew::states
