// What a build leaves out of the measured package: devDependencies (with and without a lock
// file), tooling directories, serverless.yml patterns; and that leaving files out measures the
// same as measuring only the files kept.

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "emulator/functions/package_size.hpp"
#include "tests/catch.hpp"
#include "tests/unit/functions/package_tree.hpp"

namespace fs = std::filesystem;
using coldbrew::functions::glob_match;
using coldbrew::functions::left_out_group;
using coldbrew::functions::measure_package;
using coldbrew::functions::package_measure;
using coldbrew::functions::package_rules;

namespace {

using temp_dir = coldbrew::test::package_tree;
using coldbrew::test::write_file;

// Text that deflates a little but not to nothing, so sizes differ between files.
std::string text(std::size_t n, char seed) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + (i * 7 + static_cast<std::size_t>(seed) * 13 + i / 5) % 26);
    return s;
}

package_measure measure(const std::vector<fs::path>& dirs, const package_rules& rules = {}) {
    std::error_code ec;
    auto m = measure_package(dirs, rules, ec);
    REQUIRE_FALSE(ec);
    return m;
}

const left_out_group* group(const package_measure& m, const std::string& what) {
    for (const auto& g : m.left_out)
        if (g.what == what) return &g;
    return nullptr;
}

// Copies `names` (relative) from `from` to `to`, to measure them alone.
void copy_files(const fs::path& from, const fs::path& to, const std::vector<std::string>& names) {
    for (const auto& n : names) {
        fs::create_directories((to / n).parent_path());
        fs::copy_file(from / n, to / n);
    }
}

// A node app: `a` in dependencies, typescript and jest (with a nested package of its own)
// and @types/node in devDependencies.
void write_node_app(const fs::path& d) {
    write_file(d / "index.js", "exports.handler = async () => require('a');\n");
    write_file(d / "package.json", R"({"name": "app", "dependencies": {"a": "^1.0.0"},
  "devDependencies": {"typescript": "^5", "jest": "^29", "@types/node": "^20"}})");
    write_file(d / "node_modules/a/package.json", R"({"name": "a", "version": "1.0.0"})");
    write_file(d / "node_modules/a/index.js", text(3000, 'a'));
    write_file(d / "node_modules/typescript/package.json", R"({"name": "typescript"})");
    write_file(d / "node_modules/typescript/lib/tsc.js", text(40000, 't'));
    write_file(d / "node_modules/jest/package.json",
               R"({"name": "jest", "dependencies": {"pretty": "1"}})");
    write_file(d / "node_modules/jest/index.js", text(9000, 'j'));
    write_file(d / "node_modules/jest/node_modules/pretty/package.json", R"({"name": "pretty"})");
    write_file(d / "node_modules/jest/node_modules/pretty/index.js", text(500, 'p'));
    write_file(d / "node_modules/@types/node/package.json", R"({"name": "@types/node"})");
    write_file(d / "node_modules/@types/node/index.d.ts", text(2000, 'n'));
}

const std::vector<std::string> node_app_kept = {"index.js", "package.json",
                                                "node_modules/a/package.json",
                                                "node_modules/a/index.js"};

}  // namespace

TEST_CASE("globs match as micromatch does for serverless patterns", "[unit]") {
    CHECK(glob_match("**/*.js", "a.js"));
    CHECK(glob_match("**/*.js", "src/deep/a.js"));
    CHECK_FALSE(glob_match("**/*.js", "a.json"));
    CHECK(glob_match("*.md", "README.md"));
    CHECK_FALSE(glob_match("*.md", "docs/README.md"));
    CHECK(glob_match("node_modules/**", "node_modules/x/index.js"));
    CHECK_FALSE(glob_match("node_modules/**", "src/node_modules.js"));
    CHECK(glob_match(".git/**", ".git/objects/ab/cdef"));
    CHECK(glob_match("yarn-*.log", "yarn-error.log"));
    CHECK(glob_match("{src,lib}/*.js", "lib/a.js"));
    CHECK_FALSE(glob_match("{src,lib}/*.js", "test/a.js"));
    CHECK(glob_match("file[0-9].txt", "file7.txt"));
    CHECK_FALSE(glob_match("file[!0-9].txt", "file7.txt"));
    CHECK(glob_match("a?c", "abc"));
    CHECK(glob_match("./src/**", "src/a.js"));
    CHECK(glob_match("docs", "docs"));
    CHECK_FALSE(glob_match("docs", "docs/a.md"));  // a directory name alone matches no file in it
}

TEST_CASE("package rules: package-lock.json's dev entries are left out", "[unit]") {
    temp_dir d;
    write_node_app(d.path());
    write_file(d.path() / "package-lock.json", R"({"name": "app", "lockfileVersion": 3,
  "packages": {
    "": {"name": "app", "dependencies": {"a": "^1.0.0"}},
    "node_modules/a": {"version": "1.0.0"},
    "node_modules/typescript": {"version": "5.4.0", "dev": true},
    "node_modules/jest": {"version": "29.0.0", "dev": true},
    "node_modules/jest/node_modules/pretty": {"version": "1.0.0", "dev": true},
    "node_modules/@types/node": {"version": "20.0.0", "dev": true},
    "node_modules/not-installed": {"version": "1.0.0", "dev": true}
  }})");
    auto m = measure({d.path()});
    std::vector<std::string> kept = node_app_kept;
    kept.push_back("package-lock.json");
    CHECK(m.files == kept.size());

    const auto* dev = group(m, "devDependencies packages");
    REQUIRE(dev != nullptr);
    CHECK(dev->reason == "package-lock.json marks them dev");
    CHECK(dev->count == 4);  // jest's nested package counts; the one not installed does not
    CHECK(dev->files == 8);
    CHECK(dev->bytes == fs::file_size(d.path() / "node_modules/typescript/lib/tsc.js") +
                            fs::file_size(d.path() / "node_modules/typescript/package.json") +
                            fs::file_size(d.path() / "node_modules/jest/index.js") +
                            fs::file_size(d.path() / "node_modules/jest/package.json") + 500 +
                            fs::file_size(d.path() / "node_modules/jest/node_modules/pretty/package.json") +
                            2000 + fs::file_size(d.path() / "node_modules/@types/node/package.json"));
    REQUIRE(dev->examples.size() >= 3);
    CHECK(dev->examples[0] == "typescript");  // largest first
    CHECK(dev->examples[1] == "jest");
    CHECK(dev->examples[2] == "@types/node");

    // Leaving files out measures exactly what measuring the kept files alone does.
    temp_dir alone;
    copy_files(d.path(), alone.path(), kept);
    auto only = measure({alone.path()});
    CHECK(only.files == m.files);
    CHECK(only.bytes == m.bytes);
    CHECK(only.zipped_bytes == m.zipped_bytes);
    CHECK(only.left_out.empty());
}

TEST_CASE("package rules: without a lock file, what dependencies do not reach is left out",
          "[unit]") {
    temp_dir d;
    write_node_app(d.path());
    // a needs b (hoisted to the top) and c (nested under a): both are reached.
    write_file(d.path() / "node_modules/a/package.json",
               R"({"name": "a", "dependencies": {"b": "1", "c": "1"}})");
    write_file(d.path() / "node_modules/b/package.json", R"({"name": "b"})");
    write_file(d.path() / "node_modules/a/node_modules/c/package.json", R"({"name": "c"})");
    auto m = measure({d.path()});
    std::vector<std::string> kept = node_app_kept;
    kept.push_back("node_modules/b/package.json");
    kept.push_back("node_modules/a/node_modules/c/package.json");
    CHECK(m.files == kept.size());
    const auto* dev = group(m, "devDependencies packages");
    REQUIRE(dev != nullptr);
    CHECK(dev->reason == "not reached from package.json dependencies");
    CHECK(dev->count == 4);  // typescript, jest, jest's pretty, @types/node
    CHECK(dev->files == 8);

    temp_dir alone;
    copy_files(d.path(), alone.path(), kept);
    CHECK(measure({alone.path()}).zipped_bytes == m.zipped_bytes);

    // serverless package.excludeDevDependencies: false keeps them.
    package_rules keep;
    keep.serverless_patterns = std::vector<std::string>{};
    keep.exclude_dev_dependencies = false;
    auto all = measure({d.path()}, keep);
    CHECK(all.files == kept.size() + 8);
    CHECK(group(all, "devDependencies packages") == nullptr);
}

TEST_CASE("package rules: caches and tooling directories are left out", "[unit]") {
    temp_dir d;
    write_file(d.path() / "app.py", "def handler(e, c):\n    return 1\n");
    write_file(d.path() / "requirements.txt", "requests\n");
    write_file(d.path() / "__pycache__/app.cpython-312.pyc", text(700, 'c'));
    write_file(d.path() / "lib/__pycache__/util.cpython-312.pyc", text(300, 'u'));
    write_file(d.path() / "lib/util.py", "X = 1\n");
    write_file(d.path() / ".pytest_cache/v/cache/nodeids", "[]");
    write_file(d.path() / ".mypy_cache/3.12/app.meta.json", text(100, 'm'));
    write_file(d.path() / ".git/HEAD", "ref: refs/heads/main\n");
    write_file(d.path() / ".git/objects/ab/cdef", text(5000, 'g'));
    write_file(d.path() / ".aws-sam/build/template.yaml", "Resources: {}\n");
    write_file(d.path() / ".venv/lib/python3.12/site-packages/boto3/__init__.py", text(800, 'b'));
    write_file(d.path() / "node_modules/.cache/babel/x.json", text(200, 'x'));

    auto m = measure({d.path()});
    CHECK(m.files == 3);  // app.py, requirements.txt, lib/util.py
    const auto* git = group(m, ".git");
    REQUIRE(git != nullptr);
    CHECK(git->files == 2);
    CHECK(git->reason == "version control, never deployed");
    const auto* pycache = group(m, "__pycache__");
    REQUIRE(pycache != nullptr);
    CHECK(pycache->count == 2);
    CHECK(pycache->bytes == 1000);
    CHECK(group(m, ".pytest_cache") != nullptr);
    CHECK(group(m, ".mypy_cache") != nullptr);
    CHECK(group(m, ".aws-sam") != nullptr);
    CHECK(group(m, ".venv") != nullptr);
    CHECK(group(m, "node_modules/.cache") != nullptr);
    CHECK(m.left_out.front().what == ".git");  // largest first

    // serverless ships a virtualenv unless a pattern excludes it.
    package_rules sls;
    sls.serverless_patterns = std::vector<std::string>{};
    auto s = measure({d.path()}, sls);
    CHECK(s.files == 4);
    CHECK(group(s, ".venv") == nullptr);
    CHECK(group(s, ".git") != nullptr);
}

TEST_CASE("package rules: serverless patterns, later ones winning", "[unit]") {
    temp_dir d;
    write_file(d.path() / "serverless.yml", "service: s\n");
    write_file(d.path() / "handler.js", "exports.h = 1;\n");
    write_file(d.path() / "src/lib.js", text(400, 'l'));
    write_file(d.path() / "src/lib.test.js", text(300, 't'));
    write_file(d.path() / "docs/guide.md", text(900, 'd'));
    write_file(d.path() / "docs/keep.md", "kept\n");
    write_file(d.path() / ".DS_Store", "x");

    package_rules rules;
    rules.serverless_patterns = std::vector<std::string>{
        "!.DS_Store", "!serverless.yml", "!docs/**", "!**/*.test.js", "docs/keep.md"};
    auto m = measure({d.path()}, rules);
    CHECK(m.files == 3);  // handler.js, src/lib.js, docs/keep.md
    const auto* docs = group(m, "files matching !docs/**");
    REQUIRE(docs != nullptr);
    CHECK(docs->files == 1);
    CHECK(docs->bytes == 900);
    CHECK(docs->reason == "serverless.yml package patterns");
    const auto* tests = group(m, "files matching !**/*.test.js");
    REQUIRE(tests != nullptr);
    CHECK(tests->examples == std::vector<std::string>{"src/lib.test.js"});
    const auto* ds = group(m, "files matching !.DS_Store");
    REQUIRE(ds != nullptr);
    CHECK(ds->reason == "serverless always leaves them out");

    temp_dir alone;
    copy_files(d.path(), alone.path(), {"handler.js", "src/lib.js", "docs/keep.md"});
    CHECK(measure({alone.path()}, rules).zipped_bytes == m.zipped_bytes);
}

TEST_CASE("package rules: a layer inside the code directory is measured once", "[unit]") {
    temp_dir d;
    write_file(d.path() / "index.js", "1;\n");
    write_file(d.path() / "layer/nodejs/node_modules/m/index.js", text(600, 'm'));
    auto m = measure({d.path(), d.path() / "layer"});
    CHECK(m.files == 2);
    const auto* layer = group(m, "layer directories");
    REQUIRE(layer != nullptr);
    CHECK(layer->bytes == 600);
}
