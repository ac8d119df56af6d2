#include "emulator/supervisor/reaper.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include "emulator/supervisor/cgroup.hpp"
#include "emulator/supervisor/containment.hpp"

namespace coldbrew::supervisor {

namespace {
// The reaper exits right after its end-of-file and the kills; this bounds the wait for it.
constexpr int exit_wait_rounds = 2000;
constexpr auto exit_wait_pause = std::chrono::milliseconds(1);
}  // namespace

reaper::reaper(uv_loop_t* loop, const std::string& exe, std::error_code& ec, containment* contain)
    : loop_(loop), contain_(contain) {
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
    if (contain_ && contain_->which() == containment::mode::subreaper) {
        // Orphans reparented to coldbrew are reaped as they exit, or they stay zombies.
        sigchld_ = new uv_signal_t;
        uv_signal_init(loop_, sigchld_);
        sigchld_->data = this;
        uv_signal_start(
            sigchld_,
            [](uv_signal_t* s, int) {
                auto* self = static_cast<reaper*>(s->data);
                self->contain_->reap_orphans(self->known_children(), false);
            },
            SIGCHLD);
        uv_unref(reinterpret_cast<uv_handle_t*>(sigchld_));
    }
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

std::vector<int> reaper::known_children() const {
    std::vector<int> pids;
    uv_walk(
        loop_,
        [](uv_handle_t* h, void* arg) {
            if (h->type == UV_PROCESS)
                static_cast<std::vector<int>*>(arg)->push_back(
                    reinterpret_cast<uv_process_t*>(h)->pid);
        },
        &pids);
    return pids;
}

reaper::~reaper() {
    if (contain_) contain_->reap_orphans(known_children(), true);
    if (sigchld_)
        uv_close(reinterpret_cast<uv_handle_t*>(sigchld_),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
    auto free_handle = [](uv_handle_t* h) {
        if (h->type == UV_NAMED_PIPE)
            delete reinterpret_cast<uv_pipe_t*>(h);
        else
            delete reinterpret_cast<uv_process_t*>(h);
    };
    uv_close(reinterpret_cast<uv_handle_t*>(pipe_), free_handle);  // EOF for the reaper
    uv_close(reinterpret_cast<uv_handle_t*>(proc_), free_handle);
    // A closed process handle is no longer waited for by libuv: wait here, or the reaper
    // stays a zombie for as long as coldbrew runs on.
    if (pid_ > 0) {
        // The pipe's descriptor is closed by uv_close already; the reaper sees EOF now.
        for (int i = 0; i < exit_wait_rounds; ++i) {
            int status = 0;
            const auto r = ::waitpid(pid_, &status, WNOHANG);
            if (r != 0) break;  // reaped, or already reaped by libuv (ECHILD)
            std::this_thread::sleep_for(exit_wait_pause);
        }
    }
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

void reaper::adopt(int pid, const std::string& group, const std::string& mark) {
    watch(pid);
    if (!contain_) return;
    if (!group.empty() && !contain_->group_path(group).empty()) {
        if (!contain_->adopt(pid, group)) send("+c " + contain_->group_path(group).string() + "\n");
    }
    if (contain_->which() == containment::mode::subreaper && !mark.empty() &&
        mark.find('\n') == std::string::npos)
        send("+m " + mark + "\n");
}

void reaper::end(int pid, bool alive, const std::string& group, const std::string& mark) {
    if (contain_) contain_->end(alive ? pid : 0, group, mark);
    if (pid > 0) ::kill(-pid, SIGKILL);
}

void reaper::release(int pid, const std::string& group, const std::string& mark) {
    forget(pid);
    if (!contain_) return;
    if (!group.empty() && !contain_->group_path(group).empty()) {
        send("-c " + contain_->group_path(group).string() + "\n");
        contain_->release(group);
    }
    if (contain_->which() == containment::mode::subreaper && !mark.empty() &&
        mark.find('\n') == std::string::npos)
        send("-m " + mark + "\n");
}

int run_reaper_main() {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    const auto born = start_ticks(static_cast<int>(::getpid()));
    std::set<int> groups;
    std::set<std::string> cgroups, marks;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.size() < 2) continue;
        const char op = line[0];
        if (op != '+' && op != '-') continue;
        if (line.size() > 3 && (line[1] == 'c' || line[1] == 'm') && line[2] == ' ') {
            auto& set = line[1] == 'c' ? cgroups : marks;
            const std::string value = line.substr(3);
            if (op == '+')
                set.insert(value);
            else
                set.erase(value);
            continue;
        }
        int pgid = std::atoi(line.c_str() + 1);
        if (pgid <= 1) continue;
        if (op == '+')
            groups.insert(pgid);
        else
            groups.erase(pgid);
    }
    for (const auto& g : cgroups)
        kill_cgroup(g, std::filesystem::exists(std::filesystem::path(g) / "cgroup.procs") &&
                           !std::filesystem::exists(std::filesystem::path(g) / "freezer.state"));
    std::vector<int> roots(groups.begin(), groups.end());
    const auto marked =
        marked_processes(std::vector<std::string>(marks.begin(), marks.end()), born);
    roots.insert(roots.end(), marked.begin(), marked.end());
    kill_tree(roots);
    for (int pgid : groups) ::kill(-pgid, SIGKILL);
    // The groups and coldbrew's parent group, now empty (a stale parent is otherwise removed
    // by the next coldbrew that starts).
    std::set<std::string> parents;
    for (const auto& g : cgroups) {
        detail::remove_group_dir(g);
        parents.insert(std::filesystem::path(g).parent_path().string());
    }
    for (const auto& p : parents) ::rmdir(p.c_str());
    return 0;
}

}  // namespace coldbrew::supervisor
