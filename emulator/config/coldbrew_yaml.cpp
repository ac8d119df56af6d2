// coldbrew.yaml: coldbrew's own options. Unlike templates, every key here is ours, so an
// unknown key is an error (a typo in `time_scale` must not silently run at full speed).
//
// The schema is a set of tables: each section lists its keys and a parse function per key.
// A new section (faults, dependencies, profiles) is one more table and one more row in
// `top_level`; unknown-key errors and "did you mean" come for free.

#include "emulator/config/loaders.hpp"
#include "emulator/config/rules.hpp"
#include "models/distribution/distribution.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

namespace coldbrew::config::detail {

namespace {

template <class Target> struct field {
    std::string_view key;
    void (*parse)(const ynode& value, Target& out);
};

// Parses every member of `map` with the row of `fields` named by its key. A null section
// (`functions:` with everything commented out) is an empty one.
template <class Target>
void parse_section(const ynode& map, std::span<const field<Target>> fields, Target& out) {
    if (map.is_null()) return;
    expect_map(map, map.path.empty() ? "coldbrew.yaml" : map.path);
    std::vector<std::string_view> keys;
    for (const auto& f : fields)
        keys.push_back(f.key);
    for (const auto& m : map.members) {
        auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const field<Target>& f) { return f.key == m.key; });
        if (it == fields.end()) {
            std::string allowed;
            for (auto k : keys)
                allowed += (allowed.empty() ? "" : ", ") + std::string(k);
            fail_key(m, join_path(map.path, m.key),
                     "unknown key '" + m.key + "'" + did_you_mean(m.key, keys) +
                         "; allowed here: " + allowed);
        }
        it->parse(m.value, out);
    }
}

// "us-east-1", "us-gov-west-1", "ap-southeast-2": two letters, word parts, a number.
bool looks_like_region(const std::string& r) {
    const auto last_dash = r.rfind('-');
    if (r.size() < 6 || last_dash == std::string::npos || last_dash + 1 == r.size()) return false;
    const auto digits = r.substr(last_dash + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    const std::string words = r.substr(0, last_dash);
    if (words.size() < 4 || words[2] != '-') return false;
    bool prev_dash = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const char c = words[i];
        if (c == '-') {
            if (prev_dash || i + 1 == words.size()) return false;
            prev_dash = true;
        } else if (c >= 'a' && c <= 'z') {
            prev_dash = false;
        } else {
            return false;
        }
    }
    return words[0] != '-' && words[1] != '-';
}

// A number >= 0 (finite: from_chars also reads "inf" and "nan").
double read_non_negative(const ynode& v, std::string_view what) {
    const double x = expect_double(v, what);
    if (!std::isfinite(x) || x < 0.0)
        fail(v, std::string(what) + " must be a number >= 0, got " + v.text);
    return x;
}

std::optional<int> read_concurrency(const ynode& v, std::string_view what) {
    if (v.is_null()) return std::nullopt;
    return static_cast<int>(expect_int(v, 0, max_concurrency, what));
}


// Distribution text (models/distribution/distribution.hpp), checked now so a typo fails at
// start with the position of the offending character, not at the first cold start.
std::string read_distribution(const ynode& v, std::string_view what) {
    const std::string& text = expect_string(v, what);
    try {
        // Every distribution here is a duration. A normal may dip below 0 in its far tail
        // (draws are clamped); one that is negative more than 1 time in 1000 is a mistake.
        if (models::parse_distribution(text).quantile(0.001) < 0)
            fail(v, std::string(what) + " is a duration and cannot be negative, got '" + text + "'");
    } catch (const models::distribution_error& e) {
        throw config_error(position_in_scalar(v, e.offset()), v.path,
                           std::string(e.what()) + " in '" + text + "'");
    } catch (const std::invalid_argument& e) {
        fail(v, std::string(e.what()) + " in '" + text + "'");
    }
    return text;
}

// `text` relative to coldbrew.yaml's directory unless absolute.
std::filesystem::path local_path(const ynode& v, const coldbrew_file& file, std::string_view what) {
    const std::string& text = expect_string(v, what);
    if (text.empty()) fail(v, std::string(what) + " must not be empty");
    const std::filesystem::path p(text);
    return normal_absolute(p.is_absolute() ? p : file.dir / p);
}

int read_port(const ynode& v) {
    return static_cast<int>(expect_int(v, 0, 65535, "port"));
}
int read_max_environments(const ynode& v) {
    return static_cast<int>(expect_int(v, 1, 10000, "max_environments"));
}

// ---- ports: ----------------------------------------------------------------------------

constexpr field<coldbrew_file> port_fields[] = {
    {"gateway", [](const ynode& v, coldbrew_file& out) { out.values.gateway_port = read_port(v); }},
    {"invoke", [](const ynode& v, coldbrew_file& out) { out.values.invoke_port = read_port(v); }},
    {"admin", [](const ynode& v, coldbrew_file& out) { out.values.admin_port = read_port(v); }},
};

void parse_ports(const ynode& v, coldbrew_file& out) {
    parse_section<coldbrew_file>(v, port_fields, out);
    // Two listeners cannot share a port; 0 means "pick a free one" and never collides.
    std::map<std::string, std::string> seen;
    for (const auto& m : v.members) {
        if (m.value.text == "0") continue;
        const auto [it, fresh] = seen.emplace(m.value.text, m.key);
        if (!fresh) {
            fail(m.value, "port " + m.value.text + " is already used by ports." + it->second);
        }
    }
}

// ---- functions.<name>: -----------------------------------------------------------------

constexpr field<function_override> model_fields[] = {
    {"runtime",
     [](const ynode& v, function_override& out) {
         const std::string& row = expect_string(v, "model runtime");
         if (row.empty()) fail(v, "model runtime must not be empty");
         out.model.runtime = row;
     }},
    {"init_duration",
     [](const ynode& v, function_override& out) {
         out.model.init_duration = read_distribution(v, "init_duration");
     }},
    {"package_ms_per_mb",
     [](const ynode& v, function_override& out) {
         out.model.package_ms_per_mb = read_non_negative(v, "package_ms_per_mb");
     }},
    {"keep_alive",
     [](const ynode& v, function_override& out) {
         out.model.keep_alive = read_distribution(v, "keep_alive");
     }},
    {"max_lifetime",
     [](const ynode& v, function_override& out) {
         out.model.max_lifetime = read_distribution(v, "max_lifetime");
     }},
};

// ---- functions.<name>.async: ------------------------------------------------------------

std::filesystem::path destination_path(const ynode& v, std::string_view what) {
    const std::string& text = expect_string(v, what);
    if (text.empty()) fail(v, std::string(what) + " must not be empty");
    return text;
}

constexpr field<function_override> async_fields[] = {
    {"maximum_retry_attempts",
     [](const ynode& v, function_override& out) {
         out.async_maximum_retry_attempts =
             static_cast<int>(expect_int(v, 0, 2, "maximum_retry_attempts"));
     }},
    {"maximum_event_age_s",
     [](const ynode& v, function_override& out) {
         out.async_maximum_event_age_s =
             static_cast<int>(expect_int(v, 60, 21600, "maximum_event_age_s"));
     }},
    {"on_success",
     [](const ynode& v, function_override& out) {
         out.async_on_success = destination_path(v, "on_success");
     }},
    {"on_failure",
     [](const ynode& v, function_override& out) {
         out.async_on_failure = destination_path(v, "on_failure");
     }},
};

constexpr field<function_override> function_fields[] = {
    {"memory_mb", [](const ynode& v,
                     function_override& out) { out.memory_mb = read_memory_mb(v, "memory_mb"); }},
    {"timeout_s", [](const ynode& v,
                     function_override& out) { out.timeout_s = read_timeout_s(v, "timeout_s"); }},
    {"max_environments",
     [](const ynode& v, function_override& out) {
         out.max_environments = read_max_environments(v);
     }},
    {"environment",
     [](const ynode& v, function_override& out) {
         if (v.is_null()) return;
         for (const auto& m : expect_map(v, "environment").members) {
             if (m.key.empty() || m.key.find('=') != std::string::npos) {
                 fail_key(m, join_path(v.path, m.key),
                          "'" + m.key + "' cannot be an environment variable name");
             }
             out.environment[m.key] =
                 m.value.is_null() ? "" : expect_string(m.value, "environment value");
         }
     }},
    {"reserved_concurrency",
     [](const ynode& v, function_override& out) {
         out.reserved_concurrency = {read_concurrency(v, "reserved_concurrency"), v.where, v.path};
     }},
    {"provisioned_concurrency",
     [](const ynode& v, function_override& out) {
         out.provisioned_concurrency = {read_concurrency(v, "provisioned_concurrency"), v.where,
                                        v.path};
     }},
    {"architecture",
     [](const ynode& v, function_override& out) {
         out.architecture = read_architecture(v, out.name);
     }},
    {"package_type",
     [](const ynode& v, function_override& out) {
         static constexpr std::array<std::string_view, 2> types = {"zip", "image"};
         out.package_type = expect_choice(v, "package_type", types);
     }},
    {"vpc",
     [](const ynode& v, function_override& out) {
         // A boolean says only whether the function is in a VPC; today that means Hyperplane.
         if (v.is_scalar()) {
             static constexpr std::array<std::string_view, 3> yes = {"true", "True", "TRUE"};
             static constexpr std::array<std::string_view, 3> no = {"false", "False", "FALSE"};
             if (std::find(yes.begin(), yes.end(), v.text) != yes.end()) {
                 out.vpc_mode = "hyperplane";
                 return;
             }
             if (std::find(no.begin(), no.end(), v.text) != no.end()) {
                 out.vpc_mode = "none";
                 return;
             }
         }
         static constexpr std::array<std::string_view, 3> modes = {"none", "hyperplane",
                                                                   "legacy-eni"};
         out.vpc_mode = expect_choice(v, "vpc", modes);
     }},
    {"extensions",
     [](const ynode& v, function_override& out) {
         // Lambda runs at most 10 extensions per function (Extensions API guide). The same
         // kind may repeat: two extensions of one kind each add their own start-up.
         constexpr std::size_t max_extensions = 10;
         out.extensions.emplace();
         if (v.is_null()) return;
         for (const auto& item : expect_sequence(v, "extensions").items) {
             const std::string& kind = expect_string(item, "extension kind");
             if (kind.empty()) fail(item, "extension kind must not be empty");
             if (out.extensions->size() == max_extensions) {
                 fail(item, "at most " + std::to_string(max_extensions) +
                                " extensions per function (Lambda's limit)");
             }
             out.extensions->push_back(kind);
         }
     }},
    {"package_mb",
     [](const ynode& v, function_override& out) {
         // Lambda's largest deployment package is a 10 GB container image (Lambda quotas);
         // beyond it the modeled init would be days long and nothing AWS could deploy.
         out.package_mb = read_non_negative(v, "package_mb");
         if (*out.package_mb > 10240.0)
             fail(v, "package_mb must be at most 10240 (Lambda's largest package, a 10 GB "
                     "container image), got " + v.text);
     }},
    {"model",
     [](const ynode& v, function_override& out) {
         parse_section<function_override>(v, model_fields, out);
     }},
    {"async",
     [](const ynode& v, function_override& out) {
         parse_section<function_override>(v, async_fields, out);
     }},
};

void parse_functions(const ynode& v, coldbrew_file& out) {
    if (v.is_null()) return;
    for (const auto& m : expect_map(v, "functions").members) {
        function_override o;
        o.name = m.key;
        o.where = m.key_where;
        o.path = join_path(v.path, m.key);
        parse_section<function_override>(m.value, function_fields, o);
        if (const ymember* model = m.value.find_member("model")) {
            o.model.where = model->key_where;
            o.model.path = model->value.path;
        }
        out.functions.push_back(std::move(o));
    }
}

// ---- gateway: --------------------------------------------------------------------------

constexpr field<coldbrew_file> gateway_fields[] = {
    {"integration_timeout_ms",
     [](const ynode& v, coldbrew_file& out) {
         // Up to Lambda's own 900 s: a local run may lift API Gateway's 29/30 s cap on purpose.
         out.integration_timeout_ms =
             expect_int(v, min_integration_timeout_ms, 900'000, "integration_timeout_ms");
         out.integration_timeout_where = v.where;
     }},
};

// ---- faults: ---------------------------------------------------------------------------


// YAML 1.2 core schema typing for an unquoted scalar, as JSON.
nlohmann::json scalar_json(const ynode& n) {
    if (n.quoted) return n.text;
    const std::string& t = n.text;
    if (t == "true" || t == "True" || t == "TRUE") return true;
    if (t == "false" || t == "False" || t == "FALSE") return false;
    if (t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL") return nullptr;
    const auto* end = t.data() + t.size();
    std::int64_t i = 0;
    if (auto [p, ec] = std::from_chars(t.data(), end, i); ec == std::errc() && p == end) return i;
    std::uint64_t u = 0;
    if (auto [p, ec] = std::from_chars(t.data(), end, u); ec == std::errc() && p == end) return u;
    double d = 0;
    if (auto [p, ec] = std::from_chars(t.data(), end, d);
        ec == std::errc() && p == end && std::isfinite(d))
        return d;
    return t;
}

// The rule item as JSON, recording where each key path's value (and key) was written.
nlohmann::json rule_json(const ynode& n, const std::string& path,
                         std::map<std::string, source_location>& positions) {
    positions.emplace(path, n.where);
    switch (n.type) {
    case ynode::kind::scalar: return scalar_json(n);
    case ynode::kind::sequence: {
        auto out = nlohmann::json::array();
        for (std::size_t i = 0; i < n.items.size(); ++i)
            out.push_back(rule_json(n.items[i], path + "[" + std::to_string(i) + "]", positions));
        return out;
    }
    case ynode::kind::map: {
        auto out = nlohmann::json::object();
        for (const auto& m : n.members) {
            const std::string child = path.empty() ? m.key : path + "." + m.key;
            // An unknown key is reported at the key itself.
            positions.emplace(child + "#key", m.key_where);
            out[m.key] = rule_json(m.value, child, positions);
        }
        return out;
    }
    default: return nullptr;
    }
}

constexpr field<fault_settings> sla_fields[] = {
    {"gateway",
     [](const ynode& v, fault_settings& out) {
         if (!v.is_null()) out.sla_gateway_percent = expect_percent(v, "faults.sla.gateway");
     }},
    {"invoke",
     [](const ynode& v, fault_settings& out) {
         if (!v.is_null()) out.sla_invoke_percent = expect_percent(v, "faults.sla.invoke");
     }},
};

constexpr field<fault_settings> phantom_fields[] = {
    {"after_share",
     [](const ynode& v, fault_settings& out) {
         const double x = expect_double(v, "after_share");
         if (!(x >= 0.0 && x <= 1.0))
             fail(v, "after_share must be a number from 0 to 1, got " + v.text);
         out.phantom_after_share = x;
     }},
    {"client_sees",
     [](const ynode& v, fault_settings& out) {
         const std::string& c = expect_string(v, "client_sees");
         if (c != "timeout" && c != "hang" && c != "reset")
             fail(v, "client_sees must be timeout, hang or reset, got '" + c + "'");
         out.phantom_client_sees = c;
     }},
};

constexpr field<fault_settings> fault_fields[] = {
    {"max_active_faults",
     [](const ynode& v, fault_settings& out) {
         if (v.is_null()) return;
         out.max_active_faults =
             static_cast<std::size_t>(expect_int(v, 1, 1'000'000, "max_active_faults"));
         out.max_active_where = v.where;
     }},
    {"sla", [](const ynode& v,
               fault_settings& out) { parse_section<fault_settings>(v, sla_fields, out); }},
    {"phantom", [](const ynode& v,
                   fault_settings& out) { parse_section<fault_settings>(v, phantom_fields, out); }},
    {"rules",
     [](const ynode& v, fault_settings& out) {
         if (v.is_null()) return;
         const auto& seq = expect_sequence(v, "faults.rules");
         for (const auto& item : seq.items) {
             expect_map(item, item.path);
             fault_rule_text r;
             r.where = item.where;
             r.path = item.path;
             try {
                 r.json = rule_json(item, "", r.positions).dump();
             } catch (const nlohmann::json::type_error&) {
                 // JSON text must be UTF-8; so must a rule's route, path and header values.
                 fail(item, item.path + " holds text that is not valid UTF-8");
             }
             out.rules.push_back(std::move(r));
         }
     }},
};

// ---- top level -------------------------------------------------------------------------

constexpr field<coldbrew_file> top_level[] = {
    {"host",
     [](const ynode& v, coldbrew_file& out) {
         out.values.host = expect_string(v, "host");
         if (out.values.host.empty()) fail(v, "host must not be empty");
     }},
    {"ports", parse_ports},
    {"seed",
     [](const ynode& v, coldbrew_file& out) {
         if (!v.is_null()) out.values.seed = expect_uint64(v, "seed");
     }},
    {"time_scale",
     [](const ynode& v, coldbrew_file& out) {
         const double x = expect_double(v, "time_scale");
         if (!(x > 0.0 && x <= 1000.0))
             fail(v, "time_scale must be greater than 0 and at most 1000, got " + v.text);
         out.values.time_scale = x;
     }},
    {"region",
     [](const ynode& v, coldbrew_file& out) {
         const std::string& r = expect_string(v, "region");
         if (!looks_like_region(r)) fail(v, "region must look like us-east-1, got '" + r + "'");
         out.values.region = r;
         out.region_set = true;
     }},
    {"account_id",
     [](const ynode& v, coldbrew_file& out) {
         const std::string& id = expect_string(v, "account_id");
         if (id.size() != 12 ||
             !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
             fail(v,
                  "account_id must be 12 digits, got '" + id + "' (quote it if it starts with 0)");
         }
         out.values.account_id = id;
         out.account_id_set = true;
     }},
    {"max_environments",
     [](const ynode& v, coldbrew_file& out) {
         out.values.default_max_environments = read_max_environments(v);
     }},
    {"profile",
     [](const ynode& v, coldbrew_file& out) {
         if (v.is_null()) return;
         const auto p = local_path(v, out, "profile");
         std::error_code ec;
         if (!std::filesystem::exists(p, ec)) fail(v, "profile " + p.string() + " does not exist");
         if (!std::filesystem::is_regular_file(p, ec))
             fail(v, "profile " + p.string() + " is not a regular file");
         out.values.profile = p;
         out.values.profile_where = v.where;
     }},
    {"account_concurrency",
     [](const ynode& v, coldbrew_file& out) {
         if (v.is_null()) return;
         out.values.account_concurrency =
             static_cast<int>(expect_int(v, 1, max_concurrency, "account_concurrency"));
         out.values.account_concurrency_where = v.where;
     }},
    {"decision_log",
     [](const ynode& v, coldbrew_file& out) {
         if (v.is_null()) return;
         const auto p = local_path(v, out, "decision_log");
         std::error_code ec;
         if (std::filesystem::is_directory(p, ec))
             fail(v, "decision_log " + p.string() + " is a directory, expected a file name");
         const auto dir = p.parent_path();
         if (!std::filesystem::exists(dir, ec)) {
             fail(v,
                  "decision_log " + p.string() + ": directory " + dir.string() + " does not exist");
         }
         if (!std::filesystem::is_directory(dir, ec))
             fail(v, "decision_log " + p.string() + ": " + dir.string() + " is not a directory");
         out.values.decision_log = p;
     }},
    {"functions", parse_functions},
    {"faults",
     [](const ynode& v, coldbrew_file& out) {
         parse_section<fault_settings>(v, fault_fields, out.values.faults);
     }},
    {"gateway", [](const ynode& v,
                   coldbrew_file& out) { parse_section<coldbrew_file>(v, gateway_fields, out); }},
};

} // namespace

coldbrew_file parse_coldbrew_file(const ynode& root, const std::filesystem::path& dir) {
    coldbrew_file out;
    out.dir = dir;
    parse_section<coldbrew_file>(root, top_level, out);
    return out;
}

void apply_coldbrew_file(const coldbrew_file& file, stack& out) {
    for (auto& fn : out.functions)
        fn.max_environments = file.values.default_max_environments;
    for (const auto& o : file.functions) {
        auto fn = std::find_if(out.functions.begin(), out.functions.end(),
                               [&](const function& f) { return f.name == o.name; });
        if (fn == out.functions.end()) {
            std::vector<std::string> names;
            for (const auto& f : out.functions)
                names.push_back(f.name);
            const auto best = closest_match(o.name, names);
            throw config_error(o.where, o.path,
                               "no function named '" + o.name + "' in " +
                                   out.template_file.filename().string() +
                                   (best ? " (did you mean '" + *best + "'?)" : std::string()));
        }
        if (o.memory_mb) fn->memory_mb = *o.memory_mb;
        if (o.timeout_s) fn->timeout_s = *o.timeout_s;
        if (o.max_environments) fn->max_environments = *o.max_environments;
        for (const auto& [k, v] : o.environment)
            fn->environment[k] = v;
        if (o.architecture) fn->architecture = *o.architecture;
        if (o.package_type) fn->package_type = *o.package_type;
        if (o.vpc_mode) {
            fn->vpc_mode = *o.vpc_mode;
            fn->vpc = fn->vpc_mode != "none";
        }
        if (o.extensions) fn->extensions = *o.extensions;
        if (o.package_mb) fn->package_mb = o.package_mb;
        if (o.async_maximum_retry_attempts)
            fn->async.maximum_retry_attempts = *o.async_maximum_retry_attempts;
        if (o.async_maximum_event_age_s) fn->async.maximum_event_age_s = *o.async_maximum_event_age_s;
        auto destination = [&](const std::filesystem::path& p) {
            return normal_absolute(p.is_absolute() ? p : file.dir / p);
        };
        if (o.async_on_success) fn->async.on_success = destination(*o.async_on_success);
        if (o.async_on_failure) fn->async.on_failure = destination(*o.async_on_failure);
        if (o.model.runtime) fn->model.runtime = o.model.runtime;
        if (o.model.init_duration) fn->model.init_duration = o.model.init_duration;
        if (o.model.package_ms_per_mb) fn->model.package_ms_per_mb = o.model.package_ms_per_mb;
        if (o.model.keep_alive) fn->model.keep_alive = o.model.keep_alive;
        if (o.model.max_lifetime) fn->model.max_lifetime = o.model.max_lifetime;
        if (o.model.where.line != 0) {
            fn->model.where = o.model.where;
            fn->model.path = o.model.path;
        }
        fn->model_where = o.where;
        fn->model_path = o.path;

        if (o.reserved_concurrency) fn->reserved_concurrency = o.reserved_concurrency->value;
        if (o.provisioned_concurrency)
            fn->provisioned_concurrency = o.provisioned_concurrency->value;
        // The template's own pair was checked when it was read; here coldbrew.yaml changed one
        // of them, so the error belongs to its key: the provisioned value when it set one, else
        // the reserved value it lowered.
        if (fn->reserved_concurrency && fn->provisioned_concurrency &&
            (o.reserved_concurrency || o.provisioned_concurrency)) {
            const auto& at =
                o.provisioned_concurrency ? *o.provisioned_concurrency : *o.reserved_concurrency;
            const std::string reserved_origin =
                o.reserved_concurrency
                    ? o.reserved_concurrency->path
                    : (out.kind == stack::source_kind::sam ? "ReservedConcurrentExecutions"
                                                           : "reservedConcurrency") +
                          std::string(" in ") + out.template_file.filename().string();
            check_provisioned_concurrency(at.where, at.path, fn->name, *fn->provisioned_concurrency,
                                          *fn->reserved_concurrency, reserved_origin);
        }
    }
    if (file.integration_timeout_ms) {
        for (auto& r : out.routes)
            r.integration_timeout_ms = *file.integration_timeout_ms;
    }
}

} // namespace coldbrew::config::detail
