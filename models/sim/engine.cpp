// The fast engine, the scenario compiler and the threaded driver shared with the events engine
// (models/sim/des.cpp).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "models/compute/cpu.hpp"
#include "models/sim/compiled.hpp"
#include "models/sim/des.hpp"

namespace coldbrew::models::sim {

const char* cause_name(int c) {
    switch (c) {
    case cause_error: return "error";
    case cause_timeout: return "timeout";
    case cause_throttle: return "throttle";
    case cause_phantom: return "phantom";
    }
    return "unknown";
}

void component_counts::merge(const component_counts& o) {
    calls += o.calls;
    calls_ok += o.calls_ok;
    attempts += o.attempts;
    for (int i = 0; i < cause_count; ++i) {
        attempt_failures[i] += o.attempt_failures[i];
        root_causes[i] += o.root_causes[i];
    }
    invocations += o.invocations;
    cold_starts += o.cold_starts;
    effects += o.effects;
    duplicates += o.duplicates;
    billed_mb_ms += o.billed_mb_ms;
    init_ms_sum += o.init_ms_sum;
    transitions += o.transitions;
    express_billed_mb_100ms += o.express_billed_mb_100ms;
    executions += o.executions;
    cache_lookups += o.cache_lookups;
    cache_hits += o.cache_hits;
    admitted += o.admitted;
    queued += o.queued;
    queue_wait_us += o.queue_wait_us;
    async_events += o.async_events;
    async_delivered += o.async_delivered;
    async_given_up += o.async_given_up;
    provisioned_mb_ms += o.provisioned_mb_ms;
    latency.merge(o.latency);
}

void fault_counts::merge(const fault_counts& o) {
    decisions += o.decisions;
    if (fired.size() < o.fired.size()) fired.resize(o.fired.size());
    for (std::size_t i = 0; i < o.fired.size(); ++i) fired[i] += o.fired[i];
    if (missed.size() < o.missed.size()) missed.resize(o.missed.size());
    for (std::size_t i = 0; i < o.missed.size(); ++i) missed[i] += o.missed[i];
}

std::uint64_t fault_counts::total() const {
    std::uint64_t n = 0;
    for (const auto v : fired) n += v;
    return n;
}

void entry_counts::merge(const entry_counts& o) {
    requests += o.requests;
    successes += o.successes;
    latency.merge(o.latency);
}

void run_result::merge(const run_result& o) {
    requests += o.requests;
    successes += o.successes;
    requests_with_cold_start += o.requests_with_cold_start;
    simulated_us += o.simulated_us;
    chunks += o.chunks;
    latency.merge(o.latency);
    latency_all.merge(o.latency_all);
    if (components.size() < o.components.size()) components.resize(o.components.size());
    for (std::size_t i = 0; i < o.components.size(); ++i) components[i].merge(o.components[i]);
    faults.merge(o.faults);
    if (entries.size() < o.entries.size()) entries.resize(o.entries.size());
    for (std::size_t i = 0; i < o.entries.size(); ++i) entries[i].merge(o.entries[i]);
}

std::optional<int> retry_policy::uniform_attempts() const {
    switch (type) {
    case kind::none: return 1;
    case kind::client:
        if (!(retry_errors && retry_timeouts && retry_throttles)) return std::nullopt;
        return client.max_attempts;
    case kind::sdk_standard:
        if (!(retry_errors && retry_timeouts && retry_throttles)) return std::nullopt;
        return sdk.max_attempts;
    case kind::step_functions:
        if (step_functions.size() == 1 && step_functions[0].errors == sfn_all)
            return step_functions[0].max_attempts + 1;
        if (step_functions.empty()) return 1;
        return std::nullopt;
    case kind::lambda_async: return std::nullopt;
    }
    return std::nullopt;
}

namespace detail {

void sampler::set(const distribution& dist) {
    d = &dist;
    switch (dist.type()) {
    case distribution::kind::fixed:
        type = kind::fixed;
        a = dist.quantile(0.5);
        break;
    case distribution::kind::exponential:
        type = kind::exponential;
        a = dist.quantile(1 - std::exp(-1.0));  // the mean
        break;
    case distribution::kind::lognormal:
    case distribution::kind::normal:
    case distribution::kind::percentiles:
    case distribution::kind::mixture:
        type = kind::table;
        table.resize(steps + 1);
        for (int i = 0; i <= steps; ++i)
            table[static_cast<std::size_t>(i)] = dist.quantile(lo + (hi - lo) * i / steps);
        break;
    default: type = kind::other;
    }
}

namespace {

[[noreturn]] void invalid(const std::string& m) { throw std::invalid_argument(m); }

// Flattens a sequence of steps into `out.steps` as one contiguous range (branches' own steps
// come after it).
range flatten(const scenario& s, compiled& out, const std::vector<step>& seq, std::uint32_t parent,
              std::vector<int>& visiting, std::vector<range>& bodies);

void compile_body(const scenario& s, compiled& out, std::uint32_t comp, std::vector<int>& visiting,
                  std::vector<range>& bodies) {
    if (visiting[comp] == 2) return;
    if (visiting[comp] == 1)
        invalid("component '" + s.components[comp].name +
                "' calls itself (directly or through others); calls must not form a cycle");
    visiting[comp] = 1;
    bodies[comp] = flatten(s, out, s.components[comp].calls, comp, visiting, bodies);
    visiting[comp] = 2;
}

std::uint32_t add_hop(const scenario& s, compiled& out, const step& st, std::uint32_t parent) {
    if (st.component >= s.components.size()) invalid("a call names an unknown component");
    const component& target = s.components[st.component];
    c_hop h;
    h.comp = static_cast<std::uint32_t>(st.component);
    h.parent = parent;
    h.retry = st.retry ? &*st.retry : &target.retry;
    if (st.async && h.retry->type == retry_policy::kind::none && target.kind == service_kind::lambda) {
        // Lambda retries asynchronous invocations itself, whoever sent the event.
        static const retry_policy lambda_default = [] {
            retry_policy p;
            p.type = retry_policy::kind::lambda_async;
            return p;
        }();
        h.retry = &lambda_default;
    }
    if (!st.async && h.retry->type == retry_policy::kind::lambda_async)
        invalid("call to '" + target.name +
                "': Lambda's asynchronous retries apply to async calls only");
    h.timeout_ms = st.timeout_ms ? *st.timeout_ms : target.timeout_ms;
    // A synchronous caller of a function waits for its Init phase too, which has its own
    // 10 s limit on demand (AWS Lambda Developer Guide, "Lambda execution environment").
    if (!st.timeout_ms && target.kind == service_kind::lambda) h.timeout_ms += 10000;
    if (!(h.timeout_ms < inf)) h.timeout_ms = s.client_timeout_ms;
    h.async = st.async;
    if (st.live) {
        const live_request& l = *st.live;
        if (l.where == faults::front::dependency)
            invalid("call to '" + target.name + "': a live request on the dependency front is not "
                    "simulated (connections and request turns on a proxy); give the dependency "
                    "an availability instead");
        c_live cl;
        cl.src = &l;
        faults::request_facts& f = cl.facts;
        f.where = l.where;
        f.function = l.function;
        f.function_name = l.function_name;
        f.route = l.route;
        f.method = l.method;
        f.path = l.path;
        f.state_machine = l.state_machine;
        f.state_machine_name = l.state_machine_name;
        f.state = l.state;
        f.state_path = l.state_path;
        // No headers: a simulated request has none, so header matchers never match.
        h.live = static_cast<std::uint32_t>(out.live.size());
        out.live.push_back(cl);
    }
    if (h.retry->type == retry_policy::kind::sdk_standard) {
        h.quota = out.quota_count++;
        out.quota_config.push_back(h.retry->sdk);
    }
    if (st.cache) {
        const cache_config& cc = *st.cache;
        c_cache c;
        c.latency = &cc.latency_ms;
        c.latency_sampler.set(cc.latency_ms);
        auto ttl_hit = [&](double share) {
            const double per_ms = out.mean_rate_per_s * share / 1000.0 / std::max(1, cc.instances);
            const double x = per_ms * *cc.ttl_ms;
            return x / (1.0 + x);
        };
        if (cc.hit_ratio) {
            c.hit = *cc.hit_ratio;
        } else if (cc.ttl_ms) {
            c.hit = ttl_hit(1.0);
            if (target.keys) {
                const key_space& k = *target.keys;
                const double total = k.hot * k.hot_weight + (k.count - k.hot);
                for (int i = 0; i < k.count; ++i)
                    c.key_hit.push_back(ttl_hit((i < k.hot ? k.hot_weight : 1.0) / total));
            }
        }
        h.cache = static_cast<std::uint32_t>(out.caches.size());
        out.caches.push_back(std::move(c));
    }
    out.hops.push_back(h);
    return static_cast<std::uint32_t>(out.hops.size() - 1);
}

range flatten(const scenario& s, compiled& out, const std::vector<step>& seq, std::uint32_t parent,
              std::vector<int>& visiting, std::vector<range>& bodies) {
    range r{static_cast<std::uint32_t>(out.steps.size()), static_cast<std::uint32_t>(seq.size())};
    out.steps.resize(out.steps.size() + seq.size());
    for (std::size_t i = 0; i < seq.size(); ++i) {
        const step& st = seq[i];
        c_step cs;
        if (st.type == step::kind::call) {
            if (st.component >= s.components.size()) invalid("a call names an unknown component");
            compile_body(s, out, static_cast<std::uint32_t>(st.component), visiting, bodies);
            cs.hop = add_hop(s, out, st, parent);
        } else {
            cs.parallel = true;
            // Branch ranges are reserved first so they are contiguous, then filled.
            const auto first = static_cast<std::uint32_t>(out.branches.size());
            out.branches.resize(out.branches.size() + st.branches.size());
            for (std::size_t b = 0; b < st.branches.size(); ++b) {
                const range br = flatten(s, out, st.branches[b], parent, visiting, bodies);
                out.branches[first + b] = br;
            }
            cs.branches = {first, static_cast<std::uint32_t>(st.branches.size())};
        }
        out.steps[r.first + i] = cs;
    }
    return r;
}

std::uint64_t count_call_steps(const std::vector<step>& seq) {
    std::uint64_t n = 0;
    for (const step& st : seq) {
        if (st.type == step::kind::call)
            ++n;
        else
            for (const auto& b : st.branches) n += count_call_steps(b);
    }
    return n;
}

// The rules each live hop's facts match (faults::matches, in rule order), their (rule, route)
// slots and draw keys.
void compile_faults(const scenario& s, compiled& out) {
    faults::register_builtin_faults(out.fault_kinds);
    for (std::size_t i = 0; i < s.fault_rules.size(); ++i) {
        const faults::rule& r = s.fault_rules[i];
        if (!r.fault) invalid("fault rule '" + r.name + "' has no fault");
        if (!out.fault_kinds.find(r.kind))
            invalid("fault rule '" + r.name + "': the simulator knows the built-in fault kinds, "
                    "not '" + r.kind + "'");
    }
    std::map<std::string, std::uint32_t, std::less<>> slots;
    for (c_hop& h : out.hops) {
        if (h.live == none) continue;
        const c_live& l = out.live[h.live];
        h.rules.first = static_cast<std::uint32_t>(out.rule_refs.size());
        for (std::size_t i = 0; i < s.fault_rules.size(); ++i) {
            const faults::rule& r = s.fault_rules[i];
            if (!faults::matches(r, *out.fault_kinds.find(r.kind), l.facts)) continue;
            std::string key = r.name + "|" + l.src->route;
            auto it = slots.find(key);
            if (it == slots.end()) {
                it = slots.emplace(key, static_cast<std::uint32_t>(out.fault_keys.size())).first;
                out.fault_keys.push_back(std::move(key));
            }
            c_rule_ref ref;
            ref.rule = static_cast<std::uint32_t>(i);
            ref.slot = it->second;
            ref.windowed = r.window_from_ms.has_value() || r.window_until_ms.has_value();
            if ((ref.windowed || r.selector != faults::index_selector::every) &&
                out.ordered_rule.empty())
                out.ordered_rule = r.name;
            out.rule_refs.push_back(ref);
        }
        h.rules.count = static_cast<std::uint32_t>(out.rule_refs.size()) - h.rules.first;
    }
}

}  // namespace

// How much longer (> 1) or shorter (< 1) a function's latency is at its memory size than at
// the size it was measured at: the CPU part scales with the vCPUs it can use.
double memory_speed_factor(const function_config& f, const profile& p) {
    if (!(f.cpu_share > 0)) return 1.0;
    auto vcpus = [&](int memory_mb) {
        return std::min(static_cast<double>(std::max(1, f.threads)),
                        vcpu_share(memory_mb, p.mb_per_vcpu, p.max_vcpus));
    };
    const double at = vcpus(f.latency_at_memory_mb), now = vcpus(f.traits.memory_mb);
    if (!(now > 0) || !(at > 0)) return 1.0;
    return (1 - f.cpu_share) + f.cpu_share * at / now;
}

void compile(const scenario& s, compiled& out) {
    out.s = &s;
    // Mean request rate, for TTL caches' per-key hit ratios.
    if (s.arrival.phases.empty()) {
        out.mean_rate_per_s = s.arrival.rate;
    } else {
        double n = 0, ms = 0;
        for (const phase& p : s.arrival.phases) {
            ms += p.duration_ms;
            if (p.arrival_count)
                n += static_cast<double>(*p.arrival_count);
            else
                n += (p.arrival_rate + p.ramp_to.value_or(p.arrival_rate)) / 2 * p.duration_ms / 1000;
        }
        out.mean_rate_per_s = ms > 0 ? n / (ms / 1000) : 0;
    }

    const std::size_t n = s.components.size();
    out.comps.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const component& src = s.components[i];
        c_comp& c = out.comps[i];
        c.src = &src;
        c.kind = src.kind;
        if (!(src.availability > 0 && src.availability <= 1))
            invalid("component '" + src.name + "': availability must be in (0, 100%]");
        const double loss = 1.0 - src.availability;
        const double total = src.failures.error + src.failures.phantom + src.failures.phantom_after;
        if (!(total > 0)) invalid("component '" + src.name + "': failure shares must sum to > 0");
        c.p_error = loss * src.failures.error / total;
        c.p_phantom = c.p_error + loss * src.failures.phantom / total;
        c.p_phantom_after = c.p_phantom + loss * src.failures.phantom_after / total;
        c.latency = &src.latency_ms;
        c.latency_sampler.set(src.latency_ms);
        c.timeout_ms = src.timeout_ms;
        c.writes = src.writes;
        c.duplicates_count = src.writes && !src.idempotent;
        if (src.kind == service_kind::lambda) {
            c.sfn_error_bits = sfn_task_failed | sfn_lambda_service;
            c.sfn_throttle_bits = sfn_task_failed | sfn_lambda_too_many_requests;
            if (!s.model_profile)
                invalid("component '" + src.name + "': functions need a model profile");
            try {
                c.cold = std::make_unique<cold_start_model>(*s.model_profile, src.function.traits,
                                                            src.function.cold_start);
            } catch (const model_error& e) {
                invalid("component '" + src.name + "': " + e.what());
            }
            c.memory_mb = src.function.traits.memory_mb;
            c.cold_share = src.function.cold_start_share.value_or(-1);
            c.latency_sampler.scale = memory_speed_factor(src.function, *s.model_profile);
            c.function = static_cast<std::uint32_t>(out.functions.size());
            out.functions.push_back(static_cast<std::uint32_t>(i));
        }
        if (src.keys) {
            const key_space& k = *src.keys;
            if (k.count < 1 || k.hot < 0 || k.hot > k.count || !(k.hot_weight > 0) || k.shards < 1)
                invalid("component '" + src.name + "': invalid key space");
            const double total = k.hot * k.hot_weight + (k.count - k.hot);
            double acc = 0;
            for (int key = 0; key < k.count; ++key) {
                acc += (key < k.hot ? k.hot_weight : 1.0) / total;
                c.key_cdf.push_back(acc);
                // A fixed hash, so the same keys land on the same shards in every run.
                c.key_shard.push_back(static_cast<std::uint32_t>(
                    mix64(static_cast<std::uint64_t>(key)) % static_cast<std::uint64_t>(k.shards)));
            }
            c.key_cdf.back() = 1.0;
            c.shards = static_cast<std::uint32_t>(k.shards);
        }
        if (src.cap.limited()) {
            c.cap_first = out.capacity_slots;
            out.capacity_slots += c.shards;
            for (std::uint32_t sh = 0; sh < c.shards; ++sh) {
                out.slot_concurrency.push_back(src.cap.concurrency);
                out.slot_queue.push_back(src.cap.queue ? *src.cap.queue : -1);
            }
        }
        if (src.kind == service_kind::step_functions)
            c.base_transitions = src.sfn.transitions
                                     ? static_cast<std::uint64_t>(*src.sfn.transitions)
                                     : count_call_steps(src.calls) + 1;
    }

    // Hop and cache pointers stay valid: the vectors are reserved before any pointer is taken
    // (caches are held by index; retry policies point into the scenario).
    std::vector<int> visiting(n, 0);
    std::vector<range> bodies(n);
    if (s.entries.empty()) {
        out.flow = flatten(s, out, s.flow, none, visiting, bodies);
    } else {
        double total = 0;
        for (const entry& e : s.entries) {
            if (!(e.weight > 0) || !std::isfinite(e.weight))
                invalid("entry '" + e.name + "': its weight must be a number above 0");
            total += e.weight;
        }
        double acc = 0;
        for (const entry& e : s.entries) {
            const range r = flatten(s, out, e.flow, none, visiting, bodies);
            if (r.count == 0) invalid("entry '" + e.name + "' makes no calls");
            out.entry_flows.push_back(r);
            acc += e.weight;
            out.entry_cdf.push_back(acc / total);
        }
        out.entry_cdf.back() = 1.0;
        out.flow = out.entry_flows.front();
    }
    for (std::size_t i = 0; i < n; ++i) {
        compile_body(s, out, static_cast<std::uint32_t>(i), visiting, bodies);
        out.comps[i].body = bodies[i];
    }
    if (out.flow.count == 0) invalid("the flow makes no calls");
    compile_faults(s, out);
}

void fault_state::start(const compiled& m, std::uint64_t chunk) {
    // Chunk 0 decides as a live run with fault_seed would; later chunks are further runs,
    // each with its own seed, so their draws are independent of the first's.
    const std::uint64_t seed =
        chunk == 0 ? m.s->fault_seed
                   : random_source(m.s->fault_seed).bits("sim-fault-seed", "chunk", chunk);
    rng = random_source(seed);
    seen.assign(m.fault_keys.size(), 0);
}

namespace {

std::size_t exit_action_index() {
    static const std::size_t i = faults::action(faults::actions::function_exit{}).index();
    return i;
}

void size_fault_counts(const compiled& m, fault_counts& c) {
    const std::size_t rules = m.s->fault_rules.size();
    if (c.fired.size() < rules * fault_action_count) c.fired.resize(rules * fault_action_count);
    if (c.missed.size() < rules) c.missed.resize(rules);
}

// A plan as the sim's outcomes: what the live executor does with it (emulator/front/
// executor.cpp), on the caller's side of one attempt.
sim_fault map_plan(const faults::plan& p) {
    namespace act = faults::actions;
    sim_fault f;
    f.delay_ms = p.delay_ms;
    if (const auto* a = std::get_if<act::phantom_before>(&p.act)) {
        f.type = sim_fault::kind::lost_before;
        f.at_once = a->client == faults::client_outcome::reset;
    } else if (const auto* b = std::get_if<act::phantom_after>(&p.act)) {
        f.type = sim_fault::kind::lost_after;
        f.at_once = b->client == faults::client_outcome::reset;
    } else if (const auto* g = std::get_if<act::gateway_error>(&p.act)) {
        f.type = sim_fault::kind::fail_now;
        f.cause = g->status == 429 ? cause_throttle : cause_error;
    } else if (const auto* x = std::get_if<act::function_exit>(&p.act)) {
        f.type = sim_fault::kind::exit;
        f.kill_after_ms = x->kill_after_ms;
    } else if (std::holds_alternative<act::handler_error>(p.act) ||
               std::holds_alternative<act::reset>(p.act) ||
               std::holds_alternative<act::refuse>(p.act)) {
        f.type = sim_fault::kind::fail_now;
        f.cause = cause_error;
    } else if (std::holds_alternative<act::throttle>(p.act)) {
        f.type = sim_fault::kind::fail_now;
        f.cause = cause_throttle;
    } else if (std::holds_alternative<act::hang>(p.act)) {
        f.type = sim_fault::kind::lost_before;
    }
    // pass and slow_response run normally (no payload sizes: a slow answer is not simulated).
    return f;
}

}  // namespace

sim_fault decide_fault(const compiled& m, const c_hop& h, fault_state& fs, double now_ms,
                       std::uint64_t chunk, run_result& out) {
    sim_fault f;
    ++out.faults.decisions;
    const c_live& l = m.live[h.live];
    const auto& rules = m.s->fault_rules;
    // The attempt as the live decider would log it; `fired` null when no rule fired.
    auto report = [&](const faults::rule* fired, std::uint64_t k) {
        fault_record rec;
        rec.chunk = chunk;
        rec.at_ms = now_ms;
        rec.request = l.src;
        rec.decision.where = l.facts.where;
        if (fired) {
            rec.decision.rule = fired->name;
            rec.decision.kind = fired->kind;
            rec.decision.k = k;
            rec.decision.p = fs.plan;
            rec.decision.log_line = faults::log_line(l.facts, rec.decision);
        }
        (*m.on_fault)(rec);
    };
    for (std::uint32_t i = 0; i < h.rules.count; ++i) {
        const c_rule_ref& ref = m.rule_refs[h.rules.first + i];
        const faults::rule& r = rules[ref.rule];
        if (ref.windowed && !faults::in_window(r, now_ms)) continue;
        const std::string& key = m.fault_keys[ref.slot];
        const std::uint64_t k = fs.seen[ref.slot]++;
        if (!faults::fires(r, fs.rng, key, k)) continue;
        faults::apply(r, fs.rng, key, k, l.facts.where, fs.plan);
        f = map_plan(fs.plan);
        f.rule = ref.rule;
        size_fault_counts(m, out.faults);
        if (f.type != sim_fault::kind::exit)
            ++out.faults.fired[ref.rule * fault_action_count + fs.plan.act.index()];
        if (m.on_fault) report(&r, k);
        return f;
    }
    if (m.on_fault) report(nullptr, 0);
    return f;
}

void count_exit(const compiled& m, std::uint32_t rule, bool answered, run_result& out) {
    size_fault_counts(m, out.faults);
    if (answered)
        ++out.faults.missed[rule];
    else
        ++out.faults.fired[rule * fault_action_count + exit_action_index()];
}

std::uint32_t pick_entry(const compiled& m, const random_source& rng, std::string_view key,
                         std::uint64_t index) {
    const double u = rng.uniform("sim-entry", key, index);
    const auto it = std::upper_bound(m.entry_cdf.begin(), m.entry_cdf.end(), u);
    const auto e = static_cast<std::size_t>(it - m.entry_cdf.begin());
    return static_cast<std::uint32_t>(std::min(e, m.entry_cdf.size() - 1));
}

std::uint32_t draw_key(const c_comp& c, double u) {
    const auto it = std::upper_bound(c.key_cdf.begin(), c.key_cdf.end(), u);
    const auto k = static_cast<std::size_t>(it - c.key_cdf.begin());
    return static_cast<std::uint32_t>(std::min(k, c.key_cdf.size() - 1));
}

bool next_retry(const retry_policy& p, const c_comp& target, retry_state& st, int c,
                retry_quota* quota, double u, double age_ms, double& delay_ms) {
    switch (p.type) {
    case retry_policy::kind::none:
        return false;
    case retry_policy::kind::client: {
        if ((c == cause_error && !p.retry_errors) || (c == cause_throttle && !p.retry_throttles) ||
            ((c == cause_timeout || c == cause_phantom) && !p.retry_timeouts))
            return false;
        if (st.attempts >= p.client.max_attempts) return false;
        const double base = st.attempts == 1 ? p.client.base_ms : st.previous_delay_ms;
        delay_ms = backoff_delay_ms(p.client, st.attempts - 1, base, u);
        st.previous_delay_ms = delay_ms;
        return true;
    }
    case retry_policy::kind::sdk_standard: {
        if ((c == cause_error && !p.retry_errors) || (c == cause_throttle && !p.retry_throttles) ||
            ((c == cause_timeout || c == cause_phantom) && !p.retry_timeouts))
            return false;
        if (st.attempts >= p.sdk.max_attempts) return false;
        if (quota) {
            const int cost = quota->acquire(c == cause_timeout || c == cause_phantom);
            if (cost == 0) return false;
            st.quota_cost = cost;
        }
        delay_ms = sdk_standard_delay_ms(p.sdk, st.attempts - 1, u);
        return true;
    }
    case retry_policy::kind::step_functions: {
        const std::uint32_t bits = c == cause_timeout || c == cause_phantom ? sfn_timeout
                                   : c == cause_throttle                    ? target.sfn_throttle_bits
                                                                            : target.sfn_error_bits;
        const int i = sfn_match(p.step_functions, bits);
        if (i < 0 || i >= 8) return false;
        const sfn_retrier& r = p.step_functions[static_cast<std::size_t>(i)];
        if (st.sfn_count[i] >= r.max_attempts) return false;
        ++st.sfn_count[i];
        delay_ms = sfn_retry_delay_ms(r, st.sfn_count[i], u);
        return true;
    }
    case retry_policy::kind::lambda_async: {
        attempt_outcome o = attempt_outcome::function_error;
        if (c == cause_throttle) {
            o = attempt_outcome::throttled;
            ++st.throttles;
        } else if (c == cause_phantom) {
            // The Lambda service lost the event: a system error, retried like a throttle.
            o = attempt_outcome::system_error;
            ++st.throttles;
        } else {
            ++st.function_errors;
        }
        const retry_decision d =
            next_attempt(p.lambda_async, o, st.function_errors, st.throttles, age_ms);
        delay_ms = d.delay_ms;
        return d.retry;
    }
    }
    return false;
}

// ---- the fast engine ------------------------------------------------------------------------

namespace {

struct result {
    bool ok = true;
    int cause = cause_error;       // as the caller sees it
    std::uint32_t root = none;     // the component where the failure began
    int root_cause = cause_error;
    double end = 0;                // when the caller has the answer (or gives up)
};

class fast_runner {
public:
    fast_runner(const compiled& m, run_result& out) : m_(m), out_(out), rng_(m.s->seed) {
        effects_.assign(m.hops.size(), 0);
        for (const auto& q : m.quota_config) quotas_.emplace_back(q);
    }

    void run_chunk(std::uint64_t first, std::uint64_t count) {
        for (auto& q : quotas_) q.reset();
        chunk_ = first / chunk_requests;
        if (!m_.live.empty()) faults_.start(m_, chunk_);
        for (std::uint64_t i = 0; i < count; ++i) run_request(first + i);
        ++out_.chunks;
    }

private:
    void run_request(std::uint64_t index) {
        draw d(rng_, "sim-request", "request", index);
        d_ = &d;
        request_ = index;
        invocation_ = 0;
        cold_ = false;
        range flow = m_.flow;
        entry_counts* entry = nullptr;
        if (!m_.entry_cdf.empty()) {
            const std::uint32_t e = pick_entry(m_, rng_, "request", index);
            flow = m_.entry_flows[e];
            entry = &out_.entries[e];
        }
        const result r = run_seq(flow, 0.0, m_.s->client_timeout_ms);
        ++out_.requests;
        if (entry) {
            ++entry->requests;
            if (r.ok) {
                ++entry->successes;
                entry->latency.record_ms(r.end);
            }
        }
        if (cold_) ++out_.requests_with_cold_start;
        for (std::uint32_t site : touched_) {
            const std::uint16_t n = effects_[site];
            effects_[site] = 0;
            if (n > 1 && m_.comps[m_.hops[site].comp].duplicates_count)
                out_.components[m_.hops[site].comp].duplicates += n - 1u;
        }
        touched_.clear();
        if (r.ok) {
            ++out_.successes;
            out_.latency.record_ms(r.end);
        } else if (r.root != none) {
            ++out_.components[r.root].root_causes[r.root_cause];
        }
        out_.latency_all.record_ms(r.end);
    }

    result run_seq(range seq, double t, double abandon_at) {
        for (std::uint32_t i = 0; i < seq.count; ++i) {
            const c_step& st = m_.steps[seq.first + i];
            if (!st.parallel) {
                const c_hop& h = m_.hops[st.hop];
                if (h.async) {
                    run_async(st.hop, t);
                    continue;
                }
                const result r = call(st.hop, t, abandon_at);
                if (!r.ok) return r;
                t = r.end;
                continue;
            }
            // A Parallel state fails as soon as one branch fails; otherwise it joins them all.
            double end = t;
            result fail;
            fail.ok = true;
            for (std::uint32_t b = 0; b < st.branches.count; ++b) {
                const result r = run_seq(m_.branches[st.branches.first + b], t, abandon_at);
                if (!r.ok && (fail.ok || r.end < fail.end)) fail = r;
                end = std::max(end, r.end);
            }
            if (!fail.ok) return fail;
            t = end;
        }
        result ok;
        ok.end = t;
        return ok;
    }

    void run_async(std::uint32_t hop, double t) {
        component_counts& k = out_.components[m_.hops[hop].comp];
        ++k.async_events;
        const result r = call(hop, t, inf);
        if (r.ok)
            ++k.async_delivered;
        else
            ++k.async_given_up;
    }

    result call(std::uint32_t hop, double t0, double abandon_at) {
        const c_hop& h = m_.hops[hop];
        const c_comp& c = m_.comps[h.comp];
        component_counts& k = out_.components[h.comp];
        ++k.calls;
        std::uint32_t key = 0;
        if (!c.key_cdf.empty()) key = draw_key(c, d_->uniform());
        if (h.cache != none) {
            const c_cache& cc = m_.caches[h.cache];
            ++k.cache_lookups;
            const double hit = cc.key_hit.empty() ? cc.hit : cc.key_hit[key];
            if (d_->uniform() < hit) {
                ++k.cache_hits;
                ++k.calls_ok;
                const double lat = std::max(0.0, cc.latency_sampler(*d_));
                k.latency.record_ms(lat);
                result r;
                r.end = t0 + lat;
                return r;
            }
        }
        retry_quota* quota = h.quota == none ? nullptr : &quotas_[h.quota];
        retry_state st;
        double t = t0;
        for (;;) {
            if (t >= abandon_at) {
                result r;
                r.ok = false;
                r.cause = r.root_cause = cause_timeout;
                r.root = h.comp;
                r.end = abandon_at;
                return r;
            }
            ++st.attempts;
            ++k.attempts;
            // A fault rule's delay comes before the attempt, and its timeout starts after it
            // (as the live gateway's integration timeout does).
            sim_fault fa;
            double start = t;
            if (h.live != none) {
                fa = decide_fault(m_, h, faults_, t, chunk_, out_);
                start = t + fa.delay_ms;
            }
            const double limit = std::min(abandon_at, start + h.timeout_ms);
            result a;
            if (start >= abandon_at) {
                a.ok = false;
                a.cause = cause_timeout;
                a.end = inf;
                if (fa.type == sim_fault::kind::exit) count_exit(m_, fa.rule, false, out_);
            } else {
                a = attempt(hop, c, start, fa);
                if (fa.type == sim_fault::kind::exit) count_exit(m_, fa.rule, a.ok, out_);
            }
            double seen;
            if (a.end > limit) {
                seen = limit;
                if (a.ok || a.cause != cause_phantom) {
                    a.cause = a.root_cause = cause_timeout;
                    a.root = h.comp;
                }
                a.ok = false;
            } else {
                seen = a.end;
            }
            if (a.ok) {
                ++k.calls_ok;
                k.latency.record_ms(seen - t0);
                if (quota) quota->on_success(st.quota_cost);
                a.end = seen;
                return a;
            }
            ++k.attempt_failures[a.cause];
            double delay = 0;
            const bool again =
                next_retry(*h.retry, c, st, a.cause, quota, d_->uniform(), seen - t0, delay);
            if (!again || seen + delay >= abandon_at) {
                a.end = seen;
                return a;
            }
            if (h.parent != none && m_.comps[h.parent].kind == service_kind::step_functions &&
                !m_.comps[h.parent].src->sfn.express)
                ++out_.components[h.parent].transitions;  // each retry is a state transition
            t = seen + delay;
        }
    }

    // One attempt at `c` under the fault plan `fa`; end = inf when the answer never comes
    // (phantom). For a function_exit, ok says whether the function answered before the kill.
    result attempt(std::uint32_t hop, const c_comp& c, double t, const sim_fault& fa) {
        const std::uint32_t ci = m_.hops[hop].comp;
        component_counts& k = out_.components[ci];
        result r;
        if (fa.type == sim_fault::kind::fail_now || fa.type == sim_fault::kind::lost_before) {
            r.ok = false;
            r.root = ci;
            if (fa.type == sim_fault::kind::fail_now) {
                r.cause = r.root_cause = fa.cause;
                r.end = t;
            } else {
                r.cause = r.root_cause = cause_phantom;
                r.end = fa.at_once ? t : inf;
            }
            return r;
        }
        const double u = d_->uniform();
        if (u < c.p_phantom_after) {
            if (u < c.p_error) {
                r.ok = false;
                r.cause = r.root_cause = cause_error;
                r.root = ci;
                r.end = t + std::max(0.0, c.latency_sampler(*d_));
                return r;
            }
            if (u < c.p_phantom) {
                r.ok = false;
                r.cause = r.root_cause = cause_phantom;
                r.root = ci;
                r.end = inf;
                return r;
            }
        }
        const bool lost_after = u >= c.p_phantom && u < c.p_phantom_after;
        double init = 0;
        if (c.kind == service_kind::lambda) {
            ++k.invocations;
            if (c.cold_share > 0 && d_->uniform() < c.cold_share) {
                init = std::max(0.0, c.cold->sample(rng_, c.src->name, request_ * 64 + invocation_).total_ms);
                ++k.cold_starts;
                k.init_ms_sum += static_cast<std::uint64_t>(init + 0.5);
                cold_ = true;
            }
            ++invocation_;
        }
        const double lat = std::max(0.0, c.latency_sampler(*d_));
        // The function's timeout starts after its Init phase, which has a limit of its own
        // (10 s on demand; AWS Lambda Developer Guide, "Lambda execution environment").
        double kill = t + init + c.timeout_ms;
        // An injected exit kills it kill_after_ms after delivery (after Init): Runtime.ExitError.
        int killed_cause = cause_timeout;
        if (fa.type == sim_fault::kind::exit && t + init + fa.kill_after_ms < kill) {
            kill = t + init + fa.kill_after_ms;
            killed_cause = cause_error;
        }
        double end = t + init + lat;
        bool ok = true;
        if (end >= kill) {
            end = kill;
            ok = false;
            r.cause = r.root_cause = killed_cause;
            r.root = ci;
        } else if (c.body.count) {
            const result b = run_seq(c.body, end, kill);
            if (!b.ok) {
                ok = false;
                if (b.end >= kill) {
                    end = kill;
                    r.cause = r.root_cause = killed_cause;
                    r.root = ci;
                } else {
                    end = b.end;
                    // The caller sees this component answer an error; the root stays below.
                    r.cause = cause_error;
                    r.root = b.root;
                    r.root_cause = b.root_cause;
                }
            } else {
                end = b.end;
            }
        }
        account(c, k, t, end);
        if (ok && c.writes) {
            ++k.effects;
            if (effects_[hop]++ == 0) touched_.push_back(hop);
        }
        r.ok = ok;
        r.end = end;
        if (ok && lost_after) {
            r.ok = false;
            r.cause = r.root_cause = cause_phantom;
            r.root = ci;
            r.end = inf;
        }
        if (fa.type == sim_fault::kind::lost_after) {
            // A phantom-after rule loses whatever the function answers.
            r.ok = false;
            r.cause = r.root_cause = cause_phantom;
            r.root = ci;
            r.end = fa.at_once ? end : inf;
        }
        return r;
    }

    // Billing of an execution from t to end.
    void account(const c_comp& c, component_counts& k, double t, double end) {
        if (c.kind == service_kind::lambda) {
            // Billed per 1 ms, INIT included (since 2025-08-01), memory in MB.
            k.billed_mb_ms += static_cast<std::uint64_t>(std::ceil(std::max(0.0, end - t))) *
                              static_cast<std::uint64_t>(c.memory_mb);
        } else if (c.kind == service_kind::step_functions) {
            ++k.executions;
            if (c.src->sfn.express) {
                const auto units = static_cast<std::uint64_t>(
                    std::ceil(std::max(1.0, end - t) / m_.s->price.sfn_express_increment_ms));
                const auto mem_units = static_cast<std::uint64_t>(
                    std::ceil(c.src->sfn.memory_mb / m_.s->price.sfn_express_memory_increment_mb));
                k.express_billed_mb_100ms += units * mem_units;
            } else {
                k.transitions += c.base_transitions;
            }
        }
    }

    const compiled& m_;
    run_result& out_;
    random_source rng_;
    draw* d_ = nullptr;
    std::uint64_t request_ = 0;
    std::uint64_t invocation_ = 0;
    bool cold_ = false;
    std::vector<std::uint16_t> effects_;
    std::vector<std::uint32_t> touched_;
    std::vector<retry_quota> quotas_;
    fault_state faults_;
    std::uint64_t chunk_ = 0;
};

}  // namespace

}  // namespace detail

namespace {

bool has_live(const std::vector<step>& seq) {
    for (const step& st : seq) {
        if (st.live) return true;
        for (const auto& b : st.branches)
            if (has_live(b)) return true;
    }
    return false;
}

// A rule whose decisions depend on the order of requests in time: it counts them (nth,
// every_nth, first) or has a window. "" when none.
std::string ordered_rule(const scenario& s) {
    for (const faults::rule& r : s.fault_rules)
        if (r.selector != faults::index_selector::every || r.window_from_ms || r.window_until_ms)
            return r.name;
    return "";
}

}  // namespace

std::string engine_for(const scenario& s) {
    if (s.engine == scenario::mode::fast) return "fast";
    if (s.engine == scenario::mode::events) return "events";
    for (const component& c : s.components) {
        if (c.cap.limited()) return "events";
        if (c.kind == service_kind::lambda && !c.function.cold_start_share) return "events";
    }
    if (!ordered_rule(s).empty()) {
        bool live = has_live(s.flow);
        for (const entry& e : s.entries) live = live || has_live(e.flow);
        for (const component& c : s.components) live = live || has_live(c.calls);
        if (live) return "events";
    }
    return "fast";
}

run_result run(const scenario& s, const run_options& opts) {
    detail::compiled m;
    detail::compile(s, m);
    if (opts.on_fault) m.on_fault = &opts.on_fault;
    const std::string engine = engine_for(s);
    if (engine == "fast") {
        if (!m.ordered_rule.empty()) {
            const faults::rule& r = *std::find_if(
                s.fault_rules.begin(), s.fault_rules.end(),
                [&](const faults::rule& x) { return x.name == m.ordered_rule; });
            const bool window = r.window_from_ms || r.window_until_ms;
            throw std::invalid_argument(
                "fault rule '" + r.name + "' " +
                (window ? std::string("has a time window")
                        : std::string("counts requests (nth, every_nth or first)")) +
                ": the fast engine decides requests one by one, out of time order and in "
                "independent chunks; it needs the events engine");
        }
        for (const component& c : s.components) {
            if (c.cap.limited())
                throw std::invalid_argument("component '" + c.name +
                                            "' has a capacity limit: it needs the events engine");
            if (c.kind == service_kind::lambda && !c.function.cold_start_share)
                throw std::invalid_argument(
                    "function '" + c.name +
                    "' needs the events engine for its pool (or give it a cold_start_share)");
        }
    }

    // The work as fixed chunks: (first request index, requests) for the fast engine; for the
    // events engine a chunk is one replication.
    std::uint64_t chunk_count = 0;
    std::uint64_t per_chunk = engine == "fast" ? chunk_requests : des_chunk_requests;
    detail::des_plan plan;
    if (engine == "events") {
        plan = detail::plan_replications(s);
        per_chunk = plan.requests_per_replication;
    }
    chunk_count = per_chunk ? (s.requests + per_chunk - 1) / per_chunk : 0;
    if (chunk_count == 0) chunk_count = 1;

    // This part's chunks: shard_index, shard_index + shard_count, … (all of them when unsplit).
    if (opts.shard_count == 0 || opts.shard_index >= opts.shard_count)
        throw std::invalid_argument("shard " + std::to_string(opts.shard_index) + "/" +
                                    std::to_string(opts.shard_count) + ": the part must be 0 to count-1");
    const std::uint64_t shard_chunks = chunk_count > opts.shard_index
                                           ? (chunk_count - opts.shard_index + opts.shard_count - 1) / opts.shard_count
                                           : 0;
    auto chunk_at = [&](std::uint64_t j) { return opts.shard_index + j * opts.shard_count; };
    auto chunk_size = [&](std::uint64_t c) {
        if (engine == "events" && plan.phased) return per_chunk;
        return std::min<std::uint64_t>(per_chunk, s.requests - c * per_chunk);
    };
    std::uint64_t total = 0;
    for (std::uint64_t j = 0; j < shard_chunks; ++j) total += chunk_size(chunk_at(j));

    const unsigned threads = std::max(1u, std::min<unsigned>(opts.threads, static_cast<unsigned>(
                                                                               std::min<std::uint64_t>(shard_chunks, 1024))));
    std::vector<run_result> partial(threads);
    for (auto& p : partial) {
        p.components.resize(s.components.size());
        p.faults.fired.resize(s.fault_rules.size() * fault_action_count);
        p.faults.missed.resize(s.fault_rules.size());
        p.entries.resize(s.entries.size());
    }
    std::atomic<std::uint64_t> next{0}, done{0};
    std::mutex mu;
    std::condition_variable cv;
    unsigned finished = 0;
    std::exception_ptr error;

    auto worker = [&](unsigned id) {
        try {
            run_result& out = partial[id];
            std::unique_ptr<detail::fast_runner> fast;
            if (engine == "fast") fast = std::make_unique<detail::fast_runner>(m, out);
            for (;;) {
                const std::uint64_t j = next.fetch_add(1);
                if (j >= shard_chunks) break;
                const std::uint64_t c = chunk_at(j);
                const std::uint64_t count = chunk_size(c);
                if (engine == "fast")
                    fast->run_chunk(c * per_chunk, count);
                else
                    detail::run_replication(m, plan, c, count, out);
                done.fetch_add(count);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!error) error = std::current_exception();
            next.store(shard_chunks);
        }
        std::lock_guard<std::mutex> lock(mu);
        ++finished;
        cv.notify_all();
    };
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker, i);
    {
        std::unique_lock<std::mutex> lock(mu);
        while (finished < threads) {
            cv.wait_for(lock, std::chrono::milliseconds(200));
            if (opts.progress && finished < threads) {
                lock.unlock();
                opts.progress(std::min(done.load(), total), total);
                lock.lock();
            }
        }
    }
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    if (opts.progress) opts.progress(total, total);

    run_result out;
    out.engine = engine;
    out.components.resize(s.components.size());
    out.faults.fired.resize(s.fault_rules.size() * fault_action_count);
    out.faults.missed.resize(s.fault_rules.size());
    out.entries.resize(s.entries.size());
    for (const auto& p : partial) out.merge(p);
    return out;
}

}  // namespace coldbrew::models::sim
