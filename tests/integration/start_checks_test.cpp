// Start-up checks (a missing handler warned per runtime, naming the files looked for; a busy
// port exits 2 with one line) and the host's AWS credentials reaching handlers as a whole set.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

std::string function_yaml(const std::string& name, const std::string& runtime,
                          const std::string& handler, const std::string& code,
                          const std::string& path) {
    return "  " + name + ":\n"
           "    Type: AWS::Serverless::Function\n"
           "    Properties:\n"
           "      Runtime: " + runtime + "\n"
           "      Handler: " + handler + "\n"
           "      CodeUri: " + code + "\n"
           "      Events:\n"
           "        Get: {Type: HttpApi, Properties: {Path: " + path + ", Method: get}}\n";
}

// Three functions whose handler is missing, one per runtime family, and one that is there.
void write_missing_app(temp_dir& dir) {
    dir.write("template.yaml",
              "AWSTemplateFormatVersion: '2010-09-09'\n"
              "Transform: AWS::Serverless-2016-10-31\n"
              "Resources:\n" +
                  function_yaml("NodeMissing", "nodejs20.x", "src/index.handler", "node", "/n") +
                  function_yaml("PyMissing", "python3.12", "pkg.app.handler", "py", "/p") +
                  function_yaml("CustomMissing", "provided.al2023", "bootstrap", "custom", "/c") +
                  function_yaml("Present", "nodejs20.x", "index.handler", "ok", "/ok"));
    dir.write("node/src/index.ts", "export const handler = async () => ({});\n");
    dir.write("py/pkg/__init__.py", "");
    dir.write("py/app.py", "def handler(event, context):\n    return {}\n");
    dir.write("custom/bootstrap", "#!/bin/sh\n", false);  // not executable
    dir.write("ok/index.js", "exports.handler = async () => ({statusCode: 200});\n");
}

std::string warning_for(const std::string& text, const std::string& fn) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (line.find("warning: function " + fn + " (") != std::string::npos) return line;
    return "";
}

void check_missing_warnings(const std::string& text, const temp_dir& dir) {
    const auto root = dir.path().string();
    const auto node = warning_for(text, "NodeMissing");
    CHECK(node.find("handler src/index.handler not found: looked for " + root +
                    "/node/src/index, " + root + "/node/src/index.js, " + root +
                    "/node/src/index.mjs, " + root + "/node/src/index.cjs") !=
          std::string::npos);
    const auto py = warning_for(text, "PyMissing");
    CHECK(py.find("handler pkg.app.handler not found: looked for " + root + "/py/pkg/app.py, " +
                  root + "/py/pkg/app/__init__.py") != std::string::npos);
    const auto custom = warning_for(text, "CustomMissing");
    CHECK(custom.find("no executable bootstrap: looked for " + root + "/custom/bootstrap") !=
          std::string::npos);
    CHECK(warning_for(text, "Present").empty());
}

}  // namespace

TEST_CASE("validate warns of each missing handler, naming the files looked for", "[integration]") {
    temp_dir dir;
    write_missing_app(dir);
    auto r = run_to_exit({"validate", dir.path().string()});
    INFO(r.out << r.err);
    CHECK(r.code == 0);  // AWS deploys such functions: a warning, not an error
    check_missing_warnings(r.out + r.err, dir);
}

TEST_CASE("up warns of a missing handler at start and still serves the others", "[integration]") {
    temp_dir dir;
    write_missing_app(dir);
    coldbrew_process up({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = up.wait_for_port();
    auto r = http_request(port, "GET", "/ok");
    CHECK(r.status == 200);
    std::string all;
    for (const auto& l : up.lines()) all += l + "\n";
    check_missing_warnings(all, dir);
    up.signal(SIGTERM);
    CHECK(up.wait_exit());
}

TEST_CASE("a port already in use stops the start with exit 2 and one line", "[integration]") {
    // A listening socket of this test holds the port.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    const int busy = ntohs(addr.sin_port);

    temp_dir dir;
    write_fake_app(dir, "", function_yaml("Fake", "provided.al2023", "bootstrap", "fn", "/fake"));
    auto r = run_to_exit({"up", dir.path().string(), "--port", std::to_string(busy), "--seed", "1"});
    ::close(fd);
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("coldbrew: cannot listen on 127.0.0.1:" + std::to_string(busy) +
                     " (gateway): Address already in use\n") != std::string::npos);
}

TEST_CASE("the host's AWS credentials reach handlers as a whole set or not at all",
          "[integration]") {
    temp_dir dir;
    dir.write("template.yaml",
              "AWSTemplateFormatVersion: '2010-09-09'\n"
              "Transform: AWS::Serverless-2016-10-31\n"
              "Resources:\n" +
                  function_yaml("Creds", "python3.12", "app.handler", "fn", "/creds"));
    dir.write("fn/app.py",
              "import json, os\n"
              "def handler(event, context):\n"
              "    keys = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']\n"
              "    return {'statusCode': 200,\n"
              "            'body': json.dumps({k: os.environ.get(k) for k in keys})}\n");
    auto seen = [&](std::map<std::string, std::string> env) {
        coldbrew_process up({"up", dir.path().string(), "--port", "0", "--seed", "1"},
                            std::move(env));
        const int port = up.wait_for_port();
        auto r = http_request(port, "GET", "/creds");
        up.signal(SIGTERM);
        up.wait_exit();
        INFO(r.body);
        REQUIRE(r.status == 200);
        return json::parse(r.body);
    };
    SECTION("the whole set") {
        auto c = seen({{"AWS_ACCESS_KEY_ID", "AKIDHOST"},
                       {"AWS_SECRET_ACCESS_KEY", "host-secret"},
                       {"AWS_SESSION_TOKEN", "host-token"}});
        CHECK(c["AWS_ACCESS_KEY_ID"] == "AKIDHOST");
        CHECK(c["AWS_SECRET_ACCESS_KEY"] == "host-secret");
        CHECK(c["AWS_SESSION_TOKEN"] == "host-token");
    }
    SECTION("only the secret: none of it, SAM CLI's placeholders instead") {
        auto c = seen({{"AWS_ACCESS_KEY_ID", ""},
                       {"AWS_SECRET_ACCESS_KEY", "host-secret"},
                       {"AWS_SESSION_TOKEN", "host-token"}});
        CHECK(c["AWS_ACCESS_KEY_ID"] == "defaultkey");
        CHECK(c["AWS_SECRET_ACCESS_KEY"] == "defaultsecret");
        CHECK(c["AWS_SESSION_TOKEN"].is_null());
    }
    SECTION("only the key id") {
        auto c = seen({{"AWS_ACCESS_KEY_ID", "AKIDHOST"},
                       {"AWS_SECRET_ACCESS_KEY", ""},
                       {"AWS_SESSION_TOKEN", ""}});
        CHECK(c["AWS_ACCESS_KEY_ID"] == "defaultkey");
        CHECK(c["AWS_SECRET_ACCESS_KEY"] == "defaultsecret");
        CHECK(c["AWS_SESSION_TOKEN"].is_null());
    }
}
