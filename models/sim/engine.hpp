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
// Work is split into fixed chunks (fast: chunk_requests requests; events: one replication
// of the arrival process, a pass of its phases or des_chunk_requests requests at a constant
// rate, each starting from an empty, cold system with its own seed stream). Chunks do not
// depend on the thread count and every counter is an integer, so merging is exact: the same
// seed gives identical results with any number of threads.

#include <cstdint>
#include <functional>
#include <string>
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
};

// One entry's requests (scenario::entries), when the scenario has entries.
struct entry_counts {
    std::uint64_t requests = 0, successes = 0;
    histogram latency;                  // successful requests, end to end

    void merge(const entry_counts& o);
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
    std::vector<entry_counts> entries;         // in scenario order; empty without entries

    void merge(const run_result& o);
};

struct run_options {
    unsigned threads = 1;
    // Called from the calling thread about every 200 ms with requests done and the total.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

// Which engine `s` needs: "fast" or "events" (with scenario::mode::automatic, "events" when a
// component has a capacity limit or key shards, or a function has no cold_start_share).
std::string engine_for(const scenario& s);

// Runs `s`. Throws std::invalid_argument when the scenario cannot be run (a function's
// runtime missing from the profile, no profile for a function, a cycle in the calls, the
// fast engine forced on a scenario that needs events).
run_result run(const scenario& s, const run_options& opts = {});

}  // namespace coldbrew::models::sim
