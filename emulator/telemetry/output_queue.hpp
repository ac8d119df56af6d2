#pragma once
// Terminal output that never stops the loop.
//
// `up` writes every platform line, handler line and access-log line to stdout and stderr from
// the loop's thread. With blocking writes, a reader that stops reading (a paused terminal,
// `coldbrew up | less` left unscrolled, a stalled CI log collector) froze every API once the
// pipe was full: no request was answered until the reader drained it. Instead each stream's
// writes go into a bounded queue, and the loop writes the queue out once per turn, as far as
// the descriptor takes it without waiting:
//   - a pipe or a terminal through a descriptor of its own, reopened non-blocking (so the
//     shell's and other processes' descriptors keep their flags);
//   - a socket with MSG_DONTWAIT;
//   - a regular file (or anything that cannot be reopened) with plain writes, which do not
//     wait on a reader.
//
// When a queue is full, whole lines are dropped and counted: a line that began queued is
// queued to its end and a line that began dropped is dropped to its end, so no line is ever
// cut or glued to another. Where lines were dropped, the reader gets one line in their place
// once it catches up (or when the run ends):
//   "coldbrew: 1234 lines of output (5678901 bytes) dropped here: the reader of stdout fell behind"
// A reader that is gone (EPIPE, e.g. `coldbrew up | head`) gets nothing more, and nothing is
// counted as dropped.
//
// output_queue is the queue alone (no descriptors): unit-tested. queued_output is the stream:
// a stdio FILE over the queue, written out by pump().

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::telemetry {

// Bytes a stream may hold for a reader that lags, before lines are dropped: 8 MiB, about 30,000
// START/END/REPORT lines. Our choice.
inline constexpr std::size_t default_output_capacity = std::size_t{8} << 20;
// How long the end of a run waits for a lagging reader to take what is queued: 5 s, our choice.
inline constexpr std::chrono::milliseconds default_drain_deadline{5000};

class output_queue {
public:
    // `stream_name` ("stdout") names the stream in the notice.
    output_queue(std::size_t capacity_bytes, std::string stream_name);

    // Queues one write: any piece of a line, or many lines. A line is dropped when its first
    // piece would take what is held (queued and in flight) past `capacity_bytes`; a line
    // longer than the capacity still passes when nothing is held. So at most the capacity
    // plus one line is held.
    void append(std::string_view bytes);
    // Bytes taken from the queue and not yet written: they count against the capacity.
    void set_in_flight(std::size_t bytes) { in_flight_ = bytes; }
    // Queues the notice for lines dropped since the last one, if any: when the reader has
    // caught up with nothing else to follow, and at the end of the stream.
    void report_dropped();
    // What is queued, in order, and empties the queue.
    std::string take();

    bool empty() const { return buf_.empty(); }
    std::size_t size() const { return buf_.size(); }
    std::uint64_t dropped_lines() const { return dropped_lines_; }  // since the start
    std::uint64_t dropped_bytes() const { return dropped_bytes_; }

private:
    void queue_notice();

    std::size_t capacity_;
    std::string name_;
    std::string buf_;
    std::size_t in_flight_ = 0;
    bool in_kept_line_ = false;     // the last byte queued is inside a line
    bool in_dropped_line_ = false;  // the last byte dropped is inside a line
    std::uint64_t dropped_lines_ = 0, dropped_bytes_ = 0;
    std::uint64_t unreported_lines_ = 0, unreported_bytes_ = 0;  // since the last notice
};

// A stdio stream over descriptor `fd` whose writes never block: they go into an output_queue
// that pump() writes out. The FILE stays valid for the rest of the process (spdlog's sinks keep
// it): after finish() it writes straight to `fd`, as a plain stream would. Writes may come from
// any thread; pump() and finish() from one.
class queued_output {
public:
    queued_output(int fd, std::string stream_name, std::size_t capacity_bytes = default_output_capacity);
    ~queued_output();  // finish(default_drain_deadline) unless finished
    queued_output(const queued_output&) = delete;
    queued_output& operator=(const queued_output&) = delete;

    std::FILE* stream() const { return file_; }
    // Writes what is queued as far as the descriptor takes it now, never waiting (a regular
    // file is written whole). True when nothing is left waiting. The loop calls it once per
    // turn, and on a timer while the reader is behind.
    bool pump();
    // The descriptor to watch for room while pump() is behind: coldbrew's own non-blocking
    // description of a pipe or terminal; -1 for a socket (its flags are shared: retry on a
    // timer) or a file (pump() never falls behind).
    int writable_fd() const;
    // Ends the queue: writes what it holds (with a last notice) within `deadline`, then
    // writes go straight to `fd`. When the reader has not taken it all by then, the rest is
    // abandoned and so is later output (false): a run that is ending must not hang on a
    // stalled terminal.
    bool finish(std::chrono::milliseconds deadline);

    std::uint64_t dropped_lines() const;

    struct shared;

private:
    std::shared_ptr<shared> s_;
    std::FILE* file_ = nullptr;
    bool finished_ = false;
};

// stdout and stderr (descriptors 1 and 2) as queued_outputs. When both are the same file (a
// terminal, `2>&1 | less`) they share one queue, so neither cuts into a line of the other;
// its notice names "stdout and stderr". finish() gives both one deadline.
class queued_stdio {
public:
    explicit queued_stdio(std::size_t capacity_bytes = default_output_capacity);
    ~queued_stdio();  // finish(default_drain_deadline) unless finished
    queued_stdio(const queued_stdio&) = delete;
    queued_stdio& operator=(const queued_stdio&) = delete;

    std::FILE* out() const;
    std::FILE* err() const;
    std::vector<queued_output*> outputs();  // one or two: what the loop pumps
    bool finish(std::chrono::milliseconds deadline);

private:
    std::unique_ptr<queued_output> out_, err_;  // err_ null when shared
    bool finished_ = false;
};

}  // namespace coldbrew::telemetry
