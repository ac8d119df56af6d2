// Network bandwidth of an execution environment: the rate model, the token bucket under a
// manual clock (exact to the byte), rate text, and streamed responses.

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "models/bandwidth/bandwidth.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models::bandwidth;

namespace {

constexpr double mbps = 125'000;  // bytes per second in 1 Mbps

double rate_of(int memory_mb, bool vpc, bool scalable, const bandwidth_table& t = {}) {
    environment_network env;
    env.memory_mb = memory_mb;
    env.vpc = vpc;
    env.scalable = scalable;
    return environment_rate(t, env);
}

std::string parse_error(const std::string& text) {
    try {
        (void)parse_rate(text);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "<no error>";
}

// floor(rate × us / 10^6) in exact integer arithmetic, for integral rates (rate × us must
// fit in 64 bits).
std::uint64_t refill_bytes(std::uint64_t rate, std::uint64_t us) {
    return rate * us / 1'000'000;
}

}  // namespace

// --- the rate model -----------------------------------------------------------------------

TEST_CASE("bandwidth: 625 Mbps by default, whatever the memory", "[unit]") {
    for (int mb : {128, 1024, 2048, 4096, 10240}) {
        INFO(mb);
        CHECK(rate_of(mb, false, false) == 625 * mbps);
        // VPC functions never get the raised quota (Lambda quotas page).
        CHECK(rate_of(mb, true, true) == 625 * mbps);
        CHECK(rate_of(mb, true, false) == 625 * mbps);
    }
}

TEST_CASE("bandwidth: the raised quota scales linearly from 2,048 to 10,240 MB", "[unit]") {
    CHECK(rate_of(128, false, true) == 625 * mbps);
    CHECK(rate_of(2047, false, true) == 625 * mbps);
    CHECK(rate_of(2048, false, true) == Approx(625 * mbps));
    CHECK(rate_of(10240, false, true) == 3000 * mbps);
    CHECK(rate_of(20000, false, true) == 3000 * mbps);  // clamped
    // Halfway, 6,144 MB: halfway between 625 and 3,000 Mbps.
    CHECK(rate_of(6144, false, true) == Approx(1812.5 * mbps));
    // The slope: (3000 - 625) / (10240 - 2048) ≈ 0.29 Mbps per MB.
    const double slope = (rate_of(4096, false, true) - rate_of(3072, false, true)) / 1024 / mbps;
    CHECK(slope == Approx(2375.0 / 8192));
    // Rising with memory, never above the maximum.
    double last = 0;
    for (int mb = 128; mb <= 10240; mb += 64) {
        const double r = rate_of(mb, false, true);
        CHECK(r >= last);
        CHECK(r <= 3000 * mbps);
        last = r;
    }

    // The table's numbers, not constants, drive it.
    bandwidth_table t;
    t.default_bytes_per_s = 100;
    t.scalable_from_mb = 1000;
    t.scalable_to_mb = 2000;
    t.scalable_max_bytes_per_s = 300;
    CHECK(rate_of(500, false, true, t) == 100);
    CHECK(rate_of(1500, false, true, t) == Approx(200));
    CHECK(rate_of(2500, false, true, t) == 300);
    CHECK(rate_of(2500, false, false, t) == 100);
}

TEST_CASE("bandwidth: the burst is burst_ms of the rate, at least 64 KiB", "[unit]") {
    bandwidth_table t;  // 10 ms
    CHECK(burst_bytes(t, 625 * mbps) == 781'250);
    CHECK(burst_bytes(t, 3000 * mbps) == 3'750'000);
    CHECK(burst_bytes(t, 1000) == 65536);
    t.burst_ms = 0;
    CHECK(burst_bytes(t, 625 * mbps) == 65536);
    t.burst_ms = 1000;
    CHECK(burst_bytes(t, 1e6 + 0.9) == 1'000'000);  // whole bytes, rounded down
}

// --- rate text ----------------------------------------------------------------------------

TEST_CASE("parse_rate: bits and bytes, decimal prefixes, an optional space", "[unit]") {
    CHECK(parse_rate("625Mbps") == 78'125'000);
    CHECK(parse_rate("625 Mbps") == 78'125'000);
    CHECK(parse_rate("3Gbps") == 375'000'000);
    CHECK(parse_rate("100Kbps") == 12'500);
    CHECK(parse_rate("100kbps") == 12'500);
    CHECK(parse_rate("800bps") == 100);
    CHECK(parse_rate("10MB/s") == 10'000'000);
    CHECK(parse_rate("2MBps") == 2'000'000);
    CHECK(parse_rate("2 MBps") == 2'000'000);
    CHECK(parse_rate("512KB/s") == 512'000);
    CHECK(parse_rate("512kB/s") == 512'000);
    CHECK(parse_rate("1GB/s") == 1e9);
    CHECK(parse_rate("1GBps") == 1e9);
    CHECK(parse_rate("800B/s") == 800);
    CHECK(parse_rate("800Bps") == 800);
    CHECK(parse_rate("1.5Mbps") == 187'500);
    CHECK(parse_rate("  16Mbps ") == 2'000'000);  // surrounding blanks
    CHECK(parse_rate("1e3Kbps") == 125'000);
}

TEST_CASE("parse_rate: errors say what is wrong", "[unit]") {
    CHECK(parse_error("625").find("\"625\" has no unit") == 0);
    CHECK(parse_error("625 ").find("has no unit") != std::string::npos);
    CHECK(parse_error("10 furlongs").find("unknown unit \"furlongs\" in \"10 furlongs\"") == 0);
    CHECK(parse_error("10 furlongs").find("Mbps") != std::string::npos);  // lists the units
    CHECK(parse_error("10MB").find("did you mean \"MB/s\"?") != std::string::npos);
    CHECK(parse_error("10mbps").find("unknown unit \"mbps\"") == 0);  // b vs B is meaningful
    CHECK(parse_error("10MiB/s").find("unknown unit") == 0);
    CHECK(parse_error("10  Mbps").find("unknown unit") == 0);  // one space at most
    CHECK(parse_error("-5Mbps").find("greater than 0") != std::string::npos);
    CHECK(parse_error("0Mbps").find("greater than 0") != std::string::npos);
    CHECK(parse_error("0 B/s").find("greater than 0") != std::string::npos);
    CHECK(parse_error("NaN Mbps").find("positive finite number") != std::string::npos);
    CHECK(parse_error("nanMbps").find("positive finite number") != std::string::npos);
    CHECK(parse_error("inf Mbps").find("positive finite number") != std::string::npos);
    CHECK(parse_error("1e400Mbps").find("out of range") != std::string::npos);
    CHECK(parse_error("1e308GB/s").find("too large") != std::string::npos);
    CHECK(parse_error("Mbps").find("must start with a number") != std::string::npos);
    CHECK(parse_error("+5Mbps").find("must start with a number") != std::string::npos);
    CHECK(parse_error("fast").find("must start with a number") != std::string::npos);
    CHECK(parse_error("").find("got nothing") != std::string::npos);
    CHECK(parse_error("   ").find("got nothing") != std::string::npos);
}

TEST_CASE("format_rate: the largest bit unit that keeps the number at least 1", "[unit]") {
    CHECK(format_rate(78'125'000) == "625 Mbps");
    CHECK(format_rate(375'000'000) == "3 Gbps");
    CHECK(format_rate(2'000'000) == "16 Mbps");
    CHECK(format_rate(12'500) == "100 Kbps");
    CHECK(format_rate(100) == "800 bps");
    CHECK(format_rate(1234.5678 * mbps) == "1.235 Gbps");
    // What it prints, parse_rate reads back (to its four digits).
    for (double r : {78'125'000.0, 375'000'000.0, 2'000'000.0, 12'500.0, 100.0})
        CHECK(parse_rate(format_rate(r)) == Approx(r));
}

// --- the token bucket ---------------------------------------------------------------------

TEST_CASE("token_bucket: starts full; takes drain it", "[unit]") {
    token_bucket b(1'000'000, 10'000, 0);
    CHECK(b.rate() == 1'000'000);
    CHECK(b.capacity() == 10'000);
    CHECK(b.available(0) == 10'000);
    CHECK(b.take(4'000, 0) == 4'000);
    CHECK(b.available(0) == 6'000);
    CHECK(b.take(10'000, 0) == 6'000);  // only what is there
    CHECK(b.available(0) == 0);
    CHECK(b.take(1, 0) == 0);
    CHECK(b.take(0, 0) == 0);
}

TEST_CASE("token_bucket: a refill over N µs gives exactly floor(rate × N / 10^6) bytes",
          "[unit]") {
    // 78,125,000 B/s (625 Mbps): 78.125 bytes per µs, so fractions carry over between calls.
    const std::uint64_t rate = 78'125'000;
    token_bucket b(static_cast<double>(rate), 1'000'000'000, 0);
    REQUIRE(b.take(1'000'000'000, 0) == 1'000'000'000);
    std::int64_t now = 0;
    std::uint64_t granted = 0;
    for (std::int64_t step : {1, 3, 7, 8, 13, 1000, 999, 12345, 1, 1}) {
        now += step;
        granted += b.take(std::numeric_limits<std::uint64_t>::max(), now);
        INFO(now);
        CHECK(granted == refill_bytes(rate, static_cast<std::uint64_t>(now)));
    }
    // Without takes in between, the same.
    token_bucket c(static_cast<double>(rate), 1'000'000'000, 0);
    REQUIRE(c.take(1'000'000'000, 0) == 1'000'000'000);
    CHECK(c.available(7) == 546);  // 78.125 × 7 = 546.875
    CHECK(c.available(8) == 625);
    CHECK(c.available(1'000'000) == rate);

    // A fractional rate: 0.5 B/s gives a byte every 2 s.
    token_bucket slow(0.5, 10, 0);
    REQUIRE(slow.take(10, 0) == 10);
    CHECK(slow.available(1'999'999) == 0);
    CHECK(slow.available(2'000'000) == 1);
    CHECK(slow.take(5, 9'000'000) == 4);
    CHECK(slow.take(5, 10'000'000) == 1);  // the half byte left over at 9 s counts
}

TEST_CASE("token_bucket: credit is capped at the capacity", "[unit]") {
    token_bucket b(1000, 500, 0);
    CHECK(b.take(500, 0) == 500);
    CHECK(b.available(250'000) == 250);
    CHECK(b.available(500'000) == 500);
    CHECK(b.available(10'000'000) == 500);
    CHECK(b.take(1'000, 10'000'000) == 500);
    // The idle time above the cap is not banked.
    CHECK(b.available(10'000'001) == 0);
    CHECK(b.available(10'001'000) == 1);
}

TEST_CASE("token_bucket: take_all runs a debt and says when it is paid", "[unit]") {
    token_bucket b(1000, 100, 0);  // 1 byte per ms
    // 100 bytes are there; 900 more take 900 ms.
    CHECK(b.take_all(1000, 0) == 900'000);
    CHECK(b.available(0) == 0);
    CHECK(b.available(899'999) == 0);
    CHECK(b.available(900'000) == 0);  // paid off exactly, nothing over
    CHECK(b.available(901'000) == 1);
    CHECK(b.take(1, 500'000) == 0);  // still in debt
    // A second payload queues behind the first.
    CHECK(b.take_all(10, 500'000) == 910'000);
    // A payload that fits leaves at once.
    token_bucket c(1000, 100, 0);
    CHECK(c.take_all(60, 5) == 5);
    CHECK(c.available(5) == 40);
    // Payoff is rounded up to the microsecond: 1 byte at 3 B/s is 333,333.3 µs.
    token_bucket d(3, 1, 0);
    CHECK(d.take_all(2, 0) == 333'334);
}

TEST_CASE("token_bucket: available_at is the earliest time n bytes are there", "[unit]") {
    token_bucket b(1000, 100, 0);
    CHECK(b.available_at(50, 0) == 0);
    CHECK(b.take(100, 0) == 100);
    CHECK(b.available_at(1, 0) == 1000);
    CHECK(b.available_at(50, 0) == 50'000);
    CHECK(b.available_at(50, 20'000) == 50'000);
    CHECK(b.available_at(50, 60'000) == 60'000);
    // More than the capacity is capped at it (it could never all be there at once).
    CHECK(b.available_at(1'000, 0) == 100'000);
    // It does not change the bucket.
    CHECK(b.available(0) == 0);
    CHECK(b.take(50, 50'000) == 50);
    // In debt: the debt first.
    token_bucket c(1000, 100, 0);
    CHECK(c.take_all(300, 0) == 200'000);
    CHECK(c.available_at(10, 0) == 210'000);
}

TEST_CASE("token_bucket: time going backwards is ignored", "[unit]") {
    token_bucket b(1000, 100, 1'000'000);
    CHECK(b.take(100, 1'000'000) == 100);
    CHECK(b.available(2'000) == 0);  // earlier than the last call: treated as the last
    CHECK(b.take(10, 500'000) == 0);
    CHECK(b.available(1'010'000) == 10);
    CHECK(b.take(10, 1'010'000) == 10);
    // An earlier time neither refills nor rewinds the clock.
    CHECK(b.take(10, 0) == 0);
    CHECK(b.available(1'020'000) == 10);
    CHECK(b.available_at(20, 0) == 1'030'000);
    CHECK(b.take_all(10, 0) == 1'020'000);
}

TEST_CASE("token_bucket: huge idle gaps and rates do not overflow", "[unit]") {
    constexpr std::int64_t min_time = std::numeric_limits<std::int64_t>::min();
    constexpr std::int64_t max_time = std::numeric_limits<std::int64_t>::max();
    constexpr std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
    token_bucket b(1e15, max_bytes, min_time);
    CHECK(b.take(max_bytes, min_time) == max_bytes);
    CHECK(b.available(max_time) == max_bytes);
    CHECK(b.take(max_bytes, max_time) == max_bytes);
    CHECK(b.available(max_time) == 0);

    // A debt far beyond the end of time saturates rather than wraps.
    token_bucket slow(0.001, 1, max_time - 10);
    CHECK(slow.take_all(max_bytes, max_time - 10) == max_time);
    CHECK(slow.available_at(1, max_time - 10) == max_time);

    token_bucket fast(625 * mbps, 3'906'250, 0);
    CHECK(fast.take(3'906'250, 0) == 3'906'250);
    // A year idle: full, not more.
    const std::int64_t year_us = 365LL * 24 * 3600 * 1'000'000;
    CHECK(fast.available(year_us) == 3'906'250);
}

TEST_CASE("token_bucket: rates that are not positive numbers and capacity 0 are errors; "
          "rates out of range are taken as the nearer bound", "[unit]") {
    CHECK_THROWS_AS(token_bucket(0, 100, 0), std::invalid_argument);
    CHECK_THROWS_AS(token_bucket(-1, 100, 0), std::invalid_argument);
    CHECK_THROWS_AS(token_bucket(std::nan(""), 100, 0), std::invalid_argument);
    CHECK_THROWS_AS(token_bucket(1000, 0, 0), std::invalid_argument);
    CHECK(token_bucket(0.0001, 100, 0).rate() == 0.001);
    CHECK(token_bucket(2e15, 100, 0).rate() == 1e15);
    CHECK(token_bucket(std::numeric_limits<double>::infinity(), 100, 0).rate() == 1e15);
    // A time-scaled rate far beyond the bound still refills (at 1e15 B/s: 1e9 bytes per µs).
    token_bucket fast(1e21, 1'000'000, 0);
    CHECK(fast.take(1'000'000, 0) == 1'000'000);
    CHECK(fast.available(1) == 1'000'000);
}

// --- streamed responses -------------------------------------------------------------------

TEST_CASE("streamed_response_seconds: the first 6 MB at the environment's rate, then 2 MBps",
          "[unit]") {
    const bandwidth_table t;  // 6 MiB uncapped, 2 MBps after
    const double env = 625 * mbps;
    CHECK(streamed_response_seconds(t, env, 0) == 0);
    CHECK(streamed_response_seconds(t, env, 1'000'000) == Approx(1'000'000 / env));
    CHECK(streamed_response_seconds(t, env, 6'291'456) == Approx(6'291'456 / env));
    // 20 MB: 6 MiB fast, the remaining 13,708,544 bytes at 2,000,000 B/s.
    CHECK(streamed_response_seconds(t, env, 20'000'000) ==
          Approx(6'291'456 / env + 13'708'544 / 2e6));
    // 200 MB, the streaming maximum: about 97 s.
    CHECK(streamed_response_seconds(t, env, 200'000'000) ==
          Approx(6'291'456 / env + 193'708'544 / 2e6));
    // An environment slower than the streaming cap keeps its own rate.
    CHECK(streamed_response_seconds(t, 1e6, 10'291'456) == Approx(10.291456));
}
