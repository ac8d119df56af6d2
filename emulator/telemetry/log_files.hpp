#pragma once
// Log formats and log files: log_sink decorators wrapped around the terminal sink.
//
// JSON format (`coldbrew up --log-format json`, or SAM `LoggingConfig: {LogFormat: JSON}` on a
// function; AWS's LoggingConfig.LogFormat / AWS_LAMBDA_LOG_FORMAT, "Configuring advanced
// logging controls for Lambda functions", Lambda developer guide): the platform's lines become
// JSON objects, one per line, in the shape Lambda writes to CloudWatch — the Telemetry API's
// event envelope ("Lambda Telemetry API Event schema reference"; field names checked against a
// CloudWatch export of a JSON-format function):
//   START       → {"time":"2026-11-30T23:28:02.123Z","type":"platform.start",
//                  "record":{"requestId":"…","functionArn":"arn:aws:lambda:…","version":"$LATEST"}}
//   REPORT      → {"time":…,"type":"platform.report","record":{"requestId":"…",
//                  "metrics":{"durationMs":4157.16,"billedDurationMs":4999,"memorySizeMB":256,
//                  "maxMemoryUsedMB":99,"initDurationMs":841.6},"status":"success"}}
//                 (initDurationMs on cold starts only; status "error" adds "errorType";
//                 "timeout"). A scaled cold start adds "coldbrew":{"modeledInitDurationMs":…,
//                 "timeScale":…} to the record, next to AWS's fields.
//   INIT_REPORT → {"time":…,"type":"platform.initReport","record":{"phase":"init",
//                  "status":"error","errorType":"…","metrics":{"durationMs":206.72}}}
//   END         → nothing: Lambda's JSON system log has no counterpart of END (the
//                 CloudWatch export shows platform.start, the function's lines, then
//                 platform.report).
// Every other line — the handler's own output, "RequestId: … Error: …", the timeout line — is
// passed on as written: JSON application logs are the runtime's job (the node and python shims
// write them when AWS_LAMBDA_LOG_FORMAT=JSON, which coldbrew sets for JSON-format functions, as
// Lambda does). "time" is the injected clock's wall time when the line is written.
// Platform lines are recognised by their exact shape (log_lines.hpp); a handler line that is
// byte for byte a platform line would be taken for one. The Tail log an Invoke call asks for
// (X-Amz-Log-Type: Tail) keeps the text lines.
//
// Log files (`--log-dir DIR`): every function's lines also go to DIR/<function logical id>.log,
// appended, one line each, flushed per line:
//   text format: "<ISO-8601 UTC timestamp, ms>Z <line>", e.g.
//                "2026-11-30T23:28:02.123Z START RequestId: … Version: $LATEST"
//   json format: the line as shown (platform lines are the JSON objects above, so each
//                carries its own "time"; handler lines are as the handler wrote them).
// `coldbrew report` reads these files: change the formats only together with it.

#include "emulator/clock/clock.hpp"
#include "emulator/telemetry/log_lines.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace coldbrew::telemetry {

enum class log_format { text, json };

// "text" / "json", in any case (AWS spells them Text and JSON); nullopt for anything else.
std::optional<log_format> parse_log_format(std::string_view s);
const char* to_string(log_format f); // "Text" or "JSON", as AWS_LAMBDA_LOG_FORMAT has them

// Each function's log format: a default and per-function choices.
class log_formats {
  public:
    explicit log_formats(log_format fallback = log_format::text) : fallback_(fallback) {}
    void set(std::string function, log_format f) { by_function_[std::move(function)] = f; }
    log_format of(std::string_view function) const;
    bool any_json() const;

  private:
    log_format fallback_;
    std::map<std::string, log_format, std::less<>> by_function_;
};

// What platform_json made of a line.
struct platform_json_result {
    enum class kind { not_platform, dropped, json } what = kind::not_platform;
    std::string line; // with kind::json
};

// The JSON form of one platform line (see above); `function_arn` goes into platform.start
// when not empty.
platform_json_result platform_json(std::string_view line, std::int64_t epoch_ms,
                                   std::string_view function_arn = {});

// Platform lines of JSON-format functions become JSON objects; everything else passes.
class json_log_sink final : public log_sink {
  public:
    // `next`, `clock` and `formats` must outlive the sink. `arns`: function → its ARN.
    json_log_sink(log_sink& next, const coldbrew::clock& clock, const log_formats& formats,
                  std::map<std::string, std::string, std::less<>> arns = {});
    void write(std::string_view function, std::string_view line) override;

  private:
    log_sink& next_;
    const coldbrew::clock& clock_;
    const log_formats& formats_;
    std::map<std::string, std::string, std::less<>> arns_;
};

// Writes each line to DIR/<function>.log as well, then passes it on.
class log_file_sink final : public log_sink {
  public:
    log_file_sink(log_sink& next, const coldbrew::clock& clock, const log_formats& formats,
                  std::filesystem::path dir);
    ~log_file_sink() override;
    log_file_sink(const log_file_sink&) = delete;
    log_file_sink& operator=(const log_file_sink&) = delete;

    // Creates DIR (and its parents) if needed and checks it can hold files.
    std::error_code open();
    void write(std::string_view function, std::string_view line) override;

    // DIR/<function>.log; characters that cannot be in a file name become '_'.
    std::filesystem::path file_for(std::string_view function) const;
    std::uint64_t write_errors() const noexcept { return write_errors_; }

  private:
    log_sink& next_;
    const coldbrew::clock& clock_;
    const log_formats& formats_;
    std::filesystem::path dir_;
    std::map<std::string, std::FILE*, std::less<>> files_;
    std::uint64_t write_errors_ = 0;
};

} // namespace coldbrew::telemetry
