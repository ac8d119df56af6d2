// A live run recorded (`up --record`) and replayed (`sim PATH --replay`): the replay's decision
// log is the live one, byte for byte, less the init_overrun lines; a record that was tampered
// with (another seed, a request left out) no longer agrees.

#include <signal.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) out.push_back(l);
    return out;
}

void write_lines(const std::filesystem::path& p, const std::vector<std::string>& lines) {
    std::ofstream out(p, std::ios::trunc);
    for (const auto& l : lines) out << l << "\n";
}

}  // namespace

TEST_CASE("record and replay: a live run's decisions come back the same from its record",
          "[integration]") {
    temp_dir app;
    write_fake_app(app, "    Timeout: 5\n", R"(  Fake:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Rest:
          Type: Api
          Properties: {Path: /fake, Method: post}
)");
    // A reserved concurrency the burst overruns, an injected crash on a marked request, a
    // phantom every 7th request, an injected handler error by chance (so the seed matters),
    // and a throttle on the Invoke API.
    app.write("coldbrew.yaml", R"(functions:
  Fake:
    reserved_concurrency: 4
    model:
      init_duration: fixed(300ms)
faults:
  rules:
    - {name: crash-marked, route: POST /fake, headers: {x-crash: "yes"}, fault: {kind: function_error, mode: exit, after: 0ms}}
    - {name: lose-7th, route: POST /fake, every_nth: 7, fault: {kind: phantom, when: after}}
    - {name: oops, route: POST /fake, probability: 0.2, fault: {kind: function_error, mode: handler}}
    - {name: invoke-throttle, route: Invoke Fake, nth: 2, fault: {kind: throttle}}
)");
    temp_dir out;
    const auto rec = out.path() / "rec.jsonl";
    const auto live = out.path() / "live.jsonl";
    const auto replayed = out.path() / "replay.jsonl";
    {
        coldbrew_process cb({"up", app.path().string(), "--port", "0", "--seed", "11",
                             "--time-scale", "0.01", "--record", rec.string(), "--decision-log",
                             live.string()});
        const int port = cb.wait_for_port();
        const int invoke_port = cb.wait_for_invoke_port();
        const int admin_port = cb.wait_for_admin_port();
        // Asynchronous invocations: the event queue invokes the pool with no decision first.
        for (int i = 0; i < 2; ++i)
            REQUIRE(http_request(invoke_port, "POST", "/2015-03-31/functions/Fake/invocations",
                                 R"({"sleep_ms":5})", {{"X-Amz-Invocation-Type", "Event"}})
                        .status == 202);
        // 40 gateway requests over 8 connections at once, and 8 Invoke API calls.
        std::vector<std::thread> clients;
        for (int c = 0; c < 8; ++c)
            clients.emplace_back([&] {
                for (int i = 0; i < 5; ++i)
                    http_attempt(port, "POST", "/fake", R"({"sleep_ms":40})",
                                 {{"Content-Type", "application/json"}},
                                 std::chrono::seconds(10));
                http_attempt(invoke_port, "POST", "/2015-03-31/functions/Fake/invocations",
                             R"({"sleep_ms":5})", {}, std::chrono::seconds(10));
            });
        for (auto& t : clients) t.join();
        // A rule added while running, then a few more requests.
        auto added = http_request(admin_port, "POST", "/faults",
                                  R"({"name":"late-503","route":"POST /fake","nth":2,"fault":{"kind":"gateway_error","status":503}})",
                                  {{"Content-Type", "application/json"}});
        REQUIRE(added.status == 201);
        // One at a time: the marked request's environment is killed (and discarded).
        for (int i = 0; i < 4; ++i) {
            std::vector<std::pair<std::string, std::string>> h{{"Content-Type", "application/json"}};
            if (i == 0) h.emplace_back("x-crash", "yes");
            http_attempt(port, "POST", "/fake", R"({"sleep_ms":1})", h, std::chrono::seconds(10));
        }
        cb.signal(SIGINT);
        REQUIRE(cb.wait_exit() == 0);
    }

    const auto live_lines = lines_of(read_file(live));
    std::vector<std::string> model_lines;
    for (const auto& l : live_lines)
        if (l.find(R"("event":"init_overrun")") == std::string::npos) model_lines.push_back(l);
    // Everything the test set up was decided live.
    const std::string all = read_file(live);
    CHECK(all.find(R"("rule":"lose-7th")") != std::string::npos);
    CHECK(all.find(R"("rule":"crash-marked")") != std::string::npos);
    CHECK(all.find(R"("rule":"invoke-throttle")") != std::string::npos);
    CHECK(all.find(R"("rule":"late-503")") != std::string::npos);
    CHECK(all.find(R"("event":"throttled")") != std::string::npos);
    CHECK(all.find(R"("event":"discarded")") != std::string::npos);
    CHECK(read_file(rec).find(R"("request":null)") != std::string::npos);  // the async ones

    auto sim = run_to_exit({"sim", app.path().string(), "--replay", rec.string(),
                            "--decision-log", replayed.string(), "--compare", live.string()});
    INFO(sim.out << sim.err);
    CHECK(sim.code == 0);
    CHECK(sim.out.find("decision logs agree") != std::string::npos);
    CHECK(lines_of(read_file(replayed)) == model_lines);

    const auto rec_lines = lines_of(read_file(rec));
    {
        // Another seed in the header: the logs differ.
        auto tampered = rec_lines;
        auto h = json::parse(tampered[0]);
        h["seed"] = 12;
        tampered[0] = h.dump();
        const auto bad = out.path() / "seed.jsonl";
        write_lines(bad, tampered);
        auto r = run_to_exit({"sim", app.path().string(), "--replay", bad.string(), "--compare",
                              live.string()});
        INFO(r.out << r.err);
        CHECK(r.code == 1);
        CHECK(r.out.find("decision logs differ") != std::string::npos);
    }
    {
        // A request left out, with what it led to: the first gateway request the faults passed, its invocation and that invocation's
        // answer, as if that client had never sent it.
        std::vector<std::string> kept{rec_lines[0]};
        std::optional<std::uint64_t> request, invocation;
        for (std::size_t i = 1; i < rec_lines.size(); ++i) {
            auto e = json::parse(rec_lines[i]);
            const auto kind = e["event"].get<std::string>();
            if (!request && kind == "request" && e["front"] == "gateway") {
                request = e["id"].get<std::uint64_t>();
                continue;
            }
            if (request && !invocation && kind == "invoke" && e["request"] == *request) {
                invocation = e["id"].get<std::uint64_t>();
                continue;
            }
            if (invocation && kind == "handler" && e["invocation"] == *invocation) continue;
            if (request && kind == "end" && e["request"] == *request) continue;
            kept.push_back(rec_lines[i]);
        }
        REQUIRE(request);
        const auto bad = out.path() / "dropped.jsonl";
        write_lines(bad, kept);
        auto r = run_to_exit({"sim", app.path().string(), "--replay", bad.string(), "--compare",
                              live.string()});
        INFO(r.out << r.err);
        CHECK(r.code == 1);
        CHECK(r.out.find("decision logs differ") != std::string::npos);
    }
}
