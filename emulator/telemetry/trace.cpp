#include "emulator/telemetry/trace.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace coldbrew::telemetry {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

double ms_between(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

nlohmann::ordered_json any_value(const attribute_value& v) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    std::visit(
        [&out](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>)
                out["stringValue"] = x;
            else if constexpr (std::is_same_v<T, bool>)
                out["boolValue"] = x;
            else if constexpr (std::is_same_v<T, std::int64_t>)
                out["intValue"] = std::to_string(x); // int64: a decimal string in proto3 JSON
            else
                out["doubleValue"] = x;
        },
        v);
    return out;
}

nlohmann::ordered_json attributes_json(const std::vector<attribute>& attrs) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& a : attrs)
        out.push_back({{"key", a.key}, {"value", any_value(a.value)}});
    return out;
}

void set_attribute(std::vector<attribute>& attrs, std::string key, attribute_value value) {
    for (auto& a : attrs) {
        if (a.key == key) {
            a.value = std::move(value);
            return;
        }
    }
    attrs.push_back({std::move(key), std::move(value)});
}

} // namespace

xray_header parse_xray_header(std::string_view header) {
    xray_header out;
    while (!header.empty()) {
        auto semi = header.find(';');
        auto field = trim(header.substr(0, semi));
        header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
        auto eq = field.find('=');
        if (eq == std::string_view::npos) continue;
        auto key = trim(field.substr(0, eq));
        auto value = std::string(trim(field.substr(eq + 1)));
        if (key == "Root")
            out.root = std::move(value);
        else if (key == "Parent")
            out.parent = std::move(value);
        else if (key == "Sampled")
            out.sampled = std::move(value);
    }
    return out;
}

bool is_hex_id(std::string_view s, std::size_t n) {
    if (s.size() != n || !std::all_of(s.begin(), s.end(), is_hex)) return false;
    return std::any_of(s.begin(), s.end(), [](char c) { return c != '0'; });
}

std::optional<std::string> otlp_trace_id(std::string_view root) {
    // 1-<8 hex: epoch seconds>-<24 hex: random>
    if (root.size() != 35 || root.substr(0, 2) != "1-" || root[10] != '-') return std::nullopt;
    std::string id = lower(root.substr(2, 8)) + lower(root.substr(11, 24));
    if (!is_hex_id(id, 32)) return std::nullopt;
    return id;
}

std::string xray_root(std::string_view id) {
    return "1-" + std::string(id.substr(0, 8)) + "-" + std::string(id.substr(8));
}

std::string draw_span_id(const models::random_source& rng, std::string_view key,
                         std::uint64_t ordinal) {
    auto id = models::random_hex(rng, "trace-span-id", key, ordinal, 16);
    if (!is_hex_id(id, 16)) id.back() = '1'; // all zeros is "no span"; a 2^-64 draw
    return id;
}

std::string otlp_json(const std::vector<span>& spans, std::string_view service_name) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& s : spans) {
        nlohmann::ordered_json j;
        j["traceId"] = s.trace_id;
        j["spanId"] = s.span_id;
        if (!s.parent_span_id.empty()) j["parentSpanId"] = s.parent_span_id;
        j["name"] = s.name;
        j["kind"] = static_cast<int>(s.kind);
        j["startTimeUnixNano"] = std::to_string(s.start_unix_nano);
        j["endTimeUnixNano"] = std::to_string(s.end_unix_nano);
        j["attributes"] = attributes_json(s.attributes);
        auto status = nlohmann::ordered_json::object();
        if (s.status != status_code::unset) {
            status["code"] = static_cast<int>(s.status);
            if (!s.status_message.empty()) status["message"] = s.status_message;
        }
        j["status"] = std::move(status);
        list.push_back(std::move(j));
    }
    nlohmann::ordered_json resource;
    resource["attributes"] = attributes_json({{"service.name", std::string(service_name)}});
    nlohmann::ordered_json scope_spans;
    scope_spans["scope"] = {{"name", "coldbrew"}};
    scope_spans["spans"] = std::move(list);
    nlohmann::ordered_json resource_spans;
    resource_spans["resource"] = std::move(resource);
    resource_spans["scopeSpans"] = nlohmann::ordered_json::array({std::move(scope_spans)});
    nlohmann::ordered_json out;
    out["resourceSpans"] = nlohmann::ordered_json::array({std::move(resource_spans)});
    // Handler output can put anything in a span name or attribute; never fail on bad UTF-8.
    return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

request_trace::request_trace(const coldbrew::clock& clock, const models::random_source& rng,
                             trace_sink* sink, params p)
    : clock_(clock), rng_(rng), sink_(sink), trace_id_(lower(p.trace_id)),
      parent_id_(lower(p.parent_span_id)), id_key_(std::move(p.id_key)), name_(std::move(p.name)),
      kind_(p.kind), time_scale_(p.time_scale), start_(p.start) {
    root_id_ = draw_span_id(rng_, id_key_, 0);
    // Wall time of the root's start: now, less the monotonic time since it.
    const auto now_wall =
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.wall().time_since_epoch())
            .count();
    const auto since =
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.steady() - start_).count();
    start_unix_nano_ = now_wall - since;
    end_ = start_;
}

request_trace::~request_trace() {
    finish();
}

std::int64_t request_trace::unix_nanos(std::chrono::steady_clock::time_point t) const {
    return start_unix_nano_ +
           std::chrono::duration_cast<std::chrono::nanoseconds>(t - start_).count();
}

std::string_view request_trace::current() const noexcept {
    if (finished_ || phases_.empty()) return {};
    return phases_.back().name;
}

void request_trace::enter(std::string_view name) {
    const auto now = clock_.steady();
    const auto from = phases_.empty() ? start_ : now;
    if (!phases_.empty()) phases_.back().end = now;
    phases_.push_back({std::string(name), from, from, {}});
}

void request_trace::begin(std::string_view name) {
    if (finished_ || sealed_) return;
    enter(name);
}

void request_trace::begin_final(std::string_view name) {
    if (finished_) return;
    sealed_ = true;
    enter(name);
}

void request_trace::annotate(std::string key, attribute_value value) {
    if (finished_ || phases_.empty()) return;
    set_attribute(phases_.back().attributes, std::move(key), std::move(value));
}

void request_trace::annotate_modeled(double modeled_ms) {
    annotate("coldbrew.modeled_ms", modeled_ms);
    annotate("coldbrew.time_scale", time_scale_);
}

void request_trace::annotate_root(std::string key, attribute_value value) {
    if (finished_) return;
    set_attribute(root_attributes_, std::move(key), std::move(value));
}

void request_trace::set_status(status_code code, std::string message) {
    if (finished_) return;
    status_ = code;
    status_message_ = std::move(message);
}

void request_trace::finish() {
    if (finished_) return;
    end_ = clock_.steady();
    if (!phases_.empty()) phases_.back().end = end_;
    finished_ = true;
    if (sink_) sink_->write(spans());
}

std::vector<span> request_trace::spans() const {
    const auto now = finished_ ? end_ : clock_.steady();
    std::vector<span> out;
    out.reserve(phases_.size() + 1);
    span root;
    root.trace_id = trace_id_;
    root.span_id = root_id_;
    root.parent_span_id = parent_id_;
    root.name = name_;
    root.kind = kind_;
    root.start_unix_nano = unix_nanos(start_);
    root.end_unix_nano = unix_nanos(now);
    root.attributes = root_attributes_;
    set_attribute(root.attributes, "coldbrew.real_ms", ms_between(start_, now));
    set_attribute(root.attributes, "coldbrew.time_scale", time_scale_);
    root.status = status_;
    root.status_message = status_message_;
    out.push_back(std::move(root));
    for (std::size_t i = 0; i < phases_.size(); ++i) {
        const auto& ph = phases_[i];
        const bool open = i + 1 == phases_.size() && !finished_;
        const auto end = open ? now : ph.end;
        span s;
        s.trace_id = trace_id_;
        s.span_id = draw_span_id(rng_, id_key_, i + 1);
        s.parent_span_id = root_id_;
        s.name = ph.name;
        s.kind = span_kind::internal;
        s.start_unix_nano = unix_nanos(ph.start);
        s.end_unix_nano = unix_nanos(end);
        s.attributes = ph.attributes;
        set_attribute(s.attributes, "coldbrew.real_ms", ms_between(ph.start, end));
        out.push_back(std::move(s));
    }
    return out;
}

void begin_shaping(request_trace& t, double modeled_ms, std::size_t bytes,
                   std::string_view direction) {
    t.begin("network.shaping");
    t.annotate("coldbrew.bytes", static_cast<std::int64_t>(bytes));
    t.annotate("coldbrew.direction", std::string(direction));
    t.annotate_modeled(modeled_ms);
}

} // namespace coldbrew::telemetry
