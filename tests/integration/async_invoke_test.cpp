// Asynchronous (Event) invocations end to end: the Invoke API accepts, the queue retries as
// Lambda does, and every event ends in exactly one destination record.

#include <signal.h>

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

struct async_app {
    temp_dir dir;
    explicit async_app(const std::string& coldbrew_yaml) {
        write_fake_app(dir, "    Timeout: 5\n", R"(  Worker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: worker-fn
)");
        dir.write("coldbrew.yaml", coldbrew_yaml);
    }
    std::filesystem::path path(const std::string& name) const { return dir.path() / name; }
};

int invoke_port(coldbrew_process& proc) {
    auto line = proc.wait_for_line(
        [](const std::string& l) { return l.find("invoke API listening on http://") != std::string::npos; });
    REQUIRE(line);
    return std::stoi(line->substr(line->rfind(':') + 1));
}

http_reply invoke_event(int port, const std::string& function, const json& event) {
    return http_request(port, "POST", "/2015-03-31/functions/" + function + "/invocations",
                        event.dump(), {{"X-Amz-Invocation-Type", "Event"}});
}

std::vector<json> records(const std::filesystem::path& file) {
    std::vector<json> out;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(json::parse(line));
    return out;
}

// Waits for the n-th REPORT line of request `id`. The queue writes an attempt's destination
// record when the attempt is answered, before its REPORT line, so once the last attempt's
// REPORT is out the record is on disk.
void wait_reports(coldbrew_process& proc, const std::string& id, int n) {
    int seen = 0;
    REQUIRE(proc.wait_for_line([&](const std::string& l) {
        return l.find("REPORT RequestId: " + id) != std::string::npos && ++seen == n;
    }));
}

}  // namespace

TEST_CASE("async: a function error is retried twice, then the event goes to on-failure", "[integration]") {
    async_app app(
        "functions:\n  Worker:\n    model: {init_duration: fixed(0)}\n"
        "    async: {on_failure: failed.jsonl, on_success: ok.jsonl}\n");
    // 1 min and 2 min of modeled retry delay take 60 ms and 120 ms at this scale.
    coldbrew_process proc({"up", app.dir.path().string(), "--port", "0", "--seed", "4",
                           "--time-scale", "0.001"});
    proc.wait_for_port();
    const int port = invoke_port(proc);

    auto accepted = invoke_event(port, "worker-fn", {{"error", {{"errorType", "Boom"}}}});
    CHECK(accepted.status == 202);
    CHECK(accepted.body.empty());
    REQUIRE(accepted.header("x-amzn-RequestId"));
    auto ok = invoke_event(port, "Worker", {{"reply", {{"done", true}}}});
    CHECK(ok.status == 202);

    const auto id = *accepted.header("x-amzn-RequestId");
    // Three attempts: the first and the two retries.
    wait_reports(proc, id, 3);
    wait_reports(proc, *ok.header("x-amzn-RequestId"), 1);
    auto failed = records(app.path("failed.jsonl"));
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["requestContext"]["condition"] == "RetriesExhausted");
    CHECK(failed[0]["requestContext"]["approximateInvokeCount"] == 3);
    CHECK(failed[0]["requestContext"]["requestId"] == *accepted.header("x-amzn-RequestId"));
    CHECK(failed[0]["requestContext"]["functionArn"] ==
          "arn:aws:lambda:us-east-1:123456789012:function:worker-fn:$LATEST");
    CHECK(failed[0]["responseContext"]["functionError"] == "Unhandled");
    CHECK(failed[0]["responsePayload"]["errorType"] == "Boom");
    CHECK(failed[0]["requestPayload"]["error"]["errorType"] == "Boom");

    auto succeeded = records(app.path("ok.jsonl"));
    REQUIRE(succeeded.size() == 1);
    CHECK(succeeded[0]["requestContext"]["condition"] == "Success");
    CHECK(succeeded[0]["responsePayload"]["done"] == true);

    // Every attempt of the failing event ran under the same request id, as on Lambda.
    int starts = 0;
    for (const auto& l : proc.lines())
        if (l.find("START RequestId: " + id) != std::string::npos) ++starts;
    CHECK(starts == 3);
    proc.signal(SIGTERM);
    CHECK(proc.wait_exit() == 0);
}

TEST_CASE("async: a clean shutdown writes events still waiting for a retry to on-failure", "[integration]") {
    async_app app("functions:\n  Worker:\n    model: {init_duration: fixed(0)}\n"
                  "    async: {on_failure: failed.jsonl}\n");
    coldbrew_process proc({"up", app.dir.path().string(), "--port", "0", "--seed", "4"});
    proc.wait_for_port();
    const int port = invoke_port(proc);
    CHECK(invoke_event(port, "Worker", {{"error", {{"errorType", "Boom"}}}}).status == 202);
    // The first attempt fails; the retry is a modeled minute away.
    REQUIRE(proc.wait_for_line([](const std::string& l) { return l.find("REPORT RequestId:") != std::string::npos; }));
    proc.signal(SIGTERM);
    REQUIRE(proc.wait_exit() == 0);
    auto failed = records(app.path("failed.jsonl"));
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["requestContext"]["condition"] == "EmulatorShutdown");
    CHECK(failed[0]["requestContext"]["approximateInvokeCount"] == 1);
}

TEST_CASE("invoke API: sync result, Tail log, DryRun and errors over plain HTTP", "[integration]") {
    async_app app("functions:\n  Worker:\n    model: {init_duration: fixed(0)}\n");
    coldbrew_process proc({"up", app.dir.path().string(), "--port", "0", "--seed", "4"});
    proc.wait_for_port();
    const int port = invoke_port(proc);
    const std::string path = "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Aworker-fn/invocations";
    auto r = http_request(port, "POST", path, json{{"log", "hello from the handler"}, {"reply", {{"x", 1}}}}.dump(),
                          {{"X-Amz-Log-Type", "Tail"}});
    CHECK(r.status == 200);
    CHECK(json::parse(r.body) == json{{"x", 1}});
    CHECK(r.header("X-Amz-Executed-Version") == std::optional<std::string>("$LATEST"));
    REQUIRE(r.header("X-Amz-Log-Result"));
    // base64 of the invocation's log: START, the handler's line, END, REPORT.
    CHECK_FALSE(r.header("X-Amz-Log-Result")->empty());
    auto dry = http_request(port, "POST", path, "{}", {{"X-Amz-Invocation-Type", "DryRun"}});
    CHECK(dry.status == 204);
    auto err = http_request(port, "POST", "/2015-03-31/functions/Worker/invocations",
                            json{{"error", {{"errorType", "Fake.Bad"}}}}.dump());
    CHECK(err.status == 200);
    CHECK(err.header("X-Amz-Function-Error") == std::optional<std::string>("Unhandled"));
    auto bad = http_request(port, "POST", "/2015-03-31/functions/Worker/invocations", "not json");
    CHECK(bad.status == 400);
    CHECK(bad.header("x-amzn-ErrorType") == std::optional<std::string>("InvalidRequestContentException"));
    proc.signal(SIGTERM);
    CHECK(proc.wait_exit() == 0);
}
