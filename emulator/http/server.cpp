// The only translation unit that includes Beast: it parses requests with
// beast::http::request_parser::put() on bytes read from libuv streams, and writes responses
// with uv_write. See server.hpp for the contract.

#include "emulator/http/server.hpp"

#include <boost/beast/http.hpp>

#include <algorithm>
#include <cmath>
#include <list>
#include <optional>
#include <utility>

namespace coldbrew::http {

namespace bhttp = boost::beast::http;

namespace {

struct connection;

}  // namespace

struct server::impl : std::enable_shared_from_this<server::impl> {
    uv_loop_t* loop;
    handler on_request;
    server_options options;
    uv_tcp_t listener{};
    uv_timer_t idle_sweep{};
    int open_handles = 0;  // listener and idle_sweep, while open
    bool listening = false;
    bool closed = false;
    int port = 0;
    std::list<std::shared_ptr<connection>> connections;
    std::shared_ptr<impl> self_while_open;  // keeps this alive until its handles are closed

    impl(uv_loop_t* l, handler h, server_options o)
        : loop(l), on_request(std::move(h)), options(std::move(o)) {}

    void accept();
    void forget(connection* c);
    void close_listener();
    void sweep_idle();
};

namespace {

response default_parse_failure(parse_failure f) {
    response res;
    switch (f) {
    case parse_failure::body_too_large: res.status = 413; break;
    case parse_failure::header_too_large: res.status = 431; break;
    case parse_failure::request_line_too_long: res.status = 414; break;
    case parse_failure::request_timeout: res.status = 408; break;
    case parse_failure::malformed: res.status = 400; break;
    }
    res.set("Content-Type", "text/plain");
    return res;
}

// A field that would let a value start a new header line (CR, LF, NUL) or a name that is not
// an RFC 7230 token is never written: protocol logic rejects such responses, and this keeps
// the wire well-formed even if something slips through.
bool writable_field(const std::string& name, const std::string& value) {
    if (name.empty()) return false;
    for (unsigned char c : name)
        if (c <= 32 || c >= 127 || c == ':' || c == '(' || c == ')' || c == ',' || c == '/' ||
            c == ';' || c == '<' || c == '=' || c == '>' || c == '?' || c == '@' || c == '[' ||
            c == '\\' || c == ']' || c == '{' || c == '}' || c == '"')
            return false;
    for (unsigned char c : value)
        if (c == '\r' || c == '\n' || c == '\0') return false;
    return true;
}

// Hand-written, not Beast's serializer (response<empty_body> with bhttp::serializer was tried):
// Beast's fields trim spaces around values, move a repeated field up next to its first
// occurrence (X-A, Y, X-A goes out as X-A, X-A, Y), and throw std::length_error from inside the
// libuv callback for a field over 64 KB; the test "fields go out in the order, case and bytes
// set" pins what this writes. Speed was not the reason: tools/bench/gateway_latency.sh 20000,
// 4 connections, gave 4426-6163 rps (mean 5320, 7 runs) with this and 3845-6671 (mean 5295,
// 6 runs) with Beast, interleaved on 2 cores shared with other builds; alone, Beast took
// 1.0-1.4 us per typical gateway response (5 fields, 30-byte body) against 0.26-0.38 us here.
std::string serialize(const response& res, bool keep_alive, bool head_request, int version = 11) {
    // RFC 9110 §6.4.1: 1xx, 204 and 304 responses have no content; 1xx and 204 no
    // Content-Length either.
    bool no_content = res.status < 200 || res.status == 204 || res.status == 304;
    bool no_length = res.status < 200 || res.status == 204;
    std::string out;
    out.reserve(128 + res.body.size() + res.headers.size() * 48);
    out += "HTTP/1.1 ";
    out += std::to_string(res.status);
    out += ' ';
    auto reason = bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(res.status)));
    out.append(reason.data(), reason.size());
    out += "\r\n";
    for (const auto& [name, value] : res.headers) {
        if (iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding") ||
            iequals(name, "Connection") || !writable_field(name, value))
            continue;
        out += name;
        out += ": ";
        out += value;
        out += "\r\n";
    }
    if (!no_length) {
        out += "Content-Length: ";
        out += std::to_string(no_content ? 0 : res.body.size());
        out += "\r\n";
    }
    if (!keep_alive)
        out += "Connection: close\r\n";
    else if (version == 10)
        out += "Connection: keep-alive\r\n";  // HTTP/1.0 closes unless told otherwise
    out += "\r\n";
    if (!head_request && !no_content) out += res.body;
    return out;
}

struct write_op {
    uv_write_t req{};
    std::string data;
    std::shared_ptr<connection> conn;
    bool close_after = false;
};

// A response written in slices on a timer, as a slow network would deliver it. Owned by its
// timer handle and freed in the handle's close callback; the connection stops it when it
// finishes or closes.
struct slow_write {
    static constexpr std::uint64_t default_slice_ms = 50;

    uv_timer_t timer{};
    std::uint64_t slice_ms = default_slice_ms;
    std::function<void()> on_finished;  // send_options::on_finished
    connection* conn = nullptr;  // valid while the timer runs: closing stops the timer first
    std::string data;            // the whole serialized response
    std::size_t offset = 0;      // bytes already handed to uv_write
    double bytes_per_slice = 0;
    double carry = 0;            // rounding left over from earlier slices, so the rate is exact
    bool keep_alive = false;     // what the response's Connection header promised
};

// The responder's side of one request on one connection. Used at most once, even when the
// handler copied its responder.
struct connection_target final : responder::target {
    std::weak_ptr<connection> conn;
    bool keep_alive;
    bool head;
    int version;
    bool used = false;

    connection_target(std::weak_ptr<connection> c, bool keep, bool head_request, int v)
        : conn(std::move(c)), keep_alive(keep), head(head_request), version(v) {}

    void send(response res, const send_options& opts) override;
    void reset() override;
    bool alive() const override;
    void on_close(std::function<void()> fn) override;
};

struct connection : std::enable_shared_from_this<connection> {
    uv_tcp_t tcp{};
    // Shared, not raw: libuv may run the listener's close callback (which lets the server's
    // state go) before the connections' close callbacks, which still need it.
    std::shared_ptr<server::impl> owner;
    std::shared_ptr<connection> self;  // held while the uv handle is open
    std::string inbuf;
    std::optional<bhttp::request_parser<bhttp::string_body>> parser;
    std::string remote_ip = "127.0.0.1";
    bool busy = false;       // a request is with the handler, awaiting its response
    bool draining = false;   // answered a bad request; discard input until EOF
    bool last_request = false;  // the server is stopping: close after the current response
    bool peer_finished = false;  // the client sent FIN while its request was being answered
    bool closing = false;
    bool sent_continue = false;
    bool head_checked = false;  // the request's line and values were held against the limit
    slow_write* slow = nullptr;  // the response being written slowly, if any
    // The busy request's responder::on_close. Kept here, not in its target, so that a callback
    // holding the responder forms no cycle, and it dies with the connection.
    std::function<void()> on_close;
    std::uint64_t last_activity_ms = 0;  // loop time of the last bytes read or written
    std::uint64_t request_started_ms = 0;  // first bytes of the request being read; 0: none
    char readbuf[64 * 1024];

    explicit connection(std::shared_ptr<server::impl> o) : owner(std::move(o)) {}

    void start() {
        tcp.data = this;
        last_activity_ms = uv_now(tcp.loop);
        sockaddr_storage addr{};
        int len = sizeof(addr);
        if (uv_tcp_getpeername(&tcp, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
            char ip[64] = {0};
            if (addr.ss_family == AF_INET)
                uv_ip4_name(reinterpret_cast<sockaddr_in*>(&addr), ip, sizeof(ip));
            else if (addr.ss_family == AF_INET6)
                uv_ip6_name(reinterpret_cast<sockaddr_in6*>(&addr), ip, sizeof(ip));
            if (ip[0]) remote_ip = ip;
        }
        uv_tcp_nodelay(&tcp, 1);
        uv_read_start(
            reinterpret_cast<uv_stream_t*>(&tcp),
            [](uv_handle_t* h, size_t, uv_buf_t* buf) {
                auto* c = static_cast<connection*>(h->data);
                *buf = uv_buf_init(c->readbuf, sizeof(c->readbuf));
            },
            [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
                auto* c = static_cast<connection*>(s->data);
                if (n == UV_EOF && c->busy) {
                    // A half-closed client (shutdown(SHUT_WR), `nc -N`) still reads: answer
                    // the request it sent, then close.
                    uv_read_stop(s);
                    c->last_request = true;
                    c->peer_finished = true;
                    c->notify_closed();
                    return;
                }
                if (n < 0) {
                    c->close();
                    return;
                }
                c->last_activity_ms = uv_now(c->tcp.loop);
                if (c->draining) return;
                if (c->request_started_ms == 0 && !c->busy) c->request_started_ms = c->last_activity_ms;
                c->inbuf.append(buf->base, static_cast<std::size_t>(n));
                c->process();
            });
    }

    static void on_closed(uv_handle_t* h) {
        auto* c = static_cast<connection*>(h->data);
        if (auto owner = std::move(c->owner)) owner->forget(c);
        c->self.reset();  // may free *c
    }

    // Moved out before the call: fn may register again, reset, answer, or drop its owner.
    // *this outlives the call (self is released only in the handle's close callback).
    void notify_closed() {
        if (auto fn = std::exchange(on_close, nullptr)) fn();
    }

    void close() {
        if (closing) return;
        closing = true;
        notify_closed();  // before stop_slow_write(), which calls on_finished
        stop_slow_write();
        uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp));
        uv_close(reinterpret_cast<uv_handle_t*>(&tcp), on_closed);
    }

    // Closes with SO_LINGER 0, so the peer gets a TCP RST (ECONNRESET) instead of a FIN.
    void abort() {
        if (closing) return;
        closing = true;
        // reset() asked for this: not a close to report. Destroyed on return, after the
        // socket work, since it may own whatever called reset().
        auto unreported = std::exchange(on_close, nullptr);
        stop_slow_write();
        uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp));
        // Fails only if the socket was shut down for writing, which this server never does;
        // a plain close is then the best left.
        if (uv_tcp_close_reset(&tcp, on_closed) != 0)
            uv_close(reinterpret_cast<uv_handle_t*>(&tcp), on_closed);
    }

    // Answers the request that made this connection busy. `keep_alive` is what the request
    // allowed; a stopping server or a half-closed client turns it off.
    void respond(const response& res, const send_options& opts, bool keep_alive, bool head,
                 int version) {
        if (closing) return;
        bool keep = keep_alive && !last_request;
        std::string data = serialize(res, keep, head, version);
        if (opts.bytes_per_s > 0 && std::isfinite(opts.bytes_per_s)) {
            start_slow_write(std::move(data), opts.bytes_per_s, keep, opts.on_finished);
            return;  // still busy: the idle sweep leaves the connection alone until the end
        }
        write(std::move(data), !keep);
        // Handed to the socket in full: the client leaving now is no longer this request's news.
        auto answered = std::exchange(on_close, nullptr);
        if (opts.on_finished) opts.on_finished();
        finish_response(keep);
    }

    void finish_response(bool keep) {
        busy = false;
        // Pipelined bytes of the next request arrived while this one was answered: its clock
        // starts now.
        if (!inbuf.empty() && request_started_ms == 0) request_started_ms = uv_now(tcp.loop);
        if (keep) process();
    }

    void start_slow_write(std::string data, double bytes_per_s, bool keep,
                          std::function<void()> on_finished) {
        auto* w = new slow_write;
        w->conn = this;
        w->data = std::move(data);
        w->on_finished = std::move(on_finished);
        // Below 20 B/s a 50 ms slice would be under one byte: one byte per 1/rate s instead.
        if (bytes_per_s * static_cast<double>(w->slice_ms) / 1000.0 < 1.0)
            w->slice_ms = static_cast<std::uint64_t>(std::min(std::ceil(1000.0 / bytes_per_s), 3.6e6));
        w->bytes_per_slice = bytes_per_s * static_cast<double>(w->slice_ms) / 1000.0;
        w->keep_alive = keep;
        uv_timer_init(tcp.loop, &w->timer);
        w->timer.data = w;
        slow = w;
        // The first slice goes on the next loop turn, not from inside the handler's call.
        uv_timer_start(
            &w->timer,
            [](uv_timer_t* t) {
                auto* w = static_cast<slow_write*>(t->data);
                w->conn->write_slice(*w);
            },
            0, w->slice_ms);
    }

    void stop_slow_write() {
        auto* w = std::exchange(slow, nullptr);
        if (!w) return;
        uv_timer_stop(&w->timer);
        if (auto done = std::exchange(w->on_finished, nullptr)) done();
        uv_close(reinterpret_cast<uv_handle_t*>(&w->timer),
                 [](uv_handle_t* h) { delete static_cast<slow_write*>(h->data); });
    }

    void write_slice(slow_write& w) {
        // round(), with what rounding gave or took carried into the next slice. At least one
        // byte per slice (slices are longer below 20 B/s), with no debt built up.
        double budget = w.carry + w.bytes_per_slice;
        double want = std::max(1.0, std::round(budget));
        w.carry = std::max(budget - want, -0.5);
        std::size_t left = w.data.size() - w.offset;
        std::size_t len = want >= static_cast<double>(left) ? left : static_cast<std::size_t>(want);
        std::string slice = w.data.substr(w.offset, len);
        w.offset += len;
        if (w.offset < w.data.size()) {
            write(std::move(slice), false);
            return;
        }
        // The client may have half-closed, or the server begun stopping, since the head went out.
        bool keep = w.keep_alive && !last_request;
        write(std::move(slice), !keep);
        auto answered = std::exchange(on_close, nullptr);  // before on_finished, as in respond()
        stop_slow_write();  // calls on_finished; w is freed in its close callback, later
        if (!closing) finish_response(keep);
    }

    void reset_parser() {
        parser.emplace();
        parser->eager(true);
        parser->body_limit(owner->options.body_limit);
        parser->header_limit(static_cast<std::uint32_t>(owner->options.header_limit));
        sent_continue = false;
        head_checked = false;
    }

    // server_options::line_and_values_limit, once the head is in.
    std::optional<parse_failure> head_over_limit() {
        const std::size_t limit = owner->options.line_and_values_limit;
        if (limit == 0 || head_checked || !parser || !parser->is_header_done()) return std::nullopt;
        head_checked = true;
        const auto& msg = parser->get();
        // "METHOD SP target SP HTTP/1.x"
        const std::size_t line = msg.method_string().size() + 1 + msg.target().size() + 1 + 8;
        if (line > limit) return parse_failure::request_line_too_long;
        std::size_t total = line;
        for (const auto& field : msg) total += field.value().size();
        if (total > limit) return parse_failure::header_too_large;
        return std::nullopt;
    }

    void fail(parse_failure f) {
        auto make = owner->options.on_parse_failure ? owner->options.on_parse_failure
                                                    : default_parse_failure;
        draining = true;
        inbuf.clear();
        write(serialize(make(f), false, false), true);
    }

    void process() {
        while (!busy && !closing && !draining) {
            if (!parser) reset_parser();
            if (inbuf.empty()) return;
            boost::beast::error_code ec;
            std::size_t used = parser->put(boost::asio::buffer(inbuf.data(), inbuf.size()), ec);
            inbuf.erase(0, used);
            if (ec == bhttp::error::need_more) {
                if (auto over = head_over_limit()) return fail(*over);
                maybe_continue();
                return;
            }
            if (ec == bhttp::error::body_limit) return fail(parse_failure::body_too_large);
            if (ec == bhttp::error::header_limit) return fail(parse_failure::header_too_large);
            if (ec) return fail(parse_failure::malformed);
            if (auto over = head_over_limit()) return fail(*over);
            if (parser->is_done()) {
                dispatch();
            } else {
                maybe_continue();
                if (used == 0) return;
            }
        }
    }

    // curl waits up to a second for "100 Continue" before sending a large body.
    void maybe_continue() {
        if (sent_continue || !parser || !parser->is_header_done() || parser->is_done()) return;
        auto& msg = parser->get();
        auto it = msg.find(bhttp::field::expect);
        if (it != msg.end() && iequals(std::string_view(it->value().data(), it->value().size()), "100-continue")) {
            sent_continue = true;
            write("HTTP/1.1 100 Continue\r\n\r\n", false);
        }
    }

    void dispatch() {
        request_started_ms = 0;
        auto msg = parser->release();
        parser.reset();
        request req;
        req.method = std::string(msg.method_string());
        req.target = std::string(msg.target());
        req.version = static_cast<int>(msg.version());
        req.headers.reserve(16);
        for (const auto& field : msg)
            req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        req.body = std::move(msg.body());
        req.remote_ip = remote_ip;
        bool keep_alive = msg.keep_alive();
        bool head = msg.method() == bhttp::verb::head;
        busy = true;
        auto t = std::make_shared<connection_target>(weak_from_this(), keep_alive, head, req.version);
        owner->on_request(std::move(req), responder(std::move(t)));
    }

    void write(std::string data, bool close_after) {
        if (closing) return;
        auto* stream = reinterpret_cast<uv_stream_t*>(&tcp);
        // Most answers fit the socket's send buffer: written here and now, with no write
        // request, callback or writability wait (uv_write arms one per answer). Only what the
        // kernel did not take goes through uv_write; so does a closing answer, so that the
        // close still comes after the write has completed.
        if (!close_after && uv_stream_get_write_queue_size(stream) == 0) {
            uv_buf_t whole = uv_buf_init(data.data(), static_cast<unsigned>(data.size()));
            const int n = uv_try_write(stream, &whole, 1);
            if (n == static_cast<int>(data.size())) {
                last_activity_ms = uv_now(tcp.loop);
                return;
            }
            // An error (the peer gone) is left to uv_write, whose callback closes as before.
            if (n > 0) data.erase(0, static_cast<std::size_t>(n));
        }
        auto* op = new write_op;
        op->data = std::move(data);
        op->conn = shared_from_this();
        op->close_after = close_after;
        op->req.data = op;
        uv_buf_t buf = uv_buf_init(op->data.data(), static_cast<unsigned>(op->data.size()));
        int rc = uv_write(&op->req, reinterpret_cast<uv_stream_t*>(&tcp), &buf, 1,
                          [](uv_write_t* req, int status) {
                              auto* op = static_cast<write_op*>(req->data);
                              op->conn->last_activity_ms = uv_now(op->conn->tcp.loop);
                              if (status < 0 || op->close_after) op->conn->close();
                              delete op;
                          });
        if (rc < 0) {
            delete op;
            close();
        }
    }
};

void connection_target::send(response res, const send_options& opts) {
    if (std::exchange(used, true)) return;
    if (auto c = conn.lock()) c->respond(res, opts, keep_alive, head, version);
}

void connection_target::reset() {
    if (std::exchange(used, true)) return;
    if (auto c = conn.lock()) c->abort();
}

bool connection_target::alive() const {
    auto c = conn.lock();
    return !used && c && !c->closing && !c->peer_finished;
}

void connection_target::on_close(std::function<void()> fn) {
    if (used) return;  // answered or reset: nothing left to report
    if (auto c = conn.lock(); c && !c->closing && !c->peer_finished) {
        auto replaced = std::exchange(c->on_close, std::move(fn));
        return;  // replaced is destroyed here, after the new fn is in place
    }
    if (fn) fn();  // already gone
}

}  // namespace

void server::impl::accept() {
    auto c = std::make_shared<connection>(shared_from_this());
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c.get();
    c->self = c;
    if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
        c->owner.reset();
        c->close();
        return;
    }
    connections.push_back(c);
    c->start();
}

void server::impl::forget(connection* c) {
    connections.remove_if([c](const auto& p) { return p.get() == c; });
}

server::server(uv_loop_t* loop, handler on_request, server_options options)
    : impl_(std::make_shared<impl>(loop, std::move(on_request), std::move(options))) {}

server::~server() { close(); }

std::error_code server::listen(const std::string& host, int port) {
    auto& s = *impl_;
    sockaddr_storage addr{};
    if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr)) != 0 &&
        uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr)) != 0)
        return std::make_error_code(std::errc::invalid_argument);
    uv_tcp_init(s.loop, &s.listener);
    uv_timer_init(s.loop, &s.idle_sweep);
    s.listener.data = s.idle_sweep.data = &s;
    s.open_handles = 2;
    s.self_while_open = impl_;
    s.listening = true;
    int rc = uv_tcp_bind(&s.listener, reinterpret_cast<sockaddr*>(&addr), 0);
    if (rc == 0)
        rc = uv_listen(reinterpret_cast<uv_stream_t*>(&s.listener), 511,
                       [](uv_stream_t* l, int status) {
                           if (status == 0) static_cast<impl*>(l->data)->accept();
                       });
    if (rc != 0) {
        close();
        return std::error_code(-rc, std::generic_category());
    }
    if (s.options.idle_timeout_ms > 0 || s.options.request_timeout_ms > 0) {
        // Checked ten times per period: a connection closes at most 10% after its deadline.
        std::uint64_t shortest = s.options.idle_timeout_ms;
        if (s.options.request_timeout_ms > 0 && (shortest == 0 || s.options.request_timeout_ms < shortest))
            shortest = s.options.request_timeout_ms;
        std::uint64_t every = std::clamp<std::uint64_t>(shortest / 10, 1, 1000);
        uv_timer_start(
            &s.idle_sweep, [](uv_timer_t* t) { static_cast<impl*>(t->data)->sweep_idle(); },
            every, every);
        uv_unref(reinterpret_cast<uv_handle_t*>(&s.idle_sweep));  // never keeps the loop alive
    }
    sockaddr_storage bound{};
    int len = sizeof(bound);
    uv_tcp_getsockname(&s.listener, reinterpret_cast<sockaddr*>(&bound), &len);
    s.port = bound.ss_family == AF_INET6
                 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                 : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    return {};
}

int server::port() const noexcept { return impl_->port; }

std::size_t server::open_connections() const noexcept { return impl_->connections.size(); }

void server::impl::close_listener() {
    closed = true;
    if (!listening) return;
    listening = false;
    auto on_closed = [](uv_handle_t* h) {
        auto* self = static_cast<impl*>(h->data);
        if (--self->open_handles == 0) self->self_while_open.reset();
    };
    uv_close(reinterpret_cast<uv_handle_t*>(&listener), on_closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&idle_sweep), on_closed);
}

void server::impl::sweep_idle() {
    std::uint64_t now = uv_now(loop);
    auto conns = connections;
    for (auto& c : conns) {
        if (c->busy || c->draining || c->closing) continue;
        if (c->request_started_ms != 0) {
            // A request that began arriving and has not ended (a Content-Length larger than
            // the body sent, a trickle): answered, then closed.
            if (options.request_timeout_ms > 0) {
                if (now - c->request_started_ms >= options.request_timeout_ms)
                    c->fail(parse_failure::request_timeout);
                continue;
            }
        }
        if (options.idle_timeout_ms > 0 && now - c->last_activity_ms >= options.idle_timeout_ms)
            c->close();
    }
}

void server::stop_accepting() {
    auto conns = impl_->connections;  // close() on each mutates the list via forget()
    for (auto& c : conns) {
        if (c->busy)
            c->last_request = true;
        else
            c->close();
    }
    impl_->close_listener();
}

void server::close() {
    auto conns = impl_->connections;
    for (auto& c : conns) c->close();
    impl_->close_listener();
}

}  // namespace coldbrew::http
