#pragma once
// Child processes on the libuv loop. Each process is started in a new session (setsid), so it
// leads its own process group and kill() ends the handler together with everything it
// started. Its stdout and stderr arrive line by line. Every group is registered with the
// reaper (reaper.hpp), which kills it if coldbrew itself dies without cleaning up; with the
// reaper's containment, a process's detached descendants end with it too: when it is killed
// and when it exits.

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace coldbrew::supervisor {

class reaper;

struct spawn_options {
    std::string file;               // executable; resolved against PATH when it has no '/'
    std::vector<std::string> args;  // argv, args[0] included
    std::vector<std::string> env;   // "KEY=value", the child's whole environment
    std::string cwd;
    // For an execution environment (both may be empty): its containment group name, and an
    // entry of `env` that marks its processes (containment.hpp). With a reaper, the process
    // is adopted into its containment, and everything it started ends with it.
    std::string group;
    std::string mark;
};

struct exit_status {
    long long exit_code = 0;  // valid when term_signal == 0
    int term_signal = 0;
    // Lambda's wording (RIE, Go's os/exec): "exit status 42" or "signal: killed".
    std::string describe() const;
};

struct process_callbacks {
    std::function<void(std::string_view line)> on_stdout;
    std::function<void(std::string_view line)> on_stderr;
    std::function<void(exit_status)> on_exit;  // after both pipes hit EOF or the group is killed
};

class process {
public:
    ~process();  // kills the group if still running; callbacks are not called afterwards
    process(const process&) = delete;
    process& operator=(const process&) = delete;

    int pid() const noexcept;
    bool running() const noexcept;
    // SIGKILL to the whole process group and, with a containment, to everything the process
    // started. Idempotent.
    void kill();
    // Hands on, without waiting, what the process wrote to stdout and stderr that has not been
    // read yet, an unfinished last line included as a line of its own. Its output arrives on
    // pipes that race whatever else it talks to: an execution environment calls this when an
    // invocation ends, so that what the handler wrote before answering comes before END.
    void flush_output();

    struct state;

private:
    friend class supervisor;
    explicit process(std::shared_ptr<state> s) : state_(std::move(s)) {}
    std::shared_ptr<state> state_;
};

class supervisor {
public:
    // reaper may be null (tests of the supervisor itself).
    supervisor(uv_loop_t* loop, reaper* reaper) : loop_(loop), reaper_(reaper) {}

    std::unique_ptr<process> spawn(const spawn_options& options, process_callbacks callbacks,
                                   std::error_code& ec);

private:
    uv_loop_t* loop_;
    reaper* reaper_;
};

}  // namespace coldbrew::supervisor

namespace coldbrew::supervisor {

// Raises this process's soft limit on open files towards its hard limit (at most 65,536) and
// returns the soft limit now in force. Each execution environment holds descriptors in
// coldbrew (its Runtime API connection, output pipes, the files its memory is read from), and
// a stack of a few hundred functions passes the common soft limit of 1,024. Every process
// started afterwards gets the limit coldbrew started with back (prlimit(2) right after the
// spawn), so handlers see the limit they saw before.
std::uint64_t raise_open_files_limit();

// Peak resident memory (VmHWM) of `pid` and its descendants, in MB rounded up, read from
// /proc; 0 when unavailable. This is REPORT's "Max Memory Used": on Lambda it is the
// sandbox's peak, which locally is the handler process tree's.
int peak_memory_mb(int pid);

// peak_memory_mb for one process read again and again (after every invocation): its
// /proc/<pid>/status and children list stay open between readings (reread_file.hpp), so a
// reading of a process without children is two preads. Descendants are read by path.
class peak_memory_reader {
public:
    peak_memory_reader();
    ~peak_memory_reader();
    peak_memory_reader(const peak_memory_reader&) = delete;
    peak_memory_reader& operator=(const peak_memory_reader&) = delete;

    // As peak_memory_mb(pid); a new pid reopens the files.
    int mb(int pid);

private:
    struct files;
    int pid_ = 0;
    std::unique_ptr<files> files_;
};

}  // namespace coldbrew::supervisor
