#include "emulator/supervisor/cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <sstream>
#include <thread>
#include <vector>

namespace coldbrew::supervisor {

namespace fs = std::filesystem;

namespace {

constexpr long long period_us = cfs_period_us;
// The kernel refuses a CFS quota below 1 ms.
constexpr long long min_quota_us = 1000;
// More CPUs than any machine has; keeps the quota arithmetic far from overflow.
constexpr double max_vcpus = 1024;
// Names of our own groups; a Lambda function name cannot contain '.', so no execution
// environment is called this.
constexpr const char* probe_name = "coldbrew.probe";
constexpr const char* self_leaf_name = "coldbrew.self";
// rmdir of a group whose last process is still dying fails with EBUSY for a moment.
constexpr int rmdir_attempts = 5;
constexpr auto rmdir_pause = std::chrono::milliseconds(1);

std::error_code last_error() {
    return {errno, std::system_category()};
}

std::error_code read_file(const fs::path& path, std::string& out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return last_error();
    out.clear();
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            auto ec = last_error();
            ::close(fd);
            return ec;
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return {};
}

// Control files are written in one write(2); no O_CREAT, so a plain directory that is not a
// cgroup reports ENOENT instead of growing a file.
std::error_code write_file(const fs::path& path, const std::string& value) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return last_error();
    ssize_t n;
    do {
        n = ::write(fd, value.data(), value.size());
    } while (n < 0 && errno == EINTR);
    std::error_code ec;
    if (n < 0)
        ec = last_error();
    else if (static_cast<std::size_t>(n) != value.size())
        ec = std::make_error_code(std::errc::io_error);
    ::close(fd);
    return ec;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(s);
    while (std::getline(in, item, sep))
        out.push_back(item);
    return out;
}

bool has_word(const std::string& text, const std::string& word) {
    std::istringstream in(text);
    std::string w;
    while (in >> w)
        if (w == word) return true;
    return false;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            const char a = s[i + 1], b = s[i + 2], c = s[i + 3];
            if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
                out += static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0'));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

struct mount_entry {
    std::string root;  // the directory of the hierarchy mounted here
    fs::path mount_point;
    std::string fstype;  // "cgroup" or "cgroup2"
    std::string super_options;
};

// Lines: "id parent major:minor root mount_point options [optional…] - fstype source super".
std::vector<mount_entry> read_cgroup_mounts(const std::string& mountinfo) {
    std::vector<mount_entry> mounts;
    std::istringstream in(mountinfo);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::vector<std::string> f;
        std::string w;
        while (fields >> w)
            f.push_back(w);
        auto dash = std::find(f.begin(), f.end(), "-");
        if (dash == f.end() || dash - f.begin() < 6 || f.end() - dash < 4) continue;
        mount_entry m;
        m.root = unescape_mountinfo(f[3]);
        m.mount_point = unescape_mountinfo(f[4]);
        m.fstype = *(dash + 1);
        m.super_options = *(dash + 3);
        if (m.fstype == "cgroup" || m.fstype == "cgroup2") mounts.push_back(std::move(m));
    }
    return mounts;
}

bool is_at_or_below(const fs::path& p, const fs::path& root) {
    auto a = p.lexically_normal().generic_string();
    auto r = root.lexically_normal().generic_string();
    while (r.size() > 1 && r.back() == '/')
        r.pop_back();
    while (a.size() > 1 && a.back() == '/')
        a.pop_back();
    return r == "/" || a == r ||
           (a.size() > r.size() && a.compare(0, r.size(), r) == 0 && a[r.size()] == '/');
}

// The directory of `cgroup_path` (as /proc/self/cgroup gives it) in a hierarchy mounted at
// `m`; none when the cgroup is outside what is mounted there.
std::optional<fs::path> resolve(const mount_entry& m, const std::string& cgroup_path) {
    fs::path cg = fs::path(cgroup_path).lexically_normal();
    fs::path mroot = fs::path(m.root).lexically_normal();
    if (!is_at_or_below(cg, mroot)) return std::nullopt;
    fs::path rel = cg.lexically_relative(mroot);
    if (rel.empty() || rel == ".") return m.mount_point;
    return m.mount_point / rel;
}

std::vector<int> list_pids(const fs::path& group) {
    std::vector<int> pids;
    std::string text;
    if (read_file(group / "cgroup.procs", text)) return pids;
    std::istringstream in(text);
    int pid;
    while (in >> pid)
        pids.push_back(pid);
    return pids;
}

// Best effort: processes may fork while they are being moved, hence a few rounds.
std::error_code move_all(const fs::path& from, const fs::path& to) {
    std::error_code last;
    for (int round = 0; round < 8; ++round) {
        auto pids = list_pids(from);
        if (pids.empty()) return {};
        for (int pid : pids) {
            auto ec = write_file(to / "cgroup.procs", std::to_string(pid));
            if (ec && ec.value() != ESRCH) last = ec;
        }
    }
    if (!last) last = std::make_error_code(std::errc::device_or_resource_busy);
    return last;
}

bool remove_group(const fs::path& group, int attempts) {
    for (int i = 0; i < attempts; ++i) {
        if (::rmdir(group.c_str()) == 0 || errno == ENOENT) return true;
        if (errno != EBUSY) return false;
        if (i + 1 < attempts) std::this_thread::sleep_for(rmdir_pause);
    }
    return false;
}

int parent_pid(const fs::path& proc, int pid) {
    std::string stat;
    if (read_file(proc / std::to_string(pid) / "stat", stat)) return 0;
    // "pid (comm) state ppid …"; comm may contain spaces and parentheses.
    auto close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream in(stat.substr(close + 1));
    std::string state;
    int ppid = 0;
    in >> state >> ppid;
    return ppid;
}

bool is_self_or_descendant(const fs::path& proc, int pid) {
    const int self = static_cast<int>(::getpid());
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
        if (pid == self) return true;
        pid = parent_pid(proc, pid);
    }
    return false;
}

// Parents left by a coldbrew that was killed before it could remove them. Only empty groups
// can be removed, so a live instance in another pid namespace loses nothing that it uses.
void remove_stale_parents(const fs::path& home) {
    std::vector<fs::path> stale;
    std::error_code ec;
    for (fs::directory_iterator it(home, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("coldbrew-", 0) != 0) continue;
        const std::string digits = name.substr(9);
        if (digits.empty() || digits.size() > 9 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            continue;
        const auto pid = static_cast<pid_t>(std::stol(digits));
        if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(it->path());
    }
    for (const auto& parent : stale) {
        std::vector<fs::path> groups;
        for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec))
            if (it->is_directory(ec)) groups.push_back(it->path());
        for (const auto& g : groups)
            ::rmdir(g.c_str());
        ::rmdir(parent.c_str());
    }
}

bool valid_group_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\n') == std::string::npos && name != probe_name && name != self_leaf_name;
}

std::string quoted_or_none(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s.empty() ? "none" : "\"" + s + "\"";
}

// "key value" lines (memory.events, memory.oom_control): the value of `key`, if present.
std::optional<std::uint64_t> counter(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    std::string k;
    std::uint64_t v;
    while (in >> k >> v)
        if (k == key) return v;
    return std::nullopt;
}

std::optional<std::uint64_t> parse_number(const std::string& text) {
    std::istringstream in(text);
    std::uint64_t v;
    if (in >> v) return v;
    return std::nullopt;
}

using tree_version = detail::cgroup_tree::version;

std::error_code set_quota(tree_version v, const fs::path& group, double vcpus) {
    const long long quota_us =
        std::max(min_quota_us, std::llround(std::min(vcpus, max_vcpus) * period_us));
    if (v == tree_version::v2)
        return write_file(group / "cpu.max",
                          std::to_string(quota_us) + " " + std::to_string(period_us));
    if (auto ec = write_file(group / "cpu.cfs_period_us", std::to_string(period_us))) return ec;
    auto ec = write_file(group / "cpu.cfs_quota_us", std::to_string(quota_us));
    if (ec.value() == EINVAL) {
        // v1 refuses a quota above an enclosing group's (e.g. a container's --cpus); the
        // enclosing quota then caps the group exactly as the requested one would have.
        ec = write_file(group / "cpu.cfs_quota_us", "-1");
    }
    return ec;
}

// Swap must not give the environment room beyond MemorySize, or a function that would be
// killed on Lambda only slows down here. Without swap accounting the swap file is absent and
// cannot be capped: on a machine with swap the group may then page out instead of dying.
std::error_code set_memory_limit(tree_version v, const fs::path& group, std::uint64_t bytes) {
    const std::string value = std::to_string(bytes);
    std::error_code ec;
    if (v == tree_version::v2) {
        if ((ec = write_file(group / "memory.max", value))) return ec;
        ec = write_file(group / "memory.swap.max", "0");
        if (ec && ec.value() != ENOENT) return ec;
        // One OOM kill ends every process of the environment, as Lambda ends the sandbox.
        ec = write_file(group / "memory.oom.group", "1");
        return ec && ec.value() != ENOENT ? ec : std::error_code{};
    }
    // memsw (memory + swap) may never be below the memory limit, so it is written second.
    if ((ec = write_file(group / "memory.limit_in_bytes", value))) return ec;
    ec = write_file(group / "memory.memsw.limit_in_bytes", value);
    return ec && ec.value() != ENOENT ? ec : std::error_code{};
}

}  // namespace

namespace detail {

cgroup_tree::cgroup_tree(version v, fs::path h, fs::path p, std::string c)
    : ver(v), home(std::move(h)), proc(std::move(p)), controller(std::move(c)) {
    parent = home / ("coldbrew-" + std::to_string(::getpid()));
}

cgroup_tree::~cgroup_tree() {
    teardown();
}

std::unique_ptr<cgroup_tree> cgroup_tree::find(std::string& why_not, const fs::path& root,
                                               const fs::path& proc, const std::string& controller,
                                               const probe_fn& probe, bool try_v2) {
    why_not.clear();
    std::string mountinfo, self_cgroup;
    if (auto ec = read_file(proc / "self" / "mountinfo", mountinfo)) {
        why_not = "cannot read " + (proc / "self" / "mountinfo").string() + ": " + ec.message();
        return nullptr;
    }
    if (auto ec = read_file(proc / "self" / "cgroup", self_cgroup)) {
        why_not = "cannot read " + (proc / "self" / "cgroup").string() + ": " + ec.message();
        return nullptr;
    }
    // "0::/path" for cgroup v2; "id:controller,controller:/path" for each v1 hierarchy.
    std::optional<std::string> v2_path, v1_path;
    {
        std::istringstream in(self_cgroup);
        std::string line;
        while (std::getline(in, line)) {
            auto c1 = line.find(':');
            auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
            if (c2 == std::string::npos) continue;
            const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
            const std::string path = line.substr(c2 + 1);
            if (line.compare(0, c1, "0") == 0 && controllers.empty())
                v2_path = path;
            else {
                auto list = split(controllers, ',');
                if (std::find(list.begin(), list.end(), controller) != list.end()) v1_path = path;
            }
        }
    }

    std::vector<std::string> reasons;
    bool saw_v2 = false, saw_v1 = false;
    const auto mounts = read_cgroup_mounts(mountinfo);
    const std::string v1_name = "cgroup v1 " + controller + " hierarchy ";

    auto attempt = [&](version v, const mount_entry& m, const std::optional<std::string>& path,
                       const std::string& where) -> std::unique_ptr<cgroup_tree> {
        if (!path) {
            reasons.push_back(where + ": coldbrew's cgroup is not listed in " +
                              (proc / "self" / "cgroup").string());
            return nullptr;
        }
        auto home = resolve(m, *path);
        if (!home) {
            reasons.push_back(where + ": coldbrew's cgroup " + *path +
                              " is outside the mounted hierarchy");
            return nullptr;
        }
        auto tree = std::make_unique<cgroup_tree>(v, *home, proc, controller);
        std::string reason;
        auto ec = v == version::v2 ? tree->prepare_v2(reason) : tree->prepare_v1(reason);
        if (!ec)
            ec = probe(*tree, (v == version::v2 ? "cgroup v2 " : v1_name) + tree->home.string(),
                       reason);
        if (!ec) return tree;
        reasons.push_back(reason);
        return nullptr;
    };

    for (const auto& m : mounts) {
        if (!try_v2) break;
        if (m.fstype != "cgroup2" || !is_at_or_below(m.mount_point, root)) continue;
        saw_v2 = true;
        if (auto t = attempt(version::v2, m, v2_path, "cgroup v2 " + m.mount_point.string()))
            return t;
        break;
    }
    for (const auto& m : mounts) {
        if (m.fstype != "cgroup" || !is_at_or_below(m.mount_point, root)) continue;
        auto opts = split(m.super_options, ',');
        if (std::find(opts.begin(), opts.end(), controller) == opts.end()) continue;
        saw_v1 = true;
        if (auto t = attempt(version::v1, m, v1_path, v1_name + m.mount_point.string())) return t;
        break;
    }

    if (!saw_v1 && !saw_v2)
        reasons.insert(reasons.begin(), "no " + v1_name + "or cgroup2 mount at or below " +
                                            root.string() + " in " +
                                            (proc / "self" / "mountinfo").string());
    for (std::size_t i = 0; i < reasons.size(); ++i)
        why_not += (i ? "; " : "") + reasons[i];
    return nullptr;
}

std::error_code cgroup_tree::prepare_v1(std::string& reason) {
    const std::string where = "cgroup v1 " + controller + " hierarchy " + home.string();
    std::error_code ec;
    if (!fs::is_directory(home, ec)) {
        reason = where + " does not exist";
        return std::make_error_code(std::errc::no_such_file_or_directory);
    }
    remove_stale_parents(home);
    if (::mkdir(parent.c_str(), 0755) == 0)
        made_parent_ = true;
    else if (errno != EEXIST) {
        ec = last_error();
        reason = where + " is not writable: " + ec.message();
        return ec;
    }
    return {};
}

std::error_code cgroup_tree::prepare_v2(std::string& reason) {
    const std::string where = "cgroup v2 " + home.string();
    const std::string enable = "+" + controller;
    std::string text;
    // Moving a process between groups needs write access to cgroup.procs of their common
    // ancestor, which is this cgroup: without it the subtree was not delegated to us. Then
    // coldbrew's parent group is made (or found).
    auto claim_parent = [&]() -> std::error_code {
        if (::faccessat(AT_FDCWD, (home / "cgroup.procs").c_str(), W_OK, AT_EACCESS) != 0) {
            auto ec = last_error();
            reason = where + " is not delegated to coldbrew (cgroup.procs: " + ec.message() + ")";
            return ec;
        }
        remove_stale_parents(home);
        if (::mkdir(parent.c_str(), 0755) == 0) {
            made_parent_ = true;
        } else if (errno != EEXIST) {
            auto ec = last_error();
            reason = where + " is not writable: " + ec.message();
            return ec;
        }
        return {};
    };
    if (controller == "freezer") {
        // Freezing and killing a group (cgroup.freeze, cgroup.kill) are core files of every
        // cgroup v2 group: no controller to enable, so no "no internal processes" rule either.
        return claim_parent();
    }
    if (auto ec = read_file(home / "cgroup.controllers", text)) {
        reason = where + ": cannot read cgroup.controllers: " + ec.message();
        return ec;
    }
    if (!has_word(text, controller)) {
        reason = where + ": the " + controller + " controller is not available (cgroup.controllers: " +
                 quoted_or_none(text) + ")";
        return std::make_error_code(std::errc::operation_not_supported);
    }
    if (auto ec = claim_parent()) return ec;
    if (auto ec = read_file(home / "cgroup.subtree_control", text)) {
        reason = where + ": cannot read cgroup.subtree_control: " + ec.message();
        return ec;
    }
    if (!has_word(text, controller)) {
        auto ec = write_file(home / "cgroup.subtree_control", enable);
        if (ec.value() == EBUSY) {
            // The "no internal processes" rule: a non-root cgroup that holds processes cannot
            // hand controllers to its children. When everything in it is coldbrew's own, move
            // it into a leaf of our parent; the destructor moves it back.
            for (int pid : list_pids(home)) {
                if (!is_self_or_descendant(proc, pid)) {
                    reason = where + ": cannot enable the " + controller +
                             " controller for child groups: the "
                             "cgroup also holds process " +
                             std::to_string(pid) +
                             ", which is not coldbrew's, and cgroup v2 gives controllers only "
                             "to children of a cgroup without processes; run coldbrew in a "
                             "cgroup of its own (e.g. systemd-run --user --scope -p "
                             "Delegate=yes coldbrew …)";
                    return ec;
                }
            }
            const fs::path leaf = parent / self_leaf_name;
            if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
                ec = last_error();
                reason = where + ": cannot create " + leaf.string() + ": " + ec.message();
                return ec;
            }
            self_leaf_ = leaf;
            if (auto mec = move_all(home, leaf)) {
                reason =
                    where + ": cannot move coldbrew into " + leaf.string() + ": " + mec.message();
                return mec;
            }
            ec = write_file(home / "cgroup.subtree_control", enable);
        }
        if (ec) {
            reason = where + ": cannot enable the " + controller +
                     " controller in cgroup.subtree_control: " + ec.message();
            return ec;
        }
        enabled_in_home_ = true;
    }
    if (auto ec = write_file(parent / "cgroup.subtree_control", enable)) {
        reason = where + ": cannot enable the " + controller + " controller in " +
                 (parent / "cgroup.subtree_control").string() + ": " + ec.message();
        return ec;
    }
    enabled_in_parent_ = true;
    return {};
}

std::error_code cgroup_tree::probe_group(
    const std::string& where, std::string& reason,
    const std::function<std::error_code(const fs::path&)>& set) {
    const fs::path probe = parent / probe_name;
    if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
        auto ec = last_error();
        reason = where + " is not writable: " + ec.message();
        return ec;
    }
    auto ec = set(probe);
    remove_group(probe, rmdir_attempts);
    return ec;
}

std::error_code cgroup_tree::make_group(const std::string& name, bool& created) {
    created = false;
    if (!valid_group_name(name)) return std::make_error_code(std::errc::invalid_argument);
    const fs::path group = parent / name;
    // The parent may have been removed by the tree that made it (another limiter's); make it
    // again, then take it over.
    int rc = ::mkdir(group.c_str(), 0755);
    if (rc != 0 && errno == ENOENT && ::mkdir(parent.c_str(), 0755) == 0) {
        made_parent_ = true;
        rc = ::mkdir(group.c_str(), 0755);
    }
    if (rc == 0)
        created = true;
    else if (errno != EEXIST)
        return last_error();
    return {};
}

std::error_code cgroup_tree::add(const fs::path& group, int pid) {
    return write_file(group / "cgroup.procs", std::to_string(pid));
}

void cgroup_tree::release(const std::string& name) {
    if (!valid_group_name(name)) return;
    remove_group(parent / name, rmdir_attempts);
}

std::string cgroup_tree::description() const {
    std::string d = (ver == version::v1 ? "cgroup v1 " : "cgroup v2 ") + parent.string();
    if (!self_leaf_.empty()) d += " (coldbrew itself moved to " + self_leaf_.string() + ")";
    return d;
}

void cgroup_tree::teardown() {
    // Leftover processes go where they came from; in cgroup v2 coldbrew's own cgroup cannot
    // take processes back while it hands a controller down, so they go to the leaf coldbrew
    // moved itself into (by this tree or the other limiter's), and leave with it.
    const fs::path leaf = parent / self_leaf_name;
    std::error_code ec;
    const bool moved = ver == version::v2 && fs::is_directory(leaf, ec);
    const fs::path evacuate_to = moved ? leaf : home;
    std::vector<fs::path> groups;
    for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code dec;
        if (it->is_directory(dec) && it->path().filename() != self_leaf_name)
            groups.push_back(it->path());
    }
    for (const auto& g : groups) {
        move_all(g, evacuate_to);
        remove_group(g, rmdir_attempts);
    }
    if (moved) {
        // A controller can be disabled in a cgroup only after its children stopped handing
        // it down, and coldbrew can move back only once its old cgroup hands down nothing.
        if (enabled_in_parent_) write_file(parent / "cgroup.subtree_control", "-" + controller);
        if (enabled_in_home_) write_file(home / "cgroup.subtree_control", "-" + controller);
        if (!self_leaf_.empty()) {
            move_all(self_leaf_, home);
            remove_group(self_leaf_, rmdir_attempts);
        }
    }
    // Without a self move, "+<controller>" in coldbrew's cgroup is left as it is: other
    // groups there may have come to use it. The parent goes with the tree that made it: a
    // tree that found it (the other limiter's, the containment's) may still be using it.
    if (made_parent_) remove_group(parent, rmdir_attempts);
}

std::error_code read_control(const fs::path& path, std::string& out) {
    return read_file(path, out);
}
std::error_code write_control(const fs::path& path, const std::string& value) {
    return write_file(path, value);
}
std::vector<int> group_pids(const fs::path& group) { return list_pids(group); }
bool remove_group_dir(const fs::path& group) { return remove_group(group, rmdir_attempts); }

}  // namespace detail

// --- cpu_limiter ---

cpu_limiter::cpu_limiter(std::unique_ptr<detail::cgroup_tree> tree) : tree_(std::move(tree)) {}

cpu_limiter::~cpu_limiter() = default;

std::unique_ptr<cpu_limiter> cpu_limiter::detect(std::string& why_not, const fs::path& root,
                                                 const fs::path& proc) {
    auto tree = detail::cgroup_tree::find(
        why_not, root, proc, "cpu",
        [](detail::cgroup_tree& t, const std::string& where, std::string& reason) {
            // The smallest quota: never above an enclosing group's, so it tests permission
            // only.
            auto ec = t.probe_group(where, reason, [&](const fs::path& g) {
                return set_quota(t.ver, g, static_cast<double>(min_quota_us) / period_us);
            });
            if (ec && reason.empty()) reason = where + ": cannot set a CPU quota: " + ec.message();
            return ec;
        });
    if (!tree) return nullptr;
    return std::unique_ptr<cpu_limiter>(new cpu_limiter(std::move(tree)));
}

std::error_code cpu_limiter::limit(int pid, const std::string& name, double vcpus) {
    if (!(vcpus > 0) || !std::isfinite(vcpus) || pid <= 0)
        return std::make_error_code(std::errc::invalid_argument);
    bool created = false;
    if (auto ec = tree_->make_group(name, created)) return ec;
    const fs::path group = tree_->parent / name;
    auto ec = set_quota(tree_->ver, group, vcpus);
    if (!ec) ec = tree_->add(group, pid);
    if (ec && created) ::rmdir(group.c_str());
    return ec;
}

void cpu_limiter::release(const std::string& name) { tree_->release(name); }

fs::path cpu_limiter::group_path(const std::string& name) const { return tree_->parent / name; }

std::string cpu_limiter::description() const { return tree_->description(); }

// --- memory_limiter ---

namespace {
// Lambda's smallest MemorySize (128 MB): the probe's limit tests permission, not a size.
constexpr std::uint64_t probe_limit_bytes = 128ull << 20;

// The oom_kill counter in memory.events (v2) or memory.oom_control (v1). Before Linux 4.13
// memory.oom_control has no oom_kill line; without swap, hitting the limit is what brings the
// OOM killer, so memory.failcnt counts instead.
void open_oom_file(tree_version v, const fs::path& group, reread_file& file, bool& is_count) {
    is_count = false;
    if (v == tree_version::v2) {
        file = reread_file((group / "memory.events").string());
        return;
    }
    file = reread_file((group / "memory.oom_control").string());
    std::string text;
    if (file.read(text) && counter(text, "oom_kill")) return;
    file = reread_file((group / "memory.failcnt").string());
    is_count = true;
}
}  // namespace

memory_limiter::memory_limiter(std::unique_ptr<detail::cgroup_tree> tree)
    : tree_(std::move(tree)) {}

memory_limiter::~memory_limiter() = default;

std::unique_ptr<memory_limiter> memory_limiter::detect(std::string& why_not, const fs::path& root,
                                                       const fs::path& proc) {
    auto tree = detail::cgroup_tree::find(
        why_not, root, proc, "memory",
        [](detail::cgroup_tree& t, const std::string& where, std::string& reason) {
            auto ec = t.probe_group(where, reason, [&](const fs::path& g) {
                return set_memory_limit(t.ver, g, probe_limit_bytes);
            });
            if (ec && reason.empty())
                reason = where + ": cannot set a memory limit: " + ec.message();
            return ec;
        });
    if (!tree) return nullptr;
    return std::unique_ptr<memory_limiter>(new memory_limiter(std::move(tree)));
}

std::error_code memory_limiter::limit(int pid, const std::string& name, std::uint64_t bytes) {
    if (bytes == 0 || pid <= 0) return std::make_error_code(std::errc::invalid_argument);
    bool created = false;
    if (auto ec = tree_->make_group(name, created)) return ec;
    const fs::path group = tree_->parent / name;
    auto ec = set_memory_limit(tree_->ver, group, bytes);
    if (!ec) {
        // Counted before the process goes in: a group that existed keeps its old kills.
        if (!groups_.count(name)) {
            auto& g = groups_[name];
            open_oom_file(tree_->ver, group, g.oom, g.oom_is_count);
            g.peak = reread_file((group / (tree_->ver == tree_version::v2
                                               ? "memory.peak"
                                               : "memory.max_usage_in_bytes")).string());
            g.oom_at_start = oom_count(g);
        }
        ec = tree_->add(group, pid);
    }
    if (ec && created) {
        ::rmdir(group.c_str());
        groups_.erase(name);
    }
    return ec;
}

std::uint64_t memory_limiter::oom_count(const group& g) const {
    std::string text;
    if (!g.oom.read(text)) return 0;
    return (g.oom_is_count ? parse_number(text) : counter(text, "oom_kill")).value_or(0);
}

bool memory_limiter::oom_killed(const std::string& name) const {
    auto it = groups_.find(name);
    if (it == groups_.end()) return false;
    return oom_count(it->second) > it->second.oom_at_start;
}

std::optional<std::uint64_t> memory_limiter::peak_bytes(const std::string& name) const {
    auto it = groups_.find(name);
    if (it == groups_.end()) return std::nullopt;
    std::string text;
    if (!it->second.peak.read(text)) return std::nullopt;
    return parse_number(text);
}

void memory_limiter::release(const std::string& name) {
    groups_.erase(name);
    tree_->release(name);
}

fs::path memory_limiter::group_path(const std::string& name) const { return tree_->parent / name; }

std::string memory_limiter::description() const { return tree_->description(); }

}  // namespace coldbrew::supervisor
