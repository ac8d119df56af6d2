#include "emulator/telemetry/run_summary.hpp"

#include <cstdio>
#include <string_view>
#include <utility>

namespace coldbrew::telemetry {

namespace {

// Labels are padded with dots so every value starts in one column, as Artillery aligns its
// report.
constexpr std::size_t value_column = 26;

std::string fixed(double v, int decimals = 1) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
    return buf;
}

std::string line(std::string_view indent, std::string_view label, const std::string& value) {
    std::string out(indent);
    out += label;
    out += ' ';
    for (std::size_t n = indent.size() + label.size() + 2; n < value_column; ++n)
        out += '.';
    out += ' ';
    out += value;
    out += '\n';
    return out;
}

std::string front_name(const std::string& front) {
    return front == "invoke" ? "invoke API" : front;
}

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string latency_text(const latency_histogram& h) {
    return "min " + fixed(h.min_ms()) + ", median " + fixed(h.quantile_ms(0.5)) + ", p95 " +
           fixed(h.quantile_ms(0.95)) + ", p99 " + fixed(h.quantile_ms(0.99)) + ", max " +
           fixed(h.max_ms()) + " ms";
}

std::string codes_text(const std::map<int, std::uint64_t>& by_status) {
    std::string out;
    std::uint64_t none = 0;
    for (const auto& [status, n] : by_status) {
        if (status == 0) {
            none += n;
            continue;
        }
        if (!out.empty()) out += ", ";
        out += std::to_string(status) + ": " + std::to_string(n);
    }
    if (none) out += (out.empty() ? "" : ", ") + std::string("none: ") + std::to_string(none);
    return out;
}

std::uint64_t of(const std::map<request_end, std::uint64_t>& m, request_end e) {
    auto it = m.find(e);
    return it == m.end() ? 0 : it->second;
}

// Worded as the exit lines before this block were ("2 injected faults"), which scripts read.
std::string outcomes_text(const std::map<request_end, std::uint64_t>& by_end) {
    std::string out =
        std::to_string(of(by_end, request_end::served)) + " served, " +
        plural(of(by_end, request_end::injected_fault), "injected fault", "injected faults") +
        ", " + plural(of(by_end, request_end::handler_error), "handler error", "handler errors") +
        ", " + plural(of(by_end, request_end::emulator_error), "emulator error", "emulator errors");
    if (auto gone = of(by_end, request_end::client_gone))
        out += ", " + plural(gone, "client gone", "clients gone");
    return out;
}

std::string block(const request_stats::totals& t, double span_s) {
    constexpr std::string_view in = "    ";
    std::string rate = span_s > 0 && t.requests > 1
                           ? " (" + fixed(static_cast<double>(t.requests) / span_s) + "/sec mean)"
                           : "";
    std::string out = line(in, "requests", std::to_string(t.requests) + rate);
    out += line(in, "response time", latency_text(t.latency));
    out += line(in, "status codes", codes_text(t.by_status));
    out += line(in, "outcomes", outcomes_text(t.by_end));
    const double share =
        t.requests ? 100.0 * static_cast<double>(t.cold_starts) / static_cast<double>(t.requests)
                   : 0;
    out += line(in, "cold starts",
                std::to_string(t.cold_starts) + " (" + fixed(share) + "% of requests)");
    return out;
}

} // namespace

std::string render_run_summary(const run_summary_input& in) {
    std::string out = "coldbrew: run summary (" + fixed(in.run_ms / 1000.0) + " s";
    if (in.time_scale != 1.0)
        out += "; injected waits and cold starts ran at time_scale " + fixed(in.time_scale, 3);
    if (in.counters_reset_at_ms)
        out += "; counted since the counters were reset, " +
               fixed(*in.counters_reset_at_ms / 1000.0) + " s into the run";
    out += ")";
    const request_stats* rs = in.requests;
    if (!rs || rs->all().requests == 0) {
        out += ": no requests\n";
    } else {
        out += "\n";
        double span_s = 0;
        if (rs->first_start_ms() && rs->last_end_ms())
            span_s = (*rs->last_end_ms() - *rs->first_start_ms()) / 1000.0;
        std::size_t fronts = 0;
        for (const auto& [_, t] : rs->fronts()) fronts += t.requests > 0;
        // With one front the totals would repeat it line for line.
        if (fronts > 1) out += "  all fronts\n" + block(rs->all(), span_s);
        for (const auto& [front, t] : rs->fronts()) {
            if (t.requests == 0) continue;
            out += "  " + front_name(front) + "\n" + block(t, span_s);
        }
    }

    std::string faults;
    for (const auto& [kind, n] : in.faults_by_kind) {
        if (n == 0) continue;
        faults += (faults.empty() ? "" : ", ") + kind + ": " + std::to_string(n);
    }
    if (faults.empty()) faults = "none";
    // Said on the same line: those faults were taken back from the counts just before it.
    if (in.fault_missed)
        faults += "; missed: " + std::to_string(in.fault_missed) +
                  " (the handler answered before the injected kill)";
    out += line("  ", "faults injected", faults);
    if (in.fault_overflow)
        out += line("  ", "faults held back",
                    std::to_string(in.fault_overflow) + " (max_active_faults reached)");

    bool titled = false;
    if (rs)
        for (const auto& [function, h] : rs->init_durations()) {
            if (h.count() == 0) continue;
            if (!std::exchange(titled, true)) out += "  Init Duration\n";
            out += line("    ", function,
                        plural(h.count(), "cold start", "cold starts") + ", median " +
                            fixed(h.quantile_ms(0.5)) + ", max " + fixed(h.max_ms()) + " ms");
        }
    // Where this machine, not the model, set a cold start's latency: the figures above are the
    // model's, the client waited longer by these.
    titled = false;
    for (const auto& [function, o] : in.overruns) {
        if (o.overruns == 0) continue;
        if (!std::exchange(titled, true)) out += "  local init overran the model\n";
        std::string text = std::to_string(o.overruns) + " of " +
                           plural(o.cold_starts, "cold start", "cold starts") + ", by " +
                           fixed(o.overrun_max_ms) + " ms at most (" + fixed(o.overrun_ms) +
                           " ms in all)";
        if (o.burst_cold_starts_max > o.standby)
            text += "; --standby " + std::to_string(o.burst_cold_starts_max) +
                    " would have covered the largest burst";
        out += line("    ", function, text);
    }
    return out;
}

} // namespace coldbrew::telemetry
