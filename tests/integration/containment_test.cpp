// Containment: what a handler detaches from itself (node's detached spawn, python's
// setsid + double fork) ends with its environment and with coldbrew, after SIGTERM and after
// SIGKILL, in every containment mode this machine offers (COLDBREW_CONTAINMENT forces one).

#include <signal.h>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

void write_detaching_app(temp_dir& dir) {
    dir.write("template.yaml",
              "AWSTemplateFormatVersion: '2010-09-09'\n"
              "Transform: AWS::Serverless-2016-10-31\n"
              "Resources:\n"
              "  Node:\n"
              "    Type: AWS::Serverless::Function\n"
              "    Properties:\n"
              "      Runtime: nodejs20.x\n"
              "      Handler: index.handler\n"
              "      CodeUri: node\n"
              "      Events:\n"
              "        Get: {Type: HttpApi, Properties: {Path: /node, Method: get}}\n"
              "  Py:\n"
              "    Type: AWS::Serverless::Function\n"
              "    Properties:\n"
              "      Runtime: python3.12\n"
              "      Handler: app.handler\n"
              "      CodeUri: py\n"
              "      Events:\n"
              "        Get: {Type: HttpApi, Properties: {Path: /py, Method: get}}\n");
    // ?exit ends the environment's process after the reply is on its way.
    dir.write("node/index.js",
              "const {spawn} = require('child_process');\n"
              "exports.handler = async (event) => {\n"
              "  if ((event.rawQueryString || '').includes('exit'))\n"
              "    setTimeout(() => process.exit(3), 10);\n"
              "  const c = spawn('sleep', ['1001'], {detached: true, stdio: 'ignore'});\n"
              "  c.unref();\n"
              "  return {statusCode: 200, body: JSON.stringify({pid: c.pid})};\n"
              "};\n");
    dir.write("py/app.py",
              "import json, os\n"
              "def handler(event, context):\n"
              "    r, w = os.pipe()\n"
              "    child = os.fork()\n"
              "    if child == 0:\n"
              "        os.close(r)\n"
              "        os.setsid()\n"
              "        grandchild = os.fork()\n"
              "        if grandchild == 0:\n"
              "            devnull = os.open(os.devnull, os.O_RDWR)\n"
              "            for fd in (0, 1, 2):\n"
              "                os.dup2(devnull, fd)\n"
              "            os.execvp('sleep', ['sleep', '1002'])\n"
              "        os.write(w, str(grandchild).encode())\n"
              "        os._exit(0)\n"
              "    os.close(w)\n"
              "    pid = int(os.read(r, 64).decode())\n"
              "    os.close(r)\n"
              "    os.waitpid(child, 0)\n"
              "    return {'statusCode': 200, 'body': json.dumps({'pid': pid})}\n");
}

// Kills what a failed check may have left, so the test never leaves a process behind.
struct kill_on_exit {
    std::vector<int> pids;
    ~kill_on_exit() {
        for (int p : pids)
            if (p > 1 && !process_gone(p)) ::kill(p, SIGKILL);
    }
};

struct detached_run {
    temp_dir dir;
    std::unique_ptr<coldbrew_process> up;
    int port = 0;
    std::string mode_line;

    explicit detached_run(const std::string& mode) {
        write_detaching_app(dir);
        up = std::make_unique<coldbrew_process>(
            std::vector<std::string>{"up", dir.path().string(), "--port", "0", "--seed", "1"},
            std::map<std::string, std::string>{{"COLDBREW_CONTAINMENT", mode}});
        port = up->wait_for_port();
        auto line = up->wait_for_line(
            [](const std::string& l) { return l.rfind("Containment: ", 0) == 0; });
        if (line) mode_line = *line;
    }

    int detach(const std::string& target) {
        auto r = http_request(port, "GET", target);
        INFO(target << ": " << r.body);
        REQUIRE(r.status == 200);
        return json::parse(r.body)["pid"].get<int>();
    }
};

bool mode_applies(const std::string& mode, const std::string& line) {
    if (mode == "subreaper") return line.find("child subreaper") != std::string::npos;
    if (mode == "cgroup-v1") return line.find("cgroup v1") != std::string::npos;
    return line.find("cgroup") != std::string::npos && line.find("subreaper") == std::string::npos;
}

void check_mode(const std::string& mode, int sig) {
    detached_run run(mode);
    INFO(run.mode_line);
    REQUIRE(run.port > 0);
    if (!mode_applies(mode, run.mode_line)) {
        WARN("skipped: containment mode " << mode << " is not available here: " << run.mode_line);
        return;
    }
    kill_on_exit guard;
    const int node_child = run.detach("/node");
    guard.pids.push_back(node_child);
    const int py_grandchild = run.detach("/py");
    guard.pids.push_back(py_grandchild);
    REQUIRE_FALSE(process_gone(node_child));
    REQUIRE_FALSE(process_gone(py_grandchild));
    run.up->signal(sig);
    REQUIRE(run.up->wait_exit());
    CHECK(wait_gone(node_child));
    CHECK(wait_gone(py_grandchild));
}

}  // namespace

TEST_CASE("containment: detached grandchildren end with coldbrew's SIGTERM and SIGKILL",
          "[integration]") {
    for (const std::string mode : {"cgroup", "cgroup-v1", "subreaper"}) {
        DYNAMIC_SECTION(mode << ", SIGTERM") { check_mode(mode, SIGTERM); }
        DYNAMIC_SECTION(mode << ", SIGKILL") { check_mode(mode, SIGKILL); }
    }
}

TEST_CASE("containment: a detached process ends with its environment", "[integration]") {
    for (const std::string mode : {"cgroup", "subreaper"}) {
        DYNAMIC_SECTION(mode) {
            detached_run run(mode);
            INFO(run.mode_line);
            REQUIRE(run.port > 0);
            if (!mode_applies(mode, run.mode_line)) {
                WARN("skipped: containment mode " << mode << " is not available here");
                continue;
            }
            kill_on_exit guard;
            const int child = run.detach("/node?exit");
            guard.pids.push_back(child);
            // The environment's process exits after its reply; coldbrew keeps running.
            CHECK(wait_gone(child));
            CHECK_FALSE(process_gone(run.up->pid()));
            run.up->signal(SIGTERM);
            CHECK(run.up->wait_exit());
        }
    }
}
