#pragma once
// Counter-based random source: every draw is a pure function of (seed, stream, key, index),
// never of how many draws happened before or on which thread. Same seed and same request
// sequence therefore give the same request ids, faults and modeled latencies.
//
// Construction: SplitMix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
// number generators", OOPSLA 2014) applied to a chain of FNV-1a hashes of stream and key and
// the index. Values are pinned by tests/unit/models/random_source_test.cpp; changing the
// construction changes every seeded run, so it is versioned by those tests.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace coldbrew::models {

class random_source {
public:
    explicit random_source(std::uint64_t seed) : seed_(seed) {}

    std::uint64_t seed() const noexcept { return seed_; }

    // 64 uniformly distributed bits for draw `index` of `key` in `stream`.
    // stream names the decision kind ("request-id", "phantom", …); key names its subject
    // (a function, a route); index counts that subject's draws (0, 1, 2, …).
    std::uint64_t bits(std::string_view stream, std::string_view key, std::uint64_t index) const;

    // Uniform double in [0, 1) with 53 bits of precision, from bits(...).
    double uniform(std::string_view stream, std::string_view key, std::uint64_t index) const;

private:
    std::uint64_t seed_;
};

// SplitMix64 finaliser: a bijective 64-bit mix.
std::uint64_t mix64(std::uint64_t x) noexcept;

// FNV-1a, 64-bit.
std::uint64_t fnv1a64(std::string_view s) noexcept;

// An RFC 4122 version-4 UUID string ("8476a536-e9f4-41e8-9739-2dfe598c3fcd") built from two
// draws (2*index and 2*index+1) of (stream, key): Lambda and API Gateway request ids.
std::string uuid_v4(const random_source& rng, std::string_view stream, std::string_view key,
                    std::uint64_t index);

// `n` lower-case hex digits drawn from (stream, key, index), n <= 32: X-Ray trace ids etc.
std::string random_hex(const random_source& rng, std::string_view stream, std::string_view key,
                       std::uint64_t index, int n);

}  // namespace coldbrew::models
