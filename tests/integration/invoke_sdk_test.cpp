// The Lambda Invoke API as a real client sees it: the AWS SDK for JavaScript v3
// (`@aws-sdk/client-lambda`, installed by tools/setup.sh into tests/integration/sdk/) drives
// `coldbrew up` through tests/integration/sdk/invoke_sdk.mjs, which prints what the SDK made
// of each answer as one JSON line. The functions run the scripted fake handler.

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

std::filesystem::path sdk_dir() { return source_dir() / "tests" / "integration" / "sdk"; }

// An absolute path to `name` from PATH, as a shell would find it; empty when there is none.
std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        auto candidate = std::filesystem::path(dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::absolute(candidate).string();
    }
    return {};
}

// The SDK is a declared test dependency: without it these tests fail and say how to get it.
std::string require_node_and_sdk() {
    auto node = find_on_path("node");
    if (node.empty()) FAIL("node is not on PATH: run tools/setup.sh");
    const auto pkg = sdk_dir() / "node_modules" / "@aws-sdk" / "client-lambda" / "package.json";
    if (!std::filesystem::exists(pkg))
        FAIL("@aws-sdk/client-lambda is not installed in " << (sdk_dir() / "node_modules").string()
                                                          << ": run tools/setup.sh");
    return node;
}

// Fake: echoes the environment variables the SDK needs; Narrow: reserved concurrency 1.
struct sdk_app {
    temp_dir dir;
    sdk_app() {
        write_fake_app(dir, "    Timeout: 10\n    MemorySize: 256\n", R"(  Fake:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          FAKE_ECHO_ENV: AWS_ENDPOINT_URL_LAMBDA,AWS_ACCESS_KEY_ID,AWS_SECRET_ACCESS_KEY
      Events:
        Rest:
          Type: Api
          Properties: {Path: /fake, Method: post}
  Narrow:
    Type: AWS::Serverless::Function
    Properties:
      ReservedConcurrentExecutions: 1
      Events:
        Rest:
          Type: Api
          Properties: {Path: /narrow, Method: post}
)");
    }
};

struct running {
    coldbrew_process proc;
    int port;
    int invoke_port;
    std::string endpoint;
    explicit running(const sdk_app& app)
        : proc({"up", app.dir.path().string(), "--port", "0", "--invoke-port", "0", "--seed", "5",
                "--time-scale", "0.01"}),
          port(proc.wait_for_port()),
          invoke_port(wait_for_invoke_port(proc)),
          endpoint("http://127.0.0.1:" + std::to_string(invoke_port)) {}

    // The banner line "coldbrew up: invoke API listening on http://127.0.0.1:PORT".
    static int wait_for_invoke_port(coldbrew_process& p) {
        const std::string marker = "invoke API listening on http://";
        auto line = p.wait_for_line([&](const std::string& l) { return l.find(marker) != std::string::npos; });
        if (!line) throw std::runtime_error("no invoke API banner; output:\n" + p.stdout_text() + p.stderr_text());
        return std::stoi(line->substr(line->rfind(':') + 1));
    }

    // Runs one scenario of the SDK driver and returns its JSON line.
    json sdk(const std::string& scenario, const std::string& function = "", const std::string& payload = "") {
        const auto node = require_node_and_sdk();
        std::vector<std::string> args{(sdk_dir() / "invoke_sdk.mjs").string(), endpoint, scenario};
        if (!function.empty() || !payload.empty()) args.push_back(function);
        if (!payload.empty()) args.push_back(payload);
        // The SDK's notice about future Node.js versions is noise in a failure report.
        coldbrew_process driver(args, {{"AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED", "true"}}, node);
        auto rc = driver.wait_exit(std::chrono::seconds(30));
        INFO("invoke_sdk.mjs " << scenario << " " << function << ":\n"
                               << driver.stdout_text() << driver.stderr_text());
        REQUIRE(rc == 0);
        // One line of JSON, the last of its output.
        auto out = driver.stdout_text();
        while (!out.empty() && out.back() == '\n') out.pop_back();
        return json::parse(out.substr(out.rfind('\n') + 1));
    }
};

}  // namespace

TEST_CASE("Invoke API through the AWS SDK: sync, qualified names, function error, Tail, Event, DryRun, unknown",
          "[integration]") {
    require_node_and_sdk();
    sdk_app app;
    running cb(app);

    // RequestResponse: the payload is the handler's answer, and the handler could call back.
    auto sync = cb.sdk("sync");
    INFO(sync.dump());
    REQUIRE(sync["ok"] == true);
    CHECK(sync["status"] == 200);
    CHECK(sync["function_error"].is_null());
    CHECK(sync["executed_version"] == "$LATEST");
    auto answer = json::parse(sync["payload"].get<std::string>());
    auto echo = json::parse(answer["body"].get<std::string>());
    CHECK(echo["event"] == json::object());  // the Payload itself is the event
    CHECK(echo["function_arn"] == "arn:aws:lambda:us-east-1:123456789012:function:Fake");
    CHECK(echo["env"]["AWS_ENDPOINT_URL_LAMBDA"] == cb.endpoint);
    CHECK(echo["env"]["AWS_REGION"] == "us-east-1");
    CHECK(echo["env"]["AWS_ACCESS_KEY_ID"].is_string());
    CHECK(echo["env"]["AWS_SECRET_ACCESS_KEY"].is_string());
    // x-amzn-RequestId is the invocation's request id, as the handler saw it.
    CHECK(sync["request_id"] == echo["request_id"]);

    // The function named with a qualifier, a full ARN and a partial ARN (the SDK URL-encodes
    // the colons).
    for (const char* name : {"Fake:$LATEST", "arn:aws:lambda:us-east-1:123456789012:function:Fake",
                             "123456789012:function:Fake"}) {
        auto r = cb.sdk("sync", name, R"({"reply": {"named": true}})");
        INFO(name << " -> " << r.dump());
        CHECK(r["status"] == 200);
        CHECK(r["payload"] == R"({"named":true})");
    }

    // A function error is a 200 with X-Amz-Function-Error, which the SDK reports as FunctionError.
    auto err = cb.sdk("error");
    INFO(err.dump());
    REQUIRE(err["ok"] == true);
    CHECK(err["status"] == 200);
    CHECK(err["function_error"] == "Unhandled");
    auto error_body = json::parse(err["payload"].get<std::string>());
    CHECK(error_body["errorType"] == "Fake.Boom");
    CHECK(error_body["errorMessage"] == "scripted failure");

    // LogType Tail: the invocation's own log, base64 in X-Amz-Log-Result, decoded by the driver.
    auto tail = cb.sdk("tail");
    INFO(tail.dump());
    REQUIRE(tail["ok"] == true);
    CHECK(tail["status"] == 200);
    CHECK(tail["payload"] == R"({"tailed":true})");
    const auto log = tail["log_result"].is_string() ? tail["log_result"].get<std::string>() : std::string();
    CHECK(log.find("START RequestId: " + tail["request_id"].get<std::string>()) != std::string::npos);
    CHECK(log.find("tail-marker") != std::string::npos);
    CHECK(log.find("END RequestId: ") != std::string::npos);
    CHECK(log.find("REPORT RequestId: ") != std::string::npos);
    // Without Tail there is no log in the answer.
    CHECK(sync["log_result"].is_null());

    // Event: 202 at once, empty payload; the invocation still runs.
    auto event = cb.sdk("event");
    INFO(event.dump());
    REQUIRE(event["ok"] == true);
    CHECK(event["status"] == 202);
    CHECK(event["payload"] == "");
    CHECK(cb.proc.wait_for_line([](const std::string& l) {
        return l.rfind("[Fake] ", 0) == 0 && l.find("event-marker") != std::string::npos;
    }));

    // DryRun: 204, nothing invoked.
    auto dry = cb.sdk("dryrun");
    INFO(dry.dump());
    REQUIRE(dry["ok"] == true);
    CHECK(dry["status"] == 204);
    CHECK(dry["payload"] == "");

    // Unknown function: the SDK's own exception type from x-amzn-ErrorType, status 404.
    auto missing = cb.sdk("missing");
    INFO(missing.dump());
    CHECK(missing["ok"] == false);
    CHECK(missing["error"]["name"] == "ResourceNotFoundException");
    CHECK(missing["error"]["http_status"] == 404);
    CHECK(missing["error"]["message"].get<std::string>().find("NoSuchFunction") != std::string::npos);
}

TEST_CASE("Invoke API through the AWS SDK: a function at its reserved concurrency throttles with a Reason",
          "[integration]") {
    require_node_and_sdk();
    sdk_app app;
    running cb(app);

    // Narrow's only allowed invocation: slow, started through the gateway. Once its log line is
    // out the handler is running, so the function is at its limit.
    http_reply slow;
    std::thread holder([&] {
        slow = http_request(cb.port, "POST", "/narrow", R"({"log": "narrow-busy", "sleep_ms": 3000})",
                            {{"Content-Type", "application/json"}});
    });
    struct joiner {
        std::thread& t;
        ~joiner() { if (t.joinable()) t.join(); }
    } join_holder{holder};
    REQUIRE(cb.proc.wait_for_line([](const std::string& l) {
        return l.rfind("[Narrow] ", 0) == 0 && l.find("narrow-busy") != std::string::npos;
    }));

    auto throttled = cb.sdk("throttle");
    INFO(throttled.dump());
    CHECK(throttled["ok"] == false);
    CHECK(throttled["error"]["name"] == "TooManyRequestsException");
    CHECK(throttled["error"]["http_status"] == 429);
    CHECK(throttled["error"]["reason"] == "ReservedFunctionConcurrentInvocationLimitExceeded");

    holder.join();
    CHECK(slow.status == 200);
    // The slot is free again.
    auto after = cb.sdk("sync", "Narrow", R"({"reply": {"after": true}})");
    INFO(after.dump());
    CHECK(after["status"] == 200);
    CHECK(after["payload"] == R"({"after":true})");
}
