#pragma once
// `coldbrew sim scenario.yaml` or `coldbrew sim PATH` on an app (the directory or template
// `coldbrew up` takes, converted by stack_scenario.hpp): runs a what-if scenario (emulator/config/scenario_loader.hpp,
// models/sim/) and prints its report; --ensure gates make it a CI check.
// `coldbrew sim scenario.yaml --shard K/N` prints part K of N of the run instead, and
// `coldbrew sim merge PART…` prints the report of the whole from the parts (shard.hpp).
//
// Exit status: 0 when the run finished and every --ensure held; 1 when an --ensure failed
// (each failing gate is printed as "ensure failed: …"); 2 for a config or usage error, and
// for parts that do not make one whole run.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/sim/engine.hpp"

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
    // --replay FILE: `scenario` is an app (as `coldbrew up` takes it) and FILE a run record
    // of it (replay_command.hpp); --decision-log writes the replayed decisions, --compare
    // checks them against a live decision log.
    std::string replay, decision_log, compare;
    std::string shard;                     // "K/N": print part K of N as a part file
                                           // (emulator/sim_cli/shard.hpp), no report
    // `coldbrew sim merge PART…`: the part files and where the scenario is now ("" = the
    // path the parts recorded); the report options above (json, html, ensure) apply.
    struct merge_options {
        std::vector<std::string> parts;
        std::string scenario;
    } merge;
    // Set by the merge: every run's result merged from the parts, in run order, and the parts'
    // identity. The runs are loaded and checked against it, then reported, not run.
    std::vector<models::sim::run_result> merged;
    std::string merged_identity;
    // When `scenario` is an app (stack_scenario.hpp): `up`'s options that shape the stack.
    std::vector<std::string> parameter_overrides;  // SAM --parameter-overrides
    std::string stage;                             // serverless --stage
    bool realistic_sla = false;                    // the profile's SLA phantoms, as `up`
    double rate_scale = 1;                         // every arrival rate × this
    // --fit FILE: the handlers' latency, errors and calls and the arrivals fitted to a run
    // record of the app (models/sim/fit.hpp) instead of coldbrew.yaml's `sim:` sections;
    // --fit-out writes what was fitted as those sections.
    std::string fit, fit_out;
};

// Adds the `sim` subcommand and its flags to `app`, filling `opts` when parsed.
// Returns nothing; check app.got_subcommand("sim") and call run_sim(opts).
void add_sim_command(CLI::App& app, sim_options& opts);

// Loads, runs and reports. Prints the report to stdout (text or JSON), errors to stderr.
// With opts.merge.parts set, merges those parts instead (run_merge, shard.hpp).
int run_sim(const sim_options& opts);

// ---- exposed for tests ---------------------------------------------------------------------

// One --ensure gate: metric, comparison and threshold in the metric's unit (percent for
// availability and cold_start_share, ms for latencies). `subject` is what the metric is
// narrowed to ("GET /pay" in "p99[GET /pay] < 1s"); "" for the whole run.
struct ensure_gate {
    std::string text, metric, op;
    double threshold = 0;
    std::string subject;
};
// Which metric names a command's gates accept; the grammar (metric, optional [subject],
// operator, number, unit) is the same for all. A metric's unit follows from its name:
// p50…p99.9, mean and max are latencies (ms, s, min, us); availability and
// cold_start_share percentages; anything else a plain number.
struct ensure_grammar {
    std::vector<std::string> metrics;   // exact names
    std::vector<std::string> prefixes;  // "faults.": any non-empty name after the prefix
    bool subjects = false;              // "metric[subject]" allowed
    // Why a metric is not offered, by name (said instead of "unknown metric").
    std::vector<std::pair<std::string, std::string>> refused;
};
// `sim`'s metrics (models::sim::report_metric), without subjects.
const ensure_grammar& sim_ensure_grammar();
// Parses "p95 < 300ms", "availability >= 99.99%", "p99 <= 1s", "duplicates == 0",
// "cost_per_million < 5". Throws std::invalid_argument with a message naming the problem.
ensure_gate parse_ensure(const std::string& text, const ensure_grammar& grammar);
inline ensure_gate parse_ensure(const std::string& text) {
    return parse_ensure(text, sim_ensure_grammar());
}
bool ensure_holds(const ensure_gate& g, double value);

// "path=v1,v2,…" → (path, values). Commas inside (), [] or {} do not split, so a
// distribution, a list or a mapping is one value. Throws std::invalid_argument.
std::pair<std::string, std::vector<std::string>> parse_sweep(const std::string& text);

}  // namespace coldbrew::sim_cli
