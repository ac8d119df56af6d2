#pragma once
// The block `coldbrew up` prints when it stops, in the spirit of Artillery's end-of-run
// report (http.codes.200, http.request_rate, http.response_time min/median/p95/p99/max):
// the run's duration, then for all fronts together (when more than one had requests) and for
// each front that had requests, the requests and mean rate (over the span from the first
// receipt to the last answer), response time, status codes, outcomes and cold starts; then
// the faults injected by kind and the Init Duration of each function's cold starts.
//
//   coldbrew: run summary (12.4 s)
//     all fronts
//       requests ............ 120 (9.7/sec mean)
//       response time ....... min 1.2, median 3.4, p95 12.0, p99 40.1, max 812.0 ms
//       status codes ........ 200: 110, 502: 2, none: 8
//       outcomes ............ 110 served, 2 injected faults, 0 handler errors,
//                             0 emulator errors, 8 clients gone
//       cold starts ......... 3 (2.5% of requests)
//     gateway
//       …
//     faults injected ....... delay: 1, phantom: 2
//                             (then "; missed: N (the handler answered before the injected
//                             kill)" when N > 0)
//     Init Duration
//       Hello ............... 3 cold starts, median 812.0, max 1020.0 ms
//     local init overran the model
//       Hello ............... 2 of 3 cold starts, by 402.0 ms at most (610.0 ms in all);
//                             --standby 3 would have covered the largest burst
//
// Response times are real (wall) time from receipt to the last byte sent; "none" counts
// requests that got no status (reset, held unanswered, client gone). Percentiles are within
// 0.4% (latency_histogram).

#include "emulator/telemetry/request_stats.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace coldbrew::telemetry {

struct run_summary_input {
    double run_ms = 0;       // from the start of `up` to its stop, real
    double time_scale = 1.0; // said when not 1: injected waits ran scaled
    const request_stats* requests = nullptr;
    // The fault decision point's counters: faults injected by kind, those a rule chose but
    // max_active_faults held back, and those that did not happen (fault_counters::missed).
    std::map<std::string, std::uint64_t> faults_by_kind;
    std::uint64_t fault_overflow = 0;
    std::uint64_t fault_missed = 0;
    // When the counters were last reset (POST /counters/reset, POST /reset), in ms of the
    // run: everything the summary counts is from then on, and its first line says so.
    std::optional<double> counters_reset_at_ms;
    // Per function, the cold starts whose local init outlasted the modeled Init Duration
    // (functions::pool_stats); functions without any are left out of the block.
    struct init_overruns {
        std::uint64_t cold_starts = 0;
        std::uint64_t overruns = 0;
        double overrun_ms = 0, overrun_max_ms = 0;  // real
        std::uint64_t burst_cold_starts_max = 0;    // the largest burst's cold starts
        std::size_t standby = 0;                    // standby environments the pool kept
    };
    std::map<std::string, init_overruns> overruns;
};

// The block, every line ending in '\n'. Fronts are named "gateway" and "invoke API"
// (request_record::front "invoke"); others as recorded.
std::string render_run_summary(const run_summary_input& in);

} // namespace coldbrew::telemetry
