// Layers given as .zip files: extracted once into the project, never outside it.

#include "emulator/config/layer_zip.hpp"

#include "tests/catch.hpp"
#include "tests/fakes/zip_writer.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <fstream>
#include <sstream>

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;
using coldbrew::test::write_zip;

namespace {

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const char* layer_template = R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Libs:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: libs.zip}
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: nodejs20.x
      Layers: [!Ref Libs]
)";

}  // namespace

TEST_CASE("layer zip entries: '..', absolute paths and escaping links are refused", "[unit]") {
    using config::detail::unsafe_layer_entry;
    CHECK(unsafe_layer_entry("nodejs/node_modules/a/index.js", "").empty());
    CHECK(contains(unsafe_layer_entry("../evil", ""), "'..'"));
    CHECK(contains(unsafe_layer_entry("a/../../evil", ""), "'..'"));
    CHECK(contains(unsafe_layer_entry("/etc/passwd", ""), "absolute"));
    CHECK(unsafe_layer_entry("lib/libx.so", "libx.so.1").empty());
    CHECK(unsafe_layer_entry("lib/sub/libx.so", "../libx.so.1").empty());
    CHECK(contains(unsafe_layer_entry("lib/libx.so", "../../etc/passwd"), "outside"));
    CHECK(contains(unsafe_layer_entry("bin/sh", "/bin/sh"), "outside"));
    CHECK(contains(unsafe_layer_entry("", ""), "no name"));
}

TEST_CASE("a SAM layer ContentUri .zip is extracted once into .coldbrew/layers", "[unit]") {
    temp_app app;
    write_zip(app.dir() / "libs.zip", {{"nodejs/node_modules/greet/index.js", "module.exports = 1;\n"},
                                       {"lib/libz.so", "", "libz.so.1"}});
    const auto s = app.sam(layer_template);
    REQUIRE(s.functions.size() == 1);
    REQUIRE(s.functions[0].layer_dirs.size() == 1);
    const auto dir = s.functions[0].layer_dirs[0];
    CHECK(dir.parent_path() == app.dir() / ".coldbrew" / "layers");
    CHECK(dir.filename().string().rfind("Libs-", 0) == 0);
    CHECK(dir.filename().string().size() == 5 + 12);
    CHECK(read(dir / "nodejs/node_modules/greet/index.js") == "module.exports = 1;\n");
    CHECK(std::filesystem::read_symlink(dir / "lib/libz.so") == "libz.so.1");

    // Loaded again: the same directory, not extracted again (a marker left in it stays).
    std::ofstream(dir / "marker") << "x";
    const auto again = app.sam(layer_template);
    CHECK(again.functions[0].layer_dirs[0] == dir);
    CHECK(std::filesystem::exists(dir / "marker"));

    // A changed zip is a new directory.
    write_zip(app.dir() / "libs.zip", {{"nodejs/node_modules/greet/index.js", "module.exports = 2;\n"}});
    const auto changed = app.sam(layer_template);
    CHECK(changed.functions[0].layer_dirs[0] != dir);
    CHECK(read(changed.functions[0].layer_dirs[0] / "nodejs/node_modules/greet/index.js") ==
          "module.exports = 2;\n");
}

TEST_CASE("a layer zip with an unsafe entry is a config error and leaves nothing behind", "[unit]") {
    temp_app app;
    write_zip(app.dir() / "libs.zip", {{"python/ok.py", "x = 1\n"}, {"../escape.txt", "no"}});
    auto e = error_of([&] { app.sam(layer_template); });
    CHECK(contains(e.message(), "../escape.txt"));
    CHECK(e.where().line == 6);
    CHECK(!std::filesystem::exists(app.dir().parent_path() / "escape.txt"));
    std::error_code ec;
    CHECK(std::filesystem::is_empty(app.dir() / ".coldbrew" / "layers", ec));

    write_zip(app.dir() / "libs.zip", {{"bin/tool", "", "../../../etc/passwd"}});
    auto link = error_of([&] { app.sam(layer_template); });
    CHECK(contains(link.message(), "outside the layer"));
}

TEST_CASE("a file that is no zip is a config error", "[unit]") {
    temp_app app;
    app.write("libs.zip", "not a zip");
    auto e = error_of([&] { app.sam(layer_template); });
    CHECK(contains(e.message(), "cannot read layer zip"));
}

TEST_CASE("a serverless layer package.artifact zip is extracted", "[unit]") {
    temp_app app;
    app.mkdir("dist");
    write_zip(app.dir() / "dist" / "layer.zip", {{"python/shared.py", "X = 1\n"}});
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: python3.12
layers:
  shared:
    package: {artifact: dist/layer.zip}
functions:
  hello:
    handler: handler.hello
    layers: [{Ref: SharedLambdaLayer}]
)");
    REQUIRE(s.functions[0].layer_dirs.size() == 1);
    CHECK(read(s.functions[0].layer_dirs[0] / "python/shared.py") == "X = 1\n");
}
