// A function's handler resolved as its runtime resolves it, on scratch code directories.

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "emulator/functions/handler_check.hpp"
#include "tests/catch.hpp"

namespace fs = std::filesystem;
using coldbrew::config::build_spec;
using coldbrew::config::function;
using coldbrew::functions::handler_warning;
using coldbrew::functions::resolve_handler;

namespace {

class scratch {
public:
    scratch() {
        std::string tmpl = (fs::temp_directory_path() / "coldbrew-handler-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        dir_ = tmpl;
    }
    ~scratch() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path operator/(const std::string& rel) const { return dir_ / rel; }
    fs::path touch(const std::string& rel, bool executable = false) const {
        const fs::path p = dir_ / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << "x\n";
        ::chmod(p.c_str(), executable ? 0755 : 0644);
        return p;
    }
    const fs::path& path() const { return dir_; }

private:
    fs::path dir_;
};

function make(const std::string& runtime, const std::string& handler, const fs::path& code) {
    function fn;
    fn.name = "Fn";
    fn.runtime = runtime;
    fn.handler = handler;
    fn.code_dir = code;
    return fn;
}

bool found(const function& fn) {
    const auto r = resolve_handler(fn);
    return r.checked && r.found;
}

}  // namespace

TEST_CASE("handler: node tries the name as it is, then .js, .mjs, .cjs, then a package", "[unit]") {
    scratch code;
    auto fn = make("nodejs20.x", "index.handler", code.path());
    SECTION("missing: every file named, in the runtime's order") {
        const auto r = resolve_handler(fn);
        CHECK(r.checked);
        CHECK_FALSE(r.found);
        REQUIRE(r.looked_for.size() == 5);
        CHECK(r.looked_for[0] == code / "index");
        CHECK(r.looked_for[1] == code / "index.js");
        CHECK(r.looked_for[2] == code / "index.mjs");
        CHECK(r.looked_for[3] == code / "index.cjs");
        CHECK(r.looked_for[4] == code / "node_modules/index");
        const auto w = handler_warning(fn);
        REQUIRE(w);
        CHECK(w->find("function Fn (nodejs20.x): handler index.handler not found") == 0);
        CHECK(w->find((code / "index.mjs").string()) != std::string::npos);
        CHECK(w->find("Runtime.ImportModuleError") != std::string::npos);
    }
    SECTION(".js") {
        code.touch("index.js");
        CHECK(found(fn));
        CHECK_FALSE(handler_warning(fn));
    }
    SECTION(".mjs under a module root, the function name with dots") {
        code.touch("src/handlers/app.mjs");
        fn.handler = "src/handlers/app.routes.get";
        CHECK(found(fn));
    }
    SECTION(".cjs") {
        code.touch("index.cjs");
        CHECK(found(fn));
    }
    SECTION("a file without an extension") {
        code.touch("index");
        CHECK(found(fn));
    }
    SECTION("a file of another name is not the module") {
        code.touch("app.js");
        code.touch("index.ts");
        CHECK_FALSE(found(fn));
    }
    SECTION("a package in node_modules, or in a layer's nodejs/node_modules") {
        SECTION("code") { fs::create_directories(code / "node_modules/index"); }
        SECTION("layer") {
            fs::create_directories(code / "layer/nodejs/node_modules/index");
            fn.layer_dirs = {code / "layer"};
        }
        CHECK(found(fn));
    }
    SECTION("malformed handlers are named as such") {
        fn.handler = GENERATE(std::string("index"), std::string("../up.handler"),
                              std::string(".handler"));
        const auto w = handler_warning(fn);
        REQUIRE(w);
        CHECK(w->find("is not of the form module.function") != std::string::npos);
        CHECK(w->find("Runtime.MalformedHandlerName") != std::string::npos);
    }
}

TEST_CASE("handler: python imports the module from the code directory, then the layers",
          "[unit]") {
    scratch code;
    auto fn = make("python3.12", "app.handler", code.path());
    SECTION("missing: the module file, the package and the compiled module named") {
        const auto r = resolve_handler(fn);
        CHECK(r.checked);
        CHECK_FALSE(r.found);
        REQUIRE(r.looked_for.size() >= 3);
        CHECK(r.looked_for[0] == code / "app.py");
        CHECK(r.looked_for[1] == code / "app/__init__.py");
        CHECK(r.looked_for[2] == code / "app.pyc");
        const auto w = handler_warning(fn);
        REQUIRE(w);
        CHECK(w->find((code / "app.py").string()) != std::string::npos);
    }
    SECTION("a module file") {
        code.touch("app.py");
        CHECK(found(fn));
    }
    SECTION("a dotted module in a package, with or without __init__.py") {
        fn.handler = "pkg.sub.mod.lambda_handler";
        code.touch("pkg/sub/mod.py");
        CHECK(found(fn));
        code.touch("pkg/__init__.py");
        code.touch("pkg/sub/__init__.py");
        CHECK(found(fn));
    }
    SECTION("the path form pkg/mod") {
        fn.handler = "pkg/mod.handler";
        code.touch("pkg/mod.py");
        CHECK(found(fn));
    }
    SECTION("a package as the module") {
        code.touch("app/__init__.py");
        CHECK(found(fn));
    }
    SECTION("a compiled extension module") {
        code.touch("app.cpython-312-x86_64-linux-gnu.so");
        CHECK(found(fn));
    }
    SECTION("a module of another package is not it") {
        fn.handler = "pkg.mod.handler";
        code.touch("mod.py");
        code.touch("pkg/other.py");
        CHECK_FALSE(found(fn));
    }
    SECTION("a layer's python and site-packages directories") {
        SECTION("python") { code.touch("layer/python/app.py"); }
        SECTION("site-packages") { code.touch("layer/python/lib/python3.12/site-packages/app.py"); }
        fn.layer_dirs = {code / "layer"};
        CHECK(found(fn));
    }
    SECTION("no dot at all") {
        fn.handler = "app";
        const auto w = handler_warning(fn);
        REQUIRE(w);
        CHECK(w->find("Runtime.MalformedHandlerName") != std::string::npos);
    }
}

TEST_CASE("handler: a custom runtime needs an executable bootstrap", "[unit]") {
    scratch code;
    auto fn = make("provided.al2023", "bootstrap", code.path());
    SECTION("missing") {
        const auto w = handler_warning(fn);
        REQUIRE(w);
        CHECK(w->find("no executable bootstrap: looked for " + (code / "bootstrap").string()) !=
              std::string::npos);
        CHECK(w->find("Runtime.InvalidEntrypoint") != std::string::npos);
    }
    SECTION("not executable") {
        code.touch("bootstrap", false);
        CHECK_FALSE(found(fn));
    }
    SECTION("executable") {
        code.touch("bootstrap", true);
        CHECK(found(fn));
    }
    SECTION("from a layer, the last layer's first") {
        code.touch("l1/bootstrap", true);
        fn.layer_dirs = {code / "l1", code / "l2"};
        const auto r = resolve_handler(fn);
        CHECK(r.found);
        REQUIRE(r.looked_for.size() == 3);
        CHECK(r.looked_for[1] == code / "l2/bootstrap");
        CHECK(r.looked_for[2] == code / "l1/bootstrap");
    }
}

TEST_CASE("handler: a built function is resolved in its artifacts, or skipped before the build",
          "[unit]") {
    scratch app;
    auto fn = make("nodejs20.x", "app.lambdaHandler", app / "hello-world");
    app.touch("hello-world/app.ts");
    build_spec b;
    b.method = "esbuild";
    b.source_dir = app / "hello-world";
    b.artifacts_dir = app / ".coldbrew/build/Fn";
    fn.build = b;
    SECTION("not built yet: skipped, with the reason") {
        const auto r = resolve_handler(fn);
        CHECK_FALSE(r.checked);
        CHECK(r.skipped.find("esbuild") != std::string::npos);
        CHECK_FALSE(handler_warning(fn));
    }
    SECTION("built: looked for in the artifacts") {
        app.touch(".coldbrew/build/Fn/app.js");
        CHECK(found(fn));
    }
    SECTION("served from the artifacts (up, after the build)") {
        fn.code_dir = b.artifacts_dir;
        fs::create_directories(fn.code_dir);
        CHECK_FALSE(found(fn));
        app.touch(".coldbrew/build/Fn/app.js");
        CHECK(found(fn));
    }
}

TEST_CASE("handler: image functions and other runtimes are not checked", "[unit]") {
    scratch code;
    auto fn = make("java21", "example.Handler::handleRequest", code.path());
    CHECK_FALSE(resolve_handler(fn).checked);
    CHECK_FALSE(handler_warning(fn));
    fn = make("nodejs20.x", "index.handler", code.path());
    fn.package_type = "image";
    CHECK_FALSE(resolve_handler(fn).checked);
    CHECK_FALSE(handler_warning(fn));
}
