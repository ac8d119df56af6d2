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

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

namespace coldbrew::supervisor {

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
    // period 100,000 µs, a quota below 1,000 µs raised to 1,000 (the kernel's minimum).
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
    std::filesystem::path group_path(const std::string& name) const { return parent_ / name; }

    // "cgroup v1 /sys/fs/cgroup/cpu/coldbrew-1234"
    std::string description() const;

private:
    enum class version { v1, v2 };
    cpu_limiter(version v, std::filesystem::path home, std::filesystem::path proc);
    // Each creates the parent group and proves that a quota can be set; on failure `reason`
    // says why, and the destructor removes what was created.
    std::error_code probe_v1(std::string& reason);
    std::error_code probe_v2(std::string& reason);
    std::error_code probe_quota(const std::string& where, std::string& reason);
    std::error_code set_quota(const std::filesystem::path& group, double vcpus);
    void teardown();

    version version_;
    std::filesystem::path home_;   // the cgroup coldbrew was in when detect() ran
    std::filesystem::path parent_;  // home_/coldbrew-<pid>
    std::filesystem::path proc_;
    std::filesystem::path self_leaf_;    // v2: where coldbrew moved itself; empty if it did not
    bool enabled_cpu_in_home_ = false;   // v2: "+cpu" written to home_/cgroup.subtree_control
    bool enabled_cpu_in_parent_ = false;  // v2: "+cpu" written to parent_/cgroup.subtree_control
};

}  // namespace coldbrew::supervisor
