#include "emulator/telemetry/metrics.hpp"
#include "tests/catch.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace coldbrew::telemetry;

namespace {

// A small reader of the Prometheus text format 0.0.4 that refuses anything the format does
// not allow (https://prometheus.io/docs/instrumenting/exposition_formats/): every line a
// # HELP, a # TYPE or a sample; a family's TYPE before its samples and its samples together;
// label values with only \\, \" and \n escapes.
struct sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};

struct exposition {
    std::map<std::string, std::string> types; // family → type
    std::map<std::string, std::string> help;
    std::vector<sample> samples;

    std::vector<sample> named(const std::string& name) const {
        std::vector<sample> out;
        for (const auto& s : samples)
            if (s.name == name) out.push_back(s);
        return out;
    }
    // The one sample of `name` whose labels include every pair of `want`.
    double value(const std::string& name, const std::map<std::string, std::string>& want) const {
        const sample* found = nullptr;
        for (const auto& s : samples) {
            if (s.name != name) continue;
            bool all = true;
            for (const auto& [k, v] : want) {
                auto it = s.labels.find(k);
                all = all && it != s.labels.end() && it->second == v;
            }
            if (!all) continue;
            if (found) throw std::runtime_error("more than one sample of " + name);
            found = &s;
        }
        if (!found) throw std::runtime_error("no sample of " + name);
        return found->value;
    }
};

// Throws when the text breaks the format; the tests check both that good text passes and
// that bad text is refused, so the reader itself can fail.
void expect(bool ok, const std::string& what, const std::string& line) {
    if (!ok) throw std::runtime_error(what + " in: " + line);
}

bool name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool name_char(char c) {
    return name_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

std::string read_name(const std::string& line, std::size_t& i, bool metric) {
    std::size_t start = i;
    expect(i < line.size() && name_start(line[i]) && (metric || line[i] != ':'), "bad name", line);
    while (i < line.size() && name_char(line[i]) && (metric || line[i] != ':'))
        ++i;
    return line.substr(start, i - start);
}

double read_value(const std::string& text, const std::string& line) {
    if (text == "+Inf") return INFINITY;
    if (text == "-Inf") return -INFINITY;
    if (text == "NaN") return NAN;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    expect(!text.empty() && *end == '\0' && std::isfinite(v), "bad value '" + text + "'", line);
    return v;
}

// The family a sample belongs to: histogram and summary samples carry suffixes.
std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            auto base = name.substr(0, name.size() - s.size());
            auto it = types.find(base);
            if (it != types.end() && (it->second == "histogram" || it->second == "summary"))
                return base;
        }
    }
    return name;
}

// Every histogram: per label set, `le` ascending, cumulative counts non-decreasing, the last
// bucket le="+Inf" equal to _count, and a _sum.
void check_histograms(const exposition& e) {
    for (const auto& [family, type] : e.types) {
        if (type != "histogram") continue;
        std::map<std::map<std::string, std::string>, std::vector<std::pair<double, double>>>
            buckets;
        for (const auto& s : e.named(family + "_bucket")) {
            auto labels = s.labels;
            expect(labels.count("le") == 1, "a bucket without le", family);
            double le = read_value(labels["le"], family);
            labels.erase("le");
            buckets[labels].emplace_back(le, s.value);
        }
        for (const auto& [labels, bs] : buckets) {
            for (std::size_t i = 1; i < bs.size(); ++i) {
                expect(bs[i].first > bs[i - 1].first, "le not ascending", family);
                expect(bs[i].second >= bs[i - 1].second, "buckets not cumulative", family);
            }
            expect(std::isinf(bs.back().first), "no le=\"+Inf\" bucket last", family);
            expect(e.value(family + "_count", labels) == bs.back().second,
                   "+Inf bucket is not _count", family);
            expect(e.value(family + "_sum", labels) >= 0, "negative _sum", family);
        }
    }
}

exposition parse(const std::string& text) {
    exposition out;
    expect(!text.empty() && text.back() == '\n', "no final line feed", text);
    std::istringstream in(text);
    std::string line;
    std::string current;            // the family whose samples are being read
    std::set<std::string> finished; // families whose samples are over
    while (std::getline(in, line)) {
        expect(!line.empty(), "an empty line", line);
        if (line[0] == '#') {
            std::istringstream words(line);
            std::string hash, keyword, name;
            words >> hash >> keyword >> name;
            expect(hash == "#", "a comment without a space after #", line);
            if (keyword == "HELP") {
                expect(out.help.count(name) == 0, "a second HELP", line);
                std::size_t at = line.find(name) + name.size();
                std::string h = at < line.size() ? line.substr(at + 1) : "";
                // Only \\ and \n may follow a backslash in HELP.
                for (std::size_t i = 0; i < h.size(); ++i)
                    if (h[i] == '\\') {
                        expect(i + 1 < h.size() && (h[i + 1] == '\\' || h[i + 1] == 'n'),
                               "a bad escape in HELP", line);
                        ++i;
                    }
                out.help[name] = h;
            } else if (keyword == "TYPE") {
                std::string type, extra;
                words >> type >> extra;
                expect(extra.empty(), "words after the type", line);
                expect(out.types.count(name) == 0, "a second TYPE", line);
                static const std::set<std::string> known{"counter", "gauge", "histogram", "summary",
                                                         "untyped"};
                expect(known.count(type) == 1, "an unknown type", line);
                // TYPE comes before every sample of its family.
                for (const auto& s : out.samples)
                    expect(family_of(s.name, {{name, type}}) != name, "TYPE after a sample", line);
                out.types[name] = type;
            }
            continue;
        }
        sample s;
        std::size_t i = 0;
        s.name = read_name(line, i, true);
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                std::string label = read_name(line, i, false);
                expect(line.compare(i, 2, "=\"") == 0, "a label without =\"", line);
                i += 2;
                std::string value;
                for (;; ++i) {
                    expect(i < line.size(), "an unterminated label value", line);
                    char c = line[i];
                    if (c == '"') break;
                    if (c == '\\') {
                        expect(i + 1 < line.size(), "a trailing backslash", line);
                        char e = line[++i];
                        expect(e == '\\' || e == '"' || e == 'n', "a bad escape", line);
                        value += e == 'n' ? '\n' : e;
                    } else {
                        value += c;
                    }
                }
                ++i; // the closing quote
                expect(s.labels.count(label) == 0, "a repeated label", line);
                s.labels[label] = value;
                if (i < line.size() && line[i] == ',') ++i;
            }
            expect(i < line.size(), "unclosed labels", line);
            ++i; // '}'
        }
        expect(i < line.size() && line[i] == ' ', "no space before the value", line);
        std::string rest = line.substr(i + 1);
        expect(rest.find(' ') == std::string::npos, "more than a value", line); // no timestamps
        s.value = read_value(rest, line);

        const std::string family = family_of(s.name, out.types);
        expect(out.types.count(family) == 1, "a sample before its TYPE", line);
        if (family != current) {
            expect(finished.count(family) == 0, "a family's samples apart", line);
            if (!current.empty()) finished.insert(current);
            current = family;
        }
        if (out.types[family] == "counter") {
            expect(s.name.size() > 6 && s.name.substr(s.name.size() - 6) == "_total",
                   "a counter not named _total", line);
            expect(s.value >= 0, "a negative counter", line);
        }
        out.samples.push_back(std::move(s));
    }
    check_histograms(out);
    return out;
}

request_record rec(std::string front, std::string route, int status, double latency_ms) {
    request_record r;
    r.front = std::move(front);
    r.route = std::move(route);
    r.function = "Hello";
    r.status = status;
    r.latency_ms = latency_ms;
    return r;
}

metrics_input sample_input(const request_stats& rs) {
    metrics_input in;
    in.requests = &rs;
    in.outcomes["gateway"] = {
        {"served", 3}, {"injected_fault", 1}, {"handler_error", 0}, {"emulator_error", 0}};
    function_metrics f;
    f.invocations = 5;
    f.cold_starts = 2;
    f.function_errors = 1;
    f.timeouts = 1;
    f.environments = 3;
    f.busy = 1;
    in.functions["Hello"] = f;
    in.faults.by_kind_action[{"phantom", "phantom_before"}] = 2;
    in.faults.by_kind_action[{"error", "gateway_error"}] = 1;
    in.faults.by_rule["sla-gateway"] = 3;
    in.faults.overflow = 4;
    in.faults.active = 1;
    in.faults.decisions = 9;
    in.dependencies = nlohmann::json::parse(R"({"db":{"connections":7,"active":2,"requests":11,
        "bytes_upstream":1234,"bytes_downstream":98765,"upstream_failures":1,
        "connect_timeouts":0,"idle_timeouts":0,"faults":{"reset":2},"latency_ms":1500.5,
        "upstream":"127.0.0.1:5432","port":40000}})");
    return in;
}

} // namespace

TEST_CASE("metrics: every line is valid text format and the numbers are the inputs'", "[unit]") {
    request_stats rs;
    for (double ms : {0.5, 3.0, 7.0, 120.0})
        rs.record(rec("gateway", "GET /hello", 200, ms));
    rs.record(rec("gateway", "GET /hello", 502, 29000));
    rs.record(rec("invoke", "Invoke Hello", 200, 40000)); // above the last finite bound
    rs.record_init("Hello", 812);

    const auto text = render_metrics(sample_input(rs));
    INFO(text);
    auto e = parse(text);
    check_histograms(e);

    CHECK(e.types.at("coldbrew_requests_total") == "counter");
    CHECK(e.types.at("coldbrew_request_duration_seconds") == "histogram");
    CHECK(e.types.at("coldbrew_execution_environments") == "gauge");
    CHECK(e.value("coldbrew_requests_total",
                  {{"front", "gateway"}, {"route", "GET /hello"}, {"status", "200"}}) == 4);
    CHECK(e.value("coldbrew_requests_total",
                  {{"front", "gateway"}, {"route", "GET /hello"}, {"status", "502"}}) == 1);
    CHECK(e.value("coldbrew_request_duration_seconds_count",
                  {{"front", "gateway"}, {"route", "GET /hello"}}) == 5);
    CHECK(e.value("coldbrew_request_duration_seconds_sum",
                  {{"front", "gateway"}, {"route", "GET /hello"}}) ==
          Approx((0.5 + 3 + 7 + 120 + 29000) / 1000.0));
    CHECK(e.value("coldbrew_request_duration_seconds_bucket",
                  {{"front", "gateway"}, {"route", "GET /hello"}, {"le", "0.005"}}) == 2);
    CHECK(e.value("coldbrew_request_duration_seconds_bucket",
                  {{"front", "gateway"}, {"route", "GET /hello"}, {"le", "0.0025"}}) == 1);
    CHECK(e.value("coldbrew_request_duration_seconds_bucket",
                  {{"front", "invoke"}, {"route", "Invoke Hello"}, {"le", "30"}}) == 0);
    CHECK(e.value("coldbrew_request_duration_seconds_bucket",
                  {{"front", "invoke"}, {"route", "Invoke Hello"}, {"le", "+Inf"}}) == 1);

    CHECK(e.value("coldbrew_request_outcomes_total",
                  {{"front", "gateway"}, {"outcome", "injected_fault"}}) == 1);
    CHECK(e.value("coldbrew_cold_starts_total", {{"function", "Hello"}}) == 2);
    CHECK(e.value("coldbrew_invocations_total", {{"function", "Hello"}}) == 5);
    CHECK(e.value("coldbrew_function_timeouts_total", {{"function", "Hello"}}) == 1);
    CHECK(e.value("coldbrew_init_duration_seconds_count", {{"function", "Hello"}}) == 1);
    CHECK(e.value("coldbrew_init_duration_seconds_sum", {{"function", "Hello"}}) == Approx(0.812));
    CHECK(e.value("coldbrew_init_duration_seconds_bucket", {{"function", "Hello"}, {"le", "1"}}) ==
          1);
    CHECK(e.value("coldbrew_init_duration_seconds_bucket",
                  {{"function", "Hello"}, {"le", "0.5"}}) == 0);
    CHECK(e.value("coldbrew_execution_environments", {{"function", "Hello"}, {"state", "busy"}}) ==
          1);
    CHECK(e.value("coldbrew_execution_environments", {{"function", "Hello"}, {"state", "idle"}}) ==
          2);

    CHECK(e.value("coldbrew_faults_injected_total",
                  {{"kind", "phantom"}, {"action", "phantom_before"}}) == 2);
    CHECK(e.value("coldbrew_faults_injected_total",
                  {{"kind", "error"}, {"action", "gateway_error"}}) == 1);
    CHECK(e.value("coldbrew_fault_rule_injected_total", {{"rule", "sla-gateway"}}) == 3);
    CHECK(e.value("coldbrew_faults_overflow_total", {}) == 4);
    CHECK(e.value("coldbrew_faults_active", {}) == 1);

    CHECK(e.value("coldbrew_dependency_bytes_total",
                  {{"dependency", "db"}, {"direction", "upstream"}}) == 1234);
    CHECK(e.value("coldbrew_dependency_bytes_total",
                  {{"dependency", "db"}, {"direction", "downstream"}}) == 98765);
    CHECK(e.value("coldbrew_dependency_connections_total", {{"dependency", "db"}}) == 7);
    CHECK(e.value("coldbrew_dependency_active_connections", {{"dependency", "db"}}) == 2);
    CHECK(e.value("coldbrew_dependency_faults_total",
                  {{"dependency", "db"}, {"action", "reset"}}) == 2);
    CHECK(e.value("coldbrew_dependency_added_latency_seconds_total", {{"dependency", "db"}}) ==
          Approx(1.5005));
}

TEST_CASE("metrics: with nothing recorded every family is still declared", "[unit]") {
    metrics_input in;
    const auto text = render_metrics(in);
    INFO(text);
    auto e = parse(text);
    CHECK(e.types.count("coldbrew_requests_total") == 1);
    CHECK(e.types.count("coldbrew_dependency_bytes_total") == 1);
    CHECK(e.types.count("coldbrew_init_duration_seconds") == 1);
    CHECK(e.named("coldbrew_requests_total").empty());
    CHECK(e.value("coldbrew_faults_overflow_total", {}) == 0);
    // Every family has its HELP.
    for (const auto& [family, _] : e.types)
        CHECK(e.help.count(family) == 1);
}

TEST_CASE("metrics: label values are escaped as the format says", "[unit]") {
    request_stats rs;
    const std::string route = "GET /a\"b\\c\nd";
    rs.record(rec("gateway", route, 200, 1));
    metrics_input in;
    in.requests = &rs;
    const auto text = render_metrics(in);
    CHECK(text.find(R"(route="GET /a\"b\\c\nd")") != std::string::npos);
    auto e = parse(text);
    CHECK(e.value("coldbrew_requests_total", {{"route", route}, {"status", "200"}}) == 1);
    // A UTF-8 value passes as it is.
    CHECK(prometheus::escape_label_value("café ☕") == "café ☕");
    CHECK(prometheus::escape_help("a\\b\nc \"q\"") == "a\\\\b\\nc \"q\"");
}

TEST_CASE("metrics: values are written as the format reads them", "[unit]") {
    using prometheus::format_value;
    CHECK(format_value(3) == "3");
    CHECK(format_value(0) == "0");
    CHECK(format_value(0.0025) == "0.0025");
    CHECK(format_value(1.5005) == "1.5005");
    CHECK(format_value(INFINITY) == "+Inf");
    CHECK(format_value(-INFINITY) == "-Inf");
    CHECK(format_value(NAN) == "NaN");
    CHECK(std::strtod(format_value(1e300).c_str(), nullptr) == 1e300);
    CHECK(prometheus::content_type == "text/plain; version=0.0.4; charset=utf-8");
}

TEST_CASE("metrics: the test's reader refuses what the format does not allow", "[unit]") {
    // The checks above mean something only if the reader can fail.
    const std::string head = "# HELP c_total h\n# TYPE c_total counter\n";
    CHECK_NOTHROW(parse(head + "c_total{a=\"x\"} 1\n"));
    CHECK_THROWS(parse(head + "c_total{a=x} 1\n"));       // unquoted label value
    CHECK_THROWS(parse(head + "c_total{a=\"\\t\"} 1\n")); // an escape the format lacks
    CHECK_THROWS(parse(head + "c_total 1.2.3\n"));
    CHECK_THROWS(parse(head + "9c_total 1\n"));
    CHECK_THROWS(parse("c_total 1\n" + head)); // TYPE after the sample
    CHECK_NOTHROW(parse(head + "c_total 1\n# TYPE g gauge\ng 1\n"));
    CHECK_THROWS(parse(head + "c_total 1\n# TYPE g gauge\ng 1\nc_total 2\n")); // samples apart
    const std::string h = "# HELP h x\n# TYPE h histogram\n";
    CHECK_NOTHROW(parse(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"));
    CHECK_THROWS(parse(h + "h_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"));
    CHECK_THROWS(parse(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 5\n"));
    CHECK_THROWS(parse(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"2\"} 2\nh_sum 3\nh_count 2\n"));
}
