// `coldbrew report --html`: one page, no scripts and no fetches; the plots are inline SVG
// drawn here from the aggregated rows.

#include "emulator/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace coldbrew::report {

namespace {

std::string esc(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string f(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// 1, 2 or 5 × 10^k at or above v, so axis labels are round numbers.
double nice_ceil(double v) {
    if (v <= 0) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= v) return m * p;
    return 10 * p;
}

std::string tick_label(double v) {
    return v >= 100 || v == std::floor(v) ? f(v, 0) : f(v, 1);
}

// Plot area of a 640 × 240 figure; x is the bin's slot, y in [0, 1].
struct frame {
    double w = 640, h = 240, left = 60, right = 52, top = 14, bottom = 40;
    std::size_t slots = 1;
    double slot() const { return (w - left - right) / static_cast<double>(slots); }
    double cx(std::size_t i) const { return left + (static_cast<double>(i) + 0.5) * slot(); }
    double py(double t) const { return top + (1 - t) * (h - top - bottom); }
};

std::string bin_text(const row& r, bool same_day) {
    if (!r.bin_start_ms) return "-";
    const std::string s = format_utc(*r.bin_start_ms); // 2026-11-30T23:25:00Z
    return same_day ? s.substr(11, 5) : s.substr(5, 5) + " " + s.substr(11, 5);
}

void axes(std::ostringstream& o, const frame& fr, const std::vector<const row*>& bins,
          double left_max, const char* left_unit, const char* right_unit) {
    bool same_day = true;
    std::optional<std::int64_t> day;
    for (const row* r : bins) {
        if (!r->bin_start_ms) continue;
        const std::int64_t d = *r->bin_start_ms / 86'400'000;
        if (day && *day != d) same_day = false;
        day = d;
    }
    for (int k = 0; k <= 4; ++k) {
        const double t = k / 4.0;
        o << "<line x1='" << f(fr.left, 1) << "' y1='" << f(fr.py(t), 1) << "' x2='"
          << f(fr.w - fr.right, 1) << "' y2='" << f(fr.py(t), 1) << "' class='grid'/>";
        o << "<text x='" << f(fr.left - 6, 1) << "' y='" << f(fr.py(t) + 4, 1)
          << "' text-anchor='end'>" << tick_label(left_max * t) << "</text>";
        if (right_unit)
            o << "<text x='" << f(fr.w - fr.right + 6, 1) << "' y='" << f(fr.py(t) + 4, 1) << "'>"
              << f(100 * t, 0) << "%</text>";
    }
    o << "<text x='12' y='" << f(fr.py(0.5), 1) << "' transform='rotate(-90 12 " << f(fr.py(0.5), 1)
      << ")' text-anchor='middle'>" << left_unit << "</text>";
    if (right_unit)
        o << "<text x='" << f(fr.w - 8, 1) << "' y='" << f(fr.py(0.5), 1)
          << "' transform='rotate(90 " << f(fr.w - 8, 1) << " " << f(fr.py(0.5), 1)
          << ")' text-anchor='middle'>" << right_unit << "</text>";
    // At most 8 labels along x, evenly spaced.
    const std::size_t every = std::max<std::size_t>(1, (bins.size() + 7) / 8);
    for (std::size_t i = 0; i < bins.size(); i += every)
        o << "<text x='" << f(fr.cx(i), 1) << "' y='" << f(fr.h - fr.bottom + 16, 1)
          << "' text-anchor='middle'>" << esc(bin_text(*bins[i], same_day)) << "</text>";
    o << "<text x='" << f((fr.left + fr.w - fr.right) / 2, 1) << "' y='" << f(fr.h - 4, 1)
      << "' text-anchor='middle'>bin start (UTC)</text>";
}

void polyline(std::ostringstream& o, const frame& fr, const std::vector<double>& ys, double max,
              const char* cls) {
    o << "<polyline class='" << cls << "' points='";
    for (std::size_t i = 0; i < ys.size(); ++i)
        o << f(fr.cx(i), 1) << "," << f(fr.py(ys[i] / max), 1) << " ";
    o << "'/>";
    for (std::size_t i = 0; i < ys.size(); ++i)
        o << "<circle class='" << cls << "' cx='" << f(fr.cx(i), 1) << "' cy='"
          << f(fr.py(ys[i] / max), 1) << "' r='2.5'/>";
}

std::string invocations_plot(const std::string& fn, const std::vector<const row*>& bins) {
    frame fr;
    fr.slots = bins.size();
    double peak = 0;
    for (const row* r : bins)
        peak = std::max(peak, static_cast<double>(r->invocations));
    const double top = nice_ceil(peak);
    std::ostringstream o;
    o << "<figure><svg viewBox='0 0 640 240' role='img'><title>" << esc(fn)
      << ": invocations and cold-start % per bin</title>";
    axes(o, fr, bins, top, "invocations", "cold starts");
    const double bw = fr.slot() * 0.7;
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const double y = fr.py(static_cast<double>(bins[i]->invocations) / top);
        o << "<rect class='bar' x='" << f(fr.cx(i) - bw / 2, 1) << "' y='" << f(y, 1) << "' width='"
          << f(bw, 1) << "' height='" << f(fr.py(0) - y, 1) << "'><title>" << bins[i]->invocations
          << " invocations, " << bins[i]->cold_starts << " cold</title></rect>";
    }
    std::vector<double> pct;
    for (const row* r : bins)
        pct.push_back(r->cold_start_pct);
    polyline(o, fr, pct, 100, "cold");
    o << "</svg><figcaption><span class='key bar'></span>invocations <span class='key cold'></span>"
         "cold-start % (right axis)</figcaption></figure>";
    return o.str();
}

std::string duration_plot(const std::string& fn, const std::vector<const row*>& bins) {
    frame fr;
    fr.slots = bins.size();
    double peak = 0;
    for (const row* r : bins)
        peak = std::max(peak, r->max_duration_ms);
    const double top = nice_ceil(peak);
    std::ostringstream o;
    o << "<figure><svg viewBox='0 0 640 240' role='img'><title>" << esc(fn)
      << ": duration per bin</title>";
    axes(o, fr, bins, top, "duration ms", nullptr);
    std::vector<double> avg, max;
    for (const row* r : bins) {
        avg.push_back(r->avg_duration_ms);
        max.push_back(r->max_duration_ms);
    }
    polyline(o, fr, max, top, "max");
    polyline(o, fr, avg, top, "avg");
    o << "</svg><figcaption><span class='key avg'></span>avg duration <span class='key max'></span>"
         "max duration</figcaption></figure>";
    return o.str();
}

} // namespace

std::string render_html(const table& t, const std::vector<std::string>& sources) {
    std::ostringstream o;
    o << "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>coldbrew "
         "report</title>\n"
         "<style>\n"
         "body{font:14px/1.45 system-ui,sans-serif;margin:24px "
         "auto;max-width:1100px;color:#222;padding:0 16px}\n"
         "table{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
         "th,td{padding:3px 9px;border-bottom:1px solid #e3e3e3;text-align:right}\n"
         "th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}\n"
         "tr.total td{font-weight:600;border-bottom:2px solid #bbb}\n"
         ".plots{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;flex:1 1 480px}\n"
         "svg{width:100%;height:auto}svg text{font-size:11px;fill:#555}\n"
         ".grid{stroke:#eee}.bar{fill:#9cc3e4}polyline{fill:none;stroke-width:2}\n"
         "polyline.cold{stroke:#d9534f}circle.cold{fill:#d9534f}\n"
         "polyline.avg{stroke:#2b6cb0}circle.avg{fill:#2b6cb0}\n"
         "polyline.max{stroke:#dd6b20}circle.max{fill:#dd6b20}\n"
         ".key{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}\n"
         ".key.bar{background:#9cc3e4}.key.cold{background:#d9534f}.key.avg{background:#2b6cb0}"
         ".key.max{background:#dd6b20}\n"
         "figcaption,.note{color:#666;font-size:12px}code{font-size:12px}\n"
         "</style></head><body>\n";
    o << "<h1>coldbrew report</h1>\n<p>" << t.invocations << " invocations of " << t.functions
      << (t.functions == 1 ? " function" : " functions") << ", by bin(" << bin_label(t.bin_ms)
      << "), from ";
    for (std::size_t i = 0; i < sources.size(); ++i)
        o << (i ? ", " : "") << "<code>" << esc(sources[i]) << "</code>";
    o << ".</p>\n";

    o << "<table><thead><tr><th>function</th><th>bin start (UTC)</th><th>invocations</th>"
         "<th>cold starts</th><th>cold %</th><th>max init ms</th><th>avg dur ms</th><th>max dur "
         "ms</th>"
         "<th>min dur ms</th><th>memory MB</th><th>avg mem used %</th></tr></thead><tbody>\n";
    for (const auto& r : t.rows) {
        std::string bin = r.total ? "total" : r.bin_start_ms ? format_utc(*r.bin_start_ms) : "-";
        o << "<tr" << (r.total ? " class='total'" : "") << "><td>" << esc(r.function) << "</td><td>"
          << esc(bin) << "</td><td>" << r.invocations << "</td><td>" << r.cold_starts << "</td><td>"
          << f(r.cold_start_pct, 1) << "</td><td>" << (r.max_init_ms ? f(*r.max_init_ms, 2) : "-")
          << "</td><td>" << f(r.avg_duration_ms, 2) << "</td><td>" << f(r.max_duration_ms, 2)
          << "</td><td>" << f(r.min_duration_ms, 2) << "</td><td>" << r.memory_mb << "</td><td>"
          << f(r.avg_memory_used_pct, 1) << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
    if (t.has_untimed)
        o << "<p class='note'>Bin “-”: lines without a timestamp (plain stdout capture), counted "
             "in "
             "one bin.</p>\n";

    for (std::size_t i = 0; i < t.rows.size();) {
        const std::string& fn = t.rows[i].function;
        std::vector<const row*> bins;
        for (; i < t.rows.size() && t.rows[i].function == fn; ++i)
            if (!t.rows[i].total) bins.push_back(&t.rows[i]);
        o << "<h2>" << esc(fn) << "</h2>\n<div class='plots'>" << invocations_plot(fn, bins)
          << duration_plot(fn, bins) << "</div>\n";
    }
    o << "<p class='note'>The numbers are CloudWatch Logs Insights' <code>filter @type = "
         "\"REPORT\" | "
         "stats count(*), sum(@initDuration &gt; 0), max(@initDuration), avg/max/min(@duration), "
         "max(@memorySize), avg(@maxMemoryUsed/@memorySize*100) by bin("
      << bin_label(t.bin_ms) << ")</code>, per function.</p>\n</body></html>\n";
    return o.str();
}

} // namespace coldbrew::report
