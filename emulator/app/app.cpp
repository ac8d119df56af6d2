#include "emulator/app/app.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>

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
    pool_ctx_.cpu = deps_.cpu;
    pool_ctx_.memory = deps_.memory;
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

    admin_ctx_.faults = deps_.faults;
    admin_ctx_.registry = deps_.fault_registry;
    admin_ctx_.configured_rules = &deps_.configured_rules;
    admin_ctx_.configured_max_active = stack_.settings.faults.max_active_faults;
    admin_ctx_.decisions = deps_.decisions;
    admin_ctx_.rule_warnings = [this](const mf::rule& r) { return config::rule_warnings(stack_, r); };
    admin_ctx_.now_ms = [this] { return deps_.scheduler->now_ms(); };
    admin_ctx_.request_counters = [this] {
        return nlohmann::json{{"gateway", gateway_outcomes().to_json()},
                              {"invoke", invoke_outcomes().to_json()}};
    };
    admin_ctx_.function_counters = [this] {
        auto out = nlohmann::json::object();
        for (const auto& [name, st] : stats()) {
            out[name] = {{"invocations", st.invocations},   {"cold_starts", st.cold_starts},
                         {"throttles", st.throttles},       {"waits", st.waits},
                         {"function_errors", st.function_errors}, {"timeouts", st.timeouts},
                         {"evictions", st.evictions},       {"provisioned", st.provisioned},
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
    if (proxies_) admin_ctx_.proxy_counters = [this] { return proxies_->to_json(); };
    admin_ctx_.request_stats = request_stats_.get();
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
    if (gateway_server_) gateway_server_->close();
    if (invoke_server_) invoke_server_->close();
    if (admin_server_) admin_server_->close();
    executor_->abandon_held();
    drain_timer_.reset();
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

std::error_code app::start_dependencies(std::string& failed) {
    if (!proxies_) return {};
    return proxies_->start(failed);
}

std::unique_ptr<http::server> app::make_server(std::size_t body_limit,
                                              std::function<http::response(http::parse_failure)> bad,
                                              http::server::handler handle) {
    http::server_options opts;
    opts.body_limit = body_limit;
    opts.on_parse_failure = std::move(bad);
    return std::make_unique<http::server>(deps_.loop, std::move(handle), std::move(opts));
}

std::error_code app::start_gateway() {
    gateway_server_ = make_server(front::gateway_max_payload_bytes, gateway_->parse_failure_answer(),
                                  [this](http::request req, http::responder respond) {
                                      gateway_->handle(std::move(req), std::move(respond));
                                  });
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
        res.status = f == http::parse_failure::body_too_large     ? 413
                     : f == http::parse_failure::header_too_large ? 431
                                                                  : 400;
        res.set("Content-Type", "application/json");
        res.body = f == http::parse_failure::body_too_large
                       ? "{\"message\":\"request body over 1 MiB\"}\n"
                       : "{\"message\":\"malformed HTTP request\"}\n";
        return res;
    };
    // Rules and a seed: small documents.
    admin_server_ = make_server(1024 * 1024, bad, [this](http::request req, http::responder respond) {
        respond(admin::handle(req, admin_ctx_));
    });
    return admin_server_->listen(stack_.settings.host, stack_.settings.admin_port);
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
