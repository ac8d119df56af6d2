// The `coldbrew` command: up, invoke, validate, version. Builds the loop, the clock, the random
// source and the log sink — the only place any of them is created — and hands them down.

#include <CLI/CLI.hpp>
#include <spdlog/sinks/ansicolor_sink.h>
#include <spdlog/details/os.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>
#include <uv.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>

#include "emulator/app/app.hpp"
#include "emulator/http/access.hpp"
#include "emulator/build/build.hpp"
#include "emulator/cli/test_command.hpp"
#include "emulator/config/command_line.hpp"
#include "emulator/config/env_files.hpp"
#include "emulator/config/fault_rules.hpp"
#include "emulator/config/not_emulated.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/functions/function_model.hpp"
#include "emulator/functions/handler_check.hpp"
#include "emulator/functions/launcher.hpp"
#include "emulator/functions/service_errors.hpp"
#include "emulator/gateway/sfn_integration.hpp"
#include "emulator/report/report_command.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "emulator/states/definition.hpp"
#include "emulator/sim_cli/sim_command.hpp"
#include "emulator/telemetry/run_recorder.hpp"
#include "emulator/supervisor/cgroup.hpp"
#include "emulator/supervisor/containment.hpp"
#include "emulator/supervisor/reaper.hpp"
#include "emulator/telemetry/decision_log.hpp"
#include "emulator/telemetry/log_files.hpp"
#include "emulator/telemetry/output_queue.hpp"
#include "emulator/telemetry/run_summary.hpp"
#include "emulator/telemetry/trace_export.hpp"
#include "emulator/watch/watch.hpp"
#include "models/bandwidth/bandwidth.hpp"
#include "models/compute/cpu.hpp"
#include "models/pool/pool_policy.hpp"
#include "models/vpc/eni_pool.hpp"

namespace {

using namespace coldbrew;

constexpr const char* version_text = "0.1.0";

// Function output and platform lines, one per line, prefixed with the function's name the way
// `sam local start-api` interleaves container logs.
class stream_log_sink final : public telemetry::log_sink {
public:
    explicit stream_log_sink(std::FILE* out) : out_(out) {}
    void write(std::string_view function, std::string_view line) override {
        std::string s;
        s.reserve(function.size() + line.size() + 4);
        s += '[';
        s += function;
        s += "] ";
        s += line;
        s += '\n';
        std::fwrite(s.data(), 1, s.size(), out_);
        std::fflush(out_);
    }

private:
    std::FILE* out_;
};

// Writes coldbrew's queued output once per turn of the loop, just before it waits for I/O:
// under load one turn carries many invocations' START, END, REPORT, handler and access-log
// lines, and they go out in one write per stream. While a reader is behind, its descriptor is
// watched for room (a pipe or terminal: coldbrew's own non-blocking description), or, for a
// socket whose flags are shared, retried every 20 ms. No handle keeps the loop running.
class turn_pump {
public:
    turn_pump(uv_loop_t* loop, std::vector<telemetry::queued_output*> outputs)
        : prepare_(new uv_prepare_t), retry_(new uv_timer_t) {
        uv_prepare_init(loop, prepare_);
        prepare_->data = this;
        uv_prepare_start(prepare_, [](uv_prepare_t* h) { static_cast<turn_pump*>(h->data)->pump(); });
        unref(prepare_);
        uv_timer_init(loop, retry_);
        retry_->data = this;
        unref(retry_);
        for (auto* o : outputs) {
            watch w{o, nullptr, false};
            if (const int fd = o->writable_fd(); fd >= 0) {
                auto* p = new uv_poll_t;
                if (uv_poll_init(loop, p, fd) == 0) {
                    p->data = this;
                    unref(p);
                    w.poll = p;
                } else {
                    delete p;
                }
            }
            watches_.push_back(w);
        }
    }
    ~turn_pump() {
        close(prepare_);
        close(retry_);
        for (auto& w : watches_)
            if (w.poll) close(w.poll);
    }
    turn_pump(const turn_pump&) = delete;
    turn_pump& operator=(const turn_pump&) = delete;

private:
    struct watch {
        telemetry::queued_output* out;
        uv_poll_t* poll;  // null: retried on the timer
        bool polling;
    };

    template <typename H>
    static void unref(H* h) { uv_unref(reinterpret_cast<uv_handle_t*>(h)); }
    template <typename H>
    static void close(H* h) {
        h->data = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(h), [](uv_handle_t* c) { delete reinterpret_cast<H*>(c); });
    }

    void pump() {
        bool retry = false;
        for (auto& w : watches_) {
            const bool done = w.out->pump();
            if (!w.poll) {
                retry = retry || !done;
            } else if (!done && !w.polling) {
                uv_poll_start(w.poll, UV_WRITABLE, [](uv_poll_t* p, int, int) {
                    if (p->data) static_cast<turn_pump*>(p->data)->pump();
                });
                w.polling = true;
            } else if (done && w.polling) {
                uv_poll_stop(w.poll);
                w.polling = false;
            }
        }
        if (retry && !retrying_) {
            uv_timer_start(retry_, [](uv_timer_t* t) { static_cast<turn_pump*>(t->data)->pump(); }, 20, 20);
        } else if (!retry && retrying_) {
            uv_timer_stop(retry_);
        }
        retrying_ = retry;
    }

    uv_prepare_t* prepare_;
    uv_timer_t* retry_;
    std::vector<watch> watches_;
    bool retrying_ = false;
};

// A descriptor 0, 1 or 2 that is closed (`coldbrew up <&- >&-`) is opened on /dev/null: the
// loop's own descriptors and the pipes to handlers would take those numbers, which libuv
// refuses (it aborts) and which a child's stdio would overwrite.
void open_missing_stdio() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        const int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got >= 0 && got != fd) {
            ::dup2(got, fd);
            ::close(got);
        }
    }
}

std::filesystem::path runtimes_dir() {
    if (const char* env = std::getenv("COLDBREW_RUNTIMES_DIR")) return env;
    // Installed layout first (…/bin/coldbrew → …/share/coldbrew/runtimes), then the tree.
    char exe[4096];
    size_t len = sizeof(exe);
    if (uv_exepath(exe, &len) == 0) {
        auto installed = std::filesystem::path(std::string(exe, len)).parent_path().parent_path() /
                         "share" / "coldbrew" / "runtimes";
        if (std::filesystem::exists(installed / "node")) return installed;
    }
    return COLDBREW_RUNTIMES_DIR;
}

std::string self_exe() {
    char exe[4096];
    size_t len = sizeof(exe);
    if (uv_exepath(exe, &len) != 0) return "/proc/self/exe";
    return std::string(exe, len);
}

// What a handler inherits from coldbrew's own environment: enough to find its interpreter and
// libraries, and the caller's AWS credentials if any. The rest of the developer's shell stays
// out, as on Lambda.
std::vector<std::pair<std::string, std::string>> host_env() {
    static const char* keep[] = {"PATH", "HOME", "TMPDIR", "USER", "NODE_PATH", "PYTHONPATH",
                                 "VIRTUAL_ENV", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                 "AWS_SESSION_TOKEN", "LD_LIBRARY_PATH"};
    std::vector<std::pair<std::string, std::string>> out;
    auto set = [](const char* k) -> const char* {
        const char* v = std::getenv(k);
        // An empty credential is no credential, as the AWS SDKs read it.
        if (v && !*v && std::string_view(k).rfind("AWS_", 0) == 0) return nullptr;
        return v;
    };
    for (const char* k : keep)
        if (const char* v = set(k)) out.emplace_back(k, v);
    // Credentials go as a whole set or not at all (function_pool's environment_for).
    const bool id = set("AWS_ACCESS_KEY_ID"), secret = set("AWS_SECRET_ACCESS_KEY");
    if (id != secret || (!id && set("AWS_SESSION_TOKEN")))
        spdlog::warn("AWS credentials in this shell are incomplete (AWS_ACCESS_KEY_ID and "
                     "AWS_SECRET_ACCESS_KEY go together): none of them reach handlers, which "
                     "get the placeholders AWS_ACCESS_KEY_ID=defaultkey, "
                     "AWS_SECRET_ACCESS_KEY=defaultsecret");
    return out;
}

// SAM CLI's --parameter-overrides forms (config/command_line.hpp), as a usage error.
void parse_parameter_overrides(const std::string& arg, std::map<std::string, std::string>& out) {
    try {
        config::parse_parameter_overrides(arg, out);
    } catch (const std::invalid_argument& e) {
        throw CLI::ValidationError("--parameter-overrides", e.what());
    }
}

// Checks every state machine's definition (a bad one stops the start at its key, as the
// service would) and names each Task that runs something other than one of the stack's
// functions in the Not emulated block: such a Task fails with States.TaskFailed
// (emulator/front/states_task.hpp).
void note_unemulated_tasks(config::stack& stack) {
    for (const auto& m : stack.state_machines) {
        std::shared_ptr<const states::machine> parsed;
        try {
            parsed = states::parse_definition(m.definition);
        } catch (const states::definition_error& e) {
            std::string key = m.definition_key;
            if (!e.path().empty()) key += (key.empty() ? "" : ".") + e.path();
            throw config::config_error(m.where, key, e.what());
        }
        for (const auto& t : states::task_states(*parsed)) {
            using kind = states::task_resource::kind;
            const auto what = t.task->target.what;
            if (what == kind::lambda_invoke || what == kind::lambda_arn) continue;
            config::not_emulated n;
            n.kind = "resource";
            n.what = "Task " + t.path + " of state machine " + m.name + " (" + t.task->resource + ")";
            n.where = m.where;
            n.meaning = what == kind::activity
                            ? "activities are not emulated: the state fails with States.TaskFailed"
                            : "only the stack's Lambda functions run as Tasks: the state fails "
                              "with States.TaskFailed";
            n.fix = "call the service from a function Task, or Catch States.TaskFailed";
            config::detail::add_entry(stack.ignored, std::move(n));
        }
    }
}

struct load_flags {
    std::string path = ".";
    std::vector<std::string> parameter_overrides;
    std::string stage;
    std::optional<double> time_scale;
    std::string decision_log;
    std::optional<int> invoke_port;
    std::optional<int> admin_port;
    std::optional<int> sfn_port;
    std::string admin_host;   // `up --admin-host`: wins over coldbrew.yaml admin.host
    std::string admin_token;  // `up --admin-token`: wins over coldbrew.yaml admin.token
    bool realistic_sla = false;
    std::string standby;  // `up --standby N|auto`: every function's standby environments
    std::string env_vars;  // SAM CLI's --env-vars file (config/env_files.hpp)
    bool watch = false;   // `up --watch`: also coldbrew.yaml `watch: true`
};

// Loads the stack and resolves each function's interpreter (before anything listens);
// `interpreters`, when given, receives one per function for `validate`.
// `build_log`: where the functions' builds (emulator/build) write their lines; null (validate)
// checks that every build's tool is there without building.
config::stack load(const load_flags& f,
                   std::vector<functions::interpreter>* interpreters = nullptr,
                   std::FILE* build_log = nullptr) {
    config::load_options o;
    for (const auto& arg : f.parameter_overrides) parse_parameter_overrides(arg, o.parameter_overrides);
    if (!f.stage.empty()) o.stage = f.stage;
    o.env = config::process_environment();
    system_clock_source clock;
    // Runtime lifecycles are judged on today's date, as AWS judges a deploy.
    o.today = std::chrono::year_month_day{std::chrono::floor<std::chrono::days>(clock.wall())};
    auto stack = config::load_stack(f.path, o);
    note_unemulated_tasks(stack);
    // After coldbrew.yaml: the command line wins over the files beside the app.
    if (!f.env_vars.empty()) config::apply_env_vars(config::read_env_vars(f.env_vars), stack);
    // Built before the interpreters are resolved and the models measure the code: both see
    // the built code directory.
    build::build_environment build_env;
    for (const auto& [k, v] : o.env) build_env.env.push_back(k + "=" + v);
    if (build_log) {
        stream_log_sink build_sink(build_log);
        build::build_all(stack, build_sink, clock, build_env);
    } else {
        build::check_builds(stack, build_env);
    }
    // After the build: a built function's handler is looked for in its artifacts.
    for (const auto& fn : stack.functions)
        if (auto w = functions::handler_warning(fn)) stack.warnings.push_back(*w);
    functions::system_host host(clock);
    auto resolved = functions::resolve_interpreters(stack, host);
    if (interpreters) *interpreters = std::move(resolved);
    if (f.time_scale) stack.settings.time_scale = *f.time_scale;
    if (f.invoke_port) stack.settings.invoke_port = *f.invoke_port;
    if (f.admin_port) stack.settings.admin_port = *f.admin_port;
    if (f.sfn_port) stack.settings.sfn_port = *f.sfn_port;
    if (!f.admin_host.empty()) stack.settings.admin_host = f.admin_host;
    if (!f.admin_token.empty()) stack.settings.admin_token = f.admin_token;
    // libuv binds numeric addresses only; "localhost" is what people type.
    if (stack.settings.admin_host == "localhost") stack.settings.admin_host = "127.0.0.1";
    if (!f.decision_log.empty())
        stack.settings.decision_log = std::filesystem::absolute(f.decision_log);
    if (f.watch) stack.settings.watch = true;
    if (!f.standby.empty())
        for (auto& fn : stack.functions) {
            fn.standby_auto = f.standby == "auto";
            fn.standby = fn.standby_auto ? 1 : std::stoul(f.standby);
        }
    // A Step Functions route's request template must be one the gateway evaluates.
    gateway::check_state_machine_routes(stack);
    return stack;
}

std::string ms_text(double ms) {
    char buf[32];
    if (ms >= 10000)
        std::snprintf(buf, sizeof(buf), "%.1f s", ms / 1000);
    else
        std::snprintf(buf, sizeof(buf), "%.0f ms", ms);
    return buf;
}

std::string mb_text(double mb) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), mb < 10 ? "%.2f MB" : "%.1f MB", mb);
    return buf;
}

// Each function's modeled cold start: its percentiles and, with `why`, every term and its
// source. Percentiles are estimated from seeded draws, the same draws a run makes.
void print_models(const config::stack& s, const functions::stack_models& m, std::uint64_t seed,
                  bool why, std::ostream& out) {
    const auto& p = m.profile();
    out << "Model profile: " << p.name << " (" << p.origin << ")\n";
    models::random_source rng(seed);
    // Sources are long and shared by most functions: each is printed once, at the end, and
    // referred to by number.
    std::vector<std::string> sources;
    auto cite = [&sources](std::string line) {
        const std::string dash = " \xe2\x80\x94 ";  // " — "
        auto at = line.find(dash);
        if (at == std::string::npos) return line;
        std::string source = line.substr(at + dash.size());
        auto it = std::find(sources.begin(), sources.end(), source);
        if (it == sources.end()) it = sources.insert(sources.end(), source);
        return line.substr(0, at) + " [" + std::to_string(it - sources.begin() + 1) + "]";
    };
    for (const auto& fn : s.functions) {
        const auto* fm = m.find(fn.name);
        if (!fm) continue;
        auto pc = fm->cold_start.percentiles(rng, fn.name);
        // With shared ENIs a cold start's wait depends on the others; these are of one alone.
        const bool eni_pool = fm->cold_start.eni() != nullptr;
        out << "  " << fn.name << "  cold start p50 " << ms_text(pc.p50) << "  p95 "
            << ms_text(pc.p95) << "  p99 " << ms_text(pc.p99) << "  ("
            << (eni_pool ? "isolated cold start, which waits for a new ENI; " : "")
            << fn.runtime << " "
            << fn.architecture << " " << fn.package_type << ", " << fn.memory_mb << " MB = "
            << std::to_string(models::vcpu_share(fn.memory_mb, p.mb_per_vcpu, p.max_vcpus)).substr(0, 4)
            << " vCPU, package " << mb_text(fm->traits.package_zipped_mb) << " zipped"
            << (fm->package ? "" : " as configured") << ", VPC " << fn.vpc_mode
            << ", bandwidth " << models::bandwidth::format_rate(fm->bandwidth_bytes_per_s);
        if (!fn.extensions.empty()) {
            out << ", extensions";
            for (const auto& e : fn.extensions) out << " " << e;
        }
        if (fm->limits.provisioned_concurrency > 0)
            out << ", provisioned " << fm->limits.provisioned_concurrency;
        if (fm->limits.reserved_concurrency)
            out << ", reserved " << *fm->limits.reserved_concurrency;
        out << ")\n";
        if (!why) continue;
        if (fm->package) {
            out << "      measured: " << fm->package->files << " files, "
                << mb_text(static_cast<double>(fm->package->bytes) / (1024.0 * 1024.0))
                << " on disk, " << mb_text(fm->traits.package_zipped_mb) << " zipped"
                << (fm->package->estimated ? " (estimated from a sample)" : "") << "\n";
            // What a build would not ship, so a surprising size can be traced to its cause.
            for (const auto& g : fm->package->left_out) {
                out << "      left out: ";
                const bool self_named = g.examples.size() == 1 && g.examples[0] == g.what;
                if (!self_named) out << g.count << " ";
                out << g.what << " (";
                if (!self_named) {
                    for (const auto& e : g.examples) out << e << ", ";
                    if (g.examples.size() < g.count) out << "\xe2\x80\xa6, ";  // "…"
                }
                out << mb_text(static_cast<double>(g.bytes) / (1024.0 * 1024.0)) << " in "
                    << g.files << (g.files == 1 ? " file" : " files") << ") \xe2\x80\x94 "
                    << g.reason << "\n";
            }
        }
        for (const auto& line : fm->cold_start.explanation()) out << "      " << cite(line) << "\n";
        if (const models::legacy_eni_model* eni = fm->cold_start.eni()) {
            // Run the pure models on a cold stack, so these follow the profile and the seed.
            for (int n : {16, 50, 100}) {
                const auto b = models::simulate_cold_burst(fm->cold_start, rng, fn.name + "#burst", n);
                out << "      a burst of " << n << " first requests against a cold stack: "
                    << b.enis_created << " ENI" << (b.enis_created == 1 ? "" : "s")
                    << " created (" << models::environments_per_eni(fn.memory_mb, eni->memory_per_eni_gb)
                    << " environments per ENI), cold start p50 " << ms_text(b.p50_ms) << "  p95 "
                    << ms_text(b.p95_ms) << "  max " << ms_text(b.max_ms) << "\n";
            }
        }
        out << "      " << cite("keep-alive: " + fm->lifetime.keep_alive_ms.to_string() +
                                "; max lifetime: " + fm->lifetime.max_lifetime_ms.to_string() +
                                " \xe2\x80\x94 " + p.lifetime_source)
            << "\n";
        {
            const bool scalable = fn.scalable_bandwidth.value_or(s.settings.scalable_bandwidth);
            const std::string basis =
                fn.bandwidth_bytes_per_s ? "as configured"
                : fn.vpc                 ? "VPC functions keep the default"
                : scalable               ? "raised quota: scales with memory from 2,048 MB"
                                         : "default quota";
            out << "      "
                << cite("bandwidth: " + models::bandwidth::format_rate(fm->bandwidth_bytes_per_s) +
                        " per direction (" + basis + ") \xe2\x80\x94 " + p.bandwidth.source)
                << "\n";
        }
        out << "      "
            << cite("scaling: " + std::to_string(static_cast<long long>(fm->limits.scaling_environments)) +
                    " new environments per " + ms_text(fm->limits.scaling_window_ms) +
                    "; account concurrency " + std::to_string(m.account().limit()) +
                    " \xe2\x80\x94 " + p.scaling_source)
            << "\n";
    }
    if (!sources.empty()) out << "Sources:\n";
    for (std::size_t i = 0; i < sources.size(); ++i)
        out << "  [" << i + 1 << "] " << sources[i] << "\n";
}

const char* kind_name(config::api_kind k) { return k == config::api_kind::rest ? "REST" : "HTTP"; }

// What guards the routes: authorizers, CORS, API keys with their usage plans (a drawn key's
// value is printed, as serverless-offline prints its key, so a test can send it).
void print_access(const config::stack& s, std::ostream& out) {
    bool any = !s.api_keys.empty();
    for (const auto& a : s.apis) any = any || !a.authorizers.empty() || a.cors || !a.path_cors.empty();
    if (!any) return;
    out << "Access:\n";
    for (const auto& a : s.apis) {
        for (const auto& z : a.authorizers) {
            static constexpr const char* kinds[] = {"Lambda TOKEN", "Lambda REQUEST", "JWT"};
            out << "  " << a.id << " authorizer " << z.name << "  "
                << kinds[static_cast<int>(z.kind)];
            if (!z.function.empty()) out << " -> " << z.function;
            if (!z.payload_format_version.empty())
                out << "  payload " << z.payload_format_version
                    << (z.simple_responses ? " simple responses" : "");
            if (z.kind == config::authorizer::type::jwt) out << "  issuer " << z.issuer;
            else out << "  cache " << z.result_ttl_s << " s";
            out << "\n";
        }
        if (a.cors || !a.path_cors.empty())
            out << "  " << a.id << " CORS"
                << (a.kind == config::api_kind::rest ? " (OPTIONS mock on its paths)"
                                                     : " (preflight answered by the gateway)")
                << (a.preflight_authorizer.empty()
                        ? std::string()
                        : ", the mock behind authorizer " + a.preflight_authorizer)
                << "\n";
    }
    for (const auto& k : s.api_keys) {
        out << "  API key " << k.name << "  x-api-key: "
            << (k.value.empty() ? std::string("(drawn from the seed at start)") : k.value)
            << (k.enabled ? "" : "  (disabled)");
        for (const auto& p : s.usage_plans)
            if (std::find(p.keys.begin(), p.keys.end(), k.name) != p.keys.end()) {
                out << "  plan " << p.name;
                if (p.rate_limit) out << " rate " << *p.rate_limit << "/s";
                if (p.burst_limit) out << " burst " << *p.burst_limit;
                if (p.quota_limit) out << " quota " << *p.quota_limit << "/" << p.quota_period;
            }
        out << "\n";
    }
}

void print_stack(const config::stack& s, std::ostream& out, const std::string& base_url) {
    out << "Template: " << s.template_file.string() << " ("
        << (s.kind == config::stack::source_kind::sam ? "SAM" : "serverless.yml") << ")\n";
    if (s.built_from)
        out << "Serving the built artifacts in " << s.template_file.parent_path().string()
            << " (sam build); run sam build again after changing code\n";
    if (s.coldbrew_file) out << "Options:  " << s.coldbrew_file->string() << "\n";
    out << "Functions:\n";
    for (const auto& fn : s.functions) {
        out << "  " << fn.name << "  " << fn.runtime << "  " << fn.handler << "  " << fn.memory_mb
            << " MB  " << fn.timeout_s << " s  " << fn.code_dir.string();
        if (fn.reserved_concurrency) out << "  reserved " << *fn.reserved_concurrency;
        out << "\n";
    }
    out << "Routes:\n";
    for (const auto& r : s.routes) {
        const auto* api = s.find_api(r.api_id);
        out << "  " << r.method << " " << base_url << (r.path == "$default" ? "/*" : r.path)
            << "  -> " << (r.state_machine.empty() ? r.function : "state machine " + r.state_machine)
            << "  (" << (api ? kind_name(api->kind) : "?") << " API "
            << r.api_id << ", stage " << (api ? api->stage : "?") << ", payload "
            << r.payload_format_version << ")";
        if (!r.authorizer.empty()) out << "  authorizer " << r.authorizer;
        if (!r.authorization_scopes.empty()) {
            out << " scopes";
            for (const auto& sc : r.authorization_scopes) out << " " << sc;
        }
        if (r.api_key_required) out << "  API key";
        out << "\n";
    }
    if (!s.state_machines.empty()) out << "State machines:\n";
    for (const auto& m : s.state_machines) {
        const auto states_it = m.definition.find("States");
        const std::size_t n_states =
            states_it != m.definition.end() && states_it->is_object() ? states_it->size() : 0;
        out << "  " << m.name << "  " << m.state_machine_name << "  "
            << (m.type == config::state_machine::kind::express ? "EXPRESS" : "STANDARD") << "  "
            << n_states << (n_states == 1 ? " state  " : " states  ")
            << (m.definition_key.ends_with("DefinitionUri") ? m.where.file : m.definition_key);
        std::string scheds;
        for (const auto& sc : s.schedules)
            if (sc.state_machine == m.name) scheds += (scheds.empty() ? "" : ", ") + sc.name;
        if (!scheds.empty()) out << "  schedules " << scheds;
        out << "\n";
    }
    if (!s.schedules.empty()) out << "Schedules:\n";
    for (const auto& sc : s.schedules) {
        out << "  " << sc.name << "  " << sc.expression
            << (sc.timezone.empty() ? "" : " " + sc.timezone) << "  -> "
            << (sc.state_machine.empty() ? sc.function : "state machine " + sc.state_machine)
            << (sc.enabled ? "" : "  (disabled)") << "\n";
    }
    print_access(s, out);
    out << config::format_not_emulated(s.ignored, s.template_file.parent_path());
    for (const auto& w : s.warnings) out << "warning: " << w << "\n";
}

// coldbrew.yaml `dependencies:` as configured; the proxies' own ports exist only under `up`.
void print_dependencies(const config::stack& s, std::ostream& out) {
    if (s.settings.dependencies.empty()) return;
    out << "Dependencies:\n";
    for (const auto& d : s.settings.dependencies) {
        const bool v6 = d.upstream_host.find(':') != std::string::npos;
        out << "  " << d.name << "  -> " << (v6 ? "[" + d.upstream_host + "]" : d.upstream_host)
            << ":" << d.upstream_port << "  env";
        if (d.env.empty()) out << " (none)";
        for (std::size_t i = 0; i < d.env.size(); ++i)
            out << (i == 0 ? " " : ", ") << d.env[i].first << "=" << d.env[i].second;
        out << "  functions";
        if (d.functions.empty()) out << " (all)";
        for (std::size_t i = 0; i < d.functions.size(); ++i)
            out << (i == 0 ? " " : ", ") << d.functions[i];
        out << "  listen " << (d.listen_port == 0 ? std::string("ephemeral")
                                                  : std::to_string(d.listen_port))
            << "\n";
        out << "    latency connect " << d.connect_latency.value_or("none") << ", request "
            << d.request_latency.value_or("none") << "; per connection "
            << (d.per_connection_bytes_per_s
                    ? models::bandwidth::format_rate(*d.per_connection_bytes_per_s)
                    : std::string("uncapped"))
            << (d.environment_cap ? ", environment cap" : ", no environment cap")
            << "; timeouts connect " << ms_text(d.connect_timeout_ms) << ", idle "
            << (d.idle_timeout_ms ? ms_text(*d.idle_timeout_ms) : std::string("none"))
            << "; availability ";
        if (d.availability_percent) {
            std::ostringstream pct;
            pct << *d.availability_percent;
            out << pct.str() << "% (" << d.availability_outcome << " on "
                << d.availability_on << ")\n";
        } else {
            out << "100%\n";
        }
    }
}

std::uint64_t draw_seed() {
    // The one place entropy enters: every later draw derives from this printed seed.
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::string draw_admin_token() {
    // Not from the seed: the seed is printed and recorded, and a token anyone could derive
    // from it would guard nothing. 128 bits from the system's entropy, as hex.
    std::random_device rd;
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 4; ++i) {
        auto w = static_cast<std::uint32_t>(rd());
        for (int j = 0; j < 8; ++j, w >>= 4) out += hex[w & 0xf];
    }
    return out;
}

// One line on what `--host` exposes when it is not a loopback address; "" when it is.
std::string exposure_warning(const config::stack& stack, const app::app& a) {
    const auto& st = stack.settings;
    if (http::is_loopback_host(st.host)) return {};
    std::string what = "the gateway (port " + std::to_string(a.gateway_port()) + ") and the Invoke API (port " +
                       std::to_string(a.invoke_port()) + ")";
    if (a.sfn_port()) what += ", the Step Functions API (port " + std::to_string(a.sfn_port()) + ")";
    std::string admin = http::is_loopback_host(st.admin_host)
                            ? "the admin API stays on " + st.admin_host +
                                  " (admin.host or --admin-host moves it, behind a bearer token)"
                            : "the admin API listens on " + st.admin_host + " (port " +
                                  std::to_string(a.admin_port()) + ") behind its bearer token";
    return "--host " + st.host + " exposes " + what +
           " to every machine that can reach this one: anyone there can invoke your functions; " +
           admin;
}

struct loop_owner {
    uv_loop_t loop{};
    loop_owner() { uv_loop_init(&loop); }
    ~loop_owner() {
        // Let every handle finish closing, then release the loop.
        uv_walk(&loop, [](uv_handle_t* h, void*) {
            if (!uv_is_closing(h)) uv_close(h, nullptr);
        }, nullptr);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
};

// The run-time pieces `up` and `invoke` share, built after the config is whole and before
// anything listens or starts.
struct run_models {
    std::unique_ptr<functions::stack_models> models;
    models::faults::fault_registry fault_kinds;
    std::vector<models::faults::rule> fault_rules;  // coldbrew.yaml's, then SLA phantoms
    telemetry::decision_log decisions;
    // Before cpu and memory: detected first, so that on cgroup v2 all three name the same
    // groups in the same tree, and taken down last.
    std::unique_ptr<supervisor::containment> containment;
    std::unique_ptr<supervisor::cpu_limiter> cpu;
    std::string cpu_note;
    // After cpu: on cgroup v2 both share one tree, which the CPU limiter sets up first and
    // takes down last.
    std::unique_ptr<supervisor::memory_limiter> memory;
    std::string memory_note;
};

// The decision log is truncated at start: never let it be the template, coldbrew.yaml or a
// file of the app's code.
void check_decision_log_path(const config::stack& stack) {
    const auto& p = *stack.settings.decision_log;
    std::error_code ec;
    auto is = [&](const std::filesystem::path& other) {
        return std::filesystem::equivalent(p, other, ec);
    };
    auto inside = [&](const std::filesystem::path& dir) {
        auto rel = std::filesystem::weakly_canonical(p, ec).lexically_relative(
            std::filesystem::weakly_canonical(dir, ec));
        return !rel.empty() && *rel.begin() != "..";
    };
    bool clash = is(stack.template_file) || (stack.coldbrew_file && is(*stack.coldbrew_file));
    for (const auto& fn : stack.functions) {
        clash = clash || inside(fn.code_dir);
        for (const auto& l : fn.layer_dirs) clash = clash || inside(l);
    }
    if (clash || std::filesystem::is_directory(p, ec))
        throw config::config_error({}, "decision_log",
                                   p.string() + " is part of the app (its template, "
                                                "coldbrew.yaml or a function's code) or a "
                                                "directory; choose another path");
}

void build_run_models(config::stack& stack, bool realistic_sla, run_models& rm) {
    rm.models = functions::build_models(stack);
    models::faults::register_builtin_faults(rm.fault_kinds);
    if (realistic_sla) config::apply_realistic_sla(stack, rm.models->profile());
    rm.fault_rules = config::startup_fault_rules(stack, rm.fault_kinds);
    for (const auto& r : rm.fault_rules)
        for (const auto& w : config::rule_warnings(stack, r)) stack.warnings.push_back(w);
    if (stack.settings.decision_log) {
        check_decision_log_path(stack);
        if (auto ec = rm.decisions.open(*stack.settings.decision_log))
            throw config::config_error({}, "decision_log",
                                       "cannot write " + stack.settings.decision_log->string() +
                                           ": " + ec.message());
    }
    // COLDBREW_CONTAINMENT (subreaper, cgroup-v1, cgroup, auto) forces a containment mode,
    // for tests and diagnosis.
    const char* contain_request = std::getenv("COLDBREW_CONTAINMENT");
    rm.containment = supervisor::containment::detect(contain_request ? contain_request : "");
    std::string why_not;
    rm.cpu = supervisor::cpu_limiter::detect(why_not);
    rm.cpu_note = rm.cpu ? "CPU share follows memory (" + rm.cpu->description() + ")"
                         : "CPU share is not enforced (" + why_not +
                               "); the cold-start model still applies";
    if (!stack.settings.enforce_memory) {
        rm.memory_note = "MemorySize is not enforced (memory.enforce: false in coldbrew.yaml); "
                         "Max Memory Used is measured only";
        return;
    }
    rm.memory = supervisor::memory_limiter::detect(why_not);
    rm.memory_note = rm.memory ? "MemorySize is enforced (" + rm.memory->description() + ")"
                               : "MemorySize is not enforced (" + why_not +
                                     "); Max Memory Used is measured only";
}

// The active fault rules, one line each; faults are off unless configured.
void print_faults(const models::faults::decider& faults, std::ostream& out) {
    const auto& rules = faults.rules();
    if (rules.empty()) {
        out << "Faults: none (add rules in coldbrew.yaml `faults:` or through the admin API)\n";
        return;
    }
    out << "Faults (" << rules.size() << " rule" << (rules.size() == 1 ? "" : "s");
    if (faults.max_active()) out << ", at most " << *faults.max_active() << " active";
    out << "):\n";
    for (const auto& r : rules) out << "  " << r.describe() << "\n";
}

// `up`'s --trace-file, --otlp-endpoint, --log-format and --log-dir.
struct telemetry_flags {
    std::string trace_file, otlp_endpoint, log_format, log_dir;
    std::string record;  // `up --record FILE`: the run record (telemetry/run_recorder.hpp)
};

// The log sinks wrapped around the terminal's and the trace exporter, built before anything
// listens so that a bad path or endpoint stops the start.
struct run_telemetry {
    telemetry::log_formats formats;
    std::unique_ptr<telemetry::log_file_sink> files;
    std::unique_ptr<telemetry::json_log_sink> json;
    std::unique_ptr<telemetry::trace_exporter> traces;
    telemetry::log_sink* logs = nullptr;  // what the app writes to
    std::string banner;                   // lines for the start banner
    std::string trace_target;             // for the exit line
};

// Flags win over the template (LoggingConfig) and coldbrew.yaml (`telemetry:`). Sets each
// function's log_format, so JSON functions also get AWS_LAMBDA_LOG_FORMAT=JSON. False, with
// `error`, when a path or the endpoint cannot be used.
bool setup_telemetry(const telemetry_flags& tf, config::stack& stack, uv_loop_t* loop,
                     const coldbrew::clock& clock, telemetry::log_sink& terminal,
                     run_telemetry& out, std::string& error) {
    if (!tf.log_format.empty())
        for (auto& fn : stack.functions)
            fn.log_format = telemetry::to_string(*telemetry::parse_log_format(tf.log_format));
    std::map<std::string, std::string, std::less<>> arns;
    std::string json_functions;
    for (const auto& fn : stack.functions) {
        const bool json = fn.log_format == "JSON";
        out.formats.set(fn.name, json ? telemetry::log_format::json : telemetry::log_format::text);
        if (json) json_functions += (json_functions.empty() ? "" : ", ") + fn.name;
        arns[fn.name] = "arn:aws:lambda:" + stack.settings.region + ":" +
                        stack.settings.account_id + ":function:" + fn.function_name;
    }
    out.logs = &terminal;
    if (!tf.log_dir.empty()) {
        const auto dir = std::filesystem::absolute(tf.log_dir);
        out.files = std::make_unique<telemetry::log_file_sink>(terminal, clock, out.formats, dir);
        if (auto ec = out.files->open()) {
            error = "--log-dir " + dir.string() + ": " + ec.message();
            return false;
        }
        out.logs = out.files.get();
        out.banner += "Log files: " + dir.string() + "/<function>.log (appended)\n";
    }
    if (out.formats.any_json()) {
        out.json = std::make_unique<telemetry::json_log_sink>(*out.logs, clock, out.formats,
                                                              std::move(arns));
        out.logs = out.json.get();
        out.banner += "JSON log format: " + json_functions + "\n";
    }

    telemetry::trace_export_options o;
    if (!tf.trace_file.empty())
        o.file = std::filesystem::absolute(tf.trace_file);
    else if (stack.settings.trace_file)
        o.file = *stack.settings.trace_file;
    o.endpoint_text = tf.otlp_endpoint.empty() ? stack.settings.otlp_endpoint : tf.otlp_endpoint;
    if (!o.endpoint_text.empty()) {
        std::string why;
        o.endpoint = telemetry::parse_otlp_endpoint(o.endpoint_text, why);
        if (!o.endpoint) {
            error = "--otlp-endpoint: " + why;
            return false;
        }
    }
    if (o.file.empty() && !o.endpoint) return true;
    out.banner += "Traces:";
    if (!o.file.empty()) out.banner += " " + o.file.string() + " (OTLP JSON lines, appended)";
    if (o.endpoint) {
        // The URL as it is posted to: a bare host gets /v1/traces, a given path is kept.
        const auto& e = *o.endpoint;
        const bool v6 = e.host.find(':') != std::string::npos;
        out.banner += " POST http://" + (v6 ? "[" + e.host + "]" : e.host) + ":" +
                      std::to_string(e.port) + e.path;
    }
    out.banner += "\n";
    out.trace_target = o.file.empty() ? o.endpoint_text : o.file.string();
    o.warn = [](const std::string& m) { spdlog::warn("traces: {}", m); };
    const auto file = o.file;
    out.traces = std::make_unique<telemetry::trace_exporter>(loop, std::move(o));
    if (auto ec = out.traces->open()) {
        error = "cannot write traces to " + file.string() + ": " + ec.message();
        return false;
    }
    return true;
}

void print_trace_counts(const run_telemetry& tel) {
    if (!tel.traces) return;
    const auto& c = tel.traces->stats();
    std::printf("coldbrew: traces: %llu requests (%llu spans) to %s; %llu batches posted, %llu "
                "dropped\n",
                static_cast<unsigned long long>(c.traces), static_cast<unsigned long long>(c.spans),
                tel.trace_target.c_str(), static_cast<unsigned long long>(c.batches_sent),
                static_cast<unsigned long long>(c.batches_dropped));
}

// The standby environments start with the stack: the ports are reported ready once every one
// has finished its init, so the first burst finds them ready. Bounded by Lambda's 10 s init
// limit; requests that arrive meanwhile are served as usual.
void wait_for_standby(uv_loop_t& loop, app::app& application) {
    if (application.standby_settled()) return;
    struct waiter {
        app::app* a;
        uv_timer_t tick{};
        int ticks = 0;
        bool done = false;
    } w{&application};
    uv_timer_init(&loop, &w.tick);
    w.tick.data = &w;
    uv_timer_start(
        &w.tick,
        [](uv_timer_t* t) {
            auto* w = static_cast<waiter*>(t->data);
            // 10 ms ticks: 1,000 of them is the 10 s init limit.
            if (w->a->standby_settled() || ++w->ticks >= 1000) {
                w->done = true;
                uv_timer_stop(t);
            }
        },
        10, 10);
    while (!w.done) uv_run(&loop, UV_RUN_ONCE);
    if (!application.standby_settled()) {
        spdlog::warn("standby execution environments still starting after 10 s; serving now");
    } else {
        std::size_t ready = 0;
        for (const auto& [_, st] : application.stats()) ready += st.standby_ready;
        spdlog::info("{} standby execution environment{} ready", ready, ready == 1 ? "" : "s");
    }
    uv_close(reinterpret_cast<uv_handle_t*>(&w.tick), nullptr);
    uv_run(&loop, UV_RUN_NOWAIT);
}

// `hooks` (null for plain `up`): what `coldbrew test` sees of the run (cli/test_command.hpp).
// `outputs`: the queued streams behind stdout and stderr, written out once per turn.
int run_up(const load_flags& lf, int port, const std::string& host,
           std::optional<std::uint64_t> seed_flag, const telemetry_flags& tf,
           const std::string& ready_file, cli::up_hooks* hooks,
           std::vector<telemetry::queued_output*> outputs = {}) {
    if (!ready_file.empty()) {
        // A file left by an earlier run would tell a script waiting for it the old addresses;
        // a directory that is not there would make it wait forever: both are settled now.
        std::error_code ec;
        std::filesystem::remove(ready_file, ec);
        const auto dir = std::filesystem::absolute(ready_file).parent_path();
        if (!std::filesystem::is_directory(dir, ec))
            throw config::config_error({}, "--ready-file", "no directory " + dir.string() + " to write " +
                                                                ready_file + " in");
    }
    config::stack stack = load(lf, nullptr, stdout);
    if (hooks && hooks->loaded) hooks->loaded(stack);
    if (port >= 0) stack.settings.gateway_port = port;
    // libuv binds numeric addresses only; "localhost" is what people type.
    if (!host.empty()) stack.settings.host = host == "localhost" ? "127.0.0.1" : host;
    // Off loopback the admin API is reachable by others: it requires a token, drawn now
    // unless coldbrew.yaml or --admin-token set one (emulator/http/access.hpp).
    const bool token_drawn =
        stack.settings.admin_token.empty() && !http::is_loopback_host(stack.settings.admin_host);
    if (token_drawn) stack.settings.admin_token = draw_admin_token();
    if (seed_flag) stack.settings.seed = seed_flag;
    std::uint64_t seed = stack.settings.seed.value_or(draw_seed());
    run_models rm;
    build_run_models(stack, lf.realistic_sla, rm);
    models::faults::decider faults(rm.fault_kinds, seed);
    faults.set_max_active(stack.settings.faults.max_active_faults);
    faults.set_rules(rm.fault_rules, 0.0);

    loop_owner lo;
    turn_pump pump(&lo.loop, std::move(outputs));
    system_clock_source clock;
    // The one place the run's time_scale becomes waits and rates.
    sched::uv_scheduler scheduler(&lo.loop, clock, stack.settings.time_scale);
    models::random_source rng(seed);
    app::draw_api_keys(stack, rng);
    // A JWT authorizer's keys are read before anything listens: unreadable keys are a config
    // error, not a 401 on every request.
    auto jwt_keys = app::load_jwt_keys(stack);
    stream_log_sink sink(stdout);
    run_telemetry tel;
    if (std::string why; !setup_telemetry(tf, stack, &lo.loop, clock, sink, tel, why)) {
        std::fprintf(stderr, "coldbrew: %s\n", why.c_str());
        return 2;
    }
    // Before the app, which writes to it until its pools are gone.
    telemetry::run_recorder recorder;
    if (!tf.record.empty()) {
        if (stack.settings.watch) {
            std::fprintf(stderr, "coldbrew: --record cannot be used with watch mode: a code "
                                 "change retires environments, which a replay cannot repeat\n");
            return 2;
        }
        if (stack.settings.decision_log &&
            std::filesystem::absolute(tf.record) ==
                std::filesystem::absolute(*stack.settings.decision_log)) {
            std::fprintf(stderr, "coldbrew: --record and --decision-log name the same file; "
                                 "give each its own\n");
            return 2;
        }
        models::sim::record_header h;
        h.seed = seed;
        h.time_scale = stack.settings.time_scale;
        h.app = stack.template_file.string();
        h.realistic_sla = lf.realistic_sla;
        h.cpu_limited = rm.cpu != nullptr;
        if (auto rec = recorder.open(std::filesystem::absolute(tf.record), h)) {
            std::fprintf(stderr, "coldbrew: --record: cannot write %s: %s\n", tf.record.c_str(),
                         rec.message().c_str());
            return 2;
        }
    }
    std::error_code ec;
    supervisor::reaper reaper(&lo.loop, self_exe(), ec, rm.containment.get());
    if (ec) spdlog::warn("could not start the process reaper ({}); handler processes may outlive a killed coldbrew", ec.message());

    app::app_dependencies deps{&lo.loop, &clock, &rng, tel.logs, ec ? nullptr : &reaper,
                               rm.models.get(), &rm.decisions, rm.cpu.get(),
                               &faults, &rm.fault_kinds, rm.fault_rules,
                               runtimes_dir(), host_env()};
    deps.traces = tel.traces.get();
    deps.scheduler = &scheduler;
    deps.memory = rm.memory.get();
    deps.jwt_keys = std::move(jwt_keys);
    deps.recorder = recorder.is_open() ? &recorder : nullptr;
    // Watch mode rebuilds a built function on the loop before its environments are retired.
    std::unique_ptr<build::builder> builder;
    if (stack.settings.watch) {
        build::build_environment build_env;
        for (const auto& [k, v] : config::process_environment()) build_env.env.push_back(k + "=" + v);
        builder = std::make_unique<build::builder>(&lo.loop, *tel.logs, clock, std::move(build_env),
                                                   ec ? nullptr : &reaper);
        deps.rebuild = [b = builder.get()](const config::function& fn,
                                           std::function<void(bool ok)> done) {
            b->rebuild(fn, [done = std::move(done)](bool ok, const std::string&) { done(ok); });
        };
    }
    auto application = std::make_unique<app::app>(stack, std::move(deps));
    if (auto lec = application->start_gateway()) {
        std::fprintf(stderr, "coldbrew: cannot listen on %s:%d (gateway): %s\n", stack.settings.host.c_str(),
                     stack.settings.gateway_port, lec.message().c_str());
        return 2;
    }
    if (auto iec = application->start_invoke()) {
        std::fprintf(stderr, "coldbrew: cannot listen on %s:%d (Invoke API): %s\n",
                     stack.settings.host.c_str(), stack.settings.invoke_port,
                     iec.message().c_str());
        return 2;
    }
    if (auto aec = application->start_admin()) {
        std::fprintf(stderr, "coldbrew: cannot listen on %s:%d (admin API): %s\n",
                     stack.settings.admin_host.c_str(), stack.settings.admin_port,
                     aec.message().c_str());
        return 2;
    }
    if (auto sec = application->start_sfn()) {
        std::fprintf(stderr, "coldbrew: cannot listen on %s:%d (Step Functions API): %s\n",
                     stack.settings.host.c_str(), stack.settings.sfn_port, sec.message().c_str());
        return 2;
    }
    {
        std::string failed;
        if (auto dec = application->start_dependencies(failed)) {
            int listen = 0;
            for (const auto& d : stack.settings.dependencies)
                if (d.name == failed) listen = d.listen_port;
            std::fprintf(stderr,
                         "coldbrew: cannot open the proxy of dependency '%s' on 127.0.0.1:%d "
                         "(dependencies.%s.listen): %s\n",
                         failed.c_str(), listen, failed.c_str(), dec.message().c_str());
            return 2;
        }
    }
    application->start_provisioned();
    // Started with the app, stopped at the first signal: its handles would keep the loop up.
    std::unique_ptr<watch::watcher> watcher;
    std::size_t watched_dirs = 0;
    if (stack.settings.watch) {
        auto roots = watch::watch_roots(stack);
        watched_dirs = roots.size();
        watcher = std::make_unique<watch::watcher>(
            &lo.loop, clock, std::move(roots),
            [a = application.get()](const std::string& fn, const std::filesystem::path& file) {
                a->code_changed(fn, file);
            },
            [](const std::string& note) { spdlog::warn("{}", note); });
        watcher->start();
    }
    std::string base = "http://" + stack.settings.host + ":" + std::to_string(application->gateway_port());
    std::ostringstream banner;
    banner << "coldbrew " << version_text << "  seed " << seed << "  time_scale "
           << stack.settings.time_scale << "\n";
    print_stack(stack, banner, base);
    print_models(stack, *rm.models, seed, false, banner);
    banner << rm.containment->description() << "\n";
    banner << rm.cpu_note << "\n";
    banner << rm.memory_note << "\n";
    // Each execution environment holds about ten descriptors in coldbrew (its Runtime API
    // listener and connection, output pipes, memory files, a client's connection): a low hard
    // limit runs out with a few hundred environments, as failed starts and reset connections.
    if (const auto files = supervisor::raise_open_files_limit(); files < 4096)
        banner << "Open files: the limit is " << files << " (ulimit -n; its hard limit keeps "
               << "coldbrew from raising it): about " << files / 10
               << " execution environments can run at once\n";
    if (stack.settings.decision_log)
        banner << "Decision log: " << stack.settings.decision_log->string() << "\n";
    if (recorder.is_open()) banner << "Run record: " << tf.record << " (replay with coldbrew sim PATH --replay FILE)\n";
    banner << tel.banner;
    if (watcher)
        banner << "Watch: on (" << watched_dirs << " director" << (watched_dirs == 1 ? "y" : "ies")
               << (watcher->polling() ? ", scanned" : ", inotify")
               << "): an edit retires the function's execution environments; the next "
                  "invocation is a cold start on the new code\n";
    print_faults(faults, banner);
    std::fputs(banner.str().c_str(), stdout);
    wait_for_standby(lo.loop, *application);
    std::printf("coldbrew up: gateway listening on %s\n", base.c_str());
    std::printf("coldbrew up: invoke API listening on http://%s:%d\n", stack.settings.host.c_str(),
                application->invoke_port());
    std::printf("coldbrew up: admin API listening on http://%s:%d\n", stack.settings.admin_host.c_str(),
                application->admin_port());
    if (token_drawn)
        std::printf("coldbrew up: admin API token: %s (send Authorization: Bearer <token>)\n",
                    stack.settings.admin_token.c_str());
    else if (!stack.settings.admin_token.empty())
        std::printf("coldbrew up: admin API requires its bearer token (admin.token / --admin-token)\n");
    if (auto w = exposure_warning(stack, *application); !w.empty()) spdlog::warn("{}", w);
    if (application->sfn_port())
        std::printf("coldbrew up: Step Functions API listening on http://%s:%d\n",
                    stack.settings.host.c_str(), application->sfn_port());
    if (const auto* deps = application->dependencies()) {
        for (const auto& p : deps->proxies()) {
            const auto& d = p->config();
            std::string vars;
            for (const auto& [name, _] : d.env) vars += (vars.empty() ? "" : ", ") + name;
            std::printf("coldbrew up: dependency %s: 127.0.0.1:%d -> %s:%d%s%s\n", d.name.c_str(),
                        p->port(), d.upstream_host.c_str(), d.upstream_port,
                        vars.empty() ? "" : "; handlers get ", vars.c_str());
        }
    }
    // Ready: what the lines above say, for GET /ready and --ready-file.
    cli::ready_info ready;
    ready.gateway_url = base;
    ready.invoke_url = "http://" + stack.settings.host + ":" + std::to_string(application->invoke_port());
    ready.admin_url = "http://" + stack.settings.admin_host + ":" + std::to_string(application->admin_port());
    ready.admin_token = stack.settings.admin_token;
    if (application->sfn_port())
        ready.sfn_url = "http://" + stack.settings.host + ":" + std::to_string(application->sfn_port());
    ready.region = stack.settings.region;
    ready.seed = seed;
    application->mark_ready(ready.to_json());
    if (!ready_file.empty()) {
        if (std::string why; !cli::write_ready_file(ready_file, ready, why))
            throw config::config_error({}, "--ready-file", why);
        else
            std::printf("coldbrew up: ready; addresses written to %s\n", ready_file.c_str());
    }

    // SIGINT/SIGTERM: drain in-flight invocations for up to 2 s, then end every child.
    // A second signal ends them at once.
    struct signal_ctx {
        app::app* a;
        watch::watcher* w;
        build::builder* b;
        cli::up_hooks* hooks;
        uv_signal_t sigint{}, sigterm{};
        bool stopping = false;
    } sc{application.get(), watcher.get(), builder.get(), hooks};
    auto on_signal = [](uv_signal_t* h, int sig) {
        auto* c = static_cast<signal_ctx*>(h->data);
        if (!c->stopping && c->hooks && c->hooks->signal && c->hooks->signal(sig)) return;
        if (c->stopping) {
            c->a->shutdown(0, nullptr);
            return;
        }
        c->stopping = true;
        if (c->w) c->w->stop();
        if (c->b) c->b->shutdown();
        std::fprintf(stderr, "coldbrew: shutting down\n");
        c->a->shutdown(2000, [c] {
            uv_close(reinterpret_cast<uv_handle_t*>(&c->sigint), nullptr);
            uv_close(reinterpret_cast<uv_handle_t*>(&c->sigterm), nullptr);
        });
    };
    uv_signal_init(&lo.loop, &sc.sigint);
    uv_signal_init(&lo.loop, &sc.sigterm);
    sc.sigint.data = sc.sigterm.data = &sc;
    uv_signal_start(&sc.sigint, on_signal, SIGINT);
    uv_signal_start(&sc.sigterm, on_signal, SIGTERM);

    const auto up_since = clock.steady();
    if (hooks && hooks->ready)
        hooks->ready(&lo.loop, ready, [&sc] {
            // As SIGINT does: drain, then end every child.
            if (sc.stopping) return;
            sc.stopping = true;
            if (sc.w) sc.w->stop();
            if (sc.b) sc.b->shutdown();
            sc.a->shutdown(2000, [c = &sc] {
                uv_close(reinterpret_cast<uv_handle_t*>(&c->sigint), nullptr);
                uv_close(reinterpret_cast<uv_handle_t*>(&c->sigterm), nullptr);
            });
        });
    uv_run(&lo.loop, UV_RUN_DEFAULT);
    for (const auto& [name, st] : application->stats())
        std::printf("coldbrew: %s: %llu invocations, %llu cold starts, %llu function errors "
                    "(%llu timeouts), %llu throttles, %llu waited for max_environments, "
                    "%llu evictions\n",
                    name.c_str(), static_cast<unsigned long long>(st.invocations),
                    static_cast<unsigned long long>(st.cold_starts),
                    static_cast<unsigned long long>(st.function_errors),
                    static_cast<unsigned long long>(st.timeouts),
                    static_cast<unsigned long long>(st.throttles),
                    static_cast<unsigned long long>(st.waits),
                    static_cast<unsigned long long>(st.evictions));
    for (const auto& [name, st] : application->async_stats()) {
        if (st.accepted == 0) continue;
        std::printf("coldbrew: %s: %llu async events, %llu succeeded, %llu failed, %llu retries scheduled\n",
                    name.c_str(), static_cast<unsigned long long>(st.accepted),
                    static_cast<unsigned long long>(st.succeeded),
                    static_cast<unsigned long long>(st.failed),
                    static_cast<unsigned long long>(st.retried));
    }
    if (const auto* sfn = application->step_functions())
        for (const auto& [name, st] : sfn->stats())
            std::printf("coldbrew: state machine %s: %llu executions, %llu succeeded, %llu failed, "
                        "%llu timed out, %llu aborted, %llu retries, %llu caught, "
                        "%llu duplicate starts\n",
                        name.c_str(), static_cast<unsigned long long>(st.started),
                        static_cast<unsigned long long>(st.succeeded),
                        static_cast<unsigned long long>(st.failed),
                        static_cast<unsigned long long>(st.timed_out),
                        static_cast<unsigned long long>(st.aborted),
                        static_cast<unsigned long long>(st.retries),
                        static_cast<unsigned long long>(st.caught),
                        static_cast<unsigned long long>(st.duplicate_starts));
    {
        // Requests, latency, codes, outcomes, faults and cold starts since the start (or the
        // last counter reset); the shutdown has recorded every request it ended.
        telemetry::run_summary_input summary;
        summary.run_ms =
            std::chrono::duration<double, std::milli>(clock.steady() - up_since).count();
        summary.time_scale = stack.settings.time_scale;
        summary.requests = &application->requests();
        summary.faults_by_kind = faults.counters().by_kind;
        summary.fault_overflow = faults.counters().overflow;
        summary.fault_missed = faults.counters().missed;
        summary.counters_reset_at_ms = application->counters_reset_at_ms();
        for (const auto& [name, st] : application->stats())
            summary.overruns[name] = {st.cold_starts,          st.init_overruns,
                                      st.init_overrun_ms,      st.init_overrun_max_ms,
                                      st.burst_cold_starts_max, st.standby_target};
        const auto summary_text = telemetry::render_run_summary(summary);
        std::fputs(summary_text.c_str(), stdout);
        if (hooks && hooks->finished) {
            cli::run_figures f;
            f.run_ms = summary.run_ms;
            f.requests = &application->requests();
            f.faults_by_kind = faults.counters().by_kind;
            f.faults_missed_by_kind = faults.counters().missed_by_kind;
            f.emulator_errors = application->gateway_outcomes().emulator_error +
                                application->invoke_outcomes().emulator_error +
                                application->states_outcomes().emulator_error;
            for (const auto& [name, st] : application->stats())
                f.functions.push_back({name, {st.invocations, st.cold_starts, st.function_errors,
                                              st.timeouts, st.throttles}});
            f.summary_text = summary_text;
            hooks->finished(f);
        }
    }
    application.reset();
    // Traces of requests the shutdown ended are in now; the last batch gets at most 1 s.
    if (tel.traces) tel.traces->stop();
    uv_run(&lo.loop, UV_RUN_DEFAULT);
    print_trace_counts(tel);
    return 0;
}

std::string read_event(const std::string& event_file, const std::string& event_json) {
    if (!event_json.empty()) return event_json;
    if (event_file.empty()) return "{}";
    if (event_file == "-") {
        return std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
    std::ifstream in(event_file, std::ios::binary);
    if (!in) throw CLI::ValidationError("--event", "cannot read " + event_file);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int run_invoke(const load_flags& lf, const std::string& function, const std::string& event_file,
               const std::string& event_json, std::optional<std::uint64_t> seed_flag) {
    config::stack stack = load(lf, nullptr, stderr);
    if (seed_flag) stack.settings.seed = seed_flag;
    // One invocation of one function: no other function's provisioned environments start,
    // and no spare process is started for a second cold start that never comes.
    for (auto& f : stack.functions) {
        if (f.name != function) f.provisioned_concurrency.reset();
        f.standby = 0;
        f.standby_auto = false;
    }
    const auto* fn = stack.find_function(function);
    if (!fn) {
        std::string names;
        for (const auto& f : stack.functions) names += (names.empty() ? "" : ", ") + f.name;
        std::fprintf(stderr, "coldbrew invoke: no function '%s' in %s (functions: %s)\n",
                     function.c_str(), stack.template_file.c_str(), names.c_str());
        return 2;
    }
    // Named once, on stderr: stdout carries the result alone.
    std::fputs(config::format_not_emulated(stack.ignored, stack.template_file.parent_path()).c_str(),
               stderr);
    for (const auto& w : stack.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    std::string event = read_event(event_file, event_json);
    // Lambda refuses a payload that is not JSON (InvalidRequestContentException) before any
    // handler sees it.
    if (!nlohmann::json::accept(event)) {
        std::fprintf(stderr, "coldbrew invoke: the event is not valid JSON "
                             "(Lambda would answer InvalidRequestContentException)\n");
        return 2;
    }
    std::uint64_t seed = stack.settings.seed.value_or(draw_seed());
    run_models rm;
    build_run_models(stack, false, rm);

    loop_owner lo;
    system_clock_source clock;
    sched::uv_scheduler scheduler(&lo.loop, clock, stack.settings.time_scale);
    models::random_source rng(seed);
    stream_log_sink sink(stderr);  // logs to stderr, the result alone on stdout (sam local invoke)
    std::error_code ec;
    supervisor::reaper reaper(&lo.loop, self_exe(), ec, rm.containment.get());
    app::app_dependencies deps{&lo.loop, &clock, &rng, &sink, ec ? nullptr : &reaper,
                               rm.models.get(), &rm.decisions, rm.cpu.get(),
                               nullptr, nullptr, {},
                               runtimes_dir(), host_env()};
    deps.scheduler = &scheduler;
    deps.memory = rm.memory.get();
    auto application = std::make_unique<app::app>(stack, std::move(deps));
    int rc = 0;
    functions::invocation inv;
    inv.payload = std::move(event);
    auto* a = application.get();
    inv.on_done = [&rc, a](functions::invocation_result r) {
        switch (r.kind) {
        case functions::outcome::success:
        case functions::outcome::function_error:
            std::fwrite(r.payload.data(), 1, r.payload.size(), stdout);
            std::fputc('\n', stdout);
            break;
        case functions::outcome::throttled: {
            // What the Invoke API would answer: Lambda's 429 with the limit that was hit.
            auto e = functions::too_many_requests(r.throttle_reason);
            std::fprintf(stderr, "coldbrew invoke: %d %s %s\n", e.status, e.error_type.c_str(),
                         e.body.c_str());
            rc = 1;
            break;
        }
        default:
            std::fprintf(stderr, "coldbrew invoke: %s\n", r.message.c_str());
            rc = 1;
        }
        a->shutdown(0, nullptr);
    };
    application->start_provisioned();
    application->invoke(function, std::move(inv));
    uv_run(&lo.loop, UV_RUN_DEFAULT);
    application.reset();
    uv_run(&lo.loop, UV_RUN_DEFAULT);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    open_missing_stdio();
    if (argc == 2 && std::string_view(argv[1]) == "__reaper") return supervisor::run_reaper_main();
    // A client that hangs up mid-response must cost one connection, not the emulator
    // (libuv reports EPIPE; children get default dispositions back in uv_spawn).
    std::signal(SIGPIPE, SIG_IGN);
    // Room for a few hundred environments' descriptors; handlers get the old limit back.
    supervisor::raise_open_files_limit();

    CLI::App cli{"coldbrew: run a SAM or serverless.yml app locally, with the cloud's behaviour"};
    cli.require_subcommand(1);
    std::string log_level = "info";
    cli.add_option("--log-level", log_level, "coldbrew's own diagnostics: debug, info, warn, error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

    cli.set_version_flag("--version", std::string("coldbrew ") + version_text);

    load_flags lf;
    auto add_load_flags = [&lf](CLI::App* sub) {
        // Global options (--log-level) may also be given after the subcommand.
        sub->fallthrough();
        sub->add_option("-t,--template", lf.path,
                        "template.yaml / serverless.yml, or the directory holding it (default: .)");
        sub->add_option("--parameter-overrides", lf.parameter_overrides,
                        "SAM parameters, Key=Value (repeatable)");
        sub->add_option("--stage", lf.stage, "serverless.yml stage (default: provider.stage or dev)");
        sub->add_option("--env-vars", lf.env_vars,
                        "JSON file of variable values, as sam local reads it: {\"Parameters\": "
                        "{…}, \"<function>\": {…}}; or a .env file (all functions)");
        sub->add_option("--time-scale", lf.time_scale,
                        "Multiply modeled delays (cold starts, keep-alive) by this; 0.01 runs a "
                        "1 s cold start in 10 ms")
            ->check(CLI::Validator(
                [](const std::string& text) -> std::string {
                    char* end = nullptr;
                    const double x = std::strtod(text.c_str(), &end);
                    if (end == text.c_str() || *end != '\0' || !std::isfinite(x))
                        return "must be a number, got '" + text + "'";
                    if (!(x >= 1e-6 && x <= 1000.0))
                        return "must be between 0.000001 and 1000, got " + text;
                    return "";
                },
                "X", "time scale"));
    };

    int port = -1;
    std::string host;
    std::optional<std::uint64_t> seed;
    auto* up = cli.add_subcommand("up", "Serve the app's API routes from real handler processes");
    add_load_flags(up);
    up->add_option("path", lf.path, "Template or directory (same as --template)");
    up->add_option("-p,--port", port, "Gateway port (default 3000; 0 picks a free one)")
        ->check(CLI::Range(0, 65535));
    up->add_option("--host", host, "Address to listen on (default 127.0.0.1)");
    up->add_option("--invoke-port", lf.invoke_port,
                   "Lambda Invoke API port (default 3001; 0 picks a free one)")
        ->check(CLI::Range(0, 65535));
    up->add_option("--admin-port", lf.admin_port,
                   "Admin API port: fault rules, seed, counters (default 3002; 0 picks a free one)")
        ->check(CLI::Range(0, 65535));
    up->add_option("--admin-host", lf.admin_host,
                   "Address the admin API listens on (default 127.0.0.1, whatever --host says); "
                   "off loopback it requires a bearer token, drawn and printed at start unless "
                   "--admin-token or coldbrew.yaml admin.token sets one");
    up->add_option("--admin-token", lf.admin_token,
                   "The admin API's bearer token (16+ printable characters); required of every "
                   "admin request when set")
        ->check(CLI::Validator(
            [](const std::string& t) -> std::string {
                if (t.size() < 16) return "must be at least 16 characters";
                for (char c : t)
                    if (c <= ' ' || c > '~') return "must be printable ASCII without spaces";
                return "";
            },
            "TOKEN", "admin token"));
    up->add_option("--sfn-port", lf.sfn_port,
                   "Step Functions API port, when the stack has state machines (default 3003; "
                   "0 picks a free one)")
        ->check(CLI::Range(0, 65535));
    up->add_option("--standby", lf.standby,
                   "Standby execution environments per function: processes started ahead, with "
                   "their init done, that cold starts take so that a burst waits the modeled "
                   "Init Duration rather than local process starts; N or auto (follow the peak "
                   "concurrency). Default: coldbrew.yaml `standby`, else 1")
        ->check(CLI::Validator(
            [](const std::string& text) -> std::string {
                if (text == "auto") return "";
                unsigned long n = 0;
                auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
                if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n > 1000)
                    return "must be a number from 0 to 1000 or auto, got '" + text + "'";
                return "";
            },
            "N|auto", "standby"));
    up->add_flag("--watch", lf.watch,
                 "Hot reload: an edit under a function's code, build inputs or layers retires "
                 "its idle and standby execution environments, as a deploy does; running "
                 "invocations finish on the old code (also coldbrew.yaml `watch: true`)");
    up->add_flag("--realistic-sla", lf.realistic_sla,
                 "Lose requests at each service's published SLA (API Gateway and Lambda: "
                 "99.95%) unless coldbrew.yaml sets a rate");
    // CLI11 would wrap -1 round to 2^64-1; a seed is exactly a 64-bit unsigned number.
    const CLI::Validator seed_check(
        [](const std::string& text) -> std::string {
            std::uint64_t v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size())
                return "must be a whole number from 0 to 18446744073709551615, got '" + text + "'";
            return "";
        },
        "N", "seed");
    up->add_option("--seed", seed, "Seed for every random draw (default: drawn and printed)")
        ->check(seed_check);
    up->add_option("--decision-log", lf.decision_log,
                   "Write every modeled decision (environment created, reused, evicted, "
                   "throttled) to this JSONL file");
    telemetry_flags tf;
    up->add_option("--trace-file", tf.trace_file,
                   "Append each request's trace (OTLP JSON, one batch per line) to this file");
    up->add_option("--otlp-endpoint", tf.otlp_endpoint,
                   "Also POST traces to this OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318");
    up->add_option("--log-format", tf.log_format,
                   "Lambda log format for every function: text or json (default: each "
                   "function's LoggingConfig.LogFormat, else text)")
        ->check(CLI::IsMember({"text", "json", "Text", "JSON"}));
    up->add_option("--log-dir", tf.log_dir,
                   "Also write each function's log lines to DIR/<function>.log");
    up->add_option("--record", tf.record,
                   "Write the run record to FILE (JSON Lines): arrivals, handler answers, "
                   "process exits, timer ticks and rule changes, for coldbrew sim PATH --replay FILE");
    std::string ready_file;
    up->add_option("--ready-file", ready_file,
                   "Once every listener is up and the provisioned and standby execution "
                   "environments are ready, write the addresses here as JSON (as GET /ready "
                   "answers them)");

    std::string function, event_file, event_json;
    auto* inv = cli.add_subcommand("invoke", "Invoke one function once; the result goes to stdout");
    inv->add_option("function", function, "Function logical id / key")->required();
    add_load_flags(inv);
    auto* event_opt = inv->add_option("-e,--event", event_file,
                                      "File with the event JSON, or - for stdin (default: {})");
    inv->add_option("--event-json", event_json, "The event JSON itself")->excludes(event_opt);
    inv->add_option("--seed", seed, "Seed for request ids and modeled draws")->check(seed_check);
    inv->add_option("--decision-log", lf.decision_log, "Write modeled decisions to this JSONL file");

    auto* val = cli.add_subcommand("validate", "Load and check the config; print functions and routes");
    add_load_flags(val);
    val->add_option("path", lf.path, "Template or directory (same as --template)");
    val->add_flag("--realistic-sla", lf.realistic_sla, "Check with the profile's SLA phantoms on");

    cli.add_subcommand("version", "Print coldbrew's version")->fallthrough();

    sim_cli::sim_options sim_opts;
    sim_cli::add_sim_command(cli, sim_opts);

    report::report_options report_opts;
    report::add_report_command(cli, report_opts);

    // `test [PATH] [up's options] -- CMD [ARGS…]`: CMD is not coldbrew's to parse, and every
    // option `test` does not know is up's, parsed by `up` itself.
    cli::test_options test_opts;
    auto* test = cli::add_test_command(cli, test_opts);
    auto args = cli::split_command(argc, argv, test_opts.command);
    std::vector<char*> arg_ptrs;
    for (auto& a : args) arg_ptrs.push_back(a.data());
    bool testing = false;
    try {
        cli.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
        if (cli.got_subcommand(test)) {
            testing = true;
            std::vector<std::string> up_args{args[0], "up"};
            for (auto& a : test->remaining()) up_args.push_back(a);
            std::vector<char*> up_ptrs;
            for (auto& a : up_args) up_ptrs.push_back(a.data());
            cli.parse(static_cast<int>(up_ptrs.size()), up_ptrs.data());
        }
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; a bad flag is a usage error, exit 2 like a bad config.
        const int rc = cli.exit(e);
        return rc == 0 ? 0 : 2;
    }

    // `up` writes through queues that a reader who stops reading cannot block: a paused
    // terminal or a stalled pipe would otherwise freeze every API
    // (emulator/telemetry/output_queue.hpp). Declared before the logger, which keeps stderr.
    // `test` sends this output to a log file, and moves descriptors 1 and 2 while it runs.
    std::optional<telemetry::queued_stdio> queued;
    auto color = spdlog::color_mode::automatic;
    if (!testing && cli.got_subcommand("up")) {
        // The queue's stream is no terminal: colour is decided on the real descriptor.
        color = isatty(STDERR_FILENO) && spdlog::details::os::is_color_terminal()
                    ? spdlog::color_mode::always
                    : spdlog::color_mode::never;
        std::fflush(stdout);
        std::fflush(stderr);
        queued.emplace();
        stdout = queued->out();
        stderr = queued->err();
    }
    auto logger = std::make_shared<spdlog::logger>(
        "coldbrew", std::make_shared<spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>>(
                        stderr, color));
    spdlog::register_logger(logger);
    logger->set_pattern("%^[coldbrew %l]%$ %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(log_level));

    try {
        if (cli.got_subcommand("version")) {
            std::printf("coldbrew %s\n", version_text);
            return 0;
        }
        if (cli.got_subcommand("validate")) {
            std::vector<functions::interpreter> interpreters;
            auto stack = load(lf, &interpreters);
            // The JWT authorizers' keys, read as `up` reads them: a key that `up` would refuse
            // fails here too.
            app::load_jwt_keys(stack);
            auto m = functions::build_models(stack);
            models::faults::fault_registry kinds;
            models::faults::register_builtin_faults(kinds);
            if (lf.realistic_sla) config::apply_realistic_sla(stack, m->profile());
            models::faults::decider faults(kinds, stack.settings.seed.value_or(0));
            faults.set_max_active(stack.settings.faults.max_active_faults);
            auto rules = config::startup_fault_rules(stack, kinds);
            for (const auto& r : rules)
                for (const auto& w : config::rule_warnings(stack, r)) stack.warnings.push_back(w);
            faults.set_rules(std::move(rules), 0.0);
            print_stack(stack, std::cout, "http://" + stack.settings.host + ":" +
                                              std::to_string(stack.settings.gateway_port));
            print_models(stack, *m, stack.settings.seed.value_or(0), true, std::cout);
            print_faults(faults, std::cout);
            print_dependencies(stack, std::cout);
            std::cout << "Interpreters:\n";
            for (std::size_t i = 0; i < stack.functions.size() && i < interpreters.size(); ++i)
                std::cout << "  " << stack.functions[i].name << "  " << stack.functions[i].runtime
                          << "  " << functions::describe(interpreters[i]) << "\n";
            std::cout << "OK: " << stack.functions.size() << " functions, " << stack.routes.size()
                      << " routes\n";
            return 0;
        }
        if (testing) {
            // Free ports unless the command line names them: CI jobs share machines.
            if (port < 0) port = 0;
            for (auto* p : {&lf.invoke_port, &lf.admin_port, &lf.sfn_port})
                if (!*p) *p = 0;
            return cli::run_test(test_opts, lf.path, [&](cli::up_hooks& hooks) {
                return run_up(lf, port, host, seed, tf, ready_file, &hooks);
            });
        }
        if (cli.got_subcommand("up"))
            return run_up(lf, port, host, seed, tf, ready_file, nullptr, queued->outputs());
        if (cli.got_subcommand("sim")) return sim_cli::run_sim(sim_opts);
        if (cli.got_subcommand("report")) return report::run_report(report_opts);
        if (cli.got_subcommand("invoke")) return run_invoke(lf, function, event_file, event_json, seed);
    } catch (const config::config_error& e) {
        std::fprintf(stderr, "coldbrew: config error: %s\n", e.what());
        return 2;
    } catch (const CLI::ValidationError& e) {
        std::fprintf(stderr, "coldbrew: %s\n", e.what());
        return 2;
    }
    return 0;
}
