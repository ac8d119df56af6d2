#include "emulator/telemetry/output_queue.hpp"

#include <csignal>
#include <fcntl.h>
#include <sys/socket.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tests/catch.hpp"

using namespace coldbrew::telemetry;

namespace {

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < s.size()) {
        auto nl = s.find('\n', at);
        if (nl == std::string::npos) nl = s.size();
        out.push_back(s.substr(at, nl - at));
        at = nl + 1;
    }
    return out;
}

// Everything readable from `fd` until its write end is closed.
std::string read_to_end(int fd) {
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

}  // namespace

TEST_CASE("output queue: lines pass in order while there is room", "[unit]") {
    output_queue q(100, "stdout");
    q.append("one\n");
    q.append("tw");  // a line in pieces, as stdio and spdlog write them
    q.append("o\nthree\n");
    CHECK(q.take() == "one\ntwo\nthree\n");
    CHECK(q.empty());
    CHECK(q.dropped_lines() == 0);
}

TEST_CASE("output queue: a full queue drops whole lines and says so where they were", "[unit]") {
    output_queue q(20, "stdout");
    q.append("0123456789\n");         // 11 bytes
    q.append("abcdefghij\n");         // 22 > 20: dropped
    q.append("[x] 0123456789");       // a line starts dropped…
    q.append("rest\n");               // …and is dropped to its end, though it would fit alone
    q.append("another line");         // 11 + 12 > 20
    q.append("!\n");
    CHECK(q.dropped_lines() == 3);
    CHECK(q.dropped_bytes() == 11 + 14 + 5 + 12 + 2);
    CHECK(q.take() == "0123456789\n");

    // The reader took what was queued: the next line passes, after the notice.
    q.append("after\n");
    auto lines = split_lines(q.take());
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "coldbrew: 3 lines of output (44 bytes) dropped here: the reader of stdout "
                      "fell behind");
    CHECK(lines[1] == "after");
    q.append("more\n");
    CHECK(q.take() == "more\n");  // one notice per run of dropped lines
}

TEST_CASE("output queue: a line that started queued is finished, even past the capacity", "[unit]") {
    output_queue q(10, "stderr");
    q.append("12345");
    q.append("67890abcdef\n");  // the rest of a queued line: never cut
    q.append("x\n");            // a new line in a full queue: dropped
    CHECK(q.take() == "1234567890abcdef\n");
    CHECK(q.dropped_lines() == 1);

    SECTION("one line longer than the capacity passes an empty queue") {
        q.append(std::string(50, 'y') + "\n");
        auto lines = split_lines(q.take());
        REQUIRE(lines.size() == 2);
        CHECK(lines[0].starts_with("coldbrew: 1 line of output (2 bytes) dropped here"));
        CHECK(lines[1] == std::string(50, 'y'));
    }
    SECTION("report_dropped: the notice at the end") {
        q.append("12345678\n");  // after the notice for "x"
        q.append("dropped\n");
        q.report_dropped();
        auto lines = split_lines(q.take());
        REQUIRE(lines.size() == 3);
        CHECK(lines[1] == "12345678");
        CHECK(lines[2] == "coldbrew: 1 line of output (8 bytes) dropped here: the reader of stderr "
                          "fell behind");
    }
}

TEST_CASE("output queue: what is in flight counts against the capacity", "[unit]") {
    output_queue q(20, "stdout");
    q.set_in_flight(15);  // taken for writing, not written yet
    q.append("0123456789\n");
    CHECK(q.dropped_lines() == 1);
    q.set_in_flight(0);
    q.append("0123456789\n");
    CHECK(q.dropped_lines() == 1);
    CHECK(split_lines(q.take()).size() == 2);  // the notice, then the line
}

TEST_CASE("queued output: a stalled reader never blocks the writer, and loses no line in part", "[unit]") {
    int fds[2];
    SECTION("a pipe") {
        REQUIRE(::pipe(fds) == 0);
        ::fcntl(fds[1], F_SETPIPE_SZ, 4096);  // small, so it fills early
    }
    SECTION("a socket") {
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
        int small = 4096;
        ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    }
    const std::string line(1000, 'z');
    {
        queued_output out(fds[1], "stdout", 16 * 1024);
        // 2,000 lines of 1 KB, pumped after each as the loop would, and nobody reads yet:
        // neither the writes nor the pumps wait.
        int pumps_left_waiting = 0;
        for (int i = 0; i < 2000; ++i) {
            std::fprintf(out.stream(), "%04d %s\n", i, line.c_str());
            if (!out.pump()) ++pumps_left_waiting;
        }
        CHECK(pumps_left_waiting > 1900);
        CHECK(out.dropped_lines() > 1900);
        // The descriptor itself stayed blocking: only coldbrew's own description is not.
        CHECK((::fcntl(fds[1], F_GETFL) & O_NONBLOCK) == 0);

        std::string got;
        std::thread reader([&] { got = read_to_end(fds[0]); });
        REQUIRE(out.finish(std::chrono::seconds(20)));
        // After finish: straight to the descriptor, in order after the queue.
        std::fprintf(out.stream(), "after finish\n");
        ::shutdown(fds[1], SHUT_WR);  // a no-op error for the pipe, whose end is closed below
        ::close(fds[1]);
        reader.join();

        auto lines = split_lines(got);
        REQUIRE(lines.size() >= 4);
        CHECK(lines.back() == "after finish");
        const std::string notice = lines[lines.size() - 2];
        std::uint64_t kept = 0;
        int last = -1;
        for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
            const auto& l = lines[i];
            // Every line whole, in order.
            REQUIRE(l.size() == 1005);
            const int n = std::stoi(l.substr(0, 4));
            CHECK(n > last);
            last = n;
            ++kept;
        }
        CHECK(kept + out.dropped_lines() == 2000);
        CHECK(notice == "coldbrew: " + std::to_string(out.dropped_lines()) + " lines of output (" +
                            std::to_string(out.dropped_lines() * 1006) +
                            " bytes) dropped here: the reader of stdout fell behind");
    }
    ::close(fds[0]);
}

TEST_CASE("queued output: a regular file is written whole, a turn's lines at once", "[unit]") {
    char path[] = "/tmp/coldbrew-output-XXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    {
        queued_output out(fd, "stdout", 40);  // smaller than what this turn writes…
        for (int i = 0; i < 10; ++i) std::fprintf(out.stream(), "line %d\n", i);
        CHECK(out.pump());
        CHECK(out.dropped_lines() == 5);  // …so lines 5-9 were dropped before the pump
        // Caught up: the notice is written now, not when the next line comes.
        ::lseek(fd, 0, SEEK_SET);
        auto first = split_lines(read_to_end(fd));
        REQUIRE(first.size() == 6);
        CHECK(first[5].starts_with("coldbrew: 5 lines of output"));
        for (int i = 10; i < 20; ++i) {
            std::fprintf(out.stream(), "line %d\n", i);
            CHECK(out.pump());
        }
        CHECK(out.finish(std::chrono::seconds(1)));
    }
    ::lseek(fd, 0, SEEK_SET);
    auto lines = split_lines(read_to_end(fd));
    ::close(fd);
    ::unlink(path);
    REQUIRE(lines.size() == 16);
    CHECK(lines[0] == "line 0");
    CHECK(lines[4] == "line 4");
    CHECK(lines[5] == "coldbrew: 5 lines of output (35 bytes) dropped here: the reader of stdout fell behind");
    CHECK(lines[6] == "line 10");
    CHECK(lines[15] == "line 19");
}

TEST_CASE("queued output: a reader that is gone ends the stream quietly", "[unit]") {
    std::signal(SIGPIPE, SIG_IGN);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::close(fds[0]);
    queued_output out(fds[1], "stdout", 1024);
    for (int i = 0; i < 100; ++i) {
        std::fprintf(out.stream(), "line %d\n", i);
        CHECK(out.pump());  // nothing waits: the rest is discarded
    }
    CHECK_FALSE(out.finish(std::chrono::seconds(20)));
    std::fprintf(out.stream(), "ignored\n");  // and nothing blocks or raises later
    CHECK(out.dropped_lines() == 0);          // not "fell behind": gone
    ::close(fds[1]);
}

TEST_CASE("queued output: a reader that never resumes costs the end of the run its deadline only",
          "[unit]") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::fcntl(fds[1], F_SETPIPE_SZ, 4096);
    {
        queued_output out(fds[1], "stderr", 64 * 1024);
        const std::string line(100, 'q');
        for (int i = 0; i < 1000; ++i) {
            std::fprintf(out.stream(), "%s\n", line.c_str());
            out.pump();
        }
        CHECK_FALSE(out.finish(std::chrono::milliseconds(50)));  // returns: the test ends
        std::fprintf(out.stream(), "abandoned\n");  // returns: the stream is abandoned
    }
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_CASE("queued stdio: one queue when stdout and stderr are one file", "[unit]") {
    // Descriptors 1 and 2 are swapped for pipes for the test's length, then restored before
    // anything is checked (the test runner writes to them).
    const int saved_out = ::dup(1), saved_err = ::dup(2);
    int one[2], two[2];
    REQUIRE(::pipe(one) == 0);
    REQUIRE(::pipe(two) == 0);
    std::size_t shared_outputs = 0, separate_outputs = 0;
    bool shared_same_stream = false, separate_same_stream = true;
    std::string shared_text;
    {
        ::dup2(one[1], 1);
        ::dup2(one[1], 2);  // `2>&1`
        queued_stdio io;
        shared_outputs = io.outputs().size();
        shared_same_stream = io.out() == io.err();
        std::fprintf(io.out(), "to stdout\n");
        std::fprintf(io.err(), "to stderr\n");
        io.finish(std::chrono::seconds(5));
    }
    {
        ::dup2(two[1], 2);
        queued_stdio io;
        separate_outputs = io.outputs().size();
        separate_same_stream = io.out() == io.err();
        io.finish(std::chrono::seconds(5));
    }
    ::dup2(saved_out, 1);
    ::dup2(saved_err, 2);
    ::close(saved_out);
    ::close(saved_err);
    ::close(one[1]);
    ::close(two[1]);
    shared_text = read_to_end(one[0]);
    ::close(one[0]);
    ::close(two[0]);

    CHECK(shared_outputs == 1);
    CHECK(shared_same_stream);
    CHECK(shared_text == "to stdout\nto stderr\n");
    CHECK(separate_outputs == 2);
    CHECK_FALSE(separate_same_stream);
}
