#pragma once
// A mergeable latency histogram with bounded relative error and fixed memory, and the
// Wilson score interval used for availability.
//
// Buckets are log-linear, as in HdrHistogram (Gil Tene): values are integer nanoseconds;
// below 2^sub_bits every value has its own bucket, above it each power of two is split into
// 2^(sub_bits-1) equal buckets. With sub_bits = 8 a bucket is at most 1/128 of its lower
// bound wide, so a reported quantile (the bucket's midpoint) is within 0.4% of an exact
// order statistic. Values above 2^max_bits ns (about 39 hours) are counted in the top
// bucket. Counts are integers, so merging is exact, commutative and associative: the same
// samples give the same histogram however they were split across threads.

#include <array>
#include <cstdint>
#include <vector>

namespace coldbrew::models::sim {

class histogram {
public:
    static constexpr int sub_bits = 8;
    static constexpr int max_bits = 47;  // 2^47 ns ≈ 39 h
    static constexpr std::uint64_t linear_limit = 1ull << sub_bits;
    static constexpr int half = 1 << (sub_bits - 1);
    static constexpr std::size_t bucket_count =
        linear_limit + static_cast<std::size_t>(max_bits - sub_bits + 1) * half;
    // The largest relative distance of a reported quantile from the sample it stands for.
    static constexpr double relative_error = 1.0 / (2.0 * half);

    histogram() : counts_(bucket_count, 0) {}

    void record_ns(std::uint64_t ns) noexcept {
        ++counts_[index_of(ns)];
        ++total_;
        sum_us_ += ns / 1000;
        if (ns < min_ns_) min_ns_ = ns;
        if (ns > max_ns_) max_ns_ = ns;
    }
    void record_ms(double ms) noexcept {
        record_ns(ms <= 0 ? 0 : ms >= 1.4e8 ? (1ull << max_bits) : static_cast<std::uint64_t>(ms * 1e6));
    }

    void merge(const histogram& other) noexcept;

    std::uint64_t count() const noexcept { return total_; }
    // Nearest-rank quantile in ms (q in [0, 1]): the midpoint of the bucket holding the
    // ceil(q·n)-th smallest sample, clamped to the exact minimum and maximum. 0 when empty.
    double quantile_ms(double q) const noexcept;
    double mean_ms() const noexcept {
        return total_ ? static_cast<double>(sum_us_) / 1000.0 / static_cast<double>(total_) : 0.0;
    }
    double min_ms() const noexcept { return total_ ? static_cast<double>(min_ns_) / 1e6 : 0.0; }
    double max_ms() const noexcept { return total_ ? static_cast<double>(max_ns_) / 1e6 : 0.0; }
    // Fraction of samples <= ms (bucket resolution).
    double cdf(double ms) const noexcept;

    // Non-empty buckets as (lower bound ms, upper bound ms, count), in order: for plots.
    struct bucket {
        double lo_ms, hi_ms;
        std::uint64_t count;
    };
    std::vector<bucket> buckets() const;

    static std::size_t index_of(std::uint64_t ns) noexcept {
        if (ns < linear_limit) return static_cast<std::size_t>(ns);
        int msb = 63 - __builtin_clzll(ns);
        if (msb > max_bits) return bucket_count - 1;
        const int shift = msb - (sub_bits - 1);  // keep sub_bits significant bits
        return linear_limit + static_cast<std::size_t>(shift - 1) * half +
               static_cast<std::size_t>((ns >> shift) - half);
    }
    // The raw state, so that a histogram can be written out and read back exactly
    // (models/sim/part.hpp): the count in bucket `index` (< bucket_count), the sum of samples
    // in whole µs, and the exact extremes (min_ns is 2^64-1 and max_ns 0 while empty).
    std::uint64_t count_at(std::size_t index) const noexcept { return counts_[index]; }
    std::uint64_t sum_us() const noexcept { return sum_us_; }
    std::uint64_t min_ns() const noexcept { return min_ns_; }
    std::uint64_t max_ns() const noexcept { return max_ns_; }
    // The histogram with that state; the count is the sum of `counts`. Throws
    // std::invalid_argument when counts.size() != bucket_count or min_ns/max_ns lie outside
    // the first/last non-empty bucket.
    static histogram from_state(std::vector<std::uint64_t> counts, std::uint64_t sum_us,
                                std::uint64_t min_ns, std::uint64_t max_ns);

    bool operator==(const histogram&) const = default;

    static std::uint64_t lower_bound_ns(std::size_t index) noexcept;
    static std::uint64_t upper_bound_ns(std::size_t index) noexcept;  // exclusive

private:
    std::vector<std::uint64_t> counts_;
    std::uint64_t total_ = 0;
    std::uint64_t sum_us_ = 0;
    std::uint64_t min_ns_ = ~0ull;
    std::uint64_t max_ns_ = 0;
};

// Wilson score interval for a binomial proportion (successes of n) at normal quantile z
// (1.96 for 95%): E. B. Wilson, "Probable inference, the law of succession, and statistical
// inference", JASA 22 (1927). Returns {0, 1} when n = 0.
struct interval {
    double lo = 0, hi = 1;
};
interval wilson_interval(std::uint64_t successes, std::uint64_t n, double z = 1.959963984540054);

// -log10(1 - a): 99.9% → 3 nines. Infinity when a = 1.
double nines(double availability);

}  // namespace coldbrew::models::sim
