// Per-request traces (--trace-file, --otlp-endpoint), X-Ray trace header propagation, and the
// log files (--log-dir) and JSON log format (--log-format json), end to end.

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <regex>
#include <signal.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

const std::string client_root = "1-5759e988-bd862e3fe1be46a994272793";
const std::string client_trace_id = "5759e988bd862e3fe1be46a994272793";
const std::string client_parent = "53995c3f42cd8ad8";

std::vector<std::string> read_lines(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(line);
    return out;
}

long long nanos(const json& span, const char* field) {
    REQUIRE(span[field].is_string()); // OTLP/JSON: 64-bit integers are strings
    return std::stoll(span[field].get<std::string>());
}

const json* attribute(const json& span, const std::string& key) {
    for (const auto& a : span["attributes"])
        if (a["key"] == key) return &a["value"];
    return nullptr;
}

// Every span in an OTLP JSON lines file, grouped by trace id.
std::map<std::string, std::vector<json>> traces_in(const std::filesystem::path& file) {
    std::map<std::string, std::vector<json>> out;
    for (const auto& line : read_lines(file)) {
        auto doc = json::parse(line);
        for (const auto& rs : doc["resourceSpans"]) {
            CHECK(rs["resource"]["attributes"][0]["value"]["stringValue"] == "coldbrew");
            for (const auto& ss : rs["scopeSpans"])
                for (const auto& s : ss["spans"])
                    out[s["traceId"].get<std::string>()].push_back(s);
        }
    }
    return out;
}

struct checked_trace {
    json root;
    std::vector<json> children;     // by start time
    std::vector<std::string> names; // children's names, network.shaping left out
};

// The root and its children: ids well formed, children contiguous, adding up to the root.
checked_trace check_trace(const std::vector<json>& spans) {
    checked_trace t;
    std::vector<json> roots;
    for (const auto& s : spans) {
        CHECK(s["spanId"].get<std::string>().size() == 16);
        CHECK(s["traceId"].get<std::string>().size() == 32);
        (s["kind"] == 2 ? roots : t.children).push_back(s);
    }
    REQUIRE(roots.size() == 1);
    t.root = roots[0];
    std::stable_sort(t.children.begin(), t.children.end(), [](const json& a, const json& b) {
        return nanos(a, "startTimeUnixNano") < nanos(b, "startTimeUnixNano");
    });
    const long long root_start = nanos(t.root, "startTimeUnixNano");
    const long long root_end = nanos(t.root, "endTimeUnixNano");
    REQUIRE(root_end > root_start);
    long long at = root_start, total = 0;
    constexpr long long tolerance_ns = 1000;
    for (const auto& c : t.children) {
        INFO(c.dump());
        CHECK(c["parentSpanId"] == t.root["spanId"]);
        const long long start = nanos(c, "startTimeUnixNano"), end = nanos(c, "endTimeUnixNano");
        CHECK(std::llabs(start - at) <= tolerance_ns); // no gap, no overlap
        CHECK(end >= start);
        total += end - start;
        at = end;
        if (c["name"] != "network.shaping") t.names.push_back(c["name"].get<std::string>());
    }
    CHECK(std::llabs(at - root_end) <= tolerance_ns);
    CHECK(std::llabs(total - (root_end - root_start)) <= tolerance_ns);
    return t;
}

// A one-request OTLP/HTTP endpoint: accepts one connection, reads one request, answers 200.
class one_post_server {
  public:
    one_post_server() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
        REQUIRE(::listen(fd_, 4) == 0);
        socklen_t len = sizeof(a);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~one_post_server() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    int port() const { return port_; }
    // The request as received ("" if none came within the wait).
    std::string wait_request(std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, timeout, [this] { return done_; });
        return request_;
    }

  private:
    void serve() {
        // Bounded: gives up after 15 s without a connection.
        for (int waited = 0; waited < 15000 && !stop_; waited += 100) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) continue;
            std::string req;
            char buf[4096];
            for (int i = 0; i < 100 && !complete(req); ++i) {
                pollfd q{c, POLLIN, 0};
                if (::poll(&q, 1, 100) <= 0) continue;
                auto n = ::read(c, buf, sizeof(buf));
                if (n <= 0) break;
                req.append(buf, static_cast<std::size_t>(n));
            }
            const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                       "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
            (void)!::write(c, answer.data(), answer.size());
            ::close(c);
            std::lock_guard<std::mutex> lock(mu_);
            request_ = std::move(req);
            done_ = true;
            cv_.notify_all();
            return;
        }
    }
    static bool complete(const std::string& r) {
        auto head = r.find("\r\n\r\n");
        if (head == std::string::npos) return false;
        std::smatch m;
        std::string h = r.substr(0, head);
        if (!std::regex_search(h, m, std::regex("Content-Length: *([0-9]+)", std::regex::icase)))
            return true;
        return r.size() - head - 4 >= std::stoul(m[1]);
    }

    int fd_ = -1, port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::string request_;
};

} // namespace

TEST_CASE("traces: a gateway request's spans, trace id from X-Amzn-Trace-Id; log files",
          "[integration][traces]") {
    temp_dir dir;
    const auto trace_file = dir.path() / "traces.jsonl";
    const auto log_dir = dir.path() / "logs";
    coldbrew_process proc({"up", (source_dir() / "examples" / "hello").string(), "--port", "0",
                           "--invoke-port", "0", "--admin-port", "0", "--seed", "1", "--time-scale",
                           "0.01", "--trace-file", trace_file.string(), "--log-dir",
                           log_dir.string()});
    const int port = proc.wait_for_port();

    auto cold = http_request(
        port, "GET", "/hello/bash", "",
        {{"X-Amzn-Trace-Id", "Root=" + client_root + ";Parent=" + client_parent + ";Sampled=1"}});
    REQUIRE(cold.status == 200);
    // Nothing new goes back to the client: API Gateway's trace header on responses is not
    // part of the documented behaviour coldbrew copies.
    CHECK_FALSE(cold.header("X-Amzn-Trace-Id"));
    auto warm = http_request(port, "GET", "/hello/bash");
    REQUIRE(warm.status == 200);
    // The gateway's own answer to a request that matches no route is traced as well.
    const std::string lost_root = "1-5759e988-0123456789abcdef01234567";
    auto lost = http_request(port, "GET", "/nope", "", {{"X-Amzn-Trace-Id", "Root=" + lost_root}});
    REQUIRE((lost.status == 403 || lost.status == 404));
    REQUIRE(proc.wait_for_line(
        [](const std::string& l) { return l.rfind("[HelloBash] REPORT RequestId:", 0) == 0; }));
    proc.signal(SIGTERM);
    REQUIRE(proc.wait_exit() == 0);

    auto traces = traces_in(trace_file);
    REQUIRE(traces.size() == 3);
    REQUIRE(traces.count(client_trace_id) == 1);
    const std::string lost_trace_id = "5759e9880123456789abcdef01234567";
    REQUIRE(traces.count(lost_trace_id) == 1);
    {
        auto t = check_trace(traces[lost_trace_id]);
        CHECK(t.root["name"] == "GET (no route)");
        CHECK(t.names == std::vector<std::string>{"gateway.receive", "gateway.send"});
        CHECK((*attribute(t.root, "http.response.status_code"))["intValue"] ==
              std::to_string(lost.status));
    }
    traces.erase(lost_trace_id);
    {
        auto t = check_trace(traces[client_trace_id]);
        CHECK(t.root["name"] == "GET /hello/bash");
        CHECK(t.root["parentSpanId"] == client_parent);
        CHECK(t.names == std::vector<std::string>{"gateway.receive", "fault.decision",
                                                  "gateway.request_mapping", "pool.queue_wait",
                                                  "lambda.init", "lambda.invoke",
                                                  "gateway.response_mapping", "gateway.send"});
        CHECK((*attribute(t.root, "http.response.status_code"))["intValue"] == "200");
        for (const auto& c : t.children) {
            if (c["name"] != "lambda.init") continue;
            REQUIRE(attribute(c, "coldbrew.modeled_ms"));
            CHECK((*attribute(c, "coldbrew.modeled_ms"))["doubleValue"].get<double>() > 0);
            CHECK((*attribute(c, "coldbrew.time_scale"))["doubleValue"] == 0.01);
            CHECK((*attribute(c, "coldbrew.real_ms"))["doubleValue"].get<double>() > 0);
        }
    }
    for (const auto& [id, spans] : traces) {
        if (id == client_trace_id) continue;
        auto t = check_trace(spans);
        CHECK_FALSE(t.root.contains("parentSpanId")); // generated root: no parent
        CHECK(t.names == std::vector<std::string>{"gateway.receive", "fault.decision",
                                                  "gateway.request_mapping", "pool.queue_wait",
                                                  "lambda.invoke", "gateway.response_mapping",
                                                  "gateway.send"});
    }

    // --log-dir: the function's lines, each after its timestamp.
    const auto lines = read_lines(log_dir / "HelloBash.log");
    const std::regex stamp(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (.*)$)");
    int reports = 0, starts = 0;
    for (const auto& l : lines) {
        std::smatch m;
        INFO(l);
        REQUIRE(std::regex_match(l, m, stamp));
        const std::string rest = m[1];
        reports += rest.rfind("REPORT RequestId: ", 0) == 0;
        starts += rest.rfind("START RequestId: ", 0) == 0;
    }
    CHECK(reports == 2);
    CHECK(starts == 2);
    CHECK_FALSE(std::filesystem::exists(log_dir / "HelloNode.log")); // it never ran
}

TEST_CASE("traces: Invoke API passes X-Amzn-Trace-Id on; JSON log format",
          "[integration][traces]") {
    temp_dir dir;
    write_fake_app(
        dir, "    Environment:\n      Variables:\n        FAKE_ECHO_ENV: AWS_LAMBDA_LOG_FORMAT\n",
        "  Fake:\n    Type: AWS::Serverless::Function\n");
    const auto trace_file = dir.path() / "t.jsonl";
    const auto log_dir = dir.path() / "logs";
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                           "--admin-port", "0", "--seed", "3", "--trace-file", trace_file.string(),
                           "--log-dir", log_dir.string(), "--log-format", "json"});
    proc.wait_for_port();
    const int invoke_port = proc.wait_for_invoke_port();
    const std::string header = "Root=" + client_root + ";Parent=" + client_parent + ";Sampled=1";
    auto r = http_request(invoke_port, "POST", "/2015-03-31/functions/Fake/invocations", "{}",
                          {{"X-Amzn-Trace-Id", header}});
    REQUIRE(r.status == 200);
    auto echo = json::parse(json::parse(r.body)["body"].get<std::string>());
    CHECK(echo["trace_id"] == header); // what the handler saw as Lambda-Runtime-Trace-Id
    CHECK(echo["env"]["AWS_LAMBDA_LOG_FORMAT"] == "JSON");
    const std::string request_id = *r.header("x-amzn-RequestId");

    // Without a header the invocation still gets a well-formed one of its own.
    auto plain = http_request(invoke_port, "POST", "/2015-03-31/functions/Fake/invocations", "{}");
    REQUIRE(plain.status == 200);
    auto echo2 = json::parse(json::parse(plain.body)["body"].get<std::string>());
    CHECK(std::regex_match(
        echo2["trace_id"].get<std::string>(),
        std::regex("Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0")));

    REQUIRE(proc.wait_for_line([](const std::string& l) {
        return l.find("\"type\":\"platform.report\"") != std::string::npos;
    }));
    proc.signal(SIGTERM);
    REQUIRE(proc.wait_exit() == 0);

    auto traces = traces_in(trace_file);
    REQUIRE(traces.size() == 2);
    auto t = check_trace(traces[client_trace_id]);
    CHECK(t.root["name"] == "Invoke Fake");
    CHECK(t.root["parentSpanId"] == client_parent);
    CHECK(t.names == std::vector<std::string>{"invoke.receive", "fault.decision", "pool.queue_wait",
                                              "lambda.init", "lambda.invoke",
                                              "invoke.response_mapping", "invoke.send"});
    // The header the handler got without a client header names the Invoke's root span.
    for (const auto& [id, spans] : traces) {
        if (id == client_trace_id) continue;
        auto other = check_trace(spans);
        const auto th = echo2["trace_id"].get<std::string>();
        CHECK(th.find("Parent=" + other.root["spanId"].get<std::string>()) != std::string::npos);
        CHECK(th.substr(7, 8) + th.substr(16, 24) == id);
    }

    // JSON log format: platform lines are JSON objects in the file (and on the terminal).
    int starts = 0, reports = 0;
    for (const auto& l : read_lines(log_dir / "Fake.log")) {
        if (l.empty() || l.front() != '{') continue;
        auto j = json::parse(l);
        if (j["type"] == "platform.start") {
            ++starts;
            if (j["record"]["requestId"] == request_id) CHECK(j["record"]["version"] == "$LATEST");
        }
        if (j["type"] == "platform.report") {
            ++reports;
            CHECK(j["record"]["status"] == "success");
            CHECK(j["record"]["metrics"]["memorySizeMB"] == 128);
            CHECK(j["record"]["metrics"]["durationMs"].is_number());
            CHECK(j["time"].get<std::string>().size() == 24);
        }
        CHECK(j["type"] != "END");
    }
    CHECK(starts == 2);
    CHECK(reports == 2);
}

TEST_CASE("traces: --otlp-endpoint POSTs a batch of OTLP JSON", "[integration][traces]") {
    one_post_server collector;
    coldbrew_process proc({"up", (source_dir() / "examples" / "hello").string(), "--port", "0",
                           "--invoke-port", "0", "--admin-port", "0", "--seed", "1", "--time-scale",
                           "0.01", "--otlp-endpoint",
                           "http://127.0.0.1:" + std::to_string(collector.port())});
    const int port = proc.wait_for_port();
    REQUIRE(
        http_request(port, "GET", "/hello/bash", "", {{"X-Amzn-Trace-Id", "Root=" + client_root}})
            .status == 200);
    const std::string req = collector.wait_request(std::chrono::seconds(10));
    REQUIRE_FALSE(req.empty());
    CHECK(req.rfind("POST /v1/traces HTTP/1.1\r\n", 0) == 0);
    CHECK(std::regex_search(
        req, std::regex("\r\nContent-Type: application/json\r\n", std::regex::icase)));
    auto body = json::parse(req.substr(req.find("\r\n\r\n") + 4));
    const auto& spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"];
    REQUIRE(spans.size() >= 2);
    CHECK(spans[0]["traceId"] == client_trace_id);
    proc.signal(SIGTERM);
    REQUIRE(proc.wait_exit() == 0);
    CHECK(proc.wait_for_line(
        [](const std::string& l) {
            return l.find("coldbrew: traces: 1 requests") != std::string::npos;
        },
        std::chrono::seconds(1)));
}

TEST_CASE("traces: an OTLP endpoint that is down costs nothing but the batches",
          "[integration][traces]") {
    // A port nothing listens on: bound, then closed.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    const int dead_port = ntohs(a.sin_port);
    ::close(fd);

    coldbrew_process proc({"up", (source_dir() / "examples" / "hello").string(), "--port", "0",
                           "--invoke-port", "0", "--admin-port", "0", "--seed", "1", "--time-scale",
                           "0.01", "--otlp-endpoint",
                           "http://127.0.0.1:" + std::to_string(dead_port)});
    const int port = proc.wait_for_port();
    REQUIRE(http_request(port, "GET", "/hello/bash").status == 200);
    // Warned once, and requests keep being served.
    REQUIRE(proc.wait_for_line(
        [](const std::string& l) { return l.find("traces: OTLP endpoint") != std::string::npos; },
        std::chrono::seconds(10)));
    REQUIRE(http_request(port, "GET", "/hello/bash").status == 200);
    const auto t0 = std::chrono::steady_clock::now();
    proc.signal(SIGTERM);
    REQUIRE(proc.wait_exit() == 0);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8));
    CHECK(proc.wait_for_line(
        [](const std::string& l) {
            return l.find("coldbrew: traces: 2 requests") != std::string::npos &&
                   l.find("0 batches posted") != std::string::npos;
        },
        std::chrono::seconds(1)));
}

TEST_CASE("traces: a bad --otlp-endpoint or --log-format stops the start",
          "[integration][traces]") {
    coldbrew_process bad_endpoint({"up", (source_dir() / "examples" / "hello").string(), "--port",
                                   "0", "--otlp-endpoint", "https://127.0.0.1:4318"});
    CHECK(bad_endpoint.wait_exit() == 2);
    CHECK(bad_endpoint.stderr_text().find("--otlp-endpoint") != std::string::npos);
    coldbrew_process bad_format({"up", (source_dir() / "examples" / "hello").string(), "--port",
                                 "0", "--log-format", "yaml"});
    CHECK(bad_format.wait_exit() == 2);
}

TEST_CASE("traces: an injected delay and a slow answer are spans of their own",
          "[integration][traces]") {
    temp_dir dir;
    write_fake_app(dir, "", R"(  Pay:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Rest:
          Type: Api
          Properties:
            Path: /pay
            Method: post
)");
    dir.write("coldbrew.yaml", "time_scale: 0.1\n");
    const auto trace_file = dir.path() / "t.jsonl";
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                           "--admin-port", "0", "--seed", "2", "--trace-file",
                           trace_file.string()});
    const int port = proc.wait_for_port();
    const int admin = proc.wait_for_admin_port();
    auto only = [&](const json& fault) {
        json rules = {{"rules", {{{"name", "r"}, {"route", "POST /pay"}, {"fault", fault}}}}};
        REQUIRE(http_request(admin, "PUT", "/faults", rules.dump(),
                             {{"Content-Type", "application/json"}})
                    .status == 200);
    };
    only({{"kind", "delay"}, {"duration", "fixed(1s)"}});
    REQUIRE(http_request(port, "POST", "/pay", "{}",
                         {{"X-Amzn-Trace-Id", "Root=1-00000001-000000000000000000000001"}})
                .status == 200);
    // A modeled 2,000 B/s: at time_scale 0.1 the answer is sent at 20,000 B/s.
    only({{"kind", "slow_response"}, {"bytes_per_s", 2000}});
    REQUIRE(http_request(port, "POST", "/pay", "{}",
                         {{"X-Amzn-Trace-Id", "Root=1-00000001-000000000000000000000002"}})
                .status == 200);
    proc.signal(SIGTERM);
    REQUIRE(proc.wait_exit() == 0);

    auto traces = traces_in(trace_file);
    REQUIRE(traces.size() == 2);
    auto delayed = check_trace(traces["00000001000000000000000000000001"]);
    CHECK(delayed.names ==
          std::vector<std::string>{"gateway.receive", "fault.decision", "gateway.request_mapping",
                                   "fault.delay", "pool.queue_wait", "lambda.init", "lambda.invoke",
                                   "gateway.response_mapping", "gateway.send"});
    for (const auto& c : delayed.children) {
        if (c["name"] == "fault.decision")
            CHECK((*attribute(c, "coldbrew.fault.kind"))["stringValue"] == "delay");
        if (c["name"] != "fault.delay") continue;
        CHECK((*attribute(c, "coldbrew.modeled_ms"))["doubleValue"] == 1000.0);
        // 1 s × time_scale 0.1, slept for real.
        CHECK(nanos(c, "endTimeUnixNano") - nanos(c, "startTimeUnixNano") >= 90'000'000);
    }
    auto slow = check_trace(traces["00000001000000000000000000000002"]);
    REQUIRE(slow.children.size() >= 3);
    const auto& shaping = slow.children[slow.children.size() - 2];
    CHECK(shaping["name"] == "network.shaping");
    CHECK((*attribute(shaping, "coldbrew.direction"))["stringValue"] == "to_client");
    CHECK(nanos(shaping, "endTimeUnixNano") - nanos(shaping, "startTimeUnixNano") >= 20'000'000);
    CHECK(slow.children.back()["name"] == "gateway.send");
    CHECK(slow.names.back() == "gateway.send");
}
