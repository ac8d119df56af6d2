#include "emulator/cli/test_command.hpp"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/config/config_error.hpp"
#include "emulator/config/stack.hpp"
#include "models/faults/faults.hpp"

extern char** environ;

namespace coldbrew::cli {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string fixed(double x, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", digits, x);
    return buf;
}

// A figure as people read it: whole numbers without decimals.
std::string number_text(double x) {
    if (std::floor(x) == x && std::fabs(x) < 1e15) return fixed(x, 0);
    return fixed(x, std::fabs(x) >= 100 ? 1 : 2);
}

bool is_latency(const std::string& m) {
    return m == "mean" || m == "max" || (m.size() > 1 && m[0] == 'p' && std::isdigit(static_cast<unsigned char>(m[1])));
}

double latency_of(const telemetry::latency_histogram& h, const std::string& m) {
    if (m == "mean") return h.mean_ms();
    if (m == "max") return h.max_ms();
    return h.quantile_ms(std::stod(m.substr(1)) / 100.0);
}

bool available(int status) { return status > 0 && status < 500 && status != 429; }

std::string xml_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        case '\t': case '\n': case '\r': out += static_cast<char>(c); break;
        default:
            // XML 1.0 has no other control characters, not even escaped.
            if (c >= 0x20) out += static_cast<char>(c);
        }
    }
    return out;
}

// A shell-like rendering of CMD for reports: words with spaces or quotes are quoted.
std::string command_text(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`|&;<>()*?") == std::string::npos;
        if (plain) {
            out += a;
            continue;
        }
        out += '\'';
        for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

std::string iso_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
    return buf;
}

// Routes whose key, or whose function, is `subject`.
std::vector<const telemetry::request_stats::route_stats*> routes_of(const telemetry::request_stats& s,
                                                                     const std::string& subject) {
    std::vector<const telemetry::request_stats::route_stats*> out;
    for (const auto& [key, r] : s.routes())
        if (key.second == subject) out.push_back(&r);
    if (!out.empty()) return out;
    for (const auto& [key, r] : s.routes())
        if (r.function == subject) out.push_back(&r);
    return out;
}

std::string last_lines(const std::string& path, std::size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(std::move(line));
        if (lines.size() > n) lines.erase(lines.begin());
    }
    std::string out;
    for (const auto& l : lines) out += "  " + l + "\n";
    return out;
}

// The child CMD, its process group, --timeout and the grace before SIGKILL.
struct command_runner {
    uv_loop_t* loop = nullptr;
    uv_process_t process{};
    uv_timer_t timeout_timer{}, kill_timer{};
    bool timers_open = false;
    bool running = false;
    bool timed_out = false;
    bool term_sent = false;
    int pgid = 0;
    double timeout_ms = 0, kill_after_ms = 5000;
    std::chrono::steady_clock::time_point started;
    std::function<void()> stop_stack;
    test_outcome* outcome = nullptr;
    std::FILE* log = nullptr;  // coldbrew's own output

    void note(const std::string& line) {
        std::fprintf(log, "coldbrew test: %s\n", line.c_str());
        std::fflush(log);
    }

    // SIGTERM to the whole group now, SIGKILL after the grace.
    void terminate(const std::string& why) {
        if (!running || term_sent) return;
        term_sent = true;
        note(why + "; SIGTERM to its process group, SIGKILL in " + number_text(kill_after_ms) + " ms");
        ::kill(-pgid, SIGTERM);
        uv_timer_start(
            &kill_timer,
            [](uv_timer_t* t) {
                auto* self = static_cast<command_runner*>(t->data);
                if (self->running) ::kill(-self->pgid, SIGKILL);
            },
            static_cast<std::uint64_t>(kill_after_ms), 0);
    }

    void close_timers() {
        if (!timers_open) return;
        timers_open = false;
        uv_timer_stop(&timeout_timer);
        uv_timer_stop(&kill_timer);
        uv_close(reinterpret_cast<uv_handle_t*>(&timeout_timer), nullptr);
        uv_close(reinterpret_cast<uv_handle_t*>(&kill_timer), nullptr);
    }

    void start(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               int out_fd, int err_fd) {
        std::vector<char*> args, envp;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
        envp.push_back(nullptr);
        uv_stdio_container_t stdio[3];
        stdio[0].flags = UV_INHERIT_FD;
        stdio[0].data.fd = 0;
        stdio[1].flags = UV_INHERIT_FD;
        stdio[1].data.fd = out_fd;
        stdio[2].flags = UV_INHERIT_FD;
        stdio[2].data.fd = err_fd;
        uv_process_options_t o{};
        o.file = args[0];
        o.args = args.data();
        o.env = envp.data();
        o.stdio = stdio;
        o.stdio_count = 3;
        // A session of its own, so a process group of its own: one kill reaches everything
        // CMD started.
        o.flags = UV_PROCESS_DETACHED;
        o.exit_cb = [](uv_process_t* p, std::int64_t status, int sig) {
            auto* self = static_cast<command_runner*>(p->data);
            self->exited(status, sig);
        };
        process.data = this;
        uv_timer_init(loop, &timeout_timer);
        uv_timer_init(loop, &kill_timer);
        timeout_timer.data = kill_timer.data = this;
        timers_open = true;
        started = std::chrono::steady_clock::now();
        if (int rc = uv_spawn(loop, &process, &o); rc != 0) {
            outcome->command_error = std::string("cannot run ") + argv[0] + ": " + uv_strerror(rc);
            note(outcome->command_error);
            uv_close(reinterpret_cast<uv_handle_t*>(&process), nullptr);
            close_timers();
            outcome->command_status = 127;
            stop_stack();
            return;
        }
        running = true;
        pgid = process.pid;
        note("running " + command_text(argv) + " (pid " + std::to_string(pgid) + ")");
        if (timeout_ms > 0)
            uv_timer_start(
                &timeout_timer,
                [](uv_timer_t* t) {
                    auto* self = static_cast<command_runner*>(t->data);
                    self->timed_out = true;
                    self->terminate("the command ran longer than --timeout");
                },
                static_cast<std::uint64_t>(timeout_ms), 0);
    }

    void exited(std::int64_t status, int sig) {
        running = false;
        // Whatever CMD left running in its group goes with it.
        ::kill(-pgid, SIGKILL);
        outcome->command_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        outcome->command_status = sig ? 128 + sig : static_cast<int>(status);
        outcome->timed_out = timed_out;
        note("command ended: " + (sig ? "signal " + std::to_string(sig) : "status " + std::to_string(status)) +
             " after " + number_text(std::round(outcome->command_ms)) + " ms");
        uv_close(reinterpret_cast<uv_handle_t*>(&process), nullptr);
        close_timers();
        stop_stack();
    }
};

// The environment CMD starts with.
std::vector<std::string> command_env(const ready_info& info) {
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string_view::npos) env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    env["COLDBREW_GATEWAY_URL"] = info.gateway_url;
    env["COLDBREW_INVOKE_URL"] = info.invoke_url;
    env["COLDBREW_ADMIN_URL"] = info.admin_url;
    if (!info.admin_token.empty()) env["COLDBREW_ADMIN_TOKEN"] = info.admin_token;
    env["AWS_ENDPOINT_URL_LAMBDA"] = info.invoke_url;
    if (!info.sfn_url.empty()) {
        env["COLDBREW_SFN_URL"] = info.sfn_url;
        env["AWS_ENDPOINT_URL_SFN"] = info.sfn_url;
    }
    const bool credentials = env.count("AWS_ACCESS_KEY_ID") || env.count("AWS_SECRET_ACCESS_KEY") ||
                             env.count("AWS_SESSION_TOKEN") || env.count("AWS_PROFILE");
    if (!credentials) {
        env["AWS_ACCESS_KEY_ID"] = "test";
        env["AWS_SECRET_ACCESS_KEY"] = "test";
    }
    // The JavaScript SDK v3 reads AWS_REGION only; the CLI, boto3 and the Java SDK read
    // AWS_DEFAULT_REGION too: a region given either way reaches every SDK.
    if (!env.count("AWS_REGION"))
        env["AWS_REGION"] = env.count("AWS_DEFAULT_REGION") ? env["AWS_DEFAULT_REGION"] : info.region;
    std::vector<std::string> out;
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

int dup_cloexec(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 3); }

json latency_json(const telemetry::latency_histogram& h) {
    if (h.count() == 0) return nullptr;
    return {{"min", h.min_ms()},           {"p50", h.quantile_ms(0.5)}, {"p90", h.quantile_ms(0.9)},
            {"p95", h.quantile_ms(0.95)}, {"p99", h.quantile_ms(0.99)}, {"max", h.max_ms()},
            {"mean", h.mean_ms()}};
}

json by_status_json(const std::map<int, std::uint64_t>& m) {
    json out = json::object();
    for (const auto& [status, n] : m) out[status == 0 ? "none" : std::to_string(status)] = n;
    return out;
}

}  // namespace

json ready_info::to_json() const {
    json out = {{"gateway", gateway_url}, {"invoke", invoke_url}, {"admin", admin_url}};
    if (!sfn_url.empty()) out["sfn"] = sfn_url;
    out["region"] = region;
    out["seed"] = seed;
    return out;
}

bool write_ready_file(const std::string& path, const ready_info& info, std::string& error) {
    // Written beside its final name and renamed: a reader polling for the file never sees
    // half of it.
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << info.to_json().dump(2) << "\n";
        if (!out) {
            error = "cannot write " + tmp;
            return false;
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
        fs::remove(tmp, ec);
        return false;
    }
    return true;
}

double parse_duration_ms(const std::string& text) {
    double x = 0;
    const char* b = text.data();
    const char* e = b + text.size();
    auto [p, ec] = std::from_chars(b, e, x);
    if (ec != std::errc() || !std::isfinite(x) || x < 0)
        throw std::invalid_argument("expected a duration such as 90s, 5m, 1500ms or 1h, got '" + text + "'");
    const std::string unit(p, e);
    if (unit.empty() || unit == "s") return x * 1000;
    if (unit == "ms") return x;
    if (unit == "m" || unit == "min") return x * 60'000;
    if (unit == "h") return x * 3'600'000;
    throw std::invalid_argument("a duration takes ms, s, m or h, not '" + unit + "' in '" + text + "'");
}

const sim_cli::ensure_grammar& live_ensure_grammar() {
    static const sim_cli::ensure_grammar g{
        {"requests", "availability", "p50", "p90", "p95", "p99", "p99.9", "mean", "max",
         "cold_starts", "emulator_errors", "handler_errors", "faults"},
        {"faults."},
        true,
        {{"duplicates",
          "duplicates is a simulator figure: a live run cannot tell a client's retry from a new "
          "request, so let the test suite assert it (examples/payments checks its store)"},
         {"nines", "use availability (percent) on a live run"}}};
    return g;
}

sim_cli::ensure_gate parse_live_gate(const std::string& text) {
    auto g = sim_cli::parse_ensure(text, live_ensure_grammar());
    const bool takes_subject = g.metric == "requests" || g.metric == "availability" ||
                               g.metric == "cold_starts" || is_latency(g.metric);
    if (!g.subject.empty() && !takes_subject)
        throw std::invalid_argument("--ensure '" + text + "': " + g.metric +
                                    " is counted for the whole run; only requests, availability, "
                                    "latencies and cold_starts take a [route or function]");
    if (g.metric.starts_with("faults.")) {
        models::faults::fault_registry kinds;
        models::faults::register_builtin_faults(kinds);
        const auto kind = g.metric.substr(7);
        if (!kinds.find(kind)) {
            std::string all;
            for (const auto& n : kinds.names()) all += (all.empty() ? "" : ", ") + n;
            throw std::invalid_argument("--ensure '" + text + "': no fault kind '" + kind +
                                        "' (kinds: " + all + ")");
        }
    }
    return g;
}

std::string gate_unit(const sim_cli::ensure_gate& g) {
    if (is_latency(g.metric)) return "ms";
    if (g.metric == "availability") return "%";
    return "";
}

std::optional<double> gate_figure(const sim_cli::ensure_gate& g, const run_figures& run) {
    const auto& m = g.metric;
    if (m == "emulator_errors") return static_cast<double>(run.emulator_errors);
    if (m == "faults" || m.starts_with("faults.")) {
        double n = 0;
        const std::string kind = m == "faults" ? "" : m.substr(7);
        for (const auto& [k, v] : run.faults_by_kind)
            if (kind.empty() || k == kind) n += static_cast<double>(v);
        for (const auto& [k, v] : run.faults_missed_by_kind)
            if (kind.empty() || k == kind) n -= static_cast<double>(v);
        return n;
    }
    if (m == "cold_starts") {
        double n = 0;
        bool found = g.subject.empty();
        for (const auto& [name, f] : run.functions)
            if (g.subject.empty() || name == g.subject) {
                n += static_cast<double>(f.cold_starts);
                found = true;
            }
        if (!found) return std::nullopt;
        return n;
    }
    if (!run.requests) return std::nullopt;
    const auto& all = run.requests->all();
    if (m == "handler_errors") {
        auto it = all.by_end.find(telemetry::request_end::handler_error);
        return it == all.by_end.end() ? 0.0 : static_cast<double>(it->second);
    }
    // Requests, availability and latencies: the whole run, or the subject's routes merged.
    std::map<int, std::uint64_t> by_status;
    telemetry::latency_histogram latency;
    if (g.subject.empty()) {
        by_status = all.by_status;
        latency = all.latency;
    } else {
        for (const auto* r : routes_of(*run.requests, g.subject)) {
            for (const auto& [s, n] : r->by_status) by_status[s] += n;
            latency.merge(r->latency);
        }
    }
    std::uint64_t total = 0, ok = 0;
    for (const auto& [s, n] : by_status) {
        total += n;
        if (available(s)) ok += n;
    }
    if (m == "requests") return static_cast<double>(total);
    if (total == 0) return std::nullopt;
    if (m == "availability") return 100.0 * static_cast<double>(ok) / static_cast<double>(total);
    if (is_latency(m) && latency.count() > 0) return latency_of(latency, m);
    return std::nullopt;
}

std::string gate_result::figure_text() const {
    if (!figure) return "n/a";
    const auto unit = gate_unit(gate);
    if (unit == "ms") return fixed(*figure, *figure >= 100 ? 0 : 1) + " ms";
    if (unit == "%") return number_text(*figure) + "%";
    return number_text(*figure);
}

std::vector<std::string> split_command(int argc, char** argv, std::vector<std::string>& command) {
    std::vector<std::string> out;
    bool seen_test = false, in_command = false;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (in_command) {
            command.push_back(a);
            continue;
        }
        if (i > 0 && a == "test") seen_test = true;
        if (seen_test && a == "--") {
            in_command = true;
            continue;
        }
        out.push_back(a);
    }
    return out;
}

CLI::App* add_test_command(CLI::App& app, test_options& opts) {
    auto* t = app.add_subcommand(
        "test",
        "CI in one line: start the stack as `up` does, run `-- CMD [ARGS…]` against it, stop it, "
        "check the --ensure gates and write reports; exits with CMD's status, 1 when a gate "
        "fails, 2 for a config error. Every other option is up's (coldbrew up --help)");
    // What `test` does not know is up's: main parses it with `up`'s own flags.
    t->allow_extras();
    t->add_option("--ensure", opts.ensure,
                  "A gate on the run: 'p95 < 300ms', 'availability >= 99%', 'emulator_errors == "
                  "0', 'cold_starts <= 5', 'faults.phantom >= 1', 'p99[GET /pay] < 1s' "
                  "(repeatable)")
        // One gate per --ensure, so that a PATH after it is not taken for a gate.
        ->allow_extra_args(false);
    t->add_option("--timeout", opts.timeout,
                  "End CMD after DURATION (90s, 5m, 1h): SIGTERM to its process group, then "
                  "SIGKILL after --kill-after; exit status 124");
    t->add_option("--kill-after", opts.kill_after,
                  "Grace between SIGTERM and SIGKILL when CMD is ended (default 5s)");
    t->add_option("--log", opts.log,
                  "Where coldbrew's own output goes (default .coldbrew/test.log beside the "
                  "template); - for stderr");
    t->add_option("--junit", opts.junit, "Write a JUnit XML report: the run as a suite, CMD and each gate a test case");
    t->add_option("--summary-json", opts.summary_json, "Write the run summary, counters and gates as JSON");
    return t;
}

std::string junit_xml(const test_outcome& o, const run_figures* figures) {
    std::size_t failures = 0, errors = 0;
    const bool cmd_ok = o.command_status && *o.command_status == 0 && !o.timed_out;
    if (!o.command_status || !o.command_error.empty())
        ++errors;
    else if (!cmd_ok)
        ++failures;
    for (const auto& g : o.gates)
        if (!g.passed) ++failures;
    const std::size_t tests = 1 + o.gates.size();
    const std::string time = fixed((figures ? figures->run_ms : o.command_ms) / 1000.0, 3);
    std::ostringstream x;
    x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    x << "<testsuites name=\"coldbrew test\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" time=\"" << time << "\">\n";
    x << "  <testsuite name=\"coldbrew test\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"0\" time=\"" << time << "\" timestamp=\""
      << xml_escape(o.timestamp) << "\" hostname=\"" << xml_escape(o.hostname) << "\">\n";
    x << "    <properties>\n";
    auto property = [&](const std::string& name, const std::string& value) {
        x << "      <property name=\"" << xml_escape(name) << "\" value=\"" << xml_escape(value) << "\"/>\n";
    };
    property("command", command_text(o.command));
    property("exit_status", std::to_string(o.exit_status));
    if (o.ready) {
        property("seed", std::to_string(o.ready->seed));
        property("gateway", o.ready->gateway_url);
    }
    property("log", o.log_path);
    x << "    </properties>\n";
    x << "    <testcase classname=\"coldbrew.command\" name=\"" << xml_escape(command_text(o.command))
      << "\" time=\"" << fixed(o.command_ms / 1000.0, 3) << "\">\n";
    if (!o.command_status) {
        x << "      <error type=\"not_run\" message=\"the stack did not start; see "
          << xml_escape(o.log_path) << "\"/>\n";
    } else if (!o.command_error.empty()) {
        x << "      <error type=\"not_started\" message=\"" << xml_escape(o.command_error) << "\"/>\n";
    } else if (o.timed_out) {
        x << "      <failure type=\"timeout\" message=\"ended by --timeout\"/>\n";
    } else if (*o.command_status != 0) {
        x << "      <failure type=\"exit_status\" message=\"exited with status " << *o.command_status
          << "\"/>\n";
    }
    x << "    </testcase>\n";
    for (const auto& g : o.gates) {
        x << "    <testcase classname=\"coldbrew.gates\" name=\"" << xml_escape(g.gate.text)
          << "\" time=\"0\">\n";
        const std::string line = g.gate.metric + (g.gate.subject.empty() ? "" : "[" + g.gate.subject + "]") +
                                 " = " + g.figure_text();
        if (!g.passed)
            x << "      <failure type=\"gate\" message=\"" << xml_escape(line + ", not " + g.gate.op + " " +
                                                                         number_text(g.gate.threshold) +
                                                                         (gate_unit(g.gate) == "%" ? "%" : gate_unit(g.gate).empty() ? "" : " " + gate_unit(g.gate)))
              << "\"/>\n";
        x << "      <system-out>" << xml_escape(line) << "</system-out>\n";
        x << "    </testcase>\n";
    }
    if (figures) x << "    <system-out>" << xml_escape(figures->summary_text) << "</system-out>\n";
    x << "  </testsuite>\n</testsuites>\n";
    return x.str();
}

json summary_json(const test_outcome& o, const run_figures* f) {
    json out;
    out["command"] = o.command;
    out["exit_status"] = o.exit_status;
    out["command_status"] = o.command_status ? json(*o.command_status) : json(nullptr);
    out["timed_out"] = o.timed_out;
    if (!o.command_error.empty()) out["command_error"] = o.command_error;
    out["command_ms"] = o.command_ms;
    out["timestamp"] = o.timestamp + "Z";
    out["log"] = o.log_path;
    out["ready"] = o.ready ? o.ready->to_json() : json(nullptr);
    json gates = json::array();
    for (const auto& g : o.gates)
        gates.push_back({{"gate", g.gate.text},
                         {"metric", g.gate.metric},
                         {"subject", g.gate.subject.empty() ? json(nullptr) : json(g.gate.subject)},
                         {"op", g.gate.op},
                         {"threshold", g.gate.threshold},
                         {"unit", gate_unit(g.gate)},
                         {"figure", g.figure ? json(*g.figure) : json(nullptr)},
                         {"passed", g.passed}});
    out["gates"] = gates;
    if (!f) {
        out["run"] = nullptr;
        return out;
    }
    json run;
    run["run_ms"] = f->run_ms;
    if (f->requests) {
        const auto& all = f->requests->all();
        run["requests"] = all.requests;
        run["by_status"] = by_status_json(all.by_status);
        json ends = json::object();
        for (auto e : telemetry::all_request_ends) {
            auto it = all.by_end.find(e);
            ends[std::string(telemetry::to_string(e))] = it == all.by_end.end() ? 0 : it->second;
        }
        run["outcomes"] = ends;
        run["latency_ms"] = latency_json(all.latency);
        json routes = json::object();
        for (const auto& [key, r] : f->requests->routes()) {
            json jr = {{"front", key.first},
                       {"function", r.function},
                       {"requests", r.latency.count()},
                       {"by_status", by_status_json(r.by_status)},
                       {"latency_ms", latency_json(r.latency)}};
            routes[key.first + " " + key.second] = jr;
        }
        run["routes"] = routes;
    }
    run["emulator_errors"] = f->emulator_errors;
    run["faults_by_kind"] = f->faults_by_kind;
    run["faults_missed_by_kind"] = f->faults_missed_by_kind;
    json fns = json::object();
    for (const auto& [name, ff] : f->functions)
        fns[name] = {{"invocations", ff.invocations}, {"cold_starts", ff.cold_starts},
                     {"function_errors", ff.function_errors}, {"timeouts", ff.timeouts},
                     {"throttles", ff.throttles}};
    run["functions"] = fns;
    run["summary_text"] = f->summary_text;
    out["run"] = run;
    return out;
}

std::string markdown_summary(const test_outcome& o, const run_figures* f) {
    std::ostringstream md;
    const bool passed = o.exit_status == 0;
    auto cell = [](std::string s) {
        std::string out;
        for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
        return out;
    };
    md << "### coldbrew test: " << (passed ? "passed" : "failed") << "\n\n";
    md << "`" << cell(command_text(o.command)) << "` ";
    if (!o.command_status)
        md << "did not run (the stack did not start)";
    else if (!o.command_error.empty())
        md << "could not start: " << cell(o.command_error);
    else if (o.timed_out)
        md << "was ended by --timeout";
    else
        md << "exited with status " << *o.command_status;
    md << " after " << fixed(o.command_ms / 1000.0, 1) << " s";
    if (o.ready) md << "; seed " << o.ready->seed;
    md << "; exit status " << o.exit_status << "\n\n";
    if (f && f->requests) {
        const auto& all = f->requests->all();
        md << all.requests << " requests";
        if (all.latency.count())
            md << ", p50 " << fixed(all.latency.quantile_ms(0.5), 1) << " ms, p95 "
               << fixed(all.latency.quantile_ms(0.95), 1) << " ms, p99 "
               << fixed(all.latency.quantile_ms(0.99), 1) << " ms";
        std::uint64_t faults = 0;
        for (const auto& [_, n] : f->faults_by_kind) faults += n;
        md << "; " << faults << " faults injected\n\n";
    }
    if (!o.gates.empty()) {
        md << "| gate | figure | result |\n|---|---|---|\n";
        for (const auto& g : o.gates)
            md << "| `" << cell(g.gate.text) << "` | " << cell(g.figure_text()) << " | "
               << (g.passed ? "pass" : "**fail**") << " |\n";
        md << "\n";
    }
    return md.str();
}

int run_test(const test_options& opts, const std::string& app_path,
             const std::function<int(up_hooks&)>& run_up) {
    test_outcome outcome;
    outcome.command = opts.command;
    outcome.timestamp = iso_now();
    outcome.hostname = host_name();
    // Everything a usage error can be is found before the stack starts.
    if (opts.command.empty()) {
        std::fprintf(stderr, "coldbrew test: no command; usage: coldbrew test [PATH] [options] -- CMD [ARGS...]\n");
        return 2;
    }
    double timeout_ms = 0, kill_after_ms = 0;
    try {
        if (!opts.timeout.empty()) timeout_ms = parse_duration_ms(opts.timeout);
        kill_after_ms = parse_duration_ms(opts.kill_after);
        for (const auto& e : opts.ensure) outcome.gates.push_back({parse_live_gate(e), std::nullopt, false});
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "coldbrew test: %s\n", e.what());
        return 2;
    }

    // A report that cannot be written would leave CI green with nothing to show: its
    // directory is made, and the file tried, before anything starts.
    for (const auto* path : {&opts.junit, &opts.summary_json}) {
        if (path->empty()) continue;
        std::error_code ec;
        const fs::path p = fs::absolute(*path);
        fs::create_directories(p.parent_path(), ec);
        const bool existed = fs::exists(p, ec);
        if (!std::ofstream(p, std::ios::binary | std::ios::app)) {
            std::fprintf(stderr, "coldbrew test: cannot write %s\n", p.c_str());
            return 2;
        }
        if (!existed) fs::remove(p, ec);
    }

    // coldbrew's own output: a log file (default beside the template), or stderr.
    std::fflush(stdout);
    std::fflush(stderr);
    const int cmd_out = dup_cloexec(1), cmd_err = dup_cloexec(2);
    if (cmd_out < 0 || cmd_err < 0) {
        std::fprintf(stderr, "coldbrew test: cannot duplicate stdout/stderr: %s\n", std::strerror(errno));
        return 2;
    }
    std::FILE* report = ::fdopen(dup_cloexec(cmd_err), "w");  // the caller's stderr, for our last lines
    std::setvbuf(report, nullptr, _IOLBF, 0);
    if (opts.log == "-") {
        outcome.log_path = "-";
        ::dup2(cmd_err, 1);
    } else {
        fs::path log;
        if (!opts.log.empty()) {
            log = fs::absolute(opts.log);
        } else {
            std::error_code ec;
            fs::path dir = fs::absolute(app_path);
            if (!fs::is_directory(dir, ec)) dir = dir.parent_path();
            log = dir / ".coldbrew" / "test.log";
            fs::create_directories(log.parent_path(), ec);
        }
        outcome.log_path = log.string();
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            std::fprintf(report, "coldbrew test: --log %s: %s\n", log.c_str(), std::strerror(errno));
            std::fclose(report);
            ::close(cmd_out);
            ::close(cmd_err);
            return 2;
        }
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
    }
    auto restore = [&] {
        std::fflush(stdout);
        std::fflush(stderr);
        ::dup2(cmd_out, 1);
        ::dup2(cmd_err, 2);
    };

    command_runner runner;
    runner.timeout_ms = timeout_ms;
    runner.kill_after_ms = kill_after_ms;
    runner.outcome = &outcome;
    runner.log = stdout;
    std::optional<run_figures> figures;
    telemetry::request_stats requests_copy;

    up_hooks hooks;
    // A gate naming a route or function the stack does not have would only show `n/a` after
    // CMD ran: a typo costs a whole CI run. Said at start instead, as a config error.
    hooks.loaded = [&](const config::stack& stack) {
        std::vector<std::string> known;
        for (const auto& rt : stack.routes)
            known.push_back(rt.path == "$default" ? std::string("$default") : rt.method + " " + rt.path);
        for (const auto& f : stack.functions) {
            known.push_back(f.name);
            known.push_back(f.function_name);
            known.push_back("Invoke " + f.name);
        }
        for (const auto& g : outcome.gates) {
            if (g.gate.subject.empty() ||
                std::find(known.begin(), known.end(), g.gate.subject) != known.end())
                continue;
            throw config::config_error({}, "--ensure",
                                       "'" + g.gate.text + "': the stack has no route or function '" +
                                           g.gate.subject + "' (routes are \"METHOD /path\" as the template "
                                           "declares them, or \"$default\"; functions by logical id or "
                                           "FunctionName)");
        }
    };
    hooks.ready = [&](uv_loop_t* loop, const ready_info& info, std::function<void()> stop) {
        outcome.ready = info;
        runner.loop = loop;
        runner.stop_stack = std::move(stop);
        runner.start(opts.command, command_env(info), cmd_out, cmd_err);
    };
    hooks.signal = [&](int sig) {
        if (!runner.running) return false;
        if (runner.term_sent) return false;  // a second signal: stop the stack at once
        runner.terminate(std::string("coldbrew test got ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
        return true;
    };
    hooks.finished = [&](const run_figures& f) {
        figures = f;
        // The records outlive the app through this copy.
        if (f.requests) {
            requests_copy = *f.requests;
            figures->requests = &requests_copy;
        }
    };

    int up_status = 0;
    std::string start_error;
    try {
        up_status = run_up(hooks);
    } catch (const config::config_error& e) {
        start_error = std::string("config error: ") + e.what();
        up_status = 2;
    } catch (const std::exception& e) {
        start_error = e.what();
        up_status = 2;
    }
    // A CMD still running here means the stack stopped under it: end it too.
    if (runner.running) {
        ::kill(-runner.pgid, SIGKILL);
        runner.running = false;
    }
    restore();
    ::close(cmd_out);
    ::close(cmd_err);

    if (!outcome.command_status) {
        // The stack never became ready: CMD did not run.
        if (!start_error.empty()) std::fprintf(report, "coldbrew: %s\n", start_error.c_str());
        if (outcome.log_path != "-")
            std::fprintf(report, "coldbrew test: the stack did not start (exit %d); the end of %s:\n%s",
                         up_status, outcome.log_path.c_str(), last_lines(outcome.log_path, 20).c_str());
        outcome.exit_status = 2;
    } else {
        for (auto& g : outcome.gates) {
            g.figure = figures ? gate_figure(g.gate, *figures) : std::nullopt;
            g.passed = g.figure && sim_cli::ensure_holds(g.gate, *g.figure);
            std::fprintf(report, "coldbrew test: gate %s: %s (%s%s = %s)\n", g.passed ? "pass" : "FAIL",
                         g.gate.text.c_str(), g.gate.metric.c_str(),
                         g.gate.subject.empty() ? "" : ("[" + g.gate.subject + "]").c_str(),
                         g.figure_text().c_str());
        }
        const bool gates_ok = std::all_of(outcome.gates.begin(), outcome.gates.end(),
                                          [](const gate_result& g) { return g.passed; });
        if (outcome.timed_out)
            outcome.exit_status = 124;
        else if (*outcome.command_status != 0)
            outcome.exit_status = *outcome.command_status;
        else
            outcome.exit_status = gates_ok ? 0 : 1;
    }

    const run_figures* fp = figures ? &*figures : nullptr;
    auto write = [&](const std::string& path, const std::string& text, bool append, const char* what) {
        std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
        out << text;
        if (!out) {
            std::fprintf(report, "coldbrew test: cannot write the %s to %s\n", what, path.c_str());
            // Lost reports fail the run: CI would otherwise pass with nothing to show for it.
            if (outcome.exit_status == 0) outcome.exit_status = 2;
        }
    };
    if (!opts.junit.empty()) write(opts.junit, junit_xml(outcome, fp), false, "JUnit report");
    if (!opts.summary_json.empty())
        write(opts.summary_json, summary_json(outcome, fp).dump(2) + "\n", false, "JSON summary");
    if (const char* gh = std::getenv("GITHUB_STEP_SUMMARY"); gh && *gh)
        write(gh, markdown_summary(outcome, fp), true, "step summary");
    if (outcome.command_status) {
        std::string how = outcome.timed_out ? "ended by --timeout"
                          : !outcome.command_error.empty()
                              ? outcome.command_error
                              : "exited with status " + std::to_string(*outcome.command_status);
        std::fprintf(report, "coldbrew test: %s; %s; exit status %d%s%s\n", how.c_str(),
                     outcome.gates.empty() ? "no gates"
                     : std::all_of(outcome.gates.begin(), outcome.gates.end(),
                                   [](const gate_result& g) { return g.passed; })
                         ? "every gate passed"
                         : "a gate failed",
                     outcome.exit_status, outcome.log_path == "-" ? "" : "; coldbrew's log: ",
                     outcome.log_path == "-" ? "" : outcome.log_path.c_str());
    }
    std::fclose(report);
    return outcome.exit_status;
}

}  // namespace coldbrew::cli
