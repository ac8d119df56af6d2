#include "emulator/supervisor/cgroup.hpp"

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"

extern char** environ;

namespace fs = std::filesystem;
using coldbrew::supervisor::cpu_limiter;

namespace {

// A fake cgroup tree and a fake /proc/self describing it, removed at the end of the test.
class fake_tree {
public:
    fake_tree() {
        std::string tmpl = (fs::temp_directory_path() / "coldbrew-cgroup-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        dir_ = tmpl;
        fs::create_directories(root());
        fs::create_directories(proc() / "self");
    }
    ~fake_tree() {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
        for (auto& e : fs::recursive_directory_iterator(dir_, ec))
            fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(dir_, ec);
    }
    fs::path root() const { return dir_ / "cgroup"; }
    fs::path proc() const { return dir_ / "proc"; }

    // One mountinfo line per mount: {mount point below root(), fstype, super options}.
    void mounts(const std::vector<std::vector<std::string>>& list) {
        std::ofstream out(proc() / "self" / "mountinfo");
        out << "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n";
        int id = 30;
        for (const auto& m : list) {
            fs::create_directories(root() / m[0]);
            out << id << " 22 0:" << id << " / " << (root() / m[0]).string() << " rw,relatime - "
                << m[1] << " " << m[1] << " " << m[2] << "\n";
            ++id;
        }
    }
    void self_cgroup(const std::string& text) { write(proc() / "self" / "cgroup", text); }
    static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

    // Entries named coldbrew-* anywhere in the tree: a failed detection leaves none.
    std::vector<std::string> leftovers() const {
        std::vector<std::string> found;
        for (auto& e : fs::recursive_directory_iterator(root()))
            if (e.path().filename().string().rfind("coldbrew", 0) == 0)
                found.push_back(e.path().string());
        return found;
    }

private:
    fs::path dir_;
};

std::string read_all(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool lists_pid(const fs::path& group, int pid) {
    std::istringstream in(read_all(group / "cgroup.procs"));
    int p;
    while (in >> p)
        if (p == pid) return true;
    return false;
}

int spawn_sleep() {
    pid_t pid = 0;
    char arg0[] = "sleep", arg1[] = "5";
    char* argv[] = {arg0, arg1, nullptr};
    REQUIRE(::posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, environ) == 0);
    return pid;
}

void kill_and_reap(int pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
}

}  // namespace

TEST_CASE("cpu_limiter: no cgroup mount below the root", "[unit]") {
    fake_tree t;
    t.mounts({});
    t.self_cgroup("1:cpu:/\n0::/\n");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK(why.find("no cgroup v1 cpu hierarchy or cgroup2 mount") != std::string::npos);
}

TEST_CASE("cpu_limiter: the real /proc with a fake root finds nothing there", "[unit]") {
    fake_tree t;
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root()) == nullptr);
    CHECK(why.find(t.root().string()) != std::string::npos);
}

TEST_CASE("cpu_limiter: a v1 cpu hierarchy that is not a cgroup cannot take a quota", "[unit]") {
    fake_tree t;
    t.mounts({{"cpu,cpuacct", "cgroup", "rw,cpu,cpuacct"}, {"memory", "cgroup", "rw,memory"}});
    t.self_cgroup("4:memory:/\n2:cpu,cpuacct:/\n");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    INFO(why);
    CHECK(why.find("cgroup v1 cpu hierarchy " + (t.root() / "cpu,cpuacct").string()) == 0);
    // The probe found no cpu.cfs_period_us in the group it made (a plain directory).
    CHECK(why.find("cannot set a CPU quota: No such file or directory") != std::string::npos);
    CHECK(t.leftovers().empty());
}

TEST_CASE("cpu_limiter: a v1 hierarchy that is not writable", "[unit]") {
    fake_tree t;
    t.mounts({{"cpu", "cgroup", "rw,cpu"}});
    t.self_cgroup("1:cpu:/\n");
    std::string why;
    if (::geteuid() == 0) {
        // Permission bits do not stop root; a file where the directory should be does.
        fs::remove(t.root() / "cpu");
        fake_tree::write(t.root() / "cpu", "");
        CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
        CHECK(why == "cgroup v1 cpu hierarchy " + (t.root() / "cpu").string() + " does not exist");
    } else {
        fs::permissions(t.root() / "cpu", fs::perms::owner_read | fs::perms::owner_exec);
        CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
        CHECK(why == "cgroup v1 cpu hierarchy " + (t.root() / "cpu").string() +
                         " is not writable: Permission denied");
    }
}

TEST_CASE("cpu_limiter: v1 resolves coldbrew's cgroup below the mount's root", "[unit]") {
    fake_tree t;
    t.mounts({{"cpu", "cgroup", "rw,cpu"}});
    t.self_cgroup("1:cpu:/outside\n");
    // The mount shows the hierarchy from its root "/"; a cgroup path below it is a subdirectory.
    fs::create_directories(t.root() / "cpu" / "outside");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK(why.find("cgroup v1 cpu hierarchy " + (t.root() / "cpu" / "outside").string()) == 0);
    CHECK(t.leftovers().empty());
}

TEST_CASE("cpu_limiter: groups left by a coldbrew that was killed are removed", "[unit]") {
    fake_tree t;
    t.mounts({{"cpu", "cgroup", "rw,cpu"}});
    t.self_cgroup("1:cpu:/\n");
    pid_t dead = 0;
    char arg0[] = "true";
    char* argv[] = {arg0, nullptr};
    REQUIRE(::posix_spawnp(&dead, "true", nullptr, nullptr, argv, environ) == 0);
    ::waitpid(dead, nullptr, 0);
    const fs::path stale = t.root() / "cpu" / ("coldbrew-" + std::to_string(dead));
    const fs::path live = t.root() / "cpu" / ("coldbrew-" + std::to_string(::getppid()));
    fs::create_directories(stale / "HelloNode-1");
    fs::create_directories(live / "HelloNode-1");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK_FALSE(fs::exists(stale));
    CHECK(fs::exists(live / "HelloNode-1"));
}

TEST_CASE("cpu_limiter: cgroup v2 without the cpu controller", "[unit]") {
    fake_tree t;
    t.mounts({{"unified", "cgroup2", "rw"}});
    t.self_cgroup("0::/\n");
    fake_tree::write(t.root() / "unified" / "cgroup.controllers", "memory pids\n");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK(why == "cgroup v2 " + (t.root() / "unified").string() +
                     ": the cpu controller is not available (cgroup.controllers: \"memory pids\")");
    CHECK(t.leftovers().empty());
}

TEST_CASE("cpu_limiter: cgroup v2 whose parent group cannot hand down cpu", "[unit]") {
    fake_tree t;
    t.mounts({{"unified", "cgroup2", "rw"}});
    t.self_cgroup("0::/app\n");
    const fs::path home = t.root() / "unified" / "app";
    fs::create_directories(home);
    fake_tree::write(home / "cgroup.controllers", "cpu io memory pids\n");
    fake_tree::write(home / "cgroup.subtree_control", "cpu\n");
    fake_tree::write(home / "cgroup.procs", "");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    INFO(why);
    CHECK(why.find("cgroup v2 " + home.string() + ": cannot enable the cpu controller in ") == 0);
    CHECK(t.leftovers().empty());
}

TEST_CASE("cpu_limiter: both versions failing give both reasons", "[unit]") {
    fake_tree t;
    t.mounts({{"unified", "cgroup2", "rw"}, {"cpu", "cgroup", "rw,cpu"}});
    t.self_cgroup("1:cpu:/\n0::/\n");
    fake_tree::write(t.root() / "unified" / "cgroup.controllers", "");
    std::string why;
    CHECK(cpu_limiter::detect(why, t.root(), t.proc()) == nullptr);
    INFO(why);
    CHECK(why.find("cgroup v2 " + (t.root() / "unified").string() +
                   ": the cpu controller is not available (cgroup.controllers: none); "
                   "cgroup v1 cpu hierarchy ") == 0);
}

// The machine's own cgroups: this runs where coldbrew may create groups (root on a cgroup v1
// host, or a delegated cgroup v2 subtree) and otherwise only checks that it says why not.
TEST_CASE("cpu_limiter: a process limited on this machine", "[unit]") {
    std::string why;
    auto limiter = cpu_limiter::detect(why);
    if (!limiter) {
        CHECK_FALSE(why.empty());
        WARN("no CPU quota on this machine: " << why);
        return;
    }
    CHECK(why.empty());
    INFO(limiter->description());
    const fs::path group = limiter->group_path("t");
    const fs::path parent = group.parent_path();
    CHECK(parent.filename() == "coldbrew-" + std::to_string(::getpid()));
    CHECK(fs::is_directory(parent));

    SECTION("quota, membership and removal") {
        const int pid = spawn_sleep();
        auto ec = limiter->limit(pid, "t", 0.25);
        if (ec) kill_and_reap(pid);
        REQUIRE_FALSE(ec);
        CHECK(lists_pid(group, pid));
        if (fs::exists(group / "cpu.max"))
            CHECK(read_all(group / "cpu.max") == "25000 100000\n");
        else
            CHECK(read_all(group / "cpu.cfs_quota_us") == "25000\n");
        kill_and_reap(pid);
        limiter->release("t");
        CHECK_FALSE(fs::exists(group));
        limiter->release("t");  // harmless when absent
    }

    SECTION("a tiny share gets the kernel's minimum quota") {
        const int pid = spawn_sleep();
        auto ec = limiter->limit(pid, "tiny", 0.001);
        const fs::path tiny = limiter->group_path("tiny");
        if (!ec) {
            if (fs::exists(tiny / "cpu.max"))
                CHECK(read_all(tiny / "cpu.max") == "1000 100000\n");
            else
                CHECK(read_all(tiny / "cpu.cfs_quota_us") == "1000\n");
        }
        kill_and_reap(pid);
        REQUIRE_FALSE(ec);
        limiter->release("tiny");
        CHECK_FALSE(fs::exists(tiny));
    }

    SECTION("bad arguments") {
        CHECK(limiter->limit(::getpid(), "", 1) == std::errc::invalid_argument);
        CHECK(limiter->limit(::getpid(), "..", 1) == std::errc::invalid_argument);
        CHECK(limiter->limit(::getpid(), "a/b", 1) == std::errc::invalid_argument);
        CHECK(limiter->limit(::getpid(), "x", 0) == std::errc::invalid_argument);
        CHECK(limiter->limit(::getpid(), "x", -1) == std::errc::invalid_argument);
        CHECK_FALSE(fs::exists(limiter->group_path("x")));
    }

    SECTION("the destructor moves leftovers out and removes every group") {
        const int pid = spawn_sleep();
        auto ec = limiter->limit(pid, "left", 1.5);
        if (ec) kill_and_reap(pid);
        REQUIRE_FALSE(ec);
        limiter.reset();
        const bool gone = !fs::exists(parent);
        // Back in coldbrew's own cgroup (the parent's parent), where it started.
        const bool home = lists_pid(parent.parent_path(), pid);
        kill_and_reap(pid);
        CHECK(gone);
        CHECK(home);
    }
}
