#pragma once
// `coldbrew sim PATH --replay FILE [--decision-log OUT] [--compare LIVE_LOG]`: replays a run
// record (models/sim/record.hpp, written by `coldbrew up --record FILE`) of the app at PATH
// through the models the live run called (models/sim/replay.hpp). PATH is loaded as
// `coldbrew up` loads it, and the pools' limits, lifetimes and cold-start models, the fault
// rules, SLA phantoms and availability rules and the cap are built by the code `up` builds
// them with; the record's header gives the seed and whether --realistic-sla was on.
//
// Prints a summary to stdout; with --compare, whether the decision logs agree (init_overrun
// lines, readings of the live machine, ignored) or the first line where they differ, both
// lines shown.
//
// Exit status: 0 when the replay went through (and, with --compare, the logs agree); 1 when
// the replay diverged from the record or the logs differ; 2 for an unreadable record, app or
// log.

#include <string>

#include "emulator/config/stack.hpp"

namespace coldbrew::sim_cli {

struct replay_options {
    std::string app;           // PATH: a template, serverless.yml or their directory
    std::string record;        // the run record
    std::string decision_log;  // "" = do not write one
    std::string compare;       // "" = do not compare
    // How the app is loaded: `up`'s --parameter-overrides and --stage as the run had them
    // (they are not in the record), the environment, today's date (app_load_options).
    config::load_options load;
};

int run_replay(const replay_options& opts);

}  // namespace coldbrew::sim_cli
