#pragma once
// Network bandwidth of an execution environment, and the token bucket that enforces it.
//
// AWS facts (model-data §5, Lambda quotas page and response-streaming docs, read 2026):
// - Each execution environment gets 625 Mbps.
// - With the raised quota (non-VPC functions only, after a quota increase), bandwidth scales
//   with memory from 2,048 MB up to 3,000 Mbps at 10,240 MB. Below 2,048 MB it stays 625.
//   VPC-attached functions stay at 625 Mbps whatever the quota.
// - A streamed response's first 6 MB go out uncapped, the rest at 2 MBps.
// The numbers live in the profile's `bandwidth:` table (models/profiles/aws-2026.yaml); this
// file only computes with them. Between 2,048 and 10,240 MB the rate is linear (derived:
// (3000 − 625) / (10240 − 2048) ≈ 0.29 Mbps per MB).
//
// Units: rates in bytes per second (1 Mbps = 125,000 B/s; "MB" in a rate is 10^6 bytes, as
// AWS's "2 MBps"), sizes in bytes, time in microseconds (an integer, so the bucket is exact
// to the byte under a manual clock). Pure: no clock is read here.
//
// Both directions: AWS states one figure. coldbrew gives each direction of an environment
// its own bucket of that rate (full duplex, as a NIC), which is an assumption, not a fact.

#include <cstdint>
#include <string>
#include <string_view>

namespace coldbrew::models::bandwidth {

// The profile's `bandwidth:` table.
struct bandwidth_table {
    double default_bytes_per_s = 78'125'000;     // 625 Mbps
    double scalable_from_mb = 2048;              // raised quota: scaling starts here …
    double scalable_to_mb = 10240;               // … and ends here …
    double scalable_max_bytes_per_s = 375'000'000;  // … at 3,000 Mbps
    // The bucket's depth as time at the sustained rate: an environment that was quiet may
    // send this much above the rate at once (measured rates slightly exceed the cap).
    double burst_ms = 10;
    double streaming_uncapped_bytes = 6'291'456;  // 6 MB (MiB, as Lambda's payload limits)
    double streaming_bytes_per_s = 2'000'000;     // 2 MBps
    std::string source;
};

struct environment_network {
    int memory_mb = 128;
    bool vpc = false;                // attached to a VPC (hyperplane or legacy ENI)
    bool scalable = false;           // the raised bandwidth quota applies
};

// The sustained rate of one environment, bytes per second (per direction).
double environment_rate(const bandwidth_table& table, const environment_network& env);

// The bucket's depth in bytes for a rate: rate × burst_ms, at least 64 KiB so one socket
// read always fits.
std::uint64_t burst_bytes(const bandwidth_table& table, double bytes_per_s);

// A rate with a unit: "625Mbps", "3Gbps", "100Kbps", "10MB/s", "2MBps", "512KB/s", "1GB/s",
// "800B/s" (decimal prefixes, case-sensitive b vs B). Returns bytes per second, > 0.
// Throws std::invalid_argument with a message naming what is wrong (no unit, unknown unit,
// not a positive finite number).
double parse_rate(std::string_view text);
// "625 Mbps" / "3 Gbps" / "16 Mbps" style, for banners and `validate`.
std::string format_rate(double bytes_per_s);

// A token bucket: `rate` bytes per second refill up to `capacity` bytes. Starts full at
// `now_us`. Credit is kept in integers (the rate is taken to 0.001 B/s), so after any
// sequence of calls exactly floor(capacity_start + rate × elapsed) bytes have been granted at
// most, and a refill over N µs adds exactly rate × N / 10^6 bytes of credit.
// Time must not go backwards (an earlier now_us is treated as the last one).
class token_bucket {
public:
    // A finite rate outside [0.001, 1e15] B/s is taken as the nearer bound (1e15 B/s is far
    // beyond any loopback, so "faster" changes nothing; a time-scaled rate may land there).
    // Throws std::invalid_argument for a rate that is not a positive number, or capacity 0.
    token_bucket(double bytes_per_s, std::uint64_t capacity_bytes, std::int64_t now_us);

    // Takes up to `want` bytes available at now_us; returns how many were taken (0..want).
    std::uint64_t take(std::uint64_t want, std::int64_t now_us);
    // Takes `n` bytes even when they are not there yet (the balance goes negative, a debt),
    // and returns the time at which the debt is paid, i.e. when those bytes have "left";
    // >= now_us. For payloads delivered whole (an event, a response) after the wait.
    std::int64_t take_all(std::uint64_t n, std::int64_t now_us);
    // The earliest time >= now_us at which `n` bytes (capped at the capacity) are available.
    std::int64_t available_at(std::uint64_t n, std::int64_t now_us) const;
    // Whole bytes available at now_us (0 while in debt).
    std::uint64_t available(std::int64_t now_us) const;

    double rate() const noexcept { return rate_; }
    std::uint64_t capacity() const noexcept { return capacity_; }

private:
    // GCC's and Clang's 128-bit integer; __extension__ keeps -Wpedantic quiet about it.
    __extension__ typedef __int128 wide;
    void refill(std::int64_t now_us);
    wide credit_at(std::int64_t now_us) const;  // credit_ refilled to now_us, unchanged
    wide capacity_units() const;
    double rate_;
    std::int64_t rate_q_ = 0;  // the rate in milli-bytes per second (exact to 0.001 B/s)
    std::uint64_t capacity_;
    // Credit in units of 1e-9 byte (bytes × 10^9), so one microsecond adds exactly rate_q_
    // units and nothing is ever rounded. May be negative (a debt).
    wide credit_ = 0;
    std::int64_t last_us_;
};

// How long a streamed response of `bytes` takes on the wire: the first
// streaming_uncapped_bytes at `environment_bytes_per_s`, the rest at streaming_bytes_per_s
// (or the environment's rate, if that is lower: the 2 MBps is a cap). Seconds.
double streamed_response_seconds(const bandwidth_table& table, double environment_bytes_per_s,
                                 std::uint64_t bytes);

}  // namespace coldbrew::models::bandwidth
