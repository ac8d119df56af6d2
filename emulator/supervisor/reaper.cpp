#include "emulator/supervisor/reaper.hpp"

#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <set>
#include <string>

namespace coldbrew::supervisor {

reaper::reaper(uv_loop_t* loop, const std::string& exe, std::error_code& ec) : loop_(loop) {
    pipe_ = new uv_pipe_t;
    proc_ = new uv_process_t;
    uv_pipe_init(loop_, pipe_, 0);
    std::string arg0 = exe, arg1 = "__reaper";
    char* args[] = {arg0.data(), arg1.data(), nullptr};
    uv_stdio_container_t stdio[3];
    stdio[0].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_READABLE_PIPE);
    stdio[0].data.stream = reinterpret_cast<uv_stream_t*>(pipe_);
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = 1;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    uv_process_options_t po{};
    po.file = exe.c_str();
    po.args = args;
    // Its own session: a Ctrl-C to coldbrew's terminal group must not stop the reaper first.
    po.flags = UV_PROCESS_DETACHED;
    po.stdio_count = 3;
    po.stdio = stdio;
    po.exit_cb = [](uv_process_t*, int64_t, int) {};
    int rc = uv_spawn(loop_, proc_, &po);
    if (rc != 0) {
        ec = std::error_code(-rc, std::generic_category());
        return;
    }
    pid_ = proc_->pid;
    // The reaper must not keep the loop alive on its own.
    uv_unref(reinterpret_cast<uv_handle_t*>(proc_));
    uv_unref(reinterpret_cast<uv_handle_t*>(pipe_));
    ec.clear();
}

reaper::~reaper() {
    auto free_handle = [](uv_handle_t* h) {
        if (h->type == UV_NAMED_PIPE)
            delete reinterpret_cast<uv_pipe_t*>(h);
        else
            delete reinterpret_cast<uv_process_t*>(h);
    };
    uv_close(reinterpret_cast<uv_handle_t*>(pipe_), free_handle);  // EOF for the reaper
    uv_close(reinterpret_cast<uv_handle_t*>(proc_), free_handle);
}

void reaper::send(const std::string& line) {
    if (pid_ == 0) return;
    // Synchronous, so the group is registered before anything else can happen; the pipe
    // buffer (64 KiB) holds far more than the few bytes per environment this writes.
    uv_buf_t buf = uv_buf_init(const_cast<char*>(line.data()), static_cast<unsigned>(line.size()));
    uv_try_write(reinterpret_cast<uv_stream_t*>(pipe_), &buf, 1);
}

void reaper::watch(int pgid) { send("+" + std::to_string(pgid) + "\n"); }
void reaper::forget(int pgid) { send("-" + std::to_string(pgid) + "\n"); }

int run_reaper_main() {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    std::set<int> groups;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.size() < 2) continue;
        int pgid = std::atoi(line.c_str() + 1);
        if (pgid <= 1) continue;
        if (line[0] == '+')
            groups.insert(pgid);
        else if (line[0] == '-')
            groups.erase(pgid);
    }
    for (int pgid : groups) ::kill(-pgid, SIGKILL);
    return 0;
}

}  // namespace coldbrew::supervisor
