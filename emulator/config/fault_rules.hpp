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

// --realistic-sla: every front end loses requests at its service's published SLA (the
// profile's api_gateway and lambda availability), unless coldbrew.yaml set a rate of its own.
// Shared by `up`, `validate` and `sim` on a stack.
void apply_realistic_sla(stack& s, const models::profile& profile);

// Each dependency's `availability:` becomes a fault rule of its own
// (models::faults::availability_rule), appended to `rules`. Throws config_error at the
// dependency's `availability` key (a bad value, or a name faults.rules already took).
void add_availability_rules(const stack& s, const models::faults::fault_registry& kinds,
                            std::vector<models::faults::rule>& rules);

// What in `r` names nothing in the stack, one sentence each: a `function` no function has as
// logical id or FunctionName, a `route` no API declares ("POST /pay", "$default", or
// "Invoke <logical id>" on the Invoke front). Such a rule is valid but never fires.
std::vector<std::string> rule_warnings(const stack& s, const models::faults::rule& r);

}  // namespace coldbrew::config
