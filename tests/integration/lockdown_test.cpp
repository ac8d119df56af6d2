// The control plane, environments' Runtime APIs included, refuses what a web page can send (a
// foreign Origin, a rebinding Host), the admin API off loopback needs its token, and requests
// API Gateway would refuse (an over-long request line, a body shorter than its Content-Length)
// are answered, not held.
// Traffic goes to 127.0.0.1 only.

#include <string>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

const std::string invocations = "/2015-03-31/functions/Echo/invocations";

void write_app(temp_dir& dir, const std::string& coldbrew_yaml,
               const std::string& globals = "    Timeout: 5\n") {
    write_fake_app(dir, globals, R"(  Echo:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Api:
          Type: HttpApi
          Properties:
            Path: /echo
            Method: post
)");
    dir.write("coldbrew.yaml", coldbrew_yaml);
}

const std::string rule_body =
    json{{"name", "evil"}, {"probability", "100%"}, {"fault", {{"kind", "throttle"}}}}.dump();

}  // namespace

TEST_CASE("lockdown: a web page can neither change faults nor invoke; SDK-shaped calls still work",
          "[integration]") {
    temp_dir dir;
    write_app(dir, "time_scale: 0.01\n");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                         "--admin-port", "0", "--seed", "3"});
    const int gateway = cb.wait_for_port();
    const int invoke = cb.wait_for_invoke_port();
    const int admin = cb.wait_for_admin_port();
    (void)gateway;

    // A "simple" cross-origin POST, as a browser sends it with no preflight.
    auto refused = http_request(admin, "POST", "/faults", rule_body, {{"Origin", "http://evil.example"}});
    CHECK(refused.status == 403);
    CHECK(refused.header("x-amzn-ErrorType").value_or("") == "AccessDeniedException");
    CHECK(json::parse(refused.body)["message"].get<std::string>().find("evil.example") != std::string::npos);
    auto reset = http_request(admin, "POST", "/counters/reset", "", {{"Origin", "http://evil.example"}});
    CHECK(reset.status == 403);
    // DNS rebinding: the page's own name in Host.
    auto rebound = http_request(admin, "GET", "/faults", "",
                                {{"Host", "rebind.evil.example:" + std::to_string(admin)}});
    CHECK(rebound.status == 403);
    // The rule is not there; a client without Origin (curl, the harness) is served.
    auto rules = http_request(admin, "GET", "/faults");
    REQUIRE(rules.status == 200);
    CHECK(json::parse(rules.body)["rules"].empty());

    // The Invoke API: a foreign Origin is refused before the function runs.
    auto cross = http_request(invoke, "POST", invocations, R"({"reply":"ran"})",
                              {{"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}});
    CHECK(cross.status == 403);
    CHECK(cross.header("x-amzn-ErrorType").value_or("") == "AccessDeniedException");
    CHECK(cross.header("x-amzn-RequestId"));
    auto foreign_host = http_request(invoke, "POST", invocations, R"({"reply":"ran"})",
                                     {{"Host", "rebind.evil.example"}});
    CHECK(foreign_host.status == 403);
    // What an SDK sends: its own Host, a signature, no Origin.
    auto sdk = http_request(invoke, "POST", invocations, R"({"reply":"ran"})",
                            {{"Host", "localhost:" + std::to_string(invoke)},
                             {"X-Amz-Invocation-Type", "RequestResponse"},
                             {"Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=00"},
                             {"Content-Type", "binary/octet-stream"}});
    CHECK(sdk.status == 200);
    CHECK(sdk.body == R"("ran")");
    // Only the SDK's call reached the function.
    auto counters = json::parse(http_request(admin, "GET", "/counters").body);
    CHECK(counters["functions"]["Echo"]["invocations"].get<int>() == 1);
}

TEST_CASE("lockdown: an environment's Runtime API refuses a web page; its runtime is served",
          "[integration]") {
    temp_dir dir;
    write_app(dir, "time_scale: 0.01\n",
              "    Timeout: 5\n    Environment:\n      Variables:\n"
              "        FAKE_ECHO_ENV: AWS_LAMBDA_RUNTIME_API\n");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                         "--admin-port", "0"});
    const int gateway = cb.wait_for_port();
    auto first = http_request(gateway, "POST", "/echo", "{}");
    REQUIRE(first.status == 200);
    const auto api = json::parse(first.body)["env"]["AWS_LAMBDA_RUNTIME_API"].get<std::string>();
    REQUIRE(api.rfind("127.0.0.1:", 0) == 0);
    const int runtime_port = std::stoi(api.substr(api.find(':') + 1));

    // The runtime waits on /next for the next invocation; a page's GET would take it.
    const std::string next = "/2018-06-01/runtime/invocation/next";
    auto cross = http_request(runtime_port, "GET", next, "", {{"Origin", "http://evil.example"}});
    CHECK(cross.status == 403);
    CHECK(json::parse(cross.body)["errorType"] == "AccessDeniedException");
    auto rebound = http_request(runtime_port, "GET", next, "",
                                {{"Host", "rebind.evil.example:" + std::to_string(runtime_port)}});
    CHECK(rebound.status == 403);
    // The runtime still gets its invocations.
    auto second = http_request(gateway, "POST", "/echo", "{}");
    CHECK(second.status == 200);
    CHECK(json::parse(second.body)["env"]["AWS_LAMBDA_RUNTIME_API"] == api);
}

TEST_CASE("lockdown: the admin API off loopback needs the token printed at start; --host 0.0.0.0 warns",
          "[integration]") {
    temp_dir dir;
    write_app(dir, "time_scale: 0.01\n");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                         "--admin-port", "0", "--host", "0.0.0.0", "--admin-host", "0.0.0.0"});
    const int admin = cb.wait_for_admin_port();
    auto token_line = cb.wait_for_line(
        [](const std::string& l) { return l.find("admin API token: ") != std::string::npos; });
    REQUIRE(token_line);
    const auto at = token_line->find("admin API token: ") + 17;
    const std::string token = token_line->substr(at, token_line->find(' ', at) - at);
    CHECK(token.size() == 32);

    auto none = http_request(admin, "GET", "/faults");
    CHECK(none.status == 401);
    CHECK(none.header("WWW-Authenticate").value_or("").rfind("Bearer", 0) == 0);
    auto wrong = http_request(admin, "POST", "/faults", rule_body,
                              {{"Authorization", "Bearer " + std::string(32, '0')}});
    CHECK(wrong.status == 403);
    auto right = http_request(admin, "GET", "/faults", "", {{"Authorization", "Bearer " + token}});
    CHECK(right.status == 200);
    CHECK(json::parse(right.body)["rules"].empty());  // the wrong token's rule was not added

    // One warning, naming what is exposed.
    auto warning = cb.wait_for_line(
        [](const std::string& l) { return l.find("--host 0.0.0.0 exposes") != std::string::npos; });
    REQUIRE(warning);
    CHECK(warning->find("Invoke API") != std::string::npos);
    CHECK(warning->find("admin API listens on 0.0.0.0") != std::string::npos);
    int count = 0;
    for (const auto& l : cb.lines()) count += l.find("exposes") != std::string::npos;
    CHECK(count == 1);
}

TEST_CASE("lockdown: an over-long request line and a short body get API Gateway's answers",
          "[integration]") {
    temp_dir dir;
    // A short request timeout, so the short body is answered quickly.
    write_app(dir, "time_scale: 0.01\nrequest_timeout_ms: 300\n");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--invoke-port", "0",
                         "--admin-port", "0"});
    const int gateway = cb.wait_for_port();
    const int invoke = cb.wait_for_invoke_port();

    // 20 KB request line: over the 10240-byte quota of request line and header values.
    auto line = http_request(gateway, "GET", "/echo?q=" + std::string(20 * 1024, 'a'));
    CHECK(line.status == 414);
    CHECK(line.header("apigw-requestid"));
    // A line under the quota whose header values take it over.
    auto head = http_request(gateway, "POST", "/echo?q=" + std::string(6 * 1024, 'a'), "{}",
                             {{"X-Big", std::string(5 * 1024, 'b')}});
    CHECK(head.status == 413);
    CHECK(json::parse(head.body)["message"] == "Request Too Long");
    // Within the quota: served.
    auto fine = http_request(gateway, "POST", "/echo?q=" + std::string(4 * 1024, 'a'), R"({"reply":"ok"})",
                             {{"X-Mid", std::string(4 * 1024, 'c')}});
    CHECK(fine.status == 200);

    // A Content-Length larger than the body sent: answered 408 and closed, on both fronts.
    auto short_gw = http_attempt(gateway, "POST", "/echo", "short", {{"Content-Length", "1000"}});
    REQUIRE(short_gw.end == http_attempt_result::ending::answered);
    CHECK(short_gw.reply.status == 408);
    CHECK(short_gw.reply.header("Connection").value_or("") == "close");
    auto short_inv = http_attempt(invoke, "POST", invocations, "{}", {{"Content-Length", "1000"}});
    REQUIRE(short_inv.end == http_attempt_result::ending::answered);
    CHECK(short_inv.reply.status == 408);
    CHECK(short_inv.reply.header("x-amzn-ErrorType").value_or("") == "RequestTimeoutException");
}
