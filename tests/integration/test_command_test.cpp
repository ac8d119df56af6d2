// `coldbrew test -- CMD`: the stack started as `up` starts it, CMD run against it with the
// stack's addresses in its environment, gates on the run's records, the reports, --timeout,
// and the readiness signals (`up --ready-file`, GET /ready) for those who script `up`.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

std::filesystem::path sdk_dir() { return source_dir() / "tests" / "integration" / "sdk"; }

// One function behind GET /ok and POST /work, running the scripted fake handler.
struct ci_app {
    temp_dir dir;
    explicit ci_app(const std::string& globals = "") {
        write_fake_app(dir, "    Timeout: 3\n" + globals, R"(  Fake:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Ok:
          Type: HttpApi
          Properties:
            Path: /ok
            Method: get
        Work:
          Type: HttpApi
          Properties:
            Path: /work
            Method: post
)");
    }
    std::string path() const { return dir.path().string(); }
    std::string file(const std::string& name) const { return (dir.path() / name).string(); }
};

// `coldbrew test <args…>`, run through env(1) so that the AWS variables a machine may have
// are unset and the dummy ones can be seen; `extra_env` is set on top.
struct test_run {
    coldbrew_process proc;
    int code;
    test_run(std::vector<std::string> args, std::vector<std::string> extra_env = {})
        : proc(make_args(std::move(args), std::move(extra_env)), {}, "/usr/bin/env"),
          code(proc.wait_exit(std::chrono::seconds(60)).value_or(-1)) {}

    static std::vector<std::string> make_args(std::vector<std::string> args, std::vector<std::string> extra_env) {
        std::vector<std::string> out;
        for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                              "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "GITHUB_STEP_SUMMARY"}) {
            out.push_back("-u");
            out.push_back(v);
        }
        for (auto& e : extra_env) out.push_back(std::move(e));
        out.push_back(coldbrew_binary());
        out.push_back("test");
        for (auto& a : args) out.push_back(std::move(a));
        return out;
    }
};

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("coldbrew test: a node script, a python script and the AWS SDK see the stack without "
          "configuration; CMD's output passes through unchanged",
          "[integration]") {
    const auto client_lambda = sdk_dir() / "node_modules" / "@aws-sdk" / "client-lambda";
    if (!std::filesystem::exists(client_lambda / "package.json"))
        FAIL("@aws-sdk/client-lambda is not installed in " << sdk_dir().string() << ": run tools/setup.sh");
    ci_app app;
    const char* vars = R"(["COLDBREW_GATEWAY_URL", "COLDBREW_INVOKE_URL", "COLDBREW_ADMIN_URL",
        "COLDBREW_SFN_URL", "AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL_SFN", "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "AWS_REGION"])";
    app.dir.write("probe.py", std::string(R"(import json, os, sys, urllib.request
out = {k: os.environ.get(k) for k in )") + vars + R"(}
with urllib.request.urlopen(os.environ["COLDBREW_GATEWAY_URL"] + "/ok") as r:
    out["status"] = r.status
json.dump(out, open(sys.argv[1], "w"))
)");
    app.dir.write("probe.cjs", std::string(R"(const vars = )") + vars + R"(;
const out = {};
for (const k of vars) out[k] = process.env[k] ?? null;
fetch(process.env.COLDBREW_GATEWAY_URL + '/ok').then((r) => {
  out.status = r.status;
  require('fs').writeFileSync(process.argv[2], JSON.stringify(out));
});
)");
    // The SDK with no endpoint, region or credentials in code.
    app.dir.write("sdk.cjs", R"(const { LambdaClient, InvokeCommand } = require(process.argv[2]);
new LambdaClient({})
  .send(new InvokeCommand({ FunctionName: 'Fake', Payload: JSON.stringify({ reply: { sdk: true } }) }))
  .then((r) => require('fs').writeFileSync(process.argv[3], JSON.stringify({
    status: r.StatusCode, payload: Buffer.from(r.Payload).toString() })))
  .catch((e) => { console.error(e); process.exit(1); });
)");
    const std::string script = "python3 probe.py py.json && node probe.cjs node.json && node sdk.cjs '" +
                               client_lambda.string() + "' sdk.json && echo cmd-out && echo cmd-err >&2";
    test_run t({app.path(), "--time-scale", "0.01", "--", "sh", "-c", "cd '" + app.path() + "' && " + script});
    INFO(t.proc.stdout_text() << t.proc.stderr_text() << read_file(app.dir.path() / ".coldbrew" / "test.log"));
    REQUIRE(t.code == 0);
    // CMD's stdout is exactly its own; coldbrew's lines went to the log.
    CHECK(t.proc.stdout_text() == "cmd-out\n");
    CHECK(t.proc.stderr_text().find("cmd-err\n") != std::string::npos);
    CHECK(t.proc.stderr_text().find("coldbrew up:") == std::string::npos);
    CHECK(read_file(app.dir.path() / ".coldbrew" / "test.log").find("run summary") != std::string::npos);

    for (const char* probe : {"py.json", "node.json"}) {
        INFO(probe);
        auto env = json::parse(read_file(app.dir.path() / probe));
        CHECK(env["status"] == 200);
        const std::string gateway = env["COLDBREW_GATEWAY_URL"];
        CHECK(gateway.rfind("http://127.0.0.1:", 0) == 0);
        CHECK(env["AWS_ENDPOINT_URL_LAMBDA"] == env["COLDBREW_INVOKE_URL"]);
        CHECK(env["COLDBREW_INVOKE_URL"] != env["COLDBREW_GATEWAY_URL"]);
        CHECK(env["COLDBREW_ADMIN_URL"].get<std::string>().rfind("http://127.0.0.1:", 0) == 0);
        CHECK(env["COLDBREW_SFN_URL"].is_null());  // no state machines, no Step Functions API
        CHECK(env["AWS_ENDPOINT_URL_SFN"].is_null());
        CHECK(env["AWS_ACCESS_KEY_ID"] == "test");
        CHECK(env["AWS_SECRET_ACCESS_KEY"] == "test");
        CHECK(env["AWS_REGION"] == "us-east-1");
    }
    auto sdk = json::parse(read_file(app.dir.path() / "sdk.json"));
    CHECK(sdk["status"] == 200);
    CHECK(json::parse(sdk["payload"].get<std::string>()) == json{{"sdk", true}});
}

TEST_CASE("coldbrew test: a failing command's status is the exit status; credentials and a "
          "region already set are kept",
          "[integration]") {
    ci_app app;
    test_run t({app.path(), "--log", "-", "--ensure", "requests == 0", "--", "sh", "-c",
                "echo \"$AWS_ACCESS_KEY_ID $AWS_SECRET_ACCESS_KEY $AWS_REGION $AWS_DEFAULT_REGION\"; exit 7"},
               {"AWS_ACCESS_KEY_ID=mine", "AWS_DEFAULT_REGION=eu-west-1"});
    INFO(t.proc.stderr_text());
    CHECK(t.code == 7);
    // Only the key id was set: nothing is added next to it. AWS_DEFAULT_REGION's region is
    // handed on as AWS_REGION, the only one the JavaScript SDK v3 reads.
    CHECK(t.proc.stdout_text() == "mine  eu-west-1 eu-west-1\n");
    // --log -: coldbrew's own lines are on stderr.
    CHECK(t.proc.stderr_text().find("run summary") != std::string::npos);
    CHECK(t.proc.stderr_text().find("gate pass: requests == 0") != std::string::npos);
}

TEST_CASE("coldbrew test: a gate that fails while CMD passes exits 1; the JUnit report validates "
          "against the JUnit schema; the JSON and step summaries carry each gate",
          "[integration]") {
    ci_app app;
    const auto junit = app.file("junit.xml"), summary = app.file("summary.json"),
               step = app.file("step.md");
    app.dir.write("step.md", "earlier step\n");
    test_run t({app.path(), "--time-scale", "0.01", "--junit", junit, "--summary-json", summary,
                "--ensure", "requests == 2", "--ensure", "availability[GET /ok] >= 99%",
                "--ensure", "p99[POST /work] < 60s", "--ensure", "emulator_errors == 0",
                "--ensure", "faults.phantom >= 1", "--",
                "sh", "-c", "curl -sf $COLDBREW_GATEWAY_URL/ok >/dev/null && "
                            "curl -sf -d '{\"reply\":{\"statusCode\":201}}' $COLDBREW_GATEWAY_URL/work >/dev/null"},
               {"GITHUB_STEP_SUMMARY=" + step});
    INFO(t.proc.stderr_text());
    CHECK(t.code == 1);
    CHECK(t.proc.stderr_text().find("gate FAIL: faults.phantom >= 1 (faults.phantom = 0)") != std::string::npos);
    CHECK(t.proc.stderr_text().find("gate pass: requests == 2 (requests = 2)") != std::string::npos);

    auto xmllint = coldbrew_process({"--noout", "--schema", (source_dir() / "tests" / "fixtures" / "junit" / "junit-10.xsd").string(), junit},
                                    {}, "/usr/bin/xmllint");
    INFO(read_file(junit) << xmllint.stderr_text());
    CHECK(xmllint.wait_exit() == 0);
    const auto xml = read_file(junit);
    CHECK(xml.find("tests=\"6\" failures=\"1\" errors=\"0\"") != std::string::npos);
    CHECK(xml.find("name=\"faults.phantom &gt;= 1\"") != std::string::npos);
    CHECK(xml.find("<failure type=\"gate\" message=\"faults.phantom = 0, not &gt;= 1\"/>") != std::string::npos);

    auto s = json::parse(read_file(summary));
    CHECK(s["exit_status"] == 1);
    CHECK(s["command_status"] == 0);
    REQUIRE(s["gates"].size() == 5);
    CHECK(s["gates"][1]["subject"] == "GET /ok");
    CHECK(s["gates"][1]["figure"] == 100.0);
    CHECK(s["gates"][4]["passed"] == false);
    CHECK(s["run"]["requests"] == 2);
    CHECK(s["run"]["by_status"]["201"] == 1);
    CHECK(s["run"]["routes"]["gateway POST /work"]["requests"] == 1);

    const auto md = read_file(step);
    CHECK(md.rfind("earlier step\n### coldbrew test: failed", 0) == 0);  // appended
    CHECK(md.find("| `faults.phantom >= 1` | 0 | **fail** |") != std::string::npos);
}

TEST_CASE("coldbrew test: --timeout ends a hanging command and every process of its group",
          "[integration]") {
    ci_app app;
    // The shell and its child ignore SIGTERM: only the SIGKILL after --kill-after ends them.
    test_run t({app.path(), "--timeout", "1s", "--kill-after", "200ms", "--junit", app.file("junit.xml"),
                "--", "sh", "-c",
                "trap '' TERM; sleep 300 & echo $! > '" + app.file("child.pid") + "'; echo $$ > '" +
                    app.file("shell.pid") + "'; wait"});
    INFO(t.proc.stderr_text());
    CHECK(t.code == 124);
    const int shell = std::stoi(read_file(app.file("shell.pid")));
    const int child = std::stoi(read_file(app.file("child.pid")));
    CHECK(wait_gone(shell));
    CHECK(wait_gone(child));
    CHECK(read_file(app.file("junit.xml")).find("<failure type=\"timeout\"") != std::string::npos);
}

TEST_CASE("coldbrew test: a config error, or a gate the live run cannot evaluate, exits 2 before "
          "the command runs",
          "[integration]") {
    ci_app app;
    const auto marker = app.file("ran");
    const std::vector<std::string> cmd{"--", "sh", "-c", "touch '" + marker + "'"};
    auto with = [&](std::vector<std::string> a) {
        a.insert(a.end(), cmd.begin(), cmd.end());
        return a;
    };
    {
        // No such gate on a live run: said before the stack starts.
        test_run t(with({app.path(), "--ensure", "duplicates == 0"}));
        CHECK(t.code == 2);
        CHECK(t.proc.stderr_text().find("duplicates is a simulator figure") != std::string::npos);
    }
    {
        test_run t(with({app.path(), "--ensure", "cold_starts[Fake] <= 1", "--ensure", "faults.phantm >= 1"}));
        CHECK(t.code == 2);
        CHECK(t.proc.stderr_text().find("no fault kind 'phantm'") != std::string::npos);
    }
    {
        app.dir.write("coldbrew.yaml", "time_scale: 0.01\nno_such_key: 1\n");
        test_run t(with({app.path()}));
        INFO(t.proc.stderr_text());
        CHECK(t.code == 2);
        CHECK(t.proc.stderr_text().find("config error") != std::string::npos);
        CHECK(t.proc.stderr_text().find("no_such_key") != std::string::npos);
    }
    {
        // A route or function the stack does not have: a typo, said before CMD runs.
        app.dir.write("coldbrew.yaml", "time_scale: 0.01\n");
        test_run t(with({app.path(), "--ensure", "p99[GET /typo] < 1s"}));
        CHECK(t.code == 2);
        CHECK(t.proc.stderr_text().find("no route or function 'GET /typo'") != std::string::npos);
    }
    {
        // A report nowhere to be written: said before anything starts, not after a green run.
        test_run t(with({app.path(), "--junit", "/proc/no-such-dir/junit.xml"}));
        CHECK(t.code == 2);
        CHECK(t.proc.stderr_text().find("cannot write /proc/no-such-dir/junit.xml") != std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists(marker));
    {
        // One gate per --ensure: a PATH after it is the app; a report's directory is made.
        app.dir.write("coldbrew.yaml", "time_scale: 0.01\n");
        const auto junit = app.dir.path() / "reports" / "ci" / "junit.xml";
        test_run t(with({"--ensure", "requests == 0", app.path(), "--junit", junit.string()}));
        INFO(t.proc.stderr_text());
        CHECK(t.code == 0);
        CHECK(std::filesystem::exists(marker));
        CHECK(std::filesystem::exists(junit));
    }
}

TEST_CASE("up --ready-file: a directory that is not there stops the start (exit 2); a file left "
          "by an earlier run is removed before anything starts",
          "[integration]") {
    ci_app app;
    {
        coldbrew_process up({"up", app.path(), "--port", "0", "--invoke-port", "0", "--admin-port", "0",
                             "--sfn-port", "0", "--ready-file", app.file("missing/ready.json")});
        CHECK(up.wait_exit(std::chrono::seconds(30)).value_or(-1) == 2);
        CHECK(up.stderr_text().find("--ready-file") != std::string::npos);
    }
    const auto ready = app.file("ready.json");
    app.dir.write("ready.json", "{\"gateway\":\"http://127.0.0.1:1\"}\n");
    // A bad coldbrew.yaml stops this start before it is ready: the old file must be gone.
    app.dir.write("coldbrew.yaml", "no_such_key: 1\n");
    coldbrew_process up({"up", app.path(), "--port", "0", "--ready-file", ready});
    CHECK(up.wait_exit(std::chrono::seconds(30)).value_or(-1) == 2);
    CHECK_FALSE(std::filesystem::exists(ready));
}

TEST_CASE("up --ready-file and GET /ready: not ready while a standby environment is in its init, "
          "then ready with the addresses",
          "[integration]") {
    // The standby environment's init takes 1 s of real time: `up` is ready only after it.
    ci_app app("    Environment:\n      Variables:\n        FAKE_INIT_SLEEP_MS: \"1000\"\n");
    const auto ready_file = app.dir.path() / "ready.json";
    const int admin = free_port();
    coldbrew_process up({"up", app.path(), "--port", "0", "--invoke-port", "0", "--admin-port",
                         std::to_string(admin), "--standby", "1", "--ready-file", ready_file.string()});
    // The admin API listens before the stack is ready: its first answer is a 503.
    std::optional<http_reply> first;
    for (int i = 0; i < 500 && !first; ++i) {
        try {
            first = http_request(admin, "GET", "/ready");
        } catch (const std::runtime_error&) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // not listening yet
        }
    }
    REQUIRE(first);
    INFO(first->body);
    CHECK(first->status == 503);
    CHECK(json::parse(first->body)["ready"] == false);
    CHECK_FALSE(std::filesystem::exists(ready_file));

    const int gateway = up.wait_for_port();
    // The listening lines are printed once ready; GET /ready agrees from then on.
    auto ready = http_request(admin, "GET", "/ready");
    REQUIRE(ready.status == 200);
    auto body = json::parse(ready.body);
    CHECK(body["ready"] == true);
    CHECK(body["gateway"] == "http://127.0.0.1:" + std::to_string(gateway));
    REQUIRE(up.wait_for_line([](const std::string& l) { return l.find("addresses written to") != std::string::npos; }));
    auto file = json::parse(read_file(ready_file));
    CHECK(file["gateway"] == body["gateway"]);
    CHECK(file["invoke"] == body["invoke"]);
    CHECK(file["admin"] == "http://127.0.0.1:" + std::to_string(admin));
    CHECK(http_request(gateway, "GET", "/ok").status == 200);
    up.signal(SIGINT);
    CHECK(up.wait_exit() == 0);
}

TEST_CASE("examples/payments as a CI job: under coldbrew test with a phantom after the charge, the "
          "idempotent variant passes its gates; the naive one fails on its double charges",
          "[integration]") {
    for (const std::string variant : {"idempotent", "naive"}) {
        INFO(variant);
        temp_dir store;
        const auto junit = (store.path() / "junit.xml").string();
        test_run t({(source_dir() / "examples" / "payments").string(), "--time-scale", "0.01", "--seed", "5",
                    "--parameter-overrides", "StorePath=" + (store.path() / "payments.sqlite").string(),
                    "--log", (store.path() / "test.log").string(), "--junit", junit,
                    "--ensure", "faults.phantom >= 1", "--ensure", "emulator_errors == 0",
                    "--ensure", "availability[POST /{variant}/payment_intents] >= 99%", "--",
                    "python3", (source_dir() / "examples" / "payments" / "ci_suite.py").string(),
                    "--variant", variant});
        INFO(t.proc.stdout_text() << t.proc.stderr_text());
        // The suite's own duplicates check decides; coldbrew's gates hold either way.
        CHECK(t.code == (variant == "idempotent" ? 0 : 1));
        CHECK(t.proc.stderr_text().find("gate FAIL") == std::string::npos);
        CHECK(t.proc.stderr_text().find("gate pass: faults.phantom >= 1") != std::string::npos);
        const auto xml = read_file(junit);
        CHECK(xml.find(variant == "idempotent" ? "failures=\"0\"" : "failures=\"1\"") != std::string::npos);
    }
}
