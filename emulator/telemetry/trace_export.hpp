#pragma once
// Where finished traces go: a JSON Lines file (`coldbrew up --trace-file`) and/or an OTLP/HTTP
// endpoint (`--otlp-endpoint`), both fed in batches from the libuv loop.
//
// Batching: spans of finished traces collect in memory; every `interval_ms` (1 s) the pending
// spans become one TracesData JSON object (trace.hpp, otlp_json), which is
//   - appended to the file as one line and flushed (fflush, no fsync: the loop never waits for
//     the disk), and
//   - POSTed to <endpoint><path> (default path /v1/traces, the OTLP/HTTP traces path) with
//     Content-Type: application/json (OTLP/HTTP's JSON encoding, "OTLP/HTTP Request",
//     OTLP specification).
// The HTTP client is a minimal non-blocking HTTP/1.1 client on the loop: one request at a time,
// `Connection: close`, a bounded queue of batches waiting to be sent. An endpoint that is down,
// slow or answers non-2xx costs the batch: it is dropped and counted, and the first failure is
// reported once through `warn`; the emulator never waits for the collector. stop() flushes
// what is left and gives the last POSTs at most `stop_timeout_ms` (1 s).
//
// Errors: open() returns the file's error (the CLI turns it into a start-up error); a bad
// endpoint is reported by parse_otlp_endpoint before anything starts.

#include "emulator/telemetry/trace.hpp"

#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <uv.h>
#include <vector>

namespace coldbrew::telemetry {

struct otlp_endpoint {
    std::string host; // as written: an IPv4 address, a bracket-less IPv6 address or a name
    int port = 4318;  // OTLP/HTTP's default port
    std::string path = "/v1/traces";
};

// "http://127.0.0.1:4318", "http://collector:4318/", "http://[::1]:4318/custom/v1/traces".
// A URL without a path (or with "/") posts to /v1/traces, as OTLP exporters do with a base
// endpoint. https and anything else that is not plain http: nullopt, with `error` set.
std::optional<otlp_endpoint> parse_otlp_endpoint(std::string_view url, std::string& error);

struct trace_export_options {
    std::filesystem::path file;              // empty: no file; appended, never truncated
    std::optional<otlp_endpoint> endpoint;   // nullopt: no HTTP export
    std::string endpoint_text;               // the endpoint as given, for messages
    std::uint64_t interval_ms = 1000;        // batch period
    std::size_t max_queued_batches = 8;      // HTTP batches waiting; beyond, the oldest drops
    std::uint64_t request_timeout_ms = 5000; // one POST, connect to last byte
    std::uint64_t stop_timeout_ms = 1000;    // what stop() waits for the last POSTs
    std::string service_name = "coldbrew";
    // Told once per kind of trouble (endpoint unreachable, endpoint rejecting, file error).
    std::function<void(const std::string&)> warn;
};

class trace_exporter final : public trace_sink {
  public:
    trace_exporter(uv_loop_t* loop, trace_export_options options);
    ~trace_exporter() override;
    trace_exporter(const trace_exporter&) = delete;
    trace_exporter& operator=(const trace_exporter&) = delete;

    // Opens the file for appending (when one is set) and starts the batch timer, which does
    // not keep the loop alive by itself.
    std::error_code open();

    void write(std::vector<span> spans) override;

    // Turns the pending spans into one batch now (file line + HTTP queue).
    void flush();

    // Flushes, then waits (on the loop) up to stop_timeout_ms for the queued POSTs; calls
    // `done` (may be empty) once they are sent or given up. Later writes are flushed at once.
    void stop(std::function<void()> done = {});

    struct counters {
        std::uint64_t traces = 0;          // traces received
        std::uint64_t spans = 0;           // spans received
        std::uint64_t lines_written = 0;   // batches appended to the file
        std::uint64_t batches_sent = 0;    // POSTs answered 2xx
        std::uint64_t batches_dropped = 0; // POSTs that failed, timed out or overflowed the queue
        std::uint64_t write_errors = 0;    // file writes that failed
    };
    const counters& stats() const noexcept { return counters_; }

    struct post; // one HTTP request in flight (trace_export.cpp)

  private:
    void send_next();
    void on_post_done(bool ok, const std::string& why);
    void warn_once(bool& flag, const std::string& message);
    void maybe_finish_stop();

    uv_loop_t* loop_;
    trace_export_options options_;
    std::FILE* file_ = nullptr;
    uv_timer_t* timer_ = nullptr;      // the batch period
    uv_timer_t* stop_timer_ = nullptr; // stop()'s deadline
    std::vector<span> pending_;
    std::deque<std::string> queue_; // HTTP bodies waiting
    post* in_flight_ = nullptr;
    counters counters_;
    bool warned_unreachable_ = false, warned_rejected_ = false, warned_file_ = false,
         warned_overflow_ = false;
    bool stopping_ = false;
    std::function<void()> on_stopped_;
};

} // namespace coldbrew::telemetry
