#pragma once
// A model profile: every number the cold-start, lifetime, scaling and compute models use,
// with the source of each, loaded from YAML (models/profiles/aws-2026.yaml is built in).
// Users may write their own profile (`profile:` in coldbrew.yaml) with the same schema.
//
// Schema (every section has a `source:` string; unknown keys are errors):
//   name: aws-2026
//   runtimes:                      # hello-world Init Duration per runtime row
//     nodejs20.x:
//       family: nodejs             # selects the package cost row
//       zip:   {x86_64: <distribution>, arm64: <distribution>}
//       image: {x86_64: <distribution>, arm64: <distribution>}
//       source: "…"
//   runtime_aliases:               # runtime id → row; a key ending in '*' is a prefix
//     nodejs18.x: nodejs20.x
//     provided*: go
//     source: "…"
//   package:                       # app init cost of the deployment package
//     families: {nodejs: {ms_per_zipped_mb: 103, p99_ratio: 1.6}, …, default: {…}}
//     image_ms_per_zipped_mb: 0    # container images: size did not matter
//     memory_factor: {128: 1.06, 2048: 1.0, 8192: 0.916}   # log2-interpolated, clamped
//     source: "…"
//   vpc: {none: <distribution>, hyperplane: <distribution>, legacy-eni: <eni pool>, source}
//     <eni pool>: {eni_creation: <distribution>, memory_per_eni_gb: 3,
//                  idle_release: <distribution>, source: "…"}   (models/vpc/eni_pool.hpp)
//     The flat form `legacy-eni: <distribution>` of earlier profiles is still read: that
//     distribution is then drawn per execution environment and no ENI pool is modeled.
//   extensions: {<kind>: {init: <distribution>, source: "…"}, …}
//   lifetime: {keep_alive: <distribution>, max_lifetime: <distribution>, source}
//   scaling: {account_concurrency: 1000, unreserved_minimum: 100,
//             environments_per_window: 1000, window: 10s, source}
//   compute: {mb_per_vcpu: 1769, max_vcpus: 6, source}
//   bandwidth:                     # network bandwidth per execution environment
//     default: 625Mbps             # a rate (models/bandwidth/bandwidth.hpp parse_rate)
//     scalable: {from_mb: 2048, to_mb: 10240, max: 3000Mbps}   # the raised quota, linear
//     burst: 50ms                  # token-bucket depth as time at the sustained rate
//     streaming: {uncapped: 6MB, rate: 2MBps}  # sizes are binary: 6MB = 6 MiB
//     source: "…"
//   availability: {api_gateway: 99.95, lambda: 99.95, <service>: <percent>, …, source}
//                                  # published monthly SLAs, percent in (0, 100];
//                                  # api_gateway and lambda are required
//   prices:                        # USD, one region, first volume tier (free tiers ignored)
//     date: "2026-08", region: us-east-1, source: "…"
//     lambda: {requests_per_million, duration_gb_s: {x86_64, arm64},
//              provisioned_gb_s: {x86_64, arm64}, provisioned_duration_gb_s: {x86_64, arm64}}
//     api_gateway: {rest_per_million, http_per_million}
//     step_functions: {standard_per_thousand_transitions, express_per_million, express_gb_s,
//                      express_increment: 100ms, express_memory_increment_mb: 64}
// <distribution> is the text form of models/distribution/distribution.hpp.

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/bandwidth/bandwidth.hpp"
#include "models/distribution/distribution.hpp"

namespace coldbrew::models {

// Prices for the what-if simulator's cost per million requests (coldbrew sim). USD.
struct price_table {
    std::string date, region, source;
    double lambda_per_million = 0;                 // per request (invocation)
    double lambda_gb_s_x86 = 0, lambda_gb_s_arm = 0;  // duration, billed per 1 ms
    double lambda_provisioned_gb_s_x86 = 0, lambda_provisioned_gb_s_arm = 0;  // configured
    double lambda_provisioned_duration_gb_s_x86 = 0, lambda_provisioned_duration_gb_s_arm = 0;
    double api_rest_per_million = 0, api_http_per_million = 0;
    double sfn_standard_per_thousand_transitions = 0;  // retries are transitions too
    double sfn_express_per_million = 0, sfn_express_gb_s = 0;
    double sfn_express_increment_ms = 100;         // express duration is billed per 100 ms
    double sfn_express_memory_increment_mb = 64;   // ... in 64 MB chunks
};

// A malformed profile: where (1-based line and column, 0 when unknown), which key path
// ("runtimes.nodejs20.x.zip.arm64") and what is wrong.
class profile_error : public std::runtime_error {
public:
    profile_error(std::string file, int line, int column, std::string key, const std::string& message);
    const std::string& file() const noexcept { return file_; }
    int line() const noexcept { return line_; }
    int column() const noexcept { return column_; }
    const std::string& key() const noexcept { return key_; }
    const std::string& message() const noexcept { return message_; }  // without the position

private:
    std::string file_;
    int line_, column_;
    std::string key_;
    std::string message_;
};

struct runtime_row {
    std::string name;    // "nodejs20.x", "go"
    std::string family;  // "nodejs", "python", "java", "dotnet", "ruby", "provided"
    distribution zip_x86_64, zip_arm64, image_x86_64, image_arm64;  // Init Duration, ms
    std::string source;
};

struct package_cost {
    double ms_per_zipped_mb = 0;  // median added Init Duration per zipped MB
    double p99_ratio = 1;         // log-normal spread of that term: p99 / median (>= 1)
};

struct extension_kind {
    std::string name;
    distribution init_ms;  // added Init Duration per extension of this kind
    std::string source;
};

// Pre-Hyperplane VPC networking (before 2019-09): a function's execution environments share
// ENIs, each created on demand. Used by models/vpc/eni_pool.hpp.
struct legacy_eni_model {
    distribution creation_ms;      // time to create and attach one ENI, ms
    double memory_per_eni_gb = 3;  // environments' memory one ENI serves (AWS sizing formula)
    distribution idle_release_ms;  // how long an ENI with no environment is kept, per idle period
    std::string source;
};

struct profile {
    std::string name;    // "aws-2026"
    std::string origin;  // file path, or "built-in"

    std::map<std::string, runtime_row> runtimes;
    std::vector<std::pair<std::string, std::string>> runtime_aliases;  // pattern → row
    std::string runtimes_source, aliases_source;

    std::map<std::string, package_cost> package_families;  // includes "default"
    double image_ms_per_zipped_mb = 0;
    std::vector<std::pair<double, double>> package_memory_factor;  // (memory MB, factor)
    std::string package_source;

    // "none", "hyperplane"; "legacy-eni" only when the profile gives it in the flat form.
    std::map<std::string, distribution> vpc;
    std::string vpc_source;
    std::optional<legacy_eni_model> legacy_eni;  // the structured legacy-eni entry

    std::map<std::string, extension_kind> extensions;

    distribution keep_alive_ms, max_lifetime_ms;
    std::string lifetime_source;

    int account_concurrency = 1000;
    int unreserved_minimum = 100;
    double scaling_environments = 1000;
    double scaling_window_ms = 10000;
    std::string scaling_source;

    double mb_per_vcpu = 1769;
    double max_vcpus = 6;
    std::string compute_source;

    bandwidth::bandwidth_table bandwidth;  // its own `source`

    // Service → published SLA percentage ("api_gateway" → 99.95). A phantom rate is
    // 1 - percent / 100 per request (coldbrew's reading of a monthly-uptime SLA).
    std::map<std::string, double> availability_percent;
    std::string availability_source;

    price_table prices;

    // The runtime row for a runtime id: exact row, else exact alias, else the longest
    // matching prefix alias; nullptr when none matches.
    const runtime_row* find_runtime(const std::string& runtime) const;
};

// Parses profile YAML text; `file` names it in errors. Throws profile_error.
profile parse_profile(const std::string& text, const std::string& file);
// Reads and parses a profile file. Throws profile_error (also for an unreadable file).
profile load_profile(const std::filesystem::path& path);
// The built-in profile (models/profiles/aws-2026.yaml, compiled in).
const profile& builtin_profile();
const std::string& builtin_profile_text();

}  // namespace coldbrew::models
