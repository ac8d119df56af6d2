// Schedule expressions: parsing (rate, cron, at, time zones) and the next firing.

#include <chrono>
#include <string>

#include "emulator/schedules/schedules.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::schedules;

namespace {

// Epoch ms of a UTC date-time.
double utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
    using namespace std::chrono;
    const auto days = sys_days{year{y} / month{mo} / day{d}}.time_since_epoch().count();
    return (static_cast<double>(days) * 86400 + h * 3600 + mi * 60 + s) * 1000;
}

schedule_expression parse(const std::string& text, const std::string& tz = "") {
    auto r = parse_schedule(text, tz);
    INFO(text << " → " << r.error);
    REQUIRE(r);
    return *r.value;
}

std::string error_of(const std::string& text, const std::string& tz = "") {
    auto r = parse_schedule(text, tz);
    REQUIRE_FALSE(r);
    return r.error;
}

double next(const std::string& text, double after, const std::string& tz = "") {
    auto n = next_fire_ms(parse(text, tz), after);
    REQUIRE(n);
    return *n;
}

}  // namespace

TEST_CASE("rate expressions: value and unit, singular only for 1", "[unit]") {
    CHECK(parse("rate(5 minutes)").rate_ms == 300'000);
    CHECK(parse("rate(1 minute)").rate_ms == 60'000);
    CHECK(parse("rate(1 hour)").rate_ms == 3'600'000);
    CHECK(parse("rate(2 hours)").rate_ms == 7'200'000);
    CHECK(parse("rate(1 day)").rate_ms == 86'400'000);
    CHECK(parse("rate(7 days)").rate_ms == 7 * 86'400'000.0);

    CHECK(error_of("rate(1 minutes)").find("use '1 minute'") != std::string::npos);
    CHECK(error_of("rate(5 minute)").find("use '5 minutes'") != std::string::npos);
    CHECK(error_of("rate(0 minutes)").find("positive whole number") != std::string::npos);
    CHECK(error_of("rate(5 weeks)").find("minute|minutes|hour|hours|day|days") !=
          std::string::npos);
    CHECK(error_of("rate(1.5 hours)").find("positive whole number") != std::string::npos);
    CHECK(error_of("rate(-5 minutes)").find("positive whole number") != std::string::npos);
    CHECK(error_of("rate(5 minutes extra)").find("positive whole number") != std::string::npos);
}

TEST_CASE("rate: firings are start + k periods, strictly after", "[unit]") {
    const auto e = parse("rate(5 minutes)");
    const double start = utc(2026, 12, 2, 14, 42, 19);
    CHECK(*next_fire_ms(e, start, start) == start + 300'000);
    CHECK(*next_fire_ms(e, start + 300'000, start) == start + 600'000);
    CHECK(*next_fire_ms(e, start + 299'999, start) == start + 300'000);
    CHECK(*next_fire_ms(e, start - 10'000'000, start) == start + 300'000);
    CHECK(*next_fire_ms(e, start + 1000) == start + 301'000);  // no start: after + period
}

TEST_CASE("cron: fixed times, lists, ranges, steps, names", "[unit]") {
    const double now = utc(2026, 12, 2, 14, 42, 19);  // a Wednesday
    CHECK(next("cron(0 12 * * ? *)", now) == utc(2026, 12, 3, 12, 0));
    CHECK(next("cron(0 15 * * ? *)", now) == utc(2026, 12, 2, 15, 0));
    CHECK(next("cron(15 12 * * ? *)", utc(2026, 12, 2, 12, 15)) == utc(2026, 12, 3, 12, 15));
    CHECK(next("cron(* * * * ? *)", now) == utc(2026, 12, 2, 14, 43));
    CHECK(next("cron(* * * * ? *)", utc(2026, 12, 2, 14, 43)) == utc(2026, 12, 2, 14, 44));
    CHECK(next("cron(0/15 * * * ? *)", now) == utc(2026, 12, 2, 14, 45));
    CHECK(next("cron(*/15 * * * ? *)", now) == utc(2026, 12, 2, 14, 45));
    // 1/10: the 1st, 11th, 21st … minute.
    CHECK(next("cron(1/10 * * * ? *)", now) == utc(2026, 12, 2, 14, 51));
    CHECK(next("cron(1/10 * * * ? *)", utc(2026, 12, 2, 14, 51)) == utc(2026, 12, 2, 15, 1));
    CHECK(next("cron(0 10,15 * * ? *)", now) == utc(2026, 12, 2, 15, 0));
    CHECK(next("cron(0 0-9,23 * * ? *)", now) == utc(2026, 12, 2, 23, 0));
    CHECK(next("cron(10-20/5 * * * ? *)", utc(2026, 12, 2, 14, 12)) == utc(2026, 12, 2, 14, 15));
    CHECK(next("cron(10-20/5 * * * ? *)", utc(2026, 12, 2, 14, 20)) == utc(2026, 12, 2, 15, 10));
    // Weekdays by name and number (1 = Sunday); Saturday 5 Dec → Monday 7 Dec.
    CHECK(next("cron(0 9 ? * MON-FRI *)", utc(2026, 12, 5, 0, 0)) == utc(2026, 12, 7, 9, 0));
    CHECK(next("cron(0 9 ? * 2-6 *)", utc(2026, 12, 5, 0, 0)) == utc(2026, 12, 7, 9, 0));
    CHECK(next("cron(0 9 ? * mon,wed *)", utc(2026, 12, 3, 0, 0)) == utc(2026, 12, 7, 9, 0));
    CHECK(next("cron(0 8 ? * SUN *)", now) == utc(2026, 12, 6, 8, 0));
    CHECK(next("cron(0 8 ? * 1 *)", now) == utc(2026, 12, 6, 8, 0));
    // A wrapping range: FRI-MON is Fri, Sat, Sun, Mon.
    CHECK(next("cron(0 9 ? * FRI-MON *)", now) == utc(2026, 12, 4, 9, 0));
    CHECK(next("cron(0 9 ? * FRI-MON *)", utc(2026, 12, 7, 10, 0)) == utc(2026, 12, 11, 9, 0));
    // Months by name; day-of-month lists.
    CHECK(next("cron(0 0 1 JAN,JUL ? *)", now) == utc(2027, 1, 1));
    CHECK(next("cron(0 0 1,15 * ? *)", now) == utc(2026, 12, 15));
    CHECK(next("cron(0 0 * * ? *)", now) == utc(2026, 12, 3));
    CHECK(next("cron(0 0 ? * * *)", now) == utc(2026, 12, 3));
}

TEST_CASE("cron: L, W, LW and # in the day fields", "[unit]") {
    // L: the month's last day, leap years included.
    CHECK(next("cron(0 0 L * ? *)", utc(2028, 2, 10)) == utc(2028, 2, 29));
    CHECK(next("cron(0 0 L * ? *)", utc(2027, 2, 10)) == utc(2027, 2, 28));
    CHECK(next("cron(0 0 L * ? *)", utc(2026, 12, 2)) == utc(2026, 12, 31));
    CHECK(next("cron(0 0 L * ? *)", utc(2026, 12, 31, 0, 0)) == utc(2027, 1, 31));
    CHECK(next("cron(0 0 L 4 ? *)", utc(2026, 12, 2)) == utc(2027, 4, 30));
    CHECK(next("cron(0 0 L-2 * ? *)", utc(2026, 12, 2)) == utc(2026, 12, 29));
    // nW: the weekday nearest day n, never in another month.
    CHECK(next("cron(0 0 1W * ? *)", utc(2026, 7, 15)) == utc(2026, 8, 3));   // Sat 1 → Mon 3
    CHECK(next("cron(0 0 15W * ? *)", utc(2026, 2, 1)) == utc(2026, 2, 16));  // Sun → Mon
    CHECK(next("cron(0 0 3W * ? *)", utc(2026, 12, 1)) == utc(2026, 12, 3));  // a Thursday
    CHECK(next("cron(0 0 5W * ? *)", utc(2026, 12, 1)) == utc(2026, 12, 4));  // Sat → Fri
    CHECK(next("cron(0 0 31W * ? *)", utc(2026, 5, 1)) == utc(2026, 5, 29));  // Sun 31 → Fri
    // 31W: months without a 31st are passed over.
    CHECK(next("cron(0 0 31W * ? *)", utc(2026, 6, 1)) == utc(2026, 7, 31));
    // LW: the last weekday.
    CHECK(next("cron(0 0 LW * ? *)", utc(2026, 5, 1)) == utc(2026, 5, 29));
    CHECK(next("cron(0 0 LW * ? *)", utc(2026, 8, 1)) == utc(2026, 8, 31));   // a Monday
    // d#n: the n-th weekday d of the month.
    CHECK(next("cron(0 10 ? * 3#2 *)", utc(2026, 12, 2)) == utc(2026, 12, 8, 10));
    CHECK(next("cron(0 10 ? * TUE#2 *)", utc(2026, 12, 9)) == utc(2027, 1, 12, 10));
    CHECK(next("cron(0 10 ? * 2#5 *)", utc(2026, 12, 2)) == utc(2027, 3, 29, 10));  // 5th Monday
    // dL: the last weekday d; L alone: Saturday.
    CHECK(next("cron(0 0 ? * 5L *)", utc(2026, 12, 2)) == utc(2026, 12, 31));
    CHECK(next("cron(0 0 ? * 6L *)", utc(2026, 12, 2)) == utc(2026, 12, 25));
    CHECK(next("cron(0 0 ? * FRIL *)", utc(2026, 12, 2)) == utc(2026, 12, 25));
    CHECK(next("cron(0 0 ? * L *)", utc(2026, 12, 2)) == utc(2026, 12, 5));
}

TEST_CASE("cron: the Year field and times that never come", "[unit]") {
    CHECK(next("cron(0 0 1 1 ? 2030)", utc(2026, 12, 2)) == utc(2030, 1, 1));
    CHECK_FALSE(next_fire_ms(parse("cron(0 0 1 1 ? 2030)"), utc(2030, 1, 1)));
    CHECK(next("cron(0 0 1 1 ? 2027-2029)", utc(2027, 1, 1)) == utc(2028, 1, 1));
    CHECK(next("cron(0 0 1 1 ? 2020/5)", utc(2026, 1, 1)) == utc(2030, 1, 1));
    CHECK(next("cron(0 12 29 2 ? *)", utc(2026, 12, 2)) == utc(2028, 2, 29, 12));
    CHECK_FALSE(next_fire_ms(parse("cron(0 0 30 2 ? *)"), utc(2026, 12, 2)));
    CHECK_FALSE(next_fire_ms(parse("cron(0 0 1 1 ? 2025)"), utc(2026, 12, 2)));
    CHECK(next("cron(59 23 31 12 ? 2199)", utc(2199, 1, 1)) == utc(2199, 12, 31, 23, 59));
}

TEST_CASE("cron: malformed expressions say what is wrong", "[unit]") {
    auto has = [](const std::string& text, const std::string& part) {
        const std::string e = error_of(text);
        INFO(text << " → " << e);
        CHECK(e.find(part) != std::string::npos);
        CHECK(e.find(text) != std::string::npos);  // the expression is quoted
    };
    has("cron(0 12 * * *)", "6 fields");
    has("cron(0 12 * * ? * *)", "6 fields");
    has("cron(0 12 * * * *)", "one of day-of-month and day-of-week must be '?'");
    has("cron(0 12 1 * MON *)", "one of day-of-month and day-of-week must be '?'");
    has("cron(0 12 ? * ? *)", "both '?'");
    has("cron(60 12 * * ? *)", "minutes: 60 is out of range 0-59");
    has("cron(0 24 * * ? *)", "hours: 24 is out of range 0-23");
    has("cron(0 0 32 * ? *)", "day-of-month: 32 is out of range 1-31");
    has("cron(0 0 0 * ? *)", "day-of-month: 0 is out of range 1-31");
    has("cron(0 0 * 13 ? *)", "month: 13 is out of range 1-12");
    has("cron(0 0 ? * 8 *)", "day-of-week: 8 is out of range 1-7");
    has("cron(0 0 ? * 0 *)", "day-of-week: 0 is out of range 1-7");
    has("cron(0 0 * * ? 1969)", "year: 1969 is out of range 1970-2199");
    has("cron(0 0 * * ? 2200)", "year: 2200 is out of range 1970-2199");
    has("cron(0 0 * * ? 2030-2027)", "year: the range '2030-2027' runs backwards");
    has("cron(0 0 * * ? 2030-)", "year: '' is not a value");
    has("cron(0 0 * * ? -2030)", "year: '-2030' is not a value");
    has("", "is not rate(");
    has("rate(5 minutes) ", "is not rate(");
    has("RATE(5 MINUTES)", "is not rate(");
    has("cron(0 0 * FOO ? *)", "month: 'FOO' is not a value (1-12 or JAN-DEC)");
    has("cron(0 0 ? * FUN *)", "day-of-week: 'FUN' is not a value (1-7 or SUN-SAT)");
    has("cron(0 0 ? * MON/2 *)", "'/' is not allowed");
    has("cron(0 0 ? * 3#1,6#3 *)", "one expression only");
    has("cron(0 0 ? * 3#6 *)", "1-5");
    has("cron(0 0 1,L * ? *)", "L and W stand alone");
    has("cron(0/0 * * * ? *)", "positive increment");
    has("cron(0, * * * ? *)", "empty list item");
    has("cron(? 0 * * ? *)", "'?' is only for day-of-month and day-of-week");
    has("cron(a b c d e f)", "minutes: 'a' is not a value");
    has("cron()", "6 fields");
    has("cron 0 12 * * ? *", "rate(<value> <unit>), cron(<6 fields>) or at(");
    has("every 5 minutes", "rate(<value> <unit>), cron(<6 fields>) or at(");
}

TEST_CASE("at: one firing at the local time, never again", "[unit]") {
    const auto e = parse("at(2026-12-24T18:30:00)");
    CHECK(*next_fire_ms(e, utc(2026, 12, 2)) == utc(2026, 12, 24, 18, 30));
    CHECK_FALSE(next_fire_ms(e, utc(2026, 12, 24, 18, 30)));
    CHECK_FALSE(next_fire_ms(e, utc(2027, 1, 1)));
    CHECK(*next_fire_ms(parse("at(2026-12-24T18:30:00)", "Europe/Berlin"), utc(2026, 12, 2)) ==
          utc(2026, 12, 24, 17, 30));
    CHECK(error_of("at(2026-02-30T10:00:00)").find("is not a date and time") != std::string::npos);
    CHECK(error_of("at(2026-12-01T24:00:00)").find("is not a date and time") != std::string::npos);
    CHECK(error_of("at(2026-12-01 10:00:00)").find("at(yyyy-mm-ddThh:mm:ss)") != std::string::npos);
    CHECK(error_of("at(2026-12-01T10:00)").find("at(yyyy-mm-ddThh:mm:ss)") != std::string::npos);
    CHECK(parse_schedule("at(2028-02-29T10:00:00)"));  // a leap day
    CHECK_FALSE(parse_schedule("at(2027-02-29T10:00:00)"));
}

TEST_CASE("expressions from the EventBridge docs and real templates parse and fire", "[unit]") {
    // The user guide's examples, then expressions found in public templates.
    const double wed = utc(2026, 12, 2, 14, 42, 19);
    CHECK(next("cron(0 10 * * ? *)", wed) == utc(2026, 12, 3, 10, 0));
    CHECK(next("cron(15 12 * * ? *)", wed) == utc(2026, 12, 3, 12, 15));
    CHECK(next("cron(0 18 ? * MON-FRI *)", wed) == utc(2026, 12, 2, 18, 0));
    CHECK(next("cron(0 8 1 * ? *)", wed) == utc(2027, 1, 1, 8, 0));
    CHECK(next("cron(0/10 * ? * MON-FRI *)", wed) == utc(2026, 12, 2, 14, 50));
    CHECK(next("cron(0/5 8-17 ? * MON-FRI *)", utc(2026, 12, 4, 17, 56)) == utc(2026, 12, 7, 8, 0));
    CHECK(next("cron(0 9 ? * 2#1 *)", wed) == utc(2026, 12, 7, 9, 0));
    CHECK(next("cron(0/3 * * * ? *)", wed) == utc(2026, 12, 2, 14, 45));
    CHECK(next("cron(0 0,1,2,3,4,5,6,7,8,9,10,11,12,17 * * ? *)", wed) == utc(2026, 12, 2, 17, 0));
    CHECK(next("cron(0 0 ? * MON,WED,FRI *)", wed) == utc(2026, 12, 4, 0, 0));
    CHECK(next("cron(* 8-23,0-1 * * ? *)", utc(2026, 12, 2, 2, 0)) == utc(2026, 12, 2, 8, 0));
    CHECK(next("cron(0/2 * ? * MON-FRI *)", wed) == utc(2026, 12, 2, 14, 44));
    CHECK(next("cron(0 19 ? * SUN *)", wed) == utc(2026, 12, 6, 19, 0));
    CHECK(next("cron(0 5 ? * * *)", wed) == utc(2026, 12, 3, 5, 0));
    CHECK(parse("rate(10 minutes)").rate_ms == 600'000);
    // Unix-style 5-field crons and a misplaced field, as they appear in templates that
    // never deployed: refused with the reason.
    CHECK(error_of("cron(0 16 * * 1-5)").find("6 fields") != std::string::npos);
    CHECK(error_of("cron(0 17 8-14 * ? SUN)").find("year: 'SUN' is not a value") !=
          std::string::npos);
    CHECK(error_of("cron(MM HH * * ? *)").find("minutes: 'MM' is not a value") !=
          std::string::npos);
}
