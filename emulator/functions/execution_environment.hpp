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
#include "emulator/http/server.hpp"
#include "emulator/runtime_api/runtime_api.hpp"

namespace coldbrew::functions {

class execution_environment {
public:
    execution_environment(function_pool& pool, pool_context& ctx, const config::function& fn,
                          int index);
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
    bool idle() const noexcept { return alive_ && phase_ == runtime_api::phase::waiting && !current_; }
    bool finishing() const noexcept {
        return alive_ && phase_ == runtime_api::phase::finishing && !current_;
    }
    std::chrono::steady_clock::time_point last_used() const noexcept { return last_used_; }
    int pid() const noexcept { return process_ ? process_->pid() : 0; }
    void kill();

private:
    void on_runtime_call(http::request req, http::responder respond);
    void deliver();
    void finish(outcome kind, std::string payload, std::string error_type, std::string status);
    void fail_and_reset(std::string error_type, std::string body, std::string status);
    void on_process_exit(const supervisor::exit_status& st);
    void start_timer(std::chrono::milliseconds after);
    void stop_timer();
    double ms_since(std::chrono::steady_clock::time_point t) const;

    function_pool& pool_;
    pool_context& ctx_;
    const config::function& fn_;
    int index_;
    std::unique_ptr<http::server> runtime_api_;
    std::unique_ptr<supervisor::process> process_;
    uv_timer_t* timer_ = nullptr;

    runtime_api::phase phase_ = runtime_api::phase::initializing;
    bool alive_ = false;
    bool cold_ = true;  // the next delivered invocation is this environment's first
    std::optional<invocation> current_;
    std::string current_id_;
    bool delivered_ = false;
    http::responder held_next_;
    std::chrono::steady_clock::time_point spawned_at_, delivered_at_, last_used_;
    std::optional<double> init_duration_ms_;
    int peak_memory_mb_ = 0;
};

}  // namespace coldbrew::functions
