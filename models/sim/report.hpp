#pragma once
// What a run means: availability with a confidence interval and in nines, the error budget,
// latency percentiles, failures by cause, retry amplification, duplicate side effects, the
// cold-start share and the cost per million requests, each beside an analytic cross-check
// where one is exact. One JSON document (keys in a fixed order, so the same counts print the
// same bytes); the CLI's text and HTML reports and its --ensure gates read it.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/sim/engine.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::models::sim {

// ---- analytic identities ---------------------------------------------------------------------

// Erlang C: the probability that an arrival waits in an M/M/c queue with offered load
// a = λ/μ (in servers), c servers, a < c (A. K. Erlang, 1917; computed through the Erlang B
// recursion B(k) = a·B(k-1) / (k + a·B(k-1)), C = B / (1 - (a/c)(1 - B))).
// Returns 1 when a >= c (the queue grows without bound).
double erlang_c(int c, double a);
// Mean wait in queue of M/M/c: C(c, a) / (c·μ - λ), in the unit of 1/μ; infinity when
// λ >= c·μ.
double mm_c_mean_wait(int c, double lambda, double mu);

// Availability of one call that makes up to k independent attempts, each available with
// probability a: 1 - (1 - a)^k.
double retried_availability(double a, int k);

struct analytic_availability {
    std::optional<double> value;   // nullopt when a policy retries some failures only
    std::string assumptions;       // what must hold for the figure to be exact
};

// The flow's availability (a mix of entries: each entry's, weighted by its share) from the components' availabilities, cache hit ratios and retry
// attempt counts, assuming independent attempts and that no timeout, throttle, retry quota
// or deadline cuts an attempt or a retry: a call is 1-(1-a·Π body)^k, a sequence the
// product of its calls, a cache h + (1-h)·call. Async calls do not count.
analytic_availability analytic_flow_availability(const scenario& s);

// ---- the report -------------------------------------------------------------------------------

// The whole report as JSON. Shape (units in the names):
// { scenario, description, seed, engine, requests, simulated_s,
//   availability: {percent, ci95_percent: [lo, hi], nines, failed_requests,
//                  analytic: {percent, assumptions, within_ci}},
//   error_budget: {downtime_minutes_per_30_days, slo_percent?, budget_minutes?, consumed_percent?},
//   latency_ms: {p50, p90, p95, p99, p99.9, mean, max}          (successful requests)
//   entries?: [{name, weight_percent, requests, availability_percent, failed_requests,
//               latency_ms: {p50, p95, p99}}]   (scenario::entries, when more than one)
//   failures: [{component, cause, requests, percent_of_requests}]  (root causes)
//   retry_amplification, duplicates, cold_start_share: {invocations, requests},
//   cost: {per_million_requests, prices_date, region, items: [{item, per_million_requests}]},
//   approximations?: [{model, components?, note}]   (fast engine: "cold_start_share" when it
//                 drew cold starts as a share, not by the pool policy; "fault_rule_order"
//                 when fault rules counted requests per chunk; the events engine is the
//                 reference)
//   faults?: {decisions, injected, by_kind, by_action, by_rule,       (scenario fault_rules)
//             by_kind_action: [{kind, action, count}], missed, missed_by_kind,
//             not_simulated?: {slow_response}}
//   components: [{name, service, availability_percent, availability_source, calls,
//                 attempts, calls_per_request, attempts_per_call, failed_calls,
//                 attempt_failures: {error, timeout, throttle, phantom}, latency_ms: {…},
//                 cold_starts?, cold_start_share?, init_ms_mean?, effects?, duplicates?,
//                 cache_hit_ratio?, queue?: {admitted, waited_share, wait_mean_ms,
//                 erlang_c?: {servers, arrival_rate_per_s, service_rate_per_s, utilisation,
//                 wait_share, wait_mean_ms}}, async?: {events, delivered, given_up}}],
//   histogram: [[lo_ms, hi_ms, count], …]                          (successful requests)
// }
nlohmann::ordered_json report_json(const scenario& s, const run_result& r);

// A number for --ensure: "availability" (percent), "p50" … "p99.9" (ms), "mean" (ms),
// "duplicates", "cost_per_million", "cold_start_share" (percent of invocations),
// "retry_amplification", "nines". nullopt for an unknown name.
std::optional<double> report_metric(const nlohmann::ordered_json& report, const std::string& name);

}  // namespace coldbrew::models::sim
