// The HTTP server on a real libuv loop and a loopback socket: what goes on the wire.

#include "emulator/http/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "tests/catch.hpp"

using namespace coldbrew::http;

namespace {

struct loop_fixture {
    uv_loop_t loop{};
    loop_fixture() { uv_loop_init(&loop); }
    ~loop_fixture() {
        uv_walk(&loop, [](uv_handle_t* h, void*) { if (!uv_is_closing(h)) uv_close(h, nullptr); }, nullptr);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
    // Runs the loop while `client` runs on another thread; returns what it returned.
    std::string drive(const std::function<std::string()>& client) {
        std::atomic<bool> done{false};
        std::string out;
        std::thread t([&] {
            out = client();
            done = true;
        });
        while (!done) {
            uv_run(&loop, UV_RUN_NOWAIT);
            std::this_thread::yield();
        }
        t.join();
        return out;
    }
};

int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    return fd;
}

// Sends `raw`, optionally half-closes, and reads until the server closes.
std::string exchange(int port, const std::string& raw, bool half_close) {
    int fd = connect_to(port);
    ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
    if (half_close) ::shutdown(fd, SHUT_WR);
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return got;
}

}  // namespace

TEST_CASE("server: 204 and 304 carry no body; 204 no Content-Length", "[unit]") {
    loop_fixture f;
    server s(&f.loop, [](request req, responder respond) {
        response res;
        res.status = req.path() == "/204" ? 204 : 304;
        res.body = "must not be sent";
        respond(std::move(res));
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r204 = f.drive([&] { return exchange(port, "GET /204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(r204.rfind("HTTP/1.1 204 No Content\r\n", 0) == 0);
    CHECK(r204.find("Content-Length") == std::string::npos);
    CHECK(r204.find("must not") == std::string::npos);
    auto r304 = f.drive([&] { return exchange(port, "GET /304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(r304.rfind("HTTP/1.1 304 Not Modified\r\n", 0) == 0);
    CHECK(r304.find("must not") == std::string::npos);
}

TEST_CASE("server: a field that would split a header line is never written", "[unit]") {
    loop_fixture f;
    server s(&f.loop, [](request, responder respond) {
        response res;
        res.add("X-Good", "fine");
        res.add("X-Bad", "a\r\nInjected: yes");
        res.add("bad name", "v");
        respond(std::move(res));
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(r.find("X-Good: fine\r\n") != std::string::npos);
    CHECK(r.find("Injected") == std::string::npos);
    CHECK(r.find("bad name") == std::string::npos);
}

TEST_CASE("server: a half-closed client still gets its response", "[unit]") {
    loop_fixture f;
    uv_timer_t later;
    uv_timer_init(&f.loop, &later);
    responder pending;
    server s(&f.loop, [&](request, responder respond) {
        // Answer on a later loop turn, after the client's FIN has arrived.
        pending = std::move(respond);
        later.data = &pending;
        uv_timer_start(&later, [](uv_timer_t* t) {
            response res;
            res.body = "answered";
            (*static_cast<responder*>(t->data))(std::move(res));
        }, 50, 0);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", true); });
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(r.find("answered") != std::string::npos);
    uv_close(reinterpret_cast<uv_handle_t*>(&later), nullptr);  // it lives on this stack frame
    uv_run(&f.loop, UV_RUN_NOWAIT);
}

TEST_CASE("server: a request head that stops arriving is dropped after the idle timeout", "[unit]") {
    loop_fixture f;
    server_options o;
    o.idle_timeout_ms = 40;
    bool called = false;
    server s(&f.loop, [&](request, responder) { called = true; }, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    // Without the timeout, recv() below would block forever.
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n", false); });
    CHECK(r.empty());
    CHECK_FALSE(called);
}

TEST_CASE("server: keep-alive serves several requests on one connection, in order", "[unit]") {
    loop_fixture f;
    int n = 0;
    server s(&f.loop, [&](request req, responder respond) {
        response res;
        res.body = std::string(req.path()) + "#" + std::to_string(++n);
        respond(std::move(res));
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        return exchange(port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false);
    });
    auto a = r.find("/a#1");
    auto b = r.find("/b#2");
    CHECK(a != std::string::npos);
    CHECK(b != std::string::npos);
    CHECK(a < b);
}

TEST_CASE("server: a request head trickling in byte by byte is dropped too", "[unit]") {
    loop_fixture f;
    server_options o;
    o.idle_timeout_ms = 40;
    server s(&f.loop, [&](request, responder) {}, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    // Keeps sending header lines faster than the idle timeout; bounded at 200 lines.
    auto sent = f.drive([&] {
        int fd = connect_to(port);
        std::string head = "GET / HTTP/1.1\r\nHost: x\r\n";
        ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
        int lines = 0;
        for (; lines < 200; ++lines) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            std::string line = "X-Drip: " + std::to_string(lines) + "\r\n";
            if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) < 0) break;
            char b;
            if (::recv(fd, &b, 1, MSG_DONTWAIT) == 0) break;  // closed by the server
        }
        ::close(fd);
        return std::to_string(lines);
    });
    CHECK(std::stoi(sent) < 200);
}
