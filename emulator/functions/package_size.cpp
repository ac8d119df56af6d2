#include "emulator/functions/package_size.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

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

// ---- globs ------------------------------------------------------------------------------

// {a,b} alternatives expanded, innermost first, as micromatch's braces do.
void expand_braces(std::string pattern, std::vector<std::string>& out) {
    const auto close = pattern.find('}');
    const auto open = close == std::string::npos ? std::string::npos : pattern.rfind('{', close);
    if (open == std::string::npos) {
        out.push_back(std::move(pattern));
        return;
    }
    const std::string head = pattern.substr(0, open), tail = pattern.substr(close + 1);
    const std::string body = pattern.substr(open + 1, close - open - 1);
    if (body.find(',') == std::string::npos) {  // "{x}" is literal in micromatch
        out.push_back(std::move(pattern));
        return;
    }
    std::size_t from = 0;
    for (;;) {
        const auto comma = body.find(',', from);
        expand_braces(head + body.substr(from, comma - from) + tail, out);
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
}

// One path segment against one pattern segment: `*`, `?`, `[...]` (`!` or `^` negates).
bool segment_match(std::string_view p, std::string_view s) {
    std::size_t pi = 0, si = 0, star_p = std::string_view::npos, star_s = 0;
    while (si < s.size()) {
        if (pi < p.size() && p[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        bool ok = false;
        std::size_t next = pi + 1;
        if (pi < p.size() && p[pi] == '?') {
            ok = true;
        } else if (pi < p.size() && p[pi] == '[') {
            std::size_t j = pi + 1;
            const bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
            if (negate) ++j;
            bool in = false;
            const std::size_t first = j;
            for (; j < p.size() && (p[j] != ']' || j == first); ++j) {
                if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
                    in = in || (s[si] >= p[j] && s[si] <= p[j + 2]);
                    j += 2;
                } else {
                    in = in || s[si] == p[j];
                }
            }
            if (j < p.size()) {
                ok = in != negate;
                next = j + 1;
            } else {
                ok = s[si] == '[';  // unclosed: a literal bracket
            }
        } else if (pi < p.size()) {
            ok = p[pi] == s[si];
        }
        if (ok) {
            pi = next;
            ++si;
        } else if (star_p != std::string_view::npos) {
            pi = star_p;
            si = ++star_s;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

std::vector<std::string_view> split_path(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t from = 0;
    for (;;) {
        const auto slash = s.find('/', from);
        const auto part = s.substr(from, slash - from);
        if (!part.empty()) out.push_back(part);
        if (slash == std::string_view::npos) break;
        from = slash + 1;
    }
    return out;
}

bool segments_match(const std::vector<std::string_view>& p, std::size_t pi,
                    const std::vector<std::string_view>& s, std::size_t si) {
    if (pi == p.size()) return si == s.size();
    if (p[pi] == "**") {
        for (std::size_t k = si; k <= s.size(); ++k)
            if (segments_match(p, pi + 1, s, k)) return true;
        return false;
    }
    return si < s.size() && segment_match(p[pi], s[si]) && segments_match(p, pi + 1, s, si + 1);
}

// ---- what a build leaves out ----------------------------------------------------------------

// serverless v3 lib/plugins/package/lib/package-service.js, defaultExcludes.
constexpr std::array<std::string_view, 7> serverless_default_excludes = {
    ".git/**", ".gitignore", ".DS_Store", "npm-debug.log", "yarn-*.log", ".serverless/**",
    ".serverless_plugins/**"};

struct dir_rule {
    std::string_view name;
    std::string_view reason;
    bool sam_only = false;
};
constexpr std::array<dir_rule, 8> skipped_dirs = {{
    {".git", "version control, never deployed"},
    {".aws-sam", "sam build output, never deployed"},
    {".serverless", "serverless package output, never deployed"},
    {"__pycache__", "a cache Python writes when it runs; sam build leaves it out"},
    {".pytest_cache", "a test cache; sam build leaves it out"},
    {".mypy_cache", "a type checker cache; sam build leaves it out"},
    {".venv", "a local virtualenv; sam build installs requirements.txt instead", true},
    {"venv", "a local virtualenv; sam build installs requirements.txt instead", true},
}};

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return nlohmann::json::value_t::discarded;
    std::stringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str(), nullptr, false);
}

// Installed package directories below `nm` (a node_modules), relative to `root`, nested ones
// included.
void installed_packages(const fs::path& root, const fs::path& nm, std::vector<std::string>& out) {
    std::error_code ec;
    for (fs::directory_iterator it(nm, ec), end; !ec && it != end; it.increment(ec)) {
        const auto name = it->path().filename().string();
        if (name.empty() || name[0] == '.' || !it->is_directory(ec) || it->is_symlink(ec)) continue;
        std::vector<fs::path> pkgs;
        if (name[0] == '@') {
            std::error_code sec;
            for (fs::directory_iterator s(it->path(), sec), e; !sec && s != e; s.increment(sec))
                if (s->is_directory(sec) && !s->is_symlink(sec)) pkgs.push_back(s->path());
        } else {
            pkgs.push_back(it->path());
        }
        for (const auto& p : pkgs) {
            out.push_back(p.lexically_relative(root).generic_string());
            if (fs::is_directory(p / "node_modules", ec)) installed_packages(root, p / "node_modules", out);
        }
    }
}

void add_deps(const nlohmann::json& manifest, std::vector<std::string>& names) {
    for (const char* key : {"dependencies", "optionalDependencies", "peerDependencies"}) {
        const auto it = manifest.find(key);
        if (it == manifest.end() || !it->is_object()) continue;
        for (const auto& [name, range] : it->items())
            names.push_back(name);
    }
}

// The package directories (relative to `root`) only devDependencies need, and why; empty when
// nothing can be told (no readable package.json).
struct dev_set {
    std::vector<std::string> dirs;
    std::string reason;
};
dev_set find_dev_packages(const fs::path& root) {
    dev_set out;
    std::error_code ec;
    const auto lock = read_json(root / "package-lock.json");
    if (lock.is_object() && lock.value("lockfileVersion", 0) >= 2 && lock.contains("packages") &&
        lock["packages"].is_object()) {
        for (const auto& [key, entry] : lock["packages"].items()) {
            if (key.rfind("node_modules/", 0) != 0 || !entry.is_object()) continue;
            if (entry.value("dev", false) && fs::is_directory(root / key, ec))
                out.dirs.push_back(key);
        }
        out.reason = "package-lock.json marks them dev";
        return out;
    }
    const auto manifest = read_json(root / "package.json");
    if (!manifest.is_object()) return out;
    // Node's resolution: from a package, its own node_modules, then each enclosing one.
    std::set<std::string> reached;
    std::vector<std::pair<fs::path, std::vector<std::string>>> pending;
    {
        std::vector<std::string> names;
        add_deps(manifest, names);
        pending.emplace_back(root, std::move(names));
    }
    while (!pending.empty()) {
        auto [from, names] = std::move(pending.back());
        pending.pop_back();
        for (const auto& name : names) {
            for (fs::path at = from;;) {
                const fs::path candidate = at / "node_modules" / name;
                if (fs::is_directory(candidate, ec)) {
                    const auto rel = candidate.lexically_relative(root).generic_string();
                    if (reached.insert(rel).second) {
                        std::vector<std::string> next;
                        if (const auto m = read_json(candidate / "package.json"); m.is_object())
                            add_deps(m, next);
                        pending.emplace_back(candidate, std::move(next));
                    }
                    break;
                }
                if (at == root) break;
                at = at.parent_path();
                if (at.filename() == "node_modules") at = at.parent_path();
                if (at.filename().string().rfind('@', 0) == 0) at = at.parent_path().parent_path();
            }
        }
    }
    std::vector<std::string> installed;
    installed_packages(root, root / "node_modules", installed);
    for (auto& rel : installed)
        if (!reached.count(rel)) out.dirs.push_back(std::move(rel));
    out.reason = "not reached from package.json dependencies";
    return out;
}

struct file_item {
    fs::path path;
    std::uint64_t size = 0;
    std::string name;  // as stored in the archive: relative, with '/'
};

std::uint64_t entry_overhead(const file_item& f) {
    return local_header_bytes + central_entry_bytes + 2 * f.name.size();
}

// Regular files and bytes below `dir` (symlinks not followed).
void tree_size(const fs::path& dir, std::uint64_t& files, std::uint64_t& bytes) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        std::error_code sec;
        const auto st = it->symlink_status(sec);
        if (sec || !fs::is_regular_file(st)) continue;
        const auto size = it->file_size(sec);
        if (sec) continue;
        files += 1;
        bytes += size;
    }
}

class left_out_log {
public:
    void add(const std::string& what, const std::string& reason, const std::string& example,
             std::uint64_t files, std::uint64_t bytes, bool counts = true) {
        auto& g = groups_[what + '\n' + reason];
        g.group.what = what;
        g.group.reason = reason;
        g.group.count += counts ? 1 : 0;
        g.group.files += files;
        g.group.bytes += bytes;
        g.examples[example] += bytes;
    }
    void add_count(const std::string& what, const std::string& reason, std::uint64_t count) {
        if (auto it = groups_.find(what + '\n' + reason); it != groups_.end())
            it->second.group.count += count;
    }
    std::vector<left_out_group> take() {
        std::vector<left_out_group> out;
        for (auto& [key, g] : groups_) {
            std::vector<std::pair<std::string, std::uint64_t>> ex(g.examples.begin(), g.examples.end());
            std::stable_sort(ex.begin(), ex.end(),
                             [](const auto& a, const auto& b) { return a.second > b.second; });
            for (std::size_t i = 0; i < ex.size() && i < 5; ++i)
                g.group.examples.push_back(ex[i].first);
            out.push_back(std::move(g.group));
        }
        std::stable_sort(out.begin(), out.end(),
                         [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
        return out;
    }

private:
    struct entry {
        left_out_group group;
        std::map<std::string, std::uint64_t> examples;
    };
    std::map<std::string, entry> groups_;
};

struct walk_context {
    const package_rules& rules;
    const std::vector<fs::path>& tops;  // every measured directory, normalized
    left_out_log& log;
};

// Regular files below `top` that the package holds, in name order so that sampling does not
// depend on readdir order; what is left out goes to the log.
std::error_code list_files(const fs::path& top, walk_context& cx, std::vector<file_item>& out) {
    std::error_code ec;
    const auto top_status = fs::status(top, ec);
    if (ec || !fs::exists(top_status))
        return std::make_error_code(std::errc::no_such_file_or_directory);
    if (!fs::is_directory(top_status)) return std::make_error_code(std::errc::not_a_directory);

    const bool sam = !cx.rules.serverless_patterns;
    // Package directories devDependencies alone need (absolute) → the group they count in.
    std::map<fs::path, std::pair<std::string, std::string>> dev_dirs;
    std::map<std::pair<std::string, std::string>, std::uint64_t> dev_counts;

    // A pending directory and whether it is inside a node_modules.
    std::vector<std::pair<fs::path, bool>> pending{{top, false}};
    bool first = true;
    while (!pending.empty()) {
        const auto [dir, in_node_modules] = std::move(pending.back());
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

        if (!in_node_modules && cx.rules.exclude_dev_dependencies &&
            fs::is_regular_file(dir / "package.json", ec) &&
            fs::is_directory(dir / "node_modules", ec)) {
            auto dev = find_dev_packages(dir);
            const auto rel = dir.lexically_relative(top).generic_string();
            const std::string what =
                std::string("devDependencies packages") + (rel == "." ? "" : " in " + rel + "/");
            for (const auto& d : dev.dirs)
                dev_dirs[(dir / d).lexically_normal()] = {what, dev.reason};
            // Nested packages go with the directory holding them, but count as packages.
            dev_counts[{what, dev.reason}] += dev.dirs.size();
        }

        // Subdirectories are pushed in reverse so they are walked in name order.
        std::vector<std::pair<fs::path, bool>> subdirs;
        for (const auto& e : entries) {
            std::error_code sec;
            const auto st = e.symlink_status(sec);
            if (sec || fs::is_symlink(st)) continue;
            const auto name = e.path().lexically_relative(top).generic_string();
            if (fs::is_directory(st)) {
                const auto leaf = e.path().filename().string();
                std::string what, reason;
                for (const auto& r : skipped_dirs)
                    if (leaf == r.name && (sam || !r.sam_only)) what = leaf, reason = r.reason;
                if (what.empty() && leaf == ".cache" && dir.filename() == "node_modules")
                    what = "node_modules/.cache", reason = "a build tools' cache, never deployed";
                if (what.empty() && e.path() != top &&
                    std::find(cx.tops.begin(), cx.tops.end(), e.path().lexically_normal()) !=
                        cx.tops.end())
                    what = "layer directories", reason = "packaged as a layer of their own";
                if (what.empty()) {
                    if (auto d = dev_dirs.find(e.path().lexically_normal()); d != dev_dirs.end()) {
                        what = d->second.first, reason = d->second.second;
                        // Packages are named by their path below the last node_modules.
                        const auto at = name.rfind("node_modules/");
                        std::uint64_t files = 0, bytes = 0;
                        tree_size(e.path(), files, bytes);
                        cx.log.add(what, reason, name.substr(at == std::string::npos ? 0 : at + 13),
                                   files, bytes, false);
                        continue;
                    }
                }
                if (!what.empty()) {
                    std::uint64_t files = 0, bytes = 0;
                    tree_size(e.path(), files, bytes);
                    cx.log.add(what, reason, name, files, bytes);
                    continue;
                }
                subdirs.emplace_back(e.path(), in_node_modules || leaf == "node_modules");
            } else if (fs::is_regular_file(st)) {
                const auto size = e.file_size(sec);
                if (sec) continue;
                if (cx.rules.serverless_patterns) {
                    // Every file starts included; each pattern that matches sets its state,
                    // so the last one wins (package-service.js, resolveFilePathsFromPatterns).
                    const std::string* last_exclude = nullptr;
                    for (const auto& p : *cx.rules.serverless_patterns) {
                        const bool exclude = !p.empty() && p[0] == '!';
                        if (glob_match(exclude ? std::string_view(p).substr(1) : p, name))
                            last_exclude = exclude ? &p : nullptr;
                    }
                    if (last_exclude) {
                        const auto bare = std::string_view(*last_exclude).substr(1);
                        // The defaults, and the configuration file serverless adds to them.
                        const bool builtin =
                            bare.rfind("serverless.", 0) == 0 ||
                            std::find(serverless_default_excludes.begin(),
                                      serverless_default_excludes.end(),
                                      bare) != serverless_default_excludes.end();
                        cx.log.add("files matching " + *last_exclude,
                                   builtin ? "serverless always leaves them out"
                                           : "serverless.yml package patterns",
                                   name, 1, size);
                        continue;
                    }
                }
                out.push_back({e.path(), size, name});
            }
        }
        for (auto s = subdirs.rbegin(); s != subdirs.rend(); ++s)
            pending.push_back(std::move(*s));
    }
    for (const auto& [key, count] : dev_counts)
        cx.log.add_count(key.first, key.second, count);
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

bool glob_match(std::string_view pattern, std::string_view name) {
    if (pattern.substr(0, 2) == "./") pattern.remove_prefix(2);
    std::vector<std::string> alternatives;
    expand_braces(std::string(pattern), alternatives);
    const auto s = split_path(name);
    for (const auto& a : alternatives)
        if (segments_match(split_path(a), 0, s, 0)) return true;
    return false;
}

package_measure measure_package(const std::vector<fs::path>& dirs, std::error_code& ec,
                                std::uint64_t sample_limit_bytes) {
    return measure_package(dirs, package_rules{}, ec, sample_limit_bytes);
}

package_measure measure_package(const std::vector<fs::path>& dirs, const package_rules& rules,
                                std::error_code& ec, std::uint64_t sample_limit_bytes) {
    ec.clear();
    std::vector<file_item> files;
    std::vector<fs::path> tops;
    for (const auto& dir : dirs)
        tops.push_back(dir.lexically_normal());
    left_out_log log;
    walk_context cx{rules, tops, log};
    for (const auto& dir : dirs) {
        if (auto lec = list_files(dir, cx, files)) {
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
    m.left_out = log.take();
    return m;
}

}  // namespace coldbrew::functions
