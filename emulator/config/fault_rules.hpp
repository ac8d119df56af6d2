#pragma once
// coldbrew.yaml's fault rules and SLA phantoms, parsed against the fault registry main built.
// Kept apart from load_stack because the registry (the fault kinds) belongs to main.

#include <vector>

#include "emulator/config/stack.hpp"
#include "models/faults/faults.hpp"
#include "models/profile/profile.hpp"

namespace coldbrew::config {

// The configured rules in file order, then the SLA phantom rules ("sla-gateway",
// "sla-invoke"). Throws config_error at the offending key (file:line:col and key path, e.g.
// "faults.rules[1].fault.status") for a bad rule or a duplicate name.
std::vector<models::faults::rule> parse_fault_rules(const fault_settings& faults,
                                                    const models::faults::fault_registry& registry);

// `--realistic-sla`: the gateway and invoke fronts lose requests at their service's published
// SLA (the profile's availability_percent), unless coldbrew.yaml set a rate of its own.
void apply_realistic_sla(stack& s, const models::profile& profile);

// The rules `coldbrew up` starts with, as `coldbrew sim --replay` must start with them too:
// parse_fault_rules's, then each dependency's `availability:` rule ("availability-<name>").
// Throws config_error (an availability rule at the dependency's `availability` key).
std::vector<models::faults::rule> startup_fault_rules(const stack& s,
                                                      const models::faults::fault_registry& registry);

// What in `r` names nothing in the stack, one sentence each: a `function` no function has as
// logical id or FunctionName, a `route` no API declares ("POST /pay", "$default", or
// "Invoke <logical id>" on the Invoke front). Such a rule is valid but never fires.
std::vector<std::string> rule_warnings(const stack& s, const models::faults::rule& r);

}  // namespace coldbrew::config
