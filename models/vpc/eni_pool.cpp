#include "models/vpc/eni_pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace coldbrew::models {

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();
double non_negative(double ms) { return ms > 0 ? ms : 0.0; }
}  // namespace

int environments_per_eni(int memory_mb, double memory_per_eni_gb) {
    if (memory_mb < 1)
        throw std::invalid_argument("memory must be at least 1 MB, got " +
                                    std::to_string(memory_mb));
    if (!(memory_per_eni_gb > 0) || !std::isfinite(memory_per_eni_gb))
        throw std::invalid_argument("memory per ENI must be > 0 GB");
    const double n = std::floor(memory_per_eni_gb * 1024.0 / memory_mb);
    return n < 1 ? 1 : static_cast<int>(n);
}

eni_pool::eni_pool(std::string function_key, legacy_eni_model model, int memory_mb,
                   const random_source& rng)
    : key_(std::move(function_key)), model_(std::move(model)), rng_(rng),
      capacity_(environments_per_eni(memory_mb, model_.memory_per_eni_gb)) {}

eni_attachment eni_pool::attach(std::uint64_t environment, double now_ms) {
    if (attached_.count(environment))
        throw std::invalid_argument("function " + key_ + ": environment " +
                                    std::to_string(environment) + " already has an ENI");
    expire(now_ms);

    std::uint64_t ready_id = 0, pending_id = 0;
    eni_state* ready = nullptr;
    eni_state* pending = nullptr;
    for (auto& [id, e] : enis_) {
        if (e.environments >= capacity_) continue;
        if (e.ready_at_ms <= now_ms) {
            if (!ready) {  // the map is in id order: the lowest id
                ready = &e;
                ready_id = id;
            }
        } else if (!pending || e.ready_at_ms < pending->ready_at_ms) {
            pending = &e;
            pending_id = id;
        }
    }

    eni_attachment a;
    eni_state* chosen = ready ? ready : pending;
    if (chosen) {
        a.eni = ready ? ready_id : pending_id;
    } else {
        a.eni = next_eni_++;
        a.created = true;
        eni_state e;
        e.ready_at_ms =
            now_ms + non_negative(model_.creation_ms.sample(rng_, "eni-creation", key_, a.eni));
        chosen = &enis_.emplace(a.eni, e).first->second;
    }
    ++chosen->environments;
    chosen->release_at_ms = infinity;
    a.wait_ms = non_negative(chosen->ready_at_ms - now_ms);
    attached_.emplace(environment, a.eni);
    return a;
}

void eni_pool::detach(std::uint64_t environment, double now_ms) {
    const auto it = attached_.find(environment);
    if (it == attached_.end()) return;
    eni_state& e = enis_.at(it->second);
    const std::uint64_t id = it->second;
    attached_.erase(it);
    if (--e.environments > 0) return;
    // Unused from now, or from when it is ready if it is still being created.
    const double idle = non_negative(model_.idle_release_ms.sample(
        rng_, "eni-idle-release", key_ + "#" + std::to_string(id), e.idle_periods));
    ++e.idle_periods;
    e.release_at_ms = std::max(now_ms, e.ready_at_ms) + idle;
}

std::vector<std::uint64_t> eni_pool::expire(double now_ms) {
    std::vector<std::uint64_t> released;
    for (auto it = enis_.begin(); it != enis_.end();) {
        if (it->second.environments == 0 && now_ms >= it->second.release_at_ms) {
            released.push_back(it->first);
            it = enis_.erase(it);
        } else {
            ++it;
        }
    }
    return released;
}

std::optional<double> eni_pool::next_release_ms() const {
    std::optional<double> next;
    for (const auto& [id, e] : enis_) {
        if (e.environments > 0) continue;
        if (!next || e.release_at_ms < *next) next = e.release_at_ms;
    }
    return next;
}

}  // namespace coldbrew::models
