#include "emulator/functions/function_pool.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>

#include <spdlog/spdlog.h>

#include "emulator/functions/execution_environment.hpp"

namespace coldbrew::functions {

namespace {

bool is_executable_file(const std::filesystem::path& p) {
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

// AWS_EXECUTION_ENV for managed runtimes, e.g. "AWS_Lambda_nodejs20.x" [ENV]; custom runtimes
// have none.
std::string execution_env(const std::string& runtime) {
    if (starts_with(runtime, "provided")) return "";
    return "AWS_Lambda_" + runtime;
}

}  // namespace

std::string find_executable(const std::string& name, const std::string& path_env) {
    if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
    std::size_t start = 0;
    while (start <= path_env.size()) {
        auto end = path_env.find(':', start);
        if (end == std::string::npos) end = path_env.size();
        std::string dir = path_env.substr(start, end - start);
        if (dir.empty()) dir = ".";
        auto candidate = std::filesystem::path(dir) / name;
        if (is_executable_file(candidate)) return candidate.string();
        start = end + 1;
    }
    return "";
}

supervisor::spawn_options launcher_for(const config::function& fn,
                                       const std::filesystem::path& runtimes_dir) {
    supervisor::spawn_options o;
    const char* path = std::getenv("PATH");
    std::string path_env = path ? path : "/usr/local/bin:/usr/bin:/bin";
    if (starts_with(fn.runtime, "provided")) {
        // Custom runtimes: bootstrap from the code directory, else from a layer (/opt) [CUSTOM].
        std::vector<std::filesystem::path> candidates{fn.code_dir / "bootstrap"};
        for (const auto& layer : fn.layer_dirs) candidates.push_back(layer / "bootstrap");
        for (const auto& c : candidates) {
            if (is_executable_file(c)) {
                o.file = c.string();
                o.args = {o.file};
                return o;
            }
        }
        std::string list;
        for (const auto& c : candidates) list += (list.empty() ? "" : " ") + c.string();
        o.args = {"Couldn't find valid bootstrap(s): [" + list + "]"};
        return o;
    }
    if (starts_with(fn.runtime, "nodejs")) {
        o.file = find_executable("node", path_env);
        if (o.file.empty()) {
            o.args = {"runtime " + fn.runtime + " needs `node` on PATH"};
            return o;
        }
        o.args = {o.file, (runtimes_dir / "node" / "bootstrap.cjs").string()};
        return o;
    }
    if (starts_with(fn.runtime, "python3")) {
        o.file = find_executable("python3", path_env);
        if (o.file.empty()) {
            o.args = {"runtime " + fn.runtime + " needs `python3` on PATH"};
            return o;
        }
        // -u: unbuffered, so print() lines reach the log as they happen, as on Lambda.
        o.args = {o.file, "-u", (runtimes_dir / "python" / "bootstrap.py").string()};
        return o;
    }
    o.args = {"runtime " + fn.runtime + " is not supported"};
    return o;
}

function_pool::function_pool(const config::function& fn, pool_context& ctx) : fn_(fn), ctx_(ctx) {
    reap_timer_ = new uv_timer_t;
    uv_timer_init(ctx_.loop, reap_timer_);
    reap_timer_->data = this;
}

function_pool::~function_pool() {
    shutdown();
    environments_.clear();
    dead_.clear();
    reap_timer_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(reap_timer_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

int function_pool::capacity() const {
    int cap = std::max(1, fn_.max_environments);
    if (fn_.reserved_concurrency) cap = std::min(cap, *fn_.reserved_concurrency);
    return cap;
}

pool_stats function_pool::stats() const {
    pool_stats s = stats_;
    s.environments = static_cast<std::size_t>(
        std::count_if(environments_.begin(), environments_.end(),
                      [](const auto& e) { return e->alive(); }));
    return s;
}

void function_pool::invoke(invocation inv) {
    // Request ids and trace ids are draws keyed by the function and its invocation count, so a
    // seeded run repeats them exactly.
    const std::uint64_t index = next_request_index_++;
    auto request_id = models::uuid_v4(*ctx_.rng, "lambda-request-id", fn_.name, index);
    ++stats_.invocations;
    if (shut_down_) {
        invocation_result r;
        r.kind = outcome::unavailable;
        r.request_id = request_id;
        r.message = "coldbrew is shutting down";
        if (inv.on_done) inv.on_done(std::move(r));
        return;
    }
    if (inv.payload.size() > max_sync_request_bytes) {
        invocation_result r;
        r.kind = outcome::too_large;
        r.request_id = request_id;
        r.message = "Request must be smaller than " + std::to_string(max_sync_request_bytes) +
                    " bytes for the InvokeFunction operation";
        if (inv.on_done) inv.on_done(std::move(r));
        return;
    }
    if (inv.trace_id.empty()) {
        // X-Ray trace header: Root=1-<epoch seconds, 8 hex>-<24 hex>;Parent=<16 hex>;Sampled=0
        char epoch[16];
        std::snprintf(epoch, sizeof(epoch), "%08llx",
                      static_cast<unsigned long long>(ctx_.clock->epoch_ms() / 1000));
        inv.trace_id = std::string("Root=1-") + epoch + "-" +
                       models::random_hex(*ctx_.rng, "trace-id", fn_.name, index, 24) +
                       ";Parent=" + models::random_hex(*ctx_.rng, "trace-parent", fn_.name, index, 16) +
                       ";Sampled=0";
    }
    ++in_flight_;
    place(std::move(inv), std::move(request_id));
}

void function_pool::place(invocation inv, std::string request_id) {
    execution_environment* best = nullptr;
    for (auto& e : environments_)
        if (e->idle() && (!best || e->last_used() > best->last_used())) best = e.get();
    if (!best)
        for (auto& e : environments_)
            if (e->finishing() && (!best || e->last_used() > best->last_used())) best = e.get();
    if (best) {
        spdlog::debug("{}: {} → warm execution environment (pid {})", fn_.name, request_id,
                      best->pid());
        best->assign(std::move(inv), std::move(request_id));
        return;
    }

    int live = static_cast<int>(std::count_if(environments_.begin(), environments_.end(),
                                              [](const auto& e) { return e->alive(); }));
    if (live >= capacity() || (fn_.reserved_concurrency && *fn_.reserved_concurrency == 0)) {
        ++stats_.throttles;
        --in_flight_;
        invocation_result r;
        r.kind = outcome::throttled;
        r.request_id = request_id;
        r.message = "Rate Exceeded.";
        r.throttle_reason = fn_.reserved_concurrency
                                ? "ReservedFunctionConcurrentInvocationLimitExceeded"
                                : "ConcurrentInvocationLimitExceeded";
        // Say why, once per throttle: a 500 from the gateway alone does not tell a user which
        // limit to raise.
        spdlog::warn("{}: invocation throttled ({}): {} execution environments busy{}", fn_.name,
                     r.throttle_reason, live,
                     fn_.reserved_concurrency
                         ? " (ReservedConcurrentExecutions)"
                         : "; raise max_environments in coldbrew.yaml to allow more");
        if (inv.on_done) inv.on_done(std::move(r));
        return;
    }

    auto env = std::make_unique<execution_environment>(*this, ctx_, fn_,
                                                       static_cast<int>(next_environment_index_++));
    std::string error_type, error_message;
    if (!env->start(error_type, error_message)) {
        --in_flight_;
        ++stats_.function_errors;
        ctx_.logs->write(fn_.name, "RequestId: " + request_id + " Error: " + error_message);
        ctx_.logs->write(fn_.name, error_type);
        invocation_result r;
        r.kind = outcome::function_error;
        r.request_id = request_id;
        r.error_type = error_type;
        r.payload = runtime_api::platform_error_body(error_type, request_id, error_message);
        if (inv.on_done) inv.on_done(std::move(r));
        dead_.push_back(std::move(env));
        schedule_collect();
        return;
    }
    ++stats_.cold_starts;
    spdlog::debug("{}: {} → cold start, new execution environment (pid {})", fn_.name, request_id,
                  env->pid());
    env->assign(std::move(inv), std::move(request_id));
    environments_.push_back(std::move(env));
}

void function_pool::on_done(const invocation_result& r) {
    if (in_flight_ > 0) --in_flight_;
    if (r.kind == outcome::function_error) {
        ++stats_.function_errors;
        if (r.error_type == "Sandbox.Timedout") ++stats_.timeouts;
    }
}

void function_pool::on_exit(execution_environment& env, std::optional<invocation> undelivered,
                            std::string request_id) {
    for (auto it = environments_.begin(); it != environments_.end(); ++it) {
        if (it->get() == &env) {
            dead_.push_back(std::move(*it));
            environments_.erase(it);
            break;
        }
    }
    schedule_collect();
    if (undelivered) {
        if (shut_down_) {
            --in_flight_;
            invocation_result r;
            r.kind = outcome::unavailable;
            r.request_id = request_id;
            r.message = "coldbrew is shutting down";
            if (undelivered->on_done) undelivered->on_done(std::move(r));
        } else {
            place(std::move(*undelivered), std::move(request_id));
        }
    }
}

// Dead environments are freed on the next loop turn: the calls that retire them come from
// inside their own callbacks.
void function_pool::schedule_collect() {
    uv_timer_start(
        reap_timer_,
        [](uv_timer_t* t) {
            if (t->data) static_cast<function_pool*>(t->data)->dead_.clear();
        },
        0, 0);
}

void function_pool::shutdown() {
    shut_down_ = true;
    for (auto& e : environments_) e->kill();
}

std::vector<std::string> function_pool::environment_for(int runtime_api_port, int index) const {
    std::map<std::string, std::string> env;
    // Defaults Lambda sets that a user may override [ENV].
    env["LANG"] = "en_US.UTF-8";
    env["TZ"] = ":UTC";
    env["AWS_XRAY_CONTEXT_MISSING"] = "LOG_ERROR";
    for (const auto& [k, v] : ctx_.host_env) env[k] = v;
    // The flags `sam local` (AWS_SAM_LOCAL) and serverless-offline (IS_OFFLINE) set, which
    // handlers commonly test to pick local endpoints; set both so either kind of app runs
    // unchanged.
    env["AWS_SAM_LOCAL"] = "true";
    env["IS_OFFLINE"] = "true";

    for (const auto& [k, v] : fn_.environment) env[k] = v;

    // Layers are extracted under /opt on Lambda; locally their directories are put on the
    // language search paths that /opt would be on.
    std::string node_path, python_path, bin_path;
    for (const auto& layer : fn_.layer_dirs) {
        node_path += (node_path.empty() ? "" : ":") + (layer / "nodejs" / "node_modules").string();
        python_path += (python_path.empty() ? "" : ":") + (layer / "python").string();
        bin_path += (layer / "bin").string() + ":";
    }
    if (!node_path.empty())
        env["NODE_PATH"] = node_path + (env.count("NODE_PATH") ? ":" + env["NODE_PATH"] : "");
    if (!python_path.empty())
        env["PYTHONPATH"] = python_path + (env.count("PYTHONPATH") ? ":" + env["PYTHONPATH"] : "");
    if (!bin_path.empty()) env["PATH"] = bin_path + env["PATH"];

    // Reserved variables: the platform's values win over the user's [ENV] (RIE env/constants.go).
    const auto& s = *ctx_.settings;
    env["AWS_REGION"] = s.region;
    env["AWS_DEFAULT_REGION"] = s.region;
    env["AWS_LAMBDA_FUNCTION_NAME"] = fn_.function_name;
    env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = std::to_string(fn_.memory_mb);
    env["AWS_LAMBDA_FUNCTION_VERSION"] = "$LATEST";
    env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = std::to_string(fn_.timeout_s);
    env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand";
    env["AWS_LAMBDA_LOG_GROUP_NAME"] = "/aws/lambda/" + fn_.function_name;
    {
        std::time_t t = static_cast<std::time_t>(ctx_.clock->epoch_ms() / 1000);
        std::tm tm{};
        gmtime_r(&t, &tm);
        char date[16];
        std::strftime(date, sizeof(date), "%Y/%m/%d", &tm);
        env["AWS_LAMBDA_LOG_STREAM_NAME"] =
            std::string(date) + "/[$LATEST]" +
            models::random_hex(*ctx_.rng, "log-stream", fn_.name, static_cast<std::uint64_t>(index), 32);
    }
    env["AWS_LAMBDA_RUNTIME_API"] = "127.0.0.1:" + std::to_string(runtime_api_port);
    env["_HANDLER"] = fn_.handler;
    env["LAMBDA_TASK_ROOT"] = fn_.code_dir.string();
    env["LAMBDA_RUNTIME_DIR"] = ctx_.runtimes_dir.string();
    if (auto e = execution_env(fn_.runtime); !e.empty()) env["AWS_EXECUTION_ENV"] = e;
    // Credentials: the caller's when set (handlers may call real AWS), else SAM CLI's dummies.
    if (!env.count("AWS_ACCESS_KEY_ID")) env["AWS_ACCESS_KEY_ID"] = "defaultkey";
    if (!env.count("AWS_SECRET_ACCESS_KEY")) env["AWS_SECRET_ACCESS_KEY"] = "defaultsecret";

    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

}  // namespace coldbrew::functions
