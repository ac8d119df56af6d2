#include "emulator/functions/handler_check.hpp"

#include <unistd.h>

#include "emulator/functions/layer_paths.hpp"

namespace coldbrew::functions {

namespace fs = std::filesystem;

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool path_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

bool is_regular(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

bool is_executable(const fs::path& p) {
    return is_regular(p) && ::access(p.c_str(), X_OK) == 0;
}

void resolve_node(const config::function& fn, const fs::path& code, handler_resolution& r) {
    const std::string& h = fn.handler;
    if (h.find("..") != std::string::npos) return;  // malformed: the runtime refuses it
    const auto slash = h.rfind('/');
    const std::string root = slash == std::string::npos ? "" : h.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? h : h.substr(slash + 1);
    const auto dot = base.find('.');
    if (dot == std::string::npos || dot == 0) return;  // malformed: no "module.function"
    const std::string name = base.substr(0, dot);
    const fs::path full = (code / root / name).lexically_normal();
    for (const char* ext : {"", ".js", ".mjs", ".cjs"}) {
        fs::path candidate = full;
        candidate += ext;
        r.looked_for.push_back(candidate);
        if (path_exists(candidate)) {
            r.found = true;
            return;
        }
    }
    // The last resort, a package of that name (require.resolve from the code directory; the
    // layers' node_modules through NODE_PATH).
    std::vector<fs::path> packages{code / "node_modules" / name};
    for (const auto& dir : layer_paths_for(fn.runtime, fn.layer_dirs).node_path)
        packages.push_back(fs::path(dir) / name);
    for (const auto& p : packages) {
        r.looked_for.push_back(p);
        if (path_exists(p)) {
            r.found = true;
            return;
        }
    }
}

bool python_module_in(const fs::path& dir, const std::string& last,
                      std::vector<fs::path>& looked_for) {
    for (const fs::path& candidate : {dir / (last + ".py"), dir / last / "__init__.py",
                                     dir / (last + ".pyc")}) {
        looked_for.push_back(candidate);
        if (is_regular(candidate)) return true;
    }
    // Compiled extension modules: mod.so or mod.cpython-312-x86_64-linux-gnu.so.
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string f = it->path().filename().string();
        if (f.size() > last.size() + 3 && f.compare(0, last.size() + 1, last + ".") == 0 &&
            f.compare(f.size() - 3, 3, ".so") == 0)
            return true;
    }
    return false;
}

void resolve_python(const config::function& fn, const fs::path& code, handler_resolution& r) {
    const auto dot = fn.handler.rfind('.');
    if (dot == std::string::npos || dot == 0) return;  // malformed: no "module.function"
    std::string module = fn.handler.substr(0, dot);
    for (auto& c : module)
        if (c == '/') c = '.';
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const auto d = module.find('.', start);
        parts.push_back(module.substr(start, d - start));
        if (d == std::string::npos) break;
        start = d + 1;
    }
    for (const auto& p : parts)
        if (p.empty()) return;  // malformed
    std::vector<fs::path> roots{code};
    for (const auto& dir : layer_paths_for(fn.runtime, fn.layer_dirs).python_path)
        roots.emplace_back(dir);
    for (const auto& root : roots) {
        fs::path dir = root;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) dir /= parts[i];
        if (python_module_in(dir, parts.back(), r.looked_for)) {
            r.found = true;
            return;
        }
    }
}

void resolve_bootstrap(const config::function& fn, const fs::path& code, handler_resolution& r) {
    std::vector<fs::path> candidates{code / "bootstrap"};
    for (auto it = fn.layer_dirs.rbegin(); it != fn.layer_dirs.rend(); ++it)
        candidates.push_back(*it / "bootstrap");
    for (const auto& c : candidates) {
        r.looked_for.push_back(c);
        if (is_executable(c)) {
            r.found = true;
            return;
        }
    }
}

}  // namespace

handler_resolution resolve_handler(const config::function& fn) {
    handler_resolution r;
    if (fn.package_type == "image") {
        r.skipped = "an image function's entry point is not checked";
        return r;
    }
    fs::path code = fn.code_dir;
    if (fn.build && code != fn.build->artifacts_dir) {
        // Not built yet (validate): the built artifact is what the runtime loads.
        if (!path_exists(fn.build->artifacts_dir)) {
            r.skipped = "built by " + fn.build->method + " into " +
                        fn.build->artifacts_dir.string() +
                        " at start; the handler is checked there once it is built";
            return r;
        }
        code = fn.build->artifacts_dir;
    }
    if (starts_with(fn.runtime, "nodejs"))
        resolve_node(fn, code, r);
    else if (starts_with(fn.runtime, "python"))
        resolve_python(fn, code, r);
    else if (starts_with(fn.runtime, "provided"))
        resolve_bootstrap(fn, code, r);
    else {
        r.skipped = "runtime " + fn.runtime + " is not checked";
        return r;
    }
    r.checked = true;
    return r;
}

std::optional<std::string> handler_warning(const config::function& fn) {
    const auto r = resolve_handler(fn);
    if (!r.checked || r.found) return std::nullopt;
    const bool custom = starts_with(fn.runtime, "provided");
    std::string w = "function " + fn.name + " (" + fn.runtime + "): ";
    if (r.looked_for.empty())
        return w + "handler \"" + fn.handler +
               "\" is not of the form module.function; AWS deploys it but every invocation "
               "fails with Runtime.MalformedHandlerName";
    w += custom ? "no executable bootstrap: looked for " : "handler " + fn.handler + " not found: looked for ";
    for (std::size_t i = 0; i < r.looked_for.size(); ++i)
        w += (i ? ", " : "") + r.looked_for[i].string();
    w += custom ? "; AWS deploys it but every invocation fails with Runtime.InvalidEntrypoint"
                : "; AWS deploys it but every invocation fails with Runtime.ImportModuleError";
    return w;
}

}  // namespace coldbrew::functions
