#pragma once
// `coldbrew sim scenario.yaml` or `coldbrew sim PATH` on an app (the directory or template
// `coldbrew up` takes, converted by stack_scenario.hpp): runs a what-if scenario (emulator/config/scenario_loader.hpp,
// models/sim/) and prints its report; --ensure gates make it a CI check.
//
// Exit status: 0 when the run finished and every --ensure held; 1 when an --ensure failed
// (each failing gate is printed as "ensure failed: …"); 2 for a config or usage error.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace coldbrew::sim_cli {

struct sim_options {
    std::string scenario;                  // the scenario file
    std::optional<std::uint64_t> requests; // overrides the file's `requests`
    std::optional<std::uint64_t> seed;     // overrides the file's `seed`
    unsigned threads = 0;                  // 0: std::thread::hardware_concurrency()
    std::vector<std::string> ensure;       // "availability >= 99.99%", "p95 < 300ms", …
    std::vector<std::string> set;          // "path=value" overrides
    std::string sweep;                     // "path=v1,v2,…": one run per value
    bool json = false;                     // the report as JSON on stdout
    std::string html;                      // write a self-contained HTML report here
    bool no_progress = false;              // no progress bar even on a terminal
    // When `scenario` is an app (stack_scenario.hpp): `up`'s options that shape the stack.
    std::vector<std::string> parameter_overrides;  // SAM --parameter-overrides
    std::string stage;                             // serverless --stage
    bool realistic_sla = false;                    // the profile's SLA phantoms, as `up`
    double rate_scale = 1;                         // every arrival rate × this
};

// Adds the `sim` subcommand and its flags to `app`, filling `opts` when parsed.
// Returns nothing; check app.got_subcommand("sim") and call run_sim(opts).
void add_sim_command(CLI::App& app, sim_options& opts);

// Loads, runs and reports. Prints the report to stdout (text or JSON), errors to stderr.
int run_sim(const sim_options& opts);

// ---- exposed for tests ---------------------------------------------------------------------

// One --ensure gate: metric, comparison and threshold in the metric's unit (percent for
// availability and cold_start_share, ms for latencies).
struct ensure_gate {
    std::string text, metric, op;
    double threshold = 0;
};
// Parses "p95 < 300ms", "availability >= 99.99%", "p99 <= 1s", "duplicates == 0",
// "cost_per_million < 5". Throws std::invalid_argument with a message naming the problem.
ensure_gate parse_ensure(const std::string& text);
bool ensure_holds(const ensure_gate& g, double value);

// "path=v1,v2,…" → (path, values). Commas inside (), [] or {} do not split, so a
// distribution, a list or a mapping is one value. Throws std::invalid_argument.
std::pair<std::string, std::vector<std::string>> parse_sweep(const std::string& text);

}  // namespace coldbrew::sim_cli
