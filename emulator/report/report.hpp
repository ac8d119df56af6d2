#pragma once
// `coldbrew report`: the classic CloudWatch Logs Insights cold-start query, run locally over
// Lambda REPORT lines —
//
//   filter @type = "REPORT"
//   | stats count(*) as invocations, sum(@initDuration > 0) as coldStarts,
//           coldStarts/invocations*100 as coldStartPct, max(@initDuration) as maxInit,
//           avg(@duration), max(@duration), min(@duration),
//           max(@memorySize/1000/1000) as memoryAllocatedMB,
//           avg(@maxMemoryUsed/@memorySize*100) as avgMemoryUsedPct
//     by bin(5m)
//
// (AWS Lambda Operator Guide, "Useful Insights queries"; CloudWatch Logs Insights sample
// queries), per function and per time bin. Everything here is a plain function of text in
// memory: reading files and printing live in report_command.cpp.
//
// Inputs, detected line by line (see parse_line):
//   - coldbrew's REPORT lines (emulator/telemetry/log_lines.hpp), bare or behind the
//     "[Function] " prefix `coldbrew up` prints, or behind the "<ISO-8601 UTC> " timestamp of a
//     --log-dir file; coldbrew's "Modeled Init Duration"/"Time Scale" extras are read and do
//     not change the standard fields;
//   - AWS's REPORT text as CloudWatch stores it: tab-separated fields in any order (the Runtime
//     Interface Emulator puts Init Duration first), with "Status: error\tError Type: T" or
//     "Status: timeout" on failures (DataBiosphere/azul#7466), a space before a tab (older
//     platform), or spaces instead of tabs (copied from the console);
//   - `aws logs tail` lines, "<timestamp> <log stream> <message>" (or without the stream,
//     --format short);
//   - `aws logs filter-log-events --output text` lines, "EVENTS\t<id>\t<ingested>\t<stream>\t
//     <message>\t<timestamp ms>", where the message's own trailing newline may move the
//     timestamp to the next line (best effort; --output json is exact);
//   - the JSON log format (advanced logging controls): one object per line,
//     {"time":"…","type":"platform.report","record":{"requestId":"…","metrics":{"durationMs":…,
//     "billedDurationMs":…,"memorySizeMB":…,"maxMemoryUsedMB":…,"initDurationMs":…},
//     "status":"success"|"error"|"timeout","errorType":"…"}} (field names: Lambda Telemetry
//     API schema reference, ReportMetrics), with coldbrew's "coldbrew":{"timeScale":…} extra
//     (emulator/telemetry/log_files.hpp);
// and, whole-file, the JSON document of `aws logs filter-log-events` / `get-log-events`
// ({"events":[{"timestamp":<epoch ms>,"message":"REPORT …",…}]}), see parse_input.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::report {

// One REPORT line's fields. Durations in ms, memory in MB, as Lambda prints them.
struct report_record {
    std::string function;                     // from a "[Function] " prefix; "" when none
    std::optional<std::int64_t> timestamp_ms; // UTC epoch ms; none for plain stdout capture
    std::string request_id;
    double duration_ms = 0;
    std::optional<double> billed_duration_ms;
    int memory_size_mb = 0; // always > 0 in a parsed record
    int max_memory_used_mb = 0;
    std::optional<double> init_duration_ms; // present on cold starts only
    std::string status;                     // "" (success), "error", "timeout", …
    std::string error_type;                 // with status "error"
    std::optional<double> time_scale;       // coldbrew's "Time Scale" extra (scaled runs)
};

enum class line_kind {
    other,            // not a REPORT line (START, END, handler output, INIT_REPORT, …)
    report,           // a REPORT line, parsed
    malformed_report, // a REPORT line whose fields could not be read
};

struct classified_line {
    line_kind kind = line_kind::other;
    std::optional<report_record> record; // with kind == report
};

// Reads one line (a trailing "\r\n" is ignored). A line is a REPORT line when, after its
// optional prefixes (an ISO-8601 timestamp, a "[Function]", an AWS log stream name such as
// "2024/01/01/[$LATEST]abcd", or the EVENTS columns), its message starts with
// "REPORT RequestId:", or is a JSON object of type "platform.report". It is malformed when
// the request id, Duration, Memory Size or Max Memory Used is missing, a number does not
// read, a field has no "Key: value" shape, or Memory Size is not positive. Never throws.
classified_line classify_line(std::string_view line);

// classify_line(line).record: the record when the line is a well-formed REPORT line.
std::optional<report_record> parse_line(std::string_view line);

// "2026-11-30T23:28:02.123Z", "2024-01-01T00:00:00.000000+00:00", "…T…+0200", or with no zone
// (read as UTC) → UTC epoch ms; fractions beyond ms are truncated. nullopt when not a
// timestamp of that shape or out of range.
std::optional<std::int64_t> parse_timestamp(std::string_view text);

// "2026-11-30T23:25:00Z" for an epoch ms.
std::string format_utc(std::int64_t epoch_ms);

// Insights' bin() durations: "30s", "1m", "5m", "1h", "1d" (a positive whole number and a
// unit) → ms. nullopt otherwise.
std::optional<std::int64_t> parse_bin(std::string_view text);

// The function a file's lines belong to when they carry no "[Function]" prefix: the file
// name's stem, less the log group's "/aws/lambda/" when the export kept it in the name
// ("_aws_lambda_my-fn.json", "aws-lambda-my-fn.log" → "my-fn"); "stdin" for "-".
std::string function_from_path(std::string_view path);

// Everything read from the inputs so far.
struct parse_result {
    std::vector<report_record> records;
    std::size_t malformed = 0;
    std::string first_malformed; // "file:line" (or "file:event N" in a JSON document)
};

// Reads one input's whole text. `source` names it in messages; `function` is the function of
// records without a "[Function]" prefix. A text that is one JSON object with an "events"
// array is read as `aws logs filter-log-events` output, each event's "message" through
// classify_line and its "timestamp" (epoch ms) as the record's time; any other text is read
// line by line.
void parse_input(std::string_view text, std::string_view source, std::string_view function,
                 parse_result& into);

// One row of the query's result: one function and one bin, or the function's total.
struct row {
    std::string function;
    std::optional<std::int64_t> bin_start_ms; // none: the untimed bin ("-") or a total row
    bool total = false;
    std::int64_t invocations = 0;
    std::int64_t cold_starts = 0;      // sum(@initDuration > 0)
    double cold_start_pct = 0;         // coldStarts / invocations * 100
    std::optional<double> max_init_ms; // max(@initDuration); none when no line had one
    double avg_duration_ms = 0, max_duration_ms = 0, min_duration_ms = 0;
    int memory_mb = 0;              // max(@memorySize), in MB
    double avg_memory_used_pct = 0; // avg(@maxMemoryUsed / @memorySize * 100), per line
};

struct table {
    std::int64_t bin_ms = 300'000;
    std::vector<row> rows;    // by function, then bin (untimed first), each function's total last
    bool has_untimed = false; // some lines had no timestamp
    std::optional<double> time_scale; // the smallest Time Scale among coldbrew's scaled lines
    std::size_t functions = 0;
    std::int64_t invocations = 0;
};

// Groups records by function and by bin(bin_ms) of their timestamp (floored to a multiple
// of bin_ms since the epoch, as Insights does), records without one in a single untimed bin.
// A function's total row is computed from its records, not from its rows. bin_ms > 0.
table aggregate(const std::vector<report_record>& records, std::int64_t bin_ms);

// "5m", "30s", "1h" for a bin width in ms (the largest unit that divides it).
std::string bin_label(std::int64_t bin_ms);

// Aligned text table with a header, then notes (the untimed bin, scaled cold starts).
std::string render_table(const table& t);

// A JSON array, one object per row, keys in this order: function, bin_start (ISO-8601 UTC,
// or null for the untimed bin and totals), total, invocations, cold_starts, cold_start_pct,
// max_init_ms (null without cold starts), avg_duration_ms, max_duration_ms, min_duration_ms,
// memory_mb, avg_memory_used_pct. Numbers rounded to 2 decimals.
std::string render_json(const table& t);

// One self-contained HTML page (no scripts, no fetches): the table, and per function inline
// SVG plots of invocations and cold-start % per bin, and of avg/max duration per bin.
// `sources` lists the inputs read, for the page's header.
std::string render_html(const table& t, const std::vector<std::string>& sources);

} // namespace coldbrew::report
