#include "emulator/supervisor/containment.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/catch.hpp"

namespace fs = std::filesystem;
using coldbrew::supervisor::children_of;
using coldbrew::supervisor::containment;
using coldbrew::supervisor::kill_tree;
using coldbrew::supervisor::marked_processes;
using coldbrew::supervisor::start_ticks;

namespace {

class scratch {
public:
    scratch() {
        std::string tmpl = (fs::temp_directory_path() / "coldbrew-contain-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        dir_ = tmpl;
    }
    ~scratch() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    const fs::path& path() const { return dir_; }
    void write(const fs::path& rel, const std::string& text) const {
        fs::create_directories((dir_ / rel).parent_path());
        std::ofstream(dir_ / rel, std::ios::binary) << text;
    }

private:
    fs::path dir_;
};

// "pid (comm) state ppid" then fields 5..21 as zeros, then starttime.
std::string stat_line(int pid, const std::string& comm, int ppid, unsigned long long start) {
    std::string s = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid);
    for (int i = 5; i < 22; ++i) s += " 0";
    return s + " " + std::to_string(start) + " 0 0\n";
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Gone or a zombie (waiting for a parent that is not this test).
bool gone(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.empty()) return true;
    auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

bool wait_gone(int pid) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        if (gone(pid)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return gone(pid);
}

}  // namespace

TEST_CASE("kill_tree: a detached grandchild (setsid) goes with its parent's tree", "[unit]") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(fds[0]);
        const pid_t grandchild = ::fork();
        if (grandchild == 0) {
            ::setsid();
            ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        const std::string text = std::to_string(grandchild);
        if (::write(fds[1], text.data(), text.size()) < 0) ::_exit(1);
        ::close(fds[1]);
        ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    char buf[32] = {};
    const auto n = ::read(fds[0], buf, sizeof buf - 1);
    ::close(fds[0]);
    REQUIRE(n > 0);
    const int grandchild = std::atoi(buf);
    REQUIRE(grandchild > 1);

    CHECK(kill_tree({child}) == 2);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK(wait_gone(grandchild));
    if (!gone(grandchild)) ::kill(grandchild, SIGKILL);
}

TEST_CASE("kill_tree: pids that do not exist are skipped", "[unit]") {
    CHECK(kill_tree({}) == 0);
    CHECK(kill_tree({0, 1, static_cast<int>(::getpid())}) == 0);
}

TEST_CASE("marked_processes: a whole environment entry, started no earlier than asked", "[unit]") {
    scratch proc;
    const std::string mark = "AWS_LAMBDA_RUNTIME_API=127.0.0.1:41000";
    proc.write("100/environ", std::string("PATH=/bin\0", 10) + mark + std::string("\0", 1));
    proc.write("100/stat", stat_line(100, "sleep", 1, 5000));
    // The same key with another address: another environment's.
    proc.write("101/environ", std::string("AWS_LAMBDA_RUNTIME_API=127.0.0.1:41001\0", 39));
    proc.write("101/stat", stat_line(101, "sleep", 1, 5000));
    // A prefix of the mark is not the mark.
    proc.write("102/environ", std::string("AWS_LAMBDA_RUNTIME_API=127.0.0.1:4100\0", 38));
    proc.write("102/stat", stat_line(102, "node", 1, 5000));
    // The mark, but older than the reaper: not ours.
    proc.write("103/environ", mark + std::string("\0", 1));
    proc.write("103/stat", stat_line(103, "old", 1, 10));
    proc.write("self/environ", mark);

    auto all = marked_processes({mark}, 0, proc.path());
    std::sort(all.begin(), all.end());
    CHECK(all == std::vector<int>{100, 103});
    CHECK(marked_processes({mark}, 4000, proc.path()) == std::vector<int>{100});
    CHECK(marked_processes({}, 0, proc.path()).empty());
    CHECK(marked_processes({""}, 0, proc.path()).empty());
}

TEST_CASE("start_ticks: the starttime field, past a comm with spaces and parentheses", "[unit]") {
    scratch proc;
    proc.write("200/stat", stat_line(200, "a) (b c", 1, 987654321));
    CHECK(start_ticks(200, proc.path()) == 987654321ull);
    CHECK(start_ticks(201, proc.path()) == 0);
    CHECK(start_ticks(static_cast<int>(::getpid())) > 0);
}

TEST_CASE("children_of: every thread's children, or parent links without the file", "[unit]") {
    scratch proc;
    proc.write("50/task/50/children", "51 52 ");
    proc.write("50/task/60/children", "53");
    CHECK(children_of(50, proc.path()) == std::vector<int>{51, 52, 53});

    scratch old;
    old.write("70/stat", stat_line(70, "sh", 1, 1));
    old.write("71/stat", stat_line(71, "sleep", 70, 2));
    old.write("72/stat", stat_line(72, "other", 1, 3));
    old.write("70/task/70/stat", "");
    CHECK(children_of(70, old.path()) == std::vector<int>{71});
}

TEST_CASE("containment: a writable cgroup v1 freezer hierarchy contains, named in one line",
          "[unit]") {
    scratch t;
    const fs::path root = t.path() / "cgroup";
    const fs::path proc = t.path() / "proc";
    fs::create_directories(root / "freezer");
    t.write("proc/self/mountinfo",
            "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
            "30 22 0:30 / " + (root / "freezer").string() +
                " rw,relatime - cgroup cgroup rw,freezer\n");
    t.write("proc/self/cgroup", "7:freezer:/\n");
    // A real hierarchy makes the control files with each group; the fake one has them ready.
    const fs::path parent = root / "freezer" / ("coldbrew-" + std::to_string(::getpid()));
    for (const auto& g : {parent / "coldbrew.probe", parent / "Fn-1"}) {
        fs::create_directories(g);
        std::ofstream(g / "freezer.state") << "THAWED\n";
        std::ofstream(g / "cgroup.procs");
    }

    auto c = containment::detect("cgroup-v1", root, proc);
    REQUIRE(c);
    INFO(c->description());
    REQUIRE(c->which() == containment::mode::cgroup_v1);
    CHECK(c->description() == "Containment: cgroup v1 freezer " + parent.string() +
                                  "; every process an environment starts ends with it");
    CHECK(c->group_path("Fn-1") == parent / "Fn-1");
    CHECK_FALSE(c->adopt(4242, "Fn-1"));
    CHECK(read_all(parent / "Fn-1" / "cgroup.procs") == "4242");
    CHECK(c->adopt(4242, "a/b") == std::errc::invalid_argument);
    CHECK(c->adopt(0, "Fn-1") == std::errc::invalid_argument);
    // As the kernel would once the process is gone, so the destructor has nothing to kill.
    std::ofstream(parent / "Fn-1" / "cgroup.procs", std::ios::trunc);
}

TEST_CASE("containment: cgroup v1 without a freezer walks the pids hierarchy", "[unit]") {
    scratch t;
    const fs::path root = t.path() / "cgroup";
    fs::create_directories(root / "pids");
    t.write("proc/self/mountinfo",
            "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
            "30 22 0:30 / " + (root / "pids").string() + " rw,relatime - cgroup cgroup rw,pids\n");
    t.write("proc/self/cgroup", "8:pids:/\n");
    const fs::path parent = root / "pids" / ("coldbrew-" + std::to_string(::getpid()));
    fs::create_directories(parent / "coldbrew.probe");
    std::ofstream(parent / "coldbrew.probe" / "cgroup.procs");

    auto c = containment::detect("", root, t.path() / "proc");
    REQUIRE(c);
    INFO(c->description());
    CHECK(c->which() == containment::mode::cgroup_v1);
    CHECK(c->description() == "Containment: cgroup v1 pids " + parent.string() +
                                  " (no freezer: walked until empty); every process an "
                                  "environment starts ends with it");
}

TEST_CASE("containment: no cgroup hierarchy gives the subreaper (or process groups)", "[unit]") {
    // In a child: the subreaper flag would stay set on the test process.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        bool ok = false;
        {
            scratch t;
            fs::create_directories(t.path() / "cgroup");
            t.write("proc/self/mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
            t.write("proc/self/cgroup", "0::/\n");
            auto c = containment::detect("", t.path() / "cgroup", t.path() / "proc");
            ok = c && c->which() == containment::mode::subreaper &&
                 c->description().find("child subreaper") != std::string::npos &&
                 c->group_path("Fn-1").empty() && !c->adopt(4242, "Fn-1");
        }
        ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
