#include "emulator/sim_cli/html_report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace coldbrew::sim_cli {

namespace {

using json = nlohmann::ordered_json;

std::string esc(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string f(double v, int d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", d, v);
    return buf;
}

double num(const json& j) { return j.is_number() ? j.get<double>() : 0.0; }

std::string ms_label(double ms) {
    if (ms >= 1000) return f(ms / 1000, ms >= 10000 ? 0 : 1) + " s";
    if (ms >= 1) return f(ms, ms >= 10 ? 0 : 1) + " ms";
    return f(ms * 1000, 0) + " µs";
}

// Plot frame: 640 × 260 with margins; x is log10(ms) between lo and hi.
struct frame {
    double w = 640, h = 260, left = 56, right = 16, top = 16, bottom = 36;
    double px(double t) const { return left + t * (w - left - right); }   // t in [0, 1]
    double py(double t) const { return top + (1 - t) * (h - top - bottom); }
};

void log_axis(std::ostringstream& o, const frame& fr, double lo, double hi) {
    for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e) {
        const double v = std::pow(10.0, e);
        if (v < lo || v > hi) continue;
        const double t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
        o << "<line x1='" << f(fr.px(t), 1) << "' y1='" << f(fr.py(0), 1) << "' x2='" << f(fr.px(t), 1) << "' y2='"
          << f(fr.py(1), 1) << "' class='grid'/>";
        o << "<text x='" << f(fr.px(t), 1) << "' y='" << f(fr.h - 14, 1) << "' text-anchor='middle'>" << ms_label(v) << "</text>";
    }
}

std::string latency_plots(const json& report) {
    const json& hist = report["histogram"];
    if (!hist.is_array() || hist.empty()) return "<p>No successful requests to plot.</p>";
    double lo = 1e300, hi = 0, total = 0, peak = 0;
    for (const auto& b : hist) {
        lo = std::min(lo, std::max(1e-3, num(b[0])));
        hi = std::max(hi, num(b[1]));
        total += num(b[2]);
    }
    lo = std::pow(10.0, std::floor(std::log10(lo)));
    hi = std::pow(10.0, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
    const double span = std::log10(hi) - std::log10(lo);
    auto tx = [&](double ms) { return (std::log10(std::max(ms, lo)) - std::log10(lo)) / span; };

    // Histogram: counts per decade-fraction bin (60 bins over the range), so log buckets of
    // different widths read as a density.
    const int bins = 60;
    std::vector<double> counts(bins, 0);
    for (const auto& b : hist) {
        const double mid = std::sqrt(std::max(num(b[0]), lo) * std::max(num(b[1]), lo));
        const int i = std::clamp(static_cast<int>(tx(mid) * bins), 0, bins - 1);
        counts[static_cast<std::size_t>(i)] += num(b[2]);
    }
    for (double c : counts) peak = std::max(peak, c);

    frame fr;
    std::ostringstream o;
    o << "<div class='plots'><figure><svg viewBox='0 0 640 260' role='img'><title>Latency CDF</title>";
    log_axis(o, fr, lo, hi);
    for (int k = 0; k <= 4; ++k) {
        const double t = k / 4.0;
        o << "<line x1='" << f(fr.px(0), 1) << "' y1='" << f(fr.py(t), 1) << "' x2='" << f(fr.px(1), 1) << "' y2='"
          << f(fr.py(t), 1) << "' class='grid'/><text x='" << f(fr.left - 6, 1) << "' y='" << f(fr.py(t) + 4, 1)
          << "' text-anchor='end'>" << f(t * 100, 0) << "%</text>";
    }
    o << "<polyline class='line' points='";
    double acc = 0;
    o << f(fr.px(tx(num(hist[0][0]))), 1) << "," << f(fr.py(0), 1) << " ";
    for (const auto& b : hist) {
        acc += num(b[2]);
        o << f(fr.px(tx(num(b[1]))), 1) << "," << f(fr.py(acc / total), 1) << " ";
    }
    o << "'/>";
    for (const char* q : {"p50", "p95", "p99"}) {
        const double v = num(report["latency_ms"][q]);
        if (v <= 0) continue;
        o << "<line x1='" << f(fr.px(tx(v)), 1) << "' y1='" << f(fr.py(0), 1) << "' x2='" << f(fr.px(tx(v)), 1)
          << "' y2='" << f(fr.py(1), 1) << "' class='mark'/><text x='" << f(fr.px(tx(v)) + 3, 1) << "' y='"
          << f(fr.py(0.04), 1) << "' class='marklabel'>" << q << "</text>";
    }
    o << "</svg><figcaption>Latency CDF (successful requests, log scale)</figcaption></figure>";

    o << "<figure><svg viewBox='0 0 640 260' role='img'><title>Latency histogram</title>";
    log_axis(o, fr, lo, hi);
    const double bw = (fr.w - fr.left - fr.right) / bins;
    for (int i = 0; i < bins; ++i) {
        if (counts[static_cast<std::size_t>(i)] <= 0) continue;
        // Square-root height, so a thin tail stays visible beside the body.
        const double t = std::sqrt(counts[static_cast<std::size_t>(i)] / peak);
        o << "<rect x='" << f(fr.px(0) + i * bw + 0.5, 1) << "' y='" << f(fr.py(t), 1) << "' width='" << f(bw - 1, 1)
          << "' height='" << f(fr.py(0) - fr.py(t), 1) << "' class='bar'><title>" << f(counts[static_cast<std::size_t>(i)], 0)
          << " requests</title></rect>";
    }
    o << "</svg><figcaption>Latency histogram (height ∝ √count, log scale)</figcaption></figure></div>";
    return o.str();
}

// A metric against the runs (sweep values or variants), as points joined by a line.
std::string run_plot(const std::vector<run_entry>& runs, const std::string& title,
                     double (*metric)(const json&), const std::string& unit, int decimals) {
    frame fr;
    double lo = 1e300, hi = -1e300;
    for (const auto& r : runs) {
        const double v = metric(r.report);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (hi - lo < 1e-12) {
        lo -= 0.5 * std::max(1e-9, std::fabs(lo) * 0.01);
        hi += 0.5 * std::max(1e-9, std::fabs(hi) * 0.01);
    }
    const double pad = (hi - lo) * 0.1;
    lo -= pad;
    hi += pad;
    std::ostringstream o;
    o << "<figure><svg viewBox='0 0 640 260' role='img'><title>" << esc(title) << "</title>";
    for (int k = 0; k <= 4; ++k) {
        const double t = k / 4.0;
        o << "<line x1='" << f(fr.px(0), 1) << "' y1='" << f(fr.py(t), 1) << "' x2='" << f(fr.px(1), 1) << "' y2='"
          << f(fr.py(t), 1) << "' class='grid'/><text x='" << f(fr.left - 6, 1) << "' y='" << f(fr.py(t) + 4, 1)
          << "' text-anchor='end'>" << f(lo + t * (hi - lo), decimals) << "</text>";
    }
    const std::size_t n = runs.size();
    auto x = [&](std::size_t i) { return n == 1 ? 0.5 : 0.05 + 0.9 * static_cast<double>(i) / static_cast<double>(n - 1); };
    o << "<polyline class='line' points='";
    for (std::size_t i = 0; i < n; ++i)
        o << f(fr.px(x(i)), 1) << "," << f(fr.py((metric(runs[i].report) - lo) / (hi - lo)), 1) << " ";
    o << "'/>";
    for (std::size_t i = 0; i < n; ++i) {
        const double v = metric(runs[i].report);
        const std::string name = !runs[i].sweep_value.empty() ? runs[i].sweep_value
                                 : !runs[i].variant.empty()   ? runs[i].variant
                                                              : runs[i].label;
        o << "<circle cx='" << f(fr.px(x(i)), 1) << "' cy='" << f(fr.py((v - lo) / (hi - lo)), 1)
          << "' r='4' class='dot'><title>" << esc(name) << ": " << f(v, decimals) << unit << "</title></circle>";
        o << "<text x='" << f(fr.px(x(i)), 1) << "' y='" << f(fr.h - 14, 1) << "' text-anchor='middle'>" << esc(name)
          << "</text>";
    }
    o << "</svg><figcaption>" << esc(title) << "</figcaption></figure>";
    return o.str();
}

double availability_of(const json& r) { return num(r["availability"]["percent"]); }
double cost_of(const json& r) { return num(r["cost"]["per_million_requests"]); }
double p95_of(const json& r) { return num(r["latency_ms"]["p95"]); }

std::string summary_table(const json& r) {
    std::ostringstream o;
    const json& a = r["availability"];
    o << "<table><tr><th>availability</th><td>" << f(num(a["percent"]), 4) << "% (95% CI " << f(num(a["ci95_percent"][0]), 4)
      << "–" << f(num(a["ci95_percent"][1]), 4) << "%), "
      << (a["nines"].is_string() ? std::string("all") : f(num(a["nines"]), 2)) << " nines</td></tr>";
    if (a.contains("analytic"))
      o << "<tr><th>analytic</th><td>" << f(num(a["analytic"]["percent"]), 4) << "% — "
        << (a["analytic"]["within_ci"].get<bool>() ? "agrees" : "differs") << " ("
        << esc(a["analytic"]["assumptions"].get<std::string>()) << ")</td></tr>";
    o << "<tr><th>error budget</th><td>" << f(num(r["error_budget"]["downtime_minutes_per_30_days"]), 1)
      << " min of failed requests per 30 days</td></tr>";
    const json& l = r["latency_ms"];
    o << "<tr><th>latency</th><td>p50 " << ms_label(num(l["p50"])) << " · p90 " << ms_label(num(l["p90"])) << " · p95 "
      << ms_label(num(l["p95"])) << " · p99 " << ms_label(num(l["p99"])) << " · p99.9 " << ms_label(num(l["p99.9"]))
      << "</td></tr>";
    o << "<tr><th>attempts</th><td>" << f(num(r["retry_amplification"]), 4) << " per request, retries included; "
      << r["duplicates"].get<std::uint64_t>() << " duplicate side effects</td></tr>";
    o << "<tr><th>cold starts</th><td>" << f(num(r["cold_start_share"]["invocations_percent"]), 3)
      << "% of invocations</td></tr>";
    o << "<tr><th>cost</th><td>$" << f(cost_of(r), 4) << " per million requests (" << esc(r["cost"]["region"].get<std::string>())
      << ", prices of " << esc(r["cost"]["prices_date"].get<std::string>()) << ")</td></tr></table>";
    if (!r["failures"].empty()) {
        o << "<h3>Failures by root cause</h3><table><tr><th>component</th><th>cause</th><th>requests</th><th>% of requests</th></tr>";
        for (const auto& fl : r["failures"])
            o << "<tr><td>" << esc(fl["component"].get<std::string>()) << "</td><td>" << esc(fl["cause"].get<std::string>())
              << "</td><td>" << fl["requests"].get<std::uint64_t>() << "</td><td>" << f(num(fl["percent_of_requests"]), 4)
              << "</td></tr>";
        o << "</table>";
    }
    o << "<h3>Components</h3><table><tr><th>name</th><th>service</th><th>SLA</th><th>calls/req</th><th>attempts/call</th>"
         "<th>p50</th><th>p99</th><th>failed calls</th></tr>";
    for (const auto& x : r["components"])
        o << "<tr><td>" << esc(x["name"].get<std::string>()) << "</td><td>" << esc(x["service"].get<std::string>())
          << "</td><td>" << f(num(x["availability_percent"]), 3) << "%</td><td>" << f(num(x["calls_per_request"]), 4)
          << "</td><td>" << f(num(x["attempts_per_call"]), 4) << "</td><td>" << ms_label(num(x["latency_ms"]["p50"]))
          << "</td><td>" << ms_label(num(x["latency_ms"]["p99"])) << "</td><td>" << x["failed_calls"].get<std::uint64_t>()
          << "</td></tr>";
    o << "</table>";
    return o.str();
}

}  // namespace

std::string html_report(const std::vector<run_entry>& runs) {
    std::ostringstream o;
    const std::string title = runs.empty() ? "coldbrew sim" : "coldbrew sim: " + runs[0].report["scenario"].get<std::string>();
    o << "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>" << esc(title) << "</title><style>"
         "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1320px;color:#222}"
         "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px}"
         "table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}"
         "th{color:#555;font-weight:600}.plots{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}"
         "svg{width:640px;height:260px;background:#fcfcfc;border:1px solid #eee}"
         "svg text{font-size:11px;fill:#555}.grid{stroke:#e6e6e6}.line{fill:none;stroke:#2563eb;stroke-width:2}"
         ".bar{fill:#60a5fa}.dot{fill:#1d4ed8}.mark{stroke:#dc2626;stroke-dasharray:3 3}.marklabel{fill:#dc2626}"
         "figcaption{color:#666;font-size:12px}</style></head><body>";
    o << "<h1>" << esc(title) << "</h1>";
    if (!runs.empty() && runs[0].report.contains("description"))
        o << "<p>" << esc(runs[0].report["description"].get<std::string>()) << "</p>";
    if (runs.size() > 1) {
        o << "<h2>Runs compared</h2><table><tr><th>run</th><th>availability</th><th>nines</th><th>analytic</th><th>p95</th>"
             "<th>p99</th><th>attempts/req</th><th>duplicates</th><th>$ per M requests</th></tr>";
        for (const auto& r : runs) {
            const json& a = r.report["availability"];
            o << "<tr><td>" << esc(r.label) << "</td><td>" << f(num(a["percent"]), 4) << "%</td><td>"
              << (a["nines"].is_string() ? std::string("all") : f(num(a["nines"]), 2)) << "</td><td>"
              << (a.contains("analytic") ? f(num(a["analytic"]["percent"]), 4) + "%" : std::string("–")) << "</td><td>"
              << ms_label(p95_of(r.report)) << "</td><td>" << ms_label(num(r.report["latency_ms"]["p99"])) << "</td><td>"
              << f(num(r.report["retry_amplification"]), 3) << "</td><td>" << r.report["duplicates"].get<std::uint64_t>()
              << "</td><td>" << f(cost_of(r.report), 4) << "</td></tr>";
        }
        o << "</table><div class='plots'>";
        o << run_plot(runs, "Availability (%) by run", availability_of, "%", 4);
        o << run_plot(runs, "p95 latency (ms) by run", p95_of, " ms", 1);
        o << run_plot(runs, "Cost per million requests ($) by run", cost_of, " $", 3);
        o << "</div>";
    }
    for (const auto& r : runs) {
        o << "<h2>" << esc(r.label) << "</h2><p>seed " << r.report["seed"].get<std::uint64_t>() << " · "
          << r.report["requests"].get<std::uint64_t>() << " requests · " << esc(r.report["engine"].get<std::string>())
          << " engine</p>";
        o << latency_plots(r.report);
        o << summary_table(r.report);
    }
    o << "</body></html>\n";
    return o.str();
}

}  // namespace coldbrew::sim_cli
