#include "models/retry/backoff.hpp"

#include <stdexcept>

#include "models/random/random_source.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;

// Delays are pinned for seed 42: a change in the formulas or in the random source changes
// every seeded simulation, so it must show up here.

TEST_CASE("retry: Brooker's jitter kinds, pinned for a seed", "[unit]") {
    const random_source rng(42);
    const exponential_backoff full{5, 100, 2000, jitter_kind::full};
    const exponential_backoff equal{5, 100, 2000, jitter_kind::equal};
    const exponential_backoff decorrelated{5, 100, 2000, jitter_kind::decorrelated};
    const exponential_backoff none{5, 100, 2000, jitter_kind::none};
    const double expect_full[] = {85.189013410281547, 149.9022523895008, 146.66076553753729,
                                  284.14113567043734};
    const double expect_equal[] = {92.594506705140773, 174.9511261947504, 273.33038276876863,
                                   542.07056783521864};
    const double expect_decorrelated[] = {270.37802682056309, 633.0030020607187,
                                          759.61009513899785, 873.86913966440954};
    double previous = decorrelated.base_ms;
    for (int n = 0; n < 4; ++n) {
        const double u = rng.uniform("retry", "test", static_cast<std::uint64_t>(n));
        CHECK(backoff_delay_ms(full, n, 0, u) == Approx(expect_full[n]).epsilon(1e-12));
        CHECK(backoff_delay_ms(equal, n, 0, u) == Approx(expect_equal[n]).epsilon(1e-12));
        const double d = backoff_delay_ms(decorrelated, n, previous, u);
        CHECK(d == Approx(expect_decorrelated[n]).epsilon(1e-12));
        previous = d;
        CHECK(backoff_delay_ms(none, n, 0, u) == 100.0 * (1 << n));
    }
    // The cap holds for every kind.
    CHECK(backoff_delay_ms(none, 10, 0, 0.5) == 2000);
    CHECK(backoff_delay_ms(full, 100, 0, 0.999) <= 2000);
    CHECK(backoff_delay_ms(equal, 100, 0, 0.0) == 1000);
    CHECK(backoff_delay_ms(decorrelated, 3, 5000, 0.99) == 2000);
    CHECK(parse_jitter_kind("decorrelated") == jitter_kind::decorrelated);
    CHECK(!parse_jitter_kind("Full"));
    CHECK_THROWS_AS(validate(exponential_backoff{0, 100, 2000, jitter_kind::full}), std::invalid_argument);
    CHECK_THROWS_AS(validate(exponential_backoff{3, 100, 50, jitter_kind::full}), std::invalid_argument);
}

TEST_CASE("retry: AWS SDK standard mode delays and retry quota", "[unit]") {
    const random_source rng(42);
    const sdk_standard_retry p;
    CHECK(p.max_attempts == 3);
    const double expect[] = {295.72339644365377, 1253.1468243603522, 964.03417049483369};
    for (int i = 0; i < 3; ++i)
        CHECK(sdk_standard_delay_ms(p, i, rng.uniform("retry", "sdk", static_cast<std::uint64_t>(i))) ==
              Approx(expect[i]).epsilon(1e-12));
    CHECK(sdk_standard_delay_ms(p, 10, 0.99) == 20000);  // capped at 20 s

    retry_quota q(p);
    CHECK(q.tokens() == 500);
    CHECK(q.acquire(false) == 5);
    CHECK(q.acquire(true) == 10);
    CHECK(q.tokens() == 485);
    q.on_success(10);  // a successful retry refunds its cost
    CHECK(q.tokens() == 495);
    q.on_success(0);   // a success without a retry refunds 1
    CHECK(q.tokens() == 496);
    for (int i = 0; i < 10; ++i) q.on_success(0);
    CHECK(q.tokens() == 500);  // never above the bucket's size
    // Drain: 100 retries at 5 tokens, then none.
    int granted = 0;
    while (q.acquire(false)) ++granted;
    CHECK(granted == 100);
    CHECK(q.tokens() == 0);
    CHECK(q.acquire(true) == 0);
}

TEST_CASE("retry: Step Functions retrier fields", "[unit]") {
    const random_source rng(42);
    sfn_retrier r;
    CHECK(r.interval_ms == 1000);
    CHECK(r.max_attempts == 3);
    CHECK(r.backoff_rate == 2.0);
    // NONE: IntervalSeconds × BackoffRate^(n-1).
    CHECK(sfn_retry_delay_ms(r, 1, 0.3) == 1000);
    CHECK(sfn_retry_delay_ms(r, 3, 0.3) == 4000);
    r.max_delay_ms = 3000;
    CHECK(sfn_retry_delay_ms(r, 3, 0.3) == 3000);  // MaxDelaySeconds caps the growth
    r.full_jitter = true;
    const double expect[] = {972.69307582658121, 1150.6753696099565, 2784.0840256714187,
                             2798.7901608944367};
    for (int n = 1; n <= 4; ++n)
        CHECK(sfn_retry_delay_ms(r, n, rng.uniform("retry", "sfn", static_cast<std::uint64_t>(n))) ==
              Approx(expect[n - 1]).epsilon(1e-12));

    sfn_retrier timeouts;
    timeouts.error_equals = {"States.Timeout"};
    timeouts.errors = *parse_sfn_error("States.Timeout");
    sfn_retrier all;
    const std::vector<sfn_retrier> retry = {timeouts, all};
    CHECK(sfn_match(retry, sfn_timeout) == 0);
    CHECK(sfn_match(retry, sfn_task_failed) == 1);
    CHECK(sfn_match({timeouts}, sfn_task_failed) == -1);
    CHECK_THROWS_AS(validate(std::vector<sfn_retrier>{all, timeouts}), std::invalid_argument);
    sfn_retrier bad;
    bad.backoff_rate = 0.5;
    CHECK_THROWS_AS(validate(bad), std::invalid_argument);
    CHECK(!parse_sfn_error("States.Whatever"));
}
