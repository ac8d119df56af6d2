#include "models/distribution/distribution.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <system_error>

namespace coldbrew::models {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double two_pow_minus_53 = 0x1.0p-53;
constexpr double two_pow_minus_52 = 0x1.0p-52;
// Weyl increment (the golden-ratio constant SplitMix64 uses) separating the k-th uniform
// of one draw from the next.
constexpr std::uint64_t weyl = 0x9e3779b97f4a7c15ULL;

// `precision` significant digits, or the shortest text that reads back to the same double
// when precision is 0; locale-independent, unlike printf.
std::string format_number(double v, int precision) {
    char buf[64];
    auto res = precision > 0
                   ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision)
                   : std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

// Six significant digits, printed without an exponent for any practical duration
// ("3600000", not "3.6e+06").
std::string num(double v) {
    if (!std::isfinite(v)) return format_number(v, 0);
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, 5);
    double rounded = v;
    std::from_chars(buf, res.ptr, rounded);
    const double magnitude = std::fabs(rounded);
    if (magnitude != 0.0 && (magnitude < 1e-6 || magnitude >= 1e15))
        return format_number(rounded, 0);
    res = std::to_chars(buf, buf + sizeof buf, rounded, std::chars_format::fixed);
    return std::string(buf, res.ptr);
}
std::string ms(double v) { return num(v) + "ms"; }

// A table's values (percentiles, empirical) in ms: six significant digits, unless that makes
// two different neighbours read the same (the factories require them increasing), then every
// value as the shortest text that reads back to the same double.
std::vector<std::string> point_values(const std::vector<std::pair<double, double>>& points) {
    std::vector<std::string> out;
    bool collapsed = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
        out.push_back(ms(points[i].second));
        if (i > 0 && out[i] == out[i - 1] && points[i].second != points[i - 1].second)
            collapsed = true;
    }
    if (collapsed)
        for (std::size_t i = 0; i < points.size(); ++i)
            out[i] = format_number(points[i].second, 0) + "ms";
    return out;
}

// The name of percentile q without an exponent (the grammar's pNN has none, so "p1e-05"
// would not read back): the fewest significant digits of q * 100 that read back to q exactly
// ("p99.99", not the binary rounding "p99.99000000000001"), written out in full.
std::string percentile_name(double q) {
    char buf[64];
    double pct = q * 100.0;
    for (int digits = 1; digits <= 17; ++digits) {
        auto res = std::to_chars(buf, buf + sizeof buf, q * 100.0, std::chars_format::general, digits);
        double candidate = 0.0;
        std::from_chars(buf, res.ptr, candidate);
        if (candidate / 100.0 == q) {
            pct = candidate;
            break;
        }
    }
    // q in (0, 1): at most 17 significant digits after up to 323 zeros.
    char fixed[512];
    auto res = std::to_chars(fixed, fixed + sizeof fixed, pct, std::chars_format::fixed);
    return "p" + std::string(fixed, res.ptr);
}

[[noreturn]] void invalid(const std::string& message) { throw std::invalid_argument(message); }

void require_finite(const char* what, const char* name, double v) {
    if (!std::isfinite(v))
        invalid(std::string(what) + ": " + name + " (" + num(v) + ") must be finite");
}

double clamp01(double v) { return std::min(1.0, std::max(0.0, v)); }

void require_q(double q) {
    if (!(q >= 0.0 && q <= 1.0)) invalid("quantile: q (" + num(q) + ") must be in [0, 1]");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// draw

draw::draw(const random_source& rng, std::string_view stream, std::string_view key,
           std::uint64_t index)
    : base_(rng.bits(stream, key, index)) {}

double draw::uniform() {
    std::uint64_t x = mix64(base_ + (k_ + 1) * weyl);
    ++k_;
    return static_cast<double>(x >> 11) * two_pow_minus_53;
}

double draw::open_uniform() {
    std::uint64_t x = mix64(base_ + (k_ + 1) * weyl);
    ++k_;
    // 52 bits plus a half: every value is exact, the largest is 1 - 2^-53. With 53 bits the
    // top value 2^53 - 0.5 would round up to exactly 1.
    return (static_cast<double>(x >> 12) + 0.5) * two_pow_minus_52;
}

// ---------------------------------------------------------------------------------------------
// Standard normal

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

namespace {

// Acklam's rational approximation for p in (0, 0.5], refined by one Halley step. Working
// only in the lower half keeps erfc's argument positive, where it has full relative
// precision, and makes the function exactly antisymmetric: Φ⁻¹(1 - p) = -Φ⁻¹(p).
double lower_normal_quantile(double p) {
    static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                   -2.759285104469687e+02, 1.383577518672690e+02,
                                   -3.066479806614716e+01, 2.506628277459239e+00};
    static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                   -1.556989798598866e+02, 6.680131188771972e+01,
                                   -1.328068155288572e+01};
    static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                   -2.400758277161838e+00, -2.549732539343734e+00,
                                   4.374664141464968e+00,  2.938163982698783e+00};
    static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                   2.445134137142996e+00, 3.754408661907416e+00};
    constexpr double p_low = 0.02425;

    double x;
    if (p < p_low) {
        double q = std::sqrt(-2.0 * std::log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else {
        double q = p - 0.5;
        double r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    }
    // Halley step on f(x) = Φ(x) - p. Near the centre Φ(x) - p cancels, so it is taken as
    // erf(x/√2)/2 - (p - 0.5) there, where p - 0.5 is exact (Sterbenz) and erf of a small
    // argument keeps its relative precision; in the tail erfc of a positive argument does.
    double e = p > 0.25 ? 0.5 * std::erf(x / std::numbers::sqrt2) - (p - 0.5)
                        : 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
    double u = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(x * x / 2.0);
    double refined = x - u / (1.0 + x * u / 2.0);
    // exp(x²/2) overflows for the smallest subnormal p; Acklam's 1e-9 is all there is then.
    return std::isfinite(refined) ? refined : x;
}

}  // namespace

double normal_quantile(double p) {
    if (std::isnan(p) || p < 0.0 || p > 1.0) return std::numeric_limits<double>::quiet_NaN();
    if (p == 0.0) return -infinity;
    if (p == 1.0) return infinity;
    if (p == 0.5) return 0.0;
    // 1 - p is exact for p in [0.5, 1] (Sterbenz), so the upper half loses nothing.
    return p < 0.5 ? lower_normal_quantile(p) : -lower_normal_quantile(1.0 - p);
}

// ---------------------------------------------------------------------------------------------
// Factories
//
// Parameters in a_, by kind:
//   fixed       {value}
//   uniform     {lo, hi}
//   normal      {mean, stddev}
//   lognormal   {median, p99, sigma}
//   exponential {mean}
//   percentiles {z_0 … z_{n-1}, slope_0 … slope_{n-2}}  (slope: d ln(value) / dz per segment)
//   empirical   {}                                       (points_ only)
//   mixture     {weight as given, …}                     (parts_ hold normalised weights)

distribution::distribution() : a_{0.0} {}

distribution distribution::fixed(double value) {
    require_finite("fixed", "value", value);
    distribution d;
    d.kind_ = kind::fixed;
    d.a_ = {value};
    return d;
}

distribution distribution::uniform(double lo, double hi) {
    require_finite("uniform", "lo", lo);
    require_finite("uniform", "hi", hi);
    if (lo > hi) invalid("uniform: lo (" + num(lo) + ") must be <= hi (" + num(hi) + ")");
    distribution d;
    d.kind_ = kind::uniform;
    d.a_ = {lo, hi};
    return d;
}

distribution distribution::normal(double mean, double stddev) {
    require_finite("normal", "mean", mean);
    require_finite("normal", "stddev", stddev);
    if (stddev < 0.0) invalid("normal: stddev (" + num(stddev) + ") must be >= 0");
    distribution d;
    d.kind_ = kind::normal;
    d.a_ = {mean, stddev};
    return d;
}

distribution distribution::lognormal(double median, double p99) {
    require_finite("lognormal", "median", median);
    require_finite("lognormal", "p99", p99);
    if (median <= 0.0) invalid("lognormal: median (" + num(median) + ") must be > 0");
    if (p99 < median)
        invalid("lognormal: p99 (" + num(p99) + ") must be >= median (" + num(median) + ")");
    distribution d;
    d.kind_ = kind::lognormal;
    d.a_ = {median, p99, std::log(p99 / median) / normal_quantile(0.99)};
    return d;
}

distribution distribution::exponential(double mean) {
    require_finite("exponential", "mean", mean);
    if (!(mean > 0.0)) invalid("exponential: mean (" + num(mean) + ") must be > 0");
    distribution d;
    d.kind_ = kind::exponential;
    d.a_ = {mean};
    return d;
}

distribution distribution::percentiles(std::vector<std::pair<double, double>> points) {
    if (points.size() < 2)
        invalid("percentiles: needs at least 2 points (got " + std::to_string(points.size()) + ")");
    for (std::size_t i = 0; i < points.size(); ++i) {
        auto [q, v] = points[i];
        if (!(q > 0.0 && q < 1.0))
            invalid("percentiles: quantile (" + num(q) + ") must be in (0, 1)");
        if (!(v > 0.0) || !std::isfinite(v))
            invalid("percentiles: value (" + num(v) + ") at q=" + num(q) +
                    " must be > 0 and finite");
        if (i == 0) continue;
        auto [pq, pv] = points[i - 1];
        if (!(q > pq))
            invalid("percentiles: quantiles must be strictly increasing (" + num(q) + " after " +
                    num(pq) + ")");
        if (!(v > pv))
            invalid("percentiles: values must be strictly increasing with quantile (" + num(v) +
                    " at q=" + num(q) + " after " + num(pv) + " at q=" + num(pq) + ")");
    }
    const std::size_t n = points.size();
    distribution d;
    d.kind_ = kind::percentiles;
    d.a_.assign(2 * n - 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) d.a_[i] = normal_quantile(points[i].first);
    for (std::size_t i = 0; i + 1 < n; ++i) {
        double dz = d.a_[i + 1] - d.a_[i];
        double slope = std::log(points[i + 1].second / points[i].second) / dz;
        if (!(dz > 0.0) || !(slope > 0.0) || !std::isfinite(slope))
            invalid("percentiles: points at q=" + num(points[i].first) + " and q=" +
                    num(points[i + 1].first) + " are too close to tell apart");
        d.a_[n + i] = slope;
    }
    d.points_ = std::move(points);
    return d;
}

distribution distribution::empirical(std::vector<std::pair<double, double>> points) {
    if (points.size() < 2)
        invalid("empirical: needs at least 2 points (got " + std::to_string(points.size()) + ")");
    if (points.front().first != 0.0)
        invalid("empirical: first quantile must be 0 (got " + num(points.front().first) + ")");
    if (points.back().first != 1.0)
        invalid("empirical: last quantile must be 1 (got " + num(points.back().first) + ")");
    for (std::size_t i = 0; i < points.size(); ++i) {
        auto [q, v] = points[i];
        if (!std::isfinite(v))
            invalid("empirical: value (" + num(v) + ") at q=" + num(q) + " must be finite");
        if (i == 0) continue;
        auto [pq, pv] = points[i - 1];
        if (!(q > pq))
            invalid("empirical: quantiles must be strictly increasing (" + num(q) + " after " +
                    num(pq) + ")");
        if (v < pv)
            invalid("empirical: values must not decrease (" + num(v) + " at q=" + num(q) +
                    " after " + num(pv) + " at q=" + num(pq) + ")");
    }
    distribution d;
    d.kind_ = kind::empirical;
    d.a_.clear();
    d.points_ = std::move(points);
    return d;
}

distribution distribution::mixture(std::vector<std::pair<double, distribution>> parts) {
    if (parts.empty()) invalid("mixture: needs at least one component");
    double total = 0.0;
    for (const auto& [w, _] : parts) {
        if (!(w > 0.0) || !std::isfinite(w))
            invalid("mixture: weight (" + num(w) + ") must be > 0 and finite");
        total += w;
    }
    if (!std::isfinite(total)) invalid("mixture: weights must sum to a finite number");
    distribution d;
    d.kind_ = kind::mixture;
    d.a_.clear();
    for (auto& [w, part] : parts) {
        d.a_.push_back(w);
        w /= total;
    }
    d.parts_ = std::move(parts);
    return d;
}

// ---------------------------------------------------------------------------------------------
// Sampling

double distribution::sample(draw& d) const {
    switch (kind_) {
    case kind::fixed:
        // Consumes its uniform like every other simple kind, so swapping a fixed value for a
        // random one in a mixture does not shift the draws that follow.
        (void)d.uniform();
        return a_[0];
    case kind::uniform:
        return a_[0] + (a_[1] - a_[0]) * d.uniform();
    case kind::normal:
        return a_[0] + a_[1] * normal_quantile(d.open_uniform());
    case kind::lognormal:
        return a_[0] * std::exp(a_[2] * normal_quantile(d.open_uniform()));
    case kind::exponential:
        // 1 - u is in (0, 1]: log never sees 0.
        return -a_[0] * std::log1p(-d.uniform());
    case kind::percentiles:
        return quantile(d.open_uniform());
    case kind::empirical:
        return quantile(d.uniform());
    case kind::mixture: {
        double u = d.uniform();
        double acc = 0.0;
        for (const auto& [w, part] : parts_) {
            acc += w;
            if (u < acc) return part.sample(d);
        }
        return parts_.back().second.sample(d);  // u above a sum rounded below 1
    }
    }
    return 0.0;
}

double distribution::sample(const random_source& rng, std::string_view stream,
                            std::string_view key, std::uint64_t index) const {
    draw d(rng, stream, key, index);
    return sample(d);
}

// ---------------------------------------------------------------------------------------------
// Quantile and CDF

double distribution::quantile(double q) const {
    require_q(q);
    switch (kind_) {
    case kind::fixed:
        return a_[0];
    case kind::uniform:
        return q == 1.0 ? a_[1] : a_[0] + (a_[1] - a_[0]) * q;
    case kind::normal:
        if (a_[1] == 0.0) return a_[0];
        return a_[0] + a_[1] * normal_quantile(q);
    case kind::lognormal:
        if (a_[2] == 0.0) return a_[0];
        return a_[0] * std::exp(a_[2] * normal_quantile(q));
    case kind::exponential:
        return q == 1.0 ? infinity : -a_[0] * std::log1p(-q);
    case kind::percentiles: {
        // value = v_i * exp(slope * (z - z_i)) from the nearest given point at or below z,
        // which is exact at every given point.
        const std::size_t n = points_.size();
        const double z = normal_quantile(q);
        std::size_t i = static_cast<std::size_t>(
            std::upper_bound(a_.begin(), a_.begin() + static_cast<std::ptrdiff_t>(n), z) -
            a_.begin());
        i = i == 0 ? 0 : i - 1;
        const double slope = a_[n + std::min(i, n - 2)];
        return points_[i].second * std::exp(slope * (z - a_[i]));
    }
    case kind::empirical: {
        auto it = std::upper_bound(points_.begin(), points_.end(), q,
                                   [](double x, const auto& p) { return x < p.first; });
        std::size_t i = static_cast<std::size_t>(it - points_.begin()) - 1;  // q_i <= q
        if (i + 1 == points_.size()) return points_[i].second;
        auto [q0, v0] = points_[i];
        auto [q1, v1] = points_[i + 1];
        return v0 + (v1 - v0) * ((q - q0) / (q1 - q0));
    }
    case kind::mixture: {
        double lo = infinity, hi = -infinity;
        for (const auto& [w, part] : parts_) {
            double x = part.quantile(q);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        if (q == 0.0) return lo;
        if (q == 1.0) return hi;
        // Every component has reached q at hi and none at just below lo, so the mixture's
        // quantile lies in [lo, hi]: bisect for the smallest x with cdf(x) >= q.
        if (lo == hi || cdf(lo) >= q) return lo;
        for (int iter = 0; iter < 2000; ++iter) {
            double mid = lo + (hi - lo) / 2.0;
            if (!(mid > lo && mid < hi)) break;
            if (cdf(mid) >= q)
                hi = mid;
            else
                lo = mid;
        }
        return hi;
    }
    }
    return 0.0;
}

double distribution::cdf(double x) const {
    if (std::isnan(x)) return x;
    switch (kind_) {
    case kind::fixed:
        return x >= a_[0] ? 1.0 : 0.0;
    case kind::uniform:
        if (a_[0] == a_[1]) return x >= a_[0] ? 1.0 : 0.0;
        return clamp01((x - a_[0]) / (a_[1] - a_[0]));
    case kind::normal:
        if (a_[1] == 0.0) return x >= a_[0] ? 1.0 : 0.0;
        return normal_cdf((x - a_[0]) / a_[1]);
    case kind::lognormal:
        if (x <= 0.0) return 0.0;
        if (a_[2] == 0.0) return x >= a_[0] ? 1.0 : 0.0;
        return normal_cdf(std::log(x / a_[0]) / a_[2]);
    case kind::exponential:
        return x <= 0.0 ? 0.0 : -std::expm1(-x / a_[0]);
    case kind::percentiles: {
        if (x <= 0.0) return 0.0;
        const std::size_t n = points_.size();
        auto it = std::upper_bound(points_.begin(), points_.end(), x,
                                   [](double v, const auto& p) { return v < p.second; });
        std::size_t i = static_cast<std::size_t>(it - points_.begin());
        i = i == 0 ? 0 : i - 1;
        const double slope = a_[n + std::min(i, n - 2)];
        return normal_cdf(a_[i] + std::log(x / points_[i].second) / slope);
    }
    case kind::empirical: {
        // Right-continuous: at a repeated value the CDF jumps to that value's last quantile.
        auto it = std::upper_bound(points_.begin(), points_.end(), x,
                                   [](double v, const auto& p) { return v < p.second; });
        if (it == points_.begin()) return 0.0;
        if (it == points_.end()) return 1.0;
        auto [q0, v0] = *(it - 1);
        auto [q1, v1] = *it;
        return q0 + (q1 - q0) * ((x - v0) / (v1 - v0));
    }
    case kind::mixture: {
        double sum = 0.0;
        for (const auto& [w, part] : parts_) sum += w * part.cdf(x);
        return clamp01(sum);
    }
    }
    return 0.0;
}

// ---------------------------------------------------------------------------------------------
// Text

std::string distribution::to_string() const {
    std::string out;
    switch (kind_) {
    case kind::fixed:
        return "fixed(" + ms(a_[0]) + ")";
    case kind::uniform:
        return "uniform(" + ms(a_[0]) + ", " + ms(a_[1]) + ")";
    case kind::normal:
        return "normal(mean=" + ms(a_[0]) + ", stddev=" + ms(a_[1]) + ")";
    case kind::lognormal:
        return "lognormal(median=" + ms(a_[0]) + ", p99=" + ms(a_[1]) + ")";
    case kind::exponential:
        return "exponential(mean=" + ms(a_[0]) + ")";
    case kind::percentiles: {
        out = "percentiles(";
        auto values = point_values(points_);
        for (std::size_t i = 0; i < points_.size(); ++i) {
            if (i) out += ", ";
            out += percentile_name(points_[i].first) + "=" + values[i];
        }
        return out + ")";
    }
    case kind::empirical: {
        out = "empirical(";
        auto values = point_values(points_);
        for (std::size_t i = 0; i < points_.size(); ++i) {
            if (i) out += ", ";
            out += format_number(points_[i].first, 0) + ":" + values[i];
        }
        return out + ")";
    }
    case kind::mixture:
        out = "mixture(";
        for (std::size_t i = 0; i < parts_.size(); ++i) {
            if (i) out += ", ";
            out += format_number(a_[i], 0) + ": " + parts_[i].second.to_string();
        }
        return out + ")";
    }
    return out;
}

}  // namespace coldbrew::models
