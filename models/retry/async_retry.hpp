#pragma once
// Lambda's retry policy for asynchronous (Event) invocations: after each attempt, whether the
// event is tried again, after how long, or why it is given up. Pure: the event's age is an
// argument (modeled ms), so the live event queue and the simulator share it.
//
// Facts (AWS Lambda Developer Guide, "How Lambda handles errors and retries with asynchronous
// invocation"; EventInvokeConfig in the CloudFormation and CDK references; shared spec
// model-data §8c):
//  - Function errors (errors returned by the code or the runtime, timeouts included) are
//    retried MaximumRetryAttempts times (0..2, default 2), about 1 min before the first retry
//    and about 2 min before the second.
//  - Throttles (429) and system errors (5xx) return the event to the queue; it is retried with
//    an interval growing exponentially from 1 s to at most 5 min, for as long as the event is
//    younger than MaximumEventAgeInSeconds (60 s .. 6 h, default 6 h). These retries do not
//    count against MaximumRetryAttempts.
//  - An event that gives up is reported to the on-failure destination with
//    requestContext.condition "RetriesExhausted" or "EventAgeExceeded".
//
// coldbrew's choices where AWS gives no number:
//  - No jitter. AWS documents the delays ("~1 min", "1 s to 5 min") but not their spread, and
//    a local test wants to know when the retry comes. Delays are exactly the configured ones:
//    function errors use function_error_delays_ms[k] before retry k+1 (the last entry again
//    if there are more retries than entries); throttles wait initial × 2^(n-1), capped.
//  - The maximum age is checked when a retry is planned: if the event would be as old as
//    maximum_event_age_ms or older when the next attempt starts, it gives up at once with
//    EventAgeExceeded instead of waiting in the queue to expire. The age limit applies to
//    function-error retries too (with a 60 s maximum age, the ~1 min retry never happens).
//  - When a function error is also the last allowed retry, RetriesExhausted wins over
//    EventAgeExceeded (the retry count is what stopped it).

#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::models {

// Condition names of Lambda's destination records (requestContext.condition).
inline constexpr std::string_view condition_success = "Success";
inline constexpr std::string_view condition_retries_exhausted = "RetriesExhausted";
inline constexpr std::string_view condition_event_age_exceeded = "EventAgeExceeded";

// EventInvokeConfig limits (CloudFormation AWS::Lambda::EventInvokeConfig).
inline constexpr int max_retry_attempts_limit = 2;             // MaximumRetryAttempts 0..2
inline constexpr double min_event_age_ms = 60.0 * 1000;        // MaximumEventAgeInSeconds 60
inline constexpr double max_event_age_ms = 6.0 * 3600 * 1000;  // .. 21600 (6 h)

struct async_retry_config {
    int maximum_retry_attempts = 2;                  // MaximumRetryAttempts, 0..2
    double maximum_event_age_ms = max_event_age_ms;  // MaximumEventAgeInSeconds × 1000
    // Wait before function-error retry 1, 2, …: ~1 min, then ~2 min (docs, see above).
    std::vector<double> function_error_delays_ms = {60000, 120000};
    // Throttle / system-error backoff: 1 s doubling per attempt, at most 5 min (docs).
    double throttle_initial_delay_ms = 1000;
    double throttle_max_delay_ms = 300000;
};

// Throws std::invalid_argument naming the field and the allowed range when `cfg` is outside
// EventInvokeConfig's limits or a delay is negative, not finite, or the throttle cap is below
// the initial delay.
void validate(const async_retry_config& cfg);

// How the attempt that just ended came out, in the queue's terms.
enum class attempt_outcome {
    success,         // the function returned a result
    function_error,  // the function or its runtime failed (error, crash, timeout)
    throttled,       // 429: concurrency or scaling-rate limit
    system_error,    // 5xx from the service itself (the function did not run)
};

struct retry_decision {
    bool retry = false;
    double delay_ms = 0;         // modeled ms from now until the next attempt (when retry)
    std::string give_up_reason;  // "RetriesExhausted" | "EventAgeExceeded" when the event is
                                 // given up; empty on success or when retrying
};

// Decides what follows the attempt that just ended.
//  function_errors: attempts of this event that ended in a function error, this one included.
//  throttles:       attempts that ended throttled or in a system error, this one included.
//  event_age_ms:    modeled ms since the event was accepted, now (as the attempt ended).
// success → {retry=false, reason ""}. A function error retries while function_errors <=
// maximum_retry_attempts; throttles and system errors always retry; either gives up with
// EventAgeExceeded when event_age_ms + delay_ms >= maximum_event_age_ms.
retry_decision next_attempt(const async_retry_config& cfg, attempt_outcome outcome,
                            int function_errors, int throttles, double event_age_ms);

// The wait after the event's `throttles`-th throttle or system error (1-based; function
// errors in between do not reset it): throttle_initial_delay_ms × 2^(throttles-1), at most
// throttle_max_delay_ms.
double throttle_delay_ms(const async_retry_config& cfg, int throttles);

// The wait before function-error retry `retry` (1-based).
double function_error_delay_ms(const async_retry_config& cfg, int retry);

}  // namespace coldbrew::models
