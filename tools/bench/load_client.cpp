// Closed-loop HTTP/1.1 load client for the benchmarks: N keep-alive connections, each sending
// GET requests back to back, recording every request's latency. Loopback only.
//
//   bench_load_client client PORT PATH CONNECTIONS REQUESTS_PER_CONNECTION
//   bench_load_client burst PORT PATH N [M]
//   bench_load_client serve PORT_FILE   (a trivial keep-alive HTTP server: the baseline)
//
// client prints: requests, seconds, requests/s, p50/p90/p99/max latency in ms.
// burst opens N connections, and only when all are connected sends one request on each at
// once (a burst of first requests), then M more back to back on each connection. It prints
// one line of key=value fields for scripts (latencies in ms, nearest-rank percentiles):
//   burst n=N first_p50=… first_p95=… first_p99=… first_max=… all_n=… all_p50=… all_p95=…
//   all_p99=… all_max=… errors=… seconds=…
// "first" is the N first requests, "all" every request. A request that does not get a 200
// within 120 s counts as an error and ends its connection.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        std::perror("connect");
        std::exit(1);
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

// Reads one response (Content-Length framing); returns its status, -1 on EOF.
int read_response(int fd, std::string& buf) {
    for (;;) {
        auto head_end = buf.find("\r\n\r\n");
        if (head_end != std::string::npos) {
            std::size_t len = 0;
            auto cl = buf.find("Content-Length: ");
            if (cl != std::string::npos && cl < head_end) len = std::strtoul(buf.c_str() + cl + 16, nullptr, 10);
            if (buf.size() >= head_end + 4 + len) {
                int status = std::atoi(buf.c_str() + 9);
                buf.erase(0, head_end + 4 + len);
                return status;
            }
        }
        char tmp[65536];
        ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
        if (n <= 0) return -1;
        buf.append(tmp, static_cast<std::size_t>(n));
    }
}

int run_client(int port, const std::string& path, int connections, int per_connection) {
    std::vector<std::vector<double>> lat(static_cast<std::size_t>(connections));
    std::atomic<int> errors{0};
    auto start = clock_type::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < connections; ++c) {
        threads.emplace_back([&, c] {
            int fd = connect_to(port);
            std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
            std::string buf;
            auto& mine = lat[static_cast<std::size_t>(c)];
            mine.reserve(static_cast<std::size_t>(per_connection));
            for (int i = 0; i < per_connection; ++i) {
                auto t0 = clock_type::now();
                if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) < 0) { ++errors; break; }
                int status = read_response(fd, buf);
                if (status != 200) ++errors;
                if (status < 0) break;
                mine.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
            }
            ::close(fd);
        });
    }
    for (auto& t : threads) t.join();
    double secs = std::chrono::duration<double>(clock_type::now() - start).count();
    std::vector<double> all;
    for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    if (all.empty()) {
        std::printf("no responses\n");
        return 1;
    }
    auto pct = [&](double p) { return all[std::min(all.size() - 1, static_cast<std::size_t>(p * static_cast<double>(all.size())))]; };
    std::printf("requests %zu  errors %d  seconds %.2f  rps %.0f  p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms\n",
                all.size(), errors.load(), secs, static_cast<double>(all.size()) / secs, pct(0.50), pct(0.90),
                pct(0.99), all.back());
    return errors.load() == 0 ? 0 : 1;
}

// Nearest-rank percentile of sorted values: the smallest value with at least p of them at or
// below it, so a p95 of 16 values is the largest one rather than an interpolation.
double nearest_rank(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

int run_burst(int port, const std::string& path, int n, int more) {
    std::vector<double> first(static_cast<std::size_t>(n), -1);
    std::vector<std::vector<double>> rest(static_cast<std::size_t>(n));
    std::atomic<int> errors{0};
    // Every thread connects, then waits here, so the first requests leave together rather
    // than staggered by connection set-up.
    std::barrier release(n);
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    auto start = clock_type::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < n; ++c) {
        threads.emplace_back([&, c] {
            int fd = connect_to(port);
            timeval tv{120, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            std::string buf;
            release.arrive_and_wait();
            for (int i = 0; i <= more; ++i) {
                auto t0 = clock_type::now();
                int status = -1;
                if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) >= 0) status = read_response(fd, buf);
                if (status != 200) ++errors;
                if (status < 0) break;
                double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
                if (i == 0)
                    first[static_cast<std::size_t>(c)] = ms;
                else
                    rest[static_cast<std::size_t>(c)].push_back(ms);
            }
            ::close(fd);
        });
    }
    for (auto& t : threads) t.join();
    double secs = std::chrono::duration<double>(clock_type::now() - start).count();
    std::vector<double> firsts, all;
    for (double v : first)
        if (v >= 0) firsts.push_back(v);
    all = firsts;
    for (auto& v : rest) all.insert(all.end(), v.begin(), v.end());
    std::sort(firsts.begin(), firsts.end());
    std::sort(all.begin(), all.end());
    std::printf("burst n=%zu first_p50=%.1f first_p95=%.1f first_p99=%.1f first_max=%.1f all_n=%zu "
                "all_p50=%.1f all_p95=%.1f all_p99=%.1f all_max=%.1f errors=%d seconds=%.2f\n",
                firsts.size(), nearest_rank(firsts, 0.50), nearest_rank(firsts, 0.95),
                nearest_rank(firsts, 0.99), firsts.empty() ? 0.0 : firsts.back(), all.size(),
                nearest_rank(all, 0.50), nearest_rank(all, 0.95), nearest_rank(all, 0.99),
                all.empty() ? 0.0 : all.back(), errors.load(), secs);
    return errors.load() == 0 ? 0 : 1;
}

// Baseline: a minimal keep-alive responder, so the client's and the kernel's share of the
// latency can be subtracted from coldbrew's.
int run_server(const std::string& port_file) {
    int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(lfd, 64);
    socklen_t len = sizeof(a);
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    std::ofstream(port_file) << ntohs(a.sin_port) << "\n";
    const std::string body = R"({"message":"Hello, world!"})";
    const std::string res = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    for (;;) {
        int fd = ::accept(lfd, nullptr, nullptr);
        if (fd < 0) continue;
        std::thread([fd, res] {
            int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            std::string buf;
            char tmp[8192];
            for (;;) {
                ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
                if (n <= 0) break;
                buf.append(tmp, static_cast<std::size_t>(n));
                std::size_t end;
                while ((end = buf.find("\r\n\r\n")) != std::string::npos) {
                    buf.erase(0, end + 4);
                    ::send(fd, res.data(), res.size(), MSG_NOSIGNAL);
                }
            }
            ::close(fd);
        }).detach();
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "serve") return run_server(argv[2]);
    if (argc == 6 && std::string(argv[1]) == "client")
        return run_client(std::atoi(argv[2]), argv[3], std::atoi(argv[4]), std::atoi(argv[5]));
    if ((argc == 5 || argc == 6) && std::string(argv[1]) == "burst" && std::atoi(argv[4]) > 0)
        return run_burst(std::atoi(argv[2]), argv[3], std::atoi(argv[4]), argc == 6 ? std::atoi(argv[5]) : 0);
    std::fprintf(stderr,
                 "usage: %s client PORT PATH CONNECTIONS REQUESTS | burst PORT PATH N [M] | serve PORT_FILE\n",
                 argv[0]);
    return 2;
}
