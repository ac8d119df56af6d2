#pragma once
// Start-up check of a function's handler, resolved the way its runtime will resolve it, so
// that a missing file is named at `validate` and `up` instead of failing each request with
// Runtime.ImportModuleError / Runtime.InvalidEntrypoint. AWS deploys such a function (it only
// fails when invoked), so a miss is a warning, never an error.
//
// Resolution (the runtime interface clients, which coldbrew's shims in emulator/runtimes/
// follow):
//   nodejs*   Handler "dir/sub/module.fn": module root "dir/sub/", module name up to the first
//             '.' of the last path segment; the runtime tries <code>/<root><name> as it is,
//             then .js (CommonJS, or ES module when the nearest package.json says
//             "type": "module"), .mjs, .cjs, then a package of that name in node_modules (the
//             code directory's, then the layers' nodejs/node_modules) (aws-lambda-nodejs-
//             runtime-interface-client, src/UserFunction.js, _loadUserApp / _tryRequire).
//   python3*  Handler "pkg.mod.fn" (or "pkg/mod.fn"): the module "pkg.mod" (split on the last
//             '.'), imported with the code directory first on sys.path, then the layers'
//             python/lib/python3.x/site-packages and python (aws-lambda-python-runtime-
//             interface-client, awslambdaric/bootstrap.py, _get_handler): a file
//             <dir>/pkg/mod.py, a package <dir>/pkg/mod/__init__.py, or a compiled module
//             (.pyc, .so); pkg may be a regular package (with __init__.py) or a namespace
//             package (a plain directory, PEP 420).
//   provided* An executable `bootstrap` in the code directory, else in a layer (the last
//             layer's first, as /opt holds it) ("Building a custom runtime", runtimes-custom.html).
// Other runtimes (java, dotnet, ruby, an image function) are not checked.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "emulator/config/stack.hpp"

namespace coldbrew::functions {

struct handler_resolution {
    bool checked = false;  // false: not checked, `skipped` says why
    bool found = false;    // checked and resolved
    std::string skipped;
    // Every file or directory looked for, in the runtime's order (absolute paths).
    std::vector<std::filesystem::path> looked_for;
};

// Pure of side effects: reads the file system only. Uses fn.runtime, fn.handler, fn.code_dir,
// fn.layer_dirs, fn.build and fn.package_type. A function with a build (Metadata BuildMethod,
// serverless esbuild) is resolved in its build's artifacts directory when that exists (the
// build ran), and is skipped otherwise.
handler_resolution resolve_handler(const config::function& fn);

// One warning line when the handler is missing, naming the files looked for, e.g.
// "function Hello (nodejs20.x): handler index.handler not found: looked for
// /app/src/index, /app/src/index.js, /app/src/index.mjs, /app/src/index.cjs, …; AWS deploys
// it but every invocation fails with Runtime.ImportModuleError". None when found or skipped.
std::optional<std::string> handler_warning(const config::function& fn);

}  // namespace coldbrew::functions
