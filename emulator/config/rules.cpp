#include "emulator/config/rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace coldbrew::config::detail {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

// Spec §1.6 [ENV]: keys Lambda reserves; user values for them are rejected by AWS and
// overridden by the platform locally.
constexpr std::array<std::string_view, 18> reserved_env = {
    "_HANDLER",
    "_X_AMZN_TRACE_ID",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_EXECUTION_ENV",
    "AWS_LAMBDA_FUNCTION_NAME",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
    "AWS_LAMBDA_FUNCTION_VERSION",
    "AWS_LAMBDA_INITIALIZATION_TYPE",
    "AWS_LAMBDA_LOG_GROUP_NAME",
    "AWS_LAMBDA_LOG_STREAM_NAME",
    "AWS_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_LAMBDA_RUNTIME_API",
    "LAMBDA_TASK_ROOT",
    "LAMBDA_RUNTIME_DIR",
};

bool aws_env_name(std::string_view name) {
    if (name.size() < 2 || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin() + 1, name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

} // namespace

int read_memory_mb(const ynode& n, std::string_view what) {
    return static_cast<int>(expect_int(n, min_memory_mb, max_memory_mb, what));
}

int read_timeout_s(const ynode& n, std::string_view what) {
    return static_cast<int>(expect_int(n, min_timeout_s, max_timeout_s, what));
}

std::string read_runtime(const ynode& n, const std::string& owner) {
    const std::string& runtime = expect_string(n, "Runtime");
    const bool ok = (starts_with(runtime, "nodejs") && runtime.size() > 6) ||
                    (starts_with(runtime, "python3") && runtime.size() > 7) ||
                    runtime == "provided" || runtime == "provided.al2" ||
                    runtime == "provided.al2023";
    if (!ok) {
        fail(n, owner + ": runtime " + runtime +
                    " is not supported (supported: nodejs*, python3*, provided*)");
    }
    return runtime;
}

std::string read_architecture(const ynode& n, const std::string& owner) {
    const std::string& arch = expect_string(n, "architecture");
    if (arch != "x86_64" && arch != "arm64") {
        fail(n, owner + ": architecture must be x86_64 or arm64, got '" + arch + "'");
    }
    return arch;
}

std::string read_method(const ynode& n) {
    const std::string method = upper(expect_string(n, "Method"));
    if (method == "ANY" || method == "*") return "ANY";
    static constexpr std::array<std::string_view, 7> methods = {"GET",    "POST", "PUT",    "PATCH",
                                                                "DELETE", "HEAD", "OPTIONS"};
    if (std::find(methods.begin(), methods.end(), method) == methods.end()) {
        fail(n, "unknown HTTP method '" + n.text +
                    "' (expected GET, POST, PUT, PATCH, DELETE, "
                    "HEAD, OPTIONS or ANY)");
    }
    return method;
}

void check_route_path(const ynode& at, const std::string& path, api_kind kind) {
    if (path == "$default") {
        if (kind == api_kind::rest) fail(at, "$default routes exist only on HTTP APIs");
        return;
    }
    if (path.empty() || path.front() != '/') {
        fail(at, "route path must start with '/', got '" + path + "'");
    }
    const auto greedy = path.find("+}");
    if (greedy != std::string::npos && greedy + 2 != path.size()) {
        fail(at, "greedy path variable {name+} must be the last path segment, got '" + path + "'");
    }
}

void add_route(std::vector<route>& routes, route r, const ynode& at) {
    for (const auto& other : routes) {
        if (other.api_id == r.api_id && other.method == r.method && other.path == r.path) {
            std::string first = other.where.file + ":" + std::to_string(other.where.line) + ":" +
                                std::to_string(other.where.column);
            fail(at, "route " + r.method + " " + r.path + " on " + r.api_id +
                         " is already served by " + other.function + " (" + first + ")");
        }
    }
    routes.push_back(std::move(r));
}

void read_environment(const ynode& vars, std::map<std::string, std::string>& out,
                      std::vector<std::string>& warnings) {
    if (vars.is_null()) return;
    expect_map(vars, "environment variables");
    for (const auto& m : vars.members) {
        const std::string path = join_path(vars.path, m.key);
        if (m.key.empty() || m.key.find('=') != std::string::npos) {
            fail_key(m, path, "'" + m.key + "' cannot be an environment variable name");
        }
        if (std::find(reserved_env.begin(), reserved_env.end(), m.key) != reserved_env.end()) {
            warnings.push_back(
                warning_key_text(m, path,
                                 m.key + " is reserved by Lambda: AWS rejects it at deploy and the "
                                         "emulator's own value wins"));
        } else if (!aws_env_name(m.key)) {
            warnings.push_back(warning_key_text(
                m, path, "AWS rejects environment variable names outside [a-zA-Z][a-zA-Z0-9_]+"));
        }
        const ynode& v = m.value;
        switch (v.type) {
        case ynode::kind::scalar:
            // YAML booleans reach the process as "true"/"false" (env_vars.py stringifies
            // Python bools that way); everything else keeps the text as written.
            if (!v.quoted &&
                (v.text == "True" || v.text == "TRUE" || v.text == "False" || v.text == "FALSE")) {
                out[m.key] = v.text == "True" || v.text == "TRUE" ? "true" : "false";
            } else {
                out[m.key] = v.text;
            }
            break;
        case ynode::kind::null:
            out[m.key] = ""; // env_vars.py turns None into ""
            break;
        case ynode::kind::no_value:
            break;
        case ynode::kind::unresolved:
            out[m.key] = "";
            warnings.push_back(warning_text(v, v.text + "; set to \"\" as sam local does"));
            break;
        default:
            out[m.key] = "";
            warnings.push_back(
                warning_text(v, "value cannot be resolved locally; set to \"\" as sam local does"));
            break;
        }
    }
}

std::filesystem::path local_directory(const ynode& at, const std::filesystem::path& base,
                                      const std::string& value, const std::string& what) {
    if (value.empty()) fail(at, what + " must not be empty");
    std::filesystem::path p(value);
    if (p.is_relative()) p = base / p;
    p = normal_absolute(p);
    std::string ext = p.extension().string();
    for (auto& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".zip" || ext == ".jar") {
        fail(at, "zip " + what + " not supported yet, point " + what + " at the directory");
    }
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) fail(at, what + " " + p.string() + " does not exist");
    if (!std::filesystem::is_directory(p, ec)) {
        fail(at, what + " " + p.string() + " is not a directory");
    }
    return p;
}

void check_environment_size(const function& fn, std::vector<std::string>& warnings) {
    std::size_t total = 0;
    for (const auto& [k, v] : fn.environment)
        total += k.size() + v.size();
    if (total > 4096) {
        warnings.push_back(
            format_config_error(fn.where, "",
                                fn.name + ": environment variables total " + std::to_string(total) +
                                    " bytes; Lambda allows 4 KB and AWS rejects this at deploy"));
    }
}

} // namespace coldbrew::config::detail
