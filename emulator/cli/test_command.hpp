#pragma once
// `coldbrew test [PATH] [up's options] -- CMD [ARGS…]`: CI in one line. Starts the stack as
// `up` does (the same flags, the same start; free ports unless ports are given), waits until
// it is ready (GET /ready's moment), runs CMD with the stack's addresses in its environment,
// stops the stack when CMD ends, checks the --ensure gates on the run's own records and
// writes the reports a CI system shows.
//
// CMD runs in its own process group, with stdin, stdout and stderr those of `coldbrew test`:
// its output passes through unchanged. coldbrew's own output (the banner, handler logs, the
// run summary) goes to --log FILE (default .coldbrew/test.log beside the template); `--log -`
// sends it to stderr instead. At the end, stderr gets one line per gate and the log's path.
//
// CMD's environment is coldbrew's, plus:
//   COLDBREW_GATEWAY_URL, COLDBREW_INVOKE_URL, COLDBREW_ADMIN_URL  http://127.0.0.1:PORT
//   COLDBREW_ADMIN_TOKEN                       the admin API's bearer token, when it has one
//                                              (send Authorization: Bearer $COLDBREW_ADMIN_TOKEN)
//   COLDBREW_SFN_URL, AWS_ENDPOINT_URL_SFN    when the stack has state machines
//   AWS_ENDPOINT_URL_LAMBDA                    the Invoke API (the SDKs' service-specific
//                                              endpoint variable, AWS SDKs and Tools reference
//                                              guide, "Service-specific endpoints")
//   AWS_ACCESS_KEY_ID=test, AWS_SECRET_ACCESS_KEY=test   only when none of
//                                              AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//                                              AWS_SESSION_TOKEN, AWS_PROFILE is set
//   AWS_REGION                                 the stack's region, only when neither
//                                              AWS_REGION nor AWS_DEFAULT_REGION is set
// so that an SDK-based suite needs no change.
//
// --timeout DURATION ends a CMD that runs longer: SIGTERM to its process group, then SIGKILL
// after --kill-after (default 5 s). When CMD ends, any process left in its group is killed,
// so nothing it started outlives the run. A SIGINT or SIGTERM to `coldbrew test` is passed
// to CMD's group the same way; a second one stops the stack at once.
//
// Exit status: CMD's own (128+N when a signal N ended it); 124 when --timeout ended it (as
// timeout(1)); 127 when CMD cannot be started; 1 when CMD passed and a gate failed; 2 for a
// usage or config error, or a stack that could not start (a port taken), before CMD runs.
//
// Gates (--ensure, the grammar of `sim --ensure`, sim_cli::parse_ensure), on every request
// the gateway and the Invoke API answered during the run (from the last POST /counters/reset
// or POST /reset, when CMD made one):
//   requests, availability          availability: percent of requests answered with a status
//                                   below 500 other than 429 (an unanswered request counts
//                                   as unavailable)
//   p50 p90 p95 p99 p99.9 mean max  response time, real ms from receipt to the last byte
//                                   sent (telemetry::latency_histogram, within 0.4%)
//   cold_starts                     invocations that started an environment (all of them,
//                                   a client's or not)
//   emulator_errors, handler_errors requests that ended so (architecture principle 6)
//   faults, faults.<kind>           faults injected in all, or of one kind (phantom, delay,
//                                   throttle, …), not counting those taken back (missed)
// A subject narrows requests, availability and latencies to a route key as fault rules name
// it ("p99[GET /pay] < 1s", "availability[Invoke Hello] >= 99%") or to a function's
// logical id (every route reaching it), and cold_starts to a function. A gate whose figure
// the run does not have (no requests on the route) fails and shows "n/a".
// `duplicates` is a simulator figure only: a live run cannot tell a client's retry from a
// new request, so the suite itself must assert it (examples/payments checks its store).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/sim_cli/sim_command.hpp"
#include "emulator/telemetry/request_stats.hpp"

#include <uv.h>

namespace coldbrew::config {
struct stack;
}

namespace CLI {
class App;
}

namespace coldbrew::cli {

// Where the ready stack listens, as `up --ready-file` writes it and GET /ready answers.
struct ready_info {
    std::string gateway_url, invoke_url, admin_url, sfn_url;  // sfn_url "" when none
    // The admin API's bearer token ("" when none is required). Never in to_json(): GET /ready
    // and the ready file do not hand it out; CMD gets it as COLDBREW_ADMIN_TOKEN.
    std::string admin_token;
    std::string region;
    std::uint64_t seed = 0;
    // {"gateway":"http://…","invoke":…,"admin":…,"sfn":… (when listening),"region":…,
    //  "seed":N}
    nlohmann::json to_json() const;
};

// The run's own figures, taken when the stack has stopped (every request it ended is in).
struct run_figures {
    double run_ms = 0;
    const telemetry::request_stats* requests = nullptr;
    std::map<std::string, std::uint64_t> faults_by_kind;         // injected
    std::map<std::string, std::uint64_t> faults_missed_by_kind;  // taken back
    std::uint64_t emulator_errors = 0;  // every front's (admin request outcomes)
    struct function_figures {
        std::uint64_t invocations = 0, cold_starts = 0, function_errors = 0, timeouts = 0,
                      throttles = 0;
    };
    std::vector<std::pair<std::string, function_figures>> functions;  // template order
    std::string summary_text;  // the run summary block `up` prints
};

// What `up` lets the command that wraps it see and do. All called on the loop's thread.
struct up_hooks {
    // Once, when the stack is loaded and before anything listens; throws config::config_error
    // to stop the start (exit 2).
    std::function<void(const config::stack& stack)> loaded;
    // Once, when the stack is ready. `stop()` starts up's own graceful shutdown.
    std::function<void(uv_loop_t* loop, const ready_info& info, std::function<void()> stop)> ready;
    // SIGINT or SIGTERM arrived; true when the hook took care of it (up keeps running).
    std::function<bool(int signal)> signal;
    // After the loop has ended, while the app's records are still there.
    std::function<void(const run_figures& figures)> finished;
};

struct test_options {
    std::vector<std::string> command;  // CMD and its arguments (everything after "--")
    std::vector<std::string> ensure;
    std::string timeout;     // DURATION: "90s", "5m", "1500ms", "1h", or seconds ("30")
    std::string kill_after = "5s";
    std::string log;         // FILE or "-"; "" = <app dir>/.coldbrew/test.log
    std::string junit, summary_json;
};

// Adds the `test` subcommand with its own flags; main adds up's flags to the returned
// subcommand, so both parse them alike.
CLI::App* add_test_command(CLI::App& app, test_options& opts);

// Takes CMD out of argv: everything after the first "--" that follows the word "test".
// Returns argv without it (what CLI11 parses).
std::vector<std::string> split_command(int argc, char** argv, std::vector<std::string>& command);

// Runs the test. `app_path` is up's PATH (directory or template) for the default log;
// `run_up(hooks)` is `up` itself and returns its exit status (it may throw a config error).
int run_test(const test_options& opts, const std::string& app_path,
             const std::function<int(up_hooks&)>& run_up);

// Writes `info` as JSON to `path` atomically (a temporary file renamed over it); false with
// `error` when it cannot.
bool write_ready_file(const std::string& path, const ready_info& info, std::string& error);

// ---- exposed for tests ---------------------------------------------------------------------

// "90s", "5m", "1500ms", "1h", "2.5" (seconds) → ms; throws std::invalid_argument.
double parse_duration_ms(const std::string& text);

// The live run's gate grammar; parse_live_gate also refuses a [subject] on a metric that
// takes none and a fault kind coldbrew does not have. Throws std::invalid_argument.
const sim_cli::ensure_grammar& live_ensure_grammar();
sim_cli::ensure_gate parse_live_gate(const std::string& text);

// The gate's figure on the run (nullopt: the run does not have it) and its unit.
std::optional<double> gate_figure(const sim_cli::ensure_gate& gate, const run_figures& run);
std::string gate_unit(const sim_cli::ensure_gate& gate);  // "ms", "%", ""

struct gate_result {
    sim_cli::ensure_gate gate;
    std::optional<double> figure;
    bool passed = false;
    std::string figure_text() const;  // "12.3 ms", "99.5%", "3", "n/a"
};

// What the reports are made of.
struct test_outcome {
    std::vector<std::string> command;
    std::optional<int> command_status;  // nullopt: CMD never ran
    bool timed_out = false;
    std::string command_error;          // why CMD could not start
    double command_ms = 0;
    int exit_status = 0;
    std::vector<gate_result> gates;
    std::optional<ready_info> ready;
    std::string log_path;
    std::string timestamp;  // ISO 8601 UTC, when the run started
    std::string hostname;
};

// JUnit XML (the Ant/Jenkins format, tests/fixtures/junit-10.xsd): one <testsuite> for the
// run, a <testcase> for CMD and one per gate.
std::string junit_xml(const test_outcome& outcome, const run_figures* figures);
// The run summary and counters as JSON (--summary-json).
nlohmann::json summary_json(const test_outcome& outcome, const run_figures* figures);
// A Markdown section with the gates' table, for $GITHUB_STEP_SUMMARY.
std::string markdown_summary(const test_outcome& outcome, const run_figures* figures);

}  // namespace coldbrew::cli
