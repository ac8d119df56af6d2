#pragma once
// Where a function's layers are looked for, per runtime, as Lambda's /opt would be searched.
//
// On Lambda every layer is extracted into the one directory /opt, in the function's layer
// order, a later layer's file replacing an earlier one's ("Managing Lambda dependencies with
// layers", chapter-layers). Locally each layer stays in its own directory, so the same
// outcome needs the later layers searched first: each list below holds the layers from last
// to first.
//
// The directories inside a layer (AWS, "Packaging your layer content", packaging-layers.html,
// "Layer paths for each Lambda runtime"):
//   nodejs*: nodejs/node<major>/node_modules, then nodejs/node_modules (NODE_PATH; Lambda's
//            default NODE_PATH lists /opt/nodejs/node<major>/node_modules before
//            /opt/nodejs/node_modules, "Defined runtime environment variables",
//            configuration-envvars.html)
//   python*: python/lib/python3.x/site-packages, then python (the runtime's sys.path order,
//            "Dependency search path", python-package.html)
//   every runtime: bin on PATH, lib on LD_LIBRARY_PATH
// Directories that do not exist are still listed: a layer that gains one under `--watch`
// is then found without a new environment, and a missing entry costs a lookup only.

#include <filesystem>
#include <string>
#include <vector>

namespace coldbrew::functions {

struct layer_search_paths {
    std::vector<std::string> node_path;        // NODE_PATH entries (nodejs* only)
    std::vector<std::string> python_path;      // PYTHONPATH entries (python* only)
    std::vector<std::string> path;             // PATH entries
    std::vector<std::string> ld_library_path;  // LD_LIBRARY_PATH entries
};

// `runtime` is a Lambda runtime identifier ("nodejs20.x", "python3.12", "provided.al2023");
// `layer_dirs` are the function's layer directories in template order (absolute). An empty
// list gives empty lists. A nodejs runtime without a major version ("nodejs") lists only
// nodejs/node_modules.
layer_search_paths layer_paths_for(const std::string& runtime,
                                   const std::vector<std::filesystem::path>& layer_dirs);

// Puts `entries` in front of `existing` (a ':'-separated list, may be empty): "a:b:existing".
// Empty entries give `existing` unchanged.
std::string prepend_search_path(const std::vector<std::string>& entries, const std::string& existing);

}  // namespace coldbrew::functions
