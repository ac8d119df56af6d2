// coldbrew's own output and a reader that stops reading: `coldbrew up | less` left
// unscrolled, a paused terminal, a stalled log collector. Requests are still answered; the
// lines that could not be held are dropped whole and counted in their place.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

// The gateway's port from a --ready-file, once `up` wrote it (at most 20 s).
int gateway_port(const std::filesystem::path& ready) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (read_file(ready).empty() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto addresses = json::parse(read_file(ready));
    const std::string gateway = addresses["gateway"].get<std::string>();
    return std::stoi(gateway.substr(gateway.rfind(':') + 1));
}

const char* echo_route = R"(  Echo:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Api:
          Type: HttpApi
          Properties:
            Path: /echo
            Method: post
)";

}  // namespace

TEST_CASE("output: a reader that stops reading stdout does not stop the APIs", "[integration]") {
    temp_dir dir;
    // A whole vCPU: the fake's JSON work on 64 KB events is not slowed by a small share.
    write_fake_app(dir, "    MemorySize: 1769\n", echo_route);
    // coldbrew's stdout is a FIFO whose only reader, this test, reads nothing until the
    // requests are answered.
    const auto fifo = dir.path() / "stdout.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    const auto ready = dir.path() / "ready.json";
    coldbrew_process cb({"-c", "exec \"$0\" up \"$1\" --port 0 --invoke-port 0 --admin-port 0 "
                               "--ready-file \"$2\" > \"$3\"",
                         coldbrew_binary(), dir.path().string(), ready.string(), fifo.string()},
                        {}, "/bin/sh");
    const int port = gateway_port(ready);

    // 250 handler lines of 64 KB: 16 MB against a 64 KB pipe and coldbrew's 8 MB queue.
    const std::string payload = json{{"log", std::string(64 * 1024, 'x')}}.dump();
    int answered = 0;
    for (int i = 0; i < 250; ++i) {
        auto r = http_request(port, "POST", "/echo", payload, {{"Content-Type", "application/json"}},
                              std::chrono::seconds(10));
        if (r.status == 200) ++answered;
    }
    CHECK(answered == 250);

    // Now read: what was held, then the notice in place of what was not, then the shutdown.
    int flags = ::fcntl(reader, F_GETFL);
    ::fcntl(reader, F_SETFL, flags & ~O_NONBLOCK);
    std::string out;
    std::thread drain([&] {
        char buf[65536];
        for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    });
    cb.signal(SIGTERM);
    CHECK(cb.wait_exit() == 0);
    drain.join();
    ::close(reader);

    const std::regex notice(R"(^coldbrew: (\d+) lines of output \((\d+) bytes\) dropped here: the reader of stdout fell behind$)");
    int notices = 0, handler_lines = 0;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_match(line, m, notice)) {
            ++notices;
            CHECK(std::stoull(m[1].str()) > 0);
        } else if (line.starts_with("[Echo] x")) {
            CHECK(line.size() == 7 + 64 * 1024);  // whole, never cut or glued
            ++handler_lines;
        }
    }
    CHECK(notices >= 1);
    CHECK(handler_lines > 0);
    CHECK(handler_lines < 250);
    CHECK(out.find("coldbrew up: gateway listening on") != std::string::npos);
}

TEST_CASE("output: a node handler's long lines all come before its END", "[integration]") {
    // Node queues a write the pipe cannot take at once (64 KB lines fill it) instead of
    // blocking; the runtime sends the outcome only once such writes are out.
    temp_dir dir;
    dir.write("template.yaml",
              "AWSTemplateFormatVersion: '2010-09-09'\n"
              "Transform: AWS::Serverless-2016-10-31\n"
              "Resources:\n"
              "  Chatty:\n"
              "    Type: AWS::Serverless::Function\n"
              "    Properties:\n"
              "      Runtime: nodejs20.x\n"
              "      Handler: index.handler\n"
              "      CodeUri: fn\n"
              "      MemorySize: 1769\n"
              "      Events:\n"
              "        Get: {Type: HttpApi, Properties: {Path: /chatty, Method: get}}\n");
    dir.write("fn/index.js",
              "exports.handler = async () => {\n"
              "  for (let i = 0; i < 4; i++) console.log('x'.repeat(65536));\n"
              "  return {statusCode: 200, body: 'ok'};\n"
              "};\n");
    coldbrew_process cb({"up", dir.path().string(), "--port", "0", "--seed", "1"});
    const int port = cb.wait_for_port();
    for (int i = 0; i < 10; ++i) REQUIRE(http_request(port, "GET", "/chatty").status == 200);
    cb.signal(SIGTERM);
    REQUIRE(cb.wait_exit() == 0);

    // Per request id: its four lines, each whole, then its END.
    const std::regex end_line(R"(^\[Chatty\] END RequestId: (\S+)$)");
    std::map<std::string, int> lines_of;
    int ends = 0;
    std::size_t length = 0;
    for (const auto& l : cb.lines()) {
        std::smatch m;
        if (l.find("xxxxxxxx") != std::string::npos) {
            if (length == 0) length = l.size();
            CHECK(l.size() == length);  // never cut
            CHECK(l.ends_with(std::string(65536, 'x')));
            const auto tab = l.find('\t');
            REQUIRE(tab != std::string::npos);
            ++lines_of[l.substr(tab + 1, l.find('\t', tab + 1) - tab - 1)];
        } else if (std::regex_match(l, m, end_line)) {
            ++ends;
            CHECK(lines_of[m[1].str()] == 4);  // all of them before END
        }
    }
    CHECK(ends == 10);
}

TEST_CASE("output: started with its standard descriptors closed, coldbrew serves and stops cleanly",
          "[integration]") {
    // Closed 0-2 were taken by the loop's own descriptors and the pipes to handlers: libuv
    // aborted at exit, and every runtime died before exec.
    temp_dir dir;
    write_fake_app(dir, "", echo_route);
    const auto ready = dir.path() / "ready.json";
    coldbrew_process cb({"-c", "exec \"$0\" up \"$1\" --port 0 --invoke-port 0 --admin-port 0 "
                               "--ready-file \"$2\" <&- >&- 2>&-",
                         coldbrew_binary(), dir.path().string(), ready.string()},
                        {}, "/bin/sh");
    const int port = gateway_port(ready);
    auto r = http_request(port, "POST", "/echo", "{}", {{"Content-Type", "application/json"}});
    CHECK(r.status == 200);
    cb.signal(SIGTERM);
    CHECK(cb.wait_exit() == 0);
}
