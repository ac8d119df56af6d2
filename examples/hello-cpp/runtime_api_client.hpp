#pragma once
// A small, self-contained AWS Lambda Runtime API client for C++ custom runtimes
// (`provided.al2`, `provided.al2023`). Copy this one header into your own function.
// C++20, standard library and POSIX sockets only.
//
// Protocol (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html):
//   GET  /2018-06-01/runtime/invocation/next          → event body + invoke headers
//   POST /2018-06-01/runtime/invocation/{id}/response → the result
//   POST /2018-06-01/runtime/invocation/{id}/error    → {errorMessage, errorType, stackTrace}
//   POST /2018-06-01/runtime/init/error               → same body; then exit
// One persistent HTTP/1.1 connection is used for everything; /next has no timeout because it
// is a long poll (the environment may be frozen while it waits).
//
// Usage:
//   int main() {
//       return lambda_runtime::run([](const lambda_runtime::invocation& inv) {
//           return lambda_runtime::outcome::success(R"({"ok":true})");
//       });
//   }

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace lambda_runtime {

// One invocation, as delivered by GET /next.
struct invocation {
    std::string request_id;       // Lambda-Runtime-Aws-Request-Id
    std::int64_t deadline_ms = 0; // Lambda-Runtime-Deadline-Ms: absolute, Unix epoch ms
    std::string function_arn;     // Lambda-Runtime-Invoked-Function-Arn
    std::string trace_id;         // Lambda-Runtime-Trace-Id (also put in _X_AMZN_TRACE_ID)
    std::string client_context;   // Lambda-Runtime-Client-Context (JSON text, may be empty)
    std::string cognito_identity; // Lambda-Runtime-Cognito-Identity (JSON text, may be empty)
    std::string event;            // the event, as raw JSON text

    // Milliseconds left before the function times out.
    std::int64_t remaining_ms() const {
        using namespace std::chrono;
        const auto now_ms =
            duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
        return deadline_ms - now_ms;
    }
};

// What the handler returns: a response body, or an error reported through /error.
struct outcome {
    bool ok = true;
    std::string body;         // success: the response bytes
    std::string content_type; // success: their Content-Type
    std::string error_type;   // failure: e.g. "Function.NotFound" (Category.Reason)
    std::string error_message;

    static outcome success(std::string body, std::string content_type = "application/json") {
        return {true, std::move(body), std::move(content_type), {}, {}};
    }
    static outcome failure(std::string error_type, std::string error_message) {
        return {false, {}, {}, std::move(error_type), std::move(error_message)};
    }
};

// Escapes `s` for use inside a JSON string literal.
inline std::string json_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out;
}

class client {
  public:
    // `host_port` is the value of AWS_LAMBDA_RUNTIME_API, e.g. "127.0.0.1:9001".
    explicit client(std::string_view host_port) {
        const auto colon = host_port.rfind(':');
        host_ = std::string(host_port.substr(0, colon));
        port_ = colon == std::string_view::npos ? "80" : std::string(host_port.substr(colon + 1));
    }
    ~client() { disconnect(); }
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    // Blocks until the next invocation. nullopt when the Runtime API answers with an error
    // status (the runtime must then exit) or cannot be reached.
    std::optional<invocation> next() {
        auto res = request("GET", "/2018-06-01/runtime/invocation/next", {}, {});
        if (!res || res->status != 200) return std::nullopt;
        invocation inv;
        inv.request_id = res->header("lambda-runtime-aws-request-id");
        inv.deadline_ms =
            std::strtoll(res->header("lambda-runtime-deadline-ms").c_str(), nullptr, 10);
        inv.function_arn = res->header("lambda-runtime-invoked-function-arn");
        inv.trace_id = res->header("lambda-runtime-trace-id");
        inv.client_context = res->header("lambda-runtime-client-context");
        inv.cognito_identity = res->header("lambda-runtime-cognito-identity");
        inv.event = std::move(res->body);
        return inv;
    }

    bool post_response(const std::string& request_id, const std::string& body,
                       const std::string& content_type = "application/json") {
        return accepted(request("POST",
                                "/2018-06-01/runtime/invocation/" + request_id + "/response", body,
                                {{"Content-Type", content_type}}));
    }

    bool post_error(const std::string& request_id, const std::string& error_type,
                    const std::string& message) {
        return accepted(request("POST", "/2018-06-01/runtime/invocation/" + request_id + "/error",
                                error_body(error_type, message), error_headers(error_type)));
    }

    // Reports a failed initialisation; the runtime should exit afterwards.
    bool post_init_error(const std::string& error_type, const std::string& message) {
        return accepted(request("POST", "/2018-06-01/runtime/init/error",
                                error_body(error_type, message), error_headers(error_type)));
    }

  private:
    struct response {
        int status = 0;
        std::map<std::string, std::string> headers; // lower-case names
        std::string body;
        std::string header(const std::string& name) const {
            auto it = headers.find(name);
            return it == headers.end() ? std::string() : it->second;
        }
    };

    static bool accepted(const std::optional<response>& r) { return r && r->status == 202; }

    static std::string error_body(const std::string& type, const std::string& message) {
        return "{\"errorMessage\":\"" + json_escape(message) + "\",\"errorType\":\"" +
               json_escape(type) + "\",\"stackTrace\":[]}";
    }
    static std::vector<std::pair<std::string, std::string>> error_headers(const std::string& type) {
        return {{"Content-Type", "application/json"}, {"Lambda-Runtime-Function-Error-Type", type}};
    }

    bool connect_socket() {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        if (::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &res) != 0) return false;
        for (addrinfo* ai = res; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
            int fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) continue;
            if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                int one = 1;
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fd_ = fd;
            } else {
                ::close(fd);
            }
        }
        ::freeaddrinfo(res);
        return fd_ >= 0;
    }

    void disconnect() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        buffer_.clear();
    }

    bool send_all(const std::string& data) {
        std::size_t off = 0;
        while (off < data.size()) {
            const ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            off += static_cast<std::size_t>(n);
        }
        return true;
    }

    // Appends at least one byte to buffer_; false on EOF or error.
    bool receive(bool& received_any) {
        char chunk[65536];
        for (;;) {
            const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            received_any = true;
            buffer_.append(chunk, static_cast<std::size_t>(n));
            return true;
        }
    }

    std::optional<response> read_response(bool& received_any) {
        std::size_t head_end;
        while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
            if (!receive(received_any)) return std::nullopt;
        }
        response res;
        const std::string head = buffer_.substr(0, head_end);
        buffer_.erase(0, head_end + 4);
        const auto first_space = head.find(' ');
        if (first_space == std::string::npos) return std::nullopt;
        res.status = std::atoi(head.c_str() + first_space + 1);
        std::size_t pos = head.find("\r\n");
        while (pos != std::string::npos && pos < head.size()) {
            pos += 2;
            std::size_t end = head.find("\r\n", pos);
            if (end == std::string::npos) end = head.size();
            const std::string line = head.substr(pos, end - pos);
            if (const auto colon = line.find(':'); colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                for (auto& c : name)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                std::size_t v = colon + 1;
                while (v < line.size() && (line[v] == ' ' || line[v] == '\t'))
                    ++v;
                res.headers[name] = line.substr(v);
            }
            pos = end;
        }
        // The Runtime API sends Content-Length bodies; chunked responses are not expected.
        const std::size_t length = std::strtoull(res.header("content-length").c_str(), nullptr, 10);
        while (buffer_.size() < length) {
            if (!receive(received_any)) return std::nullopt;
        }
        res.body = buffer_.substr(0, length);
        buffer_.erase(0, length);
        if (res.header("connection") == "close") disconnect();
        return res;
    }

    std::optional<response>
    request(const std::string& method, const std::string& path, const std::string& body,
            const std::vector<std::pair<std::string, std::string>>& headers) {
        std::string raw = method + " " + path + " HTTP/1.1\r\nHost: " + host_ + "\r\n";
        for (const auto& [name, value] : headers)
            raw += name + ": " + value + "\r\n";
        if (method != "GET") raw += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        raw += "\r\n" + body;
        // If the server closed the idle keep-alive connection, the first attempt fails before
        // any reply arrives; one retry on a new connection is then safe.
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (fd_ < 0 && !connect_socket()) return std::nullopt;
            bool received_any = false;
            if (send_all(raw)) {
                if (auto res = read_response(received_any)) return res;
            }
            disconnect();
            if (received_any) return std::nullopt;
        }
        return std::nullopt;
    }

    std::string host_;
    std::string port_;
    int fd_ = -1;
    std::string buffer_;
};

// The runtime loop: next → handler → response/error, forever. Returns (for main to return)
// when the Runtime API tells the runtime to stop or goes away. An exception escaping the
// handler is reported as a function error and the loop goes on.
inline int run(const std::function<outcome(const invocation&)>& handler) {
    const char* api = std::getenv("AWS_LAMBDA_RUNTIME_API");
    if (api == nullptr) {
        std::fprintf(stderr, "AWS_LAMBDA_RUNTIME_API is not set\n");
        return 1;
    }
    client rt(api);
    for (;;) {
        auto inv = rt.next();
        if (!inv) return 1;
        // Custom runtimes propagate the trace header themselves.
        ::setenv("_X_AMZN_TRACE_ID", inv->trace_id.c_str(), 1);
        outcome result;
        try {
            result = handler(*inv);
        } catch (const std::exception& e) {
            result = outcome::failure("Function.UnhandledException", e.what());
        } catch (...) {
            result = outcome::failure("Function.UnhandledException", "unknown exception");
        }
        std::fflush(stdout); // log lines belong to this invocation
        if (result.ok) {
            rt.post_response(inv->request_id, result.body, result.content_type);
        } else {
            rt.post_error(inv->request_id, result.error_type, result.error_message);
        }
    }
}

} // namespace lambda_runtime
