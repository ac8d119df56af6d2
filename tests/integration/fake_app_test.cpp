// Integration tests against the scripted fake handler (tests/fakes/fake_handler.cpp): the real
// coldbrew binary on port 0, real child processes, real HTTP.

#include <signal.h>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

// A SAM app whose functions all run the fake handler as their `bootstrap`.
struct fake_app {
    temp_dir dir;
    explicit fake_app(const std::string& extra_resources = "", const std::string& function_props = "") {
        std::filesystem::create_directories(dir.path() / "fn");
        std::filesystem::copy_file(fake_handler_binary(), dir.path() / "fn" / "bootstrap");
        dir.write("template.yaml", R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Fake:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: provided.al2023
      Handler: fake.handler
      CodeUri: fn
      Timeout: 2
      MemorySize: 256
      Environment:
        Variables:
          GREETING: hello
)" + function_props + R"(      Events:
        Rest:
          Type: Api
          Properties:
            Path: /fake
            Method: post
        RestGet:
          Type: Api
          Properties:
            Path: /fake/{id}
            Method: get
        Http:
          Type: HttpApi
          Properties:
            Path: /v2/fake
            Method: post
        HttpShort:
          Type: HttpApi
          Properties:
            Path: /v2/short
            Method: post
            TimeoutInMillis: 500
)" + extra_resources);
    }
};

struct running {
    coldbrew_process proc;
    int port;
    explicit running(const fake_app& app, std::vector<std::string> extra = {},
                     std::map<std::string, std::string> env = {})
        : proc(make_args(app, std::move(extra)), std::move(env)), port(proc.wait_for_port()) {}
    static std::vector<std::string> make_args(const fake_app& app, std::vector<std::string> extra) {
        std::vector<std::string> a{"up", app.dir.path().string(), "--port", "0", "--seed", "7"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    http_reply post(const std::string& path, const json& script) {
        return http_request(port, "POST", path, script.dump(), {{"Content-Type", "application/json"}});
    }
};

}  // namespace

TEST_CASE("gateway → real process → response, REST and HTTP API", "[integration]") {
    fake_app app;
    running cb(app);
    auto rest = http_request(cb.port, "GET", "/fake/42?x=1&x=2");
    REQUIRE(rest.status == 200);
    auto echo = json::parse(rest.body);
    CHECK(echo["event"]["resource"] == "/fake/{id}");
    CHECK(echo["event"]["pathParameters"]["id"] == "42");
    CHECK(echo["event"]["queryStringParameters"]["x"] == "2");
    CHECK(echo["event"]["requestContext"]["stage"] == "Prod");
    CHECK(echo["env"]["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "256");
    CHECK(echo["env"]["AWS_LAMBDA_INITIALIZATION_TYPE"] == "on-demand");
    CHECK(echo["cwd"].get<std::string>().find("/fn") != std::string::npos);
    // x-amzn-RequestId is the request id the handler saw in requestContext.
    REQUIRE(rest.header("x-amzn-RequestId"));
    CHECK(*rest.header("x-amzn-RequestId") == echo["event"]["requestContext"]["requestId"]);
    // The deadline is absolute epoch milliseconds, about Timeout seconds ahead.
    auto deadline = echo["deadline_ms"].get<long long>();
    auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(deadline > now);
    CHECK(deadline <= now + 2100);

    auto v2 = cb.post("/v2/fake", json::object());
    REQUIRE(v2.status == 200);
    auto e2 = json::parse(v2.body);
    CHECK(e2["event"]["version"] == "2.0");
    CHECK(e2["event"]["routeKey"] == "POST /v2/fake");

    // START / END / REPORT lines with Init Duration on the cold start.
    auto report = cb.proc.wait_for_line([](const std::string& l) {
        return l.find("REPORT RequestId:") != std::string::npos && l.find("Init Duration:") != std::string::npos;
    });
    REQUIRE(report);
    CHECK(report->find("[Fake] REPORT RequestId: ") == 0);
    CHECK(report->find("\tMemory Size: 256 MB\t") != std::string::npos);
    CHECK(cb.proc.wait_for_line([](const std::string& l) { return l.find("[Fake] START RequestId: ") == 0; }));
    CHECK(cb.proc.wait_for_line([](const std::string& l) { return l.find("[Fake] END RequestId: ") == 0; }));
}

TEST_CASE("unknown routes get the gateway's own errors", "[integration]") {
    fake_app app;
    running cb(app);
    auto r = http_request(cb.port, "GET", "/nope");
    CHECK(r.status == 403);
    CHECK(r.body == R"({"message":"Missing Authentication Token"})");
    CHECK(r.header("x-amzn-ErrorType") == std::optional<std::string>("MissingAuthenticationTokenException"));
    CHECK(r.header("x-amzn-RequestId"));
}

TEST_CASE("warm reuse: sequential requests are served by the same process", "[integration]") {
    fake_app app;
    running cb(app);
    auto a = json::parse(cb.post("/fake", json::object()).body);
    auto b = json::parse(cb.post("/fake", json::object()).body);
    auto c = json::parse(cb.post("/fake", json::object()).body);
    CHECK(a["pid"] == b["pid"]);
    CHECK(b["pid"] == c["pid"]);
    CHECK(a["request_id"] != b["request_id"]);
    // Only the first invocation was a cold start. REPORT is written after the response, so
    // wait for the third one first.
    int seen = 0;
    REQUIRE(cb.proc.wait_for_line([&](const std::string& l) {
        return l.find("REPORT RequestId:") != std::string::npos && ++seen == 3;
    }));
    auto lines = cb.proc.lines();
    int reports = 0, inits = 0;
    for (const auto& l : lines) {
        if (l.find("REPORT RequestId:") != std::string::npos) {
            ++reports;
            if (l.find("Init Duration") != std::string::npos) ++inits;
        }
    }
    CHECK(reports == 3);
    CHECK(inits == 1);
}

TEST_CASE("concurrency: overlapping requests get separate execution environments", "[integration]") {
    fake_app app;
    running cb(app);
    http_reply r1, r2;
    std::thread t1([&] { r1 = cb.post("/fake", {{"sleep_ms", 1500}}); });
    // The second request starts only once the first is inside its environment.
    REQUIRE(cb.proc.wait_for_line([](const std::string& l) { return l.find("START RequestId") != std::string::npos; }));
    r2 = cb.post("/fake", json::object());
    t1.join();
    REQUIRE(r1.status == 200);
    REQUIRE(r2.status == 200);
    CHECK(json::parse(r1.body)["pid"] != json::parse(r2.body)["pid"]);
}

TEST_CASE("timeout: Sandbox.Timedout, the process group is killed, a fresh environment follows",
          "[integration][slow]") {
    fake_app app;
    running cb(app);
    auto first = json::parse(cb.post("/fake", json::object()).body);
    auto r = cb.post("/fake", {{"sleep_ms", 5000}});
    CHECK(r.status == 502);
    CHECK(r.body == R"({"message": "Internal server error"})");
    CHECK(cb.proc.wait_for_line([](const std::string& l) {
        return l.find("Status: timeout") != std::string::npos;
    }));
    CHECK(wait_gone(first["pid"].get<int>()));
    auto after = json::parse(cb.post("/fake", json::object()).body);
    CHECK(after["pid"] != first["pid"]);
}

TEST_CASE("crash: Runtime.ExitError with the exit status; the emulator stays up", "[integration]") {
    fake_app app;
    running cb(app);
    auto r = cb.post("/v2/fake", {{"exit", 3}});
    CHECK(r.status == 500);
    CHECK(r.body == R"({"message":"Internal Server Error"})");
    CHECK(cb.proc.wait_for_line([](const std::string& l) {
        return l.find("Error: Runtime exited with error: exit status 3") != std::string::npos;
    }));
    auto ok = cb.post("/fake", json::object());
    CHECK(ok.status == 200);
}

TEST_CASE("function error from /error maps to REST 502 and HTTP API 500", "[integration]") {
    fake_app app;
    running cb(app);
    json script = {{"error", {{"errorType", "Custom.Failure"}, {"errorMessage", "boom"}}}};
    CHECK(cb.post("/fake", script).status == 502);
    CHECK(cb.post("/v2/fake", script).status == 500);
}

TEST_CASE("malformed proxy responses are 502 on REST", "[integration]") {
    fake_app app;
    running cb(app);
    CHECK(cb.post("/fake", {{"raw", "not json"}}).status == 502);
    CHECK(cb.post("/fake", {{"reply", {{"statusCode", 200}, {"body", {{"an", "object"}}}}}}).status == 502);
    auto ok = cb.post("/fake", {{"reply", {{"statusCode", 201}, {"body", "made"}}}});
    CHECK(ok.status == 201);
    CHECK(ok.body == "made");
    // HTTP API payload 2.0 infers a response from a bare value.
    auto inferred = cb.post("/v2/fake", {{"reply", "Hello from Lambda!"}});
    CHECK(inferred.status == 200);
    CHECK(inferred.body == "Hello from Lambda!");
}

TEST_CASE("integration timeout: HTTP API answers 503 while the function runs on", "[integration]") {
    fake_app app;
    running cb(app);
    auto r = cb.post("/v2/short", {{"sleep_ms", 1500}});
    CHECK(r.status == 503);
    CHECK(r.body == R"({"message":"Service Unavailable"})");
}

TEST_CASE("init error: the first invocation fails, the emulator stays up", "[integration]") {
    fake_app app;
    // Per-function environment from coldbrew.yaml, merged over the template's.
    app.dir.write("coldbrew.yaml", "functions:\n  Fake:\n    environment:\n      FAKE_INIT_ERROR: \"1\"\n");
    running cb(app);
    auto r = cb.post("/fake", json::object());
    CHECK(r.status == 502);
    CHECK(cb.proc.wait_for_line([](const std::string& l) {
        return l.find("INIT_REPORT") != std::string::npos && l.find("Runtime.FakeInitError") != std::string::npos;
    }));
}

TEST_CASE("reserved concurrency: beyond the limit the gateway answers as for a throttle", "[integration]") {
    fake_app app("", "      ReservedConcurrentExecutions: 1\n");
    running cb(app);
    http_reply slow;
    std::thread t([&] { slow = cb.post("/fake", {{"sleep_ms", 800}}); });
    // Wait until the first invocation is running in its environment.
    REQUIRE(cb.proc.wait_for_line([](const std::string& l) { return l.find("START RequestId") != std::string::npos; }));
    auto throttled = cb.post("/fake", json::object());
    t.join();
    CHECK(slow.status == 200);
    CHECK(throttled.status == 500);
}

TEST_CASE("payloads over the gateway's 10 MB limit are refused with 413", "[integration]") {
    fake_app app;
    running cb(app);
    std::string big(10 * 1024 * 1024 + 1, 'a');
    auto r = http_request(cb.port, "POST", "/fake", big, {{"Content-Type", "text/plain"}});
    CHECK(r.status == 413);
    // An event over Lambda's 6 MB synchronous limit is refused before any process sees it.
    std::string six(6 * 1024 * 1024, 'b');
    auto r6 = http_request(cb.port, "POST", "/fake", six, {{"Content-Type", "text/plain"}});
    CHECK(r6.status == 413);
}

TEST_CASE("SIGTERM: coldbrew exits and no handler process survives it", "[integration]") {
    fake_app app;
    running cb(app);
    int pid = json::parse(cb.post("/fake", json::object()).body)["pid"];
    REQUIRE_FALSE(process_gone(pid));
    cb.proc.signal(SIGTERM);
    auto code = cb.proc.wait_exit();
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(wait_gone(pid));
}

TEST_CASE("SIGKILL of coldbrew: the reaper still ends every handler process", "[integration]") {
    fake_app app;
    running cb(app);
    int pid = json::parse(cb.post("/fake", json::object()).body)["pid"];
    REQUIRE_FALSE(process_gone(pid));
    cb.proc.signal(SIGKILL);
    REQUIRE(cb.proc.wait_exit());
    CHECK(wait_gone(pid));
}

TEST_CASE("coldbrew invoke: the result alone on stdout, logs on stderr", "[integration]") {
    fake_app app;
    coldbrew_process inv({"invoke", "Fake", "-t", app.dir.path().string(), "--event-json",
                          R"({"reply":{"ok":true}})"});
    auto code = inv.wait_exit();
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(inv.stdout_text() == "{\"ok\":true}\n");
    CHECK(inv.stderr_text().find("REPORT RequestId:") != std::string::npos);
}

TEST_CASE("config errors stop the start with file, line and key, exit status 2", "[integration]") {
    fake_app app;
    app.dir.write("coldbrew.yaml", "ports:\n  gateway: 0\nbogus_key: 1\n");
    coldbrew_process cb({"up", app.dir.path().string()});
    auto code = cb.wait_exit();
    REQUIRE(code);
    CHECK(*code == 2);
    auto err = cb.stderr_text();
    CHECK(err.find("coldbrew.yaml:3:") != std::string::npos);
    CHECK(err.find("bogus_key") != std::string::npos);
}

TEST_CASE("coldbrew invoke: a timeout is Sandbox.Timedout with Lambda's message", "[integration]") {
    fake_app app;
    coldbrew_process inv({"invoke", "Fake", "-t", app.dir.path().string(), "--event-json",
                          R"({"sleep_ms":4000})"});
    auto code = inv.wait_exit();
    REQUIRE(code);
    auto body = json::parse(inv.stdout_text());
    CHECK(body["errorType"] == "Sandbox.Timedout");
    auto message = body["errorMessage"].get<std::string>();
    CHECK(message.rfind("RequestId: ", 0) == 0);
    CHECK(message.find(" Error: Task timed out after 2.00 seconds") != std::string::npos);
}

TEST_CASE("SIGTERM drains an in-flight invocation before exiting", "[integration]") {
    fake_app app;
    running cb(app);
    http_reply slow;
    std::thread t([&] { slow = cb.post("/fake", {{"sleep_ms", 500}}); });
    REQUIRE(cb.proc.wait_for_line([](const std::string& l) { return l.find("START RequestId") != std::string::npos; }));
    cb.proc.signal(SIGTERM);
    t.join();
    CHECK(slow.status == 200);
    auto code = cb.proc.wait_exit();
    REQUIRE(code);
    CHECK(*code == 0);
}
