#pragma once
// The ENIs of one VPC function before Hyperplane (AWS Lambda before 2019-09; shared spec
// model-data §3): execution environments of a function shared elastic network interfaces in
// its subnets, a new ENI was created when no existing one had room, and every environment
// that needed it waited until it was ready. A burst against a cold stack therefore waited on
// ENI creation almost everywhere; later environments reused ENIs with spare capacity.
//
// Capacity: AWS sized a function's ENI needs per subnet as
//   projected peak concurrent executions × (memory in GB / 3 GB)
// (AWS Lambda Developer Guide before Hyperplane, doc_source/concurrent-executions.md in
// awsdocs/aws-lambda-developer-guide, e.g. commit 8838e58; also quoted on Stack Overflow's
// "IP address exhaustion for lambdas in VPC"), so one ENI serves
// max(1, floor(memory_per_eni_gb × 1024 / memory_mb)) environments: 24 at 128 MB, 3 at
// 1,024 MB, 1 at 3,008 MB and above. One pool models one subnet / security-group set per
// function.
//
// Times: creation and idle release are drawn from the profile (vpc.legacy-eni; creation time
// from Shilkov's 2019 VPC raw data, model-data §3; the idle release time is coldbrew's
// choice, see the profile). Pure: time is an argument (ms on any monotonic scale),
// randomness comes from the counter-based random source:
//   creation of ENI i     stream "eni-creation", key = function key, index i
//   idle period k of ENI i stream "eni-idle-release", key = function key + "#" + i, index k
// so a seed and a sequence of calls give the same ENIs and waits.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/profile/profile.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::models {

// Environments one ENI serves at `memory_mb`: max(1, floor(memory_per_eni_gb × 1024 /
// memory_mb)). Throws std::invalid_argument when memory_mb < 1 or memory_per_eni_gb <= 0.
int environments_per_eni(int memory_mb, double memory_per_eni_gb = 3);

// Which ENI an execution environment got and how long it waits for it.
struct eni_attachment {
    std::uint64_t eni = 0;  // ENI id, from 0 in creation order
    bool created = false;   // this attach created the ENI
    double wait_ms = 0;     // until the ENI is ready (0 when it already was)
};

class eni_pool {
public:
    // `function_key` keys every draw; `rng` must outlive the pool. Throws
    // std::invalid_argument as environments_per_eni does.
    eni_pool(std::string function_key, legacy_eni_model model, int memory_mb,
             const random_source& rng);

    // Environment `environment` needs an ENI at `now_ms`. Releases ENIs past their idle
    // release first, then picks, in order: a ready ENI with spare capacity (lowest id), an
    // ENI still being created with spare capacity (the one ready soonest: the environment
    // waits only the remainder of its creation), else a new ENI whose creation time is
    // drawn. Throws std::invalid_argument when the environment is already attached.
    eni_attachment attach(std::uint64_t environment, double now_ms);
    // The environment is gone; its slot is free. An ENI left with no environment is
    // released once it has been unused for its drawn idle release (lazily: by a later
    // attach or expire). An unknown environment is ignored.
    void detach(std::uint64_t environment, double now_ms);
    // Releases every ENI whose idle release has passed at `now_ms`; returns their ids.
    std::vector<std::uint64_t> expire(double now_ms);
    // When the next unused ENI is due for release; nullopt when every ENI is in use.
    std::optional<double> next_release_ms() const;

    int capacity() const noexcept { return capacity_; }  // environments per ENI
    std::size_t enis() const noexcept { return enis_.size(); }
    std::uint64_t created() const noexcept { return next_eni_; }  // ENIs ever created
    const legacy_eni_model& model() const noexcept { return model_; }

private:
    struct eni_state {
        double ready_at_ms = 0;
        int environments = 0;
        double release_at_ms = 0;  // meaningful when environments == 0
        std::uint64_t idle_periods = 0;
    };

    std::string key_;
    legacy_eni_model model_;
    const random_source& rng_;
    int capacity_;
    std::map<std::uint64_t, eni_state> enis_;
    std::map<std::uint64_t, std::uint64_t> attached_;  // environment → ENI
    std::uint64_t next_eni_ = 0;
};

}  // namespace coldbrew::models
