#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "emulator/supervisor/supervisor.hpp"
#include "tests/catch.hpp"

using coldbrew::supervisor::peak_memory_mb;
using coldbrew::supervisor::peak_memory_reader;

namespace {

// A child that waits for a byte on `go`, then touches `grow_mb` MB and answers on `done`;
// killed and reaped by the caller.
struct child {
    int pid = 0;
    int go[2]{-1, -1};
    int done[2]{-1, -1};

    explicit child(int grow_mb) {
        REQUIRE(::pipe(go) == 0);
        REQUIRE(::pipe(done) == 0);
        pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            char c;
            if (::read(go[0], &c, 1) != 1) ::_exit(1);
            const std::size_t n = static_cast<std::size_t>(grow_mb) << 20;
            // volatile: the pages must really be written, not optimised away with the block.
            auto* volatile p = static_cast<char*>(std::malloc(n));
            if (!p) ::_exit(1);
            for (std::size_t i = 0; i < n; i += 4096) p[i] = 1;
            if (::write(done[1], "x", 1) != 1) ::_exit(1);
            for (;;) ::pause();
        }
    }
    void grow() {
        REQUIRE(::write(go[1], "x", 1) == 1);
        char c;
        REQUIRE(::read(done[0], &c, 1) == 1);
    }
    void end() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        pid = 0;
    }
    ~child() {
        end();
        for (int fd : {go[0], go[1], done[0], done[1]}) ::close(fd);
    }
};

// Closes every handle left on `loop` and the loop itself.
void close_loop(uv_loop_t& loop) {
    uv_walk(
        &loop, [](uv_handle_t* h, void*) { if (!uv_is_closing(h)) uv_close(h, nullptr); }, nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
}

}  // namespace

TEST_CASE("peak_memory_reader: rereads the kept files and sees the high-water mark grow", "[unit]") {
    child c(64);
    peak_memory_reader reader;
    const int before = reader.mb(c.pid);
    CHECK(before > 0);
    CHECK(before == peak_memory_mb(c.pid));
    c.grow();
    const int after = reader.mb(c.pid);
    CHECK(after >= before + 60);
    CHECK(after == peak_memory_mb(c.pid));
}

TEST_CASE("peak_memory_reader: a process that is gone reads 0, and a new pid is read afresh",
          "[unit]") {
    peak_memory_reader reader;
    int gone = 0;
    {
        child c(0);
        gone = c.pid;
        CHECK(reader.mb(gone) > 0);
    }
    // The kept fd belongs to the reaped process: nothing else is read under its pid.
    CHECK(reader.mb(gone) == 0);
    child next(0);
    CHECK(reader.mb(next.pid) > 0);
    CHECK(reader.mb(0) == 0);
    CHECK(reader.mb(-5) == 0);
}

TEST_CASE("raise_open_files_limit: raised for coldbrew, Lambda's 1,024 for what it starts", "[unit]") {
    // Start from the common soft limit, so there is room to raise it on any machine.
    struct rlimit start {};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &start) == 0);
    start.rlim_cur = std::min<rlim_t>(start.rlim_max, 1024);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &start) == 0);

    const auto now = coldbrew::supervisor::raise_open_files_limit();
    struct rlimit after {};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &after) == 0);
    CHECK(now == after.rlim_cur);
    CHECK(after.rlim_cur == std::min<rlim_t>(start.rlim_max, 65536));

    uv_loop_t loop;
    uv_loop_init(&loop);
    coldbrew::supervisor::supervisor sup(&loop, nullptr);
    coldbrew::supervisor::spawn_options o;
    o.file = "/bin/sh";
    o.args = {"sh", "-c", "sleep 0.2; echo $(ulimit -Sn) $(ulimit -Hn)"};
    std::string seen;
    bool exited = false;
    std::error_code ec;
    auto p = sup.spawn(o,
                       {[&](std::string_view line) { seen = std::string(line); }, nullptr,
                        [&](coldbrew::supervisor::exit_status) { exited = true; }},
                       ec);
    REQUIRE_FALSE(ec);
    while (!exited) uv_run(&loop, UV_RUN_ONCE);
    p.reset();
    close_loop(loop);
    const auto lambda = std::to_string(std::min<rlim_t>(start.rlim_max, 1024));
    CHECK(seen == lambda + " " + lambda);
}

TEST_CASE("process::flush_output: unread output now, a partial last line as a line", "[unit]") {
    uv_loop_t loop;
    uv_loop_init(&loop);
    coldbrew::supervisor::supervisor sup(&loop, nullptr);
    coldbrew::supervisor::spawn_options o;
    o.file = "/bin/sh";
    o.args = {"sh", "-c", "printf 'first\\nsecond-partial'; printf 'on stderr\\n' >&2; sleep 5"};
    std::vector<std::string> out, err;
    std::error_code ec;
    auto p = sup.spawn(o,
                       {[&](std::string_view line) { out.emplace_back(line); },
                        [&](std::string_view line) { err.emplace_back(line); }, nullptr},
                       ec);
    REQUIRE_FALSE(ec);
    // The loop never runs here: whatever arrives comes through flush_output alone.
    for (int i = 0; i < 500 && (out.size() < 2 || err.empty()); ++i) {
        p->flush_output();
        if (out.size() < 2 || err.empty()) ::usleep(10 * 1000);
    }
    CHECK(out == std::vector<std::string>{"first", "second-partial"});
    CHECK(err == std::vector<std::string>{"on stderr"});
    p->kill();
    p.reset();
    close_loop(loop);
}
