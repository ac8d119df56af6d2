#pragma once
// A recorded run: what a live run's clients, handlers, admin calls and machine did, which the
// models do not decide. `coldbrew up --record FILE` writes it; `coldbrew sim PATH --replay FILE`
// feeds it to the same decider, pool policies, cold-start models and ENI pools the live run
// called, and the decision logs of the two runs are compared (models/sim/replay.hpp).
//
// What is recorded is input only: when each fault decision was asked for and the facts fault
// rules match on (one "request" per decision: a gateway route, an Invoke call, a Step Functions
// Task, an authorizer's call, a dependency connection or request turn), when each invocation
// reached its function's pool, when and how each handler answered, when an execution
// environment's process ended (and why), when the pool's expiry timer fired, when provisioned
// environments were asked for, when a fault that was in effect ended, the admin API's rule and
// seed changes, and when each pool stopped. What the models decide (faults, cold or warm,
// which environment, Init Duration, ENIs, throttles, evictions) is never recorded: a replay
// computes it again.
//
// Why absolute times: every event carries the exact modeled time the live run handed to the
// models (the scheduler's clock, read once per callback). A replay that summed arrival + Init
// Duration + lag + duration instead would drift by rounding, and a keep-alive or token-bucket
// comparison at the edge would then go the other way. Doubles are written in their shortest
// round-trip form, so a time read back is the time written. The handler's lag and duration
// are kept beside at_ms for fitting distributions, not for the replay.
//
// Why "invoke" events: an invocation reaches the pool after the plan's delay (a timer that
// fires when the machine gets to it), after an authorizer, or from a queue (asynchronous
// retries, Step Functions), so its time is an input of its own. "exit" names the environment
// whose process ended: the process's end is a fact of the machine (a crash, a timeout's kill,
// an injected kill, an init that failed), its id what the live pool gave it.
//
// File format: JSON Lines. Line 1 is the header, every later line one event, in the order the
// live run saw them (the replay keeps that order). Times are modeled milliseconds on the live
// scheduler's clock (real time divided by time_scale), from the start of the run.
//   {"record":"coldbrew-run","version":1,"seed":42,"time_scale":1,"app":"template.yaml",
//    "realistic_sla":false,"cpu_limited":true}
//   {"event":"request","id":0,"at_ms":12.5,"front":"gateway","route":"GET /hello",
//    "method":"GET","path":"/hello","function":"Hello","function_name":"hello-fn",
//    "headers":[["x-scenario","retry"]],"parent":null,"async":false}
//   {"event":"invoke","id":0,"at_ms":12.6,"function":"Hello","request":0}
//   {"event":"handler","invocation":0,"at_ms":95.1,"delivery_lag_ms":0.8,"duration_ms":31.2,"cpu_ms":4.2,
//    "outcome":"success","response_bytes":52}
//   {"event":"exit","at_ms":96,"function":"Hello","environment":0,"reason":"timeout"}
//   {"event":"end","at_ms":97,"request":0}
//   {"event":"tick","at_ms":360012.1,"function":"Hello"}
//   {"event":"provision","at_ms":0.4,"function":"Hello"}
//   {"event":"rules","at_ms":5000,"op":"add","rules":[{…rule JSON…}]}
//   {"event":"stop","at_ms":9000,"function":"Hello"}
// States-front requests add "state_machine", "state_machine_name", "state" and "state_path";
// dependency-front requests "dependency" and "on"; an authorizer's decision "authorizer":true;
// a handler that failed adds "error_type". Keys not listed are errors when read, so a file
// from a newer coldbrew is refused rather than half-read.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace coldbrew::models::sim {

inline constexpr int record_version = 1;

// A malformed record file: line() is 1-based (0 when the file could not be read), what() is
// "<file>:<line>: <message>".
class record_error : public std::runtime_error {
public:
    record_error(std::string file, std::size_t line, const std::string& message);
    const std::string& file() const noexcept { return file_; }
    std::size_t line() const noexcept { return line_; }
    const std::string& message() const noexcept { return message_; }

private:
    std::string file_;
    std::size_t line_;
    std::string message_;
};

struct record_header {
    int version = record_version;
    std::uint64_t seed = 0;      // the live run's seed (faults, request ids, model draws)
    double time_scale = 1;       // the live run's time_scale (times here are modeled already)
    std::string app;             // the template or serverless.yml the run was started from
    bool realistic_sla = false;  // `up --realistic-sla`: the profile's SLA phantom rules
    // Each environment's CPU share followed its memory (a cgroup quota of memory / 1,769 MB
    // vCPUs): the recorded durations are those of that share. Written only when true.
    bool cpu_limited = false;
};

// A fault decision was asked for: an API Gateway route ("gateway"), the Invoke API ("invoke"),
// a state machine's Task ("states") or a dependency's connection or request turn
// ("dependency"). The facts are those faults::request_facts carries; at_ms is the time handed
// to the decider.
struct recorded_request {
    std::uint64_t id = 0;            // 0, 1, 2, … in arrival order (read back: increasing)
    double at_ms = 0;
    std::string front;               // "gateway" | "invoke" | "states" | "dependency"
    std::string route;               // route key: "GET /hello", "$default", "Invoke Pay", …
    std::string method;
    std::string path;
    std::string function;            // logical id of the function it invokes ("" for none)
    std::string function_name;       // its deployed FunctionName
    std::vector<std::pair<std::string, std::string>> headers;  // as the front passed them
    std::string state_machine, state_machine_name, state, state_path;  // states front
    std::string dependency;          // dependency front: the dependency's name
    std::string on;                  // dependency front: "connect" | "request"
    bool authorizer = false;         // an API Gateway Lambda authorizer's own decision
    // The request whose handler made this one (an SDK call from inside a function, or a
    // Task of an execution that request started); nullopt for a client's own request.
    std::optional<std::uint64_t> parent;
    bool async = false;              // an Event invocation (queued, retried by Lambda)
};

// An invocation reached its function's pool (function_pool::invoke): placed at at_ms.
struct recorded_invoke {
    std::uint64_t id = 0;            // 0, 1, 2, … in the order the pools got them (read back:
                                     // increasing)
    double at_ms = 0;
    std::string function;            // logical id
    // The decision that planned it (recorded_request::id); nullopt for an invocation no
    // decision preceded (an asynchronous event's attempts, an integration after an authorizer
    // whose own fault was the request's one).
    std::optional<std::uint64_t> request;
};

// One delivery of an invocation's event to a handler, as the handler behaved; at_ms is when
// the pool had its answer.
struct recorded_handler {
    // success and error: the environment lives on and is idle again. crash and timeout: its
    // process is gone with the invocation (its own exit, an injected kill, an out-of-memory,
    // an init that failed; the function timeout's reset), and an "exit" event follows.
    enum class outcome { success, error, crash, timeout };
    std::uint64_t invocation = 0;    // recorded_invoke::id
    double at_ms = 0;
    // How much later than the model the event reached the handler (a local init that
    // outlasted its modeled Init Duration, the loop's timer lateness), modeled ms, >= 0.
    double delivery_lag_ms = 0;
    double duration_ms = 0;          // delivery → answer, modeled ms
    // CPU time the runtime's main thread ran in that span, modeled ms (real CPU time scaled
    // as durations are, so cpu_ms / duration_ms is the share of the span spent on CPU); for
    // fitting how the handler's time depends on memory. Absent when the kernel does not say.
    std::optional<double> cpu_ms;
    outcome result = outcome::success;
    std::string error_type;          // error / crash / timeout: the errorType answered
    std::uint64_t response_bytes = 0;
};

// An execution environment's process ended (or could not start: reason "start-failed"), at
// at_ms; `reason` is what the pool gave the policy ("timeout", "error", "init-error",
// "injected function error", "exited: exit status 3", …).
struct recorded_exit {
    double at_ms = 0;
    std::string function;
    std::uint64_t environment = 0;
    std::string reason;
};

// The fault decided for `request` stopped being in effect (decider::finished).
struct recorded_end {
    double at_ms = 0;
    std::uint64_t request = 0;
};

// The pool of `function` asked its policy for its provisioned environments (at start).
struct recorded_provision {
    double at_ms = 0;
    std::string function;
};

// The pool of `function` shut down: from here it asks its policy nothing.
struct recorded_stop {
    double at_ms = 0;
    std::string function;
};

// The pool's expiry timer for `function` fired (an idle environment's keep-alive or maximum
// lifetime was due).
struct recorded_tick {
    double at_ms = 0;
    std::string function;
};

// The fault rules changed during the run (admin API), only when the call succeeded:
//   "replace"  PUT /faults: `rules` (canonical rule JSON, names given), and
//              "max_active_faults" when the call set the cap (null: no cap)
//   "add"      POST /faults: `rules`
//   "remove"   DELETE /faults/{name}: `name`
//   "clear"    DELETE /faults
//   "seed"     PUT /seed: `seed`
//   "reset"    POST /counters/reset (counting restarts)
//   "restore"  POST /reset: coldbrew.yaml's rules and cap again, counting restarts
struct recorded_rules {
    double at_ms = 0;
    std::string op;
    nlohmann::json rules = nlohmann::json::array();
    std::string name;
    std::uint64_t seed = 0;
    // Outer nullopt: the call left the cap as it was; inner nullopt: no cap.
    std::optional<std::optional<std::uint64_t>> max_active_faults;
};

using record_event =
    std::variant<recorded_request, recorded_invoke, recorded_handler, recorded_exit, recorded_end,
                 recorded_tick, recorded_provision, recorded_rules, recorded_stop>;

struct run_record {
    record_header header;
    std::vector<record_event> events;  // in the order the live run saw them
};

// One line, no trailing newline; keys in the order shown above, so the same run writes the
// same bytes.
std::string to_json_line(const record_header& h);
std::string to_json_line(const record_event& e);

// Reads a whole file. Throws record_error: not a record, another version, a malformed line,
// an unknown key, ids out of order, a reference to a request or invocation not seen before
// it, times going backwards.
run_record read_record(const std::filesystem::path& file);
// The same from a stream; `name` is used in errors.
run_record read_record(std::istream& in, const std::string& name);

const char* outcome_name(recorded_handler::outcome o);  // "success", "error", "crash", "timeout"
std::optional<recorded_handler::outcome> parse_outcome(std::string_view s);

}  // namespace coldbrew::models::sim
