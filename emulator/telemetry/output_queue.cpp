#include "emulator/telemetry/output_queue.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace coldbrew::telemetry {

output_queue::output_queue(std::size_t capacity_bytes, std::string stream_name)
    : capacity_(capacity_bytes), name_(std::move(stream_name)) {}

void output_queue::queue_notice() {
    buf_ += "coldbrew: " + std::to_string(unreported_lines_) +
            (unreported_lines_ == 1 ? " line" : " lines") + " of output (" +
            std::to_string(unreported_bytes_) + " bytes) dropped here: the reader of " + name_ +
            " fell behind\n";
    unreported_lines_ = unreported_bytes_ = 0;
}

void output_queue::append(std::string_view bytes) {
    // One piece of one line at a time: the keep-or-drop decision is taken where a line starts.
    while (!bytes.empty()) {
        const auto nl = bytes.find('\n');
        const std::string_view piece = bytes.substr(0, nl == std::string_view::npos ? bytes.size() : nl + 1);
        bytes.remove_prefix(piece.size());
        const bool ends_line = piece.back() == '\n';
        if (in_dropped_line_) {
            dropped_bytes_ += piece.size();
            unreported_bytes_ += piece.size();
            in_dropped_line_ = !ends_line;
            continue;
        }
        const std::size_t held = buf_.size() + in_flight_;
        if (!in_kept_line_ && held > 0 && held + piece.size() > capacity_) {
            ++dropped_lines_;
            ++unreported_lines_;
            dropped_bytes_ += piece.size();
            unreported_bytes_ += piece.size();
            in_dropped_line_ = !ends_line;
            continue;
        }
        if (!in_kept_line_ && unreported_lines_ > 0) queue_notice();
        buf_ += piece;
        in_kept_line_ = !ends_line;
    }
}

void output_queue::report_dropped() {
    // Lines are dropped only where one starts, and the next line kept reports them first: so
    // unreported lines mean no line is open.
    if (unreported_lines_ > 0) queue_notice();
}

std::string output_queue::take() {
    std::string out;
    out.swap(buf_);
    return out;
}

namespace {

// Writes all of `data` to `fd`, waiting while it is full; false when the reader is gone or
// the descriptor fails. A descriptor someone else made non-blocking is waited on with poll.
bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n > 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, -1);
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace

struct queued_output::shared {
    enum class mode { queued, direct, discard };
    enum class way { nonblocking, socket, plain };  // how pump() writes

    shared(int fd_, std::string name, std::size_t capacity) : fd(fd_), queue(capacity, std::move(name)) {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
            how = way::socket;
        } else if (::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || ::isatty(fd))) {
            // A description of our own: O_NONBLOCK on the inherited one would reach the shell
            // and every other process sharing the terminal or pipe.
            const std::string self = "/proc/self/fd/" + std::to_string(fd);
            own_fd = ::open(self.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            if (own_fd >= 0) how = way::nonblocking;
        }
    }
    ~shared() {
        if (own_fd >= 0) ::close(own_fd);
    }

    void write(std::string_view bytes) {
        std::unique_lock lock(mu);
        if (m == mode::queued) {
            queue.append(bytes);
        } else if (m == mode::direct) {
            lock.unlock();
            write_all(fd, bytes);
        }
    }

    // Writes pending + the queue as far as the descriptor takes them; true when all written.
    bool pump() {
        if (finished) return true;
        for (;;) {
            if (written == pending.size()) {
                std::lock_guard lock(mu);
                pending = queue.take();
                if (pending.empty()) {
                    // Caught up: say now where lines were dropped, not when more comes.
                    queue.report_dropped();
                    pending = queue.take();
                }
                written = 0;
                queue.set_in_flight(pending.size());
                if (pending.empty() || m == mode::discard) return true;
            }
            const char* at = pending.data() + written;
            const std::size_t left = pending.size() - written;
            ssize_t n = -1;
            switch (how) {
            case way::socket: n = ::send(fd, at, left, MSG_DONTWAIT | MSG_NOSIGNAL); break;
            case way::nonblocking: n = ::write(own_fd, at, left); break;
            case way::plain: n = write_all(fd, {at, left}) ? static_cast<ssize_t>(left) : -1; break;
            }
            if (n > 0) {
                written += static_cast<std::size_t>(n);
                std::lock_guard lock(mu);
                queue.set_in_flight(pending.size() - written);
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                return false;
            } else {
                // The reader is gone: what it would have got is not "dropped".
                std::lock_guard lock(mu);
                m = mode::discard;
                queue.take();
                queue.set_in_flight(0);
                pending.clear();
                written = 0;
                return true;
            }
        }
    }

    // Waits up to `ms` for the descriptor to take more.
    void wait_writable(int ms) {
        pollfd p{how == way::nonblocking ? own_fd : fd, POLLOUT, 0};
        ::poll(&p, 1, ms);
    }

    const int fd;
    int own_fd = -1;
    way how = way::plain;
    std::mutex mu;  // guards m and queue
    output_queue queue;
    mode m = mode::queued;
    std::string pending;  // taken from the queue, not yet written (pump's alone)
    std::size_t written = 0;
    bool finished = false;  // finish() ran: pump() has nothing to do
};

namespace {

ssize_t cookie_write(void* cookie, const char* data, std::size_t size) {
    static_cast<queued_output::shared*>(cookie)->write(std::string_view(data, size));
    return static_cast<ssize_t>(size);
}

}  // namespace

queued_output::queued_output(int fd, std::string stream_name, std::size_t capacity_bytes)
    : s_(std::make_shared<shared>(fd, std::move(stream_name), capacity_bytes)) {
    // The FILE keeps the shared state for the rest of the process: it is never closed, because
    // loggers hold it past this object.
    auto* keep = new std::shared_ptr<shared>(s_);
    cookie_io_functions_t io{};
    io.write = cookie_write;
    file_ = fopencookie(keep->get(), "w", io);
    if (!file_) {
        delete keep;
        s_->m = shared::mode::direct;  // no stream: write straight through, as before
        file_ = fdopen(dup(fd), "w");
        return;
    }
    // Unbuffered: each fwrite/printf is one append to the queue, so what one call wrote is
    // queued (and ordered) at once; pump() makes a turn's lines one write.
    std::setvbuf(file_, nullptr, _IONBF, 0);
}

queued_output::~queued_output() {
    if (!finished_) finish(default_drain_deadline);
}

bool queued_output::pump() { return s_->pump(); }

int queued_output::writable_fd() const { return s_->how == shared::way::nonblocking ? s_->own_fd : -1; }

bool queued_output::finish(std::chrono::milliseconds deadline) {
    finished_ = true;
    {
        std::lock_guard lock(s_->mu);
        if (s_->m != shared::mode::queued) return s_->m == shared::mode::direct;
        s_->queue.report_dropped();
    }
    const auto until = std::chrono::steady_clock::now() + deadline;
    // pump() and finish() run on one thread: no lock needed for `finished`.
    bool drained = s_->pump();
    while (!drained) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        s_->wait_writable(static_cast<int>(left.count()));
        drained = s_->pump();
    }
    s_->finished = true;
    std::lock_guard lock(s_->mu);
    // Our own description would keep a pipe open for its reader (no end of file) for the rest
    // of the process: from here on writes use `fd` itself.
    if (s_->own_fd >= 0) ::close(s_->own_fd);
    s_->own_fd = -1;
    if (s_->m == shared::mode::discard) return false;
    s_->m = drained ? shared::mode::direct : shared::mode::discard;
    return drained;
}

std::uint64_t queued_output::dropped_lines() const {
    std::lock_guard lock(s_->mu);
    return s_->queue.dropped_lines();
}

namespace {

// Descriptors 1 and 2 are one file: one terminal, or both ends of one pipe.
bool same_file(int a, int b) {
    struct stat sa {}, sb {};
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

}  // namespace

queued_stdio::queued_stdio(std::size_t capacity_bytes) {
    if (same_file(STDOUT_FILENO, STDERR_FILENO)) {
        out_ = std::make_unique<queued_output>(STDOUT_FILENO, "stdout and stderr", capacity_bytes);
    } else {
        out_ = std::make_unique<queued_output>(STDOUT_FILENO, "stdout", capacity_bytes);
        err_ = std::make_unique<queued_output>(STDERR_FILENO, "stderr", capacity_bytes);
    }
}

queued_stdio::~queued_stdio() {
    if (!finished_) finish(default_drain_deadline);
}

std::FILE* queued_stdio::out() const { return out_->stream(); }
std::FILE* queued_stdio::err() const { return err_ ? err_->stream() : out_->stream(); }

std::vector<queued_output*> queued_stdio::outputs() {
    if (err_) return {out_.get(), err_.get()};
    return {out_.get()};
}

bool queued_stdio::finish(std::chrono::milliseconds deadline) {
    finished_ = true;
    const auto until = std::chrono::steady_clock::now() + deadline;
    bool all = out_->finish(deadline);
    if (err_) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        all = err_->finish(std::max(left, std::chrono::milliseconds(0))) && all;
    }
    return all;
}

}  // namespace coldbrew::telemetry
