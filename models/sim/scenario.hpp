#pragma once
// A what-if scenario: components (a gateway, functions, managed services, third parties), the
// calls between them, where retries live, and how requests arrive. Built by
// emulator/config/scenario_loader from YAML (or directly, in tests) and run by
// models/sim/engine.hpp. Pure data: no I/O.
//
// Semantics, shared by both engines (fast and discrete-event):
//  - A request is one pass of the top-level `flow`: its steps run in sequence; a `parallel`
//    step runs its branches at once and joins them (it fails when any branch fails); an
//    async call is handed off and does not delay or fail the request.
//  - A call to a component makes attempts, as its retry policy allows. One attempt:
//      throttle   no capacity (queue full, Lambda concurrency or scaling rate): fails at once;
//      error      with probability (1 - availability) × error share: the component answers
//                 an error after its latency draw, without running its body;
//      phantom    with probability (1 - availability) × phantom share: the request is lost
//                 (before its body runs: no side effect) and the caller waits for its timeout;
//      phantom_after  the same share split off by `phantom_after_share`: processed (body
//                 and side effects run) but the answer is lost;
//      otherwise  the component works for its latency draw (plus Init Duration on a cold
//                 start), then runs its body (its own `calls`, in order); it fails when a call
//                 fails (cause: the deepest failing component's).
//    The component's own `timeout_ms` ends its execution (like a Lambda timeout); the
//    call's timeout (the call site's, else the component's) is how long the caller waits.
//    A caller that gives up does not stop the work: side effects still happen (and a retry
//    may then duplicate them).
//  - A write that is not idempotent and takes effect more than once for one request, at one
//    call site, counts a duplicate side effect for every effect after the first.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "models/coldstart/cold_start.hpp"
#include "models/distribution/distribution.hpp"
#include "models/faults/faults.hpp"
#include "models/profile/profile.hpp"
#include "models/retry/async_retry.hpp"
#include "models/retry/backoff.hpp"

namespace coldbrew::models::sim {

inline constexpr double no_timeout = std::numeric_limits<double>::infinity();

// ---- retry policies ----------------------------------------------------------------------

struct retry_policy {
    enum class kind { none, client, step_functions, sdk_standard, lambda_async };
    kind type = kind::none;
    exponential_backoff client;                 // kind::client
    std::vector<sfn_retrier> step_functions;    // kind::step_functions (the Retry field)
    sdk_standard_retry sdk;                     // kind::sdk_standard
    async_retry_config lambda_async;            // kind::lambda_async (async calls only)
    // Which failures are retried (client and sdk_standard). The SDK retries throttles,
    // transient (5xx) errors and timeouts; a client usually the same.
    bool retry_errors = true, retry_timeouts = true, retry_throttles = true;

    // Attempts in all that this policy can make for a failure of every kind when nothing
    // else limits it (quota, deadlines), for the analytic cross-check; nullopt when it
    // differs by failure kind.
    std::optional<int> uniform_attempts() const;
};

struct step;

// ---- components --------------------------------------------------------------------------

enum class service_kind {
    api_gateway,     // prices: api_gateway REST or HTTP API per request
    lambda,          // a function: pool policy, cold starts, GB-s
    step_functions,  // standard (per state transition) or express (per request + GB-s)
    generic,         // any other managed service or a third party
};

struct failure_mix {
    // Shares of unavailability, summing to 1.
    double error = 1.0;
    double phantom = 0.0;        // lost before processing
    double phantom_after = 0.0;  // processed, answer lost
};

struct capacity {
    int concurrency = 0;                 // servers; 0 = unlimited (no queue)
    std::optional<int> queue;            // waiting room beyond concurrency; nullopt = unlimited
    bool limited() const noexcept { return concurrency > 0; }
};

struct key_space {
    // Keys 0 … count-1; `hot` of them take `hot_weight` times the traffic of each other key.
    int count = 1;
    int hot = 0;
    double hot_weight = 1.0;
    int shards = 1;  // key k lives on shard hash(k) % shards; each shard has the capacity
};

struct function_config {
    function_traits traits;              // runtime, architecture, package, memory, VPC, ext.
    std::optional<int> reserved_concurrency;
    int provisioned_concurrency = 0;
    int max_environments = 1000000;      // no local cap in a simulation
    // Fast-engine approximation when set: this share of invocations is cold (the pool policy
    // needs the discrete-event engine). Default there: the pool policy.
    std::optional<double> cold_start_share;
    // Memory → speed, the effect AWS Lambda Power Tuning measures: the component's latency is
    // what it takes at latency_at_memory_mb; `cpu_share` of it is CPU work, which takes
    // vcpus(latency_at_memory_mb) / vcpus(memory_mb) times as long at memory_mb, with
    // vcpus(m) = min(threads, memory m / 1,769 MB, 6) (models/compute/cpu.hpp: CPU is
    // allocated in proportion to memory). The rest (waiting on the network) does not change.
    // 0 (the default): latency does not depend on memory.
    double cpu_share = 0;
    int latency_at_memory_mb = 1769;
    int threads = 1;  // threads the CPU work can use
    // The function's own keep-alive and maximum lifetime (coldbrew.yaml `model.keep_alive`,
    // `model.max_lifetime`, as the live pool uses them); nullopt: the profile's.
    std::optional<distribution> keep_alive_ms;
    std::optional<distribution> max_lifetime_ms;
    // The function's own cold-start overrides (coldbrew.yaml `model.runtime`,
    // `model.init_duration`, `model.package_ms_per_mb`), as the live pool builds its model.
    cold_start_overrides cold_start;
};

struct step_functions_config {
    bool express = false;
    double memory_mb = 64;               // express billing memory
    std::optional<int> transitions;      // per execution; default: one per call step + 1
};

struct component {
    std::string name;
    std::string service;                 // the profile's availability key, or free text
    service_kind kind = service_kind::generic;
    double availability = 1.0;           // per attempt, in (0, 1]
    std::string availability_source;     // "profile aws-2026: lambda 99.95" | "scenario"
    failure_mix failures;
    distribution latency_ms;             // own work per attempt
    double timeout_ms = no_timeout;      // own execution limit
    capacity cap;
    std::optional<key_space> keys;
    bool writes = false;                 // has a side effect
    bool idempotent = true;              // a repeated write is harmless
    retry_policy retry;                  // how callers retry it, unless the call says
    std::optional<double> price_per_million_calls;  // any service, user-given
    bool http_api = false;               // api_gateway: HTTP API (else REST)
    function_config function;            // kind::lambda
    step_functions_config sfn;           // kind::step_functions
    std::vector<step> calls;      // the body, in order
};

struct cache_config {
    // A cache in front of the call: a hit answers with `latency_ms` and never reaches the
    // component. Either a fixed hit ratio, or a TTL cache whose per-key hit ratio follows
    // from the key's request rate: with Poisson requests at λ per key and a TTL of T, each
    // miss opens a window of T in which λT requests hit on average, so
    // hit = λT / (1 + λT) (Jung, Berger, Balakrishnan, "Modeling TTL-based Internet caches",
    // INFOCOM 2003). `instances` independent caches (one per function environment) each see
    // λ / instances.
    std::optional<double> hit_ratio;
    std::optional<double> ttl_ms;
    int instances = 1;
    distribution latency_ms;
};

// What the live emulator's fault rules see of a call (models/faults/faults.hpp,
// request_facts): a step that stands for a request the live emulator would decide (an API
// Gateway route invoking its function, an Invoke API call from one function to another, a
// Step Functions Task) carries them, and the scenario's fault_rules decide each of its
// attempts as the live decider does: same rule, same draw key "<rule>|<route>", and k the
// attempt's index among those the rule matched on that route.
struct live_request {
    faults::front where = faults::front::gateway;
    std::string route;          // "GET /hello", "$default", "Invoke Pay", "Checkout Charge"
    std::string function;       // logical id of the function it invokes
    std::string function_name;  // its deployed FunctionName
    std::string method, path;   // the request's (gateway), or the synthetic Invoke request's
    std::string state_machine, state_machine_name, state, state_path;  // states front
};

struct step {
    enum class kind { call, parallel };
    kind type = kind::call;
    // kind::call
    std::size_t component = 0;           // index into scenario::components
    std::optional<retry_policy> retry;   // overrides the component's
    std::optional<double> timeout_ms;    // overrides the component's, caller side
    std::optional<cache_config> cache;
    bool async = false;
    std::optional<live_request> live;    // the live request it stands for, when it is one
    // kind::parallel: each branch is a sequence of steps
    std::vector<std::vector<step>> branches;
};

// ---- arrivals ----------------------------------------------------------------------------

struct phase {
    double duration_ms = 0;
    double arrival_rate = 0;             // requests per second at the start
    std::optional<double> ramp_to;       // linear ramp to this rate at the end
    std::optional<std::uint64_t> arrival_count;  // instead of a rate: this many, evenly
    std::string name;
};

struct arrivals {
    // Either phases (one pass is one replication) or a constant rate forever.
    std::vector<phase> phases;
    double rate = 100;                   // requests per second, when phases is empty
    bool poisson = false;                // exponential gaps instead of even spacing
};

// ---- prices ------------------------------------------------------------------------------

// The profile's price table (models/profile/profile.hpp), with its date.
using prices = price_table;

// ---- entries -----------------------------------------------------------------------------

// One kind of request a stack serves (a route, or a function invoked directly): each arrival
// runs one entry's flow, chosen by weight from the request's own draws.
struct entry {
    std::string name;           // "GET /hello", "Invoke Pay"
    double weight = 1;          // relative share of arrivals, > 0
    std::vector<step> flow;
};

// ---- the scenario ------------------------------------------------------------------------

struct scenario {
    std::string name;
    std::string description;
    std::uint64_t seed = 1;
    std::uint64_t requests = 1000000;    // total to simulate (rounded up to whole passes of
                                         // phased arrivals)
    arrivals arrival;
    std::vector<component> components;
    std::vector<step> flow;              // what each request does (when entries is empty)
    std::vector<entry> entries;          // a mix of flows instead of one (stacks: per route)
    // Fault rules as the live decider holds them (coldbrew.yaml `faults.rules`, SLA rules):
    // they decide the attempts of steps that carry a live_request, with fault_seed.
    std::vector<faults::rule> fault_rules;
    std::uint64_t fault_seed = 1;
    double client_timeout_ms = 60000;    // the end user gives up (bounds phantoms)
    std::optional<double> slo;           // availability objective in (0, 1), for the budget
    enum class mode { automatic, fast, events } engine = mode::automatic;
    prices price;
    const profile* model_profile = nullptr;  // for cold starts and lifetimes; must outlive
};

}  // namespace coldbrew::models::sim
