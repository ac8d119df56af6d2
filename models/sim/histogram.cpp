#include "models/sim/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace coldbrew::models::sim {

std::uint64_t histogram::lower_bound_ns(std::size_t index) noexcept {
    if (index < linear_limit) return index;
    const std::size_t k = index - linear_limit;
    const int shift = static_cast<int>(k / half) + 1;
    const std::uint64_t top = static_cast<std::uint64_t>(k % half) + half;
    return top << shift;
}

std::uint64_t histogram::upper_bound_ns(std::size_t index) noexcept {
    if (index < linear_limit) return index + 1;
    const std::size_t k = index - linear_limit;
    const int shift = static_cast<int>(k / half) + 1;
    return lower_bound_ns(index) + (1ull << shift);
}

histogram histogram::from_state(std::vector<std::uint64_t> counts, std::uint64_t sum_us,
                                std::uint64_t min_ns, std::uint64_t max_ns) {
    if (counts.size() != bucket_count)
        throw std::invalid_argument("a histogram has " + std::to_string(bucket_count) + " buckets, not " +
                                    std::to_string(counts.size()));
    histogram h;
    std::size_t first = bucket_count, last = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        if (!counts[i]) continue;
        h.total_ += counts[i];
        if (first == bucket_count) first = i;
        last = i;
    }
    auto inside = [](std::uint64_t ns, std::size_t i) {
        return ns >= lower_bound_ns(i) && (i == bucket_count - 1 || ns < upper_bound_ns(i));
    };
    if (h.total_ == 0) {
        if (sum_us != 0 || min_ns != ~0ull || max_ns != 0)
            throw std::invalid_argument("an empty histogram has sum 0, min 2^64-1 and max 0");
    } else if (!inside(min_ns, first) || !inside(max_ns, last)) {
        throw std::invalid_argument("min_ns and max_ns must lie in the first and last non-empty buckets");
    }
    h.counts_ = std::move(counts);
    h.sum_us_ = sum_us;
    h.min_ns_ = min_ns;
    h.max_ns_ = max_ns;
    return h;
}

void histogram::merge(const histogram& other) noexcept {
    for (std::size_t i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
    sum_us_ += other.sum_us_;
    min_ns_ = std::min(min_ns_, other.min_ns_);
    max_ns_ = std::max(max_ns_, other.max_ns_);
}

double histogram::quantile_ms(double q) const noexcept {
    if (total_ == 0) return 0.0;
    q = std::clamp(q, 0.0, 1.0);
    std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_)));
    if (rank < 1) rank = 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        seen += counts_[i];
        if (seen >= rank) {
            double mid;
            if (i < linear_limit)
                mid = static_cast<double>(i);
            else
                mid = (static_cast<double>(lower_bound_ns(i)) +
                       static_cast<double>(upper_bound_ns(i) - 1)) / 2.0;
            mid = std::clamp(mid, static_cast<double>(min_ns_), static_cast<double>(max_ns_));
            return mid / 1e6;
        }
    }
    return max_ms();
}

double histogram::cdf(double ms) const noexcept {
    if (total_ == 0) return 0.0;
    const double ns = ms * 1e6;
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        if (static_cast<double>(upper_bound_ns(i)) > ns + 1) break;
        below += counts_[i];
    }
    return static_cast<double>(below) / static_cast<double>(total_);
}

std::vector<histogram::bucket> histogram::buckets() const {
    std::vector<bucket> out;
    for (std::size_t i = 0; i < bucket_count; ++i)
        if (counts_[i])
            out.push_back({static_cast<double>(lower_bound_ns(i)) / 1e6,
                           static_cast<double>(upper_bound_ns(i)) / 1e6, counts_[i]});
    return out;
}

interval wilson_interval(std::uint64_t successes, std::uint64_t n, double z) {
    if (n == 0) return {0.0, 1.0};
    const double nn = static_cast<double>(n);
    const double p = static_cast<double>(successes) / nn;
    const double z2 = z * z;
    const double denom = 1.0 + z2 / nn;
    const double centre = (p + z2 / (2 * nn)) / denom;
    const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denom;
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

double nines(double availability) {
    if (availability >= 1.0) return std::numeric_limits<double>::infinity();
    if (availability <= 0.0) return 0.0;
    return -std::log10(1.0 - availability);
}

}  // namespace coldbrew::models::sim
