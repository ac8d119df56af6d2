// examples/payments under phantoms, as a CI pipeline would test a retry strategy: the admin
// API schedules a phantom on a named request, the example's own retrying client drives the
// API, and the effects in the store are checked to be exactly once.

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

const std::string confirm_route = "POST /{variant}/payment_intents/{id}/confirm";

struct payments {
    temp_dir store;
    coldbrew_process proc;
    int port, admin;
    payments()
        : proc({"up", (source_dir() / "examples" / "payments").string(), "--port", "0", "--seed", "5",
                "--time-scale", "0.01", "--parameter-overrides",
                "StorePath=" + (store.path() / "payments.sqlite").string()}),
          port(proc.wait_for_port()),
          admin(proc.wait_for_admin_port()) {}

    json admin_json(const std::string& method, const std::string& target, const json& body) {
        auto r = http_request(admin, method, target, body.dump(), {{"Content-Type", "application/json"}});
        INFO(method << " " << target << " -> " << r.status << " " << r.body);
        REQUIRE(r.status / 100 == 2);
        return json::parse(r.body);
    }

    // Runs client.py for one variant; returns its exit code and JSON summary.
    std::pair<int, json> client(const std::string& variant, int count) {
        coldbrew_process c({(source_dir() / "examples" / "payments" / "client.py").string(), "--url",
                            "http://127.0.0.1:" + std::to_string(port), "--variant", variant,
                            "--payments", std::to_string(count), "--seed", "3", "--json",
                            "--expect-exactly-once"},
                           {}, "/usr/bin/python3");
        auto rc = c.wait_exit(std::chrono::seconds(120));
        INFO(c.stdout_text() << c.stderr_text());
        REQUIRE(rc);
        return {*rc, json::parse(c.stdout_text())[variant]};
    }
};

}  // namespace

TEST_CASE("examples/payments: a phantom on the 3rd confirm; idempotency keys give exactly-once charges",
          "[integration]") {
    payments p;
    // The 3rd confirm runs (the charge happens) and its response is lost; the client sees the
    // gateway's timeout and retries with the same key.
    p.admin_json("PUT", "/faults",
                 {{"rules", {{{"name", "lose-third-confirm"},
                              {"route", confirm_route},
                              {"nth", 3},
                              {"fault", {{"kind", "phantom"}, {"when", "after"}, {"client_sees", "timeout"}}}}}}});
    auto [rc, summary] = p.client("idempotent", 5);
    CHECK(rc == 0);
    CHECK(summary["succeeded"] == 5);
    CHECK(summary["charges"] == 5);
    CHECK(summary["double_charged"] == 0);
    CHECK(summary["timeouts"] == 1);
    CHECK(summary["replayed"] == 1);  // the retry got the stored answer

    auto counters = p.admin_json("GET", "/counters", nullptr);
    CHECK(counters["faults"]["by_rule"]["lose-third-confirm"] == 1);
    CHECK(counters["faults"]["by_action"]["phantom_after"] == 1);
    auto decisions = p.admin_json("GET", "/decisions", nullptr)["decisions"];
    int fired = 0;
    for (const auto& d : decisions)
        if (d.value("rule", "") == "lose-third-confirm") {
            ++fired;
            CHECK(d["k"] == 2);  // the 3rd request on the route, counted from 0
            CHECK(d["action"] == "phantom_after");
        }
    CHECK(fired == 1);
}

TEST_CASE("examples/payments: without idempotency the same phantom double-charges", "[integration]") {
    payments p;
    p.admin_json("PUT", "/faults",
                 {{"rules", {{{"name", "lose-third-confirm"},
                              {"route", confirm_route},
                              {"nth", 3},
                              {"fault", {{"kind", "phantom"}, {"when", "after"}}}}}}});
    auto [rc, summary] = p.client("naive", 5);
    CHECK(rc == 1);  // --expect-exactly-once fails
    CHECK(summary["succeeded"] == 5);
    CHECK(summary["charges"] == 6);
    CHECK(summary["double_charged"] == 1);
}

TEST_CASE("examples/payments: run.py shows the double charge and its cure", "[integration]") {
    temp_dir out;
    const auto results = out.path() / "run.json";
    coldbrew_process run({(source_dir() / "examples" / "payments" / "run.py").string(), "--payments", "10",
                          "--coldbrew", coldbrew_binary(), "--json", results.string()},
                         {}, "/usr/bin/python3");
    auto rc = run.wait_exit(std::chrono::seconds(180));
    INFO(run.stdout_text() << run.stderr_text());
    REQUIRE(rc == 0);
    std::ifstream in(results);
    auto r = json::parse(in);
    INFO(r.dump(2));
    auto& v = r["variants"];
    CHECK(v["naive"]["double_charged"].get<int>() > 0);
    CHECK(v["idempotent"]["double_charged"] == 0);
    CHECK(v["idempotent"]["charges"] == 10);
    CHECK(r["problems"].empty());
}
