// Every example a user would copy is started with `coldbrew up` and called like curl would.

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {
struct example {
    coldbrew_process proc;
    int port;
    explicit example(const std::filesystem::path& dir, std::vector<std::string> extra = {})
        : proc(args(dir, std::move(extra))), port(proc.wait_for_port()) {}
    static std::vector<std::string> args(const std::filesystem::path& dir, std::vector<std::string> extra) {
        std::vector<std::string> a{"up", dir.string(), "--port", "0", "--seed", "1"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    json get_json(const std::string& target, int expect_status = 200) {
        auto r = http_request(port, "GET", target);
        INFO(target << " -> " << r.status << " " << r.body);
        REQUIRE(r.status == expect_status);
        return json::parse(r.body);
    }
};
}  // namespace

TEST_CASE("examples/hello: node, python and bash behind REST and HTTP APIs", "[integration]") {
    example ex(source_dir() / "examples" / "hello");

    auto node = ex.get_json("/hello/node?name=Ada");
    CHECK(node["message"].get<std::string>().rfind("Hello, Ada! From Node.js", 0) == 0);
    CHECK(node["payloadVersion"] == "1.0");
    CHECK(node["deployedIn"] == "us-east-1 (stack local)");
    CHECK(node["remainingTimeMs"].get<long>() > 0);
    CHECK(node["remainingTimeMs"].get<long>() <= 10000);

    auto greedy = ex.get_json("/hello/node/a/b");
    CHECK(greedy["pathParameters"]["proxy"] == "a/b");

    auto node2 = ex.get_json("/v2/hello/node");
    CHECK(node2["payloadVersion"] == "2.0");

    auto py = ex.get_json("/hello/python?name=Guido");
    CHECK(py["message"].get<std::string>().rfind("Hello, Guido! From Python", 0) == 0);
    auto post = http_request(ex.port, "POST", "/v2/hello/python", R"({"x":1})",
                             {{"Content-Type", "application/json"}});
    CHECK(post.status == 201);
    CHECK(json::parse(post.body)["posted"]["x"] == 1);

    auto bash = ex.get_json("/hello/bash");
    CHECK(bash["message"].get<std::string>().rfind("Hello, world! From bash", 0) == 0);
    auto bash2 = http_request(ex.port, "GET", "/v2/hello/bash?fail=1");
    CHECK(bash2.status == 500);

    // The response headers the function set come through; the gateway adds its request id.
    auto raw = http_request(ex.port, "GET", "/hello/python");
    CHECK(raw.header("x-hello-runtime") == std::optional<std::string>("python"));
    CHECK(raw.header("x-amzn-RequestId"));
    // /hello/node/{proxy+} does not serve its parent with another method; DELETE has no route.
    CHECK(http_request(ex.port, "DELETE", "/hello/node").status == 403);
    CHECK(ex.proc.wait_for_line([](const std::string& l) {
        return l.rfind("[HelloPython] REPORT RequestId:", 0) == 0;
    }));
}

TEST_CASE("examples/hello: --parameter-overrides reaches the functions", "[integration]") {
    example ex(source_dir() / "examples" / "hello", {"--parameter-overrides", "Greeting=Hi"});
    auto node = ex.get_json("/hello/node");
    CHECK(node["message"].get<std::string>().rfind("Hi, world!", 0) == 0);
}

TEST_CASE("examples/hello-serverless: http and httpApi events, node and python", "[integration]") {
    example ex(source_dir() / "examples" / "hello-serverless");
    auto r = http_request(ex.port, "GET", "/hello");
    INFO(r.body);
    REQUIRE(r.status == 200);
    auto named = http_request(ex.port, "GET", "/hello/Ada");
    REQUIRE(named.status == 200);
    CHECK(named.body.find("Ada") != std::string::npos);
    // serverless-offline style URL with the stage in front.
    CHECK(http_request(ex.port, "GET", "/dev/hello").status == 200);
    CHECK(http_request(ex.port, "GET", "/v2/hello").status == 200);
    CHECK(http_request(ex.port, "GET", "/hello/python").status == 200);
    CHECK(http_request(ex.port, "GET", "/v2/hello/python").status == 200);
    // A path the HTTP API serves, with a method it does not: HTTP API's 404 Not Found.
    auto miss = http_request(ex.port, "DELETE", "/v2/hello");
    CHECK(miss.status == 404);
    CHECK(miss.body == R"({"message":"Not Found"})");
}

#ifdef COLDBREW_HELLO_CPP_DIR
TEST_CASE("examples/hello-cpp: a compiled bootstrap behind both APIs", "[integration]") {
    // The example's CodeUri assumes the build directory is build/; point a copy of the
    // template at wherever this build put the bootstrap.
    temp_dir dir;
    std::ifstream in(source_dir() / "examples" / "hello-cpp" / "template.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text = std::regex_replace(text, std::regex("CodeUri: .*"), std::string("CodeUri: ") + COLDBREW_HELLO_CPP_DIR);
    dir.write("template.yaml", text);
    example ex(dir.path());
    auto rest = http_request(ex.port, "GET", "/hello/cpp");
    INFO(rest.body);
    CHECK(rest.status == 200);
    CHECK(http_request(ex.port, "GET", "/v2/hello/cpp").status == 200);
}
#endif

TEST_CASE("examples/coldstart-lab: the lab script runs every variant and its numbers follow the profile",
          "[integration]") {
    temp_dir out;
    const auto results = out.path() / "lab.json";
    // Small and scaled, so it stays quick; the README runs it at full size.
    coldbrew_process lab({(source_dir() / "examples" / "coldstart-lab" / "lab.py").string(),
                          "--clients", "4", "--requests", "3", "--time-scale", "0.02",
                          "--package-mb", "3", "--coldbrew", coldbrew_binary(), "--json",
                          results.string()},
                         {}, "/usr/bin/python3");
    auto rc = lab.wait_exit(std::chrono::seconds(240));
    INFO(lab.stdout_text() << lab.stderr_text());
    REQUIRE(rc == 0);
    CHECK(lab.stdout_text().find("model p50/p95/p99") != std::string::npos);
    std::ifstream in(results);
    auto r = json::parse(in);
    for (const char* v : {"Baseline", "LargePackage", "LegacyEni", "WithExtension", "Provisioned"}) {
        INFO(v);
        REQUIRE(r.contains(v));
        CHECK(r[v]["requests"] == 12);
        CHECK(r[v]["errors"] == 0);
    }
    // Four concurrent clients need four environments; provisioned ones were ready before.
    CHECK(r["Baseline"]["cold_starts"] == 4);
    CHECK(r["Provisioned"]["cold_starts"] == 0);
    // The model moves in the published direction and size (model-data §2a, §2c, §3):
    // ~0.1 s per zipped MB, a Go-based agent ~0.5 s, legacy ENI attach seconds at the tail.
    const double base = r["Baseline"]["model_ms"][0];
    CHECK(r["LargePackage"]["model_ms"][0].get<double>() > base + 200);
    CHECK(r["WithExtension"]["model_ms"][0].get<double>() > base + 350);
    CHECK(r["LegacyEni"]["model_ms"][2].get<double>() > 10000);
    // The run drew its cold starts from that model: a larger package draws longer inits.
    CHECK(r["LargePackage"]["drawn_ms"][0].get<double>() > r["Baseline"]["drawn_ms"][2].get<double>() + 150);
    CHECK(r["Provisioned"]["drawn_ms"][0].is_null());
    // Every cold start's REPORT says Init Duration, at least the drawn figure.
    CHECK(r["LargePackage"]["init_ms"][0].get<double>() >= r["LargePackage"]["drawn_ms"][0].get<double>());
}

TEST_CASE("examples/fanout: the orchestrator invokes its workers through the AWS SDK and combines them exactly",
          "[integration]") {
    const auto fanout = source_dir() / "examples" / "fanout";
    if (!std::filesystem::exists(fanout / "orchestrator" / "node_modules" / "@aws-sdk" / "client-lambda"))
        FAIL("@aws-sdk/client-lambda is not installed in examples/fanout/orchestrator: run tools/setup.sh");
    example ex(fanout, {"--invoke-port", "0"});

    // The data set as worker.py generates it: item i of a seed, computed here directly.
    const std::uint32_t seed = 7, items = 100003, workers = 5;
    auto value = [](std::uint32_t s, std::uint32_t i) {
        std::uint32_t x = i + s * 0x9E3779B9u;
        x ^= x >> 16;
        x *= 0x85EBCA6Bu;
        x ^= x >> 13;
        x *= 0xC2B2AE35u;
        x ^= x >> 16;
        return x % 1000000u;
    };
    std::uint64_t sum = 0;
    std::uint32_t lo = 0xFFFFFFFFu, hi = 0;
    for (std::uint32_t i = 0; i < items; ++i) {
        auto v = value(seed, i);
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }

    const std::string target = "/fanout?workers=" + std::to_string(workers) + "&items=" + std::to_string(items) +
                               "&seed=" + std::to_string(seed);
    for (int round = 0; round < 2; ++round) {
        INFO("round " << round);
        auto r = ex.get_json(target);
        CHECK(r["count"] == items);
        CHECK(r["sum"] == sum);
        CHECK(r["min"] == lo);
        CHECK(r["max"] == hi);
        REQUIRE(r["per_worker"].size() == workers);
        // The shares tile 0..items-1 in order; each worker answered for its own.
        std::uint64_t next = 0, worker_sum = 0;
        int cold = 0;
        for (const auto& w : r["per_worker"]) {
            CHECK(w["start"] == next);
            next = w["end"].get<std::uint64_t>();
            worker_sum += w["sum"].get<std::uint64_t>();
            CHECK(w["invoke_ms"].get<double>() >= w["compute_ms"].get<double>());
            cold += w["cold_start"].get<bool>() ? 1 : 0;
        }
        CHECK(next == items);
        CHECK(worker_sum == sum);
        // Five invocations at once need five execution environments; the next fan-out finds
        // them warm.
        if (round == 0) CHECK(cold == static_cast<int>(workers));
        if (round == 1) CHECK(cold < static_cast<int>(workers));
    }

    auto bad = http_request(ex.port, "GET", "/fanout?workers=0");
    CHECK(bad.status == 400);
}
