#include "emulator/telemetry/trace_export.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

namespace coldbrew::telemetry {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

template <class Handle> void close_and_delete(Handle* h) {
    h->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(h),
             [](uv_handle_t* p) { delete reinterpret_cast<Handle*>(p); });
}

constexpr std::size_t max_response_bytes = 64 * 1024; // a status line and a small body

} // namespace

std::optional<otlp_endpoint> parse_otlp_endpoint(std::string_view url, std::string& error) {
    constexpr std::string_view scheme = "http://";
    if (url.size() < scheme.size() || !iequals(url.substr(0, scheme.size()), scheme)) {
        error = url.substr(0, 8) == "https://"
                    ? "https is not supported; use a collector's plain http OTLP/HTTP port "
                      "(http://127.0.0.1:4318)"
                    : "expected http://host:port, got '" + std::string(url) + "'";
        return std::nullopt;
    }
    auto rest = url.substr(scheme.size());
    auto slash = rest.find('/');
    auto authority = rest.substr(0, slash);
    otlp_endpoint out;
    if (slash != std::string_view::npos && rest.substr(slash) != "/")
        out.path = std::string(rest.substr(slash));
    std::string_view host, port_text;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) {
            error = "unterminated [IPv6 address] in '" + std::string(url) + "'";
            return std::nullopt;
        }
        host = authority.substr(1, close - 1);
        auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                error = "expected :port after ] in '" + std::string(url) + "'";
                return std::nullopt;
            }
            port_text = after.substr(1);
        }
    } else {
        auto colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    }
    if (host.empty()) {
        error = "no host in '" + std::string(url) + "'";
        return std::nullopt;
    }
    out.host = std::string(host);
    if (!port_text.empty()) {
        int port = 0;
        for (char c : port_text) {
            if (c < '0' || c > '9' || port > 65535) {
                port = -1;
                break;
            }
            port = port * 10 + (c - '0');
        }
        if (port <= 0 || port > 65535) {
            error = "bad port '" + std::string(port_text) + "' in '" + std::string(url) + "'";
            return std::nullopt;
        }
        out.port = port;
    } else if (authority.find(':') != std::string_view::npos && authority.front() != '[') {
        error = "empty port in '" + std::string(url) + "'";
        return std::nullopt;
    }
    return out;
}

// One POST: resolve (unless the host is an address), connect, write, read the status, close.
// Its handles are unreferenced, so a slow collector never holds the loop open; stop() keeps
// the loop alive with its own deadline instead. Freed once every handle is closed and the
// name lookup (if any) has called back.
struct trace_exporter::post {
    trace_exporter* owner = nullptr; // null once the exporter is gone
    uv_loop_t* loop = nullptr;
    otlp_endpoint endpoint;
    std::string request, response;
    uv_getaddrinfo_t resolve{};
    uv_connect_t connect{};
    uv_write_t write_req{};
    uv_tcp_t tcp{};
    uv_timer_t timer{};
    char buffer[4096];
    int pending = 0; // open handles + an outstanding lookup
    bool tcp_open = false, done = false, resolving = false;

    void start(std::uint64_t timeout_ms) {
        uv_timer_init(loop, &timer);
        timer.data = this;
        uv_unref(reinterpret_cast<uv_handle_t*>(&timer));
        ++pending;
        uv_timer_start(
            &timer,
            [](uv_timer_t* t) { static_cast<post*>(t->data)->complete(false, "timed out"); },
            timeout_ms, 0);
        sockaddr_storage addr{};
        if (uv_ip4_addr(endpoint.host.c_str(), endpoint.port,
                        reinterpret_cast<sockaddr_in*>(&addr)) == 0 ||
            uv_ip6_addr(endpoint.host.c_str(), endpoint.port,
                        reinterpret_cast<sockaddr_in6*>(&addr)) == 0) {
            connect_to(reinterpret_cast<const sockaddr*>(&addr));
            return;
        }
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        resolve.data = this;
        const std::string port = std::to_string(endpoint.port);
        ++pending;
        resolving = true;
        if (int rc = uv_getaddrinfo(loop, &resolve, on_resolved, endpoint.host.c_str(),
                                    port.c_str(), &hints)) {
            --pending;
            resolving = false;
            complete(false,
                     std::string("cannot resolve ") + endpoint.host + ": " + uv_strerror(rc));
        }
    }

    static void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
        auto* self = static_cast<post*>(req->data);
        --self->pending;
        self->resolving = false;
        if (self->done) {
            uv_freeaddrinfo(res);
            self->maybe_free();
            return;
        }
        if (status != 0 || !res) {
            uv_freeaddrinfo(res);
            self->complete(false,
                           "cannot resolve " + self->endpoint.host + ": " + uv_strerror(status));
            return;
        }
        self->connect_to(res->ai_addr);
        uv_freeaddrinfo(res);
    }

    void connect_to(const sockaddr* addr) {
        uv_tcp_init(loop, &tcp);
        tcp.data = this;
        tcp_open = true;
        ++pending;
        uv_unref(reinterpret_cast<uv_handle_t*>(&tcp));
        connect.data = this;
        if (int rc = uv_tcp_connect(&connect, &tcp, addr, on_connected))
            complete(false, uv_strerror(rc));
    }

    static void on_connected(uv_connect_t* req, int status) {
        auto* self = static_cast<post*>(req->data);
        if (self->done) return;
        if (status < 0) {
            self->complete(false, uv_strerror(status));
            return;
        }
        uv_buf_t buf =
            uv_buf_init(self->request.data(), static_cast<unsigned>(self->request.size()));
        self->write_req.data = self;
        if (int rc = uv_write(&self->write_req, reinterpret_cast<uv_stream_t*>(&self->tcp), &buf, 1,
                              [](uv_write_t* w, int st) {
                                  auto* p = static_cast<post*>(w->data);
                                  if (st < 0 && !p->done) p->complete(false, uv_strerror(st));
                              })) {
            self->complete(false, uv_strerror(rc));
            return;
        }
        uv_read_start(
            reinterpret_cast<uv_stream_t*>(&self->tcp),
            [](uv_handle_t* h, std::size_t, uv_buf_t* b) {
                auto* p = static_cast<post*>(h->data);
                *b = uv_buf_init(p->buffer, sizeof(p->buffer));
            },
            [](uv_stream_t* s, ssize_t n, const uv_buf_t* b) {
                auto* p = static_cast<post*>(s->data);
                if (p->done) return;
                if (n > 0) {
                    if (p->response.size() < max_response_bytes)
                        p->response.append(b->base, static_cast<std::size_t>(n));
                    if (p->answer_complete()) p->conclude();
                    return;
                }
                if (n < 0) {
                    if (n == UV_EOF && !p->response.empty())
                        p->conclude();
                    else
                        p->complete(false, n == UV_EOF ? "connection closed without an answer"
                                                       : uv_strerror(static_cast<int>(n)));
                }
            });
    }

    // "HTTP/1.1 200 OK": the status code, 0 when not (yet) readable.
    int status_code() const {
        if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return 0;
        auto sp = response.find(' ');
        if (sp == std::string::npos || sp + 4 > response.size()) return 0;
        int code = 0;
        for (std::size_t i = sp + 1; i < sp + 4; ++i) {
            if (response[i] < '0' || response[i] > '9') return 0;
            code = code * 10 + (response[i] - '0');
        }
        return code;
    }

    // The head is in and the body (Content-Length, or a chunked body's last chunk) too.
    bool answer_complete() const {
        auto head_end = response.find("\r\n\r\n");
        if (head_end == std::string::npos) return false;
        std::string head = response.substr(0, head_end);
        for (auto& c : head)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const std::size_t body = response.size() - head_end - 4;
        if (auto at = head.find("\r\ncontent-length:"); at != std::string::npos) {
            std::size_t i = at + 17, n = 0;
            while (i < head.size() && head[i] == ' ')
                ++i;
            while (i < head.size() && head[i] >= '0' && head[i] <= '9')
                n = n * 10 + static_cast<std::size_t>(head[i++] - '0');
            return body >= n;
        }
        if (head.find("\r\ntransfer-encoding: chunked") != std::string::npos)
            return response.size() >= 5 &&
                   response.compare(response.size() - 5, 5, "0\r\n\r\n") == 0;
        return false; // read to EOF
    }

    void conclude() {
        const int code = status_code();
        if (code >= 200 && code < 300)
            complete(true, "");
        else
            complete(false, code ? "answered HTTP " + std::to_string(code) : "malformed answer");
    }

    void complete(bool ok, const std::string& why) {
        if (done) return;
        done = true;
        abort();
        if (auto* o = std::exchange(owner, nullptr)) o->on_post_done(ok, why);
    }

    // Closes every handle; the object frees itself once they (and a lookup) are done.
    void abort() {
        done = true;
        auto closed = [](uv_handle_t* h) {
            auto* p = static_cast<post*>(h->data);
            --p->pending;
            p->maybe_free();
        };
        if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&timer))) {
            uv_timer_stop(&timer);
            uv_close(reinterpret_cast<uv_handle_t*>(&timer), closed);
        }
        if (tcp_open && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&tcp)))
            uv_close(reinterpret_cast<uv_handle_t*>(&tcp), closed);
        // A lookup still queued is called back at once as cancelled; one already running
        // (a slow resolver) cannot be stopped and frees the object when it returns.
        if (resolving) uv_cancel(reinterpret_cast<uv_req_t*>(&resolve));
    }

    void maybe_free() {
        if (pending == 0) delete this;
    }
};

trace_exporter::trace_exporter(uv_loop_t* loop, trace_export_options options)
    : loop_(loop), options_(std::move(options)) {
    timer_ = new uv_timer_t;
    uv_timer_init(loop_, timer_);
    timer_->data = this;
    uv_unref(reinterpret_cast<uv_handle_t*>(timer_));
    stop_timer_ = new uv_timer_t;
    uv_timer_init(loop_, stop_timer_);
    stop_timer_->data = this;
}

trace_exporter::~trace_exporter() {
    // Without a stop() (an early exit), what is pending still reaches the file.
    if (file_ && !pending_.empty()) {
        const std::string line = otlp_json(pending_, options_.service_name) + "\n";
        if (std::fwrite(line.data(), 1, line.size(), file_) == line.size())
            ++counters_.lines_written;
    }
    if (in_flight_) {
        in_flight_->owner = nullptr;
        in_flight_->abort();
        in_flight_ = nullptr;
    }
    close_and_delete(timer_);
    close_and_delete(stop_timer_);
    if (file_) std::fclose(file_);
}

std::error_code trace_exporter::open() {
    if (!options_.file.empty() && !file_) {
        file_ = std::fopen(options_.file.c_str(), "a");
        if (!file_) return {errno, std::generic_category()};
    }
    uv_timer_start(
        timer_,
        [](uv_timer_t* t) {
            if (auto* self = static_cast<trace_exporter*>(t->data)) self->flush();
        },
        options_.interval_ms, options_.interval_ms);
    return {};
}

void trace_exporter::write(std::vector<span> spans) {
    ++counters_.traces;
    counters_.spans += spans.size();
    for (auto& s : spans)
        pending_.push_back(std::move(s));
    // Past stop() no timer flushes: a late trace (a request abandoned at teardown) goes now.
    if (stopping_) flush();
}

void trace_exporter::warn_once(bool& flag, const std::string& message) {
    if (flag) return;
    flag = true;
    if (options_.warn) options_.warn(message);
}

void trace_exporter::flush() {
    if (pending_.empty()) return;
    std::string line = otlp_json(pending_, options_.service_name);
    pending_.clear();
    if (file_) {
        line += '\n';
        const bool ok = std::fwrite(line.data(), 1, line.size(), file_) == line.size() &&
                        std::fflush(file_) == 0;
        line.pop_back();
        if (ok) {
            ++counters_.lines_written;
        } else {
            ++counters_.write_errors;
            warn_once(warned_file_, "cannot write traces to " + options_.file.string() + ": " +
                                        std::strerror(errno));
        }
    }
    if (!options_.endpoint) return;
    if (queue_.size() >= options_.max_queued_batches) {
        queue_.pop_front();
        ++counters_.batches_dropped;
        warn_once(warned_overflow_, "OTLP endpoint " + options_.endpoint_text +
                                        " is not keeping up; dropping trace batches");
    }
    queue_.push_back(std::move(line));
    send_next();
}

void trace_exporter::send_next() {
    if (in_flight_ || queue_.empty()) return;
    auto* p = new post;
    p->owner = this;
    p->loop = loop_;
    p->endpoint = *options_.endpoint;
    const std::string body = std::move(queue_.front());
    queue_.pop_front();
    const bool v6 = p->endpoint.host.find(':') != std::string::npos;
    const std::string host = (v6 ? "[" + p->endpoint.host + "]" : p->endpoint.host) + ":" +
                             std::to_string(p->endpoint.port);
    p->request =
        "POST " + p->endpoint.path + " HTTP/1.1\r\nHost: " + host +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    in_flight_ = p;
    p->start(stopping_ ? std::min(options_.request_timeout_ms, options_.stop_timeout_ms)
                       : options_.request_timeout_ms);
}

void trace_exporter::on_post_done(bool ok, const std::string& why) {
    in_flight_ = nullptr;
    if (ok) {
        ++counters_.batches_sent;
    } else {
        ++counters_.batches_dropped;
        const bool rejected = why.rfind("answered", 0) == 0;
        warn_once(rejected ? warned_rejected_ : warned_unreachable_,
                  "OTLP endpoint " + options_.endpoint_text + " " + why +
                      "; trace batches it does not take are dropped (counted, not retried)");
    }
    send_next();
    maybe_finish_stop();
}

void trace_exporter::maybe_finish_stop() {
    if (!stopping_ || !on_stopped_ || in_flight_ || !queue_.empty()) return;
    uv_timer_stop(stop_timer_);
    auto done = std::exchange(on_stopped_, nullptr);
    done();
}

void trace_exporter::stop(std::function<void()> done) {
    flush();
    uv_timer_stop(timer_);
    stopping_ = true;
    if (file_) std::fflush(file_);
    on_stopped_ = done ? std::move(done) : [] {};
    if (!in_flight_ && queue_.empty()) {
        maybe_finish_stop();
        return;
    }
    uv_timer_start(
        stop_timer_,
        [](uv_timer_t* t) {
            auto* self = static_cast<trace_exporter*>(t->data);
            if (!self) return;
            // Out of time: what is still queued or on the wire is dropped.
            self->counters_.batches_dropped += self->queue_.size();
            self->queue_.clear();
            if (auto* p = std::exchange(self->in_flight_, nullptr)) {
                p->owner = nullptr;
                p->abort();
                ++self->counters_.batches_dropped;
            }
            self->maybe_finish_stop();
        },
        options_.stop_timeout_ms, 0);
}

} // namespace coldbrew::telemetry
