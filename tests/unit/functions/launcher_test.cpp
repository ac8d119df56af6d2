// Interpreter resolution on fake machines: directory trees, environment variables and the
// versions binaries would print, with nothing run.

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "emulator/functions/launcher.hpp"
#include "tests/catch.hpp"

using namespace coldbrew;
using coldbrew::functions::interpreter;
using coldbrew::functions::resolve_interpreter;

namespace {

// A machine described by its executables (and what `--version` prints for each) and its
// environment. Directories are whatever the executables' paths imply.
class fake_host final : public functions::host_view {
public:
    std::map<std::string, std::string> vars{{"HOME", "/home/u"}, {"PATH", "/usr/bin:/bin"}};
    std::map<std::string, std::string> binaries;  // path → --version output ("" = no answer)
    mutable std::map<std::string, int> probes;    // path → times asked

    fake_host& bin(const std::string& path, const std::string& version_output = "") {
        binaries[path] = version_output;
        return *this;
    }

    std::optional<std::string> env(const std::string& name) const override {
        auto it = vars.find(name);
        if (it == vars.end() || it->second.empty()) return std::nullopt;
        return it->second;
    }
    bool is_executable(const std::filesystem::path& file) const override {
        return binaries.count(file.lexically_normal().string()) > 0;
    }
    std::vector<std::string> subdirectories(const std::filesystem::path& dir) const override {
        std::set<std::string> names;
        const std::string prefix = dir.lexically_normal().string() + "/";
        for (const auto& [path, _] : binaries) {
            if (path.rfind(prefix, 0) != 0) continue;
            const auto rest = path.substr(prefix.size());
            const auto slash = rest.find('/');
            if (slash != std::string::npos) names.insert(rest.substr(0, slash));
        }
        return {names.begin(), names.end()};
    }
    std::optional<std::string> version_output(const std::filesystem::path& file) const override {
        ++probes[file.string()];
        auto it = binaries.find(file.lexically_normal().string());
        if (it == binaries.end() || it->second.empty()) return std::nullopt;
        return it->second;
    }
};

const std::map<std::string, config::settings::runtime_interpreter> none;

interpreter resolve(const std::string& runtime, const fake_host& host,
                    const std::map<std::string, config::settings::runtime_interpreter>& configured = none) {
    return resolve_interpreter(runtime, configured, host);
}

}  // namespace

TEST_CASE("parse_version reads what python and node print", "[unit]") {
    CHECK(functions::parse_version("Python 3.11.7\n") == std::optional<std::string>("3.11.7"));
    CHECK(functions::parse_version("v20.20.2\n") == std::optional<std::string>("20.20.2"));
    CHECK(functions::parse_version("Python 3.13.0rc1") == std::optional<std::string>("3.13.0"));
    CHECK_FALSE(functions::parse_version("pyenv: python3.12: command not found"));
    CHECK_FALSE(functions::parse_version(""));
}

TEST_CASE("pyenv: the highest patch of the wanted version, not a shim", "[unit]") {
    fake_host h;
    h.vars["PATH"] = "/home/u/.pyenv/shims:/usr/bin";
    h.bin("/home/u/.pyenv/shims/python3.12", "")  // a shim: never a candidate by name
        .bin("/home/u/.pyenv/shims/python3", "Python 3.11.7")
        .bin("/home/u/.pyenv/versions/3.12.1/bin/python3.12")
        .bin("/home/u/.pyenv/versions/3.12.10/bin/python3.12")
        .bin("/home/u/.pyenv/versions/3.12.9/bin/python3.12")
        .bin("/home/u/.pyenv/versions/3.13.0t/bin/python3.13")  // free-threaded: not a candidate
        .bin("/home/u/.pyenv/versions/3.11.7/bin/python3");
    auto i = resolve("python3.12", h);
    CHECK(i.file == "/home/u/.pyenv/versions/3.12.10/bin/python3.12");
    CHECK(i.version == "3.12.10");
    CHECK(i.origin == "pyenv");
    CHECK(i.matches);
    CHECK(i.warning.empty());
    CHECK(h.probes.empty());  // a version directory says its version; nothing was run

    // $PYENV_ROOT wins over ~/.pyenv.
    h.vars["PYENV_ROOT"] = "/opt/pyenv";
    h.bin("/opt/pyenv/versions/3.12.4/bin/python3.12");
    CHECK(resolve("python3.12", h).file == "/opt/pyenv/versions/3.12.4/bin/python3.12");

    // No 3.13 final release: the shim's version, run on its concrete binary, with a warning.
    auto f = resolve("python3.13", h);
    CHECK_FALSE(f.matches);
    CHECK(f.version == "3.11.7");
    CHECK(f.file == "/home/u/.pyenv/shims/python3");  // PYENV_ROOT has no 3.11.7 tree
    h.vars.erase("PYENV_ROOT");
    f = resolve("python3.13", h);
    CHECK(f.file == "/home/u/.pyenv/versions/3.11.7/bin/python3");
    CHECK(f.warning ==
          "python3.13: running on python 3.11.7 from /home/u/.pyenv/versions/3.11.7/bin/python3; "
          "no python 3.13 found (looked in PATH, pyenv, asdf); set runtimes.python3.13 in "
          "coldbrew.yaml");
}

TEST_CASE("a versioned python on PATH comes first, when it is that version", "[unit]") {
    fake_host h;
    h.vars["PATH"] = "/opt/bin:/usr/bin";
    h.bin("/opt/bin/python3.12", "Python 3.11.2")  // misnamed: asked, and passed over
        .bin("/usr/bin/python3.12", "Python 3.12.3")
        .bin("/home/u/.pyenv/versions/3.12.10/bin/python3.12");
    auto i = resolve("python3.12", h);
    CHECK(i.file == "/usr/bin/python3.12");
    CHECK(i.version == "3.12.3");
    CHECK(i.origin == "PATH (python3.12)");
    CHECK(i.matches);
}

TEST_CASE("asdf python and node", "[unit]") {
    fake_host h;
    h.bin("/home/u/.asdf/installs/python/3.12.2/bin/python3.12")
        .bin("/home/u/.asdf/installs/python/3.12.7/bin/python3.12")
        .bin("/home/u/.asdf/installs/nodejs/22.3.0/bin/node")
        .bin("/home/u/.asdf/installs/nodejs/22.11.0/bin/node")
        .bin("/home/u/.asdf/installs/nodejs/23.1.0/bin/node");
    CHECK(resolve("python3.12", h).file == "/home/u/.asdf/installs/python/3.12.7/bin/python3.12");
    auto n = resolve("nodejs22.x", h);
    CHECK(n.file == "/home/u/.asdf/installs/nodejs/22.11.0/bin/node");
    CHECK(n.origin == "asdf");
    h.vars["ASDF_DATA_DIR"] = "/data/asdf";
    h.bin("/data/asdf/installs/nodejs/22.1.0/bin/node");
    CHECK(resolve("nodejs22.x", h).file == "/data/asdf/installs/nodejs/22.1.0/bin/node");
}

TEST_CASE("nvm, fnm and volta, in that order", "[unit]") {
    fake_host h;
    h.bin("/home/u/.volta/tools/image/node/22.12.0/bin/node")
        .bin("/home/u/.local/share/fnm/node-versions/v22.9.0/installation/bin/node")
        .bin("/home/u/.nvm/versions/node/v22.2.0/bin/node")
        .bin("/home/u/.nvm/versions/node/v22.10.0/bin/node")
        .bin("/home/u/.nvm/versions/node/v20.19.0/bin/node");
    auto i = resolve("nodejs22.x", h);
    CHECK(i.file == "/home/u/.nvm/versions/node/v22.10.0/bin/node");
    CHECK(i.version == "22.10.0");
    CHECK(i.origin == "nvm");
    CHECK(resolve("nodejs20.x", h).file == "/home/u/.nvm/versions/node/v20.19.0/bin/node");

    h.vars["NVM_DIR"] = "/elsewhere";  // an NVM_DIR without node 22: nvm has none
    i = resolve("nodejs22.x", h);
    CHECK(i.file == "/home/u/.local/share/fnm/node-versions/v22.9.0/installation/bin/node");
    CHECK(i.origin == "fnm");

    h.binaries.erase("/home/u/.local/share/fnm/node-versions/v22.9.0/installation/bin/node");
    h.bin("/home/u/.fnm/node-versions/v22.8.0/installation/bin/node");  // fnm's older home
    CHECK(resolve("nodejs22.x", h).file == "/home/u/.fnm/node-versions/v22.8.0/installation/bin/node");
    h.vars["FNM_DIR"] = "/fnm";
    h.bin("/fnm/node-versions/v22.0.0/installation/bin/node");
    CHECK(resolve("nodejs22.x", h).file == "/fnm/node-versions/v22.0.0/installation/bin/node");

    h.binaries.erase("/fnm/node-versions/v22.0.0/installation/bin/node");
    h.binaries.erase("/home/u/.fnm/node-versions/v22.8.0/installation/bin/node");
    i = resolve("nodejs22.x", h);
    CHECK(i.file == "/home/u/.volta/tools/image/node/22.12.0/bin/node");
    CHECK(i.origin == "volta");
}

TEST_CASE("Fedora's versioned node on PATH", "[unit]") {
    fake_host h;
    h.bin("/usr/bin/node-22", "v22.11.0").bin("/usr/bin/node", "v20.20.2");
    auto i = resolve("nodejs22.x", h);
    CHECK(i.file == "/usr/bin/node-22");
    CHECK(i.origin == "PATH (node-22)");
}

TEST_CASE("the unversioned binary: used when it matches, else with a warning", "[unit]") {
    fake_host h;
    h.bin("/usr/bin/node", "v20.20.2");
    auto ok = resolve("nodejs20.x", h);
    CHECK(ok.file == "/usr/bin/node");
    CHECK(ok.matches);
    CHECK(ok.warning.empty());
    CHECK(ok.origin == "PATH (node)");

    auto off = resolve("nodejs22.x", h);
    CHECK(off.file == "/usr/bin/node");
    CHECK_FALSE(off.matches);
    CHECK(off.warning ==
          "nodejs22.x: running on node v20.20.2 from /usr/bin/node; no node 22 found (looked in "
          "PATH, nvm, fnm, volta, asdf); set runtimes.nodejs22.x in coldbrew.yaml");

    fake_host empty;
    auto nothing = resolve("nodejs22.x", empty);
    CHECK(nothing.file.empty());
    CHECK(nothing.warning.find("no node 22 and no `node` found") != std::string::npos);
}

TEST_CASE("coldbrew.yaml runtimes wins over every search", "[unit]") {
    fake_host h;
    h.bin("/usr/bin/python3.12", "Python 3.12.3").bin("/opt/py/bin/python3", "Python 3.12.8");
    std::map<std::string, config::settings::runtime_interpreter> configured{
        {"python3.12", {"/opt/py/bin/python3", {}}}};
    auto i = resolve("python3.12", h, configured);
    CHECK(i.file == "/opt/py/bin/python3");
    CHECK(i.version == "3.12.8");
    CHECK(i.origin == "coldbrew.yaml runtimes.python3.12");
    CHECK(i.warning.empty());
    // Other runtimes still search.
    CHECK(resolve("python3.13", h, configured).origin == "not found");

    // Configured, but another version: it is still used, and the warning says so.
    h.bin("/opt/py/bin/python3", "Python 3.11.9");
    i = resolve("python3.12", h, configured);
    CHECK(i.file == "/opt/py/bin/python3");
    CHECK(i.warning.find("is python 3.11.9") != std::string::npos);
}

TEST_CASE("coldbrew.yaml runtimes: another language's interpreter is a config error", "[unit]") {
    fake_host h;
    h.bin("/usr/bin/node", "v20.20.2").bin("/usr/bin/python3", "Python 3.11.2");
    config::source_location at;
    at.file = "/app/coldbrew.yaml";
    at.line = 3;
    std::map<std::string, config::settings::runtime_interpreter> configured{
        {"python3.12", {"/usr/bin/node", at}}, {"nodejs22.x", {"/usr/bin/python3", at}}};
    for (const char* rt : {"python3.12", "nodejs22.x"}) {
        CAPTURE(rt);
        try {
            resolve(rt, h, configured);
            FAIL("expected a config_error");
        } catch (const config::config_error& e) {
            CHECK(e.key_path() == std::string("runtimes.") + rt);
            CHECK(e.where().line == 3);
            CHECK(std::string(e.what()).find("interpreter (it says '") != std::string::npos);
        }
    }
}

TEST_CASE("resolve_interpreters: once per runtime, one warning per runtime and binary", "[unit]") {
    fake_host h;
    h.bin("/usr/bin/node", "v20.20.2").bin("/usr/bin/python3", "Python 3.11.2");
    config::stack s;
    for (const char* rt : {"nodejs22.x", "nodejs22.x", "nodejs24.x", "python3.11", "provided.al2023"}) {
        config::function fn;
        fn.name = std::string("F") + std::to_string(s.functions.size());
        fn.runtime = rt;
        s.functions.push_back(fn);
    }
    auto r = functions::resolve_interpreters(s, h);
    REQUIRE(r.size() == 5);
    CHECK(s.functions[0].interpreter == "/usr/bin/node");
    CHECK(s.functions[3].interpreter == "/usr/bin/python3");
    CHECK(s.functions[4].interpreter.empty());
    CHECK(r[4].origin == "bootstrap");
    REQUIRE(s.warnings.size() == 2);  // nodejs22.x once, nodejs24.x once; python3.11 matches
    CHECK(s.warnings[0].rfind("nodejs22.x: running on node v20.20.2", 0) == 0);
    CHECK(s.warnings[1].rfind("nodejs24.x: running on node v20.20.2", 0) == 0);
    CHECK(h.probes["/usr/bin/node"] == 2);  // one probe per distinct runtime; system_host caches
}

TEST_CASE("system_host runs a binary once and reads its version", "[unit]") {
    // A stand-in interpreter: prints a version and counts how often it was asked.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("coldbrew-launcher-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto fake = dir / "python3";
    const auto count = dir / "count";
    std::ofstream(fake) << "#!/bin/sh\necho x >> " << count.string()
                        << "\necho \"Python 3.12.5\" >&2\n";
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    const auto failing = dir / "broken";
    std::ofstream(failing) << "#!/bin/sh\necho v9.9.9\nexit 3\n";
    std::filesystem::permissions(failing, std::filesystem::perms::owner_all);

    system_clock_source clock;
    functions::system_host host(clock, std::chrono::seconds(10));
    CHECK(host.version_output(fake) == std::optional<std::string>("Python 3.12.5\n"));
    CHECK(host.version_output(fake) == std::optional<std::string>("Python 3.12.5\n"));
    std::ifstream in(count);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(all == "x\n");  // run once, then cached
    CHECK_FALSE(host.version_output(failing));  // a non-zero exit is no answer
    CHECK_FALSE(host.version_output(dir / "missing"));
    CHECK(host.is_executable(fake));
    CHECK_FALSE(host.is_executable(dir));
    CHECK(host.subdirectories(dir.parent_path()).size() >= 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("node starts with V8's heap sized from MemorySize, as Lambda's bootstrap does", "[unit]") {
    coldbrew::config::function fn;
    fn.runtime = "nodejs20.x";
    fn.interpreter = "/bin/sh";  // any executable: the arguments are what is checked
    auto args_at = [&](int memory_mb) {
        fn.memory_mb = memory_mb;
        return coldbrew::functions::launcher_for(fn, "/rt").args;
    };
    using v = std::vector<std::string>;
    CHECK(args_at(1024) == v{"/bin/sh", "--expose-gc", "--max-http-header-size=81920",
                             "--max-semi-space-size=51", "--max-old-space-size=922",
                             "/rt/node/bootstrap.cjs"});
    const auto small = args_at(128);
    CHECK(small[3] == "--max-semi-space-size=6");
    CHECK(small[4] == "--max-old-space-size=116");
    const auto large = args_at(10240);
    CHECK(large[3] == "--max-semi-space-size=512");
    CHECK(large[4] == "--max-old-space-size=9216");
}
