// Which directories are watched for which functions, and which changes are noise.
#include <algorithm>
#include <string_view>

#include "emulator/watch/watch.hpp"

namespace coldbrew::watch {

namespace fs = std::filesystem;

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Directories that hold tool output or metadata, never a handler's source.
bool noise_dir(std::string_view name) {
    return name == ".git" || name == ".aws-sam" || name == ".serverless" || name == ".esbuild" ||
           name == ".coldbrew" || name == "__pycache__";
}

// Files editors write beside the one being edited: vim's swap files (.x.swp, then .swo,
// .swx …) and the "4913" file it creates to test that a directory is writable; backups with
// a trailing ~ (vim, emacs, nano); emacs auto-save #x# and lock .#x; JetBrains' safe-write
// temporaries x___jb_tmp___ and x___jb_old___.
bool editor_file(std::string_view name) {
    if (name == "4913" || ends_with(name, "~")) return true;
    if (name.size() > 1 && name.front() == '#' && name.back() == '#') return true;
    if (name.rfind(".#", 0) == 0) return true;
    if (ends_with(name, "___jb_tmp___") || ends_with(name, "___jb_old___")) return true;
    if (name.size() > 4 && name.front() == '.' && name[name.size() - 4] == '.' &&
        name[name.size() - 3] == 's' && name[name.size() - 2] == 'w')
        return true;  // .x.swp, .x.swo, .x.swx, .x.swn …
    return false;
}

// "/p", "/p/" and "/p/./" are one directory.
fs::path normal(const fs::path& p) {
    auto n = p.lexically_normal();
    if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
    return n;
}

// `p` is `dir` or under it (both normalised).
bool under(const fs::path& p, const fs::path& dir) {
    auto rel = p.lexically_relative(dir);
    if (rel.empty()) return false;
    auto first = *rel.begin();
    return first != "..";
}

}  // namespace

bool ignored(const fs::path& relative) {
    std::vector<std::string> parts;
    for (const auto& c : relative)
        if (!c.empty() && c != "." && c != "/") parts.push_back(c.string());
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string& name = parts[i];
        const bool last = i + 1 == parts.size();
        if (noise_dir(name)) return true;
        if (name == "node_modules" && i + 1 < parts.size() && parts[i + 1] == ".cache") return true;
        if (last && (ends_with(name, ".pyc") || ends_with(name, ".pyo"))) return true;
        if (last && editor_file(name)) return true;
    }
    return false;
}

bool ignored(const root& r, const fs::path& absolute) {
    const auto p = normal(absolute);
    const auto dir = normal(r.dir);
    if (!under(p, dir)) return true;
    for (const auto& x : r.excluded)
        if (under(p, normal(x))) return true;
    return ignored(p.lexically_relative(dir));
}

std::vector<root> watch_roots(const config::stack& s) {
    std::vector<root> out;
    auto add = [&](const fs::path& dir, const std::string& function) {
        const auto d = normal(dir);
        auto it = std::find_if(out.begin(), out.end(), [&](const root& r) { return r.dir == d; });
        if (it == out.end()) {
            out.push_back({d, {}, {}});
            it = std::prev(out.end());
        }
        if (std::find(it->functions.begin(), it->functions.end(), function) == it->functions.end())
            it->functions.push_back(function);
    };
    for (const auto& fn : s.functions) {
        add(fn.build ? fn.build->source_dir : fn.code_dir, fn.name);
        for (const auto& layer : fn.layer_dirs) add(layer, fn.name);
    }
    // What coldbrew itself writes while it runs must not reload the code it serves.
    std::vector<fs::path> own;
    for (const auto& fn : s.functions)
        if (fn.build) own.push_back(normal(fn.build->artifacts_dir));
    if (s.settings.decision_log) own.push_back(normal(*s.settings.decision_log));
    if (s.settings.trace_file) own.push_back(normal(*s.settings.trace_file));
    for (auto& r : out)
        for (const auto& p : own)
            if (under(p, r.dir) && p != r.dir) r.excluded.push_back(p);
    return out;
}

debouncer::debouncer(std::chrono::milliseconds quiet, std::chrono::milliseconds cap)
    : quiet_(quiet), cap_(std::max(cap, quiet)) {}

void debouncer::add(const fs::path& path, time_point now) {
    if (paths_.empty()) first_ = now;
    last_ = now;
    if (seen_.insert(path).second) paths_.push_back(path);
}

std::optional<debouncer::time_point> debouncer::due() const {
    if (paths_.empty()) return std::nullopt;
    return std::min(last_ + quiet_, first_ + cap_);
}

std::vector<fs::path> debouncer::take(time_point now) {
    auto when = due();
    if (!when || now < *when) return {};
    std::vector<fs::path> out = std::move(paths_);
    paths_.clear();
    seen_.clear();
    return out;
}

}  // namespace coldbrew::watch
