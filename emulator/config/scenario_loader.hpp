#pragma once
// `coldbrew sim` scenario files: YAML → models::sim::scenario. Every key is ours, so an unknown
// key is an error with a "did you mean"; every error is a config_error with file, line,
// column and key path. The schema (examples/whatif/README.md shows it in use):
//
//   name: compounding                  # default: the file name
//   description: "…"
//   seed: 42                           # default 1
//   requests: 1000000                  # default 1,000,000 (--requests overrides)
//   engine: auto | fast | events       # default auto (models/sim/engine.hpp)
//   client_timeout: 60s                # the end user gives up (default 60 s)
//   slo: 99.9%                         # for the error budget (optional)
//   profile: my-profile.yaml           # model profile (default: the built-in aws-2026)
//   arrivals:                          # one of rate, phases, bursts (default rate: 100)
//     rate: 100                        # requests per second, constant
//     poisson: true                    # exponential gaps (default: evenly spaced)
//     phases:                          # Artillery's: one pass is one replication
//       - {duration: 60s, arrivalRate: 5, rampTo: 50, name: warm-up}
//       - {duration: 1s, arrivalCount: 500}
//       - {pause: 5min}
//     bursts: {base_rate: 1, every: 10min, size: 500, over: 1s, count: 3}
//   components:
//     <name>:
//       service: api_gateway | lambda | step_functions | dynamodb | <any>   # required
//       availability: 99.95%           # default: the profile's SLA for `service`
//       failures: error | phantom | phantom-after | {error: 0.8, phantom: 0.2, phantom_after: 0}
//       latency: lognormal(median=8ms, p99=40ms)   # required; the distribution grammar
//       timeout: 3s                    # its own execution limit (lambda default 3 s,
//                                      # api_gateway 29 s REST / 30 s HTTP)
//       capacity: {concurrency: 10, queue: 100}     # queue omitted = unlimited
//       keys: {count: 100, hot: 1, hot_weight: 10, shards: 8}
//       writes: true                   # has a side effect …
//       idempotent: false              # … that a repeat duplicates
//       retry: <policy>                # how callers retry it (below); default none
//       price_per_million: 1.25        # USD per attempt × 10^6, for services the profile
//                                      # does not price
//       calls: [<step>, …]             # what it calls while handling a request, in order
//       api: rest | http               # api_gateway
//       runtime, architecture, memory_mb, package_mb, package_type, vpc, extensions,
//       reserved_concurrency, provisioned_concurrency, cold_start_share,
//       cpu_share: 0..1, latency_at_memory_mb: 1769, threads: 1              # lambda
//         (memory → speed: that share of `latency`, measured at latency_at_memory_mb, is
//          CPU work that runs in proportion to the vCPUs memory buys; models/sim/scenario.hpp)
//       workflow: standard | express, transitions, memory_mb                # step_functions
//   flow: [<step>, …]                  # what each request does (required)
//   variants:                          # runs of the same file with some values changed
//     - {name: no-retries, set: {components.db.retry: none}}
//
// <step>: a component name (a synchronous call), or
//   {call: <name>, retry: <policy>, timeout: 1s, async: true,
//    cache: {hit_ratio: 0.9 | ttl: 5s, instances: 10, latency: fixed(0.2ms)}}, or
//   {parallel: [<step or list of steps>, …]} (branches run at once and are joined).
// <policy>: none | client | sdk-standard | lambda-async | step-functions, or a mapping
//   {policy: client, max_attempts: 3, base: 100ms, cap: 20s, jitter: full|equal|decorrelated|none,
//    retry_on: [error, timeout, throttle]}
//   {policy: sdk-standard, max_attempts: 3, base: 1s, cap: 20s, quota: 500, retry_cost: 5,
//    timeout_cost: 10, retry_on: […]}
//   {policy: lambda-async, maximum_retry_attempts: 2, maximum_event_age: 6h}
//   {policy: step-functions, retriers: [{ErrorEquals: [States.ALL], IntervalSeconds: 1,
//    MaxAttempts: 3, BackoffRate: 2.0, MaxDelaySeconds: 10, JitterStrategy: FULL}]}
//   or the Retry list itself (Amazon States Language field names), which means step-functions.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "emulator/config/config_error.hpp"
#include "models/profile/profile.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::config {

// A value set by key path before the file is read: "components.db.retry.max_attempts" = "3".
// A path through a scalar turns it into a mapping ("retry: sdk-standard" + retry.max_attempts
// reads as {policy: sdk-standard, max_attempts: 3}); a missing key is added.
struct scenario_override {
    std::string path;
    std::string value;
    std::string origin = "command line";  // for error messages
};

// "path=value"; throws config_error (no position) when there is no '=' or no path.
scenario_override parse_override(const std::string& text, const std::string& origin);

struct scenario_variant {
    std::string name;  // "" when the file has no variants
    models::sim::scenario scenario;
    // The profile this variant's scenario points into (a variant may `set` its own).
    std::shared_ptr<const models::profile> profile;
};

struct loaded_scenario {
    std::shared_ptr<const models::profile> profile;  // the first variant's
    std::vector<scenario_variant> variants;          // at least one
};

// Reads and checks a scenario file; `overrides` are applied after each variant's own `set`.
// Throws config_error.
loaded_scenario load_scenario(const std::filesystem::path& file,
                              const std::vector<scenario_override>& overrides = {});
// The same from text in memory; `file` names it in errors (and anchors a relative profile).
loaded_scenario load_scenario_text(const std::string& text, const std::string& file,
                                   const std::vector<scenario_override>& overrides = {});

}  // namespace coldbrew::config
