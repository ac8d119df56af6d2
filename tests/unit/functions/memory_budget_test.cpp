// memory_budget_mb: which idle environments go when all environments pass the budget.

#include "emulator/functions/memory_budget.hpp"

#include <set>

#include "tests/catch.hpp"

using coldbrew::functions::budget_entry;
using coldbrew::functions::choose_budget_evictions;
using coldbrew::functions::memory_budget;

namespace {
budget_entry entry(std::string fn, std::uint64_t id, int mb, std::uint64_t used, bool evictable) {
    budget_entry e;
    e.function = std::move(fn);
    e.environment = id;
    e.memory_mb = mb;
    e.last_used = used;
    e.evictable = evictable;
    return e;
}
}  // namespace

TEST_CASE("budget evictions: nothing while the total fits", "[unit]") {
    const std::vector<budget_entry> envs = {entry("A", 0, 40, 1, true), entry("B", 0, 40, 2, true)};
    CHECK(choose_budget_evictions(envs, 80).empty());
    CHECK(choose_budget_evictions({}, 0).empty());
}

TEST_CASE("budget evictions: least recently used idle first, only as many as needed", "[unit]") {
    const std::vector<budget_entry> envs = {
        entry("A", 0, 40, 5, true),   // recent
        entry("B", 3, 40, 1, true),   // oldest
        entry("C", 1, 40, 3, true),
        entry("D", 2, 40, 2, false),  // old but busy: never
    };
    // 160 MB in use: 100 MB needs two evictions, the two least recently used idle ones.
    CHECK(choose_budget_evictions(envs, 100) == std::vector<std::size_t>{1, 2});
    CHECK(choose_budget_evictions(envs, 120) == std::vector<std::size_t>{1});
    CHECK(choose_budget_evictions(envs, 159) == std::vector<std::size_t>{1});
}

TEST_CASE("budget evictions: busy and provisioned are kept even when the budget is not met", "[unit]") {
    const std::vector<budget_entry> envs = {entry("A", 0, 100, 1, false), entry("B", 0, 30, 2, true),
                                            entry("C", 0, 100, 3, false)};
    CHECK(choose_budget_evictions(envs, 50) == std::vector<std::size_t>{1});
}

TEST_CASE("budget evictions: equal recency goes by function then environment", "[unit]") {
    const std::vector<budget_entry> envs = {entry("B", 1, 10, 7, true), entry("A", 2, 10, 7, true),
                                            entry("A", 1, 10, 7, true)};
    CHECK(choose_budget_evictions(envs, 10) == std::vector<std::size_t>{2, 1});
}

TEST_CASE("memory_budget: readings past the budget evict through the pools", "[unit]") {
    memory_budget b(100);
    std::set<std::pair<std::string, std::uint64_t>> busy;
    std::vector<std::pair<std::string, std::uint64_t>> evicted;
    for (const char* fn : {"A", "B"}) {
        const std::string name = fn;
        b.join(name, {[&, name](std::uint64_t id) { return !busy.count({name, id}); },
                      [&, name](std::uint64_t id) { evicted.emplace_back(name, id); }});
    }
    b.reading("A", 0, 40);
    b.reading("B", 0, 40);
    CHECK(b.total_mb() == 80);
    CHECK(evicted.empty());
    busy.insert({"A", 1});
    b.reading("A", 1, 40);  // 120 MB: the least recently used idle one, A 0, goes
    REQUIRE(evicted.size() == 1);
    CHECK(evicted[0] == std::make_pair(std::string("A"), std::uint64_t{0}));
    CHECK(b.total_mb() == 80);
    CHECK(b.evictions() == 1);

    b.reading("B", 0, 70);  // B 0 grew: 110 MB; A 1 is busy, so B 0 itself is evicted
    REQUIRE(evicted.size() == 2);
    CHECK(evicted[1] == std::make_pair(std::string("B"), std::uint64_t{0}));
    CHECK(b.total_mb() == 40);

    b.forget("A", 1);
    CHECK(b.total_mb() == 0);
    b.forget("A", 1);  // harmless twice
    b.reading("B", 5, 30);
    b.leave("B");
    CHECK(b.total_mb() == 0);
}

TEST_CASE("memory_budget: spare (standby) environments count, and go before any idle one", "[unit]") {
    memory_budget b(100);
    std::vector<std::pair<std::string, std::uint64_t>> evicted;
    for (const char* fn : {"A", "B"}) {
        const std::string name = fn;
        b.join(name, {[](std::uint64_t) { return true; },
                      [&, name](std::uint64_t id) { evicted.emplace_back(name, id); }});
    }
    b.reading("A", 0, 30);                  // served first: the least recently used idle one
    b.reading("B", 900, 30, /*spare=*/true);  // B's standby, read when its init was done
    CHECK(b.total_mb() == 60);
    CHECK(b.fits(40));
    CHECK_FALSE(b.fits(41));
    b.reading("B", 1, 50);  // 110 MB: B's spare goes, though A 0 was used earlier
    REQUIRE(evicted.size() == 1);
    CHECK(evicted[0] == std::make_pair(std::string("B"), std::uint64_t{900}));
    CHECK(b.total_mb() == 80);
}
