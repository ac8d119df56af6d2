#pragma once
// GET /metrics: coldbrew's counters in the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/). Names follow Prometheus's
// conventions (https://prometheus.io/docs/practices/naming/): a `coldbrew_` prefix, base
// units (seconds, bytes), `_total` on counters. Served as
// `text/plain; version=0.0.4; charset=utf-8`.
//
//   coldbrew_requests_total{front,route,status}             counter (status "0": no answer)
//   coldbrew_request_duration_seconds{front,route}          histogram (receipt → last byte)
//   coldbrew_request_outcomes_total{front,outcome}          counter (served, injected_fault,
//                                                           handler_error, emulator_error)
//   coldbrew_invocations_total{function}                    counter
//   coldbrew_cold_starts_total{function}                    counter
//   coldbrew_init_duration_seconds{function}                histogram (Init Duration)
//   coldbrew_function_errors_total{function}                counter
//   coldbrew_function_timeouts_total{function}              counter
//   coldbrew_throttles_total{function}                      counter
//   coldbrew_invocation_waits_total{function}               counter (queued at max_environments)
//   coldbrew_evictions_total{function}                      counter
//   coldbrew_execution_environments{function,state}         gauge (state busy | idle; live is
//                                                           their sum)
//   coldbrew_init_overruns_total{function}                  counter (cold starts whose local
//                                                           init outlasted the model)
//   coldbrew_init_overrun_seconds_total{function}           counter (real time beyond it)
//   coldbrew_standby_environments{function,state}           gauge (state ready | starting)
//   coldbrew_faults_injected_total{kind,action}             counter
//   coldbrew_fault_rule_injected_total{rule}                counter
//   coldbrew_faults_missed_total{kind}                      counter (the handler answered
//                                                           before the injected kill)
//   coldbrew_faults_overflow_total                          counter (over max_active_faults)
//   coldbrew_faults_active                                  gauge
//   coldbrew_fault_decisions_total                          counter
//   coldbrew_dependency_connections_total{dependency}       counter
//   coldbrew_dependency_active_connections{dependency}      gauge
//   coldbrew_dependency_requests_total{dependency}          counter
//   coldbrew_dependency_bytes_total{dependency,direction}   counter (upstream | downstream)
//   coldbrew_dependency_upstream_failures_total{dependency} counter
//   coldbrew_dependency_connect_timeouts_total{dependency}  counter
//   coldbrew_dependency_idle_timeouts_total{dependency}     counter
//   coldbrew_dependency_faults_total{dependency,action}     counter
//   coldbrew_dependency_added_latency_seconds_total{dependency}  counter (modeled)
//
// Histogram buckets are latency_histogram::bounds_ms, in seconds.

#include "emulator/telemetry/request_stats.hpp"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coldbrew::telemetry {

// Writing the text format; usable for any metric family.
namespace prometheus {

inline constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

// A label value: backslash, double quote and line feed escaped as \\, \" and \n.
std::string escape_label_value(std::string_view v);
// HELP text: backslash and line feed escaped as \\ and \n.
std::string escape_help(std::string_view v);
// A sample value as the format writes it: integers in full, others in the shortest form that
// reads back exactly, and +Inf, -Inf, NaN.
std::string format_value(double v);

using labels = std::vector<std::pair<std::string, std::string>>;

class writer {
  public:
    // Starts a family: its # HELP and # TYPE lines (type: counter, gauge, histogram, summary,
    // untyped). Each name once per exposition.
    void family(std::string_view name, std::string_view type, std::string_view help);
    void sample(std::string_view name, const labels& l, double value);
    void sample(std::string_view name, const labels& l, std::uint64_t value);
    // name_bucket{…,le="…"} (cumulative, ending in le="+Inf"), name_sum, name_count; in
    // seconds.
    void histogram(std::string_view name, const labels& l, const latency_histogram& h);
    const std::string& text() const noexcept { return out_; }

  private:
    void write_labels(const labels& l);
    std::string out_;
};

} // namespace prometheus

// A function pool's counters (functions::pool_stats, which this layer does not see).
struct function_metrics {
    std::uint64_t invocations = 0;
    std::uint64_t cold_starts = 0;
    std::uint64_t function_errors = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t throttles = 0;
    std::uint64_t waits = 0;
    std::uint64_t evictions = 0;
    std::uint64_t environments = 0; // alive
    std::uint64_t busy = 0;         // alive and serving (or initializing for) an invocation
    // Cold starts whose local init outlasted the modeled Init Duration, and by how long in
    // all (real seconds).
    std::uint64_t init_overruns = 0;
    double init_overrun_seconds = 0;
    std::uint64_t standby = 0, standby_ready = 0;  // standby environments, and of those ready
};

// The fault decision point's counters (models::faults::fault_counters), by name.
struct fault_metrics {
    std::map<std::pair<std::string, std::string>, std::uint64_t> by_kind_action;
    std::map<std::string, std::uint64_t> by_rule;
    std::map<std::string, std::uint64_t> missed_by_kind;
    std::uint64_t overflow = 0;
    std::uint64_t active = 0;
    std::uint64_t decisions = 0;
};

// A state machine's counters (states::machine_stats, which this layer does not see).
struct state_machine_metrics {
    std::uint64_t started = 0, succeeded = 0, failed = 0, timed_out = 0, aborted = 0;
    std::uint64_t duplicate_starts = 0, retries = 0, caught = 0, state_transitions = 0;
};

struct metrics_input {
    const request_stats* requests = nullptr; // null: no request families' samples
    // front → outcome name → count: the app's outcome counters (admin::request_outcomes).
    std::map<std::string, std::map<std::string, std::uint64_t>> outcomes;
    std::map<std::string, function_metrics> functions; // by logical id
    fault_metrics faults;
    // The dependency proxies' counters as GET /proxies gives them:
    // {"<dependency>":{"connections":n,"active":n,"requests":n,"bytes_upstream":n,
    //  "bytes_downstream":n,"upstream_failures":n,"connect_timeouts":n,"idle_timeouts":n,
    //  "faults":{"<action>":n},"latency_ms":x,…}}; absent keys are skipped, null is none.
    nlohmann::json dependencies;
    // By state machine logical id: coldbrew_sfn_executions_total{state_machine,status},
    // coldbrew_sfn_retries_total, coldbrew_sfn_caught_total, …
    std::map<std::string, state_machine_metrics> state_machines;
};

// The whole exposition. Every family's # HELP and # TYPE are written even without samples,
// so a scraper sees the same set of names from the first scrape on.
std::string render_metrics(const metrics_input& in);

} // namespace coldbrew::telemetry
