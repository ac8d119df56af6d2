#include "models/retry/async_retry.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "tests/catch.hpp"

using namespace coldbrew::models;

namespace {

constexpr double minute_ms = 60000;
constexpr double hour_ms = 3600000;

// Plays one event through the policy: each entry of `outcomes` is one attempt; the event's age
// advances by `attempt_ms` per attempt plus every planned delay. Returns the delays planned and
// the final decision.
struct replay {
    std::vector<double> delays_ms;
    retry_decision last;
    int attempts = 0;
};

replay play(const async_retry_config& cfg, const std::vector<attempt_outcome>& outcomes,
            double attempt_ms = 100) {
    replay r;
    int function_errors = 0, throttles = 0;
    double age_ms = 0;
    for (auto o : outcomes) {
        ++r.attempts;
        age_ms += attempt_ms;
        if (o == attempt_outcome::function_error) ++function_errors;
        if (o == attempt_outcome::throttled || o == attempt_outcome::system_error) ++throttles;
        r.last = next_attempt(cfg, o, function_errors, throttles, age_ms);
        if (!r.last.retry) break;
        r.delays_ms.push_back(r.last.delay_ms);
        age_ms += r.last.delay_ms;
    }
    return r;
}

}  // namespace

TEST_CASE("async retry: defaults are Lambda's (2 retries, 6 h, 1 then 2 min, 1 s to 5 min)",
          "[unit]") {
    const async_retry_config cfg;
    CHECK(cfg.maximum_retry_attempts == 2);
    CHECK(cfg.maximum_event_age_ms == 6 * hour_ms);
    CHECK(cfg.function_error_delays_ms == std::vector<double>{minute_ms, 2 * minute_ms});
    CHECK(cfg.throttle_initial_delay_ms == 1000);
    CHECK(cfg.throttle_max_delay_ms == 5 * minute_ms);
    CHECK_NOTHROW(validate(cfg));
}

TEST_CASE("async retry: success ends the event with no reason", "[unit]") {
    const auto d = next_attempt({}, attempt_outcome::success, 0, 0, 5);
    CHECK_FALSE(d.retry);
    CHECK(d.give_up_reason.empty());
    // Also after earlier failures.
    const auto later = next_attempt({}, attempt_outcome::success, 2, 7, 3 * minute_ms);
    CHECK_FALSE(later.retry);
    CHECK(later.give_up_reason.empty());
}

TEST_CASE("async retry: function errors retry twice, ~1 min then ~2 min, then RetriesExhausted",
          "[unit]") {
    const async_retry_config cfg;
    auto first = next_attempt(cfg, attempt_outcome::function_error, 1, 0, 200);
    CHECK(first.retry);
    CHECK(first.delay_ms == minute_ms);
    CHECK(first.give_up_reason.empty());

    auto second = next_attempt(cfg, attempt_outcome::function_error, 2, 0, minute_ms + 400);
    CHECK(second.retry);
    CHECK(second.delay_ms == 2 * minute_ms);

    auto third = next_attempt(cfg, attempt_outcome::function_error, 3, 0, 3 * minute_ms + 600);
    CHECK_FALSE(third.retry);
    CHECK(third.give_up_reason == "RetriesExhausted");

    const auto r = play(cfg, std::vector<attempt_outcome>(5, attempt_outcome::function_error));
    CHECK(r.attempts == 3);  // approximateInvokeCount 3, as in Lambda's example record
    CHECK(r.delays_ms == std::vector<double>{minute_ms, 2 * minute_ms});
    CHECK(r.last.give_up_reason == "RetriesExhausted");
}

TEST_CASE("async retry: MaximumRetryAttempts 0 and 1", "[unit]") {
    async_retry_config cfg;
    cfg.maximum_retry_attempts = 0;
    auto d = next_attempt(cfg, attempt_outcome::function_error, 1, 0, 10);
    CHECK_FALSE(d.retry);
    CHECK(d.give_up_reason == "RetriesExhausted");

    cfg.maximum_retry_attempts = 1;
    const auto r = play(cfg, std::vector<attempt_outcome>(5, attempt_outcome::function_error));
    CHECK(r.attempts == 2);
    CHECK(r.delays_ms == std::vector<double>{minute_ms});
    CHECK(r.last.give_up_reason == "RetriesExhausted");
}

TEST_CASE("async retry: throttles back off 1 s doubling, capped at 5 min, not counted as retries",
          "[unit]") {
    const async_retry_config cfg;
    std::vector<double> delays;
    for (int n = 1; n <= 12; ++n) {
        const auto d = next_attempt(cfg, attempt_outcome::throttled, 0, n, 1000);
        REQUIRE(d.retry);
        delays.push_back(d.delay_ms);
    }
    CHECK(delays == std::vector<double>{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000,
                                        256000, 300000, 300000, 300000});
    // System errors follow the same backoff.
    CHECK(next_attempt(cfg, attempt_outcome::system_error, 0, 3, 0).delay_ms == 4000);
    // Throttles do not use up MaximumRetryAttempts: after 30 throttles, a function error still
    // gets its first retry.
    const auto fe = next_attempt(cfg, attempt_outcome::function_error, 1, 30, 2 * hour_ms);
    CHECK(fe.retry);
    CHECK(fe.delay_ms == minute_ms);
    // Even with MaximumRetryAttempts 0, throttles are retried.
    async_retry_config none;
    none.maximum_retry_attempts = 0;
    CHECK(next_attempt(none, attempt_outcome::throttled, 0, 1, 0).retry);
}

TEST_CASE("async retry: throttled events are retried until the maximum event age", "[unit]") {
    async_retry_config cfg;
    cfg.maximum_event_age_ms = minute_ms;
    // Attempts take no time: planned delays 1, 2, 4, 8, 16 s (age 31 s); the next, 32 s, would
    // start at 63 s > 60 s, so the event gives up at once.
    const auto r = play(cfg, std::vector<attempt_outcome>(100, attempt_outcome::throttled), 0);
    CHECK(r.delays_ms == std::vector<double>{1000, 2000, 4000, 8000, 16000});
    CHECK(r.attempts == 6);
    CHECK_FALSE(r.last.retry);
    CHECK(r.last.give_up_reason == "EventAgeExceeded");

    // Default 6 h: attempts keep coming every 5 min once capped, and the count is bounded.
    const async_retry_config six_hours;
    const auto long_run =
        play(six_hours, std::vector<attempt_outcome>(1000, attempt_outcome::throttled), 0);
    CHECK(long_run.last.give_up_reason == "EventAgeExceeded");
    double total = 0;
    for (double d : long_run.delays_ms) total += d;
    CHECK(total < 6 * hour_ms);
    CHECK(total + 300000 >= 6 * hour_ms);  // the next 5-min wait would have crossed 6 h
    // 9 doubling waits (1 .. 256 s, 511 s in all), then 70 waits of 5 min (age 21,511 s); the
    // 80th attempt's next wait would end past 21,600 s.
    CHECK(long_run.delays_ms.size() == 79);
    CHECK(long_run.attempts == 80);
}

TEST_CASE("async retry: the age limit also stops function-error retries", "[unit]") {
    async_retry_config cfg;
    cfg.maximum_event_age_ms = minute_ms;  // the minimum AWS allows
    // The 1-min retry would start at age 60.1 s: EventAgeExceeded, no retry.
    auto d = next_attempt(cfg, attempt_outcome::function_error, 1, 0, 100);
    CHECK_FALSE(d.retry);
    CHECK(d.give_up_reason == "EventAgeExceeded");
    // Exactly at the limit counts as too old ("younger than" the maximum age to be tried).
    d = next_attempt(cfg, attempt_outcome::function_error, 1, 0, 0);
    CHECK(d.give_up_reason == "EventAgeExceeded");

    cfg.maximum_event_age_ms = 2 * minute_ms;
    // First retry fits (age 0.5 s + 60 s < 120 s); the second (2 min) does not.
    const auto r = play(cfg, std::vector<attempt_outcome>(5, attempt_outcome::function_error), 500);
    CHECK(r.delays_ms == std::vector<double>{minute_ms});
    CHECK(r.attempts == 2);
    CHECK(r.last.give_up_reason == "EventAgeExceeded");
}

TEST_CASE("async retry: retries exhausted wins over the age limit", "[unit]") {
    async_retry_config cfg;
    cfg.maximum_event_age_ms = minute_ms;
    const auto d = next_attempt(cfg, attempt_outcome::function_error, 3, 0, 10 * hour_ms);
    CHECK(d.give_up_reason == "RetriesExhausted");
}

TEST_CASE("async retry: mixed throttles and function errors", "[unit]") {
    const async_retry_config cfg;
    using o = attempt_outcome;
    const auto r = play(cfg, {o::throttled, o::function_error, o::throttled, o::throttled,
                              o::function_error, o::function_error, o::success});
    // throttle #1: 1 s; function error #1: 1 min; throttle #2, #3: 2 s, 4 s (the backoff counts
    // the event's throttles, not a streak); function error #2: 2 min; #3: exhausted.
    CHECK(r.delays_ms == std::vector<double>{1000, minute_ms, 2000, 4000, 2 * minute_ms});
    CHECK(r.attempts == 6);
    CHECK(r.last.give_up_reason == "RetriesExhausted");
}

TEST_CASE("async retry: configured delays; the last one repeats; none means at once", "[unit]") {
    async_retry_config cfg;
    cfg.function_error_delays_ms = {5000};
    CHECK(function_error_delay_ms(cfg, 1) == 5000);
    CHECK(function_error_delay_ms(cfg, 2) == 5000);
    cfg.function_error_delays_ms = {};
    CHECK(function_error_delay_ms(cfg, 1) == 0);
    const auto d = next_attempt(cfg, attempt_outcome::function_error, 1, 0, 0);
    CHECK(d.retry);
    CHECK(d.delay_ms == 0);

    cfg.throttle_initial_delay_ms = 10;
    cfg.throttle_max_delay_ms = 50;
    CHECK(throttle_delay_ms(cfg, 1) == 10);
    CHECK(throttle_delay_ms(cfg, 3) == 40);
    CHECK(throttle_delay_ms(cfg, 4) == 50);
    CHECK(throttle_delay_ms(cfg, 5000) == 50);  // no overflow past the cap
    CHECK(throttle_delay_ms(cfg, 0) == 10);
}

TEST_CASE("async retry: validate enforces EventInvokeConfig's limits", "[unit]") {
    auto invalid = [](auto change) {
        async_retry_config cfg;
        change(cfg);
        try {
            validate(cfg);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(invalid([](auto& c) { c.maximum_retry_attempts = 3; }) ==
          "MaximumRetryAttempts must be 0 to 2, got 3");
    CHECK(invalid([](auto& c) { c.maximum_retry_attempts = -1; }) ==
          "MaximumRetryAttempts must be 0 to 2, got -1");
    CHECK(invalid([](auto& c) { c.maximum_event_age_ms = 59000; }) ==
          "MaximumEventAgeInSeconds must be 60 to 21600, got 59");
    CHECK(invalid([](auto& c) { c.maximum_event_age_ms = 21601000; }) ==
          "MaximumEventAgeInSeconds must be 60 to 21600, got 21601");
    CHECK_FALSE(invalid([](auto& c) { c.function_error_delays_ms = {-1}; }).empty());
    CHECK_FALSE(invalid([](auto& c) { c.throttle_initial_delay_ms = 0; }).empty());
    CHECK_FALSE(invalid([](auto& c) { c.throttle_max_delay_ms = 500; }).empty());
    CHECK(invalid([](auto& c) {
              c.maximum_retry_attempts = 0;
              c.maximum_event_age_ms = 60000;
          }).empty());
    CHECK(invalid([](auto& c) { c.maximum_event_age_ms = 21600000; }).empty());
}
