#include "emulator/sim_cli/shard.hpp"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "emulator/sim_cli/sim_command.hpp"
#include "models/sim/part.hpp"

namespace coldbrew::sim_cli {

namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;
using models::sim::part_error;

bool parse_u64(const std::string& text, std::uint64_t& v) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

const json& member(const json& j, const char* name, const std::string& file, const std::string& key) {
    if (!j.is_object()) throw part_error(file, key, "expected an object");
    const auto it = j.find(name);
    if (it == j.end()) throw part_error(file, key.empty() ? name : key + "." + name, "missing");
    return *it;
}

std::string string_member(const json& j, const char* name, const std::string& file, const std::string& key) {
    const json& v = member(j, name, file, key);
    if (!v.is_string()) throw part_error(file, key.empty() ? name : key + "." + name, "expected a string");
    return v.get<std::string>();
}

std::uint64_t count_member(const json& j, const char* name, const std::string& file, const std::string& key) {
    const json& v = member(j, name, file, key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        throw part_error(file, key.empty() ? name : key + "." + name, "expected a whole number >= 0");
    return v.get<std::uint64_t>();
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read the profile " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

shard_spec parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    shard_spec s;
    if (slash == std::string::npos || !parse_u64(text.substr(0, slash), s.index) ||
        !parse_u64(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count)
        throw std::invalid_argument("--shard takes K/N with 0 <= K < N (part K of N, e.g. 0/8), got '" + text + "'");
    return s;
}

std::string runs_identity(const std::vector<identity_run>& runs) {
    ojson j;
    j["format"] = part_format;
    j["version"] = part_version;
    ojson arr = ojson::array();
    for (const auto& r : runs) {
        ojson x;
        x["label"] = r.label;
        x["scenario"] = models::sim::scenario_fingerprint(*r.scenario);
        // A profile file may differ between machines under the same name: its bytes count.
        if (r.profile && r.profile != &models::builtin_profile())
            x["profile_file"] = models::sim::identity_hash(file_bytes(r.profile->origin));
        arr.push_back(std::move(x));
    }
    j["runs"] = arr;
    return models::sim::identity_hash(j.dump());
}

ojson part_to_json(const part& p) {
    ojson j;
    j["format"] = part_format;
    j["version"] = part_version;
    j["identity"] = p.identity;
    j["shard"] = {{"index", p.shard.index}, {"count", p.shard.count}};
    ojson c;
    c["scenario"] = p.command.scenario;
    if (p.command.requests) c["requests"] = *p.command.requests;
    if (p.command.seed) c["seed"] = *p.command.seed;
    c["set"] = p.command.set;
    if (!p.command.sweep.empty()) c["sweep"] = p.command.sweep;
    if (!p.command.parameter_overrides.empty()) c["parameter_overrides"] = p.command.parameter_overrides;
    if (!p.command.stage.empty()) c["stage"] = p.command.stage;
    if (p.command.realistic_sla) c["realistic_sla"] = true;
    if (p.command.rate_scale != 1) c["rate_scale"] = p.command.rate_scale;
    if (!p.command.fit.empty()) c["fit"] = p.command.fit;
    j["command"] = c;
    ojson runs = ojson::array();
    for (const auto& r : p.runs) {
        ojson x;
        x["label"] = r.label;
        x["result"] = models::sim::run_result_to_json(r.result);
        runs.push_back(std::move(x));
    }
    j["runs"] = runs;
    return j;
}

part part_from_json(const json& j, const std::string& file) {
    part p;
    p.file = file;
    const std::string format = string_member(j, "format", file, "");
    if (format != part_format)
        throw part_error(file, "format", "\"" + format + "\" is not a part file (\"" + part_format + "\")");
    const std::uint64_t version = count_member(j, "version", file, "");
    if (version != static_cast<std::uint64_t>(part_version))
        throw part_error(file, "version", "version " + std::to_string(version) + " is not the version " +
                                              std::to_string(part_version) + " this coldbrew reads");
    p.identity = string_member(j, "identity", file, "");
    const json& shard = member(j, "shard", file, "");
    p.shard.index = count_member(shard, "index", file, "shard");
    p.shard.count = count_member(shard, "count", file, "shard");
    if (p.shard.count == 0 || p.shard.index >= p.shard.count)
        throw part_error(file, "shard", "index must be below count, and count at least 1");
    const json& c = member(j, "command", file, "");
    p.command.scenario = string_member(c, "scenario", file, "command");
    if (c.contains("requests")) p.command.requests = count_member(c, "requests", file, "command");
    if (c.contains("seed")) p.command.seed = count_member(c, "seed", file, "command");
    const json& set = member(c, "set", file, "command");
    if (!set.is_array()) throw part_error(file, "command.set", "expected a list of strings");
    for (std::size_t i = 0; i < set.size(); ++i) {
        if (!set[i].is_string())
            throw part_error(file, "command.set[" + std::to_string(i) + "]", "expected a string");
        p.command.set.push_back(set[i].get<std::string>());
    }
    if (c.contains("sweep")) p.command.sweep = string_member(c, "sweep", file, "command");
    if (c.contains("parameter_overrides")) {
        const json& po = c["parameter_overrides"];
        if (!po.is_array()) throw part_error(file, "command.parameter_overrides", "expected a list of strings");
        for (std::size_t i = 0; i < po.size(); ++i) {
            if (!po[i].is_string())
                throw part_error(file, "command.parameter_overrides[" + std::to_string(i) + "]", "expected a string");
            p.command.parameter_overrides.push_back(po[i].get<std::string>());
        }
    }
    if (c.contains("stage")) p.command.stage = string_member(c, "stage", file, "command");
    if (c.contains("realistic_sla")) {
        if (!c["realistic_sla"].is_boolean()) throw part_error(file, "command.realistic_sla", "expected true or false");
        p.command.realistic_sla = c["realistic_sla"].get<bool>();
    }
    if (c.contains("rate_scale")) {
        if (!c["rate_scale"].is_number() || !(c["rate_scale"].get<double>() > 0))
            throw part_error(file, "command.rate_scale", "expected a number > 0");
        p.command.rate_scale = c["rate_scale"].get<double>();
    }
    if (c.contains("fit")) p.command.fit = string_member(c, "fit", file, "command");
    const json& runs = member(j, "runs", file, "");
    if (!runs.is_array() || runs.empty()) throw part_error(file, "runs", "expected a list of runs");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string key = "runs[" + std::to_string(i) + "]";
        part_run r;
        r.label = string_member(runs[i], "label", file, key);
        r.result = models::sim::run_result_from_json(member(runs[i], "result", file, key), file, key + ".result");
        p.runs.push_back(std::move(r));
    }
    return p;
}

part read_part(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw part_error(file, "", "cannot read the file");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::exception& e) {  // syntax, or a number overflow
        throw part_error(file, "", std::string("not JSON: ") + e.what());
    }
    return part_from_json(j, file);
}

std::vector<models::sim::run_result> merge_parts(const std::vector<part>& parts) {
    if (parts.empty()) throw std::invalid_argument("merge: no part files given");
    const part& first = parts.front();
    std::map<std::uint64_t, const part*> by_index;
    for (const part& p : parts) {
        if (p.identity != first.identity)
            throw std::invalid_argument("merge: " + p.file + " is a part of another run than " + first.file +
                                        " (identity " + p.identity + ", not " + first.identity +
                                        "): a different scenario, seed, request count, --set or --sweep");
        if (p.shard.count != first.shard.count)
            throw std::invalid_argument("merge: " + p.file + " is part " + std::to_string(p.shard.index) + " of " +
                                        std::to_string(p.shard.count) + " but " + first.file + " is part " +
                                        std::to_string(first.shard.index) + " of " +
                                        std::to_string(first.shard.count));
        const auto [it, fresh] = by_index.emplace(p.shard.index, &p);
        if (!fresh)
            throw std::invalid_argument("merge: part " + std::to_string(p.shard.index) + " of " +
                                        std::to_string(p.shard.count) + " is given twice: " + it->second->file +
                                        " and " + p.file);
        if (p.runs.size() != first.runs.size())
            throw std::invalid_argument("merge: " + p.file + " has " + std::to_string(p.runs.size()) + " runs, " +
                                        first.file + " has " + std::to_string(first.runs.size()));
        for (std::size_t i = 0; i < p.runs.size(); ++i) {
            const auto& a = p.runs[i];
            const auto& b = first.runs[i];
            if (a.label != b.label || a.result.engine != b.result.engine ||
                a.result.components.size() != b.result.components.size())
                throw std::invalid_argument("merge: run " + std::to_string(i) + " of " + p.file + " ('" + a.label +
                                            "', " + a.result.engine + " engine) is not run " + std::to_string(i) +
                                            " of " + first.file + " ('" + b.label + "', " + b.result.engine +
                                            " engine)");
        }
    }
    std::string missing;
    for (std::uint64_t k = 0; k < first.shard.count; ++k) {
        if (by_index.count(k)) continue;
        if (!missing.empty()) missing += ", ";
        if (missing.size() > 200) {
            missing += "…";
            break;
        }
        missing += std::to_string(k);
    }
    if (!missing.empty())
        throw std::invalid_argument("merge: parts missing of " + std::to_string(first.shard.count) + ": " + missing);

    std::vector<models::sim::run_result> out(first.runs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i].engine = first.runs[i].result.engine;
        out[i].components.resize(first.runs[i].result.components.size());
        for (const auto& [k, p] : by_index) out[i].merge(p->runs[i].result);
    }
    return out;
}

int run_merge(const sim_options& opts) {
    try {
        std::vector<part> parts;
        for (const auto& f : opts.merge.parts) parts.push_back(read_part(f));
        sim_options o = opts;  // the report options: --json, --html, --ensure
        o.merged = merge_parts(parts);
        o.merged_identity = parts.front().identity;
        const part_command& c = parts.front().command;
        o.scenario = opts.merge.scenario.empty() ? c.scenario : opts.merge.scenario;
        o.requests = c.requests;
        o.seed = c.seed;
        o.set = c.set;
        o.sweep = c.sweep;
        o.parameter_overrides = c.parameter_overrides;
        o.stage = c.stage;
        o.realistic_sla = c.realistic_sla;
        o.rate_scale = c.rate_scale;
        o.fit = c.fit;
        o.shard.clear();
        o.merge = {};
        return run_sim(o);
    } catch (const part_error& e) {
        std::fprintf(stderr, "coldbrew: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "coldbrew: %s\n", e.what());
        return 2;
    }
}

}  // namespace coldbrew::sim_cli
