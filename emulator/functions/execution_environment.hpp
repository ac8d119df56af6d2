#pragma once
// One execution environment: one child process plus its own Runtime API listener on
// 127.0.0.1 (ephemeral port), driven through the phases of runtime_api::phase.
// Internal to emulator/functions; the pool is its only user.

#include <uv.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "emulator/functions/function_pool.hpp"
#include "emulator/proxy/proxy.hpp"
#include "emulator/http/server.hpp"
#include "emulator/runtime_api/runtime_api.hpp"

namespace coldbrew::functions {

class execution_environment {
public:
    // What an environment is started as. on_demand: for the cold start that asked for it.
    // provisioned: before any request; its first invocation is warm. standby: a spare process
    // started ahead (function_pool's standby environments), outside the model until the pool
    // takes it for a cold start with claim().
    enum class kind { on_demand, provisioned, standby };

    // `id` is the pool policy's environment id; a standby environment gets its own id from a
    // range the policy never hands out, and the policy's id when it is claimed.
    execution_environment(function_pool& pool, pool_context& ctx, const config::function& fn,
                          std::uint64_t id, kind k);
    ~execution_environment();

    // Opens the Runtime API listener and starts the process. On failure the error is the
    // Lambda error type and message to answer the invocation with.
    bool start(std::string& error_type, std::string& error_message);

    // A cold start begins now: its first invocation is delivered once the modeled Init
    // Duration (`modeled_init_ms`, waited on the scheduler from now) has passed *and* the
    // runtime has finished its local init (its first /next). The local init runs inside the
    // modeled wait rather than before it; when it takes longer, the excess is this machine's,
    // and is reported as the cold start's init overrun (cold_start_facts).
    void begin_cold_start(double modeled_init_ms);
    // Takes a standby environment for the policy's environment `id`; call begin_cold_start()
    // next.
    void claim(std::uint64_t id);
    bool standby() const noexcept { return kind_ == kind::standby; }
    // Its process tree's memory now, as REPORT's Max Memory Used reads it (MB): for the memory
    // budget, when a standby or provisioned environment is ready before it has served.
    int read_memory_mb();
    // The runtime has called /next once: its local init (runtime start and the handler's
    // static code) is done.
    bool local_init_done() const noexcept { return local_ready_; }

    // Gives this environment its next invocation: delivered now if the runtime is waiting on
    // /next, otherwise when it calls /next (after init, or after its previous answer).
    void assign(invocation inv, std::string request_id);

    runtime_api::phase phase() const noexcept { return phase_; }
    bool alive() const noexcept { return alive_; }
    bool assigned() const noexcept { return current_.has_value(); }
    std::uint64_t id() const noexcept { return id_; }
    bool provisioned() const noexcept { return kind_ == kind::provisioned; }
    int pid() const noexcept { return process_ ? process_->pid() : 0; }
    // Ends the process group; `reason` ("keep-alive", "shutdown", …) is what the pool logs.
    void kill(std::string reason);
    const std::string& end_reason() const noexcept { return end_reason_; }

private:
    void on_runtime_call(http::request req, http::responder respond);
    void deliver();
    void finish(outcome kind, std::string payload, std::string error_type, std::string status);
    void fail_and_reset(std::string error_type, std::string body, std::string status);
    void on_process_exit(const supervisor::exit_status& st);
    // Delivers the first invocation once both the modeled Init Duration and the local init
    // are done; records the overrun when the local init finished last.
    void try_open_init_gate();
    // The invocation's deadline, `modeled_ms` from now.
    void start_timer(double modeled_ms);
    double function_timeout_ms() const;  // as modeled ms
    void stop_timer();
    // Every line of this environment's log goes through here: to the sink, and into the
    // current invocation's capture when it asked for its log (X-Amz-Log-Type: Tail).
    void log(std::string_view line);
    void limit_cpu();
    // Modeled microseconds from now until `bytes` of a payload have crossed this
    // environment's network: the event into it, or its response out of it (a streamed
    // response is paced as Lambda paces streams). 0 when the function has no modeled rate.
    std::int64_t event_wire_us(std::size_t bytes);
    std::int64_t response_wire_us(std::size_t bytes, bool streamed);
    // Runs `then` after `wait_us` (modeled) on payload_timer_, or at once when it is 0.
    void after_wire(std::int64_t wait_us, std::function<void()> then);
    // Starts the network.shaping phase of `trace` for a payload held `wait_us` (modeled).
    void begin_shaping(telemetry::request_trace& trace, std::int64_t wait_us, std::size_t bytes,
                       std::string_view direction) const;
    void detach_dependencies();
    double ms_since(std::chrono::steady_clock::time_point t) const;
    // Modeled ms from the cold start's request (or the spawn) to now: what a failed init
    // made its caller wait.
    double waited_init_ms() const;

    function_pool& pool_;
    pool_context& ctx_;
    const config::function& fn_;
    std::uint64_t id_;
    std::uint64_t group_id_;  // the id it was started with: names its cgroups for its life
    kind kind_;
    std::optional<double> modeled_init_ms_;  // set by begin_cold_start
    std::string cgroup_name_;
    std::unique_ptr<http::server> runtime_api_;
    std::unique_ptr<supervisor::process> process_;
    sched::timer_ptr timer_;          // the invocation's deadline
    sched::timer_ptr init_timer_;     // the modeled Init Duration, from begin_cold_start
    sched::timer_ptr kill_timer_;     // invocation::kill_after_ms
    sched::timer_ptr payload_timer_;  // a payload on the (modeled) wire
    // This environment's network, shared by its dependency connections and its payloads;
    // null when the function has no modeled bandwidth. env_key_: its key in the proxies.
    std::shared_ptr<proxy::environment_link> link_;
    std::uint64_t env_key_ = 0;
    bool init_gate_open_ = false;  // the first invocation may be delivered
    bool local_ready_ = false;     // the runtime reached /next
    bool modeled_done_ = false;    // the modeled Init Duration has been waited
    std::string end_reason_;
    bool capturing_ = false;
    std::string captured_;

    runtime_api::phase phase_ = runtime_api::phase::initializing;
    bool alive_ = false;
    bool cold_ = true;  // the next delivered invocation is this environment's first
    std::optional<invocation> current_;
    std::string current_id_;
    bool delivered_ = false;
    http::responder held_next_;
    std::chrono::steady_clock::time_point spawned_at_, delivered_at_;
    // The runtime's CPU time at delivery, ns, when the invocation is recorded (--record) and
    // the kernel reports it.
    std::optional<std::uint64_t> cpu_at_delivery_ns_;
    std::chrono::steady_clock::time_point assigned_at_;  // the current invocation's placement
    // The cold start's moments on the real clock: asked for (begin_cold_start), the local
    // init over.
    std::chrono::steady_clock::time_point requested_at_, local_ready_at_;
    // Real ms of local init after the request (0 when it was done before) and beyond the
    // modeled wait (0 when the model's wait was the longer one).
    double local_init_after_request_ms_ = 0;
    double init_overrun_ms_ = 0;
    // The Init Duration INIT_REPORT stated for a failed init, so that REPORT states the same.
    std::optional<double> failed_init_ms_;
    int peak_memory_mb_ = 0;
    supervisor::peak_memory_reader memory_reader_;  // keeps the process's /proc files open
};

}  // namespace coldbrew::functions
