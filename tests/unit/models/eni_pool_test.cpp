#include "models/vpc/eni_pool.hpp"

#include <stdexcept>
#include <vector>

#include "tests/catch.hpp"

using namespace coldbrew::models;

namespace {

constexpr double creation_ms = 9000;
constexpr double idle_ms = 20 * 60000;  // 20 min

legacy_eni_model fixed_model() {
    legacy_eni_model m;
    m.creation_ms = distribution::fixed(creation_ms);
    m.memory_per_eni_gb = 3;
    m.idle_release_ms = distribution::fixed(idle_ms);
    m.source = "test";
    return m;
}

const random_source rng(7);

}  // namespace

TEST_CASE("eni capacity: one ENI per 3 GB of environments, at least one environment", "[unit]") {
    CHECK(environments_per_eni(128) == 24);
    CHECK(environments_per_eni(1024) == 3);
    CHECK(environments_per_eni(1536) == 2);
    CHECK(environments_per_eni(3008) == 1);
    CHECK(environments_per_eni(10240) == 1);
    CHECK(environments_per_eni(1024, 1.5) == 1);
    CHECK_THROWS_AS(environments_per_eni(0), std::invalid_argument);
    CHECK_THROWS_AS(environments_per_eni(128, 0), std::invalid_argument);
    CHECK(eni_pool("fn", fixed_model(), 128, rng).capacity() == 24);
}

TEST_CASE("eni pool: an environment arriving while the ENI is created waits only the remainder",
          "[unit]") {
    eni_pool pool("fn", fixed_model(), 1024, rng);  // 3 per ENI
    const auto a = pool.attach(0, 0);
    CHECK(a.eni == 0);
    CHECK(a.created);
    CHECK(a.wait_ms == creation_ms);
    const auto b = pool.attach(1, 3000);
    CHECK(b.eni == 0);
    CHECK_FALSE(b.created);
    CHECK(b.wait_ms == creation_ms - 3000);
    const auto c = pool.attach(2, 8000);
    CHECK(c.eni == 0);
    CHECK(c.wait_ms == creation_ms - 8000);
    // ENI 0 is full: the fourth environment waits for a new one, from its own arrival.
    const auto d = pool.attach(3, 8500);
    CHECK(d.eni == 1);
    CHECK(d.created);
    CHECK(d.wait_ms == creation_ms);
    CHECK(pool.enis() == 2);
    // ENI 0 is ready: a slot there is taken at once.
    pool.detach(1, 9500);
    const auto e = pool.attach(4, 10000);
    CHECK(e.eni == 0);
    CHECK_FALSE(e.created);
    CHECK(e.wait_ms == 0);
    CHECK(pool.created() == 2);
}

TEST_CASE("eni pool: a ready ENI is preferred to one still being created", "[unit]") {
    eni_pool pool("fn", fixed_model(), 1024, rng);
    for (std::uint64_t env = 0; env < 3; ++env) pool.attach(env, 0);  // ENI 0 full
    pool.attach(3, 1000);                                              // ENI 1, ready at 10 s
    pool.detach(0, 9500);                                              // ENI 0 has room, ready
    const auto a = pool.attach(4, 9600);
    CHECK(a.eni == 0);
    CHECK(a.wait_ms == 0);
    // No ready room left: the ENI being created, for the remainder.
    const auto b = pool.attach(5, 9700);
    CHECK(b.eni == 1);
    CHECK(b.wait_ms == Approx(10000 - 9700));
}

TEST_CASE("eni pool: an unused ENI is released after its idle time, lazily or by expire", "[unit]") {
    eni_pool pool("fn", fixed_model(), 1024, rng);
    pool.attach(0, 0);
    CHECK_FALSE(pool.next_release_ms());
    pool.detach(0, 60000);
    REQUIRE(pool.next_release_ms());
    CHECK(*pool.next_release_ms() == 60000 + idle_ms);
    // Within the idle time the ENI is reused and no longer due.
    const auto again = pool.attach(1, 60000 + idle_ms - 1);
    CHECK(again.eni == 0);
    CHECK(again.wait_ms == 0);
    CHECK_FALSE(pool.next_release_ms());
    pool.detach(1, 100000);
    // Past due: the next attach releases it first and creates ENI 1.
    const auto late = pool.attach(2, 100000 + idle_ms);
    CHECK(late.eni == 1);
    CHECK(late.created);
    CHECK(late.wait_ms == creation_ms);
    CHECK(pool.enis() == 1);
    // Explicit expire: nothing before the time, the ENI at it.
    const double left = 100000 + idle_ms + 60000;  // ENI 1 is ready by then
    pool.detach(2, left);
    CHECK(pool.expire(left + idle_ms - 1).empty());
    CHECK(pool.expire(left + idle_ms) == std::vector<std::uint64_t>{1});
    CHECK(pool.enis() == 0);
    CHECK_FALSE(pool.next_release_ms());
}

TEST_CASE("eni pool: an ENI left before it is ready idles from when it is ready", "[unit]") {
    eni_pool pool("fn", fixed_model(), 1024, rng);
    pool.attach(0, 0);
    pool.detach(0, 1000);
    CHECK(*pool.next_release_ms() == creation_ms + idle_ms);
    pool.detach(0, 2000);  // unknown now: ignored
    pool.detach(42, 2000);
    CHECK(pool.enis() == 1);
}

TEST_CASE("eni pool: attaching an environment twice is a caller bug", "[unit]") {
    eni_pool pool("fn", fixed_model(), 1024, rng);
    pool.attach(0, 0);
    CHECK_THROWS_AS(pool.attach(0, 1), std::invalid_argument);
}

TEST_CASE("eni pool: creation times are drawn per function and ENI index, the same for a seed",
          "[unit]") {
    legacy_eni_model m = fixed_model();
    m.creation_ms = distribution::lognormal(9100, 21000);
    m.idle_release_ms = distribution::uniform(20 * 60000, 45 * 60000);
    const auto run = [&](std::uint64_t seed, const std::string& key) {
        const random_source r(seed);
        eni_pool pool(key, m, 3008, r);  // one environment per ENI: every attach creates
        std::vector<double> out;
        for (std::uint64_t env = 0; env < 8; ++env) out.push_back(pool.attach(env, 0).wait_ms);
        for (std::uint64_t env = 0; env < 8; ++env) pool.detach(env, 60000);
        out.push_back(*pool.next_release_ms());
        return out;
    };
    const auto a = run(1, "fn");
    CHECK(a == run(1, "fn"));
    CHECK(a != run(2, "fn"));
    CHECK(a != run(1, "other"));
    // ENI i's creation is draw i of (eni-creation, fn): independent of what else happened.
    const random_source r(1);
    for (std::uint64_t i = 0; i < 8; ++i)
        CHECK(a[i] == m.creation_ms.sample(r, "eni-creation", "fn", i));
    for (std::size_t i = 1; i < 8; ++i) CHECK(a[i] != a[0]);
}
