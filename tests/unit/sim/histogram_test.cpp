#include "models/sim/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/distribution/distribution.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;
using coldbrew::models::sim::histogram;

TEST_CASE("histogram: quantiles within the relative error bound", "[unit]") {
    const random_source rng(3);
    const distribution d = parse_distribution("lognormal(median=40ms, p99=900ms)");
    histogram h;
    std::vector<double> xs;
    for (std::uint64_t i = 0; i < 100000; ++i) {
        const double x = d.sample(rng, "h", "k", i);
        xs.push_back(x);
        h.record_ms(x);
    }
    std::sort(xs.begin(), xs.end());
    for (double q : {0.5, 0.9, 0.95, 0.99, 0.999}) {
        const double exact = xs[static_cast<std::size_t>(std::ceil(q * xs.size())) - 1];
        // The sample is recorded in whole nanoseconds, so allow that on top of the bound.
        CHECK(std::fabs(h.quantile_ms(q) - exact) <= exact * histogram::relative_error + 1e-6);
    }
    CHECK(h.count() == 100000);
    CHECK(h.min_ms() == Approx(xs.front()).margin(1e-6));
    CHECK(h.max_ms() == Approx(xs.back()).margin(1e-6));
}

TEST_CASE("histogram: merging equals recording everything in one", "[unit]") {
    histogram a, b, all;
    for (int i = 0; i < 5000; ++i) {
        const double x = 0.001 * i * i;
        (i % 3 ? a : b).record_ms(x);
        all.record_ms(x);
    }
    histogram ab = a, ba = b;
    ab.merge(b);
    ba.merge(a);
    for (double q : {0.0, 0.1, 0.5, 0.99, 1.0}) {
        CHECK(ab.quantile_ms(q) == all.quantile_ms(q));
        CHECK(ba.quantile_ms(q) == all.quantile_ms(q));
    }
    CHECK(ab.count() == all.count());
    CHECK(ab.mean_ms() == all.mean_ms());
    CHECK(ab.buckets().size() == all.buckets().size());
    // Bucket bounds round-trip through the index.
    for (std::uint64_t ns : {0ull, 255ull, 256ull, 1000ull, 123456789ull, 1ull << 46}) {
        const std::size_t i = histogram::index_of(ns);
        CHECK(histogram::lower_bound_ns(i) <= ns);
        CHECK(ns < histogram::upper_bound_ns(i));
    }
}

TEST_CASE("histogram: Wilson interval and nines", "[unit]") {
    const auto ci = sim::wilson_interval(9990, 10000);
    CHECK(ci.lo < 0.999);
    CHECK(ci.hi > 0.999);
    CHECK(ci.lo == Approx(0.99816).epsilon(1e-4));
    CHECK(ci.hi == Approx(0.99946).epsilon(1e-4));
    const auto all = sim::wilson_interval(100, 100);
    CHECK(all.hi == 1.0);
    CHECK(all.lo < 1.0);
    CHECK(sim::nines(0.999) == Approx(3.0));
    CHECK(std::isinf(sim::nines(1.0)));
}
