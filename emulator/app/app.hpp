#pragma once
// The running emulator: one function pool per function, the API Gateway front end wired to
// them, and graceful shutdown. Built by the CLI (`up`, `invoke`) or a test fixture, which own
// the loop, the clock, the random source and the log sink and pass them in.

#include <uv.h>

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <system_error>

#include "emulator/admin/admin_api.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/front/executor.hpp"
#include "emulator/front/gateway_front.hpp"
#include "emulator/front/invoke_front.hpp"
#include "emulator/front/sfn_front.hpp"
#include "emulator/front/states_task.hpp"
#include "emulator/schedules/schedules.hpp"
#include "emulator/states/service.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "emulator/functions/function_model.hpp"
#include "emulator/functions/function_pool.hpp"
#include "emulator/http/server.hpp"
#include "emulator/invoke/event_queue.hpp"
#include "emulator/invoke/invoke_api.hpp"
#include "emulator/proxy/proxy.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "emulator/supervisor/reaper.hpp"
#include "emulator/supervisor/supervisor.hpp"
#include "emulator/telemetry/request_stats.hpp"
#include "emulator/telemetry/run_recorder.hpp"
#include "emulator/telemetry/trace.hpp"

namespace coldbrew::app {

struct app_dependencies {
    uv_loop_t* loop = nullptr;
    const coldbrew::clock* clock = nullptr;
    const models::random_source* rng = nullptr;
    telemetry::log_sink* logs = nullptr;
    supervisor::reaper* reaper = nullptr;      // may be null
    functions::stack_models* models = nullptr;  // build_models(stack); required
    telemetry::decision_log* decisions = nullptr;  // may be null
    supervisor::cpu_limiter* cpu = nullptr;     // null: CPU share not enforced
    // The fault decision point (null: no faults, no admin API) and the rules coldbrew.yaml
    // configured, which the admin API's POST /reset restores.
    models::faults::decider* faults = nullptr;
    const models::faults::fault_registry* fault_registry = nullptr;
    std::vector<models::faults::rule> configured_rules;
    std::filesystem::path runtimes_dir;
    std::vector<std::pair<std::string, std::string>> host_env;
    // Where each front-end request's trace goes when it is answered (null: nothing is traced).
    telemetry::trace_sink* traces = nullptr;
    // Modeled time (required): every modeled wait and rate of the app goes through it.
    sched::scheduler* scheduler = nullptr;
    supervisor::memory_limiter* memory = nullptr;  // null: MemorySize not enforced
    // The keys of the stack's JWT authorizers (load_jwt_keys), by front::jwt_keys_name.
    front::jwt_key_sets jwt_keys = {};
    // Rebuilds a function that has a build (function::build) after its sources changed, and
    // calls `done(ok)` on the loop when finished; a failed build is logged by the builder and
    // keeps the old code running. Null: no builds (code_changed retires at once).
    std::function<void(const config::function&, std::function<void(bool ok)> done)> rebuild = {};
    // `up --record`: the run record every model-facing hook writes to (null: not recorded).
    // Must outlive the app.
    telemetry::run_recorder* recorder = nullptr;
};

// Loads the keys of every JWT authorizer of the stack (jwt::load_keys: files, URLs, or the
// issuer's discovery), before anything listens. Throws config::config_error.
front::jwt_key_sets load_jwt_keys(const config::stack& stack);

// Gives every API key without a value one drawn from `rng` (40 alphanumeric characters, as
// API Gateway generates them), keyed by the key's name: the same seed gives the same keys.
void draw_api_keys(config::stack& stack, const models::random_source& rng);

class app {
public:
    app(const config::stack& stack, app_dependencies deps);
    ~app();
    app(const app&) = delete;
    app& operator=(const app&) = delete;

    // Opens the gateway on settings.host:settings.gateway_port (0 picks a free port).
    std::error_code start_gateway();
    int gateway_port() const;
    // Opens the Lambda Invoke API on settings.host:settings.invoke_port (0 picks a free port).
    std::error_code start_invoke();
    int invoke_port() const;
    // Opens the admin API on settings.admin_host:settings.admin_port (0 picks a free port),
    // whatever settings.host is; it requires `Authorization: Bearer settings.admin_token`
    // when that is set (the CLI draws one when admin_host is not loopback).
    // Requires deps.faults.
    std::error_code start_admin();
    int admin_port() const;
    // Opens the Step Functions API on settings.host:settings.sfn_port (0 picks a free port)
    // when the stack has state machines (else does nothing), and starts firing the stack's
    // schedules. Call before start_provisioned, so every environment gets
    // AWS_ENDPOINT_URL_SFN.
    std::error_code start_sfn();
    int sfn_port() const;  // 0 when not listening
    // The stack's Step Functions service (every state machine parsed when the app was built:
    // a bad definition threw config::config_error there). Null when the stack has none.
    const states::service* step_functions() const noexcept { return sfn_.get(); }
    // The schedules' firings (statuses in template order); null when the stack has none.
    const schedules::schedule_runner* schedules() const noexcept { return schedules_.get(); }
    // Opens every dependency proxy's shared listener (coldbrew.yaml `dependencies:`); on an
    // error `failed` names the dependency. Call before start_provisioned, so provisioned
    // environments get their proxies too.
    std::error_code start_dependencies(std::string& failed);
    // The dependency proxies; null when the stack declares none.
    const proxy::proxy_set* dependencies() const noexcept { return proxies_.get(); }
    // Starts every function's provisioned and standby environments; call after the
    // listeners are open.
    void start_provisioned();
    // Every function's standby environments have finished their init (or given up).
    bool standby_settled() const;
    // The stack is ready for clients (`up` prints its listening lines): GET /ready answers 200
    // with `addresses` (a JSON object: {"gateway":"http://…",…}) from then until the
    // shutdown starts.
    void mark_ready(nlohmann::json addresses);
    bool ready() const noexcept { return ready_ && !shutting_down_; }

    // `file` under the code, build inputs or a layer of `function` changed (`--watch`): says
    // so in one log line, rebuilds first when the function has a build (deps.rebuild), then
    // retires its environments (function_pool::retire_code). Unknown name: false.
    bool code_changed(const std::string& function, const std::filesystem::path& file);

    // Invokes a function directly (the path `coldbrew invoke` takes). Unknown name: false.
    bool invoke(const std::string& function, functions::invocation inv);

    // Stops accepting requests, lets in-flight invocations finish for up to drain_ms (real
    // time), then kills every execution environment and calls done. A second call kills at
    // once.
    void shutdown(std::uint64_t drain_ms, std::function<void()> done);

    // Invocations handed to the pools and not yet answered (clients', async events', direct).
    std::size_t in_flight() const noexcept { return in_flight_; }

    // Counters per function, in template order of names.
    std::vector<std::pair<std::string, functions::pool_stats>> stats() const;

    // Asynchronous invocations accepted, by function.
    std::vector<std::pair<std::string, invoke::event_queue::stats>> async_stats() const;

    // How requests ended, per front end.
    const admin::request_outcomes& gateway_outcomes() const noexcept;
    const admin::request_outcomes& invoke_outcomes() const noexcept;
    // A state machine's Task invocations (the executor's "states" front).
    const admin::request_outcomes& states_outcomes() const noexcept;
    // Every gateway and Invoke API request's record (status, latency, outcome, cold start),
    // and the Init Duration of every cold start: GET /metrics and the run summary.
    const telemetry::request_stats& requests() const noexcept { return *request_stats_; }
    // When the counters were last reset (POST /counters/reset, POST /reset), in ms since the
    // app was built; nullopt when never.
    std::optional<double> counters_reset_at_ms() const noexcept { return reset_at_ms_; }

private:
    class pool_target;
    class sfn_starter;
    class execution_tracer;
    void execution_started(const states::execution& e);
    void execution_ended(const states::execution& e);
    // `line_and_values_limit`: http::server_options' (0: none).
    std::unique_ptr<http::server> make_server(std::size_t body_limit,
                                              std::function<http::response(http::parse_failure)> bad,
                                              http::server::handler handle,
                                              std::size_t line_and_values_limit = 0);
    // The access rules of a control-plane listener bound to `host` (emulator/http/access.hpp).
    http::access_policy access_for(const std::string& host, const http::server& s,
                                   std::string token) const;
    front::function_target* find_target(std::string_view name, bool deployed_names);
    // Every invocation reaches a pool through here, so in_flight() is exact and the drain
    // learns the moment it reaches zero.
    void invoke_pool(functions::function_pool& pool, functions::invocation inv);
    void invocation_ended();
    void finish_shutdown();
    // Abandons every request a fault holds and closes every front end's connections.
    void close_front_ends();
    void reset_counters();

    const config::stack& stack_;
    app_dependencies deps_;
    supervisor::supervisor supervisor_;
    functions::pool_context pool_ctx_;
    // coldbrew.yaml memory_budget_mb (null: none); before the pools, which leave it as they go.
    std::unique_ptr<functions::memory_budget> budget_;
    // Before the pools: environments detach from their proxies as the pools go.
    std::unique_ptr<proxy::proxy_set> proxies_;
    std::map<std::string, std::unique_ptr<functions::function_pool>, std::less<>> pools_;
    std::map<std::string, std::unique_ptr<pool_target>, std::less<>> targets_;
    // Shared with each request's record, which may outlive the app and then records nothing.
    std::shared_ptr<telemetry::request_stats> request_stats_ =
        std::make_shared<telemetry::request_stats>();
    std::unique_ptr<front::executor> executor_;
    std::unique_ptr<front::gateway_front> gateway_;
    std::unique_ptr<front::invoke_front> invoke_front_;
    std::unique_ptr<http::server> gateway_server_;
    std::unique_ptr<http::server> invoke_server_;
    std::unique_ptr<http::server> admin_server_;
    std::unique_ptr<invoke::event_queue> events_;
    // Step Functions, after the executor and the event queue they use (and destroyed first).
    std::unique_ptr<execution_tracer> tracer_;
    std::unique_ptr<front::states_task_runner> tasks_;
    std::unique_ptr<states::service> sfn_;
    std::unique_ptr<front::sfn_front> sfn_front_;
    std::unique_ptr<sfn_starter> starter_;
    std::unique_ptr<http::server> sfn_server_;
    std::unique_ptr<schedules::schedule_runner> schedules_;
    std::uint64_t schedule_fired_ = 0;
    std::size_t in_flight_ = 0;
    sched::timer_ptr drain_timer_;
    std::function<void()> on_shutdown_done_;
    bool shutting_down_ = false;
    bool draining_ = false;
    std::chrono::steady_clock::time_point built_at_;
    std::optional<double> reset_at_ms_;
    bool ready_ = false;
    nlohmann::json ready_addresses_;
    admin::admin_context admin_ctx_;
    http::access_policy admin_access_;  // admin_ctx_.access points here once listening
    // Watched by work that may end after the app (a rebuild's done): it then does nothing.
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace coldbrew::app
