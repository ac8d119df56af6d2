#include "models/sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <utility>

namespace coldbrew::models::sim {

namespace {

using json = nlohmann::ordered_json;

// Reports print rounded figures so they read well and compare byte for byte.
double round_to(double v, int digits) {
    if (!std::isfinite(v)) return v;
    const double f = std::pow(10.0, digits);
    return std::round(v * f) / f;
}

// Significant digits, for quantities spanning many magnitudes (costs, ratios).
double sig(double v, int digits) {
    if (!std::isfinite(v) || v == 0) return v;
    const int mag = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    return round_to(v, std::max(0, digits - 1 - mag));
}

// The name of the faults::action alternative at `index` ("phantom_before", …).
template <std::size_t... I>
std::string_view action_name_at(std::size_t index, std::index_sequence<I...>) {
    faults::action a;
    ((index == I ? (void)a.emplace<I>() : (void)0), ...);
    return faults::action_name(a);
}
std::string_view action_name_at(std::size_t index) {
    return action_name_at(index, std::make_index_sequence<fault_action_count>{});
}

json latency_json(const histogram& h) {
    json j;
    j["p50"] = round_to(h.quantile_ms(0.50), 3);
    j["p90"] = round_to(h.quantile_ms(0.90), 3);
    j["p95"] = round_to(h.quantile_ms(0.95), 3);
    j["p99"] = round_to(h.quantile_ms(0.99), 3);
    j["p99.9"] = round_to(h.quantile_ms(0.999), 3);
    j["mean"] = round_to(h.mean_ms(), 3);
    j["max"] = round_to(h.max_ms(), 3);
    return j;
}

// ---- analytic availability over the flow ---------------------------------------------------

struct walker {
    const scenario& s;
    bool uniform = true;
    std::vector<int> depth;

    double seq(const std::vector<step>& steps) {
        double a = 1.0;
        for (const step& st : steps) {
            if (st.type == step::kind::parallel) {
                for (const auto& b : st.branches) a *= seq(b);
                continue;
            }
            if (st.async) continue;
            a *= call(st);
        }
        return a;
    }

    double call(const step& st) {
        const component& c = s.components[st.component];
        const retry_policy& p = st.retry ? *st.retry : c.retry;
        const std::optional<int> k = p.uniform_attempts();
        if (!k) uniform = false;
        if (++depth[st.component] > 64) return 0;  // a cycle; compile() reports it
        const double attempt = c.availability * seq(c.calls);
        --depth[st.component];
        double a = retried_availability(attempt, k.value_or(1));
        if (st.cache && st.cache->hit_ratio) a = *st.cache->hit_ratio + (1 - *st.cache->hit_ratio) * a;
        return a;
    }
};

}  // namespace

double erlang_c(int c, double a) {
    if (c <= 0) return 1.0;
    if (a >= c) return 1.0;
    double b = 1.0;
    for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
    const double rho = a / c;
    return b / (1.0 - rho * (1.0 - b));
}

double mm_c_mean_wait(int c, double lambda, double mu) {
    if (lambda >= c * mu) return std::numeric_limits<double>::infinity();
    return erlang_c(c, lambda / mu) / (c * mu - lambda);
}

double retried_availability(double a, int k) {
    return 1.0 - std::pow(1.0 - a, std::max(1, k));
}

analytic_availability analytic_flow_availability(const scenario& s) {
    walker w{s, true, std::vector<int>(s.components.size(), 0)};
    for (const component& c : s.components)
        for (const step& st : c.calls)
            if (st.cache && !st.cache->hit_ratio) w.uniform = false;  // TTL caches: rate-dependent
    for (const step& st : s.flow)
        if (st.cache && !st.cache->hit_ratio) w.uniform = false;
    for (const entry& e : s.entries)
        for (const step& st : e.flow)
            if (st.cache && !st.cache->hit_ratio) w.uniform = false;
    double a = 0;
    if (s.entries.empty()) {
        a = w.seq(s.flow);
    } else {
        // A mix: each entry's availability, weighted by its share of arrivals.
        double total = 0;
        for (const entry& e : s.entries) {
            a += e.weight * w.seq(e.flow);
            total += e.weight;
        }
        a = total > 0 ? a / total : 0;
    }
    analytic_availability out;
    if (w.uniform) out.value = a;
    out.assumptions =
        "independent attempts; exact when no timeout, throttle, retry quota or deadline cuts "
        "an attempt or a retry";
    return out;
}

nlohmann::ordered_json report_json(const scenario& s, const run_result& r) {
    json j;
    const double n = static_cast<double>(std::max<std::uint64_t>(1, r.requests));
    j["scenario"] = s.name;
    if (!s.description.empty()) j["description"] = s.description;
    j["seed"] = s.seed;
    j["engine"] = r.engine;
    j["requests"] = r.requests;
    if (r.engine == "events") j["simulated_s"] = round_to(static_cast<double>(r.simulated_us) / 1e6, 3);

    // Availability.
    const double avail = r.requests ? static_cast<double>(r.successes) / n : 0.0;
    const interval ci = wilson_interval(r.successes, r.requests);
    json a;
    a["percent"] = round_to(avail * 100, 6);
    a["ci95_percent"] = json::array({round_to(ci.lo * 100, 6), round_to(ci.hi * 100, 6)});
    const double nn = nines(avail);
    a["nines"] = std::isfinite(nn) ? json(round_to(nn, 3)) : json("all");
    a["failed_requests"] = r.requests - r.successes;
    const analytic_availability an = analytic_flow_availability(s);
    if (an.value) {
        json x;
        x["percent"] = round_to(*an.value * 100, 6);
        x["assumptions"] = an.assumptions;
        // Agreement: the exact figure inside the simulated 95% interval (or, when the run is
        // too short to resolve it, at most one failed request away).
        const bool within = (*an.value >= ci.lo && *an.value <= ci.hi) ||
                            std::fabs(*an.value - avail) * n <= 1.0;
        x["within_ci"] = within;
        a["analytic"] = x;
    }
    j["availability"] = a;

    // Error budget: a 30-day month has 43,200 minutes.
    json b;
    b["downtime_minutes_per_30_days"] = round_to((1 - avail) * 43200.0, 3);
    if (s.slo) {
        b["slo_percent"] = round_to(*s.slo * 100, 6);
        b["budget_minutes"] = round_to((1 - *s.slo) * 43200.0, 3);
        b["consumed_percent"] = round_to((1 - avail) / (1 - *s.slo) * 100, 2);
    }
    j["error_budget"] = b;

    j["latency_ms"] = latency_json(r.latency);

    // Each entry of a mix, when there is more than one.
    if (s.entries.size() > 1 && r.entries.size() == s.entries.size()) {
        double total_weight = 0;
        for (const entry& e : s.entries) total_weight += e.weight;
        json entries = json::array();
        for (std::size_t i = 0; i < s.entries.size(); ++i) {
            const entry_counts& k = r.entries[i];
            json x;
            x["name"] = s.entries[i].name;
            x["weight_percent"] = sig(s.entries[i].weight / total_weight * 100, 4);
            x["requests"] = k.requests;
            x["availability_percent"] =
                k.requests ? round_to(static_cast<double>(k.successes) / static_cast<double>(k.requests) * 100, 6)
                           : 0.0;
            x["failed_requests"] = k.requests - k.successes;
            json l;
            l["p50"] = round_to(k.latency.quantile_ms(0.50), 3);
            l["p95"] = round_to(k.latency.quantile_ms(0.95), 3);
            l["p99"] = round_to(k.latency.quantile_ms(0.99), 3);
            x["latency_ms"] = l;
            entries.push_back(x);
        }
        j["entries"] = entries;
    }

    // Failures by root cause.
    json failures = json::array();
    for (std::size_t i = 0; i < r.components.size(); ++i)
        for (int c = 0; c < cause_count; ++c) {
            const std::uint64_t k = r.components[i].root_causes[c];
            if (!k) continue;
            json f;
            f["component"] = s.components[i].name;
            f["cause"] = cause_name(c);
            f["requests"] = k;
            f["percent_of_requests"] = sig(static_cast<double>(k) / n * 100, 4);
            failures.push_back(f);
        }
    j["failures"] = failures;

    std::uint64_t attempts = 0, duplicates = 0, invocations = 0, cold = 0;
    for (const auto& c : r.components) {
        attempts += c.attempts;
        duplicates += c.duplicates;
        invocations += c.invocations;
        cold += c.cold_starts;
    }
    // Attempts per request over all components (a chain of four hops without retries: 4).
    j["retry_amplification"] = round_to(static_cast<double>(attempts) / n, 4);
    j["duplicates"] = duplicates;
    json cs;
    cs["invocations_percent"] =
        invocations ? sig(static_cast<double>(cold) / static_cast<double>(invocations) * 100, 4) : 0.0;
    cs["requests_percent"] = sig(static_cast<double>(r.requests_with_cold_start) / n * 100, 4);
    j["cold_start_share"] = cs;

    // Cost.
    const prices& p = s.price;
    json items = json::array();
    double total = 0;
    auto add = [&](const std::string& item, double dollars) {
        if (dollars <= 0) return;
        const double per_m = dollars / n * 1e6;
        total += per_m;
        json it;
        it["item"] = item;
        it["per_million_requests"] = sig(per_m, 4);
        items.push_back(it);
    };
    for (std::size_t i = 0; i < r.components.size(); ++i) {
        const component& c = s.components[i];
        const component_counts& k = r.components[i];
        switch (c.kind) {
        case service_kind::lambda: {
            const bool arm = c.function.traits.architecture == "arm64";
            add(c.name + ": Lambda requests", static_cast<double>(k.invocations) * p.lambda_per_million / 1e6);
            const double gb_s = static_cast<double>(k.billed_mb_ms) / 1024.0 / 1000.0;
            add(c.name + ": Lambda duration (GB-s)", gb_s * (arm ? p.lambda_gb_s_arm : p.lambda_gb_s_x86));
            const double pc_gb_s = static_cast<double>(k.provisioned_mb_ms) / 1024.0 / 1000.0;
            add(c.name + ": provisioned concurrency", pc_gb_s * (arm ? p.lambda_provisioned_gb_s_arm
                                                                     : p.lambda_provisioned_gb_s_x86));
            break;
        }
        case service_kind::api_gateway:
            add(c.name + (c.http_api ? ": API Gateway HTTP API" : ": API Gateway REST API"),
                static_cast<double>(k.attempts) *
                    (c.http_api ? p.api_http_per_million : p.api_rest_per_million) / 1e6);
            break;
        case service_kind::step_functions:
            if (c.sfn.express) {
                add(c.name + ": Step Functions Express requests",
                    static_cast<double>(k.executions) * p.sfn_express_per_million / 1e6);
                const double gb_s = static_cast<double>(k.express_billed_mb_100ms) *
                                    p.sfn_express_memory_increment_mb / 1024.0 *
                                    p.sfn_express_increment_ms / 1000.0;
                add(c.name + ": Step Functions Express duration", gb_s * p.sfn_express_gb_s);
            } else {
                add(c.name + ": Step Functions state transitions",
                    static_cast<double>(k.transitions) * p.sfn_standard_per_thousand_transitions / 1000.0);
            }
            break;
        case service_kind::generic: break;
        }
        if (c.price_per_million_calls)
            add(c.name + ": calls", static_cast<double>(k.attempts) * *c.price_per_million_calls / 1e6);
    }
    // Services the price table does not cover and the scenario gave no price for: their cost
    // is missing from the total, and the report says so.
    json unpriced = json::array();
    for (const auto& c : s.components)
        if (c.kind == service_kind::generic && !c.price_per_million_calls) unpriced.push_back(c.name);
    json cost;
    cost["per_million_requests"] = sig(total, 4);
    cost["not_priced"] = unpriced;
    cost["prices_date"] = p.date;
    cost["region"] = p.region;
    cost["items"] = items;
    j["cost"] = cost;

    // What the fast engine approximates: the events engine is the reference.
    if (r.engine == "fast") {
        json ap = json::array();
        json fns = json::array();
        for (const auto& c : s.components)
            if (c.kind == service_kind::lambda) fns.push_back(c.name);
        if (!fns.empty()) {
            json a;
            a["model"] = "cold_start_share";
            a["components"] = fns;
            a["note"] = "cold starts drawn as a share of invocations (cold_start_share), not by "
                        "the pool policy (keep-alive, concurrency, scaling, provisioned "
                        "environments); the events engine is the reference";
            ap.push_back(a);
        }
        if (r.faults.decisions) {
            json a;
            a["model"] = "fault_rule_order";
            a["note"] = "fault rules count the requests they match (k) in request order within "
                        "each chunk of " + std::to_string(chunk_requests) +
                        " requests, each chunk a run with its own fault seed, not in time order "
                        "over the run; the events engine is the reference";
            ap.push_back(a);
        }
        if (!ap.empty()) j["approximations"] = ap;
    }

    // Fault rules, as the live run summary counts them.
    if (!s.fault_rules.empty()) {
        std::map<std::string, std::uint64_t> by_kind, by_action, by_rule, missed_by_kind;
        std::map<std::pair<std::string, std::string>, std::uint64_t> by_kind_action;
        std::uint64_t missed = 0, slow = 0;
        const std::size_t slow_index =
            faults::action(faults::actions::slow_response{}).index();
        for (std::size_t i = 0; i < s.fault_rules.size(); ++i) {
            const faults::rule& rule = s.fault_rules[i];
            for (std::size_t a = 0; a < fault_action_count; ++a) {
                const std::size_t at = i * fault_action_count + a;
                const std::uint64_t n = at < r.faults.fired.size() ? r.faults.fired[at] : 0;
                if (!n) continue;
                const std::string act(action_name_at(a));
                by_kind[rule.kind] += n;
                by_action[act] += n;
                by_rule[rule.name] += n;
                by_kind_action[{rule.kind, act}] += n;
                if (a == slow_index) slow += n;
            }
            if (i < r.faults.missed.size() && r.faults.missed[i]) {
                missed += r.faults.missed[i];
                missed_by_kind[rule.kind] += r.faults.missed[i];
            }
        }
        json f;
        f["decisions"] = r.faults.decisions;
        f["injected"] = r.faults.total();
        f["by_kind"] = by_kind;
        f["by_action"] = by_action;
        f["by_rule"] = by_rule;
        json ka = json::array();
        for (const auto& [k, n] : by_kind_action) {
            json x;
            x["kind"] = k.first;
            x["action"] = k.second;
            x["count"] = n;
            ka.push_back(x);
        }
        f["by_kind_action"] = ka;
        f["missed"] = missed;
        f["missed_by_kind"] = missed_by_kind;
        // No payload sizes are simulated: a slow answer is decided and counted, then served
        // at the function's own latency.
        if (slow) f["not_simulated"] = json{{"slow_response", slow}};
        j["faults"] = f;
    }

    // Components.
    json comps = json::array();
    for (std::size_t i = 0; i < r.components.size(); ++i) {
        const component& c = s.components[i];
        const component_counts& k = r.components[i];
        json x;
        x["name"] = c.name;
        x["service"] = c.service;
        x["availability_percent"] = round_to(c.availability * 100, 6);
        x["availability_source"] = c.availability_source;
        x["calls"] = k.calls;
        x["attempts"] = k.attempts;
        x["calls_per_request"] = round_to(static_cast<double>(k.calls) / n, 4);
        x["attempts_per_request"] = round_to(static_cast<double>(k.attempts) / n, 4);
        x["attempts_per_call"] =
            k.calls ? round_to(static_cast<double>(k.attempts) / static_cast<double>(k.calls), 4) : 0.0;
        x["failed_calls"] = k.calls - k.calls_ok;
        json af;
        for (int cc = 0; cc < cause_count; ++cc) af[cause_name(cc)] = k.attempt_failures[cc];
        x["attempt_failures"] = af;
        x["latency_ms"] = latency_json(k.latency);
        if (c.kind == service_kind::lambda) {
            x["invocations"] = k.invocations;
            if (k.queued) {
                // Invocations that waited at max_environments (the local cap) for an
                // environment to be released, as the live pool makes them wait.
                json w;
                w["invocations"] = k.queued;
                w["wait_mean_ms"] =
                    round_to(static_cast<double>(k.queue_wait_us) / 1000.0 / static_cast<double>(k.queued), 4);
                x["waited_for_environment"] = w;
            }
            x["cold_starts"] = k.cold_starts;
            x["cold_start_percent"] =
                k.invocations ? sig(static_cast<double>(k.cold_starts) / static_cast<double>(k.invocations) * 100, 4)
                              : 0.0;
            if (k.cold_starts)
                x["init_ms_mean"] = round_to(static_cast<double>(k.init_ms_sum) / static_cast<double>(k.cold_starts), 1);
        }
        if (c.writes) {
            x["effects"] = k.effects;
            x["duplicates"] = k.duplicates;
        }
        if (k.cache_lookups)
            x["cache_hit_ratio"] =
                round_to(static_cast<double>(k.cache_hits) / static_cast<double>(k.cache_lookups), 4);
        if (c.cap.limited() && k.admitted) {
            json q;
            q["admitted"] = k.admitted;
            q["waited_percent"] = sig(static_cast<double>(k.queued) / static_cast<double>(k.admitted) * 100, 4);
            const double wait_ms = static_cast<double>(k.queue_wait_us) / 1000.0 / static_cast<double>(k.admitted);
            q["wait_mean_ms"] = round_to(wait_ms, 4);
            // Erlang C applies to one M/M/c queue: exponential service, unlimited waiting room,
            // Poisson arrivals, one shard.
            if (c.latency_ms.type() == distribution::kind::exponential && !c.cap.queue &&
                s.arrival.poisson && c.calls.empty() && (!c.keys || c.keys->shards == 1) &&
                r.simulated_us > 0) {
                const double lambda = static_cast<double>(k.admitted) / (static_cast<double>(r.simulated_us) / 1e6);
                const double mu = 1000.0 / c.latency_ms.quantile(1 - std::exp(-1.0));  // 1/mean
                json e;
                e["servers"] = c.cap.concurrency;
                e["arrival_rate_per_s"] = round_to(lambda, 3);
                e["service_rate_per_s"] = round_to(mu, 3);
                e["utilisation"] = round_to(lambda / (c.cap.concurrency * mu), 4);
                e["wait_percent"] = sig(erlang_c(c.cap.concurrency, lambda / mu) * 100, 4);
                e["wait_mean_ms"] = round_to(mm_c_mean_wait(c.cap.concurrency, lambda, mu) * 1000, 4);
                q["erlang_c"] = e;
            }
            x["queue"] = q;
        }
        if (k.async_events) {
            json as;
            as["events"] = k.async_events;
            as["delivered"] = k.async_delivered;
            as["given_up"] = k.async_given_up;
            x["async"] = as;
        }
        comps.push_back(x);
    }
    j["components"] = comps;

    json hist = json::array();
    for (const auto& bk : r.latency.buckets())
        hist.push_back(json::array({round_to(bk.lo_ms, 6), round_to(bk.hi_ms, 6), bk.count}));
    j["histogram"] = hist;
    return j;
}

std::optional<double> report_metric(const nlohmann::ordered_json& report, const std::string& name) {
    auto at = [&](std::initializer_list<const char*> path) -> std::optional<double> {
        const json* v = &report;
        for (const char* k : path) {
            if (!v->is_object() || !v->contains(k)) return std::nullopt;
            v = &(*v)[k];
        }
        if (v->is_number()) return v->get<double>();
        if (v->is_string() && v->get<std::string>() == "all")
            return std::numeric_limits<double>::infinity();
        return std::nullopt;
    };
    if (name == "availability") return at({"availability", "percent"});
    if (name == "nines") return at({"availability", "nines"});
    if (name == "duplicates") return at({"duplicates"});
    if (name == "cost_per_million") return at({"cost", "per_million_requests"});
    if (name == "cold_start_share") return at({"cold_start_share", "invocations_percent"});
    if (name == "retry_amplification") return at({"retry_amplification"});
    for (const char* q : {"p50", "p90", "p95", "p99", "p99.9", "mean", "max"}) {
        if (name != q) continue;
        // Latencies are of successful requests: with none, there is no latency to gate on
        // (a system that fails everything must not pass 'p99 < 1ms').
        const auto requests = at({"requests"});
        const auto failed = at({"availability", "failed_requests"});
        if (!requests || !failed || *requests - *failed < 1) return std::nullopt;
        return at({"latency_ms", q});
    }
    return std::nullopt;
}

}  // namespace coldbrew::models::sim
