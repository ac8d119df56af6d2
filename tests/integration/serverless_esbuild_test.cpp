// serverless-esbuild: a serverless.yml service whose TypeScript handler (a local .ts module, a
// type-only import, a package left external) is built with esbuild before it is served, as
// the plugin builds it before serverless-offline serves it. esbuild is the one
// examples/hello-ts/hello-world installs (tools/setup.sh), linked into the service's
// node_modules/.bin: nothing is downloaded.

#include <filesystem>
#include <string>
#include <thread>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
namespace fs = std::filesystem;

namespace {

void write_service(temp_dir& dir, const std::string& custom) {
    const fs::path esbuild =
        source_dir() / "examples" / "hello-ts" / "hello-world" / "node_modules" / ".bin" / "esbuild";
    if (!fs::exists(esbuild))
        FAIL("esbuild is not installed in examples/hello-ts/hello-world: run tools/setup.sh");
    fs::create_directories(dir.path() / "node_modules" / ".bin");
    fs::create_symlink(fs::canonical(esbuild), dir.path() / "node_modules" / ".bin" / "esbuild");
    dir.write("serverless.yml", "service: greeter\n"
                                "plugins:\n  - serverless-esbuild\n  - serverless-offline\n"
                                "provider:\n  name: aws\n  runtime: nodejs20.x\n" + custom +
                                "functions:\n"
                                "  hello:\n"
                                "    handler: src/handlers/hello.main\n"
                                "    events:\n"
                                "      - httpApi: 'GET /hello'\n");
    dir.write("src/handlers/hello.ts",
              "import type { Greeting } from '../types';\n"
              "import { greet } from '../lib/greet';\n"
              "// Left external: node finds it in the service's node_modules at run time.\n"
              "import { suffix } from 'left-out';\n"
              "export const main = async (event: { rawPath: string }) => {\n"
              "  const g: Greeting = greet(event.rawPath);\n"
              "  return { statusCode: 200, body: g.text + suffix };\n"
              "};\n");
    dir.write("src/lib/greet.ts",
              "import type { Greeting } from '../types';\n"
              "export function greet(path: string): Greeting { return { text: `hello from ${path}` }; }\n");
    dir.write("src/types.ts", "export interface Greeting { text: string }\n");
    dir.write("node_modules/left-out/package.json", R"({"name":"left-out","main":"index.js"})");
    dir.write("node_modules/left-out/index.js", "exports.suffix = '!';\n");
}

}  // namespace

TEST_CASE("serverless-esbuild: a TypeScript handler is built and served at its route",
          "[integration]") {
    temp_dir dir;
    write_service(dir, "custom:\n  esbuild:\n    external: [left-out]\n    keepNames: true\n");
    const fs::path built = dir.path() / ".coldbrew" / "build" / "hello";
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = proc.wait_for_port(std::chrono::seconds(60));
    const auto reply = http_request(port, "GET", "/hello");
    INFO(proc.stdout_text() << proc.stderr_text());
    CHECK(reply.status == 200);
    CHECK(reply.body == "hello from /hello!");
    // The handler path resolves unchanged inside the build; the external package is not in it.
    CHECK(fs::exists(built / "src" / "handlers" / "hello.js"));
    CHECK_FALSE(fs::exists(built / "node_modules"));
}

TEST_CASE("serverless-esbuild: a failing build stops the start with esbuild's message",
          "[integration]") {
    temp_dir dir;
    // Bundled (not external), the package import fails when it is missing.
    write_service(dir, "");
    fs::remove_all(dir.path() / "node_modules" / "left-out");
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const auto code = proc.wait_exit(std::chrono::seconds(60));
    INFO(proc.stdout_text() << proc.stderr_text());
    REQUIRE(code);
    CHECK(*code == 2);
    CHECK(proc.stderr_text().find("left-out") != std::string::npos);
    CHECK(proc.stderr_text().find("hello") != std::string::npos);
}

TEST_CASE("serverless-esbuild: with --watch an edit of an imported module is rebuilt and served",
          "[integration]") {
    temp_dir dir;
    write_service(dir, "custom:\n  esbuild:\n    external: [left-out]\n");
    coldbrew_process proc({"up", dir.path().string(), "--port", "0", "--seed", "1", "--watch"});
    const int port = proc.wait_for_port(std::chrono::seconds(60));
    REQUIRE(http_request(port, "GET", "/hello").body == "hello from /hello!");
    dir.write("src/lib/greet.ts",
              "import type { Greeting } from '../types';\n"
              "export function greet(path: string): Greeting { return { text: `edited ${path}` }; }\n");
    std::string body;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
        body = http_request(port, "GET", "/hello").body;
        if (body == "edited /hello!") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    INFO(proc.stdout_text() << proc.stderr_text());
    CHECK(body == "edited /hello!");
}
