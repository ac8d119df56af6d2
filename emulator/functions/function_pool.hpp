#pragma once
// A function's execution environments, acting on models::pool_policy: the policy decides
// (warm or cold, which environment, throttle, evict, provision) in modeled time; this class
// starts and kills the processes, waits the modeled Init Duration, and answers invocations.
// One environment serves one invocation at a time (Lambda semantics).
//
// Every modeled wait (keep-alive, maximum lifetime, Init Duration, payload wire time) and the
// policy's clock are the scheduler's (pool_context::scheduler): run at a scale of 0.01, a
// keep-alive of 6 min evicts after 3.6 s and a modeled 800 ms init waits 8 ms.
//
// An environment is idle again as soon as it answers; if the next invocation arrives before
// its runtime is back on /next (on loopback a client can beat it), it is delivered when /next
// comes, as Lambda would reuse that environment.

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/functions/launcher.hpp"
#include "emulator/functions/memory_budget.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "emulator/supervisor/cgroup.hpp"
#include "emulator/supervisor/supervisor.hpp"
#include "emulator/telemetry/log_lines.hpp"
#include "emulator/telemetry/decision_log.hpp"
#include "emulator/telemetry/run_recorder.hpp"
#include "emulator/telemetry/trace.hpp"
#include "models/bandwidth/bandwidth.hpp"
#include "models/pool/pool_policy.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::proxy {
class proxy_set;
}

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
                                  // ReservedFunctionConcurrentInvocationLimitExceeded,
                                  // FunctionInvocationRateLimitExceeded (scaling rate)
    std::string message;          // human text for throttled / too_large / unavailable
    bool cold_start = false;
    double duration_ms = 0;
    // Cold starts only, in modeled ms (not scaled): the Init Duration the REPORT line states
    // (the model's draw for a completed init; what was waited for one that failed), and the
    // model's draw itself.
    std::optional<double> init_duration_ms;
    std::optional<double> modeled_init_ms;
    // A completed cold start's real local init after it was asked for (0 when a standby
    // environment had finished its init already), and by how many real ms that local init
    // outlasted the modeled wait (absent when it did not: the model set the latency).
    std::optional<double> local_init_ms;
    std::optional<double> init_overrun_ms;
    // With invocation::capture_log: this invocation's log, START to REPORT, one line each
    // ("\n"-terminated), as X-Amz-Log-Type: Tail returns it.
    std::string log;
};

struct invocation {
    std::string payload;         // the event, JSON text
    // Lambda's request id; drawn by the pool when empty. An asynchronous event keeps one id
    // across its retries, as on Lambda.
    std::string request_id;
    bool capture_log = false;    // collect the log lines into invocation_result::log
    std::string trace_id;        // X-Ray trace header; generated when empty
    std::string client_context;  // JSON text (already base64-decoded); may be empty
    // An injected Runtime.ExitError: the environment's process group is killed this many
    // modeled milliseconds after the event is delivered, unless the handler answered first.
    std::optional<double> kill_after_ms;
    std::function<void(invocation_result)> on_done;  // called exactly once, on the loop
    // The front end's request trace (null: not traced): the pool and the environment mark the
    // phases they run (pool.queue_wait, lambda.init, network.shaping, lambda.invoke).
    std::shared_ptr<telemetry::request_trace> trace;
    // The run record (`up --record`): the fault decision this invocation carries out, set by
    // the executor; and the invocation's own id in the record, set by the pool.
    std::optional<std::uint64_t> recorded_request;
    std::optional<std::uint64_t> recorded_invocation;
};

// What every pool shares, built once by the caller.
struct pool_context {
    uv_loop_t* loop = nullptr;
    const coldbrew::clock* clock = nullptr;
    // Required: every modeled wait and the modeled clock; outlives the pools.
    sched::scheduler* scheduler = nullptr;
    const models::random_source* rng = nullptr;
    supervisor::supervisor* supervisor = nullptr;
    telemetry::log_sink* logs = nullptr;
    const config::settings* settings = nullptr;
    telemetry::decision_log* decisions = nullptr;  // may be null
    // Null unless the run is recorded: arrivals, answers, exits, expiry ticks, provisioning and
    // the stop, each with the modeled time the policy was handed.
    telemetry::run_recorder* recorder = nullptr;
    // The Invoke API's address, handed to handlers as AWS_ENDPOINT_URL_LAMBDA so an AWS SDK
    // inside a function calls coldbrew; empty when it does not listen.
    std::string invoke_endpoint;
    // The Step Functions API's address, as AWS_ENDPOINT_URL_SFN; empty when it does not listen.
    std::string sfn_endpoint;
    supervisor::cpu_limiter* cpu = nullptr;        // null when CPU share is not enforced
    supervisor::memory_limiter* memory = nullptr;  // null when MemorySize is not enforced
    // coldbrew.yaml memory_budget_mb for all pools' environments; null when there is none.
    memory_budget* budget = nullptr;
    std::filesystem::path runtimes_dir;  // holds node/ and python/ shims
    // Variables handed through from coldbrew's own environment (PATH, HOME, credentials …).
    std::vector<std::pair<std::string, std::string>> host_env;
    // The dependency proxies (null: none): each environment gets its own listeners and the
    // variables naming them. Environments are keyed by a number unique for the app's life.
    proxy::proxy_set* proxies = nullptr;
    std::uint64_t environments_started = 0;
    // The profile's bandwidth table (streamed responses); null: no streaming pacing.
    const models::bandwidth::bandwidth_table* bandwidth = nullptr;
    // Told every invocation an execution environment answered, before its caller is (a cold
    // start's result carries its Init Duration); may be empty. For telemetry.
    std::function<void(const config::function&, const invocation_result&)> on_answered;
};

class execution_environment;

struct function_model;

struct pool_stats {
    std::uint64_t invocations = 0;
    std::uint64_t cold_starts = 0;       // invocations that waited for a new environment
    std::uint64_t throttles = 0;
    std::uint64_t waits = 0;             // invocations queued at the local max_environments
    std::uint64_t function_errors = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t evictions = 0;         // idle keep-alive or maximum lifetime reached, or
                                         // evicted to keep within memory_budget_mb
    std::uint64_t budget_evictions = 0;  // for memory_budget_mb: those of `evictions`, and
                                         // standby environments ended (not in `evictions`)
    std::uint64_t provisioned = 0;       // provisioned environments started (incl. replacements)
    // Cold starts whose local init outlasted the modeled Init Duration, and the real ms they
    // outlasted it by in all: the latency this machine, not the model, set.
    std::uint64_t init_overruns = 0;
    double init_overrun_ms = 0;
    double init_overrun_max_ms = 0;
    std::uint64_t standby_taken = 0;     // cold starts served by a standby environment
    // Environments retired because the function's code changed (retire_code): idle, standby
    // and provisioned ones at once, busy ones after their invocation.
    std::uint64_t code_reloads = 0;
    std::size_t environments = 0;        // alive now
    std::size_t busy = 0;                // of those, serving (or initializing for) an invocation
    // Standby environments now: started and not yet taken (ready: their local init is done).
    std::size_t standby = 0, standby_ready = 0;
    std::size_t standby_target = 0;      // how many the pool keeps (follows the peak with auto)
    // The most cold starts one burst (from an idle pool back to an idle pool) had, and how
    // many of them overran: what a standby setting would have had to cover.
    std::uint64_t burst_cold_starts_max = 0;
    std::uint64_t burst_overruns_max = 0;
};

// How many standby environments a pool keeps: a fixed count, or `auto` (the peak number of
// concurrently busy environments seen so far, at least `count`).
struct standby_setting {
    std::size_t count = 0;
    bool follow_peak = false;
};

class function_pool {
public:
    // `model` must outlive the pool. Throws std::invalid_argument when the limits are
    // inconsistent (build_models checks first).
    function_pool(const config::function& fn, const function_model& model,
                  models::account_concurrency& account, pool_context& ctx,
                  standby_setting standby = {});

    // Starts the provisioned environments. Called once the listeners are open, so they see
    // the same environment (AWS_ENDPOINT_URL_LAMBDA) as every later one.
    void start_provisioned();
    // Starts the standby environments (call once, with start_provisioned()).
    void start_standby();
    // Every standby environment the setting asks for has finished its local init (or the pool
    // gave up on them: one failed its init); true when there are none.
    bool standby_settled() const noexcept;
    ~function_pool();  // kills every environment
    function_pool(const function_pool&) = delete;
    function_pool& operator=(const function_pool&) = delete;

    void invoke(invocation inv);

    // The function's code changed on disk (`--watch`), as after a deploy: idle environments
    // are retired now (the policy discards them, reason "code-changed"); provisioned ones are
    // replaced by new provisioned ones, as publishing a new version behind the alias does;
    // standby environments are killed and new ones started; a busy environment finishes its
    // invocation on the old code, then retires. Later invocations get new environments, each
    // with its modeled cold start. Returns how many environments it retired or marked.
    std::size_t retire_code();

    // Invocations accepted and not yet answered.
    std::size_t in_flight() const noexcept { return in_flight_; }
    // Fails queued work with outcome::unavailable and kills every environment.
    void shutdown();

    const config::function& function() const noexcept { return fn_; }
    pool_stats stats() const;
    // Zeroes the counts (POST /counters/reset, POST /reset); what is alive stays counted.
    void reset_stats();

private:
    friend class execution_environment;
    struct waiting {
        invocation inv;
        std::string request_id;
        std::uint64_t request_index;
    };
    // Asks the policy where `inv` goes at `now` (modeled ms) and acts on it. Every callback
    // reads the clock once and hands that time to every policy call it makes, so the run
    // record's time for it is the time each call got.
    void place(invocation inv, std::string request_id, std::optional<std::uint64_t> index,
               double now);
    execution_environment* start_environment(std::uint64_t id, bool provisioned,
                                             std::string& error_type, std::string& error_message);
    // How the handler behaved, for the run record: modeled ms from the event's placement to
    // its delivery beyond the modeled Init Duration, and from delivery to the answer.
    struct answer_timing {
        std::optional<std::uint64_t> recorded_invocation;
        double delivery_lag_ms = 0;
        double duration_ms = 0;
        std::optional<double> cpu_ms;  // the runtime's CPU time in that span, modeled ms
    };
    // From an environment: its invocation was answered (it is idle now).
    void on_done(execution_environment& env, const invocation_result& r, const answer_timing& t);
    // From an environment that has just stated its Max Memory Used (after an invocation).
    void on_memory_reading(const execution_environment& env, int memory_mb);
    // memory_budget: whether environment `id` is idle and on-demand (or standby), and its
    // eviction.
    bool budget_evictable(std::uint64_t id) const;
    void evict_for_budget(std::uint64_t id);
    // From a provisioned environment whose runtime has finished its init.
    void on_provisioned_ready(execution_environment& env);
    // From a standby environment whose runtime has finished its init.
    void on_standby_ready(execution_environment& env);
    // A cold start for policy environment `id`: a standby environment claimed, or a new one.
    execution_environment* start_cold(std::uint64_t id, std::string& error_type,
                                      std::string& error_message);
    bool spawn_standby();
    void refill_standby();
    void record_overrun(const execution_environment& env, const invocation_result& r);
    std::size_t standby_target() const;
    // The pool has gone idle: a burst that overran is reported in one line.
    void end_burst();
    // From an environment: its process is gone. An invocation it had not started goes back
    // to placement.
    void on_exit(execution_environment& env, std::optional<invocation> undelivered,
                 std::string request_id, const std::string& reason);
    void act(const std::vector<models::pool_action>& actions);
    void retire(std::uint64_t id);
    void drain_waiting(double now);
    void arm_expiry(double now);
    double model_now_ms() const;
    // `dependencies`: the proxies' variables for this environment; they replace the
    // template's variables of the same name, the platform's reserved ones still win.
    std::vector<std::string> environment_for(
        int runtime_api_port, std::uint64_t index, bool provisioned,
        const std::vector<std::pair<std::string, std::string>>& dependencies) const;
    void schedule_collect();

    const config::function& fn_;
    const function_model& model_;
    pool_context& ctx_;
    std::unique_ptr<models::pool_policy> policy_;
    std::map<std::uint64_t, std::unique_ptr<execution_environment>> environments_;
    std::list<std::unique_ptr<execution_environment>> dead_;  // freed on the next loop turn
    // Standby environments, oldest first; not known to the policy until claimed.
    std::list<std::unique_ptr<execution_environment>> standby_;
    standby_setting standby_setting_;
    std::uint64_t next_standby_id_ = 0;
    bool standby_failed_ = false;     // one failed its init or died: no more are started
    bool standby_held_ = false;       // one was evicted for memory_budget_mb: refilled when one fits
    int standby_mb_ = 0;              // a standby environment's memory when ready (MB), for the budget
    std::size_t peak_busy_ = 0;
    struct burst {
        std::uint64_t cold_starts = 0, overruns = 0;
        double overrun_ms = 0, overrun_max_ms = 0;
        std::size_t standby_at_start = 0;  // standby environments when its first cold start came
    } burst_;
    std::deque<waiting> waiting_;
    // Policy ids of busy environments running code older than the files (retire_code): they
    // retire when their invocation is answered instead of becoming idle.
    std::set<std::uint64_t> stale_code_;
    // Freeing dead environments is real housekeeping on the next loop turn, not a modeled
    // wait, so it stays a plain libuv timer.
    uv_timer_t* reap_timer_ = nullptr;
    sched::timer_ptr expiry_timer_;      // the next keep-alive or maximum lifetime (modeled)
    double expiry_armed_for_ms_ = -1;    // the policy time expiry_timer_ waits for
    std::uint64_t next_request_index_ = 0;
    std::size_t in_flight_ = 0;
    bool shut_down_ = false;
    bool warned_wait_ = false;
    std::size_t provisioned_ready_ = 0;  // provisioned environments that finished init
    pool_stats stats_;
};

}  // namespace coldbrew::functions
