#include "emulator/config/rules.hpp"

#include "emulator/config/lambda_runtimes.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

namespace coldbrew::config::detail {

namespace {

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

bool lambda_reserved_env(std::string_view name) {
    return std::find(reserved_env.begin(), reserved_env.end(), name) != reserved_env.end();
}

int read_memory_mb(const ynode& n, std::string_view what) {
    return static_cast<int>(expect_int(n, min_memory_mb, max_memory_mb, what));
}

int read_timeout_s(const ynode& n, std::string_view what) {
    return static_cast<int>(expect_int(n, min_timeout_s, max_timeout_s, what));
}

std::string read_runtime(const ynode& n, const std::string& owner,
                         std::chrono::year_month_day today, std::vector<std::string>& warnings) {
    const std::string& runtime = expect_string(n, "Runtime");
    auto check = check_lambda_runtime(runtime, today);
    switch (check.kind) {
    case runtime_check::verdict::supported:
        break;
    case runtime_check::verdict::deprecated:
        warnings.push_back(warning_text(n, owner + ": " + check.message));
        break;
    case runtime_check::verdict::blocked:
    case runtime_check::verdict::unknown:
        fail(n, owner + ": " + check.message);
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

void check_provisioned_concurrency(const source_location& where, const std::string& path,
                                   const std::string& owner, int provisioned, int reserved,
                                   const std::string& reserved_origin) {
    if (provisioned <= reserved) return;
    throw config_error(where, path,
                       owner + ": provisioned concurrency " + std::to_string(provisioned) +
                           " cannot exceed reserved concurrency " + std::to_string(reserved) +
                           " (set by " + reserved_origin + "); AWS rejects it at deploy");
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

namespace {

std::string position(const source_location& where) {
    return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
}

std::vector<std::string_view> segments(std::string_view path) {
    std::vector<std::string_view> out;
    while (!path.empty()) {
        const auto slash = path.find('/');
        if (slash != 0) out.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return out;
}

bool is_variable(std::string_view segment) {
    return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}';
}

bool is_greedy(std::string_view segment) {
    return segment.ends_with("+}");
}

// The two sibling variables at the first segment where `a` and `b` part, when both are
// variables API Gateway cannot keep side by side; nullopt when they can coexist.
std::optional<std::pair<std::string, std::string>>
sibling_variables(const std::string& a, const std::string& b, api_kind kind) {
    if (a == "$default" || b == "$default") return std::nullopt;
    const auto sa = segments(a);
    const auto sb = segments(b);
    for (std::size_t i = 0; i < sa.size() && i < sb.size(); ++i) {
        if (sa[i] == sb[i]) continue;
        if (!is_variable(sa[i]) || !is_variable(sb[i])) return std::nullopt;
        if (kind == api_kind::http && is_greedy(sa[i]) != is_greedy(sb[i])) return std::nullopt;
        return std::pair{std::string(sa[i]), std::string(sb[i])};
    }
    return std::nullopt;
}

} // namespace

void add_route(std::vector<route>& routes, route r, api_kind kind, const ynode& at) {
    for (const auto& other : routes) {
        if (other.api_id != r.api_id) continue;
        if (other.method == r.method && other.path == r.path) {
            fail(at, "route " + r.method + " " + r.path + " on " + r.api_id +
                         " is already served by " +
                         (other.function.empty() ? other.state_machine : other.function) + " (" +
                         position(other.where) +
                         ")");
        }
        if (auto clash = sibling_variables(other.path, r.path, kind)) {
            const auto& [theirs, mine] = *clash;
            fail(at, "route " + r.method + " " + r.path + " on " + r.api_id + ": " + mine +
                         " and " + theirs + " (route " + other.method + " " + other.path + " of " +
                         other.function + ", " + position(other.where) +
                         ") are sibling variable path parts; API Gateway allows only one per "
                         "parent and rejects this at deploy" +
                         (kind == api_kind::rest ? " (\"A sibling (" + theirs +
                                                       ") of this resource already has a "
                                                       "variable path part -- only one is "
                                                       "allowed\")"
                                                 : std::string()) +
                         "; use one name in both routes");
        }
    }
    routes.push_back(std::move(r));
}

void fail_missing(const ynode& map, std::string_view required,
                  std::span<const std::string_view> known, const ynode& at,
                  const std::string& message) {
    if (map.is_map()) {
        const std::array<std::string_view, 1> wanted = {required};
        for (const auto& m : map.members) {
            if (std::find(known.begin(), known.end(), m.key) != known.end()) continue;
            if (closest_match(m.key, wanted)) {
                fail_key(m, m.value.path.empty() ? join_path(map.path, m.key) : m.value.path,
                         message + " (found \"" + m.key + "\": did you mean " +
                             std::string(required) + "?)");
            }
        }
    }
    fail(at, message);
}

std::string value_hint(std::string_view word, std::span<const std::string_view> candidates) {
    auto best = closest_match(word, candidates);
    return best ? " (did you mean " + *best + "?)" : "";
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

std::optional<api> implicit_api(const std::vector<route>& routes, std::string_view id,
                                api_kind kind) {
    auto first = std::find_if(routes.begin(), routes.end(),
                              [&](const route& r) { return r.api_id == id; });
    if (first == routes.end()) return std::nullopt;
    api a;
    a.id = std::string(id);
    a.kind = kind;
    a.where = first->where;
    return a;
}

std::string expect_choice(const ynode& v, std::string_view what,
                          std::span<const std::string_view> allowed) {
    const std::string& text = expect_string(v, what);
    if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
    std::string list;
    for (std::size_t i = 0; i < allowed.size(); ++i)
        list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::string(allowed[i]);
    fail(v, std::string(what) + " must be " + list + ", got '" + text + "'" +
                value_hint(text, allowed));
}

double expect_percent(const ynode& v, std::string_view what) {
    if (!v.is_scalar()) fail(v, std::string(what) + " must be a percentage such as 99.95%");
    std::string text = v.text;
    if (!text.empty() && text.back() == '%') text.pop_back();
    double x = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, x);
    if (ec != std::errc() || ptr != end || !std::isfinite(x) || !(x > 0.0) || x > 100.0)
        fail(v, std::string(what) + " must be a percentage greater than 0 and at most 100, got " +
                    v.text);
    // 0.999 is far more likely a fraction meant as 99.9% than a 0.999% SLA.
    if (x <= 1.0 && v.text.back() != '%')
        fail(v, std::string(what) + " is a percentage: " + v.text + " reads as " + v.text +
                    "%; write it with a % sign (e.g. 99.9%) to say what you mean");
    return x;
}

} // namespace coldbrew::config::detail
