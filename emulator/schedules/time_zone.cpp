// Time zones from the system's tz database: TZif files (RFC 8536) as Debian's tzdata installs
// them under /usr/share/zoneinfo. The version 2+ block (64-bit times) is read; instants after
// the last listed transition follow the POSIX TZ rule in the file's footer (RFC 8536 §3.3),
// so a "slim" file (few transitions, the rest by rule) reads the same as a "fat" one.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "emulator/schedules/schedules.hpp"

namespace coldbrew::schedules {

namespace {

// A POSIX TZ date rule: Mm.w.d (month, week 1..5 with 5 = last, weekday 0 = Sunday), Jn
// (1..365, February 29 never counted) or n (0..365, counting it).
struct posix_date {
    enum class form { month_week_day, julian_1, julian_0 } kind = form::month_week_day;
    int month = 0, week = 0, weekday = 0, day = 0;
    std::int64_t time_s = 7200;  // local time of day the change happens; default 02:00
};

struct posix_rule {
    std::int64_t std_offset_s = 0;  // east of UTC
    bool has_dst = false;
    std::int64_t dst_offset_s = 0;
    posix_date start, end;
};

}  // namespace

struct time_zone::data {
    std::string name = "UTC";
    std::vector<std::int64_t> transitions;  // UTC seconds, ascending
    std::vector<std::int32_t> offsets;      // offset from each transition on
    std::int32_t initial_offset = 0;        // before the first transition
    std::optional<posix_rule> rule;         // after the last one
};

namespace {

std::int64_t days_from_civil(int y, unsigned m, unsigned d) {
    using namespace std::chrono;
    return sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count();
}

bool is_leap(int y) { return std::chrono::year{y}.is_leap(); }

// Local midnight (as days since the epoch) of a rule date in year y.
std::int64_t rule_day(const posix_date& d, int y) {
    using namespace std::chrono;
    switch (d.kind) {
        case posix_date::form::julian_1: {
            // J1..J365: February 29 is never counted, so day 60 is always March 1.
            std::int64_t n = d.day;
            if (is_leap(y) && n >= 60) ++n;
            return days_from_civil(y, 1, 1) + n - 1;
        }
        case posix_date::form::julian_0:
            return days_from_civil(y, 1, 1) + d.day;
        case posix_date::form::month_week_day:
        default: {
            const auto ym = year{y} / month{static_cast<unsigned>(d.month)};
            const weekday wd{static_cast<unsigned>(d.weekday)};
            const sys_days day = d.week >= 5 ? sys_days{ym / wd[last]}
                                             : sys_days{ym / wd[static_cast<unsigned>(d.week)]};
            return day.time_since_epoch().count();
        }
    }
}

std::int64_t rule_offset(const posix_rule& r, std::int64_t utc_s) {
    if (!r.has_dst) return r.std_offset_s;
    using namespace std::chrono;
    const auto local_days =
        floor<days>(sys_seconds{seconds{utc_s + r.std_offset_s}}).time_since_epoch().count();
    const int y = static_cast<int>(year_month_day{sys_days{days{local_days}}}.year());
    // The start is given in standard time, the end in daylight time (POSIX TZ).
    const std::int64_t start = rule_day(r.start, y) * 86400 + r.start.time_s - r.std_offset_s;
    const std::int64_t end = rule_day(r.end, y) * 86400 + r.end.time_s - r.dst_offset_s;
    const bool dst = start < end ? (utc_s >= start && utc_s < end)
                                 : (utc_s < end || utc_s >= start);  // southern hemisphere
    return dst ? r.dst_offset_s : r.std_offset_s;
}

// ---- POSIX TZ text -----------------------------------------------------------------------

struct tz_text {
    std::string_view s;
    std::size_t i = 0;
    bool done() const { return i >= s.size(); }
    char peek() const { return done() ? '\0' : s[i]; }
};

bool read_name(tz_text& t) {
    if (t.peek() == '<') {
        const auto close = t.s.find('>', t.i);
        if (close == std::string_view::npos) return false;
        t.i = close + 1;
        return true;
    }
    const std::size_t from = t.i;
    while (!t.done() && std::isalpha(static_cast<unsigned char>(t.peek()))) ++t.i;
    return t.i - from >= 3;
}

bool read_number(tz_text& t, std::int64_t& out) {
    if (t.done() || !std::isdigit(static_cast<unsigned char>(t.peek()))) return false;
    out = 0;
    while (!t.done() && std::isdigit(static_cast<unsigned char>(t.peek())))
        out = out * 10 + (t.s[t.i++] - '0');
    return true;
}

// [+-]hh[:mm[:ss]] as seconds.
bool read_time(tz_text& t, std::int64_t& out) {
    int sign = 1;
    if (t.peek() == '+' || t.peek() == '-') sign = t.s[t.i++] == '-' ? -1 : 1;
    std::int64_t h = 0, m = 0, sec = 0;
    if (!read_number(t, h)) return false;
    if (t.peek() == ':') {
        ++t.i;
        if (!read_number(t, m)) return false;
        if (t.peek() == ':') {
            ++t.i;
            if (!read_number(t, sec)) return false;
        }
    }
    out = sign * (h * 3600 + m * 60 + sec);
    return true;
}

bool read_date(tz_text& t, posix_date& d) {
    std::int64_t n = 0;
    if (t.peek() == 'M') {
        ++t.i;
        std::int64_t m = 0, w = 0, wd = 0;
        if (!read_number(t, m) || t.peek() != '.') return false;
        ++t.i;
        if (!read_number(t, w) || t.peek() != '.') return false;
        ++t.i;
        if (!read_number(t, wd)) return false;
        if (m < 1 || m > 12 || w < 1 || w > 5 || wd > 6) return false;
        d.kind = posix_date::form::month_week_day;
        d.month = static_cast<int>(m);
        d.week = static_cast<int>(w);
        d.weekday = static_cast<int>(wd);
    } else if (t.peek() == 'J') {
        ++t.i;
        if (!read_number(t, n) || n < 1 || n > 365) return false;
        d.kind = posix_date::form::julian_1;
        d.day = static_cast<int>(n);
    } else {
        if (!read_number(t, n) || n > 365) return false;
        d.kind = posix_date::form::julian_0;
        d.day = static_cast<int>(n);
    }
    if (t.peek() == '/') {
        ++t.i;
        if (!read_time(t, d.time_s)) return false;
    }
    return true;
}

std::optional<posix_rule> parse_posix(std::string_view text) {
    tz_text t{text};
    posix_rule r;
    std::int64_t off = 0;
    if (!read_name(t) || !read_time(t, off)) return std::nullopt;
    r.std_offset_s = -off;  // POSIX offsets count west of UTC
    if (t.done()) return r;
    if (!read_name(t)) return std::nullopt;
    r.has_dst = true;
    r.dst_offset_s = r.std_offset_s + 3600;
    if (t.peek() != ',' && !t.done()) {
        if (!read_time(t, off)) return std::nullopt;
        r.dst_offset_s = -off;
    }
    // A DST name without a rule: POSIX leaves the dates to the implementation; tzdata never
    // writes one. Read it as "M3.2.0,M11.1.0" (the US rules), as glibc does.
    if (t.done()) {
        r.start = {posix_date::form::month_week_day, 3, 2, 0, 0, 7200};
        r.end = {posix_date::form::month_week_day, 11, 1, 0, 0, 7200};
        return r;
    }
    if (t.peek() != ',') return std::nullopt;
    ++t.i;
    if (!read_date(t, r.start) || t.peek() != ',') return std::nullopt;
    ++t.i;
    if (!read_date(t, r.end) || !t.done()) return std::nullopt;
    return r;
}

// ---- TZif ---------------------------------------------------------------------------------

std::int64_t be(const unsigned char* p, int n) {
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k) v = (v << 8) | p[k];
    // Sign-extend n-byte two's complement.
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);
    return static_cast<std::int64_t>(v);
}

struct tzif_counts {
    std::int64_t isut, isstd, leap, time, type, chars;
};

bool read_counts(const std::string& b, std::size_t at, tzif_counts& c) {
    if (b.size() < at + 44 || b.compare(at, 4, "TZif") != 0) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at + 20);
    c = {be(p, 4), be(p + 4, 4), be(p + 8, 4), be(p + 12, 4), be(p + 16, 4), be(p + 20, 4)};
    return c.isut >= 0 && c.isstd >= 0 && c.leap >= 0 && c.time >= 0 && c.type >= 1 &&
           c.chars >= 0;
}

std::size_t block_size(const tzif_counts& c, int time_bytes) {
    return static_cast<std::size_t>(c.time * time_bytes + c.time + c.type * 6 + c.chars +
                                    c.leap * (time_bytes + 4) + c.isstd + c.isut);
}

// Fills `d` from the TZif bytes; false when they are not a TZif file we can read.
bool parse_tzif(const std::string& b, time_zone::data& d) {
    tzif_counts c{};
    if (!read_counts(b, 0, c)) return false;
    const char version = b[4];
    std::size_t at = 44;
    int time_bytes = 4;
    if (version >= '2') {
        // Skip the 32-bit block; the second header and 64-bit data follow.
        at += block_size(c, 4);
        if (!read_counts(b, at, c)) return false;
        at += 44;
        time_bytes = 8;
    }
    if (b.size() < at + block_size(c, time_bytes)) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at);
    std::vector<std::int64_t> times(static_cast<std::size_t>(c.time));
    for (auto& t : times) {
        t = be(p, time_bytes);
        p += time_bytes;
    }
    std::vector<std::uint8_t> idx(p, p + c.time);
    p += c.time;
    std::vector<std::int32_t> type_offsets;
    for (std::int64_t k = 0; k < c.type; ++k, p += 6)
        type_offsets.push_back(static_cast<std::int32_t>(be(p, 4)));
    for (auto i : idx)
        if (i >= type_offsets.size()) return false;
    d.transitions = std::move(times);
    for (auto i : idx) d.offsets.push_back(type_offsets[i]);
    d.initial_offset = type_offsets[0];  // RFC 8536: type 0 before the first transition
    if (version >= '2') {
        const std::size_t foot = at + block_size(c, time_bytes);
        if (foot < b.size() && b[foot] == '\n') {
            const auto close = b.find('\n', foot + 1);
            if (close != std::string::npos && close > foot + 1)
                d.rule = parse_posix(std::string_view(b).substr(foot + 1, close - foot - 1));
        }
    }
    return true;
}

bool is_utc_name(std::string_view n) {
    return n.empty() || n == "UTC" || n == "Etc/UTC" || n == "GMT" || n == "Etc/GMT" ||
           n == "Z" || n == "Zulu" || n == "Etc/Zulu" || n == "UCT" || n == "Etc/UCT" ||
           n == "Universal" || n == "Etc/Universal";
}

// IANA names are path components of letters, digits and - _ + (RFC 8536 / tz "Theory").
bool plausible_name(std::string_view n) {
    if (n.empty() || n.front() == '/' || n.find("..") != std::string_view::npos) return false;
    return std::all_of(n.begin(), n.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '_' ||
               ch == '-' || ch == '+';
    });
}

}  // namespace

time_zone::time_zone() {
    static const auto utc_data = std::make_shared<const data>();
    data_ = utc_data;
}

const std::string& time_zone::name() const { return data_->name; }

std::int64_t time_zone::offset_s(std::int64_t utc_s) const {
    const auto& d = *data_;
    if (d.transitions.empty() || utc_s < d.transitions.front()) {
        if (d.transitions.empty() && d.rule) return rule_offset(*d.rule, utc_s);
        return d.initial_offset;
    }
    if (utc_s >= d.transitions.back() && d.rule) return rule_offset(*d.rule, utc_s);
    const auto it = std::upper_bound(d.transitions.begin(), d.transitions.end(), utc_s);
    return d.offsets[static_cast<std::size_t>(it - d.transitions.begin()) - 1];
}

zone_result load_time_zone(std::string_view name, const std::filesystem::path& zoneinfo_dir) {
    if (is_utc_name(name)) return {time_zone::utc(), ""};
    const std::string quoted = "'" + std::string(name) + "'";
    if (!plausible_name(name))
        return {std::nullopt, "time zone " + quoted + " is not an IANA time zone name"};
    const auto file = zoneinfo_dir / std::string(name);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        return {std::nullopt, "unknown time zone " + quoted + " (not in the tz database at " +
                                  zoneinfo_dir.string() +
                                  "; names are IANA's, e.g. America/New_York)"};
    }
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto d = std::make_shared<time_zone::data>();
    d->name = std::string(name);
    if (!in.good() && !in.eof()) return {std::nullopt, "time zone " + quoted + ": cannot read " + file.string()};
    if (!parse_tzif(bytes, *d))
        return {std::nullopt, "time zone " + quoted + ": " + file.string() + " is not a TZif file"};
    return {time_zone(std::move(d)), ""};
}

}  // namespace coldbrew::schedules
