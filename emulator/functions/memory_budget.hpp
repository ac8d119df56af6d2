#pragma once
// coldbrew.yaml `memory_budget_mb`: a ceiling for the memory of all execution environments
// together, so that a stack of many functions cannot take a laptop's memory long before
// Lambda's limits would stop it (each environment is a real process here; on Lambda each runs
// on AWS's machines). Not an AWS behaviour: Lambda evicts idle environments on its own
// schedule; coldbrew evicts them earlier when they no longer fit this machine.
//
// What counts: each environment's memory as its last REPORT stated it (Max Memory Used, MB:
// the process tree's high-water mark, or its memory cgroup's peak), read after each
// invocation it served; standby (spare) and provisioned environments are read once when their
// init is done, before they serve. When the total passes the budget, standby environments go
// first (they are spares: a cold start without one only waits for its own process start),
// then idle on-demand environments, least recently used first, until the total fits again;
// busy and provisioned environments are never evicted (a budget smaller than what they use is
// simply exceeded). A function whose standby environment was evicted starts another only when
// it fits. Each eviction of an on-demand environment is a decision-log line
// {"event":"discarded",…,"reason":"memory-budget"} and counts in the function's evictions;
// standby environments are outside the model (no decision-log line) and count in its
// budget_evictions only.
//
// Not thread-safe: use from the loop thread.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace coldbrew::functions {

// One environment as the budget sees it.
struct budget_entry {
    std::string function;      // the function's logical id (ties in `last_used` go by it, then id)
    std::uint64_t environment = 0;
    int memory_mb = 0;         // its last reading
    std::uint64_t last_used = 0;  // order of its last reading: larger is more recent; 0 for a spare
    bool evictable = false;    // idle and on-demand, or a spare
};

// Which entries to evict so that the total fits `budget_mb`: indices into `entries`, least
// recently used evictable entry first, as few as needed. Empty when the total fits already;
// when evicting every evictable entry is not enough, all of them (the budget cannot be met
// without touching busy or provisioned environments).
std::vector<std::size_t> choose_budget_evictions(const std::vector<budget_entry>& entries,
                                                 std::uint64_t budget_mb);

// The running account of all pools' environments. Pools report readings and removals; a
// reading that takes the total over the budget makes it choose (choose_budget_evictions) and
// evict, through the pools, until the total fits.
class memory_budget {
public:
    // What each pool registers: whether its environment is idle and on-demand now, and how to
    // evict it (the environment must be forgotten by the time evict returns).
    struct member {
        std::function<bool(std::uint64_t environment)> evictable;
        std::function<void(std::uint64_t environment)> evict;
    };
    explicit memory_budget(std::uint64_t budget_mb) : budget_mb_(budget_mb) {}

    void join(const std::string& function, member m);
    void leave(const std::string& function);

    // An environment's reading after it served an invocation, or (`spare`: a standby
    // environment, evicted before any other) when its init is done; may evict others (or,
    // when it is idle already, this one).
    void reading(const std::string& function, std::uint64_t environment, int memory_mb,
                 bool spare = false);
    // Whether `memory_mb` more fits now.
    bool fits(int memory_mb) const noexcept {
        return total_mb_ + static_cast<std::uint64_t>(std::max(memory_mb, 0)) <= budget_mb_;
    }
    // The environment is gone.
    void forget(const std::string& function, std::uint64_t environment);

    std::uint64_t budget_mb() const noexcept { return budget_mb_; }
    std::uint64_t total_mb() const noexcept { return total_mb_; }
    std::uint64_t evictions() const noexcept { return evictions_; }

private:
    struct state {
        int memory_mb = 0;
        std::uint64_t last_used = 0;
    };
    void enforce();

    std::uint64_t budget_mb_;
    std::uint64_t total_mb_ = 0;
    std::uint64_t clock_ = 0;
    std::uint64_t evictions_ = 0;
    bool enforcing_ = false;
    std::map<std::pair<std::string, std::uint64_t>, state> envs_;
    std::map<std::string, member, std::less<>> members_;
};

}  // namespace coldbrew::functions
