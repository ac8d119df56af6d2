// GET /metrics and the run summary, end to end: `coldbrew up` on examples/hello, real
// requests, a scrape of the admin API read as Prometheus text, and the summary printed on
// SIGINT.

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

#include <csignal>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace coldbrew::testing;

namespace {

struct sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};

// Sample lines of a text exposition (the unit tests check the format line by line; here only
// the numbers matter). Throws on a line that is not a comment or `name{labels} value`.
std::vector<sample> read_samples(const std::string& text) {
    std::vector<sample> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        sample s;
        std::size_t i = line.find_first_of("{ ");
        if (i == std::string::npos) throw std::runtime_error("not a sample: " + line);
        s.name = line.substr(0, i);
        if (line[i] == '{') {
            ++i;
            while (line.at(i) != '}') {
                auto eq = line.find("=\"", i);
                std::string key = line.substr(i, eq - i);
                std::string value;
                for (i = eq + 2; line.at(i) != '"'; ++i) {
                    if (line[i] == '\\') {
                        char e = line.at(++i);
                        value += e == 'n' ? '\n' : e;
                    } else {
                        value += line[i];
                    }
                }
                s.labels[key] = value;
                ++i;
                if (line.at(i) == ',') ++i;
            }
            ++i;
        }
        if (line.at(i) != ' ') throw std::runtime_error("not a sample: " + line);
        s.value = std::stod(line.substr(i + 1));
        out.push_back(std::move(s));
    }
    return out;
}

// The sum of every sample of `name` whose labels include `want`.
double total(const std::vector<sample>& samples, const std::string& name,
             const std::map<std::string, std::string>& want) {
    double sum = 0;
    for (const auto& s : samples) {
        if (s.name != name) continue;
        bool all = true;
        for (const auto& [k, v] : want) {
            auto it = s.labels.find(k);
            all = all && it != s.labels.end() && it->second == v;
        }
        if (all) sum += s.value;
    }
    return sum;
}

} // namespace

TEST_CASE("metrics: GET /metrics counts every request, and the run summary prints on SIGINT",
          "[integration]") {
    coldbrew_process cb(
        {"up", (source_dir() / "examples" / "hello").string(), "--port", "0", "--seed", "1"});
    const int port = cb.wait_for_port();
    const int admin = cb.wait_for_admin_port();

    constexpr int n = 7;
    for (int i = 0; i < n; ++i) {
        auto r = http_request(port, "GET", "/hello/python?name=n" + std::to_string(i));
        INFO(r.body);
        REQUIRE(r.status == 200);
    }
    // A route the stack lacks: counted under a placeholder, never under the client's path.
    CHECK(http_request(port, "GET", "/no/such/route").status == 403);

    auto scrape = http_request(admin, "GET", "/metrics");
    REQUIRE(scrape.status == 200);
    CHECK(scrape.header("Content-Type") ==
          std::optional<std::string>("text/plain; version=0.0.4; charset=utf-8"));
    INFO(scrape.body);
    const auto samples = read_samples(scrape.body);

    const std::map<std::string, std::string> route{{"front", "gateway"},
                                                   {"route", "GET /hello/python"}};
    CHECK(total(samples, "coldbrew_requests_total", route) == n);
    CHECK(total(samples, "coldbrew_requests_total",
                {{"front", "gateway"}, {"route", "GET /hello/python"}, {"status", "200"}}) == n);
    CHECK(total(samples, "coldbrew_request_duration_seconds_count", route) == n);
    auto inf = route;
    inf["le"] = "+Inf";
    CHECK(total(samples, "coldbrew_request_duration_seconds_bucket", inf) == n);
    CHECK(total(samples, "coldbrew_request_duration_seconds_sum", route) > 0);
    CHECK(total(samples, "coldbrew_requests_total",
                {{"front", "gateway"}, {"route", "(no route)"}, {"status", "403"}}) == 1);
    CHECK(total(samples, "coldbrew_requests_total", {{"route", "/no/such/route"}}) == 0);
    CHECK(total(samples, "coldbrew_request_outcomes_total",
                {{"front", "gateway"}, {"outcome", "served"}}) == n + 1);

    // One function served them all; its first request started an environment.
    const std::map<std::string, std::string> fn{{"function", "HelloPython"}};
    const double cold = total(samples, "coldbrew_cold_starts_total", fn);
    CHECK(cold >= 1);
    CHECK(total(samples, "coldbrew_invocations_total", fn) == n);
    CHECK(total(samples, "coldbrew_init_duration_seconds_count", fn) == cold);
    CHECK(total(samples, "coldbrew_init_duration_seconds_sum", fn) > 0);
    CHECK(total(samples, "coldbrew_execution_environments", fn) >= 1);
    CHECK(total(samples, "coldbrew_invocations_total", {{"function", "HelloNode"}}) == 0);

    // POST /counters/reset forgets the requests, as it zeroes the outcome counters.
    REQUIRE(http_request(admin, "POST", "/counters/reset").status == 200);
    const auto after = read_samples(http_request(admin, "GET", "/metrics").body);
    CHECK(total(after, "coldbrew_requests_total", {}) == 0);
    // Init Durations go with the cold-start counters they belong to.
    CHECK(total(after, "coldbrew_init_duration_seconds_count", fn) == 0);
    CHECK(total(after, "coldbrew_cold_starts_total", fn) == 0);

    REQUIRE(http_request(port, "GET", "/hello/python").status == 200);
    // A request an injected reset ends has no status; it is counted once, as a fault.
    REQUIRE(
        http_request(admin, "POST", "/faults",
                     R"({"name":"rst","route":"GET /v2/hello/python","fault":{"kind":"reset"}})")
            .status == 201);
    CHECK(http_attempt(port, "GET", "/v2/hello/python").end == http_attempt_result::ending::reset);
    const auto faulted = read_samples(http_request(admin, "GET", "/metrics").body);
    CHECK(total(faulted, "coldbrew_requests_total",
                {{"route", "GET /v2/hello/python"}, {"status", "0"}}) == 1);
    CHECK(total(faulted, "coldbrew_requests_total", {}) == 2);
    CHECK(total(faulted, "coldbrew_faults_injected_total", {{"kind", "reset"}}) == 1);

    cb.signal(SIGINT);
    REQUIRE(cb.wait_exit(std::chrono::seconds(15)) == 0);
    const auto out = cb.stdout_text();
    INFO(out);
    CHECK(out.find("coldbrew: run summary (") != std::string::npos);
    CHECK(out.find("    requests ............ 2 (") != std::string::npos);
    CHECK(out.find("    status codes ........ 200: 1, none: 1\n") != std::string::npos);
    CHECK(out.find("1 served, 1 injected fault, 0 handler errors") != std::string::npos);
    CHECK(out.find("  faults injected ....... reset: 1\n") != std::string::npos);
    // The summary counts from the reset and says so: no cold start happened since.
    CHECK(out.find("since the counters were reset") != std::string::npos);
    CHECK(out.find("  Init Duration\n") == std::string::npos);
}
