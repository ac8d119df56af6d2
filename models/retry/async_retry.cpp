#include "models/retry/async_retry.hpp"

#include <cmath>
#include <stdexcept>

namespace coldbrew::models {

namespace {

bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

std::string number(double v) {
    // Whole numbers without a trailing ".000000", as a user wrote them.
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        return std::to_string(static_cast<long long>(v));
    return std::to_string(v);
}

}  // namespace

void validate(const async_retry_config& cfg) {
    if (cfg.maximum_retry_attempts < 0 || cfg.maximum_retry_attempts > max_retry_attempts_limit)
        throw std::invalid_argument("MaximumRetryAttempts must be 0 to " +
                                    std::to_string(max_retry_attempts_limit) + ", got " +
                                    std::to_string(cfg.maximum_retry_attempts));
    if (!std::isfinite(cfg.maximum_event_age_ms) || cfg.maximum_event_age_ms < min_event_age_ms ||
        cfg.maximum_event_age_ms > max_event_age_ms)
        throw std::invalid_argument("MaximumEventAgeInSeconds must be 60 to 21600, got " +
                                    number(cfg.maximum_event_age_ms / 1000));
    for (double d : cfg.function_error_delays_ms)
        if (!finite_non_negative(d))
            throw std::invalid_argument("function-error retry delay must be a finite number of "
                                        "ms >= 0, got " +
                                        number(d));
    if (!std::isfinite(cfg.throttle_initial_delay_ms) || cfg.throttle_initial_delay_ms <= 0)
        throw std::invalid_argument("throttle initial retry delay must be > 0 ms, got " +
                                    number(cfg.throttle_initial_delay_ms));
    if (!std::isfinite(cfg.throttle_max_delay_ms) ||
        cfg.throttle_max_delay_ms < cfg.throttle_initial_delay_ms)
        throw std::invalid_argument("throttle maximum retry delay must be at least the initial "
                                    "delay (" +
                                    number(cfg.throttle_initial_delay_ms) + " ms), got " +
                                    number(cfg.throttle_max_delay_ms));
}

double throttle_delay_ms(const async_retry_config& cfg, int throttles) {
    const int doublings = throttles > 1 ? throttles - 1 : 0;
    // 2^doublings overflows nothing that matters: past ~1,000 doublings it is +inf, capped.
    const double d = cfg.throttle_initial_delay_ms * std::pow(2.0, doublings);
    return d < cfg.throttle_max_delay_ms ? d : cfg.throttle_max_delay_ms;
}

double function_error_delay_ms(const async_retry_config& cfg, int retry) {
    const auto& delays = cfg.function_error_delays_ms;
    if (delays.empty()) return 0;
    const auto i = retry < 1 ? std::size_t{0} : static_cast<std::size_t>(retry - 1);
    return i < delays.size() ? delays[i] : delays.back();
}

retry_decision next_attempt(const async_retry_config& cfg, attempt_outcome outcome,
                            int function_errors, int throttles, double event_age_ms) {
    retry_decision d;
    switch (outcome) {
    case attempt_outcome::success:
        return d;
    case attempt_outcome::function_error:
        if (function_errors > cfg.maximum_retry_attempts) {
            d.give_up_reason = condition_retries_exhausted;
            return d;
        }
        d.delay_ms = function_error_delay_ms(cfg, function_errors);
        break;
    case attempt_outcome::throttled:
    case attempt_outcome::system_error:
        d.delay_ms = throttle_delay_ms(cfg, throttles);
        break;
    }
    if (event_age_ms + d.delay_ms >= cfg.maximum_event_age_ms) {
        d.delay_ms = 0;
        d.give_up_reason = condition_event_age_exceeded;
        return d;
    }
    d.retry = true;
    return d;
}

}  // namespace coldbrew::models
