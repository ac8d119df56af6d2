#pragma once
// Input and output processing of Amazon States Language states, as plain functions: Paths and
// Reference Paths, payload templates (Parameters, ResultSelector, ItemSelector) with their
// intrinsic functions, ResultPath, and Choice rule evaluation.
//
// Source: the Amazon States Language specification (states-language.net/spec.html), sections
// "Paths", "Reference Paths", "Payload Template", "Intrinsic Functions", "Input and Output
// Processing" and "Choice Rules", and the developer guide's "Intrinsic functions" page. The
// order a state applies them in is:
//   InputPath → Parameters → (the state's work) → ResultSelector → ResultPath → OutputPath.
//
// A failure while processing is a runtime error of the execution, named as Step Functions
// names it: States.Runtime (a path matches nothing, a template's value is not what it needs),
// States.IntrinsicFailure (an intrinsic's arguments are wrong), States.ResultPathMatchFailure
// (ResultPath cannot be applied to the input).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "emulator/states/definition.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::states {

// An execution-level error raised by processing: `error` is the ASL error name
// ("States.Runtime"), what() the cause Step Functions would report.
class runtime_failure : public std::runtime_error {
public:
    runtime_failure(std::string error, const std::string& cause)
        : std::runtime_error(cause), error_(std::move(error)) {}
    const std::string& error() const noexcept { return error_; }

private:
    std::string error_;
};

// What a path or template is evaluated against: the effective input and the context object
// `$$` ({"Execution":{…},"StateMachine":{…},"State":{…},"Task":{"Token":…},"Map":{"Item":…}}).
struct data_scope {
    const json& input;
    const json& context;
};

// What intrinsics that draw need: States.UUID draws from (stream "sfn-uuid", key, *counter),
// so the same seed and execution give the same ids. `rng` may be null (States.UUID then fails).
struct intrinsic_env {
    const models::random_source* rng = nullptr;
    std::string key;                // the execution ARN
    std::uint64_t* counter = nullptr;
};

// ---- paths ---------------------------------------------------------------------------------

// True when `path` is a well-formed Path ("$", "$.a.b", "$['a b']", "$.a[0]", "$.a[*].b",
// "$..x", "$.a[?(@.b > 1)]", or the same rooted at "$$"); `reference` requires a Reference
// Path (a single node: no wildcards, filters, slices or descendant steps), as InputPath,
// ResultPath, ItemsPath and the Choice Variable need. Used by parse_definition.
bool is_valid_path(std::string_view path, bool reference);

// The value `path` selects from scope (a path starting "$$" reads scope.context). A path that
// may select several nodes gives them as an array. Throws runtime_failure("States.Runtime")
// naming the path when nothing matches.
json select(std::string_view path, const data_scope& scope);
// Whether `path` selects anything (Choice IsPresent). Never throws for a valid path.
bool present(std::string_view path, const data_scope& scope);

// ResultPath: `result` placed into `input` at the Reference Path (nullopt: the input, result
// discarded; "$": the result alone). Creates missing objects on the way; throws
// runtime_failure("States.ResultPathMatchFailure") when a step on the way is not an object.
json apply_result_path(json input, const std::optional<std::string>& result_path, json result);

// InputPath / OutputPath: nullopt gives {} (the spec's null path), else select().
json apply_path(const std::optional<std::string>& path, const data_scope& scope);

// ---- payload templates ------------------------------------------------------------------------

// A payload template (Parameters, ResultSelector, ItemSelector) evaluated against `scope`:
// a field whose name ends ".$" takes the value of the path or intrinsic it holds (the name
// losing ".$"); other values are copied, nested objects and arrays recursively.
json apply_template(const json& tmpl, const data_scope& scope, intrinsic_env& env);

// One intrinsic function call, e.g. "States.Format('Hello, {}', $.name)". Arguments are
// string literals in single quotes (with \' \{ \} \\ escapes), numbers, true/false/null,
// Paths, and nested calls. Supported: States.Format, States.StringToJson,
// States.JsonToString, States.Array, States.ArrayPartition, States.ArrayContains,
// States.ArrayRange, States.ArrayGetItem, States.ArrayLength, States.ArrayUnique,
// States.Base64Encode, States.Base64Decode, States.Hash (MD5, SHA-1, SHA-256, SHA-384,
// SHA-512), States.JsonMerge (shallow), States.MathRandom, States.MathAdd, States.StringSplit,
// States.UUID. Throws runtime_failure("States.IntrinsicFailure") for wrong arguments and
// definition-time shape errors alike; `is_valid_intrinsic` checks the shape alone.
json evaluate_intrinsic(std::string_view call, const data_scope& scope, intrinsic_env& env);
bool is_valid_intrinsic(std::string_view call);

// ---- Choice --------------------------------------------------------------------------------

// Whether `rule` holds for `scope`. A comparison whose Variable is missing or of another type
// is false (not an error) except that a missing Variable outside IsPresent throws
// runtime_failure("States.Runtime") as Step Functions does ("Invalid path … : The choice
// state's condition path references an invalid value."). Timestamps are RFC 3339.
bool evaluate(const choice_rule& rule, const data_scope& scope);

// The Next of the first matching rule of a Choice state, else its Default; throws
// runtime_failure("States.NoChoiceMatched") when neither.
std::string choose(const state& choice, const data_scope& scope);

// ---- errors ---------------------------------------------------------------------------------

// Whether an error name is matched by an ErrorEquals list: the names exactly, "States.ALL"
// everything except States.Runtime (which no Retry or Catch handles, per the spec),
// "States.TaskFailed" every error of a Task except States.Timeout.
bool error_matches(const std::vector<std::string>& error_equals, std::string_view error);

// RFC 3339 timestamps (Wait Timestamp, Choice Timestamp*): milliseconds since the epoch, or
// nullopt when `text` is not one.
std::optional<double> parse_timestamp_ms(std::string_view text);
// "2026-12-01T10:00:00.000Z"
std::string format_timestamp_ms(double epoch_ms);

}  // namespace coldbrew::states
