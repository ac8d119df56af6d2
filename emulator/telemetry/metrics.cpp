#include "emulator/telemetry/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace coldbrew::telemetry {

namespace prometheus {

std::string escape_label_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string escape_help(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    // Whole numbers up to 2^53 without an exponent or a fraction ("3", not "3e+00").
    if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(v));
        if (ec == std::errc{}) return std::string(buf, end);
    }
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v); // shortest round-trip form
    return ec == std::errc{} ? std::string(buf, end) : std::string("NaN");
}

void writer::family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += escape_help(help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
}

void writer::write_labels(const labels& l) {
    if (l.empty()) return;
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : l) {
        if (!first) out_ += ',';
        first = false;
        out_ += k;
        out_ += "=\"";
        out_ += escape_label_value(v);
        out_ += '"';
    }
    out_ += '}';
}

void writer::sample(std::string_view name, const labels& l, double value) {
    out_ += name;
    write_labels(l);
    out_ += ' ';
    out_ += format_value(value);
    out_ += '\n';
}

void writer::sample(std::string_view name, const labels& l, std::uint64_t value) {
    out_ += name;
    write_labels(l);
    out_ += ' ';
    out_ += std::to_string(value); // exact beyond 2^53, where a double is not
    out_ += '\n';
}

void writer::histogram(std::string_view name, const labels& l, const latency_histogram& h) {
    const std::string base(name);
    labels with_le = l;
    with_le.emplace_back("le", "");
    for (std::size_t i = 0; i < latency_histogram::bounds_ms.size(); ++i) {
        with_le.back().second = format_value(latency_histogram::bounds_ms[i] / 1000.0);
        sample(base + "_bucket", with_le, h.cumulative_count(i));
    }
    with_le.back().second = "+Inf";
    sample(base + "_bucket", with_le, h.count());
    sample(base + "_sum", l, h.sum_ms() / 1000.0);
    sample(base + "_count", l, h.count());
}

} // namespace prometheus

namespace {

using prometheus::labels;
using prometheus::writer;

// A non-negative integer member of a JSON object; nullopt when absent or not a number.
std::optional<std::uint64_t> count_of(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    if (it->is_number_unsigned()) return it->get<std::uint64_t>();
    if (it->is_number_integer())
        return static_cast<std::uint64_t>(std::max<std::int64_t>(0, it->get<std::int64_t>()));
    if (it->is_number_float()) return static_cast<std::uint64_t>(std::max(0.0, it->get<double>()));
    return std::nullopt;
}

void request_families(writer& w, const request_stats* rs) {
    w.family("coldbrew_requests_total", "counter",
             "Client requests by front end, route and status code sent (0: reset, or no answer "
             "before the connection closed).");
    if (rs)
        for (const auto& [key, route] : rs->routes())
            for (const auto& [status, n] : route.by_status)
                w.sample("coldbrew_requests_total",
                         {{"front", key.first},
                          {"route", key.second},
                          {"status", std::to_string(status)}},
                         n);

    w.family("coldbrew_request_duration_seconds", "histogram",
             "Real time from a request's receipt to the last byte of its answer handed to the "
             "socket (or to the reset or close that ended it).");
    if (rs)
        for (const auto& [key, route] : rs->routes())
            w.histogram("coldbrew_request_duration_seconds",
                        {{"front", key.first}, {"route", key.second}}, route.latency);
}

void outcome_family(writer& w, const metrics_input& in) {
    w.family("coldbrew_request_outcomes_total", "counter",
             "How client requests ended: served, injected_fault, handler_error or "
             "emulator_error (exactly one per request).");
    for (const auto& [front, by_outcome] : in.outcomes)
        for (const auto& [outcome, n] : by_outcome)
            w.sample("coldbrew_request_outcomes_total", {{"front", front}, {"outcome", outcome}},
                     n);
}

void function_families(writer& w, const metrics_input& in) {
    struct counter {
        const char* name;
        const char* help;
        std::uint64_t function_metrics::*field;
    };
    static constexpr counter counters[] = {
        {"coldbrew_invocations_total", "Invocations accepted by the function's pool.",
         &function_metrics::invocations},
        {"coldbrew_cold_starts_total", "Invocations that waited for a new execution environment.",
         &function_metrics::cold_starts},
    };
    static constexpr counter after_init[] = {
        {"coldbrew_function_errors_total",
         "Invocations that ended in a function error (error, crash, timeout, init failure).",
         &function_metrics::function_errors},
        {"coldbrew_function_timeouts_total", "Invocations that reached the function's timeout.",
         &function_metrics::timeouts},
        {"coldbrew_throttles_total", "Invocations throttled by a concurrency or scaling limit.",
         &function_metrics::throttles},
        {"coldbrew_invocation_waits_total",
         "Invocations queued because max_environments processes were busy.",
         &function_metrics::waits},
        {"coldbrew_evictions_total",
         "Idle execution environments ended (keep-alive, maximum lifetime or memory_budget_mb).",
         &function_metrics::evictions},
    };
    auto write = [&](const counter& c) {
        w.family(c.name, "counter", c.help);
        for (const auto& [name, f] : in.functions)
            w.sample(c.name, {{"function", name}}, f.*c.field);
    };
    for (const auto& c : counters)
        write(c);

    w.family("coldbrew_init_duration_seconds", "histogram",
             "Init Duration of cold starts as the REPORT line states it: the modeled init (what "
             "was waited, for an init that failed).");
    if (in.requests)
        for (const auto& [name, h] : in.requests->init_durations())
            w.histogram("coldbrew_init_duration_seconds", {{"function", name}}, h);

    for (const auto& c : after_init)
        write(c);

    w.family("coldbrew_init_overruns_total", "counter",
             "Cold starts whose local init (this machine's process start) outlasted the modeled "
             "Init Duration, so that the client waited longer than the model.");
    for (const auto& [name, f] : in.functions)
        w.sample("coldbrew_init_overruns_total", {{"function", name}}, f.init_overruns);
    w.family("coldbrew_init_overrun_seconds_total", "counter",
             "Real time by which local inits outlasted the modeled Init Duration, in all.");
    for (const auto& [name, f] : in.functions)
        w.sample("coldbrew_init_overrun_seconds_total", {{"function", name}},
                 f.init_overrun_seconds);
    w.family("coldbrew_standby_environments", "gauge",
             "Standby execution environments (started ahead, outside the model until a cold "
             "start takes one): ready (their init done) or starting.");
    for (const auto& [name, f] : in.functions) {
        const std::uint64_t ready = std::min(f.standby_ready, f.standby);
        w.sample("coldbrew_standby_environments", {{"function", name}, {"state", "ready"}}, ready);
        w.sample("coldbrew_standby_environments", {{"function", name}, {"state", "starting"}},
                 f.standby - ready);
    }

    w.family("coldbrew_execution_environments", "gauge",
             "Live execution environments by state: busy (serving or initializing for an "
             "invocation) or idle; their sum is every live one.");
    for (const auto& [name, f] : in.functions) {
        const std::uint64_t busy = std::min(f.busy, f.environments);
        w.sample("coldbrew_execution_environments", {{"function", name}, {"state", "busy"}}, busy);
        w.sample("coldbrew_execution_environments", {{"function", name}, {"state", "idle"}},
                 f.environments - busy);
    }
}

void fault_families(writer& w, const fault_metrics& f) {
    w.family("coldbrew_faults_injected_total", "counter",
             "Faults injected, by fault kind and the action it took.");
    for (const auto& [ka, n] : f.by_kind_action)
        w.sample("coldbrew_faults_injected_total", {{"kind", ka.first}, {"action", ka.second}}, n);
    w.family("coldbrew_fault_rule_injected_total", "counter", "Faults injected, by rule name.");
    for (const auto& [rule, n] : f.by_rule)
        w.sample("coldbrew_fault_rule_injected_total", {{"rule", rule}}, n);
    w.family("coldbrew_faults_missed_total", "counter",
             "Faults a rule injected that did not happen, by fault kind: the handler answered "
             "before the injected kill. They are not in coldbrew_faults_injected_total.");
    for (const auto& [kind, n] : f.missed_by_kind)
        w.sample("coldbrew_faults_missed_total", {{"kind", kind}}, n);
    w.family("coldbrew_faults_overflow_total", "counter",
             "Faults a rule chose but did not inject because max_active_faults were in effect.");
    w.sample("coldbrew_faults_overflow_total", {}, f.overflow);
    w.family("coldbrew_faults_active", "gauge", "Injected faults in effect now.");
    w.sample("coldbrew_faults_active", {}, f.active);
    w.family("coldbrew_fault_decisions_total", "counter",
             "Requests and connections the fault decision point decided.");
    w.sample("coldbrew_fault_decisions_total", {}, f.decisions);
}

void dependency_families(writer& w, const nlohmann::json& deps) {
    const bool any = deps.is_object();
    struct counter {
        const char* name;
        const char* type;
        const char* key;
        const char* help;
    };
    static constexpr counter simple[] = {
        {"coldbrew_dependency_connections_total", "counter", "connections",
         "Connections a dependency proxy accepted."},
        {"coldbrew_dependency_active_connections", "gauge", "active",
         "Connections a dependency proxy has open now."},
        {"coldbrew_dependency_requests_total", "counter", "requests",
         "Request turns through a dependency proxy."},
    };
    static constexpr counter failures[] = {
        {"coldbrew_dependency_upstream_failures_total", "counter", "upstream_failures",
         "Upstream connections that were refused or failed."},
        {"coldbrew_dependency_connect_timeouts_total", "counter", "connect_timeouts",
         "Upstream connections that timed out."},
        {"coldbrew_dependency_idle_timeouts_total", "counter", "idle_timeouts",
         "Proxied connections closed for being idle."},
    };
    auto write = [&](const counter& c) {
        w.family(c.name, c.type, c.help);
        if (!any) return;
        for (const auto& [name, d] : deps.items())
            if (auto n = count_of(d, c.key)) w.sample(c.name, {{"dependency", name}}, *n);
    };
    for (const auto& c : simple)
        write(c);

    w.family("coldbrew_dependency_bytes_total", "counter",
             "Bytes a dependency proxy wrote: upstream (client to dependency) and downstream "
             "(dependency to client).");
    if (any)
        for (const auto& [name, d] : deps.items()) {
            if (auto n = count_of(d, "bytes_upstream"))
                w.sample("coldbrew_dependency_bytes_total",
                         {{"dependency", name}, {"direction", "upstream"}}, *n);
            if (auto n = count_of(d, "bytes_downstream"))
                w.sample("coldbrew_dependency_bytes_total",
                         {{"dependency", name}, {"direction", "downstream"}}, *n);
        }

    for (const auto& c : failures)
        write(c);

    w.family("coldbrew_dependency_faults_total", "counter",
             "Faults a dependency proxy injected, by action.");
    if (any)
        for (const auto& [name, d] : deps.items()) {
            auto f = d.find("faults");
            if (f == d.end() || !f->is_object()) continue;
            for (const auto& [action, v] : f->items())
                if (v.is_number())
                    w.sample("coldbrew_dependency_faults_total",
                             {{"dependency", name}, {"action", action}},
                             static_cast<std::uint64_t>(std::max(0.0, v.get<double>())));
        }

    w.family("coldbrew_dependency_added_latency_seconds_total", "counter",
             "Modeled latency a dependency proxy added, in all (not scaled by time_scale).");
    if (any)
        for (const auto& [name, d] : deps.items()) {
            auto l = d.find("latency_ms");
            if (l != d.end() && l->is_number())
                w.sample("coldbrew_dependency_added_latency_seconds_total", {{"dependency", name}},
                         std::max(0.0, l->get<double>()) / 1000.0);
        }
}

void state_machine_families(writer& w, const std::map<std::string, state_machine_metrics>& m) {
    w.family("coldbrew_sfn_executions_total", "counter",
             "Step Functions executions by state machine and status (RUNNING: started, not yet "
             "ended).");
    for (const auto& [name, s] : m) {
        const std::uint64_t ended = s.succeeded + s.failed + s.timed_out + s.aborted;
        const std::pair<const char*, std::uint64_t> by_status[] = {
            {"RUNNING", s.started > ended ? s.started - ended : 0},
            {"SUCCEEDED", s.succeeded},
            {"FAILED", s.failed},
            {"TIMED_OUT", s.timed_out},
            {"ABORTED", s.aborted}};
        for (const auto& [status, n] : by_status)
            w.sample("coldbrew_sfn_executions_total", {{"state_machine", name}, {"status", status}}, n);
    }
    w.family("coldbrew_sfn_duplicate_starts_total", "counter",
             "StartExecution calls answered with an existing execution of the same name.");
    for (const auto& [name, s] : m)
        w.sample("coldbrew_sfn_duplicate_starts_total", {{"state_machine", name}}, s.duplicate_starts);
    w.family("coldbrew_sfn_retries_total", "counter", "Retries made by states' Retry fields.");
    for (const auto& [name, s] : m)
        w.sample("coldbrew_sfn_retries_total", {{"state_machine", name}}, s.retries);
    w.family("coldbrew_sfn_caught_total", "counter", "Errors handled by states' Catch fields.");
    for (const auto& [name, s] : m)
        w.sample("coldbrew_sfn_caught_total", {{"state_machine", name}}, s.caught);
    w.family("coldbrew_sfn_state_transitions_total", "counter", "State transitions.");
    for (const auto& [name, s] : m)
        w.sample("coldbrew_sfn_state_transitions_total", {{"state_machine", name}}, s.state_transitions);
}

} // namespace

std::string render_metrics(const metrics_input& in) {
    writer w;
    request_families(w, in.requests);
    outcome_family(w, in);
    function_families(w, in);
    fault_families(w, in.faults);
    dependency_families(w, in.dependencies);
    if (!in.state_machines.empty()) state_machine_families(w, in.state_machines);
    return w.text();
}

} // namespace coldbrew::telemetry
