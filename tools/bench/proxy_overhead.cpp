// Benchmark: what a dependency proxy costs on loopback. One uncapped dependency (no latency,
// no faults, no bandwidth limit) on a libuv loop thread, in front of an upstream server with
// three modes chosen by the first byte a client sends:
//   'S' sink:   reads to EOF, answers the byte count (8 bytes)
//   'D' source: reads an 8-byte count N, sends N bytes, closes
//   'E' echo:   sends back every byte
//
//   bench_proxy_overhead [GIB] [ROUND_TRIPS]      (defaults 2 and 20000)
//
// Prints client → upstream and upstream → client throughput (MB/s, 10^6 bytes) through the
// proxy and directly, and the 1-byte ping-pong round trip p50/p99 both ways with the
// difference (the proxy's added latency). Targets: >= 1000 MB/s, added p50 < 0.1 ms.
//
// On a shared machine wall-clock figures measure the neighbours too, so each throughput run
// also prints the proxy loop thread's own CPU time and the rate that CPU time would sustain
// ("MB per CPU-second": the proxy's capacity on one core, whatever else runs).

#include <arpa/inet.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emulator/proxy/proxy.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

[[noreturn]] void die(const char* what) {
    std::perror(what);
    std::exit(1);
}

sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

int dial(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto a = loopback(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) die("connect");
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
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

bool recv_all(int fd, char* p, std::size_t n) {
    while (n > 0) {
        ssize_t r = ::recv(fd, p, n, 0);
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

// The upstream: blocking sockets, a thread per connection, all joined on destruction.
class upstream_server {
public:
    upstream_server() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        auto a = loopback(0);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) die("bind");
        ::listen(fd_, 64);
        socklen_t len = sizeof(a);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] {
            for (;;) {
                int c = ::accept(fd_, nullptr, nullptr);
                if (c < 0 || stopping_) {
                    if (c >= 0) ::close(c);
                    return;
                }
                int on = 1;
                ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
                std::lock_guard<std::mutex> lock(mutex_);
                conns_.push_back(c);
                workers_.emplace_back([c] { serve(c); });
            }
        });
    }
    ~upstream_server() {
        stopping_ = true;
        ::shutdown(fd_, SHUT_RDWR);
        acceptor_.join();
        for (int c : conns_) ::shutdown(c, SHUT_RDWR);
        for (auto& t : workers_) t.join();
        for (int c : conns_) ::close(c);
        ::close(fd_);
    }
    int port() const { return port_; }

private:
    static void serve(int fd) {
        std::vector<char> buf(1 << 20);
        char mode = 0;
        if (!recv_all(fd, &mode, 1)) return;
        if (mode == 'S') {
            std::uint64_t total = 0;
            for (ssize_t r; (r = ::recv(fd, buf.data(), buf.size(), 0)) > 0;)
                total += static_cast<std::uint64_t>(r);
            send_all(fd, reinterpret_cast<char*>(&total), 8);
        } else if (mode == 'D') {
            std::uint64_t n = 0;
            if (!recv_all(fd, reinterpret_cast<char*>(&n), 8)) return;
            while (n > 0) {
                std::size_t k = std::min<std::uint64_t>(n, buf.size());
                if (!send_all(fd, buf.data(), k)) return;
                n -= k;
            }
        } else if (mode == 'E') {
            for (ssize_t r; (r = ::recv(fd, buf.data(), buf.size(), 0)) > 0;)
                if (!send_all(fd, buf.data(), static_cast<std::size_t>(r))) return;
        }
        ::shutdown(fd, SHUT_WR);
    }

    int fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread acceptor_;
    std::mutex mutex_;
    std::vector<int> conns_;
    std::vector<std::thread> workers_;
};

// A libuv loop on its own thread; run() executes a function there.
class loop_thread {
public:
    loop_thread() {
        uv_loop_init(&loop_);
        uv_async_init(&loop_, &async_, [](uv_async_t* a) {
            auto* self = static_cast<loop_thread*>(a->data);
            std::deque<std::function<void()>> jobs;
            {
                std::lock_guard<std::mutex> lock(self->mutex_);
                jobs.swap(self->jobs_);
            }
            for (auto& j : jobs) j();
        });
        async_.data = this;
        thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
    }
    ~loop_thread() {
        run([this] { uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr); });
        thread_.join();
        uv_loop_close(&loop_);
    }
    uv_loop_t* loop() { return &loop_; }
    template <class F>
    auto run(F f) -> decltype(f()) {
        std::packaged_task<decltype(f())()> task(std::move(f));
        auto fut = task.get_future();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs_.emplace_back([&task] { task(); });
        }
        uv_async_send(&async_);
        return fut.get();
    }

private:
    uv_loop_t loop_{};
    uv_async_t async_{};
    std::thread thread_;
    std::mutex mutex_;
    std::deque<std::function<void()>> jobs_;
};

// MB/s of `bytes` client → upstream (sink) through `port`, in 1 MiB writes.
double upload(int port, std::uint64_t bytes) {
    std::vector<char> buf(1 << 20, 'x');
    int fd = dial(port);
    auto t0 = clock_type::now();
    send_all(fd, "S", 1);
    for (std::uint64_t left = bytes; left > 0;) {
        std::size_t k = std::min<std::uint64_t>(left, buf.size());
        if (!send_all(fd, buf.data(), k)) die("send");
        left -= k;
    }
    ::shutdown(fd, SHUT_WR);
    std::uint64_t got = 0;
    if (!recv_all(fd, reinterpret_cast<char*>(&got), 8)) die("recv");
    double s = seconds_since(t0);
    ::close(fd);
    if (got != bytes) {
        std::fprintf(stderr, "sink got %llu of %llu bytes\n", static_cast<unsigned long long>(got),
                     static_cast<unsigned long long>(bytes));
        std::exit(1);
    }
    return static_cast<double>(bytes) / s / 1e6;
}

// MB/s of `bytes` upstream (source) → client through `port`.
double download(int port, std::uint64_t bytes) {
    std::vector<char> buf(1 << 20);
    int fd = dial(port);
    auto t0 = clock_type::now();
    char req[9] = {'D'};
    std::memcpy(req + 1, &bytes, 8);
    send_all(fd, req, 9);
    std::uint64_t got = 0;
    for (ssize_t r; (r = ::recv(fd, buf.data(), buf.size(), 0)) > 0;) got += static_cast<std::uint64_t>(r);
    double s = seconds_since(t0);
    ::close(fd);
    if (got != bytes) {
        std::fprintf(stderr, "client got %llu of %llu bytes\n", static_cast<unsigned long long>(got),
                     static_cast<unsigned long long>(bytes));
        std::exit(1);
    }
    return static_cast<double>(bytes) / s / 1e6;
}

struct percentiles {
    double p50 = 0, p99 = 0;
};

// 1-byte round trips on one connection (after 1,000 unmeasured ones); ms.
percentiles ping_pong(int port, int round_trips) {
    int fd = dial(port);
    send_all(fd, "E", 1);
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(round_trips));
    char b = 'p';
    for (int i = -1000; i < round_trips; ++i) {
        auto t0 = clock_type::now();
        if (!send_all(fd, &b, 1) || !recv_all(fd, &b, 1)) die("ping-pong");
        if (i >= 0) ms.push_back(seconds_since(t0) * 1000.0);
    }
    ::close(fd);
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1))]; };
    return {at(0.50), at(0.99)};
}

}  // namespace

int main(int argc, char** argv) {
    const double gib = argc > 1 ? std::atof(argv[1]) : 2.0;
    const int round_trips = argc > 2 ? std::atoi(argv[2]) : 20000;
    const auto bytes = static_cast<std::uint64_t>(gib * 1024 * 1024 * 1024);

    upstream_server upstream;
    std::vector<coldbrew::config::dependency> deps(1);
    deps[0].name = "bench";
    deps[0].upstream_host = "127.0.0.1";
    deps[0].upstream_port = upstream.port();
    deps[0].environment_cap = false;

    coldbrew::system_clock_source clock;
    coldbrew::models::random_source rng(1);
    loop_thread lt;
    coldbrew::sched::uv_scheduler scheduler(lt.loop(), clock, 1.0);
    coldbrew::proxy::proxy_context ctx;
    ctx.loop = lt.loop();
    ctx.scheduler = &scheduler;
    ctx.rng = &rng;
    std::unique_ptr<coldbrew::proxy::proxy_set> set;
    int proxy_port = lt.run([&] {
        set = std::make_unique<coldbrew::proxy::proxy_set>(deps, ctx);
        std::string failed;
        if (auto ec = set->start(failed)) {
            std::fprintf(stderr, "proxy %s: %s\n", failed.c_str(), ec.message().c_str());
            std::exit(1);
        }
        return set->proxies()[0]->port();
    });

    std::printf("throughput, %.2f GiB per run, 1 MiB writes:\n", gib);
    upload(proxy_port, 64 << 20);  // warm-up
    auto proxy_cpu = [&] { return lt.run([] { return thread_cpu_seconds(); }); };
    auto report = [&](const char* label, double proxied, double direct, double cpu_s) {
        std::printf("  %s  proxy %6.0f MB/s  direct %6.0f MB/s  proxy CPU %.2f s = %6.0f MB "
                    "per CPU-second   (target >= 1000 MB/s)\n",
                    label, proxied, direct, cpu_s, static_cast<double>(bytes) / cpu_s / 1e6);
    };
    double up_direct = upload(upstream.port(), bytes);
    double cpu0 = proxy_cpu();
    double up_proxy = upload(proxy_port, bytes);
    report("client -> upstream", up_proxy, up_direct, proxy_cpu() - cpu0);
    double down_direct = download(upstream.port(), bytes);
    cpu0 = proxy_cpu();
    double down_proxy = download(proxy_port, bytes);
    report("upstream -> client", down_proxy, down_direct, proxy_cpu() - cpu0);

    std::printf("ping-pong, 1 byte, %d round trips:\n", round_trips);
    auto direct = ping_pong(upstream.port(), round_trips);
    auto proxied = ping_pong(proxy_port, round_trips);
    std::printf("  direct  p50 %.3f ms  p99 %.3f ms\n", direct.p50, direct.p99);
    std::printf("  proxy   p50 %.3f ms  p99 %.3f ms\n", proxied.p50, proxied.p99);
    std::printf("  added   p50 %.3f ms  p99 %.3f ms   (target p50 < 0.1)\n",
                proxied.p50 - direct.p50, proxied.p99 - direct.p99);

    auto counters = lt.run([&] {
        auto j = set->to_json();
        set.reset();
        return j;
    });
    std::printf("proxy counters: %s\n", counters.dump().c_str());
    return 0;
}
