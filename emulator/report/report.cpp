#include "emulator/report/report.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

namespace coldbrew::report {

namespace {

using json = nlohmann::json;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

// A whole string as a finite, non-negative number; nothing else accepted.
std::optional<double> to_number(std::string_view s) {
    if (s.empty()) return std::nullopt;
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v < 0)
        return std::nullopt;
    return v;
}

// "4157.16 ms" → 4157.16 when the unit is `unit` or absent (a truncated copy loses it).
std::optional<double> to_quantity(std::string_view value, std::string_view unit) {
    value = trim(value);
    auto sp = value.find_first_of(" \t");
    std::string_view number = value.substr(0, sp);
    if (sp != std::string_view::npos && trim(value.substr(sp)) != unit) return std::nullopt;
    return to_number(number);
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms"), so no time zone or libc state is involved.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
}

int two(std::string_view s, std::size_t at) {
    return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// ---- line prefixes ---------------------------------------------------------------------------

struct split_line {
    std::optional<std::int64_t> timestamp_ms;
    std::string function;
    std::string_view message;
};

// "2024/01/01/[$LATEST]abcd": the log stream `aws logs tail` prints after the timestamp.
bool looks_like_stream(std::string_view tok) {
    return tok.size() > 11 && is_digit(tok[0]) && is_digit(tok[1]) && is_digit(tok[2]) &&
           is_digit(tok[3]) && tok[4] == '/' && is_digit(tok[5]) && is_digit(tok[6]) &&
           tok[7] == '/' && is_digit(tok[8]) && is_digit(tok[9]) && tok[10] == '/';
}

split_line split_prefixes(std::string_view s) {
    split_line out;
    // `aws logs filter-log-events --output text`: EVENTS, eventId, ingestionTime,
    // logStreamName, message (itself tab-separated), timestamp.
    if (s.rfind("EVENTS\t", 0) == 0) {
        std::vector<std::string_view> fields;
        std::size_t at = 0;
        while (true) {
            auto tab = s.find('\t', at);
            fields.push_back(
                s.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
            if (tab == std::string_view::npos) break;
            at = tab + 1;
        }
        if (fields.size() < 5) return out;
        const std::size_t msg_at = static_cast<std::size_t>(fields[4].data() - s.data());
        const std::string_view last = trim(fields.back());
        if (fields.size() >= 6 && all_digits(last)) {
            std::int64_t ms = 0;
            std::from_chars(last.data(), last.data() + last.size(), ms);
            out.timestamp_ms = ms;
            out.message = trim(s.substr(
                msg_at, static_cast<std::size_t>(fields.back().data() - s.data()) - msg_at));
        } else {
            out.message = trim(s.substr(msg_at));
        }
        return out;
    }
    std::string_view rest = s;
    for (int i = 0; i < 4; ++i) {
        rest = trim(rest);
        auto end = std::find_if(rest.begin(), rest.end(), is_space);
        const std::string_view tok = rest.substr(0, static_cast<std::size_t>(end - rest.begin()));
        if (!out.timestamp_ms) {
            if (auto ts = parse_timestamp(tok)) {
                out.timestamp_ms = ts;
                rest.remove_prefix(tok.size());
                continue;
            }
        }
        if (out.function.empty() && tok.size() > 2 && tok.front() == '[' && tok.back() == ']') {
            out.function = std::string(tok.substr(1, tok.size() - 2));
            rest.remove_prefix(tok.size());
            continue;
        }
        if (out.timestamp_ms && looks_like_stream(tok)) {
            rest.remove_prefix(tok.size());
            continue;
        }
        break;
    }
    out.message = trim(rest);
    return out;
}

// ---- REPORT text -----------------------------------------------------------------------------

using field_list = std::vector<std::pair<std::string, std::string>>;

// "RequestId: x\tDuration: 1.00 ms\t…" (after the word REPORT) → key/value pairs. Lines copied
// without their tabs are split on the keys instead: a token ending in ':' closes a key, the
// next token is its value, and a following "ms"/"MB" its unit.
std::optional<field_list> read_fields(std::string_view body) {
    field_list out;
    if (body.find('\t') != std::string_view::npos) {
        std::size_t at = 0;
        while (at <= body.size()) {
            auto tab = body.find('\t', at);
            const std::string_view field = trim(
                body.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
            if (!field.empty()) {
                auto colon = field.find(':');
                if (colon == std::string_view::npos || colon == 0) return std::nullopt;
                out.emplace_back(std::string(trim(field.substr(0, colon))),
                                 std::string(trim(field.substr(colon + 1))));
            }
            if (tab == std::string_view::npos) break;
            at = tab + 1;
        }
        return out;
    }
    std::vector<std::string_view> toks;
    for (std::size_t i = 0; i < body.size();) {
        while (i < body.size() && is_space(body[i]))
            ++i;
        const std::size_t start = i;
        while (i < body.size() && !is_space(body[i]))
            ++i;
        if (i > start) toks.push_back(body.substr(start, i - start));
    }
    std::string words;
    for (std::size_t i = 0; i < toks.size();) {
        const std::string_view t = toks[i];
        if (t.size() > 1 && t.back() == ':') {
            std::string key = words.empty() ? std::string(t.substr(0, t.size() - 1))
                                            : words + " " + std::string(t.substr(0, t.size() - 1));
            words.clear();
            if (i + 1 >= toks.size()) return std::nullopt;
            std::string value(toks[i + 1]);
            i += 2;
            if (i < toks.size() && (toks[i] == "ms" || toks[i] == "MB"))
                value += " " + std::string(toks[i++]);
            out.emplace_back(std::move(key), std::move(value));
        } else {
            if (!words.empty()) words += ' ';
            words += t;
            ++i;
        }
    }
    if (!words.empty()) return std::nullopt; // words that name no value: a cut-off line
    return out;
}

std::optional<report_record> read_report_text(std::string_view body) {
    auto fields = read_fields(body);
    if (!fields) return std::nullopt;
    report_record r;
    bool has_duration = false, has_memory = false, has_used = false;
    for (const auto& [key, value] : *fields) {
        if (key == "RequestId") {
            r.request_id = value;
        } else if (key == "Duration") {
            auto v = to_quantity(value, "ms");
            if (!v) return std::nullopt;
            r.duration_ms = *v;
            has_duration = true;
        } else if (key == "Billed Duration") {
            auto v = to_quantity(value, "ms");
            if (!v) return std::nullopt;
            r.billed_duration_ms = v;
        } else if (key == "Memory Size" || key == "Max Memory Used") {
            auto v = to_quantity(value, "MB");
            if (!v || *v > 1e7) return std::nullopt;
            (key == "Memory Size" ? r.memory_size_mb : r.max_memory_used_mb) =
                static_cast<int>(std::lround(*v));
            (key == "Memory Size" ? has_memory : has_used) = true;
        } else if (key == "Init Duration") {
            auto v = to_quantity(value, "ms");
            if (!v) return std::nullopt;
            r.init_duration_ms = v;
        } else if (key == "Status") {
            r.status = value;
        } else if (key == "Error Type") {
            r.error_type = value;
        } else if (key == "Time Scale") {
            auto v = to_number(value);
            if (!v) return std::nullopt;
            r.time_scale = v;
        }
        // Anything else (coldbrew's Modeled Init Duration, SnapStart's Restore Duration, a
        // field added later) is not part of the query.
    }
    if (r.request_id.empty() || !has_duration || !has_memory || !has_used || r.memory_size_mb <= 0)
        return std::nullopt;
    return r;
}

// ---- JSON log format -------------------------------------------------------------------------

std::optional<double> json_number(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

std::string json_string(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

classified_line read_report_json(std::string_view message) {
    const json j = json::parse(message, nullptr, false);
    classified_line out;
    if (j.is_discarded() || !j.is_object()) {
        // A cut-off platform.report object is still a REPORT that was lost.
        if (message.find("\"platform.report\"") != std::string_view::npos)
            out.kind = line_kind::malformed_report;
        return out;
    }
    if (json_string(j, "type") != "platform.report") return out;
    out.kind = line_kind::malformed_report;
    auto rec = j.find("record");
    if (rec == j.end() || !rec->is_object()) return out;
    auto metrics = rec->find("metrics");
    if (metrics == rec->end() || !metrics->is_object()) return out;
    report_record r;
    r.request_id = json_string(*rec, "requestId");
    auto duration = json_number(*metrics, "durationMs");
    auto memory = json_number(*metrics, "memorySizeMB");
    auto used = json_number(*metrics, "maxMemoryUsedMB");
    if (r.request_id.empty() || !duration || !memory || !used || *memory <= 0 || *memory > 1e7 ||
        *used > 1e7)
        return out;
    r.duration_ms = *duration;
    r.memory_size_mb = static_cast<int>(std::lround(*memory));
    r.max_memory_used_mb = static_cast<int>(std::lround(*used));
    r.billed_duration_ms = json_number(*metrics, "billedDurationMs");
    r.init_duration_ms = json_number(*metrics, "initDurationMs");
    r.status = json_string(*rec, "status");
    if (r.status == "success") r.status.clear();
    r.error_type = json_string(*rec, "errorType");
    // coldbrew's JSON form of its scaled cold starts (emulator/telemetry/log_files.hpp).
    if (auto extra = rec->find("coldbrew"); extra != rec->end() && extra->is_object())
        if (auto scale = json_number(*extra, "timeScale"); scale && *scale > 0)
            r.time_scale = scale;
    if (auto t = j.find("time"); t != j.end()) {
        if (!t->is_string()) return out;
        r.timestamp_ms = parse_timestamp(t->get<std::string>());
        if (!r.timestamp_ms) return out;
    }
    out.kind = line_kind::report;
    out.record = std::move(r);
    return out;
}

} // namespace

// ---- public ----------------------------------------------------------------------------------

std::optional<std::int64_t> parse_timestamp(std::string_view s) {
    if (s.size() < 19) return std::nullopt;
    for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u, 12u, 14u, 15u, 17u, 18u})
        if (!is_digit(s[i])) return std::nullopt;
    if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':')
        return std::nullopt;
    const std::int64_t year = two(s, 0) * 100 + two(s, 2);
    const int month = two(s, 5), day = two(s, 8), hour = two(s, 11), minute = two(s, 14),
              second = two(s, 17);
    static constexpr int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1 || day > month_days[month - 1] || hour > 23 ||
        minute > 59 || second > 60)
        return std::nullopt;
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month == 2 && day == 29 && !leap) return std::nullopt;
    std::size_t at = 19;
    int millis = 0;
    if (at < s.size() && (s[at] == '.' || s[at] == ',')) {
        ++at;
        const std::size_t start = at;
        while (at < s.size() && is_digit(s[at])) {
            if (at - start < 3) millis = millis * 10 + (s[at] - '0');
            ++at;
        }
        const std::size_t n = at - start;
        if (n == 0 || n > 9) return std::nullopt;
        for (std::size_t k = n; k < 3; ++k)
            millis *= 10;
    }
    int offset_min = 0;
    if (at < s.size()) {
        if ((s[at] == 'Z' || s[at] == 'z') && at + 1 == s.size()) {
            at = s.size();
        } else if (s[at] == '+' || s[at] == '-') {
            const int sign = s[at] == '-' ? -1 : 1;
            std::string_view tz = s.substr(at + 1);
            int hh = 0, mm = 0;
            if (tz.size() == 5 && tz[2] == ':' && is_digit(tz[0]) && is_digit(tz[1]) &&
                is_digit(tz[3]) && is_digit(tz[4])) {
                hh = two(tz, 0);
                mm = two(tz, 3);
            } else if (tz.size() == 4 && all_digits(tz)) {
                hh = two(tz, 0);
                mm = two(tz, 2);
            } else if (tz.size() == 2 && all_digits(tz)) {
                hh = two(tz, 0);
            } else {
                return std::nullopt;
            }
            if (hh > 23 || mm > 59) return std::nullopt;
            offset_min = sign * (hh * 60 + mm);
            at = s.size();
        } else {
            return std::nullopt;
        }
    }
    const std::int64_t days =
        days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
    const std::int64_t secs = ((days * 24 + hour) * 60 + minute) * 60 + second - offset_min * 60;
    return secs * 1000 + millis;
}

std::string format_utc(std::int64_t epoch_ms) {
    const std::int64_t secs = floor_div(epoch_ms, 1000);
    const std::int64_t days = floor_div(secs, 86400);
    const std::int64_t in_day = secs - days * 86400;
    std::int64_t y = 0;
    unsigned m = 0, d = 0;
    civil_from_days(days, y, m, d);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02dZ", static_cast<long long>(y), m,
                  d, static_cast<int>(in_day / 3600), static_cast<int>(in_day / 60 % 60),
                  static_cast<int>(in_day % 60));
    return buf;
}

std::optional<std::int64_t> parse_bin(std::string_view text) {
    text = trim(text);
    if (text.size() < 2) return std::nullopt;
    const std::string_view digits = text.substr(0, text.size() - 1);
    if (!all_digits(digits) || digits.size() > 7) return std::nullopt;
    std::int64_t n = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (n <= 0) return std::nullopt;
    switch (text.back()) {
    case 's':
        return n * 1000;
    case 'm':
        return n * 60'000;
    case 'h':
        return n * 3'600'000;
    case 'd':
        return n * 86'400'000;
    default:
        return std::nullopt;
    }
}

std::string bin_label(std::int64_t bin_ms) {
    if (bin_ms % 86'400'000 == 0) return std::to_string(bin_ms / 86'400'000) + "d";
    if (bin_ms % 3'600'000 == 0) return std::to_string(bin_ms / 3'600'000) + "h";
    if (bin_ms % 60'000 == 0) return std::to_string(bin_ms / 60'000) + "m";
    if (bin_ms % 1000 == 0) return std::to_string(bin_ms / 1000) + "s";
    return std::to_string(bin_ms) + "ms";
}

std::string function_from_path(std::string_view path) {
    if (path == "-") return "stdin";
    auto slash = path.find_last_of('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    auto dot = name.find_last_of('.');
    if (dot != std::string_view::npos && dot > 0) name = name.substr(0, dot);
    for (std::string_view group : {"_aws_lambda_", "aws_lambda_", "-aws-lambda-", "aws-lambda-"}) {
        if (name.size() > group.size() && name.rfind(group, 0) == 0) {
            name.remove_prefix(group.size());
            break;
        }
    }
    return std::string(name);
}

classified_line classify_line(std::string_view line) {
    line = trim(line);
    classified_line out;
    if (line.empty()) return out;
    split_line parts = split_prefixes(line);
    const std::string_view msg = parts.message;
    if (!msg.empty() && msg.front() == '{') {
        out = read_report_json(msg);
    } else if (msg.rfind("REPORT RequestId:", 0) == 0) {
        // The platform's own prefix: a handler's "REPORT sent" is its output, not a lost line.
        auto r = read_report_text(msg.substr(6));
        if (r) {
            out.kind = line_kind::report;
            out.record = std::move(r);
        } else {
            out.kind = line_kind::malformed_report;
        }
    }
    if (out.record) {
        // The line's own prefix is when it was written; a JSON object's "time" is the fallback.
        if (parts.timestamp_ms) out.record->timestamp_ms = parts.timestamp_ms;
        out.record->function = std::move(parts.function);
    }
    return out;
}

std::optional<report_record> parse_line(std::string_view line) {
    return classify_line(line).record;
}

void parse_input(std::string_view text, std::string_view source, std::string_view function,
                 parse_result& into) {
    auto malformed_at = [&](const std::string& where) {
        if (into.malformed++ == 0) into.first_malformed = std::string(source) + ":" + where;
    };
    const std::string_view body = trim(text);
    if (!body.empty() && body.front() == '{') {
        const json doc = json::parse(body, nullptr, false);
        auto events = doc.is_object() ? doc.find("events") : doc.end();
        if (!doc.is_discarded() && doc.is_object() && events != doc.end() && events->is_array()) {
            std::size_t index = 0;
            for (const auto& ev : *events) {
                ++index;
                if (!ev.is_object()) continue;
                auto m = ev.find("message");
                if (m == ev.end() || !m->is_string()) continue;
                classified_line c = classify_line(m->get<std::string>());
                if (c.kind == line_kind::malformed_report)
                    malformed_at("event " + std::to_string(index));
                if (!c.record) continue;
                if (auto ts = ev.find("timestamp");
                    !c.record->timestamp_ms && ts != ev.end() && ts->is_number_integer())
                    c.record->timestamp_ms = ts->get<std::int64_t>();
                if (c.record->function.empty()) c.record->function = std::string(function);
                into.records.push_back(std::move(*c.record));
            }
            return;
        }
    }
    std::size_t line_no = 0;
    // `--output text` may put an event's timestamp on the line after its message (the
    // message's own trailing newline): the record waiting for it.
    std::optional<std::size_t> waiting;
    for (std::size_t at = 0; at <= text.size();) {
        auto nl = text.find('\n', at);
        const std::string_view line =
            text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
        at = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        if (waiting) {
            const std::string_view t = trim(line);
            if (all_digits(t) && t.size() <= 18) {
                std::int64_t ms = 0;
                std::from_chars(t.data(), t.data() + t.size(), ms);
                into.records[*waiting].timestamp_ms = ms;
                waiting.reset();
                continue;
            }
            waiting.reset();
        }
        classified_line c = classify_line(line);
        if (c.kind == line_kind::malformed_report) malformed_at(std::to_string(line_no));
        if (!c.record) continue;
        if (c.record->function.empty()) c.record->function = std::string(function);
        if (!c.record->timestamp_ms && line.rfind("EVENTS\t", 0) == 0)
            waiting = into.records.size();
        into.records.push_back(std::move(*c.record));
    }
}

// ---- aggregation -----------------------------------------------------------------------------

namespace {

struct accumulator {
    std::int64_t n = 0, cold = 0;
    std::optional<double> max_init;
    double sum_duration = 0, max_duration = 0, min_duration = 0;
    int max_memory = 0;
    double sum_used_pct = 0;

    void add(const report_record& r) {
        if (n == 0) min_duration = max_duration = r.duration_ms;
        ++n;
        if (r.init_duration_ms) {
            if (*r.init_duration_ms > 0) ++cold;
            max_init = std::max(max_init.value_or(*r.init_duration_ms), *r.init_duration_ms);
        }
        sum_duration += r.duration_ms;
        max_duration = std::max(max_duration, r.duration_ms);
        min_duration = std::min(min_duration, r.duration_ms);
        max_memory = std::max(max_memory, r.memory_size_mb);
        sum_used_pct += static_cast<double>(r.max_memory_used_mb) / r.memory_size_mb * 100.0;
    }
    void merge(const accumulator& o) {
        if (o.n == 0) return;
        if (n == 0) {
            *this = o;
            return;
        }
        n += o.n;
        cold += o.cold;
        if (o.max_init) max_init = std::max(max_init.value_or(*o.max_init), *o.max_init);
        sum_duration += o.sum_duration;
        max_duration = std::max(max_duration, o.max_duration);
        min_duration = std::min(min_duration, o.min_duration);
        max_memory = std::max(max_memory, o.max_memory);
        sum_used_pct += o.sum_used_pct;
    }
    row to_row(const std::string& function) const {
        row r;
        r.function = function;
        r.invocations = n;
        r.cold_starts = cold;
        r.cold_start_pct = n ? static_cast<double>(cold) / static_cast<double>(n) * 100.0 : 0;
        r.max_init_ms = max_init;
        r.avg_duration_ms = n ? sum_duration / static_cast<double>(n) : 0;
        r.max_duration_ms = max_duration;
        r.min_duration_ms = min_duration;
        r.memory_mb = max_memory;
        r.avg_memory_used_pct = n ? sum_used_pct / static_cast<double>(n) : 0;
        return r;
    }
};

} // namespace

table aggregate(const std::vector<report_record>& records, std::int64_t bin_ms) {
    table t;
    t.bin_ms = bin_ms > 0 ? bin_ms : 300'000;
    // std::optional orders nullopt first: the untimed bin leads its function's rows.
    std::map<std::string, std::map<std::optional<std::int64_t>, accumulator>> by_function;
    for (const auto& r : records) {
        std::optional<std::int64_t> bin;
        if (r.timestamp_ms)
            bin = floor_div(*r.timestamp_ms, t.bin_ms) * t.bin_ms;
        else
            t.has_untimed = true;
        by_function[r.function.empty() ? "-" : r.function][bin].add(r);
        if (r.time_scale && *r.time_scale != 1.0)
            t.time_scale = std::min(t.time_scale.value_or(*r.time_scale), *r.time_scale);
        ++t.invocations;
    }
    t.functions = by_function.size();
    for (const auto& [function, bins] : by_function) {
        accumulator total;
        for (const auto& [bin, acc] : bins) {
            row r = acc.to_row(function);
            r.bin_start_ms = bin;
            t.rows.push_back(std::move(r));
            total.merge(acc);
        }
        row r = total.to_row(function);
        r.total = true;
        t.rows.push_back(std::move(r));
    }
    return t;
}

// ---- text and JSON ---------------------------------------------------------------------------

namespace {

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double round2(double v) {
    return std::round(v * 100.0) / 100.0;
}

std::string bin_cell(const row& r) {
    if (r.total) return "total";
    if (!r.bin_start_ms) return "-";
    std::string s = format_utc(*r.bin_start_ms); // 2026-11-30T23:25:00Z → 2026-11-30 23:25:00
    s[10] = ' ';
    s.pop_back();
    return s;
}

} // namespace

std::string render_table(const table& t) {
    static const char* header[] = {"function",   "bin start (UTC)", "invocations",   "cold starts",
                                   "cold %",     "max init ms",     "avg dur ms",    "max dur ms",
                                   "min dur ms", "memory MB",       "avg mem used %"};
    constexpr std::size_t cols = std::size(header);
    std::vector<std::array<std::string, cols>> cells;
    cells.push_back({});
    for (std::size_t c = 0; c < cols; ++c)
        cells.back()[c] = header[c];
    for (const auto& r : t.rows) {
        cells.push_back(
            {r.function, bin_cell(r), std::to_string(r.invocations), std::to_string(r.cold_starts),
             fixed(r.cold_start_pct, 1), r.max_init_ms ? fixed(*r.max_init_ms, 2) : "-",
             fixed(r.avg_duration_ms, 2), fixed(r.max_duration_ms, 2), fixed(r.min_duration_ms, 2),
             std::to_string(r.memory_mb), fixed(r.avg_memory_used_pct, 1)});
    }
    std::array<std::size_t, cols> width{};
    for (const auto& line : cells)
        for (std::size_t c = 0; c < cols; ++c)
            width[c] = std::max(width[c], line[c].size());

    std::string out = "REPORT lines: " + std::to_string(t.invocations) + " invocations of " +
                      std::to_string(t.functions) +
                      (t.functions == 1 ? " function" : " functions") + ", by bin(" +
                      bin_label(t.bin_ms) + ")\n";
    auto emit = [&](const std::array<std::string, cols>& line) {
        std::string s;
        for (std::size_t c = 0; c < cols; ++c) {
            const std::size_t pad = width[c] - line[c].size();
            if (c > 0) s += "  ";
            if (c < 2)
                s += line[c] + std::string(pad, ' '); // names left, numbers right
            else
                s += std::string(pad, ' ') + line[c];
        }
        while (!s.empty() && s.back() == ' ')
            s.pop_back();
        out += s + "\n";
    };
    emit(cells[0]);
    std::size_t rule = 0;
    for (std::size_t c = 0; c < cols; ++c)
        rule += width[c] + (c ? 2 : 0);
    out += std::string(rule, '-') + "\n";
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        emit(cells[i + 1]);
        if (t.rows[i].total && i + 1 < t.rows.size()) out += "\n";
    }
    if (t.has_untimed)
        out += "bin \"-\": lines without a timestamp (plain stdout capture), counted in one bin\n";
    if (t.time_scale) {
        char scale[32];
        std::snprintf(scale, sizeof scale, "%g", *t.time_scale);
        out += std::string("Init Duration from coldbrew's scaled runs (Time Scale ") + scale +
               ") is the modeled value; those cold starts were slept scaled\n";
    }
    return out;
}

std::string render_json(const table& t) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : t.rows) {
        nlohmann::ordered_json o;
        o["function"] = r.function;
        o["bin_start"] = r.bin_start_ms ? nlohmann::ordered_json(format_utc(*r.bin_start_ms))
                                        : nlohmann::ordered_json(nullptr);
        o["total"] = r.total;
        o["invocations"] = r.invocations;
        o["cold_starts"] = r.cold_starts;
        o["cold_start_pct"] = round2(r.cold_start_pct);
        o["max_init_ms"] = r.max_init_ms ? nlohmann::ordered_json(round2(*r.max_init_ms))
                                         : nlohmann::ordered_json(nullptr);
        o["avg_duration_ms"] = round2(r.avg_duration_ms);
        o["max_duration_ms"] = round2(r.max_duration_ms);
        o["min_duration_ms"] = round2(r.min_duration_ms);
        o["memory_mb"] = r.memory_mb;
        o["avg_memory_used_pct"] = round2(r.avg_memory_used_pct);
        arr.push_back(std::move(o));
    }
    return arr.dump(2) + "\n";
}

} // namespace coldbrew::report
