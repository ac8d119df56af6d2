// Scripted fake handler: a `provided` runtime bootstrap for integration tests. It speaks the
// Lambda Runtime API (spec §1.1-1.4, [RTAPI][OAS]) over one keep-alive HTTP/1.1 connection and
// does, per invocation, whatever the event tells it to.
//
// Where the script is read from: if the event is an object whose `body` is a string (API
// Gateway payload 1.0 and 2.0; base64-decoded first when `isBase64Encoded` is true) and that
// string parses as a JSON object, that object is the script; otherwise the event itself is.
// Keys, all optional, applied in this order:
//   log (string → stdout)  stderr (string → stderr)  sleep_ms (sleep before replying)
//   alloc_mb (allocate and touch N MB; kept until the process ends, so it shows in peak RSS)
//   exit (exit with this code without replying)  hang (true: never reply)
//   error ({errorType, errorMessage} → POST /error with Lambda-Runtime-Function-Error-Type)
//   raw (string: POST it verbatim as the response)  reply (any JSON: POST it as the response)
// With none of error/raw/reply, it replies with an API-Gateway-shaped echo:
//   {"statusCode":200,"headers":{"content-type":"application/json"},"body":"<json text of
//    {pid, request_id, deadline_ms, function_arn, trace_id, client_context, cognito_identity,
//     env:{…}, cwd, event}>"}
// env holds AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE, _HANDLER,
// LAMBDA_TASK_ROOT, AWS_LAMBDA_INITIALIZATION_TYPE, AWS_REGION and every name listed in
// FAKE_ECHO_ENV (comma-separated); unset variables are null.
//
// Start-up switches (environment), applied in this order before the first /next:
//   FAKE_INIT_SLEEP_MS=N   sleep N ms (a slow init)
//   FAKE_EXIT_AT_INIT=N    exit(N) (a crash during init)
//   FAKE_INIT_ERROR=1      POST /runtime/init/error {errorType:"Runtime.FakeInitError",…}, exit(1)
//
// std, nlohmann-json and POSIX sockets only: the fake must not share code with the emulator
// it tests.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "emulator/codec/base64.hpp"

namespace {

using json = nlohmann::json;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
}

[[noreturn]] void die(const std::string& why, int code = 1) {
    std::cerr << "fake_handler: " << why << std::endl;
    std::fflush(nullptr);
    std::_Exit(code);
}

[[noreturn]] void exit_now(int code) {
    // Nothing buffered may be lost: tests read the log stream.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(code);
}

// ---- tiny blocking HTTP/1.1 client, one persistent connection --------------------------------

struct http_response {
    int status = 0;
    std::map<std::string, std::string> headers; // names lower-cased
    std::string body;

    std::string header(const std::string& name) const {
        auto it = headers.find(lower(name));
        return it == headers.end() ? std::string() : it->second;
    }
};

class http_client {
  public:
    http_client(std::string host, std::string port)
        : host_(std::move(host)), port_(std::move(port)) {}
    ~http_client() { close_(); }
    http_client(const http_client&) = delete;
    http_client& operator=(const http_client&) = delete;

    // No timeout anywhere: /next is a long poll [RTAPI].
    http_response request(const std::string& method, const std::string& path,
                          const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& headers = {}) {
        std::string req =
            method + " " + path + " HTTP/1.1\r\nHost: " + host_ + ":" + port_ + "\r\n";
        for (const auto& [k, v] : headers)
            req += k + ": " + v + "\r\n";
        if (method != "GET") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        req += "\r\n";
        req += body;
        // A keep-alive connection the server closed while idle fails before any response byte
        // arrives; the request was not processed, so one retry on a fresh connection is safe.
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (fd_ < 0) connect_();
            bool got_bytes = false;
            if (send_all_(req)) {
                if (auto res = read_response_(got_bytes)) return *res;
            }
            close_();
            if (got_bytes) break;
        }
        die("Runtime API connection failed during " + method + " " + path);
    }

  private:
    void connect_() {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        if (int rc = ::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &res); rc != 0) {
            die("cannot resolve " + host_ + ": " + ::gai_strerror(rc));
        }
        for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
            int fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) continue;
            if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                int one = 1;
                // Requests are small and latency matters more than packet count.
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fd_ = fd;
                break;
            }
            ::close(fd);
        }
        ::freeaddrinfo(res);
        if (fd_ < 0)
            die("cannot connect to Runtime API at " + host_ + ":" + port_ + ": " +
                std::strerror(errno));
        buf_.clear();
    }

    void close_() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        buf_.clear();
    }

    bool send_all_(const std::string& data) {
        std::size_t off = 0;
        while (off < data.size()) {
            ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            off += static_cast<std::size_t>(n);
        }
        return true;
    }

    bool fill_(bool& got_bytes) {
        char tmp[65536];
        for (;;) {
            ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            got_bytes = true;
            buf_.append(tmp, static_cast<std::size_t>(n));
            return true;
        }
    }

    // Reads exactly `n` bytes from the buffer/socket.
    bool take_(std::size_t n, std::string& out, bool& got_bytes) {
        while (buf_.size() < n) {
            if (!fill_(got_bytes)) return false;
        }
        out.append(buf_, 0, n);
        buf_.erase(0, n);
        return true;
    }

    bool take_line_(std::string& line, bool& got_bytes) {
        std::size_t pos;
        while ((pos = buf_.find("\r\n")) == std::string::npos) {
            if (!fill_(got_bytes)) return false;
        }
        line.assign(buf_, 0, pos);
        buf_.erase(0, pos + 2);
        return true;
    }

    std::optional<http_response> read_response_(bool& got_bytes) {
        http_response res;
        std::size_t end;
        while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
            if (!fill_(got_bytes)) return std::nullopt;
        }
        std::string head = buf_.substr(0, end);
        buf_.erase(0, end + 4);
        std::size_t line_end = head.find("\r\n");
        std::string status_line = head.substr(0, line_end);
        auto sp = status_line.find(' ');
        if (sp == std::string::npos) die("malformed status line: " + status_line);
        res.status = std::atoi(status_line.c_str() + sp + 1);
        std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
        while (pos < head.size()) {
            std::size_t next = head.find("\r\n", pos);
            if (next == std::string::npos) next = head.size();
            std::string_view line(head.data() + pos, next - pos);
            if (auto colon = line.find(':'); colon != std::string_view::npos) {
                std::string_view value = line.substr(colon + 1);
                while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
                    value.remove_prefix(1);
                while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
                    value.remove_suffix(1);
                res.headers[lower(line.substr(0, colon))] = std::string(value);
            }
            pos = next + 2;
        }
        if (lower(res.header("transfer-encoding")).find("chunked") != std::string::npos) {
            for (;;) {
                std::string size_line;
                if (!take_line_(size_line, got_bytes)) return std::nullopt;
                std::size_t size = std::stoul(size_line, nullptr, 16);
                if (size == 0) {
                    std::string trailer;
                    do {
                        if (!take_line_(trailer, got_bytes)) return std::nullopt;
                    } while (!trailer.empty());
                    break;
                }
                if (!take_(size, res.body, got_bytes)) return std::nullopt;
                std::string crlf;
                if (!take_line_(crlf, got_bytes)) return std::nullopt;
            }
        } else if (auto cl = res.header("content-length"); !cl.empty()) {
            if (!take_(std::stoul(cl), res.body, got_bytes)) return std::nullopt;
        }
        if (lower(res.header("connection")) == "close") close_();
        return res;
    }

    std::string host_;
    std::string port_;
    int fd_ = -1;
    std::string buf_;
};

// ---- Runtime API ------------------------------------------------------------------------------

const std::string api_prefix = "/2018-06-01/runtime";

void post_json(http_client& client, const std::string& path, const std::string& body,
               std::vector<std::pair<std::string, std::string>> headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    http_response res = client.request("POST", path, body, headers);
    if (res.status != 202) {
        // The emulator refused (e.g. 413 payload too large): report it where tests can see it.
        std::cerr << "fake_handler: POST " << path << " -> " << res.status << " " << res.body
                  << std::endl;
    }
}

void post_error(http_client& client, const std::string& path, const std::string& type,
                const std::string& message) {
    json body = {{"errorType", type}, {"errorMessage", message}, {"stackTrace", json::array()}};
    post_json(client, path, body.dump(), {{"Lambda-Runtime-Function-Error-Type", type}});
}

// The script is the parsed `body` string of a gateway event, else the event itself.
json script_of(const json& event) {
    if (event.is_object()) {
        auto it = event.find("body");
        if (it != event.end() && it->is_string()) {
            std::string text = it->get<std::string>();
            if (event.value("isBase64Encoded", false)) {
                if (auto decoded = coldbrew::codec::base64_decode(text)) text = *decoded;
            }
            json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
            if (parsed.is_object()) return parsed;
            return json::object();
        }
        return event;
    }
    return json::object();
}

json echo_env() {
    std::vector<std::string> names = {
        "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "_HANDLER",
        "LAMBDA_TASK_ROOT",         "AWS_LAMBDA_INITIALIZATION_TYPE",  "AWS_REGION"};
    if (auto extra = env("FAKE_ECHO_ENV")) {
        std::size_t start = 0;
        while (start <= extra->size()) {
            std::size_t comma = extra->find(',', start);
            if (comma == std::string::npos) comma = extra->size();
            std::string name = extra->substr(start, comma - start);
            if (!name.empty()) names.push_back(name);
            start = comma + 1;
        }
    }
    json out = json::object();
    for (const auto& name : names) {
        auto v = env(name.c_str());
        out[name] = v ? json(*v) : json(nullptr);
    }
    return out;
}

json parse_header_json(const std::string& value) {
    if (value.empty()) return nullptr;
    json parsed = json::parse(value, nullptr, false);
    return parsed.is_discarded() ? json(value) : parsed;
}

// Kept for the life of the process so the allocation shows in peak memory.
std::vector<std::unique_ptr<char[]>> retained_memory;

void invoke(http_client& client, const http_response& next) {
    const std::string request_id = next.header("Lambda-Runtime-Aws-Request-Id");
    if (request_id.empty()) die("/next without Lambda-Runtime-Aws-Request-Id");
    const std::string base = api_prefix + "/invocation/" + request_id;

    json event = json::parse(next.body, nullptr, false);
    if (event.is_discarded()) {
        post_error(client, base + "/error", "Fake.BadEvent", "event is not JSON");
        return;
    }
    const json script = script_of(event);

    if (auto it = script.find("log"); it != script.end() && it->is_string()) {
        std::cout << it->get<std::string>() << '\n' << std::flush;
    }
    if (auto it = script.find("stderr"); it != script.end() && it->is_string()) {
        std::cerr << it->get<std::string>() << '\n' << std::flush;
    }
    if (auto it = script.find("sleep_ms"); it != script.end() && it->is_number()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(it->get<std::int64_t>()));
    }
    if (auto it = script.find("alloc_mb"); it != script.end() && it->is_number()) {
        const std::size_t bytes = it->get<std::size_t>() * 1024 * 1024;
        auto block = std::make_unique<char[]>(bytes);
        // Touch every page so the memory is resident, not just reserved.
        for (std::size_t i = 0; i < bytes; i += 4096)
            block[i] = 1;
        retained_memory.push_back(std::move(block));
    }
    if (auto it = script.find("exit"); it != script.end() && it->is_number_integer()) {
        exit_now(it->get<int>());
    }
    if (auto it = script.find("hang"); it != script.end() && it->is_boolean() && it->get<bool>()) {
        for (;;)
            ::pause();
    }
    if (auto it = script.find("error"); it != script.end() && it->is_object()) {
        post_error(client, base + "/error", it->value("errorType", "Fake.Error"),
                   it->value("errorMessage", "scripted error"));
        return;
    }
    if (auto it = script.find("read_file"); it != script.end() && it->is_string()) {
        // Lets a test see the environment from inside: /proc/self/cgroup, limits, …
        std::ifstream in(it->get<std::string>());
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const json body = {{"content", text}, {"ok", bool(in)}};
        post_json(client, base + "/response",
                  json{{"statusCode", 200}, {"body", body.dump()}}.dump());
        return;
    }
    if (auto it = script.find("raw"); it != script.end() && it->is_string()) {
        post_json(client, base + "/response", it->get<std::string>());
        return;
    }
    if (auto it = script.find("reply"); it != script.end()) {
        post_json(client, base + "/response", it->dump());
        return;
    }

    std::error_code ec;
    const auto cwd = std::filesystem::current_path(ec);
    const std::string deadline = next.header("Lambda-Runtime-Deadline-Ms");
    json echo = {
        {"pid", static_cast<std::int64_t>(::getpid())},
        {"request_id", request_id},
        {"deadline_ms", deadline.empty() ? json(nullptr) : json(std::stoll(deadline))},
        {"function_arn", next.header("Lambda-Runtime-Invoked-Function-Arn")},
        {"trace_id", next.header("Lambda-Runtime-Trace-Id")},
        {"client_context", parse_header_json(next.header("Lambda-Runtime-Client-Context"))},
        {"cognito_identity", parse_header_json(next.header("Lambda-Runtime-Cognito-Identity"))},
        {"env", echo_env()},
        {"cwd", ec ? std::string() : cwd.string()},
        {"event", event},
    };
    json response = {
        {"statusCode", 200},
        {"headers", {{"content-type", "application/json"}}},
        {"body", echo.dump()},
    };
    post_json(client, base + "/response", response.dump());
}

} // namespace

int main() {
    const auto api = env("AWS_LAMBDA_RUNTIME_API");
    if (!api) die("AWS_LAMBDA_RUNTIME_API is not set");
    const auto colon = api->rfind(':');
    if (colon == std::string::npos) die("AWS_LAMBDA_RUNTIME_API must be host:port, got " + *api);
    http_client client(api->substr(0, colon), api->substr(colon + 1));

    if (auto ms = env("FAKE_INIT_SLEEP_MS")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(ms->c_str())));
    }
    if (auto code = env("FAKE_EXIT_AT_INIT")) exit_now(std::atoi(code->c_str()));
    if (env("FAKE_INIT_ERROR").value_or("") == "1") {
        post_error(client, api_prefix + "/init/error", "Runtime.FakeInitError",
                   "FAKE_INIT_ERROR=1 asked for an init failure");
        exit_now(1);
    }

    for (;;) {
        http_response next = client.request("GET", api_prefix + "/invocation/next", "");
        if (next.status != 200) {
            // 403/500 mean the runtime must exit [OAS].
            die("/next returned " + std::to_string(next.status) + ": " + next.body);
        }
        invoke(client, next);
    }
}
