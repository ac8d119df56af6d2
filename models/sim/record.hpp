#pragma once
// A recorded run: what a live run's clients, handlers and machine did, which the models do
// not decide. `coldbrew up --record FILE` writes it; `coldbrew sim PATH --replay FILE` feeds
// it to the same decider, SLA rules, pool policies and cold-start models the live run called,
// and `--fit FILE` turns it into per-function distributions for what-if runs.
//
// What is recorded is input only: request arrivals (with the facts fault rules match on),
// each handler's own behaviour (how long it ran once the event was delivered, how it ended,
// the invocations it made), how late this machine was against the model, and when the pool's
// expiry timers fired. What the models decide (faults, cold or warm, which environment, Init
// Duration, throttles, evictions) is never recorded here: a replay computes it again, and the
// decision logs of the two runs are compared.
//
// File format: JSON Lines. Line 1 is the header, every later line one event, in the order the
// live run saw them. Times are modeled milliseconds on the live scheduler's clock (real time
// divided by time_scale), from the start of the run.
//   {"record":"coldbrew-run","version":1,"seed":42,"time_scale":1,"app":"template.yaml"}
//   {"event":"request","id":0,"at_ms":12.5,"front":"gateway","route":"GET /hello",
//    "method":"GET","path":"/hello","function":"Hello","function_name":"hello-fn",
//    "headers":[["x-scenario","retry"]],"parent":null,"async":false}
//   {"event":"handler","request":0,"attempt":0,"delivery_lag_ms":0.8,"duration_ms":31.2,
//    "outcome":"success","response_bytes":52}
//   {"event":"tick","at_ms":360012.1,"function":"Hello"}
//   {"event":"rules","at_ms":5000,"op":"add","rules":[{…rule JSON…}]}
// States-front requests add "state_machine", "state_machine_name", "state" and "state_path";
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
};

// A request reached a front: an API Gateway route ("gateway"), the Invoke API ("invoke") or a
// state machine's Task ("states"). The facts are those faults::request_facts carries.
struct recorded_request {
    std::uint64_t id = 0;            // 0, 1, 2, … in arrival order
    double at_ms = 0;
    std::string front;               // "gateway" | "invoke" | "states"
    std::string route;               // route key: "GET /hello", "$default", "Invoke Pay", …
    std::string method;
    std::string path;
    std::string function;            // logical id of the function it invokes ("" for none)
    std::string function_name;       // its deployed FunctionName
    std::vector<std::pair<std::string, std::string>> headers;  // lower-case names
    std::string state_machine, state_machine_name, state, state_path;  // states front
    // The request whose handler made this one (an SDK call from inside a function, or a
    // Task of an execution that request started); nullopt for a client's own request.
    std::optional<std::uint64_t> parent;
    bool async = false;              // an Event invocation (queued, retried by Lambda)
};

// One delivery of a request's event to a handler, as the handler behaved.
struct recorded_handler {
    enum class outcome { success, error, crash, timeout };
    std::uint64_t request = 0;       // recorded_request::id
    int attempt = 0;                 // async retries: 0, 1, 2
    // How much later than the model the event reached the handler (a local init that
    // outlasted its modeled Init Duration, the loop's timer lateness), modeled ms, >= 0.
    double delivery_lag_ms = 0;
    double duration_ms = 0;          // delivery → answer, modeled ms
    outcome result = outcome::success;
    std::string error_type;          // error / crash / timeout: the errorType answered
    std::uint64_t response_bytes = 0;
};

// The pool's expiry timer for `function` fired (an idle environment's keep-alive or maximum
// lifetime was due).
struct recorded_tick {
    double at_ms = 0;
    std::string function;
};

// The fault rules changed during the run (admin API): "replace", "add", "remove" (rules holds
// one name), "clear", "seed" (rules holds the new seed) or "reset" (counters).
struct recorded_rules {
    double at_ms = 0;
    std::string op;
    nlohmann::json rules = nlohmann::json::array();
};

using record_event = std::variant<recorded_request, recorded_handler, recorded_tick, recorded_rules>;

struct run_record {
    record_header header;
    std::vector<record_event> events;  // in the order the live run saw them
};

// One line, no trailing newline; keys in the order shown above, so the same run writes the
// same bytes.
std::string to_json_line(const record_header& h);
std::string to_json_line(const record_event& e);

// Reads a whole file. Throws record_error: not a record, another version, a malformed line,
// an unknown key, a handler for a request not seen before it, times going backwards.
run_record read_record(const std::filesystem::path& file);
// The same from a stream; `name` is used in errors.
run_record read_record(std::istream& in, const std::string& name);

const char* outcome_name(recorded_handler::outcome o);  // "success", "error", "crash", "timeout"
std::optional<recorded_handler::outcome> parse_outcome(std::string_view s);

}  // namespace coldbrew::models::sim
