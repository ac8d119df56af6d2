#include "emulator/functions/execution_environment.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "emulator/functions/function_model.hpp"
#include "emulator/http/access.hpp"
#include "emulator/supervisor/supervisor.hpp"
#include "models/compute/cpu.hpp"

namespace coldbrew::functions {

namespace rt = runtime_api;

namespace {
// CPU time the process's main thread has run, ns: the first field of /proc/<pid>/schedstat
// (proc(5)), nanosecond-exact where /proc/<pid>/stat counts clock ticks. The main thread is
// where a runtime runs the handler (node's event loop, python's interpreter, a bootstrap's
// loop); helper threads (V8's GC, a handler's own threads) are not counted. nullopt when the
// kernel does not report it (no CONFIG_SCHED_INFO) or the process is gone.
std::optional<std::uint64_t> main_thread_cpu_ns(int pid) {
    if (pid <= 0) return std::nullopt;
    std::ifstream in("/proc/" + std::to_string(pid) + "/schedstat");
    std::uint64_t ns = 0;
    if (!(in >> ns)) return std::nullopt;
    return ns;
}

// Lambda limits init to 10 s; an init that overruns is retried inside the first invoke under
// the function timeout ("suppressed init", [LIFE]). Locally the one init simply gets both.
constexpr std::chrono::milliseconds init_limit{10000};

// The environment's memory group: one per environment for the app's life (ids are not
// reused), the same name as its CPU group, which on cgroup v2 is the same group. Named by the
// id the environment was started with: a standby environment keeps its group when claimed.
std::string memory_group(const config::function& fn, std::uint64_t id) {
    return fn.name + "-" + std::to_string(id);
}

// MemorySize covers everything in the environment from its start, runtime included, as on
// Lambda; without a limiter (or when the move fails) memory is measured only.
void limit_memory(const pool_context& ctx, const config::function& fn, std::uint64_t id, int pid) {
    if (!ctx.memory) return;
    const auto bytes = static_cast<std::uint64_t>(fn.memory_mb) << 20;
    if (auto ec = ctx.memory->limit(pid, memory_group(fn, id), bytes))
        spdlog::debug("{}: MemorySize not enforced for environment {}: {}", fn.name, id,
                      ec.message());
}

bool killed_for_memory(const pool_context& ctx, const config::function& fn, std::uint64_t id) {
    return ctx.memory && ctx.memory->oom_killed(memory_group(fn, id));
}

// Max Memory Used: the process tree's high-water mark, or the group's peak when that is
// higher (it also counts page cache and processes that already exited), never above Memory
// Size where it is enforced; after an OOM kill it is Memory Size, as Lambda reports it.
int max_memory_used_mb(const pool_context& ctx, const config::function& fn, std::uint64_t id,
                       supervisor::peak_memory_reader& reader, int pid, int so_far_mb) {
    int mb = std::max(so_far_mb, reader.mb(pid));
    if (!ctx.memory) return mb;
    const std::string group = memory_group(fn, id);
    if (ctx.memory->oom_killed(group)) return fn.memory_mb;
    if (auto peak = ctx.memory->peak_bytes(group)) {
        mb = std::max(mb, static_cast<int>((*peak + (1u << 20) - 1) >> 20));
        mb = std::min(mb, fn.memory_mb);
    }
    return mb;
}
}  // namespace

execution_environment::execution_environment(function_pool& pool, pool_context& ctx,
                                             const config::function& fn, std::uint64_t id,
                                             kind k)
    : pool_(pool), ctx_(ctx), fn_(fn), id_(id), group_id_(id), kind_(k) {
    // A provisioned environment was initialised before anyone asked: its first invocation
    // is warm and its REPORT has no Init Duration [pricing: provisioned concurrency].
    cold_ = kind_ != kind::provisioned;
}

execution_environment::~execution_environment() {
    detach_dependencies();
    // Nothing of this environment may run once it is gone.
    timer_.reset();
    init_timer_.reset();
    kill_timer_.reset();
    payload_timer_.reset();
    if (runtime_api_) runtime_api_->close();
    process_.reset();  // kills the process group if it is still running
    if (ctx_.cpu && !cgroup_name_.empty()) ctx_.cpu->release(cgroup_name_);
    if (ctx_.memory) ctx_.memory->release(memory_group(fn_, group_id_));
}

// The modeled Init Duration is what a client of AWS would wait, so it is waited from the
// moment the cold start is asked for; the process's own start (or what is left of it, for a
// standby environment) runs inside that wait instead of being added to it.
void execution_environment::begin_cold_start(double modeled_init_ms) {
    requested_at_ = ctx_.clock->steady();
    modeled_init_ms_ = std::max(0.0, modeled_init_ms);
    if (*modeled_init_ms_ <= 0) {
        modeled_done_ = true;
        try_open_init_gate();
        return;
    }
    init_timer_ = ctx_.scheduler->after(*modeled_init_ms_, [this] {
        modeled_done_ = true;
        try_open_init_gate();
    });
}

int execution_environment::read_memory_mb() {
    peak_memory_mb_ = max_memory_used_mb(ctx_, fn_, group_id_, memory_reader_, pid(), peak_memory_mb_);
    return peak_memory_mb_;
}

void execution_environment::claim(std::uint64_t id) {
    id_ = id;
    kind_ = kind::on_demand;
}

void execution_environment::try_open_init_gate() {
    if (init_gate_open_ || !modeled_done_ || !local_ready_) return;
    init_gate_open_ = true;
    using ms = std::chrono::duration<double, std::milli>;
    const auto now = ctx_.clock->steady();
    if (local_ready_at_ > requested_at_)
        local_init_after_request_ms_ = ms(local_ready_at_ - requested_at_).count();
    // Measured against where the model put the end of the init, not against when its timer
    // fired: a loop busy starting processes fires it late, and the client waits for that too.
    // Whatever this machine added beyond the model (a local init still running, a late timer)
    // is the overrun; a few milliseconds are the loop's timer granularity, not an overrun.
    constexpr double timer_granularity_ms = 5.0;
    const double late_ms = ms(now - requested_at_).count() -
                           ctx_.scheduler->real_ms(modeled_init_ms_.value_or(0));
    if (late_ms >= timer_granularity_ms) init_overrun_ms_ = late_ms;
    if (alive_ && current_ && phase_ == rt::phase::waiting && held_next_) deliver();
}

double execution_environment::waited_init_ms() const {
    // In modeled ms, as every figure of the REPORT line: a failure 80 ms into a cold start at
    // time_scale 0.1 was 800 modeled ms in.
    const auto since = modeled_init_ms_ ? requested_at_ : spawned_at_;
    return ctx_.scheduler->modeled_ms(ms_since(since));
}

double execution_environment::ms_since(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::milli>(ctx_.clock->steady() - t).count();
}

double execution_environment::function_timeout_ms() const {
    // The handler runs on the real clock (its Lambda-Runtime-Deadline-Ms is real), so its
    // timeout is real time, handed to the scheduler as the modeled span that lasts as long.
    return ctx_.scheduler->modeled_ms(fn_.timeout_s * 1000.0);
}

void execution_environment::start_timer(double modeled_ms) {
    // The one deadline an environment has: init + invoke, or invoke. When it passes, the
    // invocation ends as Sandbox.Timedout and the environment is reset [spec §1.7].
    timer_ = ctx_.scheduler->after(modeled_ms, [this] {
        log(telemetry::timed_out_line(ctx_.clock->epoch_ms(), current_id_, fn_.timeout_s));
        fail_and_reset("Sandbox.Timedout",
                       rt::platform_error_body("Sandbox.Timedout", current_id_,
                                               telemetry::timed_out_message(fn_.timeout_s)),
                       "timeout");
    });
}

void execution_environment::stop_timer() { timer_.reset(); }

bool execution_environment::start(std::string& error_type, std::string& error_message) {
    auto launch = launcher_for(fn_, ctx_.runtimes_dir);
    if (launch.file.empty()) {
        // [CUSTOM][TS-INV]: no executable bootstrap → Runtime.InvalidEntrypoint.
        error_type = "Runtime.InvalidEntrypoint";
        error_message = launch.args.empty() ? "Couldn't find valid bootstrap(s): [" +
                                                  (fn_.code_dir / "bootstrap").string() + "]"
                                            : launch.args.front();
        return false;
    }

    http::server_options opts;
    // Larger than the 6 MB response limit, so an oversized response is read and answered
    // with Lambda's 413 and Function.ResponseSizeTooLarge instead of a dropped connection.
    opts.body_limit = 32 * 1024 * 1024;
    opts.on_parse_failure = [](http::parse_failure f) {
        if (f == http::parse_failure::body_too_large)
            return rt::error_response(413, "RequestEntityTooLarge",
                                      "Exceeded maximum allowed payload size (" +
                                          std::to_string(rt::max_response_bytes) + " bytes).");
        return rt::error_response(400, "InvalidRequest", "Malformed HTTP request");
    };
    runtime_api_ = std::make_unique<http::server>(
        ctx_.loop,
        [this](http::request req, http::responder respond) {
            on_runtime_call(std::move(req), std::move(respond));
        },
        std::move(opts));
    if (auto ec = runtime_api_->listen("127.0.0.1", 0)) {
        error_type = "Sandbox.Failure";
        error_message = "Runtime API listener failed: " + ec.message();
        return false;
    }

    // The environment's own network: its dependency listeners and its bandwidth.
    if (pool_.model_.bandwidth_bytes_per_s > 0)
        link_ = std::make_shared<proxy::environment_link>(pool_.model_.bandwidth_bytes_per_s,
                                                          pool_.model_.bandwidth_burst_bytes,
                                                          proxy::modeled_now_us(*ctx_.scheduler));
    env_key_ = ++ctx_.environments_started;
    std::vector<std::pair<std::string, std::string>> dependency_env;
    if (ctx_.proxies) dependency_env = ctx_.proxies->attach(env_key_, fn_.name, link_);
    launch.env =
        pool_.environment_for(runtime_api_->port(), id_, provisioned(), dependency_env);
    launch.cwd = fn_.code_dir.string();
    // Everything the handler starts is contained in the environment: the group it shares
    // with the CPU and memory limits, and its Runtime API address as the mark its
    // descendants inherit.
    launch.group = memory_group(fn_, group_id_);
    for (const auto& e : launch.env)
        if (e.rfind("AWS_LAMBDA_RUNTIME_API=", 0) == 0) launch.mark = e;
    supervisor::process_callbacks cbs;
    cbs.on_stdout = [this](std::string_view line) { log(line); };
    cbs.on_stderr = [this](std::string_view line) { log(line); };
    cbs.on_exit = [this](supervisor::exit_status st) { on_process_exit(st); };
    std::error_code ec;
    spawned_at_ = ctx_.clock->steady();
    process_ = ctx_.supervisor->spawn(launch, std::move(cbs), ec);
    if (!process_) {
        error_type = "Runtime.InvalidEntrypoint";
        error_message = "Couldn't start " + launch.file + ": " + ec.message();
        return false;
    }
    limit_memory(ctx_, fn_, group_id_, process_->pid());
    alive_ = true;
    phase_ = rt::phase::initializing;
    return true;
}

// CPU share follows memory, as on Lambda (1,769 MB = 1 vCPU), from the end of the local init
// on: the modeled Init Duration already stands for the runtime's start on Lambda's CPU, and a
// throttled local start would count it twice.
void execution_environment::limit_cpu() {
    if (!ctx_.cpu || !process_ || !cgroup_name_.empty()) return;
    cgroup_name_ = memory_group(fn_, group_id_);
    if (auto ec = ctx_.cpu->limit(process_->pid(), cgroup_name_, models::vcpu_share(fn_.memory_mb))) {
        spdlog::debug("{}: CPU share not applied to environment {}: {}", fn_.name, id_,
                      ec.message());
        cgroup_name_.clear();
    }
}

void execution_environment::assign(invocation inv, std::string request_id) {
    current_ = std::move(inv);
    current_id_ = std::move(request_id);
    delivered_ = false;
    assigned_at_ = ctx_.clock->steady();
    capturing_ = current_->capture_log;
    captured_.clear();
    if (phase_ == rt::phase::waiting && init_gate_open_) {
        deliver();
    } else if (phase_ == rt::phase::initializing ||
               (phase_ == rt::phase::waiting && !init_gate_open_)) {
        // The init limit is real time too, like the function timeout; the modeled init is
        // allowed on top of both, so a slow local start is not cut short by the model.
        const double init_limit_ms = std::chrono::duration<double, std::milli>(init_limit).count();
        start_timer(ctx_.scheduler->modeled_ms(init_limit_ms) + modeled_init_ms_.value_or(0) +
                    function_timeout_ms());
    } else {
        // Answered but not back on /next yet: if the runtime never returns (stuck after its
        // response), the invocation still ends at the function timeout.
        start_timer(function_timeout_ms());
    }
}

void execution_environment::deliver() {
    auto respond = std::move(held_next_);
    held_next_ = http::responder();
    phase_ = rt::phase::invoking;
    delivered_ = true;
    delivered_at_ = ctx_.clock->steady();
    cpu_at_delivery_ns_.reset();
    if (current_ && current_->recorded_invocation) cpu_at_delivery_ns_ = main_thread_cpu_ns(pid());
    log(telemetry::start_line(current_id_));

    rt::invocation_headers h;
    h.request_id = current_id_;
    h.deadline_ms = ctx_.clock->epoch_ms() + static_cast<std::int64_t>(fn_.timeout_s) * 1000;
    h.invoked_function_arn = "arn:aws:lambda:" + ctx_.settings->region + ":" +
                             ctx_.settings->account_id + ":function:" + fn_.function_name;
    h.trace_id = current_->trace_id;
    h.client_context = current_->client_context;
    std::string event = current_->payload;
    start_timer(function_timeout_ms());
    if (current_->kill_after_ms) {
        // An injected crash: the process group dies mid-invocation and the invocation ends
        // through the same path as a handler that crashed by itself (Runtime.ExitError).
        kill_timer_ = ctx_.scheduler->after(*current_->kill_after_ms, [this] {
            if (current_ && delivered_) kill("injected function error");
        });
    }
    // The event crosses the environment's network before the runtime sees it.
    const auto wait = event_wire_us(event.size());
    auto trace = current_->trace;
    if (trace) {
        if (cold_ && !provisioned() && trace->current() == "lambda.init") {
            // Modeled vs real: the span lasts the modeled init as the scheduler waited it, or
            // longer when the local init overran it.
            trace->annotate_modeled(modeled_init_ms_.value_or(0));
            trace->annotate("coldbrew.local_init_ms", local_init_after_request_ms_);
            if (init_overrun_ms_ > 0) trace->annotate("coldbrew.init_overrun_ms", init_overrun_ms_);
        }
        if (wait > 0) begin_shaping(*trace, wait, event.size(), "to_environment");
    }
    after_wire(wait, [respond = std::move(respond), h = std::move(h), event = std::move(event),
                      trace = std::move(trace), cold = cold_]() mutable {
        if (trace) {
            trace->begin("lambda.invoke");
            trace->annotate("faas.invocation_id", h.request_id);
            trace->annotate("faas.coldstart", cold);
        }
        respond(rt::next_response(h, std::move(event)));
    });
}

std::int64_t execution_environment::event_wire_us(std::size_t bytes) {
    if (!link_ || bytes == 0) return 0;
    const auto now = proxy::modeled_now_us(*ctx_.scheduler);
    return link_->to_environment().take_all(bytes, now) - now;
}

std::int64_t execution_environment::response_wire_us(std::size_t bytes, bool streamed) {
    if (!link_ || bytes == 0) return 0;
    const auto now = proxy::modeled_now_us(*ctx_.scheduler);
    if (streamed && ctx_.bandwidth) {
        // A stream is paced by Lambda's streaming rule rather than the bucket: its first
        // 6 MB at the environment's rate, the rest at 2 MBps (model-data §5). coldbrew hands
        // the stream on whole, so the client sees it complete after the modeled stream time.
        const double s = models::bandwidth::streamed_response_seconds(
            *ctx_.bandwidth, link_->modeled_bytes_per_s(), bytes);
        link_->from_environment().take_all(bytes, now);
        return static_cast<std::int64_t>(s * 1e6);
    }
    return link_->from_environment().take_all(bytes, now) - now;
}

void execution_environment::after_wire(std::int64_t wait_us, std::function<void()> then) {
    if (wait_us <= 0) {
        then();
        return;
    }
    payload_timer_ = ctx_.scheduler->after(static_cast<double>(wait_us) / 1000.0, std::move(then));
}

void execution_environment::begin_shaping(telemetry::request_trace& trace, std::int64_t wait_us,
                                          std::size_t bytes, std::string_view direction) const {
    // The wait is modeled (the bucket runs on modeled time): the span states it as it is.
    telemetry::begin_shaping(trace, static_cast<double>(wait_us) / 1000.0, bytes, direction);
}

void execution_environment::detach_dependencies() {
    if (ctx_.proxies && env_key_) ctx_.proxies->detach(env_key_);
    env_key_ = 0;
}

void execution_environment::on_runtime_call(http::request req, http::responder respond) {
    // A web page in a browser on this machine reaches this port too: a cross-origin GET /next
    // would take the runtime's invocation, a POST answer for it. Runtimes send no Origin and
    // name 127.0.0.1 in Host (AWS_LAMBDA_RUNTIME_API), so they pass (emulator/http/access.hpp).
    const http::access_policy runtime_access{"127.0.0.1", runtime_api_->port(), {}};
    if (auto d = http::check_access(req, runtime_access); !d.allowed()) {
        respond(rt::error_response(403, "AccessDeniedException", d.reason));
        return;
    }
    auto c = rt::parse_call(req);
    if (auto rejection = rt::check_call(phase_, current_id_, c)) {
        // An oversized response still ends the invocation, as Lambda does [spec §1.7].
        if (auto* r = std::get_if<rt::response_call>(&c);
            r && rejection->status == 413 && phase_ == rt::phase::invoking) {
            respond(std::move(*rejection));
            nlohmann::ordered_json j;
            j["errorType"] = "Function.ResponseSizeTooLarge";
            j["errorMessage"] = "Response payload size (" + std::to_string(r->body.size()) +
                                " bytes) exceeded maximum allowed payload size (" +
                                std::to_string(rt::max_response_bytes) + " bytes).";
            finish(outcome::function_error, j.dump(), "Function.ResponseSizeTooLarge", "error");
            return;
        }
        respond(std::move(*rejection));
        return;
    }

    if (std::holds_alternative<rt::next_call>(c)) {
        if (phase_ == rt::phase::initializing) {
            local_ready_ = true;
            local_ready_at_ = ctx_.clock->steady();
            limit_cpu();
            if (kind_ == kind::provisioned) {
                init_gate_open_ = true;
                pool_.on_provisioned_ready(*this);
            } else if (kind_ == kind::standby) {
                pool_.on_standby_ready(*this);
            } else {
                try_open_init_gate();
            }
        }
        phase_ = rt::phase::waiting;
        held_next_ = std::move(respond);
        if (current_ && init_gate_open_)
            deliver();
        else if (!current_)
            stop_timer();
        return;
    }
    if (auto* r = std::get_if<rt::response_call>(&c)) {
        // The response crosses the environment's network before Lambda has it: the runtime's
        // POST is answered, and the invocation ends, once its bytes are out.
        const auto wait = response_wire_us(r->body.size(), r->streamed);
        if (wait > 0 && current_ && current_->trace)
            begin_shaping(*current_->trace, wait, r->body.size(), "from_environment");
        after_wire(wait, [this, id = current_id_, respond = std::move(respond),
                          body = std::move(r->body)]() mutable {
            respond(rt::accepted());
            if (current_ && current_id_ == id) finish(outcome::success, std::move(body), "", "");
        });
        return;
    }
    if (auto* e = std::get_if<rt::error_call>(&c)) {
        respond(rt::accepted());
        auto err = rt::normalise_error(e->error_type, e->body);
        finish(outcome::function_error, std::move(err.body), err.error_type, "error");
        return;
    }
    if (auto* ie = std::get_if<rt::init_error_call>(&c)) {
        respond(rt::accepted());
        auto err = rt::normalise_error(ie->error_type, ie->body);
        failed_init_ms_ = waited_init_ms();
        log(telemetry::init_report_error_line(*failed_init_ms_, err.error_type));
        // [OAS]: the init error is served in response to the first invoke; the runtime
        // should exit, and the environment is initialised again next time.
        phase_ = rt::phase::init_failed;
        fail_and_reset(err.error_type, err.body, "error");
        return;
    }
}

void execution_environment::finish(outcome kind, std::string payload, std::string error_type,
                                   std::string status) {
    stop_timer();
    kill_timer_.reset();
    if (!current_) return;
    // Answering may hand this environment its next invocation at once (from the pool's
    // queue), which resets these; the log lines below are about this one.
    const bool delivered = delivered_;
    invocation inv = std::move(*current_);
    current_.reset();
    invocation_result r;
    r.kind = kind;
    r.request_id = current_id_;
    r.payload = std::move(payload);
    r.error_type = std::move(error_type);
    r.duration_ms = delivered ? ms_since(delivered_at_) : 0.0;
    function_pool::answer_timing timing;
    timing.recorded_invocation = inv.recorded_invocation;
    if (delivered && timing.recorded_invocation) {
        using ms = std::chrono::duration<double, std::milli>;
        const auto& s = *ctx_.scheduler;
        timing.duration_ms = s.modeled_ms(r.duration_ms);
        const double waited = s.modeled_ms(ms(delivered_at_ - assigned_at_).count());
        timing.delivery_lag_ms = std::max(0.0, waited - (cold_ ? modeled_init_ms_.value_or(0) : 0.0));
        if (cpu_at_delivery_ns_) {
            if (auto now_ns = main_thread_cpu_ns(pid()); now_ns && *now_ns >= *cpu_at_delivery_ns_)
                timing.cpu_ms = s.modeled_ms(static_cast<double>(*now_ns - *cpu_at_delivery_ns_) / 1e6);
        }
    }
    if (cold_) {
        r.cold_start = true;
        r.modeled_init_ms = modeled_init_ms_.value_or(0);
        // A completed init took the model's figure (what the client waited beyond it is the
        // overrun); an init that failed or never finished states what was waited, so that
        // INIT_REPORT, REPORT and the billed duration agree with the time the caller spent.
        r.init_duration_ms = init_gate_open_ ? *r.modeled_init_ms
                                             : failed_init_ms_.value_or(waited_init_ms());
        if (init_gate_open_) {
            r.local_init_ms = local_init_after_request_ms_;
            if (init_overrun_ms_ > 0) r.init_overrun_ms = init_overrun_ms_;
        }
    }
    cold_ = false;
    if (phase_ == rt::phase::invoking) phase_ = rt::phase::finishing;

    telemetry::report rep;
    rep.request_id = r.request_id;
    rep.duration_ms = r.duration_ms;
    rep.init_duration_ms = r.init_duration_ms;
    rep.modeled_init_ms = r.modeled_init_ms;
    rep.init_overrun_ms = r.init_overrun_ms;
    rep.time_scale = ctx_.scheduler->scale();
    rep.memory_size_mb = fn_.memory_mb;
    rep.status = std::move(status);
    if (rep.status == "error") rep.error_type = r.error_type;

    auto write_report = [&] {
        // What the handler wrote before answering, before its END (the pipes race the socket).
        if (process_) process_->flush_output();
        // After a kill or an exit /proc has nothing left to read; the last reading stands.
        peak_memory_mb_ = max_memory_used_mb(ctx_, fn_, group_id_, memory_reader_, pid(), peak_memory_mb_);
        rep.max_memory_used_mb = peak_memory_mb_;
        // An invocation that never reached the runtime (init failed) still gets its
        // START/END/REPORT, as Lambda logs the failed invoke after its INIT_REPORT.
        if (!delivered) log(telemetry::start_line(rep.request_id));
        log(telemetry::end_line(rep.request_id));
        log(telemetry::report_line(rep));
        // memory_budget_mb counts what the REPORT states; this reading may evict idle
        // environments (this one too, when it is idle already).
        pool_.on_memory_reading(*this, peak_memory_mb_);
    };
    auto on_done = std::move(inv.on_done);
    if (capturing_) {
        // A Tail request returns its log, REPORT included, with the answer.
        write_report();
        capturing_ = false;
        r.log = std::move(captured_);
        captured_.clear();
        pool_.on_done(*this, r, timing);
        if (on_done) on_done(std::move(r));
        return;
    }
    // Answer first: the REPORT line and its /proc read stay off the client's path.
    pool_.on_done(*this, r, timing);
    if (on_done) on_done(std::move(r));
    write_report();
}

void execution_environment::log(std::string_view line) {
    ctx_.logs->write(fn_.name, line);
    if (!capturing_) return;
    captured_.append(line);
    captured_ += '\n';
    // Only the tail is ever returned (4 KB); keep a bounded window of it.
    constexpr std::size_t keep = 64 * 1024;
    if (captured_.size() > 2 * keep) captured_.erase(0, captured_.size() - keep);
}

void execution_environment::fail_and_reset(std::string error_type, std::string body,
                                           std::string status) {
    peak_memory_mb_ = max_memory_used_mb(ctx_, fn_, group_id_, memory_reader_, pid(), peak_memory_mb_);
    // Lambda resets the environment after a timeout, crash or init failure [LIFE]: the
    // process group is killed and the next invocation starts a fresh one.
    alive_ = false;
    end_reason_ = status == "timeout" ? "timeout" : phase_ == rt::phase::init_failed ? "init-error" : "error";
    if (process_) process_->kill();
    held_next_ = http::responder();
    finish(outcome::function_error, std::move(body), std::move(error_type), std::move(status));
}

void execution_environment::on_process_exit(const supervisor::exit_status& st) {
    alive_ = false;
    if (end_reason_.empty()) end_reason_ = "exited: " + st.describe();
    stop_timer();
    init_timer_.reset();
    if (current_ && (delivered_ || phase_ == rt::phase::initializing)) {
        // [spec §1.4] "Runtime exited with error: exit status 42"; exit 0 without a reply is
        // "Runtime exited without providing a reason".
        std::string why = (st.term_signal == 0 && st.exit_code == 0)
                              ? "Runtime exited without providing a reason"
                              : "Runtime exited with error: " + st.describe();
        // Killed by the kernel for going over MemorySize: Lambda's message stays the exit's
        // ("Runtime exited with error: signal: killed") and the type is Runtime.OutOfMemory.
        const std::string type =
            killed_for_memory(ctx_, fn_, group_id_) ? "Runtime.OutOfMemory" : "Runtime.ExitError";
        if (phase_ == rt::phase::initializing) {
            failed_init_ms_ = waited_init_ms();
            log(telemetry::init_report_error_line(*failed_init_ms_, type));
        }
        log("RequestId: " + current_id_ + " Error: " + why);
        log(type);
        finish(outcome::function_error, rt::platform_error_body(type, current_id_, why), type,
               "error");
        pool_.on_exit(*this, std::nullopt, "", end_reason_);
        return;
    }
    // Died between invocations: an invocation waiting for this environment's /next goes back
    // to the pool to be placed again.
    std::optional<invocation> undelivered;
    std::string id;
    if (current_) {
        undelivered = std::move(current_);
        current_.reset();
        id = current_id_;
    }
    pool_.on_exit(*this, std::move(undelivered), std::move(id), end_reason_);
}

void execution_environment::kill(std::string reason) {
    if (end_reason_.empty()) end_reason_ = std::move(reason);
    alive_ = false;
    // Its connections die with it, as on Lambda.
    detach_dependencies();
    if (process_) process_->kill();
}

}  // namespace coldbrew::functions
