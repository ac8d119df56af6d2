#pragma once
// A run's mergeable result as JSON, and a scenario's identity: what a part of a run split
// across machines carries (`coldbrew sim --shard K/N`, merged by `coldbrew sim merge`).
//
// run_result JSON (every counter an integer, so reading it back gives the same result and
// merging parts is exact):
//   { engine, requests, successes, requests_with_cold_start, simulated_us, chunks,
//     latency: <histogram>, latency_all: <histogram>,
//     components: [{calls, calls_ok, attempts,
//                   attempt_failures: {error, timeout, throttle, phantom},
//                   root_causes: {error, timeout, throttle, phantom},
//                   invocations, cold_starts, …every other counter of component_counts…,
//                   latency: <histogram>}] }                       (in scenario order)
//   <histogram>: {count, sum_us, min_ns, max_ns, buckets: [[index, count], …]}
//                (non-empty buckets only, by index: models/sim/histogram.hpp's layout;
//                 min_ns is 18446744073709551615 and max_ns 0 while empty)
// Reading checks everything: a missing key, a value of the wrong type or a count that does
// not add up throws part_error naming the file and the key path ("components[2].latency").

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "models/sim/engine.hpp"
#include "models/sim/histogram.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::models::sim {

class part_error : public std::runtime_error {
public:
    // what(): "<file>: <key>: <message>".
    part_error(std::string file, std::string key, const std::string& message);
    const std::string& file() const noexcept { return file_; }
    const std::string& key() const noexcept { return key_; }

private:
    std::string file_, key_;
};

nlohmann::ordered_json histogram_to_json(const histogram& h);
// `file` and `key` (the value's key path) name the value in errors. Throws part_error.
histogram histogram_from_json(const nlohmann::json& j, const std::string& file, const std::string& key);

nlohmann::ordered_json run_result_to_json(const run_result& r);
// Throws part_error (file, key path under `key`).
run_result run_result_from_json(const nlohmann::json& j, const std::string& file, const std::string& key);

// Every value of the resolved scenario that can change a run's counts or its report (seed,
// requests, arrivals, components with their distributions and retry policies, flows, entries,
// fault rules, prices, the profile's name; not the profile's numbers: a caller that loaded
// the profile from a file adds the file's bytes to what it hashes), as canonical JSON: two scenarios with
// the same fingerprint run the same. Doubles are written as "%.17g" text, so infinity (no
// timeout) and every bit of a value count. A field added to models/sim/scenario.hpp must be
// added here too.
nlohmann::ordered_json scenario_fingerprint(const scenario& s);

// 32 hex digits: two 64-bit FNV-1a hashes of `text` with different offset bases. It tells
// parts of different runs apart; it is not a cryptographic digest.
std::string identity_hash(std::string_view text);

}  // namespace coldbrew::models::sim
