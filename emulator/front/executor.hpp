#pragma once
// The one request path every front end shares (architecture principle 8).
//
// A front end (the API Gateway, the Lambda Invoke API, and what comes after them) owns only its
// protocol: parsing, routing, event building, response mapping and how an error is worded on
// that front. Everything else a client request goes through is here, once:
//
//   begin()      the request's record starts (front, method, receipt time); exactly one
//                outcome is counted and one record written, however the request ends
//   trace()      trace ids from X-Amzn-Trace-Id (or drawn for the request) and the root span
//   run()        the fault facts handed to the decider, the decision logged and traced, and
//                the plan carried out: pass, delay, phantom before/after with its client view
//                (timeout, hang, reset), injected service or handler error, throttle, reset,
//                injected Runtime.ExitError, slow response; the invocation and its answer
//
// Every wait is modeled time on the scheduler (delays, a phantom's wait, the integration
// timeout) and a slow response's rate is a modeled rate the scheduler turns into a real one.
// A request a fault holds ends when its client goes away (the server's close notification),
// not on a poll; at shutdown abandon_held() ends them all at once.
//
// Counting (principle 6): each request is exactly one of served, injected_fault,
// handler_error, emulator_error, in admin::request_outcomes per front and in the request's
// telemetry record. The decider counts a fault that fired when the request's outcome is
// counted (decider::injected), or as missed when it did not reach the client (the handler
// answered before an injected kill: decider::missed), so its by-kind, by-rule and by-action
// totals equal the injected outcomes at every moment.

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/admin/admin_api.hpp"
#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/functions/function_pool.hpp"
#include "emulator/http/server.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "emulator/telemetry/decision_log.hpp"
#include "emulator/telemetry/request_stats.hpp"
#include "emulator/telemetry/run_recorder.hpp"
#include "emulator/telemetry/trace.hpp"
#include "models/faults/faults.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::front {

// The header that names an injected fault on any response the client gets because of it:
// "<kind>; rule=<rule>; action=<action>".
inline constexpr const char* fault_header = "X-Coldbrew-Fault";

// What a request invokes: a function pool in the emulator, a fake in tests.
class function_target {
public:
    virtual ~function_target() = default;
    virtual const config::function& function() const = 0;
    // Runs one invocation; inv.on_done is called exactly once, on the loop.
    virtual void invoke(functions::invocation inv) = 0;
};

// A front end's words for what the executor does to a request. One object per request.
class protocol {
public:
    virtual ~protocol() = default;

    // A lost answer (phantom, client sees: timeout): how long the client waits (modeled ms)
    // and what it then gets. Gateway: the integration timeout, then its 504/503. Invoke: the
    // function's timeout, then Lambda's 500 ServiceException.
    virtual double lost_wait_ms() const = 0;
    virtual http::response lost_answer() = 0;
    // The integration timeout after which the client gets timed_out(), counted as the
    // handler's doing; nullopt where the front has none (Invoke). Real milliseconds: it bounds
    // the handler's own work, which runs in real time (as the function's timeout does), while
    // the same timeout waited for a lost answer (lost_wait_ms) is an injected, modeled wait.
    virtual std::optional<double> integration_timeout_real_ms() const = 0;
    virtual http::response timed_out() = 0;
    // Injected answers: a service error with this status (429, 500, 502, 503, 504), a handler
    // error, a throttle with Lambda's Reason.
    virtual http::response service_error(int status) = 0;
    virtual http::response handler_error(const std::string& type, const std::string& message) = 0;
    virtual http::response throttled(const std::string& reason) = 0;
    // coldbrew is stopping before the function was invoked.
    virtual http::response unavailable() = 0;

    struct mapped {
        http::response res;
        bool handler_caused = false;  // the answer reports the handler's failure
    };
    // The function's result as this front answers it.
    virtual mapped map_result(const functions::invocation_result& r) = 0;

    // Called once the fault decision is made and before any fault acts: the front's own
    // integration request (the gateway builds the route's Lambda event here, in its trace
    // phase). `trace` may be null.
    virtual void integration_request(functions::invocation&, telemetry::request_trace*) {}

    // A Lambda function the front calls before the integration: API Gateway's Lambda
    // authorizer, when the route has one and its cache holds no result for the request's
    // identity. The executor decides its faults apart (request_facts::authorizer: only rules
    // naming its function), carries out that plan on its invocation, and hands the result
    // to after_authorizer. Asked once, after the request is routed.
    struct authorizer_call {
        function_target* target = nullptr;
        functions::invocation inv;  // payload: the authorizer's event
    };
    virtual std::optional<authorizer_call> authorizer_request() { return std::nullopt; }
    // The authorizer's result (an injected handler error or throttle included) and how long,
    // in modeled ms, the call took: nullopt to go on to the integration, or the answer the
    // client gets instead, with its outcome.
    struct early_answer {
        http::response res;
        telemetry::request_end outcome = telemetry::request_end::served;
    };
    virtual std::optional<early_answer> after_authorizer(const functions::invocation_result&,
                                                         double /*latency_ms*/) {
        return std::nullopt;
    }
};

struct executor_deps {
    const coldbrew::clock* clock = nullptr;
    const models::random_source* rng = nullptr;
    sched::scheduler* scheduler = nullptr;
    models::faults::decider* faults = nullptr;     // null: no faults
    telemetry::decision_log* decisions = nullptr;  // may be null
    // Null unless the run is recorded: each decision's facts and time, and when its fault ends.
    telemetry::run_recorder* recorder = nullptr;
    telemetry::trace_sink* traces = nullptr;       // null: nothing is traced
    // Shared with each request's record, which may outlive the executor and then records
    // nothing.
    std::shared_ptr<telemetry::request_stats> stats;
    // Where records' start_ms count from (the app's start), on clock->steady().
    std::chrono::steady_clock::time_point stats_origin;
};

class executor;
struct executor_state;

// One client request, from receipt to its one outcome. Front ends annotate it and answer
// through it; the executor carries out its fault plan.
class request : public std::enable_shared_from_this<request> {
public:
    ~request();
    request(const request&) = delete;
    request& operator=(const request&) = delete;

    // What the request reached: the route key fault rules use ("GET /hello", "$default",
    // "Invoke Hello") and the function's logical id. Until told, a placeholder.
    void set_route(std::string route_key, std::string function = {});

    // Starts the request's trace (when traces are written): `xray` is the caller's
    // X-Amzn-Trace-Id ("" when absent): its Root is the trace id (one is drawn from `id_key`
    // otherwise) and its Parent the root span's parent. Enters `first_phase`.
    void start_trace(std::string_view xray, const std::string& id_key, std::string name,
                     std::string_view first_phase);
    // Null when not traced.
    telemetry::request_trace* trace() const noexcept { return trace_.get(); }

    // The front end's own answer (no route, unknown function, a malformed call, a dry run, an
    // accepted event): served, or the outcome given.
    void answer(http::response res, telemetry::request_end outcome = telemetry::request_end::served);
    // A bug reached the front end's handler: counted as an emulator error and answered.
    void fail(http::response res);

    // Told as the answer (its status; 0 for a reset) leaves, with the rule of the fault
    // that caused it ("" when none): the gateway's access-log line.
    using answer_hook = std::function<void(int status, const std::string& fault_rule)>;
    void on_answer(answer_hook hook) { hook_ = std::move(hook); }

private:
    friend class executor;
    friend struct executor_state;
    request() = default;

    // Counts the request's one outcome (once).
    void count(telemetry::request_end e);
    bool injected() const noexcept;
    void send(http::response res, telemetry::request_end e);
    void reset_connection();
    void hold();
    void abandon(const char* why);
    void end_fault();
    void release();
    void write_record() noexcept;
    void on_client_gone();

    std::weak_ptr<executor_state> state_;  // expired once the executor is gone
    std::weak_ptr<telemetry::request_stats> stats_;
    const coldbrew::clock* clock_ = nullptr;
    http::responder respond_;
    models::faults::front where_ = models::faults::front::gateway;
    std::unique_ptr<protocol> proto_;
    std::shared_ptr<telemetry::request_trace> trace_;
    models::faults::decision fault_;
    std::optional<std::uint64_t> record_id_;  // fault_'s request in the run record
    sched::timer_ptr wait_;      // a delay, a phantom's wait, or the integration timeout
    telemetry::request_record rec_;
    std::chrono::steady_clock::time_point started_;
    std::optional<std::list<std::shared_ptr<request>>::iterator> held_it_;
    bool counted_ = false;
    bool answered_ = false;
    bool recorded_ = false;
    bool missed_ = false;   // the plan did not happen (the handler answered before the kill)
    bool injected_ = false; // counted as an injected fault
    bool holding_ = false;  // held unanswered on purpose (client sees: hang)
    bool authorizer_fault_ = false;  // fault_ fired on the authorizer's call
    answer_hook hook_;
};

class executor {
public:
    explicit executor(executor_deps deps);
    ~executor();
    executor(const executor&) = delete;
    executor& operator=(const executor&) = delete;

    // A request arrived at `where` (gateway or invoke): its record starts now, and its client
    // is watched (a client that leaves ends a request a fault holds).
    std::shared_ptr<request> begin(models::faults::front where, const http::request& req,
                                   http::responder respond);

    // Runs a routed request: the fault decision for `facts` (the request's route and
    // function), then the plan, with `proto` wording every answer and `target` invoked as the
    // plan says. `inv.on_done` and `inv.trace` are set here. When proto asks for an
    // authorizer call, that comes first, decided apart; a request meets at most one fault, so
    // when a rule fired on its authorizer the integration is not decided.
    void run(const std::shared_ptr<request>& r, std::unique_ptr<protocol> proto,
             const models::faults::request_facts& facts, function_target& target,
             functions::invocation inv);

    // A server's answer to bytes it could not parse, recorded (status, no latency) and
    // counted as served. Wraps the front end's own answer.
    std::function<http::response(http::parse_failure)> recording_parse_failures(
        models::faults::front where, std::function<http::response(http::parse_failure)> answer);

    // Ends every request a fault holds (a delay, a phantom's wait, a hang): at shutdown.
    void abandon_held();
    // From now on a request whose delay ends answers proto.unavailable() instead of invoking.
    void stop();
    bool stopping() const noexcept;

    // How requests ended, per front; and zeroing them with the records (the reset endpoints).
    const admin::request_outcomes& outcomes(models::faults::front where) const;
    void reset_counters();
    std::size_t held_count() const noexcept;
    // Requests begun and not yet recorded.
    std::size_t open_requests() const noexcept;

private:
    void decide(const std::shared_ptr<request>& r, const models::faults::request_facts& facts,
                function_target& target, functions::invocation inv);
    void authorize(const std::shared_ptr<request>& r, protocol::authorizer_call call,
                   const models::faults::request_facts& facts, function_target& target,
                   functions::invocation inv);
    void call_authorizer(const std::shared_ptr<request>& r, protocol::authorizer_call call,
                         std::chrono::steady_clock::time_point called,
                         const models::faults::request_facts& facts, function_target& target,
                         functions::invocation inv);
    void authorized(const std::shared_ptr<request>& r, const functions::invocation_result& res,
                    std::chrono::steady_clock::time_point called,
                    const models::faults::request_facts& facts, function_target& target,
                    functions::invocation inv);
    // Waits the plan's injected delay (modeled, held: shutdown and a leaving client end it),
    // then runs `go`; at once when there is none.
    void after_delay(const std::shared_ptr<request>& r, std::function<void()> go);
    void execute(const std::shared_ptr<request>& r, function_target& target,
                 functions::invocation inv);
    void lose(const std::shared_ptr<request>& r, bool after, models::faults::client_outcome client,
              function_target& target, functions::invocation inv);
    void integrate(const std::shared_ptr<request>& r, function_target& target,
                   functions::invocation inv);

    std::shared_ptr<executor_state> state_;
};

// "Root=1-<8 hex: epoch seconds>-<24 hex drawn from (stream, key, index)>": the X-Ray root a
// front end gives an invocation whose caller sent no X-Amzn-Trace-Id.
std::string draw_xray_root(const coldbrew::clock& clock, const models::random_source& rng,
                           std::string_view stream, std::string_view key, std::uint64_t index);

}  // namespace coldbrew::front
