#include "models/pool/pool_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

namespace coldbrew::models {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// Durations are clamped at zero: normal() and mixtures may draw below it.
double non_negative(double ms) { return ms > 0 ? ms : 0.0; }

init_draw clamp(init_draw d) {
    const bool negative =
        d.runtime_ms < 0 || d.package_ms < 0 || d.vpc_ms < 0 || d.extensions_ms < 0;
    d.runtime_ms = non_negative(d.runtime_ms);
    d.package_ms = non_negative(d.package_ms);
    d.vpc_ms = non_negative(d.vpc_ms);
    d.extensions_ms = non_negative(d.extensions_ms);
    if (negative) d.total_ms = d.runtime_ms + d.package_ms + d.vpc_ms + d.extensions_ms;
    d.total_ms = non_negative(d.total_ms);
    return d;
}

// Fixed two-decimal form, so a decision log is byte-identical across runs and libraries.
void append_number(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", v + 0.0);
    std::string s = buf;
    if (s == "-0.00") s = "0.00";
    out += s;
}

void append_string(std::string& out, const std::string& s) {
    out += '"';
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (u < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

const char* event_name(pool_event::kind k) {
    switch (k) {
    case pool_event::kind::created: return "created";
    case pool_event::kind::reused: return "reused";
    case pool_event::kind::throttled: return "throttled";
    case pool_event::kind::waited: return "waited";
    case pool_event::kind::idle: return "idle";
    case pool_event::kind::evicted: return "evicted";
    case pool_event::kind::discarded: return "discarded";
    }
    return "unknown";
}

const char* const reason_reserved = "ReservedFunctionConcurrentInvocationLimitExceeded";
const char* const reason_account = "ConcurrentInvocationLimitExceeded";
const char* const reason_rate = "FunctionInvocationRateLimitExceeded";
const char* const reason_keep_alive = "keep-alive";
const char* const reason_max_lifetime = "max-lifetime";

}  // namespace

// --- account_concurrency ------------------------------------------------------------------

account_concurrency::account_concurrency(int limit, int unreserved_minimum)
    : limit_(limit), unreserved_minimum_(unreserved_minimum) {
    if (limit < 1)
        throw std::invalid_argument("account concurrency limit must be at least 1, got " +
                                    std::to_string(limit));
    if (unreserved_minimum < 0)
        throw std::invalid_argument("account unreserved concurrency minimum must be >= 0, got " +
                                    std::to_string(unreserved_minimum));
}

void account_concurrency::reserve(int n) {
    if (n < 0)
        throw std::invalid_argument("reserved concurrency must be >= 0, got " + std::to_string(n));
    // Reserving 0 (a disabled function) takes nothing from the unreserved pool.
    if (n == 0) return;
    const int left = limit_ - reserved_ - n;
    if (left < unreserved_minimum_)
        throw std::invalid_argument(
            "reserved concurrency " + std::to_string(n) + " would leave " + std::to_string(left) +
            " of the account's " + std::to_string(limit_) + " unreserved (already reserved: " +
            std::to_string(reserved_) + "); at least " + std::to_string(unreserved_minimum_) +
            " must stay unreserved");
    reserved_ += n;
}

// --- pool_event ---------------------------------------------------------------------------

std::string pool_event::to_json() const {
    std::string out;
    out.reserve(256);
    out += "{\"event\":\"";
    out += event_name(type);
    out += "\",\"function\":";
    append_string(out, function);
    if (request_index) out += ",\"request\":" + std::to_string(*request_index);
    if (environment) out += ",\"environment\":" + std::to_string(*environment);
    if (provisioned) out += ",\"provisioned\":true";
    if (init) {
        out += ",\"init_ms\":{\"runtime\":";
        append_number(out, init->runtime_ms);
        out += ",\"package\":";
        append_number(out, init->package_ms);
        out += ",\"vpc\":";
        append_number(out, init->vpc_ms);
        out += ",\"extensions\":";
        append_number(out, init->extensions_ms);
        out += ",\"total\":";
        append_number(out, init->total_ms);
        out += '}';
    }
    if (eni) {
        out += ",\"eni\":{\"id\":" + std::to_string(eni->eni) + ",\"created\":";
        out += eni->created ? "true" : "false";
        out += ",\"wait_ms\":";
        append_number(out, eni->wait_ms);
        out += '}';
    }
    if (max_lifetime_ms) {
        out += ",\"max_lifetime_ms\":";
        append_number(out, *max_lifetime_ms);
    }
    if (keep_alive_ms) {
        out += ",\"keep_alive_ms\":";
        append_number(out, *keep_alive_ms);
    }
    if (!reason.empty()) {
        out += ",\"reason\":";
        append_string(out, reason);
    }
    out += '}';
    return out;
}

// --- pool_policy --------------------------------------------------------------------------

pool_policy::pool_policy(std::string function_key, pool_limits limits, lifetime_model lifetime,
                         const cold_start_model& model, const random_source& rng,
                         account_concurrency& account,
                         std::function<void(const pool_event&)> on_event)
    : key_(std::move(function_key)), limits_(limits), lifetime_(std::move(lifetime)),
      model_(model), rng_(rng), account_(account), on_event_(std::move(on_event)),
      tokens_(limits.scaling_environments) {
    const std::string who = "function " + key_ + ": ";
    if (limits_.max_environments < 1)
        throw std::invalid_argument(who + "max_environments must be at least 1, got " +
                                    std::to_string(limits_.max_environments));
    if (limits_.provisioned_concurrency < 0)
        throw std::invalid_argument(who + "provisioned concurrency must be >= 0, got " +
                                    std::to_string(limits_.provisioned_concurrency));
    if (limits_.reserved_concurrency && *limits_.reserved_concurrency < 0)
        throw std::invalid_argument(who + "reserved concurrency must be >= 0, got " +
                                    std::to_string(*limits_.reserved_concurrency));
    // Lambda rejects PutProvisionedConcurrencyConfig above the function's reserved concurrency.
    if (limits_.reserved_concurrency &&
        limits_.provisioned_concurrency > *limits_.reserved_concurrency)
        throw std::invalid_argument(who + "provisioned concurrency " +
                                    std::to_string(limits_.provisioned_concurrency) +
                                    " exceeds reserved concurrency " +
                                    std::to_string(*limits_.reserved_concurrency));
    if (limits_.provisioned_concurrency > limits_.max_environments)
        throw std::invalid_argument(who + "provisioned concurrency " +
                                    std::to_string(limits_.provisioned_concurrency) +
                                    " exceeds max_environments " +
                                    std::to_string(limits_.max_environments));
    if (!(limits_.scaling_environments > 0) || !std::isfinite(limits_.scaling_environments))
        throw std::invalid_argument(who + "scaling environments per window must be > 0");
    if (!(limits_.scaling_window_ms > 0) || !std::isfinite(limits_.scaling_window_ms))
        throw std::invalid_argument(who + "scaling window must be > 0 ms");
    if (const legacy_eni_model* eni = model_.eni()) eni_.emplace(key_, *eni, model_.memory_mb(), rng_);
    // Last, so a rejected policy takes nothing from the account.
    if (limits_.reserved_concurrency) account_.reserve(*limits_.reserved_concurrency);
}

std::vector<pool_action> pool_policy::provision(double now_ms) {
    std::vector<pool_action> actions;
    const auto have = static_cast<int>(
        std::count_if(environments_.begin(), environments_.end(),
                      [](const auto& kv) { return kv.second.provisioned; }));
    for (int i = have; i < limits_.provisioned_concurrency; ++i) {
        pool_action a;
        a.type = pool_action::kind::provision;
        a.environment = create(true, now_ms, std::nullopt, a.init);
        actions.push_back(std::move(a));
    }
    return actions;
}

placement pool_policy::acquire(double now_ms, std::optional<std::uint64_t> retry_of) {
    placement p;
    p.request_index = retry_of ? *retry_of : next_request_++;

    auto throttle = [&](const char* reason) {
        p.kind = placement_kind::throttle;
        p.throttle_reason = reason;
        pool_event e;
        e.type = pool_event::kind::throttled;
        e.request_index = p.request_index;
        e.reason = reason;
        e.at_ms = now_ms;
        emit(std::move(e));
        return p;
    };

    // 1. Concurrency.
    if (limits_.reserved_concurrency) {
        if (busy_ >= static_cast<std::size_t>(*limits_.reserved_concurrency))
            return throttle(reason_reserved);
    } else if (account_.unreserved_in_use_ >= account_.limit_ - account_.reserved_) {
        return throttle(reason_account);
    }

    // 2. An idle environment, provisioned before on-demand, most recently used first. One
    // whose keep-alive or maximum lifetime has run out is not eligible even if expire() has
    // not been called yet, so the answer depends only on the times, not on the caller's
    // timer precision; such environments do not count against the local cap either.
    environment_state* best = nullptr;
    std::uint64_t best_id = 0;
    std::size_t due = 0;
    for (auto& [id, e] : environments_) {
        if (e.busy) continue;
        if (now_ms >= e.evict_at_ms || now_ms >= e.retire_at_ms) {
            ++due;
            continue;
        }
        // Ties on last use go to the lower id (the map is in id order, `>` keeps the first).
        if (!best || (e.provisioned && !best->provisioned) ||
            (e.provisioned == best->provisioned && e.last_used_ms > best->last_used_ms)) {
            best = &e;
            best_id = id;
        }
    }
    if (best) {
        best->busy = true;
        ++busy_;
        if (!limits_.reserved_concurrency) ++account_.unreserved_in_use_;
        p.kind = placement_kind::warm;
        p.environment = best_id;
        p.provisioned = best->provisioned;
        pool_event e;
        e.type = pool_event::kind::reused;
        e.request_index = p.request_index;
        e.environment = best_id;
        e.provisioned = best->provisioned;
        e.at_ms = now_ms;
        emit(std::move(e));
        return p;
    }

    // 3. The local cap: wait for a release rather than throttle.
    if (environments_.size() - due >= static_cast<std::size_t>(limits_.max_environments)) {
        p.kind = placement_kind::wait;
        pool_event e;
        e.type = pool_event::kind::waited;
        e.request_index = p.request_index;
        e.at_ms = now_ms;
        emit(std::move(e));
        return p;
    }

    // 4. The scaling rate.
    refill(now_ms);
    if (tokens_ < 1) return throttle(reason_rate);
    tokens_ -= 1;

    p.kind = placement_kind::cold;
    p.environment = create(false, now_ms, p.request_index, p.init);
    return p;
}

std::vector<pool_action> pool_policy::release(std::uint64_t environment, double now_ms) {
    auto it = environments_.find(environment);
    if (it == environments_.end())
        throw std::invalid_argument("function " + key_ + ": release of unknown environment " +
                                    std::to_string(environment));
    environment_state& e = it->second;
    if (!e.busy)
        throw std::invalid_argument("function " + key_ + ": release of environment " +
                                    std::to_string(environment) + ", which is not busy");
    e.busy = false;
    --busy_;
    free_concurrency();
    e.last_used_ms = now_ms;

    std::vector<pool_action> actions;
    if (now_ms >= e.retire_at_ms) {
        remove(environment, pool_event::kind::evicted, reason_max_lifetime, now_ms, actions);
        return actions;
    }
    set_idle(environment, e, now_ms);
    return actions;
}

std::vector<pool_action> pool_policy::discard(std::uint64_t environment, double now_ms,
                                              const std::string& reason) {
    std::vector<pool_action> actions;
    auto it = environments_.find(environment);
    if (it == environments_.end()) return actions;
    if (it->second.busy) {
        --busy_;
        free_concurrency();
    }
    remove(environment, pool_event::kind::discarded, reason, now_ms, actions);
    return actions;
}

std::vector<pool_action> pool_policy::expire(double now_ms) {
    // Collected first: a replacement created below must not be examined in this pass.
    std::vector<std::pair<std::uint64_t, const char*>> due;
    for (const auto& [id, e] : environments_) {
        if (e.busy) continue;
        const bool kept_out = now_ms >= e.evict_at_ms;
        const bool retired = now_ms >= e.retire_at_ms;
        if (!kept_out && !retired) continue;
        // Both passed: name whichever came first.
        const char* reason = kept_out && (!retired || e.evict_at_ms <= e.retire_at_ms)
                                 ? reason_keep_alive
                                 : reason_max_lifetime;
        due.emplace_back(id, reason);
    }

    std::vector<pool_action> actions;
    for (const auto& [id, reason] : due) remove(id, pool_event::kind::evicted, reason, now_ms, actions);
    if (eni_) eni_->expire(now_ms);
    return actions;
}

// Forgets an environment: an `evicted` one is also an action for the caller (end its
// process); a `discarded` one is already gone. A provisioned one is replaced.
void pool_policy::remove(std::uint64_t id, pool_event::kind why, const std::string& reason,
                         double now_ms, std::vector<pool_action>& actions) {
    auto it = environments_.find(id);
    const bool provisioned = it->second.provisioned;
    environments_.erase(it);
    if (eni_) eni_->detach(id, now_ms);
    pool_event ev;
    ev.type = why;
    ev.environment = id;
    ev.provisioned = provisioned;
    ev.reason = reason;
    ev.at_ms = now_ms;
    emit(std::move(ev));
    if (why == pool_event::kind::evicted) {
        pool_action a;
        a.type = pool_action::kind::evict;
        a.environment = id;
        a.reason = reason;
        actions.push_back(std::move(a));
    }
    if (provisioned) {
        pool_action r;
        r.type = pool_action::kind::provision;
        r.environment = create(true, now_ms, std::nullopt, r.init);
        actions.push_back(std::move(r));
    }
}

std::optional<double> pool_policy::next_expiry_ms() const {
    std::optional<double> next;
    for (const auto& [id, e] : environments_) {
        if (e.busy) continue;
        const double at = std::min(e.evict_at_ms, e.retire_at_ms);
        if (!next || at < *next) next = at;
    }
    return next;
}

std::uint64_t pool_policy::create(bool provisioned, double now_ms,
                                  std::optional<std::uint64_t> request,
                                  std::optional<init_draw>& init) {
    const std::uint64_t id = next_environment_++;
    init = clamp(model_.sample(rng_, key_, id));
    std::optional<eni_attachment> eni;
    if (eni_) {
        eni = eni_->attach(id, now_ms);
        init->vpc_ms = eni->wait_ms;
        init->total_ms = init->runtime_ms + init->package_ms + init->vpc_ms + init->extensions_ms;
    }
    const double max_lifetime =
        non_negative(lifetime_.max_lifetime_ms.sample(rng_, "max-lifetime", key_, id));

    environment_state e;
    e.provisioned = provisioned;
    e.created_ms = now_ms;
    e.retire_at_ms = now_ms + max_lifetime;
    e.last_used_ms = now_ms;
    if (provisioned) {
        // Provisioned environments start initialised and idle, and never idle out.
        e.busy = false;
        e.evict_at_ms = infinity;
    } else {
        // A cold start serves the invocation that caused it.
        e.busy = true;
        e.evict_at_ms = infinity;
        ++busy_;
        if (!limits_.reserved_concurrency) ++account_.unreserved_in_use_;
    }
    environments_.emplace(id, e);

    pool_event ev;
    ev.type = pool_event::kind::created;
    ev.request_index = request;
    ev.environment = id;
    ev.provisioned = provisioned;
    ev.init = init;
    ev.eni = eni;
    ev.max_lifetime_ms = max_lifetime;
    ev.at_ms = now_ms;
    emit(std::move(ev));
    return id;
}

void pool_policy::set_idle(std::uint64_t id, environment_state& e, double now_ms) {
    if (e.provisioned) {
        e.evict_at_ms = infinity;
        return;
    }
    const double keep_alive = non_negative(lifetime_.keep_alive_ms.sample(
        rng_, "keep-alive", key_ + "#" + std::to_string(id), e.idle_periods));
    ++e.idle_periods;
    e.evict_at_ms = now_ms + keep_alive;

    pool_event ev;
    ev.type = pool_event::kind::idle;
    ev.environment = id;
    ev.keep_alive_ms = keep_alive;
    ev.at_ms = now_ms;
    emit(std::move(ev));
}

void pool_policy::refill(double now_ms) {
    if (!tokens_started_) {
        tokens_started_ = true;
        tokens_at_ms_ = now_ms;
        return;
    }
    const double elapsed = now_ms - tokens_at_ms_;
    if (elapsed > 0) {
        tokens_ = std::min(limits_.scaling_environments,
                           tokens_ + elapsed * limits_.scaling_environments /
                                         limits_.scaling_window_ms);
        tokens_at_ms_ = now_ms;
    }
}

void pool_policy::emit(pool_event e) {
    e.function = key_;
    if (on_event_) on_event_(e);
}

void pool_policy::free_concurrency() {
    if (!limits_.reserved_concurrency && account_.unreserved_in_use_ > 0)
        --account_.unreserved_in_use_;
}

cold_burst simulate_cold_burst(const cold_start_model& model, const random_source& rng,
                               const std::string& key, int n) {
    if (n < 1) throw std::invalid_argument("a cold burst needs at least 1 request");
    pool_limits limits;
    limits.max_environments = n;
    limits.scaling_environments = std::max(1000.0, static_cast<double>(n));
    account_concurrency account(std::max(1000, n + 100), 100);
    // Nothing is released during the burst, so the lifetimes never come into it.
    const distribution day = distribution::fixed(86400000);
    pool_policy policy(key, limits, lifetime_model{day, day}, model, rng, account, nullptr);
    cold_burst out;
    out.requests = n;
    std::vector<double> totals;
    totals.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const placement p = policy.acquire(0.0);
        if (p.kind == placement_kind::cold && p.init) totals.push_back(p.init->total_ms);
    }
    out.cold_starts = static_cast<int>(totals.size());
    if (const eni_pool* enis = policy.enis()) out.enis_created = enis->created();
    if (totals.empty()) return out;
    std::sort(totals.begin(), totals.end());
    const auto at = [&](long pct) {
        const long size = static_cast<long>(totals.size());
        const long rank = std::max(1L, (pct * size + 99) / 100);
        return totals[static_cast<std::size_t>(rank - 1)];
    };
    out.p50_ms = at(50);
    out.p95_ms = at(95);
    out.max_ms = totals.back();
    return out;
}

}  // namespace coldbrew::models
