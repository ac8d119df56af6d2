#pragma once
// The cold-start model: a new execution environment's Init Duration, drawn as the sum of
//   runtime     hello-world Init for the runtime, package type and architecture
//               (profile `runtimes`, lambda-perf 2026; no memory effect, model-data §1a)
//   package     app init from the deployment package: ms per zipped MB × size, log-normal,
//               scaled by the profile's memory factor (Shilkov 2021, model-data §2a/§2b);
//               zero-cost for container images (image size did not matter, §2a)
//   vpc         none / hyperplane (+~0.2 s p50, 2021) / legacy-eni (§3): with the profile's
//               structured legacy-eni entry the term is the wait for a shared ENI, which
//               depends on the other environments, so pool_policy owns it (models/vpc/
//               eni_pool.hpp) and sample() leaves it at 0; with the flat form it is drawn
//               per environment like the others
//   extensions  each extension's init; extensions initialise in parallel with each other
//               before the runtime starts, so the term is the largest of them (§2c)
// Pure: no I/O (the emulator measures the package and passes its size in).

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/distribution/distribution.hpp"
#include "models/profile/profile.hpp"

namespace coldbrew::models {

enum class vpc_mode { none, hyperplane, legacy_eni };
enum class package_type { zip, image };

// "none" / "hyperplane" / "legacy-eni"; nullopt when not one of them.
std::optional<vpc_mode> parse_vpc_mode(std::string_view text);
std::string_view to_string(vpc_mode m);

struct function_traits {
    std::string runtime;                // "nodejs20.x", "provided.al2023"
    std::string architecture = "x86_64";  // "x86_64" or "arm64"
    package_type package = package_type::zip;
    double package_zipped_mb = 0;       // deployment package, zipped, code + layers
    int memory_mb = 128;
    vpc_mode vpc = vpc_mode::none;
    std::vector<std::string> extensions;  // extension kinds named in the profile
};

// Per-function replacements for profile parameters (coldbrew.yaml functions.<name>.model).
struct cold_start_overrides {
    std::optional<std::string> runtime_row;     // use this profile row instead of the runtime's
    std::optional<distribution> runtime_init;   // replaces the runtime term entirely
    std::optional<double> package_ms_per_zipped_mb;
};

// Thrown when the traits cannot be modeled with the profile (unknown runtime row,
// extension kind or architecture); the message says which and what the profile offers.
class model_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One drawn Init Duration and its parts, all in modeled milliseconds (not scaled).
struct init_draw {
    double runtime_ms = 0, package_ms = 0, vpc_ms = 0, extensions_ms = 0;
    double total_ms = 0;  // the sum of the parts
};

class cold_start_model {
public:
    // Throws model_error. A runtime without a row is accepted only when
    // overrides.runtime_init replaces the runtime term; its package cost is then the
    // profile's "default" family.
    cold_start_model(const profile& p, const function_traits& traits,
                     const cold_start_overrides& overrides = {});

    // The Init Duration of environment `index` of function `key`: a pure function of
    // (seed, key, index). Uses draw(rng, "init-duration", key, index), consuming uniforms in
    // the order runtime, package, vpc, then each extension. When eni() is set the vpc term
    // is not drawn (vpc_ms = 0): pool_policy adds the ENI wait.
    init_draw sample(const random_source& rng, std::string_view key, std::uint64_t index) const;

    struct summary {
        double p50 = 0, p95 = 0, p99 = 0;  // total Init Duration, ms
    };
    // Percentiles of the total, estimated from `n` seeded samples (deterministic for a seed;
    // drawn under key + "#summary", so they never replay a live environment's draw).
    // Nearest rank. Throws std::invalid_argument when n < 1. When eni() is set each sample
    // is an isolated cold start against a cold stack, which always waits for a new ENI
    // (its creation drawn under stream "eni-creation", key + "#summary"); cold starts in a
    // burst or after others share ENIs (pool_policy).
    summary percentiles(const random_source& rng, std::string_view key, int n = 20000) const;

    // The structured legacy-eni entry when the function uses it, else nullptr: pool_policy
    // then builds an eni_pool for the function from it and memory_mb().
    const legacy_eni_model* eni() const noexcept { return eni_ ? &*eni_ : nullptr; }
    int memory_mb() const noexcept { return memory_mb_; }

    // One line per term: what was chosen and why, with the profile's source, e.g.
    // "runtime: nodejs20.x zip x86_64 percentiles(p50=142ms, …) — maxday/lambda-perf …".
    const std::vector<std::string>& explanation() const noexcept { return explanation_; }

private:
    distribution runtime_;
    std::optional<distribution> package_;  // nullopt when the term is zero
    distribution vpc_;
    std::optional<legacy_eni_model> eni_;  // set: the vpc term belongs to the ENI pool
    int memory_mb_ = 128;
    std::vector<distribution> extensions_;
    std::vector<std::string> explanation_;
};

}  // namespace coldbrew::models
