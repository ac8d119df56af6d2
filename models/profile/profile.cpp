#include "models/profile/profile.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string_view>
#include <yaml-cpp/yaml.h>

namespace coldbrew::models {

namespace detail {
extern const std::string builtin_profile_yaml; // generated from models/profiles/aws-2026.yaml
}

namespace {

std::string format_profile_error(const std::string& file, int line, int column,
                                 const std::string& key, const std::string& message) {
    // The same "file:line:column: key: message" shape as coldbrew.yaml errors; unknown parts
    // are left out rather than printed as 0.
    std::string out;
    if (!file.empty()) {
        out += file;
        if (line > 0) {
            out += ':' + std::to_string(line);
            if (column > 0) out += ':' + std::to_string(column);
        }
        out += ": ";
    }
    if (!key.empty()) out += key + ": ";
    out += message;
    return out;
}

struct location {
    int line = 0, column = 0; // 1-based; 0 = unknown
};

location location_of(const YAML::Node& node) {
    const YAML::Mark m = node.Mark();
    if (m.line < 0 || m.column < 0) return {};
    return {m.line + 1, m.column + 1};
}

std::string join_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

std::string join_list(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += ", ";
        out += item;
    }
    return out;
}

std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Map:
        return "a mapping";
    case YAML::NodeType::Sequence:
        return "a list";
    case YAML::NodeType::Scalar:
        return "'" + node.Scalar() + "'";
    default:
        return "nothing";
    }
}

// A node with the key path and position to report problems at.
struct value {
    YAML::Node node;
    std::string path;
    location at;     // the node itself (its key's position when the value is empty)
    location key_at; // the key that introduced it (the node itself for the document)
};

struct member {
    std::string key;
    value val;
};

struct mapping {
    value self;
    std::vector<member> members; // document order

    const member* find(std::string_view key) const {
        for (const auto& m : members)
            if (m.key == key) return &m;
        return nullptr;
    }
};

class reader {
  public:
    reader(const std::string& file, const std::string& text) : file_(file) {
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);)
            lines_.push_back(line);
    }

    [[noreturn]] void fail(location at, const std::string& path, const std::string& message) const {
        throw profile_error(file_, at.line, at.column, path, message);
    }
    [[noreturn]] void fail(const value& v, const std::string& message) const {
        fail(v.at, v.path, message);
    }

    mapping as_mapping(const value& v) const {
        if (!v.node.IsMap()) fail(v, "expected a mapping, got " + describe(v.node));
        mapping out{v, {}};
        for (auto it = v.node.begin(); it != v.node.end(); ++it) {
            // Copies: the iterator's -> yields a temporary proxy.
            const YAML::Node k = it->first;
            const YAML::Node n = it->second;
            const location key_at = location_of(k);
            if (!k.IsScalar()) fail(key_at, v.path, "mapping keys must be plain strings");
            std::string key = k.Scalar();
            std::string path = join_path(v.path, key);
            if (out.find(key)) fail(key_at, path, "duplicate key '" + key + "'");
            // An empty value has no position of its own (yaml-cpp points past it).
            const location at = n.IsNull() ? key_at : location_of(n);
            out.members.push_back({std::move(key), value{n, std::move(path), at, key_at}});
        }
        return out;
    }

    void allow_only(const mapping& m, std::initializer_list<std::string_view> allowed) const {
        for (const auto& mem : m.members) {
            if (std::find(allowed.begin(), allowed.end(), mem.key) != allowed.end()) continue;
            std::vector<std::string> names(allowed.begin(), allowed.end());
            fail(mem.val.key_at, mem.val.path,
                 "unknown key '" + mem.key + "' (allowed: " + join_list(names) + ")");
        }
    }

    const value& require(const mapping& m, std::string_view key) const {
        if (const member* mem = m.find(key)) return mem->val;
        fail(m.self.key_at, join_path(m.self.path, std::string(key)),
             "missing required key '" + std::string(key) + "'" +
                 (key == "source" ? " (every section says where its numbers come from)" : ""));
    }

    std::string text(const value& v) const {
        if (!v.node.IsScalar() || v.node.Scalar().empty())
            fail(v, "expected a non-empty string, got " + describe(v.node));
        return v.node.Scalar();
    }

    double number(const value& v) const {
        if (!v.node.IsScalar()) fail(v, "expected a number, got " + describe(v.node));
        const std::string& s = v.node.Scalar();
        double out = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(out))
            fail(v, "expected a number, got '" + s + "'");
        return out;
    }

    double number_at_least(const value& v, double min, bool inclusive) const {
        const double x = number(v);
        if (inclusive ? x < min : x <= min) {
            std::ostringstream msg;
            msg << "must be " << (inclusive ? ">= " : "> ") << min << ", got " << v.node.Scalar();
            fail(v, msg.str());
        }
        return x;
    }

    static std::string number_text(double x) {
        std::ostringstream out;
        out << x;
        return out.str();
    }

    int integer(const value& v, int min) const {
        if (!v.node.IsScalar()) fail(v, "expected an integer, got " + describe(v.node));
        const std::string& s = v.node.Scalar();
        int out = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
            fail(v, "expected an integer, got '" + s + "'");
        if (out < min) fail(v, "must be >= " + std::to_string(min) + ", got " + s);
        return out;
    }

    distribution dist(const value& v) const {
        if (!v.node.IsScalar())
            fail(v, "expected a distribution such as 'lognormal(median=240ms, p99=630ms)', got " +
                        describe(v.node));
        try {
            return parse_distribution(v.node.Scalar());
        } catch (const distribution_error& e) {
            fail(column_at(v, e.offset()), v.path,
                 "invalid distribution '" + v.node.Scalar() + "': " + e.what());
        }
    }

    double duration_ms(const value& v) const {
        if (!v.node.IsScalar())
            fail(v, "expected a duration such as '10s', got " + describe(v.node));
        try {
            return parse_duration_ms(v.node.Scalar());
        } catch (const distribution_error& e) {
            fail(column_at(v, e.offset()), v.path,
                 "invalid duration '" + v.node.Scalar() + "': " + e.what());
        }
    }

    // A rate with its unit ("625Mbps", "2MBps"), bytes per second.
    double rate(const value& v) const {
        if (!v.node.IsScalar())
            fail(v, "expected a rate such as '625Mbps' or '2MBps', got " + describe(v.node));
        try {
            return bandwidth::parse_rate(v.node.Scalar());
        } catch (const std::invalid_argument& e) {
            fail(v, e.what());
        }
    }

    // A size with a binary unit, as Lambda's quotas write payload sizes ("6MB" = 6 MiB):
    // B, KB, MB, GB (also KiB, MiB, GiB), an optional space before the unit. Bytes, >= 0.
    double size_bytes(const value& v) const {
        const std::string expected = "expected a size such as '6MB' (B, KB, MB, GB: binary, "
                                     "1 MB = 1,048,576 bytes as in Lambda's payload quotas)";
        if (!v.node.IsScalar()) fail(v, expected + ", got " + describe(v.node));
        const std::string& s = v.node.Scalar();
        double n = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (end == s.data() || ec != std::errc() || !std::isfinite(n))
            fail(v, expected + ", got '" + s + "'");
        std::string_view unit(end, static_cast<std::size_t>(s.data() + s.size() - end));
        if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
        double scale = 0;
        if (unit == "B")
            scale = 1;
        else if (unit == "KB" || unit == "KiB")
            scale = 1024;
        else if (unit == "MB" || unit == "MiB")
            scale = 1024.0 * 1024;
        else if (unit == "GB" || unit == "GiB")
            scale = 1024.0 * 1024 * 1024;
        else if (unit.empty())
            fail(v, "'" + s + "' has no unit; " + expected);
        else
            fail(v, "unknown size unit '" + std::string(unit) + "' in '" + s + "'; " + expected);
        if (n < 0) fail(v, "a size cannot be negative, got '" + s + "'");
        return n * scale;
    }

  private:
    // The position of byte `offset` of a scalar's value in the file. Exact when the value up
    // to the offset stands verbatim on the scalar's first line (plain or quoted without
    // escapes); otherwise the scalar's own position.
    location column_at(const value& v, std::size_t offset) const {
        location at = v.at;
        if (at.line < 1 || static_cast<std::size_t>(at.line) > lines_.size()) return at;
        const std::string& line = lines_[static_cast<std::size_t>(at.line) - 1];
        std::size_t start = static_cast<std::size_t>(at.column) - 1;
        if (start < line.size() && (line[start] == '"' || line[start] == '\'')) ++start;
        const std::string& s = v.node.Scalar();
        const std::size_t n = std::min(offset, s.size());
        if (start + n <= line.size() && line.compare(start, n, s, 0, n) == 0)
            at.column = static_cast<int>(start + offset) + 1;
        return at;
    }

    const std::string& file_;
    std::vector<std::string> lines_;
};

// The profile's sections, read from the document in a fixed order whatever their order in
// the file (runtime_aliases are checked against runtimes).
class profile_reader {
  public:
    profile_reader(const std::string& file, const std::string& text) : r_(file, text) {}

    profile read(const YAML::Node& root) {
        profile p;
        value doc{root, "", location_of(root), location_of(root)};
        if (root.IsNull() || !root.IsDefined()) {
            doc.at = doc.key_at = {1, 1};
            r_.fail(doc, "the profile is empty; expected a mapping with keys name, runtimes, "
                         "runtime_aliases, package, vpc, extensions, lifetime, scaling, compute, "
                         "bandwidth, availability, prices");
        }
        const mapping top = r_.as_mapping(doc);
        r_.allow_only(top, {"name", "runtimes", "runtime_aliases", "package", "vpc", "extensions",
                            "lifetime", "scaling", "compute", "bandwidth", "availability",
                            "prices"});
        p.name = r_.text(r_.require(top, "name"));
        read_runtimes(p, r_.require(top, "runtimes"));
        read_aliases(p, r_.require(top, "runtime_aliases"));
        read_package(p, r_.require(top, "package"));
        read_vpc(p, r_.require(top, "vpc"));
        read_extensions(p, r_.require(top, "extensions"));
        read_lifetime(p, r_.require(top, "lifetime"));
        read_scaling(p, r_.require(top, "scaling"));
        read_compute(p, r_.require(top, "compute"));
        read_bandwidth(p, r_.require(top, "bandwidth"));
        read_availability(p, r_.require(top, "availability"));
        read_prices(p, r_.require(top, "prices"));
        return p;
    }

  private:
    // A section source, or "" when the section may go without one because each entry has
    // its own.
    std::string optional_source(const mapping& m) {
        const member* s = m.find("source");
        return s ? r_.text(s->val) : std::string();
    }

    void read_runtimes(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        p.runtimes_source = optional_source(m);
        for (const auto& mem : m.members) {
            if (mem.key == "source") continue;
            const mapping row_map = r_.as_mapping(mem.val);
            r_.allow_only(row_map, {"family", "zip", "image", "source"});
            runtime_row row;
            row.name = mem.key;
            row.family = r_.text(r_.require(row_map, "family"));
            const auto arch_pair = [&](std::string_view type, distribution& x86,
                                       distribution& arm) {
                const mapping archs = r_.as_mapping(r_.require(row_map, type));
                r_.allow_only(archs, {"x86_64", "arm64"});
                x86 = r_.dist(r_.require(archs, "x86_64"));
                arm = r_.dist(r_.require(archs, "arm64"));
            };
            arch_pair("zip", row.zip_x86_64, row.zip_arm64);
            arch_pair("image", row.image_x86_64, row.image_arm64);
            if (const member* s = row_map.find("source")) {
                row.source = r_.text(s->val);
            } else if (!p.runtimes_source.empty()) {
                row.source = p.runtimes_source;
            } else {
                r_.fail(mem.val.key_at, join_path(mem.val.path, "source"),
                        "missing required key 'source' (give the row one, or the runtimes "
                        "section)");
            }
            p.runtimes.emplace(row.name, std::move(row));
        }
        if (p.runtimes.empty()) r_.fail(v, "no runtime rows");
    }

    void read_aliases(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        p.aliases_source = r_.text(r_.require(m, "source"));
        for (const auto& mem : m.members) {
            if (mem.key == "source") continue;
            const std::string& pattern = mem.key;
            const auto star = pattern.find('*');
            if (star != std::string::npos && star + 1 != pattern.size()) {
                r_.fail(mem.val.key_at, mem.val.path,
                        "'*' may only end a pattern (a prefix such as 'provided*')");
            }
            if (p.runtimes.count(pattern)) {
                r_.fail(mem.val.key_at, mem.val.path,
                        "'" + pattern + "' is a runtime row itself; an alias would never be used");
            }
            const std::string target = r_.text(mem.val);
            if (!p.runtimes.count(target)) {
                r_.fail(mem.val, "alias target '" + target +
                                     "' is not a runtime row (rows: " + row_names(p) + ")");
            }
            p.runtime_aliases.emplace_back(pattern, target);
        }
    }

    void read_package(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"families", "image_ms_per_zipped_mb", "memory_factor", "source"});
        p.package_source = r_.text(r_.require(m, "source"));

        const mapping families = r_.as_mapping(r_.require(m, "families"));
        for (const auto& mem : families.members) {
            const mapping fam = r_.as_mapping(mem.val);
            r_.allow_only(fam, {"ms_per_zipped_mb", "p99_ratio"});
            package_cost cost;
            cost.ms_per_zipped_mb =
                r_.number_at_least(r_.require(fam, "ms_per_zipped_mb"), 0, true);
            cost.p99_ratio = r_.number_at_least(r_.require(fam, "p99_ratio"), 1, true);
            p.package_families.emplace(mem.key, cost);
        }
        r_.require(families, "default");

        p.image_ms_per_zipped_mb =
            r_.number_at_least(r_.require(m, "image_ms_per_zipped_mb"), 0, true);

        const mapping factors = r_.as_mapping(r_.require(m, "memory_factor"));
        for (const auto& mem : factors.members) {
            const value key{YAML::Node(mem.key), mem.val.path, mem.val.key_at, mem.val.key_at};
            const double memory_mb = r_.number_at_least(key, 0, false);
            const double factor = r_.number_at_least(mem.val, 0, false);
            for (const auto& [other_mb, unused] : p.package_memory_factor) {
                (void)unused;
                if (other_mb == memory_mb) r_.fail(key, "memory size given twice");
            }
            p.package_memory_factor.emplace_back(memory_mb, factor);
        }
        if (p.package_memory_factor.empty())
            r_.fail(factors.self, "needs at least one 'memory_mb: factor' point");
        std::sort(p.package_memory_factor.begin(), p.package_memory_factor.end());
    }

    void read_vpc(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"none", "hyperplane", "legacy-eni", "source"});
        p.vpc_source = r_.text(r_.require(m, "source"));
        for (const char* mode : {"none", "hyperplane"})
            p.vpc.emplace(mode, r_.dist(r_.require(m, mode)));
        const value& eni = r_.require(m, "legacy-eni");
        // A profile written before the ENI pool gave one distribution drawn per environment;
        // it keeps that meaning, so an old profile file runs as it did.
        if (eni.node.IsScalar()) {
            p.vpc.emplace("legacy-eni", r_.dist(eni));
            return;
        }
        if (!eni.node.IsMap())
            r_.fail(eni, "expected {eni_creation, memory_per_eni_gb, idle_release, source} or a "
                         "distribution, got " + describe(eni.node));
        const mapping e = r_.as_mapping(eni);
        r_.allow_only(e, {"eni_creation", "memory_per_eni_gb", "idle_release", "source"});
        legacy_eni_model model;
        model.source = r_.text(r_.require(e, "source"));
        model.creation_ms = r_.dist(r_.require(e, "eni_creation"));
        model.memory_per_eni_gb =
            r_.number_at_least(r_.require(e, "memory_per_eni_gb"), 0, false);
        model.idle_release_ms = r_.dist(r_.require(e, "idle_release"));
        p.legacy_eni = std::move(model);
    }

    void read_extensions(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        const std::string section_source = optional_source(m);
        for (const auto& mem : m.members) {
            if (mem.key == "source") continue;
            const mapping kind = r_.as_mapping(mem.val);
            r_.allow_only(kind, {"init", "source"});
            extension_kind ext;
            ext.name = mem.key;
            ext.init_ms = r_.dist(r_.require(kind, "init"));
            if (const member* s = kind.find("source")) {
                ext.source = r_.text(s->val);
            } else if (!section_source.empty()) {
                ext.source = section_source;
            } else {
                r_.fail(mem.val.key_at, join_path(mem.val.path, "source"),
                        "missing required key 'source' (give the kind one, or the extensions "
                        "section)");
            }
            p.extensions.emplace(ext.name, std::move(ext));
        }
    }

    void read_lifetime(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"keep_alive", "max_lifetime", "source"});
        p.lifetime_source = r_.text(r_.require(m, "source"));
        p.keep_alive_ms = r_.dist(r_.require(m, "keep_alive"));
        p.max_lifetime_ms = r_.dist(r_.require(m, "max_lifetime"));
    }

    void read_scaling(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"account_concurrency", "unreserved_minimum", "environments_per_window",
                          "window", "source"});
        p.scaling_source = r_.text(r_.require(m, "source"));
        p.account_concurrency = r_.integer(r_.require(m, "account_concurrency"), 1);
        const value& unreserved = r_.require(m, "unreserved_minimum");
        p.unreserved_minimum = r_.integer(unreserved, 0);
        if (p.unreserved_minimum > p.account_concurrency) {
            r_.fail(unreserved, "must not exceed account_concurrency (" +
                                    std::to_string(p.account_concurrency) + ")");
        }
        p.scaling_environments =
            r_.number_at_least(r_.require(m, "environments_per_window"), 0, false);
        const value& window = r_.require(m, "window");
        p.scaling_window_ms = r_.duration_ms(window);
        if (!(p.scaling_window_ms > 0)) r_.fail(window, "must be longer than 0");
    }

    void read_compute(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"mb_per_vcpu", "max_vcpus", "source"});
        p.compute_source = r_.text(r_.require(m, "source"));
        p.mb_per_vcpu = r_.number_at_least(r_.require(m, "mb_per_vcpu"), 0, false);
        p.max_vcpus = r_.number_at_least(r_.require(m, "max_vcpus"), 0, false);
    }

    // Network bandwidth per execution environment (models/bandwidth/bandwidth.hpp).
    void read_bandwidth(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"default", "scalable", "burst", "streaming", "source"});
        bandwidth::bandwidth_table& t = p.bandwidth;
        t.source = r_.text(r_.require(m, "source"));
        t.default_bytes_per_s = r_.rate(r_.require(m, "default"));

        const mapping scalable = r_.as_mapping(r_.require(m, "scalable"));
        r_.allow_only(scalable, {"from_mb", "to_mb", "max"});
        t.scalable_from_mb = r_.number_at_least(r_.require(scalable, "from_mb"), 0, false);
        const value& to = r_.require(scalable, "to_mb");
        t.scalable_to_mb = r_.number(to);
        if (!(t.scalable_to_mb > t.scalable_from_mb))
            r_.fail(to, "must be more than from_mb (" + r_.number_text(t.scalable_from_mb) +
                            "), got " + to.node.Scalar());
        const value& max = r_.require(scalable, "max");
        t.scalable_max_bytes_per_s = r_.rate(max);
        if (t.scalable_max_bytes_per_s < t.default_bytes_per_s)
            r_.fail(max, "must be at least the default rate (" +
                             bandwidth::format_rate(t.default_bytes_per_s) +
                             "): the raised quota only ever adds bandwidth");

        const value& burst = r_.require(m, "burst");
        t.burst_ms = r_.duration_ms(burst);
        if (t.burst_ms < 0) r_.fail(burst, "cannot be negative");

        const mapping streaming = r_.as_mapping(r_.require(m, "streaming"));
        r_.allow_only(streaming, {"uncapped", "rate"});
        t.streaming_uncapped_bytes = r_.size_bytes(r_.require(streaming, "uncapped"));
        t.streaming_bytes_per_s = r_.rate(r_.require(streaming, "rate"));
    }

    // Published SLAs as percentages in (0, 100]; every service's line is its own source.
    void read_availability(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        p.availability_source = r_.text(r_.require(m, "source"));
        for (const auto& mem : m.members) {
            if (mem.key == "source") continue;
            const double pct = r_.number_at_least(mem.val, 0, false);
            if (pct > 100) r_.fail(mem.val, "an availability is a percentage, at most 100");
            p.availability_percent[mem.key] = pct;
        }
        for (const char* required : {"api_gateway", "lambda"})
            if (!p.availability_percent.count(required))
                r_.fail(v, std::string("availability needs '") + required +
                               "' (the live emulator's --realistic-sla uses it)");
    }

    // Prices in USD for one region on one date; each number's page is in the file's comments.
    void read_prices(profile& p, const value& v) {
        const mapping m = r_.as_mapping(v);
        r_.allow_only(m, {"date", "region", "lambda", "api_gateway", "step_functions", "source"});
        price_table& t = p.prices;
        t.source = r_.text(r_.require(m, "source"));
        t.date = r_.text(r_.require(m, "date"));
        t.region = r_.text(r_.require(m, "region"));
        const auto price = [&](const mapping& section, std::string_view key) {
            return r_.number_at_least(r_.require(section, key), 0, true);
        };
        const auto by_arch = [&](const mapping& section, std::string_view key, double& x86,
                                 double& arm) {
            const mapping archs = r_.as_mapping(r_.require(section, key));
            r_.allow_only(archs, {"x86_64", "arm64"});
            x86 = price(archs, "x86_64");
            arm = price(archs, "arm64");
        };
        const mapping lambda = r_.as_mapping(r_.require(m, "lambda"));
        r_.allow_only(lambda, {"requests_per_million", "duration_gb_s", "provisioned_gb_s",
                               "provisioned_duration_gb_s"});
        t.lambda_per_million = price(lambda, "requests_per_million");
        by_arch(lambda, "duration_gb_s", t.lambda_gb_s_x86, t.lambda_gb_s_arm);
        by_arch(lambda, "provisioned_gb_s", t.lambda_provisioned_gb_s_x86,
                t.lambda_provisioned_gb_s_arm);
        by_arch(lambda, "provisioned_duration_gb_s", t.lambda_provisioned_duration_gb_s_x86,
                t.lambda_provisioned_duration_gb_s_arm);
        const mapping api = r_.as_mapping(r_.require(m, "api_gateway"));
        r_.allow_only(api, {"rest_per_million", "http_per_million"});
        t.api_rest_per_million = price(api, "rest_per_million");
        t.api_http_per_million = price(api, "http_per_million");
        const mapping sfn = r_.as_mapping(r_.require(m, "step_functions"));
        r_.allow_only(sfn, {"standard_per_thousand_transitions", "express_per_million",
                            "express_gb_s", "express_increment", "express_memory_increment_mb"});
        t.sfn_standard_per_thousand_transitions = price(sfn, "standard_per_thousand_transitions");
        t.sfn_express_per_million = price(sfn, "express_per_million");
        t.sfn_express_gb_s = price(sfn, "express_gb_s");
        const value& inc = r_.require(sfn, "express_increment");
        t.sfn_express_increment_ms = r_.duration_ms(inc);
        if (!(t.sfn_express_increment_ms > 0)) r_.fail(inc, "must be longer than 0");
        t.sfn_express_memory_increment_mb =
            r_.number_at_least(r_.require(sfn, "express_memory_increment_mb"), 0, false);
    }

    static std::string row_names(const profile& p) {
        std::vector<std::string> names;
        for (const auto& [name, row] : p.runtimes)
            names.push_back(name);
        return join_list(names);
    }

    reader r_;
};

} // namespace

profile_error::profile_error(std::string file, int line, int column, std::string key,
                             const std::string& message)
    : std::runtime_error(format_profile_error(file, line, column, key, message)),
      file_(std::move(file)), line_(line), column_(column), key_(std::move(key)),
      message_(message) {}

const runtime_row* profile::find_runtime(const std::string& runtime) const {
    if (const auto it = runtimes.find(runtime); it != runtimes.end()) return &it->second;
    const std::string* target = nullptr;
    for (const auto& [pattern, row] : runtime_aliases) {
        if (pattern == runtime) {
            target = &row;
            break;
        }
    }
    if (!target) {
        std::size_t best = 0;
        for (const auto& [pattern, row] : runtime_aliases) {
            if (pattern.empty() || pattern.back() != '*') continue;
            const std::string_view prefix(pattern.data(), pattern.size() - 1);
            if (runtime.compare(0, prefix.size(), prefix) != 0) continue;
            if (!target || prefix.size() > best) {
                target = &row;
                best = prefix.size();
            }
        }
    }
    if (!target) return nullptr;
    const auto it = runtimes.find(*target);
    return it == runtimes.end() ? nullptr : &it->second;
}

profile parse_profile(const std::string& text, const std::string& file) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        const bool known = e.mark.line >= 0 && e.mark.column >= 0;
        throw profile_error(file, known ? e.mark.line + 1 : 0, known ? e.mark.column + 1 : 0, "",
                            "invalid YAML: " + e.msg);
    }
    profile p = profile_reader(file, text).read(root);
    p.origin = file;
    return p;
}

profile load_profile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw profile_error(path.string(), 0, 0, "",
                            std::string("cannot read profile: ") + std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw profile_error(path.string(), 0, 0, "", "cannot read profile");
    return parse_profile(text.str(), path.string());
}

const std::string& builtin_profile_text() {
    return detail::builtin_profile_yaml;
}

const profile& builtin_profile() {
    static const profile p = parse_profile(builtin_profile_text(), "built-in");
    return p;
}

} // namespace coldbrew::models
