#pragma once
// Probability distributions over durations and sizes, sampled from the counter-based random
// source so a seeded run draws the same values with any compiler or standard library
// (std::*_distribution output differs between implementations; these do not).
//
// Text form (used by profiles, coldbrew.yaml, the admin API and scenarios); durations take
// a unit suffix ms, s, min or h (a bare number is milliseconds):
//   fixed(120ms)                               always 120
//   uniform(5min, 7min)                        uniform in [lo, hi)
//   normal(mean=100ms, stddev=10ms)            may be negative; duration users clamp at 0
//   lognormal(median=140ms, p99=190ms)         sigma = ln(p99/median) / z(0.99)
//   exponential(mean=10ms)                     memoryless service time (M/M/c queues)
//   percentiles(p50=142ms, p95=168ms, p99=190ms)
//        piecewise log-normal through the given quantiles: between two given points the
//        log of the value is linear in z = Φ⁻¹(q); below the lowest and above the highest
//        point the nearest segment's slope continues (a log-normal tail). Needs >= 2 points,
//        strictly increasing in both q and value, all values > 0.
//   empirical(0:300s, 0.41:360s, 1:420s)       quantile table q:value, linear between
//                                              points; must start at q=0 and end at q=1
//   mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))
//        weights > 0, normalised to sum 1
// Whitespace is free. Errors throw distribution_error with the byte offset into the text.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/random/random_source.hpp"

namespace coldbrew::models {

// A stream of uniform draws for one decision: draw k (k = 0, 1, …) is a pure function of
// (seed, stream, key, index, k). One decision may need several uniforms (a mixture picks a
// component, then samples it); they all come from the same (stream, key, index).
class draw {
public:
    draw(const random_source& rng, std::string_view stream, std::string_view key,
         std::uint64_t index);
    double uniform();  // next value in [0, 1)
    // In (0, 1): never exactly 0, for quantile functions with infinite tails.
    double open_uniform();

private:
    std::uint64_t base_;
    std::uint64_t k_ = 0;
};

class distribution_error : public std::runtime_error {
public:
    distribution_error(std::size_t offset, const std::string& message)
        : std::runtime_error(message), offset_(offset) {}
    std::size_t offset() const noexcept { return offset_; }  // byte offset into the text

private:
    std::size_t offset_;
};

class distribution {
public:
    enum class kind { fixed, uniform, normal, lognormal, percentiles, empirical, mixture, exponential };

    distribution();  // fixed(0)
    static distribution fixed(double value);
    static distribution uniform(double lo, double hi);             // lo <= hi
    static distribution normal(double mean, double stddev);        // stddev >= 0
    static distribution lognormal(double median, double p99);      // 0 < median <= p99
    static distribution exponential(double mean);                  // mean > 0
    // (quantile in (0,1), value > 0), both strictly increasing, >= 2 points.
    static distribution percentiles(std::vector<std::pair<double, double>> points);
    // (quantile in [0,1], value), first q = 0, last q = 1, q strictly and value weakly
    // increasing.
    static distribution empirical(std::vector<std::pair<double, double>> points);
    // (weight > 0, component); weights are normalised.
    static distribution mixture(std::vector<std::pair<double, distribution>> parts);
    // Every factory throws std::invalid_argument on out-of-range parameters.

    kind type() const noexcept { return kind_; }

    // One sample, consuming draws from `d` (1 for most kinds; a mixture takes 1 plus its
    // component's).
    double sample(draw& d) const;
    // Shorthand: sample(draw(rng, stream, key, index)).
    double sample(const random_source& rng, std::string_view stream, std::string_view key,
                  std::uint64_t index) const;

    // Quantile function, q in [0, 1] (q = 0 / 1 may be ±infinity for unbounded kinds).
    // Closed form where one exists; a mixture is inverted numerically (bisection on its CDF).
    double quantile(double q) const;
    // Cumulative distribution function.
    double cdf(double x) const;

    // Canonical text in the grammar above; parse_distribution(to_string()) round-trips.
    // Values print in ms with up to 6 significant digits.
    std::string to_string() const;

private:
    kind kind_ = kind::fixed;
    std::vector<double> a_;  // parameters, by kind
    std::vector<std::pair<double, double>> points_;
    std::vector<std::pair<double, distribution>> parts_;
};

// Parses the text form. Throws distribution_error (offset + message naming what was
// expected) on any syntax or range error.
distribution parse_distribution(std::string_view text);

// Parses a duration "120ms", "1.5s", "5min", "2h" or a bare number (ms) into milliseconds.
// Throws distribution_error.
double parse_duration_ms(std::string_view text);

// Standard normal quantile Φ⁻¹(p), p in (0, 1) (Acklam's rational approximation refined by
// one Halley step, |relative error| < 1e-15 in double), and CDF Φ(x).
double normal_quantile(double p);
double normal_cdf(double x);

}  // namespace coldbrew::models
