#pragma once
// A /proc or cgroup file kept open and read again from offset 0. The kernel regenerates such
// a file's text on every read at offset 0 (seq_file, kernfs), so a reading costs one pread
// where reopening the path costs a path walk, an open, an fstat and a close. Execution
// environments read their memory high-water mark and their cgroup's peak and OOM count after
// every invocation (REPORT's Max Memory Used), which is where that difference shows.
//
// An fd of /proc/<pid>/… stays bound to the process it was opened for: once that process is
// gone a read fails (ESRCH), and a new process that reuses the pid is never read by mistake.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace coldbrew::supervisor {

class reread_file {
public:
    reread_file() = default;
    explicit reread_file(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
    ~reread_file() { reset(); }
    reread_file(reread_file&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    reread_file& operator=(reread_file&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = o.fd_;
            o.fd_ = -1;
        }
        return *this;
    }
    reread_file(const reread_file&) = delete;
    reread_file& operator=(const reread_file&) = delete;

    bool is_open() const { return fd_ >= 0; }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    // The file's whole text now; false when it is not open or the read fails.
    bool read(std::string& out) const {
        if (fd_ < 0) return false;
        out.clear();
        char buf[4096];
        for (off_t at = 0;;) {
            const ssize_t n = ::pread(fd_, buf, sizeof buf, at);
            if (n < 0) {
                if (errno == EINTR) continue;
                return false;
            }
            if (n == 0) return true;
            out.append(buf, static_cast<std::size_t>(n));
            // These files are generated whole on a read at offset 0 when they fit the buffer:
            // a short read is the end, and the pread that would return 0 is saved.
            if (static_cast<std::size_t>(n) < sizeof buf) return true;
            at += n;
        }
    }

private:
    int fd_ = -1;
};

}  // namespace coldbrew::supervisor
