#pragma once
// CPU share that follows memory, enforced by the kernel. On Lambda an execution environment
// gets CPU in proportion to its memory (1,769 MB = 1 vCPU: "Lambda allocates CPU power in
// proportion to the amount of memory configured", docs.aws.amazon.com/lambda/latest/dg/
// configuration-memory.html). Where the machine lets coldbrew create cgroups, each execution
// environment's handler process is put in a group of its own with a CPU quota, so a
// CPU-bound handler at 128 MB really runs slower; elsewhere only the timing model applies.
//
// Layout: one parent group per coldbrew process, `coldbrew-<pid>`, inside the cgroup
// coldbrew itself is in, and one child per execution environment:
//   cgroup v1: <cpu hierarchy>/<coldbrew's cgroup>/coldbrew-<pid>/<name>  (cpu.cfs_quota_us)
//   cgroup v2: <cgroup2 mount>/<coldbrew's cgroup>/coldbrew-<pid>/<name>  (cpu.max)
// The parent holds no processes itself (cgroup v2's "no internal processes" rule). On cgroup
// v2, when coldbrew's own cgroup holds only coldbrew and its descendants, coldbrew moves them
// into the leaf `coldbrew-<pid>/coldbrew.self` so that the cpu controller can be enabled for
// the groups below it, and moves them back when the limiter is destroyed.
//
// Not thread-safe: use from one thread (the loop thread).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "emulator/supervisor/reread_file.hpp"

namespace coldbrew::supervisor {

// The CFS period of every environment's CPU quota, in µs: 20 ms. The quota is vcpus × period,
// so the average share is the same whatever the period (1,769 MB = 1 vCPU, above); the period
// decides how long an environment that used its quota early is frozen: up to
// (1 − vcpus) × period, 42 ms per period at 1,024 MB (0.58 vCPU) with the kernel's default
// 100 ms, 8 ms at 20 ms. Measured with tools/bench/concurrency.sh's node handler turned into a
// 2 ms CPU spin at one connection, 256 MB (0.145 vCPU, throttled in nearly every period), on
// the 2-core development machine under load:
//   period 100 ms: p99 66–67 ms, mean stall 46–52 ms per throttled period
//   period  20 ms: p99 29–32 ms, mean stall 11–12 ms
//   period  10 ms: p99 34–37 ms, mean stall 5.5 ms, twice the throttles (each a switch)
// 20 ms also keeps the smallest MemorySize exact: 128 MB is 0.0724 vCPU, a quota of 1,447 µs,
// above the kernel's 1,000 µs minimum, where 10 ms would round 128 MB up to 0.1 vCPU.
inline constexpr long long cfs_period_us = 20000;

namespace detail {

// The per-coldbrew tree of groups for one controller ("cpu", "memory", or "freezer" for
// containment, which on cgroup v2 needs no controller: cgroup.kill and cgroup.freeze are core
// files there), shared by the
// limiters: where it is, how it was prepared, and how it is taken down. On cgroup v2 a process
// is in one group for every controller, so the CPU and memory limiters share the parent
// `coldbrew-<pid>` and the per-environment groups (same names), each enabling its controller
// there; create the CPU limiter first and destroy it last (as members declared in that order
// are), so that the one that moved coldbrew into `coldbrew.self` moves it back last.
class cgroup_tree {
public:
    enum class version { v1, v2 };
    cgroup_tree(version v, std::filesystem::path home, std::filesystem::path proc,
                std::string controller);
    ~cgroup_tree();
    cgroup_tree(const cgroup_tree&) = delete;
    cgroup_tree& operator=(const cgroup_tree&) = delete;

    // Tries every hierarchy at or below `root` that has `controller` (cgroup v2 first, then
    // v1); `probe(tree, where, reason)` proves a limit can be set in a prepared tree. Returns
    // the first tree that works, or nullptr with every reason in `why_not`. `try_v2` false
    // skips cgroup v2 (to force cgroup v1 for tests and diagnosis).
    using probe_fn = std::function<std::error_code(cgroup_tree&, const std::string& where,
                                                   std::string& reason)>;
    static std::unique_ptr<cgroup_tree> find(std::string& why_not,
                                             const std::filesystem::path& root,
                                             const std::filesystem::path& proc,
                                             const std::string& controller,
                                             const probe_fn& probe, bool try_v2 = true);

    // Creates the group `name` below the parent (kept if it exists: `created` says which).
    // EINVAL for a name that is not one group's (empty, '/', ".", "..", ours).
    std::error_code make_group(const std::string& name, bool& created);
    // Puts `pid` in the group.
    std::error_code add(const std::filesystem::path& group, int pid);
    void release(const std::string& name);
    // Creates the probe group and hands it to `set`; removes it after.
    std::error_code probe_group(const std::string& where, std::string& reason,
                                const std::function<std::error_code(const std::filesystem::path&)>& set);
    std::string description() const;

    version ver;
    std::filesystem::path home;    // the cgroup coldbrew was in when detection ran
    std::filesystem::path parent;  // home/coldbrew-<pid>
    std::filesystem::path proc;
    std::string controller;

private:
    std::error_code prepare_v1(std::string& reason);
    std::error_code prepare_v2(std::string& reason);
    void teardown();

    std::filesystem::path self_leaf_;   // v2: where coldbrew moved itself; empty if it did not
    bool enabled_in_home_ = false;      // v2: "+<controller>" written to home/cgroup.subtree_control
    bool enabled_in_parent_ = false;    // v2: "+<controller>" written to parent/...
    bool made_parent_ = false;          // this tree created `parent` (and removes it)
};

// Plain file access to cgroup control files (one read, one write(2), no O_CREAT), shared
// with containment.cpp and the reaper. Errors: the errno of open/read/write.
std::error_code read_control(const std::filesystem::path& path, std::string& out);
std::error_code write_control(const std::filesystem::path& path, const std::string& value);
// The pids in `group`'s cgroup.procs; empty when it cannot be read.
std::vector<int> group_pids(const std::filesystem::path& group);
// rmdir, retried a few times over a few milliseconds while the group is busy; true when the
// group is gone.
bool remove_group_dir(const std::filesystem::path& group);

}  // namespace detail

class cpu_limiter {
public:
    // Finds a place to create per-environment groups with a CPU quota: a cgroup v2 hierarchy
    // whose cpu controller is available to coldbrew's cgroup and which coldbrew may write to
    // (a delegated subtree, or root), or a writable cgroup v1 cpu hierarchy. Detection really
    // tries: it creates the parent group and a probe child, writes a quota into the probe and
    // removes it, so a read-only or non-delegated tree is reported here, not at the first
    // limit().
    //
    // Mounts are read from <proc>/self/mountinfo and coldbrew's cgroup from
    // <proc>/self/cgroup; only hierarchies mounted at or below `root` are considered (both
    // parameters exist so that tests can point them at a fake tree).
    //
    // Returns nullptr when neither version works; `why_not` then says what was missing, in
    // one line for the start-up message (e.g. "cgroup v1 cpu hierarchy /sys/fs/cgroup/cpu is
    // not writable: Permission denied"). It is left empty on success.
    static std::unique_ptr<cpu_limiter> detect(std::string& why_not,
                                               const std::filesystem::path& root = "/sys/fs/cgroup",
                                               const std::filesystem::path& proc = "/proc");

    // Moves any process still in a group to coldbrew's own cgroup, then removes every group
    // below the parent and the parent itself (best effort; errors are ignored).
    ~cpu_limiter();
    cpu_limiter(const cpu_limiter&) = delete;
    cpu_limiter& operator=(const cpu_limiter&) = delete;

    // Puts `pid` (the whole process, all its threads) in the group `name` (e.g.
    // "HelloNode-3"), created if absent, with a quota of `vcpus` CPUs: quota = vcpus × period,
    // period cfs_period_us (20,000 µs), a quota below 1,000 µs raised to 1,000 (the kernel's
    // minimum).
    // The pid is moved after it was spawned: a process the handler forks before the move stays
    // in coldbrew's cgroup, unlimited. Errors: EINVAL for an empty name, a name with '/', "."
    // or "..", or vcpus not > 0; otherwise the errno of the failed mkdir or write.
    // On cgroup v1 a quota above that of an enclosing group is refused by the kernel; the
    // group is then left unlimited, which the enclosing quota caps to the same effect.
    std::error_code limit(int pid, const std::string& name, double vcpus);

    // Removes the group `name`; call it after the process exited. rmdir fails with EBUSY
    // while a process (or a dying one) is inside, so it is retried a few times within a few
    // milliseconds, then left for the destructor. Harmless if the group does not exist.
    void release(const std::string& name);

    // Where the group `name` is (it may not exist).
    std::filesystem::path group_path(const std::string& name) const;

    // "cgroup v1 /sys/fs/cgroup/cpu/coldbrew-1234"
    std::string description() const;

private:
    explicit cpu_limiter(std::unique_ptr<detail::cgroup_tree> tree);

    std::unique_ptr<detail::cgroup_tree> tree_;
};

// MemorySize enforced by the kernel. On Lambda the memory an execution environment may use is
// its function's MemorySize, for everything running in it ("the amount of memory available to
// your function at runtime", docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html);
// a function that goes over it is killed and the invocation fails with errorType
// Runtime.OutOfMemory, its REPORT giving Max Memory Used equal to Memory Size (platform.report
// records with "errorType":"Runtime.OutOfMemory" and maxMemoryUsedMB = memorySizeMB, as
// github.com/DataDog/datadog-lambda-extension pull requests 776 and 1241 found on Lambda).
// Where coldbrew may create cgroups, each execution environment's process is put in a memory
// group of its own from its spawn on, limited to MemorySize with swap not counted as room:
//   cgroup v1: <memory hierarchy>/<coldbrew's cgroup>/coldbrew-<pid>/<name>
//              memory.limit_in_bytes, memory.memsw.limit_in_bytes (with swap accounting)
//   cgroup v2: <cgroup2 mount>/<coldbrew's cgroup>/coldbrew-<pid>/<name>
//              memory.max, memory.swap.max = 0, memory.oom.group = 1 (the kernel kills the
//              whole environment, as Lambda ends the whole sandbox)
// Layout, self move and teardown are those of cpu_limiter (detail::cgroup_tree).
//
// Not thread-safe: use from one thread (the loop thread).
class memory_limiter {
public:
    // Finds a cgroup v2 hierarchy with the memory controller available to coldbrew's cgroup
    // and delegated to it, or a writable cgroup v1 memory hierarchy. Detection really tries:
    // it creates the parent group and a probe child, writes a limit into the probe and removes
    // it. `root` and `proc` as in cpu_limiter::detect. Returns nullptr when neither works;
    // `why_not` then says why in one line (e.g. "cgroup v1 memory hierarchy
    // /sys/fs/cgroup/memory is not writable: Permission denied"); empty on success.
    static std::unique_ptr<memory_limiter> detect(std::string& why_not,
                                                  const std::filesystem::path& root = "/sys/fs/cgroup",
                                                  const std::filesystem::path& proc = "/proc");

    // Moves any process still in a group to coldbrew's own cgroup and removes the groups.
    ~memory_limiter();
    memory_limiter(const memory_limiter&) = delete;
    memory_limiter& operator=(const memory_limiter&) = delete;

    // Puts `pid` in the group `name` (created if absent) limited to `bytes` of memory (the
    // kernel rounds down to whole pages) and no swap beyond it. Call it right after the spawn:
    // what the process allocated before the move stays charged to coldbrew's cgroup, and a
    // process it forked before the move stays outside. Errors: EINVAL for a bad name (as
    // cpu_limiter::limit), pid <= 0 or bytes == 0; otherwise the errno of the failed mkdir or
    // write (EBUSY on v1 when the group already uses more than `bytes`).
    std::error_code limit(int pid, const std::string& name, std::uint64_t bytes);

    // Whether the kernel's OOM killer killed a process of group `name` since limit() put the
    // first process there: memory.events `oom_kill` (v2), memory.oom_control `oom_kill` (v1,
    // kernel 4.13 and later) or, on older v1 kernels, memory.failcnt (the limit was hit, which
    // without swap is where the OOM killer acts). False for a group limit() did not make.
    bool oom_killed(const std::string& name) const;

    // The group's peak memory in bytes since it was made: memory.peak (v2, kernel 5.19 and
    // later) or memory.max_usage_in_bytes (v1). Page cache charged to the group counts, as it
    // counts towards the limit. None when the kernel does not say or the group is unknown.
    std::optional<std::uint64_t> peak_bytes(const std::string& name) const;

    // Removes the group `name` (after the process exited); harmless if it does not exist.
    void release(const std::string& name);

    std::filesystem::path group_path(const std::string& name) const;

    // "cgroup v1 /sys/fs/cgroup/memory/coldbrew-1234"
    std::string description() const;

private:
    explicit memory_limiter(std::unique_ptr<detail::cgroup_tree> tree);

    // A group limit() made: its OOM count when the first process went in, and the files read
    // after every invocation, kept open (reread_file.hpp).
    struct group {
        std::uint64_t oom_at_start = 0;
        reread_file oom;          // memory.events (v2); memory.oom_control or memory.failcnt (v1)
        bool oom_is_count = false;  // the file is a bare number (memory.failcnt)
        reread_file peak;         // memory.peak (v2), memory.max_usage_in_bytes (v1)
    };
    std::uint64_t oom_count(const group& g) const;

    std::unique_ptr<detail::cgroup_tree> tree_;
    std::map<std::string, group> groups_;
};

}  // namespace coldbrew::supervisor
