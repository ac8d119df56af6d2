#include "emulator/app/app.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <variant>

#include <nlohmann/json.hpp>

#include "emulator/config/fault_rules.hpp"
#include "emulator/functions/service_errors.hpp"
#include "emulator/invoke/invoke_api.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::app {

namespace mf = models::faults;

// A function pool as the executor invokes it; every invocation is counted on the way in and
// on the way out (app::invoke_pool).
class app::pool_target final : public front::function_target {
public:
    pool_target(app& a, functions::function_pool& pool) : app_(a), pool_(pool) {}
    const config::function& function() const override { return pool_.function(); }
    void invoke(functions::invocation inv) override { app_.invoke_pool(pool_, std::move(inv)); }

private:
    app& app_;
    functions::function_pool& pool_;
};

// The gateway's Step Functions integrations, started on the stack's service.
class app::sfn_starter final : public front::state_machine_starter {
public:
    explicit sfn_starter(states::service& svc) : svc_(svc) {}
    void start(const config::route& route, std::string input_json, std::string name,
               std::string trace_header,
               std::function<void(int status, std::string body_json)> done) override {
        states::service::start_request req;
        req.state_machine_arn = route.state_machine;
        if (!name.empty()) req.name = std::move(name);
        req.input = std::move(input_json);
        req.trace_header = std::move(trace_header);
        auto error = [](const states::api_error& e) {
            return nlohmann::json{{"__type", e.type}, {"message", e.message}}.dump();
        };
        if (route.state_machine_action == config::route::sfn_action::start_sync_execution) {
            svc_.start_sync_execution(req, [done = std::move(done), error](
                                               std::variant<nlohmann::json, states::api_error> r) {
                if (auto* e = std::get_if<states::api_error>(&r)) done(e->status, error(*e));
                else done(200, std::get<nlohmann::json>(r).dump());
            });
            return;
        }
        auto r = svc_.start_execution(req);
        if (auto* e = std::get_if<states::api_error>(&r)) {
            done(e->status, error(*e));
            return;
        }
        const auto& st = std::get<states::service::started>(r);
        done(200, nlohmann::json{{"executionArn", st.execution_arn}, {"startDate", st.start_ms / 1000.0}}
                      .dump());
    }

private:
    states::service& svc_;
};

// Each execution's trace: a root span for the execution, one child span per state entered and
// one per Task attempt under its state (retries are attempts of their own); the attempt's
// invocation is the executor's request trace, whose parent is the attempt's span. Span ids are
// draws keyed by the execution ARN and the history event that opens the span, so the
// invocation's parent is known before the attempt ends. History times are the execution's
// modeled wall clock; spans state them scaled to real time from the execution's start, as
// the invocation spans beside them run (coldbrew.modeled_ms keeps the modeled duration).
class app::execution_tracer {
public:
    execution_tracer(const coldbrew::clock& clock, const models::random_source& rng,
                     telemetry::trace_sink& sink, double time_scale)
        : clock_(clock), rng_(rng), sink_(sink), scale_(time_scale) {}

    std::string trace_id(const std::string& arn) const {
        auto id = models::random_hex(rng_, "sfn-trace-id", arn, 0, 32);
        if (!telemetry::is_hex_id(id, 32)) id.back() = '1';
        return id;
    }
    // The X-Amzn-Trace-Id of the current attempt of `e` (its latest scheduled Task).
    std::string header_for(const states::execution& e) const {
        const auto& h = e.history();
        for (auto it = h.rbegin(); it != h.rend(); ++it)
            if (it->type == "TaskScheduled" || it->type == "LambdaFunctionScheduled")
                return "Root=" + telemetry::xray_root(trace_id(e.info().execution_arn)) +
                       ";Parent=" + telemetry::draw_span_id(rng_, e.info().execution_arn,
                                                            static_cast<std::uint64_t>(it->id)) +
                       ";Sampled=1";
        return {};
    }
    void started(const states::execution& e) {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::milliseconds(static_cast<std::int64_t>(clock_.epoch_ms())))
                            .count();
        start_ns_[e.info().execution_arn] = ns;
    }
    void ended(const states::execution& e) {
        const auto& arn = e.info().execution_arn;
        auto it = start_ns_.find(arn);
        if (it == start_ns_.end()) return;
        const std::int64_t base_ns = it->second;
        start_ns_.erase(it);
        const double t0 = e.start_ms();
        auto at = [&](double ms) {
            return base_ns + static_cast<std::int64_t>((ms - t0) * scale_ * 1e6);
        };
        const std::string tid = trace_id(arn);
        std::vector<telemetry::span> spans;
        telemetry::span root;
        root.trace_id = tid;
        root.span_id = telemetry::draw_span_id(rng_, arn, 0);
        root.name = "Execution " + e.info().state_machine_name;
        root.kind = telemetry::span_kind::server;
        root.start_unix_nano = base_ns;
        root.end_unix_nano = at(e.stop_ms().value_or(t0));
        root.attributes = {{"aws.step_functions.execution_arn", arn},
                           {"aws.step_functions.status", std::string(states::to_string(e.status()))},
                           {"coldbrew.time_scale", scale_},
                           {"coldbrew.modeled_ms", e.stop_ms().value_or(t0) - t0}};
        if (!e.error().empty()) {
            root.status = telemetry::status_code::error;
            root.status_message = e.error();
        }
        spans.push_back(std::move(root));
        struct open_span {
            std::size_t index;
            std::string name;
        };
        std::vector<open_span> states, attempts;
        auto child = [&](std::string name, std::int64_t id, double ms, const std::string& parent) {
            telemetry::span s;
            s.trace_id = tid;
            s.span_id = telemetry::draw_span_id(rng_, arn, static_cast<std::uint64_t>(id));
            s.parent_span_id = parent;
            s.name = std::move(name);
            s.start_unix_nano = s.end_unix_nano = at(ms);
            s.attributes.push_back({"coldbrew.modeled_start_ms", ms - t0});
            spans.push_back(std::move(s));
            return spans.size() - 1;
        };
        auto close = [&](std::size_t i, double ms) {
            auto& s = spans[i];
            s.end_unix_nano = at(ms);
            double start_ms = 0;
            for (const auto& a : s.attributes)
                if (a.key == "coldbrew.modeled_start_ms") start_ms = std::get<double>(a.value);
            s.attributes.push_back({"coldbrew.modeled_ms", ms - t0 - start_ms});
        };
        auto ends_with = [](const std::string& s, std::string_view suffix) {
            return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
        };
        for (const auto& ev : e.history()) {
            if (ends_with(ev.type, "StateEntered")) {
                const std::string name = ev.details.value("name", std::string());
                const std::string parent =
                    states.empty() ? spans[0].span_id : spans[states.back().index].span_id;
                states.push_back({child("State " + name, ev.id, ev.timestamp_ms, parent), name});
            } else if (ends_with(ev.type, "StateExited")) {
                const std::string name = ev.details.value("name", std::string());
                for (auto s = states.rbegin(); s != states.rend(); ++s)
                    if (s->name == name) {
                        close(s->index, ev.timestamp_ms);
                        states.erase(std::next(s).base());
                        break;
                    }
            } else if (ev.type == "TaskScheduled" || ev.type == "LambdaFunctionScheduled") {
                const std::string parent =
                    states.empty() ? spans[0].span_id : spans[states.back().index].span_id;
                attempts.push_back({child("Task attempt", ev.id, ev.timestamp_ms, parent), ""});
            } else if (!attempts.empty() &&
                       (ends_with(ev.type, "Succeeded") || ends_with(ev.type, "Failed") ||
                        ends_with(ev.type, "TimedOut")) &&
                       (ev.type.rfind("Task", 0) == 0 || ev.type.rfind("LambdaFunction", 0) == 0)) {
                auto& s = spans[attempts.back().index];
                if (!ends_with(ev.type, "Succeeded")) {
                    s.status = telemetry::status_code::error;
                    s.status_message = ev.details.value("error", std::string());
                }
                close(attempts.back().index, ev.timestamp_ms);
                attempts.pop_back();
            }
        }
        // What never ended (an aborted execution) ends with it.
        for (auto& s : spans)
            if (s.end_unix_nano < s.start_unix_nano) s.end_unix_nano = s.start_unix_nano;
        sink_.write(std::move(spans));
    }

private:
    const coldbrew::clock& clock_;
    const models::random_source& rng_;
    telemetry::trace_sink& sink_;
    double scale_;
    std::map<std::string, std::int64_t> start_ns_;
};

app::app(const config::stack& stack, app_dependencies deps)
    : stack_(stack), deps_(std::move(deps)), supervisor_(deps_.loop, deps_.reaper) {
    if (!deps_.scheduler) throw std::invalid_argument("app: no scheduler");
    built_at_ = deps_.clock->steady();
    pool_ctx_.loop = deps_.loop;
    pool_ctx_.clock = deps_.clock;
    pool_ctx_.scheduler = deps_.scheduler;
    pool_ctx_.rng = deps_.rng;
    pool_ctx_.supervisor = &supervisor_;
    pool_ctx_.logs = deps_.logs;
    pool_ctx_.settings = &stack_.settings;
    pool_ctx_.runtimes_dir = deps_.runtimes_dir;
    pool_ctx_.host_env = deps_.host_env;
    pool_ctx_.decisions = deps_.decisions;
    pool_ctx_.recorder = deps_.recorder;
    pool_ctx_.cpu = deps_.cpu;
    pool_ctx_.memory = deps_.memory;
    if (stack_.settings.memory_budget_mb) {
        budget_ = std::make_unique<functions::memory_budget>(*stack_.settings.memory_budget_mb);
        pool_ctx_.budget = budget_.get();
    }
    pool_ctx_.on_answered = [stats = request_stats_](const config::function& fn,
                                                     const functions::invocation_result& r) {
        if (r.init_duration_ms) stats->record_init(fn.name, *r.init_duration_ms);
    };
    pool_ctx_.bandwidth = &deps_.models->profile().bandwidth;
    if (!stack_.settings.dependencies.empty()) {
        proxy::proxy_context pc;
        pc.loop = deps_.loop;
        pc.scheduler = deps_.scheduler;
        pc.rng = deps_.rng;
        pc.faults = deps_.faults;
        pc.decisions = deps_.decisions;
        pc.recorder = deps_.recorder;
        pc.host = "127.0.0.1";  // handlers run here; the proxies never face the network
        proxies_ = std::make_unique<proxy::proxy_set>(stack_.settings.dependencies, std::move(pc));
        pool_ctx_.proxies = proxies_.get();
    }
    for (const auto& fn : stack_.functions) {
        const auto* model = deps_.models->find(fn.name);
        functions::standby_setting standby{fn.standby, fn.standby_auto};
        auto pool = std::make_unique<functions::function_pool>(fn, *model, deps_.models->account(),
                                                               pool_ctx_, standby);
        targets_.emplace(fn.name, std::make_unique<pool_target>(*this, *pool));
        pools_.emplace(fn.name, std::move(pool));
    }
    events_ = std::make_unique<invoke::event_queue>(
        *deps_.scheduler, *deps_.clock, stack_.settings.region, stack_.settings.account_id,
        [this](const std::string& function, functions::invocation inv) {
            if (auto* t = find_target(function, true)) t->invoke(std::move(inv));
        });
    for (const auto& fn : stack_.functions) {
        invoke::async_function_config cfg;
        cfg.retry.maximum_retry_attempts = fn.async.maximum_retry_attempts;
        cfg.retry.maximum_event_age_ms = fn.async.maximum_event_age_s * 1000.0;
        cfg.on_success = fn.async.on_success;
        cfg.on_failure = fn.async.on_failure;
        events_->configure(fn.name, fn.function_name, std::move(cfg));
    }

    front::executor_deps ed;
    ed.clock = deps_.clock;
    ed.rng = deps_.rng;
    ed.scheduler = deps_.scheduler;
    ed.faults = deps_.faults;
    ed.decisions = deps_.decisions;
    ed.recorder = deps_.recorder;
    ed.traces = deps_.traces;
    ed.stats = request_stats_;
    ed.stats_origin = built_at_;
    executor_ = std::make_unique<front::executor>(std::move(ed));
    gateway_ = std::make_unique<front::gateway_front>(
        stack_, *executor_, *deps_.clock, *deps_.rng,
        [this](std::string_view name) { return find_target(name, false); }, *deps_.scheduler,
        std::move(deps_.jwt_keys));
    invoke_front_ = std::make_unique<front::invoke_front>(
        stack_, *executor_, *deps_.clock, *deps_.rng,
        [this](std::string_view name) { return find_target(name, true); },
        [this](const std::string& function, const std::string& id, std::string payload) {
            events_->enqueue(function, id, std::move(payload));
        });

    if (!stack_.state_machines.empty()) {
        if (deps_.traces)
            tracer_ = std::make_unique<execution_tracer>(*deps_.clock, *deps_.rng, *deps_.traces,
                                                         deps_.scheduler->scale());
        front::states_task_deps td;
        td.stack = &stack_;
        td.ex = executor_.get();
        td.clock = deps_.clock;
        td.rng = deps_.rng;
        td.scheduler = deps_.scheduler;
        td.find = [this](std::string_view name) { return find_target(name, false); };
        td.enqueue = [this](const std::string& function, const std::string& id, std::string payload) {
            events_->enqueue(function, id, std::move(payload));
        };
        if (tracer_)
            td.trace_header = [this](const states::task_call& call) {
                const auto* e = sfn_ ? sfn_->find_execution(call.execution_arn) : nullptr;
                return e ? tracer_->header_for(*e) : std::string();
            };
        tasks_ = std::make_unique<front::states_task_runner>(std::move(td));
        states::service_deps sd;
        sd.clock = deps_.clock;
        sd.scheduler = deps_.scheduler;
        sd.rng = deps_.rng;
        sd.tasks = tasks_.get();
        sd.on_start = [this](const states::execution& e) { execution_started(e); };
        sd.on_end = [this](const states::execution& e) { execution_ended(e); };
        // Every definition is parsed here: a bad one is a config error before anything listens.
        sfn_ = std::make_unique<states::service>(stack_, std::move(sd));
        sfn_front_ = std::make_unique<front::sfn_front>(*sfn_, *deps_.rng);
        starter_ = std::make_unique<sfn_starter>(*sfn_);
        gateway_->set_state_machine_starter(starter_.get());
    }
    if (!stack_.schedules.empty()) {
        schedules::runner_options so;
        so.rng = deps_.rng;
        so.region = stack_.settings.region;
        so.account_id = stack_.settings.account_id;
        schedules_ = std::make_unique<schedules::schedule_runner>(
            *deps_.scheduler, *deps_.clock, stack_.schedules,
            [this](const config::schedule& sc, std::string event) {
                if (shutting_down_) return;
                if (!sc.state_machine.empty()) {
                    if (!sfn_) return;
                    states::service::start_request req;
                    req.state_machine_arn = sc.state_machine;
                    req.input = std::move(event);
                    auto r = sfn_->start_execution(req);
                    if (auto* e = std::get_if<states::api_error>(&r))
                        spdlog::warn("schedule {}: StartExecution of {} failed: {}: {}", sc.name,
                                     sc.state_machine, e->type, e->message);
                    return;
                }
                // EventBridge invokes its targets asynchronously (Event): the event queue
                // retries as Lambda's asynchronous invocation does.
                const auto id = models::uuid_v4(*deps_.rng, "schedule-request-id", sc.name,
                                                schedule_fired_++);
                events_->enqueue(sc.function, id, std::move(event));
            },
            std::move(so));
    }

    admin_ctx_.faults = deps_.faults;
    admin_ctx_.registry = deps_.fault_registry;
    admin_ctx_.configured_rules = &deps_.configured_rules;
    admin_ctx_.configured_max_active = stack_.settings.faults.max_active_faults;
    admin_ctx_.decisions = deps_.decisions;
    admin_ctx_.recorder = deps_.recorder;
    admin_ctx_.rule_warnings = [this](const mf::rule& r) { return config::rule_warnings(stack_, r); };
    admin_ctx_.now_ms = [this] { return deps_.scheduler->now_ms(); };
    admin_ctx_.request_counters = [this] {
        auto out = nlohmann::json{{"gateway", gateway_outcomes().to_json()},
                                  {"invoke", invoke_outcomes().to_json()}};
        if (sfn_) out["states"] = states_outcomes().to_json();
        return out;
    };
    admin_ctx_.function_counters = [this] {
        auto out = nlohmann::json::object();
        for (const auto& [name, st] : stats()) {
            out[name] = {{"invocations", st.invocations},   {"cold_starts", st.cold_starts},
                         {"throttles", st.throttles},       {"waits", st.waits},
                         {"function_errors", st.function_errors}, {"timeouts", st.timeouts},
                         {"evictions", st.evictions},       {"provisioned", st.provisioned},
                         {"budget_evictions", st.budget_evictions},
                         {"environments", st.environments}, {"busy", st.busy},
                         {"init_overruns", st.init_overruns},
                         {"init_overrun_ms", st.init_overrun_ms},
                         {"standby", st.standby},           {"standby_ready", st.standby_ready},
                         {"standby_taken", st.standby_taken},
                         {"code_reloads", st.code_reloads}};
        }
        return out;
    };
    admin_ctx_.reset_request_counters = [this] { reset_counters(); };
    if (sfn_)
        admin_ctx_.state_machine_counters = [this] {
            auto out = nlohmann::json::object();
            for (const auto& [name, st] : sfn_->stats())
                out[name] = {{"started", st.started},   {"succeeded", st.succeeded},
                             {"failed", st.failed},     {"timed_out", st.timed_out},
                             {"aborted", st.aborted},   {"duplicate_starts", st.duplicate_starts},
                             {"retries", st.retries},   {"caught", st.caught},
                             {"state_transitions", st.state_transitions},
                             {"running", sfn_->running()}};
            return out;
        };
    if (proxies_) admin_ctx_.proxy_counters = [this] { return proxies_->to_json(); };
    admin_ctx_.request_stats = request_stats_.get();
    admin_ctx_.readiness = [this] {
        if (ready()) {
            auto out = ready_addresses_;
            out["ready"] = true;
            return out;
        }
        return nlohmann::json{
            {"ready", false},
            {"message", shutting_down_ ? "shutting down"
                                       : "starting: listeners, provisioned and standby "
                                         "execution environments are not all ready yet"}};
    };
}

void app::mark_ready(nlohmann::json addresses) {
    ready_addresses_ = std::move(addresses);
    ready_ = true;
}

bool app::code_changed(const std::string& function, const std::filesystem::path& file) {
    auto it = pools_.find(function);
    if (it == pools_.end()) return false;
    auto& pool = *it->second;
    // The sink names the function; the line names the file, as the user would say it.
    deps_.logs->write(function, "coldbrew: code changed: " + file.string() +
                                    (pool.function().build && deps_.rebuild
                                         ? "; rebuilding, then new execution environments"
                                         : "; new execution environments from the next invocation"));
    if (pool.function().build && deps_.rebuild) {
        // The pool outlives the build only while the app does: a build that ends during the
        // shutdown retires nothing.
        deps_.rebuild(pool.function(), [this, alive = std::weak_ptr<int>(alive_),
                                        name = function](bool ok) {
            if (!ok || alive.expired() || shutting_down_) return;
            if (auto p = pools_.find(name); p != pools_.end()) p->second->retire_code();
        });
        return true;
    }
    pool.retire_code();
    return true;
}

app::~app() {
    draining_ = false;  // invocations the pools fail from here on start no drain timer
    if (schedules_) schedules_->stop();
    if (sfn_server_) sfn_server_->close();
    if (sfn_) sfn_->stop_all();
    if (gateway_server_) gateway_server_->close();
    if (invoke_server_) invoke_server_->close();
    if (admin_server_) admin_server_->close();
    executor_->abandon_held();
    drain_timer_.reset();
    schedules_.reset();
    sfn_server_.reset();
    starter_.reset();
    sfn_front_.reset();
    sfn_.reset();
    tasks_.reset();
    events_.reset();
    pools_.clear();
}

front::jwt_key_sets load_jwt_keys(const config::stack& stack) {
    front::jwt_key_sets out;
    for (const auto& api : stack.apis)
        for (const auto& a : api.authorizers)
            if (a.kind == config::authorizer::type::jwt)
                out.emplace(front::jwt_keys_name(api, a), jwt::load_keys(a, stack.template_file));
    return out;
}

void draw_api_keys(config::stack& stack, const models::random_source& rng) {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for (auto& k : stack.api_keys) {
        if (!k.value.empty()) continue;
        for (std::uint64_t i = 0; i < 40; ++i)
            k.value += alphabet[static_cast<std::size_t>(rng.uniform("api-key", k.name, i) * 62) % 62];
    }
}

void app::reset_counters() {
    gateway_->reset_access();
    if (sfn_) sfn_->reset_counters();
    executor_->reset_counters();
    request_stats_->reset();
    for (auto& [_, p] : pools_) p->reset_stats();
    if (proxies_) proxies_->reset_counters();
    reset_at_ms_ = std::chrono::duration<double, std::milli>(deps_.clock->steady() - built_at_).count();
}

const admin::request_outcomes& app::gateway_outcomes() const noexcept {
    return executor_->outcomes(mf::front::gateway);
}

const admin::request_outcomes& app::invoke_outcomes() const noexcept {
    return executor_->outcomes(mf::front::invoke);
}

const admin::request_outcomes& app::states_outcomes() const noexcept {
    return executor_->outcomes(mf::front::states);
}

void app::execution_started(const states::execution& e) {
    const auto& i = e.info();
    // Beside Lambda's START line, under the state machine's name.
    deps_.logs->write(i.state_machine_name, "START Execution " + i.execution_arn + " " +
                                                i.state_machine_name);
    if (tracer_) tracer_->started(e);
}

void app::execution_ended(const states::execution& e) {
    const auto& i = e.info();
    const double ms = e.stop_ms().value_or(e.start_ms()) - e.start_ms();
    char dur[32];
    std::snprintf(dur, sizeof(dur), "%.0f ms", ms);
    std::string line = "END Execution " + i.execution_arn + " " +
                       std::string(states::to_string(e.status())) + " " + dur;
    if (!e.error().empty()) line += " " + e.error();
    deps_.logs->write(i.state_machine_name, line);
    if (tracer_) tracer_->ended(e);
}

std::error_code app::start_sfn() {
    if (sfn_) {
        sfn_server_ = make_server(front::gateway_max_payload_bytes, sfn_front_->parse_failure_answer(),
                                  [this](http::request req, http::responder respond) {
                                      sfn_front_->handle(std::move(req), std::move(respond));
                                  });
        if (auto ec = sfn_server_->listen(stack_.settings.host, stack_.settings.sfn_port)) return ec;
        sfn_front_->set_access(access_for(stack_.settings.host, *sfn_server_, ""));
        const std::string host =
            stack_.settings.host == "0.0.0.0" ? "127.0.0.1" : stack_.settings.host;
        pool_ctx_.sfn_endpoint = "http://" + host + ":" + std::to_string(sfn_server_->port());
    }
    if (schedules_) schedules_->start();
    return {};
}

int app::sfn_port() const { return sfn_server_ ? sfn_server_->port() : 0; }

std::error_code app::start_dependencies(std::string& failed) {
    if (!proxies_) return {};
    return proxies_->start(failed);
}

std::unique_ptr<http::server> app::make_server(std::size_t body_limit,
                                              std::function<http::response(http::parse_failure)> bad,
                                              http::server::handler handle,
                                              std::size_t line_and_values_limit) {
    http::server_options opts;
    opts.body_limit = body_limit;
    opts.line_and_values_limit = line_and_values_limit;
    opts.request_timeout_ms = stack_.settings.request_timeout_ms;
    opts.on_parse_failure = std::move(bad);
    return std::make_unique<http::server>(deps_.loop, std::move(handle), std::move(opts));
}

std::error_code app::start_gateway() {
    gateway_server_ = make_server(front::gateway_max_payload_bytes, gateway_->parse_failure_answer(),
                                  [this](http::request req, http::responder respond) {
                                      gateway_->handle(std::move(req), std::move(respond));
                                  },
                                  front::gateway_line_and_values_limit);
    return gateway_server_->listen(stack_.settings.host, stack_.settings.gateway_port);
}

int app::gateway_port() const { return gateway_server_ ? gateway_server_->port() : 0; }

std::error_code app::start_invoke() {
    invoke_server_ = make_server(front::invoke_max_body_bytes, invoke_front_->parse_failure_answer(),
                                 [this](http::request req, http::responder respond) {
                                     invoke_front_->handle(std::move(req), std::move(respond));
                                 });
    if (auto ec = invoke_server_->listen(stack_.settings.host, stack_.settings.invoke_port))
        return ec;
    invoke_front_->set_access(access_for(stack_.settings.host, *invoke_server_, ""));
    // Handlers reach it on loopback whatever address it listens on.
    const std::string host = stack_.settings.host == "0.0.0.0" ? "127.0.0.1" : stack_.settings.host;
    pool_ctx_.invoke_endpoint = "http://" + host + ":" + std::to_string(invoke_server_->port());
    return {};
}

int app::invoke_port() const { return invoke_server_ ? invoke_server_->port() : 0; }

std::error_code app::start_admin() {
    if (!deps_.faults || !deps_.fault_registry) return std::make_error_code(std::errc::invalid_argument);
    auto bad = [](http::parse_failure f) {
        http::response res;
        res.status = f == http::parse_failure::body_too_large          ? 413
                     : f == http::parse_failure::header_too_large      ? 431
                     : f == http::parse_failure::request_line_too_long ? 414
                     : f == http::parse_failure::request_timeout       ? 408
                                                                       : 400;
        res.set("Content-Type", "application/json");
        res.body = f == http::parse_failure::body_too_large
                       ? "{\"message\":\"request body over 1 MiB\"}\n"
                   : f == http::parse_failure::request_timeout
                       ? "{\"message\":\"the request did not arrive in full in time\"}\n"
                       : "{\"message\":\"malformed HTTP request\"}\n";
        return res;
    };
    // Rules and a seed: small documents.
    admin_server_ = make_server(1024 * 1024, bad, [this](http::request req, http::responder respond) {
        respond(admin::handle(req, admin_ctx_));
    });
    if (auto ec = admin_server_->listen(stack_.settings.admin_host, stack_.settings.admin_port))
        return ec;
    admin_access_ = access_for(stack_.settings.admin_host, *admin_server_, stack_.settings.admin_token);
    admin_ctx_.access = &admin_access_;
    return {};
}

http::access_policy app::access_for(const std::string& host, const http::server& s,
                                    std::string token) const {
    http::access_policy p;
    p.listen_host = host;
    p.listen_port = s.port();
    p.bearer_token = std::move(token);
    return p;
}

int app::admin_port() const { return admin_server_ ? admin_server_->port() : 0; }

bool app::standby_settled() const {
    for (const auto& [_, p] : pools_)
        if (!p->standby_settled()) return false;
    return true;
}

void app::start_provisioned() {
    for (auto& [_, p] : pools_) p->start_provisioned();
    for (auto& [_, p] : pools_) p->start_standby();
}

front::function_target* app::find_target(std::string_view name, bool deployed_names) {
    // Routes name the logical id; an SDK caller passes the deployed FunctionName as well.
    if (auto it = targets_.find(name); it != targets_.end()) return it->second.get();
    if (!deployed_names) return nullptr;
    for (auto& [_, t] : targets_)
        if (t->function().function_name == name) return t.get();
    return nullptr;
}

void app::invoke_pool(functions::function_pool& pool, functions::invocation inv) {
    ++in_flight_;
    inv.on_done = [this, done = std::move(inv.on_done)](functions::invocation_result r) {
        if (done) done(std::move(r));
        invocation_ended();
    };
    pool.invoke(std::move(inv));
}

void app::invocation_ended() {
    if (in_flight_ > 0) --in_flight_;
    if (in_flight_ == 0 && draining_) {
        // Not from inside the pool's callback: the pools are shut down from here.
        drain_timer_ = deps_.scheduler->after(0, [this] { finish_shutdown(); });
    }
}

bool app::invoke(const std::string& function, functions::invocation inv) {
    auto it = pools_.find(function);
    if (it == pools_.end()) return false;
    invoke_pool(*it->second, std::move(inv));
    return true;
}

std::vector<std::pair<std::string, functions::pool_stats>> app::stats() const {
    std::vector<std::pair<std::string, functions::pool_stats>> out;
    for (const auto& [name, p] : pools_) out.emplace_back(name, p->stats());
    return out;
}

std::vector<std::pair<std::string, invoke::event_queue::stats>> app::async_stats() const {
    std::vector<std::pair<std::string, invoke::event_queue::stats>> out;
    for (const auto& [name, _] : pools_) out.emplace_back(name, events_->counters(name));
    return out;
}

void app::close_front_ends() {
    executor_->abandon_held();
    if (gateway_server_) gateway_server_->close();
    if (invoke_server_) invoke_server_->close();
    if (admin_server_) admin_server_->close();
    if (sfn_server_) sfn_server_->close();
    if (proxies_) proxies_->close();
}

void app::shutdown(std::uint64_t drain_ms, std::function<void()> done) {
    if (shutting_down_) {
        // A second call: no more draining.
        if (draining_) {
            finish_shutdown();
        } else {
            close_front_ends();
            for (auto& [_, p] : pools_) p->shutdown();
        }
        return;
    }
    shutting_down_ = true;
    on_shutdown_done_ = std::move(done);
    // No schedule fires and no execution goes on from here: a stopped execution's Tasks are
    // cancelled, and a caller waiting on StartSyncExecution gets its ABORTED answer.
    if (schedules_) schedules_->stop();
    if (sfn_server_) sfn_server_->stop_accepting();
    if (sfn_) sfn_->stop_all();
    executor_->stop();
    if (gateway_server_) gateway_server_->stop_accepting();
    if (invoke_server_) invoke_server_->stop_accepting();
    if (admin_server_) admin_server_->stop_accepting();
    // Held requests are never answered; their connections close with the servers.
    executor_->abandon_held();
    // Events waiting for a retry go to their failure destination now; attempts in flight
    // finish (or fail) during the drain and are recorded by the queue.
    events_->shutdown();
    draining_ = true;
    // Whichever comes first: the last in-flight invocation answered, or the drain period
    // (real time, whatever the scale) is over.
    auto& s = *deps_.scheduler;
    drain_timer_ = s.after(in_flight_ == 0 ? 0 : s.modeled_ms(static_cast<double>(drain_ms)),
                           [this] { finish_shutdown(); });
}

void app::finish_shutdown() {
    if (!draining_) return;
    draining_ = false;
    drain_timer_.reset();  // an early end leaves nothing armed to keep the loop running
    // What is still open (a slow answer trickling, a client that keeps its connection) ends
    // with the drain.
    close_front_ends();
    for (auto& [_, p] : pools_) p->shutdown();
    if (auto done = std::move(on_shutdown_done_)) done();
}

}  // namespace coldbrew::app
