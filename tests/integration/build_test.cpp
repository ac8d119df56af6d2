// Builds before serving: the SAM CLI TypeScript hello-world (BuildMethod esbuild) served
// unmodified after `npm install`, a BuildMethod makefile function, and the errors a build
// can end the start with. Apps are copied to a temporary directory: the build cache
// (.coldbrew/build) is written under the app.

#include <filesystem>
#include <string>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
namespace fs = std::filesystem;

namespace {

// examples/hello-ts copied into `dir`, node_modules included unless `with_modules` is false.
void copy_hello_ts(const temp_dir& dir, bool with_modules) {
    const fs::path example = source_dir() / "examples" / "hello-ts";
    if (with_modules && !fs::exists(example / "hello-world" / "node_modules" / ".bin" / "esbuild"))
        FAIL("esbuild is not installed in examples/hello-ts/hello-world: run tools/setup.sh");
    fs::copy(example, dir.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::remove_all(dir.path() / ".coldbrew");
    fs::remove_all(dir.path() / ".aws-sam");
    if (!with_modules) fs::remove_all(dir.path() / "hello-world" / "node_modules");
}

std::string make_template(const std::string& target_body) {
    return R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  MadeFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src/
      Events:
        Made:
          Type: Api
          Properties:
            Path: /made
            Method: get
    Metadata:
      BuildMethod: makefile
)" + target_body;
}

}  // namespace

TEST_CASE("examples/hello-ts: the SAM TypeScript hello-world is built with its esbuild and answers 200",
          "[integration]") {
    temp_dir dir;
    copy_hello_ts(dir, true);
    REQUIRE_FALSE(fs::exists(dir.path() / ".aws-sam"));
    const fs::path built = dir.path() / ".coldbrew" / "build" / "HelloWorldFunction" / "app.js";
    {
        coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
        const int port = proc.wait_for_port(std::chrono::seconds(60));
        const auto reply = http_request(port, "GET", "/hello");
        INFO(proc.stdout_text() << proc.stderr_text());
        CHECK(reply.status == 200);
        CHECK(reply.body == R"({"message":"hello world"})");
        CHECK(fs::exists(built));
        CHECK(fs::exists(dir.path() / ".coldbrew" / "build" / "HelloWorldFunction" / "app.js.map"));
    }
    // Unchanged sources: the next start does not build again.
    const auto first = fs::last_write_time(built);
    {
        coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
        const int port = proc.wait_for_port(std::chrono::seconds(60));
        CHECK(http_request(port, "GET", "/hello").status == 200);
    }
    CHECK(fs::last_write_time(built) == first);
    // A changed source is built again.
    dir.write("hello-world/app.ts",
              "export const lambdaHandler = async () => ({statusCode: 200, body: 'changed'});\n");
    {
        coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
        const int port = proc.wait_for_port(std::chrono::seconds(60));
        CHECK(http_request(port, "GET", "/hello").body == "changed");
    }
}

TEST_CASE("a BuildMethod esbuild app without esbuild installed stops with the fix", "[integration]") {
    temp_dir dir;
    copy_hello_ts(dir, false);
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const auto rc = proc.wait_exit();
    REQUIRE(rc);
    CHECK(*rc == 2);
    const std::string err = proc.stderr_text();
    INFO(err);
    CHECK(err.find("HelloWorldFunction") != std::string::npos);
    CHECK(err.find("npm install") != std::string::npos);
    CHECK(proc.stdout_text().find("listening") == std::string::npos);

    coldbrew_process validate({"validate", dir.path().string()});
    const auto vrc = validate.wait_exit();
    REQUIRE(vrc);
    CHECK(*vrc == 2);
}

TEST_CASE("a BuildMethod makefile function is served from what make build-<Id> wrote", "[integration]") {
    temp_dir dir;
    dir.write("template.yaml", make_template(""));
    dir.write("src/handler.src.js",
              "exports.handler = async () => ({statusCode: 200, body: 'WORD'});\n");
    dir.write("src/Makefile",
              "build-MadeFunction:\n"
              "\tsed s/WORD/made/ handler.src.js > $(ARTIFACTS_DIR)/index.js\n");
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = proc.wait_for_port();
    const auto reply = http_request(port, "GET", "/made");
    INFO(proc.stdout_text() << proc.stderr_text());
    CHECK(reply.status == 200);
    CHECK(reply.body == "made");
    // make ran in the source directory and wrote only into the artifacts.
    CHECK(fs::exists(dir.path() / ".coldbrew" / "build" / "MadeFunction" / "index.js"));
    CHECK_FALSE(fs::exists(dir.path() / "src" / "index.js"));
}

TEST_CASE("a failing build stops the start with its output and exit status", "[integration]") {
    temp_dir dir;
    dir.write("template.yaml", make_template(""));
    dir.write("src/Makefile",
              "build-MadeFunction:\n"
              "\t@echo compiler says no >&2\n"
              "\t@exit 3\n");
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const auto rc = proc.wait_exit();
    REQUIRE(rc);
    CHECK(*rc == 2);
    const std::string err = proc.stderr_text();
    INFO(err);
    CHECK(err.find("MadeFunction") != std::string::npos);
    CHECK(err.find("compiler says no") != std::string::npos);
    CHECK(err.find("exit status 2") != std::string::npos);  // make's, for a failed recipe
    // Nothing half-built is left to serve.
    CHECK_FALSE(fs::exists(dir.path() / ".coldbrew" / "build" / "MadeFunction"));

    // A Makefile without the function's target fails the same way.
    dir.write("src/Makefile", "build-Other:\n\t@true\n");
    coldbrew_process other({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const auto orc = other.wait_exit();
    REQUIRE(orc);
    CHECK(*orc == 2);
    CHECK(other.stderr_text().find("build-MadeFunction") != std::string::npos);
}
