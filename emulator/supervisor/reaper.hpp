#pragma once
// Guarantees that no handler process outlives coldbrew, even when coldbrew is killed with
// SIGKILL and gets no chance to clean up.
//
// coldbrew starts one reaper process (its own binary, `coldbrew __reaper`) with a pipe on its
// stdin and tells it, one line per change, which process groups exist ("+123" / "-123"). The
// reaper ignores terminal signals and blocks on that pipe; when it reads end-of-file —
// coldbrew exited, however it died — it sends SIGKILL to every group still registered and
// exits. (PR_SET_PDEATHSIG would cover only direct children, not what a bootstrap script
// starts.)

#include <uv.h>

#include <string>
#include <system_error>

namespace coldbrew::supervisor {

class reaper {
public:
    // Starts `exe __reaper`. exe is coldbrew's own path (uv_exepath).
    reaper(uv_loop_t* loop, const std::string& exe, std::error_code& ec);
    ~reaper();  // closes the pipe: the reaper kills what is left and exits
    reaper(const reaper&) = delete;
    reaper& operator=(const reaper&) = delete;

    void watch(int pgid);
    void forget(int pgid);
    int pid() const noexcept { return pid_; }

private:
    void send(const std::string& line);
    uv_loop_t* loop_;
    uv_process_t* proc_ = nullptr;
    uv_pipe_t* pipe_ = nullptr;
    int pid_ = 0;
};

// The body of `coldbrew __reaper`: reads stdin until EOF, then kills the registered groups.
int run_reaper_main();

}  // namespace coldbrew::supervisor
