// Functions run on their declared runtime's version when this machine has it, and on the
// unversioned binary with a warning when it does not.

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

void write_app(temp_dir& dir, const std::string& runtime, const std::string& handler,
               const std::string& file, const std::string& code) {
    dir.write("template.yaml",
              "AWSTemplateFormatVersion: '2010-09-09'\n"
              "Transform: AWS::Serverless-2016-10-31\n"
              "Resources:\n"
              "  Version:\n"
              "    Type: AWS::Serverless::Function\n"
              "    Properties:\n"
              "      Runtime: " + runtime + "\n"
              "      Handler: " + handler + "\n"
              "      CodeUri: fn\n"
              "      Events:\n"
              "        Get: {Type: HttpApi, Properties: {Path: /version, Method: get}}\n");
    dir.write("fn/" + file, code);
}

bool has_line(const coldbrew_process& p, const std::string& part) {
    for (const auto& l : p.lines())
        if (l.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("a python3.12 function runs on Python 3.12", "[integration]") {
    temp_dir dir;
    write_app(dir, "python3.12", "app.handler", "app.py",
              "import json, sys\n"
              "def handler(event, context):\n"
              "    return {'statusCode': 200, 'body': json.dumps({'version': sys.version.split()[0]})}\n");
    coldbrew_process up({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = up.wait_for_port();
    if (has_line(up, "python3.12: running on") || has_line(up, "python3.12: no python")) {
        WARN("skipped: no Python 3.12 on this machine (PATH, pyenv, asdf)");
        return;
    }
    auto r = http_request(port, "GET", "/version");
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(json::parse(r.body)["version"].get<std::string>().rfind("3.12.", 0) == 0);
}

TEST_CASE("a nodejs22.x function without a node 22 runs on node, with one warning", "[integration]") {
    // A machine whose only node is the system's: HOME has no version manager, PATH one dir.
    temp_dir dir;
    std::string node;
    for (const std::string d : {"/usr/local/bin", "/usr/bin", "/bin"})
        if (::access((d + "/node").c_str(), X_OK) == 0) {
            node = d + "/node";
            break;
        }
    if (node.empty()) {
        WARN("skipped: no node in /usr/local/bin, /usr/bin or /bin");
        return;
    }
    std::filesystem::create_directories(dir.path() / "home");
    std::filesystem::create_directories(dir.path() / "bin");
    std::filesystem::create_symlink(node, dir.path() / "bin" / "node");
    write_app(dir, "nodejs22.x", "index.handler", "index.js",
              "exports.handler = async () => ({statusCode: 200, "
              "body: JSON.stringify({version: process.version})});\n");
    std::map<std::string, std::string> env{{"HOME", (dir.path() / "home").string()},
                                           {"PATH", (dir.path() / "bin").string() + ":/bin"},
                                           {"NVM_DIR", ""}, {"FNM_DIR", ""}, {"VOLTA_HOME", ""},
                                           {"ASDF_DATA_DIR", ""}, {"XDG_DATA_HOME", ""}};
    coldbrew_process up({"up", dir.path().string(), "--port", "0", "--seed", "1"}, env);
    const int port = up.wait_for_port();
    auto r = http_request(port, "GET", "/version");
    INFO(r.body);
    REQUIRE(r.status == 200);
    const auto version = json::parse(r.body)["version"].get<std::string>();
    if (version.rfind("v22.", 0) == 0) {
        WARN("skipped: the system node is node 22, nothing to fall back from");
        return;
    }
    const std::string warning = "nodejs22.x: running on node " + version + " from " +
                                (dir.path() / "bin" / "node").string() +
                                "; no node 22 found (looked in PATH, nvm, fnm, volta, asdf); "
                                "set runtimes.nodejs22.x in coldbrew.yaml";
    int count = 0;
    for (const auto& l : up.lines())
        if (l.find(warning) != std::string::npos) ++count;
    CHECK(count == 1);
}
