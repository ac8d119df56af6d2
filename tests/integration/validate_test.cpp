// `coldbrew validate`: the real binary on a SAM app, its per-function model explanation.

#include <signal.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;

namespace {

// Vpc (legacy-eni ENIs) and Plain (no VPC), both 1024 MB.
struct eni_app {
    temp_dir dir;
    eni_app() {
        write_fake_app(dir, "    Timeout: 30\n    MemorySize: 1024\n", R"(  Vpc:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Rest:
          Type: Api
          Properties: {Path: /vpc, Method: post}
  Plain:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Rest:
          Type: Api
          Properties: {Path: /plain, Method: post}
)");
        dir.write("coldbrew.yaml", "functions:\n  Vpc:\n    vpc: legacy-eni\n");
    }
};

std::string line_with(const std::string& text, const std::string& part) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.find(part) != std::string::npos) return line;
    return {};
}

}  // namespace

TEST_CASE("validate: a legacy-eni function explains its ENIs and what a cold burst does",
          "[integration]") {
    eni_app app;
    const run_result r = run_to_exit({"validate", app.dir.path().string()});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    // The percentiles line says it is of one cold start alone, which always waits on an ENI.
    const std::string vpc = line_with(r.out, "  Vpc  cold start p50 ");
    CHECK(vpc.find("(isolated cold start, which waits for a new ENI; provided.al2023") !=
          std::string::npos);
    CHECK(vpc.find("VPC legacy-eni") != std::string::npos);
    const std::string plain = line_with(r.out, "  Plain  cold start p50 ");
    REQUIRE(plain != "");
    CHECK(plain.find("isolated") == std::string::npos);
    CHECK(line_with(r.out, "vpc: legacy-eni shared ENIs: 3 environments per ENI at 1024 MB")
              .find("creation lognormal(median=9100ms, p99=21000ms)") != std::string::npos);
    CHECK(line_with(r.out, "vpc: legacy-eni shared ENIs").find("released after uniform(1200000ms, 2700000ms)") !=
          std::string::npos);
    // The bursts come from running the models: ceil(n / 3) ENIs at 1024 MB.
    CHECK(line_with(r.out, "a burst of 16 first requests against a cold stack: 6 ENIs created") != "");
    CHECK(line_with(r.out, "a burst of 50 first requests against a cold stack: 17 ENIs created") != "");
    CHECK(line_with(r.out, "a burst of 100 first requests against a cold stack: 34 ENIs created") != "");
    // Every cold start of the burst waited on a creation (seconds, not the ~50 ms runtime).
    const std::string burst = line_with(r.out, "a burst of 16 first");
    const auto p50 = burst.find("cold start p50 ");
    REQUIRE(p50 != std::string::npos);
    std::size_t used = 0;
    const double value = std::stod(burst.substr(p50 + 15), &used);
    const bool seconds = burst.compare(p50 + 15 + used, 2, " s") == 0;
    CHECK((seconds ? value * 1000 : value) > 1000);
    // Only the VPC function has ENI lines.
    std::size_t bursts = 0;
    for (auto at = r.out.find("a burst of "); at != std::string::npos; at = r.out.find("a burst of ", at + 1))
        ++bursts;
    CHECK(bursts == 3);
}

TEST_CASE("validate: a profile with the old flat legacy-eni form still runs, per environment",
          "[integration]") {
    eni_app app;
    std::ifstream in(source_dir() / "models" / "profiles" / "aws-2026.yaml");
    std::stringstream text;
    text << in.rdbuf();
    std::string profile = text.str();
    const auto at = profile.find("  legacy-eni:\n");
    const auto end = profile.find("\n# Extensions", at);
    REQUIRE(at != std::string::npos);
    REQUIRE(end != std::string::npos);
    profile.replace(at, end - at,
                    "  legacy-eni: \"mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))\"\n");
    app.dir.write("old-profile.yaml", profile);
    app.dir.write("coldbrew.yaml", "profile: old-profile.yaml\nfunctions:\n  Vpc:\n    vpc: legacy-eni\n");
    const run_result r = run_to_exit({"validate", app.dir.path().string()});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const std::string vpc = line_with(r.out, "  Vpc  cold start p50 ");
    REQUIRE(vpc != "");
    CHECK(vpc.find("isolated") == std::string::npos);
    CHECK(line_with(r.out, "vpc: legacy-eni mixture(").find("flat form: no ENI pool") != std::string::npos);
    CHECK(r.out.find("a burst of ") == std::string::npos);
}

TEST_CASE("up: a legacy-eni cold start's decision log line names its ENI and the wait", "[integration]") {
    eni_app app;
    temp_dir logs;
    const auto log_path = logs.path() / "decisions.jsonl";
    std::string text;
    {
        // Scaled down so the modeled ENI creation (seconds) takes milliseconds here.
        coldbrew_process cb({"up", app.dir.path().string(), "--port", "0", "--seed", "9",
                             "--time-scale", "0.01", "--decision-log", log_path.string()});
        const int port = cb.wait_for_port();
        CHECK(http_request(port, "POST", "/vpc", "{}", {{"Content-Type", "application/json"}}).status == 200);
        CHECK(http_request(port, "POST", "/plain", "{}", {{"Content-Type", "application/json"}}).status == 200);
        cb.signal(SIGTERM);
        REQUIRE(cb.wait_exit());
    }
    std::ifstream in(log_path);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
    INFO(text);
    const std::string vpc = line_with(text, R"("event":"created","function":"Vpc")");
    REQUIRE(vpc != "");
    const auto eni = vpc.find(R"(,"eni":{"id":0,"created":true,"wait_ms":)");
    REQUIRE(eni != std::string::npos);
    // The vpc term of the Init Duration is that wait, in seconds (a modeled ENI creation).
    const auto vpc_at = vpc.find(R"("vpc":)");
    REQUIRE(vpc_at != std::string::npos);
    const std::string vpc_ms = vpc.substr(vpc_at + 6, vpc.find(',', vpc_at) - vpc_at - 6);
    const auto wait_at = eni + std::string(R"(,"eni":{"id":0,"created":true,"wait_ms":)").size();
    CHECK(vpc.substr(wait_at, vpc.find('}', wait_at) - wait_at) == vpc_ms);
    CHECK(std::stod(vpc_ms) > 1000);
    const std::string plain = line_with(text, R"("event":"created","function":"Plain")");
    REQUIRE(plain != "");
    CHECK(plain.find(R"("eni")") == std::string::npos);
}
