#include "models/sim/replay.hpp"

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "models/random/random_source.hpp"

namespace coldbrew::models::sim {

namespace mf = models::faults;

namespace {

// A replay that cannot go on: the record and the replayed decisions disagree.
struct diverged : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::optional<mf::front> front_of(const std::string& s) {
    if (s == "gateway") return mf::front::gateway;
    if (s == "invoke") return mf::front::invoke;
    if (s == "states") return mf::front::states;
    if (s == "dependency") return mf::front::dependency;
    return std::nullopt;
}

// Plans that never invoke the function (executor.cpp's execute): a live invocation of such a
// request means the live run decided otherwise.
bool invokes(const mf::plan& p) {
    return !(mf::is<mf::actions::phantom_before>(p) || mf::is<mf::actions::gateway_error>(p) ||
             mf::is<mf::actions::handler_error>(p) || mf::is<mf::actions::throttle>(p) ||
             mf::is<mf::actions::reset>(p));
}

class replayer {
public:
    replayer(const replay_inputs& in, const run_record& rec)
        : in_(in),
          rec_(rec),
          rng_(rec.header.seed),
          account_(in.account_limit, in.unreserved_minimum),
          decider_(*in.registry, rec.header.seed) {
        decider_.set_max_active(in.max_active_faults);
        decider_.set_rules(in.rules, 0.0);
        for (const auto& f : in.functions) {
            auto p = std::make_unique<pool>();
            p->name = f.name;
            p->policy = std::make_unique<pool_policy>(
                f.name, f.limits, f.lifetime, *f.cold_start, rng_, account_,
                [this](const pool_event& e) { out_.lines.push_back(e.to_json()); });
            pools_.emplace(f.name, std::move(p));
        }
        // Environments whose process could not start: the live pool discarded them inside the
        // placement that created them, before anything else happened.
        for (const auto& e : rec.events)
            if (const auto* x = std::get_if<recorded_exit>(&e); x && x->reason == "start-failed")
                start_failed_.insert({x->function, x->environment});
    }

    replay_result run() {
        try {
            for (const auto& e : rec_.events) {
                std::visit([this](const auto& ev) { on(ev); }, e);
                ++out_.events;
            }
        } catch (const diverged& d) {
            // Line 1 is the header; blank lines are not written by coldbrew.
            out_.divergence = "record line " + std::to_string(out_.events + 2) + ": " + d.what();
        }
        return std::move(out_);
    }

private:
    struct invocation_state {
        std::string function;
        std::optional<std::uint64_t> environment;  // placed warm or cold, not yet answered
        bool waiting = false;
        bool throttled = false;
        bool answered = false;
    };
    struct waiting_entry {
        std::uint64_t invocation;
        std::uint64_t request_index;
    };
    struct pool {
        std::string name;
        std::unique_ptr<pool_policy> policy;
        std::deque<waiting_entry> waiting;
        std::map<std::uint64_t, std::uint64_t> current;  // environment → invocation given to it
        bool stopped = false;
    };

    pool& pool_of(const std::string& function) {
        auto it = pools_.find(function);
        if (it == pools_.end())
            throw diverged("function " + function + " is not in the app (was the app changed "
                           "since the run was recorded?)");
        return *it->second;
    }

    void on(const recorded_request& r) {
        const auto where = front_of(r.front);
        if (!where) throw diverged("unknown front " + r.front);
        mf::request_facts f;
        f.where = *where;
        f.function = r.function;
        f.function_name = r.function_name;
        f.route = r.route;
        f.method = r.method;
        f.path = r.path;
        f.headers = &r.headers;
        f.state_machine = r.state_machine;
        f.state_machine_name = r.state_machine_name;
        f.state = r.state;
        f.state_path = r.state_path;
        f.dependency = r.dependency;
        f.on = r.on == "request" ? mf::dependency_phase::request : mf::dependency_phase::connect;
        f.authorizer = r.authorizer;
        // The executor's fronts count outcomes themselves; the dependency proxy does not.
        f.counted_by_caller = *where != mf::front::dependency;
        auto d = decider_.decide(f, r.at_ms);
        if (!d.log_line.empty()) out_.lines.push_back(d.log_line);
        decisions_[r.id] = std::move(d);
    }

    void on(const recorded_invoke& i) {
        auto& p = pool_of(i.function);
        if (i.request) {
            const auto& d = decisions_.at(*i.request);
            if (!invokes(d.p))
                throw diverged("the live run invoked " + i.function + " for request " +
                               std::to_string(*i.request) + ", which the replay decided " +
                               std::string(mf::action_name(d.p.act)) + " (rule " + d.rule + ")");
        }
        invocations_[i.id] = invocation_state{i.function, std::nullopt, false, false, false};
        if (p.stopped) return;
        place(p, i.id, std::nullopt, i.at_ms);
    }

    // function_pool::place: evictions that are due first, then the policy's placement.
    void place(pool& p, std::uint64_t inv, std::optional<std::uint64_t> index, double now) {
        p.policy->expire(now);
        auto pl = p.policy->acquire(now, index);
        auto& st = invocations_.at(inv);
        st.waiting = false;
        switch (pl.kind) {
        case placement_kind::warm:
            st.environment = pl.environment;
            p.current[pl.environment] = inv;
            break;
        case placement_kind::cold:
            if (start_failed_.count({p.name, pl.environment})) {
                // Answered at once with the start's error; the environment never existed.
                p.policy->discard(pl.environment, now, "start-failed");
                st.answered = true;
                consumed_exits_.insert({p.name, pl.environment});
                break;
            }
            st.environment = pl.environment;
            p.current[pl.environment] = inv;
            break;
        case placement_kind::throttle:
            st.throttled = true;
            break;
        case placement_kind::wait:
            st.waiting = true;
            p.waiting.push_back({inv, pl.request_index});
            break;
        }
    }

    // function_pool::drain_waiting.
    void drain(pool& p, double now) {
        while (!p.waiting.empty() && !p.stopped) {
            auto w = p.waiting.front();
            p.waiting.pop_front();
            const std::size_t before = p.waiting.size();
            place(p, w.invocation, w.request_index, now);
            if (p.waiting.size() > before) {
                p.waiting.push_front(p.waiting.back());
                p.waiting.pop_back();
                break;
            }
        }
    }

    void on(const recorded_handler& h) {
        auto it = invocations_.find(h.invocation);
        if (it == invocations_.end()) throw diverged("an answer for an unknown invocation");
        auto& st = it->second;
        auto& p = pool_of(st.function);
        if (p.stopped) return;
        const std::string what = "invocation " + std::to_string(h.invocation) + " of " + st.function;
        if (st.throttled) throw diverged("the live run's handler answered " + what + ", which the replay throttled");
        if (st.waiting)
            throw diverged("the live run's handler answered " + what +
                           ", which the replay has waiting for an execution environment");
        if (!st.environment || st.answered) throw diverged("the live run's handler answered " + what + " twice");
        const auto env = *st.environment;
        st.answered = true;
        p.current.erase(env);
        const bool alive = h.result == recorded_handler::outcome::success ||
                           h.result == recorded_handler::outcome::error;
        // A crashed or timed-out environment stays busy until its process's exit.
        if (!alive) return;
        p.policy->release(env, h.at_ms);
        drain(p, h.at_ms);
    }

    void on(const recorded_exit& x) {
        auto& p = pool_of(x.function);
        if (p.stopped) return;
        if (x.reason == "start-failed") {
            if (!consumed_exits_.count({x.function, x.environment}))
                throw diverged("the live run could not start environment " +
                               std::to_string(x.environment) + " of " + x.function +
                               ", which the replay never created");
            return;
        }
        p.policy->discard(x.environment, x.at_ms, x.reason);
        if (auto c = p.current.find(x.environment); c != p.current.end()) {
            // Given to the environment and never delivered: placed again, as a new placement.
            const auto inv = c->second;
            p.current.erase(c);
            invocations_.at(inv).environment.reset();
            place(p, inv, std::nullopt, x.at_ms);
        }
        drain(p, x.at_ms);
    }

    void on(const recorded_end& e) {
        auto it = decisions_.find(e.request);
        if (it != decisions_.end()) decider_.finished(it->second.id);
    }

    void on(const recorded_tick& t) {
        auto& p = pool_of(t.function);
        if (!p.stopped) p.policy->expire(t.at_ms);
    }

    void on(const recorded_provision& v) {
        auto& p = pool_of(v.function);
        if (!p.stopped) p.policy->provision(v.at_ms);
    }

    void on(const recorded_stop& s) {
        auto& p = pool_of(s.function);
        p.stopped = true;
        p.waiting.clear();
    }

    std::vector<mf::rule> parse_rules(const nlohmann::json& items) {
        std::vector<mf::rule> rules;
        for (const auto& j : items) {
            try {
                rules.push_back(mf::parse_rule(j, *in_.registry, decider_.next_default_name()));
            } catch (const mf::rule_error& e) {
                throw diverged(std::string("a recorded rule does not parse: ") + e.what());
            }
        }
        return rules;
    }

    void on(const recorded_rules& r) {
        try {
            if (r.op == "replace") {
                decider_.set_rules(parse_rules(r.rules), r.at_ms);
                if (r.max_active_faults)
                    decider_.set_max_active(*r.max_active_faults
                                                ? std::optional<std::size_t>(**r.max_active_faults)
                                                : std::nullopt);
            } else if (r.op == "add") {
                decider_.add_rules(parse_rules(r.rules), r.at_ms);
            } else if (r.op == "remove") {
                decider_.remove_rule(r.name);
            } else if (r.op == "clear") {
                decider_.clear_rules();
            } else if (r.op == "seed") {
                decider_.set_seed(r.seed);
            } else if (r.op == "reset") {
                decider_.reset();
            } else if (r.op == "restore") {
                decider_.set_rules(in_.rules, r.at_ms);
                decider_.set_max_active(in_.max_active_faults);
                decider_.reset();
            }
        } catch (const mf::rule_error& e) {
            throw diverged(std::string("the recorded rule change '") + r.op +
                           "' is refused here: " + e.what());
        }
    }

    const replay_inputs& in_;
    const run_record& rec_;
    random_source rng_;
    account_concurrency account_;
    mf::decider decider_;
    std::map<std::string, std::unique_ptr<pool>, std::less<>> pools_;
    std::map<std::uint64_t, mf::decision> decisions_;
    std::map<std::uint64_t, invocation_state> invocations_;
    std::set<std::pair<std::string, std::uint64_t>> start_failed_, consumed_exits_;
    replay_result out_;
};

}  // namespace

replay_result replay(const replay_inputs& in, const run_record& record) {
    if (!in.registry) throw std::invalid_argument("replay: no fault registry");
    for (const auto& f : in.functions)
        if (!f.cold_start) throw std::invalid_argument("replay: function " + f.name + " has no cold-start model");
    replayer r(in, record);
    return r.run();
}

bool is_init_overrun_line(const std::string& line) {
    return line.rfind(R"({"event":"init_overrun")", 0) == 0;
}

std::optional<log_difference> compare_decision_logs(const std::vector<std::string>& a,
                                                    const std::vector<std::string>& b) {
    std::size_t i = 0, j = 0;
    for (;;) {
        while (i < a.size() && is_init_overrun_line(a[i])) ++i;
        while (j < b.size() && is_init_overrun_line(b[j])) ++j;
        const bool a_end = i >= a.size(), b_end = j >= b.size();
        if (a_end && b_end) return std::nullopt;
        if (a_end || b_end || a[i] != b[j]) {
            log_difference d;
            d.a_line = i + 1;
            d.b_line = j + 1;
            if (!a_end) d.a = a[i];
            if (!b_end) d.b = b[j];
            return d;
        }
        ++i;
        ++j;
    }
}

}  // namespace coldbrew::models::sim
