#pragma once
// Private to models/sim: a scenario compiled into flat arrays for the engines' hot loops (no
// map lookups, no strings, no allocation per request), and the decisions both engines share.

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "models/coldstart/cold_start.hpp"
#include "models/distribution/distribution.hpp"
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
};

// Throws std::invalid_argument (cycles, unknown runtimes, …).
void compile(const scenario& s, compiled& out);

std::uint32_t draw_key(const c_comp& c, double u);

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
