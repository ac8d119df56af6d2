#include "emulator/front/states_task.hpp"

#include <spdlog/spdlog.h>

#include <list>
#include <utility>
#include <vector>

#include "emulator/invoke/invoke_api.hpp"

namespace coldbrew::front {

namespace mf = models::faults;
using states::task_outcome;
using json = nlohmann::json;

namespace {

// The 10 s limit of a function's Init phase on demand, which a synchronous caller waits for
// on top of the function's timeout (AWS Lambda Developer Guide, "Lambda execution
// environment"); `coldbrew sim` adds the same to a call without a timeout of its own.
constexpr double init_limit_ms = 10000;

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t from = 0;
    for (;;) {
        const auto at = s.find(sep, from);
        out.emplace_back(s.substr(from, at == std::string_view::npos ? s.npos : at - from));
        if (at == std::string_view::npos) return out;
        from = at + 1;
    }
}

// The cause Step Functions gives an AWS SDK error of Lambda's.
std::string sdk_cause(const std::string& message, int status, const std::string& code,
                      const std::string& request_id) {
    return message + " (Service: AWSLambda; Status Code: " + std::to_string(status) +
           "; Error Code: " + code + "; Request ID: " + request_id + "; Proxy: null)";
}

// The protocol's answers carry the Task's outcome in their body; the responder reads it back.
http::response outcome_response(int status, const task_outcome& o) {
    http::response res;
    res.status = status;
    res.set("Content-Type", "application/json");
    json body = {{"ok", o.ok}};
    if (o.ok) body["output"] = o.output;
    else {
        body["error"] = o.error;
        body["cause"] = o.cause;
    }
    res.body = body.dump();
    return res;
}

task_outcome failure(std::string error, std::string cause) {
    task_outcome o;
    o.ok = false;
    o.error = std::move(error);
    o.cause = std::move(cause);
    return o;
}

task_outcome outcome_of_response(const http::response& res) {
    try {
        const auto body = json::parse(res.body);
        task_outcome o;
        o.ok = body.at("ok").get<bool>();
        if (o.ok) o.output = body.value("output", json());
        else {
            o.error = body.value("error", std::string());
            o.cause = body.value("cause", std::string());
        }
        return o;
    } catch (const std::exception& e) {
        return failure("States.TaskFailed", std::string("coldbrew: unreadable task answer: ") + e.what());
    }
}

// The Task as the executor's client: answers come back here instead of going to a socket.
struct task_client final : http::responder::target {
    std::function<void(http::response)> on_answer;
    std::function<void()> on_reset;
    std::function<void()> close_fn;
    bool used = false;
    bool gone = false;

    void send(http::response res, const http::send_options& opts) override {
        if (!std::exchange(used, true) && !gone && on_answer) on_answer(std::move(res));
        if (opts.on_finished) opts.on_finished();
    }
    void reset() override {
        if (!std::exchange(used, true) && !gone && on_reset) on_reset();
    }
    bool alive() const override { return !used && !gone; }
    void on_close(std::function<void()> fn) override { close_fn = std::move(fn); }
    // The Task stopped waiting (its timeout, a stop): a request a fault holds ends now.
    void leave() {
        if (std::exchange(gone, true)) return;
        if (auto f = std::exchange(close_fn, nullptr)) f();
    }
};

// How the Task sees what the executor does to its invocation.
class states_protocol final : public protocol {
public:
    states_protocol(std::string request_id, double lost_wait_ms, bool lambda_invoke)
        : request_id_(std::move(request_id)), lost_wait_ms_(lost_wait_ms),
          lambda_invoke_(lambda_invoke) {}

    double lost_wait_ms() const override { return lost_wait_ms_; }
    http::response lost_answer() override {
        return outcome_response(
            504, failure("States.Timeout",
                         "The function's answer did not arrive within " +
                             json(lost_wait_ms_ / 1000).dump() + " s."));
    }
    std::optional<double> integration_timeout_real_ms() const override { return std::nullopt; }
    http::response timed_out() override { return lost_answer(); }
    http::response service_error(int status) override {
        if (status == 429) return throttled("CallerRateLimitExceeded");
        return outcome_response(
            status, failure("Lambda.ServiceException",
                            sdk_cause("coldbrew injected a service error.", status,
                                      "ServiceException", request_id_)));
    }
    http::response handler_error(const std::string& type, const std::string& message) override {
        functions::invocation_result r;
        r.kind = functions::outcome::function_error;
        r.request_id = request_id_;
        r.error_type = type;
        r.payload = json{{"errorMessage", message}, {"errorType", type}}.dump();
        return outcome_response(200, task_outcome_of(r, lambda_invoke_));
    }
    http::response throttled(const std::string& reason) override {
        return outcome_response(429, failure("Lambda.TooManyRequestsException",
                                             sdk_cause("Rate Exceeded. (Reason: " + reason + ")",
                                                       429, "TooManyRequestsException",
                                                       request_id_)));
    }
    http::response unavailable() override {
        return outcome_response(503, failure("Lambda.ServiceException",
                                             sdk_cause("coldbrew is shutting down.", 503,
                                                       "ServiceException", request_id_)));
    }
    mapped map_result(const functions::invocation_result& r) override {
        auto o = task_outcome_of(r, lambda_invoke_);
        int status = 200;
        if (r.kind == functions::outcome::throttled) status = 429;
        else if (r.kind == functions::outcome::too_large) status = 413;
        else if (r.kind == functions::outcome::unavailable) status = 503;
        return {outcome_response(status, o), r.kind == functions::outcome::function_error};
    }

private:
    std::string request_id_;
    double lost_wait_ms_;
    bool lambda_invoke_;
};

json invoke_answer(json payload, int status, const std::string& request_id) {
    // Lambda's answer headers as the Step Functions Lambda integration reports them.
    const json headers = {{"Content-Type", "application/json"},
                          {"X-Amz-Executed-Version", "$LATEST"},
                          {"x-amzn-RequestId", request_id}};
    json all = json::object();
    for (const auto& [k, v] : headers.items()) all[k] = json::array({v});
    return {{"ExecutedVersion", "$LATEST"},
            {"Payload", std::move(payload)},
            {"SdkHttpMetadata",
             {{"AllHttpHeaders", all}, {"HttpHeaders", headers}, {"HttpStatusCode", status}}},
            {"SdkResponseMetadata", {{"RequestId", request_id}}},
            {"StatusCode", status}};
}

}  // namespace

task_function resolve_task_function(const config::stack& stack, const config::state_machine& m,
                                    std::string_view name) {
    task_function out;
    std::string base(name);
    // arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>], or the partial
    // <account>:function:<name>[:<qualifier>], or <name>[:<qualifier>].
    const auto parts = split(name, ':');
    if (parts.size() >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function") {
        base = parts[6];
        if (parts.size() >= 8) out.qualifier = parts[7];
    } else if (parts.size() >= 3 && parts[1] == "function") {
        base = parts[2];
        if (parts.size() >= 4) out.qualifier = parts[3];
    } else if (parts.size() == 2) {
        base = parts[0];
        out.qualifier = parts[1];
    }
    const std::string qualified = out.qualifier.empty() ? base : base + ":" + out.qualifier;
    out.arn = "arn:aws:lambda:" + stack.settings.region + ":" + stack.settings.account_id +
              ":function:" + qualified;
    auto find = [&](const std::string& n) -> const config::function* {
        if (auto it = m.function_arns.find(n); it != m.function_arns.end())
            if (const auto* fn = stack.find_function(it->second)) return fn;
        if (const auto* fn = stack.find_function(n)) return fn;
        for (const auto& fn : stack.functions)
            if (fn.function_name == n) return &fn;
        return nullptr;
    };
    const config::function* fn = find(std::string(name));
    if (!fn) fn = find(base);
    if (fn && (out.qualifier.empty() || out.qualifier == "$LATEST")) out.function = fn;
    if (fn)
        out.arn = "arn:aws:lambda:" + stack.settings.region + ":" + stack.settings.account_id +
                  ":function:" + fn->function_name +
                  (out.qualifier.empty() ? "" : ":" + out.qualifier);
    return out;
}

const config::state_machine* machine_of_execution(const config::stack& stack,
                                                  std::string_view execution_arn) {
    const auto parts = split(execution_arn, ':');
    if (parts.size() < 8) return nullptr;
    for (const auto& m : stack.state_machines)
        if (m.state_machine_name == parts[6]) return &m;
    return nullptr;
}

task_outcome task_outcome_of(const functions::invocation_result& r, bool lambda_invoke) {
    switch (r.kind) {
    case functions::outcome::success: {
        json payload;
        try {
            payload = r.payload.empty() ? json() : json::parse(r.payload);
        } catch (const json::exception&) {
            // Not JSON (or a number too large for a double): the text, as a string.
            payload = r.payload;
        }
        task_outcome o;
        o.output = lambda_invoke ? invoke_answer(std::move(payload), 200, r.request_id)
                                 : std::move(payload);
        return o;
    }
    case functions::outcome::function_error: {
        std::string type = r.error_type;
        if (type.empty()) {
            try {
                const auto j = json::parse(r.payload);
                if (j.is_object() && j.contains("errorType") && j["errorType"].is_string())
                    type = j["errorType"].get<std::string>();
            } catch (const json::exception&) {
            }
        }
        if (type.empty())
            return failure("Lambda.Unknown",
                           "The cause could not be determined because Lambda did not return an "
                           "error type. Returned payload: " + r.payload);
        return failure(type, r.payload);
    }
    case functions::outcome::throttled:
        return failure("Lambda.TooManyRequestsException",
                       sdk_cause("Rate Exceeded. (Reason: " + r.throttle_reason + ")", 429,
                                 "TooManyRequestsException", r.request_id));
    case functions::outcome::too_large:
        return failure("Lambda.RequestTooLargeException",
                       sdk_cause(r.message, 413, "RequestTooLargeException", r.request_id));
    case functions::outcome::unavailable:
        return failure("Lambda.ServiceException",
                       sdk_cause(r.message, 503, "ServiceException", r.request_id));
    }
    return failure("States.TaskFailed", "unknown invocation outcome");
}

// ---- the runner ------------------------------------------------------------------------------

struct states_task_runner::shared {
    std::list<sched::timer_ptr> deliveries;  // pending 0 ms timers; spent ones pruned
    std::size_t in_flight = 0;
};

states_task_runner::states_task_runner(states_task_deps deps)
    : deps_(std::move(deps)), shared_(std::make_shared<shared>()) {}

states_task_runner::~states_task_runner() = default;

std::size_t states_task_runner::in_flight() const noexcept { return shared_->in_flight; }

void states_task_runner::deliver_later(std::function<void(task_outcome)> done, task_outcome o) {
    auto& d = shared_->deliveries;
    for (auto it = d.begin(); it != d.end();) it = (*it && (*it)->pending()) ? std::next(it) : d.erase(it);
    d.push_back(deps_.scheduler->after(0, [done = std::move(done), o = std::move(o)]() mutable {
        // Moved out first: the timer that holds this closure may be pruned from inside done.
        auto f = std::move(done);
        auto out = std::move(o);
        if (f) f(std::move(out));
    }));
}

states::task_runner::handle states_task_runner::run(const states::task_call& call,
                                                    std::function<void(task_outcome)> done) {
    const auto& stack = *deps_.stack;
    const auto* st = call.task;
    const auto* machine = machine_of_execution(stack, call.execution_arn);
    using kind = states::task_resource::kind;
    const kind what = st ? st->target.what : kind::unknown;
    if (!st || !machine || (what != kind::lambda_invoke && what != kind::lambda_arn)) {
        const std::string resource = st ? st->resource : std::string("(none)");
        deliver_later(std::move(done),
                      failure("States.TaskFailed",
                              "coldbrew does not emulate the Task resource " + resource +
                                  " (state " + call.path +
                                  "): only Lambda functions of the stack run here"));
        return {};
    }

    const bool lambda_invoke = what == kind::lambda_invoke;
    std::string name_given;
    if (lambda_invoke) {
        if (call.parameters.is_object() && call.parameters.contains("FunctionName") &&
            call.parameters["FunctionName"].is_string())
            name_given = call.parameters["FunctionName"].get<std::string>();
    } else {
        name_given = st->resource;
    }
    const auto tf = resolve_task_function(stack, *machine, name_given);
    const std::string request_id =
        models::uuid_v4(*deps_.rng, "states-request-id", "states", next_index_++);
    const std::string route_key = machine->name + " " + call.state_name;
    const std::string invoked = tf.function ? tf.function->function_name : name_given;
    const std::string path = "/2015-03-31/functions/" + invoked + "/invocations";

    http::request req;
    req.method = "POST";
    req.target = path;
    auto client = std::make_shared<task_client>();
    auto sh = std::weak_ptr<shared>(shared_);
    ++shared_->in_flight;
    // Exactly one of these runs, once: the outcome goes to the interpreter on a turn of its
    // own.
    auto finish = std::make_shared<std::function<void(task_outcome)>>(
        [this, sh, done = std::move(done)](task_outcome o) mutable {
            auto s = sh.lock();
            if (!s) return;
            if (s->in_flight > 0) --s->in_flight;
            deliver_later(std::move(done), std::move(o));
        });
    client->on_answer = [finish](http::response res) {
        if (auto f = std::exchange(*finish, nullptr)) f(outcome_of_response(res));
    };
    client->on_reset = [finish, request_id] {
        if (auto f = std::exchange(*finish, nullptr))
            f(failure("Lambda.SdkClientException",
                      "Unable to execute HTTP request: Connection reset (request " + request_id +
                          ")"));
    };
    handle h;
    h.cancel = [client, finish, sh] {
        // The interpreter stopped waiting: nothing more goes to it.
        if (std::exchange(*finish, nullptr)) {
            if (auto s = sh.lock(); s && s->in_flight > 0) --s->in_flight;
        }
        client->leave();
    };

    auto r = deps_.ex->begin(mf::front::states, req, http::responder(client));
    r->set_route(route_key, tf.function ? tf.function->name : std::string());
    if (!tf.function) {
        http::response res = outcome_response(
            404, failure("Lambda.ResourceNotFoundException",
                         sdk_cause("Function not found: " + tf.arn, 404,
                                   "ResourceNotFoundException", request_id)));
        r->answer(std::move(res));
        return h;
    }
    const auto& fn = *tf.function;
    auto* target = deps_.find ? deps_.find(fn.name) : nullptr;
    if (!target) {
        r->fail(outcome_response(500, failure("States.TaskFailed",
                                              "coldbrew: no pool for function " + fn.name)));
        return h;
    }

    std::string payload = "{}";
    if (lambda_invoke) {
        // Without Payload the function gets an empty object (coldbrew's choice: AWS documents
        // Payload as the function's input and nothing for its absence).
        if (call.parameters.is_object() && call.parameters.contains("Payload"))
            payload = call.parameters["Payload"].dump();
        const std::string type =
            call.parameters.is_object() && call.parameters.contains("InvocationType") &&
                    call.parameters["InvocationType"].is_string()
                ? call.parameters["InvocationType"].get<std::string>()
                : "RequestResponse";
        if (type == "Event") {
            if (!deps_.enqueue) {
                r->answer(outcome_response(500, failure("Lambda.ServiceException",
                                                        "asynchronous invocations are not served")));
                return h;
            }
            deps_.enqueue(fn.name, request_id, std::move(payload));
            task_outcome o;
            o.output = invoke_answer("", 202, request_id);
            r->answer(outcome_response(202, o));
            return h;
        }
        if (type == "DryRun") {
            task_outcome o;
            o.output = invoke_answer("", 204, request_id);
            r->answer(outcome_response(204, o));
            return h;
        }
    } else {
        payload = call.parameters.dump();
    }

    const std::string trace_header = deps_.trace_header ? deps_.trace_header(call) : std::string();
    const std::string root_header =
        trace_header.empty()
            ? draw_xray_root(*deps_.clock, *deps_.rng, "states-trace-id", request_id, 0)
            : trace_header;
    r->start_trace(root_header, request_id, route_key, "states.request_mapping");
    if (auto* t = r->trace()) {
        t->annotate_root("faas.invoked_name", fn.name);
        t->annotate_root("aws.request_id", request_id);
        t->annotate_root("aws.step_functions.state_machine", machine->name);
        t->annotate_root("aws.step_functions.state", call.path);
        t->annotate_root("aws.step_functions.attempt", static_cast<std::int64_t>(call.attempt));
    }

    functions::invocation inv;
    inv.payload = std::move(payload);
    inv.request_id = request_id;
    inv.trace_id = trace_header.empty()
                       ? root_header + ";Parent=" + telemetry::draw_span_id(*deps_.rng, request_id, 0) +
                             ";Sampled=0"
                       : trace_header;

    // A lost answer is waited for as long as the Task would wait: the state's TimeoutSeconds
    // (the interpreter's timer ends it then), else the function's timeout and Init limit.
    const bool state_timeout = st->timeout_s || st->timeout_path;
    const double lost_wait_ms = state_timeout && call.timeout_ms
                                    ? *call.timeout_ms
                                    : fn.timeout_s * 1000.0 + init_limit_ms;

    const std::string state_machine_name = machine->state_machine_name;
    mf::request_facts facts;
    facts.where = mf::front::states;
    facts.function = fn.name;
    facts.function_name = fn.function_name;
    facts.route = route_key;
    facts.method = "POST";
    facts.path = path;
    facts.state_machine = machine->name;
    facts.state_machine_name = state_machine_name;
    facts.state = call.state_name;
    facts.state_path = call.path;
    deps_.ex->run(r, std::make_unique<states_protocol>(request_id, lost_wait_ms, lambda_invoke),
                  facts, *target, std::move(inv));
    return h;
}

}  // namespace coldbrew::front
