#pragma once
// Private to models/sim: a scenario compiled into flat arrays for the engines' hot loops (no
// map lookups, no strings, no allocation per request), and the decisions both engines share.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "models/coldstart/cold_start.hpp"
#include "models/distribution/distribution.hpp"
#include "models/faults/faults.hpp"
#include "models/retry/backoff.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::models::sim::detail {

inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr std::uint32_t none = 0xffffffffu;

// Samples a latency distribution in the hot loop, where distribution::sample() (an inverse
// normal CDF refined with erfc, then exp) would dominate the run time. Log-normal, normal,
// percentiles and mixtures use a quantile table: 4,096 equal steps of u over
// [1/128, 127/128], interpolated linearly (relative error below 1e-4 for any practical
// log-normal: the error of linear interpolation, h²/8 · |x''/x|, is largest at the table's
// edges, where it is about 3e-5 for sigma 0.6); draws in the tails (1 in 64) use the exact
// quantile function, so p99.9 and beyond are exact. Fixed and exponential draws are closed
// form; uniform and empirical ones call distribution::sample().
struct sampler {
    enum class kind { fixed, table, exponential, other } type = kind::other;
    double a = 0;
    double scale = 1;  // every draw is multiplied by this (a function's memory → speed)
    const distribution* d = nullptr;
    std::vector<double> table;

    static constexpr int steps = 4096;
    static constexpr double lo = 1.0 / 128, hi = 127.0 / 128;

    void set(const distribution& dist);
    double operator()(draw& r) const { return scale == 1 ? unscaled(r) : scale * unscaled(r); }
    double unscaled(draw& r) const {
        switch (type) {
        case kind::fixed: return a;
        case kind::exponential: return -a * std::log1p(-r.uniform());
        case kind::table: {
            const double u = r.open_uniform();
            if (u < lo || u >= hi) return d->quantile(u);
            const double x = (u - lo) * (steps / (hi - lo));
            const auto i = static_cast<std::size_t>(x);
            const double f = x - static_cast<double>(i);
            return table[i] + f * (table[i + 1] - table[i]);
        }
        case kind::other: break;
        }
        return d->sample(r);
    }
};


struct range {
    std::uint32_t first = 0, count = 0;
};

struct c_step {
    bool parallel = false;
    std::uint32_t hop = 0;  // call
    range branches;         // parallel: into compiled::branches
};

struct c_cache {
    double hit = 0;                 // without keys
    std::vector<double> key_hit;    // per key, when the component has keys
    const distribution* latency = nullptr;
    sampler latency_sampler;
};

struct c_hop {
    std::uint32_t comp = 0;
    std::uint32_t parent = none;    // the component whose body makes this call; none = client
    const retry_policy* retry = nullptr;
    double timeout_ms = inf;        // caller side, always finite after compile
    std::uint32_t cache = none;
    bool async = false;
    std::uint32_t quota = none;     // sdk_standard: index of this site's retry quota
    // A step that stands for a live request (step::live): its index into compiled::live
    // (none otherwise), and the fault rules its static facts match, in rule order (a range
    // of compiled::rule_refs; empty when no rule can match it).
    std::uint32_t live = none;
    range rules;
};

struct compiled;

// A fault rule that can match a hop's live request: everything faults::matches checks was
// checked at compile time (it depends only on the request's facts); what is left per attempt
// is the window, the count k, the selector and the probability.
struct c_rule_ref {
    std::uint32_t rule = 0;   // index into scenario::fault_rules
    std::uint32_t slot = 0;   // its (rule, route) count and draw key: compiled::fault_keys
    bool windowed = false;
};

// One hop's live request as the decider sees it (views into the scenario's live_request).
struct c_live {
    const live_request* src = nullptr;
    faults::request_facts facts;
};

// What an attempt does under the plan of a fault rule (faults::plan, mapped once per attempt
// to the sim's outcomes; see engine.hpp).
struct sim_fault {
    enum class kind : std::uint8_t {
        pass,         // runs normally (also slow_response: no payload sizes are simulated)
        lost_before,  // never runs; the caller waits its timeout (or learns at once: reset)
        lost_after,   // runs; the answer is lost
        fail_now,     // answered at once with `cause` (gateway_error, handler_error, throttle,
                      // reset); no invocation
        exit,         // runs, and is killed `kill_after_ms` after delivery (after Init)
    };
    kind type = kind::pass;
    bool at_once = false;        // lost_*: the client sees a reset instead of waiting
    int cause = 0;               // fail_now
    double kill_after_ms = 0;    // exit
    double delay_ms = 0;         // waited before the attempt
    std::uint32_t rule = none;   // the rule that fired (index into scenario::fault_rules)
};

// The per-run (chunk or replication) state of the fault decisions: a run is a fresh live run
// of the stack, so counting starts at k = 0 and the seed is the scenario's fault_seed for
// chunk 0 and one derived from (fault_seed, chunk) for every later chunk.
struct fault_state {
    random_source rng{1};
    std::vector<std::uint64_t> seen;  // per slot: requests matched so far
    faults::plan plan;                // the last plan, reused
    void start(const compiled& m, std::uint64_t chunk);
};

struct c_comp {
    const component* src = nullptr;
    service_kind kind = service_kind::generic;
    double p_error = 0, p_phantom = 0, p_phantom_after = 0;  // cumulative thresholds on u
    const distribution* latency = nullptr;
    sampler latency_sampler;
    double timeout_ms = inf;
    range body;
    bool writes = false, duplicates_count = false;
    // Step Functions error names an error / a throttle of this component raises.
    std::uint32_t sfn_error_bits = sfn_task_failed, sfn_throttle_bits = sfn_task_failed;
    // keys
    std::vector<double> key_cdf;    // cumulative weights, normalised; empty = no keys
    std::vector<std::uint32_t> key_shard;
    // capacity: slots cap_first … cap_first + shards - 1 (none = unlimited)
    std::uint32_t cap_first = none;
    std::uint32_t shards = 1;
    // functions
    std::unique_ptr<cold_start_model> cold;
    double cold_share = -1;         // fast engine; < 0: the pool policy (events engine)
    int memory_mb = 128;
    std::uint32_t function = none;  // index among functions (events engine pools)
    // step functions
    std::uint64_t base_transitions = 0;
};

struct compiled {
    const scenario* s = nullptr;
    std::vector<c_comp> comps;
    std::vector<c_hop> hops;
    std::vector<c_step> steps;
    std::vector<range> branches;
    std::vector<c_cache> caches;
    range flow;
    // scenario::entries: each entry's flow, and the cumulative share of arrivals up to and
    // including it (the last is exactly 1). Empty: every request runs `flow`.
    std::vector<range> entry_flows;
    std::vector<double> entry_cdf;
    std::uint32_t quota_count = 0;
    std::vector<sdk_standard_retry> quota_config;
    std::uint32_t capacity_slots = 0;
    std::vector<int> slot_concurrency;
    std::vector<long long> slot_queue;  // -1 = unlimited
    std::vector<std::uint32_t> functions;  // component index per function
    double mean_rate_per_s = 0;
    retry_policy no_retry;
    // Fault rules (scenario::fault_rules) for the hops that carry a live request.
    faults::fault_registry fault_kinds;    // the built-in kinds, for each rule's fronts
    std::vector<c_live> live;
    std::vector<c_rule_ref> rule_refs;
    std::vector<std::string> fault_keys;   // per slot: "<rule>|<route>", the draw key
    // A rule that can match some hop counts requests (nth, every_nth, first) or has a window:
    // its decisions depend on the order of attempts in time (the events engine only). The
    // name of the first such rule, "" when none.
    std::string ordered_rule;
    const std::function<void(const fault_record&)>* on_fault = nullptr;  // run_options
};

// Throws std::invalid_argument (cycles, unknown runtimes, …).
void compile(const scenario& s, compiled& out);

std::uint32_t draw_key(const c_comp& c, double u);

// The fault decision for one attempt at hop `h` at `now_ms` (since the chunk began): the hop's
// rules in order through faults::in_window, faults::fires and faults::apply, exactly as
// faults::decider::decide takes them (no cap on active faults: the simulation has none).
// Counts the decision in out.faults (decisions, fired by rule and action) and reports it to
// on_fault when set. Returns the mapped action; rule == none when nothing fired.
sim_fault decide_fault(const compiled& m, const c_hop& h, fault_state& fs, double now_ms,
                       std::uint64_t chunk, run_result& out);
// A function_exit's outcome at the end of its execution: killed (the fault reached the
// caller) or answered first (missed, as the live decider counts it).
void count_exit(const compiled& m, std::uint32_t rule, bool killed, run_result& out);
// The entry an arrival runs, from its own draw: a pure function of (seed, `key`, `index`),
// independent of every other draw of the request, so a scenario without entries draws
// nothing here and keeps its numbers. `m` must have entries.
std::uint32_t pick_entry(const compiled& m, const random_source& rng, std::string_view key,
                         std::uint64_t index);

// Retry bookkeeping for one call across its attempts.
struct retry_state {
    int attempts = 0;           // made so far
    double previous_delay_ms = 0;
    int sfn_count[8] = {};
    int quota_cost = 0;         // tokens the last retry took
    int function_errors = 0, throttles = 0;
};

// Whether the call retries after a failed attempt with `c` (a cause), and after how long.
// `age_ms` is the time since the call began (Lambda async: event age).
bool next_retry(const retry_policy& p, const c_comp& target, retry_state& st, int c,
                retry_quota* quota, double u, double age_ms, double& delay_ms);

}  // namespace coldbrew::models::sim::detail
