#include "models/random/random_source.hpp"

namespace coldbrew::models {

std::uint64_t mix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::uint64_t fnv1a64(std::string_view s) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

std::uint64_t random_source::bits(std::string_view stream, std::string_view key,
                                  std::uint64_t index) const {
    std::uint64_t x = mix64(seed_);
    x = mix64(x ^ fnv1a64(stream));
    x = mix64(x ^ fnv1a64(key));
    return mix64(x ^ index);
}

double random_source::uniform(std::string_view stream, std::string_view key,
                              std::uint64_t index) const {
    return static_cast<double>(bits(stream, key, index) >> 11) * 0x1.0p-53;
}

namespace {
void append_hex(std::string& out, std::uint64_t v, int digits) {
    static constexpr char hex[] = "0123456789abcdef";
    for (int i = digits - 1; i >= 0; --i) out.push_back(hex[(v >> (i * 4)) & 0xf]);
}
}  // namespace

std::string uuid_v4(const random_source& rng, std::string_view stream, std::string_view key,
                    std::uint64_t index) {
    std::uint64_t hi = rng.bits(stream, key, 2 * index);
    std::uint64_t lo = rng.bits(stream, key, 2 * index + 1);
    hi = (hi & ~0xf000ULL) | 0x4000ULL;                       // version 4
    lo = (lo & ~(0xc000ULL << 48)) | (0x8000ULL << 48);        // variant 10xx
    std::string out;
    out.reserve(36);
    append_hex(out, hi >> 32, 8);
    out.push_back('-');
    append_hex(out, (hi >> 16) & 0xffff, 4);
    out.push_back('-');
    append_hex(out, hi & 0xffff, 4);
    out.push_back('-');
    append_hex(out, lo >> 48, 4);
    out.push_back('-');
    append_hex(out, lo & 0xffffffffffffULL, 12);
    return out;
}

std::string random_hex(const random_source& rng, std::string_view stream, std::string_view key,
                       std::uint64_t index, int n) {
    std::string out;
    out.reserve(static_cast<std::size_t>(n));
    std::uint64_t hi = rng.bits(stream, key, 2 * index);
    std::uint64_t lo = rng.bits(stream, key, 2 * index + 1);
    append_hex(out, hi, 16);
    append_hex(out, lo, 16);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

}  // namespace coldbrew::models
