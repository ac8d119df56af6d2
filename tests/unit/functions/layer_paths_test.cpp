#include "emulator/functions/layer_paths.hpp"

#include "emulator/functions/launcher.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/catch.hpp"

using coldbrew::functions::layer_paths_for;
using coldbrew::functions::prepend_search_path;

TEST_CASE("node layers: node<major> before node_modules, the last layer first", "[unit]") {
    auto p = layer_paths_for("nodejs20.x", {"/app/a", "/app/b"});
    REQUIRE(p.node_path == std::vector<std::string>{
                               "/app/b/nodejs/node20/node_modules", "/app/b/nodejs/node_modules",
                               "/app/a/nodejs/node20/node_modules", "/app/a/nodejs/node_modules"});
    REQUIRE(p.python_path.empty());
    REQUIRE(p.path == std::vector<std::string>{"/app/b/bin", "/app/a/bin"});
    REQUIRE(p.ld_library_path == std::vector<std::string>{"/app/b/lib", "/app/a/lib"});
}

TEST_CASE("python layers: the runtime's site-packages before python/", "[unit]") {
    auto p = layer_paths_for("python3.12", {"/l1"});
    REQUIRE(p.python_path ==
            std::vector<std::string>{"/l1/python/lib/python3.12/site-packages", "/l1/python"});
    REQUIRE(p.node_path.empty());
    REQUIRE(p.path == std::vector<std::string>{"/l1/bin"});
    REQUIRE(p.ld_library_path == std::vector<std::string>{"/l1/lib"});
}

TEST_CASE("custom runtimes get bin and lib only; no layers give nothing", "[unit]") {
    auto p = layer_paths_for("provided.al2023", {"/l1"});
    REQUIRE(p.node_path.empty());
    REQUIRE(p.python_path.empty());
    REQUIRE(p.path == std::vector<std::string>{"/l1/bin"});
    auto none = layer_paths_for("nodejs22.x", {});
    REQUIRE(none.node_path.empty());
    REQUIRE(none.path.empty());
    REQUIRE(none.ld_library_path.empty());
}

TEST_CASE("a nodejs runtime without a major version lists node_modules only", "[unit]") {
    auto p = layer_paths_for("nodejs", {"/l"});
    REQUIRE(p.node_path == std::vector<std::string>{"/l/nodejs/node_modules"});
}

TEST_CASE("search paths are put before what the variable held", "[unit]") {
    REQUIRE(prepend_search_path({"/a", "/b"}, "/usr/bin:/bin") == "/a:/b:/usr/bin:/bin");
    REQUIRE(prepend_search_path({"/a"}, "") == "/a");
    REQUIRE(prepend_search_path({}, "/usr/bin") == "/usr/bin");
}

TEST_CASE("a custom runtime's bootstrap from layers is the last layer's, as /opt holds it", "[unit]") {
    const auto root = std::filesystem::temp_directory_path() /
                      ("coldbrew-layer-bootstrap-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    for (const char* layer : {"first", "second"}) {
        std::filesystem::create_directories(root / layer);
        std::ofstream(root / layer / "bootstrap") << "#!/bin/sh\n";
        std::filesystem::permissions(root / layer / "bootstrap", std::filesystem::perms::owner_all);
    }
    std::filesystem::create_directories(root / "code");
    coldbrew::config::function fn;
    fn.runtime = "provided.al2023";
    fn.code_dir = root / "code";
    fn.layer_dirs = {root / "first", root / "second"};
    const auto o = coldbrew::functions::launcher_for(fn, root);
    std::filesystem::remove_all(root);
    CHECK(o.file == (root / "second" / "bootstrap").string());
}
