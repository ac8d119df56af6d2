#pragma once
// Runs split across processes or machines: `coldbrew sim SCENARIO --shard K/N` prints a part
// file, `coldbrew sim merge PART…` checks and merges the parts and prints the report one
// process running the whole would print, byte for byte.
//
// A part runs the chunks i of every run (each variant, each --sweep value) with i mod N == K
// (models/sim/engine.hpp: fixed chunks with their own seed streams, integer counts). The part
// file (JSON):
//   { format: "coldbrew-sim-part", version: 1,
//     identity: "<32 hex digits>",             // hash of every run's resolved scenario
//     shard: {index: K, count: N},
//     command: {scenario, requests?, seed?, set: […], sweep?},   // as given to `sim`
//     runs: [{label, result: <run_result>}] }  // models/sim/part.hpp, in run order
// The merge reads the scenario again (the recorded path, or `merge --scenario FILE` when it
// lives elsewhere) with the recorded --requests, --seed, --set and --sweep, checks that it
// resolves to the same identity, and reports from the merged counts: the report needs the
// scenario's components, prices and flow, and a user need not repeat any flag.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/profile/profile.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::sim_cli {

struct sim_options;

inline constexpr const char* part_format = "coldbrew-sim-part";
inline constexpr int part_version = 1;

struct shard_spec {
    std::uint64_t index = 0, count = 1;
};

// "K/N" with 0 <= K < N, N >= 1 (e.g. "3/8"). Throws std::invalid_argument.
shard_spec parse_shard(const std::string& text);

// The `sim` command line a part was computed with, so the merge loads the same runs.
struct part_command {
    std::string scenario;
    std::optional<std::uint64_t> requests, seed;
    std::vector<std::string> set;
    std::string sweep;
    // An app's options (stack_scenario.hpp), so a merge loads the stack the parts ran.
    std::vector<std::string> parameter_overrides;
    std::string stage;
    bool realistic_sla = false;
    double rate_scale = 1;
    std::string fit;  // --fit: the run record the parts' handlers were fitted to
};

struct part_run {
    std::string label;
    models::sim::run_result result;
};

struct part {
    std::string file;  // where it was read from, for errors
    std::string identity;
    shard_spec shard;
    part_command command;
    std::vector<part_run> runs;
};

// One run for the identity: its label, its resolved scenario and the profile it points into.
struct identity_run {
    std::string label;
    const models::sim::scenario* scenario = nullptr;
    const models::profile* profile = nullptr;
};

// The identity of a set of runs: identity_hash over the format version and every run's label
// and scenario_fingerprint, plus the bytes of each profile read from a file (not the built-in
// one). Throws std::invalid_argument when such a profile file cannot be read.
std::string runs_identity(const std::vector<identity_run>& runs);

nlohmann::ordered_json part_to_json(const part& p);

// Throws models::sim::part_error naming `file` and the key.
part part_from_json(const nlohmann::json& j, const std::string& file);
// Reads and parses `file`; throws part_error when it cannot be read or is not JSON.
part read_part(const std::string& file);

// Checks that the parts belong together (one format, one identity, one command, one N, every
// K from 0 to N-1 exactly once, the same runs with the same engines) and returns each run's
// merged result, in run order. Throws std::invalid_argument naming the files at fault.
std::vector<models::sim::run_result> merge_parts(const std::vector<part>& parts);

// `coldbrew sim merge`: reads opts.merge.parts, merges them and reports through run_sim with
// the first part's command (the scenario at opts.merge.scenario when given) and opts' report
// options. Returns run_sim's exit status, or 2 when a part cannot be read or the parts do not
// make one whole run (the reason on stderr).
int run_merge(const sim_options& opts);

}  // namespace coldbrew::sim_cli
