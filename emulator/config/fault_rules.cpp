#include "emulator/config/fault_rules.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "emulator/config/yaml_tree.hpp"

namespace coldbrew::config {

namespace {

namespace mf = models::faults;

// The position of a rule_error's key path: the value it names, or for an unknown key the key
// itself; the nearest enclosing path that has one otherwise.
source_location locate(const fault_rule_text& r, const std::string& path, bool at_key = false) {
    if (at_key)
        if (auto it = r.positions.find(path + "#key"); it != r.positions.end()) return it->second;
    std::string p = path;
    while (true) {
        if (auto it = r.positions.find(p); it != r.positions.end()) return it->second;
        const auto cut = p.find_last_of(".[");
        if (cut == std::string::npos) break;
        p.erase(cut);
    }
    return r.where;
}

mf::client_outcome client_of(const std::string& s) {
    if (s == "hang") return mf::client_outcome::hang;
    if (s == "reset") return mf::client_outcome::reset;
    return mf::client_outcome::timeout;
}

}  // namespace

std::vector<mf::rule> parse_fault_rules(const fault_settings& faults,
                                        const mf::fault_registry& registry) {
    std::vector<mf::rule> out;
    std::set<std::string> names;
    std::size_t n = 0;
    for (const auto& text : faults.rules) {
        ++n;
        const auto j = nlohmann::json::parse(text.json);
        mf::rule r;
        try {
            r = mf::parse_rule(j, registry, "rule-" + std::to_string(n));
        } catch (const mf::rule_error& e) {
            const std::string key = e.path().empty() ? text.path : text.path + "." + e.path();
            const bool unknown_key = e.message().rfind("unknown key", 0) == 0;
            throw config_error(locate(text, e.path(), unknown_key), key, e.message());
        }
        if (!names.insert(r.name).second) {
            const std::string key = text.path + ".name";
            throw config_error(locate(text, "name"), key,
                               "a fault rule named '" + r.name + "' is already defined above");
        }
        out.push_back(std::move(r));
    }
    // The SLA rules' names are taken.
    for (const auto& [sla, configured] : {std::pair{"sla-gateway", faults.sla_gateway_percent.has_value()},
                                          std::pair{"sla-invoke", faults.sla_invoke_percent.has_value()}}) {
        if (!configured || !names.count(sla)) continue;
        std::size_t i = 0;
        while (i < out.size() && out[i].name != sla) ++i;
        const auto& text = faults.rules[i];
        throw config_error(locate(text, "name"), text.path + ".name",
                           std::string("the name '") + sla +
                               "' is reserved for the phantom rule of faults.sla");
    }
    const auto client = client_of(faults.phantom_client_sees);
    if (faults.sla_gateway_percent)
        out.push_back(mf::sla_rule(mf::front::gateway, *faults.sla_gateway_percent,
                                   faults.phantom_after_share, client, registry));
    if (faults.sla_invoke_percent)
        out.push_back(mf::sla_rule(mf::front::invoke, *faults.sla_invoke_percent,
                                   faults.phantom_after_share, client, registry));
    return out;
}

void apply_realistic_sla(stack& s, const models::profile& profile) {
    auto& f = s.settings.faults;
    if (!f.sla_gateway_percent) f.sla_gateway_percent = profile.availability_percent.at("api_gateway");
    if (!f.sla_invoke_percent) f.sla_invoke_percent = profile.availability_percent.at("lambda");
}

void add_availability_rules(const stack& s, const mf::fault_registry& kinds, std::vector<mf::rule>& rules) {
    for (const auto& d : s.settings.dependencies) {
        if (!d.availability_percent) continue;
        const std::string key = d.path + ".availability";
        try {
            auto r = mf::availability_rule(d.name, *d.availability_percent, d.availability_outcome,
                                           d.availability_on == "connect" ? mf::dependency_phase::connect
                                                                          : mf::dependency_phase::request,
                                           kinds);
            for (const auto& other : rules)
                if (other.name == r.name)
                    throw config_error(d.where, key,
                                       "the fault rule name '" + r.name +
                                           "' is taken by faults.rules; rename that rule");
            rules.push_back(std::move(r));
        } catch (const mf::rule_error& e) {
            throw config_error(d.where, key, e.message());
        }
    }
}

std::vector<std::string> rule_warnings(const stack& s, const mf::rule& r) {
    std::vector<std::string> out;
    if (!r.dependency.empty()) {
        const auto& deps = s.settings.dependencies;
        if (!std::any_of(deps.begin(), deps.end(),
                         [&](const dependency& d) { return d.name == r.dependency; })) {
            std::string known;
            for (const auto& d : deps) known += (known.empty() ? "" : ", ") + d.name;
            out.push_back("fault rule '" + r.name + "': no dependency named '" + r.dependency +
                          "' (" + (known.empty() ? "coldbrew.yaml declares none" : "declared: " + known) +
                          "); it will never fire");
        }
        // A dependency connection has no route, method, path or headers: those matchers
        // would keep the rule from ever firing.
        if (!r.route.empty() || !r.method.empty() || !r.path.empty() || !r.headers.empty())
            out.push_back("fault rule '" + r.name + "': route, method, path and headers match "
                          "gateway and Invoke API requests only; on a dependency it will never "
                          "fire (use `on: connect|request` and `function`)");
    }
    if (!r.function.empty() && !std::any_of(s.functions.begin(), s.functions.end(), [&](const function& f) {
            return f.name == r.function || f.function_name == r.function;
        }))
        out.push_back("fault rule '" + r.name + "': no function named '" + r.function +
                      "'; it will never fire");
    if (!r.route.empty()) {
        std::vector<std::string> keys;
        for (const auto& rt : s.routes)
            keys.push_back(rt.path == "$default" ? std::string("$default") : rt.method + " " + rt.path);
        for (const auto& f : s.functions) keys.push_back("Invoke " + f.name);
        if (std::find(keys.begin(), keys.end(), r.route) == keys.end()) {
            std::string text = "fault rule '" + r.name + "': no route '" + r.route + "'";
            if (const auto best = detail::closest_match(r.route, keys))
                text += " (did you mean '" + *best + "'?)";
            out.push_back(text + "; route keys are \"METHOD /path\" as the template declares "
                                 "them, \"$default\", or \"Invoke <function>\"; it will never fire");
        }
    }
    return out;
}

}  // namespace coldbrew::config
