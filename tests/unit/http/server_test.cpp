// The HTTP server on a real libuv loop and a loopback socket: what goes on the wire.

#include "emulator/http/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// Runs the loop until `done()` holds, or `limit_ms` of loop time passed (so a broken server
// fails the test instead of hanging it). Returns done().
bool run_until(uv_loop_t* loop, const std::function<bool()>& done, std::uint64_t limit_ms = 5000) {
    uv_timer_t guard;
    bool expired = false;
    uv_timer_init(loop, &guard);
    guard.data = &expired;
    uv_timer_start(&guard, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; }, limit_ms, 0);
    while (!done() && !expired) uv_run(loop, UV_RUN_ONCE);
    uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
    uv_run(loop, UV_RUN_NOWAIT);  // finishes closing the guard, which lives on this frame
    return done();
}

// Timer handles still on the loop, open or closing: a slow writer adds one while it runs.
int timer_handles(uv_loop_t* loop) {
    int n = 0;
    uv_walk(loop, [](uv_handle_t* h, void* arg) { if (h->type == UV_TIMER) ++*static_cast<int*>(arg); }, &n);
    return n;
}

// Makes close() send a RST instead of a FIN.
void close_with_reset(int fd) {
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    ::close(fd);
}

std::uint64_t loop_now(uv_loop_t* loop) {
    uv_update_time(loop);
    return uv_now(loop);
}

// A target that records what the responder forwards to it.
struct recording_target : responder::target {
    int sends = 0;
    int resets = 0;
    double last_bytes_per_s = -1;
    bool connected = true;
    std::function<void()> close_fn;
    void send(response, const send_options& opts) override {
        ++sends;
        last_bytes_per_s = opts.bytes_per_s;
    }
    void reset() override { ++resets; }
    bool alive() const override { return connected; }
    void on_close(std::function<void()> fn) override { close_fn = std::move(fn); }
};

// Sends one keep-alive request and returns the socket, left open.
int send_request(int port, const std::string& path = "/") {
    int fd = connect_to(port);
    timeval limit{5, 0};  // a server that never answers fails the test instead of hanging it
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    std::string raw = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
    return fd;
}

// Reads until `want` has arrived (true) or the peer closed or the read timed out (false).
bool read_until(int fd, const std::string& want, std::string& got) {
    char buf[4096];
    while (got.find(want) == std::string::npos) {
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) return false;
        got.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

void wait_for(const std::atomic<int>& n, int at_least) {
    for (int i = 0; n < at_least && i < 5000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST_CASE("responder: from a function, answers once; reset drops it", "[unit]") {
    int calls = 0;
    std::string got;
    responder r([&](response res) {
        ++calls;
        got = res.body;
    });
    CHECK(static_cast<bool>(r));
    CHECK(r.alive());
    response first;
    first.body = "first";
    send_options slow;
    slow.bytes_per_s = 10;  // a function target has no wire: the options are ignored
    r.send(first, slow);
    CHECK(calls == 1);
    CHECK(got == "first");
    CHECK_FALSE(r.alive());
    CHECK_FALSE(static_cast<bool>(r));
    response second;
    second.body = "second";
    r(second);
    r.reset();
    CHECK(calls == 1);
    CHECK(got == "first");

    responder dropped([&](response) { ++calls; });
    responder copy = dropped;
    dropped.reset();
    CHECK_FALSE(dropped.alive());
    CHECK_FALSE(copy.alive());  // the copy shares the dropped function
    copy(response{});
    CHECK(calls == 1);

    CHECK_FALSE(static_cast<bool>(responder(std::function<void(response)>())));
    CHECK_FALSE(responder().alive());
}

TEST_CASE("responder: forwards one call to its target, then lets it go", "[unit]") {
    auto t = std::make_shared<recording_target>();
    responder r(t);
    CHECK(r.alive());
    t->connected = false;
    CHECK_FALSE(r.alive());
    t->connected = true;
    send_options o;
    o.bytes_per_s = 1234.5;
    r.send(response{}, o);
    CHECK(t->sends == 1);
    CHECK(t->last_bytes_per_s == 1234.5);
    CHECK_FALSE(r.alive());
    CHECK(t.use_count() == 1);  // released
    r(response{});
    r.reset();
    CHECK(t->sends == 1);
    CHECK(t->resets == 0);

    auto t2 = std::make_shared<recording_target>();
    responder r2(t2);
    r2.reset();
    r2(response{});
    CHECK(t2->resets == 1);
    CHECK(t2->sends == 0);
}

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

TEST_CASE("server: a request head that stops arriving is answered 408 after the request timeout", "[unit]") {
    loop_fixture f;
    server_options o;
    o.request_timeout_ms = 40;
    bool called = false;
    server s(&f.loop, [&](request, responder) { called = true; }, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    // Without the timeout, recv() below would block forever.
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n", false); });
    CHECK(r.rfind("HTTP/1.1 408 ", 0) == 0);
    CHECK(r.find("Connection: close\r\n") != std::string::npos);
    CHECK_FALSE(called);
}

TEST_CASE("server: a body shorter than its Content-Length gets the request-timeout answer", "[unit]") {
    loop_fixture f;
    server_options o;
    o.request_timeout_ms = 40;
    o.on_parse_failure = [](parse_failure p) {
        response res;
        res.status = p == parse_failure::request_timeout ? 408 : 400;
        res.body = p == parse_failure::request_timeout ? "timed out" : "other";
        return res;
    };
    bool called = false;
    server s(&f.loop, [&](request, responder) { called = true; }, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        return exchange(port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort", false);
    });
    CHECK(r.rfind("HTTP/1.1 408 ", 0) == 0);
    CHECK(r.find("timed out") != std::string::npos);
    CHECK_FALSE(called);
}

TEST_CASE("server: an idle keep-alive connection is closed silently after the idle timeout", "[unit]") {
    loop_fixture f;
    server_options o;
    o.idle_timeout_ms = 40;
    server s(&f.loop, [&](request, responder respond) { respond(response{}); }, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false); });
    CHECK(r.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(r.find("408") == std::string::npos);
}

TEST_CASE("server: the request line and field values are held against their combined limit", "[unit]") {
    loop_fixture f;
    server_options o;
    o.line_and_values_limit = 100;
    std::vector<std::string> served;
    server s(&f.loop, [&](request req, responder respond) {
        served.push_back(req.target);
        respond(response{});
    }, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    // "GET " + target + " HTTP/1.1" is 13 bytes besides the target; "x" is the Host value.
    const std::string at_limit = "/" + std::string(100 - 13 - 1 - 1, 'a');
    auto ok = f.drive([&] { return exchange(port, "GET " + at_limit + " HTTP/1.1\r\nHost: x\r\n\r\n", true); });
    CHECK(ok.rfind("HTTP/1.1 200 ", 0) == 0);
    auto over = f.drive([&] { return exchange(port, "GET " + at_limit + "b HTTP/1.1\r\nHost: x\r\n\r\n", true); });
    CHECK(over.rfind("HTTP/1.1 431 ", 0) == 0);
    auto line = f.drive([&] {
        return exchange(port, "GET /" + std::string(20 * 1024, 'q') + " HTTP/1.1\r\nHost: x\r\n\r\n", true);
    });
    CHECK(line.rfind("HTTP/1.1 414 ", 0) == 0);
    REQUIRE(served.size() == 1);
    CHECK(served[0] == at_limit);
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
    o.request_timeout_ms = 40;
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
            if (::recv(fd, &b, 1, MSG_DONTWAIT) >= 0) break;  // answered or closed by the server
        }
        ::close(fd);
        return std::to_string(lines);
    });
    CHECK(std::stoi(sent) < 200);
}

TEST_CASE("server: a second answer to one request is never written, even through a copy", "[unit]") {
    loop_fixture f;
    server s(&f.loop, [](request, responder respond) {
        responder copy = respond;
        response res;
        res.body = "first";
        respond(res);
        res.body = "second";
        respond(res);
        res.body = "third";
        copy(res);
        copy.reset();
        CHECK_FALSE(copy.alive());
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(r.find("HTTP/1.1", 1) == std::string::npos);
    CHECK(r.size() >= 5);
    CHECK(r.substr(r.size() - 5) == "first");
}

TEST_CASE("server: a response sent at a byte rate arrives whole, in slices, no faster than the rate", "[unit]") {
    loop_fixture f;
    const double rate = 3030;  // 151.5 bytes per 50 ms slice: the fraction is carried over
    std::string body;
    for (int i = 0; body.size() < 900; ++i) body += std::to_string(i) + ",";
    server s(&f.loop, [&](request req, responder respond) {
        response res;
        res.set("Content-Type", "text/plain");
        res.body = body;
        send_options o;
        if (req.path() == "/slow") o.bytes_per_s = rate;
        respond.send(std::move(res), o);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto fast = f.drive([&] { return exchange(port, "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    REQUIRE(fast.size() > body.size());
    CHECK(fast.substr(fast.size() - body.size()) == body);

    int reads = 0;
    std::uint64_t started_ms = loop_now(&f.loop);
    auto slow = f.drive([&] {
        int fd = connect_to(port);
        std::string raw = "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        std::string got;
        char buf[4096];
        ssize_t n;
        while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) {
            got.append(buf, static_cast<std::size_t>(n));
            ++reads;
        }
        ::close(fd);
        return got;
    });
    std::uint64_t elapsed_ms = loop_now(&f.loop) - started_ms;
    CHECK(slow == fast);  // the same bytes as an immediate answer
    CHECK(reads > 1);
    // The last slice leaves no earlier than one slice short of size / rate (lower bound only;
    // 1 ms for the loop clock's rounding).
    auto at_least_ms = static_cast<std::uint64_t>(static_cast<double>(slow.size()) * 1000 / rate) - 50 - 1;
    CHECK(elapsed_ms >= at_least_ms);
    run_until(&f.loop, [&] { return s.open_connections() == 0; });
    CHECK(timer_handles(&f.loop) == 1);  // only the server's idle sweep; the slow writer is gone
}

TEST_CASE("server: on_finished is called once the answer is out, slow or not", "[unit]") {
    loop_fixture f;
    int finished_fast = 0, finished_slow = 0;
    server s(&f.loop, [&](request req, responder respond) {
        response res;
        res.body = std::string(300, 'a');
        send_options o;
        const bool slow = req.path() == "/slow";
        if (slow) o.bytes_per_s = 4000;
        o.on_finished = [&, slow] { ++(slow ? finished_slow : finished_fast); };
        respond.send(std::move(res), o);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] { return exchange(port, "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(finished_fast == 1);
    auto got = f.drive([&] { return exchange(port, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(got.size() > 300);
    CHECK(finished_slow == 1);
}

TEST_CASE("server: below 20 B/s a slow answer goes one byte at a time, and a reset ends it", "[unit]") {
    loop_fixture f;
    int finished = 0;
    server s(&f.loop, [&](request, responder respond) {
        response res;
        res.body = "x";
        send_options o;
        o.bytes_per_s = 5;  // one byte every 200 ms
        o.on_finished = [&] { ++finished; };
        respond.send(std::move(res), o);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    std::uint64_t started_ms = loop_now(&f.loop);
    auto first = f.drive([&] {
        int fd = connect_to(port);
        std::string raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        std::string got;
        char buf[16];
        while (got.size() < 3) {
            ssize_t n = ::recv(fd, buf, 1, 0);
            if (n <= 0) break;
            got.append(buf, static_cast<std::size_t>(n));
        }
        close_with_reset(fd);
        return got;
    });
    CHECK(first == "HTT");
    // Three bytes: the first at once, then two more 200 ms apart (lower bound only).
    CHECK(loop_now(&f.loop) - started_ms >= 399);
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(finished == 1);  // the connection ended before the answer did
}

TEST_CASE("server: a slow response keeps its connection busy until the last slice", "[unit]") {
    loop_fixture f;
    server_options o;
    o.idle_timeout_ms = 20;  // shorter than the gap between slices
    server s(&f.loop, [&](request req, responder respond) {
        response res;
        send_options slow;
        if (req.path() == "/slow") {
            res.body = std::string(600, 'a');
            slow.bytes_per_s = 4000;  // 200 bytes per slice
        } else {
            res.body = "after";
        }
        respond.send(std::move(res), slow);
    }, o);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        return exchange(port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false);
    });
    // Neither closed by the idle sweep nor interleaved with the pipelined second answer.
    auto first_body = r.find(std::string(600, 'a'));
    auto second = r.find("HTTP/1.1 200 OK\r\n", 1);
    REQUIRE(first_body != std::string::npos);
    REQUIRE(second != std::string::npos);
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(second == first_body + 600);
    CHECK(r.substr(r.size() - 5) == "after");
}

TEST_CASE("server: a client that resets mid slow response stops the slow writer", "[unit]") {
    loop_fixture f;
    server s(&f.loop, [&](request, responder respond) {
        response res;
        res.body = std::string(5000, 'z');
        send_options o;
        o.bytes_per_s = 200;  // 25 s in all; the client leaves after the first slice
        respond.send(std::move(res), o);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto first = f.drive([&] {
        int fd = connect_to(port);
        std::string raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        char buf[64];
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        close_with_reset(fd);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    });
    CHECK(first.rfind("HTTP/1.1 2", 0) == 0);
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    uv_run(&f.loop, UV_RUN_NOWAIT);
    CHECK(timer_handles(&f.loop) == 1);  // only the server's idle sweep
}

TEST_CASE("server: close() during a slow response stops the slow writer", "[unit]") {
    loop_fixture f;
    uv_timer_t later;
    uv_timer_init(&f.loop, &later);
    server* sp = nullptr;
    later.data = &sp;
    server s(&f.loop, [&](request, responder respond) {
        response res;
        res.body = std::string(5000, 'z');
        send_options o;
        o.bytes_per_s = 2000;
        respond.send(std::move(res), o);
        uv_timer_start(&later, [](uv_timer_t* t) { (*static_cast<server**>(t->data))->close(); }, 120, 0);
    });
    sp = &s;
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false); });
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(r.size() < 5000);  // cut short
    uv_close(reinterpret_cast<uv_handle_t*>(&later), nullptr);  // it lives on this stack frame
    uv_run(&f.loop, UV_RUN_NOWAIT);
    CHECK(s.open_connections() == 0);
    CHECK(timer_handles(&f.loop) == 0);  // the idle sweep closed with the server; no slow writer
}

TEST_CASE("server: reset() aborts the connection; the client sees ECONNRESET", "[unit]") {
    loop_fixture f;
    bool alive_before = false;
    bool alive_after = true;
    server s(&f.loop, [&](request, responder respond) {
        alive_before = respond.alive();
        respond.reset();
        alive_after = respond.alive();
        respond(response{});  // no-op
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        int fd = connect_to(port);
        std::string raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        char buf[256];
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        int err = errno;
        ::close(fd);
        if (n < 0) return std::string(err == ECONNRESET ? "ECONNRESET" : "errno " + std::to_string(err));
        return n == 0 ? std::string("EOF") : std::string(buf, static_cast<std::size_t>(n));
    });
    CHECK(r == "ECONNRESET");
    CHECK(alive_before);
    CHECK_FALSE(alive_after);
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
}

TEST_CASE("server: alive() turns false when the client resets, and stays false", "[unit]") {
    loop_fixture f;
    responder held;
    std::atomic<bool> got_request{false};
    server s(&f.loop, [&](request, responder respond) {
        held = std::move(respond);
        got_request = true;
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] {
        int fd = connect_to(port);
        std::string raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        while (!got_request) std::this_thread::yield();
        close_with_reset(fd);
        return std::string();
    });
    REQUIRE(got_request);
    CHECK(run_until(&f.loop, [&] { return !held.alive(); }));
    CHECK(s.open_connections() == 0);
    CHECK(static_cast<bool>(held));  // unused, but answering it now does nothing
    held(response{});
    CHECK_FALSE(static_cast<bool>(held));
}

TEST_CASE("server: after a half-close alive() is false and the answer is still delivered", "[unit]") {
    loop_fixture f;
    responder held;
    std::atomic<bool> half_closed{false};
    int ticks_after_fin = 0;
    bool alive_when_answered = true;
    uv_timer_t tick;
    uv_timer_init(&f.loop, &tick);
    server s(&f.loop, [&](request, responder respond) { held = std::move(respond); });
    // Answers a few loop turns after the FIN was sent, so the server has read it first.
    struct state {
        responder* held;
        std::atomic<bool>* half_closed;
        int* ticks;
        bool* alive;
    } st{&held, &half_closed, &ticks_after_fin, &alive_when_answered};
    tick.data = &st;
    uv_timer_start(&tick, [](uv_timer_t* t) {
        auto* st = static_cast<state*>(t->data);
        if (!*st->held || !*st->half_closed || ++*st->ticks < 3) return;
        *st->alive = st->held->alive();
        response res;
        res.body = "still answered";
        (*st->held)(std::move(res));
        uv_timer_stop(t);
    }, 10, 10);
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        int fd = connect_to(port);
        std::string raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // asks for keep-alive
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        ::shutdown(fd, SHUT_WR);
        half_closed = true;
        std::string got;
        char buf[4096];
        ssize_t n;
        while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) got.append(buf, static_cast<std::size_t>(n));
        ::close(fd);
        return got;
    });
    CHECK_FALSE(alive_when_answered);
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(r.find("Connection: close\r\n") != std::string::npos);  // the server saw the FIN first
    CHECK(r.find("still answered") != std::string::npos);
    uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);  // it lives on this stack frame
    uv_run(&f.loop, UV_RUN_NOWAIT);
}

TEST_CASE("server: a dropped responder leaves the connection open past the idle timeout until close()", "[unit]") {
    loop_fixture f;
    server_options o;
    o.idle_timeout_ms = 20;
    uv_timer_t later;
    uv_timer_init(&f.loop, &later);
    struct state {
        server* s = nullptr;
        std::size_t open_before_close = 0;
    } st;
    later.data = &st;
    server s(&f.loop, [&](request, responder) {
        // Well past the idle timeout, then the server closes.
        uv_timer_start(&later, [](uv_timer_t* t) {
            auto* st = static_cast<state*>(t->data);
            st->open_before_close = st->s->open_connections();
            st->s->close();
        }, 100, 0);
    }, o);
    st.s = &s;
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false); });
    CHECK(st.open_before_close == 1);
    CHECK(r.empty());
    uv_close(reinterpret_cast<uv_handle_t*>(&later), nullptr);  // it lives on this stack frame
    uv_run(&f.loop, UV_RUN_NOWAIT);
}

TEST_CASE("server: stop_accepting() during a slow response closes after its last slice", "[unit]") {
    loop_fixture f;
    uv_timer_t later;
    uv_timer_init(&f.loop, &later);
    server* sp = nullptr;
    later.data = &sp;
    server s(&f.loop, [&](request, responder respond) {
        response res;
        res.body = std::string(600, 'k');
        send_options o;
        o.bytes_per_s = 4000;  // the head went out promising keep-alive
        respond.send(std::move(res), o);
        uv_timer_start(&later, [](uv_timer_t* t) { (*static_cast<server**>(t->data))->stop_accepting(); }, 60, 0);
    });
    sp = &s;
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        int fd = connect_to(port);
        timeval limit{5, 0};  // a connection left open fails the test instead of hanging it
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
        std::string raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        std::string got;
        char buf[4096];
        ssize_t n;
        while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) got.append(buf, static_cast<std::size_t>(n));
        ::close(fd);
        return n == 0 ? got : std::string("not closed");
    });
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(r.size() > 600);
    CHECK(r.substr(r.size() - 600) == std::string(600, 'k'));
    uv_close(reinterpret_cast<uv_handle_t*>(&later), nullptr);  // it lives on this stack frame
    uv_run(&f.loop, UV_RUN_NOWAIT);
    CHECK(s.open_connections() == 0);
}

TEST_CASE("responder: on_close goes to the target; without one it does nothing", "[unit]") {
    auto t = std::make_shared<recording_target>();
    responder r(t);
    int fired = 0;
    r.on_close([&] { ++fired; });
    REQUIRE(t->close_fn);
    t->close_fn();
    CHECK(fired == 1);

    r(response{});
    t->close_fn = nullptr;
    r.on_close([&] { ++fired; });  // used: no target left
    CHECK_FALSE(t->close_fn);

    responder().on_close([&] { ++fired; });
    responder from_function([](response) {});
    from_function.on_close([&] { ++fired; });  // a function target never closes
    from_function.reset();
    from_function.on_close([&] { ++fired; });
    CHECK(fired == 1);
}

TEST_CASE("server: on_close fires once when the client of a held request closes or resets", "[unit]") {
    bool with_reset = false;
    SECTION("the client closes") {}
    SECTION("the client resets") { with_reset = true; }
    loop_fixture f;
    responder held;
    std::atomic<int> requests{0};
    int fired = 0;
    bool alive_in_fn = true;
    server s(&f.loop, [&](request, responder respond) {
        held = std::move(respond);
        held.on_close([&] {
            ++fired;
            alive_in_fn = held.alive();
        });
        ++requests;
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] {
        int fd = send_request(port);
        wait_for(requests, 1);
        if (with_reset)
            close_with_reset(fd);
        else
            ::close(fd);
        return std::string();
    });
    REQUIRE(requests == 1);
    CHECK(run_until(&f.loop, [&] { return fired > 0; }));
    CHECK_FALSE(alive_in_fn);
    s.close();  // closing the connection now reports nothing more
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired == 1);
}

TEST_CASE("server: on_close fires on a half-close, and the callback may still answer", "[unit]") {
    loop_fixture f;
    responder held;
    int fired = 0;
    server s(&f.loop, [&](request, responder respond) {
        held = std::move(respond);
        held.on_close([&] {
            ++fired;
            response res;
            res.body = "answered on close";
            held(std::move(res));
        });
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        int fd = send_request(port);
        ::shutdown(fd, SHUT_WR);
        std::string got;
        read_until(fd, "answered on close", got);  // gives up after the socket's timeout
        ::close(fd);
        return got;
    });
    CHECK(fired == 1);
    CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(r.find("answered on close") != std::string::npos);
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired == 1);
}

TEST_CASE("server: close() fires on_close for every held request, at once", "[unit]") {
    loop_fixture f;
    std::vector<responder> held;
    std::atomic<int> requests{0};
    int fired = 0;
    server s(&f.loop, [&](request, responder respond) {
        respond.on_close([&] { ++fired; });
        held.push_back(std::move(respond));
        ++requests;
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    int fds[2] = {-1, -1};
    f.drive([&] {
        fds[0] = send_request(port);
        fds[1] = send_request(port);
        wait_for(requests, 2);
        return std::string();
    });
    REQUIRE(requests == 2);
    CHECK(fired == 0);  // both clients are still there
    s.close();
    CHECK(fired == 2);
    CHECK_FALSE(held[0].alive());
    CHECK_FALSE(held[1].alive());
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired == 2);
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_CASE("server: on_close never fires once the answer is out, or after reset()", "[unit]") {
    std::string mode = "at once";
    SECTION("answered at once") {}
    SECTION("answered slowly") { mode = "slow"; }
    SECTION("reset") { mode = "reset"; }
    loop_fixture f;
    int fired = 0;
    int finished = 0;
    std::atomic<bool> answered{false};
    server s(&f.loop, [&](request, responder respond) {
        respond.on_close([&] { ++fired; });
        if (mode == "reset") {
            respond.reset();
            return;
        }
        response res;
        res.body = std::string(400, 'b');
        send_options o;
        if (mode == "slow") o.bytes_per_s = 8000;  // 400 bytes per slice
        o.on_finished = [&] {
            ++finished;
            answered = true;
        };
        respond.send(std::move(res), o);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto r = f.drive([&] {
        int fd = send_request(port);
        std::string got;
        bool whole = read_until(fd, std::string(400, 'b'), got);
        // The server has handed everything over; the client leaves while the connection is
        // still open for a next request.
        for (int i = 0; whole && !answered && i < 5000; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        close_with_reset(fd);
        return got;
    });
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired == 0);
    if (mode == "reset") {
        CHECK(r.empty());
    } else {
        CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
        CHECK(finished == 1);
    }
}

TEST_CASE("server: a slow answer cut short fires on_close, before on_finished", "[unit]") {
    loop_fixture f;
    std::string events;
    server s(&f.loop, [&](request, responder respond) {
        respond.on_close([&] { events += "close;"; });
        response res;
        res.body = std::string(5000, 'z');
        send_options o;
        o.bytes_per_s = 200;  // 25 s in all; the client leaves after the first slice
        o.on_finished = [&] { events += "finished;"; };
        respond.send(std::move(res), o);
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] {
        int fd = send_request(port);
        char buf[64];
        ::recv(fd, buf, sizeof(buf), 0);
        close_with_reset(fd);
        return std::string();
    });
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(events == "close;finished;");
}

TEST_CASE("server: on_close on a keep-alive connection belongs to one request", "[unit]") {
    loop_fixture f;
    responder first_copy, second;
    int fired_first = 0, fired_second = 0, fired_stale = 0;
    std::atomic<int> requests{0};
    server s(&f.loop, [&](request req, responder respond) {
        ++requests;
        if (req.path() == "/first") {
            respond.on_close([&] { ++fired_first; });
            first_copy = respond;
            respond(response{});
            return;
        }
        first_copy.on_close([&] { ++fired_stale; });  // answered already: dropped
        second = std::move(respond);
        second.on_close([&] { fired_second += 100; });
        second.on_close([&] { ++fired_second; });  // replaces the one above
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] {
        int fd = send_request(port, "/first");
        std::string got;
        read_until(fd, "Content-Length: 0\r\n\r\n", got);
        std::string raw = "GET /second HTTP/1.1\r\nHost: x\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        wait_for(requests, 2);
        ::close(fd);
        return std::string();
    });
    REQUIRE(requests == 2);
    CHECK(run_until(&f.loop, [&] { return fired_second > 0; }));
    s.close();
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired_first == 0);
    CHECK(fired_stale == 0);
    CHECK(fired_second == 1);
}

TEST_CASE("server: on_close after the client left calls back at once", "[unit]") {
    bool with_reset = false;
    SECTION("the client closes") {}
    SECTION("the client resets") { with_reset = true; }
    loop_fixture f;
    responder held;
    std::atomic<int> requests{0};
    server s(&f.loop, [&](request, responder respond) {
        held = std::move(respond);
        ++requests;
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] {
        int fd = send_request(port);
        wait_for(requests, 1);
        if (with_reset)
            close_with_reset(fd);
        else
            ::close(fd);
        return std::string();
    });
    REQUIRE(run_until(&f.loop, [&] { return !held.alive(); }));
    int fired = 0;
    held.on_close([&] { ++fired; });
    CHECK(fired == 1);  // inside the call
    held.on_close([&] { ++fired; });
    CHECK(fired == 2);  // each registration is called once
    s.close();
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired == 2);
}

TEST_CASE("server: an on_close callback may reset its responder and free its owner", "[unit]") {
    // The owner holds the responder; its only owning reference is `keeper`, which the callback
    // drops, or the callback's own capture.
    struct owner {
        responder respond;
        int* destroyed = nullptr;
        ~owner() { ++*destroyed; }
    };
    bool captured = false;
    SECTION("the owner is freed by the callback") {}
    SECTION("the owner is held by the callback") { captured = true; }
    loop_fixture f;
    std::shared_ptr<owner> keeper;
    int destroyed = 0;
    int fired = 0;
    std::atomic<int> requests{0};
    server s(&f.loop, [&](request, responder respond) {
        auto o = std::make_shared<owner>();
        o->destroyed = &destroyed;
        o->respond = std::move(respond);
        if (captured) {
            o->respond.on_close([o, &fired] {
                ++fired;
                o->respond.reset();
                o->respond.on_close([&fired] { fired += 100; });  // used: dropped
            });
        } else {
            keeper = o;
            o->respond.on_close([&keeper, &fired] {
                ++fired;
                keeper->respond.reset();
                keeper.reset();  // frees the owner and the responder inside this call
            });
        }
        ++requests;
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    f.drive([&] {
        int fd = send_request(port);
        wait_for(requests, 1);
        close_with_reset(fd);
        return std::string();
    });
    REQUIRE(requests == 1);
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(fired == 1);
    CHECK(destroyed == 1);
}

TEST_CASE("server: a held responder whose on_close holds it does not outlive its connection", "[unit]") {
    loop_fixture f;
    std::weak_ptr<int> token;
    std::atomic<int> requests{0};
    server s(&f.loop, [&](request, responder respond) {
        auto t = std::make_shared<int>(0);
        token = t;
        // The callback holds the only copy of the responder: a cycle unless the connection
        // lets it go when it closes.
        respond.on_close([respond, t] {});
        ++requests;
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    int fd = -1;
    f.drive([&] {
        fd = send_request(port);
        wait_for(requests, 1);
        return std::string();
    });
    REQUIRE(requests == 1);
    CHECK_FALSE(token.expired());  // held while the client waits
    s.close();
    CHECK(run_until(&f.loop, [&] { return s.open_connections() == 0; }));
    CHECK(token.expired());
    ::close(fd);
}

TEST_CASE("server: fields go out in the order, case and bytes set; the server owns framing fields", "[unit]") {
    loop_fixture f;
    server s(&f.loop, [](request req, responder respond) {
        response res;
        if (req.path() == "/early") {
            res.status = 102;
            res.body = "dropped";
            respond(std::move(res));
            return;
        }
        res.status = 201;
        res.add("X-First", "1");
        res.add("set-cookie", "a=1");
        res.add("Content-Length", "999");
        res.add("X-Mid", "  spaced  ");
        res.add("Set-Cookie", "b=2");  // a duplicate after another field stays where it was put
        res.add("connection", "keep-alive");
        res.add("Transfer-Encoding", "chunked");
        res.body = "hello";
        respond(std::move(res));
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    const std::string head =
        "HTTP/1.1 201 Created\r\nX-First: 1\r\nset-cookie: a=1\r\nX-Mid:   spaced  \r\n"
        "Set-Cookie: b=2\r\nContent-Length: 5\r\nConnection: close\r\n\r\n";
    auto get = f.drive([&] { return exchange(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(get == head + "hello");
    auto head_only = f.drive([&] { return exchange(port, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(head_only == head);  // the length of the body a GET would get, and no body
    auto early = f.drive([&] { return exchange(port, "GET /early HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false); });
    CHECK(early == "HTTP/1.1 102 Processing\r\nConnection: close\r\n\r\n");
}

TEST_CASE("server: HTTP/1.0 is told keep-alive only when it asked; HTTP/1.1 is told close only", "[unit]") {
    loop_fixture f;
    server s(&f.loop, [](request, responder respond) {
        response res;
        res.body = "ok";
        respond(std::move(res));
    });
    REQUIRE_FALSE(s.listen("127.0.0.1", 0));
    int port = s.port();
    auto ten = f.drive([&] { return exchange(port, "GET / HTTP/1.0\r\n\r\n", false); });
    CHECK(ten == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    auto ten_kept = f.drive([&] {
        int fd = connect_to(port);
        timeval limit{5, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
        std::string raw = "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
        std::string got;
        read_until(fd, "\r\n\r\nok", got);
        ::close(fd);
        return got;
    });
    CHECK(ten_kept == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok");
    auto eleven_kept = f.drive([&] {
        int fd = send_request(port);
        std::string got;
        read_until(fd, "\r\n\r\nok", got);
        ::close(fd);
        return got;
    });
    CHECK(eleven_kept == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
}
