#include "models/retry/backoff.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace coldbrew::models {

namespace {

[[noreturn]] void invalid(const std::string& message) { throw std::invalid_argument(message); }

std::string num(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

// base × 2^n without overflow for large n: once past the cap, the cap.
double capped_exponential(double base, int n, double cap) {
    if (n >= 60) return cap;
    return std::min(cap, base * std::ldexp(1.0, n));
}

}  // namespace

std::optional<jitter_kind> parse_jitter_kind(std::string_view text) {
    if (text == "none") return jitter_kind::none;
    if (text == "full") return jitter_kind::full;
    if (text == "equal") return jitter_kind::equal;
    if (text == "decorrelated") return jitter_kind::decorrelated;
    return std::nullopt;
}

std::string_view to_string(jitter_kind j) {
    switch (j) {
    case jitter_kind::none: return "none";
    case jitter_kind::full: return "full";
    case jitter_kind::equal: return "equal";
    case jitter_kind::decorrelated: return "decorrelated";
    }
    return "none";
}

void validate(const exponential_backoff& p) {
    if (p.max_attempts < 1)
        invalid("max_attempts must be at least 1 (the first attempt), got " +
                std::to_string(p.max_attempts));
    if (!(p.base_ms >= 0) || !std::isfinite(p.base_ms))
        invalid("base must be a duration >= 0, got " + num(p.base_ms) + " ms");
    if (!(p.cap_ms >= p.base_ms) || !std::isfinite(p.cap_ms))
        invalid("cap (" + num(p.cap_ms) + " ms) must be at least base (" + num(p.base_ms) + " ms)");
}

double backoff_delay_ms(const exponential_backoff& p, int n, double previous_ms, double u) {
    const double v = capped_exponential(p.base_ms, n, p.cap_ms);
    switch (p.jitter) {
    case jitter_kind::none: return v;
    case jitter_kind::full: return u * v;
    case jitter_kind::equal: return v / 2 + u * (v / 2);
    case jitter_kind::decorrelated: {
        // Brooker: sleep = min(cap, random_between(base, sleep * 3)).
        const double hi = std::max(p.base_ms, previous_ms * 3);
        return std::min(p.cap_ms, p.base_ms + u * (hi - p.base_ms));
    }
    }
    return v;
}

std::optional<std::uint32_t> parse_sfn_error(std::string_view name) {
    if (name == "States.ALL") return sfn_all;
    if (name == "States.Timeout") return sfn_timeout;
    if (name == "States.TaskFailed") return sfn_task_failed;
    if (name == "Lambda.ServiceException" || name == "Lambda.AWSLambdaException" ||
        name == "Lambda.SdkClientException")
        return sfn_lambda_service;
    if (name == "Lambda.TooManyRequestsException") return sfn_lambda_too_many_requests;
    return std::nullopt;
}

void validate(const sfn_retrier& r) {
    if (r.error_equals.empty()) invalid("ErrorEquals must name at least one error");
    if (r.error_equals.size() > 1 &&
        std::find(r.error_equals.begin(), r.error_equals.end(), "States.ALL") !=
            r.error_equals.end())
        invalid("States.ALL must appear alone in its ErrorEquals");
    // ASL: IntervalSeconds is a positive integer, so at least 1 s.
    if (!(r.interval_ms >= 1000) || !std::isfinite(r.interval_ms))
        invalid("IntervalSeconds must be at least 1, got " + num(r.interval_ms / 1000));
    if (r.max_attempts < 0)
        invalid("MaxAttempts must be >= 0 (0 = never retry), got " +
                std::to_string(r.max_attempts));
    if (!(r.backoff_rate >= 1.0) || !std::isfinite(r.backoff_rate))
        invalid("BackoffRate must be at least 1.0, got " + num(r.backoff_rate));
    if (r.max_delay_ms && (!(*r.max_delay_ms > 0) || !std::isfinite(*r.max_delay_ms)))
        invalid("MaxDelaySeconds must be > 0, got " + num(*r.max_delay_ms / 1000));
}

void validate(const std::vector<sfn_retrier>& retry) {
    for (std::size_t i = 0; i < retry.size(); ++i) {
        validate(retry[i]);
        if (retry[i].errors == sfn_all && i + 1 != retry.size())
            invalid("States.ALL must be in the last retrier (retrier " + std::to_string(i + 1) +
                    " of " + std::to_string(retry.size()) + ")");
    }
}

double sfn_retry_delay_ms(const sfn_retrier& r, int n, double u) {
    double d = r.interval_ms * std::pow(r.backoff_rate, n - 1);
    if (r.max_delay_ms) d = std::min(d, *r.max_delay_ms);
    if (!std::isfinite(d)) d = r.max_delay_ms ? *r.max_delay_ms : 1e18;
    return r.full_jitter ? u * d : d;
}

int sfn_match(const std::vector<sfn_retrier>& retry, std::uint32_t error_bits) {
    for (std::size_t i = 0; i < retry.size(); ++i)
        if (retry[i].errors & error_bits) return static_cast<int>(i);
    return -1;
}

void validate(const sdk_standard_retry& p) {
    if (p.max_attempts < 1)
        invalid("max_attempts must be at least 1, got " + std::to_string(p.max_attempts));
    if (!(p.base_ms >= 0) || !std::isfinite(p.base_ms))
        invalid("base must be >= 0, got " + num(p.base_ms) + " ms");
    if (!(p.cap_ms >= 0) || !std::isfinite(p.cap_ms))
        invalid("cap must be >= 0, got " + num(p.cap_ms) + " ms");
    if (p.initial_tokens < 0 || p.retry_cost < 0 || p.timeout_retry_cost < 0 ||
        p.no_retry_increment < 0)
        invalid("retry quota numbers must be >= 0");
}

double sdk_standard_delay_ms(const sdk_standard_retry& p, int i, double u) {
    if (i >= 60) return p.cap_ms;
    return std::min(p.cap_ms, u * p.base_ms * std::ldexp(1.0, i));
}

}  // namespace coldbrew::models
