#pragma once
// Runs a scenario for many requests on a virtual clock and returns mergeable counts.
//
// Two engines, chosen per scenario (scenario::engine, `automatic` by default):
//  - fast: no component has a capacity limit and no function needs the pool policy, so
//    requests do not interact; a request's outcome is a pure function of (seed, request
//    index), apart from the SDK retry quota, which is one bucket per call site per chunk.
//  - events: a discrete-event simulation (a binary heap of events on a virtual clock) with
//    queues at limited components and the live emulator's pool policy for functions (cold
//    starts, keep-alive, concurrency throttles).
// The fast engine approximates where it has no per-environment state: a function's cold
// starts are a coin flip on its cold_start_share, not the pool policy (keep-alive,
// concurrency, scaling rate, provisioned environments), and the report says so
// ("approximations"). The events engine is the reference; engine_for() picks it whenever a
// function has no cold_start_share. tests/unit/sim/engine_test.cpp checks that both agree,
// where both apply, within the bands it states.
//
// Fault rules (scenario::fault_rules) decide every attempt of a step that carries a live
// request (step::live), through the same functions as the live decider (models/faults:
// faults::matches, in_window, fires, apply), in rule order, with the same draw key
// "<rule>|<route>" and k = the attempt's index among those the rule matched on that route
// (a retry is a new request: k advances on each attempt). What is matched once, at compile
// time: front, function / FunctionName, route, method, path, state machine and state;
// header matchers never match (a simulated request has no headers). Not simulated: the cap
// on active faults (max_active_faults; no overflow here), and the dependency front.
//  - A chunk (fast) or replication (events) is one fresh live run: counting starts at k = 0
//    and the fault seed is scenario::fault_seed for chunk 0 and one derived from
//    (fault_seed, chunk) for each later one, so chunks are independent samples and a run of
//    one replication decides exactly as a live run seeded with fault_seed given the same
//    request sequence. nth / every_nth / first therefore apply per replication, and a
//    window is virtual time since the replication began.
//  - Events engine: attempts are decided in event order (the order a live stack sees them).
//    Fast engine: requests are processed one by one, whole, per chunk, out of time order, so
//    a rule that counts requests (nth, every_nth, first) or has a window needs the events
//    engine: engine_for() chooses it, and a forced fast engine refuses such a scenario.
//    Probability rules run in both; the fast engine's report names its approximation.
//  - A plan maps to outcomes as the live executor acts on it: a delay is waited before the
//    attempt (whose timeout starts after it; the caller's own deadline does not move);
//    phantom_before: never reaches the component, the caller waits its timeout (client
//    "hang" alike; "reset": the caller learns at once, cause phantom); phantom_after: the
//    component runs (side effects happen) and whatever it answers is lost (timeout, or at
//    once with "reset"); gateway_error (429: throttle, else error), handler_error (error),
//    throttle (throttle), reset (error): answered at once, nothing runs; function_exit: the
//    function runs and is killed kill_after_ms after delivery (after Init): an error, and in
//    the events engine its environment is discarded (pool_policy::discard, as live), unless
//    it answered first (counted as missed, as the live decider does); slow_response: decided
//    and counted, then served as usual (no payload sizes are simulated). After the plan, a
//    component's own availability draw applies as for any attempt (handler errors).
//  - Plain scenarios (no live steps) draw availability, errors and phantoms from the
//    components' own thresholds, unchanged: routing them through the rules' draws would
//    change every existing result for the same seed.
// Work is split into fixed chunks (fast: chunk_requests requests; events: one replication
// of the arrival process, a pass of its phases or des_chunk_requests requests at a constant
// rate, each starting from an empty, cold system with its own seed stream). Chunks do not
// depend on the thread count and every counter is an integer, so merging is exact: the same
// seed gives identical results with any number of threads.
//
// A run can be split further, across processes or machines: run_options::shard_index and
// shard_count pick the chunks of one part (chunk i belongs to part i mod shard_count), and
// run_result::merge of every part's result gives the whole run's result exactly
// (models/sim/part.hpp writes and reads results as JSON for that).

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "models/sim/histogram.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::models::sim {

inline constexpr std::uint64_t chunk_requests = 1ull << 16;
inline constexpr std::uint64_t des_chunk_requests = 1ull << 17;

enum cause : int { cause_error = 0, cause_timeout = 1, cause_throttle = 2, cause_phantom = 3 };
inline constexpr int cause_count = 4;
const char* cause_name(int c);  // "error", "timeout", "throttle", "phantom"

struct component_counts {
    std::uint64_t calls = 0, calls_ok = 0;          // calls (each with its retries)
    std::uint64_t attempts = 0;                     // tries that reached the component
    std::uint64_t attempt_failures[cause_count] = {};  // by cause, as the caller saw them
    std::uint64_t root_causes[cause_count] = {};    // failed requests whose root cause it was
    std::uint64_t invocations = 0, cold_starts = 0; // functions
    std::uint64_t effects = 0, duplicates = 0;      // side effects of writes
    std::uint64_t billed_mb_ms = 0;                 // functions: memory MB × billed ms
    std::uint64_t init_ms_sum = 0;                  // functions: Init Duration, ms (rounded)
    std::uint64_t transitions = 0;                  // Step Functions standard
    std::uint64_t express_billed_mb_100ms = 0;      // Step Functions express: 64 MB × 100 ms units
    std::uint64_t executions = 0;                   // Step Functions: started executions
    std::uint64_t cache_lookups = 0, cache_hits = 0;
    std::uint64_t admitted = 0, queued = 0;         // capacity: admitted, of which waited
    std::uint64_t queue_wait_us = 0;                // sum of waits, µs
    std::uint64_t async_events = 0, async_delivered = 0, async_given_up = 0;
    std::uint64_t provisioned_mb_ms = 0;            // provisioned concurrency configured
    histogram latency;                              // successful calls, caller's view

    void merge(const component_counts& o);
    bool operator==(const component_counts&) const = default;
};

// What the scenario's fault rules did (scenario::fault_rules, deciding the attempts of steps
// that carry a live request), as the live run summary counts it. Integers only, so merging
// is exact.
inline constexpr std::size_t fault_action_count = std::variant_size_v<faults::action>;
struct fault_counts {
    std::uint64_t decisions = 0;  // attempts decided by the rules
    // fired[rule * fault_action_count + action index (faults::action::index())]: faults that
    // reached the caller, by rule (scenario order) and action. A function_exit is counted
    // when its execution ends: here when it was killed, in `missed` when the function
    // answered first (the live decider's missed()).
    std::vector<std::uint64_t> fired;
    std::vector<std::uint64_t> missed;  // per rule

    void merge(const fault_counts& o);
    std::uint64_t total() const;        // fired, all rules and actions
    bool operator==(const fault_counts&) const = default;
};

// One entry's requests (scenario::entries), when the scenario has entries.
struct entry_counts {
    std::uint64_t requests = 0, successes = 0;
    histogram latency;                  // successful requests, end to end

    void merge(const entry_counts& o);
    bool operator==(const entry_counts&) const = default;
};

struct run_result {
    std::string engine;                 // "fast" | "events"
    std::uint64_t requests = 0, successes = 0;
    std::uint64_t requests_with_cold_start = 0;
    std::uint64_t simulated_us = 0;     // virtual time covered (events engine)
    std::uint64_t chunks = 0;
    histogram latency;                  // successful requests, end to end
    histogram latency_all;              // every request, failed ones at the time they failed
    std::vector<component_counts> components;  // in scenario order
    fault_counts faults;                // empty vectors when the scenario has no fault rules
    std::vector<entry_counts> entries;         // in scenario order; empty without entries

    void merge(const run_result& o);
    bool operator==(const run_result&) const = default;
};

// One attempt decided by the fault rules, for a decision log (run_options::on_fault).
struct fault_record {
    std::uint64_t chunk = 0;        // the chunk (fast) or replication (events) it ran in
    double at_ms = 0;               // events: virtual time since the replication began;
                                    // fast: since its request began
    const live_request* request = nullptr;  // the step's live request (in the scenario)
    // As faults::decider::decide gives it for the same request sequence: rule, kind, k, plan
    // and log line when a rule fired; rule "" (and no line) when none did. Never an
    // overflow: the simulation has no cap on active faults.
    faults::decision decision;
};

struct run_options {
    unsigned threads = 1;
    // Called from the calling thread about every 200 ms with requests done and the total.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
    // Called for every attempt the fault rules decide, on the thread that runs its chunk
    // (with threads > 1, calls from different chunks interleave: order by chunk). Costs a
    // decision object and a log line per call: for tests and decision logs, not for large runs.
    std::function<void(const fault_record&)> on_fault = nullptr;
    // Runs only the chunks of part shard_index of shard_count: chunk i when
    // i mod shard_count == shard_index. Round robin rather than contiguous ranges, so that every
    // part gets a fair share of the shorter last chunk and of any slow replications. The split
    // is by chunk index, so by seed stream: never by timing or by the thread count.
    std::uint64_t shard_index = 0, shard_count = 1;
};

// Which engine `s` needs: "fast" or "events" (with scenario::mode::automatic, "events" when a
// component has a capacity limit or key shards, or a function has no cold_start_share).
std::string engine_for(const scenario& s);

// Runs `s` (or the part of it opts.shard_index/shard_count names: a part with no chunk returns
// empty counts). Throws std::invalid_argument when the scenario cannot be run (a function's
// runtime missing from the profile, no profile for a function, a cycle in the calls, the
// fast engine forced on a scenario that needs events) or the shard is not 0 <= index < count.
run_result run(const scenario& s, const run_options& opts = {});

}  // namespace coldbrew::models::sim
