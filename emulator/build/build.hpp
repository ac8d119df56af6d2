#pragma once
// Builds a function's code before it runs, as `sam build` would: SAM `Metadata.BuildMethod`
// esbuild or makefile (config::build_spec, read by the SAM loader). The build writes into
// build_spec::artifacts_dir (<project>/.coldbrew/build/<function>), which then becomes the
// function's code_dir, so the package size the cold-start model measures is the built one.
//
// What aws-lambda-builders does, and coldbrew with it (aws/aws-lambda-builders,
// aws_lambda_builders/workflows/nodejs_npm_esbuild/esbuild.py and actions.py):
//   - esbuild is run from the function's source directory with the entry points first, then
//     `--bundle --platform=node --outdir=<artifacts>`, then `--target=es2020`,
//     `--format=cjs` and `--minify` unless BuildProperties set Target, Format or Minify
//     (so `Minify: false` leaves minification off), then every other property in template
//     order: a boolean true is `--key`, false nothing, a string `--key=value`, a list
//     `--key:item` per item, key in kebab-case (OutExtension → --out-extension). Bundle,
//     Platform and OutDir are fixed and ignored; UseNpmCi is not esbuild's.
//   - An entry point without an extension is tried with .ts, then .js; one that does not
//     exist fails the build.
//   - External containing "./node_modules/*" marks every package.json `dependencies` entry
//     external instead (`--external:<name>` before the entry points).
//   - esbuild is found in `npm root`/.bin (the nearest node_modules), then on PATH. coldbrew
//     looks for node_modules/.bin/esbuild in the source directory and its parents, then on
//     PATH; it does not run `npx`, which would download esbuild.
// custom_make (workflows/custom_make/actions.py): `make --makefile <source>/Makefile
// build-<LogicalId>` with ARTIFACTS_DIR in the environment. sam build runs it in a scratch
// copy of the source; coldbrew runs it in the source directory (as `sam build
// --build-in-source` does), so a Makefile must write only into $(ARTIFACTS_DIR).
//
// Each build writes into a staging directory (<artifacts>.staging) that replaces
// artifacts_dir only when it has succeeded: an environment never starts on a half-written
// build. A stamp (<artifacts>.stamp) records the command and the size and modification time
// of every input file (the source directory, without node_modules, .git, .aws-sam and
// .coldbrew, plus node_modules/.package-lock.json, which npm rewrites on every install); a
// build whose stamp matches is skipped.

#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/supervisor/reaper.hpp"
#include "emulator/telemetry/log_lines.hpp"

#include <uv.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace coldbrew::build {

// What the esbuild command depends on beyond the BuildProperties.
struct esbuild_inputs {
    std::vector<std::string> entry_points;  // with their extension (resolve_entry_points)
    std::vector<std::string> dependencies;  // package.json `dependencies` names
};

// esbuild's arguments (without the executable) for `spec`, writing into out_dir, in the order
// aws-lambda-builders gives them (see above). Pure.
std::vector<std::string> esbuild_arguments(const config::build_spec& spec,
                                           const esbuild_inputs& inputs,
                                           const std::filesystem::path& out_dir);

// spec.esbuild.entry_points with an explicit extension (.ts, then .js, for one without).
// Throws config_error at the BuildMethod when one does not exist.
std::vector<std::string> resolve_entry_points(const config::build_spec& spec,
                                              const std::string& function);

// The names under "dependencies" of `package_json`; empty when it is absent or unreadable.
std::vector<std::string> package_dependencies(const std::filesystem::path& package_json);

// The process environment builds run with ("KEY=value"), and PATH read from it.
struct build_environment {
    std::vector<std::string> env;
};

// node_modules/.bin/esbuild in `source_dir` or a parent, else `esbuild` on `path_env`
// (colon-separated); empty when there is none.
std::filesystem::path find_esbuild(const std::filesystem::path& source_dir,
                                   std::string_view path_env);

struct command {
    std::string file;               // absolute path of the executable
    std::vector<std::string> args;  // argv, args[0] included
    std::vector<std::string> env;   // the whole environment
    std::filesystem::path cwd;
};

// The command that builds `fn` into out_dir. Throws config_error (at the BuildMethod, naming
// the function) when the tool is missing — esbuild with the `npm install` that would bring
// it, make — or when the Makefile or an entry point does not exist.
command build_command(const config::function& fn, const std::filesystem::path& out_dir,
                      const build_environment& env);

// For `validate`: every build's tool and inputs are there (build_command), nothing is built.
void check_builds(const config::stack& stack, const build_environment& env);

// Builds every function with a build, one after the other, before anything listens, and
// points its code_dir at the result. One line per build goes to `logs` (function, tool,
// duration, output size); an up-to-date build is skipped. A failing build throws
// config_error naming the function, with the build's output and exit status.
void build_all(config::stack& stack, telemetry::log_sink& logs, const coldbrew::clock& clock,
               const build_environment& env);

// Rebuilds on `--watch` changes, on the app's loop: the build runs as a child process
// (uv_spawn) in its own process group; a request that arrives while the function's build
// runs is coalesced into one more build after it (each waiting `done` is called once, with
// the result of the build that covered it). `done(ok, message)`: message is the log line,
// or on failure the build's output.
class builder {
public:
    // `reaper` (may be null) is told of each build's process group while it runs.
    builder(uv_loop_t* loop, telemetry::log_sink& logs, const coldbrew::clock& clock,
            build_environment env, supervisor::reaper* reaper = nullptr);
    ~builder();  // shutdown()
    builder(const builder&) = delete;
    builder& operator=(const builder&) = delete;

    void rebuild(const config::function& fn, std::function<void(bool ok, std::string message)> done);
    // Kills every running build (its whole process group); their `done` are called with
    // ok = false. No rebuild starts afterwards.
    void shutdown();

    struct job;  // one function's running and pending build

private:
    void start(job& j);
    void finished(job& j, int64_t exit_status, int term_signal);

    uv_loop_t* loop_;
    telemetry::log_sink& logs_;
    const coldbrew::clock& clock_;
    build_environment env_;
    supervisor::reaper* reaper_;
    std::vector<std::unique_ptr<job>> jobs_;
    bool shut_down_ = false;
};

}  // namespace coldbrew::build
