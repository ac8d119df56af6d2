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
using coldbrew::supervisor::memory_limiter;

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
            CHECK(read_all(group / "cpu.max") == "5000 20000\n");
        else
            CHECK(read_all(group / "cpu.cfs_quota_us") == "5000\n");
        if (fs::exists(group / "cpu.cfs_period_us"))
            CHECK(read_all(group / "cpu.cfs_period_us") == "20000\n");
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
                CHECK(read_all(tiny / "cpu.max") == "1000 20000\n");
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

// ---- memory_limiter ---------------------------------------------------------------------

namespace {

// A fake group: a directory holding empty control files, which the limiter's writes fill (it
// opens them without O_CREAT or O_TRUNC, as the kernel's files need).
void fake_group(const fs::path& dir, const std::vector<std::string>& files) {
    fs::create_directories(dir);
    for (const auto& f : files)
        fake_tree::write(dir / f, "");
}

const std::vector<std::string> v1_files = {"cgroup.procs", "memory.limit_in_bytes",
                                           "memory.memsw.limit_in_bytes"};
const std::vector<std::string> v2_files = {"cgroup.procs", "memory.max", "memory.swap.max",
                                           "memory.oom.group"};

std::string own_parent() { return "coldbrew-" + std::to_string(::getpid()); }

// A v1 memory hierarchy where coldbrew's groups already exist as fakes.
fs::path v1_memory_tree(fake_tree& t) {
    t.mounts({{"memory", "cgroup", "rw,memory"}});
    t.self_cgroup("4:memory:/\n");
    const fs::path parent = t.root() / "memory" / own_parent();
    fake_group(parent / "coldbrew.probe", v1_files);
    return parent;
}

// A v2 hierarchy where coldbrew's cgroup /app already hands memory down.
fs::path v2_memory_tree(fake_tree& t) {
    t.mounts({{"unified", "cgroup2", "rw"}});
    t.self_cgroup("0::/app\n");
    const fs::path home = t.root() / "unified" / "app";
    fs::create_directories(home);
    fake_tree::write(home / "cgroup.controllers", "cpu io memory pids\n");
    fake_tree::write(home / "cgroup.subtree_control", "memory\n");
    fake_tree::write(home / "cgroup.procs", "");
    const fs::path parent = home / own_parent();
    fake_group(parent, {"cgroup.subtree_control"});
    fake_group(parent / "coldbrew.probe", v2_files);
    return parent;
}

}  // namespace

TEST_CASE("memory_limiter: no cgroup mount below the root", "[unit]") {
    fake_tree t;
    t.mounts({});
    t.self_cgroup("4:memory:/\n0::/\n");
    std::string why;
    CHECK(memory_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK(why.find("no cgroup v1 memory hierarchy or cgroup2 mount at or below " +
                   t.root().string()) == 0);
}

TEST_CASE("memory_limiter: a v1 memory hierarchy that is not a cgroup cannot take a limit",
          "[unit]") {
    fake_tree t;
    t.mounts({{"cpu", "cgroup", "rw,cpu"}, {"memory", "cgroup", "rw,memory"}});
    t.self_cgroup("4:memory:/\n2:cpu:/\n");
    std::string why;
    CHECK(memory_limiter::detect(why, t.root(), t.proc()) == nullptr);
    INFO(why);
    CHECK(why == "cgroup v1 memory hierarchy " + (t.root() / "memory").string() +
                     ": cannot set a memory limit: No such file or directory");
    CHECK(t.leftovers().empty());
}

TEST_CASE("memory_limiter: cgroup v2 without the memory controller", "[unit]") {
    fake_tree t;
    t.mounts({{"unified", "cgroup2", "rw"}});
    t.self_cgroup("0::/\n");
    fake_tree::write(t.root() / "unified" / "cgroup.controllers", "cpu pids\n");
    std::string why;
    CHECK(memory_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK(why == "cgroup v2 " + (t.root() / "unified").string() +
                     ": the memory controller is not available (cgroup.controllers: \"cpu pids\")");
    CHECK(t.leftovers().empty());
}

TEST_CASE("memory_limiter: v1 limit, swap limit, OOM kills and peak", "[unit]") {
    fake_tree t;
    const fs::path parent = v1_memory_tree(t);
    std::string why;
    auto m = memory_limiter::detect(why, t.root(), t.proc());
    INFO(why);
    REQUIRE(m);
    CHECK(why.empty());
    CHECK(m->description() == "cgroup v1 " + parent.string());
    // The probe wrote Lambda's smallest MemorySize, proving the files take a limit.
    CHECK(read_all(parent / "coldbrew.probe" / "memory.limit_in_bytes") == "134217728");
    CHECK(read_all(parent / "coldbrew.probe" / "memory.memsw.limit_in_bytes") == "134217728");

    const fs::path g = parent / "Fn-1";
    fake_group(g, v1_files);
    fake_tree::write(g / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    fake_tree::write(g / "memory.max_usage_in_bytes", "52428800\n");
    CHECK_FALSE(m->oom_killed("Fn-1"));  // not limited yet: unknown to the limiter
    CHECK_FALSE(m->peak_bytes("Fn-1"));
    REQUIRE_FALSE(m->limit(4242, "Fn-1", 256ull << 20));
    CHECK(read_all(g / "memory.limit_in_bytes") == "268435456");
    CHECK(read_all(g / "memory.memsw.limit_in_bytes") == "268435456");
    CHECK(read_all(g / "cgroup.procs") == "4242");
    CHECK_FALSE(m->oom_killed("Fn-1"));
    CHECK(m->peak_bytes("Fn-1") == 52428800u);

    fake_tree::write(g / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    CHECK(m->oom_killed("Fn-1"));
    CHECK(m->group_path("Fn-1") == g);

    SECTION("without swap accounting there is no memsw file, and that is fine") {
        const fs::path h = parent / "Fn-2";
        fake_group(h, {"cgroup.procs", "memory.limit_in_bytes"});
        CHECK_FALSE(m->limit(4243, "Fn-2", 128ull << 20));
        CHECK(read_all(h / "memory.limit_in_bytes") == "134217728");
    }
    SECTION("a kernel without oom_kill in memory.oom_control: memory.failcnt counts") {
        const fs::path h = parent / "Fn-3";
        fake_group(h, v1_files);
        fake_tree::write(h / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
        fake_tree::write(h / "memory.failcnt", "0\n");
        REQUIRE_FALSE(m->limit(4244, "Fn-3", 128ull << 20));
        CHECK_FALSE(m->oom_killed("Fn-3"));
        fake_tree::write(h / "memory.failcnt", "17\n");
        CHECK(m->oom_killed("Fn-3"));
    }
    SECTION("kills before the first process went in are not this environment's") {
        const fs::path h = parent / "Fn-4";
        fake_group(h, v1_files);
        fake_tree::write(h / "memory.oom_control", "oom_kill 2\n");
        REQUIRE_FALSE(m->limit(4245, "Fn-4", 128ull << 20));
        CHECK_FALSE(m->oom_killed("Fn-4"));
        fake_tree::write(h / "memory.oom_control", "oom_kill 3\n");
        CHECK(m->oom_killed("Fn-4"));
    }
    SECTION("a released group is forgotten") {
        m->release("Fn-1");
        CHECK_FALSE(m->oom_killed("Fn-1"));
        CHECK_FALSE(m->peak_bytes("Fn-1"));
    }
    SECTION("bad arguments") {
        CHECK(m->limit(4242, "", 1) == std::errc::invalid_argument);
        CHECK(m->limit(4242, "a/b", 1) == std::errc::invalid_argument);
        CHECK(m->limit(4242, "coldbrew.probe", 1) == std::errc::invalid_argument);
        CHECK(m->limit(4242, "x", 0) == std::errc::invalid_argument);
        CHECK(m->limit(0, "x", 1) == std::errc::invalid_argument);
        CHECK_FALSE(fs::exists(parent / "x"));
    }
    SECTION("a group that cannot take the limit is removed again") {
        // A plain directory has no memory.limit_in_bytes: mkdir works, the write does not.
        CHECK(m->limit(4242, "Plain-1", 128ull << 20) == std::errc::no_such_file_or_directory);
        CHECK_FALSE(fs::exists(parent / "Plain-1"));
        CHECK_FALSE(m->oom_killed("Plain-1"));
    }
}

TEST_CASE("memory_limiter: v2 limit, no swap, group OOM kill, events and peak", "[unit]") {
    fake_tree t;
    const fs::path parent = v2_memory_tree(t);
    std::string why;
    auto m = memory_limiter::detect(why, t.root(), t.proc());
    INFO(why);
    REQUIRE(m);
    CHECK(m->description() == "cgroup v2 " + parent.string());
    CHECK(read_all(parent / "cgroup.subtree_control") == "+memory");

    const fs::path g = parent / "Fn-1";
    fake_group(g, v2_files);
    fake_tree::write(g / "memory.events",
                     "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
    fake_tree::write(g / "memory.peak", "99614720\n");
    REQUIRE_FALSE(m->limit(4242, "Fn-1", 128ull << 20));
    CHECK(read_all(g / "memory.max") == "134217728");
    CHECK(read_all(g / "memory.swap.max") == "0");
    CHECK(read_all(g / "memory.oom.group") == "1");
    CHECK(read_all(g / "cgroup.procs") == "4242");
    CHECK_FALSE(m->oom_killed("Fn-1"));
    CHECK(m->peak_bytes("Fn-1") == 99614720u);

    // "max" counts hitting the limit (reclaim may succeed); only oom_kill is a kill.
    fake_tree::write(g / "memory.events",
                     "low 0\nhigh 0\nmax 40\noom 1\noom_kill 0\noom_group_kill 0\n");
    CHECK_FALSE(m->oom_killed("Fn-1"));
    fake_tree::write(g / "memory.events",
                     "low 0\nhigh 0\nmax 41\noom 2\noom_kill 1\noom_group_kill 1\n");
    CHECK(m->oom_killed("Fn-1"));

    SECTION("a kernel without memory.peak gives no peak") {
        const fs::path h = parent / "Fn-2";
        fake_group(h, v2_files);
        REQUIRE_FALSE(m->limit(4243, "Fn-2", 128ull << 20));
        CHECK_FALSE(m->peak_bytes("Fn-2"));
        CHECK_FALSE(m->oom_killed("Fn-2"));  // no memory.events: nothing seen
    }
}

TEST_CASE("memory_limiter: cgroup v2 whose parent group cannot hand down memory", "[unit]") {
    fake_tree t;
    v2_memory_tree(t);
    const fs::path parent = t.root() / "unified" / "app" / own_parent();
    fs::remove(parent / "cgroup.subtree_control");
    std::string why;
    CHECK(memory_limiter::detect(why, t.root(), t.proc()) == nullptr);
    CHECK(why.find("cgroup v2 " + (t.root() / "unified" / "app").string() +
                   ": cannot enable the memory controller in ") == 0);
}

// The machine's own cgroups: where coldbrew may create memory groups, a real process is
// limited; elsewhere it only checks that detection says why not.
TEST_CASE("memory_limiter: a process limited on this machine", "[unit]") {
    std::string why;
    auto limiter = memory_limiter::detect(why);
    if (!limiter) {
        CHECK_FALSE(why.empty());
        WARN("no memory limit on this machine: " << why);
        return;
    }
    CHECK(why.empty());
    INFO(limiter->description());
    const fs::path group = limiter->group_path("t");
    const fs::path parent = group.parent_path();
    CHECK(parent.filename() == own_parent());

    const int pid = spawn_sleep();
    auto ec = limiter->limit(pid, "t", 64ull << 20);
    if (ec) kill_and_reap(pid);
    REQUIRE_FALSE(ec);
    CHECK(lists_pid(group, pid));
    if (fs::exists(group / "memory.max"))
        CHECK(read_all(group / "memory.max") == "67108864\n");
    else
        CHECK(read_all(group / "memory.limit_in_bytes") == "67108864\n");
    CHECK_FALSE(limiter->oom_killed("t"));
    if (!fs::exists(group / "memory.events") || fs::exists(group / "memory.peak")) {
        REQUIRE(limiter->peak_bytes("t"));
        CHECK(*limiter->peak_bytes("t") < (64ull << 20));
    }
    kill_and_reap(pid);
    // SIGKILL from us is not an OOM kill.
    CHECK_FALSE(limiter->oom_killed("t"));
    limiter->release("t");
    CHECK_FALSE(fs::exists(group));
    limiter.reset();
    CHECK_FALSE(fs::exists(parent));
}

TEST_CASE("cpu_limiter: the CFS period keeps the smallest MemorySize's share exact", "[unit]") {
    // 128 MB, Lambda's smallest MemorySize, at 1,769 MB per vCPU: its quota must not need
    // raising to the kernel's 1,000 µs minimum, or it would get more CPU than its share.
    const double smallest_share = 128.0 / 1769.0;
    CHECK(smallest_share * static_cast<double>(coldbrew::supervisor::cfs_period_us) >= 1000.0);
    // And short enough that a throttled 1,024 MB environment is frozen for under 10 ms.
    CHECK((1.0 - 1024.0 / 1769.0) * static_cast<double>(coldbrew::supervisor::cfs_period_us) < 10000.0);
}
