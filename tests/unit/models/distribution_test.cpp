#include "models/distribution/distribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/catch.hpp"

using coldbrew::models::distribution;
using coldbrew::models::distribution_error;
using coldbrew::models::draw;
using coldbrew::models::normal_cdf;
using coldbrew::models::normal_quantile;
using coldbrew::models::parse_distribution;
using coldbrew::models::parse_duration_ms;
using coldbrew::models::random_source;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

std::vector<double> samples(const distribution& d, std::uint64_t seed = 11, int n = 20000) {
    random_source rng(seed);
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        out.push_back(d.sample(rng, "test", "fn", static_cast<std::uint64_t>(i)));
    return out;
}

double fraction_at_or_below(const std::vector<double>& xs, double x) {
    auto n = std::count_if(xs.begin(), xs.end(), [&](double v) { return v <= x; });
    return static_cast<double>(n) / static_cast<double>(xs.size());
}

// The share of 20000 seeded samples at or below each analytic quantile is that quantile
// (±0.015, about four standard errors at the median).
void check_samples_follow_quantiles(const distribution& d) {
    auto xs = samples(d);
    for (double q : {0.05, 0.25, 0.5, 0.75, 0.95, 0.99}) {
        INFO(d.to_string() << " q=" << q);
        CHECK(fraction_at_or_below(xs, d.quantile(q)) == Approx(q).margin(0.015));
    }
}

// cdf(quantile(q)) == q and quantile(cdf(x)) == x for a continuous distribution.
void check_quantile_cdf_inverse(const distribution& d) {
    for (double q : {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}) {
        INFO(d.to_string() << " q=" << q);
        double x = d.quantile(q);
        CHECK(d.cdf(x) == Approx(q).margin(1e-12));
        CHECK(d.quantile(d.cdf(x)) == Approx(x).epsilon(1e-9));
    }
}

struct parse_failure {
    std::size_t offset = 0;
    std::string message;
};

parse_failure parse_error(const std::string& text) {
    try {
        (void)parse_distribution(text);
    } catch (const distribution_error& e) {
        return {e.offset(), e.what()};
    }
    FAIL("no distribution_error for: " << text);
    return {};
}

parse_failure duration_error(const std::string& text) {
    try {
        (void)parse_duration_ms(text);
    } catch (const distribution_error& e) {
        return {e.offset(), e.what()};
    }
    FAIL("no distribution_error for: " << text);
    return {};
}

std::string factory_error(void (*make)()) {
    try {
        make();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// draw

TEST_CASE("draw: the k-th uniform is a pure function of seed, stream, key, index and k", "[unit]") {
    random_source rng(5);
    draw a(rng, "s", "k", 3), b(rng, "s", "k", 3);
    std::vector<double> first;
    for (int k = 0; k < 5; ++k) first.push_back(a.uniform());
    for (int k = 0; k < 5; ++k) CHECK(b.uniform() == first[static_cast<std::size_t>(k)]);
    // Uniforms within one draw differ from each other.
    std::sort(first.begin(), first.end());
    CHECK(std::adjacent_find(first.begin(), first.end()) == first.end());

    draw other_index(rng, "s", "k", 4), other_key(rng, "s", "k2", 3),
        other_stream(rng, "s2", "k", 3);
    draw same(rng, "s", "k", 3);
    double u = same.uniform();
    CHECK(other_index.uniform() != u);
    CHECK(other_key.uniform() != u);
    CHECK(other_stream.uniform() != u);
    CHECK(draw(random_source(6), "s", "k", 3).uniform() != u);
}

TEST_CASE("draw: construction from the random source's bits, pinned", "[unit]") {
    random_source rng(2026);
    const std::uint64_t base = rng.bits("latency", "fn", 0);
    auto expected = [&](std::uint64_t k) {
        return static_cast<double>(
                   coldbrew::models::mix64(base + (k + 1) * 0x9e3779b97f4a7c15ULL) >> 11) *
               0x1.0p-53;
    };
    draw d(rng, "latency", "fn", 0);
    double u0 = d.uniform();
    double u1 = d.uniform();
    double u2 = d.open_uniform();
    CHECK(u0 == expected(0));
    CHECK(u1 == expected(1));
    const std::uint64_t bits2 = coldbrew::models::mix64(base + 3 * 0x9e3779b97f4a7c15ULL);
    CHECK(u2 == (static_cast<double>(bits2 >> 12) + 0.5) * 0x1.0p-52);
    // Changing these changes every seeded run's modeled latencies.
    CHECK(u0 == Approx(0.42396937276772595).epsilon(1e-15));
    CHECK(u1 == Approx(0.62899704660834288).epsilon(1e-15));
    CHECK(u2 == Approx(0.41463885822225588).epsilon(1e-15));
}

TEST_CASE("draw: uniform is in [0, 1), open_uniform in (0, 1), both roughly uniform", "[unit]") {
    random_source rng(9);
    double sum = 0, open_sum = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        draw d(rng, "u", "k", static_cast<std::uint64_t>(i));
        double u = d.uniform();
        double o = d.open_uniform();
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        REQUIRE(o > 0.0);
        REQUIRE(o < 1.0);
        sum += u;
        open_sum += o;
    }
    CHECK(sum / n == Approx(0.5).margin(0.01));
    CHECK(open_sum / n == Approx(0.5).margin(0.01));
}

// ---------------------------------------------------------------------------------------------
// Standard normal

TEST_CASE("normal_quantile: reference values, symmetry and ends", "[unit]") {
    // References: Φ⁻¹ to 20 digits (e.g. NIST/Abramowitz & Stegun; checked with mpmath).
    CHECK(normal_quantile(0.5) == 0.0);
    CHECK(normal_quantile(0.975) == Approx(1.9599639845400542355).epsilon(1e-15));
    CHECK(normal_quantile(0.99) == Approx(2.3263478740408411009).epsilon(1e-15));
    CHECK(normal_quantile(0.84134474606854293) == Approx(1.0).epsilon(1e-15));
    CHECK(normal_quantile(1e-10) == Approx(-6.3613409024040559688).epsilon(1e-15));
    CHECK(normal_quantile(1e-300) == Approx(-37.047096299361201).epsilon(1e-14));
    CHECK(normal_quantile(0.501) == Approx(0.0025066308995717662317).epsilon(1e-15));
    // Exactly antisymmetric: for p >= 0.5, 1 - p is exact.
    for (double p : {1e-12, 0.001, 0.02425, 0.1, 0.3, 0.4999}) {
        const double upper = 1.0 - p;
        CHECK(normal_quantile(upper) == -normal_quantile(1.0 - upper));
    }
    CHECK(normal_quantile(0.0) == -inf);
    CHECK(normal_quantile(1.0) == inf);
    CHECK(std::isnan(normal_quantile(-0.1)));
    CHECK(std::isnan(normal_quantile(1.5)));
}

TEST_CASE("normal_cdf: reference values and inverse of normal_quantile", "[unit]") {
    CHECK(normal_cdf(0.0) == 0.5);
    CHECK(normal_cdf(1.0) == Approx(0.84134474606854293).epsilon(1e-15));
    CHECK(normal_cdf(-1.959963984540054) == Approx(0.025).epsilon(1e-14));
    CHECK(normal_cdf(-inf) == 0.0);
    CHECK(normal_cdf(inf) == 1.0);
    for (double p : {1e-8, 0.01, 0.2, 0.5, 0.7, 0.95, 0.999999}) {
        CHECK(normal_cdf(normal_quantile(p)) == Approx(p).epsilon(1e-13));
    }
}

// ---------------------------------------------------------------------------------------------
// Kinds

TEST_CASE("fixed: every sample, quantile and the step cdf", "[unit]") {
    auto d = distribution::fixed(120);
    CHECK(d.type() == distribution::kind::fixed);
    for (double x : samples(d, 3, 100)) CHECK(x == 120);
    CHECK(d.quantile(0) == 120);
    CHECK(d.quantile(1) == 120);
    CHECK(d.cdf(119.999) == 0.0);
    CHECK(d.cdf(120) == 1.0);
    distribution zero;
    CHECK(zero.type() == distribution::kind::fixed);
    CHECK(zero.quantile(0.5) == 0.0);
    CHECK(zero.to_string() == "fixed(0ms)");
}

TEST_CASE("uniform: range, quantiles, cdf", "[unit]") {
    auto d = distribution::uniform(100, 200);
    CHECK(d.type() == distribution::kind::uniform);
    for (double x : samples(d)) {
        REQUIRE(x >= 100);
        REQUIRE(x < 200);
    }
    check_samples_follow_quantiles(d);
    check_quantile_cdf_inverse(d);
    CHECK(d.quantile(0) == 100);
    CHECK(d.quantile(0.25) == 125);
    CHECK(d.quantile(1) == 200);
    CHECK(d.cdf(50) == 0.0);
    CHECK(d.cdf(150) == 0.5);
    CHECK(d.cdf(250) == 1.0);

    auto point = distribution::uniform(7, 7);
    CHECK(point.sample(random_source(1), "s", "k", 0) == 7);
    CHECK(point.cdf(6.9) == 0.0);
    CHECK(point.cdf(7) == 1.0);
}

TEST_CASE("normal: sample moments, quantiles, cdf", "[unit]") {
    auto d = distribution::normal(100, 10);
    CHECK(d.type() == distribution::kind::normal);
    auto xs = samples(d);
    double mean = 0, var = 0;
    for (double x : xs) mean += x;
    mean /= static_cast<double>(xs.size());
    for (double x : xs) var += (x - mean) * (x - mean);
    var /= static_cast<double>(xs.size() - 1);
    CHECK(mean == Approx(100).margin(0.3));
    CHECK(std::sqrt(var) == Approx(10).margin(0.3));
    check_samples_follow_quantiles(d);
    check_quantile_cdf_inverse(d);
    CHECK(d.quantile(0.5) == 100);
    CHECK(d.quantile(0.975) == Approx(119.599639845400542).epsilon(1e-14));
    CHECK(d.quantile(0) == -inf);
    CHECK(d.quantile(1) == inf);
    CHECK(d.cdf(100) == 0.5);

    auto degenerate = distribution::normal(5, 0);
    CHECK(degenerate.quantile(0) == 5);
    CHECK(degenerate.quantile(1) == 5);
    CHECK(degenerate.sample(random_source(1), "s", "k", 0) == 5);
    CHECK(degenerate.cdf(4.99) == 0.0);
    CHECK(degenerate.cdf(5) == 1.0);
}

TEST_CASE("lognormal: median and p99 are the given values", "[unit]") {
    auto d = distribution::lognormal(140, 190);
    CHECK(d.type() == distribution::kind::lognormal);
    CHECK(d.quantile(0.5) == 140);
    CHECK(d.quantile(0.99) == Approx(190).epsilon(1e-12));
    CHECK(d.cdf(140) == 0.5);
    CHECK(d.cdf(190) == Approx(0.99).epsilon(1e-12));
    CHECK(d.quantile(0) == 0);
    CHECK(d.quantile(1) == inf);
    CHECK(d.cdf(0) == 0);
    CHECK(d.cdf(-1) == 0);
    for (double x : samples(d)) REQUIRE(x > 0);
    check_samples_follow_quantiles(d);
    check_quantile_cdf_inverse(d);
    // sigma = ln(190/140) / z(0.99): p90 = 140 * exp(sigma * z(0.9)).
    double sigma = std::log(190.0 / 140.0) / 2.3263478740408411;
    CHECK(d.quantile(0.9) == Approx(140 * std::exp(sigma * 1.2815515655446004)).epsilon(1e-12));

    auto point = distribution::lognormal(50, 50);
    CHECK(point.quantile(0) == 50);
    CHECK(point.quantile(1) == 50);
    CHECK(point.sample(random_source(1), "s", "k", 0) == 50);
    CHECK(point.cdf(49) == 0);
    CHECK(point.cdf(50) == 1);
}

TEST_CASE("percentiles: passes exactly through its points, log-normal between and beyond",
          "[unit]") {
    auto d = distribution::percentiles({{0.5, 142}, {0.95, 168}, {0.99, 190}});
    CHECK(d.type() == distribution::kind::percentiles);
    CHECK(d.quantile(0.5) == 142);
    CHECK(d.quantile(0.95) == 168);
    CHECK(d.quantile(0.99) == 190);
    CHECK(d.cdf(142) == Approx(0.5).margin(1e-15));
    CHECK(d.cdf(168) == Approx(0.95).epsilon(1e-14));
    CHECK(d.cdf(190) == Approx(0.99).epsilon(1e-14));

    // Between two points ln(value) is linear in z.
    const double z50 = 0.0, z95 = normal_quantile(0.95), z99 = normal_quantile(0.99);
    const double z90 = normal_quantile(0.9);
    CHECK(std::log(d.quantile(0.9)) ==
          Approx(std::log(142.0) + (z90 - z50) / (z95 - z50) * std::log(168.0 / 142.0))
              .epsilon(1e-14));
    // Below the lowest point the first segment's slope continues; above the highest, the last.
    const double z10 = normal_quantile(0.1), z999 = normal_quantile(0.999);
    CHECK(std::log(d.quantile(0.1)) ==
          Approx(std::log(142.0) + (z10 - z50) / (z95 - z50) * std::log(168.0 / 142.0))
              .epsilon(1e-14));
    CHECK(std::log(d.quantile(0.999)) ==
          Approx(std::log(190.0) + (z999 - z99) / (z99 - z95) * std::log(190.0 / 168.0))
              .epsilon(1e-14));
    CHECK(d.quantile(0) == 0);
    CHECK(d.quantile(1) == inf);
    CHECK(d.cdf(0) == 0);
    CHECK(d.cdf(inf) == 1);

    check_samples_follow_quantiles(d);
    check_quantile_cdf_inverse(d);

    // Two points make a plain log-normal.
    auto two = distribution::percentiles({{0.5, 140}, {0.99, 190}});
    auto ln = distribution::lognormal(140, 190);
    for (double q : {0.01, 0.3, 0.5, 0.8, 0.999})
        CHECK(two.quantile(q) == Approx(ln.quantile(q)).epsilon(1e-12));
}

TEST_CASE("empirical: linear quantile table, endpoints exact", "[unit]") {
    auto d = distribution::empirical({{0, 300000}, {0.41, 360000}, {1, 420000}});
    CHECK(d.type() == distribution::kind::empirical);
    CHECK(d.quantile(0) == 300000);
    CHECK(d.quantile(0.41) == 360000);
    CHECK(d.quantile(1) == 420000);
    CHECK(d.quantile(0.205) == Approx(330000).epsilon(1e-12));
    CHECK(d.cdf(299999) == 0);
    CHECK(d.cdf(300000) == 0);
    CHECK(d.cdf(360000) == Approx(0.41).epsilon(1e-15));
    CHECK(d.cdf(420000) == 1);
    CHECK(d.cdf(500000) == 1);
    auto xs = samples(d);
    for (double x : xs) {
        REQUIRE(x >= 300000);
        REQUIRE(x <= 420000);
    }
    CHECK(*std::min_element(xs.begin(), xs.end()) == Approx(300000).margin(120));
    CHECK(*std::max_element(xs.begin(), xs.end()) == Approx(420000).margin(120));
    check_samples_follow_quantiles(d);
    check_quantile_cdf_inverse(d);

    // A repeated value is an atom: the cdf jumps over it and is right-continuous.
    auto atom = distribution::empirical({{0, 0}, {0.3, 0}, {1, 10}});
    CHECK(atom.cdf(-0.001) == 0);
    CHECK(atom.cdf(0) == Approx(0.3));
    CHECK(atom.quantile(0.2) == 0);
    CHECK(atom.quantile(0.65) == Approx(5));
}

TEST_CASE("mixture: component weights, cdf, quantile by bisection", "[unit]") {
    auto d = distribution::mixture({{1, distribution::fixed(0)}, {3, distribution::fixed(10)}});
    CHECK(d.type() == distribution::kind::mixture);
    auto xs = samples(d);
    CHECK(fraction_at_or_below(xs, 0) == Approx(0.25).margin(0.015));
    CHECK(std::count(xs.begin(), xs.end(), 10.0) + std::count(xs.begin(), xs.end(), 0.0) ==
          static_cast<std::ptrdiff_t>(xs.size()));
    CHECK(d.cdf(-1) == 0);
    CHECK(d.cdf(0) == 0.25);
    CHECK(d.cdf(9.99) == 0.25);
    CHECK(d.cdf(10) == 1);
    CHECK(d.quantile(0) == 0);
    CHECK(d.quantile(0.2) == 0);
    CHECK(d.quantile(0.3) == Approx(10).epsilon(1e-12));
    CHECK(d.quantile(1) == 10);

    // Two separated normals: the median sits between them, and cdf/quantile invert.
    auto bimodal = distribution::mixture(
        {{0.5, distribution::normal(100, 10)}, {0.5, distribution::normal(300, 20)}});
    CHECK(bimodal.cdf(200) == Approx(0.5).margin(1e-9));
    check_samples_follow_quantiles(bimodal);
    check_quantile_cdf_inverse(bimodal);
    CHECK(bimodal.quantile(0) == -inf);
    CHECK(bimodal.quantile(1) == inf);

    // The AWS-style phantom mix from the header: half zero, half a log-normal.
    auto half = parse_distribution("mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))");
    auto hs = samples(half);
    CHECK(fraction_at_or_below(hs, 0) == Approx(0.5).margin(0.015));
    CHECK(half.quantile(0.75) == Approx(9100).epsilon(1e-9));
}

TEST_CASE("mixture: the first uniform picks the component, the rest of the draw samples it",
          "[unit]") {
    random_source rng(77);
    auto inner = distribution::uniform(0, 1);
    auto d = distribution::mixture({{1, inner}});
    for (std::uint64_t i = 0; i < 20; ++i) {
        draw expected(rng, "m", "k", i);
        (void)expected.uniform();
        CHECK(d.sample(rng, "m", "k", i) == expected.uniform());
    }
    // Nested mixtures take one uniform per level.
    auto nested = distribution::mixture({{2, distribution::mixture({{1, inner}})}});
    draw expected(rng, "m", "k", 0);
    (void)expected.uniform();
    (void)expected.uniform();
    CHECK(nested.sample(rng, "m", "k", 0) == expected.uniform());
}

TEST_CASE("sampling: deterministic for the same draw, different across indices", "[unit]") {
    const std::vector<std::string> texts = {
        "fixed(1)", "uniform(1, 2)", "normal(mean=0, stddev=1)",
        "lognormal(median=140ms, p99=190ms)", "percentiles(p50=1, p90=2, p99=5)",
        "empirical(0:1, 1:2)", "mixture(1: uniform(1, 2), 1: uniform(3, 4))"};
    random_source a(31), b(31);
    for (const auto& t : texts) {
        INFO(t);
        auto d = parse_distribution(t);
        double first = d.sample(a, "s", "k", 12);
        (void)d.sample(a, "s", "k", 13);  // other draws in between change nothing
        CHECK(d.sample(b, "s", "k", 12) == first);
        CHECK(d.sample(a, "s", "k", 12) == first);
        if (d.type() != distribution::kind::fixed) CHECK(d.sample(a, "s", "k", 14) != first);
    }
}

TEST_CASE("sampling: pinned values for seed 2026, so seeded runs stay reproducible", "[unit]") {
    // If these change, every seeded run's modeled latencies change: a breaking change.
    struct pinned {
        const char* text;
        double values[3];
    };
    const pinned table[] = {
        {"uniform(100ms, 200ms)", {142.3969372767726, 185.30571211678324, 120.77044470106156}},
        {"normal(mean=100ms, stddev=10ms)",
         {98.082509028496872, 110.49635437465149, 91.85587873568852}},
        {"lognormal(median=140ms, p99=190ms)",
         {136.5200317675129, 160.68227254498214, 125.80509637464667}},
        {"percentiles(p50=142ms, p95=168ms, p99=190ms)",
         {139.2438157582452, 158.08309015344102, 130.65729909229498}},
        {"empirical(0:300s, 0.41:360s, 1:420s)",
         {361420.61417976872, 405056.65638994909, 330395.77273326082}},
        {"mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))",
         {0, 8350.2694745433855, 0}},
    };
    random_source rng(2026);
    for (const auto& p : table) {
        INFO(p.text);
        auto d = parse_distribution(p.text);
        for (std::uint64_t i = 0; i < 3; ++i)
            CHECK(d.sample(rng, "latency", "fn", i) == Approx(p.values[i]).epsilon(1e-9));
    }
}

// ---------------------------------------------------------------------------------------------
// Factories

TEST_CASE("factories: out-of-range parameters throw invalid_argument with the reason", "[unit]") {
    CHECK(factory_error([] { (void)distribution::lognormal(140, 100); }) ==
          "lognormal: p99 (100) must be >= median (140)");
    CHECK(factory_error([] { (void)distribution::lognormal(0, 100); }) ==
          "lognormal: median (0) must be > 0");
    CHECK(factory_error([] { (void)distribution::uniform(2, 1); }) ==
          "uniform: lo (2) must be <= hi (1)");
    CHECK(factory_error([] { (void)distribution::normal(0, -1); }) ==
          "normal: stddev (-1) must be >= 0");
    CHECK(factory_error([] { (void)distribution::fixed(inf); }) ==
          "fixed: value (inf) must be finite");
    CHECK(factory_error([] { (void)distribution::percentiles({{0.5, 1}}); }) ==
          "percentiles: needs at least 2 points (got 1)");
    CHECK(factory_error([] { (void)distribution::percentiles({{0, 1}, {0.5, 2}}); }) ==
          "percentiles: quantile (0) must be in (0, 1)");
    CHECK(factory_error([] { (void)distribution::percentiles({{0.5, 0}, {0.9, 2}}); }) ==
          "percentiles: value (0) at q=0.5 must be > 0 and finite");
    CHECK(factory_error([] { (void)distribution::percentiles({{0.9, 1}, {0.5, 2}}); }) ==
          "percentiles: quantiles must be strictly increasing (0.5 after 0.9)");
    CHECK(factory_error([] { (void)distribution::percentiles({{0.5, 2}, {0.9, 2}}); }) ==
          "percentiles: values must be strictly increasing with quantile (2 at q=0.9 after 2 at "
          "q=0.5)");
    CHECK(factory_error([] { (void)distribution::empirical({{0, 1}}); }) ==
          "empirical: needs at least 2 points (got 1)");
    CHECK(factory_error([] { (void)distribution::empirical({{0.1, 1}, {1, 2}}); }) ==
          "empirical: first quantile must be 0 (got 0.1)");
    CHECK(factory_error([] { (void)distribution::empirical({{0, 1}, {0.9, 2}}); }) ==
          "empirical: last quantile must be 1 (got 0.9)");
    CHECK(factory_error([] {
              (void)distribution::empirical({{0, 1}, {0.5, 3}, {0.5, 4}, {1, 5}});
          }) == "empirical: quantiles must be strictly increasing (0.5 after 0.5)");
    CHECK(factory_error([] { (void)distribution::empirical({{0, 3}, {1, 2}}); }) ==
          "empirical: values must not decrease (2 at q=1 after 3 at q=0)");
    CHECK(factory_error([] { (void)distribution::mixture({}); }) ==
          "mixture: needs at least one component");
    CHECK(factory_error([] { (void)distribution::mixture({{0, distribution::fixed(1)}}); }) ==
          "mixture: weight (0) must be > 0 and finite");
    CHECK_THROWS_AS(distribution::fixed(1).quantile(1.5), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Text form

TEST_CASE("parse: every kind, units, free whitespace", "[unit]") {
    CHECK(parse_distribution("fixed(120ms)").quantile(0.5) == 120);
    CHECK(parse_distribution("fixed(120)").quantile(0.5) == 120);
    CHECK(parse_distribution("fixed(1.5s)").quantile(0.5) == 1500);
    CHECK(parse_distribution("fixed(-2)").quantile(0.5) == -2);

    auto u = parse_distribution("uniform(5min, 7min)");
    CHECK(u.type() == distribution::kind::uniform);
    CHECK(u.quantile(0) == 300000);
    CHECK(u.quantile(1) == 420000);

    auto n = parse_distribution("normal(mean=100ms, stddev=10ms)");
    CHECK(n.quantile(0.5) == 100);
    auto n2 = parse_distribution("normal(stddev=10, mean=-100)");  // named: any order
    CHECK(n2.quantile(0.5) == -100);
    CHECK(n2.quantile(0.975) == Approx(-100 + 19.599639845400542).epsilon(1e-14));

    auto ln = parse_distribution("lognormal(median=140ms, p99=190ms)");
    CHECK(ln.type() == distribution::kind::lognormal);
    CHECK(ln.quantile(0.5) == 140);

    auto pc = parse_distribution("percentiles(p99=190ms, p50=142ms, p95=168ms)");  // any order
    CHECK(pc.quantile(0.5) == 142);
    CHECK(pc.quantile(0.95) == 168);
    auto pc2 = parse_distribution("percentiles(p0.1=10, p50=0.1s, p99.9=1s)");
    CHECK(pc2.quantile(0.001) == Approx(10).epsilon(1e-12));
    CHECK(pc2.quantile(99.9 / 100) == 1000);

    auto em = parse_distribution("empirical(0:300s, 0.41:360s, 1:420s)");
    CHECK(em.quantile(0.41) == 360000);

    auto mx = parse_distribution("mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))");
    CHECK(mx.type() == distribution::kind::mixture);
    CHECK(mx.cdf(0) == 0.5);

    auto nested = parse_distribution(
        "mixture(1: fixed(1h), 3: mixture(1: fixed(2h), 1: uniform(1e3, 2e3)))");
    CHECK(nested.cdf(3600000) == Approx(0.25 + 3.0 / 8));
    CHECK(nested.cdf(1000) == 0);
    CHECK(nested.cdf(2000) == Approx(3.0 / 8));

    auto spaced = parse_distribution(
        " \n\tlognormal ( median = 140 ms ,\n   p99=190ms ) \r\n");
    CHECK(spaced.quantile(0.5) == 140);
    CHECK(spaced.quantile(0.99) == Approx(190).epsilon(1e-12));
    auto tight = parse_distribution("mixture(1:fixed(0),1:empirical(0:1,1:2))");
    CHECK(tight.cdf(0) == 0.5);
}

TEST_CASE("parse: errors give the byte offset and what was expected", "[unit]") {
    struct error_case {
        std::string text;
        std::size_t offset;
        std::string message;
    };
    const std::string kinds = "fixed, uniform, normal, lognormal, exponential, percentiles, empirical, mixture";
    const std::string durations = "a duration such as 120ms, 1.5s, 5min or 2h";
    const std::vector<error_case> cases = {
        {"", 0, "expected a distribution (one of " + kinds + ")"},
        {"   ", 3, "expected a distribution (one of " + kinds + ")"},
        {"120ms", 0, "expected a distribution (one of " + kinds + ")"},
        {"lognormall(median=1, p99=2)", 0,
         "unknown distribution 'lognormall' (expected one of " + kinds + ")"},
        {"fixed 120ms", 6, "expected '(' after fixed"},
        {"fixed()", 6, "expected a value for fixed, " + durations},
        {"fixed(120sec)", 9, "unknown unit 'sec' (use ms, s, min or h)"},
        {"fixed(120MS)", 9, "unknown unit 'MS' (use ms, s, min or h)"},
        {"fixed(120 sec)", 10, "expected ')' after fixed argument"},
        {"fixed(5e)", 7, "unknown unit 'e' (use ms, s, min or h)"},
        {"fixed(120ms", 11, "expected ')' after fixed argument"},
        {"fixed(1, 2)", 7, "expected ')' after fixed argument"},
        {"fixed(1e999)", 6, "number '1e999' is out of range"},
        {"fixed(1) x", 9, "unexpected 'x' after the distribution (expected end of text)"},
        {"uniform(1 2)", 10, "expected ',' between uniform arguments, as in uniform(lo, hi)"},
        {"uniform(1, )", 11, "expected a value for uniform hi, " + durations},
        {"uniform(1, 2, 3)", 12, "expected ')' after uniform arguments"},
        {"uniform(2, 1)", 0, "uniform: lo (2) must be <= hi (1)"},
        {"lognormal(median=140ms, p99=190ms", 33, "expected ')' after lognormal arguments"},
        {"lognormal(median=140ms, p99=190ms]", 33, "expected ')' after lognormal arguments"},
        {"lognormal(median=140ms)", 22,
         "lognormal: missing argument 'p99' (expected median=, p99=)"},
        {"lognormal(p99=140ms)", 19,
         "lognormal: missing argument 'median' (expected median=, p99=)"},
        {"lognormal(140ms, 190ms)", 10, "expected an argument name for lognormal (median=, p99=)"},
        {"lognormal(mean=1, p99=2)", 10,
         "unknown argument 'mean' for lognormal (expected median=, p99=)"},
        {"lognormal(median 140ms, p99=2)", 17, "expected '=' after argument name 'median'"},
        {"lognormal(median=1, median=2)", 20, "duplicate argument 'median' for lognormal"},
        {"lognormal(median=1 p99=2)", 19, "expected ',' or ')' after lognormal argument"},
        {"lognormal(median=, p99=2)", 17, "expected a value for lognormal median, " + durations},
        {"lognormal(median=140ms, p99=100ms)", 0, "lognormal: p99 (100) must be >= median (140)"},
        {"normal(mean=1, stddev=-1)", 0, "normal: stddev (-1) must be >= 0"},
        {"normal(mean=1)", 13, "normal: missing argument 'stddev' (expected mean=, stddev=)"},
        {"percentiles(p50=1)", 0, "percentiles: needs at least 2 points (got 1)"},
        {"percentiles()", 12,
         "expected a percentile name such as p50, p99 or p99.9 for percentiles"},
        {"percentiles(p50=1, p100=2)", 19,
         "invalid percentile 'p100' (expected pNN such as p50, p99 or p99.9, between p0 and p100)"},
        {"percentiles(p50=1, q99=2)", 19,
         "invalid percentile 'q99' (expected pNN such as p50, p99 or p99.9, between p0 and p100)"},
        {"percentiles(p50=1, p9.9.9=2)", 19,
         "invalid percentile 'p9.9.9' (expected pNN such as p50, p99 or p99.9, between p0 and "
         "p100)"},
        {"percentiles(p50=1, p50.0=2)", 19, "duplicate percentile 'p50.0' (same as 'p50')"},
        {"percentiles(p50=1 p99=2)", 18, "expected ',' or ')' after percentiles argument"},
        {"percentiles(p50:1, p99=2)", 15, "expected '=' after percentile 'p50'"},
        {"percentiles(p50=2, p99=1)", 0,
         "percentiles: values must be strictly increasing with quantile (1 at q=0.99 after 2 at "
         "q=0.5)"},
        {"percentiles(p50=0, p99=1)", 0, "percentiles: value (0) at q=0.5 must be > 0 and finite"},
        {"empirical(0.1:1, 1:2)", 0, "empirical: first quantile must be 0 (got 0.1)"},
        {"empirical(0:1, 0.5:2)", 0, "empirical: last quantile must be 1 (got 0.5)"},
        {"empirical(0 1)", 12, "expected ':' between quantile and value in empirical (q:value)"},
        {"empirical(0:2, 1:1)", 0, "empirical: values must not decrease (1 at q=1 after 2 at q=0)"},
        {"empirical(a:1)", 10,
         "expected a quantile in [0, 1] for empirical, as in empirical(0:300s, 1:420s)"},
        {"empirical(0:1; 1:2)", 13, "expected ',' or ')' after empirical point"},
        {"mixture(fixed(1))", 8,
         "expected a weight for mixture, as in mixture(0.5: fixed(0), 0.5: fixed(10ms))"},
        {"mixture(0.5 fixed(1))", 12, "expected ':' after mixture weight (weight: distribution)"},
        {"mixture(0: fixed(1))", 0, "mixture: weight (0) must be > 0 and finite"},
        {"mixture(1: fixed(1)", 19, "expected ',' or ')' after mixture component"},
        {"mixture(1: fixed(1), 1: lognormall(median=1, p99=2))", 24,
         "unknown distribution 'lognormall' (expected one of " + kinds + ")"},
        {"mixture(1: fixed(1), 1: uniform(3, 2))", 24, "uniform: lo (3) must be <= hi (2)"},
        {"mixture(1: fixed(1), 1: mixture(1: fixed(1x)))", 42,
         "unknown unit 'x' (use ms, s, min or h)"},
    };
    for (const auto& c : cases) {
        INFO("text: " << c.text);
        auto e = parse_error(c.text);
        CHECK(e.message == c.message);
        CHECK(e.offset == c.offset);
    }

    // Nesting is bounded so hostile text cannot exhaust the stack.
    std::string deep;
    for (int i = 0; i < 40; ++i) deep += "mixture(1: ";
    deep += "fixed(1)";
    for (int i = 0; i < 40; ++i) deep += ")";
    auto e = parse_error(deep);
    CHECK(e.offset == 32 * 11);
    CHECK(e.message == "mixture nested too deeply (at most 32 levels)");
}

TEST_CASE("to_string: canonical text in ms that parses back to the same distribution", "[unit]") {
    struct round_trip {
        std::string text;
        std::string canonical;
    };
    const std::vector<round_trip> cases = {
        {"fixed(120ms)", "fixed(120ms)"},
        {"fixed( 2h )", "fixed(7200000ms)"},
        {"fixed(0.1234567)", "fixed(0.123457ms)"},
        {"fixed(-5)", "fixed(-5ms)"},
        {"uniform(5min, 7min)", "uniform(300000ms, 420000ms)"},
        {"normal(stddev=10ms, mean=100ms)", "normal(mean=100ms, stddev=10ms)"},
        {"lognormal(median=140ms, p99=190ms)", "lognormal(median=140ms, p99=190ms)"},
        {"lognormal(median=9.1s, p99=21s)", "lognormal(median=9100ms, p99=21000ms)"},
        {"percentiles(p99=190ms, p50=142ms, p95=168ms)",
         "percentiles(p50=142ms, p95=168ms, p99=190ms)"},
        {"percentiles(p0.1=1, p99.9=2.5s)", "percentiles(p0.1=1ms, p99.9=2500ms)"},
        {"empirical(0:300s, 0.41:360s, 1:420s)",
         "empirical(0:300000ms, 0.41:360000ms, 1:420000ms)"},
        {"mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))",
         "mixture(0.5: fixed(0ms), 0.5: lognormal(median=9100ms, p99=21000ms))"},
        {"mixture(1:fixed(1),2:mixture(1:normal(mean=-5,stddev=0),3:uniform(1h,2h)))",
         "mixture(1: fixed(1ms), 2: mixture(1: normal(mean=-5ms, stddev=0ms), 3: "
         "uniform(3600000ms, 7200000ms)))"},
        {"fixed(1e-9)", "fixed(1e-09ms)"},
    };
    for (const auto& c : cases) {
        INFO("text: " << c.text);
        auto d = parse_distribution(c.text);
        CHECK(d.to_string() == c.canonical);
        auto again = parse_distribution(d.to_string());
        CHECK(again.to_string() == c.canonical);
        CHECK(again.type() == d.type());
        // Values keep 6 significant digits.
        for (double q : {0.0, 0.1, 0.5, 0.9, 0.999, 1.0}) {
            double x = d.quantile(q);
            if (std::isfinite(x))
                CHECK(again.quantile(q) == Approx(x).epsilon(5e-6));
            else
                CHECK(again.quantile(q) == x);
        }
    }
    // Factory-built distributions round-trip as well.
    auto built = distribution::mixture(
        {{1, distribution::percentiles({{0.5, 142}, {0.999, 400}})},
         {3, distribution::empirical({{0, 1}, {0.25, 2}, {1, 3}})}});
    CHECK(built.to_string() ==
          "mixture(1: percentiles(p50=142ms, p99.9=400ms), 3: empirical(0:1ms, 0.25:2ms, 1:3ms))");
    CHECK(parse_distribution(built.to_string()).to_string() == built.to_string());
}

TEST_CASE("parse_duration_ms: units ms, s, min, h; bare numbers are ms", "[unit]") {
    CHECK(parse_duration_ms("120ms") == 120);
    CHECK(parse_duration_ms("120") == 120);
    CHECK(parse_duration_ms("1.5s") == 1500);
    CHECK(parse_duration_ms("5min") == 300000);
    CHECK(parse_duration_ms("2h") == 7200000);
    CHECK(parse_duration_ms(" 3 s ") == 3000);
    CHECK(parse_duration_ms("1e3ms") == 1000);
    CHECK(parse_duration_ms(".5s") == 500);
    CHECK(parse_duration_ms("-5ms") == -5);
    CHECK(parse_duration_ms("+5") == 5);

    const std::string expected = "expected a duration such as 120ms, 1.5s, 5min or 2h";
    auto e = duration_error("");
    CHECK(e.offset == 0);
    CHECK(e.message == expected);
    e = duration_error("ms");
    CHECK(e.offset == 0);
    CHECK(e.message == expected);
    e = duration_error("5sec");
    CHECK(e.offset == 1);
    CHECK(e.message == "unknown unit 'sec' (use ms, s, min or h)");
    e = duration_error("5 sec");
    CHECK(e.offset == 2);
    CHECK(e.message == "unexpected 's' after the duration (expected end of text)");
    e = duration_error("5ms x");
    CHECK(e.offset == 4);
    CHECK(e.message == "unexpected 'x' after the duration (expected end of text)");
    e = duration_error("1.2.3");
    CHECK(e.offset == 3);
    CHECK(e.message == "unexpected '.' after the duration (expected end of text)");
}

TEST_CASE("distribution: exponential", "[unit]") {
    const distribution d = parse_distribution("exponential(mean=10ms)");
    CHECK(d.type() == distribution::kind::exponential);
    CHECK(d.quantile(0.5) == Approx(10.0 * std::log(2.0)));
    CHECK(d.cdf(10.0) == Approx(1.0 - std::exp(-1.0)));
    CHECK(d.to_string() == "exponential(mean=10ms)");
    CHECK(parse_distribution(d.to_string()).to_string() == d.to_string());
    random_source rng(7);
    double sum = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) sum += d.sample(rng, "s", "k", static_cast<std::uint64_t>(i));
    CHECK(sum / n == Approx(10.0).epsilon(0.03));
    CHECK_THROWS_AS(distribution::exponential(0), std::invalid_argument);
}

TEST_CASE("to_string: a percentile too small for plain digits still reads back", "[unit]") {
    // Found by fuzzing: the name was printed with an exponent ("p8.198552922e-87"), which the
    // grammar's pNN does not take, so the canonical text did not parse.
    const std::string text =
        "percentiles(p0.0000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000008198552921648689606=1, p90.9=2.5s)";
    auto d = parse_distribution(text);
    auto again = parse_distribution(d.to_string());
    CHECK(again.to_string() == d.to_string());
    CHECK(again.quantile(0.909) == Approx(2500));
    CHECK(parse_distribution("percentiles(p0.00001=1, p50=2)").to_string() ==
          "percentiles(p0.00001=1ms, p50=2ms)");
}

TEST_CASE("to_string: table values closer than six digits keep every digit they need", "[unit]") {
    // Six significant digits would print both values as 1ms, and "values must be strictly
    // increasing" would refuse the canonical text.
    for (const char* text : {"percentiles(p50=1.0000001, p90=1.0000002)",
                             "empirical(0:1.0000001, 1:1.0000002)"}) {
        INFO(text);
        auto d = parse_distribution(text);
        auto again = parse_distribution(d.to_string());
        CHECK(again.to_string() == d.to_string());
        CHECK(again.quantile(1.0) == d.quantile(1.0));
    }
    CHECK(parse_distribution("empirical(0:1, 0.5:1, 1:2.0000001)").to_string() ==
          "empirical(0:1ms, 0.5:1ms, 1:2ms)");
}
