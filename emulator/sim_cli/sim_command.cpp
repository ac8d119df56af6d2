#include "emulator/sim_cli/sim_command.hpp"
#include "emulator/sim_cli/replay_command.hpp"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "emulator/config/scenario_loader.hpp"
#include "emulator/sim_cli/html_report.hpp"
#include "emulator/sim_cli/shard.hpp"
#include "emulator/sim_cli/stack_scenario.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/report.hpp"

namespace coldbrew::sim_cli {

namespace {

// Whether two paths name one file: the same path however written, a symlink to it, or a hard
// link (an output that would overwrite an input).
bool same_file(const std::string& a, const std::string& b) {
    if (a.empty() || b.empty()) return false;
    std::error_code ec;
    if (std::filesystem::equivalent(a, b, ec)) return true;
    return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}

using json = nlohmann::ordered_json;

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string with_commas(std::uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

std::string ms_text(double ms) {
    if (ms >= 10000) return fixed(ms / 1000, 1) + " s";
    if (ms >= 1000) return fixed(ms / 1000, 2) + " s";
    if (ms >= 100) return fixed(ms, 0) + " ms";
    if (ms >= 10) return fixed(ms, 1) + " ms";
    return fixed(ms, 2) + " ms";
}

std::string pct(double p, int decimals = 4) { return fixed(p, decimals) + "%"; }

std::string pad(std::string s, std::size_t n) {
    if (s.size() < n) s.append(n - s.size(), ' ');
    return s;
}
std::string lpad(std::string s, std::size_t n) {
    if (s.size() < n) s.insert(0, n - s.size(), ' ');
    return s;
}

std::string dollars(double v) {
    if (v == 0) return "$0";
    if (v >= 100) return "$" + fixed(v, 0);
    if (v >= 1) return "$" + fixed(v, 2);
    if (v >= 0.01) return "$" + fixed(v, 3);
    return "$" + fixed(v, 5);
}

double num(const json& j) { return j.is_number() ? j.get<double>() : 0.0; }

void print_text(const json& r, const std::string& title, std::ostream& out) {
    out << "coldbrew sim: " << title << " — seed " << r["seed"].get<std::uint64_t>() << ", "
        << with_commas(r["requests"].get<std::uint64_t>()) << " requests, " << r["engine"].get<std::string>()
        << " engine";
    if (r.contains("simulated_s")) out << ", " << fixed(num(r["simulated_s"]), 1) << " s simulated";
    out << "\n";
    const json& a = r["availability"];
    out << "  availability  " << pct(num(a["percent"])) << "  (95% CI " << fixed(num(a["ci95_percent"][0]), 4)
        << "–" << pct(num(a["ci95_percent"][1])) << ")  "
        << (a["nines"].is_string() ? std::string("all") : fixed(num(a["nines"]), 2)) << " nines";
    if (a.contains("analytic")) {
        out << "\n  analytic      " << pct(num(a["analytic"]["percent"])) << "  "
            << (a["analytic"]["within_ci"].get<bool>() ? "(agrees: inside the simulated 95% CI)"
                                                       : "(differs: timeouts, throttles, quotas or deadlines at work)");
    }
    out << "\n";
    const json& b = r["error_budget"];
    out << "  error budget  " << fixed(num(b["downtime_minutes_per_30_days"]), 1)
        << " min of failed requests per 30 days";
    if (b.contains("slo_percent"))
        out << "; SLO " << fixed(num(b["slo_percent"]), 3) << "%: budget " << fixed(num(b["budget_minutes"]), 1)
            << " min, " << fixed(num(b["consumed_percent"]), 1) << "% used";
    out << "\n";
    const json& l = r["latency_ms"];
    out << "  latency       p50 " << ms_text(num(l["p50"])) << "  p90 " << ms_text(num(l["p90"])) << "  p95 "
        << ms_text(num(l["p95"])) << "  p99 " << ms_text(num(l["p99"])) << "  p99.9 " << ms_text(num(l["p99.9"]))
        << "  (successful requests)\n";
    if (r.contains("entries")) {
        out << "  entries         " << pad("name", 34) << lpad("share", 8) << lpad("availability", 14) << lpad("p50", 10)
            << lpad("p95", 10) << lpad("p99", 10) << "\n";
        for (const auto& e : r["entries"])
            out << "                  " << pad(e["name"].get<std::string>(), 34)
                << lpad(fixed(num(e["weight_percent"]), 1) + "%", 8) << lpad(pct(num(e["availability_percent"])), 14)
                << lpad(ms_text(num(e["latency_ms"]["p50"])), 10) << lpad(ms_text(num(e["latency_ms"]["p95"])), 10)
                << lpad(ms_text(num(e["latency_ms"]["p99"])), 10) << "\n";
    }
    // Calls made per client request, retries included (1 = no retry anywhere).
    out << "  attempts      " << fixed(num(r["retry_amplification"]), 4) << " per request (all components, retries included)"
        << "; duplicate side effects " << r["duplicates"].get<std::uint64_t>() << "\n";
    out << "  cold starts   " << fixed(num(r["cold_start_share"]["invocations_percent"]), 3)
        << "% of invocations, " << fixed(num(r["cold_start_share"]["requests_percent"]), 3) << "% of requests\n";
    if (r.contains("faults")) {
        // As the live run summary words it.
        const json& f = r["faults"];
        std::string text;
        for (const auto& [kind, n] : f["by_kind"].items())
            text += (text.empty() ? "" : ", ") + kind + ": " + with_commas(n.get<std::uint64_t>());
        if (text.empty()) text = "none";
        text += " (" + with_commas(f["decisions"].get<std::uint64_t>()) + " attempts decided by the fault rules)";
        if (f["missed"].get<std::uint64_t>())
            text += "; missed: " + with_commas(f["missed"].get<std::uint64_t>()) +
                    " (the handler answered before the injected kill)";
        out << "  faults        " << text << "\n";
        if (f.contains("not_simulated"))
            for (const auto& [kind, n] : f["not_simulated"].items())
                out << "                  " << kind << " " << with_commas(n.get<std::uint64_t>())
                    << ": decided and counted, not simulated (no payload sizes)\n";
    }
    if (r.contains("approximations"))
        for (const auto& a : r["approximations"]) {
            std::string who;
            if (a.contains("components"))
                for (const auto& n : a["components"]) who += (who.empty() ? "" : ", ") + n.get<std::string>();
            out << "  approximated  " << (who.empty() ? "" : who + ": ") << a["note"].get<std::string>() << "\n";
        }
    const json& c = r["cost"];
    out << "  cost          " << dollars(num(c["per_million_requests"])) << " per million requests (prices "
        << c["region"].get<std::string>() << ", " << c["prices_date"].get<std::string>() << ")\n";
    for (const auto& it : c["items"])
        out << "                  " << pad(it["item"].get<std::string>(), 44) << lpad(dollars(num(it["per_million_requests"])), 10) << "\n";
    if (c.contains("not_priced") && !c["not_priced"].empty()) {
        std::string names;
        for (const auto& n : c["not_priced"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
        out << "                  not priced (give price_per_million): " << names << "\n";
    }
    if (!r["failures"].empty()) {
        out << "  failures by root cause\n";
        for (const auto& f : r["failures"])
            out << "                  " << pad(f["component"].get<std::string>(), 18) << pad(f["cause"].get<std::string>(), 10)
                << lpad(with_commas(f["requests"].get<std::uint64_t>()), 12) << "  " << fixed(num(f["percent_of_requests"]), 4)
                << "% of requests\n";
    }
    out << "  components      " << pad("name", 18) << pad("SLA", 10) << lpad("calls/req", 10) << lpad("tries/call", 11)
        << lpad("p50", 10) << lpad("p99", 10) << "  notes\n";
    for (const auto& x : r["components"]) {
        std::string notes;
        const json& af = x["attempt_failures"];
        std::string fails;
        for (const char* k : {"error", "timeout", "throttle", "phantom"})
            if (af[k].get<std::uint64_t>()) fails += (fails.empty() ? "" : " ") + std::string(k) + " " + with_commas(af[k].get<std::uint64_t>());
        if (!fails.empty()) notes += "failed tries: " + fails;
        if (x.contains("cold_starts") && x["cold_starts"].get<std::uint64_t>())
            notes += (notes.empty() ? "" : "; ") + std::string("cold ") + fixed(num(x["cold_start_percent"]), 3) + "%" +
                     (x.contains("init_ms_mean") ? " (Init " + ms_text(num(x["init_ms_mean"])) + ")" : "");
        if (x.contains("waited_for_environment")) {
            const json& w = x["waited_for_environment"];
            notes += (notes.empty() ? "" : "; ") + with_commas(w["invocations"].get<std::uint64_t>()) +
                     " waited at max_environments (mean " + ms_text(num(w["wait_mean_ms"])) + ")";
        }
        if (x.contains("duplicates") && x["duplicates"].get<std::uint64_t>())
            notes += (notes.empty() ? "" : "; ") + std::string("duplicates ") + with_commas(x["duplicates"].get<std::uint64_t>());
        if (x.contains("cache_hit_ratio"))
            notes += (notes.empty() ? "" : "; ") + std::string("cache hits ") + fixed(num(x["cache_hit_ratio"]) * 100, 1) + "%";
        if (x.contains("queue")) {
            const json& q = x["queue"];
            notes += (notes.empty() ? "" : "; ") + std::string("queued ") + fixed(num(q["waited_percent"]), 2) +
                     "%, mean wait " + ms_text(num(q["wait_mean_ms"]));
            if (q.contains("erlang_c")) {
                // At utilisation >= 1 the queue grows without bound: no finite mean wait.
                const auto& w = q["erlang_c"]["wait_mean_ms"];
                notes += " (M/M/c Erlang C: " + fixed(num(q["erlang_c"]["wait_percent"]), 2) + "%, " +
                         (w.is_number() && std::isfinite(num(w)) ? ms_text(num(w))
                                                                  : std::string("unbounded: utilisation >= 1")) +
                         ")";
            }
        }
        if (x.contains("async"))
            notes += (notes.empty() ? "" : "; ") + std::string("async delivered ") +
                     with_commas(x["async"]["delivered"].get<std::uint64_t>()) + "/" +
                     with_commas(x["async"]["events"].get<std::uint64_t>());
        out << "                  " << pad(x["name"].get<std::string>(), 18) << pad(fixed(num(x["availability_percent"]), 3) + "%", 10)
            << lpad(fixed(num(x["calls_per_request"]), 4), 10) << lpad(fixed(num(x["attempts_per_call"]), 4), 11)
            << lpad(ms_text(num(x["latency_ms"]["p50"])), 10) << lpad(ms_text(num(x["latency_ms"]["p99"])), 10) << "  "
            << notes << "\n";
    }
}

void print_table(const std::vector<run_entry>& runs, std::ostream& out) {
    std::size_t w = 28;
    for (const auto& run : runs) w = std::max(w, run.label.size() + 2);
    out << "\n" << pad("run", w) << lpad("availability", 13) << lpad("nines", 7) << lpad("analytic", 11)
        << lpad("p50", 10) << lpad("p95", 10) << lpad("p99", 10) << lpad("tries/req", 10) << lpad("dups", 8)
        << lpad("cold%", 8) << lpad("$/M req", 10) << "\n";
    for (const auto& run : runs) {
        const json& r = run.report;
        const json& a = r["availability"];
        out << pad(run.label, w) << lpad(pct(num(a["percent"])), 13)
            << lpad(a["nines"].is_string() ? std::string("all") : fixed(num(a["nines"]), 2), 7)
            << lpad(a.contains("analytic") ? pct(num(a["analytic"]["percent"])) : std::string("-"), 11)
            << lpad(ms_text(num(r["latency_ms"]["p50"])), 10) << lpad(ms_text(num(r["latency_ms"]["p95"])), 10)
            << lpad(ms_text(num(r["latency_ms"]["p99"])), 10) << lpad(fixed(num(r["retry_amplification"]), 3), 10)
            << lpad(std::to_string(r["duplicates"].get<std::uint64_t>()), 8)
            << lpad(fixed(num(r["cold_start_share"]["invocations_percent"]), 2), 8)
            << lpad(dollars(num(r["cost"]["per_million_requests"])), 10) << "\n";
    }
}

// A progress bar on stderr, redrawn in place; only on a terminal.
class progress_bar {
public:
    explicit progress_bar(bool on) : on_(on) {}
    void operator()(std::uint64_t done, std::uint64_t total, const std::string& label) {
        if (!on_ || total == 0) return;
        const int width = 30;
        const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
        const int filled = static_cast<int>(f * width);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.append(static_cast<std::size_t>(width - filled), '-');
        std::fprintf(stderr, "\r%s [%s] %3d%%  %s / %s requests", label.c_str(), bar.c_str(),
                     static_cast<int>(f * 100), with_commas(done).c_str(), with_commas(total).c_str());
        std::fflush(stderr);
        drawn_ = true;
    }
    void clear() {
        if (on_ && drawn_) std::fprintf(stderr, "\r\033[K");
        drawn_ = false;
    }

private:
    bool on_;
    bool drawn_ = false;
};

// "path=v1,v2,…" → (path, values).

}  // namespace

std::pair<std::string, std::vector<std::string>> parse_sweep(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw std::invalid_argument("--sweep must be path=v1,v2,…, got '" + text + "'");
    std::vector<std::string> values;
    const std::string rest = text.substr(eq + 1);
    // Values are split at commas outside brackets, so a distribution
    // ("lognormal(median=5ms, p99=20ms)"), a list or a mapping is one value.
    auto push = [&](std::string v) {
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        while (!v.empty() && v.back() == ' ') v.pop_back();
        if (v.empty()) throw std::invalid_argument("--sweep: empty value in '" + text + "'");
        values.push_back(std::move(v));
    };
    int depth = 0;
    std::string current;
    for (char ch : rest) {
        if (ch == '(' || ch == '[' || ch == '{') ++depth;
        if (ch == ')' || ch == ']' || ch == '}') --depth;
        if (depth < 0) throw std::invalid_argument("--sweep: unbalanced brackets in '" + text + "'");
        if (ch == ',' && depth == 0) {
            push(std::exchange(current, std::string()));
            continue;
        }
        current += ch;
    }
    if (depth != 0) throw std::invalid_argument("--sweep: unbalanced brackets in '" + text + "'");
    push(std::move(current));
    return {text.substr(0, eq), values};
}

const ensure_grammar& sim_ensure_grammar() {
    static const ensure_grammar g{{"availability", "nines", "p50", "p90", "p95", "p99", "p99.9",
                                   "mean", "max", "duplicates", "cost_per_million",
                                   "cold_start_share", "retry_amplification"},
                                  {},
                                  false,
                                  {}};
    return g;
}

ensure_gate parse_ensure(const std::string& text, const ensure_grammar& grammar) {
    ensure_gate g;
    g.text = text;
    std::size_t i = 0;
    auto skip = [&] {
        while (i < text.size() && text[i] == ' ') ++i;
    };
    skip();
    const std::size_t m0 = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '.')) ++i;
    g.metric = text.substr(m0, i - m0);
    if (i < text.size() && text[i] == '[') {
        const auto close = text.find(']', i);
        if (!grammar.subjects)
            throw std::invalid_argument("--ensure '" + text + "': " + g.metric +
                                        " takes no [subject] here");
        if (close == std::string::npos)
            throw std::invalid_argument("--ensure '" + text + "': '[' without its ']'");
        g.subject = text.substr(i + 1, close - i - 1);
        while (!g.subject.empty() && g.subject.front() == ' ') g.subject.erase(0, 1);
        while (!g.subject.empty() && g.subject.back() == ' ') g.subject.pop_back();
        if (g.subject.empty())
            throw std::invalid_argument("--ensure '" + text + "': empty [subject]");
        i = close + 1;
    }
    skip();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
        if (text.compare(i, std::strlen(op), op) == 0) {
            g.op = op;
            i += std::strlen(op);
            break;
        }
    }
    if (g.metric.empty() || g.op.empty())
        throw std::invalid_argument("--ensure '" + text + "': expected 'metric op value', e.g. 'p95 < 300ms'");
    for (const auto& [name, why] : grammar.refused)
        if (g.metric == name) throw std::invalid_argument("--ensure '" + text + "': " + why);
    const auto& metrics = grammar.metrics;
    bool known = std::find(metrics.begin(), metrics.end(), g.metric) != metrics.end();
    for (const auto& prefix : grammar.prefixes)
        known = known || (g.metric.size() > prefix.size() && g.metric.starts_with(prefix));
    if (!known) {
        std::string all;
        for (const auto& m : metrics) all += (all.empty() ? "" : ", ") + m;
        for (const auto& m : grammar.prefixes) all += (all.empty() ? "" : ", ") + m + "<kind>";
        throw std::invalid_argument("--ensure '" + text + "': unknown metric '" + g.metric + "' (known: " + all + ")");
    }
    skip();
    std::string value = text.substr(i);
    while (!value.empty() && value.back() == ' ') value.pop_back();
    double x = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
    if (ec != std::errc() || !std::isfinite(x))
        throw std::invalid_argument("--ensure '" + text + "': expected a number after " + g.op);
    std::string unit(p, static_cast<const char*>(value.data() + value.size()));
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    const bool latency = g.metric.front() == 'p' || g.metric == "mean" || g.metric == "max";
    const bool percentage = g.metric == "availability" || g.metric == "cold_start_share";
    if (latency) {
        if (unit == "" || unit == "ms") {
        } else if (unit == "s") {
            x *= 1000;
        } else if (unit == "us" || unit == "µs") {
            x /= 1000;
        } else if (unit == "min") {
            x *= 60000;
        } else {
            throw std::invalid_argument("--ensure '" + text + "': a latency takes ms, s, min or us, not '" + unit + "'");
        }
    } else if (percentage) {
        if (unit != "%" && unit != "")
            throw std::invalid_argument("--ensure '" + text + "': " + g.metric + " is a percentage, not '" + unit + "'");
    } else if (!unit.empty() && !(g.metric == "cost_per_million" && unit == "$")) {
        throw std::invalid_argument("--ensure '" + text + "': " + g.metric + " takes a plain number, not '" + unit + "'");
    }
    g.threshold = x;
    return g;
}

bool ensure_holds(const ensure_gate& g, double v) {
    if (g.op == "<") return v < g.threshold;
    if (g.op == "<=") return v <= g.threshold;
    if (g.op == ">") return v > g.threshold;
    if (g.op == ">=") return v >= g.threshold;
    if (g.op == "==") return v == g.threshold;
    return v != g.threshold;
}

void add_sim_command(CLI::App& app, sim_options& opts) {
    auto* sim = app.add_subcommand(
        "sim", "What-if simulation of a call chain on a virtual clock: availability (nines), "
               "latency, retries, cold starts, cost");
    sim->fallthrough();
    // Not ->required(): `sim merge PART…` has no scenario of its own (run_sim checks).
    sim->add_option("scenario", opts.scenario,
                    "Scenario YAML (see examples/whatif/), or an app: the directory or template `coldbrew up` takes");
    sim->add_option("-n,--requests", opts.requests, "Requests to simulate (overrides the file)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000'000}));
    // CLI11 would wrap -1 round to 2^64-1; a seed is exactly a 64-bit unsigned number.
    sim->add_option("--seed", opts.seed, "Seed (overrides the file)")
        ->check(CLI::Validator(
            [](const std::string& text) -> std::string {
                std::uint64_t v = 0;
                auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
                if (text.empty() || ec != std::errc() || end != text.data() + text.size())
                    return "must be a whole number from 0 to 18446744073709551615, got '" +
                           text + "'";
                return "";
            },
            "N", "seed"));
    sim->add_option("--threads", opts.threads, "Worker threads (default: all cores); the result is the same for any count");
    sim->add_option("--ensure", opts.ensure,
                    "Gate, repeatable: 'availability >= 99.99%', 'p95 < 300ms', 'duplicates == 0', "
                    "'cost_per_million < 5'; exit 1 when one fails");
    sim->add_option("--set", opts.set, "Override a value by key path, repeatable: components.db.retry=none");
    sim->add_option("--sweep", opts.sweep,
                    "One run per value: 'components.fn.memory_mb=512,1024,2048'; prints a table");
    sim->add_flag("--json", opts.json, "Print the report as JSON");
    sim->add_option("--html", opts.html, "Write a self-contained HTML report with plots to this file");
    sim->add_flag("--no-progress", opts.no_progress, "No progress bar");
    auto* replay = sim->add_option(
        "--replay", opts.replay,
        "Replay a run record (coldbrew up --record FILE) of the app at PATH through the same "
        "models: the decisions the live run made, again");
    sim->add_option("--decision-log", opts.decision_log,
                    "With --replay: write the replayed decisions to this JSONL file")
        ->needs(replay);
    sim->add_option("--compare", opts.compare,
                    "With --replay: compare with the live run's decision log; exit 1 when they "
                    "differ (init_overrun lines ignored)")
        ->needs(replay);
    sim->add_option("--shard", opts.shard,
                    "K/N: compute part K of N of the run (chunks i with i mod N == K) and print it as "
                    "a part file (JSON) for `coldbrew sim merge`");

    auto* merge = sim->add_subcommand(
        "merge", "Merge the part files of a run split with --shard into the report of the whole run");
    merge->add_option("parts", opts.merge.parts, "Part files, one per K from 0 to N-1")->required();
    merge->add_option("--scenario", opts.merge.scenario,
                      "The scenario, when it is no longer at the path the parts recorded; it must "
                      "resolve to the same runs");
    merge->add_flag("--json", opts.json, "Print the report as JSON");
    merge->add_option("--html", opts.html, "Write a self-contained HTML report with plots to this file");
    merge->add_option("--ensure", opts.ensure, "Gate, repeatable, as for `sim`; exit 1 when one fails");
    // An app (the directory `coldbrew up` takes): up's options that shape the stack.
    sim->add_option("--parameter-overrides", opts.parameter_overrides,
                    "App: SAM template parameters, 'Key=Value Key2=Value2' (as `up`)");
    sim->add_option("--stage", opts.stage, "App: serverless.yml stage (as `up`)");
    sim->add_flag("--realistic-sla", opts.realistic_sla,
                  "App: API Gateway and Lambda lose requests at their published SLA (as `up`)");
    auto* fit = sim->add_option(
        "--fit", opts.fit,
        "App: fit the handlers' latency, errors and calls and the arrivals to a run record "
        "(coldbrew up --record FILE) instead of coldbrew.yaml's sim sections");
    sim->add_option("--fit-out", opts.fit_out,
                    "With --fit: also write what was fitted as coldbrew.yaml sim sections to this file")
        ->needs(fit);
    fit->excludes(replay);
    sim->add_option("--rate-scale", opts.rate_scale, "Multiply every arrival rate, e.g. 10 for ten times the traffic")
        ->check(CLI::Range(1e-6, 1e6))
        ->check(CLI::Validator(
            [](const std::string& text) -> std::string {
                // CLI11's range lets NaN through (every comparison with it is false).
                return text.find_first_of("nN") != std::string::npos ? "must be a number from 1e-06 to 1e6" : "";
            },
            "X", "finite"));
}

int run_sim(const sim_options& opts) {
    if (!opts.merge.parts.empty()) return run_merge(opts);
    if (!opts.replay.empty()) {
        if (opts.scenario.empty() || !opts.shard.empty()) {
            std::cerr << "sim: --replay takes the app's PATH, and no --shard\n";
            return 2;
        }
        // A replay reports decisions, not a simulated run: a flag of the run's would be
        // silently ignored (and an --ensure gate would pass), so it is refused.
        std::vector<std::string> ignored;
        if (!opts.ensure.empty()) ignored.push_back("--ensure");
        if (opts.json) ignored.push_back("--json");
        if (!opts.html.empty()) ignored.push_back("--html");
        if (!opts.set.empty()) ignored.push_back("--set");
        if (!opts.sweep.empty()) ignored.push_back("--sweep");
        if (opts.seed) ignored.push_back("--seed");
        if (opts.requests) ignored.push_back("--requests");
        if (opts.rate_scale != 1) ignored.push_back("--rate-scale");
        if (opts.realistic_sla) ignored.push_back("--realistic-sla");
        if (!ignored.empty()) {
            std::string list;
            for (const auto& f : ignored) list += (list.empty() ? "" : ", ") + f;
            std::cerr << "sim: --replay replays the record's decisions (its seed and --realistic-sla are the "
                         "record's); it takes no "
                      << list << "\n";
            return 2;
        }
        auto same = [](const std::string& a, const std::string& b) { return same_file(a, b); };
        if (same(opts.decision_log, opts.compare) || same(opts.decision_log, opts.replay)) {
            std::cerr << "sim: --decision-log " << opts.decision_log << " would overwrite "
                      << (same(opts.decision_log, opts.compare) ? "the --compare log" : "the record")
                      << "; give it a file of its own\n";
            return 2;
        }
        try {
            return run_replay({opts.scenario, opts.replay, opts.decision_log, opts.compare, app_load_options(opts)});
        } catch (const std::invalid_argument& e) {
            std::cerr << "coldbrew: " << e.what() << "\n";
            return 2;
        }
    }
    try {
        if (opts.scenario.empty()) throw std::invalid_argument("sim: a scenario file is required");
        std::vector<ensure_gate> gates;
        for (const auto& e : opts.ensure) gates.push_back(parse_ensure(e));

        std::vector<config::scenario_override> base;
        for (const auto& s : opts.set) base.push_back(config::parse_override(s, "--set " + s));
        if (opts.requests) base.push_back({"requests", std::to_string(*opts.requests), "--requests"});
        if (opts.seed) base.push_back({"seed", std::to_string(*opts.seed), "--seed"});

        std::string sweep_path;
        std::vector<std::string> sweep_values = {""};
        if (!opts.sweep.empty()) std::tie(sweep_path, sweep_values) = parse_sweep(opts.sweep);

        // Load every run first, so a bad value anywhere stops before any work.
        struct planned {
            config::loaded_scenario loaded;
            std::string sweep_value;
            std::vector<std::string> notes, not_simulated;  // an app's conversion
        };
        std::vector<planned> plans;
        const bool app = is_app_path(opts.scenario);
        stack_sim_options app_options = stack_options(opts);
        if (!opts.fit.empty()) {
            if (!app) throw std::invalid_argument("--fit applies to an app (the directory `coldbrew up` takes)");
            if (same_file(opts.fit_out, opts.fit))
                throw std::invalid_argument("--fit-out " + opts.fit_out + " would overwrite the record; give it a file of its own");
            app_options.fit = load_fit(opts.fit);
        }
        for (const auto& v : sweep_values) {
            auto overrides = base;
            if (!sweep_path.empty()) overrides.push_back({sweep_path, v, "--sweep " + sweep_path + "=" + v});
            if (app) {
                stack_plan sp = plan_stack_run(opts.scenario, app_options, app_load_options(opts), overrides);
                if (!opts.fit_out.empty() && plans.empty()) {
                    std::ofstream out(opts.fit_out, std::ios::trunc);
                    out << sp.fitted_yaml;
                    if (!out.flush()) throw std::invalid_argument("--fit-out: cannot write " + opts.fit_out);
                }
                plans.push_back({std::move(sp.loaded), v, std::move(sp.notes), std::move(sp.not_simulated)});
            } else {
                if (opts.rate_scale != 1 || opts.realistic_sla || !opts.stage.empty() || !opts.parameter_overrides.empty())
                    throw std::invalid_argument("--rate-scale, --realistic-sla, --stage and --parameter-overrides "
                                                "apply to an app; for a scenario file use --set");
                plans.push_back({config::load_scenario(opts.scenario, overrides), v, {}, {}});
            }
        }
        if (app && !opts.json) print_stack_notes(plans.front().notes, plans.front().not_simulated, std::cout);

        auto label_of = [&](const planned& p, const config::scenario_variant& variant) {
            std::string label = variant.scenario.name;
            if (!variant.name.empty()) label += " / " + variant.name;
            if (!sweep_path.empty()) label += " / " + sweep_path + "=" + p.sweep_value;
            return label;
        };
        // A part (--shard) or a merge: the runs' identity, so parts of other runs never mix.
        const bool sharding = !opts.shard.empty(), merging = !opts.merged_identity.empty();
        shard_spec shard;
        part this_part;
        if (sharding) {
            shard = parse_shard(opts.shard);
            if (!gates.empty() || !opts.html.empty())
                throw std::invalid_argument("--shard prints a part file: give --ensure and --html to `coldbrew sim merge`");
        }
        if (sharding || merging) {
            std::vector<identity_run> ids;
            for (const auto& p : plans)
                for (const auto& v : p.loaded.variants) ids.push_back({label_of(p, v), &v.scenario, v.profile.get()});
            const std::string identity = runs_identity(ids);
            if (merging && (identity != opts.merged_identity || ids.size() != opts.merged.size()))
                throw std::invalid_argument("merge: " + opts.scenario +
                                            ", with the --requests, --seed, --set and --sweep the parts recorded, is "
                                            "not what the parts ran (identity " + identity + ", parts " +
                                            opts.merged_identity + "): was it changed since?");
            this_part.identity = identity;
            this_part.shard = shard;
            this_part.command = {opts.scenario,     opts.requests,      opts.seed,
                                 opts.set,          opts.sweep,         opts.parameter_overrides,
                                 opts.stage,        opts.realistic_sla, opts.rate_scale,
                                 // Absolute: a merge may run elsewhere, as a part's scenario
                                 // path may be given again with --scenario.
                                 opts.fit.empty() ? std::string() : std::filesystem::absolute(opts.fit).string()};
        }

        const unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
        progress_bar bar(!opts.no_progress && isatty(STDERR_FILENO));
        std::vector<run_entry> runs;
        std::size_t index = 0;
        for (auto& p : plans) {
            for (auto& variant : p.loaded.variants) {
                const std::string label = label_of(p, variant);
                models::sim::run_options ro;
                ro.threads = threads;
                ro.shard_index = shard.index;
                ro.shard_count = shard.count;
                ro.progress = [&](std::uint64_t done, std::uint64_t total) { bar(done, total, label); };
                const models::sim::run_result r =
                    merging ? opts.merged[index] : models::sim::run(variant.scenario, ro);
                ++index;
                bar.clear();
                if (sharding) {
                    this_part.runs.push_back({label, r});
                    continue;
                }
                json report = models::sim::report_json(variant.scenario, r);
                if (app) report["stack"] = {{"notes", p.notes}, {"not_simulated", p.not_simulated}};
                run_entry e;
                e.label = label;
                e.variant = variant.name;
                e.sweep_path = sweep_path;
                e.sweep_value = p.sweep_value;
                e.report = std::move(report);
                runs.push_back(std::move(e));
            }
        }

        // Output.
        if (sharding) {
            std::cout << part_to_json(this_part).dump() << "\n";
            return 0;
        }
        if (opts.json) {
            if (runs.size() == 1) {
                json out = runs[0].report;
                if (!runs[0].variant.empty()) out["variant"] = runs[0].variant;
                std::cout << out.dump(2) << "\n";
            } else {
                json out;
                json arr = json::array();
                for (const auto& r : runs) {
                    json x;
                    x["label"] = r.label;
                    if (!r.variant.empty()) x["variant"] = r.variant;
                    if (!r.sweep_path.empty()) x["sweep"] = json{{"path", r.sweep_path}, {"value", r.sweep_value}};
                    x["report"] = r.report;
                    arr.push_back(x);
                }
                out["runs"] = arr;
                std::cout << out.dump(2) << "\n";
            }
        } else {
            for (std::size_t i = 0; i < runs.size(); ++i) {
                if (i) std::cout << "\n";
                print_text(runs[i].report, runs[i].label, std::cout);
            }
            if (runs.size() > 1) print_table(runs, std::cout);
        }
        if (!opts.html.empty()) {
            std::ofstream f(opts.html, std::ios::binary);
            f << html_report(runs);
            if (!f) {
                std::fprintf(stderr, "coldbrew: cannot write %s\n", opts.html.c_str());
                return 2;
            }
            if (!opts.json) std::cout << "\nHTML report: " << opts.html << "\n";
        }

        // Gates, on every run.
        bool failed = false;
        for (const auto& g : gates) {
            for (const auto& r : runs) {
                const auto v = models::sim::report_metric(r.report, g.metric);
                const bool ok = v && ensure_holds(g, *v);
                const std::string got = v ? fixed(*v, 6) : "n/a";
                std::fprintf(stderr, "ensure %s: %s (%s: %s)\n", ok ? "ok" : "failed", g.text.c_str(),
                             r.label.c_str(), got.c_str());
                if (!ok) failed = true;
            }
        }
        return failed ? 1 : 0;
    } catch (const config::config_error& e) {
        std::fprintf(stderr, "coldbrew: config error: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "coldbrew: %s\n", e.what());
        return 2;
    } catch (const models::sim::record_error& e) {
        std::fprintf(stderr, "coldbrew: --fit: %s\n", e.what());
        return 2;
    }
}

}  // namespace coldbrew::sim_cli
