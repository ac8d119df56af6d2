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

// Sends the response for one request. Call it at most once; calling it after the client went
// away is a harmless no-op. It may be called later, from another loop callback (long poll).
class responder {
public:
    responder() = default;
    explicit responder(std::function<void(response)> send) : send_(std::move(send)) {}
    void operator()(response res) {
        if (send_) {
            auto send = std::move(send_);
            send_ = nullptr;
            send(std::move(res));
        }
    }
    explicit operator bool() const { return static_cast<bool>(send_); }

private:
    std::function<void(response)> send_;
};

enum class parse_failure {
    body_too_large,    // body over server_options::body_limit
    header_too_large,  // header over server_options::header_limit
    malformed,         // not HTTP/1.x
};

struct server_options {
    std::size_t body_limit = 10 * 1024 * 1024;
    std::size_t header_limit = 64 * 1024;
    // A connection with no request in progress (idle keep-alive, or a request whose head or
    // body stopped arriving) is closed after this long without bytes. 0 disables.
    std::uint64_t idle_timeout_ms = 60000;
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
