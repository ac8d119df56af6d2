#include "emulator/functions/function_pool.hpp"
#include "emulator/functions/layer_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "emulator/functions/execution_environment.hpp"
#include "emulator/functions/function_model.hpp"

namespace coldbrew::functions {

namespace {

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

// AWS_EXECUTION_ENV for managed runtimes, e.g. "AWS_Lambda_nodejs20.x" [ENV]; custom runtimes
// have none.
std::string execution_env(const std::string& runtime) {
    if (starts_with(runtime, "provided")) return "";
    return "AWS_Lambda_" + runtime;
}

}  // namespace

function_pool::function_pool(const config::function& fn, const function_model& model,
                             models::account_concurrency& account, pool_context& ctx,
                             standby_setting standby)
    : fn_(fn), model_(model), ctx_(ctx), standby_setting_(standby) {
    if (!ctx_.scheduler) throw std::invalid_argument("function_pool: no scheduler");
    policy_ = std::make_unique<models::pool_policy>(
        fn_.name, model_.limits, model_.lifetime, model_.cold_start, *ctx_.rng, account,
        [this](const models::pool_event& e) {
            // Serialised only when someone reads it: this runs on every invocation.
            if (ctx_.decisions && ctx_.decisions->is_open()) ctx_.decisions->write(e.to_json());
        });
    reap_timer_ = new uv_timer_t;
    uv_timer_init(ctx_.loop, reap_timer_);
    reap_timer_->data = this;
    if (ctx_.budget) {
        ctx_.budget->join(fn_.name, {[this](std::uint64_t id) { return budget_evictable(id); },
                                     [this](std::uint64_t id) { evict_for_budget(id); }});
    }
}

void function_pool::on_memory_reading(const execution_environment& env, int memory_mb) {
    if (!ctx_.budget || shut_down_) return;
    if (env.standby()) standby_mb_ = memory_mb;
    ctx_.budget->reading(fn_.name, env.id(), memory_mb, env.standby());
}

bool function_pool::budget_evictable(std::uint64_t id) const {
    if (shut_down_ || stale_code_.count(id)) return false;
    // A standby environment is always idle (its id is from a range the policy never uses).
    for (const auto& e : standby_)
        if (e->id() == id) return e->alive();
    auto it = environments_.find(id);
    return it != environments_.end() && it->second->alive() && !it->second->assigned() &&
           !it->second->provisioned();
}

void function_pool::evict_for_budget(std::uint64_t id) {
    auto spare = std::find_if(standby_.begin(), standby_.end(),
                              [&](const auto& e) { return e->id() == id; });
    if (spare != standby_.end()) {
        ++stats_.budget_evictions;
        standby_held_ = true;
        spdlog::debug("{}: standby execution environment {} ended (memory-budget: {} of {} MB in use)",
                      fn_.name, id, ctx_.budget->total_mb(), ctx_.budget->budget_mb());
        // Out of standby_ first: its exit then finds it already ended, as after retire_code.
        auto env = std::move(*spare);
        standby_.erase(spare);
        env->kill("memory-budget");
        dead_.push_back(std::move(env));
        schedule_collect();
        return;
    }
    auto it = environments_.find(id);
    if (it == environments_.end()) return;
    execution_environment* env = it->second.get();
    const double now = model_now_ms();
    ++stats_.evictions;
    ++stats_.budget_evictions;
    spdlog::debug("{}: execution environment {} evicted (memory-budget: {} of {} MB in use)",
                  fn_.name, id, ctx_.budget->total_mb(), ctx_.budget->budget_mb());
    // The policy forgets it first (the decision log's "discarded", reason "memory-budget"),
    // so no invocation is placed on it while its process ends.
    if (ctx_.recorder) ctx_.recorder->exit(fn_.name, id, "memory-budget", now);
    act(policy_->discard(id, now, "memory-budget"));
    env->kill("memory-budget");
    arm_expiry(now);
}

void function_pool::start_provisioned() {
    const double now = model_now_ms();
    if (ctx_.recorder) ctx_.recorder->provision(fn_.name, now);
    act(policy_->provision(now));
}

namespace {
// The reason the decision log and the debug log give for an environment retired by a code
// change.
constexpr const char* reason_code_changed = "code-changed";
// Standby environments take ids from a range the policy never reaches, so their log stream
// names and cgroups are distinct from every policy environment's until they are claimed.
constexpr std::uint64_t standby_id_base = std::uint64_t{1} << 48;
}  // namespace

std::size_t function_pool::standby_target() const {
    std::size_t target = standby_setting_.count;
    if (standby_setting_.follow_peak) target = std::max(target, peak_busy_);
    // Never more processes than the local cap lets the function run.
    return std::min(target, static_cast<std::size_t>(std::max(0, model_.limits.max_environments)));
}

bool function_pool::standby_settled() const noexcept {
    if (standby_failed_ || shut_down_) return true;
    if (standby_.size() < standby_target() && !standby_held_) return false;
    return std::all_of(standby_.begin(), standby_.end(),
                       [](const auto& e) { return e->local_init_done() || !e->alive(); });
}

bool function_pool::spawn_standby() {
    const std::uint64_t id = standby_id_base + next_standby_id_++;
    auto env = std::make_unique<execution_environment>(*this, ctx_, fn_, id,
                                                       execution_environment::kind::standby);
    std::string error_type, error_message;
    if (!env->start(error_type, error_message)) {
        standby_failed_ = true;
        spdlog::warn("{}: standby execution environment could not start ({}); each cold start "
                     "starts its own process",
                     fn_.name, error_message);
        dead_.push_back(std::move(env));
        schedule_collect();
        return false;
    }
    standby_.push_back(std::move(env));
    return true;
}

std::size_t function_pool::retire_code() {
    if (shut_down_) return 0;
    std::size_t retired = 0;
    const double now = model_now_ms();
    std::vector<std::uint64_t> idle;
    for (const auto& [id, env] : environments_) {
        if (!env->alive()) continue;
        if (!env->assigned())
            idle.push_back(id);
        else if (stale_code_.insert(id).second)
            ++retired;
    }
    for (const auto id : idle) {
        ++stats_.code_reloads;
        ++retired;
        spdlog::debug("{}: execution environment {} retired ({})", fn_.name, id,
                      reason_code_changed);
        // Its exit finds the policy done with it; a provisioned one is replaced here.
        environments_.at(id)->kill(reason_code_changed);
        act(policy_->discard(id, now, reason_code_changed));
    }
    // Standby environments are outside the policy: ended here, and on_exit no longer finds
    // them among the standby ones.
    for (auto& e : standby_) {
        if (e->alive()) {
            ++stats_.code_reloads;
            ++retired;
        }
        e->kill(reason_code_changed);
        dead_.push_back(std::move(e));
    }
    standby_.clear();
    schedule_collect();
    // An init failure of the old code says nothing about the new: standby is tried again.
    standby_failed_ = false;
    start_standby();
    drain_waiting(now);
    arm_expiry(now);
    return retired;
}

void function_pool::start_standby() {
    // At start, all at once: the stack reports ready when they have finished their init.
    while (!shut_down_ && !standby_failed_ && standby_.size() < standby_target())
        if (!spawn_standby()) break;
}

void function_pool::refill_standby() {
    // In the background, one at a time: a burst that has just taken the standby environments
    // is not slowed by as many process starts competing with its handlers for the CPU.
    if (shut_down_ || standby_failed_ || standby_.size() >= standby_target()) return;
    for (const auto& e : standby_)
        if (!e->local_init_done()) return;
    // memory_budget_mb: after a standby environment was evicted, another only when it fits.
    if (standby_held_ && ctx_.budget && !ctx_.budget->fits(standby_mb_)) return;
    standby_held_ = false;
    spawn_standby();
}

void function_pool::on_standby_ready(execution_environment& env) {
    // Counted from now: a spare process holds its memory before it serves.
    if (ctx_.budget) on_memory_reading(env, env.read_memory_mb());
    refill_standby();
}

execution_environment* function_pool::start_cold(std::uint64_t id, std::string& error_type,
                                                 std::string& error_message) {
    // A standby environment whose init is done first; else the one furthest into its init
    // (the oldest), which is still closer to ready than a new process.
    auto pick = std::find_if(standby_.begin(), standby_.end(), [](const auto& e) {
        return e->alive() && e->local_init_done();
    });
    if (pick == standby_.end())
        pick = std::find_if(standby_.begin(), standby_.end(),
                            [](const auto& e) { return e->alive(); });
    if (pick == standby_.end()) return start_environment(id, false, error_type, error_message);
    auto env = std::move(*pick);
    standby_.erase(pick);
    // Its next reading, after it has served, is under the policy's id.
    if (ctx_.budget) ctx_.budget->forget(fn_.name, env->id());
    env->claim(id);
    ++stats_.standby_taken;
    auto* raw = env.get();
    environments_[id] = std::move(env);
    refill_standby();
    return raw;
}

function_pool::~function_pool() {
    if (ctx_.budget) ctx_.budget->leave(fn_.name);
    shutdown();
    environments_.clear();
    standby_.clear();
    dead_.clear();
    expiry_timer_.reset();
    reap_timer_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(reap_timer_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

// The policy only compares times, so the scheduler's origin (not the pool's) is as good.
double function_pool::model_now_ms() const { return ctx_.scheduler->now_ms(); }

pool_stats function_pool::stats() const {
    pool_stats s = stats_;
    s.environments = static_cast<std::size_t>(
        std::count_if(environments_.begin(), environments_.end(),
                      [](const auto& e) { return e.second->alive(); }));
    s.busy = static_cast<std::size_t>(
        std::count_if(environments_.begin(), environments_.end(), [](const auto& e) {
            return e.second->alive() && e.second->assigned();
        }));
    for (const auto& e : standby_) {
        if (!e->alive()) continue;
        ++s.standby;
        if (e->local_init_done()) ++s.standby_ready;
    }
    s.standby_target = standby_target();
    return s;
}

void function_pool::reset_stats() {
    // Only the counts: environments and busy are read live from the environments.
    stats_ = pool_stats{};
}

void function_pool::invoke(invocation inv) {
    // Request ids and trace ids are draws keyed by the function and its invocation count, so a
    // seeded run repeats them exactly.
    const std::uint64_t index = next_request_index_++;
    auto request_id = inv.request_id.empty()
                          ? models::uuid_v4(*ctx_.rng, "lambda-request-id", fn_.name, index)
                          : inv.request_id;
    ++stats_.invocations;
    if (shut_down_) {
        invocation_result r;
        r.kind = outcome::unavailable;
        r.request_id = request_id;
        r.message = "coldbrew is shutting down";
        if (inv.on_done) inv.on_done(std::move(r));
        return;
    }
    if (inv.payload.size() > max_sync_request_bytes) {
        invocation_result r;
        r.kind = outcome::too_large;
        r.request_id = request_id;
        r.message = "Request must be smaller than " + std::to_string(max_sync_request_bytes) +
                    " bytes for the InvokeFunction operation";
        if (inv.on_done) inv.on_done(std::move(r));
        return;
    }
    if (inv.trace_id.empty()) {
        // X-Ray trace header: Root=1-<epoch seconds, 8 hex>-<24 hex>;Parent=<16 hex>;Sampled=0
        char epoch[16];
        std::snprintf(epoch, sizeof(epoch), "%08llx",
                      static_cast<unsigned long long>(ctx_.clock->epoch_ms() / 1000));
        inv.trace_id = std::string("Root=1-") + epoch + "-" +
                       models::random_hex(*ctx_.rng, "trace-id", fn_.name, index, 24) +
                       ";Parent=" + models::random_hex(*ctx_.rng, "trace-parent", fn_.name, index, 16) +
                       ";Sampled=0";
    }
    ++in_flight_;
    // Until an environment has it: zero-length when a warm one is waiting on /next.
    if (inv.trace) inv.trace->begin("pool.queue_wait");
    const double now = model_now_ms();
    if (ctx_.recorder)
        inv.recorded_invocation = ctx_.recorder->invoke(fn_.name, now, inv.recorded_request, inv.trace_id);
    place(std::move(inv), std::move(request_id), std::nullopt, now);
}

void function_pool::place(invocation inv, std::string request_id,
                          std::optional<std::uint64_t> index, double now) {
    // Evictions that are due go first, so the policy's answer does not depend on when the
    // expiry timer last fired.
    act(policy_->expire(now));
    auto p = policy_->acquire(now, index);
    switch (p.kind) {
    case models::placement_kind::warm: {
        auto it = environments_.find(p.environment);
        spdlog::debug("{}: {} → warm execution environment {}", fn_.name, request_id,
                      p.environment);
        it->second->assign(std::move(inv), std::move(request_id));
        break;
    }
    case models::placement_kind::cold: {
        // From the process's start to the event's delivery the invocation waits for its init.
        if (inv.trace) inv.trace->begin("lambda.init");
        std::string error_type, error_message;
        if (burst_.cold_starts == 0) burst_.standby_at_start = standby_.size();
        auto* env = start_cold(p.environment, error_type, error_message);
        if (!env) {
            --in_flight_;
            ++stats_.function_errors;
            ctx_.logs->write(fn_.name, "RequestId: " + request_id + " Error: " + error_message);
            ctx_.logs->write(fn_.name, error_type);
            invocation_result r;
            r.kind = outcome::function_error;
            r.request_id = request_id;
            r.error_type = error_type;
            r.payload = runtime_api::platform_error_body(error_type, request_id, error_message);
            if (ctx_.recorder) ctx_.recorder->exit(fn_.name, p.environment, "start-failed", now);
            act(policy_->discard(p.environment, now, "start-failed"));
            if (inv.on_done) inv.on_done(std::move(r));
            break;
        }
        ++stats_.cold_starts;
        ++burst_.cold_starts;
        spdlog::debug("{}: {} → cold start, execution environment {} (pid {}{}), modeled init "
                      "{:.2f} ms",
                      fn_.name, request_id, p.environment, env->pid(),
                      env->local_init_done() ? ", standby" : "", p.init ? p.init->total_ms : 0.0);
        env->begin_cold_start(p.init ? p.init->total_ms : 0.0);
        env->assign(std::move(inv), std::move(request_id));
        break;
    }
    case models::placement_kind::throttle: {
        ++stats_.throttles;
        --in_flight_;
        invocation_result r;
        r.kind = outcome::throttled;
        r.request_id = request_id;
        r.message = "Rate Exceeded.";
        r.throttle_reason = p.throttle_reason;
        // Say why: a 500 from the gateway alone does not tell a user which limit to raise.
        spdlog::warn("{}: invocation throttled ({}); {} in flight", fn_.name, r.throttle_reason,
                     policy_->busy());
        if (inv.on_done) inv.on_done(std::move(r));
        break;
    }
    case models::placement_kind::wait:
        ++stats_.waits;
        if (!warned_wait_) {
            warned_wait_ = true;
            spdlog::warn("{}: {} execution environments busy (max_environments); invocations "
                         "wait for one, where AWS would start more. Raise max_environments in "
                         "coldbrew.yaml to allow more processes",
                         fn_.name, policy_->live());
        }
        waiting_.push_back({std::move(inv), std::move(request_id), p.request_index});
        break;
    }
    peak_busy_ = std::max(peak_busy_, policy_->busy());
    if (standby_setting_.follow_peak) refill_standby();
    arm_expiry(now);
}

execution_environment* function_pool::start_environment(std::uint64_t id, bool provisioned,
                                                        std::string& error_type,
                                                        std::string& error_message) {
    auto env = std::make_unique<execution_environment>(
        *this, ctx_, fn_, id,
        provisioned ? execution_environment::kind::provisioned
                    : execution_environment::kind::on_demand);
    if (!env->start(error_type, error_message)) {
        dead_.push_back(std::move(env));
        schedule_collect();
        return nullptr;
    }
    auto* raw = env.get();
    environments_[id] = std::move(env);
    return raw;
}

void function_pool::on_done(execution_environment& env, const invocation_result& r,
                            const answer_timing& t) {
    const double now = model_now_ms();
    if (ctx_.recorder && t.recorded_invocation && !shut_down_) {
        // What the replay must know of the answer: whether the environment lives on.
        models::sim::recorded_handler h;
        h.invocation = *t.recorded_invocation;
        h.at_ms = now;
        h.delivery_lag_ms = t.delivery_lag_ms;
        h.duration_ms = t.duration_ms;
        h.cpu_ms = t.cpu_ms;
        using o = models::sim::recorded_handler::outcome;
        if (!env.alive())
            h.result = r.error_type == "Sandbox.Timedout" ? o::timeout : o::crash;
        else
            h.result = r.kind == outcome::success ? o::success : o::error;
        if (h.result != o::success) h.error_type = r.error_type;
        h.response_bytes = r.kind == outcome::success ? r.payload.size() : 0;
        ctx_.recorder->handler(h);
    }
    if (in_flight_ > 0) --in_flight_;
    if (ctx_.on_answered) ctx_.on_answered(fn_, r);
    if (r.kind == outcome::function_error) {
        ++stats_.function_errors;
        if (r.error_type == "Sandbox.Timedout") ++stats_.timeouts;
    }
    if (r.init_overrun_ms) record_overrun(env, r);
    // An environment being reset (timeout, crash, init error) is discarded when its process
    // is gone; only a healthy one becomes idle.
    if (env.alive() && !shut_down_) {
        if (stale_code_.erase(env.id())) {
            // It ran its invocation on the code it started with; the next one gets new code.
            ++stats_.code_reloads;
            env.kill(reason_code_changed);
            act(policy_->discard(env.id(), now, reason_code_changed));
        } else {
            act(policy_->release(env.id(), now));
        }
        drain_waiting(now);
        arm_expiry(now);
    }
    if (!shut_down_ && policy_->busy() == 0 && waiting_.empty()) end_burst();
}

void function_pool::record_overrun(const execution_environment& env, const invocation_result& r) {
    const double over = *r.init_overrun_ms;
    ++stats_.init_overruns;
    stats_.init_overrun_ms += over;
    stats_.init_overrun_max_ms = std::max(stats_.init_overrun_max_ms, over);
    ++burst_.overruns;
    burst_.overrun_ms += over;
    burst_.overrun_max_ms = std::max(burst_.overrun_max_ms, over);
    // Not a decision of the model but a reading of this machine, so it is the one kind of
    // decision-log line that may differ between two runs with the same seed.
    if (ctx_.decisions && ctx_.decisions->is_open()) {
        nlohmann::ordered_json j;
        j["event"] = "init_overrun";
        j["function"] = fn_.name;
        j["environment"] = env.id();
        j["modeled_init_ms"] = r.modeled_init_ms.value_or(0);
        j["local_init_ms"] = r.local_init_ms.value_or(0);
        j["overrun_ms"] = over;
        ctx_.decisions->write(j.dump());
    }
}

void function_pool::end_burst() {
    const auto b = burst_;
    burst_ = {};
    if (b.cold_starts == 0) return;
    stats_.burst_cold_starts_max = std::max(stats_.burst_cold_starts_max, b.cold_starts);
    stats_.burst_overruns_max = std::max(stats_.burst_overruns_max, b.overruns);
    if (b.overruns == 0) return;
    // Judged by what the burst found, not by the target now: with `auto` the target has
    // already grown to this burst's size.
    std::string advice;
    if (b.cold_starts > b.standby_at_start && standby_setting_.follow_peak)
        advice = fmt::format("standby: auto keeps {} from now on", standby_target());
    else if (b.cold_starts > b.standby_at_start)
        advice = fmt::format("{} standby environment{} would have covered it (--standby {}, or "
                             "functions.{}.standby: {} in coldbrew.yaml)",
                             b.cold_starts, b.cold_starts == 1 ? "" : "s", b.cold_starts,
                             fn_.name, b.cold_starts);
    else
        advice = "its standby environments were still starting; leave them time to refill "
                 "between bursts";
    spdlog::warn("{}: {} of {} cold start{} in this burst waited longer than the modeled Init "
                 "Duration, by {:.0f} ms at most ({:.0f} ms in all): the local process start, "
                 "not the model, set that latency; {}",
                 fn_.name, b.overruns, b.cold_starts, b.cold_starts == 1 ? "" : "s",
                 b.overrun_max_ms, b.overrun_ms, advice);
}

void function_pool::on_provisioned_ready(execution_environment& env) {
    // Counted from now, before it serves (it is never evicted for the budget).
    if (ctx_.budget) on_memory_reading(env, env.read_memory_mb());
    // Said once, when the configured number is first reached: scripts (and people) wait for
    // it before measuring, as a deployment waits for provisioned concurrency to be READY.
    if (++provisioned_ready_ == static_cast<std::size_t>(model_.limits.provisioned_concurrency))
        spdlog::info("{}: provisioned concurrency ready ({} execution environment{})", fn_.name,
                     provisioned_ready_, provisioned_ready_ == 1 ? "" : "s");
}

void function_pool::on_exit(execution_environment& env, std::optional<invocation> undelivered,
                            std::string request_id, const std::string& reason) {
    if (env.standby()) {
        if (ctx_.budget) ctx_.budget->forget(fn_.name, env.id());
        auto it = std::find_if(standby_.begin(), standby_.end(),
                               [&](const auto& e) { return e.get() == &env; });
        const bool retired = it == standby_.end();  // by retire_code: already dead_
        if (!retired) {
            dead_.push_back(std::move(*it));
            standby_.erase(it);
        }
        schedule_collect();
        if (shut_down_ || retired) return;
        if (!env.local_init_done() || reason == "init-error") {
            // A handler whose init fails would fail every spare process the same way; from
            // here each cold start starts (and fails) on its own, as without standby.
            standby_failed_ = true;
            spdlog::warn("{}: a standby execution environment ended during its init ({}); no "
                         "more are started",
                         fn_.name, reason);
            return;
        }
        refill_standby();
        return;
    }
    const std::uint64_t id = env.id();
    if (ctx_.budget) ctx_.budget->forget(fn_.name, id);
    stale_code_.erase(id);
    auto it = environments_.find(id);
    if (it != environments_.end() && it->second.get() == &env) {
        dead_.push_back(std::move(it->second));
        environments_.erase(it);
    }
    schedule_collect();
    const double now = model_now_ms();
    if (!shut_down_ && ctx_.recorder) ctx_.recorder->exit(fn_.name, id, reason, now);
    if (!shut_down_) act(policy_->discard(id, now, reason));
    if (undelivered) {
        if (shut_down_) {
            --in_flight_;
            invocation_result r;
            r.kind = outcome::unavailable;
            r.request_id = request_id;
            r.message = "coldbrew is shutting down";
            if (undelivered->on_done) undelivered->on_done(std::move(r));
        } else {
            // Placed again as the same request: its decision-log index does not change.
            place(std::move(*undelivered), std::move(request_id), std::nullopt, now);
        }
    }
    if (!shut_down_) {
        drain_waiting(now);
        arm_expiry(now);
    }
}

void function_pool::act(const std::vector<models::pool_action>& actions) {
    for (const auto& a : actions) {
        if (a.type == models::pool_action::kind::evict) {
            ++stats_.evictions;
            spdlog::debug("{}: execution environment {} evicted ({})", fn_.name, a.environment,
                          a.reason);
            if (auto it = environments_.find(a.environment); it != environments_.end())
                it->second->kill(a.reason);
            continue;
        }
        if (shut_down_) continue;
        ++stats_.provisioned;
        std::string error_type, error_message;
        if (!start_environment(a.environment, true, error_type, error_message)) {
            // Retried on the next invocation's placement would hide it; say it loudly once.
            spdlog::error("{}: provisioned execution environment could not start: {}", fn_.name,
                          error_message);
            // Not replaced again: a bootstrap that cannot start would loop forever.
        }
    }
}

void function_pool::drain_waiting(double now) {
    // Each waiting invocation asks again, in arrival order, until one has to wait again.
    while (!waiting_.empty() && !shut_down_) {
        auto w = std::move(waiting_.front());
        waiting_.pop_front();
        const std::size_t before = waiting_.size();
        place(std::move(w.inv), std::move(w.request_id), w.request_index, now);
        if (waiting_.size() > before) {
            // It went to the back; put it first again so order is kept.
            waiting_.push_front(std::move(waiting_.back()));
            waiting_.pop_back();
            --stats_.waits;
            break;
        }
    }
}

void function_pool::arm_expiry(double now) {
    auto next = policy_->next_expiry_ms();
    if (!next || shut_down_) {
        expiry_timer_.reset();
        return;
    }
    // Re-armed after every placement and answer; a timer already set for the same expiry
    // stands.
    if (expiry_timer_ && expiry_timer_->pending() && expiry_armed_for_ms_ == *next) return;
    expiry_armed_for_ms_ = *next;
    // A timer that fires a fraction of a millisecond early finds nothing due and is simply
    // set again for the rest.
    expiry_timer_ = ctx_.scheduler->after(*next - now, [this] {
        const double t = model_now_ms();
        if (ctx_.recorder) ctx_.recorder->tick(fn_.name, t);
        act(policy_->expire(t));
        arm_expiry(t);
    });
}

// Dead environments are freed on the next loop turn: the calls that retire them come from
// inside their own callbacks.
void function_pool::schedule_collect() {
    uv_timer_start(
        reap_timer_,
        [](uv_timer_t* t) {
            if (t->data) static_cast<function_pool*>(t->data)->dead_.clear();
        },
        0, 0);
}

void function_pool::shutdown() {
    if (!shut_down_ && ctx_.recorder) ctx_.recorder->stop(fn_.name, model_now_ms());
    shut_down_ = true;
    expiry_timer_.reset();
    while (!waiting_.empty()) {
        auto w = std::move(waiting_.front());
        waiting_.pop_front();
        --in_flight_;
        invocation_result r;
        r.kind = outcome::unavailable;
        r.request_id = w.request_id;
        r.message = "coldbrew is shutting down";
        if (w.inv.on_done) w.inv.on_done(std::move(r));
    }
    for (auto& [_, e] : environments_) e->kill("shutdown");
    for (auto& e : standby_) e->kill("shutdown");
}

std::vector<std::string> function_pool::environment_for(
    int runtime_api_port, std::uint64_t index, bool provisioned,
    const std::vector<std::pair<std::string, std::string>>& dependencies) const {
    std::map<std::string, std::string> env;
    // Defaults Lambda sets that a user may override [ENV].
    env["LANG"] = "en_US.UTF-8";
    env["TZ"] = ":UTC";
    env["AWS_XRAY_CONTEXT_MISSING"] = "LOG_ERROR";
    for (const auto& [k, v] : ctx_.host_env) env[k] = v;
    // The host's credentials reach handlers as a whole set or not at all: an access key id
    // with its secret (and the session token, when set). Half a set would pair the host's
    // secret with the dummy key id below, which no SDK can sign with.
    if (!env.count("AWS_ACCESS_KEY_ID") || !env.count("AWS_SECRET_ACCESS_KEY")) {
        env.erase("AWS_ACCESS_KEY_ID");
        env.erase("AWS_SECRET_ACCESS_KEY");
        env.erase("AWS_SESSION_TOKEN");
    }
    if (ctx_.settings->watch) {
        // CPython trusts a cached .pyc whose recorded source mtime (whole seconds) and size
        // match: an edit of the same size within the second of the last import would run the
        // old code on the new environment. With no cache read or written, it compiles the
        // source each time (the prefix names a directory that does not exist).
        env["PYTHONDONTWRITEBYTECODE"] = "1";
        env["PYTHONPYCACHEPREFIX"] = "/nonexistent/coldbrew-watch-no-bytecode";
    }
    // The flags `sam local` (AWS_SAM_LOCAL) and serverless-offline (IS_OFFLINE) set, which
    // handlers commonly test to pick local endpoints; set both so either kind of app runs
    // unchanged.
    env["AWS_SAM_LOCAL"] = "true";
    env["IS_OFFLINE"] = "true";

    for (const auto& [k, v] : fn_.environment) env[k] = v;
    for (const auto& [k, v] : dependencies) env[k] = v;

    // Layers are extracted under /opt on Lambda; locally their directories are put on the
    // search paths /opt is on, later layers first (layer_paths.hpp).
    if (!fn_.layer_dirs.empty()) {
        const auto paths = layer_paths_for(fn_.runtime, fn_.layer_dirs);
        auto prepend = [&env](const char* name, const std::vector<std::string>& entries) {
            if (entries.empty()) return;
            auto it = env.find(name);
            env[name] = prepend_search_path(entries, it == env.end() ? "" : it->second);
        };
        prepend("NODE_PATH", paths.node_path);
        prepend("PYTHONPATH", paths.python_path);
        prepend("PATH", paths.path);
        prepend("LD_LIBRARY_PATH", paths.ld_library_path);
    }

    // Reserved variables: the platform's values win over the user's [ENV] (RIE env/constants.go).
    const auto& s = *ctx_.settings;
    env["AWS_REGION"] = s.region;
    env["AWS_DEFAULT_REGION"] = s.region;
    env["AWS_LAMBDA_FUNCTION_NAME"] = fn_.function_name;
    env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = std::to_string(fn_.memory_mb);
    env["AWS_LAMBDA_FUNCTION_VERSION"] = "$LATEST";
    env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = std::to_string(fn_.timeout_s);
    env["AWS_LAMBDA_INITIALIZATION_TYPE"] = provisioned ? "provisioned-concurrency" : "on-demand";
    env["AWS_LAMBDA_LOG_GROUP_NAME"] = "/aws/lambda/" + fn_.function_name;
    {
        std::time_t t = static_cast<std::time_t>(ctx_.clock->epoch_ms() / 1000);
        std::tm tm{};
        gmtime_r(&t, &tm);
        char date[16];
        std::strftime(date, sizeof(date), "%Y/%m/%d", &tm);
        env["AWS_LAMBDA_LOG_STREAM_NAME"] =
            std::string(date) + "/[$LATEST]" +
            models::random_hex(*ctx_.rng, "log-stream", fn_.name, index, 32);
    }
    env["AWS_LAMBDA_RUNTIME_API"] = "127.0.0.1:" + std::to_string(runtime_api_port);
    // The variable AWS SDKs read for a service-specific endpoint ("Service-specific endpoints",
    // AWS SDKs and Tools Reference Guide): a function's Lambda client calls coldbrew.
    if (!ctx_.invoke_endpoint.empty()) env["AWS_ENDPOINT_URL_LAMBDA"] = ctx_.invoke_endpoint;
    // The same for Step Functions: a function's SFN client (SendTaskSuccess, StartExecution)
    // calls coldbrew's Step Functions API.
    if (!ctx_.sfn_endpoint.empty()) env["AWS_ENDPOINT_URL_SFN"] = ctx_.sfn_endpoint;
    // LoggingConfig.LogFormat JSON: the runtime writes JSON application logs [ENV].
    if (fn_.log_format == "JSON") env["AWS_LAMBDA_LOG_FORMAT"] = "JSON";
    env["_HANDLER"] = fn_.handler;
    env["LAMBDA_TASK_ROOT"] = fn_.code_dir.string();
    env["LAMBDA_RUNTIME_DIR"] = ctx_.runtimes_dir.string();
    if (auto e = execution_env(fn_.runtime); !e.empty()) env["AWS_EXECUTION_ENV"] = e;
    // Credentials: the caller's whole set when given (handlers may call real AWS), else SAM
    // CLI's dummies, never a mix of the two.
    if (!env.count("AWS_ACCESS_KEY_ID") || !env.count("AWS_SECRET_ACCESS_KEY")) {
        env["AWS_ACCESS_KEY_ID"] = "defaultkey";
        env["AWS_SECRET_ACCESS_KEY"] = "defaultsecret";
        env.erase("AWS_SESSION_TOKEN");
    }

    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

}  // namespace coldbrew::functions
