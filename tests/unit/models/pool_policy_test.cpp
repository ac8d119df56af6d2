#include "models/pool/pool_policy.hpp"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/profile/profile.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;

namespace {

const cold_start_model& node_model() {
    static const cold_start_model model = [] {
        function_traits traits;
        traits.runtime = "nodejs20.x";
        return cold_start_model(builtin_profile(), traits);
    }();
    return model;
}

constexpr double keep_alive_ms = 600000;     // 10 min
constexpr double max_lifetime_ms = 7200000;  // 2 h

lifetime_model fixed_lifetime(double keep_alive = keep_alive_ms,
                              double max_lifetime = max_lifetime_ms) {
    return {distribution::fixed(keep_alive), distribution::fixed(max_lifetime)};
}

// One function's policy on a manual clock (the times passed in), recording its decision log.
struct harness {
    explicit harness(std::uint64_t seed = 42, int account_limit = 1000,
                     int unreserved_minimum = 100)
        : rng(seed), account(account_limit, unreserved_minimum) {}

    pool_policy make(pool_limits limits = {}, lifetime_model lifetime = fixed_lifetime(),
                     const std::string& key = "Hello") {
        return pool_policy(key, limits, std::move(lifetime), node_model(), rng, account,
                           [this](const pool_event& e) { events.push_back(e); });
    }

    std::vector<std::string> log() const {
        std::vector<std::string> lines;
        for (const auto& e : events) lines.push_back(e.to_json());
        return lines;
    }

    std::size_t count(pool_event::kind k) const {
        std::size_t n = 0;
        for (const auto& e : events) n += e.type == k;
        return n;
    }

    random_source rng;
    account_concurrency account;
    std::vector<pool_event> events;
};

pool_limits limits_with(int max_environments) {
    pool_limits l;
    l.max_environments = max_environments;
    return l;
}

}  // namespace

TEST_CASE("pool policy: a new environment is cold, and the most recently used idle one is reused",
          "[unit]") {
    harness h;
    auto pool = h.make();

    auto a = pool.acquire(0);
    REQUIRE(a.kind == placement_kind::cold);
    CHECK(a.request_index == 0);
    CHECK(a.environment == 0);
    CHECK_FALSE(a.provisioned);
    REQUIRE(a.init);
    CHECK(a.init->total_ms > 0);
    CHECK(a.init->total_ms ==
          Approx(a.init->runtime_ms + a.init->package_ms + a.init->vpc_ms + a.init->extensions_ms));

    // Every environment is busy: another cold start.
    auto b = pool.acquire(1);
    REQUIRE(b.kind == placement_kind::cold);
    CHECK(b.request_index == 1);
    CHECK(b.environment == 1);
    CHECK(pool.live() == 2);
    CHECK(pool.busy() == 2);

    CHECK(pool.release(0, 10).empty());
    CHECK(pool.release(1, 20).empty());
    CHECK(pool.idle() == 2);

    auto c = pool.acquire(30);
    REQUIRE(c.kind == placement_kind::warm);
    CHECK(c.request_index == 2);
    CHECK(c.environment == 1);  // released last
    CHECK_FALSE(c.init);
    auto d = pool.acquire(31);
    REQUIRE(d.kind == placement_kind::warm);
    CHECK(d.environment == 0);

    CHECK(h.count(pool_event::kind::created) == 2);
    CHECK(h.count(pool_event::kind::reused) == 2);
    CHECK(h.count(pool_event::kind::idle) == 2);
    REQUIRE(h.events.size() == 6);
    CHECK(h.events[0].max_lifetime_ms == max_lifetime_ms);
    CHECK(h.events[0].at_ms == 0);
    CHECK(h.events[2].type == pool_event::kind::idle);
    CHECK(h.events[2].keep_alive_ms == keep_alive_ms);
    CHECK(h.events[4].type == pool_event::kind::reused);
    CHECK(h.events[4].request_index == 2u);
    CHECK(h.events[4].environment == 1u);
}

TEST_CASE("pool policy: provisioned environments serve first, never cold, and are replaced",
          "[unit]") {
    harness h;
    pool_limits limits;
    limits.provisioned_concurrency = 2;
    auto pool = h.make(limits, fixed_lifetime(1000, 50000));

    auto started = pool.provision(0);
    REQUIRE(started.size() == 2);
    for (std::uint64_t i = 0; i < 2; ++i) {
        CHECK(started[i].type == pool_action::kind::provision);
        CHECK(started[i].environment == i);
        REQUIRE(started[i].init);
        CHECK(started[i].init->total_ms > 0);
    }
    CHECK(pool.idle() == 2);
    CHECK(pool.provision(0).empty());  // already at provisioned_concurrency
    REQUIRE(h.events.size() == 2);
    CHECK(h.events[0].type == pool_event::kind::created);
    CHECK(h.events[0].provisioned);
    CHECK_FALSE(h.events[0].request_index);
    CHECK(h.events[0].init);

    auto a = pool.acquire(1);
    REQUIRE(a.kind == placement_kind::warm);
    CHECK(a.provisioned);
    auto b = pool.acquire(1);
    REQUIRE(b.kind == placement_kind::warm);
    CHECK(b.provisioned);
    CHECK(a.environment != b.environment);
    auto c = pool.acquire(1);
    REQUIRE(c.kind == placement_kind::cold);  // only when every provisioned one is busy
    CHECK_FALSE(c.provisioned);
    CHECK(c.environment == 2);

    // A provisioned environment is preferred to a more recently used on-demand one.
    pool.release(a.environment, 5);
    pool.release(2, 6);
    auto d = pool.acquire(7);
    REQUIRE(d.kind == placement_kind::warm);
    CHECK(d.provisioned);
    CHECK(d.environment == a.environment);
    pool.release(d.environment, 8);
    pool.release(b.environment, 8);

    // Long idle: only the on-demand environment is evicted.
    auto gone = pool.expire(20000);
    REQUIRE(gone.size() == 1);
    CHECK(gone[0].type == pool_action::kind::evict);
    CHECK(gone[0].environment == 2);
    CHECK(gone[0].reason == "keep-alive");
    CHECK(pool.live() == 2);

    // Lost: replaced, keeping the provisioned count.
    const auto before = h.events.size();
    auto replaced = pool.discard(0, 21000, "crashed");
    REQUIRE(replaced.size() == 1);
    CHECK(replaced[0].type == pool_action::kind::provision);
    CHECK(replaced[0].environment == 3);
    CHECK(replaced[0].init);
    CHECK(pool.live() == 2);
    CHECK(pool.idle() == 2);
    REQUIRE(h.events.size() == before + 2);
    CHECK(h.events[before].type == pool_event::kind::discarded);
    CHECK(h.events[before].reason == "crashed");
    CHECK(h.events[before].provisioned);
    CHECK(h.events[before + 1].type == pool_event::kind::created);
    CHECK(h.events[before + 1].provisioned);

    // Retired at the maximum lifetime and replaced; environment 1 was created at 0.
    CHECK(pool.next_expiry_ms() == 50000.0);
    auto retired = pool.expire(50000);
    REQUIRE(retired.size() == 2);
    CHECK(retired[0].type == pool_action::kind::evict);
    CHECK(retired[0].environment == 1);
    CHECK(retired[0].reason == "max-lifetime");
    CHECK(retired[1].type == pool_action::kind::provision);
    CHECK(retired[1].environment == 4);
    CHECK(pool.live() == 2);
    CHECK(pool.next_expiry_ms() == 71000.0);  // environment 3, created at 21000
}

TEST_CASE("pool policy: a provisioned environment past its lifetime is retired on release",
          "[unit]") {
    harness h;
    pool_limits limits;
    limits.provisioned_concurrency = 1;
    auto pool = h.make(limits, fixed_lifetime(1000, 5000));
    pool.provision(0);
    auto a = pool.acquire(4000);
    REQUIRE(a.kind == placement_kind::warm);
    auto actions = pool.release(a.environment, 6000);
    REQUIRE(actions.size() == 2);
    CHECK(actions[0].type == pool_action::kind::evict);
    CHECK(actions[0].reason == "max-lifetime");
    CHECK(actions[1].type == pool_action::kind::provision);
    CHECK(actions[1].environment == 1);
    CHECK(pool.live() == 1);
    CHECK(pool.idle() == 1);
    CHECK(pool.acquire(6001).kind == placement_kind::warm);
}

TEST_CASE("pool policy: an idle on-demand environment is evicted after its keep-alive", "[unit]") {
    harness h;
    auto pool = h.make();
    CHECK_FALSE(pool.next_expiry_ms());
    pool.acquire(0);
    CHECK_FALSE(pool.next_expiry_ms());  // busy environments do not expire
    pool.release(0, 100);
    REQUIRE(pool.next_expiry_ms());
    CHECK(*pool.next_expiry_ms() == 100 + keep_alive_ms);

    CHECK(pool.expire(100 + keep_alive_ms - 0.5).empty());
    CHECK(pool.live() == 1);

    // At the deadline it is no longer reused, even before expire() runs.
    auto late = pool.acquire(100 + keep_alive_ms);
    CHECK(late.kind == placement_kind::cold);
    CHECK(late.environment == 1);

    auto gone = pool.expire(100 + keep_alive_ms);
    REQUIRE(gone.size() == 1);
    CHECK(gone[0].type == pool_action::kind::evict);
    CHECK(gone[0].environment == 0);
    CHECK(gone[0].reason == "keep-alive");
    CHECK(pool.live() == 1);
    CHECK(h.events.back().type == pool_event::kind::evicted);
    CHECK(h.events.back().reason == "keep-alive");

    // Each idle period draws its own keep-alive; the second period counts from its release.
    pool.release(1, 700000);
    CHECK(*pool.next_expiry_ms() == 700000 + keep_alive_ms);
    CHECK(pool.acquire(700001).kind == placement_kind::warm);
    pool.release(1, 800000);
    CHECK(*pool.next_expiry_ms() == 800000 + keep_alive_ms);
    CHECK(pool.expire(800000 + keep_alive_ms).size() == 1);
    CHECK(pool.live() == 0);
    CHECK(pool.acquire(2e6).kind == placement_kind::cold);
}

TEST_CASE("pool policy: the profile's lifetime draws are deterministic for a seed", "[unit]") {
    const profile& p = builtin_profile();
    auto run = [&](std::uint64_t seed) {
        harness h(seed);
        auto pool = h.make({}, {p.keep_alive_ms, p.max_lifetime_ms});
        pool.acquire(0);
        pool.acquire(0);
        pool.release(0, 10);
        pool.release(1, 20);
        pool.acquire(30);
        pool.release(1, 40);
        return h.events;
    };
    auto a = run(9), b = run(9);
    REQUIRE(a.size() == b.size());
    std::vector<double> keep_alives;
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].to_json() == b[i].to_json());
        if (a[i].keep_alive_ms) {
            CHECK(*a[i].keep_alive_ms >= 0);
            keep_alives.push_back(*a[i].keep_alive_ms);
        }
        if (a[i].max_lifetime_ms) CHECK(*a[i].max_lifetime_ms > 0);
    }
    REQUIRE(keep_alives.size() == 3);
    // Environment 1's two idle periods are separate draws.
    CHECK(keep_alives[1] != keep_alives[2]);
}

TEST_CASE("pool policy: an on-demand environment past its maximum lifetime retires on release",
          "[unit]") {
    harness h;
    auto pool = h.make({}, fixed_lifetime(keep_alive_ms, 1000));
    pool.acquire(0);
    pool.acquire(0);

    auto kept = pool.release(0, 999);
    CHECK(kept.empty());
    CHECK(h.events.back().type == pool_event::kind::idle);
    // Idle: its retirement comes before its keep-alive.
    CHECK(*pool.next_expiry_ms() == 1000.0);

    // Busy past its lifetime: not expired, retired when it answers.
    auto expired = pool.expire(1000);
    REQUIRE(expired.size() == 1);
    CHECK(expired[0].environment == 0);
    CHECK(expired[0].reason == "max-lifetime");
    CHECK(pool.live() == 1);

    const auto idle_events = h.count(pool_event::kind::idle);
    auto retired = pool.release(1, 1500);
    REQUIRE(retired.size() == 1);
    CHECK(retired[0].type == pool_action::kind::evict);
    CHECK(retired[0].environment == 1);
    CHECK(retired[0].reason == "max-lifetime");
    CHECK(h.count(pool_event::kind::idle) == idle_events);  // no keep-alive drawn
    CHECK(h.events.back().type == pool_event::kind::evicted);
    CHECK(pool.live() == 0);
    CHECK(pool.busy() == 0);
}

TEST_CASE("pool policy: reserved concurrency throttles in-flight invocations beyond it",
          "[unit]") {
    harness h;
    pool_limits limits;
    limits.reserved_concurrency = 2;
    auto pool = h.make(limits);
    CHECK(h.account.reserved() == 2);

    CHECK(pool.acquire(0).kind == placement_kind::cold);
    CHECK(pool.acquire(0).kind == placement_kind::cold);
    auto t = pool.acquire(0);
    REQUIRE(t.kind == placement_kind::throttle);
    CHECK(t.request_index == 2);
    CHECK(t.throttle_reason == "ReservedFunctionConcurrentInvocationLimitExceeded");
    CHECK(h.events.back().type == pool_event::kind::throttled);
    CHECK(h.events.back().reason == "ReservedFunctionConcurrentInvocationLimitExceeded");
    CHECK(h.events.back().request_index == 2u);
    // Reserved functions do not use the unreserved pool.
    CHECK(h.account.unreserved_in_use() == 0);

    pool.release(1, 5);
    auto w = pool.acquire(6);
    CHECK(w.kind == placement_kind::warm);
    CHECK(w.request_index == 3);

    // A discarded busy environment frees its slot too.
    pool.discard(0, 7, "timeout");
    CHECK(pool.acquire(8).kind == placement_kind::cold);
}

TEST_CASE("pool policy: reserved concurrency 0 throttles every invocation", "[unit]") {
    harness h;
    pool_limits limits;
    limits.reserved_concurrency = 0;
    auto pool = h.make(limits);
    for (int i = 0; i < 3; ++i) {
        auto t = pool.acquire(i);
        CHECK(t.kind == placement_kind::throttle);
        CHECK(t.throttle_reason == "ReservedFunctionConcurrentInvocationLimitExceeded");
    }
    CHECK(pool.live() == 0);
}

TEST_CASE("pool policy: functions without a reservation share the account's unreserved pool",
          "[unit]") {
    harness h(42, 5, 2);
    pool_limits reserved;
    reserved.reserved_concurrency = 2;
    auto r = h.make(reserved, fixed_lifetime(), "Reserved");
    auto a = h.make({}, fixed_lifetime(), "A");
    auto b = h.make({}, fixed_lifetime(), "B");
    // 5 - 2 reserved = 3 unreserved, shared by A and B.

    CHECK(a.acquire(0).kind == placement_kind::cold);
    CHECK(a.acquire(0).kind == placement_kind::cold);
    CHECK(b.acquire(0).kind == placement_kind::cold);
    CHECK(h.account.unreserved_in_use() == 3);
    auto t = b.acquire(0);
    REQUIRE(t.kind == placement_kind::throttle);
    CHECK(t.throttle_reason == "ConcurrentInvocationLimitExceeded");
    CHECK(a.acquire(0).throttle_reason == "ConcurrentInvocationLimitExceeded");
    // The reserved function is unaffected.
    CHECK(r.acquire(0).kind == placement_kind::cold);
    CHECK(r.acquire(0).kind == placement_kind::cold);
    CHECK(h.account.unreserved_in_use() == 3);

    // A release in A frees capacity for B.
    a.release(0, 10);
    CHECK(h.account.unreserved_in_use() == 2);
    CHECK(b.acquire(11).kind == placement_kind::cold);
    CHECK(h.account.unreserved_in_use() == 3);
    CHECK(a.acquire(12).kind == placement_kind::throttle);
    // So does a discard of a busy environment.
    b.discard(0, 13, "crashed");
    CHECK(h.account.unreserved_in_use() == 2);
    CHECK(a.acquire(14).kind == placement_kind::warm);
    CHECK(h.account.unreserved_in_use() == 3);
}

TEST_CASE("account concurrency: a reservation must leave the unreserved minimum", "[unit]") {
    account_concurrency account(1000, 100);
    account.reserve(600);
    account.reserve(300);
    CHECK(account.reserved() == 900);
    try {
        account.reserve(1);
        FAIL("expected std::invalid_argument");
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        CHECK(what.find("99") != std::string::npos);
        CHECK(what.find("100") != std::string::npos);
        CHECK(what.find("1000") != std::string::npos);
    }
    CHECK(account.reserved() == 900);
    CHECK_NOTHROW(account.reserve(0));
    CHECK_THROWS_AS(account.reserve(-1), std::invalid_argument);

    CHECK_THROWS_AS(account_concurrency(0, 0), std::invalid_argument);
    CHECK_THROWS_AS(account_concurrency(10, -1), std::invalid_argument);

    // Through a policy: the rejected reservation takes nothing.
    harness h;
    pool_limits limits;
    limits.reserved_concurrency = 950;
    CHECK_THROWS_AS(h.make(limits), std::invalid_argument);
    CHECK(h.account.reserved() == 0);
}

TEST_CASE("pool policy: the scaling rate is a continuously refilled token bucket", "[unit]") {
    harness h;
    pool_limits limits;
    limits.scaling_environments = 3;
    limits.scaling_window_ms = 1000;
    auto pool = h.make(limits);

    int cold = 0, throttled = 0;
    for (int i = 0; i < 4; ++i) {
        auto p = pool.acquire(0);
        if (p.kind == placement_kind::cold) ++cold;
        if (p.kind == placement_kind::throttle) {
            ++throttled;
            CHECK(p.throttle_reason == "FunctionInvocationRateLimitExceeded");
        }
    }
    CHECK(cold == 3);
    CHECK(throttled == 1);

    CHECK(pool.acquire(333).kind == placement_kind::throttle);  // 0.999 tokens
    CHECK(pool.acquire(334).kind == placement_kind::cold);      // 1.002 tokens
    CHECK(pool.acquire(334).kind == placement_kind::throttle);

    // A warm invocation takes no token.
    pool.release(0, 335);
    CHECK(pool.acquire(335).kind == placement_kind::warm);

    // Unused rate does not accrue beyond one window's worth.
    cold = 0;
    for (int i = 0; i < 5; ++i) cold += pool.acquire(100000).kind == placement_kind::cold;
    CHECK(cold == 3);
}

TEST_CASE("pool policy: at the local cap an invocation waits, then reuses the released one",
          "[unit]") {
    harness h;
    pool_limits limits = limits_with(1);
    limits.scaling_environments = 2;
    limits.scaling_window_ms = 1e12;  // effectively no refill
    auto pool = h.make(limits);

    auto a = pool.acquire(0);
    REQUIRE(a.kind == placement_kind::cold);
    auto w1 = pool.acquire(1);
    auto w2 = pool.acquire(2);
    CHECK(w1.kind == placement_kind::wait);
    CHECK(w2.kind == placement_kind::wait);
    CHECK(w1.request_index == 1);
    CHECK(w2.request_index == 2);
    CHECK(h.count(pool_event::kind::waited) == 2);
    CHECK(h.events.back().request_index == 2u);

    pool.release(a.environment, 3);
    auto r = pool.acquire(3);
    CHECK(r.kind == placement_kind::warm);
    CHECK(r.environment == a.environment);
    CHECK(r.request_index == 3);

    // Waiting took no token: the second token is still there after a discard.
    pool.discard(a.environment, 4, "crashed");
    CHECK(pool.live() == 0);
    CHECK(pool.acquire(5).kind == placement_kind::cold);
}

TEST_CASE("pool policy: the decision log is identical for the same seed and calls", "[unit]") {
    auto run = [](std::uint64_t seed) {
        harness h(seed);
        pool_limits limits;
        limits.provisioned_concurrency = 1;
        limits.max_environments = 3;
        auto pool = h.make(limits);
        pool.provision(0);
        for (int i = 0; i < 5; ++i) pool.acquire(i);
        pool.release(1, 10);
        pool.release(2, 11);
        pool.discard(0, 12, "timeout");
        pool.acquire(13);
        pool.expire(1e7);
        return h.log();
    };
    auto a = run(7), b = run(7), c = run(8);
    REQUIRE(a.size() == b.size());
    CHECK(a == b);
    REQUIRE(a.size() == c.size());
    CHECK(a != c);
    // Only the draws differ: the first line (the provisioned environment) has other init values.
    CHECK(a[0].rfind(R"({"event":"created","function":"Hello","environment":0,)"
                     R"("provisioned":true,"init_ms":{"runtime":)",
                     0) == 0);
    CHECK(a[0] != c[0]);
    CHECK(a[1] == R"({"event":"reused","function":"Hello","request":0,"environment":0,)"
                  R"("provisioned":true})");
    CHECK(a[4] == R"({"event":"waited","function":"Hello","request":3})");
}

TEST_CASE("pool event: JSON has fixed key order, two decimals and only present fields", "[unit]") {
    pool_event e;
    e.type = pool_event::kind::created;
    e.function = "Hello";
    e.request_index = 3;
    e.environment = 1;
    e.init = init_draw{142.126, 10.5, 0, 1.0 / 3, 0};
    e.init->total_ms = 152.959;
    e.max_lifetime_ms = 7200000;
    e.at_ms = 12345;  // not in the JSON
    CHECK(e.to_json() ==
          R"({"event":"created","function":"Hello","request":3,"environment":1,)"
          R"("init_ms":{"runtime":142.13,"package":10.50,"vpc":0.00,"extensions":0.33,)"
          R"("total":152.96},)"
          R"("max_lifetime_ms":7200000.00})");

    pool_event d;
    d.type = pool_event::kind::discarded;
    d.function = "say \"hi\"\\";
    d.environment = 4;
    d.provisioned = true;
    d.reason = "init failed\n";
    CHECK(d.to_json() ==
          R"({"event":"discarded","function":"say \"hi\"\\","environment":4,"provisioned":true,)"
          R"("reason":"init failed\n"})");

    pool_event i;
    i.type = pool_event::kind::idle;
    i.function = "F";
    i.environment = 0;
    i.keep_alive_ms = -0.0;
    CHECK(i.to_json() ==
          R"({"event":"idle","function":"F","environment":0,"keep_alive_ms":0.00})");
}

TEST_CASE("pool policy: next_expiry_ms is the earliest idle deadline", "[unit]") {
    harness h;
    auto pool = h.make({}, fixed_lifetime(1000, 5000));
    CHECK_FALSE(pool.next_expiry_ms());
    pool.acquire(0);
    pool.acquire(0);
    pool.acquire(0);
    pool.release(2, 300);
    CHECK(pool.next_expiry_ms() == 1300.0);
    pool.release(0, 100);
    CHECK(pool.next_expiry_ms() == 1100.0);
    pool.release(1, 4500);
    CHECK(pool.next_expiry_ms() == 1100.0);
    CHECK(pool.expire(1100).size() == 1);
    CHECK(pool.next_expiry_ms() == 1300.0);
    CHECK(pool.expire(1300).size() == 1);
    CHECK(pool.next_expiry_ms() == 5000.0);  // max lifetime before keep-alive (5500)
    auto last = pool.expire(5000);
    REQUIRE(last.size() == 1);
    CHECK(last[0].reason == "max-lifetime");
    CHECK_FALSE(pool.next_expiry_ms());
}

TEST_CASE("pool policy: expire() acts in environment id order", "[unit]") {
    harness h;
    auto pool = h.make({}, fixed_lifetime(1000, 1e9));
    for (int i = 0; i < 3; ++i) pool.acquire(0);
    pool.release(2, 10);
    pool.release(0, 20);
    pool.release(1, 30);
    auto gone = pool.expire(5000);
    REQUIRE(gone.size() == 3);
    CHECK(gone[0].environment == 0);
    CHECK(gone[1].environment == 1);
    CHECK(gone[2].environment == 2);
}

TEST_CASE("pool policy: inconsistent limits and caller bugs are rejected", "[unit]") {
    harness h;
    auto with = [](auto change) {
        pool_limits l;
        change(l);
        return l;
    };
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) { l.max_environments = 0; })),
                    std::invalid_argument);
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) { l.provisioned_concurrency = -1; })),
                    std::invalid_argument);
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) {
                        l.reserved_concurrency = 2;
                        l.provisioned_concurrency = 3;
                    })),
                    std::invalid_argument);
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) {
                        l.max_environments = 4;
                        l.provisioned_concurrency = 5;
                    })),
                    std::invalid_argument);
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) { l.scaling_environments = 0; })),
                    std::invalid_argument);
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) { l.scaling_window_ms = 0; })),
                    std::invalid_argument);
    CHECK_THROWS_AS(h.make(with([](pool_limits& l) { l.reserved_concurrency = -1; })),
                    std::invalid_argument);
    CHECK(h.account.reserved() == 0);  // none of the rejected policies reserved anything

    try {
        h.make(with([](pool_limits& l) {
            l.reserved_concurrency = 2;
            l.provisioned_concurrency = 3;
        }));
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        CHECK(what.find("provisioned concurrency 3") != std::string::npos);
        CHECK(what.find("reserved concurrency 2") != std::string::npos);
    }

    auto pool = h.make();
    CHECK_THROWS_AS(pool.release(0, 0), std::invalid_argument);  // unknown
    pool.acquire(0);
    pool.release(0, 1);
    CHECK_THROWS_AS(pool.release(0, 2), std::invalid_argument);  // not busy
    const auto before = h.events.size();
    CHECK(pool.discard(99, 3, "crashed").empty());  // already gone: ignored
    CHECK(h.events.size() == before);
}

TEST_CASE("pool policy: a waiting invocation placed again keeps its request index", "[unit]") {
    const auto& profile = coldbrew::models::builtin_profile();
    coldbrew::models::function_traits t;
    t.runtime = "nodejs20.x";
    coldbrew::models::cold_start_model model(profile, t);
    coldbrew::models::random_source rng(5);
    coldbrew::models::account_concurrency account;
    coldbrew::models::pool_limits limits;
    limits.max_environments = 1;
    std::vector<std::string> log;
    coldbrew::models::pool_policy policy(
        "F", limits,
        {coldbrew::models::distribution::fixed(60000), coldbrew::models::distribution::fixed(1e9)},
        model, rng, account, [&](const coldbrew::models::pool_event& e) { log.push_back(e.to_json()); });
    auto first = policy.acquire(0);
    REQUIRE(first.kind == coldbrew::models::placement_kind::cold);
    auto second = policy.acquire(1);
    REQUIRE(second.kind == coldbrew::models::placement_kind::wait);
    CHECK(second.request_index == 1);
    policy.release(first.environment, 2);
    auto again = policy.acquire(3, second.request_index);
    CHECK(again.kind == coldbrew::models::placement_kind::warm);
    CHECK(again.request_index == 1);
    // A new invocation after it continues the count.
    CHECK(policy.acquire(4).request_index == 2);
    CHECK(log.back().find(R"("request":2)") != std::string::npos);
}

// --- legacy-eni VPC: shared ENIs -----------------------------------------------------------

namespace {

const cold_start_model& eni_model(int memory_mb = 1024) {
    static std::map<int, std::unique_ptr<cold_start_model>> models;
    auto& m = models[memory_mb];
    if (!m) {
        function_traits traits;
        traits.runtime = "nodejs20.x";
        traits.memory_mb = memory_mb;
        traits.vpc = vpc_mode::legacy_eni;
        m = std::make_unique<cold_start_model>(builtin_profile(), traits);
    }
    return *m;
}

pool_policy make_eni(harness& h, const std::string& key = "Vpc") {
    return pool_policy(key, {}, fixed_lifetime(), eni_model(), h.rng, h.account,
                       [&h](const pool_event& e) { h.events.push_back(e); });
}

}  // namespace

TEST_CASE("pool policy, legacy-eni: a cold burst of 16 at 1024 MB creates 6 ENIs and every cold start waits",
          "[unit]") {
    harness h;
    auto policy = make_eni(h);
    REQUIRE(policy.enis());
    CHECK(policy.enis()->capacity() == 3);
    std::vector<double> waits;
    for (int i = 0; i < 16; ++i) {
        const placement p = policy.acquire(0);
        REQUIRE(p.kind == placement_kind::cold);
        REQUIRE(p.init);
        CHECK(p.init->vpc_ms > 1000);  // on an ENI being created
        CHECK(p.init->total_ms ==
              Approx(p.init->runtime_ms + p.init->package_ms + p.init->vpc_ms + p.init->extensions_ms));
        waits.push_back(p.init->vpc_ms);
    }
    CHECK(policy.enis()->created() == 6);  // ceil(16 / 3)
    CHECK(policy.enis()->enis() == 6);
    // Environments sharing an ENI wait the same creation: 3, 3, 3, 3, 3 and 1.
    std::size_t created = 0;
    for (const auto& e : h.events) {
        if (e.type != pool_event::kind::created) continue;
        REQUIRE(e.eni);
        CHECK(e.eni->eni == *e.environment / 3);
        CHECK(e.eni->created == (*e.environment % 3 == 0));
        CHECK(e.eni->wait_ms == waits[*e.environment / 3 * 3]);
        created += e.eni->created;
    }
    CHECK(created == 6);
}

TEST_CASE("pool policy, legacy-eni: a later cold start within an ENI's capacity waits 0", "[unit]") {
    harness h;
    auto policy = make_eni(h);
    const auto first = policy.acquire(0);
    REQUIRE(first.init);
    CHECK(first.init->vpc_ms > 0);
    // A minute later the ENI is ready and has two free slots; the first environment is busy.
    const auto later = policy.acquire(60000);
    REQUIRE(later.kind == placement_kind::cold);
    CHECK(later.init->vpc_ms == 0);
    CHECK(later.init->total_ms ==
          Approx(later.init->runtime_ms + later.init->package_ms + later.init->extensions_ms));
    CHECK(policy.enis()->created() == 1);
    // The decision log shows the ENI and its wait after init_ms.
    const auto lines = h.log();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find(R"(,"eni":{"id":0,"created":true,"wait_ms":)") != std::string::npos);
    CHECK(lines[0].find(R"("total":)") < lines[0].find(R"("eni":)"));
    CHECK(lines[0].find(R"("eni":)") < lines[0].find(R"("max_lifetime_ms":)"));
    CHECK(lines[1].find(R"(,"eni":{"id":0,"created":false,"wait_ms":0.00},"max_lifetime_ms":)") !=
          std::string::npos);
}

TEST_CASE("pool policy, legacy-eni: evicted and discarded environments free their ENI slots", "[unit]") {
    harness h;
    auto policy = make_eni(h);
    std::vector<std::uint64_t> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(policy.acquire(0).environment);
    CHECK(policy.enis()->created() == 1);
    // Full: a fourth at t=60 s needs a second ENI.
    const auto fourth = policy.acquire(60000);
    CHECK(fourth.init->vpc_ms > 0);
    CHECK(policy.enis()->created() == 2);
    // One discarded, one evicted after its keep-alive: ENI 0 has two free slots again.
    policy.discard(ids[0], 70000, "crashed");
    policy.release(ids[1], 70000);
    policy.expire(70000 + keep_alive_ms);
    CHECK(policy.live() == 2);
    const auto again = policy.acquire(70000 + keep_alive_ms);
    REQUIRE(again.kind == placement_kind::cold);
    CHECK(again.init->vpc_ms == 0);
    CHECK(policy.enis()->created() == 2);
    // Everything gone: after the idle release (20-45 min) the next cold start creates again.
    policy.discard(ids[2], 700000, "crashed");
    policy.discard(fourth.environment, 700000, "crashed");
    policy.discard(again.environment, 700000, "crashed");
    REQUIRE(policy.enis()->next_release_ms());
    const double gone = *policy.enis()->next_release_ms() + 45 * 60000;
    policy.expire(gone);
    CHECK(policy.enis()->enis() == 0);
    const auto cold = policy.acquire(gone);
    CHECK(cold.init->vpc_ms > 0);
    CHECK(policy.enis()->created() == 3);
}

TEST_CASE("pool policy, legacy-eni: the same seed gives the same ENI waits", "[unit]") {
    const auto run = [](std::uint64_t seed) {
        harness h(seed);
        auto policy = make_eni(h);
        for (int i = 0; i < 10; ++i) policy.acquire(i * 1000.0);
        return h.log();
    };
    CHECK(run(5) == run(5));
    CHECK(run(5) != run(6));
}

TEST_CASE("cold burst: 16 / 50 / 100 first requests at 1024 MB, legacy-eni", "[unit]") {
    const random_source rng(42);
    const auto b16 = simulate_cold_burst(eni_model(), rng, "Vpc#burst", 16);
    CHECK(b16.requests == 16);
    CHECK(b16.cold_starts == 16);
    CHECK(b16.enis_created == 6);
    CHECK(b16.p50_ms > 1000);  // every one waited on a creation
    CHECK(b16.p50_ms <= b16.p95_ms);
    CHECK(b16.p95_ms <= b16.max_ms);
    CHECK(simulate_cold_burst(eni_model(), rng, "Vpc#burst", 100).enis_created == 34);
    CHECK(simulate_cold_burst(eni_model(128), rng, "Vpc#burst", 50).enis_created == 3);
    // Without a VPC there are no ENIs and only the runtime's Init.
    const auto none = simulate_cold_burst(node_model(), rng, "Hello#burst", 16);
    CHECK(none.enis_created == 0);
    CHECK(none.cold_starts == 16);
    CHECK(none.max_ms < 1000);
    CHECK_THROWS_AS(simulate_cold_burst(node_model(), rng, "x", 0), std::invalid_argument);
}
