#pragma once
// Retry policies where they live in real stacks, as pure functions of the retry number and a
// uniform draw: a client's own exponential backoff (Brooker's full / equal / decorrelated
// jitter), a Step Functions Task state's `Retry` field, and the AWS SDK's `standard` retry
// mode with its retry-quota token bucket. Lambda's asynchronous retries are in
// models/retry/async_retry.hpp. All delays are modeled milliseconds.
//
// Sources (shared spec model-data §8, §9):
//  - Marc Brooker, "Exponential Backoff and Jitter", AWS Architecture Blog, 2015-03-04, and
//    github.com/aws-samples/aws-arch-backoff-simulator: with v = min(cap, base·2^n),
//      none:         v
//      full:         U(0, v)
//      equal:        v/2 + U(0, v/2)
//      decorrelated: min(cap, U(base, previous·3)), previous starting at base.
//  - Amazon States Language, "Handling errors in Step Functions workflows"
//    (awsdocs/aws-step-functions-developer-guide concepts-error-handling.md) and the AWS CDK's
//    RetryProps (maxDelay, jitterStrategy): IntervalSeconds default 1, MaxAttempts default 3
//    (0 = never retry), BackoffRate default 2.0, MaxDelaySeconds optional cap, JitterStrategy
//    FULL (U(0, delay)) or NONE (default). Retry n (1-based) waits
//    min(IntervalSeconds × BackoffRate^(n-1), MaxDelaySeconds). A retrier's attempt count
//    applies across the whole state execution; the first retrier whose ErrorEquals matches
//    handles an error.
//  - AWS SDKs and Tools Reference Guide, "Retry behavior" (feature-retry-behavior.html), and
//    aws-sdk-cpp RetryStrategy.cpp / aws-sdk-js-v3 PR #1258 (2020): standard mode makes at most
//    3 attempts; retry i (0-based) waits rand(0..1 s) × 2^i, at most 20 s (the behaviour
//    documented before the 2026 update); the retry quota starts at 500 tokens, a retry costs 5
//    (10 after a timeout), a success without a retry refunds 1, a successful retry refunds its
//    cost, and no tokens means no retry.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::models {

// ---- client retries: exponential backoff with jitter (Brooker 2015) -----------------------

enum class jitter_kind { none, full, equal, decorrelated };

// "none" / "full" / "equal" / "decorrelated"; nullopt otherwise.
std::optional<jitter_kind> parse_jitter_kind(std::string_view text);
std::string_view to_string(jitter_kind j);

struct exponential_backoff {
    int max_attempts = 3;      // attempts in all, the first included (1 = never retry)
    double base_ms = 100;      // v for the first retry (n = 0)
    double cap_ms = 20000;     // no wait is longer
    jitter_kind jitter = jitter_kind::full;
};

// Throws std::invalid_argument naming the field (max_attempts < 1, base < 0, cap < base, …).
void validate(const exponential_backoff& p);

// The wait before retry `n` (0-based: n = 0 is the first retry), given the previous wait
// (decorrelated jitter only; pass base_ms for the first retry) and a uniform u in [0, 1).
double backoff_delay_ms(const exponential_backoff& p, int n, double previous_ms, double u);

// ---- Step Functions Task state Retry field -------------------------------------------------

// The error names a simulated attempt can end with, as a bit set, so that a retrier's
// ErrorEquals is matched with one AND. Names are Step Functions' own (States.*) and the
// Lambda service errors the Step Functions guide recommends retrying.
enum sfn_error : std::uint32_t {
    sfn_timeout = 1u << 0,                  // States.Timeout: no answer within TimeoutSeconds
    sfn_task_failed = 1u << 1,              // States.TaskFailed: the task returned an error
    sfn_lambda_service = 1u << 2,           // Lambda.ServiceException (a 5xx from Lambda)
    sfn_lambda_too_many_requests = 1u << 3, // Lambda.TooManyRequestsException (429)
    sfn_all = 0xffffffffu,                  // States.ALL
};

// The bit of one ErrorEquals name; nullopt when the simulator never raises it.
std::optional<std::uint32_t> parse_sfn_error(std::string_view name);

struct sfn_retrier {
    std::vector<std::string> error_equals = {"States.ALL"};
    std::uint32_t errors = sfn_all;        // error_equals as bits
    double interval_ms = 1000;             // IntervalSeconds × 1000 (default 1 s)
    int max_attempts = 3;                  // MaxAttempts: retries, not attempts (0 = none)
    double backoff_rate = 2.0;             // BackoffRate (>= 1.0 in ASL)
    std::optional<double> max_delay_ms;    // MaxDelaySeconds × 1000
    bool full_jitter = false;              // JitterStrategy FULL (true) or NONE
};

// Throws std::invalid_argument: ErrorEquals empty, States.ALL not alone, interval < 1 s,
// max_attempts < 0, backoff_rate < 1, max delay not > 0 (the ASL's own limits).
void validate(const sfn_retrier& r);
// A Retry field (a list of retriers): States.ALL only in the last one. Throws as above.
void validate(const std::vector<sfn_retrier>& retry);

// The wait before retry `n` (1-based) of retrier `r`, with u in [0, 1) for FULL jitter.
double sfn_retry_delay_ms(const sfn_retrier& r, int n, double u);

// The index of the first retrier of `retry` matching `error_bits`, or -1.
int sfn_match(const std::vector<sfn_retrier>& retry, std::uint32_t error_bits);

// ---- AWS SDK standard retry mode -----------------------------------------------------------

struct sdk_standard_retry {
    int max_attempts = 3;          // the first attempt included
    double base_ms = 1000;         // retry i waits U(0, base) × 2^i ...
    double cap_ms = 20000;         // ... at most this
    int initial_tokens = 500;      // retry quota bucket size
    int retry_cost = 5;            // tokens a retry takes
    int timeout_retry_cost = 10;   // tokens a retry after a timeout takes
    int no_retry_increment = 1;    // refunded by a success that needed no retry
};

// Throws std::invalid_argument naming the field.
void validate(const sdk_standard_retry& p);

// The wait before retry `i` (0-based), u in [0, 1): min(cap, u × base × 2^i).
double sdk_standard_delay_ms(const sdk_standard_retry& p, int i, double u);

// The retry quota: one token bucket per SDK client (shared by every call that client makes).
class retry_quota {
public:
    explicit retry_quota(const sdk_standard_retry& p)
        : capacity_(p.initial_tokens), tokens_(p.initial_tokens), retry_cost_(p.retry_cost),
          timeout_cost_(p.timeout_retry_cost), no_retry_increment_(p.no_retry_increment) {}

    // A retry is wanted after a failed attempt: the tokens taken, or 0 when the bucket cannot
    // pay (no retry).
    int acquire(bool after_timeout) noexcept {
        const int cost = after_timeout ? timeout_cost_ : retry_cost_;
        if (tokens_ < cost) return 0;
        tokens_ -= cost;
        return cost;
    }
    // A call succeeded; `retry_cost` is what its last retry took (0 when it needed none).
    void on_success(int retry_cost) noexcept {
        const int refund = retry_cost > 0 ? retry_cost : no_retry_increment_;
        tokens_ = tokens_ + refund > capacity_ ? capacity_ : tokens_ + refund;
    }
    int tokens() const noexcept { return tokens_; }
    void reset() noexcept { tokens_ = capacity_; }

private:
    int capacity_, tokens_, retry_cost_, timeout_cost_, no_retry_increment_;
};

}  // namespace coldbrew::models
