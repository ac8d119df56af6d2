#pragma once
// HTTP/1.1 server on the libuv loop. Beast is the codec (parser and reason phrases) and lives
// only in server.cpp; callers see plain http::request / http::response values.
//
// One request per connection is processed at a time (pipelined bytes wait in the buffer);
// keep-alive follows HTTP/1.1 rules; `Expect: 100-continue` is answered so curl's large
// uploads are not delayed.

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include "emulator/http/message.hpp"

namespace coldbrew::http {

// How a response leaves the server. The defaults send it at once; injected faults ask for
// something else.
struct send_options {
    // > 0: the whole response (status line, headers and body) is written at this many bytes
    // per second, in slices every 50 ms (below 20 B/s: one byte every 1/rate s), as a slow
    // network would deliver it. 0 (or not finite): at once.
    double bytes_per_s = 0;
    // Called once when the response has been handed to the socket in full, or when the
    // connection closed before that; on the loop. May be empty.
    std::function<void()> on_finished;
};

// Answers one request. Call one of send/operator()/reset at most once; later calls, and calls
// after the client went away, are harmless no-ops. It may be called later, from another loop
// callback (long poll). Dropping a responder without calling it leaves the connection open
// and the request unanswered (the client waits), which is how a hang is injected.
class responder {
public:
    // What a server connection (or a test) implements.
    struct target {
        virtual ~target() = default;
        virtual void send(response res, const send_options& opts) = 0;
        virtual void reset() = 0;              // abort the connection with a TCP RST
        virtual bool alive() const = 0;        // the client is still connected
        // Keeps fn to call once when the client goes away; see responder::on_close. Not pure:
        // a target that does not override it (one that cannot tell when its client leaves)
        // drops fn and never calls it.
        virtual void on_close(std::function<void()> fn) { (void)fn; }
    };

    responder() = default;
    explicit responder(std::shared_ptr<target> t) : target_(std::move(t)) {}
    // A responder that hands the response to `send` (tests, internal callers). reset() drops
    // it; alive() is true until it was used. Its client never goes away: on_close drops fn.
    explicit responder(std::function<void(response)> send);

    void operator()(response res) { send(std::move(res), {}); }
    void send(response res, const send_options& opts);
    void reset();
    // True while the responder has not been used and its client is still there. A server
    // connection turns false once it is closed (the client reset it, a write failed, the
    // server closed it) or once the client sent FIN. TCP cannot tell a half-close (`nc -N`,
    // shutdown(SHUT_WR)) from a client that gave up and closed; both count as gone here, so a
    // request held unanswered (an injected hang) is released when its client leaves. A
    // half-closed client still receives an answer if one is sent.
    bool alive() const;
    // Calls fn once, on the loop, when the request's client goes away — EOF (FIN, a half-close
    // included, as alive() counts it), a read or write error, a reset by the peer — or when the
    // server closes the connection, as long as the answer has not been sent in full (a slow
    // answer cut short fires fn, before its on_finished). Of the server's closes only
    // server::close() reaches a request in progress: the idle timeout and stop_accepting()
    // leave a connection alone until its answer is out. If the client is already gone, fn is
    // called right away, inside this call. Registering again replaces the previous fn. fn is
    // never called once the answer has been handed to the socket in full (after send's
    // on_finished), after reset(), or after the connection was freed, and the connection lets
    // fn go when it closes, so fn may hold this responder. fn may reset or answer this
    // responder, or drop whatever owns it. No-op on a responder without a target
    // (default-built, or already used).
    void on_close(std::function<void()> fn);
    explicit operator bool() const { return static_cast<bool>(target_); }

private:
    std::shared_ptr<target> target_;
};

enum class parse_failure {
    body_too_large,    // body over server_options::body_limit
    // header over server_options::header_limit, or its request line and field values over
    // server_options::line_and_values_limit
    header_too_large,
    request_line_too_long,  // the request line alone over line_and_values_limit
    request_timeout,   // the request did not arrive in full within request_timeout_ms
    malformed,         // not HTTP/1.x
};

struct server_options {
    std::size_t body_limit = 10 * 1024 * 1024;
    std::size_t header_limit = 64 * 1024;
    // Bytes of the request line plus every field value (names, separators and line ends not
    // counted), as API Gateway's "Total combined size of request line and header values"
    // quota counts them. Over it: parse_failure::request_line_too_long when the request line
    // alone is, else header_too_large. 0: not checked (header_limit still applies).
    std::size_t line_and_values_limit = 0;
    // A connection with no request in progress (idle keep-alive) is closed after this long
    // without bytes. 0 disables.
    std::uint64_t idle_timeout_ms = 60000;
    // A request whose head or body has begun arriving must arrive in full within this long of
    // its first byte (a Content-Length larger than what the client sends, a trickle); else it
    // is answered with parse_failure::request_timeout and the connection closed. 0 disables.
    std::uint64_t request_timeout_ms = 30000;
    // Builds the answer to a request that cannot be parsed; the connection is closed after it.
    std::function<response(parse_failure)> on_parse_failure;
};

class server {
public:
    using handler = std::function<void(request, responder)>;

    server(uv_loop_t* loop, handler on_request, server_options options = {});
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Binds and listens. port 0 picks a free port; port() then tells which.
    std::error_code listen(const std::string& host, int port);
    int port() const noexcept;

    // Stops accepting and closes every open connection; pending responders become no-ops.
    void close();

    // Graceful: stops accepting and closes idle connections; a connection whose request is
    // still with the handler closes once its response is written.
    void stop_accepting();

    std::size_t open_connections() const noexcept;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace coldbrew::http
