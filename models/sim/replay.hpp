#pragma once
// Replaying a recorded live run (models/sim/record.hpp) through the models the live run called:
// the fault decider (same rules, seed, draw keys and clock), one pool policy per function on
// one account (acquire, release, discard, expire and provision in the live pool's order, at the
// live pool's times, waits at max_environments queued and drained as the pool drains them), and
// through the policies the cold-start models and ENI pools. The result is the decision log the
// live run wrote, line for line, less its `init_overrun` lines: those are readings of the
// machine (a local init that outlasted the model), the one kind of line two runs of the same
// requests may differ in.
//
// How the live pool is mirrored (emulator/functions/function_pool.cpp): an invocation is
// placed with expire(t) then acquire(t); a warm or cold placement makes its environment busy
// with it, a wait queues it; an answer that leaves the environment alive releases it and then
// drains the queue in arrival order, each waiting invocation placed again with its own request
// index until one has to wait again; a crash or timeout leaves the environment busy until its
// process's exit, which discards it, places again an invocation it had been given and not yet
// delivered (as a new placement), and drains the queue; an environment whose start failed is
// discarded at once, inside the placement that created it. A tick is expire(t); provision is
// provision(t); a stop ends the pool's calls. The live run reads its clock once per callback
// and records that time, so every call here gets the time the live call got.
//
// Divergence: when the record asks for something the replayed decisions rule out (an
// invocation of a request the replay decided not to invoke, an answer for an invocation the
// replay throttled or left waiting, an event for a function the stack does not have), the
// replay stops there and says so; the lines up to that point are returned. A replay of an
// unchanged record against an unchanged app never diverges.
//
// Pure: no clock, no I/O. Throws nothing for a well-formed record; a rule in a "rules" event
// that does not parse is a divergence (the live admin API accepted it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/coldstart/cold_start.hpp"
#include "models/faults/faults.hpp"
#include "models/pool/pool_policy.hpp"
#include "models/sim/record.hpp"

namespace coldbrew::models::sim {

// One function's pool as the live emulator built it (emulator/functions/function_model.hpp).
struct replay_function {
    std::string name;  // logical id: the policy's draw key and the decision log's "function"
    pool_limits limits;
    lifetime_model lifetime;
    const cold_start_model* cold_start = nullptr;  // required; outlives the replay
};

struct replay_inputs {
    // In the stack's order: reserved concurrency is set aside from the account in this order,
    // as the live pools are built.
    std::vector<replay_function> functions;
    int account_limit = 1000;        // the account's concurrency
    int unreserved_minimum = 100;
    const faults::fault_registry* registry = nullptr;  // required
    // The rules the live run started with (coldbrew.yaml's, SLA phantoms, availability rules),
    // set at time 0, and POST /reset's rules; and the configured cap.
    std::vector<faults::rule> rules;
    std::optional<std::size_t> max_active_faults;
};

struct replay_result {
    std::vector<std::string> lines;          // the decision log, without init_overrun lines
    std::optional<std::string> divergence;   // "record line N: …" when the replay stopped early
    std::size_t events = 0;                  // record events replayed
};

// Replays `record` (its seed seeds the decider and every model draw, as `up --seed` did).
replay_result replay(const replay_inputs& in, const run_record& record);

// The decision log's lines without the `init_overrun` ones, for comparing a live log with a
// replayed one.
bool is_init_overrun_line(const std::string& line);

struct log_difference {
    std::size_t a_line = 0, b_line = 0;  // 1-based line numbers in each log (init_overrun
                                         // lines counted); past the end when it ended first
    std::optional<std::string> a, b;     // nullopt: that log ended first
};
// The first line where two decision logs differ, ignoring init_overrun lines; nullopt when they
// agree.
std::optional<log_difference> compare_decision_logs(const std::vector<std::string>& a,
                                                    const std::vector<std::string>& b);

}  // namespace coldbrew::models::sim
