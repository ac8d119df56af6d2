#pragma once
// Integration-test harness: starts the real `coldbrew` binary as a child process, reads its
// output, and talks HTTP to it over loopback. Every process it starts is ended by its
// destructor.

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace coldbrew::testing {

struct http_reply {
    int status = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::optional<std::string> header(const std::string& name) const;  // case-insensitive
    std::vector<std::string> all(const std::string& name) const;
};

// One HTTP/1.1 request on a fresh connection to 127.0.0.1:port (Connection: close).
// Throws std::runtime_error when the connection fails or no response arrives in time.
http_reply http_request(int port, const std::string& method, const std::string& target,
                        const std::string& body = "",
                        const std::vector<std::pair<std::string, std::string>>& headers = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(20));

// How one request on a fresh connection ended, for tests of injected faults.
struct http_attempt_result {
    enum class ending { answered, reset, timed_out, closed } end = ending::closed;
    http_reply reply;  // when answered
    std::chrono::milliseconds elapsed{0};
    std::size_t bytes = 0;  // response bytes received (all of them when answered)
};

// Like http_request, but never throws for what a fault does: a connection reset
// (ECONNRESET), no answer within `timeout` (the client gives up and closes), or a close
// without a response.
http_attempt_result http_attempt(int port, const std::string& method, const std::string& target,
                                 const std::string& body = "",
                                 const std::vector<std::pair<std::string, std::string>>& headers = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20));

// A running `coldbrew` child with stdout and stderr captured line by line.
class coldbrew_process {
public:
    // Runs `coldbrew <args…>`; env entries are added to the child's environment. `program`
    // (an absolute path) runs something else the same way, e.g. an example's script.
    explicit coldbrew_process(std::vector<std::string> args,
                              std::map<std::string, std::string> env = {},
                              std::string program = {});
    ~coldbrew_process();  // SIGKILL if still running, then waits
    coldbrew_process(const coldbrew_process&) = delete;
    coldbrew_process& operator=(const coldbrew_process&) = delete;

    // For `up`: waits for "gateway listening on http://host:PORT" and returns PORT.
    int wait_for_port(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    // For `up`: the admin API's port ("admin API listening on http://host:PORT").
    int wait_for_admin_port(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    // For `up`: the Invoke API's port.
    int wait_for_invoke_port(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    // Waits until some output line satisfies pred; returns it.
    std::optional<std::string> wait_for_line(const std::function<bool(const std::string&)>& pred,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(10));
    std::vector<std::string> lines() const;  // all output so far (stdout and stderr)
    std::string stdout_text() const;
    std::string stderr_text() const;

    void signal(int sig);
    // Waits for exit; returns the exit code (or 128+signal); nullopt on timeout.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    int pid() const { return pid_; }

private:
    void reader(int fd, bool is_stdout);
    int pid_ = -1;
    int out_fd_ = -1, err_fd_ = -1;
    std::optional<int> exit_code_;
    std::thread out_thread_, err_thread_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    int readers_done_ = 0;  // reader threads that reached the end of their pipe (under mu_)
    std::vector<std::string> lines_;
    std::string stdout_, stderr_;
};

// A command that runs to its end (validate, invoke, sim): its exit code (-1 when it did not
// end within `timeout`) and what it printed.
struct run_result {
    int code = -1;
    std::string out, err;
};
run_result run_to_exit(const std::vector<std::string>& args,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A process that no longer runs (gone, or a zombie nobody has reaped yet).
bool process_gone(int pid);
bool wait_gone(int pid, std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The whole file, as bytes ("" when it cannot be read).
std::string read_file(const std::filesystem::path& p);

// A temporary directory removed at destruction.
class temp_dir {
public:
    temp_dir();
    ~temp_dir();
    const std::filesystem::path& path() const { return path_; }
    void write(const std::string& relative, const std::string& content, bool executable = false);

private:
    std::filesystem::path path_;
};

// Writes a SAM app into `dir` whose functions all run the scripted fake handler
// (tests/fakes/fake_handler.cpp) as their `bootstrap` from `fn/`: template.yaml is the header,
// Globals.Function (provided.al2023, the handler, CodeUri fn, then `globals`, each line
// indented by 4) and `resources` under Resources (indented by 2).
void write_fake_app(temp_dir& dir, const std::string& globals, const std::string& resources);

inline std::filesystem::path source_dir() { return COLDBREW_SOURCE_DIR; }
inline std::string coldbrew_binary() { return COLDBREW_BINARY; }
inline std::string fake_handler_binary() { return COLDBREW_FAKE_HANDLER; }

}  // namespace coldbrew::testing
