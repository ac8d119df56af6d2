// The esbuild command a serverless-esbuild function gets: the plugin's defaults
// (floydspace/serverless-esbuild src/index.ts getBuildOptions) rather than aws-lambda-builders'
// (no --minify, the runtime's target), and --outbase=. so the handler's directory is kept.

#include "emulator/build/build.hpp"

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>

using namespace coldbrew;
using coldbrew::test::temp_app;

TEST_CASE("serverless-esbuild: esbuild runs with the plugin's defaults, keeping the entry's directory",
          "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    const auto s = app.serverless("service: s\nplugins: [serverless-esbuild]\n"
                                  "provider:\n  name: aws\n  runtime: nodejs22.x\n"
                                  "custom:\n  esbuild:\n    sourcemap: true\n    external: [pg]\n"
                                  "functions:\n  hello:\n    handler: src/handler.hello\n");
    const auto& b = *s.functions.at(0).build;
    build::esbuild_inputs in;
    in.entry_points = build::resolve_entry_points(b, "hello");
    const auto args = build::esbuild_arguments(b, in, "/out");
    CHECK(args == std::vector<std::string>{"src/handler.ts", "--bundle", "--platform=node",
                                           "--outdir=/out", "--format=cjs", "--target=node22",
                                           "--outbase=.", "--sourcemap", "--external:pg",
                                           "--external:aws-sdk"});
    CHECK(std::find(args.begin(), args.end(), "--minify") == args.end());
}
