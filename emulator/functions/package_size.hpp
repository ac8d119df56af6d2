#pragma once
// The size of a function's deployment package as Lambda would receive it: the code directory
// and each layer directory, zipped, holding only what the packaging tool would put in the
// .zip. The cold-start model charges Init Duration per zipped MB, because that is the unit of
// the published measurements, so the unzipped size on disk is not enough, and neither is a
// directory that still holds the developer's tooling.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace coldbrew::functions {

// What the tool that builds the .zip leaves out of the code directory.
struct package_rules {
    // The Serverless Framework's patterns, in the order it applies them (later ones win): a
    // pattern starting with '!' leaves out the files it matches, any other brings them back.
    // nullopt: the directory is `sam build` input (see measure_package).
    std::optional<std::vector<std::string>> serverless_patterns;
    // serverless.yml package.excludeDevDependencies (default true, serverless v3 "Packaging");
    // `sam build` always installs production dependencies only.
    bool exclude_dev_dependencies = true;
};

// Files left out for one reason, for `coldbrew validate` to show.
struct left_out_group {
    std::string what;    // "devDependencies packages", ".git", "files matching !docs/**"
    std::string reason;  // "package-lock.json marks them dev", "never deployed"
    std::uint64_t count = 0;  // packages or directories or files, as `what` names them
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;  // unzipped
    std::vector<std::string> examples;  // a few names, largest first
};

struct package_measure {
    std::uint64_t files = 0;        // regular files
    std::uint64_t bytes = 0;        // sum of regular file sizes (unzipped)
    std::uint64_t zipped_bytes = 0;  // estimated .zip size, headers included
    bool estimated = false;         // true when only a sample was compressed
    std::vector<left_out_group> left_out;  // largest first; not in the three counts above
};

// Walks each directory (each is one .zip: the code, then every layer) and estimates the
// archive size as zip tools build it:
// - every file is compressed on its own with raw deflate at zlib level 6 (zip's default), and
//   stored instead when that does not make it smaller, as zip does;
// - each file adds its local header (30 bytes + name) and central directory entry (46 bytes +
//   name), names relative to the directory with '/'; each directory adds one end record (22
//   bytes). Directory entries are not counted (SAM and the Serverless Framework write files
//   only).
// Symlinks are not followed and not counted; unreadable files and directories are skipped.
//
// Left out, and reported in `left_out` instead:
// - devDependencies: in every directory holding package.json and node_modules (outside
//   node_modules), the packages installed only for development. With a package-lock.json of
//   lockfileVersion 2 or 3, the `packages` entries marked `"dev": true` (npm docs,
//   "package-lock.json": dev is set for packages strictly in the devDependencies tree);
//   without one, every package under node_modules that Node's resolution does not reach from
//   package.json `dependencies`, `optionalDependencies` and `peerDependencies`, followed
//   through each package's own package.json. `sam build` runs npm with production
//   dependencies only (aws-lambda-builders, nodejs_npm workflow); serverless v3 leaves
//   devDependencies out unless package.excludeDevDependencies is false.
// - directories no packaging tool ships, or whose content changes from run to run: .git,
//   .aws-sam, .serverless, node_modules/.cache, __pycache__, .pytest_cache, .mypy_cache
//   (aws-lambda-builders python_pip EXCLUDED_FILES lists all but .serverless and
//   node_modules/.cache; serverless v3 defaultExcludes lists .git and .serverless). A
//   Serverless Framework package would hold the caches; they are left out anyway so that
//   running a Python handler once does not change the next run's model.
// - for `sam build` input only, .venv and venv: a local virtualenv holds packages for the
//   developer's interpreter, and python_pip EXCLUDED_FILES leaves both out (`sam build`
//   installs requirements.txt instead). serverless v3 ships them unless a pattern excludes
//   them, so they count there.
// - a measured directory inside another (a layer below the code directory): packaged apart.
// - with serverless patterns: every file they leave out, with micromatch's glob syntax as
//   serverless uses it (lib/plugins/package/lib/package-service.js, micromatch with dot:
//   true): `*` and `?` within a path segment, `**` across segments, `[…]` classes, `{a,b}`
//   alternatives, names relative to the directory.
//
// At most `sample_limit_bytes` of file content are compressed, so start-up stays fast on
// huge packages. Beyond that, files are sampled evenly across the walk (whole files, or a
// prefix of a large one) and the zipped size of the rest is extrapolated from the ratio the
// sample achieved (`estimated` = true). A limit of 0 compresses nothing and counts content
// as stored. Left-out files are never read.
//
// Errors: a directory that does not exist (no_such_file_or_directory), is not a directory
// (not_a_directory) or cannot be opened → `ec` set and an empty measure returned.
package_measure measure_package(const std::vector<std::filesystem::path>& dirs,
                                const package_rules& rules, std::error_code& ec,
                                std::uint64_t sample_limit_bytes = 16ull << 20);

// The same with `sam build`'s rules (package_rules{}).
package_measure measure_package(const std::vector<std::filesystem::path>& dirs, std::error_code& ec,
                                std::uint64_t sample_limit_bytes = 16ull << 20);

// True when `name` (relative, '/'-separated) matches the glob `pattern` (no leading '!') as
// micromatch matches it with dot: true. Exposed for tests.
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace coldbrew::functions
