// Benchmark: what deciding fault rules costs the simulator. Runs tools/bench/sim_chain.yaml
// as it is, then with every step standing for a live request (the gateway's route, then
// Invoke calls) decided by a stack's rules: the two SLA phantom rules, a 1% delay, a rule for
// one function and a header rule that never matches. Prints simulated requests per second of
// CPU time for both engines (the events engine with the two queues sim_throughput.sh uses).
//
//   build/tools/bench/bench_sim_faults [tools/bench/sim_chain.yaml] [requests]

#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/scenario_loader.hpp"
#include "models/faults/faults.hpp"
#include "models/sim/engine.hpp"

using namespace coldbrew;
namespace mf = models::faults;
namespace sim = models::sim;

namespace {

void mark(std::vector<sim::step>& steps, const sim::scenario& s, bool top) {
    for (auto& st : steps) {
        for (auto& b : st.branches) mark(b, s, false);
        if (st.type != sim::step::kind::call) continue;
        const std::string& name = s.components[st.component].name;
        sim::live_request l;
        l.where = top ? mf::front::gateway : mf::front::invoke;
        l.route = top ? "POST /orders" : "Invoke " + name;
        l.method = "POST";
        l.path = top ? "/orders" : "/2015-03-31/functions/" + name + "/invocations";
        l.function = name;
        l.function_name = "chain-" + name;
        st.live = l;
    }
}

double cpu_s() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

void measure(const char* label, const sim::scenario& s, std::uint64_t n) {
    const double t0 = cpu_s();
    const sim::run_result r = sim::run(s, {1, {}});
    const double t = cpu_s() - t0;
    std::printf("  %-44s %6.2f M requests/s per core (%llu requests, %.2f s CPU, %llu faults)\n",
                label, static_cast<double>(n) / t / 1e6, static_cast<unsigned long long>(n), t,
                static_cast<unsigned long long>(r.faults.total()));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string file = argc > 1 ? argv[1] : "tools/bench/sim_chain.yaml";
    const std::uint64_t n = argc > 2 ? std::stoull(argv[2]) : 2000000;
    try {
        config::loaded_scenario l = config::load_scenario(file);
        sim::scenario plain = l.variants.at(0).scenario;
        plain.requests = n;
        sim::scenario live = plain;
        mark(live.flow, live, true);
        for (auto& c : live.components) mark(c.calls, live, false);
        mf::fault_registry kinds;
        mf::register_builtin_faults(kinds);
        auto rule = [&](const char* text) {
            return mf::parse_rule(nlohmann::json::parse(text), kinds, "rule");
        };
        live.fault_rules = {
            rule(R"j({"name": "one-function", "function": "ledger", "probability": 0.001,
                      "fault": {"kind": "function_error", "mode": "handler"}})j"),
            rule(R"j({"name": "header", "headers": {"x-test": true}, "fault": {"kind": "reset"}})j"),
            rule(R"j({"name": "slow", "probability": 0.01,
                      "fault": {"kind": "delay", "duration": "fixed(20ms)"}})j"),
            mf::sla_rule(mf::front::gateway, 99.95, 0.5, mf::client_outcome::timeout, kinds),
            mf::sla_rule(mf::front::invoke, 99.95, 0.5, mf::client_outcome::timeout, kinds),
        };
        std::printf("fault rules on every hop (%s)\n", file.c_str());
        for (auto* s : {&plain, &live}) s->engine = sim::scenario::mode::fast;
        measure("fast engine, plain", plain, n);
        measure("fast engine, every hop decided by 5 rules", live, n);
        for (auto* s : {&plain, &live}) {
            s->engine = sim::scenario::mode::events;
            for (auto& c : s->components) {
                if (c.name == "orders") c.cap.concurrency = 60;
                if (c.name == "ledger") c.cap.concurrency = 40;
            }
            s->requests = n / 2;
        }
        measure("events engine, plain", plain, n / 2);
        measure("events engine, every hop decided by 5 rules", live, n / 2);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_sim_faults: %s\n", e.what());
        return 1;
    }
    return 0;
}
