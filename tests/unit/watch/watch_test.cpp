#include <unistd.h>

#include <fstream>

#include "emulator/watch/watch.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"

namespace fs = std::filesystem;
using namespace coldbrew;
using namespace std::chrono_literals;

TEST_CASE("watch: editors' files, caches and tool output are ignored", "[unit]") {
    for (const char* p : {"__pycache__/app.cpython-312.pyc", "lib/__pycache__", "app.pyc",
                          "node_modules/.cache/esbuild/x.js", ".app.py.swp", "src/.index.js.swo",
                          ".app.py.swx", "4913", "src/4913", "app.py~", "#app.py#", ".#app.py",
                          "index.js___jb_tmp___", "index.js___jb_old___", ".git/index",
                          ".aws-sam/build/template.yaml", ".serverless/x.zip", ".esbuild/out.js",
                          ".coldbrew/build/Hello/app.js"})
        CHECK(watch::ignored(fs::path(p)));
    for (const char* p : {"app.py", "index.js", "src/handler.mjs", "bootstrap",
                          "node_modules/lodash/index.js", "package.json", "Makefile", ".env",
                          "swap.py", "my~file.js", "#notes", "lib/49130", "requirements.txt"})
        CHECK_FALSE(watch::ignored(fs::path(p)));
}

TEST_CASE("watch: a root ignores what is outside it and its excluded directories", "[unit]") {
    watch::root r{"/p/app", {"Hello"}, {"/p/app/.build-out", "/p/app/trace.jsonl"}};
    CHECK_FALSE(watch::ignored(r, "/p/app/index.js"));
    CHECK_FALSE(watch::ignored(r, "/p/app/./lib/../index.js"));
    CHECK(watch::ignored(r, "/p/other/index.js"));
    CHECK(watch::ignored(r, "/p/app-2/index.js"));
    CHECK(watch::ignored(r, "/p/app/.build-out/index.js"));
    CHECK(watch::ignored(r, "/p/app/trace.jsonl"));
    CHECK(watch::ignored(r, "/p/app/__pycache__/x.pyc"));
}

TEST_CASE("watch: functions sharing a directory share one root; layers and build inputs are "
          "watched, build output is not",
          "[unit]") {
    config::stack s;
    config::function a, b, c;
    a.name = "A";
    a.code_dir = "/p";
    a.layer_dirs = {"/p/layers/shared"};
    b.name = "B";
    b.code_dir = "/p/./";
    c.name = "C";
    c.code_dir = "/p/.coldbrew/build/C";
    c.build = config::build_spec{};
    c.build->source_dir = "/p/c-src";
    c.build->artifacts_dir = "/p/.coldbrew/build/C";
    s.functions = {a, b, c};
    s.settings.decision_log = "/p/decisions.jsonl";
    const auto roots = watch::watch_roots(s);
    REQUIRE(roots.size() == 3);
    CHECK(roots[0].dir == fs::path("/p"));
    CHECK(roots[0].functions == std::vector<std::string>{"A", "B"});
    CHECK(roots[1].dir == fs::path("/p/layers/shared"));
    CHECK(roots[1].functions == std::vector<std::string>{"A"});
    CHECK(roots[2].dir == fs::path("/p/c-src"));
    CHECK(roots[2].functions == std::vector<std::string>{"C"});
    CHECK(watch::ignored(roots[0], "/p/decisions.jsonl"));
    CHECK(watch::ignored(roots[0], "/p/.coldbrew/build/C/app.js"));
    CHECK_FALSE(watch::ignored(roots[0], "/p/app.js"));
}

TEST_CASE("watch: the debouncer gives one batch per quiet period, capped", "[unit]") {
    watch::debouncer d(200ms, 1000ms);
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    CHECK_FALSE(d.due());
    CHECK(d.take(t0).empty());

    d.add("a.js", t0);
    d.add("b.js", t0 + 100ms);
    d.add("a.js", t0 + 150ms);
    REQUIRE(d.due());
    CHECK(*d.due() == t0 + 350ms);
    CHECK(d.take(t0 + 349ms).empty());
    CHECK(d.pending());
    CHECK(d.take(t0 + 350ms) == std::vector<fs::path>{"a.js", "b.js"});
    CHECK_FALSE(d.pending());

    // A write every 100 ms never leaves 200 ms of quiet; the cap still fires one second after
    // the first.
    const auto t1 = t0 + 10s;
    for (int i = 0; i < 15; ++i) d.add("log.txt", t1 + i * 100ms);
    CHECK(*d.due() == t1 + 1000ms);
    CHECK(d.take(t1 + 1000ms) == std::vector<fs::path>{"log.txt"});
    CHECK(d.take(t1 + 5000ms).empty());
}

namespace {
struct temp_tree {
    fs::path dir;
    temp_tree() {
        char tmpl[] = "/tmp/coldbrew-watch-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~temp_tree() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    void write(const fs::path& rel, const std::string& text) const {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
};
}  // namespace

TEST_CASE("watch: inotify on a fixture tree reports the handler edit once per function, and "
          "not the noise written beside it",
          "[unit]") {
    temp_tree t;
    t.write("app.py", "v1");
    t.write("lib/util.py", "v1");
    t.write("__pycache__/app.cpython-312.pyc", "x");
    t.write("node_modules/.cache/x", "x");
    uv_loop_t loop;
    uv_loop_init(&loop);
    testing::manual_clock clock;
    std::vector<std::pair<std::string, fs::path>> seen;
    std::vector<std::string> notes;
    watch::watcher::options o;
    o.quiet = 0ms;
    o.cap = 0ms;
    {
        watch::watcher w(&loop, clock, {{t.dir, {"Py", "Other"}, {}}},
                         [&](const std::string& fn, const fs::path& f) { seen.emplace_back(fn, f); },
                         [&](const std::string& n) { notes.push_back(n); }, o);
        w.start();
        if (w.polling()) {
            WARN("inotify is not available here: " + notes.front());
            return;
        }
        // Noise first, then the edit: one read drains them all, so one batch holds them.
        t.write("__pycache__/app.cpython-312.pyc", "y");
        t.write(".app.py.swp", "swap");
        t.write("app.py~", "backup");
        t.write("node_modules/.cache/x", "y");
        t.write("lib/util.py", "v2");
        for (int i = 0; i < 20 && seen.size() < 2; ++i) uv_run(&loop, UV_RUN_ONCE);
        REQUIRE(seen.size() == 2);
        CHECK(seen[0].first == "Py");
        CHECK(seen[1].first == "Other");
        CHECK(seen[0].second == t.dir / "lib/util.py");
        CHECK(seen[1].second == t.dir / "lib/util.py");

        // A directory created after the start is watched too.
        seen.clear();
        fs::create_directories(t.dir / "newdir");
        for (int i = 0; i < 20 && seen.size() < 2; ++i) uv_run(&loop, UV_RUN_ONCE);
        REQUIRE(seen.size() == 2);
        seen.clear();
        t.write("newdir/h.py", "v1");
        for (int i = 0; i < 20 && seen.size() < 2; ++i) uv_run(&loop, UV_RUN_ONCE);
        REQUIRE(seen.size() == 2);
        CHECK(seen[0].second.parent_path() == t.dir / "newdir");

        // Saved as editors and `sed -i` save: a temporary file renamed over the edited one.
        // The line names the edited file, not the temporary one that is gone.
        seen.clear();
        t.write("app.py.tmp", "v3");
        fs::rename(t.dir / "app.py.tmp", t.dir / "app.py");
        for (int i = 0; i < 20 && seen.size() < 2; ++i) uv_run(&loop, UV_RUN_ONCE);
        REQUIRE(seen.size() == 2);
        CHECK(seen[0].second == t.dir / "app.py");
        w.stop();
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
}
