// `up --watch` end to end with real handler processes: an edit to a handler while a request
// is in flight lets that request finish on the old code; the next request is a cold start on
// the new code; files editors and interpreters write beside the code retire nothing.

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

std::string node_handler(const std::string& version) {
    return std::string(R"(exports.handler = async (event) => {
  const q = event.queryStringParameters || {};
  if (q.sleep) await new Promise((r) => setTimeout(r, Number(q.sleep)));
  return { statusCode: 200, body: ")") + version + R"(" };
};
)";
}

std::string python_handler(const std::string& version) {
    return R"(import time

def handler(event, context):
    q = event.get("queryStringParameters") or {}
    if q.get("sleep"):
        time.sleep(int(q["sleep"]) / 1000)
    return {"statusCode": 200, "body": ")" + version + R"("}
)";
}

// A whole custom runtime in bash: GET /next, then POST the response.
std::string bash_bootstrap(const std::string& version) {
    return R"sh(#!/bin/bash
set -euo pipefail
api="http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime"
h="$(mktemp)"
trap 'rm -f "$h"' EXIT
while true; do
  event="$(curl -sS --fail -D "$h" "$api/invocation/next")"
  id="$(grep -i '^lambda-runtime-aws-request-id:' "$h" | sed -e 's/^[^:]*:[[:space:]]*//' -e 's/\r$//')"
  if [[ $event == *'"sleep"'* ]]; then sleep 1.5; fi
  curl -sS -o /dev/null -X POST "$api/invocation/$id/response" --data-binary '{"statusCode":200,"body":")sh" +
           version + R"sh("}'
done
)sh";
}

struct watch_app {
    temp_dir dir;
    watch_app() {
        dir.write("template.yaml", R"(AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 10
    MemorySize: 256
Resources:
  Node:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      CodeUri: node/
      Handler: index.handler
      Events:
        Get: {Type: HttpApi, Properties: {Path: /node, Method: get}}
  Py:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      CodeUri: py/
      Handler: app.handler
      Events:
        Get: {Type: HttpApi, Properties: {Path: /py, Method: get}}
  Bash:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: provided.al2023
      CodeUri: bash/
      Handler: bootstrap
      Events:
        Get: {Type: HttpApi, Properties: {Path: /bash, Method: get}}
)");
        dir.write("node/index.js", node_handler("node-v1"));
        dir.write("py/app.py", python_handler("py-v1"));
        dir.write("bash/bootstrap", bash_bootstrap("bash-v1"), true);
    }
    void watch_in_coldbrew_yaml() { dir.write("coldbrew.yaml", "watch: true\n"); }
    // In place, as most editors save: the running interpreter has read the file already.
    void overwrite(const std::string& rel, const std::string& text) {
        std::ofstream(dir.path() / rel, std::ios::trunc) << text;
    }
    // Written beside and renamed over, as vim and JetBrains save: a running bash script must
    // not be rewritten under its own feet, since bash reads it as it goes.
    void replace(const std::string& rel, const std::string& text) {
        const auto tmp = dir.path() / (rel + "___jb_tmp___");
        {
            std::ofstream out(tmp);
            out << text;
        }
        std::filesystem::permissions(tmp, std::filesystem::perms::owner_all);
        std::filesystem::rename(tmp, dir.path() / rel);
    }
};

struct running {
    coldbrew_process proc;
    int port, admin;
    // `flag`: --watch on the command line; else coldbrew.yaml's `watch: true` alone.
    running(const watch_app& app, bool flag)
        : proc(args(app, flag)), port(proc.wait_for_port()), admin(proc.wait_for_admin_port()) {}
    static std::vector<std::string> args(const watch_app& app, bool flag) {
        std::vector<std::string> a{"up", app.dir.path().string(), "--port", "0", "--invoke-port",
                                   "0", "--admin-port", "0", "--seed", "7"};
        if (flag) a.push_back("--watch");
        return a;
    }
    json counters(const std::string& fn) {
        return json::parse(http_request(admin, "GET", "/counters").body)["functions"][fn];
    }
    int code_changed_lines(const std::string& fn) {
        int n = 0;
        for (const auto& l : proc.lines())
            if (l.rfind("[" + fn + "] coldbrew: code changed: ", 0) == 0) ++n;
        return n;
    }
    void wait_code_changed(const std::string& fn, int n) {
        // The predicate runs under the process's output lock: it counts as it goes.
        int seen = 0;
        const std::string prefix = "[" + fn + "] coldbrew: code changed: ";
        auto line = proc.wait_for_line(
            [&](const std::string& l) { return l.rfind(prefix, 0) == 0 && ++seen >= n; },
            std::chrono::seconds(10));
        REQUIRE(line);
    }
    // Polls (bounded) until `fn` has an invocation in an environment.
    void wait_busy(const std::string& fn) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (counters(fn)["busy"].get<int>() == 0) {
            REQUIRE(std::chrono::steady_clock::now() < deadline);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
};

// The shared scenario: warm, slow request in flight, edit, old answer, new cold answer.
void reload_while_in_flight(running& cb, const std::string& fn, const std::string& path,
                            const std::string& old_body, const std::string& new_body,
                            const std::function<void()>& edit) {
    auto first = http_request(cb.port, "GET", path);
    REQUIRE(first.status == 200);
    REQUIRE(first.body == old_body);
    const auto before = cb.counters(fn);

    auto slow = std::async(std::launch::async,
                           [&] { return http_request(cb.port, "GET", path + "?sleep=1500"); });
    cb.wait_busy(fn);
    const int lines_before = cb.code_changed_lines(fn);
    edit();
    cb.wait_code_changed(fn, lines_before + 1);

    const auto in_flight = slow.get();
    CHECK(in_flight.status == 200);
    CHECK(in_flight.body == old_body);  // it finished on the code it started with

    const auto next = http_request(cb.port, "GET", path);
    CHECK(next.status == 200);
    CHECK(next.body == new_body);
    const auto after = cb.counters(fn);
    // The slow one was warm; the next one waited for a new environment.
    CHECK(after["cold_starts"].get<int>() == before["cold_starts"].get<int>() + 1);
    // The busy environment and the standby one retired.
    CHECK(after["code_reloads"].get<int>() >= before["code_reloads"].get<int>() + 2);
}

}  // namespace

TEST_CASE("watch: a node handler edited during a request reloads for the next one",
          "[integration]") {
    watch_app app;
    running cb(app, true);
    reload_while_in_flight(cb, "Node", "/node", "node-v1", "node-v2",
                           [&] { app.overwrite("node/index.js", node_handler("node-v2")); });
    cb.proc.signal(SIGINT);
    CHECK(cb.proc.wait_exit() == 0);
}

TEST_CASE("watch: a python handler edited during a request reloads for the next one; its "
          "bytecode and swap files do not",
          "[integration]") {
    watch_app app;
    app.watch_in_coldbrew_yaml();
    running cb(app, false);
    // An edit of the same size within a second of the first import: a cached .pyc would
    // still pass CPython's mtime-and-size check, so watch mode must not let it be used.
    reload_while_in_flight(cb, "Py", "/py", "py-v1", "py-v2",
                           [&] { app.overwrite("py/app.py", python_handler("py-v2")); });

    // Noise beside the python code, then a real edit elsewhere: the watcher reads events in
    // order, so once Node's reload is logged the noise has been seen (and must count for
    // nothing).
    const auto before = cb.counters("Py");
    const int py_lines = cb.code_changed_lines("Py");
    app.dir.write("py/__pycache__/app.cpython-312.pyc", "bytes");
    app.dir.write("py/.app.py.swp", "swap");
    app.dir.write("py/app.py~", "backup");
    app.overwrite("node/index.js", node_handler("node-v3"));
    cb.wait_code_changed("Node", 1);
    CHECK(cb.code_changed_lines("Py") == py_lines);
    const auto warm = http_request(cb.port, "GET", "/py");
    CHECK(warm.body == "py-v2");
    const auto after = cb.counters("Py");
    CHECK(after["code_reloads"] == before["code_reloads"]);
    CHECK(after["cold_starts"] == before["cold_starts"]);
    cb.proc.signal(SIGINT);
    CHECK(cb.proc.wait_exit() == 0);
}

TEST_CASE("watch: a provided bootstrap replaced during a request reloads for the next one",
          "[integration]") {
    watch_app app;
    running cb(app, true);
    reload_while_in_flight(cb, "Bash", "/bash", "bash-v1", "bash-v2",
                           [&] { app.replace("bash/bootstrap", bash_bootstrap("bash-v2")); });
    cb.proc.signal(SIGINT);
    CHECK(cb.proc.wait_exit() == 0);
}

TEST_CASE("watch: a provisioned environment is replaced by a new provisioned one on the new "
          "code",
          "[integration]") {
    watch_app app;
    app.dir.write("coldbrew.yaml",
                  "standby: 0\nfunctions:\n  Node: {provisioned_concurrency: 1, "
                  "reserved_concurrency: 1}\n");
    running cb(app, true);
    auto first = http_request(cb.port, "GET", "/node");
    REQUIRE(first.body == "node-v1");
    const auto before = cb.counters("Node");
    app.overwrite("node/index.js", node_handler("node-v2-edited"));
    cb.wait_code_changed("Node", 1);
    const auto next = http_request(cb.port, "GET", "/node");
    CHECK(next.body == "node-v2-edited");
    const auto after = cb.counters("Node");
    CHECK(after["provisioned"].get<int>() == before["provisioned"].get<int>() + 1);
    CHECK(after["cold_starts"] == before["cold_starts"]);  // served warm, as provisioned
    CHECK(after["code_reloads"].get<int>() == before["code_reloads"].get<int>() + 1);
    cb.proc.signal(SIGINT);
    CHECK(cb.proc.wait_exit() == 0);
}
