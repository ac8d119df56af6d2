#include "emulator/supervisor/containment.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "emulator/supervisor/cgroup.hpp"

namespace coldbrew::supervisor {

namespace fs = std::filesystem;

namespace {

// Killing is asynchronous: a SIGKILLed process leaves cgroup.procs once it has exited, which
// takes microseconds to milliseconds; a group that is still listed after this long is left
// for a later attempt.
constexpr int empty_rounds = 1000;
constexpr auto empty_pause = std::chrono::milliseconds(1);
// A tree that keeps forking faster than it is stopped is given this many rounds.
constexpr int tree_rounds = 64;

bool all_digits(const char* s) {
    if (!*s) return false;
    for (; *s; ++s)
        if (*s < '0' || *s > '9') return false;
    return true;
}

std::vector<int> all_pids(const fs::path& proc) {
    std::vector<int> pids;
    DIR* d = ::opendir(proc.c_str());
    if (!d) return pids;
    while (auto* e = ::readdir(d))
        if (all_digits(e->d_name)) pids.push_back(std::atoi(e->d_name));
    ::closedir(d);
    return pids;
}

// "pid (comm) state ppid … starttime(22) …"; comm may hold spaces and parentheses.
bool read_stat(const fs::path& proc, int pid, int& ppid, char& state,
               unsigned long long& start) {
    std::string text;
    if (detail::read_control(proc / std::to_string(pid) / "stat", text)) return false;
    auto close = text.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream in(text.substr(close + 1));
    in >> state >> ppid;
    std::string skip;
    // Fields 5..21 lie between ppid (4) and starttime (22).
    for (int i = 5; i < 22 && in; ++i) in >> skip;
    start = 0;
    in >> start;
    return static_cast<bool>(in) || start != 0;
}

std::map<int, int> parent_links(const fs::path& proc) {
    std::map<int, int> links;
    for (int pid : all_pids(proc)) {
        int ppid = 0;
        char state = 0;
        unsigned long long start = 0;
        if (read_stat(proc, pid, ppid, state, start)) links[pid] = ppid;
    }
    return links;
}

bool environ_has(const fs::path& proc, int pid, const std::vector<std::string>& marks) {
    std::string env;
    if (detail::read_control(proc / std::to_string(pid) / "environ", env)) return false;
    std::size_t start = 0;
    while (start < env.size()) {
        auto end = env.find('\0', start);
        if (end == std::string::npos) end = env.size();
        const std::string_view entry(env.data() + start, end - start);
        for (const auto& m : marks)
            if (!m.empty() && entry == m) return true;
        start = end + 1;
    }
    return false;
}

}  // namespace

unsigned long long start_ticks(int pid, const fs::path& proc) {
    int ppid = 0;
    char state = 0;
    unsigned long long start = 0;
    if (!read_stat(proc, pid, ppid, state, start)) return 0;
    return start;
}

std::vector<int> children_of(int pid, const fs::path& proc) {
    std::vector<int> kids;
    const fs::path tasks = proc / std::to_string(pid) / "task";
    std::error_code ec;
    bool any_file = false;
    for (fs::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
        std::string text;
        if (detail::read_control(it->path() / "children", text)) continue;
        any_file = true;
        std::istringstream in(text);
        int k;
        while (in >> k) kids.push_back(k);
    }
    if (!any_file)
        for (const auto& [p, pp] : parent_links(proc))
            if (pp == pid) kids.push_back(p);
    std::sort(kids.begin(), kids.end());
    kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    return kids;
}

std::size_t kill_tree(const std::vector<int>& roots, const fs::path& proc) {
    std::set<int> victims;
    const int self = static_cast<int>(::getpid());
    for (int r : roots)
        if (r > 1 && r != self && ::kill(r, SIGSTOP) == 0) victims.insert(r);
    if (victims.empty()) return 0;
    for (int round = 0; round < tree_rounds; ++round) {
        bool grew = false;
        for (const auto& [pid, ppid] : parent_links(proc)) {
            if (victims.count(pid) || !victims.count(ppid) || pid == self) continue;
            // Stopped, it can no longer fork; its children appear in the next round.
            ::kill(pid, SIGSTOP);
            victims.insert(pid);
            grew = true;
        }
        if (!grew) break;
    }
    for (int pid : victims) ::kill(pid, SIGKILL);
    return victims.size();
}

std::vector<int> marked_processes(const std::vector<std::string>& marks,
                                  unsigned long long not_before_ticks, const fs::path& proc) {
    std::vector<int> found;
    if (marks.empty()) return found;
    const int self = static_cast<int>(::getpid());
    for (int pid : all_pids(proc)) {
        if (pid == self || !environ_has(proc, pid, marks)) continue;
        if (not_before_ticks && start_ticks(pid, proc) < not_before_ticks) continue;
        found.push_back(pid);
    }
    return found;
}

std::size_t kill_cgroup(const fs::path& group, bool v2) {
    std::error_code ec;
    if (!fs::is_directory(group, ec)) return 0;
    if (v2 && !detail::write_control(group / "cgroup.kill", "1")) {
        for (int i = 0; i < empty_rounds; ++i) {
            if (detail::group_pids(group).empty()) return 0;
            std::this_thread::sleep_for(empty_pause);
        }
        return detail::group_pids(group).size();
    }
    // Frozen, nothing in the group can fork while its pids are read and killed; a killed
    // process dies when it is thawed.
    const fs::path freeze = group / (v2 ? "cgroup.freeze" : "freezer.state");
    const std::string frozen = v2 ? "1" : "FROZEN", thawed = v2 ? "0" : "THAWED";
    for (int i = 0; i < empty_rounds; ++i) {
        auto pids = detail::group_pids(group);
        if (pids.empty()) return 0;
        const bool froze = !detail::write_control(freeze, frozen);
        for (int pid : pids) ::kill(pid, SIGKILL);
        if (froze) detail::write_control(freeze, thawed);
        std::this_thread::sleep_for(empty_pause);
    }
    return detail::group_pids(group).size();
}

// --- containment ---

containment::containment(mode m, std::unique_ptr<detail::cgroup_tree> tree, std::string why)
    : mode_(m), tree_(std::move(tree)), why_(std::move(why)) {}

containment::~containment() {
    if (!tree_) return;
    std::error_code ec;
    std::vector<fs::path> groups;
    for (fs::directory_iterator it(tree_->parent, ec), end; !ec && it != end; it.increment(ec)) {
        const auto name = it->path().filename().string();
        std::error_code dec;
        if (it->is_directory(dec) && name != "coldbrew.self" && name != "coldbrew.probe")
            groups.push_back(it->path());
    }
    for (const auto& g : groups) {
        kill_cgroup(g, mode_ == mode::cgroup_v2);
        detail::remove_group_dir(g);
    }
    // The tree's own teardown removes the parent.
}

std::unique_ptr<containment> containment::detect(const std::string& request, const fs::path& root,
                                                 const fs::path& proc) {
    std::string why;
    if (request != "subreaper") {
        const auto probe = [](detail::cgroup_tree& t, const std::string& where,
                              std::string& reason) {
            return t.probe_group(where, reason, [&](const fs::path& g) {
                // A group that can be killed or frozen (v2), frozen (v1 freezer), or at least
                // listed and walked (another v1 hierarchy) contains.
                std::error_code ec;
                if (t.ver == detail::cgroup_tree::version::v2) {
                    if (!fs::exists(g / "cgroup.kill", ec) && !fs::exists(g / "cgroup.freeze", ec))
                        ec = std::make_error_code(std::errc::operation_not_supported);
                } else if (t.controller == "freezer") {
                    ec = detail::write_control(g / "freezer.state", "THAWED");
                } else if (!fs::exists(g / "cgroup.procs", ec)) {
                    ec = std::make_error_code(std::errc::no_such_file_or_directory);
                }
                if (ec) reason = where + ": cannot freeze, kill or list a group: " + ec.message();
                return ec;
            });
        };
        auto tree = detail::cgroup_tree::find(why, root, proc, "freezer", probe,
                                              request != "cgroup-v1");
        if (!tree) {
            // Without a freezer, a v1 hierarchy every cgroup v1 system mounts still lets the
            // group be walked until it is empty.
            std::string why_pids;
            tree = detail::cgroup_tree::find(why_pids, root, proc, "pids", probe, false);
            if (!tree) why += "; " + why_pids;
        }
        if (tree) {
            const auto m = tree->ver == detail::cgroup_tree::version::v2 ? mode::cgroup_v2
                                                                         : mode::cgroup_v1;
            return std::unique_ptr<containment>(new containment(m, std::move(tree), ""));
        }
    } else {
        why = "COLDBREW_CONTAINMENT=subreaper";
    }
#ifdef __linux__
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
        return std::unique_ptr<containment>(new containment(mode::subreaper, nullptr, why));
    why += std::string(why.empty() ? "" : "; ") + "prctl(PR_SET_CHILD_SUBREAPER): " +
           std::error_code(errno, std::system_category()).message();
#endif
    return std::unique_ptr<containment>(new containment(mode::none, nullptr, why));
}

std::string containment::description() const {
    switch (mode_) {
    case mode::cgroup_v2: {
        std::error_code ec;
        const bool has_kill = fs::exists(tree_->home / "cgroup.kill", ec) ||
                              fs::exists(tree_->parent / "cgroup.kill", ec);
        return "Containment: cgroup v2 " + tree_->parent.string() +
               (has_kill ? " (cgroup.kill)" : " (cgroup.freeze)") +
               "; every process an environment starts ends with it";
    }
    case mode::cgroup_v1:
        return "Containment: cgroup v1 " + tree_->controller + " " + tree_->parent.string() +
               (tree_->controller == "freezer" ? "" : " (no freezer: walked until empty)") +
               "; every process an environment starts ends with it";
    case mode::subreaper:
        return "Containment: child subreaper (" +
               (why_.empty() ? std::string("no writable cgroup") : why_) +
               "); every process an environment starts ends with it, unless it clears its "
               "environment and detaches";
    case mode::none: break;
    }
    return "Containment: process groups only (" + why_ +
           "); a handler's detached processes may outlive it";
}

std::error_code containment::adopt(int pid, const std::string& name) {
    if (!tree_) return {};
    if (pid <= 0) return std::make_error_code(std::errc::invalid_argument);
    bool created = false;
    if (auto ec = tree_->make_group(name, created)) return ec;
    if (mode_ == mode::cgroup_v1 && tree_->controller == "freezer")
        detail::write_control(tree_->parent / name / "freezer.state", "THAWED");
    return tree_->add(tree_->parent / name, pid);
}

void containment::end(int pid, const std::string& name, const std::string& mark) {
    // The tree first: in subreaper mode it is the only way to the live descendants, and in
    // a cgroup mode it covers a process a limiter moved to a group of another hierarchy.
    if (pid > 0) kill_tree({pid});
    if (tree_ && !name.empty()) {
        kill_cgroup(tree_->parent / name, mode_ == mode::cgroup_v2);
        return;
    }
    if (mode_ != mode::subreaper || mark.empty()) return;
    // Only the marked ones among coldbrew's children: the others belong to other
    // environments or to coldbrew itself.
    std::vector<int> marked;
    for (int child : children_of(static_cast<int>(::getpid())))
        if (environ_has("/proc", child, {mark})) marked.push_back(child);
    if (!marked.empty()) kill_tree(marked);
}

void containment::release(const std::string& name) {
    if (tree_) tree_->release(name);
}

fs::path containment::group_path(const std::string& name) const {
    return tree_ ? tree_->parent / name : fs::path();
}

void containment::reap_orphans(const std::vector<int>& known, bool kill_all) {
    if (mode_ != mode::subreaper) return;
    std::vector<int> orphans;
    for (int child : children_of(static_cast<int>(::getpid())))
        if (std::find(known.begin(), known.end(), child) == known.end()) orphans.push_back(child);
    if (kill_all && !orphans.empty()) kill_tree(orphans);
    // Killed ones exit within moments; a bounded wait keeps shutdown from hanging on one
    // that cannot be killed.
    for (int pid : orphans) {
        int status = 0;
        for (int i = 0; i < (kill_all ? empty_rounds : 1); ++i) {
            const auto r = ::waitpid(pid, &status, WNOHANG);
            if (r != 0) break;
            if (kill_all) std::this_thread::sleep_for(empty_pause);
        }
    }
}

}  // namespace coldbrew::supervisor
