// The watch-mode rebuilder and the start-up build, driven with a stand-in esbuild (a shell
// script in node_modules/.bin that writes its --outdir and counts its runs outside the
// sources, which are the build's inputs): builds land
// whole in the artifacts directory, requests during a build coalesce into one more, a failure
// keeps the last good build, and shutdown ends a running build.

#include "emulator/build/build.hpp"
#include "emulator/config/config_error.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

struct capture_sink final : telemetry::log_sink {
    std::vector<std::string> lines;
    void write(std::string_view function, std::string_view line) override {
        lines.push_back(std::string(function) + " " + std::string(line));
    }
};

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// An app whose fake esbuild runs `body` (sh) after setting OUT to its --outdir.
config::function fake_esbuild_app(const temp_app& app, const std::string& body) {
    app.write("src/app.ts", "");
    const auto script = app.write("src/node_modules/.bin/esbuild",
                                  "#!/bin/sh\n"
                                  "for a in \"$@\"; do case $a in --outdir=*) OUT=${a#--outdir=};; esac; done\n"
                                  "echo run >> \"$(dirname \"$0\")/../../../runs\"\n" +
                                      body);
    ::chmod(script.c_str(), 0755);
    config::function fn;
    fn.name = "Hello";
    fn.code_dir = app.dir() / "src";
    config::build_spec b;
    b.method = "esbuild";
    b.source_dir = app.dir() / "src";
    b.artifacts_dir = app.dir() / ".coldbrew" / "build" / "Hello";
    b.esbuild.entry_points = {"app.ts"};
    b.path = "Resources.Hello.Metadata.BuildMethod";
    fn.build = b;
    return fn;
}

build::build_environment env() {
    build::build_environment e;
    e.env = {"PATH=/usr/bin:/bin"};
    return e;
}

std::size_t runs(const temp_app& app) {
    const std::string text = read(app.dir() / "runs");
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("build_all builds once, points code_dir at the build and skips an unchanged one", "[unit]") {
    temp_app app;
    config::stack s;
    s.functions.push_back(fake_esbuild_app(app, "echo 'exports.x=1' > \"$OUT/app.js\"\n"));
    capture_sink logs;
    testing::manual_clock clock;
    build::build_all(s, logs, clock, env());
    const auto artifacts = app.dir() / ".coldbrew" / "build" / "Hello";
    CHECK(s.functions[0].code_dir == artifacts);
    CHECK(read(artifacts / "app.js") == "exports.x=1\n");
    CHECK_FALSE(std::filesystem::exists(artifacts.string() + ".staging"));
    CHECK(runs(app) == 1);

    s.functions[0].code_dir = app.dir() / "src";
    build::build_all(s, logs, clock, env());
    CHECK(runs(app) == 1);
    CHECK(s.functions[0].code_dir == artifacts);

    app.write("src/app.ts", "changed");
    build::build_all(s, logs, clock, env());
    CHECK(runs(app) == 2);
}

TEST_CASE("a failing start-up build is a config error with its output", "[unit]") {
    temp_app app;
    config::stack s;
    s.functions.push_back(fake_esbuild_app(app, "echo 'app.ts:1: no' >&2\nexit 1\n"));
    capture_sink logs;
    testing::manual_clock clock;
    const auto e = error_of([&] { build::build_all(s, logs, clock, env()); });
    CHECK(e.key_path() == "Resources.Hello.Metadata.BuildMethod");
    CHECK(contains(e.message(), "Hello"));
    CHECK(contains(e.message(), "app.ts:1: no"));
    CHECK(contains(e.message(), "exit status 1"));
    CHECK_FALSE(std::filesystem::exists(app.dir() / ".coldbrew" / "build" / "Hello"));
}

TEST_CASE("rebuild requests during a build coalesce into one more build", "[unit]") {
    temp_app app;
    const auto fn = fake_esbuild_app(app, "echo built > \"$OUT/app.js\"\n");
    uv_loop_t loop;
    uv_loop_init(&loop);
    capture_sink logs;
    testing::manual_clock clock;
    std::vector<bool> results;
    {
        build::builder b(&loop, logs, clock, env());
        for (int i = 0; i < 3; ++i)
            b.rebuild(fn, [&](bool ok, std::string) { results.push_back(ok); });
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    uv_loop_close(&loop);
    CHECK(results == std::vector<bool>{true, true, true});
    CHECK(runs(app) == 2);
    CHECK(read(app.dir() / ".coldbrew" / "build" / "Hello" / "app.js") == "built\n");
}

TEST_CASE("a failed rebuild keeps the last good build", "[unit]") {
    temp_app app;
    auto fn = fake_esbuild_app(app,
                               "if [ -f \"$(dirname \"$0\")/../../fail\" ]; then echo broken >&2; exit 1; fi\n"
                               "echo good > \"$OUT/app.js\"\n");
    uv_loop_t loop;
    uv_loop_init(&loop);
    capture_sink logs;
    testing::manual_clock clock;
    std::vector<std::pair<bool, std::string>> results;
    {
        build::builder b(&loop, logs, clock, env());
        b.rebuild(fn, [&](bool ok, std::string m) { results.emplace_back(ok, m); });
        uv_run(&loop, UV_RUN_DEFAULT);
        app.write("src/fail", "");
        b.rebuild(fn, [&](bool ok, std::string m) { results.emplace_back(ok, m); });
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    uv_loop_close(&loop);
    REQUIRE(results.size() == 2);
    CHECK(results[0].first);
    CHECK_FALSE(results[1].first);
    CHECK(contains(results[1].second, "broken"));
    CHECK(read(app.dir() / ".coldbrew" / "build" / "Hello" / "app.js") == "good\n");
}

TEST_CASE("shutdown ends a running build and its waiters hear of it", "[unit]") {
    temp_app app;
    const auto fn = fake_esbuild_app(app, "echo $$ > \"$(dirname \"$0\")/../../pid\"\nexec sleep 60\n");
    uv_loop_t loop;
    uv_loop_init(&loop);
    capture_sink logs;
    testing::manual_clock clock;
    std::vector<bool> results;
    {
        build::builder b(&loop, logs, clock, env());
        b.rebuild(fn, [&](bool ok, std::string) { results.push_back(ok); });
        b.rebuild(fn, [&](bool ok, std::string) { results.push_back(ok); });  // pending
        // Until the script has written its pid: it runs.
        while (!std::filesystem::exists(app.dir() / "src" / "pid") ||
               read(app.dir() / "src" / "pid").empty())
            uv_run(&loop, UV_RUN_NOWAIT);
        b.shutdown();
    }
    // The killed child is collected; the loop ends without waiting out the sleep.
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    CHECK(results == std::vector<bool>{false, false});
    const int pid = std::atoi(read(app.dir() / "src" / "pid").c_str());
    REQUIRE(pid > 0);
    CHECK(::kill(pid, 0) != 0);
}

TEST_CASE("a build whose artifacts are inside its sources (CodeUri .) is still up to date", "[unit]") {
    temp_app app;
    auto fn = fake_esbuild_app(app, "echo ok > \"$OUT/app.js\"\n");
    // The project is the code directory: .coldbrew/build lands among the inputs.
    fn.build->artifacts_dir = app.dir() / "src" / ".coldbrew" / "build" / "Hello";
    config::stack s;
    s.functions.push_back(fn);
    capture_sink logs;
    testing::manual_clock clock;
    build::build_all(s, logs, clock, env());
    build::build_all(s, logs, clock, env());
    CHECK(runs(app) == 1);
    CHECK(read(fn.build->artifacts_dir / "app.js") == "ok\n");
}
