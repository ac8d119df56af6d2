#pragma once
// `coldbrew sim PATH` on an app: the stack `coldbrew up PATH` runs (SAM template.yaml or
// serverless.yml, with its coldbrew.yaml), turned into a what-if scenario with the same
// models the live emulator builds (functions::build_models) and the same fault rules.
//
// What becomes what:
//  - each API (REST or HTTP API) is an api_gateway component; each route is an entry whose
//    flow calls the gateway, then the route's function with the route's integration timeout
//    as the call timeout and step::live filled as the live gateway front fills
//    faults::request_facts (front gateway, route key "METHOD /path" as declared or
//    "$default", the function's logical id and FunctionName, the method, the route's path as
//    the request path);
//  - each function is a lambda component with its live traits (runtime, architecture,
//    memory, measured package size, package type, VPC mode, extensions), reserved and
//    provisioned concurrency, max_environments, timeout, keep-alive and lifetime overrides
//    and cold-start overrides; what its handler does comes from coldbrew.yaml
//    `functions.<name>.sim` (latency, errors, calls); without sim.latency it works for
//    `default_handler_latency` and the notes say so;
//  - a call to a function is an Invoke API call (live front invoke, route "Invoke <logical
//    id>", path /2015-03-31/functions/<FunctionName>/invocations); an async one is an Event
//    invocation, which the live Invoke API never faults (no live facts);
//  - each `dependencies:` item is a generic component (its request latency; its availability
//    with refuse/reset as errors, hang as phantoms);
//  - a state machine a route starts, when it is a chain of Task states invoking functions
//    (Pass and Succeed allowed), is a step_functions component whose body calls the functions
//    with live front states (route "<machine> <state>"), the Task's Retry and TimeoutSeconds;
//    any other shape is listed as not simulated;
//  - the fault rules are `up`'s (faults.rules, faults.sla, --realistic-sla, dependency
//    availability rules) with fault_seed = the run seed. With SLA rules the API Gateway and
//    Lambda components' availability is 1: the SLA comes through the rules, once. Rules the
//    simulator cannot act on (dependency front, header matchers, time windows, bandwidth)
//    are listed as not simulated.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/config/scenario_loader.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/functions/function_model.hpp"
#include "emulator/sim_cli/sim_command.hpp"
#include "models/faults/faults.hpp"
#include "models/sim/fit.hpp"
#include "models/sim/record.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::sim_cli {

// A handler with no `sim.latency` works this long (median 10 ms, p99 50 ms): a small
// handler that calls nothing slow. Printed as a note for every function that uses it.
inline constexpr const char* default_handler_latency = "lognormal(median=10ms, p99=50ms)";
// A dependency without `latency.request` answers in this.
inline constexpr const char* default_dependency_latency = "lognormal(median=2ms, p99=10ms)";

// `--fit FILE`: a run record of the app and what was fitted to it (models/sim/fit.hpp). In a
// fitted run each function the record saw answer takes its fitted latency, error rate and
// calls in place of coldbrew.yaml's `sim:` section; the routes' weights are the recorded
// client requests per route and the arrivals the recorded rate (poisson or even, as fitted);
// the fault rules are those in effect when the record ends (coldbrew.yaml's, then the admin
// API's changes), with the record's seed and --realistic-sla unless the command line gives
// them. A record ties no dependency request to the handler that made it, so a fitted handler
// calls no dependency: its waits on them are in its fitted latency.
struct stack_fit {
    std::string file;
    models::sim::run_record record;
    models::sim::fit_result fit;
};
// Reads and fits `file`. Throws models::sim::record_error for a bad record, and
// std::invalid_argument when it holds no client request or no answered invocation.
std::shared_ptr<const stack_fit> load_fit(const std::string& file);

struct stack_sim_options {
    std::map<std::string, std::string> parameter_overrides;  // SAM --parameter-overrides
    std::optional<std::string> stage;                        // serverless --stage
    bool realistic_sla = false;                              // as `up --realistic-sla`
    std::optional<std::uint64_t> seed;                       // else coldbrew.yaml's, else 1
    std::optional<std::uint64_t> requests;                   // else sim.requests, else 100,000
    double rate_scale = 1;                                   // multiplies every arrival rate
    std::shared_ptr<const stack_fit> fit;                    // --fit
};

struct stack_scenario {
    // Owns the profile scenario.model_profile points into: keep it alive with the scenario.
    std::unique_ptr<functions::stack_models> models;
    models::sim::scenario scenario;
    std::vector<std::string> notes;          // defaults used, approximations, one line each
    std::vector<std::string> not_simulated;  // rules, state machines, routes left out, and why
    // With a fit: what was fitted as coldbrew.yaml's `functions.<name>.sim` and `sim:`
    // sections (a YAML document whose first line names the record), for --fit-out.
    std::string fitted_yaml;
};

// True when `path` is an app `coldbrew up` takes: a directory (holding a template), or a
// file named template.y(a)ml / serverless.y(a)ml, or a YAML file whose top level has
// AWSTemplateFormatVersion, Transform or Resources, or service and provider. A scenario file
// (components, flow) is not an app.
bool is_app_path(const std::filesystem::path& path);

// Builds the scenario from a loaded stack and its models. `rules` are the stack's fault rules
// as `up` builds them. Throws config::config_error (a sim.calls target or a sim.routes key
// that names nothing, at its position).
stack_scenario stack_to_scenario(const config::stack& s, std::unique_ptr<functions::stack_models> models,
                                 std::vector<models::faults::rule> rules, const stack_sim_options& o);

// Loads `path` as `up` does (load_stack with `lo`, build_models, parse_fault_rules,
// availability rules, --realistic-sla) and converts it; the fault rules' warnings (a rule
// naming no route or function) join the notes. Throws config::config_error.
stack_scenario load_stack_scenario(const std::filesystem::path& path, const stack_sim_options& o,
                                   const config::load_options& lo);

// --set on a stack's scenario: "requests", "seed", "arrivals.rate", "client_timeout",
// "components.<name>.memory_mb", "components.<name>.availability",
// "components.<name>.latency", "entries.<route>.weight". Throws std::invalid_argument naming
// the path or the value.
void apply_stack_override(stack_scenario& st, const std::string& path, const std::string& value);

// One run of `coldbrew sim` on an app: the stack's scenario with `overrides` applied
// (apply_stack_override), as a loaded scenario whose profile keeps the stack's models alive,
// and what the conversion noted. Throws config::config_error, std::invalid_argument.
struct stack_plan {
    config::loaded_scenario loaded;
    std::vector<std::string> notes, not_simulated;
    std::string fitted_yaml;  // stack_scenario::fitted_yaml
};
stack_plan plan_stack_run(const std::filesystem::path& path, const stack_sim_options& o,
                          const config::load_options& lo,
                          const std::vector<config::scenario_override>& overrides);

// Multiplies every arrival rate (constant rate, phases' rates, ramps and counts) by `factor`.
void scale_arrivals(models::sim::arrivals& a, double factor);

// ---- the command's side ----------------------------------------------------------------

// The app options of `coldbrew sim` (--realistic-sla, --rate-scale).
stack_sim_options stack_options(const sim_options& opts);
// How the app is loaded: --parameter-overrides (SAM CLI's "Key=Value Key2=Value2" and
// "ParameterKey=K,ParameterValue=V" forms), --stage, the process environment for ${env:…},
// and today's date for runtime lifecycles (as `up`). Throws std::invalid_argument for a
// malformed override.
config::load_options app_load_options(const sim_options& opts);
// "Simulating the stack …", the notes, and the "not simulated" list, before the report.
void print_stack_notes(const std::vector<std::string>& notes, const std::vector<std::string>& not_simulated,
                       std::ostream& out);

}  // namespace coldbrew::sim_cli
