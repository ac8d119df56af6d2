#include "emulator/supervisor/supervisor.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "emulator/supervisor/reaper.hpp"
#include "emulator/supervisor/reread_file.hpp"

namespace coldbrew::supervisor {

namespace {
// The limit on open files coldbrew started with, once raise_open_files_limit() raised it.
struct rlimit started_files_limit {};
}  // namespace

std::uint64_t raise_open_files_limit() {
    struct rlimit now {};
    if (::getrlimit(RLIMIT_NOFILE, &now) != 0) return 0;
    if (started_files_limit.rlim_cur == 0) started_files_limit = now;
    // At most 65,536: plenty for a thousand environments, and not the billion some hard limits
    // allow, which code that walks every descriptor number would pay for.
    constexpr rlim_t enough = 65536;
    const rlim_t want = now.rlim_max == RLIM_INFINITY ? enough : std::min(now.rlim_max, enough);
    if (want > now.rlim_cur) {
        struct rlimit raised = now;
        raised.rlim_cur = want;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return want;
    }
    return now.rlim_cur;
}

std::string exit_status::describe() const {
    if (term_signal == 0) return "exit status " + std::to_string(exit_code);
    // Go's os/exec wording, which Lambda's platform messages use.
    switch (term_signal) {
    case SIGKILL: return "signal: killed";
    case SIGTERM: return "signal: terminated";
    case SIGSEGV: return "signal: segmentation fault";
    case SIGABRT: return "signal: aborted";
    case SIGINT: return "signal: interrupt";
    case SIGBUS: return "signal: bus error";
    case SIGPIPE: return "signal: broken pipe";
    default: return "signal: " + std::to_string(term_signal);
    }
}

namespace {
// A line longer than this is delivered in pieces rather than buffered without bound.
constexpr std::size_t max_line_bytes = 256 * 1024;
// After the process exits, stragglers in its group are killed and the pipes drain; if
// something outside the group still holds them, on_exit is delivered after this long anyway.
constexpr std::uint64_t drain_grace_ms = 200;
}  // namespace

struct process::state {
    uv_process_t proc{};
    uv_pipe_t out{};
    uv_pipe_t err{};
    uv_timer_t drain{};
    int open_handles = 0;
    std::shared_ptr<state> self;  // held while any uv handle is open
    process_callbacks callbacks;
    reaper* reaper_ = nullptr;
    int pid = 0;
    bool running = false;
    bool out_eof = false, err_eof = false;
    bool exited = false, finished = false;
    exit_status status;
    std::string out_buf, err_buf;
    char readbuf[64 * 1024];

    void close_handle(uv_handle_t* h) {
        if (uv_is_closing(h)) return;
        uv_close(h, [](uv_handle_t* h) {
            auto* s = static_cast<state*>(h->data);
            if (--s->open_handles == 0) s->self.reset();
        });
    }

    std::string group, mark;
    bool ended = false;

    void kill_group() {
        if (pid <= 0 || finished) return;
        if (reaper_)
            reaper_->end(pid, !exited, group, mark);
        else
            ::kill(-pid, SIGKILL);
        ended = true;
    }

    static void emit(std::string& buf, const std::function<void(std::string_view)>& cb,
                     bool flush_all) {
        std::size_t start = 0;
        for (;;) {
            auto nl = buf.find('\n', start);
            if (nl == std::string::npos) break;
            std::string_view line(buf.data() + start, nl - start);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (cb) cb(line);
            start = nl + 1;
        }
        buf.erase(0, start);
        if ((flush_all && !buf.empty()) || buf.size() > max_line_bytes) {
            if (cb) cb(buf);
            buf.clear();
        }
    }

    void on_read(uv_pipe_t* p, ssize_t n, const uv_buf_t* b) {
        bool is_out = p == &out;
        auto& buf = is_out ? out_buf : err_buf;
        auto& cb = is_out ? callbacks.on_stdout : callbacks.on_stderr;
        if (n > 0) {
            buf.append(b->base, static_cast<std::size_t>(n));
            emit(buf, cb, false);
            return;
        }
        if (n == 0) return;
        emit(buf, cb, true);
        (is_out ? out_eof : err_eof) = true;
        uv_read_stop(reinterpret_cast<uv_stream_t*>(p));
        maybe_finish();
    }

    void flush_output() {
        if (finished) return;
        for (auto* p : {&out, &err}) {
            const bool is_out = p == &out;
            if (is_out ? out_eof : err_eof) continue;
            auto& buf = is_out ? out_buf : err_buf;
            uv_os_fd_t fd;
            if (uv_fileno(reinterpret_cast<uv_handle_t*>(p), &fd) != 0) continue;
            // The pipe is non-blocking (libuv's): EAGAIN ends it; an end of file or an error
            // is left for the read callback, which sees it again.
            for (;;) {
                const ssize_t n = ::read(fd, readbuf, sizeof readbuf);
                if (n <= 0) break;
                buf.append(readbuf, static_cast<std::size_t>(n));
            }
            emit(buf, is_out ? callbacks.on_stdout : callbacks.on_stderr, true);
        }
    }

    void maybe_finish() {
        if (finished || !exited || !(out_eof && err_eof)) return;
        finish();
    }

    void finish() {
        if (finished) return;
        emit(out_buf, callbacks.on_stdout, true);
        emit(err_buf, callbacks.on_stderr, true);
        finished = true;
        if (reaper_) {
            // Whatever the process left behind (its orphans, its group) goes with it.
            if (!ended) reaper_->end(pid, !exited, group, mark);
            reaper_->release(pid, group, mark);
        }
        auto on_exit = std::move(callbacks.on_exit);
        callbacks = {};
        close_handle(reinterpret_cast<uv_handle_t*>(&out));
        close_handle(reinterpret_cast<uv_handle_t*>(&err));
        close_handle(reinterpret_cast<uv_handle_t*>(&drain));
        close_handle(reinterpret_cast<uv_handle_t*>(&proc));
        if (on_exit) on_exit(status);
    }
};

process::~process() {
    if (!state_) return;
    state_->callbacks = {};
    state_->kill_group();
}

int process::pid() const noexcept { return state_->pid; }
bool process::running() const noexcept { return state_->running; }
void process::kill() { state_->kill_group(); }
void process::flush_output() { state_->flush_output(); }

std::unique_ptr<process> supervisor::spawn(const spawn_options& options,
                                           process_callbacks callbacks, std::error_code& ec) {
    auto s = std::make_shared<process::state>();
    s->callbacks = std::move(callbacks);
    s->reaper_ = reaper_;
    s->proc.data = s->out.data = s->err.data = s->drain.data = s.get();
    uv_pipe_init(loop_, &s->out, 0);
    uv_pipe_init(loop_, &s->err, 0);
    uv_timer_init(loop_, &s->drain);
    s->open_handles = 3;
    s->self = s;

    std::vector<char*> argv;
    for (const auto& a : options.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&s->out);
    stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(&s->err);

    uv_process_options_t po{};
    po.file = options.file.c_str();
    po.args = argv.data();
    po.env = envp.data();
    po.cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
    // setsid(): the child leads a new process group, so one kill() ends all it started.
    po.flags = UV_PROCESS_DETACHED;
    po.stdio_count = 3;
    po.stdio = stdio;
    po.exit_cb = [](uv_process_t* p, int64_t exit_code, int term_signal) {
        auto* st = static_cast<process::state*>(p->data);
        st->running = false;
        st->exited = true;
        st->status.exit_code = exit_code;
        st->status.term_signal = term_signal;
        // Lambda resets the whole sandbox: whatever the handler started goes with it.
        if (st->reaper_)
            st->reaper_->end(st->pid, false, st->group, st->mark);
        else
            ::kill(-st->pid, SIGKILL);
        st->ended = true;
        st->maybe_finish();
        if (!st->finished)
            uv_timer_start(
                &st->drain, [](uv_timer_t* t) { static_cast<process::state*>(t->data)->finish(); },
                drain_grace_ms, 0);
    };

    int rc = uv_spawn(loop_, &s->proc, &po);
    if (rc != 0) {
        ec = std::error_code(-rc, std::generic_category());
        s->finished = true;
        s->callbacks = {};
        // uv_spawn initialised the process handle even on failure; close all four.
        s->open_handles = 4;
        s->close_handle(reinterpret_cast<uv_handle_t*>(&s->out));
        s->close_handle(reinterpret_cast<uv_handle_t*>(&s->err));
        s->close_handle(reinterpret_cast<uv_handle_t*>(&s->drain));
        s->close_handle(reinterpret_cast<uv_handle_t*>(&s->proc));
        return nullptr;
    }
    s->open_handles = 4;
    s->pid = s->proc.pid;
    s->running = true;
    // The child inherited coldbrew's raised limit on open files; give it Lambda's: 1,024
    // file descriptors, soft and hard ("Lambda quotas", function configuration, deployment
    // and execution), never above the hard limit coldbrew started with. It is still starting
    // its runtime when this runs.
    if (started_files_limit.rlim_cur != 0) {
        constexpr rlim_t lambda_files = 1024;
        const rlim_t cap = started_files_limit.rlim_max == RLIM_INFINITY
                               ? lambda_files
                               : std::min(started_files_limit.rlim_max, lambda_files);
        const struct rlimit handler_limit {cap, cap};
        ::prlimit(s->pid, RLIMIT_NOFILE, &handler_limit, nullptr);
    }
    s->group = options.group;
    s->mark = options.mark;
    if (reaper_) reaper_->adopt(s->pid, s->group, s->mark);

    auto alloc = [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* st = static_cast<process::state*>(h->data);
        *buf = uv_buf_init(st->readbuf, sizeof(st->readbuf));
    };
    auto read = [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
        auto* st = static_cast<process::state*>(stream->data);
        st->on_read(reinterpret_cast<uv_pipe_t*>(stream), n, buf);
    };
    uv_read_start(reinterpret_cast<uv_stream_t*>(&s->out), alloc, read);
    uv_read_start(reinterpret_cast<uv_stream_t*>(&s->err), alloc, read);
    ec.clear();
    return std::unique_ptr<process>(new process(std::move(s)));
}

}  // namespace coldbrew::supervisor

namespace coldbrew::supervisor {

namespace {
// VmHWM's value in kB from /proc/<pid>/status text; 0 when absent.
long hwm_kb(const std::string& status) {
    const auto at = status.find("\nVmHWM:");
    if (at == std::string::npos) return 0;
    return std::strtol(status.c_str() + at + 7, nullptr, 10);
}

long read_hwm_kb(int pid) {
    std::string text;
    if (!reread_file("/proc/" + std::to_string(pid) + "/status").read(text)) return 0;
    return hwm_kb(text);
}

std::string children_path(int pid) {
    return "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
}

long tree_hwm_kb(int pid, int depth);

long children_hwm_kb(const std::string& list, int depth) {
    long total = 0;
    const char* p = list.c_str();
    char* end = nullptr;
    for (long child = std::strtol(p, &end, 10); end != p; child = std::strtol(p, &end, 10)) {
        p = end;
        if (child > 0) total += tree_hwm_kb(static_cast<int>(child), depth + 1);
    }
    return total;
}

long tree_hwm_kb(int pid, int depth) {
    long total = read_hwm_kb(pid);
    if (depth > 8) return total;
    std::string list;
    if (!reread_file(children_path(pid)).read(list)) return total;
    return total + children_hwm_kb(list, depth);
}
}  // namespace

int peak_memory_mb(int pid) {
    if (pid <= 0) return 0;
    long kb = tree_hwm_kb(pid, 0);
    return static_cast<int>((kb + 1023) / 1024);
}

struct peak_memory_reader::files {
    reread_file status, children;
    std::string text;  // reused between readings
};

peak_memory_reader::peak_memory_reader() : files_(std::make_unique<files>()) {}
peak_memory_reader::~peak_memory_reader() = default;

int peak_memory_reader::mb(int pid) {
    if (pid <= 0) return 0;
    if (pid != pid_) {
        pid_ = pid;
        files_->status = reread_file("/proc/" + std::to_string(pid) + "/status");
        files_->children = reread_file(children_path(pid));
    }
    long kb = 0;
    if (files_->status.read(files_->text)) kb = hwm_kb(files_->text);
    if (files_->children.read(files_->text)) kb += children_hwm_kb(files_->text, 0);
    return static_cast<int>((kb + 1023) / 1024);
}

}  // namespace coldbrew::supervisor
