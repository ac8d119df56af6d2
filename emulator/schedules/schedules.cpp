// Schedule expressions: parsing rate(), cron() and at(), and their next firing. The syntax and
// its sources are in schedules.hpp.

#include "emulator/schedules/schedules.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

namespace coldbrew::schedules {

namespace {

using std::int64_t;

// ---- calendar ---------------------------------------------------------------------------

struct civil {
    int year;
    unsigned month, day;
};

int64_t days_from_civil(int y, unsigned m, unsigned d) {
    using namespace std::chrono;
    return sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count();
}

civil civil_from_days(int64_t days_since_epoch) {
    using namespace std::chrono;
    const year_month_day ymd{sys_days{days{days_since_epoch}}};
    return {static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
            static_cast<unsigned>(ymd.day())};
}

unsigned last_day_of(int y, unsigned m) {
    using namespace std::chrono;
    return static_cast<unsigned>((year{y} / month{m} / last).day());
}

// 1 = Sunday … 7 = Saturday, the cron numbering.
int cron_weekday(int64_t days_since_epoch) {
    using namespace std::chrono;
    return static_cast<int>(weekday{sys_days{days{days_since_epoch}}}.c_encoding()) + 1;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// ---- parsing ----------------------------------------------------------------------------

struct field_error {
    std::string text;
};

constexpr std::array<std::string_view, 12> month_names = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<std::string_view, 7> day_names = {"SUN", "MON", "TUE", "WED",
                                                       "THU", "FRI", "SAT"};

struct field_kind {
    const char* name;  // for messages
    int lo, hi;
    bool months = false, weekdays = false;
    bool cyclic = true;  // ranges may wrap past the end (not years)
};

bool all_digits(std::string_view s) {
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

// One value of a field: a number in range, or a month / weekday name.
int read_value(std::string_view v, const field_kind& k) {
    const std::string u = upper(v);
    if (k.months) {
        for (std::size_t i = 0; i < month_names.size(); ++i)
            if (u == month_names[i]) return static_cast<int>(i) + 1;
    }
    if (k.weekdays) {
        for (std::size_t i = 0; i < day_names.size(); ++i)
            if (u == day_names[i]) return static_cast<int>(i) + 1;
    }
    if (!all_digits(v)) {
        throw field_error{std::string(k.name) + ": '" + std::string(v) + "' is not a value" +
                          (k.months ? " (1-12 or JAN-DEC)"
                                    : k.weekdays ? " (1-7 or SUN-SAT)" : "")};
    }
    const int n = std::stoi(std::string(v));
    if (n < k.lo || n > k.hi) {
        throw field_error{std::string(k.name) + ": " + std::to_string(n) + " is out of range " +
                          std::to_string(k.lo) + "-" + std::to_string(k.hi)};
    }
    return n;
}

// A list of terms (`*`, `v`, `a-b`, with `/step` on any of them), each value set in `out`
// (indexed by value - base).
template <std::size_t N>
void read_terms(std::string_view field, const field_kind& k, bool allow_step, std::bitset<N>& out,
                int base = 0) {
    std::size_t from = 0;
    while (from <= field.size()) {
        const auto comma = field.find(',', from);
        const std::string_view term =
            field.substr(from, comma == std::string_view::npos ? std::string_view::npos
                                                               : comma - from);
        if (term.empty()) throw field_error{std::string(k.name) + ": an empty list item"};
        std::string_view range = term;
        int step = 1;
        bool stepped = false;
        if (const auto slash = term.find('/'); slash != std::string_view::npos) {
            if (!allow_step)
                throw field_error{std::string(k.name) + ": '/' is not allowed here"};
            const std::string_view s = term.substr(slash + 1);
            if (!all_digits(s) || std::stoi(std::string(s)) == 0)
                throw field_error{std::string(k.name) + ": '" + std::string(term) +
                                  "' needs a positive increment after '/'"};
            step = std::stoi(std::string(s));
            range = term.substr(0, slash);
            stepped = true;
        }
        int a = k.lo, b = k.hi;
        if (range == "*") {
        } else if (const auto dash = range.find('-');
                   dash != std::string_view::npos && dash > 0) {
            a = read_value(range.substr(0, dash), k);
            b = read_value(range.substr(dash + 1), k);
        } else {
            a = read_value(range, k);
            // `a/step` runs from a to the field's end; a lone value is itself.
            b = stepped ? k.hi : a;
        }
        if (a > b && !k.cyclic) {
            throw field_error{std::string(k.name) + ": the range '" + std::string(range) +
                              "' runs backwards"};
        }
        // A range may wrap past the field's end (FRI-MON, 22-2), as in Quartz.
        const int span = k.hi - k.lo + 1;
        const int length = (b - a + span) % span;
        for (int off = 0; off <= length; off += step) {
            const int v = k.lo + (a - k.lo + off) % span;
            out.set(static_cast<std::size_t>(v - base));
        }
        if (comma == std::string_view::npos) break;
        from = comma + 1;
    }
}

void read_day_of_month(std::string_view f, cron_spec& c) {
    const field_kind k{"day-of-month", 1, 31};
    if (f == "?") {
        c.dom_any = true;
        return;
    }
    const std::string u = upper(f);
    if (u == "L") {
        c.last_day = true;
        return;
    }
    if (u == "LW") {
        c.last_weekday = true;
        return;
    }
    if (u.size() > 2 && u.rfind("L-", 0) == 0) {
        const std::string n = u.substr(2);
        if (!all_digits(n) || std::stoi(n) > 30)
            throw field_error{"day-of-month: '" + std::string(f) + "' needs L-<0..30>"};
        c.last_day = true;
        c.last_day_offset = std::stoi(n);
        return;
    }
    if (u.size() > 1 && u.back() == 'W') {
        c.nearest_weekday = read_value(std::string_view(u).substr(0, u.size() - 1), k);
        return;
    }
    if (u.find('L') != std::string::npos || u.find('W') != std::string::npos) {
        throw field_error{"day-of-month: '" + std::string(f) +
                          "': L and W stand alone (L, L-n, LW, nW), not in a list"};
    }
    read_terms(f, k, true, c.days);
}

void read_day_of_week(std::string_view f, cron_spec& c) {
    const field_kind k{"day-of-week", 1, 7, false, true};
    if (f == "?") {
        c.dow_any = true;
        return;
    }
    const std::string u = upper(f);
    if (const auto hash = u.find('#'); hash != std::string::npos) {
        if (u.find(',') != std::string::npos)
            throw field_error{"day-of-week: with '#' the field holds one expression only"};
        c.nth_weekday = read_value(std::string_view(u).substr(0, hash), k);
        const std::string n = u.substr(hash + 1);
        if (!all_digits(n) || std::stoi(n) < 1 || std::stoi(n) > 5)
            throw field_error{"day-of-week: '" + std::string(f) + "': the instance after # is 1-5"};
        c.nth = std::stoi(n);
        return;
    }
    if (u == "L") {
        // L alone is the last day of the week: Saturday.
        c.weekdays.set(7);
        return;
    }
    if (u.size() > 1 && u.back() == 'L') {
        c.last_of_week = read_value(std::string_view(u).substr(0, u.size() - 1), k);
        return;
    }
    if (u.find('L') != std::string::npos) {  // no weekday name has an L
        throw field_error{"day-of-week: '" + std::string(f) +
                          "': L stands alone or after one day (5L), not in a list"};
    }
    if (f.find('/') != std::string_view::npos)
        throw field_error{"day-of-week: '/' is not allowed (wildcards: , - * ? L #)"};
    read_terms(f, k, false, c.weekdays);
}

std::optional<schedule_expression> parse_cron(std::string_view body, std::string& err) {
    std::istringstream in{std::string(body)};
    std::vector<std::string> f;
    for (std::string x; in >> x;) f.push_back(x);
    if (f.size() != 6) {
        err = "a cron expression has 6 fields (minutes hours day-of-month month day-of-week "
              "year), got " + std::to_string(f.size());
        return std::nullopt;
    }
    schedule_expression e;
    e.type = schedule_expression::kind::cron;
    auto& c = e.cron;
    try {
        for (int i : {0, 1, 3, 5}) {
            if (f[static_cast<std::size_t>(i)] == "?") {
                throw field_error{std::string(i == 0 ? "minutes" : i == 1 ? "hours"
                                              : i == 3 ? "month" : "year") +
                                  ": '?' is only for day-of-month and day-of-week"};
            }
        }
        read_terms(f[0], field_kind{"minutes", 0, 59}, true, c.minutes);
        read_terms(f[1], field_kind{"hours", 0, 23}, true, c.hours);
        read_day_of_month(f[2], c);
        read_terms(f[3], field_kind{"month", 1, 12, true}, true, c.months);
        read_day_of_week(f[4], c);
        read_terms(f[5], field_kind{"year", 1970, 2199, false, false, false}, true, c.years, 1970);
    } catch (const field_error& fe) {
        err = fe.text;
        return std::nullopt;
    }
    if (c.dom_any == c.dow_any) {
        err = c.dom_any ? "day-of-month and day-of-week are both '?'; give one of them"
                        : "one of day-of-month and day-of-week must be '?' (you can't use both)";
        return std::nullopt;
    }
    return e;
}

std::optional<schedule_expression> parse_rate(std::string_view body, std::string& err) {
    std::istringstream in{std::string(body)};
    std::string n, unit, rest;
    in >> n >> unit >> rest;
    const std::string singular =
        unit.size() > 1 && unit.back() == 's' ? unit.substr(0, unit.size() - 1) : unit;
    double unit_ms = 0;
    if (singular == "minute") unit_ms = 60'000;
    if (singular == "hour") unit_ms = 3'600'000;
    if (singular == "day") unit_ms = 86'400'000;  // 24 hours, also across DST
    if (!all_digits(n) || std::stol(n) == 0 || !rest.empty() || unit_ms == 0) {
        err = "a rate is rate(<positive whole number> minute|minutes|hour|hours|day|days)";
        return std::nullopt;
    }
    // The singular unit for 1 only, the plural for any other value.
    if ((std::stol(n) == 1) != (singular == unit)) {
        err = "use '" + n + " " + (std::stol(n) == 1 ? singular : singular + "s") + "'";
        return std::nullopt;
    }
    schedule_expression e;
    e.type = schedule_expression::kind::rate;
    e.rate_ms = static_cast<double>(std::stol(n)) * unit_ms;
    return e;
}

std::optional<schedule_expression> parse_at(std::string_view t, std::string& err) {
    auto digits = [&](std::size_t at, std::size_t n) {
        return all_digits(t.substr(at, n)) ? std::stoi(std::string(t.substr(at, n))) : -1;
    };
    const bool shaped = t.size() == 19 && t[4] == '-' && t[7] == '-' && t[10] == 'T' &&
                        t[13] == ':' && t[16] == ':';
    const int y = shaped ? digits(0, 4) : -1, mo = shaped ? digits(5, 2) : -1,
              d = shaped ? digits(8, 2) : -1, h = shaped ? digits(11, 2) : -1,
              mi = shaped ? digits(14, 2) : -1, s = shaped ? digits(17, 2) : -1;
    if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0) {
        err = "a one-time schedule is at(yyyy-mm-ddThh:mm:ss)";
        return std::nullopt;
    }
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 ||
        d > static_cast<int>(last_day_of(y, static_cast<unsigned>(mo))) || h > 23 || mi > 59 ||
        s > 59) {
        err = "at(): '" + std::string(t) + "' is not a date and time";
        return std::nullopt;
    }
    schedule_expression e;
    e.type = schedule_expression::kind::at;
    e.at_local_s = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 +
                   h * 3600 + mi * 60 + s;
    return e;
}

// ---- next firing ------------------------------------------------------------------------

// The UTC instants whose local time in `z` is `local_s`, ascending: none in a spring-forward
// gap, two in a fall-back overlap. Assumes offset changes are more than a day apart.
std::vector<int64_t> utc_for_local(const time_zone& z, int64_t local_s) {
    std::vector<int64_t> out;
    for (int64_t probe : {local_s - 86400, local_s + 86400}) {
        const int64_t off = z.offset_s(probe);
        const int64_t u = local_s - off;
        if (z.offset_s(u) == off && std::find(out.begin(), out.end(), u) == out.end())
            out.push_back(u);
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool day_matches(const cron_spec& c, int64_t day) {
    const civil cv = civil_from_days(day);
    const unsigned last = last_day_of(cv.year, cv.month);
    if (c.dow_any) {
        if (c.last_day) return static_cast<int>(cv.day) == static_cast<int>(last) - c.last_day_offset;
        if (c.last_weekday) {
            int64_t l = days_from_civil(cv.year, cv.month, last);
            while (cron_weekday(l) == 1 || cron_weekday(l) == 7) --l;
            return l == day;
        }
        if (c.nearest_weekday) {
            const unsigned n = static_cast<unsigned>(c.nearest_weekday);
            if (n > last) return false;
            int64_t target = days_from_civil(cv.year, cv.month, n);
            const int wd = cron_weekday(target);
            // Never into another month: the 1st on a Saturday moves to Monday the 3rd, the
            // last day on a Sunday back to Friday.
            if (wd == 7) target += n == 1 ? 2 : -1;
            if (wd == 1) target += n == last ? -2 : 1;
            return target == day;
        }
        return c.days.test(cv.day);
    }
    const int wd = cron_weekday(day);
    if (c.last_of_week) return wd == c.last_of_week && cv.day + 7 > last;
    if (c.nth) return wd == c.nth_weekday && static_cast<int>((cv.day - 1) / 7 + 1) == c.nth;
    return c.weekdays.test(static_cast<std::size_t>(wd));
}

// Local times are walked in order; each counts at its first UTC instant only (a time that
// happens twice in a fall-back hour fires once, a time in a spring-forward gap never). First
// instants rise with local time, so the first one after `after_ms` is the answer. The walk
// starts 3 hours of local time early so an overlap hour before `after_ms`'s local time is seen.
std::optional<double> next_cron(const schedule_expression& e, double after_ms) {
    const auto& c = e.cron;
    const int64_t first_s =
        (floor_div(static_cast<int64_t>(std::floor(after_ms)), 60'000) + 1) * 60;
    const int64_t start_local = first_s + e.zone.offset_s(first_s) - 3 * 3600;
    const int64_t first_day = floor_div(start_local, 86400);
    const int64_t first_minute = (start_local - first_day * 86400) / 60;
    int64_t day = first_day;
    for (;;) {
        const civil cv = civil_from_days(day);
        if (cv.year > 2199) return std::nullopt;
        if (cv.year < 1970) {
            day = days_from_civil(1970, 1, 1);
            continue;
        }
        if (!c.years.test(static_cast<std::size_t>(cv.year - 1970))) {
            day = days_from_civil(cv.year + 1, 1, 1);
            continue;
        }
        if (!c.months.test(cv.month)) {
            day = cv.month == 12 ? days_from_civil(cv.year + 1, 1, 1)
                                 : days_from_civil(cv.year, cv.month + 1, 1);
            continue;
        }
        if (day_matches(c, day)) {
            for (int h = 0; h < 24; ++h) {
                if (!c.hours.test(static_cast<std::size_t>(h))) continue;
                for (int m = 0; m < 60; ++m) {
                    if (!c.minutes.test(static_cast<std::size_t>(m))) continue;
                    if (day == first_day && h * 60 + m < first_minute) continue;
                    const auto u = utc_for_local(e.zone, day * 86400 + h * 3600 + m * 60);
                    if (u.empty()) continue;
                    const double ms = static_cast<double>(u.front()) * 1000;
                    if (ms > after_ms) return ms;
                }
            }
        }
        ++day;
    }
}

}  // namespace

parse_result parse_schedule(std::string_view expression, std::string_view timezone,
                            const std::filesystem::path& zoneinfo_dir) {
    const std::string quoted = "schedule expression '" + std::string(expression) + "': ";
    auto inner = [&](std::string_view prefix) -> std::optional<std::string_view> {
        if (expression.size() >= prefix.size() + 1 && expression.substr(0, prefix.size()) == prefix &&
            expression.back() == ')')
            return expression.substr(prefix.size(), expression.size() - prefix.size() - 1);
        return std::nullopt;
    };
    std::string err;
    std::optional<schedule_expression> e;
    if (auto r = inner("rate(")) {
        e = parse_rate(*r, err);
    } else if (auto c = inner("cron(")) {
        e = parse_cron(*c, err);
    } else if (auto a = inner("at(")) {
        e = parse_at(*a, err);
    } else {
        return {std::nullopt, "schedule expression '" + std::string(expression) +
                                  "' is not rate(<value> <unit>), cron(<6 fields>) or "
                                  "at(yyyy-mm-ddThh:mm:ss)"};
    }
    if (!e) return {std::nullopt, quoted + err};
    e->text = std::string(expression);
    auto z = load_time_zone(timezone, zoneinfo_dir);
    if (!z) return {std::nullopt, "ScheduleExpressionTimezone: " + z.error};
    e->zone = *z.zone;
    return {std::move(e), ""};
}

std::optional<double> next_fire_ms(const schedule_expression& s, double after_epoch_ms,
                                   double rate_start_epoch_ms) {
    if (!std::isfinite(after_epoch_ms)) return std::nullopt;
    switch (s.type) {
        case schedule_expression::kind::rate: {
            if (!(s.rate_ms > 0)) return std::nullopt;
            if (std::isnan(rate_start_epoch_ms)) return after_epoch_ms + s.rate_ms;
            double k = std::floor((after_epoch_ms - rate_start_epoch_ms) / s.rate_ms) + 1;
            if (k < 1) k = 1;
            double t = rate_start_epoch_ms + k * s.rate_ms;
            if (t <= after_epoch_ms) t += s.rate_ms;
            return t;
        }
        case schedule_expression::kind::at: {
            auto u = utc_for_local(s.zone, s.at_local_s);
            // A time in a spring-forward gap is read with the offset before the change, so
            // it lands just after the change, as most schedulers resolve it.
            const int64_t utc = u.empty() ? s.at_local_s - s.zone.offset_s(s.at_local_s - 86400)
                                          : u.front();
            const double ms = static_cast<double>(utc) * 1000;
            if (ms > after_epoch_ms) return ms;
            return std::nullopt;
        }
        case schedule_expression::kind::cron:
        default:
            return next_cron(s, after_epoch_ms);
    }
}

std::string rule_arn(const std::string& region, const std::string& account_id,
                     const std::string& rule_name) {
    return "arn:aws:events:" + region + ":" + account_id + ":rule/" + rule_name;
}

std::string utc_text(double epoch_ms) {
    const int64_t s = floor_div(static_cast<int64_t>(std::floor(epoch_ms)), 1000);
    const int64_t day = floor_div(s, 86400);
    const int64_t sod = s - day * 86400;
    const civil c = civil_from_days(day);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", c.year, c.month, c.day,
                  static_cast<int>(sod / 3600), static_cast<int>(sod / 60 % 60),
                  static_cast<int>(sod % 60));
    return buf;
}

std::string scheduled_event_json(const std::string& id, double fire_epoch_ms,
                                 const std::string& region, const std::string& account_id,
                                 const std::string& rule_name) {
    // ordered_json keeps EventBridge's field order, which some handlers log verbatim.
    nlohmann::ordered_json j;
    j["version"] = "0";
    j["id"] = id;
    j["detail-type"] = "Scheduled Event";
    j["source"] = "aws.events";
    j["account"] = account_id;
    j["time"] = utc_text(fire_epoch_ms);
    j["region"] = region;
    j["resources"] = nlohmann::ordered_json::array({rule_arn(region, account_id, rule_name)});
    j["detail"] = nlohmann::ordered_json::object();
    return j.dump();
}

std::string schedule_arn(const std::string& region, const std::string& account_id,
                         const std::string& schedule_name) {
    return "arn:aws:scheduler:" + region + ":" + account_id + ":schedule/default/" +
           schedule_name;
}

std::string scheduler_event_json(const std::string& id, double fire_epoch_ms,
                                 const std::string& region, const std::string& account_id,
                                 const std::string& schedule_name) {
    nlohmann::ordered_json j;
    j["version"] = "0";
    j["id"] = id;
    j["detail-type"] = "Scheduled Event";
    j["source"] = "aws.scheduler";
    j["account"] = account_id;
    j["time"] = utc_text(fire_epoch_ms);
    j["region"] = region;
    j["resources"] =
        nlohmann::ordered_json::array({schedule_arn(region, account_id, schedule_name)});
    // A string, not an object: what Scheduler sends (see schedules.hpp).
    j["detail"] = "{}";
    return j.dump();
}

}  // namespace coldbrew::schedules
