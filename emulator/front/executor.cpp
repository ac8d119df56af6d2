#include "emulator/front/executor.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <type_traits>
#include <variant>

namespace coldbrew::front {

namespace mf = models::faults;
using telemetry::request_end;

// What the executor and its requests share; requests hold it weakly, so one that outlives
// the executor (an invocation still running at teardown) counts and records nothing.
struct executor_state {
    executor_deps deps;
    std::list<std::shared_ptr<request>> held;
    admin::request_outcomes gateway, invoke;
    admin::request_outcomes states;  // a state machine's Task invocations
    std::size_t open = 0;
    bool stopping = false;

    // Keeps `r` until its fault lets go: shutdown and a leaving client end what is here.
    void hold(const std::shared_ptr<request>& r);
    admin::request_outcomes& outcomes(mf::front where) {
        if (where == mf::front::states) return states;
        return where == mf::front::invoke ? invoke : gateway;
    }
    void unhold(std::optional<std::list<std::shared_ptr<request>>::iterator>& it) {
        if (!it) return;
        std::shared_ptr<request> keep = **it;  // the erase may drop the last reference to r
        held.erase(*it);
        it.reset();
    }
};

namespace {

std::string fault_header_value(const mf::decision& d) {
    return d.kind + "; rule=" + d.rule + "; action=" + std::string(mf::action_name(d.p.act));
}

// The fault decision on its span: which rule fired and what it planned.
void trace_decision(telemetry::request_trace* t, const mf::decision& d) {
    if (!t || d.rule.empty()) return;
    t->annotate("coldbrew.fault.rule", d.rule);
    t->annotate("coldbrew.fault.kind", d.kind);
    t->annotate("coldbrew.fault.action", std::string(mf::action_name(d.p.act)));
    if (d.overflow) t->annotate("coldbrew.fault.overflow", true);
}

std::string_view outcome_name(functions::outcome o) {
    switch (o) {
    case functions::outcome::success: return "success";
    case functions::outcome::function_error: return "function_error";
    case functions::outcome::throttled: return "throttled";
    case functions::outcome::too_large: return "too_large";
    case functions::outcome::unavailable: return "unavailable";
    }
    return "unknown";
}

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

std::string draw_xray_root(const coldbrew::clock& clock, const models::random_source& rng,
                           std::string_view stream, std::string_view key, std::uint64_t index) {
    char epoch[16];
    std::snprintf(epoch, sizeof(epoch), "%08llx",
                  static_cast<unsigned long long>(clock.epoch_ms() / 1000));
    return std::string("Root=1-") + epoch + "-" + models::random_hex(rng, stream, key, index, 24);
}

void executor_state::hold(const std::shared_ptr<request>& r) {
    if (r->held_it_) return;
    held.push_back(r);
    r->held_it_ = std::prev(held.end());
}

// ---- request -------------------------------------------------------------------------------

request::~request() { write_record(); }  // dropped unanswered: no status

void request::set_route(std::string route_key, std::string function) {
    rec_.route = std::move(route_key);
    rec_.function = std::move(function);
}

void request::start_trace(std::string_view xray, const std::string& id_key, std::string name,
                          std::string_view first_phase) {
    auto st = state_.lock();
    if (!st || !st->deps.traces) return;
    const auto& d = st->deps;
    const auto h = telemetry::parse_xray_header(xray);
    telemetry::request_trace::params tp;
    const auto id = telemetry::otlp_trace_id(h.root);
    tp.trace_id = id ? *id : models::random_hex(*d.rng, "trace-id", id_key, 0, 32);
    if (!telemetry::is_hex_id(tp.trace_id, 32)) tp.trace_id.back() = '1';
    if (id && telemetry::is_hex_id(h.parent, 16)) tp.parent_span_id = h.parent;
    tp.id_key = id_key;
    tp.name = std::move(name);
    tp.start = started_;
    tp.time_scale = d.scheduler->scale();
    trace_ = std::make_shared<telemetry::request_trace>(*d.clock, *d.rng, d.traces, std::move(tp));
    trace_->begin(first_phase);
}

bool request::injected() const noexcept {
    // A rule fired (a zero delay included), the cap let it, and its effect happened.
    return !fault_.rule.empty() && !fault_.overflow && !missed_;
}

void request::count(request_end e) {
    if (std::exchange(counted_, true)) return;
    auto st = state_.lock();
    injected_ = injected();
    // A bug outranks everything; otherwise a fault that happened decides the outcome.
    if (injected_ && e != request_end::emulator_error) e = request_end::injected_fault;
    // The decider counts a fault that fired when its request's outcome is counted, here:
    // injected if it reached the client, missed if not (the handler answered before the
    // kill). Its by-kind, by-rule and by-action totals then equal the injected outcomes at
    // every moment, and never go down.
    if (!fault_.rule.empty() && !fault_.overflow && st && st->deps.faults) {
        if (e == request_end::injected_fault) {
            st->deps.faults->injected(fault_);
        } else if (missed_) {
            if (st->deps.recorder && fault_.id)
                st->deps.recorder->fault_ended(fault_.id, st->deps.scheduler->now_ms());
            st->deps.faults->missed(fault_);
            fault_.id = 0;
        }
    }
    rec_.end = e;
    rec_.fault_kind = e == request_end::injected_fault ? fault_.kind : std::string();
    if (trace_) trace_->annotate_root("coldbrew.outcome", std::string(telemetry::to_string(e)));
    if (!st) return;
    auto& o = st->outcomes(where_);
    switch (e) {
    case request_end::injected_fault: ++o.injected_fault; break;
    case request_end::handler_error: ++o.handler_error; break;
    case request_end::emulator_error: ++o.emulator_error; break;
    case request_end::served:
    case request_end::client_gone: ++o.served; break;
    }
}

void request::end_fault() {
    if (!fault_.id) return;
    auto st = state_.lock();
    if (st && st->deps.faults) {
        if (st->deps.recorder) st->deps.recorder->fault_ended(fault_.id, st->deps.scheduler->now_ms());
        st->deps.faults->finished(fault_.id);
    }
    fault_.id = 0;
}

void request::release() {
    wait_.reset();
    if (auto st = state_.lock()) st->unhold(held_it_);
}

void request::answer(http::response res, request_end outcome) { send(std::move(res), outcome); }

void request::fail(http::response res) {
    if (answered_) return;
    count(request_end::emulator_error);
    send(std::move(res), request_end::emulator_error);
}

void request::send(http::response res, request_end e) {
    if (std::exchange(answered_, true)) return;
    auto self = shared_from_this();  // release() may drop the list's reference
    release();
    count(e);
    if (injected_) res.set(fault_header, fault_header_value(fault_));
    rec_.status = res.status;
    if (hook_) hook_(res.status, injected_ ? fault_.rule : std::string());

    const auto* slow = injected_ ? std::get_if<mf::actions::slow_response>(&fault_.p.act) : nullptr;
    const bool shaped = slow && slow->bytes_per_s > 0;
    if (trace_) {
        trace_->annotate_root("http.response.status_code", static_cast<std::int64_t>(res.status));
        if (res.status >= 500)
            trace_->set_status(telemetry::status_code::error, "HTTP " + std::to_string(res.status));
        const std::string phase = std::string(mf::to_string(where_)) + ".send";
        if (shaped) {
            trace_->begin_final("network.shaping");
            trace_->annotate("coldbrew.direction", std::string("to_client"));
            trace_->annotate("coldbrew.bytes_per_s", slow->bytes_per_s);
        } else {
            trace_->begin_final(phase);
        }
    }

    // The server calls on_finished once the answer is handed over, or drops it unused when
    // the connection is already gone; either way the fault ends and the record is written.
    struct finisher {
        std::shared_ptr<request> r;
        bool shaped = false;
        bool done = false;
        void run() {
            if (std::exchange(done, true)) return;
            r->end_fault();
            if (r->trace_) {
                if (shaped) r->trace_->begin_final(std::string(mf::to_string(r->where_)) + ".send");
                r->trace_->finish();
            }
            r->write_record();
        }
        ~finisher() {
            if (done) return;
            r->rec_.status = 0;
            run();
        }
    };
    auto f = std::make_shared<finisher>();
    f->r = self;
    f->shaped = shaped;
    http::send_options opts;
    if (shaped) {
        // The fault lasts while the answer trickles, at the modeled rate made real.
        auto st = state_.lock();
        opts.bytes_per_s = st ? st->deps.scheduler->real_rate(slow->bytes_per_s) : slow->bytes_per_s;
    } else {
        end_fault();
    }
    opts.on_finished = [f] { f->run(); };
    respond_.send(std::move(res), opts);
    if (!shaped && trace_) trace_->finish();
}

void request::reset_connection() {
    if (std::exchange(answered_, true)) return;
    auto self = shared_from_this();
    release();
    count(request_end::served);
    if (hook_) hook_(0, injected_ ? fault_.rule : std::string());
    end_fault();
    respond_.reset();
    if (trace_) {
        if (!trace_->sealed()) trace_->set_status(telemetry::status_code::error, "connection reset");
        trace_->finish();
    }
    write_record();
}

void request::hold() {
    if (std::exchange(answered_, true)) return;
    holding_ = true;
    count(request_end::served);
}

void request::abandon(const char* why) {
    auto self = shared_from_this();
    const bool was_held = holding_;
    if (!answered_) {
        answered_ = true;
        count(request_end::served);
    }
    release();
    end_fault();
    if (trace_) {
        if (!trace_->sealed())
            trace_->set_status(telemetry::status_code::error,
                               was_held ? "held without an answer" : why);
        trace_->finish();
    }
    respond_.reset();
    write_record();
}

void request::on_client_gone() {
    // Only what a fault holds ends here. A request waiting for its function keeps going: a
    // half-closed client (shutdown(SHUT_WR), `nc -N`) still reads its answer, and one that
    // left is recorded as gone when the answer finds no connection.
    if (recorded_ || !held_it_) return;
    abandon("abandoned: client gone");
}

void request::write_record() noexcept {
    if (std::exchange(recorded_, true)) return;
    auto st = state_.lock();
    if (st && st->open > 0) --st->open;
    auto stats = stats_.lock();
    if (!stats || !clock_) return;
    try {
        const auto now = clock_->steady();
        if (st) rec_.start_ms = ms_between(st->deps.stats_origin, started_);
        rec_.latency_ms = ms_between(started_, now);
        // Nothing else explains a request without an answer: its client left first.
        if (rec_.status == 0 && rec_.end == request_end::served) rec_.end = request_end::client_gone;
        stats->record(rec_);
    } catch (...) {
        // Telemetry never takes a request down (this may run in a destructor).
    }
}

// ---- executor ------------------------------------------------------------------------------

executor::executor(executor_deps deps) : state_(std::make_shared<executor_state>()) {
    state_->deps = std::move(deps);
}

executor::~executor() { abandon_held(); }

std::shared_ptr<request> executor::begin(mf::front where, const http::request& req,
                                         http::responder respond) {
    auto r = std::shared_ptr<request>(new request());
    const auto& d = state_->deps;
    r->state_ = state_;
    r->stats_ = d.stats;
    r->clock_ = d.clock;
    r->where_ = where;
    r->started_ = d.clock->steady();
    r->respond_ = std::move(respond);
    r->rec_.front = std::string(mf::to_string(where));
    r->rec_.method = req.method;
    // Until the front end finds more. Never the client's own path or name: label values stay
    // bounded by the stack.
    r->rec_.route = where == mf::front::gateway ? "(no route)" : "(malformed)";
    ++state_->open;
    // A client that leaves ends what a fault holds at once: its slot of max_active_faults
    // and its file descriptor are freed, and its record says so.
    r->respond_.on_close([w = std::weak_ptr<request>(r)] {
        if (auto p = w.lock()) p->on_client_gone();
    });
    return r;
}

void executor::run(const std::shared_ptr<request>& r, std::unique_ptr<protocol> proto,
                   const mf::request_facts& facts, function_target& target,
                   functions::invocation inv) {
    if (r->answered_) return;  // its client left while the front end read it
    r->proto_ = std::move(proto);
    if (auto call = r->proto_->authorizer_request()) {
        authorize(r, std::move(*call), facts, target, std::move(inv));
        return;
    }
    decide(r, facts, target, std::move(inv));
}

void executor::decide(const std::shared_ptr<request>& r, const mf::request_facts& facts,
                      function_target& target, functions::invocation inv) {
    auto& d = state_->deps;
    // The one decision point: every routed request is decided before anything else happens
    // to it (Envoy's fault filter sits before the router for the same reason). A fault that
    // fired on the request's authorizer is the request's one fault.
    if (r->trace_) r->trace_->begin("fault.decision");
    // The authorizer's fault was carried out on the authorizer's call: the integration then
    // runs as planned for no fault (no second delay, no kill of the function).
    if (r->authorizer_fault_) {
        r->proto_->integration_request(inv, r->trace_.get());
        integrate(r, target, std::move(inv));
        return;
    }
    if (d.faults) {
        auto f = facts;
        f.counted_by_caller = true;  // see request::count
        // One reading of the clock: the decider and the run record get the same time.
        const double now = d.scheduler->now_ms();
        if (d.recorder) r->record_id_ = d.recorder->request(f, now, d.recorder->parent_of(inv.trace_id));
        r->fault_ = d.faults->decide(f, now);
        if (d.recorder) d.recorder->decided(r->record_id_, r->fault_);
        inv.recorded_request = r->record_id_;
        if (!r->fault_.log_line.empty() && d.decisions) d.decisions->write(r->fault_.log_line);
        trace_decision(r->trace_.get(), r->fault_);
    }
    r->proto_->integration_request(inv, r->trace_.get());
    // An injected delay is front-side latency before the function is called, so the
    // integration timeout starts after it.
    after_delay(r, [this, r, &target, inv = std::move(inv)]() mutable {
        execute(r, target, std::move(inv));
    });
}

void executor::after_delay(const std::shared_ptr<request>& r, std::function<void()> go) {
    const double delay_ms = r->fault_.p.delay_ms;
    if (delay_ms <= 0) {
        go();
        return;
    }
    if (r->trace_) {
        r->trace_->begin("fault.delay");
        r->trace_->annotate_modeled(delay_ms);
    }
    state_->hold(r);
    r->wait_ = state_->deps.scheduler->after(delay_ms, [this, r, go = std::move(go)] {
        r->release();
        if (state_->stopping) {
            r->send(r->proto_->unavailable(), request_end::served);
            return;
        }
        go();
    });
}

void executor::authorize(const std::shared_ptr<request>& r, protocol::authorizer_call call,
                         const mf::request_facts& facts, function_target& target,
                         functions::invocation inv) {
    auto& d = state_->deps;
    const auto& fn = call.target->function();
    if (r->trace_) r->trace_->begin("fault.decision");
    if (d.faults) {
        auto f = facts;
        f.function = fn.name;
        f.function_name = fn.function_name;
        f.authorizer = true;
        f.counted_by_caller = true;  // see request::count
        const double now = d.scheduler->now_ms();
        if (d.recorder) r->record_id_ = d.recorder->request(f, now);
        r->fault_ = d.faults->decide(f, now);
        if (d.recorder) d.recorder->decided(r->record_id_, r->fault_);
        call.inv.recorded_request = r->record_id_;
        r->authorizer_fault_ = !r->fault_.rule.empty();
        if (!r->fault_.log_line.empty() && d.decisions) d.decisions->write(r->fault_.log_line);
        trace_decision(r->trace_.get(), r->fault_);
    }
    // The authorizer's latency (integrationLatency) counts from here, an injected delay in it
    // (which is latency of its call, before it is invoked).
    const auto called = d.clock->steady();
    after_delay(r, [this, r, call = std::move(call), called, facts, &target,
                    inv = std::move(inv)]() mutable {
        call_authorizer(r, std::move(call), called, facts, target, std::move(inv));
    });
}

void executor::call_authorizer(const std::shared_ptr<request>& r, protocol::authorizer_call call,
                               std::chrono::steady_clock::time_point called,
                               const mf::request_facts& facts, function_target& target,
                               functions::invocation inv) {
    auto& proto = *r->proto_;
    auto& authorizer = *call.target;
    if (r->trace_) {
        r->trace_->begin("gateway.authorizer");
        r->trace_->annotate("faas.invoked_name", authorizer.function().name);
    }
    // The plan acts on the authorizer's invocation; what the client then gets is the
    // gateway's answer to that authorizer's result.
    auto result_of = [](functions::outcome kind) {
        functions::invocation_result res;
        res.kind = kind;
        return res;
    };
    std::visit(
        [&](auto& a) {
            using A = std::decay_t<decltype(a)>;
            namespace act = mf::actions;
            if constexpr (std::is_same_v<A, act::phantom_before>) {
                lose(r, false, a.client, authorizer, std::move(call.inv));
            } else if constexpr (std::is_same_v<A, act::phantom_after>) {
                lose(r, true, a.client, authorizer, std::move(call.inv));
            } else if constexpr (std::is_same_v<A, act::gateway_error>) {
                r->send(proto.service_error(a.status), request_end::served);
            } else if constexpr (std::is_same_v<A, act::handler_error>) {
                auto res = result_of(functions::outcome::function_error);
                res.error_type = a.error_type;
                res.payload = nlohmann::json{{"errorMessage", a.error_message},
                                             {"errorType", a.error_type}}
                                  .dump();
                authorized(r, res, called, facts, target, std::move(inv));
            } else if constexpr (std::is_same_v<A, act::throttle>) {
                auto res = result_of(functions::outcome::throttled);
                res.throttle_reason = a.reason;
                authorized(r, res, called, facts, target, std::move(inv));
            } else if constexpr (std::is_same_v<A, act::reset>) {
                r->reset_connection();
            } else {
                if constexpr (std::is_same_v<A, act::function_exit>)
                    call.inv.kill_after_ms = a.kill_after_ms;
                // pass and slow_response invoke as usual; refuse and hang are dependency-front
                // actions, never planned here.
                static_assert(std::is_same_v<A, act::pass> || std::is_same_v<A, act::slow_response> ||
                              std::is_same_v<A, act::function_exit> ||
                              std::is_same_v<A, act::refuse> || std::is_same_v<A, act::hang>);
                call.inv.trace = nullptr;  // its time is the gateway.authorizer span
                call.inv.on_done = [this, r, called, facts, &target,
                                    inv = std::move(inv)](functions::invocation_result res) mutable {
                    if (r->answered_) return;
                    authorized(r, res, called, facts, target, std::move(inv));
                };
                authorizer.invoke(std::move(call.inv));
            }
        },
        r->fault_.p.act);
}

void executor::authorized(const std::shared_ptr<request>& r, const functions::invocation_result& res,
                          std::chrono::steady_clock::time_point called,
                          const mf::request_facts& facts, function_target& target,
                          functions::invocation inv) {
    const auto& d = state_->deps;
    // The authorizer answered before an injected kill: no fault reached the client.
    if (mf::is<mf::actions::function_exit>(r->fault_.p) && res.kind == functions::outcome::success)
        r->missed_ = true;
    const double latency_ms = d.scheduler->modeled_ms(ms_between(called, d.clock->steady()));
    if (r->trace_) {
        r->trace_->annotate("faas.coldstart", res.cold_start);
        r->trace_->annotate("coldbrew.authorizer.outcome",
                            std::string(outcome_name(res.kind)));
    }
    if (auto early = r->proto_->after_authorizer(res, latency_ms)) {
        r->send(std::move(early->res), early->outcome);
        return;
    }
    decide(r, facts, target, std::move(inv));
}

void executor::execute(const std::shared_ptr<request>& r, function_target& target,
                       functions::invocation inv) {
    auto& proto = *r->proto_;
    std::visit(
        [&](auto& a) {
            using A = std::decay_t<decltype(a)>;
            namespace act = mf::actions;
            if constexpr (std::is_same_v<A, act::phantom_before>) {
                lose(r, false, a.client, target, std::move(inv));
            } else if constexpr (std::is_same_v<A, act::phantom_after>) {
                lose(r, true, a.client, target, std::move(inv));
            } else if constexpr (std::is_same_v<A, act::gateway_error>) {
                r->send(proto.service_error(a.status), request_end::served);
            } else if constexpr (std::is_same_v<A, act::handler_error>) {
                r->send(proto.handler_error(a.error_type, a.error_message), request_end::served);
            } else if constexpr (std::is_same_v<A, act::throttle>) {
                r->send(proto.throttled(a.reason), request_end::served);
            } else if constexpr (std::is_same_v<A, act::reset>) {
                r->reset_connection();
            } else if constexpr (std::is_same_v<A, act::function_exit>) {
                inv.kill_after_ms = a.kill_after_ms;
                integrate(r, target, std::move(inv));
            } else {
                // pass and slow_response invoke as usual (a slow answer is paced as it is
                // sent); refuse and hang are dependency-front actions, never planned here.
                static_assert(std::is_same_v<A, act::pass> || std::is_same_v<A, act::slow_response> ||
                              std::is_same_v<A, act::refuse> || std::is_same_v<A, act::hang>);
                integrate(r, target, std::move(inv));
            }
        },
        r->fault_.p.act);
}

void executor::lose(const std::shared_ptr<request>& r, bool after, mf::client_outcome client,
                    function_target& target, functions::invocation inv) {
    // The client's wait is the fault's; a phantom-after invocation runs untraced beside it.
    if (r->trace_) r->trace_->begin("fault.phantom");
    switch (client) {
    case mf::client_outcome::timeout:
        state_->hold(r);
        r->wait_ = state_->deps.scheduler->after(r->proto_->lost_wait_ms(), [r] {
            r->send(r->proto_->lost_answer(), request_end::served);
        });
        break;
    case mf::client_outcome::hang:
        r->hold();
        state_->hold(r);
        spdlog::info("request held without an answer  (fault {})", r->fault_.rule);
        break;
    case mf::client_outcome::reset:
        // Phantom-after: the answer is lost on its way back, so the reset waits for it, held
        // (a client that leaves first ends the fault then).
        if (!after) {
            r->reset_connection();
        } else {
            state_->hold(r);
        }
        break;
    }
    if (!after) return;
    // The function runs and its side effects happen; its answer goes nowhere.
    const bool reset_after = client == mf::client_outcome::reset;
    inv.on_done = [r, reset_after](functions::invocation_result) {
        if (reset_after) r->reset_connection();
    };
    inv.trace = nullptr;
    target.invoke(std::move(inv));
}

void executor::integrate(const std::shared_ptr<request>& r, function_target& target,
                         functions::invocation inv) {
    auto& proto = *r->proto_;
    if (auto real_ms = proto.integration_timeout_real_ms()) {
        // Real time on a modeled clock: the scheduler gives back what it is handed.
        auto& s = *state_->deps.scheduler;
        r->wait_ = s.after(s.modeled_ms(*real_ms), [r] {
            r->send(r->proto_->timed_out(), request_end::handler_error);
        });
    }
    inv.on_done = [r](functions::invocation_result res) {
        if (r->answered_) return;
        if (r->trace_)
            r->trace_->begin(std::string(mf::to_string(r->where_)) + ".response_mapping");
        r->rec_.cold_start = res.cold_start;
        // The handler answered before the injected kill: no fault reached the client.
        if (mf::is<mf::actions::function_exit>(r->fault_.p) &&
            res.kind == functions::outcome::success)
            r->missed_ = true;
        auto m = r->proto_->map_result(res);
        r->send(std::move(m.res), m.handler_caused ? request_end::handler_error : request_end::served);
    };
    inv.trace = r->trace_;
    target.invoke(std::move(inv));
}

std::function<http::response(http::parse_failure)> executor::recording_parse_failures(
    mf::front where, std::function<http::response(http::parse_failure)> answer) {
    return [w = std::weak_ptr<executor_state>(state_), where,
            answer = std::move(answer)](http::parse_failure f) {
        auto res = answer(f);
        auto st = w.lock();
        if (!st) return res;
        ++st->outcomes(where).served;  // the front's own 400/413/431
        if (auto s = st->deps.stats) {
            telemetry::request_record r;
            r.front = std::string(mf::to_string(where));
            r.route = "(malformed)";
            r.status = res.status;
            r.start_ms = ms_between(st->deps.stats_origin, st->deps.clock->steady());
            s->record(r);
        }
        return res;
    };
}

void executor::abandon_held() {
    auto all = std::move(state_->held);
    state_->held.clear();
    for (auto& r : all) {
        r->held_it_.reset();
        r->abandon("abandoned: coldbrew stopping");
    }
}

void executor::stop() { state_->stopping = true; }
bool executor::stopping() const noexcept { return state_->stopping; }

const admin::request_outcomes& executor::outcomes(mf::front where) const {
    return state_->outcomes(where);
}

void executor::reset_counters() {
    state_->gateway = {};
    state_->invoke = {};
    state_->states = {};
}

std::size_t executor::held_count() const noexcept { return state_->held.size(); }
std::size_t executor::open_requests() const noexcept { return state_->open; }

}  // namespace coldbrew::front
