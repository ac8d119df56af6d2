#pragma once
// Per-request traces: one root span per request a front end answered (the gateway's route, or
// "Invoke <function>"), with one child span per phase the request went through, exported as
// OTLP/JSON.
//
// Phases, not free-form spans: a request is always in exactly one phase, and begin(name) ends
// the phase it was in at that instant. The children therefore never overlap and add up to the
// root's duration exactly, which is what a latency breakdown needs (where did the 812 ms go?).
// Gateway phases, in order: gateway.receive (routing), fault.decision,
// gateway.request_mapping (the Lambda event), [fault.delay | fault.phantom], pool.queue_wait,
// [lambda.init], [network.shaping], lambda.invoke, [network.shaping],
// gateway.response_mapping, [network.shaping], gateway.send. The Invoke API: invoke.receive,
// fault.decision, … invoke.response_mapping, invoke.send. Whoever acts on the request marks
// the phase it starts (emulator/app, the function pool, the execution environment).
//
// Time: spans carry Unix nanoseconds, taken from the injected clock (wall time at the root's
// start, then monotonic time), so a manual clock gives exact, repeatable spans. Durations are
// real (scaled) time; spans whose time is modeled say so in attributes:
//   coldbrew.real_ms     the span's real duration in ms (every child span)
//   coldbrew.modeled_ms  the modeled duration it stands for (unscaled), where one applies
//   coldbrew.time_scale  the run's time_scale (root, and spans with a modeled duration)
// and, where they apply: http.request.method, url.path, http.route,
// http.response.status_code, faas.invoked_name, aws.request_id, coldbrew.outcome (served,
// injected_fault, handler_error) on the root; coldbrew.fault.rule / kind / action on
// fault.decision; coldbrew.local_init_ms on lambda.init; faas.invocation_id and
// faas.coldstart on lambda.invoke; coldbrew.bytes, coldbrew.direction on network.shaping.
// A 5xx answer, a reset or a request dropped unanswered sets the root's status to error.
// Asynchronous (Event) invocations and `coldbrew invoke` are not traced: no client waits.
//
// Ids. The trace id is the X-Ray trace header's root mapped to W3C/OTLP form — the 8 hex
// digits of time and the 24 of id concatenated ("1-5759e988-bd862e3fe1be46a994272793" ↔
// "5759e988bd862e3fe1be46a994272793"), the mapping of the AWS X-Ray propagator and the X-Ray
// docs ("Tracing identifiers", W3C trace ID format). The header's Parent becomes the root
// span's parentSpanId. Span ids are drawn from the injected random source, keyed by the
// request id, so a seeded run repeats them.
//
// OTLP/JSON ("JSON Protobuf Encoding", OTLP specification, opentelemetry-proto
// docs/specification.md): field names lowerCamelCase; traceId / spanId as hex strings (not
// base64, unlike the generic proto3 JSON mapping); enums (kind, status.code) as integers;
// 64-bit integers (startTimeUnixNano, intValue) as decimal strings. The file form ("OTLP File
// Exporter", opentelemetry-specification protocol/file-exporter.md) is JSON Lines: one
// TracesData object (the same shape as the ExportTraceServiceRequest body of OTLP/HTTP) per
// line, which the collector's otlpjsonfile receiver reads.

#include "emulator/clock/clock.hpp"
#include "models/random/random_source.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace coldbrew::telemetry {

using attribute_value = std::variant<std::string, std::int64_t, double, bool>;

struct attribute {
    std::string key;
    attribute_value value;
};

// OTLP Span.SpanKind and Status.StatusCode values (opentelemetry-proto trace/v1/trace.proto).
enum class span_kind : int { internal = 1, server = 2, client = 3 };
enum class status_code : int { unset = 0, ok = 1, error = 2 };

struct span {
    std::string trace_id;       // 32 lower-case hex digits
    std::string span_id;        // 16 lower-case hex digits
    std::string parent_span_id; // 16 hex digits, or empty for a root without a parent
    std::string name;
    span_kind kind = span_kind::internal;
    std::int64_t start_unix_nano = 0;
    std::int64_t end_unix_nano = 0;
    std::vector<attribute> attributes;
    status_code status = status_code::unset;
    std::string status_message;
};

// ---- X-Ray trace header ------------------------------------------------------------------

// "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1": fields by
// name, order-free, whitespace around them ignored; a missing field is empty.
struct xray_header {
    std::string root;    // "1-5759e988-bd862e3fe1be46a994272793"
    std::string parent;  // "53995c3f42cd8ad8"
    std::string sampled; // "0", "1", "?" or ""
};
xray_header parse_xray_header(std::string_view header);

// "1-<8 hex>-<24 hex>" → the 32-hex OTLP trace id (lower case); nullopt for anything else,
// and for an all-zero id (invalid in W3C and OTLP).
std::optional<std::string> otlp_trace_id(std::string_view xray_root);
// The inverse: 32 hex digits → "1-<first 8>-<last 24>".
std::string xray_root(std::string_view otlp_trace_id);

// `n` hex digits (either case), not all zero: a valid W3C/OTLP id of that length.
bool is_hex_id(std::string_view s, std::size_t n);

// A span id: 16 hex digits, draw `ordinal` of `key` in the "trace-span-id" stream; never all
// zeros. The root span is ordinal 0 of its request.
std::string draw_span_id(const models::random_source& rng, std::string_view key,
                         std::uint64_t ordinal);

// ---- export ------------------------------------------------------------------------------

// Where finished traces go (the file / OTLP exporter, or a test's capture). Called on the
// loop, once per trace, root span first, then the phases in order.
class trace_sink {
  public:
    virtual ~trace_sink() = default;
    virtual void write(std::vector<span> spans) = 0;
};

// One TracesData / ExportTraceServiceRequest JSON object (no newline) holding `spans` under
// one resource (service.name = `service_name`) and one scope ("coldbrew").
std::string otlp_json(const std::vector<span>& spans, std::string_view service_name = "coldbrew");

// ---- one request -------------------------------------------------------------------------

class request_trace {
  public:
    struct params {
        std::string trace_id;       // 32 hex (see otlp_trace_id)
        std::string parent_span_id; // 16 hex, or empty
        std::string id_key;         // unique per request (its request id): span id draws
        std::string name;           // the root span's name
        span_kind kind = span_kind::server;
        std::chrono::steady_clock::time_point start; // the root's start (clock.steady())
        double time_scale = 1.0;
    };
    // `clock`, `rng` and `sink` (may be null: nothing is exported) must outlive the trace.
    request_trace(const coldbrew::clock& clock, const models::random_source& rng, trace_sink* sink,
                  params p);
    // Finishes the trace if nobody did (a request dropped on the floor still shows).
    ~request_trace();
    request_trace(const request_trace&) = delete;
    request_trace& operator=(const request_trace&) = delete;

    const std::string& trace_id() const noexcept { return trace_id_; }
    const std::string& root_span_id() const noexcept { return root_id_; }
    double time_scale() const noexcept { return time_scale_; }

    // The request enters phase `name` now; the phase it was in ends now. The first phase
    // starts at the root's start. Ignored once the trace is sealed or finished, so an
    // invocation that outlives its request (the gateway timed out) cannot reorder the trace.
    void begin(std::string_view name);
    // The front end's last phases (sending the answer): like begin, and seals the trace
    // against begin() from anyone else.
    void begin_final(std::string_view name);
    // Attributes of the current phase (ignored when there is none, or once finished).
    void annotate(std::string key, attribute_value value);
    // The modeled duration the current phase stands for (unscaled ms): adds coldbrew.modeled_ms
    // and coldbrew.time_scale to it.
    void annotate_modeled(double modeled_ms);
    void annotate_root(std::string key, attribute_value value);
    void set_status(status_code code, std::string message = {});

    // Ends the current phase and the root now and hands the spans to the sink. Later calls do
    // nothing.
    void finish();
    bool finished() const noexcept { return finished_; }
    bool sealed() const noexcept { return sealed_; }
    // The phase the request is in ("" before the first and after finish).
    std::string_view current() const noexcept;

    // The spans as they stand (root first; an open phase and an unfinished root end "now").
    std::vector<span> spans() const;

  private:
    struct phase {
        std::string name;
        std::chrono::steady_clock::time_point start, end;
        std::vector<attribute> attributes;
    };
    void enter(std::string_view name);
    std::int64_t unix_nanos(std::chrono::steady_clock::time_point t) const;

    const coldbrew::clock& clock_;
    const models::random_source& rng_;
    trace_sink* sink_;
    std::string trace_id_, parent_id_, root_id_, id_key_, name_;
    span_kind kind_;
    double time_scale_;
    std::chrono::steady_clock::time_point start_, end_;
    std::int64_t start_unix_nano_ = 0;
    std::vector<phase> phases_; // the last one is open until the next begin or finish
    std::vector<attribute> root_attributes_;
    status_code status_ = status_code::unset;
    std::string status_message_;
    bool sealed_ = false;
    bool finished_ = false;
};

// Enters "network.shaping" for a payload a modeled bandwidth holds back `modeled_ms`:
// attributes coldbrew.bytes, coldbrew.direction ("to_environment", "from_environment") and
// coldbrew.modeled_ms.
void begin_shaping(request_trace& t, double modeled_ms, std::size_t bytes,
                   std::string_view direction);

} // namespace coldbrew::telemetry
