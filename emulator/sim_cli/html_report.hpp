#pragma once
// A self-contained HTML report of one or more simulation runs: tables and inline SVG plots
// (latency CDF and histogram per run; availability, p95 and cost against the run for
// sweeps and variants). No scripts, no external resources: it opens from a CI artifact.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace coldbrew::sim_cli {

struct run_entry {
    std::string label;        // "compounding / retries"
    std::string variant;      // the scenario's variant name, or ""
    std::string sweep_path;   // --sweep path, or ""
    std::string sweep_value;  // this run's value
    nlohmann::ordered_json report;  // models::sim::report_json
};

std::string html_report(const std::vector<run_entry>& runs);

}  // namespace coldbrew::sim_cli
