#include "models/usage_plan/usage_plan.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::models::usage_plan;

namespace {

// 2024-03-06 (a Wednesday) 13:45:10.250 UTC, and helpers around it.
constexpr std::int64_t day_ms = 86'400'000;
constexpr std::int64_t wed_2024_03_06 = 1709683200000;  // 00:00 UTC
constexpr std::int64_t afternoon = wed_2024_03_06 + 13 * 3'600'000 + 45 * 60'000 + 10'250;

}  // namespace

TEST_CASE("request_bucket: starts full, refills at the rate, never above the burst", "[unit]") {
    request_bucket b(2.0, 3.0);  // 2 tokens a second, 3 deep
    CHECK(b.tokens(0) == Approx(3.0));
    CHECK(b.take(1000));
    CHECK(b.take(1000));
    CHECK(b.take(1000));
    CHECK_FALSE(b.take(1000));  // burst spent
    CHECK(b.tokens(1250) == Approx(0.5));
    CHECK_FALSE(b.take(1250));  // half a token is not a request
    CHECK(b.take(1500));        // 1 token after 500 ms at 2/s
    CHECK_FALSE(b.take(1500));
    // A long idle time refills to the burst only.
    CHECK(b.tokens(60'000) == Approx(3.0));
    CHECK(b.take(60'000));
    CHECK(b.take(60'000));
    CHECK(b.take(60'000));
    CHECK_FALSE(b.take(60'000));
}

TEST_CASE("request_bucket: an earlier time refills nothing", "[unit]") {
    request_bucket b(1.0, 1.0);
    CHECK(b.take(5000));
    CHECK_FALSE(b.take(4000));
    CHECK_FALSE(b.take(5500));
    CHECK(b.take(6000));
}

TEST_CASE("parse_period: DAY, WEEK, MONTH in upper case", "[unit]") {
    CHECK(parse_period("DAY") == period::day);
    CHECK(parse_period("WEEK") == period::week);
    CHECK(parse_period("MONTH") == period::month);
    CHECK_FALSE(parse_period("day"));
    CHECK_FALSE(parse_period("YEAR"));
    CHECK_FALSE(parse_period(""));
}

TEST_CASE("period_start_ms: UTC days, Sunday weeks, calendar months", "[unit]") {
    CHECK(period_start_ms(period::day, afternoon) == wed_2024_03_06);
    CHECK(period_start_ms(period::day, wed_2024_03_06) == wed_2024_03_06);
    CHECK(period_start_ms(period::day, wed_2024_03_06 - 1) == wed_2024_03_06 - day_ms);
    // Sunday 2024-03-03 00:00 UTC.
    CHECK(period_start_ms(period::week, afternoon) == wed_2024_03_06 - 3 * day_ms);
    CHECK(period_start_ms(period::week, wed_2024_03_06 - 3 * day_ms) ==
          wed_2024_03_06 - 3 * day_ms);
    CHECK(period_start_ms(period::week, wed_2024_03_06 - 3 * day_ms - 1) ==
          wed_2024_03_06 - 10 * day_ms);
    // 2024-03-01 00:00 UTC; a leap February before it.
    const std::int64_t mar_1 = wed_2024_03_06 - 5 * day_ms;
    CHECK(period_start_ms(period::month, afternoon) == mar_1);
    CHECK(period_start_ms(period::month, mar_1) == mar_1);
    CHECK(period_start_ms(period::month, mar_1 - 1) == mar_1 - 29 * day_ms);
    // Before 1970: 1969-12-31 23:59:59.999 is in December 1969, in the week of Sunday Dec 28.
    CHECK(period_start_ms(period::day, -1) == -day_ms);
    CHECK(period_start_ms(period::week, -1) == -4 * day_ms);
    CHECK(period_start_ms(period::month, -1) == -31 * day_ms);
    // 1970-01-01 was a Thursday: its week started on Sunday Dec 28.
    CHECK(period_start_ms(period::week, 0) == -4 * day_ms);
}

TEST_CASE("key_meter: quota per period, reset when the period turns", "[unit]") {
    plan_limits l;
    l.quota_limit = 2;
    l.quota_period = period::day;
    key_meter m(l);
    CHECK(m.admit(0, afternoon) == admission::allowed);
    CHECK(m.admit(1, afternoon) == admission::allowed);
    CHECK(m.admit(2, afternoon) == admission::quota_exceeded);
    CHECK(m.used_in_period() == 2);
    const std::int64_t next_day = wed_2024_03_06 + day_ms;
    CHECK(m.admit(3, next_day) == admission::allowed);
    CHECK(m.used_in_period() == 1);
}

TEST_CASE("key_meter: the offset lowers the quota of the initial period only", "[unit]") {
    plan_limits l;
    l.quota_limit = 3;
    l.quota_period = period::week;
    l.quota_offset = 2;
    key_meter m(l);
    CHECK(m.admit(0, afternoon) == admission::allowed);
    CHECK(m.admit(0, afternoon) == admission::quota_exceeded);  // 3 - 2 in the first week
    const std::int64_t next_week = wed_2024_03_06 + 4 * day_ms;  // Sunday 2024-03-10
    CHECK(m.admit(0, next_week - 1) == admission::quota_exceeded);
    CHECK(m.admit(0, next_week) == admission::allowed);
    CHECK(m.admit(0, next_week) == admission::allowed);
    CHECK(m.admit(0, next_week) == admission::allowed);
    CHECK(m.admit(0, next_week) == admission::quota_exceeded);
}

TEST_CASE("key_meter: quota first, then the bucket; a throttled request is not counted",
          "[unit]") {
    plan_limits l;
    l.rate_per_s = 1;
    l.burst = 1;
    l.quota_limit = 2;
    key_meter m(l);
    CHECK(m.admit(0, afternoon) == admission::allowed);
    CHECK(m.admit(10, afternoon) == admission::throttled);
    CHECK(m.used_in_period() == 1);
    CHECK(m.admit(1000, afternoon) == admission::allowed);
    // Over the quota: refused as such even though the bucket is empty too.
    CHECK(m.admit(1001, afternoon) == admission::quota_exceeded);
    // And the refusal took no token: a second later the bucket still has exactly one.
    CHECK(m.admit(5000, afternoon + day_ms) == admission::allowed);
    CHECK(m.admit(5000, afternoon + day_ms) == admission::throttled);
}

TEST_CASE("key_meter: a rate without a burst is a bucket max(1, rate) deep", "[unit]") {
    plan_limits l;
    l.rate_per_s = 3;
    key_meter m(l);
    CHECK(m.admit(0, afternoon) == admission::allowed);
    CHECK(m.admit(0, afternoon) == admission::allowed);
    CHECK(m.admit(0, afternoon) == admission::allowed);
    CHECK(m.admit(0, afternoon) == admission::throttled);

    plan_limits slow;
    slow.rate_per_s = 0.5;
    key_meter s(slow);
    CHECK(s.admit(0, afternoon) == admission::allowed);
    CHECK(s.admit(1000, afternoon) == admission::throttled);
    CHECK(s.admit(2000, afternoon) == admission::allowed);

    plan_limits burst_only;
    burst_only.burst = 1;
    key_meter b(burst_only);
    for (int i = 0; i < 5; ++i) CHECK(b.admit(0, afternoon) == admission::allowed);
}
