#pragma once
// Private to emulator/config: the parts of loading a state machine or a schedule that the SAM
// and serverless loaders share. The definition itself is not checked here beyond being a JSON
// object (emulator/states parses it); what is done here is what needs the template: its text
// turned into JSON, DefinitionSubstitutions applied, the Task resources that name this stack's
// functions recorded, and a schedule expression's shape checked.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

namespace coldbrew::config::detail {

// A resolved YAML value as JSON: maps and sequences as objects and arrays; a quoted scalar is
// a string; an unquoted one is null (null, ~, empty), a boolean (true/false, any case), a
// number when it reads as one in JSON, else a string. An `unresolved` node anywhere fails at
// it with `what` and its reason.
nlohmann::json to_json(const ynode& n, const std::string& what);

// A definition written as a string (DefinitionString, a DefinitionUri .json file): parsed as
// JSON; a syntax error fails at `at` with nlohmann's message (it names the byte offset).
nlohmann::json parse_definition_text(const std::string& text, const ynode& at,
                                     const std::string& what);

// A DefinitionUri / definition file: `.json` parsed as JSON, anything else as YAML (SAM reads
// both: `samtranslator/model/stepfunctions/generators.py` loads the file's text as YAML, a
// superset of JSON). A missing file fails at `at`.
nlohmann::json load_definition_file(const std::filesystem::path& file, const ynode& at);

// Fails at `at` unless `definition` is a JSON object.
void expect_definition_object(const nlohmann::json& definition, const ynode& at,
                              const std::string& what);

// Replaces every `${Name}` of `subs` in every string of `j` (keys untouched), as
// DefinitionSubstitutions does (SAM developer guide, AWS::Serverless::StateMachine
// DefinitionSubstitutions; CloudFormation AWS::StepFunctions::StateMachine: "a map (string
// to string) that specifies the mappings for placeholder variables"). Placeholders without a
// value stay as written, as they do in CloudFormation.
void apply_substitutions(nlohmann::json& j, const std::map<std::string, std::string>& subs);

// The function a resource text names, or nullptr: a Lambda function ARN
// (arn:<partition>:lambda:<region>:<account>:function:<name>[:<qualifier>]) or a bare name,
// where <name> is a function's deployed name (function::function_name) or its name.
const function* function_named(const std::string& text, const std::vector<function>& functions);

// Fills m.function_arns from m.definition: every Task `Resource` string, and every
// `Parameters.FunctionName` string of a Task (the `arn:aws:states:::lambda:invoke`
// integration), that names one of `functions`. Walks Parallel branches and Map iterators /
// item processors, since they are plain nested objects.
void collect_function_arns(state_machine& m, const std::vector<function>& functions);

// "rate(<n> <unit>)" (unit minute(s)/hour(s)/day(s), singular for 1), "cron(<6 fields>)" or
// "at(yyyy-mm-ddThh:mm:ss)" (EventBridge Scheduler's one-time form; EventBridge user guide,
// "Schedule types on EventBridge Scheduler"), checked field by field as
// schedules::parse_schedule reads them (emulator/schedules/schedules.hpp). Fails at `at`
// otherwise, with what is wrong.
void check_schedule_expression(const std::string& expression, const ynode& at);

// A ScheduleExpressionTimezone / `timezone`: "" or a zone of the system's tz database
// (schedules::load_time_zone). Fails at `at` for an unknown zone.
void check_schedule_timezone(const std::string& timezone, const ynode& at);

}  // namespace coldbrew::config::detail
