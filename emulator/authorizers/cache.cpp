// The authorizer result cache (authorizers.hpp).

#include "emulator/authorizers/authorizers.hpp"

namespace coldbrew::authorizers {

const result* result_cache::find(const std::string& key, double now_ms) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    if (now_ms >= it->second.expires_ms) {
        entries_.erase(it);
        return nullptr;
    }
    return &it->second.r;
}

void result_cache::put(const std::string& key, result r, double ttl_ms, double now_ms) {
    if (ttl_ms <= 0) return;
    entries_[key] = entry{std::move(r), now_ms + ttl_ms};
}

void result_cache::clear() {
    entries_.clear();
}

} // namespace coldbrew::authorizers
