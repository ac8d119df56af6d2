// serverless-esbuild's build of a function as a build_spec (floydspace/serverless-esbuild
// src/helper.ts extractFunctionEntries, src/index.ts getBuildOptions, src/bundle.ts).

#include "emulator/config/serverless_esbuild.hpp"

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>

using namespace coldbrew;
using property = config::build_spec::esbuild_options::property;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

std::string service(const std::string& custom, const std::string& functions = "",
                    const std::string& runtime = "nodejs20.x") {
    return "service: hello\n"
           "plugins:\n  - serverless-esbuild\n  - serverless-offline\n"
           "provider:\n  name: aws\n  runtime: " + runtime + "\n" + custom +
           "functions:\n" +
           (functions.empty() ? "  hello:\n    handler: src/handler.hello\n" : functions);
}

const property* find(const config::build_spec& b, const std::string& key) {
    for (const auto& p : b.esbuild.properties)
        if (p.key == key) return &p;
    return nullptr;
}

std::vector<std::string> values(const config::build_spec& b, const std::string& key) {
    const property* p = find(b, key);
    return p ? p->values : std::vector<std::string>{"<absent>"};
}

}  // namespace

TEST_CASE("serverless-esbuild: a TypeScript handler's file is the entry, with the plugin's defaults",
          "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "export const hello = async () => ({});\n");
    app.write("src/handler.js", "");  // .ts comes first
    const auto s = app.serverless(service(""));
    const auto& fn = s.functions.at(0);
    REQUIRE(fn.build);
    CHECK(fn.build->method == "esbuild");
    CHECK(fn.build->source_dir == app.dir());
    CHECK(fn.build->artifacts_dir == app.dir() / ".coldbrew" / "build" / "hello");
    CHECK(fn.build->path == "functions.hello.handler");
    CHECK(fn.build->esbuild.entry_points == std::vector<std::string>{"src/handler.ts"});
    CHECK(values(*fn.build, "target") == std::vector<std::string>{"node20"});
    CHECK(values(*fn.build, "outbase") == std::vector<std::string>{"."});
    CHECK(values(*fn.build, "external") == std::vector<std::string>{"aws-sdk"});
    REQUIRE(find(*fn.build, "minify"));
    CHECK_FALSE(find(*fn.build, "minify")->flag);
    CHECK_FALSE(find(*fn.build, "sourcemap"));
    // The handler is unchanged: the build keeps src/.
    CHECK(fn.handler == "src/handler.hello");
}

TEST_CASE("serverless-esbuild: entries are tried as <file><ext> then <file>/index<ext>", "[unit]") {
    temp_app app;
    app.write("src/api/index.js", "");
    app.write("lib/other.tsx", "");
    const auto s = app.serverless(service("", "  a:\n    handler: src/api.main\n"
                                              "  b:\n    handler: ignored.main\n"
                                              "    esbuildEntrypoint: lib/other.handler\n"));
    CHECK(s.functions.at(0).build->esbuild.entry_points == std::vector<std::string>{"src/api/index.js"});
    CHECK(s.functions.at(1).build->esbuild.entry_points == std::vector<std::string>{"lib/other.tsx"});
}

TEST_CASE("serverless-esbuild: resolveExtensions replaces the extensions tried", "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    app.write("src/handler.mts", "");
    const auto s = app.serverless(service("custom:\n  esbuild:\n    resolveExtensions: [.mts, .ts]\n"));
    const auto& b = *s.functions.at(0).build;
    CHECK(b.esbuild.entry_points == std::vector<std::string>{"src/handler.mts"});
    CHECK(values(b, "resolve_extensions") == std::vector<std::string>{".mts,.ts"});
}

TEST_CASE("serverless-esbuild: a missing entry file is a config error at the handler", "[unit]") {
    temp_app app;
    const auto e = error_of([&] { app.serverless(service("")); });
    CHECK(e.key_path() == "functions.hello.handler");
    CHECK(contains(e.what(), "src/handler"));
    CHECK(contains(e.what(), ".ts, .js, .jsx, .tsx"));
}

TEST_CASE("serverless-esbuild: custom.esbuild options map to esbuild's flags", "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    const auto s = app.serverless(service("custom:\n  esbuild:\n"
                                          "    minify: true\n"
                                          "    sourcemap: inline\n"
                                          "    keepNames: true\n"
                                          "    sourcesContent: false\n"
                                          "    target: node18\n"
                                          "    format: esm\n"
                                          "    outputFileExtension: .mjs\n"
                                          "    mainFields: [module, main]\n"
                                          "    external: [pg-native]\n"
                                          "    exclude: [sharp]\n"
                                          "    define:\n      process.env.STAGE: '\"dev\"'\n"
                                          "    loader:\n      .png: file\n"
                                          "    banner:\n      js: '// built'\n"
                                          "    tsconfig: tsconfig.build.json\n"
                                          "    packager: pnpm\n"
                                          "    concurrency: 4\n"));
    const auto& b = *s.functions.at(0).build;
    CHECK(find(*&b, "minify")->flag);
    CHECK(values(b, "sourcemap") == std::vector<std::string>{"inline"});
    CHECK(find(b, "keep_names")->type == property::kind::boolean);
    CHECK(values(b, "sources_content") == std::vector<std::string>{"false"});
    CHECK(values(b, "target") == std::vector<std::string>{"node18"});
    CHECK(values(b, "format") == std::vector<std::string>{"esm"});
    CHECK(values(b, "out_extension") == std::vector<std::string>{".js=.mjs"});
    CHECK(values(b, "main_fields") == std::vector<std::string>{"module,main"});
    CHECK(values(b, "external") == std::vector<std::string>{"pg-native", "sharp"});
    CHECK(values(b, "define") == std::vector<std::string>{"process.env.STAGE=\"dev\""});
    CHECK(values(b, "loader") == std::vector<std::string>{".png=file"});
    CHECK(values(b, "banner") == std::vector<std::string>{"js=// built"});
    CHECK(values(b, "tsconfig") == std::vector<std::string>{"tsconfig.build.json"});
    CHECK_FALSE(find(b, "packager"));
    CHECK_FALSE(find(b, "concurrency"));
    CHECK_FALSE(find(b, "output_file_extension"));
}

TEST_CASE("serverless-esbuild: exclude '*' excludes nothing from the bundle", "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    const auto s = app.serverless(service("custom:\n  esbuild:\n    exclude: ['*']\n"));
    CHECK_FALSE(find(*s.functions.at(0).build, "external"));
}

TEST_CASE("serverless-esbuild: only nodejs functions are built, and skipBuild skips them",
          "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    app.write("py/app.py", "");
    const auto s = app.serverless(service("custom:\n  esbuild:\n    skipBuild: true\n"
                                          "    skipBuildExcludeFns: [kept]\n",
                                          "  hello:\n    handler: src/handler.hello\n"
                                          "  kept:\n    handler: src/handler.hello\n"
                                          "  py:\n    handler: py/app.handler\n"
                                          "    runtime: python3.12\n"));
    CHECK_FALSE(s.functions.at(0).build);
    CHECK(s.functions.at(1).build);
    CHECK_FALSE(s.functions.at(2).build);
}

TEST_CASE("serverless-esbuild: without the plugin nothing is built", "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    const auto s = app.serverless("service: hello\nprovider:\n  name: aws\n  runtime: nodejs20.x\n"
                                  "functions:\n  hello:\n    handler: src/handler.hello\n");
    CHECK_FALSE(s.functions.at(0).build);
}

TEST_CASE("serverless-esbuild: config, plugins and nodeExternals are named as not emulated",
          "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    const auto s = app.serverless(service("custom:\n  esbuild:\n    config: ./esbuild.config.js\n"
                                          "    plugins: ./plugins.js\n"
                                          "    nodeExternals: {}\n"
                                          "    bundle: false\n"
                                          "    tsconfigRaw:\n      compilerOptions: {}\n"));
    std::vector<std::string> what;
    for (const auto& n : s.ignored)
        if (n.kind == "plugin") what.push_back(n.what);
    CHECK(what == std::vector<std::string>{"serverless-esbuild custom.esbuild.config",
                                           "serverless-esbuild custom.esbuild.plugins",
                                           "serverless-esbuild custom.esbuild.nodeExternals",
                                           "serverless-esbuild custom.esbuild.bundle",
                                           "serverless-esbuild custom.esbuild.tsconfigRaw"});
    // The build still happens, from the rest.
    CHECK(s.functions.at(0).build);
    CHECK_FALSE(find(*s.functions.at(0).build, "config"));
    CHECK_FALSE(find(*s.functions.at(0).build, "plugins"));
    CHECK_FALSE(find(*s.functions.at(0).build, "tsconfig_raw"));
}

TEST_CASE("serverless-esbuild: the target follows provider.runtime", "[unit]") {
    CHECK(config::serverless_esbuild_target("nodejs22.x") == "node22");
    CHECK(config::serverless_esbuild_target("nodejs18.x") == "node18");
    CHECK(config::serverless_esbuild_target("python3.12").empty());
    CHECK(config::serverless_esbuild_target("nodejs").empty());
}

TEST_CASE("serverless-esbuild: an output extension of the other module system is refused",
          "[unit]") {
    temp_app app;
    app.write("src/handler.ts", "");
    const auto mjs = error_of([&] {
        app.serverless(service("custom:\n  esbuild:\n    outputFileExtension: .mjs\n"));
    });
    CHECK(mjs.key_path() == "custom.esbuild.outputFileExtension");
    CHECK(contains(mjs.what(), "format: esm"));
    const auto cjs = error_of([&] {
        app.serverless(service("custom:\n  esbuild:\n    format: esm\n    outputFileExtension: .cjs\n"));
    });
    CHECK(cjs.key_path() == "custom.esbuild.outputFileExtension");
    const auto s = app.serverless(service("custom:\n  esbuild:\n    format: esm\n    outputFileExtension: .mjs\n"));
    CHECK(values(*s.functions.at(0).build, "out_extension") == std::vector<std::string>{".js=.mjs"});
}
