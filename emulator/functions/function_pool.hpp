#pragma once
// A function's execution environments: which one serves an invocation, when to start a new
// one, when to throttle. One environment serves one invocation at a time (Lambda semantics);
// concurrency means more environments, up to the function's cap, then a throttle.
//
// Placement (in this order): an idle environment, most recently used first; else one that has
// just answered and is about to call /next (on loopback a client's next request can beat the
// runtime's /next, and Lambda would have reused that environment); else a new environment
// (a cold start) while fewer than min(max_environments, ReservedConcurrentExecutions) exist;
// else a throttle, as Lambda's 429 TooManyRequestsException.

#include <uv.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/supervisor/supervisor.hpp"
#include "emulator/telemetry/log_lines.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::functions {

// Largest synchronous invocation payload: "Request must be smaller than 6291456 bytes for the
// InvokeFunction operation" (shared spec §1.2, §1.9).
inline constexpr std::size_t max_sync_request_bytes = 6291456;

enum class outcome {
    success,         // the runtime posted /response; payload is its body
    function_error,  // /error, init error, crash, timeout, oversize response: payload is the
                     // error JSON, error_type its type (X-Amz-Function-Error: Unhandled)
    throttled,       // TooManyRequestsException; throttle_reason says which limit
    too_large,       // request over max_sync_request_bytes (RequestEntityTooLargeException)
    unavailable,     // coldbrew is shutting down
};

struct invocation_result {
    outcome kind = outcome::success;
    std::string request_id;  // Lambda's awsRequestId for this invocation
    std::string payload;
    std::string error_type;
    std::string throttle_reason;  // ThrottleReason (spec §3.3, the Lambda service model in
                                  // @aws-sdk/client-lambda): ConcurrentInvocationLimitExceeded,
                                  // ReservedFunctionConcurrentInvocationLimitExceeded
    std::string message;          // human text for throttled / too_large / unavailable
    bool cold_start = false;
    double duration_ms = 0;
    std::optional<double> init_duration_ms;
};

struct invocation {
    std::string payload;         // the event, JSON text
    std::string trace_id;        // X-Ray trace header; generated when empty
    std::string client_context;  // JSON text (already base64-decoded); may be empty
    std::function<void(invocation_result)> on_done;  // called exactly once, on the loop
};

// What every pool shares, built once by the caller.
struct pool_context {
    uv_loop_t* loop = nullptr;
    const coldbrew::clock* clock = nullptr;
    const models::random_source* rng = nullptr;
    supervisor::supervisor* supervisor = nullptr;
    telemetry::log_sink* logs = nullptr;
    const config::settings* settings = nullptr;
    std::filesystem::path runtimes_dir;  // holds node/ and python/ shims
    // Variables handed through from coldbrew's own environment (PATH, HOME, credentials …).
    std::vector<std::pair<std::string, std::string>> host_env;
};

class execution_environment;

struct pool_stats {
    std::uint64_t invocations = 0;
    std::uint64_t cold_starts = 0;
    std::uint64_t throttles = 0;
    std::uint64_t function_errors = 0;
    std::uint64_t timeouts = 0;
    std::size_t environments = 0;  // alive now
};

class function_pool {
public:
    function_pool(const config::function& fn, pool_context& ctx);
    ~function_pool();  // kills every environment
    function_pool(const function_pool&) = delete;
    function_pool& operator=(const function_pool&) = delete;

    void invoke(invocation inv);

    // Invocations accepted and not yet answered.
    std::size_t in_flight() const noexcept { return in_flight_; }
    // Fails queued work with outcome::unavailable and kills every environment.
    void shutdown();

    const config::function& function() const noexcept { return fn_; }
    pool_stats stats() const;

private:
    friend class execution_environment;
    void place(invocation inv, std::string request_id);
    void on_exit(execution_environment& env, std::optional<invocation> undelivered,
                 std::string request_id);
    void on_done(const invocation_result& r);
    int capacity() const;
    std::vector<std::string> environment_for(int runtime_api_port, int index) const;
    void schedule_collect();

    const config::function& fn_;
    pool_context& ctx_;
    std::list<std::unique_ptr<execution_environment>> environments_;
    std::list<std::unique_ptr<execution_environment>> dead_;  // freed on the next loop turn
    uv_timer_t* reap_timer_ = nullptr;
    std::uint64_t next_request_index_ = 0;
    std::uint64_t next_environment_index_ = 0;
    std::size_t in_flight_ = 0;
    bool shut_down_ = false;
    pool_stats stats_;
};

// The command that starts a runtime: `bootstrap` for provided*, the node or python shim for
// managed runtimes. Throws nothing; returns an empty file when the runtime has no launcher.
supervisor::spawn_options launcher_for(const config::function& fn,
                                       const std::filesystem::path& runtimes_dir);

// Searches PATH for an executable; empty when not found.
std::string find_executable(const std::string& name, const std::string& path_env);

}  // namespace coldbrew::functions
