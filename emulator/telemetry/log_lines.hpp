#pragma once
// Lambda's platform log lines, in AWS's exact format [LOGS] (shared spec §1.8):
//   START RequestId: <id> Version: $LATEST
//   END RequestId: <id>
//   REPORT RequestId: <id>\tDuration: 4157.16 ms\tBilled Duration: 4200 ms\tMemory Size: 256 MB\t
//          Max Memory Used: 99 MB\tInit Duration: 841.60 ms\t
// Durations have two decimals; billed duration and memory are integers. Failures append
// "Status: error\tError Type: <type>\t" or "Status: timeout\t" as the current platform does
// (DataBiosphere/azul#7466).

#include <optional>
#include <string>
#include <string_view>

namespace coldbrew::telemetry {

struct report {
    std::string request_id;
    double duration_ms = 0;                    // invoke phase, modeled where scaled
    // Cold starts only: the Init Duration in modeled ms (the model's draw for an init that
    // completed, what was waited for one that failed).
    std::optional<double> init_duration_ms;
    // Cold starts under a time_scale other than 1: the model's draw, which was waited scaled.
    // Appended as "Modeled Init Duration: 800.00 ms\tTime Scale: 0.01\t" after AWS's fields,
    // so parsers of the standard fields are unaffected.
    std::optional<double> modeled_init_ms;
    double time_scale = 1.0;
    // A cold start whose local init outlasted the modeled wait: by how many real ms. Appended
    // as "Init Overrun: 412.30 ms\t" (coldbrew's, after AWS's fields), so a reader of the log
    // knows this machine, not the model, set that part of the latency.
    std::optional<double> init_overrun_ms;
    int memory_size_mb = 128;
    int max_memory_used_mb = 0;
    std::string status;       // "" (success), "error" or "timeout"
    std::string error_type;   // with status "error"
    std::string version = "$LATEST";
};

std::string start_line(std::string_view request_id, std::string_view version = "$LATEST");
std::string end_line(std::string_view request_id);
std::string report_line(const report& r);

// Billed Duration: 1 ms granularity since Dec 2020 [1MS], and init is billed for every
// configuration since 1 Aug 2025 [INITBILL]: ceil(duration + init).
long long billed_duration_ms(double duration_ms, std::optional<double> init_duration_ms);

// "Task timed out after 3.00 seconds" — the timeout message, seconds with two decimals.
std::string timed_out_message(double seconds);

// "2024-01-01T00:00:00.000Z": the timestamp Lambda puts in front of platform messages.
std::string iso8601_ms(long long epoch_ms);

// The platform's timeout line: "<timestamp> <request id> Task timed out after 3.00 seconds".
std::string timed_out_line(long long epoch_ms, std::string_view request_id, double seconds);

// "INIT_REPORT Init Duration: 206.72 ms\tPhase: init\tStatus: error\tError Type: T"
// (cargo-lambda#572), for an init that failed.
std::string init_report_error_line(double init_duration_ms, std::string_view error_type);

// Where platform lines and handler output go: one line at a time, tagged with the function.
class log_sink {
public:
    virtual ~log_sink() = default;
    virtual void write(std::string_view function, std::string_view line) = 0;
};

}  // namespace coldbrew::telemetry
