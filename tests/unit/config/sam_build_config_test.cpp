// Metadata.BuildMethod and BuildProperties read as `sam build` reads them
// (samcli/lib/build/app_builder.py; keys normalized to snake_case by
// samcli/lib/utils/resource_metadata_normalizer.py).

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using property = config::build_spec::esbuild_options::property;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

std::string with_metadata(const std::string& metadata, const std::string& runtime = "nodejs20.x") {
    return "AWSTemplateFormatVersion: '2010-09-09'\n"
           "Transform: AWS::Serverless-2016-10-31\n"
           "Resources:\n"
           "  HelloWorldFunction:\n"
           "    Type: AWS::Serverless::Function\n"
           "    Properties:\n"
           "      CodeUri: src/\n"
           "      Handler: app.lambdaHandler\n"
           "      Runtime: " + runtime + "\n"
           "    Metadata:\n" + metadata;
}

}  // namespace

TEST_CASE("BuildMethod esbuild reads its BuildProperties in template order", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_metadata("      BuildMethod: esbuild\n"
                                         "      BuildProperties:\n"
                                         "        Minify: true\n"
                                         "        Target: \"es2020\"\n"
                                         "        Sourcemap: false\n"
                                         "        OutExtension:\n"
                                         "          - .js=.mjs\n"
                                         "        EntryPoints:\n"
                                         "        - app.ts\n"));
    const auto& fn = s.functions.at(0);
    REQUIRE(fn.build);
    CHECK(fn.build->method == "esbuild");
    CHECK(fn.build->source_dir == app.dir() / "src");
    CHECK(fn.build->artifacts_dir == app.dir() / ".coldbrew" / "build" / "HelloWorldFunction");
    CHECK(fn.build->path == "Resources.HelloWorldFunction.Metadata.BuildMethod");
    CHECK(fn.build->esbuild.entry_points == std::vector<std::string>{"app.ts"});
    const auto& p = fn.build->esbuild.properties;
    REQUIRE(p.size() == 4);
    CHECK(p[0].key == "minify");
    CHECK(p[0].type == property::kind::boolean);
    CHECK(p[0].flag);
    CHECK(p[1].key == "target");
    CHECK(p[1].type == property::kind::string);
    CHECK(p[1].values == std::vector<std::string>{"es2020"});
    CHECK(p[2].key == "sourcemap");
    CHECK_FALSE(p[2].flag);
    CHECK(p[3].key == "out_extension");
    CHECK(p[3].type == property::kind::list);
    CHECK(p[3].values == std::vector<std::string>{".js=.mjs"});
    // Until the build has run, the function's code is its source.
    CHECK(fn.code_dir == app.dir() / "src");
}

TEST_CASE("BuildProperties of the wrong type are config errors at the key", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(with_metadata("      BuildMethod: esbuild\n"
                              "      BuildProperties:\n"
                              "        EntryPoints: [app.ts]\n"
                              "        Target: 2020\n"));
    });
    CHECK(e.key_path() == "Resources.HelloWorldFunction.Metadata.BuildProperties.Target");
    CHECK(e.where().line == 14);
    e = error_of([&] {
        app.sam(with_metadata("      BuildMethod: esbuild\n"
                              "      BuildProperties:\n"
                              "        EntryPoints: [app.ts]\n"
                              "        Define: {a: b}\n"));
    });
    CHECK(contains(e.message(), "BuildProperties.Define"));
    e = error_of([&] {
        app.sam(with_metadata("      BuildMethod: esbuild\n"
                              "      BuildProperties:\n"
                              "        EntryPoints: app.ts\n"));
    });
    CHECK(contains(e.message(), "EntryPoints must be a list"));
    e = error_of([&] { app.sam(with_metadata("      BuildMethod: esbuild\n")); });
    CHECK(contains(e.message(), "EntryPoints"));
    e = error_of([&] {
        app.sam(with_metadata("      BuildMethod: esbuild\n"
                              "      BuildProperties: [a]\n"));
    });
    CHECK(contains(e.message(), "BuildProperties must be a mapping"));
    e = error_of([&] {
        app.sam(with_metadata("      BuildMethod: esbuild\n"
                              "      BuildProperties:\n"
                              "        EntryPoints: [app.ts]\n"
                              "        Minify: yes-please\n"));
    });
    CHECK(e.key_path() == "Resources.HelloWorldFunction.Metadata.BuildProperties.Minify");
    CHECK(contains(e.message(), "must be true or false"));
}

TEST_CASE("BuildMethod makefile builds into the function's artifacts directory", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_metadata("      BuildMethod: makefile\n", "provided.al2023"));
    const auto& fn = s.functions.at(0);
    REQUIRE(fn.build);
    CHECK(fn.build->method == "makefile");
    CHECK(fn.build->artifacts_dir == app.dir() / ".coldbrew" / "build" / "HelloWorldFunction");
    CHECK(s.ignored.empty());
}

TEST_CASE("build methods coldbrew does not run are listed as not emulated", "[unit]") {
    temp_app app;
    auto s = app.sam(with_metadata("      BuildMethod: go1.x\n", "provided.al2023"));
    CHECK_FALSE(s.functions.at(0).build);
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].kind == "build");
    CHECK(contains(s.ignored[0].what, "go1.x"));
    CHECK(contains(s.ignored[0].fix, "sam build"));

    s = app.sam(with_metadata("      BuildMethod: nodejs20.x\n"));
    CHECK_FALSE(s.functions.at(0).build);
    REQUIRE(s.ignored.size() == 1);
    CHECK(contains(s.ignored[0].fix, "install the dependencies"));
}

TEST_CASE("a stack served from .aws-sam/build is not built again", "[unit]") {
    temp_app app;
    const std::string metadata = "      BuildMethod: esbuild\n"
                                 "      BuildProperties:\n"
                                 "        EntryPoints: [app.ts]\n";
    app.mkdir("src");
    app.write("template.yaml", with_metadata(metadata));
    app.mkdir(".aws-sam/build/src");
    app.write(".aws-sam/build/template.yaml", with_metadata(metadata));
    const auto s = config::load_stack(app.dir(), {});
    REQUIRE(s.built_from);
    CHECK_FALSE(s.functions.at(0).build);
    CHECK(s.ignored.empty());
}
