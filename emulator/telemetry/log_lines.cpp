#include "emulator/telemetry/log_lines.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace coldbrew::telemetry {

namespace {
std::string two_decimals(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.2f", v);
    return buf;
}
}  // namespace

std::string start_line(std::string_view request_id, std::string_view version) {
    std::string s = "START RequestId: ";
    s += request_id;
    s += " Version: ";
    s += version;
    return s;
}

std::string end_line(std::string_view request_id) {
    std::string s = "END RequestId: ";
    s += request_id;
    return s;
}

long long billed_duration_ms(double duration_ms, std::optional<double> init_duration_ms) {
    double total = duration_ms + init_duration_ms.value_or(0.0);
    // Round to the hundredth first, as printed, so "1.00 ms" bills 1 ms and not 2.
    total = std::round(total * 100.0) / 100.0;
    return static_cast<long long>(std::ceil(total));
}

std::string report_line(const report& r) {
    std::string s = "REPORT RequestId: ";
    s += r.request_id;
    s += "\tDuration: " + two_decimals(r.duration_ms) + " ms";
    s += "\tBilled Duration: " + std::to_string(billed_duration_ms(r.duration_ms, r.init_duration_ms)) + " ms";
    s += "\tMemory Size: " + std::to_string(r.memory_size_mb) + " MB";
    s += "\tMax Memory Used: " + std::to_string(r.max_memory_used_mb) + " MB";
    if (r.init_duration_ms) s += "\tInit Duration: " + two_decimals(*r.init_duration_ms) + " ms";
    s += "\t";
    if (r.init_duration_ms && r.modeled_init_ms && r.time_scale != 1.0) {
        char scale[32];
        std::snprintf(scale, sizeof(scale), "%g", r.time_scale);
        s += "Modeled Init Duration: " + two_decimals(*r.modeled_init_ms) + " ms\tTime Scale: " +
             scale + "\t";
    }
    if (r.init_duration_ms && r.init_overrun_ms)
        s += "Init Overrun: " + two_decimals(*r.init_overrun_ms) + " ms\t";
    if (!r.status.empty()) {
        s += "Status: " + r.status + "\t";
        if (!r.error_type.empty()) s += "Error Type: " + r.error_type + "\t";
    }
    return s;
}

std::string timed_out_message(double seconds) {
    return "Task timed out after " + two_decimals(seconds) + " seconds";
}

std::string iso8601_ms(long long epoch_ms) {
    std::time_t secs = static_cast<std::time_t>(epoch_ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[96];  // sized for any int the format could print, so GCC sees no truncation
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(epoch_ms % 1000));
    return buf;
}

std::string timed_out_line(long long epoch_ms, std::string_view request_id, double seconds) {
    std::string s = iso8601_ms(epoch_ms);
    s += ' ';
    s += request_id;
    s += ' ';
    s += timed_out_message(seconds);
    return s;
}

std::string init_report_error_line(double init_duration_ms, std::string_view error_type) {
    std::string s = "INIT_REPORT Init Duration: " + two_decimals(init_duration_ms) +
                    " ms\tPhase: init\tStatus: error\tError Type: ";
    s += error_type;
    return s;
}

}  // namespace coldbrew::telemetry
