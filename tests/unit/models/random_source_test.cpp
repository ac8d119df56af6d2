#include "models/random/random_source.hpp"

#include <set>

#include "tests/catch.hpp"

using coldbrew::models::random_source;

TEST_CASE("random source: a draw is a pure function of seed, stream, key and index", "[unit]") {
    random_source a(42), b(42), c(43);
    CHECK(a.bits("s", "k", 7) == b.bits("s", "k", 7));
    // Drawing other values in between changes nothing (counter-based, not sequential).
    (void)a.bits("s", "k", 1);
    (void)a.bits("other", "k", 7);
    CHECK(a.bits("s", "k", 7) == b.bits("s", "k", 7));
    CHECK(a.bits("s", "k", 7) != c.bits("s", "k", 7));
    CHECK(a.bits("s", "k", 7) != a.bits("s", "k", 8));
    CHECK(a.bits("s", "k", 7) != a.bits("s", "k2", 7));
    CHECK(a.bits("s", "k", 7) != a.bits("s2", "k", 7));
}

TEST_CASE("random source: pinned values, so a seeded run stays reproducible across builds", "[unit]") {
    random_source r(1);
    // If these change, every seeded run's request ids and decisions change: treat as a
    // breaking change and say so in the release notes.
    CHECK(r.bits("request-id", "Hello", 0) == 0xff1e15e888c1865eULL);
    CHECK(coldbrew::models::uuid_v4(r, "lambda-request-id", "Hello", 0) ==
          "693a9c1a-47c9-4def-ab03-efa588e762f7");
}

TEST_CASE("random source: uniform is in [0,1) and roughly uniform", "[unit]") {
    random_source r(7);
    double sum = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        double u = r.uniform("u", "k", static_cast<std::uint64_t>(i));
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        sum += u;
    }
    CHECK(sum / n == Approx(0.5).margin(0.01));
}

TEST_CASE("uuid_v4: RFC 4122 version and variant, distinct per index", "[unit]") {
    random_source r(99);
    std::set<std::string> seen;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        auto id = coldbrew::models::uuid_v4(r, "x", "y", i);
        REQUIRE(id.size() == 36);
        CHECK(id[8] == '-');
        CHECK(id[14] == '4');
        CHECK((id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b'));
        seen.insert(id);
    }
    CHECK(seen.size() == 1000);
    CHECK(coldbrew::models::random_hex(r, "x", "y", 0, 24).size() == 24);
}
