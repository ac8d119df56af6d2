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
    // `id` is the pool policy's environment id. A provisioned environment's first invocation
    // is not a cold start. `modeled_init_ms` (cold starts) is waited on the scheduler after
    // the runtime's own init and before the first invocation is delivered.
    execution_environment(function_pool& pool, pool_context& ctx, const config::function& fn,
                          std::uint64_t id, bool provisioned, std::optional<double> modeled_init_ms);
    ~execution_environment();

    // Opens the Runtime API listener and starts the process. On failure the error is the
    // Lambda error type and message to answer the invocation with.
    bool start(std::string& error_type, std::string& error_message);

    // Gives this environment its next invocation: delivered now if the runtime is waiting on
    // /next, otherwise when it calls /next (after init, or after its previous answer).
    void assign(invocation inv, std::string request_id);

    runtime_api::phase phase() const noexcept { return phase_; }
    bool alive() const noexcept { return alive_; }
    bool assigned() const noexcept { return current_.has_value(); }
    std::uint64_t id() const noexcept { return id_; }
    bool provisioned() const noexcept { return provisioned_; }
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
    // The invocation's deadline, `modeled_ms` from now.
    void start_timer(double modeled_ms);
    double function_timeout_ms() const;  // as modeled ms
    void stop_timer();
    void open_init_gate();
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

    function_pool& pool_;
    pool_context& ctx_;
    const config::function& fn_;
    std::uint64_t id_;
    bool provisioned_;
    std::optional<double> modeled_init_ms_;
    std::string cgroup_name_;
    std::unique_ptr<http::server> runtime_api_;
    std::unique_ptr<supervisor::process> process_;
    sched::timer_ptr timer_;          // the invocation's deadline
    sched::timer_ptr init_timer_;     // the modeled Init Duration
    sched::timer_ptr kill_timer_;     // invocation::kill_after_ms
    sched::timer_ptr payload_timer_;  // a payload on the (modeled) wire
    // This environment's network, shared by its dependency connections and its payloads;
    // null when the function has no modeled bandwidth. env_key_: its key in the proxies.
    std::shared_ptr<proxy::environment_link> link_;
    std::uint64_t env_key_ = 0;
    bool init_gate_open_ = false;       // the modeled init has been waited
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
    std::optional<double> init_duration_ms_;
    int peak_memory_mb_ = 0;
};

}  // namespace coldbrew::functions
