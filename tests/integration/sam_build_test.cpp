// `sam build` output: a project with .aws-sam/build is served from the built artifacts, as sam
// local serves it, and `validate` says so; without a build, `validate` shows what the package
// measure left out.

#include <filesystem>
#include <string>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;

namespace {

std::string hello_template(const std::string& code_uri) {
    return R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: )" + code_uri + R"(
      Events:
        Hello:
          Type: Api
          Properties:
            Path: /hello
            Method: get
)";
}

std::string handler_saying(const std::string& word) {
    return "exports.handler = async () => ({statusCode: 200, body: '" + word + "'});\n";
}

// The project's source says "source"; sam build's copy says "built".
void write_built_project(temp_dir& dir) {
    dir.write("template.yaml", hello_template("src/"));
    dir.write("src/index.js", handler_saying("source"));
    dir.write(".aws-sam/build/template.yaml", hello_template("HelloFunction"));
    dir.write(".aws-sam/build/HelloFunction/index.js", handler_saying("built"));
}

std::string validate_output(const temp_dir& dir) {
    coldbrew_process proc({"validate", dir.path().string()});
    const auto rc = proc.wait_exit();
    REQUIRE(rc);
    INFO(proc.stdout_text() << proc.stderr_text());
    REQUIRE(*rc == 0);
    return proc.stdout_text();
}

}  // namespace

TEST_CASE("a project with a sam build is served from .aws-sam/build", "[integration]") {
    temp_dir dir;
    write_built_project(dir);

    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = proc.wait_for_port();
    const auto reply = http_request(port, "GET", "/hello");
    CHECK(reply.status == 200);
    CHECK(reply.body == "built");
    const std::string serving =
        "Serving the built artifacts in " + (dir.path() / ".aws-sam" / "build").string();
    CHECK(proc.wait_for_line([&](const std::string& l) { return l.find(serving) == 0; }));

    const auto v = validate_output(dir);
    CHECK(v.find("Serving the built artifacts in") != std::string::npos);
    CHECK(v.find((dir.path() / ".aws-sam" / "build" / "HelloFunction").string()) !=
          std::string::npos);
}

TEST_CASE("without a build, validate shows what the package leaves out", "[integration]") {
    temp_dir dir;
    dir.write("template.yaml", hello_template("src/"));
    dir.write("src/index.js", handler_saying("source"));
    dir.write("src/package.json",
              R"({"name": "app", "dependencies": {}, "devDependencies": {"typescript": "5"}})");
    dir.write("src/package-lock.json", R"({"lockfileVersion": 3, "packages": {
      "": {"name": "app"}, "node_modules/typescript": {"version": "5.4.0", "dev": true}}})");
    dir.write("src/node_modules/typescript/package.json", R"({"name": "typescript"})");
    dir.write("src/node_modules/typescript/lib/tsc.js", std::string(200000, 'x'));
    dir.write("src/.git/HEAD", "ref: refs/heads/main\n");

    const auto v = validate_output(dir);
    CHECK(v.find("Serving the built") == std::string::npos);
    CHECK(v.find("measured: 3 files") != std::string::npos);
    CHECK(v.find("left out: 1 devDependencies packages (typescript, 0.19 MB in 2 files) ") !=
          std::string::npos);
    CHECK(v.find("package-lock.json marks them dev") != std::string::npos);
    CHECK(v.find("left out: .git (0.00 MB in 1 file) ") != std::string::npos);

    // The source handler runs when nothing was built.
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = proc.wait_for_port();
    CHECK(http_request(port, "GET", "/hello").body == "source");
}
