#include "emulator/telemetry/log_files.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

namespace coldbrew::telemetry {

namespace {

using ojson = nlohmann::ordered_json;

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

// A request id as the platform prints it: no spaces or tabs, not empty.
bool plain_token(std::string_view s) {
    return !s.empty() && s.find_first_of(" \t") == std::string_view::npos;
}

std::optional<double> number(std::string_view s) {
    if (s.empty() || s.size() > 40) return std::nullopt;
    std::string text(s);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return std::nullopt;
    return v;
}

// "841.60 ms" → 841.6 (with `unit` " ms"); nullopt when the unit or number is off.
std::optional<double> with_unit(std::string_view s, std::string_view unit) {
    if (s.size() <= unit.size() || s.substr(s.size() - unit.size()) != unit) return std::nullopt;
    return number(s.substr(0, s.size() - unit.size()));
}

// "Key: value" fields of a tab-separated platform line (the trailing tab leaves an empty
// field, skipped). nullopt when a field has no ": ".
std::optional<std::vector<std::pair<std::string_view, std::string_view>>>
fields(std::string_view s) {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    while (!s.empty()) {
        auto tab = s.find('\t');
        auto f = s.substr(0, tab);
        s = tab == std::string_view::npos ? std::string_view{} : s.substr(tab + 1);
        if (f.empty()) continue;
        auto colon = f.find(": ");
        if (colon == std::string_view::npos) return std::nullopt;
        out.emplace_back(f.substr(0, colon), f.substr(colon + 2));
    }
    return out;
}

std::string envelope(std::int64_t epoch_ms, std::string_view type, ojson record) {
    ojson j;
    j["time"] = iso8601_ms(epoch_ms);
    j["type"] = type;
    j["record"] = std::move(record);
    return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::int64_t whole(double v) {
    return static_cast<std::int64_t>(v);
}

platform_json_result report_json(std::string_view line, std::int64_t epoch_ms) {
    constexpr std::string_view prefix = "REPORT RequestId: ";
    auto rest = line.substr(prefix.size());
    auto tab = rest.find('\t');
    if (tab == std::string_view::npos) return {};
    auto id = rest.substr(0, tab);
    auto fs = fields(rest.substr(tab + 1));
    if (!plain_token(id) || !fs) return {};
    ojson metrics, coldbrew_extra;
    std::string status = "success", error_type;
    bool duration = false, billed = false, memory = false, used = false;
    for (const auto& [k, v] : *fs) {
        if (k == "Duration") {
            auto x = with_unit(v, " ms");
            if (!x) return {};
            metrics["durationMs"] = *x;
            duration = true;
        } else if (k == "Billed Duration") {
            auto x = with_unit(v, " ms");
            if (!x) return {};
            metrics["billedDurationMs"] = whole(*x);
            billed = true;
        } else if (k == "Memory Size") {
            auto x = with_unit(v, " MB");
            if (!x) return {};
            metrics["memorySizeMB"] = whole(*x);
            memory = true;
        } else if (k == "Max Memory Used") {
            auto x = with_unit(v, " MB");
            if (!x) return {};
            metrics["maxMemoryUsedMB"] = whole(*x);
            used = true;
        } else if (k == "Init Duration") {
            auto x = with_unit(v, " ms");
            if (!x) return {};
            metrics["initDurationMs"] = *x;
        } else if (k == "Modeled Init Duration") {
            auto x = with_unit(v, " ms");
            if (!x) return {};
            coldbrew_extra["modeledInitDurationMs"] = *x;
        } else if (k == "Init Overrun") {
            auto x = with_unit(v, " ms");
            if (!x) return {};
            coldbrew_extra["initOverrunMs"] = *x;
        } else if (k == "Time Scale") {
            auto x = number(v);
            if (!x) return {};
            coldbrew_extra["timeScale"] = *x;
        } else if (k == "Status") {
            status = std::string(v);
        } else if (k == "Error Type") {
            error_type = std::string(v);
        } else {
            return {}; // not a field the platform writes
        }
    }
    if (!duration || !billed || !memory || !used) return {};
    ojson record;
    record["requestId"] = id;
    record["metrics"] = std::move(metrics);
    record["status"] = status;
    if (!error_type.empty()) record["errorType"] = error_type;
    if (!coldbrew_extra.empty()) record["coldbrew"] = std::move(coldbrew_extra);
    return {platform_json_result::kind::json,
            envelope(epoch_ms, "platform.report", std::move(record))};
}

platform_json_result init_report_json(std::string_view line, std::int64_t epoch_ms) {
    auto fs = fields(line.substr(std::string_view("INIT_REPORT ").size()));
    if (!fs) return {};
    ojson record, metrics;
    bool duration = false;
    for (const auto& [k, v] : *fs) {
        if (k == "Init Duration") {
            auto x = with_unit(v, " ms");
            if (!x) return {};
            metrics["durationMs"] = *x;
            duration = true;
        } else if (k == "Phase") {
            record["phase"] = v;
        } else if (k == "Status") {
            record["status"] = v;
        } else if (k == "Error Type") {
            record["errorType"] = v;
        } else {
            return {};
        }
    }
    if (!duration) return {};
    record["metrics"] = std::move(metrics);
    return {platform_json_result::kind::json,
            envelope(epoch_ms, "platform.initReport", std::move(record))};
}

} // namespace

std::optional<log_format> parse_log_format(std::string_view s) {
    std::string l(s);
    for (auto& c : l)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l == "text") return log_format::text;
    if (l == "json") return log_format::json;
    return std::nullopt;
}

const char* to_string(log_format f) {
    return f == log_format::json ? "JSON" : "Text";
}

log_format log_formats::of(std::string_view function) const {
    auto it = by_function_.find(function);
    return it == by_function_.end() ? fallback_ : it->second;
}

bool log_formats::any_json() const {
    if (fallback_ == log_format::json) return true;
    for (const auto& [_, f] : by_function_)
        if (f == log_format::json) return true;
    return false;
}

platform_json_result platform_json(std::string_view line, std::int64_t epoch_ms,
                                   std::string_view function_arn) {
    constexpr std::string_view start = "START RequestId: ", end = "END RequestId: ";
    if (starts_with(line, start)) {
        auto rest = line.substr(start.size());
        auto sp = rest.find(" Version: ");
        if (sp == std::string_view::npos) return {};
        auto id = rest.substr(0, sp);
        auto version = rest.substr(sp + 10);
        if (!plain_token(id) || !plain_token(version)) return {};
        ojson record;
        record["requestId"] = id;
        if (!function_arn.empty()) record["functionArn"] = function_arn;
        record["version"] = version;
        return {platform_json_result::kind::json,
                envelope(epoch_ms, "platform.start", std::move(record))};
    }
    if (starts_with(line, end)) {
        if (!plain_token(line.substr(end.size()))) return {};
        return {platform_json_result::kind::dropped, {}};
    }
    if (starts_with(line, "REPORT RequestId: ")) return report_json(line, epoch_ms);
    if (starts_with(line, "INIT_REPORT ")) return init_report_json(line, epoch_ms);
    return {};
}

json_log_sink::json_log_sink(log_sink& next, const coldbrew::clock& clock,
                             const log_formats& formats,
                             std::map<std::string, std::string, std::less<>> arns)
    : next_(next), clock_(clock), formats_(formats), arns_(std::move(arns)) {}

void json_log_sink::write(std::string_view function, std::string_view line) {
    if (formats_.of(function) != log_format::json) {
        next_.write(function, line);
        return;
    }
    auto arn = arns_.find(function);
    auto r = platform_json(line, clock_.epoch_ms(),
                           arn == arns_.end() ? std::string_view{} : std::string_view(arn->second));
    switch (r.what) {
    case platform_json_result::kind::not_platform:
        next_.write(function, line);
        break;
    case platform_json_result::kind::dropped:
        break;
    case platform_json_result::kind::json:
        next_.write(function, r.line);
        break;
    }
}

log_file_sink::log_file_sink(log_sink& next, const coldbrew::clock& clock,
                             const log_formats& formats, std::filesystem::path dir)
    : next_(next), clock_(clock), formats_(formats), dir_(std::move(dir)) {}

log_file_sink::~log_file_sink() {
    for (auto& [_, f] : files_)
        if (f) std::fclose(f);
}

std::error_code log_file_sink::open() {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return ec;
    if (!std::filesystem::is_directory(dir_, ec))
        return std::make_error_code(std::errc::not_a_directory);
    return {};
}

std::filesystem::path log_file_sink::file_for(std::string_view function) const {
    std::string name(function);
    for (auto& c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (!(std::isalnum(u) || c == '-' || c == '_' || c == '.')) c = '_';
    }
    if (name.empty() || name == "." || name == "..") name = "_" + name;
    return dir_ / (name + ".log");
}

void log_file_sink::write(std::string_view function, std::string_view line) {
    auto it = files_.find(function);
    if (it == files_.end()) {
        // Opened on a function's first line, so a run writes files only for what ran; a file
        // that cannot be opened is remembered as null and counted, not retried per line.
        std::FILE* f = std::fopen(file_for(function).c_str(), "a");
        if (!f) ++write_errors_;
        it = files_.emplace(std::string(function), f).first;
    }
    if (std::FILE* f = it->second) {
        std::string out;
        if (formats_.of(function) == log_format::text) {
            out = iso8601_ms(clock_.epoch_ms());
            out += ' ';
        }
        out += line;
        out += '\n';
        if (std::fwrite(out.data(), 1, out.size(), f) != out.size() || std::fflush(f) != 0)
            ++write_errors_;
    }
    next_.write(function, line);
}

} // namespace coldbrew::telemetry
