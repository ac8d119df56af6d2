#include "emulator/functions/launcher.hpp"

#include "emulator/config/config_error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <set>

namespace coldbrew::functions {

namespace {

bool is_executable_file(const std::filesystem::path& p) {
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// "3.12.1" → {3, 12, 1}; "v22.11.0" → {22, 11, 0}. nullopt for anything else ("3.13.0rc1",
// "3.13.0t", "system"): only final releases are candidates.
std::optional<std::vector<int>> numeric_version(std::string_view name) {
    if (!name.empty() && name[0] == 'v') name.remove_prefix(1);
    std::vector<int> out;
    std::size_t i = 0;
    while (i < name.size()) {
        std::size_t j = i;
        while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
        if (j == i || j - i > 6) return std::nullopt;
        out.push_back(std::stoi(std::string(name.substr(i, j - i))));
        if (j == name.size()) break;
        if (name[j] != '.') return std::nullopt;
        i = j + 1;
        if (i == name.size()) return std::nullopt;
    }
    if (out.empty()) return std::nullopt;
    return out;
}

// "3.12" against {3, 12, 1}: the wanted components are a prefix.
bool version_is(const std::vector<int>& v, const std::vector<int>& wanted) {
    return v.size() >= wanted.size() && std::equal(wanted.begin(), wanted.end(), v.begin());
}

bool version_text_is(const std::string& text, const std::string& wanted) {
    auto v = numeric_version(text);
    auto w = numeric_version(wanted);
    return v && w && version_is(*v, *w);
}

std::vector<std::string> split_path(const std::string& path_env) {
    std::vector<std::string> dirs;
    std::size_t start = 0;
    while (start <= path_env.size()) {
        auto end = path_env.find(':', start);
        if (end == std::string::npos) end = path_env.size();
        std::string dir = path_env.substr(start, end - start);
        dirs.push_back(dir.empty() ? "." : dir);
        start = end + 1;
    }
    return dirs;
}

// pyenv and asdf put shims in a directory named `shims`: scripts that pick a version by the
// working directory, so the binary behind one is not a fixed version.
bool in_shims_dir(const std::filesystem::path& file) {
    return file.parent_path().filename() == "shims";
}

// What a runtime identifier asks for.
struct wanted_runtime {
    std::string language;  // "python", "node"
    std::string version;   // "3.12", "22"
};

std::optional<wanted_runtime> wanted_of(const std::string& runtime) {
    if (starts_with(runtime, "python")) {
        auto v = runtime.substr(6);
        if (numeric_version(v) && numeric_version(v)->size() == 2) return wanted_runtime{"python", v};
        return std::nullopt;
    }
    if (starts_with(runtime, "nodejs")) {
        auto v = runtime.substr(6);
        if (v.size() > 2 && v.substr(v.size() - 2) == ".x") v.resize(v.size() - 2);
        // nodejs4.3, nodejs8.10: the minor is part of the identifier; the major is what counts.
        if (auto n = numeric_version(v)) return wanted_runtime{"node", std::to_string(n->front())};
        return std::nullopt;
    }
    return std::nullopt;
}

class resolver {
public:
    resolver(const std::string& runtime, const wanted_runtime& w, const host_view& host)
        : host_(host), w_(w), wanted_(*numeric_version(w.version)) {
        out_.runtime = runtime;
        out_.language = w.language;
        out_.wanted = w.version;
        path_ = split_path(host_.env("PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
        home_ = host_.env("HOME");
    }

    interpreter run(const std::map<std::string, config::settings::runtime_interpreter>& configured) {
        if (auto it = configured.find(out_.runtime); it != configured.end()) {
            out_.file = it->second.file;
            out_.origin = "coldbrew.yaml runtimes." + out_.runtime;
            // Another language's interpreter cannot run this runtime's bootstrap at all: an
            // error, where another version of the right one is only pointed out.
            if (auto text = host_.version_output(out_.file); text && !speaks_language(*text))
                throw config::config_error(
                    it->second.where, "runtimes." + out_.runtime,
                    it->second.file.string() + " is not a " +
                        (python() ? std::string("Python") : std::string("Node.js")) +
                        " interpreter (it says '" + first_line(*text) + "'); " + out_.runtime +
                        " needs " + w_.language + " " + w_.version);
            out_.version = probe(out_.file).value_or("");
            out_.matches = true;  // the user's choice; a different version is only pointed out
            if (!out_.version.empty() && !version_text_is(out_.version, w_.version))
                out_.warning = out_.runtime + ": runtimes." + out_.runtime + " in coldbrew.yaml is " +
                               shown(out_.version) + " (" + out_.file.string() + "), not " +
                               w_.language + " " + w_.version;
            return out_;
        }
        if (versioned_on_path() || (python() ? pyenv() || asdf("python")
                                             : nvm() || fnm() || volta() || asdf("nodejs")))
            return out_;
        unversioned_on_path();
        return out_;
    }

private:
    bool python() const { return w_.language == "python"; }
    std::string unversioned_name() const { return python() ? "python3" : "node"; }
    std::string shown(const std::string& version) const {
        return python() ? "python " + version : "node v" + version;
    }

    // `--version` output as each language's interpreter words it: "Python 3.12.1", "v20.20.2".
    bool speaks_language(const std::string& text) const {
        return python() ? text.find("Python") != std::string::npos
                        : text.find_first_not_of(" \t\n") != std::string::npos &&
                              text[text.find_first_not_of(" \t\n")] == 'v';
    }
    static std::string first_line(const std::string& text) {
        return text.substr(0, text.find('\n'));
    }

    std::optional<std::string> probe(const std::filesystem::path& file) const {
        auto text = host_.version_output(file);
        return text ? parse_version(*text) : std::nullopt;
    }

    std::optional<std::filesystem::path> root(const char* var, const char* under_home) const {
        if (auto v = host_.env(var)) return std::filesystem::path(*v);
        if (home_) return std::filesystem::path(*home_) / under_home;
        return std::nullopt;
    }

    bool take(std::filesystem::path file, std::string version, std::string origin) {
        out_.file = std::move(file);
        out_.version = std::move(version);
        out_.origin = std::move(origin);
        out_.matches = true;
        return true;
    }

    bool versioned_on_path() {
        std::vector<std::string> names;
        if (python())
            names = {"python" + w_.version};
        else
            names = {"node" + w_.version, "node-" + w_.version};
        for (const auto& dir : path_) {
            for (const auto& name : names) {
                const auto file = std::filesystem::path(dir) / name;
                if (in_shims_dir(file) || !host_.is_executable(file)) continue;
                // A versioned name says what it should be; asking confirms it.
                auto v = probe(file);
                if (v && version_text_is(*v, w_.version)) return take(file, *v, "PATH (" + name + ")");
            }
        }
        return false;
    }

    // The highest final release in `dir` whose name is the wanted version (optionally with a
    // leading v), with an executable at `dir/<name>/<bin…>`; the first of `bins` that exists.
    bool highest_in(const std::filesystem::path& dir, const std::vector<std::string>& bins,
                    const std::string& origin) {
        std::optional<std::vector<int>> best;
        std::filesystem::path best_file;
        std::string best_name;
        for (const auto& name : host_.subdirectories(dir)) {
            auto v = numeric_version(name);
            if (!v || !version_is(*v, wanted_) || (best && *v <= *best)) continue;
            for (const auto& bin : bins) {
                const auto file = dir / name / bin;
                if (!host_.is_executable(file)) continue;
                best = v;
                best_file = file;
                best_name = name;
                break;
            }
        }
        if (!best) return false;
        return take(best_file, best_name[0] == 'v' ? best_name.substr(1) : best_name, origin);
    }

    std::vector<std::string> python_bins() const {
        return {"bin/python" + w_.version, "bin/python3"};
    }

    bool pyenv() {
        auto r = root("PYENV_ROOT", ".pyenv");
        return r && highest_in(*r / "versions", python_bins(), "pyenv");
    }
    bool asdf(const std::string& plugin) {
        auto r = root("ASDF_DATA_DIR", ".asdf");
        if (!r) return false;
        return highest_in(*r / "installs" / plugin,
                          python() ? python_bins() : std::vector<std::string>{"bin/node"}, "asdf");
    }
    bool nvm() {
        auto r = root("NVM_DIR", ".nvm");
        return r && highest_in(*r / "versions" / "node", {"bin/node"}, "nvm");
    }
    bool fnm() {
        std::vector<std::filesystem::path> roots;
        if (auto v = host_.env("FNM_DIR")) roots.emplace_back(*v);
        if (auto x = host_.env("XDG_DATA_HOME")) roots.push_back(std::filesystem::path(*x) / "fnm");
        if (home_) {
            roots.push_back(std::filesystem::path(*home_) / ".local/share/fnm");
            roots.push_back(std::filesystem::path(*home_) / ".fnm");
        }
        for (const auto& r : roots)
            if (highest_in(r / "node-versions", {"installation/bin/node"}, "fnm")) return true;
        return false;
    }
    bool volta() {
        auto r = root("VOLTA_HOME", ".volta");
        return r && highest_in(*r / "tools" / "image" / "node", {"bin/node"}, "volta");
    }

    // A shim runs some concrete version; spawn that one, so the version does not depend on
    // the working directory the function starts in.
    std::filesystem::path concrete(const std::filesystem::path& shim, const std::string& version) const {
        const std::string name = shim.filename().string();
        std::vector<std::filesystem::path> candidates;
        if (auto r = root("PYENV_ROOT", ".pyenv"); r && python())
            candidates.push_back(*r / "versions" / version / "bin" / name);
        if (auto r = root("ASDF_DATA_DIR", ".asdf"))
            candidates.push_back(*r / "installs" / (python() ? "python" : "nodejs") / version /
                                 "bin" / name);
        for (const auto& c : candidates)
            if (host_.is_executable(c)) return c;
        return shim;
    }

    void unversioned_on_path() {
        const std::string name = unversioned_name();
        const std::string looked =
            python() ? "PATH, pyenv, asdf" : "PATH, nvm, fnm, volta, asdf";
        const std::string hint = "set runtimes." + out_.runtime + " in coldbrew.yaml";
        for (const auto& dir : path_) {
            const auto file = std::filesystem::path(dir) / name;
            if (!host_.is_executable(file)) continue;
            out_.version = probe(file).value_or("");
            out_.file = in_shims_dir(file) && !out_.version.empty() ? concrete(file, out_.version)
                                                                    : file;
            out_.origin = "PATH (" + name + ")";
            out_.matches = !out_.version.empty() && version_text_is(out_.version, w_.version);
            if (!out_.matches)
                out_.warning = out_.runtime + ": running on " +
                               (out_.version.empty() ? name + " of unknown version"
                                                     : shown(out_.version)) +
                               " from " + out_.file.string() + "; no " + w_.language + " " +
                               w_.version + " found (looked in " + looked + "); " + hint;
            return;
        }
        out_.origin = "not found";
        out_.warning = out_.runtime + ": no " + w_.language + " " + w_.version + " and no `" +
                       name + "` found (looked in " + looked + "); " + hint;
    }

    const host_view& host_;
    wanted_runtime w_;
    std::vector<int> wanted_;
    std::vector<std::string> path_;
    std::optional<std::string> home_;
    interpreter out_;
};

}  // namespace

std::optional<std::string> parse_version(const std::string& text) {
    // A dotted number standing on its own, or after a "v": "Python 3.11.7", "v20.20.2".
    static const std::regex version(R"((?:^|[^0-9A-Za-z.])v?([0-9]+(?:\.[0-9]+)+))");
    std::smatch m;
    if (!std::regex_search(text, m, version)) return std::nullopt;
    return m[1].str();
}

interpreter resolve_interpreter(
    const std::string& runtime,
    const std::map<std::string, config::settings::runtime_interpreter>& configured,
    const host_view& host) {
    auto w = wanted_of(runtime);
    if (!w) {
        interpreter i;
        i.runtime = runtime;
        i.origin = "bootstrap";
        i.matches = true;
        return i;
    }
    return resolver(runtime, *w, host).run(configured);
}

std::vector<interpreter> resolve_interpreters(config::stack& stack, const host_view& host) {
    std::map<std::string, interpreter> by_runtime;
    std::vector<interpreter> out;
    std::set<std::string> warned;
    for (auto& fn : stack.functions) {
        auto it = by_runtime.find(fn.runtime);
        if (it == by_runtime.end())
            it = by_runtime
                     .emplace(fn.runtime,
                              resolve_interpreter(fn.runtime, stack.settings.runtimes, host))
                     .first;
        const interpreter& i = it->second;
        fn.interpreter = i.file.string();
        if (!i.warning.empty() && warned.insert(i.warning).second)
            stack.warnings.push_back(i.warning);
        out.push_back(i);
    }
    return out;
}

std::string describe(const interpreter& i) {
    if (i.language.empty()) return "bootstrap (" + i.runtime + ")";
    if (i.file.empty()) return "nothing found for " + i.runtime;
    std::string v = i.version.empty() ? "of unknown version"
                    : i.language == "node" ? "v" + i.version
                                           : i.version;
    std::string s = i.language + " " + v + "  " + i.file.string() + "  (" + i.origin;
    if (!i.matches || (!i.version.empty() && !version_text_is(i.version, i.wanted)))
        s += "; not " + i.language + " " + i.wanted;
    return s + ")";
}

// ---- system_host -----------------------------------------------------------------------

system_host::system_host(const coldbrew::clock& clock, std::chrono::milliseconds probe_timeout)
    : clock_(clock), probe_timeout_(probe_timeout) {}

std::optional<std::string> system_host::env(const std::string& name) const {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

bool system_host::is_executable(const std::filesystem::path& file) const {
    return is_executable_file(file);
}

std::vector<std::string> system_host::subdirectories(const std::filesystem::path& dir) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_directory(e2)) out.push_back(it->path().filename().string());
    }
    return out;
}

std::optional<std::string> system_host::version_output(const std::filesystem::path& file) const {
    const std::string key = file.string();
    if (auto it = versions_.find(key); it != versions_.end()) return it->second;
    auto& slot = versions_[key];

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return slot;
    const std::string arg0 = key, arg1 = "--version";
    char* argv[] = {const_cast<char*>(arg0.c_str()), const_cast<char*>(arg1.c_str()), nullptr};
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return slot;
    }
    if (pid == 0) {
        // Its own process group, so a shim's children are killed with it on a timeout.
        ::setpgid(0, 0);
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        ::execv(arg0.c_str(), argv);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from here: no race with the child's own call
    ::close(fds[1]);
    std::string text;
    const auto deadline = clock_.steady() + probe_timeout_;
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.steady());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        char buf[512];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (text.size() < 4096) text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (timed_out) ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) slot = text;
    return slot;
}

// ---- launching -------------------------------------------------------------------------

std::string find_executable(const std::string& name, const std::string& path_env) {
    if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
    for (const auto& dir : split_path(path_env)) {
        auto candidate = std::filesystem::path(dir) / name;
        if (is_executable_file(candidate)) return candidate.string();
    }
    return "";
}

supervisor::spawn_options launcher_for(const config::function& fn,
                                       const std::filesystem::path& runtimes_dir) {
    supervisor::spawn_options o;
    const char* path = std::getenv("PATH");
    std::string path_env = path ? path : "/usr/local/bin:/usr/bin:/bin";
    if (starts_with(fn.runtime, "provided")) {
        // Custom runtimes: bootstrap from the code directory, else from a layer (/opt) [CUSTOM].
        std::vector<std::filesystem::path> candidates{fn.code_dir / "bootstrap"};
        // The last layer's bootstrap is the one /opt holds: later layers overwrite earlier ones.
        for (auto it = fn.layer_dirs.rbegin(); it != fn.layer_dirs.rend(); ++it)
            candidates.push_back(*it / "bootstrap");
        for (const auto& c : candidates) {
            if (is_executable_file(c)) {
                o.file = c.string();
                o.args = {o.file};
                return o;
            }
        }
        std::string list;
        for (const auto& c : candidates) list += (list.empty() ? "" : " ") + c.string();
        o.args = {"Couldn't find valid bootstrap(s): [" + list + "]"};
        return o;
    }
    // The resolution pass's answer when there was one; else the first on PATH, as before it.
    auto interpreter_or = [&](const char* name) {
        return fn.interpreter.empty() ? find_executable(name, path_env)
                                      : find_executable(fn.interpreter, path_env);
    };
    if (starts_with(fn.runtime, "nodejs")) {
        o.file = interpreter_or("node");
        if (o.file.empty()) {
            o.args = {"runtime " + fn.runtime + " needs `node` on PATH"};
            return o;
        }
        // V8's heap sized from the function's memory as the bootstrap script of Lambda's
        // Node.js base images sizes it (public.ecr.aws/lambda/nodejs, /var/runtime/bootstrap):
        // a tenth for the young generation, half of that per semi-space, the rest for the old
        // generation; with gc() exposed and 80 KB of HTTP headers allowed. A handler that
        // runs out of heap does so at Lambda's size, and a small function's environment keeps
        // a small young generation (V8's own default is 16 MB per semi-space).
        const int new_space_mb = std::max(1, fn.memory_mb / 10);
        o.args = {o.file,
                  "--expose-gc",
                  "--max-http-header-size=81920",
                  "--max-semi-space-size=" + std::to_string(std::max(1, new_space_mb / 2)),
                  "--max-old-space-size=" + std::to_string(std::max(16, fn.memory_mb - new_space_mb)),
                  (runtimes_dir / "node" / "bootstrap.cjs").string()};
        return o;
    }
    if (starts_with(fn.runtime, "python3")) {
        o.file = interpreter_or("python3");
        if (o.file.empty()) {
            o.args = {"runtime " + fn.runtime + " needs `python3` on PATH"};
            return o;
        }
        // -u: unbuffered, so print() lines reach the log as they happen, as on Lambda.
        o.args = {o.file, "-u", (runtimes_dir / "python" / "bootstrap.py").string()};
        return o;
    }
    o.args = {"runtime " + fn.runtime + " is not supported"};
    return o;
}

}  // namespace coldbrew::functions
