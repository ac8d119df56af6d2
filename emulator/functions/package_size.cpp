#include "emulator/functions/package_size.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <memory>
#include <string>

namespace coldbrew::functions {

namespace fs = std::filesystem;

namespace {

// .zip record sizes without names (PKWARE APPNOTE 4.3.7, 4.3.12, 4.3.16).
constexpr std::uint64_t local_header_bytes = 30;
constexpr std::uint64_t central_entry_bytes = 46;
constexpr std::uint64_t end_record_bytes = 22;
// zip's defaults: deflate level 6, 32 KiB window, no zlib/gzip wrapper.
constexpr int zip_level = 6;
constexpr int raw_deflate_window_bits = -15;
constexpr int zlib_default_mem_level = 8;
constexpr std::size_t chunk_bytes = 256 * 1024;
// The smallest piece of a file compressed when sampling: long enough for deflate's ratio on it
// to mean something (its window is 32 KiB).
constexpr std::uint64_t sample_unit_bytes = 64 * 1024;

struct file_item {
    fs::path path;
    std::uint64_t size = 0;
    std::string name;  // as stored in the archive: relative, with '/'
};

std::uint64_t entry_overhead(const file_item& f) {
    return local_header_bytes + central_entry_bytes + 2 * f.name.size();
}

// A name's place in [0, 1): FNV-1a, then splitmix64's finalizer to spread similar names.
double uniform_hash(const std::string& name) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : name)
        h = (h ^ c) * 1099511628211ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Regular files below `top`, in name order so that sampling does not depend on readdir order.
std::error_code list_files(const fs::path& top, std::vector<file_item>& out) {
    std::error_code ec;
    const auto top_status = fs::status(top, ec);
    if (ec || !fs::exists(top_status))
        return std::make_error_code(std::errc::no_such_file_or_directory);
    if (!fs::is_directory(top_status)) return std::make_error_code(std::errc::not_a_directory);

    std::vector<fs::path> pending{top};
    bool first = true;
    while (!pending.empty()) {
        const fs::path dir = std::move(pending.back());
        pending.pop_back();
        std::vector<fs::directory_entry> entries;
        fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
        if (ec) {
            if (first) return ec;
            continue;  // unreadable directory below the top: skipped
        }
        first = false;
        for (fs::directory_iterator end; it != end; it.increment(ec)) {
            entries.push_back(*it);
            if (ec) break;
        }
        if (ec) continue;
        std::sort(entries.begin(), entries.end(),
                  [](const auto& a, const auto& b) { return a.path() < b.path(); });
        // Subdirectories are pushed in reverse so they are walked in name order.
        std::vector<fs::path> subdirs;
        for (const auto& e : entries) {
            std::error_code sec;
            const auto st = e.symlink_status(sec);
            if (sec || fs::is_symlink(st)) continue;
            if (fs::is_directory(st)) {
                // Python writes __pycache__ into the code directory the first time it runs
                // a handler; counting it would make the second run's model (and decision
                // log) differ from the first. `sam build` leaves it out too (aws-lambda-builders,
                // python_pip workflow, EXCLUDED_FILES).
                if (e.path().filename() == "__pycache__") continue;
                subdirs.push_back(e.path());
            } else if (fs::is_regular_file(st)) {
                const auto size = e.file_size(sec);
                if (sec) continue;
                const auto name = e.path().lexically_relative(top).generic_string();
                out.push_back({e.path(), size, name});
            }
        }
        for (auto s = subdirs.rbegin(); s != subdirs.rend(); ++s)
            pending.push_back(*s);
    }
    return {};
}

class deflater {
public:
    deflater()
        : out_(std::make_unique<unsigned char[]>(chunk_bytes)),
          in_(std::make_unique<unsigned char[]>(chunk_bytes)) {
        ok_ = deflateInit2(&z_, zip_level, Z_DEFLATED, raw_deflate_window_bits,
                           zlib_default_mem_level, Z_DEFAULT_STRATEGY) == Z_OK;
    }
    ~deflater() {
        if (ok_) deflateEnd(&z_);
    }
    deflater(const deflater&) = delete;
    deflater& operator=(const deflater&) = delete;

    // Deflated size of the first `limit` bytes of `path`; false when it cannot be read.
    bool compress(const fs::path& path, std::uint64_t limit, std::uint64_t& in_bytes,
                  std::uint64_t& out_bytes) {
        if (!ok_) return false;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        deflateReset(&z_);
        in_bytes = 0;
        bool good = true;
        for (;;) {
            const auto want =
                static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, limit - in_bytes));
            ssize_t n = 0;
            if (want > 0) {
                n = ::read(fd, in_.get(), want);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) {
                    good = false;
                    break;
                }
            }
            in_bytes += static_cast<std::uint64_t>(n);
            const bool last = n == 0 || in_bytes >= limit;
            z_.next_in = in_.get();
            z_.avail_in = static_cast<uInt>(n);
            int rc;
            do {
                z_.next_out = out_.get();
                z_.avail_out = static_cast<uInt>(chunk_bytes);
                rc = deflate(&z_, last ? Z_FINISH : Z_NO_FLUSH);
            } while (rc == Z_OK && (z_.avail_out == 0 || (last && rc != Z_STREAM_END)));
            if (rc == Z_STREAM_ERROR) {
                good = false;
                break;
            }
            if (last) break;
        }
        ::close(fd);
        out_bytes = z_.total_out;
        return good;
    }

private:
    z_stream z_{};
    bool ok_ = false;
    std::unique_ptr<unsigned char[]> out_, in_;
};

}  // namespace

package_measure measure_package(const std::vector<fs::path>& dirs, std::error_code& ec,
                                std::uint64_t sample_limit_bytes) {
    ec.clear();
    std::vector<file_item> files;
    for (const auto& dir : dirs) {
        if (auto lec = list_files(dir, files)) {
            ec = lec;
            return {};
        }
    }
    std::uint64_t total = 0;
    for (const auto& f : files)
        total += f.size;

    // Sampling: a file's share of the budget is `fraction` of its size. A share of at least
    // `sample_unit_bytes` (or of the whole file, if smaller) is spent on a prefix of that
    // length; a smaller share buys one unit with the share's probability, decided by a hash
    // of the file's name, so the sample is spread over the whole package, independent of walk
    // order and of which sizes happen to fit. Small files compress worse than large ones, so
    // the ratio is taken per size class (powers of two) and applied to the unsampled bytes of
    // the same class.
    const double fraction = total <= sample_limit_bytes ? 1.0
                                                        : static_cast<double>(sample_limit_bytes) /
                                                              static_cast<double>(total);
    struct size_class {
        std::uint64_t sampled_in = 0, sampled_out = 0, unsampled = 0;
    };
    std::array<size_class, 65> classes{};
    std::uint64_t compressed = 0;
    deflater z;
    package_measure m;
    std::uint64_t overhead = end_record_bytes * dirs.size();
    for (const auto& f : files) {
        std::uint64_t take = f.size;
        if (fraction < 1.0) {
            const double share = fraction * static_cast<double>(f.size);
            const auto unit = std::min(f.size, sample_unit_bytes);
            if (share >= static_cast<double>(unit))
                take = std::min(f.size, static_cast<std::uint64_t>(std::ceil(share)));
            else
                take = uniform_hash(f.name) * static_cast<double>(unit) < share ? unit : 0;
            take = std::min(take, sample_limit_bytes - compressed);
        }

        auto& c = classes[static_cast<std::size_t>(std::bit_width(f.size))];
        std::uint64_t in = 0, out = 0;
        if (take > 0) {
            if (!z.compress(f.path, take, in, out)) continue;  // unreadable: skipped
            compressed += in;
            // zip stores a file whose deflated form is not smaller.
            c.sampled_in += in;
            c.sampled_out += std::min(in, out);
        } else if (::access(f.path.c_str(), R_OK) != 0) {
            continue;
        }
        if (take != f.size) c.unsampled += f.size - in;
        m.files += 1;
        m.bytes += f.size;
        overhead += entry_overhead(f);
    }

    std::uint64_t sampled_in = 0, sampled_out = 0, unsampled = 0;
    for (const auto& c : classes) {
        sampled_in += c.sampled_in;
        sampled_out += c.sampled_out;
        unsampled += c.unsampled;
    }
    // A class without a sample takes the overall ratio; nothing sampled at all counts as stored.
    const double overall =
        sampled_in == 0 ? 1.0 : static_cast<double>(sampled_out) / static_cast<double>(sampled_in);
    double extrapolated = 0;
    for (const auto& c : classes) {
        const double ratio = c.sampled_in == 0 ? overall
                                               : static_cast<double>(c.sampled_out) /
                                                     static_cast<double>(c.sampled_in);
        extrapolated += ratio * static_cast<double>(c.unsampled);
    }
    m.zipped_bytes =
        overhead + sampled_out + static_cast<std::uint64_t>(std::llround(extrapolated));
    m.estimated = unsampled > 0;
    return m;
}

}  // namespace coldbrew::functions
