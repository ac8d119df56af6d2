#include "models/sim/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <utility>

namespace coldbrew::models::sim {

namespace {

namespace mf = models::faults;

// What the fit keeps of a request.
struct request_info {
    const recorded_request* r = nullptr;
    std::vector<std::uint64_t> invocations;  // recorded_invoke ids, in order
    std::vector<std::uint64_t> children;     // requests whose parent this is, in order
};

// What the fit keeps of an invocation.
struct invocation_info {
    std::string function;
    std::optional<std::uint64_t> request;
    const recorded_handler* answer = nullptr;
    bool injected = false;  // its process was ended by an injected fault
};

bool is_client(const recorded_request& r) {
    return !r.parent && !r.authorizer && (r.front == "gateway" || r.front == "invoke");
}

// Total length of the union of [lo, hi] intervals, each clipped to [from, to].
double covered(std::vector<std::pair<double, double>> spans, double from, double to) {
    for (auto& s : spans) {
        s.first = std::max(s.first, from);
        s.second = std::min(s.second, to);
    }
    std::sort(spans.begin(), spans.end());
    double total = 0, end = from;
    for (const auto& [lo, hi] : spans) {
        if (hi <= lo) continue;
        const double start = std::max(lo, end);
        if (hi > start) {
            total += hi - start;
            end = hi;
        }
    }
    return total;
}

}  // namespace

double sample_quantile(const std::vector<double>& sorted, double q) {
    const double h = (static_cast<double>(sorted.size()) - 1) * q;
    const auto i = static_cast<std::size_t>(std::floor(h));
    if (i + 1 >= sorted.size()) return sorted.back();
    return sorted[i] + (h - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

distribution fit_latency(std::vector<double> sample) {
    for (auto& x : sample) x = std::max(x, 0.0);
    std::sort(sample.begin(), sample.end());
    std::vector<double> qs = {0.01, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99};
    if (sample.size() >= 1000) qs.push_back(0.999);
    std::vector<std::pair<double, double>> points;
    for (double q : qs) {
        // Rounded to a microsecond, so the text form (which users may paste into
        // coldbrew.yaml) reads back as the same distribution.
        const double v = std::round(sample_quantile(sample, q) * 1000.0) / 1000.0;
        if (v <= 0) continue;  // percentiles() needs values > 0; the tail below continues
        if (!points.empty() && v <= points.back().second) continue;
        points.emplace_back(q, v);
    }
    if (points.size() < 2) return distribution::fixed(std::round(sample_quantile(sample, 0.5) * 1000.0) / 1000.0);
    return distribution::percentiles(std::move(points));
}

fit_result fit_record(const run_record& record) {
    std::map<std::uint64_t, request_info> requests;
    std::map<std::uint64_t, invocation_info> invocations;
    // Crashed and timed-out invocations whose process exit is still to come, by function: an
    // "exit" names the environment, the answer names the invocation; the exit follows it.
    std::map<std::string, std::vector<std::pair<std::uint64_t, recorded_handler::outcome>>> ended;
    std::vector<std::string> function_order;
    fit_result out;
    std::vector<double> client_times;
    // Record times are the live scheduler's modeled ms (real / time_scale). A handler's work
    // and a client's pace are real: a handler that took 5 ms under --time-scale 0.01 is
    // recorded as 500 ms, and is fitted as the 5 ms it is.
    const double real = record.header.time_scale;

    for (const auto& e : record.events) {
        std::visit(
            [&](const auto& ev) {
                using T = std::decay_t<decltype(ev)>;
                if constexpr (std::is_same_v<T, recorded_request>) {
                    requests[ev.id].r = &ev;
                    if (ev.parent) {
                        if (auto p = requests.find(*ev.parent); p != requests.end())
                            p->second.children.push_back(ev.id);
                    }
                    if (is_client(ev)) {
                        client_times.push_back(ev.at_ms * real);
                        auto it = std::find_if(out.routes.begin(), out.routes.end(),
                                               [&](const fitted_route& fr) { return fr.route == ev.route; });
                        if (it == out.routes.end()) out.routes.push_back({ev.route, 1});
                        else ++it->requests;
                    }
                } else if constexpr (std::is_same_v<T, recorded_invoke>) {
                    invocations[ev.id] = {ev.function, ev.request, nullptr, false};
                    if (ev.request) {
                        if (auto r = requests.find(*ev.request); r != requests.end())
                            r->second.invocations.push_back(ev.id);
                    }
                    if (std::find(function_order.begin(), function_order.end(), ev.function) ==
                        function_order.end())
                        function_order.push_back(ev.function);
                } else if constexpr (std::is_same_v<T, recorded_handler>) {
                    auto it = invocations.find(ev.invocation);
                    if (it == invocations.end()) return;
                    it->second.answer = &ev;
                    if (ev.result == recorded_handler::outcome::crash ||
                        ev.result == recorded_handler::outcome::timeout)
                        ended[it->second.function].emplace_back(ev.invocation, ev.result);
                } else if constexpr (std::is_same_v<T, recorded_exit>) {
                    // An injected kill ends the process with a reason naming the fault; the
                    // crash it caused is the oldest crash of that function whose exit has not
                    // been seen (a timeout's exit says "timeout").
                    // An idle environment evicted for the memory budget, or one that never
                    // started, ended no invocation.
                    if (ev.reason == "memory-budget" || ev.reason == "start-failed") return;
                    auto& pending = ended[ev.function];
                    const auto want = ev.reason == "timeout" ? recorded_handler::outcome::timeout
                                                             : recorded_handler::outcome::crash;
                    auto it = std::find_if(pending.begin(), pending.end(),
                                           [&](const auto& p) { return p.second == want; });
                    if (it == pending.end()) return;  // an idle environment's end, a failed start
                    if (ev.reason.rfind("injected", 0) == 0) invocations[it->first].injected = true;
                    pending.erase(it);
                }
            },
            e);
    }

    out.client_requests = client_times.size();
    if (client_times.size() >= 2) {
        out.span_ms = client_times.back() - client_times.front();
        if (out.span_ms > 0)
            out.rate_per_s = static_cast<double>(client_times.size() - 1) / out.span_ms * 1000.0;
        double mean = 0, var = 0;
        const std::size_t n = client_times.size() - 1;
        for (std::size_t i = 1; i < client_times.size(); ++i) mean += client_times[i] - client_times[i - 1];
        mean /= static_cast<double>(n);
        for (std::size_t i = 1; i < client_times.size(); ++i) {
            const double d = client_times[i] - client_times[i - 1] - mean;
            var += d * d;
        }
        var /= static_cast<double>(n);
        out.gap_cv = mean > 0 ? std::sqrt(var) / mean : 0;
        out.poisson = out.gap_cv >= 0.5;
    }

    // The answer time of a request: its last answered invocation's.
    auto answered_at = [&](const request_info& ri) -> std::optional<double> {
        std::optional<double> at;
        for (auto id : ri.invocations) {
            const auto& inv = invocations.at(id);
            if (inv.answer) at = std::max(at.value_or(inv.answer->at_ms), inv.answer->at_ms);
        }
        return at;
    };

    for (const auto& fname : function_order) {
        fitted_function f;
        f.function = fname;
        std::vector<double> own, durations, lags;
        double cpu_total = 0, cpu_own_total = 0;
        bool any_cpu = false;
        std::map<std::vector<fitted_call>, std::uint64_t> sequences;
        std::vector<std::vector<fitted_call>> sequence_order;  // first seen first, for ties
        for (const auto& [id, inv] : invocations) {
            if (inv.function != fname) continue;
            if (!inv.answer) {
                ++f.unanswered;
                continue;
            }
            if (inv.injected) {
                ++f.injected;
                continue;
            }
            const auto& h = *inv.answer;
            ++f.invocations;
            using o = recorded_handler::outcome;
            if (h.result == o::error) ++f.errors;
            if (h.result == o::crash) ++f.crashes;
            if (h.result == o::timeout) ++f.timeouts;
            const double to = h.at_ms, from = h.at_ms - h.duration_ms;
            std::vector<std::pair<double, double>> waits;
            std::vector<fitted_call> seq;
            if (inv.request) {
                const auto& ri = requests.at(*inv.request);
                for (auto child_id : ri.children) {
                    const auto& child = requests.at(child_id);
                    const auto& c = *child.r;
                    if (c.at_ms < from || c.at_ms > to) continue;  // another invocation's
                    if (c.front == "states" || c.authorizer) continue;
                    if (c.front == "dependency") {
                        if (c.on != "request") continue;
                        seq.push_back({c.dependency, true, false});
                    } else if (!c.function.empty()) {
                        seq.push_back({c.function, false, c.async});
                        if (!c.async)
                            if (auto end = answered_at(child)) waits.emplace_back(c.at_ms, *end);
                    }
                }
            }
            const double waited = covered(std::move(waits), from, to);
            own.push_back((h.delivery_lag_ms + h.duration_ms - waited) * real);
            if (h.cpu_ms) {
                any_cpu = true;
                cpu_total += *h.cpu_ms * real;
                cpu_own_total += std::max(0.0, own.back());
            }
            durations.push_back(h.duration_ms * real);
            lags.push_back(h.delivery_lag_ms * real);
            if (!sequences.count(seq)) sequence_order.push_back(seq);
            ++sequences[seq];
        }
        // Dependency turns recorded through a proxy whose request turns carry no function of
        // their own are counted above; a dependency used only through connections (no
        // request turn) is not a call the simulator can make.
        if (f.invocations == 0) {
            out.functions.push_back(std::move(f));
            continue;
        }
        f.error_rate = static_cast<double>(f.errors + f.crashes) / static_cast<double>(f.invocations);
        f.error_rate = std::min(f.error_rate, 0.999999);
        std::vector<fitted_call> best;
        std::uint64_t best_n = 0;
        for (const auto& s : sequence_order)
            if (sequences[s] > best_n) {
                best = s;
                best_n = sequences[s];
            }
        f.calls = std::move(best);
        f.calls_share = static_cast<double>(best_n) / static_cast<double>(f.invocations);
        if (any_cpu && cpu_own_total > 0) f.cpu_fraction = cpu_total / cpu_own_total;
        f.latency_ms = fit_latency(own);
        f.latency_text = f.latency_ms.to_string();
        std::sort(durations.begin(), durations.end());
        std::sort(lags.begin(), lags.end());
        std::sort(own.begin(), own.end());
        f.duration_p50_ms = sample_quantile(durations, 0.5);
        f.lag_p50_ms = sample_quantile(lags, 0.5);
        f.own_p50_ms = std::max(0.0, sample_quantile(own, 0.5));
        out.functions.push_back(std::move(f));
    }
    return out;
}

fitted_rules rules_at_end(const std::vector<faults::rule>& initial, const run_record& record,
                          const faults::fault_registry& registry) {
    fitted_rules out;
    out.rules = initial;
    out.seed = record.header.seed;
    std::size_t unnamed = 0;
    auto parse = [&](const nlohmann::json& items) {
        std::vector<faults::rule> rules;
        for (const auto& j : items)
            rules.push_back(faults::parse_rule(j, registry, "recorded-rule-" + std::to_string(++unnamed)));
        return rules;
    };
    for (const auto& e : record.events) {
        const auto* r = std::get_if<recorded_rules>(&e);
        if (!r) continue;
        if (r->op == "replace") {
            out.rules = parse(r->rules);
        } else if (r->op == "add") {
            for (auto& rule : parse(r->rules)) out.rules.push_back(std::move(rule));
        } else if (r->op == "remove") {
            std::erase_if(out.rules, [&](const faults::rule& x) { return x.name == r->name; });
        } else if (r->op == "clear") {
            out.rules.clear();
        } else if (r->op == "seed") {
            out.seed = r->seed;
        } else if (r->op == "restore") {
            out.rules = initial;
        } else {
            continue;  // "reset" restarts counting only
        }
        ++out.changes;
    }
    return out;
}

}  // namespace coldbrew::models::sim
