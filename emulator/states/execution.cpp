// The interpreter: see execution.hpp.
//
// Every step after start() runs in a scheduler callback: entering a state, each Task attempt
// and its answer, retry waits, Wait states, and every transition (a 0 ms timer), so a machine
// of any depth or length never recurses on the stack.
//
// A "run" walks one machine: the execution's own, a Parallel branch or a Map iteration. It
// owns the timers and the running task of its current state and its child runs, so cancelling
// a run (a sibling branch failed, the execution timed out or was stopped) stops all of it.
//
// Facts (source: the AWS Step Functions developer guide, "Task" state page, and the API
// Reference, HistoryEvent and TaskScheduledEventDetails pages):
//  - A Task without TimeoutSeconds may run 99999999 s (the developer guide's default; the
//    ASL spec text says 60, which Step Functions does not apply). A Lambda invocation ends
//    by the function's own timeout long before.
//  - HeartbeatSeconds only matters when something can send heartbeats: here a
//    .waitForTaskToken Task (SendTaskHeartbeat restarts the clock; TimeoutSeconds stays the
//    limit of the whole Task however many heartbeats arrive).
//  - History details carry input, output and parameters as JSON text (strings), with the
//    …Details {"truncated": false} beside them; TaskScheduled names resourceType ("lambda")
//    and resource ("invoke", "invoke.waitForTaskToken"); a plain function ARN records
//    LambdaFunction* events instead of Task* ones.
//  - A caught error leaves the state with a …StateExited event whose output is the raw input
//    with {"Error","Cause"} at the Catcher's ResultPath (OutputPath is not applied).
//  - States.Runtime is never retried or caught (spec, "Errors").
#include "emulator/states/execution.hpp"

#include <cmath>
#include <map>
#include <set>

#include "emulator/states/data.hpp"
#include "models/retry/backoff.hpp"

namespace coldbrew::states {

std::string_view to_string(execution_status s) {
    switch (s) {
    case execution_status::running: return "RUNNING";
    case execution_status::succeeded: return "SUCCEEDED";
    case execution_status::failed: return "FAILED";
    case execution_status::timed_out: return "TIMED_OUT";
    case execution_status::aborted: return "ABORTED";
    }
    return "RUNNING";
}

json history_event::to_json() const {
    json j = {{"id", id}, {"timestamp", timestamp_ms / 1000.0}, {"type", type}};
    if (previous_id > 0) j["previousEventId"] = previous_id;
    if (!details.is_null()) {
        // Every <Type>StateEntered / <Type>StateExited shares one details shape, named so.
        auto ends = [&](std::string_view suffix) {
            return type.size() >= suffix.size() &&
                   std::string_view(type).substr(type.size() - suffix.size()) == suffix;
        };
        std::string key;
        if (ends("StateEntered")) key = "stateEnteredEventDetails";
        else if (ends("StateExited")) key = "stateExitedEventDetails";
        else {
            key = type + "EventDetails";
            if (!key.empty()) key[0] = static_cast<char>(std::tolower(key[0]));
        }
        j[key] = details;
    }
    return j;
}

namespace {

constexpr double default_task_timeout_s = 99999999;

std::string region_of(const std::string& arn) {
    // arn:aws:states:<region>:<account>:execution:<machine>:<name>
    std::size_t pos = 0;
    for (int i = 0; i < 3; ++i) {
        pos = arn.find(':', pos);
        if (pos == std::string::npos) return "";
        ++pos;
    }
    auto end = arn.find(':', pos);
    return end == std::string::npos ? "" : arn.substr(pos, end - pos);
}

std::string type_name(state_type t) { return std::string(to_string(t)); }

json error_output(const std::string& error, const std::string& cause) {
    return json{{"Error", error}, {"Cause", cause}};
}

// A positive number from a …Path (TimeoutSecondsPath, HeartbeatSecondsPath, …).
double positive_from_path(const std::string& path, const data_scope& scope,
                          const char* field, bool allow_zero) {
    json v = select(path, scope);
    if (!v.is_number() || !std::isfinite(v.get<double>()) ||
        v.get<double>() < 0 || (!allow_zero && v.get<double>() == 0))
        throw runtime_failure("States.Runtime",
                              std::string("The value of ") + field + " at '" + path +
                                  "' is not a " + (allow_zero ? "non-negative" : "positive") +
                                  " number: " + v.dump());
    return v.get<double>();
}

}  // namespace

struct execution::impl {
    struct run;
    using run_ptr = std::shared_ptr<run>;
    using finish_fn = std::function<void(bool ok, json output, std::string error,
                                         std::string cause)>;

    // One machine being walked.
    struct run {
        const machine* m = nullptr;
        std::string prefix;           // "" top; "Fanout/branch 0/"; "Each/"
        std::optional<json> map_item; // {"Index": i, "Value": v} inside a Map iteration
        finish_fn done;
        bool over = false;

        // The current state.
        const state* current = nullptr;
        json raw_input;
        double entered_ms = 0;        // wall
        int retry_count = 0;          // $$.State.RetryCount
        std::map<std::size_t, int> retrier_attempts;
        std::uint64_t attempt_gen = 0;  // a Task answer for an older attempt is stale
        sched::timer_ptr step;          // the next transition, a retry wait, a Wait
        sched::timer_ptr timeout, heartbeat;
        std::function<void()> cancel_task;
        std::string token;              // waited on, when not empty
        std::vector<run_ptr> children;  // Parallel branches / Map iterations running
        std::function<void()> on_cancel;  // the state's own clean-up (Map: aborted events)
        // .waitForTaskToken: how the token's answers end the attempt.
        std::function<void(json)> token_success;
        std::function<void(std::string, std::string, bool timed_out)> token_failure;
        double heartbeat_ms = 0;
    };

    impl(std::shared_ptr<const machine> m, execution_info i, json in, execution_deps d)
        : machine_(std::move(m)), info_(std::move(i)), input_(std::move(in)),
          deps_(std::move(d)) {}

    std::shared_ptr<const machine> machine_;
    execution_info info_;
    json input_;
    execution_deps deps_;
    std::vector<history_event> history_;
    execution_status status_ = execution_status::running;
    std::optional<json> output_;
    std::string error_, cause_;
    double start_wall_ms_ = 0, start_now_ms_ = 0;
    std::optional<double> stop_ms_;
    std::uint64_t transitions_ = 0;
    std::uint64_t uuid_counter_ = 0;
    std::uint64_t token_counter_ = 0;
    bool started_ = false;
    run_ptr top_;
    sched::timer_ptr machine_timeout_;
    std::map<std::string, std::weak_ptr<run>, std::less<>> tokens_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

    double wall_now() const {
        return start_wall_ms_ + (deps_.scheduler->now_ms() - start_now_ms_);
    }

    void emit(std::string type, json details = nullptr) {
        history_event e;
        e.id = static_cast<std::int64_t>(history_.size()) + 1;
        e.previous_id = e.id - 1;
        e.timestamp_ms = wall_now();
        e.type = std::move(type);
        e.details = std::move(details);
        history_.push_back(std::move(e));
        if (deps_.on_event) deps_.on_event(history_.back());
    }

    static json text(const json& v) { return v.dump(); }
    static json untruncated() { return json{{"truncated", false}}; }

    json context(const run& r, const std::string& token) const {
        json redrive = info_.redrive_count;
        try {
            redrive = std::stoll(info_.redrive_count);
        } catch (...) {
        }
        json c = {
            {"Execution",
             {{"Id", info_.execution_arn},
              {"Input", input_},
              {"Name", info_.name},
              {"RoleArn", info_.role_arn},
              {"StartTime", format_timestamp_ms(start_wall_ms_)},
              {"RedriveCount", redrive}}},
            {"StateMachine", {{"Id", info_.state_machine_arn}, {"Name", info_.state_machine_name}}},
            {"State",
             {{"EnteredTime", format_timestamp_ms(r.entered_ms)},
              {"Name", r.current ? r.current->name : std::string()},
              {"RetryCount", r.retry_count}}},
        };
        if (!token.empty()) c["Task"] = {{"Token", token}};
        if (r.map_item) c["Map"] = {{"Item", *r.map_item}};
        return c;
    }

    intrinsic_env env() { return intrinsic_env{deps_.rng, info_.execution_arn, &uuid_counter_}; }

    // ---- lifecycle -----------------------------------------------------------------------

    void start() {
        if (started_) return;
        started_ = true;
        start_wall_ms_ = static_cast<double>(
            std::chrono::duration_cast<std::chrono::milliseconds>(
                deps_.clock->wall().time_since_epoch())
                .count());
        start_now_ms_ = deps_.scheduler->now_ms();
        json started = {{"input", text(input_)}, {"inputDetails", untruncated()},
                        {"roleArn", info_.role_arn}};
        emit("ExecutionStarted", std::move(started));
        top_ = std::make_shared<run>();
        top_->m = machine_.get();
        top_->done = [this](bool ok, json out, std::string err, std::string cause) {
            if (ok) end(execution_status::succeeded, std::move(out), "", "");
            else end(execution_status::failed, nullptr, std::move(err), std::move(cause));
        };
        if (machine_->timeout_s) {
            machine_timeout_ = deps_.scheduler->after(*machine_->timeout_s * 1000, [this] {
                end(execution_status::timed_out, nullptr, "States.Timeout",
                    "The execution ran longer than its TimeoutSeconds (" +
                        json(*machine_->timeout_s).dump() + " s).");
            });
        }
        begin(top_, machine_->start_at, input_);
    }

    void end(execution_status s, json output, std::string error, std::string cause) {
        if (status_ != execution_status::running) return;
        status_ = s;
        if (top_) cancel(*top_);
        machine_timeout_.reset();
        stop_ms_ = wall_now();
        error_ = std::move(error);
        cause_ = std::move(cause);
        switch (s) {
        case execution_status::succeeded:
            output_ = std::move(output);
            emit("ExecutionSucceeded", {{"output", text(*output_)},
                                        {"outputDetails", untruncated()}});
            break;
        case execution_status::failed:
            emit("ExecutionFailed", {{"error", error_}, {"cause", cause_}});
            break;
        case execution_status::timed_out:
            emit("ExecutionTimedOut", {{"error", error_}, {"cause", cause_}});
            break;
        case execution_status::aborted:
            emit("ExecutionAborted", {{"error", error_}, {"cause", cause_}});
            break;
        case execution_status::running: break;
        }
        // Last: the owner may drop the execution from inside on_end.
        if (deps_.on_end) deps_.on_end(status_, output_ ? *output_ : json(), error_, cause_);
    }

    // Stops a run and everything under it; its done() is never called after.
    void cancel(run& r) {
        if (r.over) return;
        r.over = true;
        clear_state(r);
        r.done = nullptr;
    }

    void clear_state(run& r) {
        r.step.reset();
        r.timeout.reset();
        r.heartbeat.reset();
        ++r.attempt_gen;
        if (r.cancel_task) {
            auto c = std::move(r.cancel_task);
            r.cancel_task = nullptr;
            c();
        }
        if (!r.token.empty()) {
            tokens_.erase(r.token);
            r.token.clear();
        }
        r.token_success = nullptr;
        r.token_failure = nullptr;
        if (r.on_cancel) {
            auto c = std::move(r.on_cancel);
            r.on_cancel = nullptr;
            c();
        }
        auto children = std::move(r.children);
        r.children.clear();
        for (auto& c : children) cancel(*c);
    }

    void finish_run(const run_ptr& r, bool ok, json out, std::string err, std::string cause) {
        if (r->over) return;
        auto done = std::move(r->done);
        r->over = true;
        clear_state(*r);
        r->done = nullptr;
        if (done) done(ok, std::move(out), std::move(err), std::move(cause));
    }

    // ---- transitions ---------------------------------------------------------------------

    // Enters `name` on the next turn of the loop.
    void begin(const run_ptr& r, std::string name, json input) {
        r->step = deps_.scheduler->after(0, [this, wr = std::weak_ptr<run>(r),
                                             name = std::move(name),
                                             input = std::move(input)]() mutable {
            auto rr = wr.lock();
            if (!rr || rr->over) return;
            enter(rr, name, std::move(input));
        });
    }

    void enter(const run_ptr& r, const std::string& name, json input) {
        const state* st = r->m->find(name);
        if (!st) {
            finish_run(r, false, nullptr, "States.Runtime",
                       "The state '" + name + "' does not exist in the machine.");
            return;
        }
        ++transitions_;
        r->current = st;
        r->raw_input = std::move(input);
        r->entered_ms = wall_now();
        r->retry_count = 0;
        r->retrier_attempts.clear();
        emit(type_name(st->type) + "StateEntered",
             {{"name", st->name}, {"input", text(r->raw_input)}, {"inputDetails", untruncated()}});
        attempt(r);
    }

    void attempt(const run_ptr& r) {
        const state& st = *r->current;
        try {
            switch (st.type) {
            case state_type::pass: run_pass(r); break;
            case state_type::task: run_task(r); break;
            case state_type::choice: run_choice(r); break;
            case state_type::wait: run_wait(r); break;
            case state_type::succeed: run_succeed(r); break;
            case state_type::fail: run_fail(r); break;
            case state_type::parallel: run_parallel(r); break;
            case state_type::map: run_map(r); break;
            }
        } catch (const runtime_failure& f) {
            state_failed(r, f.error(), f.what());
        } catch (const std::exception& e) {
            state_failed(r, "States.Runtime", e.what());
        }
    }

    json effective_input(const run& r, const json& ctx) {
        return apply_path(r.current->input_path, data_scope{r.raw_input, ctx});
    }

    // The state's work gave `result`: ResultSelector → ResultPath → OutputPath, then on.
    void state_done(const run_ptr& r, json result) {
        const state& st = *r->current;
        json out;
        try {
            json ctx = context(*r, "");
            if (st.result_selector) {
                auto e = env();
                result = apply_template(*st.result_selector, data_scope{result, ctx}, e);
            }
            json placed = apply_result_path(r->raw_input, st.result_path, std::move(result));
            out = apply_path(st.output_path, data_scope{placed, ctx});
        } catch (const runtime_failure& f) {
            state_failed(r, f.error(), f.what());
            return;
        } catch (const std::exception& e) {
            state_failed(r, "States.Runtime", e.what());
            return;
        }
        leave(r, std::move(out), st.end ? std::string() : st.next);
    }

    // Emits <Type>StateExited and moves to `next` ("" ends the run with `out`).
    void leave(const run_ptr& r, json out, const std::string& next) {
        const state& st = *r->current;
        clear_state(*r);
        emit(type_name(st.type) + "StateExited",
             {{"name", st.name}, {"output", text(out)}, {"outputDetails", untruncated()}});
        if (next.empty()) finish_run(r, true, std::move(out), "", "");
        else begin(r, next, std::move(out));
    }

    // An attempt of the current state failed: Retry, else Catch, else the run fails.
    void state_failed(const run_ptr& r, const std::string& error, const std::string& cause) {
        if (r->over) return;
        const state& st = *r->current;
        clear_state(*r);
        const bool handleable = error != "States.Runtime";
        if (handleable) {
            for (std::size_t i = 0; i < st.retry.size(); ++i) {
                if (!error_matches(st.retry[i].error_equals, error)) continue;
                int& used = r->retrier_attempts[i];
                if (used >= st.retry[i].max_attempts) break;  // exhausted: on to Catch
                const int n = ++used;
                const std::string path = r->prefix + st.name;
                const double u =
                    deps_.rng ? deps_.rng->uniform("sfn-retry",
                                                   info_.execution_arn + "/" + path + "/" +
                                                       std::to_string(i),
                                                   static_cast<std::uint64_t>(n))
                              : 0.0;
                const double wait = models::sfn_retry_delay_ms(st.retry[i], n, u);
                if (deps_.on_retry) deps_.on_retry(path, error, n);
                r->step = deps_.scheduler->after(wait, [this, wr = std::weak_ptr<run>(r)] {
                    auto rr = wr.lock();
                    if (!rr || rr->over) return;
                    ++rr->retry_count;
                    ++transitions_;  // a retry is billed as a transition
                    attempt(rr);
                });
                return;
            }
            for (const auto& c : st.catches) {
                if (!error_matches(c.error_equals, error)) continue;
                json out;
                try {
                    out = apply_result_path(r->raw_input, c.result_path,
                                            error_output(error, cause));
                } catch (const runtime_failure& f) {
                    finish_run(r, false, nullptr, f.error(), f.what());
                    return;
                }
                if (deps_.on_catch) deps_.on_catch(r->prefix + st.name, error);
                leave(r, std::move(out), c.next);
                return;
            }
        }
        finish_run(r, false, nullptr, error, cause);
    }

    // ---- the states ----------------------------------------------------------------------

    void run_pass(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        json in = effective_input(*r, ctx);
        json result;
        if (st.result) {
            result = *st.result;
        } else if (st.parameters) {
            auto e = env();
            result = apply_template(*st.parameters, data_scope{in, ctx}, e);
        } else {
            result = std::move(in);
        }
        json placed = apply_result_path(r->raw_input, st.result_path, std::move(result));
        json out = apply_path(st.output_path, data_scope{placed, ctx});
        leave(r, std::move(out), st.end ? std::string() : st.next);
    }

    void run_choice(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        json in = effective_input(*r, ctx);
        std::string next = choose(st, data_scope{in, ctx});
        json out = apply_path(st.output_path, data_scope{in, ctx});
        leave(r, std::move(out), next);
    }

    void run_succeed(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        json in = effective_input(*r, ctx);
        json out = apply_path(st.output_path, data_scope{in, ctx});
        leave(r, std::move(out), "");
    }

    void run_fail(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        const json& in = r->raw_input;
        auto text_of = [&](const std::optional<std::string>& path,
                           const std::optional<std::string>& literal) -> std::string {
            if (path) {
                // ErrorPath and CausePath may hold an intrinsic function instead of a path.
                auto e = env();
                json v = path->rfind("States.", 0) == 0
                             ? evaluate_intrinsic(*path, data_scope{in, ctx}, e)
                             : select(*path, data_scope{in, ctx});
                if (!v.is_string())
                    throw runtime_failure("States.Runtime",
                                          "The value at '" + *path + "' is not a string: " +
                                              v.dump());
                return v.get<std::string>();
            }
            return literal.value_or("");
        };
        std::string error = text_of(st.error_path, st.error);
        std::string cause = text_of(st.cause_path, st.cause);
        // A Fail state is not a Task: nothing retries or catches it; its run fails.
        finish_run(r, false, nullptr, std::move(error), std::move(cause));
    }

    void run_wait(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        json in = effective_input(*r, ctx);
        data_scope scope{in, ctx};
        double wait_ms = 0;
        auto until = [&](const std::string& ts, const std::string& what) {
            auto t = parse_timestamp_ms(ts);
            if (!t)
                throw runtime_failure("States.Runtime",
                                      what + " is not an RFC 3339 timestamp: '" + ts + "'");
            return *t - wall_now();  // a past time: no wait
        };
        if (st.seconds) {
            wait_ms = *st.seconds * 1000;
        } else if (st.seconds_path) {
            wait_ms = positive_from_path(*st.seconds_path, scope, "SecondsPath", true) * 1000;
        } else if (st.timestamp) {
            wait_ms = until(*st.timestamp, "Timestamp");
        } else if (st.timestamp_path) {
            json v = select(*st.timestamp_path, scope);
            if (!v.is_string())
                throw runtime_failure("States.Runtime", "The value at '" + *st.timestamp_path +
                                                            "' is not a timestamp string: " +
                                                            v.dump());
            wait_ms = until(v.get<std::string>(), "TimestampPath's value");
        }
        json out = apply_path(st.output_path, scope);
        r->step = deps_.scheduler->after(
            std::max(0.0, wait_ms),
            [this, wr = std::weak_ptr<run>(r), out = std::move(out)]() mutable {
                auto rr = wr.lock();
                if (!rr || rr->over) return;
                const state& s = *rr->current;
                leave(rr, std::move(out), s.end ? std::string() : s.next);
            });
    }

    void run_task(const run_ptr& r) {
        const state& st = *r->current;
        const bool callback = st.target.pattern == integration_pattern::wait_for_task_token;
        const bool plain_lambda = st.target.what == task_resource::kind::lambda_arn;
        std::string token;
        if (callback) {
            const auto i = token_counter_++;
            token = deps_.rng ? models::random_hex(*deps_.rng, "sfn-token", info_.execution_arn,
                                                   2 * i, 32) +
                                    models::random_hex(*deps_.rng, "sfn-token",
                                                       info_.execution_arn, 2 * i + 1, 32)
                              : "token-" + std::to_string(i);
        }
        json ctx = context(*r, token);
        json in = effective_input(*r, ctx);
        data_scope scope{in, ctx};
        json params = in;
        if (st.parameters) {
            auto e = env();
            params = apply_template(*st.parameters, scope, e);
        }
        double timeout_s = st.timeout_s.value_or(default_task_timeout_s);
        if (st.timeout_path)
            timeout_s = positive_from_path(*st.timeout_path, scope, "TimeoutSecondsPath", false);
        std::optional<double> heartbeat_s = st.heartbeat_s;
        if (st.heartbeat_path)
            heartbeat_s =
                positive_from_path(*st.heartbeat_path, scope, "HeartbeatSecondsPath", false);

        const std::string resource_type = st.target.service.empty() ? "lambda" : st.target.service;
        std::string resource = st.target.action;
        if (callback) resource += ".waitForTaskToken";
        else if (st.target.pattern == integration_pattern::run_job) resource += ".sync";
        const std::uint64_t gen = ++r->attempt_gen;

        if (plain_lambda) {
            json d = {{"resource", st.resource}, {"input", text(params)},
                      {"inputDetails", untruncated()}};
            if (st.timeout_s || st.timeout_path) d["timeoutInSeconds"] = timeout_s;
            emit("LambdaFunctionScheduled", std::move(d));
            emit("LambdaFunctionStarted");
        } else {
            json d = {{"resourceType", resource_type}, {"resource", resource},
                      {"region", region_of(info_.execution_arn)},
                      {"parameters", text(params)}};
            if (st.timeout_s || st.timeout_path) d["timeoutInSeconds"] = timeout_s;
            if (heartbeat_s) d["heartbeatInSeconds"] = *heartbeat_s;
            emit("TaskScheduled", std::move(d));
            emit("TaskStarted", {{"resourceType", resource_type}, {"resource", resource}});
        }

        // What ends the attempt, whichever comes first; each checks it is still current.
        auto succeeded = [this, wr = std::weak_ptr<run>(r), gen, plain_lambda, resource_type,
                          resource](json output) {
            auto rr = wr.lock();
            if (!rr || rr->over || rr->attempt_gen != gen) return;
            if (plain_lambda)
                emit("LambdaFunctionSucceeded",
                     {{"output", text(output)}, {"outputDetails", untruncated()}});
            else
                emit("TaskSucceeded", {{"resourceType", resource_type}, {"resource", resource},
                                       {"output", text(output)},
                                       {"outputDetails", untruncated()}});
            clear_state(*rr);
            state_done(rr, std::move(output));
        };
        auto failed = [this, wr = std::weak_ptr<run>(r), gen, plain_lambda, resource_type,
                       resource](std::string error, std::string cause, bool timed_out) {
            auto rr = wr.lock();
            if (!rr || rr->over || rr->attempt_gen != gen) return;
            json d = {{"error", error}, {"cause", cause}};
            if (!plain_lambda) {
                d["resourceType"] = resource_type;
                d["resource"] = resource;
            }
            emit(std::string(plain_lambda ? "LambdaFunction" : "Task") +
                     (timed_out ? "TimedOut" : "Failed"),
                 std::move(d));
            state_failed(rr, error, cause);
        };

        r->timeout = deps_.scheduler->after(timeout_s * 1000, [failed, timeout_s] {
            failed("States.Timeout",
                   "The task ran longer than its TimeoutSeconds (" + json(timeout_s).dump() +
                       " s).",
                   true);
        });
        if (callback) {
            r->token = token;
            tokens_[token] = r;
            r->token_success = succeeded;
            r->token_failure = failed;
            if (heartbeat_s) {
                r->heartbeat_ms = *heartbeat_s * 1000;
                arm_heartbeat(r);
            }
        }

        task_call call;
        call.state_name = st.name;
        call.path = r->prefix + st.name;
        call.task = &st;
        call.parameters = std::move(params);
        call.attempt = r->retry_count;
        call.task_token = token;
        call.timeout_ms = timeout_s * 1000;
        call.execution_arn = info_.execution_arn;
        std::weak_ptr<bool> alive = alive_;
        auto h = deps_.tasks->run(call, [alive, succeeded, failed, callback](task_outcome o) {
            if (alive.expired()) return;
            if (!o.ok) failed(std::move(o.error), std::move(o.cause), false);
            else if (!callback) succeeded(std::move(o.output));
            // A callback task's own answer only says the message went out; the token ends it.
        });
        if (r->attempt_gen == gen && !r->over) r->cancel_task = std::move(h.cancel);
        else if (h.cancel) h.cancel();
    }

    void arm_heartbeat(const run_ptr& r) {
        r->heartbeat = deps_.scheduler->after(r->heartbeat_ms, [wr = std::weak_ptr<run>(r)] {
            auto rr = wr.lock();
            if (!rr || rr->over || !rr->token_failure) return;
            auto f = rr->token_failure;
            f("States.Timeout", "No heartbeat arrived within HeartbeatSeconds (" +
                                    json(rr->heartbeat_ms / 1000).dump() + " s).",
              true);
        });
    }

    // A child run (a branch or an iteration) of `parent`'s current state.
    run_ptr child(const run_ptr& parent, const machine* m, std::string prefix) {
        auto c = std::make_shared<run>();
        c->m = m;
        c->prefix = std::move(prefix);
        parent->children.push_back(c);
        return c;
    }

    void run_parallel(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        json in = effective_input(*r, ctx);
        if (st.parameters) {
            auto e = env();
            in = apply_template(*st.parameters, data_scope{in, ctx}, e);
        }
        emit("ParallelStateStarted");
        const std::size_t n = st.branches.size();
        struct join {
            std::vector<json> outputs;
            std::size_t left = 0;
        };
        auto j = std::make_shared<join>();
        j->outputs.resize(n);
        j->left = n;
        const std::uint64_t gen = ++r->attempt_gen;
        if (n == 0) {
            r->step = deps_.scheduler->after(0, [this, wr = std::weak_ptr<run>(r)] {
                auto rr = wr.lock();
                if (!rr || rr->over) return;
                emit("ParallelStateSucceeded");
                state_done(rr, json::array());
            });
            return;
        }
        for (std::size_t i = 0; i < n; ++i) {
            auto c = child(r, st.branches[i].get(),
                           r->prefix + st.name + "/branch " + std::to_string(i) + "/");
            c->map_item = r->map_item;
            c->done = [this, wr = std::weak_ptr<run>(r), j, i, gen](bool ok, json out,
                                                                   std::string err,
                                                                   std::string cause) {
                auto rr = wr.lock();
                if (!rr || rr->over || rr->attempt_gen != gen) return;
                if (!ok) {
                    // The first failure stops every other branch and fails the state.
                    auto children = std::move(rr->children);
                    rr->children.clear();
                    for (auto& other : children) cancel(*other);
                    emit("ParallelStateFailed", {{"error", err}, {"cause", cause}});
                    state_failed(rr, err, cause);
                    return;
                }
                j->outputs[i] = std::move(out);
                if (--j->left > 0) return;
                rr->children.clear();
                emit("ParallelStateSucceeded");
                state_done(rr, json(std::move(j->outputs)));
            };
            begin(c, c->m->start_at, in);
        }
    }

    struct fan {
        std::vector<json> values, inputs, outputs;
        std::size_t next = 0, running = 0, finished = 0, failed = 0;
        std::size_t limit = 0;
        std::optional<double> pct, count;
        std::set<std::size_t> active;
    };

    void run_map(const run_ptr& r) {
        const state& st = *r->current;
        json ctx = context(*r, "");
        json in = effective_input(*r, ctx);
        data_scope scope{in, ctx};
        json items = select(st.items_path, scope);
        if (!items.is_array())
            throw runtime_failure("States.Runtime",
                                  "The ItemsPath '" + st.items_path + "' of the Map state '" +
                                      st.name + "' does not select an array: " + items.dump());
        int limit = st.max_concurrency;
        if (st.max_concurrency_path)
            limit = static_cast<int>(
                positive_from_path(*st.max_concurrency_path, scope, "MaxConcurrencyPath", true));
        std::optional<double> pct = st.tolerated_failure_percentage;
        if (st.tolerated_failure_percentage_path)
            pct = positive_from_path(*st.tolerated_failure_percentage_path, scope,
                                     "ToleratedFailurePercentagePath", true);
        std::optional<double> count;
        if (st.tolerated_failure_count) count = static_cast<double>(*st.tolerated_failure_count);
        if (st.tolerated_failure_count_path)
            count = positive_from_path(*st.tolerated_failure_count_path, scope,
                                       "ToleratedFailureCountPath", true);
        if (pct && *pct > 100)
            throw runtime_failure("States.Runtime",
                                  "ToleratedFailurePercentage must be within 0 and 100, got " +
                                      json(*pct).dump());

        // Each iteration's input, computed now so a template failure fails the state here.
        auto f = std::make_shared<fan>();
        const std::size_t n = items.size();
        const std::optional<json>& sel = st.item_selector ? st.item_selector : st.parameters;
        for (std::size_t i = 0; i < n; ++i) {
            f->values.push_back(items[i]);
            if (sel) {
                json ictx = ctx;
                ictx["Map"] = {{"Item", {{"Index", i}, {"Value", items[i]}}}};
                auto e = env();
                f->inputs.push_back(apply_template(*sel, data_scope{in, ictx}, e));
            } else {
                f->inputs.push_back(items[i]);
            }
        }
        f->outputs.resize(n);
        f->limit = limit > 0 ? static_cast<std::size_t>(limit) : n;
        f->pct = pct;
        f->count = count;

        emit("MapStateStarted", {{"length", n}});
        const std::uint64_t gen = ++r->attempt_gen;
        r->on_cancel = [this, f, name = st.name] {
            for (auto i : f->active) emit("MapIterationAborted", {{"name", name}, {"index", i}});
            f->active.clear();
        };
        if (n == 0) {
            r->step = deps_.scheduler->after(0, [this, wr = std::weak_ptr<run>(r)] {
                auto rr = wr.lock();
                if (!rr || rr->over) return;
                rr->on_cancel = nullptr;
                emit("MapStateSucceeded");
                state_done(rr, json::array());
            });
            return;
        }
        launch_iterations(r, f, gen);
    }

    // Whether `f`'s failures are more than its state tolerates (no tolerance set: any).
    static bool exceeded(const fan& f) {
        if (!f.pct && !f.count) return f.failed > 0;
        const double failed = static_cast<double>(f.failed);
        if (f.count && failed > *f.count) return true;
        if (f.pct && failed * 100.0 / static_cast<double>(f.inputs.size()) > *f.pct) return true;
        return false;
    }

    void launch_iterations(const run_ptr& r, const std::shared_ptr<fan>& f, std::uint64_t gen) {
        const state& st = *r->current;
        while (f->next < f->inputs.size() && f->running < f->limit) {
            const std::size_t i = f->next++;
            ++f->running;
            f->active.insert(i);
            auto c = child(r, st.item_processor.get(), r->prefix + st.name + "/");
            c->map_item = json{{"Index", i}, {"Value", f->values[i]}};
            emit("MapIterationStarted", {{"name", st.name}, {"index", i}});
            c->done = [this, wr = std::weak_ptr<run>(r), f, i, gen,
                       wc = std::weak_ptr<run>(c)](bool ok, json out, std::string err,
                                                  std::string cause) {
                auto rr = wr.lock();
                if (!rr || rr->over || rr->attempt_gen != gen) return;
                const state& s = *rr->current;
                --f->running;
                ++f->finished;
                f->active.erase(i);
                if (auto cc = wc.lock()) std::erase(rr->children, cc);
                if (ok) {
                    emit("MapIterationSucceeded", {{"name", s.name}, {"index", i}});
                    f->outputs[i] = std::move(out);
                } else {
                    emit("MapIterationFailed", {{"name", s.name}, {"index", i}});
                    f->outputs[i] = error_output(err, cause);
                    ++f->failed;
                    if (exceeded(*f)) {
                        const bool tolerant = f->pct || f->count;
                        std::string e = tolerant ? "States.ExceedToleratedFailureThreshold" : err;
                        std::string c = tolerant ? "The Map state '" + s.name + "' had " +
                                                       std::to_string(f->failed) +
                                                       " failed iterations, more than it "
                                                       "tolerates."
                                                 : cause;
                        auto children = std::move(rr->children);
                        rr->children.clear();
                        for (auto& other : children) cancel(*other);
                        for (auto k : f->active)
                            emit("MapIterationAborted", {{"name", s.name}, {"index", k}});
                        f->active.clear();
                        rr->on_cancel = nullptr;
                        emit("MapStateFailed", {{"error", e}, {"cause", c}});
                        state_failed(rr, e, c);
                        return;
                    }
                }
                if (f->finished == f->inputs.size()) {
                    rr->on_cancel = nullptr;
                    emit("MapStateSucceeded");
                    state_done(rr, json(std::move(f->outputs)));
                    return;
                }
                launch_iterations(rr, f, gen);
            };
            begin(c, c->m->start_at, f->inputs[i]);
        }
    }

    // ---- tokens ----------------------------------------------------------------------------

    run_ptr waiting(const std::string& token) const {
        auto it = tokens_.find(token);
        if (it == tokens_.end()) return nullptr;
        auto r = it->second.lock();
        return r && !r->over && r->token == token ? r : nullptr;
    }
};

execution::execution(std::shared_ptr<const machine> m, execution_info info, json input,
                     execution_deps deps)
    : impl_(std::make_unique<impl>(std::move(m), std::move(info), std::move(input),
                                   std::move(deps))) {}

execution::~execution() {
    // Nothing may call back into a dead execution: cancel the tasks, drop the timers.
    impl_->alive_.reset();
    if (impl_->top_) impl_->cancel(*impl_->top_);
    impl_->machine_timeout_.reset();
}

void execution::start() { impl_->start(); }

void execution::stop(const std::string& error, const std::string& cause) {
    if (!impl_->started_) return;
    impl_->end(execution_status::aborted, nullptr, error, cause);
}

bool execution::send_task_success(const std::string& token, const json& output) {
    auto r = impl_->waiting(token);
    if (!r || !r->token_success) return false;
    auto f = r->token_success;
    f(output);
    return true;
}

bool execution::send_task_failure(const std::string& token, const std::string& error,
                                  const std::string& cause) {
    auto r = impl_->waiting(token);
    if (!r || !r->token_failure) return false;
    auto f = r->token_failure;
    f(error, cause, false);
    return true;
}

bool execution::send_task_heartbeat(const std::string& token) {
    auto r = impl_->waiting(token);
    if (!r) return false;
    if (r->heartbeat_ms > 0) impl_->arm_heartbeat(r);
    return true;
}

bool execution::waits_on(const std::string& token) const {
    return impl_->waiting(token) != nullptr;
}

execution_status execution::status() const noexcept { return impl_->status_; }
const execution_info& execution::info() const noexcept { return impl_->info_; }
const json& execution::input() const noexcept { return impl_->input_; }
const std::vector<history_event>& execution::history() const noexcept { return impl_->history_; }
const std::optional<json>& execution::output() const noexcept { return impl_->output_; }
const std::string& execution::error() const noexcept { return impl_->error_; }
const std::string& execution::cause() const noexcept { return impl_->cause_; }
double execution::start_ms() const noexcept { return impl_->start_wall_ms_; }
std::optional<double> execution::stop_ms() const noexcept { return impl_->stop_ms_; }
std::uint64_t execution::state_transitions() const noexcept { return impl_->transitions_; }

}  // namespace coldbrew::states
