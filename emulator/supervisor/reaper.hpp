#pragma once
// Guarantees that no handler process outlives coldbrew, even when coldbrew is killed with
// SIGKILL and gets no chance to clean up.
//
// coldbrew starts one reaper process (its own binary, `coldbrew __reaper`) with a pipe on its
// stdin and tells it, one line per change, what exists:
//   "+123" / "-123"        a process group (its leader's pid)
//   "+c PATH" / "-c PATH"  an execution environment's cgroup (containment.hpp, cgroup modes)
//   "+m ENTRY" / "-m ENTRY" an environment's mark, an entry of its processes' environment
//                          (subreaper mode: found by it once coldbrew is gone)
// The reaper ignores terminal signals and blocks on that pipe; when it reads end-of-file —
// coldbrew exited, however it died — it kills every registered cgroup (containment's
// kill_cgroup), the process trees of the registered groups' leaders (containment's
// kill_tree: a detached descendant is still their descendant), every process carrying a
// registered mark that started after the reaper, and every registered process group, then
// exits. (PR_SET_PDEATHSIG would cover only direct children, not what a bootstrap script
// starts.) The destructor waits for the reaper, so it is never left a zombie.
//
// With a containment (may be null), the reaper is also where execution environments are
// adopted into it and ended: adopt(), end(), release(); in subreaper mode it reaps the
// orphans reparented to coldbrew on SIGCHLD.

#include <uv.h>

#include <string>
#include <system_error>
#include <vector>

namespace coldbrew::supervisor {

class containment;

class reaper {
public:
    // Starts `exe __reaper`. exe is coldbrew's own path (uv_exepath).
    reaper(uv_loop_t* loop, const std::string& exe, std::error_code& ec,
           containment* contain = nullptr);
    // Ends what is left (subreaper mode: every orphan), closes the pipe (the reaper kills
    // what is still registered and exits) and waits for the reaper to exit (bounded).
    ~reaper();
    reaper(const reaper&) = delete;
    reaper& operator=(const reaper&) = delete;

    void watch(int pgid);
    void forget(int pgid);

    // An execution environment: its process `pid` (leader of its own group), its group name
    // (containment's cgroup; may be empty) and its mark ("KEY=value" of its environment; may
    // be empty). adopt() right after the spawn; end() to kill everything of it (also once
    // `pid` exited); release() once it is gone.
    void adopt(int pid, const std::string& group, const std::string& mark);
    // `alive` false once libuv reaped `pid`: the number may be reused, so only its process
    // group (which keeps the number while it has members), cgroup and mark are used.
    void end(int pid, bool alive, const std::string& group, const std::string& mark);
    void release(int pid, const std::string& group, const std::string& mark);

    int pid() const noexcept { return pid_; }
    containment* contained() const noexcept { return contain_; }

private:
    void send(const std::string& line);
    std::vector<int> known_children() const;
    uv_loop_t* loop_;
    containment* contain_;
    uv_process_t* proc_ = nullptr;
    uv_pipe_t* pipe_ = nullptr;
    uv_signal_t* sigchld_ = nullptr;
    int pid_ = 0;
};

// The body of `coldbrew __reaper`: reads stdin until EOF, then kills what is registered.
int run_reaper_main();

}  // namespace coldbrew::supervisor
