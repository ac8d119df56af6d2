#pragma once
// `--watch` (coldbrew.yaml `watch: true`): which directories are watched for which functions,
// which changes count, how a burst of writes becomes one reload, and the watcher that reads
// the file system (inotify through a uv_poll_t; a periodic scan where inotify is unavailable
// or its watch limit is reached).
//
// Edits are real-world events, so the debounce runs in real time (the injected clock and a
// plain libuv timer), not in the scheduler's modeled time.

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"

namespace coldbrew::watch {

// One watched directory (absolute) and the functions a change under it concerns: several
// functions often share one CodeUri (`.`), and a layer can serve several functions.
struct root {
    std::filesystem::path dir;
    std::vector<std::string> functions;  // function::name, in template order, no repeats
    // Absolute directories under `dir` whose changes never count: build output
    // (build->artifacts_dir), coldbrew's decision log and trace file.
    std::vector<std::filesystem::path> excluded;
};

// Every distinct directory to watch: per function `build ? build->source_dir : code_dir`,
// then its layer_dirs; each directory once, with every function it concerns. Paths are
// compared lexically normalised (no file system access). The same set SAM CLI's warm
// containers watch: a function's code path and its layers' CodeUri (aws-sam-cli,
// samcli/lib/utils/file_observer.py, LambdaFunctionObserver); a build's source directory
// stands for the code path because the build output is what coldbrew writes itself.
std::vector<root> watch_roots(const config::stack& s);

// Whether a change at `relative` (a path relative to a watched root, '/'-separated) is noise:
// a component named .git, .aws-sam, .serverless, .esbuild, .coldbrew or __pycache__; anything
// under node_modules/.cache; *.pyc / *.pyo; editors' swap, backup and lock files (vim
// .x.swp/.swo/.swx and its "4913" write probe, a trailing ~, emacs #x# and .#x, JetBrains
// x___jb_tmp___ / x___jb_old___). Pure.
bool ignored(const std::filesystem::path& relative);
// `absolute` under `r.dir`: ignored() on the relative part, or under one of r.excluded, or
// not under r.dir at all.
bool ignored(const root& r, const std::filesystem::path& absolute);

// Turns a stream of change events into batches: a batch is due once no event came for `quiet`
// after the last one, or `cap` after its first event, so a file rewritten without pause still
// reloads. Times are passed in; nothing reads a clock.
class debouncer {
public:
    using time_point = std::chrono::steady_clock::time_point;
    explicit debouncer(std::chrono::milliseconds quiet = std::chrono::milliseconds(200),
                       std::chrono::milliseconds cap = std::chrono::milliseconds(2000));
    // A change to `path` (any identifier the caller uses; repeats are kept once) at `now`.
    void add(const std::filesystem::path& path, time_point now);
    // When the pending batch is due; nullopt when nothing is pending.
    std::optional<time_point> due() const;
    // The pending batch, in first-seen order, when due at `now`; else empty (and kept).
    std::vector<std::filesystem::path> take(time_point now);
    bool pending() const noexcept { return !paths_.empty(); }

private:
    std::chrono::milliseconds quiet_, cap_;
    std::vector<std::filesystem::path> paths_;
    std::set<std::filesystem::path> seen_;
    time_point first_{}, last_{};
};

// Watches every root and calls `on_change(function, file)` once per function per debounced
// batch, naming the first changed file of that batch that concerns it (the root's directory
// when the kernel dropped events: IN_Q_OVERFLOW means anything may have changed).
// inotify: one watch per directory, added for new directories as they appear; ignored
// directories are not descended into. When inotify cannot start or a watch cannot be added
// (the per-user limit, fs.inotify.max_user_watches), the watcher scans every root's mtimes
// every `poll_interval` instead and says so once through `on_note`.
class watcher {
public:
    using change_fn = std::function<void(const std::string& function, const std::filesystem::path& file)>;
    struct options {
        std::chrono::milliseconds quiet{200};
        std::chrono::milliseconds cap{2000};
        std::chrono::milliseconds poll_interval{500};
        bool force_polling = false;  // tests and file systems inotify does not see (NFS)
    };
    watcher(uv_loop_t* loop, const coldbrew::clock& clock, std::vector<root> roots,
            change_fn on_change, std::function<void(const std::string&)> on_note, options o);
    watcher(uv_loop_t* loop, const coldbrew::clock& clock, std::vector<root> roots,
            change_fn on_change, std::function<void(const std::string&)> on_note)
        : watcher(loop, clock, std::move(roots), std::move(on_change), std::move(on_note),
                  options{}) {}
    ~watcher();  // stop()s
    watcher(const watcher&) = delete;
    watcher& operator=(const watcher&) = delete;

    // Begins watching. Call once, after the app has started.
    void start();
    // Closes every handle; nothing is reported afterwards. Safe to call twice.
    void stop();
    bool polling() const noexcept { return polling_; }

private:
    struct handles;
    void add_tree(const std::filesystem::path& dir);
    bool add_dir(const std::filesystem::path& dir);
    void read_events();
    void changed(const std::filesystem::path& file);
    void overflowed();
    void arm();
    void flush();
    void fall_back(const std::string& why);
    void scan();
    void snapshot(std::map<std::filesystem::path, std::pair<std::int64_t, std::uintmax_t>>& out) const;
    bool dir_ignored(const std::filesystem::path& dir) const;

    uv_loop_t* loop_;
    const coldbrew::clock& clock_;
    std::vector<root> roots_;
    change_fn on_change_;
    std::function<void(const std::string&)> on_note_;
    options options_;
    debouncer debounce_;
    int fd_ = -1;
    std::map<int, std::filesystem::path> wds_;
    handles* h_ = nullptr;  // libuv handles, freed by their close callbacks
    bool polling_ = false;
    bool started_ = false;
    std::map<std::filesystem::path, std::pair<std::int64_t, std::uintmax_t>> mtimes_;
};

}  // namespace coldbrew::watch
