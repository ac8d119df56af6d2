#include "emulator/functions/layer_paths.hpp"

#include <cctype>

namespace coldbrew::functions {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "nodejs20.x" → "20"; "" when the identifier carries no major version.
std::string node_major(const std::string& runtime) {
    std::string digits;
    for (std::size_t i = 6; i < runtime.size() && std::isdigit(static_cast<unsigned char>(runtime[i])); ++i)
        digits += runtime[i];
    return digits;
}

}  // namespace

layer_search_paths layer_paths_for(const std::string& runtime,
                                   const std::vector<std::filesystem::path>& layer_dirs) {
    layer_search_paths out;
    const bool node = starts_with(runtime, "nodejs");
    const bool python = starts_with(runtime, "python");
    const std::string major = node ? node_major(runtime) : "";
    // Last layer first: on Lambda its files overwrite the earlier layers' in /opt.
    for (auto it = layer_dirs.rbegin(); it != layer_dirs.rend(); ++it) {
        const auto& layer = *it;
        if (node) {
            if (!major.empty())
                out.node_path.push_back((layer / "nodejs" / ("node" + major) / "node_modules").string());
            out.node_path.push_back((layer / "nodejs" / "node_modules").string());
        }
        if (python) {
            // The runtime identifier is the interpreter's directory name: python3.12.
            out.python_path.push_back((layer / "python" / "lib" / runtime / "site-packages").string());
            out.python_path.push_back((layer / "python").string());
        }
        out.path.push_back((layer / "bin").string());
        out.ld_library_path.push_back((layer / "lib").string());
    }
    return out;
}

std::string prepend_search_path(const std::vector<std::string>& entries, const std::string& existing) {
    std::string out;
    for (const auto& e : entries) out += (out.empty() ? "" : ":") + e;
    if (out.empty()) return existing;
    if (!existing.empty()) out += ":" + existing;
    return out;
}

}  // namespace coldbrew::functions
