#include "models/bandwidth/bandwidth.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace coldbrew::models::bandwidth {

namespace {

__extension__ typedef __int128 wide;

// The smallest bucket: one socket read (libuv hands out up to 64 KiB) must always fit, or a
// slow rate could never let a read through.
constexpr std::uint64_t min_burst_bytes = 64 * 1024;

// Rates are kept in milli-bytes per second, so fractional rates down to 0.001 B/s stay exact;
// credit is then in units of 1e-9 byte, and one microsecond at rate_q_ adds exactly rate_q_
// units: rate_q (mB/s) × 1 µs = rate_q × 1e-3 × 1e-6 bytes = rate_q × 1e-9 bytes.
constexpr std::int64_t rate_quantum_per_byte = 1000;
constexpr wide units_per_byte = 1'000'000'000;
// 1 PB/s: far above any link, and it keeps rate × elapsed well inside 128 bits.
constexpr double max_rate_bytes_per_s = 1e15;

constexpr std::int64_t max_time = std::numeric_limits<std::int64_t>::max();

std::int64_t saturate(wide t) {
    return t > max_time ? max_time : static_cast<std::int64_t>(t);
}

// ceil(a / b) for a >= 0, b > 0.
wide ceil_div(wide a, wide b) {
    return (a + b - 1) / b;
}

struct unit {
    std::string_view name;
    double bytes_per_s;  // one of it
};

// Decimal prefixes, as AWS writes "625 Mbps" and "2 MBps". Bits first, then bytes in both
// spellings; k and K both mean 1,000.
constexpr unit rate_units[] = {
    {"bps", 1.0 / 8},        {"Kbps", 1e3 / 8},  {"kbps", 1e3 / 8}, {"Mbps", 1e6 / 8},
    {"Gbps", 1e9 / 8},       {"B/s", 1},         {"Bps", 1},        {"KB/s", 1e3},
    {"kB/s", 1e3},           {"KBps", 1e3},      {"kBps", 1e3},     {"MB/s", 1e6},
    {"MBps", 1e6},           {"GB/s", 1e9},      {"GBps", 1e9},
};

constexpr std::string_view known_units =
    "bps, Kbps, Mbps, Gbps (bits per second) or B/s, KB/s, MB/s, GB/s (bytes per second; "
    "also written Bps, KBps, MBps, GBps)";

const unit* find_unit(std::string_view name) {
    for (const auto& u : rate_units)
        if (u.name == name) return &u;
    return nullptr;
}

std::string quoted(std::string_view s) {
    return "\"" + std::string(s) + "\"";
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

double environment_rate(const bandwidth_table& table, const environment_network& env) {
    // The raised quota never applies to VPC-attached functions (Lambda quotas page).
    if (env.vpc || !env.scalable) return table.default_bytes_per_s;
    const double mb = env.memory_mb;
    if (mb < table.scalable_from_mb) return table.default_bytes_per_s;
    if (mb >= table.scalable_to_mb) return table.scalable_max_bytes_per_s;
    const double span = table.scalable_to_mb - table.scalable_from_mb;
    if (!(span > 0)) return table.scalable_max_bytes_per_s;
    const double share = (mb - table.scalable_from_mb) / span;
    return table.default_bytes_per_s +
           share * (table.scalable_max_bytes_per_s - table.default_bytes_per_s);
}

std::uint64_t burst_bytes(const bandwidth_table& table, double bytes_per_s) {
    const double bytes = bytes_per_s * table.burst_ms / 1000.0;
    if (!(bytes > static_cast<double>(min_burst_bytes))) return min_burst_bytes;
    // 2^63 bytes: a bucket deeper than that is unlimited in practice.
    if (bytes >= 9.2e18) return std::uint64_t{1} << 63;
    return static_cast<std::uint64_t>(std::floor(bytes));
}

double parse_rate(std::string_view text) {
    const std::string_view original = text;
    while (!text.empty() && is_space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_space(text.back()))
        text.remove_suffix(1);
    const std::string example = "such as \"625Mbps\" (bits) or \"10MB/s\" (bytes)";
    if (text.empty()) throw std::invalid_argument("expected a rate " + example + ", got nothing");

    double number = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(begin, end, number);
    if (stop == begin)
        throw std::invalid_argument("expected a rate " + example + ", got " + quoted(original) +
                                    " (it must start with a number)");
    if (ec == std::errc::result_out_of_range)
        throw std::invalid_argument("the number in " + quoted(original) + " is out of range");

    std::string_view rest(stop, static_cast<std::size_t>(end - stop));
    // One space may separate the number and the unit ("625 Mbps").
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty())
        throw std::invalid_argument(quoted(original) + " has no unit; write it as " +
                                    example + ". Units: " + std::string(known_units));
    const unit* u = find_unit(rest);
    if (!u) {
        std::string hint;
        // A size where a rate belongs ("2MB") is the common slip.
        const std::string per_second = std::string(rest) + "/s";
        if (find_unit(per_second)) hint = " (did you mean " + quoted(per_second) + "?)";
        throw std::invalid_argument("unknown unit " + quoted(rest) + " in " + quoted(original) +
                                    hint + "; known: " + std::string(known_units));
    }
    if (std::isnan(number) || std::isinf(number))
        throw std::invalid_argument("a rate must be a positive finite number, got " +
                                    quoted(original));
    if (!(number > 0))
        throw std::invalid_argument("a rate must be greater than 0, got " + quoted(original));
    const double bytes_per_s = number * u->bytes_per_s;
    if (!std::isfinite(bytes_per_s) || bytes_per_s > max_rate_bytes_per_s)
        throw std::invalid_argument("the rate " + quoted(original) +
                                    " is too large (at most 1e15 B/s, 8,000 Tbps)");
    if (bytes_per_s < 1.0 / rate_quantum_per_byte)
        throw std::invalid_argument("the rate " + quoted(original) +
                                    " is too small (at least 0.001 B/s)");
    return bytes_per_s;
}

std::string format_rate(double bytes_per_s) {
    const double bits = bytes_per_s * 8;
    const char* name = "bps";
    double value = bits;
    if (bits >= 1e9) {
        name = "Gbps";
        value = bits / 1e9;
    } else if (bits >= 1e6) {
        name = "Mbps";
        value = bits / 1e6;
    } else if (bits >= 1e3) {
        name = "Kbps";
        value = bits / 1e3;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.4g %s", value, name);
    return buf;
}

// --- token bucket -------------------------------------------------------------------------

token_bucket::token_bucket(double bytes_per_s, std::uint64_t capacity_bytes, std::int64_t now_us)
    : rate_(bytes_per_s), capacity_(capacity_bytes), last_us_(now_us) {
    if (!(bytes_per_s > 0) || std::isnan(bytes_per_s))
        throw std::invalid_argument("token_bucket: the rate must be a positive number of bytes "
                                    "per second, got " +
                                    std::to_string(bytes_per_s));
    bytes_per_s = std::clamp(bytes_per_s, 1.0 / rate_quantum_per_byte, max_rate_bytes_per_s);
    rate_ = bytes_per_s;
    if (capacity_bytes == 0)
        throw std::invalid_argument("token_bucket: the capacity must be at least 1 byte");
    rate_q_ = static_cast<std::int64_t>(std::llround(bytes_per_s * rate_quantum_per_byte));
    credit_ = capacity_units();
}

token_bucket::wide token_bucket::capacity_units() const {
    return static_cast<wide>(capacity_) * units_per_byte;
}

token_bucket::wide token_bucket::credit_at(std::int64_t now_us) const {
    if (now_us <= last_us_) return credit_;
    const wide cap = capacity_units();
    if (credit_ >= cap) return credit_;
    // Compare the gap with the time to fill before multiplying: a gap of years at a high rate
    // would otherwise overflow even 128 bits.
    const wide elapsed = static_cast<wide>(now_us) - last_us_;
    const wide to_full = ceil_div(cap - credit_, rate_q_);
    if (elapsed >= to_full) return cap;
    return credit_ + elapsed * rate_q_;
}

void token_bucket::refill(std::int64_t now_us) {
    if (now_us <= last_us_) return;
    credit_ = credit_at(now_us);
    last_us_ = now_us;
}

std::uint64_t token_bucket::take(std::uint64_t want, std::int64_t now_us) {
    refill(now_us);
    if (credit_ <= 0) return 0;
    const wide whole = credit_ / units_per_byte;
    const std::uint64_t got =
        whole < static_cast<wide>(want) ? static_cast<std::uint64_t>(whole) : want;
    credit_ -= static_cast<wide>(got) * units_per_byte;
    return got;
}

std::int64_t token_bucket::take_all(std::uint64_t n, std::int64_t now_us) {
    refill(now_us);
    credit_ -= static_cast<wide>(n) * units_per_byte;
    const std::int64_t t = last_us_;
    if (credit_ >= 0) return std::max(t, now_us);
    return saturate(static_cast<wide>(t) + ceil_div(-credit_, rate_q_));
}

std::int64_t token_bucket::available_at(std::uint64_t n, std::int64_t now_us) const {
    const std::int64_t t = std::max(now_us, last_us_);
    const wide credit = credit_at(t);
    const wide need = static_cast<wide>(std::min(n, capacity_)) * units_per_byte;
    if (credit >= need) return t;
    return saturate(static_cast<wide>(t) + ceil_div(need - credit, rate_q_));
}

std::uint64_t token_bucket::available(std::int64_t now_us) const {
    const wide credit = credit_at(now_us);
    if (credit <= 0) return 0;
    return static_cast<std::uint64_t>(credit / units_per_byte);
}

double streamed_response_seconds(const bandwidth_table& table, double environment_bytes_per_s,
                                 std::uint64_t bytes) {
    const double total = static_cast<double>(bytes);
    const double uncapped = std::min(total, std::max(0.0, table.streaming_uncapped_bytes));
    const double capped = total - uncapped;
    double seconds = 0;
    if (uncapped > 0) seconds += uncapped / environment_bytes_per_s;
    if (capped > 0)
        seconds += capped / std::min(table.streaming_bytes_per_s, environment_bytes_per_s);
    return seconds;
}

}  // namespace coldbrew::models::bandwidth
