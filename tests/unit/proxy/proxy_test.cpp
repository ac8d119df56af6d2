// The dependency proxy on a real libuv loop (its own thread) between blocking loopback
// sockets: a client in the test's thread and an upstream server in threads of its own. Every
// thread and socket a test starts ends with it; the loop must close with no handle left.
//
// Bandwidth and latency checked on the real clock need real time, so those tests are
// [integration]; the others finish well under a second and are [unit]. Timeouts run on a
// manual scheduler the test advances, so they wait for nothing.

#include "emulator/proxy/proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <random>
#include <string_view>
#include <thread>

#include "emulator/telemetry/decision_log.hpp"
#include "models/distribution/distribution.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using namespace coldbrew;
using namespace coldbrew::proxy;
namespace mf = coldbrew::models::faults;
using steady = std::chrono::steady_clock;

namespace {

double seconds_since(steady::time_point t0) {
    return std::chrono::duration<double>(steady::now() - t0).count();
}

// ---- the loop thread ----------------------------------------------------------------------

// Runs a libuv loop on its own thread; run() executes a function there and returns its
// result, so every uv call happens on the loop's thread.
class loop_thread {
public:
    loop_thread() {
        uv_loop_init(&loop_);
        uv_async_init(&loop_, &async_, [](uv_async_t* a) {
            static_cast<loop_thread*>(a->data)->drain();
        });
        async_.data = this;
        thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
    }
    ~loop_thread() { stop(); }

    uv_loop_t* loop() { return &loop_; }
    bool running() const { return thread_.joinable(); }

    template <class F>
    auto run(F f) -> decltype(f()) {
        using result = decltype(f());
        std::packaged_task<result()> task(std::move(f));
        auto fut = task.get_future();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs_.emplace_back([&task] { task(); });
        }
        uv_async_send(&async_);
        return fut.get();
    }

    // Closes the wake-up handle, waits for the loop to run out of handles and closes it.
    // Returns uv_loop_close's result: 0 when nothing was left open.
    int stop() {
        if (!thread_.joinable()) return close_rc_;
        run([this] { uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr); });
        thread_.join();
        close_rc_ = uv_loop_close(&loop_);
        return close_rc_;
    }

private:
    void drain() {
        std::deque<std::function<void()>> jobs;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs.swap(jobs_);
        }
        for (auto& j : jobs) j();
    }

    uv_loop_t loop_{};
    uv_async_t async_{};
    std::thread thread_;
    std::mutex mutex_;
    std::deque<std::function<void()>> jobs_;
    int close_rc_ = 0;
};

// ---- sockets ------------------------------------------------------------------------------

sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

void set_timeout(int fd, int ms) {
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

// A connected socket, or -1 with errno set.
int dial(int port, int timeout_ms = 5000) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto a = loopback(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        int e = errno;
        ::close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    set_timeout(fd, timeout_ms);
    return fd;
}

bool send_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}
bool send_all(int fd, const std::string& s) { return send_all(fd, s.data(), s.size()); }

// Exactly n bytes, or fewer when the peer closed or failed (errno then says how).
std::string recv_exact(int fd, std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
        ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
        if (r <= 0) {
            if (r == 0) errno = 0;
            break;
        }
        got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
}

// Everything until EOF. `error` is 0 after a clean EOF, else the errno (ECONNRESET, EAGAIN
// for the receive timeout).
// True when nothing (no bytes, no EOF, no reset) has arrived on fd yet.
bool quiet(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
}

std::string recv_until_end(int fd, int& error) {
    std::string out;
    char buf[64 * 1024];
    for (;;) {
        ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
        if (r > 0) {
            out.append(buf, static_cast<std::size_t>(r));
            continue;
        }
        error = r == 0 ? 0 : errno;
        return out;
    }
}

std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::string random_bytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen());
    return s;
}

// A port nothing listens on (bound, then released).
int closed_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto a = loopback(0);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// ---- the upstream -------------------------------------------------------------------------

// A blocking TCP server on 127.0.0.1, one thread per connection, all joined on destruction.
//   echo:   sends back what it reads; at EOF sends `trailer`, then closes
//   sink:   reads to EOF, then answers 16 bytes: the byte count and the FNV-1a of the bytes
//   source: sends `source_bytes` bytes (pattern from random_bytes(…, 7)) at once, then closes
//   stall:  reads nothing until the server is destroyed
// In echo mode, bytes containing "RST" make it reset the connection instead.
class upstream_server {
public:
    enum class mode { echo, sink, source, stall };

    explicit upstream_server(mode m, std::string trailer = {}, std::size_t source_bytes = 0)
        : mode_(m), trailer_(std::move(trailer)) {
        if (m == mode::source) source_ = random_bytes(source_bytes, 7);
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        auto a = loopback(0);
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
        ::listen(listen_fd_, 64);
        socklen_t len = sizeof(a);
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }

    ~upstream_server() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        stalled_.notify_all();
        ::shutdown(listen_fd_, SHUT_RDWR);
        acceptor_.join();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (int fd : fds_)
                if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
        }
        for (auto& t : workers_) t.join();
        for (int fd : fds_)
            if (fd >= 0) ::close(fd);
        ::close(listen_fd_);
    }

    int port() const { return port_; }
    int accepted() const { return accepted_; }
    int eofs() const { return eofs_; }  // connections whose client half-closed

private:
    void accept_loop() {
        for (;;) {
            int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0 || stopping_) {
                if (fd >= 0) ::close(fd);
                return;
            }
            int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            ++accepted_;
            std::lock_guard<std::mutex> lock(mutex_);
            fds_.push_back(fd);
            workers_.emplace_back([this, fd] { serve(fd); });
        }
    }

    // Closes with SO_LINGER 0: the peer gets a RST.
    void reset(int fd) {
        std::lock_guard<std::mutex> lock(mutex_);
        linger l{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        std::replace(fds_.begin(), fds_.end(), fd, -1);
        ::close(fd);
    }

    void serve(int fd) {
        char buf[64 * 1024];
        if (mode_ == mode::stall) {
            std::unique_lock<std::mutex> lock(mutex_);
            stalled_.wait(lock, [this] { return stopping_.load(); });
            return;
        }
        if (mode_ == mode::source) {
            send_all(fd, source_);
            ::shutdown(fd, SHUT_WR);
            while (::recv(fd, buf, sizeof(buf), 0) > 0) {
            }
            return;
        }
        std::uint64_t count = 0;
        std::uint64_t hash = 1469598103934665603ull;
        for (;;) {
            ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
            if (r < 0) return;
            if (r == 0) break;
            if (mode_ == mode::echo) {
                if (std::string_view(buf, static_cast<std::size_t>(r)).find("RST") !=
                    std::string_view::npos) {
                    reset(fd);
                    return;
                }
                if (!send_all(fd, buf, static_cast<std::size_t>(r))) return;
            } else {
                count += static_cast<std::uint64_t>(r);
                for (ssize_t i = 0; i < r; ++i)
                    hash = (hash ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
            }
        }
        ++eofs_;
        if (mode_ == mode::echo) {
            send_all(fd, trailer_);
        } else {
            char answer[16];
            std::memcpy(answer, &count, 8);
            std::memcpy(answer + 8, &hash, 8);
            send_all(fd, answer, 16);
        }
        ::shutdown(fd, SHUT_WR);
    }

    mode mode_;
    std::string trailer_;
    std::string source_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepted_{0};
    std::atomic<int> eofs_{0};
    std::thread acceptor_;
    std::mutex mutex_;
    std::condition_variable stalled_;
    std::vector<int> fds_;
    std::vector<std::thread> workers_;
};

// ---- the fixture --------------------------------------------------------------------------

// The fixture's modeled time: the live scheduler on the loop (at a scale), or a manual one.
struct manual_time {};

struct fixture {
    loop_thread lt;
    system_clock_source clock;
    std::unique_ptr<sched::scheduler> scheduler;
    testing::manual_scheduler* manual = nullptr;  // with manual_time
    models::random_source rng{42};
    mf::fault_registry registry;
    std::unique_ptr<mf::decider> decider;
    telemetry::decision_log log;
    config::dependency dep;
    proxy_context ctx;
    std::unique_ptr<dependency_proxy> proxy;

    explicit fixture(int upstream_port, double time_scale = 1.0) {
        init(upstream_port, std::make_unique<sched::uv_scheduler>(lt.loop(), clock, time_scale));
    }
    fixture(int upstream_port, manual_time) {
        auto m = std::make_unique<testing::manual_scheduler>();
        manual = m.get();
        init(upstream_port, std::move(m));
    }

    void init(int upstream_port, std::unique_ptr<sched::scheduler> s) {
        scheduler = std::move(s);
        mf::register_builtin_faults(registry);
        decider = std::make_unique<mf::decider>(registry, 1);
        dep.name = "db";
        dep.upstream_host = "127.0.0.1";
        dep.upstream_port = upstream_port;
        dep.env = {{"DB_ADDR", "{address}"}};
        ctx.loop = lt.loop();
        ctx.scheduler = scheduler.get();
        ctx.rng = &rng;
        ctx.faults = decider.get();
        ctx.decisions = &log;
    }

    ~fixture() {
        if (lt.running()) lt.run([this] { proxy.reset(); });
        lt.stop();
    }

    // Builds and starts the proxy; returns its shared port.
    int start() {
        auto ec = lt.run([this] {
            proxy = std::make_unique<dependency_proxy>(dep, ctx);
            return proxy->start();
        });
        REQUIRE_FALSE(ec);
        return lt.run([this] { return proxy->port(); });
    }

    void rule(const std::string& json) {
        auto r = mf::parse_rule(nlohmann::json::parse(json), registry, decider->next_default_name());
        lt.run([&] { decider->add_rules({std::move(r)}, 0); });
    }

    // Opens an environment's listener; returns its port.
    int attach(std::uint64_t env_key, const std::string& function,
               std::shared_ptr<environment_link> link = nullptr) {
        auto [ec, port] = lt.run([&] {
            int p = 0;
            auto e = proxy->attach(env_key, function, std::move(link), p);
            return std::make_pair(e, p);
        });
        REQUIRE_FALSE(ec);
        REQUIRE(port > 0);
        return port;
    }

    proxy_counters counters() {
        return lt.run([this] { return proxy->counters(); });
    }

    // Moves the manual scheduler's modeled time, on the loop's thread.
    void advance(double modeled_ms) {
        lt.run([&] { manual->advance(modeled_ms); });
    }

    // Polls the loop thread until `pred(counters)` holds or 5 s passed.
    bool wait_for(const std::function<bool(const proxy_counters&)>& pred) {
        auto t0 = steady::now();
        while (seconds_since(t0) < 5) {
            if (pred(counters())) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return false;
    }

    std::vector<std::string> decision_lines() {
        return lt.run([this] { return log.recent(0, 100).lines; });
    }
};

}  // namespace

// ---- pure parts -----------------------------------------------------------------------------

TEST_CASE("expand_env_template: {address}, {host} and {port}; other text kept", "[unit]") {
    CHECK(expand_env_template("{address}", "127.0.0.1", 4100) == "127.0.0.1:4100");
    CHECK(expand_env_template("redis://{host}:{port}/0", "127.0.0.1", 6380) ==
          "redis://127.0.0.1:6380/0");
    CHECK(expand_env_template("{other} {port {port}}", "h", 1) == "{other} {port 1}");
    CHECK(expand_env_template("", "h", 1).empty());
    CHECK(expand_env_template("{address}", "::1", 80) == "[::1]:80");
}

TEST_CASE("proxy_counters::to_json: every counter, faults by action", "[unit]") {
    proxy_counters c;
    c.connections = 3;
    c.faults["reset"] = 2;
    c.latency_ms = 1.23456;
    auto j = c.to_json();
    CHECK(j["connections"] == 3);
    CHECK(j["faults"]["reset"] == 2);
    CHECK(j["latency_ms"] == Approx(1.235));
    for (const char* k : {"active", "requests", "bytes_upstream", "bytes_downstream",
                          "upstream_failures", "connect_timeouts", "idle_timeouts", "shaped_ms"})
        CHECK(j.contains(k));
    CHECK(proxy_counters{}.to_json()["faults"].is_object());
}

// ---- data path ----------------------------------------------------------------------------

TEST_CASE("proxy: 1 MiB of random bytes pass intact both ways", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    int port = f.start();
    const std::string data = random_bytes(1 << 20, 1);

    int fd = dial(port);
    REQUIRE(fd >= 0);
    std::thread sender([&] {
        send_all(fd, data);
        ::shutdown(fd, SHUT_WR);
    });
    int error = -1;
    std::string back = recv_until_end(fd, error);
    sender.join();
    ::close(fd);
    CHECK(error == 0);
    REQUIRE(back.size() == data.size());
    CHECK(fnv1a(back) == fnv1a(data));
    CHECK(back == data);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    auto c = f.counters();
    CHECK(c.connections == 1);
    CHECK(c.bytes_upstream == data.size());
    CHECK(c.bytes_downstream == data.size());
    CHECK(c.upstream_failures == 0);
}

TEST_CASE("proxy: 1 MiB to a sink arrives whole and in order", "[unit]") {
    upstream_server up(upstream_server::mode::sink);
    fixture f(up.port());
    int port = f.start();
    const std::string data = random_bytes(1 << 20, 2);
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, data));
    ::shutdown(fd, SHUT_WR);
    std::string answer = recv_exact(fd, 16);
    ::close(fd);
    REQUIRE(answer.size() == 16);
    std::uint64_t count = 0, hash = 0;
    std::memcpy(&count, answer.data(), 8);
    std::memcpy(&hash, answer.data() + 8, 8);
    CHECK(count == data.size());
    CHECK(hash == fnv1a(data));
}

TEST_CASE("proxy: a half-closed client still gets the upstream's answer", "[unit]") {
    upstream_server up(upstream_server::mode::echo, "<after-eof>");
    fixture f(up.port());
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "hello"));
    ::shutdown(fd, SHUT_WR);
    int error = -1;
    std::string got = recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == 0);
    CHECK(got == "hello<after-eof>");  // the upstream saw the EOF, answered, then closed
    CHECK(up.eofs() == 1);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
}

TEST_CASE("proxy: an upstream named by host name is resolved", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.dep.upstream_host = "localhost";
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "ping"));
    CHECK(recv_exact(fd, 4) == "ping");
    ::close(fd);
    CHECK(f.counters().upstream_failures == 0);
}

TEST_CASE("proxy: an upstream's reset reaches the client as a reset", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "ping"));
    CHECK(recv_exact(fd, 4) == "ping");
    REQUIRE(send_all(fd, "RST"));
    int error = 0;
    recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == ECONNRESET);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
}

TEST_CASE("proxy: a client is not read while the upstream does not read", "[unit]") {
    upstream_server up(upstream_server::mode::stall);
    fixture f(up.port());
    int port = f.start();
    int fd = dial(port, 150);
    REQUIRE(fd >= 0);
    // Kernel buffers on both legs hold some megabytes; the proxy adds at most a few more.
    // Without backpressure it would take all 64 MB.
    const std::string block(1 << 20, 'x');
    std::size_t sent = 0;
    while (sent < (64u << 20)) {
        ssize_t w = ::send(fd, block.data(), block.size(), MSG_NOSIGNAL);
        if (w <= 0) break;
        sent += static_cast<std::size_t>(w);
    }
    ::close(fd);
    INFO("sent " << sent);
    CHECK(sent > (1u << 20));
    CHECK(sent < (40u << 20));
    CHECK(f.counters().bytes_upstream < (40u << 20));
}

TEST_CASE("proxy: an upstream that is down resets the client", "[unit]") {
    fixture f(closed_port());
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    // Nothing is sent: a send after the RST arrived would consume the error.
    int error = 0;
    recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == ECONNRESET);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    auto c = f.counters();
    CHECK(c.upstream_failures == 1);
    CHECK(c.bytes_upstream == 0);
}

TEST_CASE("proxy: an upstream that never accepts hits the connect timeout", "[unit]") {
    // A listener with a full accept queue: Linux drops further SYNs, so a connect hangs.
    int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto a = loopback(0);
    ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(lfd, 0);
    socklen_t len = sizeof(a);
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    std::vector<int> fillers;
    for (int i = 0; i < 3; ++i) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        ::fcntl(fd, F_SETFL, O_NONBLOCK);
        ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
        fillers.push_back(fd);
    }
    pollfd p{fillers[0], POLLOUT, 0};
    REQUIRE(::poll(&p, 1, 1000) == 1);  // the queue holds the first one

    fixture f(ntohs(a.sin_port), manual_time{});
    f.dep.connect_timeout_ms = 150;
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.connections == 1; }));
    f.advance(149);
    CHECK(quiet(fd));
    f.advance(1);
    int error = 0;
    recv_until_end(fd, error);
    ::close(fd);
    for (int x : fillers) ::close(x);
    ::close(lfd);
    CHECK(error == ECONNRESET);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    CHECK(f.counters().connect_timeouts == 1);
}

// ---- faults --------------------------------------------------------------------------------

TEST_CASE("proxy: refuse on connect resets the client; the upstream is never dialled", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.rule(R"({"name":"no-db","dependency":"db","on":"connect","first":1,"fault":{"kind":"refuse"}})");
    int port = f.start();

    int fd = dial(port);
    REQUIRE(fd >= 0);
    int error = 0;
    recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == ECONNRESET);

    // The rule fires once: the next connection goes through.
    fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "ping"));
    CHECK(recv_exact(fd, 4) == "ping");
    ::close(fd);

    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    CHECK(up.accepted() == 1);
    auto c = f.counters();
    CHECK(c.faults.at("refuse") == 1);
    CHECK(c.connections == 2);
    auto lines = f.decision_lines();
    REQUIRE(lines.size() == 1);
    auto j = nlohmann::json::parse(lines[0]);
    CHECK(j["front"] == "dependency");
    CHECK(j["route"] == "db connect");
    CHECK(j["action"] == "refuse");
}

TEST_CASE("proxy: reset on the 2nd request turn", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.rule(R"({"dependency":"db","on":"request","nth":2,"fault":{"kind":"reset"}})");
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "one"));
    CHECK(recv_exact(fd, 3) == "one");
    send_all(fd, "two");
    int error = 0;
    std::string rest = recv_until_end(fd, error);
    ::close(fd);
    CHECK(rest.empty());
    CHECK(error == ECONNRESET);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    auto c = f.counters();
    CHECK(c.requests == 2);
    CHECK(c.faults.at("reset") == 1);
    CHECK(c.bytes_upstream == 3);  // "two" never reached the upstream
}

TEST_CASE("proxy: hang on a request drops the bytes, then closes after close_after", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port(), manual_time{});
    f.rule(R"({"dependency":"db","on":"request","nth":2,"fault":{"kind":"hang","close_after":"300ms"}})");
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "one"));
    CHECK(recv_exact(fd, 3) == "one");
    REQUIRE(send_all(fd, "two"));
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.faults.count("hang") == 1; }));
    f.advance(299);
    CHECK(quiet(fd));
    f.advance(1);
    int error = -1;
    std::string rest = recv_until_end(fd, error);
    ::close(fd);
    CHECK(rest.empty());
    CHECK(error == 0);  // closed with a FIN
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    auto c = f.counters();
    CHECK(c.faults.at("hang") == 1);
    CHECK(c.bytes_upstream == 3);
}

TEST_CASE("proxy: hang on connect holds until the client leaves", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.rule(R"({"dependency":"db","on":"connect","fault":{"kind":"hang"}})");
    int port = f.start();
    int fd = dial(port, 200);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "anyone?"));
    char b;
    CHECK(::recv(fd, &b, 1, 0) < 0);
    CHECK((errno == EAGAIN || errno == EWOULDBLOCK));  // nothing came back
    CHECK(f.counters().active == 1);
    ::close(fd);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    CHECK(up.accepted() == 0);
    CHECK(f.counters().faults.at("hang") == 1);
}

TEST_CASE("proxy: slow_response on connect paces the upstream's bytes", "[integration]") {
    upstream_server up(upstream_server::mode::source, {}, 30'000);
    fixture f(up.port());
    f.rule(R"({"dependency":"db","on":"connect","fault":{"kind":"slow_response","bytes_per_s":100000}})");
    int port = f.start();
    auto t0 = steady::now();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    int error = -1;
    std::string got = recv_until_end(fd, error);
    double took = seconds_since(t0);
    ::close(fd);
    CHECK(error == 0);
    CHECK(got == random_bytes(30'000, 7));
    // 30 kB at 100 kB/s with a 5 kB bucket: ~0.25 s.
    CHECK(took > 0.2);
    CHECK(took < 0.9);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    CHECK(f.counters().shaped_ms > 100);
}

// ---- request turns and latency -------------------------------------------------------------

TEST_CASE("proxy: request turns on a ping-pong protocol, each with its latency", "[integration]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.dep.connect_latency = "fixed(10ms)";
    f.dep.request_latency = "uniform(10ms, 30ms)";
    int port = f.start();
    auto t0 = steady::now();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    for (int i = 0; i < 5; ++i) {
        REQUIRE(send_all(fd, "ping"));
        REQUIRE(recv_exact(fd, 4) == "ping");
    }
    // Two writes before any answer: one turn (the first write's latency holds both).
    REQUIRE(send_all(fd, "a"));
    REQUIRE(send_all(fd, "b"));
    CHECK(recv_exact(fd, 2) == "ab");
    double took = seconds_since(t0);
    ::close(fd);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    auto c = f.counters();
    CHECK(c.requests == 6);
    // The draws are (stream "dependency-latency", key "db|shared|0", index = turn).
    auto dist = models::parse_distribution("uniform(10ms, 30ms)");
    double expected = 10;
    for (std::uint64_t turn = 1; turn <= 6; ++turn)
        expected += dist.sample(f.rng, "dependency-latency", "db|shared|0", turn);
    CHECK(c.latency_ms == Approx(expected));
    CHECK(took >= expected / 1000.0 - 0.002);
}

TEST_CASE("proxy: delay and slow_response on a request turn last for that turn", "[integration]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.rule(R"x({"dependency":"db","on":"request","nth":1,"fault":{"kind":"delay","duration":"fixed(80ms)"}})x");
    // A rule's count is of the requests that reached it: the first rule took request 1, so
    // the 2nd request is this rule's first.
    f.rule(R"({"dependency":"db","on":"request","first":1,"fault":{"kind":"slow_response","bytes_per_s":100000}})");
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    const std::string big = random_bytes(20'000, 5);
    auto turn = [&](const std::string& msg) {
        auto t0 = steady::now();
        REQUIRE(send_all(fd, msg));
        CHECK(recv_exact(fd, msg.size()) == msg);
        return seconds_since(t0);
    };
    double delayed = turn("first");
    double slow = turn(big);   // 20 kB at 100 kB/s with a 5 kB bucket: ~0.15 s
    double plain = turn(big);  // the next turn is not slowed
    ::close(fd);
    CHECK(delayed >= 0.079);
    CHECK(slow > 0.12);
    CHECK(plain < 0.1);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    auto c = f.counters();
    CHECK(c.faults.at("delay") == 1);
    CHECK(c.faults.at("slow_response") == 1);
    CHECK(c.latency_ms == Approx(80));
    CHECK(f.lt.run([&] { return f.decider->counters().active; }) == 0);  // all finished
    CHECK(f.decision_lines().size() == 2);
}

TEST_CASE("proxy: time_scale multiplies latency", "[integration]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port(), 0.1);
    f.dep.request_latency = "fixed(1s)";
    int port = f.start();
    auto t0 = steady::now();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "x"));
    CHECK(recv_exact(fd, 1) == "x");
    double took = seconds_since(t0);
    ::close(fd);
    CHECK(took >= 0.099);
    CHECK(took < 0.6);
    CHECK(f.counters().latency_ms == Approx(1000));  // modeled
}

TEST_CASE("proxy: an idle connection is closed after idle_timeout", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port(), manual_time{});
    f.dep.idle_timeout_ms = 100;
    int port = f.start();
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "x"));
    CHECK(recv_exact(fd, 1) == "x");
    // Traffic 60 ms in restarts the wait: the connection is closed 100 ms after it.
    f.advance(60);
    REQUIRE(send_all(fd, "y"));
    CHECK(recv_exact(fd, 1) == "y");
    f.advance(99);
    CHECK(quiet(fd));
    f.advance(1);
    int error = -1;
    recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == 0);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    CHECK(f.counters().idle_timeouts == 1);
}

// ---- environments --------------------------------------------------------------------------

TEST_CASE("proxy: detach resets the environment's connections and closes its port", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.start();
    int env_port = f.attach(7, "Worker");
    int fd = dial(env_port);
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "x"));
    CHECK(recv_exact(fd, 1) == "x");
    f.lt.run([&] { f.proxy->detach(7); });
    int error = 0;
    recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == ECONNRESET);
    CHECK(dial(env_port) == -1);
    CHECK(errno == ECONNREFUSED);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
}

TEST_CASE("proxy: faults see the environment's function", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.rule(R"({"dependency":"db","function":"Worker","on":"connect","fault":{"kind":"reset"}})");
    int shared = f.start();
    int env_port = f.attach(1, "Worker");
    int fd = dial(shared);  // no function: passes
    REQUIRE(send_all(fd, "x"));
    CHECK(recv_exact(fd, 1) == "x");
    ::close(fd);
    fd = dial(env_port);
    int error = 0;
    recv_until_end(fd, error);
    ::close(fd);
    CHECK(error == ECONNRESET);
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
    CHECK(f.counters().faults.at("reset") == 1);
}

TEST_CASE("proxy_set: variables for the functions a dependency applies to", "[unit]") {
    loop_thread lt;
    std::vector<config::dependency> deps(2);
    deps[0].name = "cache";
    deps[0].upstream_host = "127.0.0.1";
    deps[0].upstream_port = 1;
    deps[0].env = {{"CACHE_ADDR", "{address}"}, {"CACHE_URL", "redis://{host}:{port}"}};
    deps[1].name = "store";
    deps[1].upstream_host = "127.0.0.1";
    deps[1].upstream_port = 2;
    deps[1].env = {{"STORE_PORT", "{port}"}};
    deps[1].functions = {"Worker"};
    system_clock_source clock;
    sched::uv_scheduler scheduler(lt.loop(), clock, 1.0);
    proxy_context ctx;
    ctx.loop = lt.loop();
    ctx.scheduler = &scheduler;

    auto [api_vars, worker_vars, json] = lt.run([&] {
        proxy_set set(deps, ctx);
        std::string failed;
        if (set.start(failed)) return std::make_tuple(decltype(set.attach(1, "", nullptr)){},
                                                      decltype(set.attach(1, "", nullptr)){},
                                                      nlohmann::json());
        auto a = set.attach(1, "Api", nullptr);
        auto w = set.attach(2, "Worker", nullptr);
        auto j = set.to_json();
        set.detach(1);
        set.detach(2);
        return std::make_tuple(a, w, j);
    });
    REQUIRE(api_vars.size() == 2);
    CHECK(api_vars[0].first == "CACHE_ADDR");
    CHECK(api_vars[0].second.rfind("127.0.0.1:", 0) == 0);
    auto port = api_vars[0].second.substr(10);
    CHECK(api_vars[1].second == "redis://127.0.0.1:" + port);
    REQUIRE(worker_vars.size() == 3);
    CHECK(worker_vars[2].first == "STORE_PORT");
    CHECK(worker_vars[0].second != api_vars[0].second);  // a listener per environment
    CHECK(json["cache"]["upstream"] == "127.0.0.1:1");
    CHECK(json["store"]["port"].get<int>() > 0);
    CHECK(json["store"]["connections"] == 0);
    CHECK(lt.stop() == 0);
}

TEST_CASE("proxy_set: a listener that cannot open names its dependency", "[unit]") {
    loop_thread lt;
    int taken = ::socket(AF_INET, SOCK_STREAM, 0);
    auto a = loopback(0);
    ::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(taken, 1);
    socklen_t len = sizeof(a);
    ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
    std::vector<config::dependency> deps(2);
    deps[0].name = "fine";
    deps[1].name = "clash";
    deps[1].listen_port = ntohs(a.sin_port);
    for (auto& d : deps) {
        d.upstream_host = "127.0.0.1";
        d.upstream_port = 1;
    }
    system_clock_source clock;
    sched::uv_scheduler scheduler(lt.loop(), clock, 1.0);
    proxy_context ctx;
    ctx.loop = lt.loop();
    ctx.scheduler = &scheduler;
    auto [ec, failed, first_port] = lt.run([&] {
        proxy_set set(deps, ctx);
        std::string name;
        auto e = set.start(name);
        return std::make_tuple(e, name, set.proxies()[0]->port());
    });
    ::close(taken);
    CHECK(ec);
    CHECK(failed == "clash");
    CHECK(lt.stop() == 0);
    (void)first_port;
}

TEST_CASE("proxy: destroying it with connections open leaves nothing behind", "[unit]") {
    upstream_server up(upstream_server::mode::echo);
    fixture f(up.port());
    f.dep.request_latency = "fixed(500ms)";
    int port = f.start();
    int a = dial(port);
    int b = dial(port);
    REQUIRE(send_all(a, "held by latency"));
    REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 2; }));
    f.lt.run([&] { f.proxy.reset(); });
    int error = 0;
    recv_until_end(a, error);
    CHECK(error == ECONNRESET);
    ::close(a);
    ::close(b);
    CHECK(f.lt.stop() == 0);  // every handle closed, every connection freed
}

// ---- bandwidth (real time) -----------------------------------------------------------------

TEST_CASE("proxy: a per-connection cap of 2 MB/s moves 1 MB in about 0.5 s", "[integration]") {
    const std::size_t size = 1'000'000;
    SECTION("client to upstream") {
        upstream_server up(upstream_server::mode::sink);
        fixture f(up.port());
        f.dep.per_connection_bytes_per_s = 2e6;
        int port = f.start();
        const std::string data = random_bytes(size, 3);
        auto t0 = steady::now();
        int fd = dial(port);
        REQUIRE(send_all(fd, data));
        ::shutdown(fd, SHUT_WR);
        std::string answer = recv_exact(fd, 16);
        double took = seconds_since(t0);
        ::close(fd);
        REQUIRE(answer.size() == 16);
        std::uint64_t count = 0;
        std::memcpy(&count, answer.data(), 8);
        CHECK(count == size);
        CHECK(took > 0.35);
        CHECK(took < 0.9);
        REQUIRE(f.wait_for([](const proxy_counters& c) { return c.active == 0; }));
        CHECK(f.counters().shaped_ms > 200);
    }
    SECTION("upstream to client") {
        upstream_server up(upstream_server::mode::source, {}, size);
        fixture f(up.port());
        f.dep.per_connection_bytes_per_s = 2e6;
        int port = f.start();
        auto t0 = steady::now();
        int fd = dial(port);
        int error = -1;
        std::string got = recv_until_end(fd, error);
        double took = seconds_since(t0);
        ::close(fd);
        CHECK(got.size() == size);
        CHECK(took > 0.35);
        CHECK(took < 0.9);
    }
}

TEST_CASE("proxy: time_scale divides the rate", "[integration]") {
    upstream_server up(upstream_server::mode::source, {}, 1'000'000);
    fixture f(up.port(), 2.0);
    f.dep.per_connection_bytes_per_s = 4e6;  // 2 MB/s of real time at time_scale 2
    int port = f.start();
    auto t0 = steady::now();
    int fd = dial(port);
    int error = -1;
    std::string got = recv_until_end(fd, error);
    double took = seconds_since(t0);
    ::close(fd);
    CHECK(got.size() == 1'000'000);
    CHECK(took > 0.35);
    CHECK(took < 0.9);
}

TEST_CASE("proxy: an environment's link is shared by its connections", "[integration]") {
    const std::size_t size = 1'000'000;
    upstream_server up(upstream_server::mode::sink);
    fixture f(up.port());
    f.dep.per_connection_bytes_per_s = 100e6;  // far above the link: only the link binds
    f.start();
    const std::string data = random_bytes(size, 4);

    // Sends `size` bytes on each of `n` connections to the environment's port at once;
    // returns the slowest connection's seconds.
    auto run = [&](std::uint64_t env_key, int n) {
        int port = f.attach(env_key, "Worker",
                            std::make_shared<environment_link>(
                                4e6, 64 * 1024, modeled_now_us(*f.scheduler)));
        std::vector<double> took(static_cast<std::size_t>(n));
        std::vector<std::uint64_t> counts(static_cast<std::size_t>(n));
        std::vector<std::thread> threads;
        for (int i = 0; i < n; ++i)
            threads.emplace_back([&, i] {
                auto t0 = steady::now();
                int fd = dial(port);
                send_all(fd, data);
                ::shutdown(fd, SHUT_WR);
                std::string answer = recv_exact(fd, 16);
                took[static_cast<std::size_t>(i)] = seconds_since(t0);
                if (answer.size() == 16)
                    std::memcpy(&counts[static_cast<std::size_t>(i)], answer.data(), 8);
                ::close(fd);
            });
        for (auto& t : threads) t.join();
        for (auto c : counts) CHECK(c == size);
        return *std::max_element(took.begin(), took.end());
    };
    double one = run(1, 1);
    double two = run(2, 2);
    // 1 MB at 4 MB/s ≈ 0.25 s alone; two at once share the link: ≈ 0.5 s each.
    CHECK(one > 0.15);
    CHECK(one < 0.5);
    CHECK(two / one > 1.5);
    CHECK(two / one < 2.8);
}
