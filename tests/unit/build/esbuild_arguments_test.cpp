// esbuild's command line from BuildProperties, checked against what aws-lambda-builders
// (workflows/nodejs_npm_esbuild/esbuild.py, EsbuildCommandBuilder) gives for the same
// properties: entry points, the fixed and default flags, then the properties in order.

#include "emulator/build/build.hpp"
#include "emulator/config/config_error.hpp"
#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <sys/stat.h>

using namespace coldbrew;
using property = config::build_spec::esbuild_options::property;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

property flag(std::string key, bool on) {
    property p;
    p.key = std::move(key);
    p.type = property::kind::boolean;
    p.flag = on;
    return p;
}
property text(std::string key, std::string value) {
    property p;
    p.key = std::move(key);
    p.type = property::kind::string;
    p.values = {std::move(value)};
    return p;
}
property list(std::string key, std::vector<std::string> values) {
    property p;
    p.key = std::move(key);
    p.type = property::kind::list;
    p.values = std::move(values);
    return p;
}

config::build_spec spec(std::vector<property> props) {
    config::build_spec b;
    b.method = "esbuild";
    b.source_dir = "/app/hello-world";
    b.artifacts_dir = "/app/.coldbrew/build/Hello";
    b.esbuild.entry_points = {"app.ts"};
    b.esbuild.properties = std::move(props);
    return b;
}

std::vector<std::string> args_of(const config::build_spec& b,
                                 std::vector<std::string> deps = {}) {
    build::esbuild_inputs in;
    in.entry_points = b.esbuild.entry_points;
    in.dependencies = std::move(deps);
    return build::esbuild_arguments(b, in, "/out");
}

}  // namespace

TEST_CASE("the SAM TypeScript hello-world's properties give sam build's esbuild flags", "[unit]") {
    // Minify: true, Target: es2020, Sourcemap: true, EntryPoints: [app.ts], in that order.
    const auto b = spec({flag("minify", true), text("target", "es2020"), flag("sourcemap", true)});
    CHECK(args_of(b) == std::vector<std::string>{"app.ts", "--bundle", "--platform=node",
                                                 "--outdir=/out", "--format=cjs", "--minify",
                                                 "--target=es2020", "--sourcemap"});
}

TEST_CASE("without properties esbuild gets aws-lambda-builders' defaults", "[unit]") {
    CHECK(args_of(spec({})) == std::vector<std::string>{"app.ts", "--bundle", "--platform=node",
                                                        "--outdir=/out", "--target=es2020",
                                                        "--format=cjs", "--minify"});
}

TEST_CASE("Minify false turns minification off and Format replaces cjs", "[unit]") {
    const auto args = args_of(spec({flag("minify", false), text("format", "esm")}));
    CHECK(args == std::vector<std::string>{"app.ts", "--bundle", "--platform=node",
                                           "--outdir=/out", "--target=es2020", "--format=esm"});
}

TEST_CASE("lists become one --key:item per item, keys in kebab-case", "[unit]") {
    const auto args = args_of(spec({list("external", {"@aws-sdk/*", "pg-native"}),
                                    list("out_extension", {".js=.mjs"}),
                                    list("banner", {"js=// built"}),
                                    text("main_fields", "module,main")}));
    CHECK(std::vector<std::string>(args.begin() + 7, args.end()) ==
          std::vector<std::string>{"--external:@aws-sdk/*", "--external:pg-native",
                                   "--out-extension:.js=.mjs", "--banner:js=// built",
                                   "--main-fields=module,main"});
}

TEST_CASE("Bundle, Platform, OutDir and UseNpmCi are not passed on", "[unit]") {
    const auto args = args_of(spec({flag("bundle", false), text("platform", "browser"),
                                    text("outdir", "/elsewhere"), flag("use_npm_ci", true)}));
    CHECK(args == args_of(spec({})));
}

TEST_CASE("External ./node_modules/* marks every package.json dependency external", "[unit]") {
    const auto args = args_of(spec({list("external", {"./node_modules/*"})}), {"axios", "pg"});
    CHECK(args == std::vector<std::string>{"--external:axios", "--external:pg", "app.ts",
                                           "--bundle", "--platform=node", "--outdir=/out",
                                           "--target=es2020", "--format=cjs", "--minify"});
}

TEST_CASE("entry points without an extension are found as .ts, then .js", "[unit]") {
    temp_app app;
    app.write("src/app.ts", "");
    app.write("src/lib/util.js", "");
    app.write("src/both.ts", "");
    app.write("src/both.js", "");
    config::build_spec b = spec({});
    b.source_dir = app.dir() / "src";
    b.esbuild.entry_points = {"app", "lib/util", "both", "app.ts"};
    CHECK(build::resolve_entry_points(b, "Hello") ==
          std::vector<std::string>{"app.ts", "lib/util.js", "both.ts", "app.ts"});
    b.esbuild.entry_points = {"missing"};
    const auto e = error_of([&] { build::resolve_entry_points(b, "Hello"); });
    CHECK(coldbrew::test::contains(e.message(), "entry point"));
    b.esbuild.entry_points = {"app.js"};  // an explicit extension is taken as written
    CHECK_THROWS_AS(build::resolve_entry_points(b, "Hello"), config::config_error);
}

TEST_CASE("esbuild is found in node_modules/.bin of the code or a parent, then on PATH", "[unit]") {
    temp_app app;
    const auto code = app.mkdir("project/functions/hello");
    CHECK(build::find_esbuild(code, "").empty());

    const auto on_path = app.write("bin/esbuild", "#!/bin/sh\n");
    ::chmod(on_path.c_str(), 0755);
    CHECK(build::find_esbuild(code, "/nonexistent:" + (app.dir() / "bin").string()) == on_path);

    const auto in_parent = app.write("project/node_modules/.bin/esbuild", "#!/bin/sh\n");
    ::chmod(in_parent.c_str(), 0755);
    CHECK(build::find_esbuild(code, (app.dir() / "bin").string()) == in_parent);

    const auto own = app.write("project/functions/hello/node_modules/.bin/esbuild", "#!/bin/sh\n");
    CHECK(build::find_esbuild(code, "") == in_parent);  // not executable: skipped
    ::chmod(own.c_str(), 0755);
    CHECK(build::find_esbuild(code, "") == own);
}

TEST_CASE("a missing esbuild is a config error naming npm install", "[unit]") {
    temp_app app;
    const auto code = app.mkdir("hello-world");
    app.write("hello-world/package.json", "{\"dependencies\":{\"esbuild\":\"^0.14.14\"}}");
    app.write("hello-world/app.ts", "");
    config::function fn;
    fn.name = "HelloWorldFunction";
    fn.build = spec({});
    fn.build->source_dir = code;
    fn.build->path = "Resources.HelloWorldFunction.Metadata.BuildMethod";
    build::build_environment env;
    env.env = {"PATH=/nonexistent"};
    const auto e = error_of([&] { build::build_command(fn, "/out", env); });
    CHECK(e.key_path() == "Resources.HelloWorldFunction.Metadata.BuildMethod");
    CHECK(coldbrew::test::contains(e.message(), "HelloWorldFunction"));
    CHECK(coldbrew::test::contains(e.message(), "npm install"));
}

TEST_CASE("package.json dependencies are read by name; a bad file gives none", "[unit]") {
    temp_app app;
    const auto p = app.write("package.json", R"({"dependencies":{"b":"1","a":"2"},"devDependencies":{"x":"1"}})");
    auto deps = build::package_dependencies(p);
    std::sort(deps.begin(), deps.end());
    CHECK(deps == std::vector<std::string>{"a", "b"});
    CHECK(build::package_dependencies(app.write("bad.json", "{not json")).empty());
    CHECK(build::package_dependencies(app.dir() / "absent.json").empty());
}
