#include "emulator/sim_cli/replay_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "emulator/config/config_error.hpp"
#include "emulator/config/fault_rules.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/functions/function_model.hpp"
#include "models/faults/faults.hpp"
#include "models/sim/record.hpp"
#include "models/sim/replay.hpp"


namespace coldbrew::sim_cli {

namespace {

bool read_lines(const std::string& file, std::vector<std::string>& out) {
    std::ifstream in(file);
    if (!in) return false;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(line);
    return true;
}

}  // namespace

int run_replay(const replay_options& opts) {
    models::sim::run_record record;
    try {
        record = models::sim::read_record(opts.record);
    } catch (const models::sim::record_error& e) {
        std::fprintf(stderr, "coldbrew sim: %s\n", e.what());
        return 2;
    }

    try {
        // As `coldbrew up` loads the app (emulator/cli/main.cpp), without building or starting
        // anything: the models need the config and the measured code, not the processes.
        config::stack stack = config::load_stack(opts.app, opts.load);
        auto models = functions::build_models(stack);
        models::faults::fault_registry kinds;
        models::faults::register_builtin_faults(kinds);
        if (record.header.realistic_sla) config::apply_realistic_sla(stack, models->profile());

        models::sim::replay_inputs in;
        in.registry = &kinds;
        in.rules = config::startup_fault_rules(stack, kinds);
        in.max_active_faults = stack.settings.faults.max_active_faults;
        in.account_limit = models->account().limit();
        in.unreserved_minimum = models->profile().unreserved_minimum;
        for (const auto& fn : stack.functions) {
            const auto* m = models->find(fn.name);
            in.functions.push_back({fn.name, m->limits, m->lifetime, &m->cold_start});
        }

        const auto result = models::sim::replay(in, record);

        if (!opts.decision_log.empty()) {
            std::ofstream out(opts.decision_log, std::ios::trunc);
            for (const auto& line : result.lines) out << line << '\n';
            if (!out) {
                std::fprintf(stderr, "coldbrew sim: cannot write %s\n", opts.decision_log.c_str());
                return 2;
            }
        }
        std::printf("coldbrew sim: replayed %zu of %zu recorded events of %s (seed %llu): %zu "
                    "decisions\n",
                    result.events, record.events.size(), opts.record.c_str(),
                    static_cast<unsigned long long>(record.header.seed), result.lines.size());
        int rc = 0;
        if (result.divergence) {
            std::fprintf(stderr,
                         "coldbrew sim: the replay diverged from the record at %s; the decisions "
                         "stop there\n",
                         result.divergence->c_str());
            rc = 1;
        }
        if (!opts.compare.empty()) {
            std::vector<std::string> live;
            if (!read_lines(opts.compare, live)) {
                std::fprintf(stderr, "coldbrew sim: cannot read %s\n", opts.compare.c_str());
                return 2;
            }
            std::size_t overruns = 0;
            for (const auto& l : live) overruns += models::sim::is_init_overrun_line(l);
            if (auto d = models::sim::compare_decision_logs(live, result.lines)) {
                std::printf("decision logs differ: %s line %zu, replay line %zu\n  live:   %s\n  "
                            "replay: %s\n",
                            opts.compare.c_str(), d->a_line, d->b_line,
                            d->a ? d->a->c_str() : "(end of log)",
                            d->b ? d->b->c_str() : "(end of log)");
                rc = 1;
            } else {
                std::printf("decision logs agree: %zu decisions (%zu init_overrun line%s of the "
                            "live log ignored: readings of the machine)\n",
                            result.lines.size(), overruns, overruns == 1 ? "" : "s");
            }
        }
        return rc;
    } catch (const config::config_error& e) {
        std::fprintf(stderr, "coldbrew: config error: %s\n", e.what());
        return 2;
    }
}

}  // namespace coldbrew::sim_cli
