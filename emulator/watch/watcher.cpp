// The watcher: inotify read through a uv_poll_t, or a periodic mtime scan.
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "emulator/watch/watch.hpp"

namespace coldbrew::watch {

namespace fs = std::filesystem;

struct watcher::handles {
    uv_poll_t poll{};
    uv_timer_t debounce{};
    uv_timer_t scan{};
    bool poll_open = false;
    int open = 0;  // handles still to close
};

namespace {
constexpr std::uint32_t watch_mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
                                     IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
}  // namespace

watcher::watcher(uv_loop_t* loop, const coldbrew::clock& clock, std::vector<root> roots,
                 change_fn on_change, std::function<void(const std::string&)> on_note, options o)
    : loop_(loop),
      clock_(clock),
      roots_(std::move(roots)),
      on_change_(std::move(on_change)),
      on_note_(std::move(on_note)),
      options_(o),
      debounce_(o.quiet, o.cap) {}

watcher::~watcher() { stop(); }

void watcher::start() {
    if (started_) return;
    started_ = true;
    h_ = new handles;
    uv_timer_init(loop_, &h_->debounce);
    h_->debounce.data = this;
    uv_timer_init(loop_, &h_->scan);
    h_->scan.data = this;
    h_->open = 2;
    if (options_.force_polling) {
        fall_back("");
        return;
    }
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) {
        fall_back(std::string("inotify is unavailable (") + std::strerror(errno) + ")");
        return;
    }
    for (const auto& r : roots_) {
        add_tree(r.dir);
        if (polling_) return;
    }
    uv_poll_init(loop_, &h_->poll, fd_);
    h_->poll.data = this;
    h_->poll_open = true;
    ++h_->open;
    uv_poll_start(&h_->poll, UV_READABLE, [](uv_poll_t* p, int status, int) {
        if (status < 0 || !p->data) return;
        static_cast<watcher*>(p->data)->read_events();
    });
}

void watcher::stop() {
    if (!h_) return;
    auto* h = h_;
    h_ = nullptr;
    auto closed = [](uv_handle_t* handle) {
        auto* hs = static_cast<handles*>(handle->data);
        if (--hs->open == 0) delete hs;
    };
    // From here the handles' data points at the block that owns them, not at this watcher.
    h->debounce.data = h->scan.data = h;
    uv_close(reinterpret_cast<uv_handle_t*>(&h->debounce), closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&h->scan), closed);
    if (h->poll_open) {
        h->poll.data = h;
        uv_close(reinterpret_cast<uv_handle_t*>(&h->poll), closed);
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    wds_.clear();
}

bool watcher::dir_ignored(const fs::path& dir) const {
    // A directory is skipped only when every root it lies under ignores it.
    bool any = false;
    for (const auto& r : roots_) {
        auto rel = dir.lexically_normal().lexically_relative(r.dir);
        if (rel.empty() || *rel.begin() == "..") continue;
        any = true;
        if (!ignored(r, dir)) return false;
    }
    return any;
}

bool watcher::add_dir(const fs::path& dir) {
    if (polling_ || fd_ < 0) return false;
    const int wd = inotify_add_watch(fd_, dir.c_str(), watch_mask | IN_ONLYDIR);
    if (wd < 0) {
        if (errno == ENOSPC)
            fall_back("the inotify watch limit is reached (fs.inotify.max_user_watches)");
        else if (errno == ENOMEM)
            fall_back("inotify is out of memory");
        // ENOENT / ENOTDIR: it went away meanwhile; its removal was reported already.
        return false;
    }
    wds_[wd] = dir;
    return true;
}

void watcher::add_tree(const fs::path& dir) {
    if (dir_ignored(dir) || !add_dir(dir)) return;
    std::error_code ec;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        std::error_code sec;
        if (it->is_directory(sec) && !it->is_symlink(sec)) add_tree(it->path());
        if (polling_) return;
    }
}

void watcher::read_events() {
    alignas(inotify_event) char buf[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(fd_, buf, sizeof(buf));
        if (n <= 0) break;  // EAGAIN: drained
        for (ssize_t off = 0; off < n;) {
            const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
            off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
            if (e->mask & IN_Q_OVERFLOW) {
                overflowed();
                continue;
            }
            auto it = wds_.find(e->wd);
            if (it == wds_.end()) continue;
            if (e->mask & IN_IGNORED) {
                wds_.erase(it);
                continue;
            }
            const fs::path dir = it->second;
            if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
                changed(dir);
                continue;
            }
            const fs::path file = e->len ? dir / e->name : dir;
            if ((e->mask & IN_ISDIR) && (e->mask & (IN_CREATE | IN_MOVED_TO))) {
                add_tree(file);
                // Files written into it before its watch existed are not reported: the new
                // directory itself stands for them.
            }
            changed(file);
            if (polling_) return;
        }
    }
}

void watcher::changed(const fs::path& file) {
    bool counts = false;
    for (const auto& r : roots_)
        if (!ignored(r, file)) counts = true;
    if (!counts) return;
    debounce_.add(file, clock_.steady());
    arm();
}

void watcher::overflowed() {
    for (const auto& r : roots_) debounce_.add(r.dir, clock_.steady());
    arm();
}

void watcher::arm() {
    if (!h_) return;
    const auto due = debounce_.due();
    if (!due) return;
    const auto now = clock_.steady();
    const auto wait = *due > now ? std::chrono::ceil<std::chrono::milliseconds>(*due - now).count() : 0;
    uv_timer_start(
        &h_->debounce,
        [](uv_timer_t* t) {
            if (t->data) static_cast<watcher*>(t->data)->flush();
        },
        static_cast<std::uint64_t>(wait), 0);
}

void watcher::flush() {
    auto batch = debounce_.take(clock_.steady());
    if (batch.empty()) {
        arm();  // woke a little early
        return;
    }
    // Each function once, with the first file of the batch that concerns it, in template order
    // of the roots. Files that exist come first: an editor or `sed -i` writes a temporary file
    // and renames it over the one edited, and the line should name the one the user edited.
    std::error_code ec;
    std::stable_partition(batch.begin(), batch.end(),
                          [&ec](const fs::path& f) { return fs::exists(f, ec); });
    std::vector<std::pair<std::string, fs::path>> out;
    for (const auto& file : batch)
        for (const auto& r : roots_) {
            if (ignored(r, file)) continue;
            for (const auto& fn : r.functions) {
                const bool seen = std::any_of(out.begin(), out.end(),
                                              [&](const auto& p) { return p.first == fn; });
                if (!seen) out.emplace_back(fn, file);
            }
        }
    for (const auto& [fn, file] : out) {
        if (!h_) return;  // stopped by a callback
        on_change_(fn, file);
    }
}

void watcher::fall_back(const std::string& why) {
    if (polling_) return;
    polling_ = true;
    if (h_ && h_->poll_open) uv_poll_stop(&h_->poll);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    wds_.clear();
    if (!why.empty() && on_note_)
        on_note_("watch: " + why + "; scanning for changes every " +
                 std::to_string(options_.poll_interval.count()) + " ms instead");
    snapshot(mtimes_);
    const auto every = static_cast<std::uint64_t>(options_.poll_interval.count());
    uv_timer_start(
        &h_->scan,
        [](uv_timer_t* t) {
            if (t->data) static_cast<watcher*>(t->data)->scan();
        },
        every, every);
}

void watcher::snapshot(std::map<fs::path, std::pair<std::int64_t, std::uintmax_t>>& out) const {
    out.clear();
    for (const auto& r : roots_) {
        std::error_code ec;
        fs::recursive_directory_iterator it(r.dir, fs::directory_options::skip_permission_denied, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            std::error_code sec;
            const auto& p = it->path();
            if (it->is_directory(sec)) {
                if (dir_ignored(p)) it.disable_recursion_pending();
                continue;
            }
            if (ignored(r, p)) continue;
            const auto t = fs::last_write_time(p, sec);
            const auto size = it->is_regular_file(sec) ? it->file_size(sec) : 0;
            out[p] = {static_cast<std::int64_t>(t.time_since_epoch().count()), size};
        }
    }
}

void watcher::scan() {
    std::map<fs::path, std::pair<std::int64_t, std::uintmax_t>> now;
    snapshot(now);
    for (const auto& [p, v] : now) {
        auto it = mtimes_.find(p);
        if (it == mtimes_.end() || it->second != v) changed(p);
    }
    for (const auto& [p, _] : mtimes_)
        if (!now.count(p)) changed(p);
    mtimes_ = std::move(now);
}

}  // namespace coldbrew::watch
