#include "emulator/config/fault_rules.hpp"

#include <set>

#include <nlohmann/json.hpp>

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
    for (const char* sla : {"sla-gateway", "sla-invoke"}) {
        if (!names.count(sla)) continue;
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

}  // namespace coldbrew::config
