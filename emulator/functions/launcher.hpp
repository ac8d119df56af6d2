#pragma once
// Which binary a function's runtime starts, and why.
//
// Lambda runs a python3.12 function on Python 3.12 and a nodejs22.x function on Node.js 22
// ("Lambda runtimes", docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html: one runtime
// identifier per major language release). coldbrew looks for that version on this machine
// once per function at start (resolve_interpreters), before anything listens; the
// environments then spawn what it found (config::function::interpreter, launcher_for).
//
// Resolution of a runtime (resolve_interpreter), first match wins:
//   1. coldbrew.yaml `runtimes.<id>` (config::settings::runtimes);
//   2. a versioned name on PATH: python3.12; node22 or node-22 (Node.js has no versioned
//      binary upstream; Fedora's parallel-installable nodejs-22 package installs
//      /usr/bin/node-22, Fedora's "NodejsRepackaging" change). Shims (a `shims` directory:
//      pyenv, asdf) are skipped here, the version managers' own trees are read instead;
//   3. version managers, the highest patch of the wanted version: Python from pyenv
//      ($PYENV_ROOT or ~/.pyenv: versions/3.12.*/bin/python3.12) and asdf ($ASDF_DATA_DIR or
//      ~/.asdf: installs/python/3.12.*/bin/python3.12); Node.js from nvm ($NVM_DIR or ~/.nvm:
//      versions/node/v22.*/bin/node), fnm ($FNM_DIR, else ~/.local/share/fnm and ~/.fnm:
//      node-versions/v22.*/installation/bin/node), volta ($VOLTA_HOME or ~/.volta:
//      tools/image/node/22.*/bin/node) and asdf (installs/nodejs/22.*/bin/node);
//   4. the unversioned python3 / node on PATH when its version is the runtime's (a pyenv or
//      asdf shim is replaced by the concrete binary of the version it runs);
//   5. otherwise that unversioned one, with a warning naming both versions.
// Pre-release and free-threaded builds (3.13.0rc1, 3.13.0t) are not candidates.

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/supervisor/supervisor.hpp"

namespace coldbrew::functions {

// What resolution may look at: the environment, the file system, and what a binary says its
// version is. system_host is the real one; tests give fake trees without running anything.
class host_view {
public:
    virtual ~host_view() = default;
    // An environment variable; nullopt when unset or empty.
    virtual std::optional<std::string> env(const std::string& name) const = 0;
    // True for a regular file (symlinks followed) this process may execute.
    virtual bool is_executable(const std::filesystem::path& file) const = 0;
    // Names of the directories directly in `dir`, in any order; none when it is missing.
    virtual std::vector<std::string> subdirectories(const std::filesystem::path& dir) const = 0;
    // What `<file> --version` printed (stdout and stderr together); nullopt when it could not
    // run, did not exit 0, or did not finish in time.
    virtual std::optional<std::string> version_output(const std::filesystem::path& file) const = 0;
};

// The process's environment and file system. A binary is run at most once (the answer is
// cached per path) and is killed, with its process group, after `probe_timeout`; the clock
// is read only for that deadline.
class system_host final : public host_view {
public:
    explicit system_host(const coldbrew::clock& clock,
                         std::chrono::milliseconds probe_timeout = std::chrono::seconds(5));
    std::optional<std::string> env(const std::string& name) const override;
    bool is_executable(const std::filesystem::path& file) const override;
    std::vector<std::string> subdirectories(const std::filesystem::path& dir) const override;
    std::optional<std::string> version_output(const std::filesystem::path& file) const override;

private:
    const coldbrew::clock& clock_;
    std::chrono::milliseconds probe_timeout_;
    mutable std::map<std::string, std::optional<std::string>> versions_;
};

// The first dotted number in `text` ("Python 3.11.7" → "3.11.7", "v20.20.2" → "20.20.2");
// nullopt when there is none.
std::optional<std::string> parse_version(const std::string& text);

struct interpreter {
    std::string runtime;         // "python3.12"
    std::string language;        // "python" or "node"; "" for provided* and unknown ids
    std::string wanted;          // the version the runtime needs: "3.12", "22"
    std::filesystem::path file;  // what the runtime starts; empty: nothing found
    std::string version;         // "3.12.1", "20.20.2"; "" when unknown
    // Why this binary: "coldbrew.yaml runtimes.python3.12", "PATH (python3.12)", "pyenv",
    // "asdf", "nvm", "fnm", "volta", "PATH (python3)".
    std::string origin;
    bool matches = false;  // `version` is `wanted` (a configured binary is trusted)
    // Set when the function does not run on its runtime's version, or on nothing: e.g.
    // "nodejs22.x: running on node v20.20.2 from /usr/bin/node; no node 22 found (looked in
    // PATH, nvm, fnm, volta, asdf); set runtimes.nodejs22.x in coldbrew.yaml".
    std::string warning;
};

// Resolves one runtime identifier (see the top of this file). `configured` is coldbrew.yaml's
// `runtimes:`. A provided* or unknown runtime gives an interpreter with no language and no
// file: it starts its own bootstrap.
interpreter resolve_interpreter(const std::string& runtime,
                                const std::map<std::string, config::settings::runtime_interpreter>& configured,
                                const host_view& host);

// Resolves every function's runtime once (each distinct runtime once), sets
// config::function::interpreter, and appends each distinct warning once to stack::warnings (so
// one per runtime and binary). Returns one interpreter per function, in stack order.
std::vector<interpreter> resolve_interpreters(config::stack& stack, const host_view& host);

// One line for `coldbrew validate`: "python 3.12.1  /root/.pyenv/versions/3.12.1/bin/python3.12
// (pyenv)", "bootstrap (provided.al2023)", "node v20.20.2  /usr/bin/node (PATH (node); not 22)".
std::string describe(const interpreter& i);

// The command that starts a runtime: `bootstrap` for provided*, the node or python shim for
// managed runtimes, on fn.interpreter when resolved (else the first node / python3 on PATH).
// Throws nothing; returns an empty file, and the reason as args[0], when there is nothing to
// start.
supervisor::spawn_options launcher_for(const config::function& fn,
                                       const std::filesystem::path& runtimes_dir);

// Searches PATH for an executable; empty when not found.
std::string find_executable(const std::string& name, const std::string& path_env);

}  // namespace coldbrew::functions
