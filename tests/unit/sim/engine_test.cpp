// The engines against exact results: serial availability is the product of the parts, k
// independent attempts give 1-(1-a)^k, a saturated dependency queues as M/M/c says; and the
// same seed gives the same report at any thread count.

#include <cmath>
#include <string>

#include "emulator/config/scenario_loader.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/report.hpp"
#include "tests/catch.hpp"

using namespace coldbrew;
using models::sim::report_json;
using models::sim::run;

namespace {

config::loaded_scenario load(const std::string& yaml) {
    return config::load_scenario_text(yaml, "test.yaml");
}

double availability(const config::loaded_scenario& l, std::size_t variant = 0, unsigned threads = 2) {
    const auto& s = l.variants.at(variant).scenario;
    const auto r = run(s, {threads, {}});
    return static_cast<double>(r.successes) / static_cast<double>(r.requests);
}

// |simulated - exact| within k standard errors of a binomial proportion.
bool close(double simulated, double exact, std::uint64_t n, double k = 4.5) {
    const double se = std::sqrt(exact * (1 - exact) / static_cast<double>(n));
    return std::fabs(simulated - exact) <= k * se + 1e-12;
}

}  // namespace

TEST_CASE("sim: serial availability is the product of the parts", "[unit]") {
    const auto l = load(R"Y(
requests: 200000
components:
  a: {service: x, availability: 99%, latency: fixed(1ms), calls: [b]}
  b: {service: y, availability: 98%, latency: fixed(2ms), calls: [c]}
  c: {service: z, availability: 95%, latency: "lognormal(median=3ms, p99=9ms)", failures: phantom, timeout: 1s}
flow: [a]
)Y");
    const double exact = 0.99 * 0.98 * 0.95;
    const auto& s = l.variants[0].scenario;
    const auto r = run(s, {2, {}});
    CHECK(models::sim::engine_for(s) == "fast");
    const double sim = static_cast<double>(r.successes) / static_cast<double>(r.requests);
    CHECK(close(sim, exact, r.requests));
    const auto j = report_json(s, r);
    CHECK(j["availability"]["analytic"]["percent"].get<double>() == Approx(exact * 100).epsilon(1e-9));
    CHECK(j["availability"]["analytic"]["within_ci"].get<bool>());
    // c's failures are phantoms: the caller waits for the client's timeout.
    CHECK(r.components[2].root_causes[models::sim::cause_phantom] > 0);
    CHECK(r.components[2].root_causes[models::sim::cause_error] == 0);
}

TEST_CASE("sim: k independent attempts give 1-(1-a)^k for every retry policy", "[unit]") {
    const std::string head = R"Y(
requests: 200000
components:
  flaky:
    service: x
    availability: 90%
    latency: fixed(1ms)
    retry: )Y";
    const double exact = 1 - std::pow(0.1, 3);
    for (const std::string policy :
         {"{policy: client, max_attempts: 3, base: 0ms, cap: 0ms, jitter: full}",
          "{policy: sdk-standard, max_attempts: 3, base: 10ms}",
          "[{ErrorEquals: [States.ALL], IntervalSeconds: 1, MaxAttempts: 2, JitterStrategy: FULL}]"}) {
        CAPTURE(policy);
        const auto l = load(head + policy + "\nflow: [flaky]\n");
        CHECK(close(availability(l), exact, 200000));
        CHECK(models::sim::analytic_flow_availability(l.variants[0].scenario).value.value() ==
              Approx(exact).epsilon(1e-12));
    }
    // A retrier that only matches timeouts does not retry errors.
    const auto l = load(head + "[{ErrorEquals: [States.Timeout], MaxAttempts: 5}]\nflow: [flaky]\n");
    CHECK(close(availability(l), 0.9, 200000));
}

TEST_CASE("sim: the SDK retry quota stops retries in an outage", "[unit]") {
    // 100% failure: each call makes 1 attempt + up to 2 retries while the 500-token bucket
    // lasts (5 per retry, no refunds): 100 retries per chunk, then single attempts only.
    const auto l = load(R"Y(
requests: 1000
components:
  down: {service: x, availability: 0.0001%, latency: fixed(1ms), retry: sdk-standard}
flow: [down]
)Y");
    const auto r = run(l.variants[0].scenario, {1, {}});
    CHECK(r.components[0].attempts == 1000 + 100);
}

TEST_CASE("sim: a saturated dependency queues as M/M/c (Erlang C)", "[unit]") {
    // c = 4 servers, exponential service with mean 10 ms, Poisson arrivals at 320/s:
    // offered load 3.2, utilisation 0.8.
    const auto l = load(R"Y(
requests: 300000
arrivals: {rate: 320, poisson: true}
components:
  db:
    service: x
    availability: 100%
    latency: exponential(mean=10ms)
    capacity: {concurrency: 4}
flow: [db]
)Y");
    const auto& s = l.variants[0].scenario;
    CHECK(models::sim::engine_for(s) == "events");
    const auto r = run(s, {2, {}});
    const auto& k = r.components[0];
    const double sim_wait_ms = static_cast<double>(k.queue_wait_us) / 1000.0 / static_cast<double>(k.admitted);
    const double exact_wait_ms = models::sim::mm_c_mean_wait(4, 320, 100) * 1000;
    CHECK(exact_wait_ms == Approx(0.5964 / 0.08).epsilon(1e-3));  // C(4, 3.2) = 0.5964
    CHECK(std::fabs(sim_wait_ms - exact_wait_ms) < 0.08 * exact_wait_ms);
    const double waited = static_cast<double>(k.queued) / static_cast<double>(k.admitted);
    CHECK(std::fabs(waited - models::sim::erlang_c(4, 3.2)) < 0.02);
    const auto j = report_json(s, r);
    CHECK(j["components"][0]["queue"].contains("erlang_c"));
    CHECK(models::sim::erlang_c(2, 1.0) == Approx(1.0 / 3));
}

TEST_CASE("sim: a retried non-idempotent write counts duplicates", "[unit]") {
    const std::string yaml = R"Y(
requests: 100000
components:
  pay:
    service: x
    availability: 99%
    failures: phantom-after
    latency: fixed(5ms)
    timeout: 1s
    writes: true
    idempotent: IDEMPOTENT
    retry: {policy: client, max_attempts: 3, base: 10ms}
flow: [pay]
)Y";
    auto with = [&](const char* idem) {
        std::string y = yaml;
        y.replace(y.find("IDEMPOTENT"), 10, idem);
        const auto l = load(y);
        return run(l.variants[0].scenario, {2, {}});
    };
    const auto unsafe = with("false");
    // Each lost answer after the write took effect is retried: about 1% of requests.
    CHECK(unsafe.components[0].duplicates > 700);
    CHECK(unsafe.components[0].duplicates < 1300);
    CHECK(with("true").components[0].duplicates == 0);
}

TEST_CASE("sim: identical reports at 1, 2 and 3 threads", "[unit]") {
    const auto fast = load(R"Y(
requests: 300000
seed: 9
components:
  api: {service: api_gateway, latency: "lognormal(median=5ms, p99=20ms)", calls: [fn],
        retry: {policy: client, max_attempts: 3, base: 50ms, jitter: decorrelated}}
  fn: {service: lambda, runtime: nodejs20.x, latency: "lognormal(median=20ms, p99=80ms)",
       cold_start_share: 0.01, calls: [db, {parallel: [cache, [a, b]]}]}
  db: {service: dynamodb, availability: 99%, failures: {error: 0.5, phantom_after: 0.5},
       latency: "lognormal(median=8ms, p99=200ms)", timeout: 150ms, writes: true, idempotent: false,
       retry: sdk-standard}
  cache: {service: elasticache, latency: fixed(1ms)}
  a: {service: s3, latency: "uniform(5ms, 30ms)"}
  b: {service: sqs, latency: "mixture(0.9: fixed(2ms), 0.1: lognormal(median=50ms, p99=900ms))", timeout: 500ms}
flow: [api]
)Y");
    const auto& s = fast.variants[0].scenario;
    const std::string one = report_json(s, run(s, {1, {}})).dump();
    CHECK(report_json(s, run(s, {2, {}})).dump() == one);
    CHECK(report_json(s, run(s, {3, {}})).dump() == one);

    const auto events = load(R"Y(
requests: 300000
seed: 5
arrivals: {rate: 400, poisson: true}
components:
  fn: {service: lambda, runtime: python3.12, latency: "lognormal(median=30ms, p99=150ms)",
       reserved_concurrency: 12, calls: [db]}
  db: {service: dynamodb, availability: 99.5%, latency: exponential(mean=8ms),
       capacity: {concurrency: 4, queue: 20}, timeout: 100ms, retry: sdk-standard}
flow: [{call: fn, retry: {policy: client, max_attempts: 2, base: 20ms}}]
)Y");
    const auto& e = events.variants[0].scenario;
    CHECK(models::sim::engine_for(e) == "events");
    const auto r1 = run(e, {1, {}});
    CHECK(r1.chunks == 3);
    CHECK(r1.components[0].cold_starts > 0);
    const std::string e1 = report_json(e, r1).dump();
    CHECK(report_json(e, run(e, {2, {}})).dump() == e1);
    CHECK(report_json(e, run(e, {3, {}})).dump() == e1);
}

TEST_CASE("sim: a function's CPU-bound latency follows the vCPUs its memory buys", "[unit]") {
    // 100 ms at 1,769 MB (one vCPU), 60% of it CPU work: at 885 MB (half a vCPU) the CPU part
    // doubles (140 ms in all); above one vCPU a single thread gains nothing, two threads do.
    auto median_ms = [](const std::string& extra) {
        const auto l = load(R"Y(
requests: 20000
components:
  fn:
    service: lambda
    availability: 100%
    runtime: nodejs20.x
    cold_start_share: 0
    latency: fixed(100ms)
    latency_at_memory_mb: 1769
    cpu_share: 0.6
)Y" + extra + "flow: [fn]\n");
        const auto& s = l.variants[0].scenario;
        const auto r = run(s, {1, {}});
        return r.latency.quantile_ms(0.5);
    };
    CHECK(median_ms("    memory_mb: 1769\n") == Approx(100).epsilon(0.01));
    CHECK(median_ms("    memory_mb: 885\n") == Approx(40 + 60 * 1769.0 / 885).epsilon(0.01));
    CHECK(median_ms("    memory_mb: 3538\n") == Approx(100).epsilon(0.01));
    CHECK(median_ms("    memory_mb: 3538\n    threads: 2\n") == Approx(70).epsilon(0.01));
    // Without cpu_share, memory does not change latency.
    const auto plain = load(R"Y(
requests: 1000
components:
  fn: {service: lambda, availability: 100%, runtime: nodejs20.x, cold_start_share: 0, latency: fixed(100ms), memory_mb: 128}
flow: [fn]
)Y");
    CHECK(run(plain.variants[0].scenario, {1, {}}).latency.quantile_ms(0.5) == Approx(100).epsilon(0.01));
    CHECK_THROWS(load("components:\n  fn: {service: lambda, runtime: nodejs20.x, cpu_share: 1.5, latency: fixed(1ms)}\nflow: [fn]\n"));
}

TEST_CASE("sim: a function's timeout starts after its Init phase", "[unit]") {
    // Every invocation cold, an Init of about 1.7 s (15 MB of Node dependencies), a 1 s
    // timeout and 500 ms of work: Lambda's timeout covers the invocation, not the Init phase.
    const auto l = load(R"Y(
requests: 2000
components:
  fn:
    service: lambda
    availability: 100%
    runtime: nodejs20.x
    package_mb: 15
    cold_start_share: 1
    latency: fixed(500ms)
    timeout: 1s
flow: [fn]
)Y");
    const auto r = run(l.variants[0].scenario, {1, {}});
    CHECK(r.successes == r.requests);
    CHECK(r.latency.quantile_ms(0.5) > 1500);  // Init + 500 ms
}

TEST_CASE("sim: at max_environments an invocation waits for an environment, as the live pool makes it", "[unit]") {
    // 200 requests a second, each 20 ms of work, at most 2 environments: about 4 are busy at
    // once, so many wait; none is throttled, and the waits show in the latency and the report.
    auto l = load(R"Y(
requests: 4000
engine: events
arrivals: {rate: 200, poisson: true}
components:
  fn: {service: lambda, availability: 100%, runtime: nodejs20.x, latency: fixed(20ms)}
flow: [{call: fn, timeout: 60s}]
)Y");
    auto s = l.variants[0].scenario;
    s.components[0].function.max_environments = 2;
    const auto r = run(s, {1, {}});
    CHECK(r.successes == r.requests);
    const auto& k = r.components[0];
    CHECK(k.attempt_failures[models::sim::cause_throttle] == 0);
    CHECK(k.invocations == r.requests);
    CHECK(k.queued > 0);
    CHECK(k.queue_wait_us > 0);
    CHECK(r.latency.quantile_ms(0.99) > 40);
    const auto j = report_json(s, r);
    CHECK(j["components"][0]["waited_for_environment"]["invocations"].get<std::uint64_t>() == k.queued);
    // Without the cap nothing waits.
    s.components[0].function.max_environments = 1000000;
    const auto free = run(s, {1, {}});
    CHECK(free.components[0].queued == 0);
    CHECK(free.latency.quantile_ms(0.99) < 21);
}
