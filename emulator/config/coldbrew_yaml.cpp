// coldbrew.yaml: coldbrew's own options. Unlike templates, every key here is ours, so an
// unknown key is an error (a typo in `time_scale` must not silently run at full speed).
//
// The schema is a set of tables: each section lists its keys and a parse function per key.
// A new section (faults, dependencies, profiles) is one more table and one more row in
// `top_level`; unknown-key errors and "did you mean" come for free.

#include "emulator/config/loaders.hpp"
#include "emulator/config/rules.hpp"
#include "emulator/config/scenario_parts.hpp"
#include "models/bandwidth/bandwidth.hpp"
#include "models/distribution/distribution.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cctype>
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
// `standby: N` or `standby: auto`: (count, follow the peak).
std::pair<std::size_t, bool> read_standby(const ynode& v) {
    if (v.is_scalar() && v.text == "auto") return {1, true};
    if (v.is_scalar() && !v.text.empty() && v.text.size() <= 4 &&
        std::all_of(v.text.begin(), v.text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const auto n = std::stoul(v.text);
        if (n <= 1000) return {static_cast<std::size_t>(n), false};
    }
    fail(v, "must be a number of standby environments from 0 to 1000, or auto; got " +
                (v.is_scalar()  ? "'" + v.text + "'"
                 : v.is_null()  ? std::string("nothing")
                 : v.is_map()   ? std::string("a map")
                                : std::string("a list")));
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

// ---- admin: ----------------------------------------------------------------------------

constexpr field<coldbrew_file> admin_fields[] = {
    {"host",
     [](const ynode& v, coldbrew_file& out) {
         out.values.admin_host = expect_string(v, "admin.host");
         if (out.values.admin_host.empty()) fail(v, "admin.host must not be empty");
     }},
    {"token",
     [](const ynode& v, coldbrew_file& out) {
         const std::string& t = expect_string(v, "admin.token");
         // Sent in an Authorization header: printable ASCII, no spaces; short ones are guessable.
         if (t.size() < 16) fail(v, "admin.token must be at least 16 characters");
         for (char c : t)
             if (c <= ' ' || c > '~') fail(v, "admin.token must be printable ASCII without spaces");
         out.values.admin_token = t;
     }},
};

// ---- network: (top level and functions.<name>.network) ---------------------------------

// YAML 1.2 core booleans; quoted text is a string, not a boolean.
bool read_bool(const ynode& v, std::string_view what) {
    if (v.is_scalar() && !v.quoted) {
        if (v.text == "true" || v.text == "True" || v.text == "TRUE") return true;
        if (v.text == "false" || v.text == "False" || v.text == "FALSE") return false;
    }
    fail(v, std::string(what) + " must be true or false, got " +
                (v.is_scalar() ? "'" + v.text + "'"
                 : v.is_map()  ? std::string("a mapping")
                 : v.is_sequence() ? std::string("a list")
                                   : std::string("nothing")));
}

// A rate with its unit ("625Mbps", "50MB/s"), in bytes per second.
double read_rate(const ynode& v, std::string_view what) {
    const std::string& text = expect_string(v, what);
    try {
        return models::bandwidth::parse_rate(text);
    } catch (const std::invalid_argument& e) {
        fail(v, e.what());  // it quotes the text and gives an example
    }
}

constexpr field<coldbrew_file> network_fields[] = {
    {"scalable_bandwidth",
     [](const ynode& v, coldbrew_file& out) {
         out.values.scalable_bandwidth = read_bool(v, "scalable_bandwidth");
     }},
};

constexpr field<function_override> function_network_fields[] = {
    {"scalable_bandwidth",
     [](const ynode& v, function_override& out) {
         out.scalable_bandwidth = read_bool(v, "scalable_bandwidth");
     }},
    {"bandwidth",
     [](const ynode& v, function_override& out) {
         out.bandwidth_bytes_per_s = read_rate(v, "bandwidth");
     }},
};

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

// ---- functions.<name>.sim and sim: (coldbrew sim only) -------------------------------

// "0.5%" → 0.005: a share of invocations in [0, 100%), written with its % sign.
double read_error_rate(const ynode& v) {
    if (!v.is_scalar() || v.text.empty() || v.text.back() != '%')
        fail(v, "errors is a percentage of invocations, written with its % sign (e.g. 0.5%)");
    const std::string text = v.text.substr(0, v.text.size() - 1);
    double x = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, x);
    if (ec != std::errc() || ptr != end || !std::isfinite(x) || x < 0.0 || x >= 100.0)
        fail(v, "errors must be a percentage from 0% to below 100%, got " + v.text);
    return x / 100.0;
}

function_sim::call read_sim_call(const ynode& v) {
    function_sim::call c;
    c.where = v.where;
    c.path = v.path;
    if (v.is_scalar()) {
        c.target = expect_string(v, "a call (a function or a dependency name)");
        return c;
    }
    expect_map(v, "a call (a name, or {call: name, retry, timeout, async})");
    static constexpr std::array<std::string_view, 4> keys = {"call", "retry", "timeout", "async"};
    const ynode* name = v.find("call");
    if (!name) fail(v, "a call needs 'call' (a function or a dependency name)");
    c.target = expect_string(*name, "call");
    for (const auto& m : v.members) {
        if (m.key == "call") continue;
        if (m.key == "retry")
            c.retry = read_sim_retry(m.value);
        else if (m.key == "timeout")
            c.timeout_ms = read_sim_duration_ms(m.value, "timeout");
        else if (m.key == "async")
            c.async = read_sim_bool(m.value, "async");
        else
            fail_key(m, join_path(v.path, m.key),
                     "unknown key '" + m.key + "'" + did_you_mean(m.key, keys) +
                         "; allowed here: call, retry, timeout, async");
    }
    return c;
}

constexpr field<function_sim> function_sim_fields[] = {
    {"latency",
     [](const ynode& v, function_sim& out) {
         out.latency_ms = read_sim_distribution(v, "latency");
         out.latency_text = v.text;
     }},
    {"errors", [](const ynode& v, function_sim& out) { out.error_rate = read_error_rate(v); }},
    {"cpu_share",
     [](const ynode& v, function_sim& out) {
         const double x = expect_double(v, "cpu_share");
         if (!(x >= 0.0 && x <= 1.0)) fail(v, "cpu_share is the share of latency that is CPU work, from 0 to 1");
         out.cpu_share = x;
     }},
    {"latency_at_memory_mb",
     [](const ynode& v, function_sim& out) {
         out.latency_at_memory_mb = static_cast<int>(expect_int(v, 128, 10240, "latency_at_memory_mb"));
     }},
    {"calls",
     [](const ynode& v, function_sim& out) {
         if (v.is_null()) return;
         for (const auto& item : expect_sequence(v, "calls").items) out.calls.push_back(read_sim_call(item));
     }},
};

constexpr field<stack_sim> stack_sim_fields[] = {
    {"requests",
     [](const ynode& v, stack_sim& out) {
         out.requests = static_cast<std::uint64_t>(expect_int(v, 1, 1'000'000'000'000, "requests"));
     }},
    {"arrivals",
     [](const ynode& v, stack_sim& out) {
         models::sim::arrivals a;
         read_sim_arrivals(v, a);
         out.arrivals = a;
     }},
    {"routes",
     [](const ynode& v, stack_sim& out) {
         if (v.is_null()) return;
         for (const auto& m : expect_map(v, "routes").members) {
             stack_sim::route_weight w;
             w.route = m.key;
             w.where = m.key_where;
             w.path = join_path(v.path, m.key);
             const ynode* weight = &m.value;
             if (m.value.is_map()) {
                 weight = m.value.find("weight");
                 for (const auto& k : m.value.members)
                     if (k.key != "weight")
                         fail_key(k, join_path(m.value.path, k.key),
                                  "unknown key '" + k.key + "'; allowed here: weight");
                 if (!weight) fail(m.value, "a route's mix needs 'weight' (a number above 0)");
             }
             w.weight = expect_double(*weight, "weight");
             if (!(w.weight > 0) || !std::isfinite(w.weight) || w.weight > 1e9)
                 fail(*weight, "a route's weight must be a number above 0, got " + weight->text);
             out.routes.push_back(std::move(w));
         }
     }},
    {"client_timeout",
     [](const ynode& v, stack_sim& out) { out.client_timeout_ms = read_sim_duration_ms(v, "client_timeout"); }},
    {"slo",
     [](const ynode& v, stack_sim& out) {
         const double p = expect_percent(v, "slo");
         if (p >= 100) fail(v, "an slo below 100% leaves an error budget; 100% has none");
         out.slo = p / 100;
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
    {"standby", [](const ynode& v, function_override& out) { out.standby = read_standby(v); }},
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
    {"network",
     [](const ynode& v, function_override& out) {
         parse_section<function_override>(v, function_network_fields, out);
     }},
    {"sim",
     [](const ynode& v, function_override& out) {
         function_sim sim;
         sim.where = v.where;
         sim.path = v.path;
         parse_section<function_sim>(v, function_sim_fields, sim);
         out.sim = std::move(sim);
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

// ---- memory: ---------------------------------------------------------------------------

constexpr field<coldbrew_file> memory_fields[] = {
    {"enforce",
     [](const ynode& v, coldbrew_file& out) {
         out.values.enforce_memory = read_bool(v, "memory.enforce");
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

// ---- dependencies.<name>: --------------------------------------------------------------

struct dependency_entry {
    dependency dep;
    dependency_source source;
    bool upstream_set = false;
};

// Positive durations ("2s", "5min", a bare number of ms), as elsewhere in coldbrew.yaml.
double read_positive_duration_ms(const ynode& v, std::string_view what) {
    const std::string& text = expect_string(v, what);
    double ms = 0;
    try {
        ms = models::parse_duration_ms(text);
    } catch (const models::distribution_error& e) {
        throw config_error(position_in_scalar(v, e.offset()), v.path,
                           std::string(e.what()) + " in '" + text + "'");
    }
    if (!(ms > 0.0))
        fail(v, std::string(what) + " must be a duration greater than 0 (e.g. 2s), got '" + text +
                    "'");
    return ms;
}

// "host:port" or "[v6]:port". Errors point at the character that is wrong.
void read_upstream(const ynode& v, dependency& out) {
    const std::string& text = expect_string(v, "upstream");
    auto fail_at = [&](std::size_t offset, const std::string& message) {
        throw config_error(position_in_scalar(v, offset), v.path, message);
    };
    const std::string shape = " (upstream is host:port, e.g. 127.0.0.1:6379 or [::1]:6379)";
    if (const auto scheme = text.find("://"); scheme != std::string::npos)
        fail_at(0, "upstream is host:port without a scheme, got '" + text + "'" + shape);
    std::string host;
    std::size_t port_at = 0;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos) fail_at(0, "unclosed '[' in '" + text + "'" + shape);
        host = text.substr(1, close - 1);
        if (host.empty() || host.find(':') == std::string::npos)
            fail_at(1, "brackets hold an IPv6 address, got '" + text + "'" + shape);
        for (std::size_t i = 0; i < host.size(); ++i) {
            const char c = host[i];
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'))
                fail_at(1 + i, "unexpected '" + std::string(1, c) + "' in the IPv6 address '" +
                                   host + "'");
        }
        if (close + 1 == text.size() || text[close + 1] != ':')
            fail_at(close + 1, "no port after the address in '" + text + "'" + shape);
        port_at = close + 2;
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string::npos) fail_at(0, "no port in '" + text + "'" + shape);
        host = text.substr(0, colon);
        if (host.find(':') != std::string::npos)
            fail_at(0, "an IPv6 address needs brackets, e.g. [::1]:6379, got '" + text + "'");
        if (host.empty()) fail_at(0, "no host in '" + text + "'" + shape);
        for (std::size_t i = 0; i < host.size(); ++i) {
            const char c = host[i];
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
                fail_at(i, "unexpected '" + std::string(1, c) + "' in the host '" + host + "'" +
                               shape);
        }
        port_at = colon + 1;
    }
    const std::string port = text.substr(port_at);
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 ||
        value > 65535)
        fail_at(port_at, "upstream port must be from 1 to 65535, got '" + port + "'");
    out.upstream_host = host;
    out.upstream_port = value;
}

// A name a process environment and a shell both take; Lambda's own names are not ours to set.
void check_env_name(const std::string& name, const source_location& where,
                    const std::string& path) {
    const bool shaped =
        !name.empty() &&
        (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
        std::all_of(name.begin(), name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
    if (!shaped)
        throw config_error(where, path,
                           "'" + name + "' is not an environment variable name "
                           "(letters, digits and _, not starting with a digit)");
    if (lambda_reserved_env(name))
        throw config_error(where, path,
                           name + " is reserved by Lambda (the runtime sets it); a dependency "
                                  "cannot set it");
}

constexpr std::array<std::string_view, 3> env_placeholders = {"host", "port", "address"};

// Every `{word}` in the template must be a placeholder; other braces (JSON text) are kept.
void check_env_template(const ynode& v) {
    const std::string& text = v.text;
    for (std::size_t open = text.find('{'); open != std::string::npos;
         open = text.find('{', open + 1)) {
        const auto close = text.find('}', open + 1);
        if (close == std::string::npos) break;
        const std::string word = text.substr(open + 1, close - open - 1);
        const bool word_like =
            !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                       c == '.';
            });
        if (!word_like) continue;
        if (std::find(env_placeholders.begin(), env_placeholders.end(), word) !=
            env_placeholders.end())
            continue;
        const auto best = closest_match(word, env_placeholders);
        throw config_error(position_in_scalar(v, open), v.path,
                           "unknown placeholder {" + word + "} in '" + text +
                               "'; allowed: {host}, {port}, {address}" +
                               (best ? " (did you mean {" + *best + "}?)" : std::string()));
    }
}

constexpr field<dependency_entry> latency_fields[] = {
    {"connect",
     [](const ynode& v, dependency_entry& out) {
         out.dep.connect_latency = read_distribution(v, "latency.connect");
     }},
    {"request",
     [](const ynode& v, dependency_entry& out) {
         out.dep.request_latency = read_distribution(v, "latency.request");
     }},
};

constexpr field<dependency_entry> dependency_bandwidth_fields[] = {
    {"per_connection",
     [](const ynode& v, dependency_entry& out) {
         out.dep.per_connection_bytes_per_s = read_rate(v, "per_connection");
     }},
    {"environment",
     [](const ynode& v, dependency_entry& out) {
         out.dep.environment_cap = read_bool(v, "environment");
     }},
};

constexpr field<dependency_entry> timeout_fields[] = {
    {"connect",
     [](const ynode& v, dependency_entry& out) {
         out.dep.connect_timeout_ms = read_positive_duration_ms(v, "timeouts.connect");
     }},
    {"idle",
     [](const ynode& v, dependency_entry& out) {
         out.dep.idle_timeout_ms = read_positive_duration_ms(v, "timeouts.idle");
     }},
};

constexpr field<dependency_entry> availability_fields[] = {
    {"sla",
     [](const ynode& v, dependency_entry& out) {
         out.dep.availability_percent = expect_percent(v, "sla");
     }},
    {"outcome",
     [](const ynode& v, dependency_entry& out) {
         static constexpr std::array<std::string_view, 3> outcomes = {"refuse", "reset", "hang"};
         out.dep.availability_outcome = expect_choice(v, "outcome", outcomes);
     }},
    {"on",
     [](const ynode& v, dependency_entry& out) {
         static constexpr std::array<std::string_view, 2> points = {"connect", "request"};
         out.dep.availability_on = expect_choice(v, "on", points);
     }},
};

constexpr field<dependency_entry> dependency_fields[] = {
    {"upstream",
     [](const ynode& v, dependency_entry& out) {
         read_upstream(v, out.dep);
         out.upstream_set = true;
     }},
    {"env",
     [](const ynode& v, dependency_entry& out) {
         if (v.is_null()) return;
         if (v.is_scalar()) {
             // `env: NAME` is the common case: one variable holding host:port.
             check_env_name(v.text, v.where, v.path);
             out.dep.env.emplace_back(v.text, "{address}");
             out.source.env.push_back({v.text, v.where, v.path});
             return;
         }
         if (!v.is_map())
             fail(v, "env must be a variable name or a mapping of variable name to template "
                     "such as {DATA_URL: \"http://{address}/\"}");
         for (const auto& m : v.members) {
             const std::string path = join_path(v.path, m.key);
             check_env_name(m.key, m.key_where, path);
             const std::string& tmpl = expect_string(m.value, "env template");
             check_env_template(m.value);
             out.dep.env.emplace_back(m.key, tmpl);
             out.source.env.push_back({m.key, m.key_where, path});
         }
     }},
    {"functions",
     [](const ynode& v, dependency_entry& out) {
         if (v.is_null()) return;
         const auto& seq = expect_sequence(v, "functions");
         if (seq.items.empty())
             fail(v, "functions must name at least one function (leave it out for every "
                     "function)");
         for (const auto& item : seq.items) {
             const std::string& name = expect_string(item, "function name");
             if (name.empty()) fail(item, "function name must not be empty");
             out.source.functions.push_back({name, item.where, item.path});
         }
     }},
    {"listen",
     [](const ynode& v, dependency_entry& out) {
         out.dep.listen_port = static_cast<int>(expect_int(v, 0, 65535, "listen"));
         out.source.listen_where = v.where;
         out.source.listen_path = v.path;
     }},
    {"latency",
     [](const ynode& v, dependency_entry& out) {
         parse_section<dependency_entry>(v, latency_fields, out);
     }},
    {"bandwidth",
     [](const ynode& v, dependency_entry& out) {
         parse_section<dependency_entry>(v, dependency_bandwidth_fields, out);
     }},
    {"timeouts",
     [](const ynode& v, dependency_entry& out) {
         parse_section<dependency_entry>(v, timeout_fields, out);
     }},
    {"availability",
     [](const ynode& v, dependency_entry& out) {
         if (v.is_null()) return;
         parse_section<dependency_entry>(v, availability_fields, out);
         // Without an SLA nothing fails; an outcome alone is a half-written block.
         if (!out.dep.availability_percent)
             fail(v, "availability needs sla, e.g. {sla: 99.9%, outcome: reset}");
         if (out.dep.availability_outcome == "refuse") {
             // A refused connection never reaches a request.
             const ynode* on = v.find("on");
             if (on && out.dep.availability_on == "request")
                 fail(*on, "outcome refuse fails connections before the upstream is reached, so "
                           "it applies on connect, not on request");
             out.dep.availability_on = "connect";
         }
     }},
};

// Admin API URLs and fault rules name dependencies, so names stay URL- and shell-safe.
bool dependency_name_ok(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
}

void parse_dependencies(const ynode& v, coldbrew_file& out) {
    if (v.is_null()) return;
    for (const auto& m : expect_map(v, "dependencies").members) {
        dependency_entry e;
        e.dep.name = m.key;
        e.dep.where = m.key_where;
        e.dep.path = join_path(v.path, m.key);
        if (!dependency_name_ok(m.key))
            fail_key(m, e.dep.path,
                     "dependency name '" + m.key +
                         "' must be letters, digits, '-' and '_' (it appears in admin API URLs "
                         "and fault rules)");
        parse_section<dependency_entry>(m.value, dependency_fields, e);
        if (!e.upstream_set)
            fail(ynode::make_map(m.key_where, e.dep.path),
                 "dependency '" + m.key + "' needs upstream: host:port");
        out.values.dependencies.push_back(std::move(e.dep));
        out.dependency_sources.push_back(std::move(e.source));
    }
}

// Two listeners cannot share a port: dependencies' `listen` against each other and against
// the ports coldbrew.yaml names (0 picks a free one and never collides).
void check_listen_ports(const ynode& root, const coldbrew_file& out) {
    std::map<int, std::string> used;
    if (const ynode* ports = root.find("ports"); ports && ports->is_map()) {
        for (const auto& m : ports->members) {
            const int port = m.key == "gateway" ? out.values.gateway_port
                             : m.key == "invoke" ? out.values.invoke_port
                                                 : out.values.admin_port;
            if (port != 0) used.emplace(port, m.value.path);
        }
    }
    for (std::size_t i = 0; i < out.values.dependencies.size(); ++i) {
        const int port = out.values.dependencies[i].listen_port;
        if (port == 0) continue;
        const auto& src = out.dependency_sources[i];
        const auto [it, fresh] = used.emplace(port, src.listen_path);
        if (!fresh)
            throw config_error(src.listen_where, src.listen_path,
                               "listen port " + std::to_string(port) + " is already used by " +
                                   it->second);
    }
}

// ---- telemetry -------------------------------------------------------------------------

constexpr field<coldbrew_file> telemetry_fields[] = {
    {"trace_file",
     [](const ynode& v, coldbrew_file& out) {
         if (v.is_null()) return;
         const auto p = local_path(v, out, "telemetry.trace_file");
         std::error_code ec;
         if (std::filesystem::is_directory(p, ec))
             fail(v, "trace_file " + p.string() + " is a directory, expected a file name");
         if (!std::filesystem::is_directory(p.parent_path(), ec))
             fail(v, "trace_file " + p.string() + ": directory " + p.parent_path().string() +
                         " does not exist");
         out.values.trace_file = p;
     }},
    {"otlp_endpoint",
     [](const ynode& v, coldbrew_file& out) {
         if (v.is_null()) return;
         const std::string& url = expect_string(v, "otlp_endpoint");
         // The rest of the URL is checked where it is used (telemetry::parse_otlp_endpoint).
         if (url.rfind("http://", 0) != 0)
             fail(v, "otlp_endpoint must be an http:// URL (OTLP/HTTP, e.g. "
                     "http://127.0.0.1:4318), got '" + url + "'");
         out.values.otlp_endpoint = url;
     }},
};

void parse_telemetry(const ynode& v, coldbrew_file& out) {
    parse_section<coldbrew_file>(v, telemetry_fields, out);
}

// ---- runtimes: -------------------------------------------------------------------------

// `runtimes: {python3.12: /opt/py312/bin/python3}`: the interpreter for a runtime identifier.
// Keys are the Node.js and Python identifiers of the runtime table (OS-only runtimes run their
// own bootstrap); values must be executable files now, not at the first cold start.
void parse_runtimes(const ynode& v, coldbrew_file& out) {
    if (v.is_null()) return;
    expect_map(v, "runtimes");
    std::vector<std::string_view> ids;
    for (const auto& r : lambda_runtimes())
        if (r.id.rfind("nodejs", 0) == 0 || r.id.rfind("python", 0) == 0) ids.push_back(r.id);
    for (const auto& m : v.members) {
        const std::string path = join_path(v.path, m.key);
        if (std::find(ids.begin(), ids.end(), m.key) == ids.end()) {
            std::string allowed;
            for (auto id : ids) allowed += (allowed.empty() ? "" : ", ") + std::string(id);
            fail_key(m, path,
                     "unknown runtime '" + m.key + "'" + did_you_mean(m.key, ids) +
                         "; runtimes takes Node.js and Python runtime identifiers: " + allowed);
        }
        const std::string& text = expect_string(m.value, path);
        if (text.empty()) fail(m.value, path + " must not be empty");
        std::filesystem::path p(text);
        if (text == "~" || text.rfind("~/", 0) == 0) {
            const char* home = std::getenv("HOME");
            if (!home || !*home) fail(m.value, path + ": ~ needs HOME to be set");
            p = std::filesystem::path(home) / text.substr(text.size() > 1 ? 2 : 1);
        }
        p = normal_absolute(p.is_absolute() ? p : out.dir / p);
        std::error_code ec;
        if (!std::filesystem::exists(p, ec)) fail(m.value, p.string() + " does not exist");
        if (!std::filesystem::is_regular_file(p, ec))
            fail(m.value, p.string() + " is not a file (expected the interpreter itself, e.g. "
                                       ".../bin/python3.12 or .../bin/node)");
        if (::access(p.c_str(), X_OK) != 0) fail(m.value, p.string() + " is not executable");
        out.values.runtimes[m.key] = {p, m.value.where};
    }
}

// ---- api_keys: and authorizers: ---------------------------------------------------------

// `api_keys: {partner: "a-key-of-twenty-chars+"}` or `{partner: {value: …, enabled: false}}`.
// A value must be at least 20 characters, as API Gateway requires of one (CreateApiKey; CDK
// ApiKeyOptions.value: "Must be at least 20 characters long").
void parse_api_keys(const ynode& v, coldbrew_file& out) {
    if (v.is_null()) return;
    expect_map(v, "api_keys");
    auto read_value = [](const ynode& n, const std::string& path) {
        const std::string& text = expect_string(n, path);
        if (text.size() < 20)
            fail(n, path + ": an API key value must be at least 20 characters, got " +
                        std::to_string(text.size()));
        return text;
    };
    for (const auto& m : v.members) {
        coldbrew_file::api_key_setting k;
        k.name = m.key;
        k.where = m.key_where;
        k.path = join_path(v.path, m.key);
        if (m.key.empty()) fail_key(m, k.path, "an API key name must not be empty");
        if (m.value.is_map()) {
            static constexpr std::array<std::string_view, 2> keys = {"value", "enabled"};
            for (const auto& f : m.value.members) {
                const std::string path = join_path(k.path, f.key);
                if (f.key == "value") {
                    if (!f.value.is_null()) k.value = read_value(f.value, path);
                } else if (f.key == "enabled") {
                    k.enabled = read_bool(f.value, path);
                } else {
                    fail_key(f, path,
                             "unknown key '" + f.key + "'" + did_you_mean(f.key, keys) +
                                 "; allowed here: value, enabled");
                }
            }
        } else if (!m.value.is_null()) {
            k.value = read_value(m.value, k.path);
        }
        out.api_keys.push_back(std::move(k));
    }
}

// `authorizers: {cognito: {jwks: keys/jwks.json}}`: the keys a JWT authorizer verifies
// tokens with, from a file (relative to coldbrew.yaml's directory; it must exist) or an
// http:// or https:// URL, in place of the issuer's discovery document.
void parse_authorizers(const ynode& v, coldbrew_file& out) {
    if (v.is_null()) return;
    expect_map(v, "authorizers");
    for (const auto& m : v.members) {
        coldbrew_file::authorizer_setting a;
        a.name = m.key;
        a.where = m.key_where;
        a.path = join_path(v.path, m.key);
        const ynode& def = expect_map(m.value, a.path);
        static constexpr std::array<std::string_view, 1> keys = {"jwks"};
        const ynode* jwks = nullptr;
        for (const auto& f : def.members) {
            if (f.key != "jwks")
                fail_key(f, join_path(a.path, f.key),
                         "unknown key '" + f.key + "'" + did_you_mean(f.key, keys) +
                             "; allowed here: jwks");
            jwks = &f.value;
        }
        if (!jwks) fail_key(m, a.path, "authorizers." + m.key + " needs jwks (a file or URL)");
        const std::string path = join_path(a.path, "jwks");
        const std::string& text = expect_string(*jwks, path);
        if (text.empty()) fail(*jwks, path + " must not be empty");
        a.jwks_where = jwks->where;
        if (text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0) {
            const auto host = text.find("//") + 2;
            if (host >= text.size() || text.find_first_of("/?#", host) == host)
                fail(*jwks, path + ": '" + text + "' has no host");
            a.jwks = text;
        } else if (text.find("://") != std::string::npos) {
            fail(*jwks, path + ": only http:// and https:// URLs can be fetched, got '" + text + "'");
        } else {
            const auto p = local_path(*jwks, out, path);
            std::error_code ec;
            if (!std::filesystem::exists(p, ec)) fail(*jwks, path + ": " + p.string() + " does not exist");
            if (!std::filesystem::is_regular_file(p, ec))
                fail(*jwks, path + ": " + p.string() + " is not a regular file");
            a.jwks = p.string();
        }
        out.authorizers.push_back(std::move(a));
    }
}

// ---- top level -------------------------------------------------------------------------

constexpr field<coldbrew_file> top_level[] = {
    {"host",
     [](const ynode& v, coldbrew_file& out) {
         out.values.host = expect_string(v, "host");
         if (out.values.host.empty()) fail(v, "host must not be empty");
     }},
    {"ports", parse_ports},
    {"admin", [](const ynode& v,
                 coldbrew_file& out) { parse_section<coldbrew_file>(v, admin_fields, out); }},
    {"request_timeout_ms",
     [](const ynode& v, coldbrew_file& out) {
         out.values.request_timeout_ms =
             static_cast<std::uint64_t>(expect_int(v, 1, 3'600'000, "request_timeout_ms"));
     }},
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
    {"standby",
     [](const ynode& v, coldbrew_file& out) {
         std::tie(out.values.default_standby, out.values.default_standby_auto) = read_standby(v);
     }},
    {"memory_budget_mb",
     [](const ynode& v, coldbrew_file& out) {
         if (v.is_null()) {
             out.values.memory_budget_mb.reset();
             return;
         }
         out.values.memory_budget_mb =
             static_cast<std::uint64_t>(expect_int(v, 1, 16777216, "memory_budget_mb"));
     }},
    {"watch", [](const ynode& v, coldbrew_file& out) { out.values.watch = read_bool(v, "watch"); }},
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
    {"network", [](const ynode& v,
                   coldbrew_file& out) { parse_section<coldbrew_file>(v, network_fields, out); }},
    {"dependencies", parse_dependencies},
    {"telemetry", parse_telemetry},
    {"runtimes", parse_runtimes},
    {"memory", [](const ynode& v,
                  coldbrew_file& out) { parse_section<coldbrew_file>(v, memory_fields, out); }},
    {"api_keys", parse_api_keys},
    {"authorizers", parse_authorizers},
    {"sim",
     [](const ynode& v, coldbrew_file& out) {
         out.values.sim.where = v.where;
         parse_section<stack_sim>(v, stack_sim_fields, out.values.sim);
     }},
};

std::string position_text(const source_location& where) {
    return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
}

// The logical ids a dependency reaches: its `functions`, or every function.
std::vector<std::string> dependency_targets(const dependency& dep, const stack& s) {
    if (!dep.functions.empty()) return dep.functions;
    std::vector<std::string> all;
    for (const auto& fn : s.functions)
        all.push_back(fn.name);
    return all;
}

void apply_dependencies(const coldbrew_file& file, stack& out) {
    out.settings.scalable_bandwidth = file.values.scalable_bandwidth;
    out.settings.dependencies = file.values.dependencies;
    auto& deps = out.settings.dependencies;
    const std::string template_name = out.template_file.filename().string();

    // `functions` items: a logical id, or the deployed FunctionName handlers know themselves by.
    for (std::size_t i = 0; i < deps.size(); ++i) {
        for (const auto& item : file.dependency_sources[i].functions) {
            const function* fn = out.find_function(item.value);
            if (!fn) {
                auto it = std::find_if(out.functions.begin(), out.functions.end(),
                                       [&](const function& f) { return f.function_name == item.value; });
                if (it != out.functions.end()) fn = &*it;
            }
            if (!fn) {
                std::vector<std::string> names;
                std::string known;
                for (const auto& f : out.functions) {
                    names.push_back(f.name);
                    known += (known.empty() ? "" : ", ") + f.name;
                    if (f.function_name != f.name) {
                        names.push_back(f.function_name);
                        known += " (" + f.function_name + ")";
                    }
                }
                const auto best = closest_match(item.value, names);
                throw config_error(item.where, item.path,
                                   "no function named '" + item.value + "' in " + template_name +
                                       (best ? " (did you mean '" + *best + "'?)" : std::string()) +
                                       "; functions: " + known);
            }
            if (std::find(deps[i].functions.begin(), deps[i].functions.end(), fn->name) ==
                deps[i].functions.end())
                deps[i].functions.push_back(fn->name);
        }
    }

    std::vector<std::vector<std::string>> targets;
    for (const auto& dep : deps)
        targets.push_back(dependency_targets(dep, out));

    // One variable, one value: two dependencies cannot both set it in the same function.
    for (std::size_t j = 0; j < deps.size(); ++j) {
        for (std::size_t k = 0; k < deps[j].env.size(); ++k) {
            const auto& var = deps[j].env[k].first;
            for (std::size_t i = 0; i < j; ++i) {
                const auto earlier = std::find_if(deps[i].env.begin(), deps[i].env.end(),
                                                  [&](const auto& e) { return e.first == var; });
                if (earlier == deps[i].env.end()) continue;
                const auto common =
                    std::find_if(targets[j].begin(), targets[j].end(), [&](const std::string& f) {
                        return std::find(targets[i].begin(), targets[i].end(), f) !=
                               targets[i].end();
                    });
                if (common == targets[j].end()) continue;
                const auto& at = file.dependency_sources[j].env[k];
                const auto& first =
                    file.dependency_sources[i].env[static_cast<std::size_t>(earlier - deps[i].env.begin())];
                throw config_error(at.where, at.path,
                                   var + " is already set by " + deps[i].path + " (" +
                                       position_text(first.where) + ") for function " + *common +
                                       "; a variable can come from one dependency only");
            }
        }
    }

    // The proxy's address replaces a value the function sets itself; say so once per function.
    for (std::size_t i = 0; i < deps.size(); ++i) {
        for (std::size_t k = 0; k < deps[i].env.size(); ++k) {
            const auto& var = deps[i].env[k].first;
            const auto& at = file.dependency_sources[i].env[k];
            for (const auto& name : targets[i]) {
                const function* fn = out.find_function(name);
                if (!fn || !fn->environment.count(var)) continue;
                auto o = std::find_if(file.functions.begin(), file.functions.end(),
                                      [&](const function_override& f) {
                                          return f.name == name && f.environment.count(var);
                                      });
                const std::string origin = o != file.functions.end()
                                               ? "coldbrew.yaml " + o->path + ".environment"
                                               : template_name;
                out.warnings.push_back(format_config_error(
                    at.where, at.path,
                    var + " replaces the value " + name + " sets in " + origin +
                        ": the dependency's value wins"));
            }
        }
    }
}

// coldbrew.yaml api_keys: a key the template declares takes the value and state given; a
// new one goes into the plan "coldbrew.yaml" (no limits), which covers every REST API with a
// key-required route.
void apply_api_keys(const coldbrew_file& file, stack& out) {
    for (const auto& s : file.api_keys) {
        auto k = std::find_if(out.api_keys.begin(), out.api_keys.end(),
                              [&](const api_key& x) { return x.name == s.name; });
        if (k == out.api_keys.end()) {
            api_key added;
            added.name = s.name;
            added.where = s.where;
            out.api_keys.push_back(std::move(added));
            k = out.api_keys.end() - 1;
            auto plan = std::find_if(out.usage_plans.begin(), out.usage_plans.end(),
                                     [](const usage_plan& p) { return p.name == "coldbrew.yaml"; });
            if (plan == out.usage_plans.end()) {
                usage_plan p;
                p.name = "coldbrew.yaml";
                p.where = s.where;
                for (const auto& a : out.apis) {
                    if (a.kind != api_kind::rest) continue;
                    if (std::any_of(out.routes.begin(), out.routes.end(), [&](const route& r) {
                            return r.api_id == a.id && r.api_key_required;
                        }))
                        p.api_ids.push_back(a.id);
                }
                out.usage_plans.push_back(std::move(p));
                plan = out.usage_plans.end() - 1;
            }
            plan->keys.push_back(s.name);
        }
        if (s.value) k->value = *s.value;
        if (s.enabled) k->enabled = *s.enabled;
    }
}

// coldbrew.yaml authorizers: jwks for every JWT authorizer of that name, in any API.
void apply_authorizers(const coldbrew_file& file, stack& out) {
    for (const auto& s : file.authorizers) {
        bool found = false;
        std::vector<std::string> names;
        for (auto& a : out.apis) {
            for (auto& z : a.authorizers) {
                if (z.kind != authorizer::type::jwt) continue;
                if (std::find(names.begin(), names.end(), z.name) == names.end())
                    names.push_back(z.name);
                if (z.name != s.name) continue;
                z.jwks = s.jwks;
                z.jwks_where = s.jwks_where;
                found = true;
            }
        }
        if (found) continue;
        const auto best = closest_match(s.name, names);
        std::string known;
        for (const auto& n : names)
            known += (known.empty() ? "" : ", ") + n;
        throw config_error(s.where, s.path,
                           "no JWT authorizer named '" + s.name + "' in " +
                               out.template_file.filename().string() +
                               (best ? " (did you mean '" + *best + "'?)" : std::string()) +
                               (names.empty() ? "; it declares none"
                                              : "; JWT authorizers: " + known));
    }
}

} // namespace

coldbrew_file parse_coldbrew_file(const ynode& root, const std::filesystem::path& dir) {
    coldbrew_file out;
    out.dir = dir;
    parse_section<coldbrew_file>(root, top_level, out);
    check_listen_ports(root, out);
    return out;
}

void apply_coldbrew_file(const coldbrew_file& file, stack& out) {
    for (auto& fn : out.functions) {
        fn.max_environments = file.values.default_max_environments;
        fn.standby = file.values.default_standby;
        fn.standby_auto = file.values.default_standby_auto;
    }
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
        if (o.standby) std::tie(fn->standby, fn->standby_auto) = *o.standby;
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
        if (o.scalable_bandwidth) fn->scalable_bandwidth = o.scalable_bandwidth;
        if (o.bandwidth_bytes_per_s) fn->bandwidth_bytes_per_s = o.bandwidth_bytes_per_s;
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
        if (o.sim) fn->sim = o.sim;

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
    apply_dependencies(file, out);
    apply_api_keys(file, out);
    apply_authorizers(file, out);
}

} // namespace coldbrew::config::detail
