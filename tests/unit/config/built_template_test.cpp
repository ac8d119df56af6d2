// `sam build` output served as sam local serves it: .aws-sam/build/template.yaml replaces the
// project's template.yaml, with coldbrew.yaml still read from the project.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

std::string sam_template(const std::string& code_uri, const std::string& extra = "") {
    return "AWSTemplateFormatVersion: '2010-09-09'\n"
           "Transform: AWS::Serverless-2016-10-31\n"
           "Resources:\n"
           "  HelloFunction:\n"
           "    Type: AWS::Serverless::Function\n"
           "    Properties:\n"
           "      Runtime: nodejs20.x\n"
           "      Handler: index.handler\n"
           "      CodeUri: " + code_uri + "\n" + extra;
}

// A project with its source in src/ and sam build's copy in .aws-sam/build/HelloFunction.
void write_built_project(const temp_app& app) {
    app.mkdir("src");
    app.write("template.yaml", sam_template("src/"));
    app.mkdir(".aws-sam/build/HelloFunction");
    app.write(".aws-sam/build/template.yaml", sam_template("HelloFunction"));
    app.write("coldbrew.yaml", "functions:\n  HelloFunction:\n    memory_mb: 512\n");
}

}  // namespace

TEST_CASE("a built SAM project is served from .aws-sam/build", "[unit]") {
    temp_app app;
    write_built_project(app);
    const auto built = app.dir() / ".aws-sam/build";
    for (const auto& given : {app.dir(), app.dir() / "template.yaml", built / "template.yaml"}) {
        INFO(given.string());
        const auto s = config::load_stack(given, {});
        CHECK(s.template_file == built / "template.yaml");
        REQUIRE(s.built_from);
        CHECK(*s.built_from == app.dir() / "template.yaml");
        REQUIRE(s.functions.size() == 1);
        CHECK(s.functions[0].code_dir == built / "HelloFunction");
        REQUIRE(s.coldbrew_file);
        CHECK(*s.coldbrew_file == app.dir() / "coldbrew.yaml");
        CHECK(s.functions[0].memory_mb == 512);
    }
}

TEST_CASE("a template named otherwise is loaded as named, beside a build", "[unit]") {
    temp_app app;
    write_built_project(app);
    app.write("other.yaml", sam_template("src/"));
    const auto s = config::load_stack(app.dir() / "other.yaml", {});
    CHECK(s.template_file == app.dir() / "other.yaml");
    CHECK_FALSE(s.built_from);
    CHECK(s.functions.at(0).code_dir == app.dir() / "src");
}

TEST_CASE("a project without a build loads its own template", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template("src/"));
    CHECK(s.template_file == app.dir() / "template.yaml");
    CHECK_FALSE(s.built_from);
}

TEST_CASE("a built template older than the project's gets a warning", "[unit]") {
    temp_app app;
    write_built_project(app);
    const auto built = app.dir() / ".aws-sam/build/template.yaml";
    const auto source = app.dir() / "template.yaml";
    // File times set, not waited for.
    std::filesystem::last_write_time(built, std::filesystem::last_write_time(source) -
                                                std::chrono::hours(1));
    auto s = config::load_stack(app.dir(), {});
    CHECK(any_contains(s.warnings, built.string() + ": older than " + source.string()));

    std::filesystem::last_write_time(built, std::filesystem::last_write_time(source) +
                                                std::chrono::hours(1));
    s = config::load_stack(app.dir(), {});
    CHECK_FALSE(any_contains(s.warnings, "older than"));
}

TEST_CASE("an error in the built template points at the built file", "[unit]") {
    temp_app app;
    write_built_project(app);
    app.write(".aws-sam/build/template.yaml",
              sam_template("HelloFunction", "      Timeout: soon\n"));
    const auto e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(e.where().file == (app.dir() / ".aws-sam/build/template.yaml").string());
    CHECK(e.where().line == 10);
}

TEST_CASE("serverless package patterns load in serverless's order", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
package:
  exclude: [tests/**, '!tests/fixtures/keep.json']
  patterns: ['!docs/**', docs/api.md]
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello:
    handler: handler.hello
    package:
      individually: true
      patterns: ['!src/other/**']
  world:
    handler: handler.world
    package:
      patterns: ['!ignored/**']
)");
    const std::vector<std::string> defaults = {
        "!.git/**",      "!.gitignore",    "!.DS_Store",
        "!npm-debug.log", "!yarn-*.log",    "!.serverless/**",
        "!.serverless_plugins/**", "!serverless.yml"};
    auto expected = defaults;
    for (const char* p : {"!tests/**", "tests/fixtures/keep.json", "!docs/**", "docs/api.md",
                          "!src/other/**"})
        expected.push_back(p);
    REQUIRE(s.functions.size() == 2);
    REQUIRE(s.functions[0].package_patterns);
    CHECK(*s.functions[0].package_patterns == expected);
    // Not packaged individually: the function's own patterns are ignored, with a warning.
    expected.pop_back();
    REQUIRE(s.functions[1].package_patterns);
    CHECK(*s.functions[1].package_patterns == expected);
    CHECK(any_contains(s.warnings, "functions.world.package"));
    CHECK(s.functions[0].exclude_dev_dependencies);
}

TEST_CASE("serverless package.excludeDevDependencies: false keeps them", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
package: {excludeDevDependencies: false}
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello: {handler: handler.hello}
)");
    CHECK_FALSE(s.functions.at(0).exclude_dev_dependencies);
    const auto sam = [] {
        temp_app a;
        return a.sam(sam_template("src/"));
    }();
    CHECK_FALSE(sam.functions.at(0).package_patterns);  // SAM: sam build's rules
}
