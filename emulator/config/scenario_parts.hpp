#pragma once
// Private to emulator/config: the pieces of the scenario grammar (scenario_loader.hpp) that
// coldbrew.yaml's `sim:` sections reuse, so a distribution, an arrival process or a retry
// policy reads, and is refused, the same way in both files. Each throws config_error at the
// offending node (file, line, column, key path).

#include <string_view>

#include "emulator/config/yaml_tree.hpp"
#include "models/distribution/distribution.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::config::detail {

// `arrivals:` (rate, poisson, phases, bursts), into `a`.
void read_sim_arrivals(const ynode& v, models::sim::arrivals& a);
// A retry policy: none | client | sdk-standard | lambda-async | step-functions, a mapping
// with `policy:` and its settings, or an Amazon States Language Retry list.
models::sim::retry_policy read_sim_retry(const ynode& v);
// A latency distribution (never negative).
models::distribution read_sim_distribution(const ynode& v, std::string_view what);
// A duration longer than 0 ("250ms", "3s"), in ms.
double read_sim_duration_ms(const ynode& v, std::string_view what);
// true / false.
bool read_sim_bool(const ynode& v, std::string_view what);

}  // namespace coldbrew::config::detail
