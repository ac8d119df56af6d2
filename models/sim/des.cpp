// The discrete-event engine: a binary heap of events on a virtual clock; requests run as
// continuations in pooled frames (no allocation per request once the pools have grown to the
// replication's peak concurrency).
//
// Frames: a request; a sequence of steps (the flow, a component's body, a parallel branch); a
// join (a parallel step); a call (one call site's attempts and retries); an execution (one
// attempt running at a component: queued, working, then running its body). A call waits for
// its current attempt's answer or its timeout, whichever comes first; an execution whose
// caller gave up keeps running (it holds its server and its side effects still happen).
// Nothing completes synchronously where a loop is still walking frames: an answer that is
// known at once (a throttle, a cache hit) is delivered through an event at the same time.

#include "models/sim/des.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>

#include "models/pool/pool_policy.hpp"

namespace coldbrew::models::sim::detail {

namespace {

enum class owner : std::uint8_t { none, request, seq, join, exec };

struct parent_ref {
    owner type = owner::none;
    std::uint32_t id = none;
};

struct outcome {
    bool ok = true;
    int cause = cause_error;
    std::uint32_t root = none;
    int root_cause = cause_error;
    double end = 0;
};

struct req_frame {
    std::optional<draw> rng;
    double start = 0;
    std::uint32_t open = 0;  // live frames of this request, the flow's own included
    bool cold = false;
    bool answered = false;
    std::uint32_t entry = none;  // scenario::entries index; none without entries
    std::vector<std::pair<std::uint32_t, std::uint16_t>> effects;  // (site, count)
};

struct seq_frame {
    range r;
    std::uint32_t pos = 0;
    double abandon_at = inf;
    parent_ref parent;
    std::uint32_t req = 0;
};

struct join_frame {
    std::uint32_t pending = 0;
    bool answered = false;
    parent_ref parent;
    std::uint32_t req = 0;
};

struct call_frame {
    std::uint32_t hop = 0;
    std::uint32_t req = 0;
    parent_ref parent;
    double t0 = 0, abandon_at = inf;
    double limit = inf;            // the current attempt's timeout
    retry_state st;
    std::uint32_t key = 0;
    std::uint32_t gen = 0;         // attempt generation: stale events and answers are ignored
    bool waiting = false;          // an attempt is out
    bool phantom = false;          // the current attempt was lost
    outcome pending;               // an answer delivered through an event
    sim_fault fa;                  // the current attempt's fault plan (fault rules)
};

struct exec_frame {
    std::uint32_t hop = 0, comp = 0, req = 0;
    std::uint32_t call = 0, call_gen = 0;
    double arrived = 0, start = 0, kill_at = inf;
    double ready_at = 0;
    bool killed = false;           // its own latency ran past its timeout (or an injected exit)
    bool crashed = false;          // killed by an injected exit, not by its timeout
    bool lost_after = false;
    // A phantom-after rule: whatever it answers is lost; the caller learns at once (reset)
    // or waits its timeout.
    bool lost_rule = false, lost_at_once = false;
    double exit_after_ms = -1;     // an injected exit: ms after delivery; < 0 = none
    std::uint32_t exit_rule = none;
    std::uint32_t slot = none;
    std::uint64_t environment = 0;
    bool has_environment = false;
    double init_ms = 0;
    std::uint64_t request_index = 0;  // waiting at max_environments: its pool request index
};

enum class ev : std::uint8_t {
    arrival, exec_ready, call_timeout, call_retry, call_answer, hop_timer,
    attempt_go,  // an attempt's injected delay is over
};

struct event {
    double t;
    std::uint64_t seq;
    ev type;
    std::uint32_t id;
    std::uint32_t gen;
};

// A call's timeout at one call site. Timeouts of one site fall due in the order they were
// set (now + the site's constant timeout), so each site keeps them in a FIFO and only its
// front sits in the event heap: the heap stays as small as the work in flight instead of
// holding every pending timeout (a 60 s client timeout at 2,000 requests/s would otherwise
// keep 120,000 mostly stale events in it).
struct timer {
    double t;
    std::uint32_t call, gen;
};

struct later {
    bool operator()(const event& a, const event& b) const {
        return a.t > b.t || (a.t == b.t && a.seq > b.seq);
    }
};

template <class T> class pool {
public:
    std::uint32_t alloc() {
        if (!free_.empty()) {
            const std::uint32_t id = free_.back();
            free_.pop_back();
            return id;
        }
        items_.emplace_back();
        return static_cast<std::uint32_t>(items_.size() - 1);
    }
    void release(std::uint32_t id) { free_.push_back(id); }
    T& operator[](std::uint32_t id) { return items_[id]; }

private:
    std::deque<T> items_;  // stable references while growing
    std::vector<std::uint32_t> free_;
};

// Arrival times of one replication: phases (Artillery: duration, arrivalRate, rampTo,
// arrivalCount) or a constant rate, evenly spaced or Poisson.
class arrival_gen {
public:
    arrival_gen(const arrivals& a, draw rng, std::uint64_t limit)
        : a_(a), rng_(rng), limit_(limit) {
        if (a_.phases.empty()) {
            constant_ = true;
        } else {
            enter(0);
        }
    }

    // The next arrival time in ms, or nullopt when the replication has no more.
    std::optional<double> next() {
        if (emitted_ >= limit_) return std::nullopt;
        const double step = a_.poisson ? -std::log1p(-rng_.uniform()) : 1.0;
        if (constant_) {
            if (!(a_.rate > 0)) return std::nullopt;
            // Even spacing starts half a gap in, so replications do not all begin with a request
            // at exactly 0.
            x_ += (emitted_ == 0 && !a_.poisson) ? 0.5 : step;
            ++emitted_;
            return x_ / a_.rate * 1000.0;
        }
        x_ += (first_in_phase_ && !a_.poisson) ? 0.5 : step;
        first_in_phase_ = false;
        while (x_ > total_) {
            x_ -= total_;
            if (phase_ + 1 >= a_.phases.size()) return std::nullopt;
            phase_start_ms_ += a_.phases[phase_].duration_ms;
            enter(phase_ + 1);
            if (!a_.poisson) x_ = 0.5;
        }
        ++emitted_;
        return phase_start_ms_ + time_at(x_);
    }

private:
    void enter(std::size_t i) {
        phase_ = i;
        const phase& p = a_.phases[i];
        d_s_ = p.duration_ms / 1000.0;
        if (p.arrival_count) {
            r0_ = r1_ = d_s_ > 0 ? static_cast<double>(*p.arrival_count) / d_s_ : 0;
        } else {
            r0_ = p.arrival_rate;
            r1_ = p.ramp_to.value_or(p.arrival_rate);
        }
        total_ = (r0_ + r1_) / 2 * d_s_;
        first_in_phase_ = true;
    }
    // Solves Λ(t) = r0·t + (r1 - r0)·t²/(2d) = x for t in [0, d], in ms.
    double time_at(double x) const {
        if (r1_ == r0_) return r0_ > 0 ? x / r0_ * 1000.0 : 0.0;
        const double a = (r1_ - r0_) / (2 * d_s_);
        const double disc = std::max(0.0, r0_ * r0_ + 4 * a * x);
        const double t = (-r0_ + std::sqrt(disc)) / (2 * a);
        return std::clamp(t, 0.0, d_s_) * 1000.0;
    }

    const arrivals& a_;
    draw rng_;
    std::uint64_t limit_;
    std::uint64_t emitted_ = 0;
    bool constant_ = false;
    std::size_t phase_ = 0;
    double phase_start_ms_ = 0;
    double d_s_ = 0, r0_ = 0, r1_ = 0, total_ = 0;
    double x_ = 0;
    bool first_in_phase_ = true;
};

class des_runner {
public:
    des_runner(const compiled& m, std::uint64_t replication, run_result& out)
        : m_(m), s_(*m.s), out_(out), rng_(s_.seed), replication_(replication) {
        for (const auto& q : m.quota_config) quotas_.emplace_back(q);
        busy_.assign(m.capacity_slots, 0);
        waiting_.resize(m.capacity_slots);
        if (!m.functions.empty()) {
            const profile& p = *s_.model_profile;
            account_ = std::make_unique<account_concurrency>(p.account_concurrency,
                                                             p.unreserved_minimum);
            for (std::uint32_t ci : m.functions) {
                const c_comp& c = m.comps[ci];
                pool_limits limits;
                limits.reserved_concurrency = c.src->function.reserved_concurrency;
                limits.provisioned_concurrency = c.src->function.provisioned_concurrency;
                limits.max_environments = c.src->function.max_environments;
                limits.scaling_environments = p.scaling_environments;
                limits.scaling_window_ms = p.scaling_window_ms;
                // The function's own keep-alive and lifetime (coldbrew.yaml `model:`), as the
                // live pool uses them; else the profile's.
                const function_config& fc = c.src->function;
                pools_.push_back(std::make_unique<pool_policy>(
                    c.src->name, limits,
                    lifetime_model{fc.keep_alive_ms.value_or(p.keep_alive_ms),
                                   fc.max_lifetime_ms.value_or(p.max_lifetime_ms)},
                    *c.cold, rng_, *account_, nullptr));
                pools_.back()->provision(0.0);
            }
        }
        pool_waiting_.resize(pools_.size());
        heap_.reserve(1024);
        timers_.resize(m.hops.size());
        if (!m.live.empty()) faults_.start(m, replication_);
    }

    void run(const des_plan& plan, std::uint64_t requests) {
        const std::uint64_t limit = plan.phased ? ~0ull : requests;
        arrivals_.emplace(s_.arrival, draw(rng_, "sim-arrivals", "replication", replication_), limit);
        schedule_arrival();
        double now = 0;
        while (!heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), later{});
            const event e = heap_.back();
            heap_.pop_back();
            now = e.t;
            switch (e.type) {
            case ev::arrival: on_arrival(now); break;
            case ev::exec_ready: on_exec_ready(e.id, now); break;
            case ev::call_timeout: on_call_timeout(e.id, e.gen, now); break;
            case ev::call_retry: start_attempt(e.id, now); break;
            case ev::attempt_go:
                if (calls_[e.id].gen == e.gen && calls_[e.id].waiting) run_attempt(e.id, now);
                break;
            case ev::call_answer:
                if (calls_[e.id].gen == e.gen && calls_[e.id].waiting)
                    answer(e.id, calls_[e.id].pending, now);
                break;
            case ev::hop_timer: {
                auto& q = timers_[e.id];
                const timer front = q.front();
                q.pop_front();
                arm_site(e.id);
                on_call_timeout(front.call, front.gen, now);
                break;
            }
            }
        }
        // The arrival process's span: the drain after the last arrival is not traffic time,
        // but a pass of phases lasts all its phases, a quiet one at the end included
        // (provisioned concurrency is paid for through it).
        now = last_arrival_;
        if (!m_.s->arrival.phases.empty()) {
            double pass_ms = 0;
            for (const auto& p : m_.s->arrival.phases) pass_ms += p.duration_ms;
            now = std::max(now, pass_ms);
        }
        out_.simulated_us += static_cast<std::uint64_t>(now * 1000.0);
        for (std::size_t f = 0; f < pools_.size(); ++f) {
            const c_comp& c = m_.comps[m_.functions[f]];
            out_.components[m_.functions[f]].provisioned_mb_ms +=
                static_cast<std::uint64_t>(c.src->function.provisioned_concurrency) *
                static_cast<std::uint64_t>(c.memory_mb) * static_cast<std::uint64_t>(now);
        }
        ++out_.chunks;
    }

private:
    void push(double t, ev type, std::uint32_t id, std::uint32_t gen = 0) {
        heap_.push_back(event{t, seq_++, type, id, gen});
        std::push_heap(heap_.begin(), heap_.end(), later{});
    }

    // The call's current attempt times out at f.limit unless answered first.
    void arm_timeout(std::uint32_t id, double now) {
        const call_frame& f = calls_[id];
        const c_hop& h = m_.hops[f.hop];
        if (f.limit == now + h.timeout_ms) {
            auto& q = timers_[f.hop];
            q.push_back(timer{f.limit, id, f.gen});
            if (q.size() == 1) push(f.limit, ev::hop_timer, f.hop);
        } else {
            push(f.limit, ev::call_timeout, id, f.gen);  // cut short by an enclosing deadline
        }
    }

    // Puts the site's first live timeout in the heap, dropping answered ones on the way.
    void arm_site(std::uint32_t hop) {
        auto& q = timers_[hop];
        while (!q.empty()) {
            const timer& t = q.front();
            const call_frame& f = calls_[t.call];
            if (f.gen == t.gen && f.waiting) {
                push(t.t, ev::hop_timer, hop);
                return;
            }
            q.pop_front();
        }
    }

    void schedule_arrival() {
        if (const auto t = arrivals_->next()) push(*t, ev::arrival, 0);
    }

    // ---- requests ----------------------------------------------------------------------

    void on_arrival(double now) {
        last_arrival_ = now;
        schedule_arrival();
        const std::uint32_t r = reqs_.alloc();
        req_frame& q = reqs_[r];
        const std::uint64_t key = (replication_ << 32) | next_request_++;
        q.rng.emplace(rng_, "sim-request", "replication-request", key);
        q.start = now;
        q.open = 1;  // the flow
        q.cold = false;
        q.answered = false;
        q.effects.clear();
        range flow = m_.flow;
        q.entry = none;
        if (!m_.entry_cdf.empty()) {
            q.entry = pick_entry(m_, rng_, "replication-request", key);
            flow = m_.entry_flows[q.entry];
        }
        const std::uint32_t sq = new_seq(flow, now + s_.client_timeout_ms, {owner::request, r}, r);
        advance(sq, now);
    }

    void request_done(std::uint32_t r, const outcome& o, double now) {
        req_frame& q = reqs_[r];
        q.answered = true;
        ++out_.requests;
        if (q.cold) ++out_.requests_with_cold_start;
        if (q.entry != none) {
            entry_counts& e = out_.entries[q.entry];
            ++e.requests;
            if (o.ok) {
                ++e.successes;
                e.latency.record_ms(now - q.start);
            }
        }
        if (o.ok) {
            ++out_.successes;
            out_.latency.record_ms(now - q.start);
        } else if (o.root != none) {
            ++out_.components[o.root].root_causes[o.root_cause];
        }
        out_.latency_all.record_ms(now - q.start);
        close(r);
    }

    // One of the request's frames is gone; the last one settles its side effects.
    void close(std::uint32_t r) {
        req_frame& q = reqs_[r];
        if (--q.open != 0) return;
        for (const auto& [site, n] : q.effects)
            if (n > 1 && m_.comps[m_.hops[site].comp].duplicates_count)
                out_.components[m_.hops[site].comp].duplicates += n - 1u;
        reqs_.release(r);
    }

    void add_effect(std::uint32_t r, std::uint32_t site) {
        auto& v = reqs_[r].effects;
        for (auto& [s, n] : v)
            if (s == site) {
                ++n;
                return;
            }
        v.emplace_back(site, 1);
    }

    // ---- sequences and joins -------------------------------------------------------------

    std::uint32_t new_seq(range r, double abandon_at, parent_ref parent, std::uint32_t req) {
        const std::uint32_t id = seqs_.alloc();
        seq_frame& f = seqs_[id];
        f.r = r;
        f.pos = 0;
        f.abandon_at = abandon_at;
        f.parent = parent;
        f.req = req;
        ++reqs_[req].open;
        return id;
    }

    void advance(std::uint32_t id, double now) {
        for (;;) {
            seq_frame& f = seqs_[id];
            if (f.pos == f.r.count) {
                outcome ok;
                ok.end = now;
                finish_seq(id, ok, now);
                return;
            }
            const c_step st = m_.steps[f.r.first + f.pos];
            ++f.pos;
            if (!st.parallel) {
                const c_hop& h = m_.hops[st.hop];
                if (h.async) {
                    start_call(st.hop, now, inf, {}, f.req);
                    continue;
                }
                if (now >= f.abandon_at) {
                    outcome o;
                    o.ok = false;
                    o.cause = o.root_cause = cause_timeout;
                    o.root = h.comp;
                    o.end = now;
                    finish_seq(id, o, now);
                    return;
                }
                start_call(st.hop, now, f.abandon_at, {owner::seq, id}, f.req);
                return;
            }
            const std::uint32_t j = joins_.alloc();
            {
                join_frame& jf = joins_[j];
                jf.pending = st.branches.count + 1;  // +1: no branch may finish it while starting
                jf.answered = false;
                jf.parent = {owner::seq, id};
                jf.req = f.req;
                ++reqs_[f.req].open;
            }
            const double abandon = f.abandon_at;
            const std::uint32_t req = f.req;
            for (std::uint32_t b = 0; b < st.branches.count; ++b) {
                const std::uint32_t bs =
                    new_seq(m_.branches[st.branches.first + b], abandon, {owner::join, j}, req);
                advance(bs, now);
            }
            outcome ok;
            ok.end = now;
            join_branch_done(j, ok, now);
            return;
        }
    }

    void finish_seq(std::uint32_t id, const outcome& o, double now) {
        const parent_ref p = seqs_[id].parent;
        const std::uint32_t req = seqs_[id].req;
        seqs_.release(id);
        deliver(p, o, now);
        close(req);
    }

    void join_branch_done(std::uint32_t j, const outcome& o, double now) {
        join_frame& jf = joins_[j];
        if (!o.ok && !jf.answered) {
            jf.answered = true;  // a Parallel state fails as soon as one branch fails
            deliver(jf.parent, o, now);
        }
        join_frame& again = joins_[j];
        if (--again.pending != 0) return;
        const bool answered = again.answered;
        const parent_ref p = again.parent;
        const std::uint32_t req = again.req;
        joins_.release(j);
        if (!answered) {
            outcome ok;
            ok.end = now;
            deliver(p, ok, now);
        }
        close(req);
    }

    void deliver(parent_ref p, const outcome& o, double now) {
        switch (p.type) {
        case owner::none: break;
        case owner::request: request_done(p.id, o, now); break;
        case owner::join: join_branch_done(p.id, o, now); break;
        case owner::exec: body_done(p.id, o, now); break;
        case owner::seq:
            if (!o.ok)
                finish_seq(p.id, o, now);
            else
                advance(p.id, now);
            break;
        }
    }

    // ---- calls ---------------------------------------------------------------------------

    void start_call(std::uint32_t hop, double now, double abandon_at, parent_ref parent,
                    std::uint32_t req) {
        const c_hop& h = m_.hops[hop];
        const c_comp& c = m_.comps[h.comp];
        component_counts& k = out_.components[h.comp];
        draw& d = *reqs_[req].rng;
        ++k.calls;
        if (h.async) ++k.async_events;
        const std::uint32_t id = calls_.alloc();
        call_frame& f = calls_[id];
        f.hop = hop;
        f.req = req;
        f.parent = parent;
        f.t0 = now;
        f.abandon_at = abandon_at;
        f.st = retry_state{};
        f.key = c.key_cdf.empty() ? 0 : draw_key(c, d.uniform());
        f.waiting = false;
        ++reqs_[req].open;
        if (h.cache != none) {
            const c_cache& cc = m_.caches[h.cache];
            ++k.cache_lookups;
            const double hit = cc.key_hit.empty() ? cc.hit : cc.key_hit[f.key];
            if (d.uniform() < hit) {
                ++k.cache_hits;
                f.waiting = true;
                f.pending = outcome{};
                ++f.gen;
                push(now + std::max(0.0, cc.latency_sampler(d)), ev::call_answer, id, f.gen);
                return;
            }
        }
        start_attempt(id, now);
    }

    void start_attempt(std::uint32_t id, double now) {
        call_frame& f = calls_[id];
        const c_hop& h = m_.hops[f.hop];
        component_counts& k = out_.components[h.comp];
        ++f.st.attempts;
        ++k.attempts;
        ++f.gen;
        f.waiting = true;
        f.phantom = false;
        f.limit = std::min(f.abandon_at, now + h.timeout_ms);
        f.fa = sim_fault{};
        if (h.live != none) {
            f.fa = decide_fault(m_, h, faults_, now, replication_, out_);
            if (f.fa.delay_ms > 0) {
                // The delay comes first; the attempt's timeout starts after it (as the live
                // gateway's integration timeout does), the caller's deadline does not move.
                const double go = now + f.fa.delay_ms;
                f.limit = std::min(f.abandon_at, go + h.timeout_ms);
                if (go >= f.abandon_at) {
                    if (f.fa.type == sim_fault::kind::exit) count_exit(m_, f.fa.rule, false, out_);
                    f.pending = failure(cause_timeout, h.comp);
                    push(f.abandon_at, ev::call_answer, id, f.gen);
                    return;
                }
                push(go, ev::attempt_go, id, f.gen);
                return;
            }
        }
        run_attempt(id, now);
    }

    // The attempt proper, once any injected delay is over: the fault plan, the component's
    // own availability draw, then admission and service.
    void run_attempt(std::uint32_t id, double now) {
        call_frame& f = calls_[id];
        const c_hop& h = m_.hops[f.hop];
        const c_comp& c = m_.comps[h.comp];
        component_counts& k = out_.components[h.comp];
        draw& d = *reqs_[f.req].rng;
        const sim_fault fa = f.fa;
        if (fa.type == sim_fault::kind::fail_now ||
            (fa.type == sim_fault::kind::lost_before && fa.at_once)) {
            f.pending = failure(fa.type == sim_fault::kind::fail_now ? fa.cause : cause_phantom, h.comp);
            push(now, ev::call_answer, id, f.gen);
            return;
        }
        if (fa.type == sim_fault::kind::lost_before) {
            f.phantom = true;  // never reaches the component; the timeout answers
            arm_timeout(id, now);
            return;
        }
        const bool exit = fa.type == sim_fault::kind::exit;

        const double u = d.uniform();
        if (u < c.p_error) {
            if (exit) count_exit(m_, fa.rule, false, out_);
            const double at = now + std::max(0.0, c.latency_sampler(d));
            f.pending = at > f.limit ? failure(cause_timeout, h.comp) : failure(cause_error, h.comp);
            push(std::min(at, f.limit), ev::call_answer, id, f.gen);
            return;
        }
        if (u < c.p_phantom) {
            if (exit) count_exit(m_, fa.rule, false, out_);
            f.phantom = true;  // nothing comes back; the timeout answers
            arm_timeout(id, now);
            return;
        }
        const bool lost_rule = fa.type == sim_fault::kind::lost_after;
        const bool lost_after = u < c.p_phantom_after || lost_rule;

        // Admission: a function's pool, or the component's (shard's) servers.
        std::uint32_t slot = none;
        std::uint64_t environment = 0;
        bool has_environment = false;
        double init = 0;
        std::optional<std::uint64_t> waits;  // the pool request index of an invocation that waits
        if (c.kind == service_kind::lambda) {
            pool_policy& pool = *pools_[c.function];
            pool.expire(now);
            const placement p = pool.acquire(now);
            // At max_environments the live pool makes the invocation wait for an environment
            // (function_pool: waiting); only a concurrency limit throttles.
            if (p.kind == placement_kind::wait && c.cap_first == none) {
                waits = p.request_index;
            } else if (p.kind == placement_kind::throttle || p.kind == placement_kind::wait) {
                if (exit) count_exit(m_, fa.rule, false, out_);
                f.pending = failure(cause_throttle, h.comp);
                push(now, ev::call_answer, id, f.gen);
                return;
            } else {
                ++k.invocations;
                environment = p.environment;
                has_environment = true;
                init = placed_init(p, k, f.req);
            }
        }
        if (c.cap_first != none) {
            slot = c.cap_first + (c.key_shard.empty() ? 0 : c.key_shard[f.key]);
            if (busy_[slot] >= m_.slot_concurrency[slot]) {
                const long long q = m_.slot_queue[slot];
                if (q >= 0 && static_cast<long long>(waiting_[slot].size()) >= q) {
                    if (exit) count_exit(m_, fa.rule, false, out_);
                    f.pending = failure(cause_throttle, h.comp);
                    push(now, ev::call_answer, id, f.gen);
                    return;
                }
            }
        }
        const std::uint32_t x = execs_.alloc();
        exec_frame& e = execs_[x];
        e.hop = f.hop;
        e.comp = h.comp;
        e.req = f.req;
        e.call = id;
        e.call_gen = f.gen;
        e.arrived = now;
        e.lost_after = lost_after;
        e.slot = slot;
        e.environment = environment;
        e.has_environment = has_environment;
        e.init_ms = init;
        e.killed = false;
        e.crashed = false;
        e.lost_rule = lost_rule;
        e.lost_at_once = lost_rule && fa.at_once;
        e.exit_after_ms = exit ? fa.kill_after_ms : -1;
        e.exit_rule = exit ? fa.rule : none;
        e.request_index = waits.value_or(0);
        ++reqs_[f.req].open;
        if (waits) {
            // Placed when an environment of the function is released or discarded; the
            // caller's timeout runs meanwhile, and a caller that gives up does not stop it.
            pool_waiting_[c.function].push_back(x);
            ++k.queued;
            arm_timeout(id, now);
            return;
        }
        if (slot != none) {
            ++k.admitted;
            if (busy_[slot] >= m_.slot_concurrency[slot]) {
                waiting_[slot].push_back(x);
                ++k.queued;
                arm_timeout(id, now);
                return;
            }
            ++busy_[slot];
        }
        begin_service(x, now);
        // A leaf whose answer time is already known needs no timeout event unless it is late.
        const exec_frame& started = execs_[x];
        if (c.body.count != 0 || started.ready_at > f.limit || started.lost_after)
            arm_timeout(id, now);
    }

    // A warm or cold placement's Init Duration (0 when warm), counted.
    double placed_init(const placement& p, component_counts& k, std::uint32_t req) {
        if (p.kind != placement_kind::cold || !p.init) return 0;
        const double init = std::max(0.0, p.init->total_ms);
        ++k.cold_starts;
        k.init_ms_sum += static_cast<std::uint64_t>(init + 0.5);
        reqs_[req].cold = true;
        return init;
    }

    // function_pool::drain_waiting: invocations waiting at max_environments are placed again,
    // in arrival order with their own request index, until one has to wait again.
    void drain_waiting(std::uint32_t function, double now) {
        auto& q = pool_waiting_[function];
        if (q.empty()) return;
        pool_policy& pool = *pools_[function];
        pool.expire(now);
        while (!q.empty()) {
            const std::uint32_t x = q.front();
            const placement p = pool.acquire(now, execs_[x].request_index);
            if (p.kind == placement_kind::wait) return;
            q.pop_front();
            exec_frame& e = execs_[x];
            component_counts& k = out_.components[e.comp];
            if (p.kind == placement_kind::throttle) {
                const std::uint32_t call = e.call, gen = e.call_gen, req = e.req, comp = e.comp;
                if (e.exit_rule != none) count_exit(m_, e.exit_rule, false, out_);
                execs_.release(x);
                const call_frame& f = calls_[call];
                if (f.gen == gen && f.waiting) answer(call, failure(cause_throttle, comp), now);
                close(req);
                continue;
            }
            ++k.invocations;
            e.environment = p.environment;
            e.has_environment = true;
            e.init_ms = placed_init(p, k, e.req);
            begin_service(x, now);
        }
    }

    static outcome failure(int cause, std::uint32_t root) {
        outcome o;
        o.ok = false;
        o.cause = o.root_cause = cause;
        o.root = root;
        return o;
    }

    void begin_service(std::uint32_t x, double now) {
        exec_frame& e = execs_[x];
        const c_comp& c = m_.comps[e.comp];
        draw& d = *reqs_[e.req].rng;
        if (now > e.arrived)
            out_.components[e.comp].queue_wait_us +=
                static_cast<std::uint64_t>((now - e.arrived) * 1000.0 + 0.5);
        e.start = now;
        // The timeout starts after Init (see engine.cpp), and so does an injected exit's wait:
        // it counts from the invocation's delivery.
        e.kill_at = now + e.init_ms + c.timeout_ms;
        if (e.exit_after_ms >= 0 && now + e.init_ms + e.exit_after_ms < e.kill_at) {
            e.kill_at = now + e.init_ms + e.exit_after_ms;
            e.crashed = true;
        }
        const double lat = std::max(0.0, c.latency_sampler(d));
        double ready = now + e.init_ms + lat;
        if (ready >= e.kill_at) {
            ready = e.kill_at;
            e.killed = true;
        }
        e.ready_at = ready;
        push(ready, ev::exec_ready, x);
    }

    void on_exec_ready(std::uint32_t x, double now) {
        exec_frame& e = execs_[x];
        const c_comp& c = m_.comps[e.comp];
        if (e.killed) {
            outcome o = failure(e.crashed ? cause_error : cause_timeout, e.comp);
            finish_exec(x, o, now);
            return;
        }
        if (c.body.count == 0) {
            outcome ok;
            finish_exec(x, ok, now);
            return;
        }
        const std::uint32_t sq = new_seq(c.body, e.kill_at, {owner::exec, x}, e.req);
        advance(sq, now);
    }

    void body_done(std::uint32_t x, const outcome& b, double now) {
        exec_frame& e = execs_[x];
        if (b.ok) {
            outcome ok;
            finish_exec(x, ok, now);
            return;
        }
        outcome o;
        o.ok = false;
        if (now >= e.kill_at) {
            e.killed = true;
            o.cause = o.root_cause = e.crashed ? cause_error : cause_timeout;
            o.root = e.comp;
        } else {
            o.cause = cause_error;  // the caller sees this component fail
            o.root = b.root;
            o.root_cause = b.root_cause;
        }
        finish_exec(x, o, now);
    }

    void finish_exec(std::uint32_t x, outcome o, double now) {
        exec_frame e = execs_[x];
        execs_.release(x);
        const c_comp& c = m_.comps[e.comp];
        component_counts& k = out_.components[e.comp];
        // Free the server and start the next waiting attempt.
        if (e.slot != none) {
            auto& q = waiting_[e.slot];
            if (!q.empty()) {
                const std::uint32_t next = q.front();
                q.pop_front();
                begin_service(next, now);
            } else {
                --busy_[e.slot];
            }
        }
        if (e.has_environment) {
            pool_policy& pool = *pools_[c.function];
            // Lambda resets an environment after a timeout; a crashed one is gone (the live
            // pool discards it with the reason its kill gave).
            if (e.killed)
                pool.discard(e.environment, now,
                             e.crashed ? "injected function error" : "timeout");
            else
                pool.release(e.environment, now);
            drain_waiting(c.function, now);
        }
        // Billing.
        if (c.kind == service_kind::lambda) {
            k.billed_mb_ms += static_cast<std::uint64_t>(std::ceil(std::max(0.0, now - e.start))) *
                              static_cast<std::uint64_t>(c.memory_mb);
        } else if (c.kind == service_kind::step_functions) {
            ++k.executions;
            if (c.src->sfn.express) {
                const auto units = static_cast<std::uint64_t>(
                    std::ceil(std::max(1.0, now - e.start) / s_.price.sfn_express_increment_ms));
                const auto mem_units = static_cast<std::uint64_t>(
                    std::ceil(c.src->sfn.memory_mb / s_.price.sfn_express_memory_increment_mb));
                k.express_billed_mb_100ms += units * mem_units;
            } else {
                k.transitions += c.base_transitions;
            }
        }
        if (o.ok && c.writes) {
            ++k.effects;
            add_effect(e.req, e.hop);
        }
        if (e.exit_rule != none) count_exit(m_, e.exit_rule, o.ok, out_);
        // A phantom-after rule loses whatever the function answered.
        if ((o.ok && e.lost_after) || e.lost_rule) o = failure(cause_phantom, e.comp);
        call_frame& f = calls_[e.call];
        const bool current = f.gen == e.call_gen && f.waiting;
        const std::uint32_t req = e.req;
        if (current) {
            if (o.ok || o.cause != cause_phantom || e.lost_at_once)
                answer(e.call, o, now);
            else
                f.phantom = true;  // the timeout will answer
        }
        close(req);
    }

    void on_call_timeout(std::uint32_t id, std::uint32_t gen, double now) {
        call_frame& f = calls_[id];
        if (f.gen != gen || !f.waiting) return;
        const c_hop& h = m_.hops[f.hop];
        answer(id, failure(f.phantom ? cause_phantom : cause_timeout, h.comp), now);
    }

    // The current attempt's answer (or its timeout) is in.
    void answer(std::uint32_t id, outcome o, double now) {
        call_frame& f = calls_[id];
        f.waiting = false;
        ++f.gen;  // stale timeouts and late answers are ignored from here on
        const c_hop& h = m_.hops[f.hop];
        const c_comp& c = m_.comps[h.comp];
        component_counts& k = out_.components[h.comp];
        retry_quota* quota = h.quota == none ? nullptr : &quotas_[h.quota];
        o.end = now;
        if (o.ok) {
            ++k.calls_ok;
            k.latency.record_ms(now - f.t0);
            if (quota) quota->on_success(f.st.quota_cost);
            finish_call(id, o, now);
            return;
        }
        ++k.attempt_failures[o.cause];
        double delay = 0;
        draw& d = *reqs_[f.req].rng;
        const bool again = next_retry(*h.retry, c, f.st, o.cause, quota, d.uniform(), now - f.t0, delay);
        if (!again || now + delay >= f.abandon_at) {
            finish_call(id, o, now);
            return;
        }
        if (h.parent != none && m_.comps[h.parent].kind == service_kind::step_functions &&
            !m_.comps[h.parent].src->sfn.express)
            ++out_.components[h.parent].transitions;
        push(now + delay, ev::call_retry, id);
    }

    void finish_call(std::uint32_t id, const outcome& o, double now) {
        call_frame& f = calls_[id];
        const parent_ref p = f.parent;
        const std::uint32_t req = f.req;
        const c_hop& h = m_.hops[f.hop];
        if (h.async) {
            component_counts& k = out_.components[h.comp];
            if (o.ok)
                ++k.async_delivered;
            else
                ++k.async_given_up;
        }
        ++f.gen;
        calls_.release(id);
        deliver(p, o, now);
        close(req);
    }

    const compiled& m_;
    const scenario& s_;
    run_result& out_;
    random_source rng_;
    std::uint64_t replication_;
    std::uint64_t next_request_ = 0;
    double last_arrival_ = 0;
    std::uint64_t seq_ = 0;
    std::vector<event> heap_;
    std::vector<std::deque<timer>> timers_;
    std::optional<arrival_gen> arrivals_;
    pool<req_frame> reqs_;
    pool<seq_frame> seqs_;
    pool<join_frame> joins_;
    pool<call_frame> calls_;
    pool<exec_frame> execs_;
    std::vector<retry_quota> quotas_;
    std::vector<int> busy_;
    std::vector<std::deque<std::uint32_t>> waiting_;
    std::unique_ptr<account_concurrency> account_;
    std::vector<std::unique_ptr<pool_policy>> pools_;
    std::vector<std::deque<std::uint32_t>> pool_waiting_;  // by function: execs at max_environments
    fault_state faults_;
};

}  // namespace

des_plan plan_replications(const scenario& s) {
    des_plan p;
    if (s.arrival.phases.empty()) {
        p.phased = false;
        p.requests_per_replication = std::min<std::uint64_t>(des_chunk_requests, std::max<std::uint64_t>(1, s.requests));
        return p;
    }
    p.phased = true;
    double n = 0;
    for (const phase& ph : s.arrival.phases) {
        if (ph.arrival_count)
            n += static_cast<double>(*ph.arrival_count);
        else
            n += (ph.arrival_rate + ph.ramp_to.value_or(ph.arrival_rate)) / 2 * ph.duration_ms / 1000;
    }
    p.requests_per_replication = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(n)));
    return p;
}

void run_replication(const compiled& m, const des_plan& plan, std::uint64_t index,
                     std::uint64_t requests, run_result& out) {
    des_runner r(m, index, out);
    r.run(plan, requests);
}

}  // namespace coldbrew::models::sim::detail
