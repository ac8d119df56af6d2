#pragma once
// The serverless-esbuild plugin (`plugins: [serverless-esbuild]`, `custom.esbuild`): its build
// of a nodejs function as a config::build_spec (method "esbuild") that emulator/build runs, so
// a TypeScript handler is served as the plugin would build it before serverless-offline.
//
// What the plugin does (floydspace/serverless-esbuild, src/index.ts, src/helper.ts,
// src/bundle.ts, src/constants.ts, read at commit 2f62af2):
//   - It builds the functions whose runtime (the function's, else provider.runtime) is a
//     nodejs one (index.ts isNodeFunction); `skipBuild: true` skips all of them except those
//     named in `skipBuildExcludeFns`.
//   - The entry of a function is its `esbuildEntrypoint`, else its `handler`, without the
//     last extension ("src/handler.hello" → "src/handler"), tried with each of
//     `resolveExtensions` (default .ts, .js, .jsx, .tsx), first as <file><ext>, then as
//     <file>/index<ext> (helper.ts extractFunctionEntries); none found fails the build.
//   - Defaults (index.ts getBuildOptions): bundle true, platform node, target from
//     provider.runtime (nodejs20.x → node20; node18 when it is not a known one), exclude
//     ['aws-sdk'], outputFileExtension .js; minify, sourcemap and format are esbuild's own
//     defaults (off, off, cjs for platform node). `custom.esbuild` is merged over them.
//   - Every option but the plugin's own (bundle.ts: concurrency, zipConcurrency, exclude,
//     nativeZip, packager, packagePath, watch, keepOutputDirectory, packagerOptions,
//     installExtraArgs, outputFileExtension, outputBuildFolder, outputWorkFolder,
//     nodeExternals, skipBuild, skipRebuild, skipBuildExcludeFns,
//     stripEntryResolveExtensions, disposeContext) goes to esbuild; `external` is external
//     plus exclude (unless exclude holds "*"); an outputFileExtension other than .js is
//     esbuild's outExtension {".js": ext}.
//   - Each entry is built with outdir <.esbuild/.build>/<dirname(entry)>, so the handler path
//     stays valid inside the build directory. coldbrew passes --outbase=. with
//     outdir=artifacts_dir, which lays the output out the same way.
//   - `custom.esbuild.config` names a JS file whose function returns the options instead;
//     `plugins` names esbuild plugins (JS). coldbrew cannot run either: each is a
//     not_emulated entry of kind "plugin" and the build uses the rest of custom.esbuild.
//
// Packages left external are resolved by node from the built file upwards: the build sits in
// <service>/.coldbrew/build/<function>, so that walk reaches <service>/node_modules, as it
// reaches it from .esbuild/.build with the plugin. No NODE_PATH is needed.

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coldbrew::config {

// The build of `fn` (runtime and handler read) as serverless-esbuild makes it, from
// `options` (custom.esbuild with its variables resolved; a null node when absent) and
// `entrypoint` (the function's esbuildEntrypoint, nullptr when absent). nullopt when the
// plugin does not build it (not nodejs, skipBuild). `handler` is the handler node, where a
// missing entry file is reported (config_error).
std::optional<build_spec> serverless_esbuild_build(const detail::ynode& options,
                                                   const std::string& provider_runtime,
                                                   const function& fn, const detail::ynode& handler,
                                                   const detail::ynode* entrypoint,
                                                   const std::filesystem::path& service_dir);

// The custom.esbuild options coldbrew cannot act on (config, plugins, nodeExternals, metafile,
// bundle: false, another platform, outdir/outfile/outbase, an object option without a
// command-line form such as tsconfigRaw), as not_emulated entries of kind
// "plugin" added to `ignored`, once per service.
void serverless_esbuild_ignored(const detail::ynode& options, std::vector<not_emulated>& ignored);

// esbuild's target for a runtime as the plugin maps it: "nodejs20.x" → "node20"; "" when it is
// not a nodejs runtime.
std::string serverless_esbuild_target(const std::string& runtime);

}  // namespace coldbrew::config
