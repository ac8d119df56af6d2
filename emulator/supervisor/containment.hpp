#pragma once
// Containment: every process an execution environment starts, at any depth and however it
// detaches (setsid, a double fork, node's `spawn(…, {detached: true}).unref()`), ends with the
// environment and with coldbrew. On Lambda the sandbox is the boundary: when it is shut down,
// nothing started inside it survives. A process group is not enough locally, since a
// detached process leaves it; two mechanisms replace it:
//
//   cgroup   Each environment's handler process is put in a group of its own right after its
//            spawn (uv_spawn returns once the child has exec'd, before the handler's code can
//            fork); its descendants inherit the group whatever they do with sessions. Ending
//            the environment kills the group: cgroup v2 `cgroup.kill` (Linux 5.14), or, on
//            older v2 kernels and on the cgroup v1 freezer hierarchy, freeze the group, SIGKILL
//            every pid in cgroup.procs, thaw, and repeat until it is empty (on a v1 system
//            without a writable freezer, the pids hierarchy, walked until empty). Layout:
//              <hierarchy>/<coldbrew's cgroup>/coldbrew-<pid>/<environment name>
//            (the environment names of the CPU and memory limiters, so that on cgroup v2 the
//            groups are shared and nothing is moved out of its environment's group).
//   subreaper
//            Where no cgroup hierarchy is writable, coldbrew is made a child subreaper
//            (prctl PR_SET_CHILD_SUBREAPER): an orphaned descendant is reparented to coldbrew,
//            not to PID 1. Ending an environment stops its process tree (SIGSTOP, walked
//            through /proc until no new pid appears, so nothing forks away meanwhile), then
//            SIGKILLs it; descendants already orphaned are found among coldbrew's children by
//            the environment's mark (an entry of their initial environment, the environment's
//            AWS_LAMBDA_RUNTIME_API address) and killed with their trees. An orphan that
//            cleared its environment is killed when coldbrew shuts down.
//
// In both modes the reaper (reaper.hpp) is told of each environment's group, process group
// and mark, so that coldbrew's own SIGKILL ends them too.
//
// COLDBREW_CONTAINMENT=subreaper|cgroup-v1|cgroup|auto (default auto) forces a mode, for tests
// and diagnosis; a forced cgroup mode that is unavailable falls back to the subreaper.
//
// Not thread-safe: use from one thread (the loop thread).

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace coldbrew::supervisor {

namespace detail {
class cgroup_tree;
}

class containment {
public:
    enum class mode { cgroup_v2, cgroup_v1, subreaper, none };

    // `request` is COLDBREW_CONTAINMENT's value ("" = auto). `root` and `proc` as in
    // cpu_limiter::detect. Never null: when cgroups are out of reach the subreaper applies,
    // and when even prctl fails (not Linux), mode none with process groups only.
    static std::unique_ptr<containment> detect(const std::string& request,
                                               const std::filesystem::path& root = "/sys/fs/cgroup",
                                               const std::filesystem::path& proc = "/proc");
    ~containment();  // kills what is left in its groups and removes them
    containment(const containment&) = delete;
    containment& operator=(const containment&) = delete;

    mode which() const noexcept { return mode_; }
    // One line for `up`'s banner, e.g. "Containment: cgroup v2 /sys/fs/cgroup/x/coldbrew-12
    // (cgroup.kill); every process an environment starts ends with it".
    std::string description() const;

    // Cgroup modes: puts `pid` in the group `name` (created if absent). Errors: EINVAL for a
    // bad name (cpu_limiter::limit's rule), else the errno of the mkdir or write. Does nothing
    // in the other modes.
    std::error_code adopt(int pid, const std::string& name);
    // Ends everything of the environment: its group (cgroup modes), the tree below `pid`
    // (0: it exited and was reaped, so its number may be reused), and (subreaper) coldbrew's
    // orphaned children carrying `mark`. Blocks for at most about a second (a group that will not
    // empty is left to the destructor).
    void end(int pid, const std::string& name, const std::string& mark);
    // Removes the group `name` after end(); harmless when it does not exist.
    void release(const std::string& name);
    // Where the group `name` is (empty outside the cgroup modes).
    std::filesystem::path group_path(const std::string& name) const;

    // Subreaper mode: reaps coldbrew's children that exited and that no libuv process
    // handle waits for (`known`, the pids coldbrew spawned itself); `kill_all` first kills
    // every such child (shutdown).
    void reap_orphans(const std::vector<int>& known, bool kill_all);

private:
    containment(mode m, std::unique_ptr<detail::cgroup_tree> tree, std::string why);
    mode mode_;
    std::unique_ptr<detail::cgroup_tree> tree_;
    std::string why_;  // why the cgroup modes were not used, for description()
};

// --- Plain functions, shared by coldbrew and `coldbrew __reaper` ---

// Kills every process in the group and waits (bounded, about a second) until cgroup.procs
// is empty. `v2` selects cgroup.kill (falling back to cgroup.freeze) or freezer.state.
// Returns the number of pids still listed at the end (0 on success).
std::size_t kill_cgroup(const std::filesystem::path& group, bool v2);

// Stops `roots` and all their descendants (walking /proc's parent links until no new pid
// appears), then SIGKILLs them all. Pids that do not exist are skipped. Returns how many
// processes were killed.
std::size_t kill_tree(const std::vector<int>& roots, const std::filesystem::path& proc = "/proc");

// The pids under `proc` whose initial environment (<pid>/environ) holds one of `marks` as a
// whole entry ("KEY=value") and that started no earlier than `not_before_ticks` (the
// starttime field of <pid>/stat, clock ticks since boot; 0 = any).
std::vector<int> marked_processes(const std::vector<std::string>& marks,
                                  unsigned long long not_before_ticks,
                                  const std::filesystem::path& proc = "/proc");

// starttime (field 22) of <proc>/<pid>/stat; 0 when unknown.
unsigned long long start_ticks(int pid, const std::filesystem::path& proc = "/proc");

// The children of `pid` (every thread's), from /proc/<pid>/task/*/children, or by scanning
// parent links where that file is missing.
std::vector<int> children_of(int pid, const std::filesystem::path& proc = "/proc");

}  // namespace coldbrew::supervisor
