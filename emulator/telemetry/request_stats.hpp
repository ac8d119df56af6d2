#pragma once
// What every client request of the front ends came to, kept in one place: counts by
// (front, route, status), a latency histogram per (front, route), totals per front for the
// run summary, and the Init Duration of cold starts per function. GET /metrics renders it
// (metrics.hpp) and `coldbrew up` prints it when it stops (run_summary.hpp).
//
// Pure: no clock is read here; times arrive in the records, as milliseconds on the caller's
// monotonic clock (the app passes milliseconds since it was built). Single-threaded (the
// loop's thread).

#include "models/sim/histogram.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace coldbrew::telemetry {

// A latency distribution kept two ways: counts in fixed buckets, cumulative as Prometheus's
// histogram `le` buckets count them (exact, mergeable across scrapes), and the simulator's
// log-linear histogram (models/sim/histogram.hpp) for percentiles within 0.4% of the exact
// order statistic, and the exact minimum and maximum.
class latency_histogram {
  public:
    // Upper bounds in ms. 1–5 ms: a warm invocation on loopback; 100 ms–10 s: cold starts
    // (Init Duration of the profiles' runtimes); 30 s: API Gateway's integration timeout
    // (REST 29 s, HTTP API 30 s; spec §4.5), so an answer cut off by it falls in the last
    // finite bucket and only slower ones (a delay fault, a slow answer) in +Inf.
    static constexpr std::array<double, 14> bounds_ms{1,   2.5, 5,    10,   25,   50,    100,
                                                      250, 500, 1000, 2500, 5000, 10000, 30000};

    // One sample in ms; a negative or NaN value counts as 0.
    void record(double ms) noexcept;
    void merge(const latency_histogram& other) noexcept;

    std::uint64_t count() const noexcept { return quantiles_.count(); }
    double sum_ms() const noexcept { return sum_ms_; } // exact sum (for _sum)
    double mean_ms() const noexcept;
    double min_ms() const noexcept { return quantiles_.min_ms(); } // 0 when empty
    double max_ms() const noexcept { return quantiles_.max_ms(); }
    // Nearest-rank quantile (q in [0, 1]) in ms, within 0.4%; 0 when empty.
    double quantile_ms(double q) const noexcept { return quantiles_.quantile_ms(q); }
    // Samples <= bounds_ms[i] (i < bounds_ms.size()); samples above the last bound are only
    // in count().
    std::uint64_t cumulative_count(std::size_t i) const noexcept;

  private:
    std::array<std::uint64_t, bounds_ms.size()> in_bucket_{}; // (bounds[i-1], bounds[i]]
    double sum_ms_ = 0;
    models::sim::histogram quantiles_;
};

// How a request ended. The first four are architecture principle 6's outcomes, exactly as
// the app counts them (admin::request_outcomes); client_gone is a served request whose client
// never got the answer: it left, or its connection closed, before one was sent.
enum class request_end { served, injected_fault, handler_error, emulator_error, client_gone };
inline constexpr std::array<request_end, 5> all_request_ends{
    request_end::served, request_end::injected_fault, request_end::handler_error,
    request_end::emulator_error, request_end::client_gone};
// "served", "injected_fault", "handler_error", "emulator_error", "client_gone".
std::string_view to_string(request_end e) noexcept;

// One finished client request.
struct request_record {
    std::string front; // "gateway" | "invoke"
    // The route key as fault rules name it: "GET /hello", "$default", "Invoke Hello". Bounded
    // by the stack: a request that matched nothing has a fixed placeholder ("(no route)",
    // "(no function)", "(malformed)"), never the client's own path.
    std::string route;
    std::string function; // the function's logical id; "" when none was reached
    std::string method;
    int status = 0; // the status sent; 0 when reset or never answered
    request_end end = request_end::served;
    std::string fault_kind;  // the injected fault's kind; "" when none
    bool cold_start = false; // the answer came from an invocation that started an environment
    double start_ms = 0;     // receipt (the request read in full), caller's monotonic clock
    // From receipt to the last byte of the answer handed to the socket, or to the reset or
    // close that ended the exchange. Real time, not modeled.
    double latency_ms = 0;
};

class request_stats {
  public:
    using route_key = std::pair<std::string, std::string>; // (front, route)

    struct route_stats {
        std::string function; // the route's function ("" for placeholders)
        std::map<int, std::uint64_t> by_status;
        latency_histogram latency;
    };

    struct totals {
        std::uint64_t requests = 0;
        std::map<int, std::uint64_t> by_status;
        std::map<request_end, std::uint64_t> by_end;
        std::map<std::string, std::uint64_t> faults_by_kind; // requests an injected fault hit
        std::uint64_t cold_starts = 0;
        latency_histogram latency;
    };

    void record(const request_record& r);
    // A cold start's Init Duration in ms as the REPORT line states it (the model's draw; what
    // was waited for an init that failed), from every invocation, a client's or not.
    void record_init(std::string_view function, double init_duration_ms);

    // Forgets every request and every Init Duration (POST /counters/reset, POST /reset), as
    // the pools' cold-start counters are zeroed with them.
    void reset();

    const std::map<route_key, route_stats>& routes() const noexcept { return routes_; }
    const std::map<std::string, totals>& fronts() const noexcept { return fronts_; }
    const totals& all() const noexcept { return all_; }
    const std::map<std::string, latency_histogram, std::less<>>& init_durations() const noexcept {
        return init_;
    }

    // The first receipt and the last end recorded (caller's clock, ms); nullopt when empty.
    std::optional<double> first_start_ms() const noexcept { return first_start_ms_; }
    std::optional<double> last_end_ms() const noexcept { return last_end_ms_; }
    // Requests per second over [first receipt, last end]; 0 with fewer than two requests or
    // a zero span.
    double mean_rps() const noexcept;

  private:
    std::map<route_key, route_stats> routes_;
    std::map<std::string, totals> fronts_;
    totals all_;
    std::map<std::string, latency_histogram, std::less<>> init_;
    std::optional<double> first_start_ms_, last_end_ms_;
};

} // namespace coldbrew::telemetry
