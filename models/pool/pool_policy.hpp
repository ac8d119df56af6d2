#pragma once
// Which execution environment serves an invocation, when a new one starts (a cold start),
// when idle ones are evicted, and when Lambda throttles. Pure: time is an argument (ms on
// any monotonic scale), randomness comes from the counter-based random source, and every
// decision is reported as a pool_event for the decision log. The live emulator drives it
// with the real clock; the simulator with a virtual one.
//
// Placement, in order (AWS Lambda Developer Guide, "Lambda execution environment",
// "Configuring reserved concurrency", "Configuring provisioned concurrency",
// "Lambda scaling behavior"; shared spec model-data §4):
//  1. Concurrency: a function with ReservedConcurrentExecutions throttles when that many
//     invocations are in flight (Reason ReservedFunctionConcurrentInvocationLimitExceeded);
//     others share the account's unreserved concurrency (account limit minus every
//     reservation) and throttle when it is used up (ConcurrentInvocationLimitExceeded).
//  2. An idle provisioned-concurrency environment, most recently used first; then an idle
//     on-demand one, most recently used first (warm, no Init).
//  3. A new environment (cold start) if the scaling rate allows: a token bucket of
//     `scaling_environments` refilled continuously over `scaling_window_ms`, unused rate
//     not accruing beyond it (1,000 per 10 s per function since 2023-11-26). Out of tokens
//     → throttle, Reason FunctionInvocationRateLimitExceeded (AWS documents a 429 but not
//     its Reason for this case; this is coldbrew's choice).
//  4. The local cap `max_environments` (each environment is a process on this machine):
//     beyond it the invocation waits for a release instead of throttling, since AWS would
//     have started another environment. The caller queues it and calls acquire() again.
// Lifetime: an idle on-demand environment is evicted after a keep-alive drawn for each idle
// period; every environment is retired at a maximum lifetime drawn at its creation (after
// its current invocation, if busy). Provisioned environments are never evicted for idleness
// and are replaced when retired or lost.
// VPC before Hyperplane: when the cold_start_model has a legacy-eni ENI pool
// (cold_start_model::eni()), the policy keeps one eni_pool for the function; each created
// environment attaches to an ENI and its Init Duration's vpc term is that ENI wait
// (models/vpc/eni_pool.hpp), and every evicted or discarded environment detaches.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/coldstart/cold_start.hpp"
#include "models/distribution/distribution.hpp"
#include "models/random/random_source.hpp"
#include "models/vpc/eni_pool.hpp"

namespace coldbrew::models {

// Concurrency shared by all functions of one account and region. Default limit 1,000; at
// least 100 must stay unreserved (Lambda quotas; "Configuring reserved concurrency").
class account_concurrency {
public:
    explicit account_concurrency(int limit = 1000, int unreserved_minimum = 100);
    // Sets aside `n` for one function. Throws std::invalid_argument when that would leave
    // fewer than unreserved_minimum unreserved; the message gives the numbers.
    void reserve(int n);
    int limit() const noexcept { return limit_; }
    int reserved() const noexcept { return reserved_; }
    int unreserved_in_use() const noexcept { return unreserved_in_use_; }

private:
    friend class pool_policy;
    int limit_, unreserved_minimum_;
    int reserved_ = 0;
    int unreserved_in_use_ = 0;
};

struct pool_limits {
    std::optional<int> reserved_concurrency;  // ReservedConcurrentExecutions (0 = disabled)
    int provisioned_concurrency = 0;          // ProvisionedConcurrentExecutions
    int max_environments = 100;               // local cap on live environments (>= 1)
    double scaling_environments = 1000;       // scaling rate: new environments per window
    double scaling_window_ms = 10000;
};

struct lifetime_model {
    distribution keep_alive_ms;    // idle time before eviction, drawn per idle period
    distribution max_lifetime_ms;  // drawn once per environment
};

enum class placement_kind { warm, cold, throttle, wait };

struct placement {
    placement_kind kind = placement_kind::wait;
    std::uint64_t request_index = 0;  // this function's invocation count, from 0
    std::uint64_t environment = 0;    // warm / cold: the environment id
    bool provisioned = false;         // warm: served by a provisioned environment
    std::optional<init_draw> init;    // cold: the modeled Init Duration
    std::string throttle_reason;      // throttle: Lambda ThrottleReason
};

// One line of the decision log. Times are not part of the JSON, so two runs with the same
// seed and request sequence write identical lines.
struct pool_event {
    enum class kind {
        created,      // a new environment (cold start, or provisioned at start / replacement)
        reused,       // a warm environment served the request
        throttled,    // the request was throttled
        waited,       // the local cap made the request wait
        idle,         // the environment became idle; keep_alive_ms drawn
        evicted,      // removed: reason "keep-alive" or "max-lifetime"
        discarded,    // lost: crashed, timed out, failed init (reason from the caller)
    };
    kind type = kind::created;
    std::string function;
    std::optional<std::uint64_t> request_index;
    std::optional<std::uint64_t> environment;
    bool provisioned = false;
    std::optional<init_draw> init;            // created
    std::optional<eni_attachment> eni;        // created, legacy-eni VPC: its ENI and wait
    std::optional<double> keep_alive_ms;      // idle
    std::optional<double> max_lifetime_ms;    // created
    std::string reason;                       // throttled, evicted, discarded
    double at_ms = 0;                         // when, on the caller's clock (not in the JSON)

    // One JSON object, keys in a fixed order: {"event":"created","function":…,…}. A
    // legacy-eni environment's "eni":{"id":0,"created":true,"wait_ms":8123.40} follows
    // init_ms.
    std::string to_json() const;
};

// What the caller must do after expire(), release() or discard().
struct pool_action {
    enum class kind { evict, provision };
    kind type = kind::evict;
    std::uint64_t environment = 0;  // evict: which; provision: the new id to start
    std::string reason;             // evict: "keep-alive" | "max-lifetime"
    std::optional<init_draw> init;  // provision: its modeled Init Duration (not waited for)
};

class pool_policy {
public:
    // `function_key` keys every draw (use the function's logical name). `account`, `model`
    // and `rng` must outlive the policy. `on_event` receives every decision, in order.
    // Throws std::invalid_argument on inconsistent limits (provisioned > reserved, …).
    pool_policy(std::string function_key, pool_limits limits, lifetime_model lifetime,
                const cold_start_model& model, const random_source& rng,
                account_concurrency& account, std::function<void(const pool_event&)> on_event);

    // Provisioned environments to start now (call once, at start; a later call only tops up
    // to provisioned_concurrency).
    std::vector<pool_action> provision(double now_ms);

    // An invocation arrives. On warm/cold the environment is busy until release/discard.
    // Every new call takes the next request index, throttles and waits included. Call expire()
    // first: an idle environment already due for eviction at `now_ms` is never reused (and
    // not counted against max_environments), so the answer depends only on the times.
    // `retry_of`: the request_index of an invocation that had to wait and is placed again; it
    // keeps its index, so the decision log reads as one request (nullopt: a new invocation).
    placement acquire(double now_ms, std::optional<std::uint64_t> retry_of = std::nullopt);
    // The environment answered and is idle again. May retire it (max lifetime) or, for a
    // provisioned one, ask for its replacement. Throws std::invalid_argument when the
    // environment is unknown or not busy (a caller bug).
    std::vector<pool_action> release(std::uint64_t environment, double now_ms);
    // The environment is gone (crash, timeout reset, init failure, killed). `reason` goes to
    // the decision log. A provisioned environment is replaced. An unknown id (already
    // evicted) is ignored.
    std::vector<pool_action> discard(std::uint64_t environment, double now_ms,
                                     const std::string& reason);
    // Idle environments whose keep-alive or maximum lifetime has passed.
    std::vector<pool_action> expire(double now_ms);
    // The earliest time expire() has something to do; nullopt when nothing is idle.
    std::optional<double> next_expiry_ms() const;

    // The function's ENIs (legacy-eni VPC), else nullptr.
    const eni_pool* enis() const noexcept { return eni_ ? &*eni_ : nullptr; }

    std::size_t live() const noexcept { return environments_.size(); }
    std::size_t busy() const noexcept { return busy_; }
    std::size_t idle() const noexcept { return environments_.size() - busy_; }

private:
    struct environment_state {
        bool provisioned = false;
        bool busy = false;
        double created_ms = 0;
        double retire_at_ms = 0;      // created + max lifetime
        double last_used_ms = 0;
        double evict_at_ms = 0;       // idle: last_used + keep-alive (infinite if provisioned)
        std::uint64_t idle_periods = 0;
    };
    std::uint64_t create(bool provisioned, double now_ms, std::optional<std::uint64_t> request,
                         std::optional<init_draw>& init);
    void set_idle(std::uint64_t id, environment_state& e, double now_ms);
    void remove(std::uint64_t id, pool_event::kind why, const std::string& reason, double now_ms,
                std::vector<pool_action>& actions);
    void refill(double now_ms);
    void emit(pool_event e);
    void free_concurrency();

    std::string key_;
    pool_limits limits_;
    lifetime_model lifetime_;
    const cold_start_model& model_;
    const random_source& rng_;
    account_concurrency& account_;
    std::function<void(const pool_event&)> on_event_;
    std::optional<eni_pool> eni_;

    std::map<std::uint64_t, environment_state> environments_;
    std::size_t busy_ = 0;
    std::uint64_t next_environment_ = 0;
    std::uint64_t next_request_ = 0;
    double tokens_;
    double tokens_at_ms_ = 0;
    bool tokens_started_ = false;
};

// What `n` first requests arriving together against a cold stack get: a fresh policy (and
// account) for `model`, n acquires at t = 0 with room for all of them, no releases. Pure
// and deterministic for (rng seed, key). For `validate`'s account of the ENI model; also
// meaningful without a VPC (every request is then a cold start of its own).
struct cold_burst {
    int requests = 0;
    int cold_starts = 0;
    std::uint64_t enis_created = 0;  // 0 without a legacy-eni ENI pool
    double p50_ms = 0, p95_ms = 0, max_ms = 0;  // Init Duration of the cold starts, nearest rank
};
// Throws std::invalid_argument when n < 1.
cold_burst simulate_cold_burst(const cold_start_model& model, const random_source& rng,
                               const std::string& key, int n);

}  // namespace coldbrew::models
