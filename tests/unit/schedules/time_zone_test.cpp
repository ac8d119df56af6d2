// Time zones from the tz database (Debian's tzdata, installed by tools/setup.sh) and cron
// schedules across daylight saving time, as EventBridge Scheduler treats them.

#include <chrono>
#include <filesystem>
#include <fstream>

#include "emulator/schedules/schedules.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::schedules;

namespace {

double utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0) {
    using namespace std::chrono;
    const auto days = sys_days{year{y} / month{mo} / day{d}}.time_since_epoch().count();
    return (static_cast<double>(days) * 86400 + h * 3600 + mi * 60) * 1000;
}
std::int64_t utc_s(int y, unsigned mo, unsigned d, int h = 0, int mi = 0) {
    return static_cast<std::int64_t>(utc(y, mo, d, h, mi) / 1000);
}

time_zone zone(const std::string& name) {
    auto z = load_time_zone(name);
    INFO(name << " → " << z.error);
    REQUIRE(z);
    return *z.zone;
}

double next(const std::string& text, const std::string& tz, double after) {
    auto r = parse_schedule(text, tz);
    INFO(r.error);
    REQUIRE(r);
    auto n = next_fire_ms(*r.value, after);
    REQUIRE(n);
    return *n;
}

}  // namespace

TEST_CASE("time zones: UTC names, IANA zones and their offsets", "[unit]") {
    for (const char* n : {"", "UTC", "Etc/UTC", "GMT"}) {
        auto z = load_time_zone(n);
        REQUIRE(z);
        CHECK(z.zone->offset_s(utc_s(2026, 7, 1)) == 0);
    }
    const auto ny = zone("America/New_York");
    CHECK(ny.name() == "America/New_York");
    CHECK(ny.offset_s(utc_s(2026, 1, 15)) == -5 * 3600);
    CHECK(ny.offset_s(utc_s(2026, 7, 15)) == -4 * 3600);
    // 2026-03-08 02:00 EST (07:00Z) springs to 03:00 EDT.
    CHECK(ny.offset_s(utc_s(2026, 3, 8, 6, 59)) == -5 * 3600);
    CHECK(ny.offset_s(utc_s(2026, 3, 8, 7, 0)) == -4 * 3600);
    // After the file's last listed transition (2037) the footer rule decides.
    CHECK(ny.offset_s(utc_s(2040, 1, 15)) == -5 * 3600);
    CHECK(ny.offset_s(utc_s(2040, 7, 15)) == -4 * 3600);
    CHECK(ny.offset_s(utc_s(2150, 7, 15)) == -4 * 3600);
    const auto kolkata = zone("Asia/Kolkata");
    CHECK(kolkata.offset_s(utc_s(2026, 7, 1)) == 5 * 3600 + 1800);
    const auto sydney = zone("Australia/Sydney");  // southern hemisphere: DST over New Year
    CHECK(sydney.offset_s(utc_s(2026, 1, 15)) == 11 * 3600);
    CHECK(sydney.offset_s(utc_s(2026, 7, 15)) == 10 * 3600);
    CHECK(sydney.offset_s(utc_s(2045, 1, 15)) == 11 * 3600);
    CHECK(sydney.offset_s(utc_s(2045, 7, 15)) == 10 * 3600);
    // Fixed offsets are IANA zones too (POSIX sign: Etc/GMT+5 is UTC-5).
    CHECK(zone("Etc/GMT+5").offset_s(utc_s(2026, 7, 1)) == -5 * 3600);
    CHECK(zone("Etc/GMT-14").offset_s(utc_s(2026, 7, 1)) == 14 * 3600);
}

TEST_CASE("time zones: unknown names and bad files are refused with the reason", "[unit]") {
    auto z = load_time_zone("Mars/Olympus_Mons");
    REQUIRE_FALSE(z);
    CHECK(z.error.find("unknown time zone 'Mars/Olympus_Mons'") != std::string::npos);
    CHECK(z.error.find("/usr/share/zoneinfo") != std::string::npos);
    CHECK(load_time_zone("../etc/passwd").error.find("is not an IANA time zone name") !=
          std::string::npos);
    CHECK(load_time_zone("/etc/passwd").error.find("is not an IANA time zone name") !=
          std::string::npos);
    CHECK(load_time_zone("America/New York").error.find("is not an IANA time zone name") !=
          std::string::npos);
    CHECK_FALSE(load_time_zone("America"));  // a folder, not a zone

    const auto dir = std::filesystem::temp_directory_path() / "coldbrew_tz_test";
    std::filesystem::create_directories(dir / "Bad");
    std::ofstream(dir / "Bad" / "Zone") << "not a tzif file at all, just text";
    std::ofstream(dir / "Bad" / "Short") << "TZif2";
    CHECK(load_time_zone("Bad/Zone", dir).error.find("is not a TZif file") != std::string::npos);
    CHECK(load_time_zone("Bad/Short", dir).error.find("is not a TZif file") != std::string::npos);
    std::filesystem::remove_all(dir);

    auto r = parse_schedule("cron(0 9 * * ? *)", "Europe/Atlantis");
    REQUIRE_FALSE(r);
    CHECK(r.error.find("ScheduleExpressionTimezone: unknown time zone 'Europe/Atlantis'") !=
          std::string::npos);
}

TEST_CASE("cron in a time zone follows its local time through the year", "[unit]") {
    CHECK(next("cron(0 9 * * ? *)", "America/New_York", utc(2026, 1, 15)) ==
          utc(2026, 1, 15, 14, 0));
    CHECK(next("cron(0 9 * * ? *)", "America/New_York", utc(2026, 7, 15)) ==
          utc(2026, 7, 15, 13, 0));
    CHECK(next("cron(0 9 * * ? *)", "Asia/Kolkata", utc(2026, 7, 15)) ==
          utc(2026, 7, 15, 3, 30));
    // Local midnight of the 1st is still the previous day in UTC.
    CHECK(next("cron(0 0 1 * ? *)", "Asia/Tokyo", utc(2026, 12, 2)) == utc(2026, 12, 31, 15, 0));
    // Local L (last day) with an offset west of UTC.
    CHECK(next("cron(0 23 L * ? *)", "America/Los_Angeles", utc(2026, 12, 2)) ==
          utc(2027, 1, 1, 7, 0));
}

TEST_CASE("cron across DST: a missing local time is skipped, a repeated one fires once",
          "[unit]") {
    const std::string ny = "America/New_York";
    // Spring forward, 2026-03-08: 02:30 does not exist that day; the next is 03-09 02:30 EDT.
    CHECK(next("cron(30 2 * * ? *)", ny, utc(2026, 3, 7, 12, 0)) == utc(2026, 3, 9, 6, 30));
    CHECK(next("cron(30 2 * * ? *)", ny, utc(2026, 3, 8, 0, 0)) == utc(2026, 3, 9, 6, 30));
    // Every 30 minutes through the gap: 01:30 EST (06:30Z), then 03:00 EDT (07:00Z).
    CHECK(next("cron(0/30 * * * ? *)", ny, utc(2026, 3, 8, 6, 0)) == utc(2026, 3, 8, 6, 30));
    CHECK(next("cron(0/30 * * * ? *)", ny, utc(2026, 3, 8, 6, 30)) == utc(2026, 3, 8, 7, 0));
    // Fall back, 2026-11-01: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST); it fires once.
    CHECK(next("cron(30 1 * * ? *)", ny, utc(2026, 10, 31, 12, 0)) == utc(2026, 11, 1, 5, 30));
    CHECK(next("cron(30 1 * * ? *)", ny, utc(2026, 11, 1, 5, 30)) == utc(2026, 11, 2, 6, 30));
    // Every 30 minutes: 01:00 EDT, 01:30 EDT, then 02:00 EST; the repeated hour is not re-run.
    CHECK(next("cron(0/30 * * * ? *)", ny, utc(2026, 11, 1, 5, 0)) == utc(2026, 11, 1, 5, 30));
    CHECK(next("cron(0/30 * * * ? *)", ny, utc(2026, 11, 1, 5, 30)) == utc(2026, 11, 1, 7, 0));
    // Started inside the repeated hour: its local times have had their (first) instant.
    CHECK(next("cron(0/30 * * * ? *)", ny, utc(2026, 11, 1, 6, 10)) == utc(2026, 11, 1, 7, 0));
}

TEST_CASE("at in a time zone, including a time in the spring-forward gap", "[unit]") {
    auto r = parse_schedule("at(2026-07-04T12:00:00)", "America/New_York");
    REQUIRE(r);
    CHECK(*next_fire_ms(*r.value, utc(2026, 1, 1)) == utc(2026, 7, 4, 16, 0));
    // 02:30 on 2026-03-08 does not exist in New York: read with EST, it is 07:30Z (03:30 EDT).
    auto gap = parse_schedule("at(2026-03-08T02:30:00)", "America/New_York");
    REQUIRE(gap);
    CHECK(*next_fire_ms(*gap.value, utc(2026, 1, 1)) == utc(2026, 3, 8, 7, 30));
}

namespace {

// A TZif version 2 file with no transitions and `rule` as its footer: every offset then comes
// from the POSIX TZ rule, as in a "slim" tz database.
void write_rule_only_tzif(const std::filesystem::path& file, const std::string& rule,
                          std::int32_t initial_offset_s) {
    auto be32 = [](std::string& out, std::uint32_t v) {
        for (int k = 3; k >= 0; --k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
    };
    auto block = [&](std::string& out) {
        out += "TZif2";
        out.append(15, '\0');
        for (std::uint32_t c : {0u, 0u, 0u, 0u, 1u, 4u}) be32(out, c);  // one type, 4 chars
    };
    auto data = [&](std::string& out) {
        be32(out, static_cast<std::uint32_t>(initial_offset_s));
        out.push_back('\0');  // isdst
        out.push_back('\0');  // designation index
        out.append("STD", 4);
    };
    std::string b;
    block(b);
    data(b);
    block(b);
    data(b);
    b += "\n" + rule + "\n";
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << b;
}

}  // namespace

TEST_CASE("time zones: the POSIX TZ rule at the end of a TZif file", "[unit]") {
    const auto dir = std::filesystem::temp_directory_path() / "coldbrew_tz_rules";
    write_rule_only_tzif(dir / "Test" / "Eastern", "EST5EDT,M3.2.0,M11.1.0", -5 * 3600);
    write_rule_only_tzif(dir / "Test" / "Sydney", "AEST-10AEDT,M10.1.0,M4.1.0/3", 10 * 3600);
    write_rule_only_tzif(dir / "Test" / "Kolkata", "IST-5:30", 19800);
    write_rule_only_tzif(dir / "Test" / "Angle", "<+0545>-5:45", 20700);
    write_rule_only_tzif(dir / "Test" / "Julian", "XST3XDT,J60/0,J300/0", -3 * 3600);
    write_rule_only_tzif(dir / "Test" / "Broken", "EST5EDT,M3.2", -5 * 3600);

    auto load = [&](const std::string& n) {
        auto z = load_time_zone(n, dir);
        INFO(n << " → " << z.error);
        REQUIRE(z);
        return *z.zone;
    };
    const auto e = load("Test/Eastern");
    CHECK(e.offset_s(utc_s(2031, 1, 15)) == -5 * 3600);
    CHECK(e.offset_s(utc_s(2031, 7, 15)) == -4 * 3600);
    // 2031: second Sunday of March is the 9th; 02:00 EST = 07:00Z.
    CHECK(e.offset_s(utc_s(2031, 3, 9, 6, 59)) == -5 * 3600);
    CHECK(e.offset_s(utc_s(2031, 3, 9, 7, 0)) == -4 * 3600);
    // First Sunday of November 2031 is the 2nd; 02:00 EDT = 06:00Z.
    CHECK(e.offset_s(utc_s(2031, 11, 2, 5, 59)) == -4 * 3600);
    CHECK(e.offset_s(utc_s(2031, 11, 2, 6, 0)) == -5 * 3600);
    const auto s = load("Test/Sydney");
    CHECK(s.offset_s(utc_s(2031, 1, 1)) == 11 * 3600);
    CHECK(s.offset_s(utc_s(2031, 6, 1)) == 10 * 3600);
    CHECK(s.offset_s(utc_s(2031, 12, 31, 23)) == 11 * 3600);
    CHECK(load("Test/Kolkata").offset_s(utc_s(2031, 6, 1)) == 19800);
    CHECK(load("Test/Angle").offset_s(utc_s(2031, 6, 1)) == 20700);
    const auto j = load("Test/Julian");
    // J60 is March 1 in every year; 00:00 local standard time = 03:00Z.
    CHECK(j.offset_s(utc_s(2032, 3, 1, 2, 59)) == -3 * 3600);
    CHECK(j.offset_s(utc_s(2032, 3, 1, 3, 0)) == -2 * 3600);
    CHECK(j.offset_s(utc_s(2031, 3, 1, 3, 0)) == -2 * 3600);
    // A footer that does not parse leaves the file's own offsets.
    CHECK(load("Test/Broken").offset_s(utc_s(2031, 7, 15)) == -5 * 3600);
    std::filesystem::remove_all(dir);
}
