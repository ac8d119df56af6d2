#include "emulator/functions/memory_budget.hpp"

#include <algorithm>

namespace coldbrew::functions {

std::vector<std::size_t> choose_budget_evictions(const std::vector<budget_entry>& entries,
                                                 std::uint64_t budget_mb) {
    std::uint64_t total = 0;
    for (const auto& e : entries)
        total += static_cast<std::uint64_t>(std::max(e.memory_mb, 0));
    std::vector<std::size_t> out;
    if (total <= budget_mb) return out;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i].evictable) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto& x = entries[a];
        const auto& y = entries[b];
        if (x.last_used != y.last_used) return x.last_used < y.last_used;
        if (x.function != y.function) return x.function < y.function;
        return x.environment < y.environment;
    });
    for (std::size_t i : order) {
        if (total <= budget_mb) break;
        out.push_back(i);
        total -= static_cast<std::uint64_t>(std::max(entries[i].memory_mb, 0));
    }
    return out;
}

void memory_budget::join(const std::string& function, member m) {
    members_[function] = std::move(m);
}

void memory_budget::leave(const std::string& function) {
    members_.erase(function);
    for (auto it = envs_.begin(); it != envs_.end();) {
        if (it->first.first == function) {
            total_mb_ -= static_cast<std::uint64_t>(it->second.memory_mb);
            it = envs_.erase(it);
        } else {
            ++it;
        }
    }
}

void memory_budget::reading(const std::string& function, std::uint64_t environment,
                            int memory_mb, bool spare) {
    auto& s = envs_[{function, environment}];
    total_mb_ -= static_cast<std::uint64_t>(s.memory_mb);
    s.memory_mb = std::max(memory_mb, 0);
    s.last_used = spare ? 0 : ++clock_;
    total_mb_ += static_cast<std::uint64_t>(s.memory_mb);
    if (total_mb_ > budget_mb_) enforce();
}

void memory_budget::forget(const std::string& function, std::uint64_t environment) {
    auto it = envs_.find({function, environment});
    if (it == envs_.end()) return;
    total_mb_ -= static_cast<std::uint64_t>(it->second.memory_mb);
    envs_.erase(it);
}

void memory_budget::enforce() {
    // An eviction can end a process synchronously and come back here through forget() (never
    // through reading()), but a guard keeps any such path from recursing.
    if (enforcing_) return;
    enforcing_ = true;
    std::vector<budget_entry> entries;
    entries.reserve(envs_.size());
    for (const auto& [key, s] : envs_) {
        budget_entry e;
        e.function = key.first;
        e.environment = key.second;
        e.memory_mb = s.memory_mb;
        e.last_used = s.last_used;
        auto m = members_.find(key.first);
        e.evictable = m != members_.end() && m->second.evictable && m->second.evictable(key.second);
        entries.push_back(std::move(e));
    }
    for (std::size_t i : choose_budget_evictions(entries, budget_mb_)) {
        const auto& e = entries[i];
        auto m = members_.find(e.function);
        if (m == members_.end() || !m->second.evict) continue;
        forget(e.function, e.environment);
        ++evictions_;
        m->second.evict(e.environment);
    }
    enforcing_ = false;
}

}  // namespace coldbrew::functions
