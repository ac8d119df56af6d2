#include "emulator/telemetry/trace.hpp"
#include "emulator/telemetry/trace_export.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

using namespace coldbrew::telemetry;
using coldbrew::testing::manual_clock;
using namespace std::chrono_literals;

namespace {

struct capture final : trace_sink {
    std::vector<std::vector<span>> traces;
    void write(std::vector<span> spans) override { traces.push_back(std::move(spans)); }
};

bool is_lower_hex(const std::string& s, std::size_t n) {
    return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

const nlohmann::json* attr(const nlohmann::json& span, const std::string& key) {
    for (const auto& a : span["attributes"])
        if (a["key"] == key) return &a["value"];
    return nullptr;
}

request_trace::params gateway_params(const manual_clock& clock, std::string parent = {}) {
    request_trace::params p;
    p.trace_id = "5759e988bd862e3fe1be46a994272793";
    p.parent_span_id = std::move(parent);
    p.id_key = "c0ffee00-0000-4000-8000-000000000001";
    p.name = "GET /hello";
    p.start = clock.steady();
    p.time_scale = 0.01;
    return p;
}

} // namespace

TEST_CASE("X-Ray trace header: fields by name, in any order", "[unit]") {
    auto h = parse_xray_header(
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1");
    CHECK(h.root == "1-5759e988-bd862e3fe1be46a994272793");
    CHECK(h.parent == "53995c3f42cd8ad8");
    CHECK(h.sampled == "1");
    auto g = parse_xray_header(" Sampled=0 ; Root=1-00000001-000000000000000000000002;Self=x");
    CHECK(g.root == "1-00000001-000000000000000000000002");
    CHECK(g.parent.empty());
    CHECK(g.sampled == "0");
    CHECK(parse_xray_header("garbage").root.empty());
}

TEST_CASE("X-Ray root <-> OTLP trace id: time and id digits concatenated", "[unit]") {
    CHECK(otlp_trace_id("1-5759e988-bd862e3fe1be46a994272793") ==
          std::optional<std::string>("5759e988bd862e3fe1be46a994272793"));
    // Upper case is accepted and normalised.
    CHECK(otlp_trace_id("1-5759E988-BD862E3FE1BE46A994272793") ==
          std::optional<std::string>("5759e988bd862e3fe1be46a994272793"));
    CHECK(xray_root("5759e988bd862e3fe1be46a994272793") == "1-5759e988-bd862e3fe1be46a994272793");
    CHECK(xray_root(*otlp_trace_id("1-6352a70e-1e2c502e358361800241fd45")) ==
          "1-6352a70e-1e2c502e358361800241fd45");
    // Not a version-1 root, wrong lengths, not hex, all zeros.
    CHECK_FALSE(otlp_trace_id("2-5759e988-bd862e3fe1be46a994272793"));
    CHECK_FALSE(otlp_trace_id("1-5759e98-bd862e3fe1be46a9942727931"));
    CHECK_FALSE(otlp_trace_id("1-5759e988-bd862e3fe1be46a99427279"));
    CHECK_FALSE(otlp_trace_id("1-5759e988-bd862e3fe1be46a99427279z"));
    CHECK_FALSE(otlp_trace_id("1-00000000-000000000000000000000000"));
    CHECK_FALSE(otlp_trace_id("client"));
    CHECK(is_hex_id("53995c3f42cd8ad8", 16));
    CHECK_FALSE(is_hex_id("0000000000000000", 16));
    CHECK_FALSE(is_hex_id("53995c3f42cd8ad", 16));
}

TEST_CASE("span ids: 16 hex digits from the seeded source, distinct per ordinal and key",
          "[unit]") {
    coldbrew::models::random_source rng(7), other(8);
    auto a = draw_span_id(rng, "req-1", 0);
    CHECK(is_lower_hex(a, 16));
    CHECK(a == draw_span_id(rng, "req-1", 0)); // repeatable
    CHECK(a != draw_span_id(rng, "req-1", 1));
    CHECK(a != draw_span_id(rng, "req-2", 0));
    CHECK(a != draw_span_id(other, "req-1", 0));
}

TEST_CASE("request trace: phases are contiguous, ordered, and add up to the root", "[unit]") {
    manual_clock clock;
    coldbrew::models::random_source rng(42);
    capture sink;
    {
        auto t = std::make_shared<request_trace>(clock, rng, &sink,
                                                 gateway_params(clock, "53995c3f42cd8ad8"));
        clock.advance(100us); // the first phase starts at the root's start regardless
        t->begin("gateway.receive");
        clock.advance(200us);
        t->begin("fault.decision");
        clock.advance(50us);
        t->begin("pool.queue_wait");
        t->begin("lambda.init"); // no time between: a zero-length wait
        t->annotate_modeled(800.0);
        clock.advance(8ms);
        t->begin("lambda.invoke");
        clock.advance(3ms);
        t->begin("gateway.response_mapping");
        clock.advance(70us);
        t->begin_final("gateway.send");
        t->begin("lambda.invoke"); // an invocation marking after the answer: ignored
        clock.advance(30us);
        t->annotate_root("http.response.status_code", std::int64_t{200});
        t->finish();
        t->finish(); // once only
    }
    REQUIRE(sink.traces.size() == 1);
    const auto& spans = sink.traces[0];
    REQUIRE(spans.size() == 8);
    const auto& root = spans[0];
    CHECK(root.name == "GET /hello");
    CHECK(root.kind == span_kind::server);
    CHECK(root.parent_span_id == "53995c3f42cd8ad8");
    CHECK(root.trace_id == "5759e988bd862e3fe1be46a994272793");
    // Wall time of the start: the manual clock's epoch.
    CHECK(root.start_unix_nano == 1700000000000LL * 1000000);
    const std::vector<std::string> names{
        "gateway.receive", "fault.decision",           "pool.queue_wait", "lambda.init",
        "lambda.invoke",   "gateway.response_mapping", "gateway.send"};
    std::int64_t at = root.start_unix_nano, total = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto& s = spans[i + 1];
        CHECK(s.name == names[i]);
        CHECK(s.parent_span_id == root.span_id);
        CHECK(s.trace_id == root.trace_id);
        CHECK(s.start_unix_nano == at); // no gap, no overlap
        CHECK(s.end_unix_nano >= s.start_unix_nano);
        total += s.end_unix_nano - s.start_unix_nano;
        at = s.end_unix_nano;
    }
    CHECK(at == root.end_unix_nano);
    CHECK(total == root.end_unix_nano - root.start_unix_nano);
    CHECK(total == (100 + 200 + 50 + 8000 + 3000 + 70 + 30) * 1000LL);
    CHECK(spans[3].end_unix_nano == spans[3].start_unix_nano);          // the zero-length wait
    CHECK(spans[1].end_unix_nano - spans[1].start_unix_nano == 300000); // 100 + 200 us
}

TEST_CASE("request trace: an unfinished trace is exported when its last holder lets go", "[unit]") {
    manual_clock clock;
    coldbrew::models::random_source rng(1);
    capture sink;
    {
        request_trace t(clock, rng, &sink, gateway_params(clock));
        t.begin("gateway.receive");
        clock.advance(1ms);
        CHECK(t.current() == "gateway.receive");
    }
    REQUIRE(sink.traces.size() == 1);
    CHECK(sink.traces[0].back().end_unix_nano - sink.traces[0].front().start_unix_nano == 1000000);
}

TEST_CASE("OTLP/JSON: hex ids of the right length, nanos as strings, enums as integers", "[unit]") {
    manual_clock clock;
    coldbrew::models::random_source rng(42);
    request_trace t(clock, rng, nullptr, gateway_params(clock));
    t.begin("gateway.receive");
    clock.advance(2ms);
    t.begin("lambda.init");
    t.annotate_modeled(812.5);
    t.annotate("faas.coldstart", true);
    clock.advance(8ms);
    t.annotate_root("http.response.status_code", std::int64_t{502});
    t.set_status(status_code::error, "HTTP 502");
    t.finish();
    auto doc = nlohmann::json::parse(otlp_json(t.spans()));

    const auto& rs = doc["resourceSpans"];
    REQUIRE(rs.size() == 1);
    const auto& res_attrs = rs[0]["resource"]["attributes"];
    REQUIRE(res_attrs.size() == 1);
    CHECK(res_attrs[0]["key"] == "service.name");
    CHECK(res_attrs[0]["value"]["stringValue"] == "coldbrew");
    const auto& ss = rs[0]["scopeSpans"];
    REQUIRE(ss.size() == 1);
    CHECK(ss[0]["scope"]["name"] == "coldbrew");
    const auto& spans = ss[0]["spans"];
    REQUIRE(spans.size() == 3);

    const auto& root = spans[0];
    CHECK(root["traceId"] == "5759e988bd862e3fe1be46a994272793");
    CHECK(is_lower_hex(root["spanId"].get<std::string>(), 16));
    CHECK_FALSE(root.contains("parentSpanId")); // no X-Ray Parent: a root without one
    CHECK(root["kind"] == 2);                   // SPAN_KIND_SERVER
    REQUIRE(root["startTimeUnixNano"].is_string());
    REQUIRE(root["endTimeUnixNano"].is_string());
    CHECK(std::stoll(root["endTimeUnixNano"].get<std::string>()) -
              std::stoll(root["startTimeUnixNano"].get<std::string>()) ==
          10000000);
    CHECK(root["status"]["code"] == 2); // STATUS_CODE_ERROR
    CHECK(root["status"]["message"] == "HTTP 502");
    REQUIRE(attr(root, "http.response.status_code"));
    CHECK((*attr(root, "http.response.status_code"))["intValue"] == "502"); // int64 as string
    CHECK((*attr(root, "coldbrew.time_scale"))["doubleValue"] == 0.01);

    for (std::size_t i = 1; i < spans.size(); ++i) {
        CHECK(spans[i]["parentSpanId"] == root["spanId"]);
        CHECK(spans[i]["kind"] == 1); // SPAN_KIND_INTERNAL
        CHECK(spans[i]["status"].empty());
        CHECK(spans[i]["spanId"] != root["spanId"]);
        CHECK(is_lower_hex(spans[i]["spanId"].get<std::string>(), 16));
    }
    const auto& init = spans[2];
    CHECK(init["name"] == "lambda.init");
    CHECK((*attr(init, "coldbrew.modeled_ms"))["doubleValue"] == 812.5);
    CHECK((*attr(init, "coldbrew.real_ms"))["doubleValue"] == 8.0);
    CHECK((*attr(init, "coldbrew.time_scale"))["doubleValue"] == 0.01);
    CHECK((*attr(init, "faas.coldstart"))["boolValue"] == true);
}

TEST_CASE("trace exporter: one JSON line per batch, appended", "[unit]") {
    auto path = std::filesystem::temp_directory_path() /
                ("coldbrew-traces-" + std::to_string(::getpid()) + ".jsonl");
    std::filesystem::remove(path);
    manual_clock clock;
    coldbrew::models::random_source rng(3);
    uv_loop_t loop;
    uv_loop_init(&loop);
    {
        trace_export_options o;
        o.file = path;
        trace_exporter ex(&loop, o);
        REQUIRE_FALSE(ex.open());
        for (int i = 0; i < 2; ++i) {
            auto p = gateway_params(clock);
            p.id_key = "req-" + std::to_string(i);
            request_trace t(clock, rng, &ex, p);
            t.begin("gateway.receive");
            clock.advance(1ms);
            t.finish();
        }
        ex.flush(); // both traces in one batch
        {
            request_trace t(clock, rng, &ex, gateway_params(clock));
            t.begin("gateway.receive");
        }
        bool stopped = false;
        ex.stop([&] { stopped = true; });
        CHECK(stopped); // nothing to post: done at once
        CHECK(ex.stats().traces == 3);
        CHECK(ex.stats().spans == 6);
        CHECK(ex.stats().lines_written == 2);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);

    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    REQUIRE(lines.size() == 2);
    auto first = nlohmann::json::parse(lines[0]);
    CHECK(first["resourceSpans"][0]["scopeSpans"][0]["spans"].size() == 4);
    auto second = nlohmann::json::parse(lines[1]);
    CHECK(second["resourceSpans"][0]["scopeSpans"][0]["spans"].size() == 2);
    std::filesystem::remove(path);
}

TEST_CASE("OTLP endpoint URLs", "[unit]") {
    std::string err;
    auto a = parse_otlp_endpoint("http://127.0.0.1:4318", err);
    REQUIRE(a);
    CHECK(a->host == "127.0.0.1");
    CHECK(a->port == 4318);
    CHECK(a->path == "/v1/traces");
    auto b = parse_otlp_endpoint("http://collector/", err);
    REQUIRE(b);
    CHECK(b->host == "collector");
    CHECK(b->port == 4318);
    CHECK(b->path == "/v1/traces");
    auto c = parse_otlp_endpoint("HTTP://[::1]:9000/otlp/v1/traces", err);
    REQUIRE(c);
    CHECK(c->host == "::1");
    CHECK(c->port == 9000);
    CHECK(c->path == "/otlp/v1/traces");
    CHECK_FALSE(parse_otlp_endpoint("https://127.0.0.1:4318", err));
    CHECK(err.find("https") != std::string::npos);
    CHECK_FALSE(parse_otlp_endpoint("127.0.0.1:4318", err));
    CHECK_FALSE(parse_otlp_endpoint("http://127.0.0.1:99999", err));
    CHECK_FALSE(parse_otlp_endpoint("http://127.0.0.1:", err));
    CHECK_FALSE(parse_otlp_endpoint("http://:4318", err));
}

namespace {

// A loopback OTLP/HTTP endpoint on the test's loop: reads one request per connection and
// answers `status`.
struct loop_collector {
    uv_tcp_t server{};
    int port = 0;
    int status = 200;
    std::vector<std::string> requests;

    struct conn {
        uv_tcp_t tcp{};
        loop_collector* owner = nullptr;
        std::string data;
        uv_write_t write{};
        std::string answer;
    };

    explicit loop_collector(uv_loop_t* loop) {
        uv_tcp_init(loop, &server);
        server.data = this;
        sockaddr_in a{};
        uv_ip4_addr("127.0.0.1", 0, &a);
        REQUIRE(uv_tcp_bind(&server, reinterpret_cast<const sockaddr*>(&a), 0) == 0);
        REQUIRE(uv_listen(reinterpret_cast<uv_stream_t*>(&server), 8, on_connection) == 0);
        int len = sizeof(a);
        uv_tcp_getsockname(&server, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
    }
    void close() { uv_close(reinterpret_cast<uv_handle_t*>(&server), nullptr); }

    static void on_connection(uv_stream_t* s, int status) {
        if (status < 0) return;
        auto* self = static_cast<loop_collector*>(s->data);
        auto* c = new conn;
        c->owner = self;
        uv_tcp_init(s->loop, &c->tcp);
        c->tcp.data = c;
        uv_accept(s, reinterpret_cast<uv_stream_t*>(&c->tcp));
        uv_read_start(
            reinterpret_cast<uv_stream_t*>(&c->tcp),
            [](uv_handle_t*, std::size_t n, uv_buf_t* b) {
                *b = uv_buf_init(new char[n], static_cast<unsigned>(n));
            },
            [](uv_stream_t* st, ssize_t n, const uv_buf_t* b) {
                auto* c = static_cast<conn*>(st->data);
                if (n > 0) c->data.append(b->base, static_cast<std::size_t>(n));
                delete[] b->base;
                auto head = c->data.find("\r\n\r\n");
                auto cl = c->data.find("Content-Length: ");
                if (n < 0 || head == std::string::npos || cl == std::string::npos) {
                    if (n < 0)
                        uv_close(reinterpret_cast<uv_handle_t*>(st),
                                 [](uv_handle_t* h) { delete static_cast<conn*>(h->data); });
                    return;
                }
                const auto len = std::stoul(c->data.substr(cl + 16));
                if (c->data.size() < head + 4 + len) return;
                uv_read_stop(st);
                c->owner->requests.push_back(c->data);
                c->answer = "HTTP/1.1 " + std::to_string(c->owner->status) +
                            " X\r\nContent-Length: 2\r\n\r\n{}";
                uv_buf_t buf =
                    uv_buf_init(c->answer.data(), static_cast<unsigned>(c->answer.size()));
                c->write.data = c;
                uv_write(&c->write, st, &buf, 1, [](uv_write_t* w, int) {
                    auto* c = static_cast<conn*>(w->data);
                    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp),
                             [](uv_handle_t* h) { delete static_cast<conn*>(h->data); });
                });
            });
    }
};

// Runs the loop until `done` or a guard (a failing test, not a wait: the loop is on loopback).
template <class Pred> bool run_until(uv_loop_t* loop, Pred done) {
    uv_timer_t guard;
    uv_timer_init(loop, &guard);
    bool expired = false;
    guard.data = &expired;
    uv_timer_start(
        &guard, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; }, 10000, 0);
    while (!done() && !expired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
    uv_run(loop, UV_RUN_NOWAIT);
    return done();
}

} // namespace

TEST_CASE("trace exporter: each batch is POSTed as OTLP JSON; failures drop it, warned once",
          "[unit]") {
    manual_clock clock;
    coldbrew::models::random_source rng(5);
    uv_loop_t loop;
    uv_loop_init(&loop);
    loop_collector collector(&loop);
    std::vector<std::string> warnings;
    {
        std::string err;
        trace_export_options o;
        o.endpoint = parse_otlp_endpoint("http://127.0.0.1:" + std::to_string(collector.port), err);
        o.endpoint_text = "collector";
        o.warn = [&](const std::string& m) { warnings.push_back(m); };
        trace_exporter ex(&loop, o);
        REQUIRE_FALSE(ex.open());
        {
            request_trace t(clock, rng, &ex, gateway_params(clock));
            t.begin("gateway.receive");
        }
        ex.flush();
        REQUIRE(run_until(&loop, [&] { return ex.stats().batches_sent == 1; }));
        REQUIRE(collector.requests.size() == 1);
        const auto& req = collector.requests[0];
        CHECK(req.rfind("POST /v1/traces HTTP/1.1\r\n", 0) == 0);
        CHECK(req.find("\r\nContent-Type: application/json\r\n") != std::string::npos);
        auto body = nlohmann::json::parse(req.substr(req.find("\r\n\r\n") + 4));
        CHECK(body["resourceSpans"][0]["scopeSpans"][0]["spans"].size() == 2);
        CHECK(warnings.empty());

        // The endpoint rejects: dropped, warned once however often it happens.
        collector.status = 503;
        for (int i = 0; i < 2; ++i) {
            {
                request_trace t(clock, rng, &ex, gateway_params(clock));
                t.begin("gateway.receive");
            }
            ex.flush();
            REQUIRE(run_until(&loop,
                              [&] { return ex.stats().batches_dropped == std::uint64_t(i + 1); }));
        }
        CHECK(warnings.size() == 1);
        CHECK(warnings[0].find("503") != std::string::npos);
        bool stopped = false;
        ex.stop([&] { stopped = true; });
        CHECK(stopped);
    }
    collector.close();
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("trace exporter: an endpoint nobody listens on costs the batch, nothing else", "[unit]") {
    manual_clock clock;
    coldbrew::models::random_source rng(6);
    uv_loop_t loop;
    uv_loop_init(&loop);
    // A port that was free a moment ago: bound and closed again.
    int port = 0;
    {
        loop_collector probe(&loop);
        port = probe.port;
        probe.close();
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    std::vector<std::string> warnings;
    {
        std::string err;
        trace_export_options o;
        o.endpoint = parse_otlp_endpoint("http://127.0.0.1:" + std::to_string(port), err);
        o.endpoint_text = "http://127.0.0.1:" + std::to_string(port);
        o.warn = [&](const std::string& m) { warnings.push_back(m); };
        trace_exporter ex(&loop, o);
        REQUIRE_FALSE(ex.open());
        for (int i = 0; i < 2; ++i) {
            request_trace t(clock, rng, &ex, gateway_params(clock));
            t.begin("gateway.receive");
        }
        bool stopped = false;
        ex.stop([&] { stopped = true; });
        // Its handles do not hold the loop; the stop deadline does, and ends with the refusal.
        uv_run(&loop, UV_RUN_DEFAULT);
        CHECK(stopped);
        CHECK(ex.stats().batches_dropped == 1);
        CHECK(ex.stats().batches_sent == 0);
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0].find("refused") != std::string::npos);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
}
