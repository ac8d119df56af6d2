#pragma once
// Fitting a what-if to a recorded live run (models/sim/record.hpp): what each function's
// handler did, what it called, and how clients arrived, as the distributions and shares a
// stack's coldbrew.yaml `sim:` sections say by hand (emulator/config/stack.hpp, function_sim
// and stack_sim). `coldbrew sim PATH --fit FILE` runs the stack with them, at the recorded
// rate or any other (--rate-scale), at other memory sizes (--set, --sweep).
//
// Times: a record's times are modeled ms (real / time_scale); a handler's work and its
// clients' pace are real, so every fitted time is the recorded one × the record's time_scale.
//
// What is fitted, per function (the invocations its pool answered):
//  - latency: the handler's own work, per answered invocation: the delivery lag (how much
//    later than the model the event reached the handler) plus the duration from delivery to
//    answer, less the time the handler spent waiting on the functions it invoked
//    synchronously (the union of the child requests' intervals, from the child request to its
//    last invocation's answer, inside the invocation's window: parallel calls are not
//    subtracted twice). Dependency calls have no end in a record (a proxy's request turn is
//    recorded when it starts), so a handler's waits on dependencies stay in its latency. The
//    distribution is `percentiles(...)` through the sample's quantiles (type 7, linear between
//    order statistics) at p1, p10, p25, p50, p75, p90, p95, p99, and p99.9 with at least 1,000
//    invocations: a piecewise log-normal that keeps the sample's percentiles and continues
//    its tails. One distinct value: fixed(value).
//  - errors: the share of answered invocations that failed (a handler error or a crash).
//    Timeouts stay in the latency sample at the time they were cut, so the function's timeout
//    cuts the fitted latency as often.
//  - CPU: the share of the own work the runtime spent on CPU (cpu_fraction), from which the
//    caller derives how the latency changes with memory.
//  - calls: the sequence of requests an invocation made (Invoke API calls to the stack's
//    functions by logical id, synchronous or Event; dependency request turns by dependency),
//    in the order made; the sequence most invocations made is the function's `calls`, and
//    its share is reported. Step Functions Tasks are the state machine's, not a handler's.
//    `coldbrew up --record` names a parent on Invoke API calls only (run_recorder::parent_of),
//    so from a live record the calls are those; a record that names parents on dependency
//    turns gets them fitted too.
// Left out: invocations a fault rule cut (a crash whose process exit names an injected
// fault; the fitted run's rules decide those again), and invocations with no answer (the run
// stopped first).
//
// Arrivals: the client requests (no parent, not an authorizer's decision, gateway or Invoke
// API front) by route key, and their mean rate over the span from the first to the last;
// poisson when the gaps' coefficient of variation is 0.5 or more (a load tool's open arrivals),
// even spacing otherwise (a closed loop of clients).
//
// Fault rules: a record's admin API changes (recorded_rules) are applied to the rules the
// run started with, in order, giving the rules in effect when the record ends; so are seed
// changes.
//
// Pure: no clock, no I/O.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/distribution/distribution.hpp"
#include "models/faults/faults.hpp"
#include "models/sim/record.hpp"

namespace coldbrew::models::sim {

struct fitted_call {
    std::string target;       // a function's logical id, or a dependency's name
    bool dependency = false;  // a dependency's request turn (else an Invoke API call)
    bool async = false;       // an Event invocation
    auto operator<=>(const fitted_call&) const = default;
};

struct fitted_function {
    std::string function;                 // logical id
    std::uint64_t invocations = 0;        // answered invocations in the fit
    std::uint64_t injected = 0;           // left out: cut by a fault rule
    std::uint64_t unanswered = 0;         // left out: no answer before the record ended
    distribution latency_ms;              // own work per invocation (see above)
    std::string latency_text;             // latency_ms.to_string()
    double error_rate = 0;                // handler errors and crashes / invocations, in [0, 1)
    std::uint64_t errors = 0, crashes = 0, timeouts = 0;
    std::vector<fitted_call> calls;       // the most common sequence
    double calls_share = 1;               // share of invocations that made exactly `calls`
    double duration_p50_ms = 0;           // the recorded duration's median (delivery → answer)
    double lag_p50_ms = 0;                // the delivery lag's median
    double own_p50_ms = 0;                // the fitted latency's median
    // CPU time / own work, summed over the invocations whose CPU time the record has
    // (recorded_handler::cpu_ms); nullopt when none has. Under a CPU quota of q vCPUs a
    // handler's CPU work takes cpu / q of its time, so the share of its latency that is CPU
    // work is cpu_fraction / q (the caller knows q: the function's memory, the record's
    // cpu_limited).
    std::optional<double> cpu_fraction;
};

struct fitted_route {
    std::string route;           // route key as the fault rules see it ("POST /pay", "Invoke Pay")
    std::uint64_t requests = 0;  // client requests
};

struct fit_result {
    std::vector<fitted_function> functions;  // in the order the record first invoked them
    std::vector<fitted_route> routes;        // in the order the record first saw them
    std::uint64_t client_requests = 0;
    double span_ms = 0;                      // first to last client request
    double rate_per_s = 0;                   // (client_requests - 1) / span; 0 with fewer than 2
    double gap_cv = 0;                       // the gaps' coefficient of variation
    bool poisson = false;                    // gap_cv >= 0.5
};

// Fits `record`. A record with no client request and no answered invocation yields an empty
// result (the caller says there is nothing to fit).
fit_result fit_record(const run_record& record);

// The quantile q in [0, 1] of `sorted` (ascending, non-empty), linear between order
// statistics (R's type 7).
double sample_quantile(const std::vector<double>& sorted, double q);

// The distribution fitted to a sample of durations in ms (non-empty; negative values count
// as 0): percentiles through its quantiles, or fixed() when they do not increase.
distribution fit_latency(std::vector<double> sample);

// The fault rules in effect when `record` ends: `initial` (the rules the run started with,
// which POST /reset restores too) with the record's rule changes applied in order; `seed` is
// the record's seed, then any PUT /seed. A rule that does not parse throws faults::rule_error
// (the live admin API had accepted it: the record is from another coldbrew).
struct fitted_rules {
    std::vector<faults::rule> rules;
    std::uint64_t seed = 0;
    std::size_t changes = 0;  // rule and seed changes applied
};
fitted_rules rules_at_end(const std::vector<faults::rule>& initial, const run_record& record,
                          const faults::fault_registry& registry);

}  // namespace coldbrew::models::sim
