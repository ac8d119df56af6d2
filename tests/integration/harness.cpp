#include "tests/integration/harness.hpp"

#include <algorithm>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <random>
#include <stdexcept>

extern char** environ;

namespace coldbrew::testing {

namespace {
bool iequal(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}
}  // namespace

std::optional<std::string> http_reply::header(const std::string& name) const {
    for (const auto& [k, v] : headers)
        if (iequal(k, name)) return v;
    return std::nullopt;
}

std::vector<std::string> http_reply::all(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : headers)
        if (iequal(k, name)) out.push_back(v);
    return out;
}

namespace {

int connect_loopback(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        ::close(fd);
        throw std::runtime_error("connect to port " + std::to_string(port) + " failed");
    }
    return fd;
}

void send_request(int fd, int port, const std::string& method, const std::string& target,
                  const std::string& body,
                  const std::vector<std::pair<std::string, std::string>>& headers) {
    bool has_host = false;
    for (const auto& [k, v] : headers) has_host |= iequal(k, "Host");
    std::string req = method + " " + target + " HTTP/1.1\r\n";
    if (!has_host) req += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
    bool has_length = false;
    for (const auto& [k, v] : headers) {
        req += k + ": " + v + "\r\n";
        has_length |= iequal(k, "Content-Length");
    }
    if (!has_length && (!body.empty() || method == "POST" || method == "PUT"))
        req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "Connection: close\r\n\r\n";
    req += body;
    std::size_t sent = 0;
    while (sent < req.size()) {
        ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;  // the server may answer early (413) and close
        sent += static_cast<std::size_t>(n);
    }
}

enum class read_end { eof, reset, timed_out };

// Reads until EOF, an error or the deadline.
read_end read_all(int fd, std::string& raw, std::chrono::steady_clock::time_point deadline) {
    char buf[65536];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return read_end::timed_out;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n == 0) return read_end::eof;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return errno == ECONNRESET ? read_end::reset : read_end::eof;
        }
        raw.append(buf, static_cast<std::size_t>(n));
    }
}

std::optional<http_reply> parse_reply(std::string raw) {
    // Skip interim 1xx responses (100 Continue).
    while (raw.rfind("HTTP/1.1 1", 0) == 0) {
        auto end = raw.find("\r\n\r\n");
        if (end == std::string::npos) break;
        raw.erase(0, end + 4);
    }
    auto head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos || raw.size() < 12) return std::nullopt;
    http_reply r;
    std::string head = raw.substr(0, head_end);
    r.body = raw.substr(head_end + 4);
    auto line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    r.status = std::stoi(status_line.substr(9, 3));
    std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
        auto e = head.find("\r\n", pos);
        if (e == std::string::npos) e = head.size();
        std::string line = head.substr(pos, e - pos);
        auto colon = line.find(':');
        if (colon != std::string::npos) {
            std::string v = line.substr(colon + 1);
            while (!v.empty() && v.front() == ' ') v.erase(0, 1);
            r.headers.emplace_back(line.substr(0, colon), v);
        }
        pos = e + 2;
    }
    return r;
}

}  // namespace

http_reply http_request(int port, const std::string& method, const std::string& target,
                        const std::string& body,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        std::chrono::milliseconds timeout) {
    int fd = connect_loopback(port);
    send_request(fd, port, method, target, body, headers);
    std::string raw;
    auto end = read_all(fd, raw, std::chrono::steady_clock::now() + timeout);
    ::close(fd);
    if (end == read_end::timed_out)
        throw std::runtime_error("timed out waiting for " + method + " " + target);
    auto r = parse_reply(std::move(raw));
    if (!r) throw std::runtime_error("no HTTP response for " + target);
    return *r;
}

http_attempt_result http_attempt(int port, const std::string& method, const std::string& target,
                                 const std::string& body,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 std::chrono::milliseconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    int fd = connect_loopback(port);
    send_request(fd, port, method, target, body, headers);
    std::string raw;
    auto end = read_all(fd, raw, start + timeout);
    ::close(fd);
    http_attempt_result out;
    out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    out.bytes = raw.size();
    switch (end) {
    case read_end::reset: out.end = http_attempt_result::ending::reset; break;
    case read_end::timed_out: out.end = http_attempt_result::ending::timed_out; break;
    case read_end::eof:
        if (auto r = parse_reply(std::move(raw))) {
            out.end = http_attempt_result::ending::answered;
            out.reply = std::move(*r);
        } else {
            out.end = http_attempt_result::ending::closed;
        }
        break;
    }
    return out;
}

coldbrew_process::coldbrew_process(std::vector<std::string> args, std::map<std::string, std::string> env,
                                   std::string program) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> envs;
    for (char** e = environ; e && *e; ++e) {
        std::string kv(*e);
        auto k = kv.substr(0, kv.find('='));
        if (!env.count(k)) envs.push_back(kv);
    }
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    // Every `up` a test starts gets its own free Invoke API port unless the test picks one, so
    // tests never depend on 3001 being free.
    if (program.empty() && !args.empty() && args[0] == "up" &&
        std::find(args.begin(), args.end(), "--invoke-port") == args.end()) {
        args.push_back("--invoke-port");
        args.push_back("0");
    }
    if (program.empty() && !args.empty() && args[0] == "up" &&
        std::find(args.begin(), args.end(), "--admin-port") == args.end()) {
        args.push_back("--admin-port");
        args.push_back("0");
    }
    args.insert(args.begin(), program.empty() ? coldbrew_binary() : program);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
        ::execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    out_thread_ = std::thread([this] { reader(out_fd_, true); });
    err_thread_ = std::thread([this] { reader(err_fd_, false); });
}

coldbrew_process::~coldbrew_process() {
    if (!exit_code_) {
        ::kill(pid_, SIGKILL);
        wait_exit(std::chrono::seconds(10));
    }
    if (out_thread_.joinable()) out_thread_.join();
    if (err_thread_.joinable()) err_thread_.join();
    ::close(out_fd_);
    ::close(err_fd_);
}

void coldbrew_process::reader(int fd, bool is_stdout) {
    std::string partial;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n <= 0) break;
        std::lock_guard lock(mu_);
        (is_stdout ? stdout_ : stderr_).append(buf, static_cast<std::size_t>(n));
        partial.append(buf, static_cast<std::size_t>(n));
        std::size_t pos;
        while ((pos = partial.find('\n')) != std::string::npos) {
            lines_.push_back(partial.substr(0, pos));
            partial.erase(0, pos + 1);
        }
        cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    if (!partial.empty()) lines_.push_back(partial);
    ++readers_done_;
    cv_.notify_all();
}

std::optional<std::string> coldbrew_process::wait_for_line(const std::function<bool(const std::string&)>& pred,
                                                           std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    std::size_t checked = 0;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        for (; checked < lines_.size(); ++checked)
            if (pred(lines_[checked])) return lines_[checked];
        if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
            for (; checked < lines_.size(); ++checked)
                if (pred(lines_[checked])) return lines_[checked];
            return std::nullopt;
        }
    }
}

int coldbrew_process::wait_for_port(std::chrono::milliseconds timeout) {
    const std::string marker = "gateway listening on http://";
    auto line = wait_for_line([&](const std::string& l) { return l.find(marker) != std::string::npos; }, timeout);
    if (!line) throw std::runtime_error("coldbrew did not start; output:\n" + stdout_text() + stderr_text());
    auto colon = line->rfind(':');
    return std::stoi(line->substr(colon + 1));
}

int coldbrew_process::wait_for_admin_port(std::chrono::milliseconds timeout) {
    const std::string marker = "admin API listening on http://";
    auto line = wait_for_line([&](const std::string& l) { return l.find(marker) != std::string::npos; }, timeout);
    if (!line) throw std::runtime_error("coldbrew's admin API did not start; output:\n" + stdout_text() + stderr_text());
    return std::stoi(line->substr(line->rfind(':') + 1));
}

int coldbrew_process::wait_for_invoke_port(std::chrono::milliseconds timeout) {
    const std::string marker = "invoke API listening on http://";
    auto line = wait_for_line([&](const std::string& l) { return l.find(marker) != std::string::npos; }, timeout);
    if (!line) throw std::runtime_error("coldbrew's invoke API did not start; output:\n" + stdout_text() + stderr_text());
    return std::stoi(line->substr(line->rfind(':') + 1));
}

std::vector<std::string> coldbrew_process::lines() const {
    std::lock_guard lock(mu_);
    return lines_;
}
std::string coldbrew_process::stdout_text() const {
    std::lock_guard lock(mu_);
    return stdout_;
}
std::string coldbrew_process::stderr_text() const {
    std::lock_guard lock(mu_);
    return stderr_;
}

void coldbrew_process::signal(int sig) { ::kill(pid_, sig); }

std::optional<int> coldbrew_process::wait_exit(std::chrono::milliseconds timeout) {
    if (exit_code_) return exit_code_;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            // The output it wrote last is still in the pipes: let the readers drain them, so
            // stdout_text() right after this sees everything (bounded, in case a leftover
            // grandchild still holds a pipe open).
            std::unique_lock lock(mu_);
            cv_.wait_for(lock, std::chrono::seconds(2), [this] { return readers_done_ == 2; });
            return exit_code_;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
}

bool process_gone(int pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    // Read with plain read(2): a process that exits mid-read makes it fail with ESRCH, which
    // std::filebuf reports by throwing.
    std::string content;
    const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true;
    char buf[1024];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) content.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (n < 0) return true;
    auto close_paren = content.rfind(')');
    if (close_paren == std::string::npos) return true;
    return content.size() > close_paren + 2 && content[close_paren + 2] == 'Z';
}

run_result run_to_exit(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
    coldbrew_process p(args);
    run_result r;
    r.code = p.wait_exit(timeout).value_or(-1);
    r.out = p.stdout_text();
    r.err = p.stderr_text();
    return r;
}

bool wait_gone(int pid, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (process_gone(pid)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return process_gone(pid);
}

temp_dir::temp_dir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("coldbrew-test-" + std::to_string(rd()) + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
}

temp_dir::~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

void temp_dir::write(const std::string& relative, const std::string& content, bool executable) {
    auto p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    if (executable)
        std::filesystem::permissions(p, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                            std::filesystem::perms::group_exec);
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_fake_app(temp_dir& dir, const std::string& globals, const std::string& resources) {
    std::filesystem::create_directories(dir.path() / "fn");
    std::filesystem::copy_file(fake_handler_binary(), dir.path() / "fn" / "bootstrap",
                               std::filesystem::copy_options::overwrite_existing);
    dir.write("template.yaml", "AWSTemplateFormatVersion: '2010-09-09'\n"
                               "Transform: AWS::Serverless-2016-10-31\n"
                               "Globals:\n"
                               "  Function:\n"
                               "    Runtime: provided.al2023\n"
                               "    Handler: fake.handler\n"
                               "    CodeUri: fn\n" +
                                   globals + "Resources:\n" + resources);
}

}  // namespace coldbrew::testing
