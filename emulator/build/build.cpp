#include "emulator/build/build.hpp"

#include "emulator/config/config_error.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace coldbrew::build {

namespace fs = std::filesystem;
using property = config::build_spec::esbuild_options::property;

namespace {

std::string kebab(std::string key) {
    std::replace(key.begin(), key.end(), '_', '-');
    return key;
}

const property* find_property(const config::build_spec& spec, std::string_view key) {
    for (const auto& p : spec.esbuild.properties)
        if (p.key == key) return &p;
    return nullptr;
}

[[noreturn]] void fail(const config::function& fn, const std::string& message) {
    throw config::config_error(fn.build->where, fn.build->path, fn.name + ": " + message);
}

bool executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

fs::path on_path(std::string_view name, std::string_view path_env) {
    std::size_t start = 0;
    while (start <= path_env.size()) {
        std::size_t end = path_env.find(':', start);
        if (end == std::string_view::npos) end = path_env.size();
        std::string_view dir = path_env.substr(start, end - start);
        if (!dir.empty()) {
            fs::path candidate = fs::path(std::string(dir)) / std::string(name);
            if (executable(candidate)) return candidate;
        }
        start = end + 1;
    }
    return {};
}

std::string env_value(const build_environment& env, std::string_view key) {
    for (const auto& kv : env.env)
        if (kv.size() > key.size() && kv.compare(0, key.size(), key) == 0 && kv[key.size()] == '=')
            return kv.substr(key.size() + 1);
    return {};
}

fs::path staging_dir(const config::build_spec& b) {
    return fs::path(b.artifacts_dir.string() + ".staging");
}
fs::path stamp_file(const config::build_spec& b) {
    return fs::path(b.artifacts_dir.string() + ".stamp");
}

bool skipped_dir(const fs::path& name) {
    return name == "node_modules" || name == ".git" || name == ".aws-sam" || name == ".coldbrew";
}

void add_file(std::ostringstream& out, const fs::path& file, const fs::path& base) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) return;
    const auto mtime = fs::last_write_time(file, ec);
    if (ec) return;
    out << fs::relative(file, base, ec).string() << ' ' << size << ' '
        << mtime.time_since_epoch().count() << '\n';
}

// The command and every input file's size and modification time (see build.hpp).
std::string stamp_text(const config::function& fn, const command& cmd) {
    std::ostringstream out;
    for (const auto& a : cmd.args) out << a << '\n';
    out << "--\n";
    const fs::path& src = fn.build->source_dir;
    std::error_code ec;
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(src, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        if (it->is_directory(ec) && skipped_dir(it->path().filename())) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add_file(out, f, src);
    // npm rewrites it on every install: the bundled packages changed.
    for (fs::path d = src; !d.empty(); d = d.parent_path()) {
        const fs::path lock = d / "node_modules" / ".package-lock.json";
        if (fs::exists(lock, ec)) {
            add_file(out, lock, d);
            break;
        }
        if (d == d.parent_path()) break;
    }
    return out.str();
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::uintmax_t tree_size(const fs::path& dir) {
    std::uintmax_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec))
        if (it->is_regular_file(ec)) total += it->file_size(ec);
    return total;
}

std::string size_text(std::uintmax_t bytes) {
    char buf[32];
    if (bytes < 1024) std::snprintf(buf, sizeof buf, "%ju B", bytes);
    else if (bytes < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KB", bytes / 1024.0);
    else std::snprintf(buf, sizeof buf, "%.1f MB", bytes / (1024.0 * 1024.0));
    return buf;
}

std::string tool_of(const config::function& fn) { return fn.build->method; }

std::string done_line(const config::function& fn, std::chrono::steady_clock::duration took) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f s",
                  std::chrono::duration<double>(took).count());
    return "build: " + tool_of(fn) + " in " + secs + ", " +
           size_text(tree_size(fn.build->artifacts_dir)) + " in " +
           fn.build->artifacts_dir.string();
}

std::string failure_text(const config::function& fn, int64_t status, int signal,
                         const std::string& output) {
    std::string why = signal ? "killed by signal " + std::to_string(signal)
                             : "exit status " + std::to_string(status);
    std::string text = "the " + tool_of(fn) + " build failed (" + why + ")";
    if (!output.empty()) {
        text += ":\n" + output;
        while (!text.empty() && text.back() == '\n') text.pop_back();
    }
    return text;
}

// Replaces artifacts_dir by the finished staging directory.
std::error_code swap_in(const config::build_spec& b) {
    std::error_code ec;
    fs::remove_all(b.artifacts_dir, ec);
    if (ec) return ec;
    fs::rename(staging_dir(b), b.artifacts_dir, ec);
    return ec;
}

void write_stamp(const config::build_spec& b, const std::string& stamp) {
    std::ofstream(stamp_file(b), std::ios::binary | std::ios::trunc) << stamp;
}

// One child process with its stdout and stderr collected into one text; `on_done` runs once
// the process has exited and both pipes are closed, then the object deletes itself.
struct child {
    uv_process_t proc{};
    uv_pipe_t pipes[2]{};
    std::string output;
    int open_handles = 0;
    int open_pipes = 2;
    bool exited = false;
    int64_t exit_status = 0;
    int term_signal = 0;
    std::function<void(child&)> on_done;

    static void on_close(uv_handle_t* h) {
        auto* c = static_cast<child*>(h->data);
        if (--c->open_handles == 0) {
            auto done = std::move(c->on_done);
            if (done) done(*c);
            delete c;
        }
    }
    void maybe_finish() {
        if (!exited || open_pipes > 0) return;
        uv_close(reinterpret_cast<uv_handle_t*>(&proc), on_close);
        for (auto& p : pipes) uv_close(reinterpret_cast<uv_handle_t*>(&p), on_close);
    }
};

// Starts `cmd`; nullptr (and `error` set) when it cannot be spawned.
// `own_group`: the child leads a process group of its own, which the builder kills whole;
// otherwise it stays in coldbrew's, so a Ctrl-C during the start-up build reaches it too.
child* spawn(uv_loop_t* loop, const command& cmd, std::function<void(child&)> on_done,
             std::string& error, bool own_group) {
    auto* c = new child;
    c->on_done = std::move(on_done);
    std::vector<char*> argv, envp;
    for (const auto& a : cmd.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : cmd.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const std::string cwd = cmd.cwd.string();
    for (auto& p : c->pipes) {
        uv_pipe_init(loop, &p, 0);
        p.data = c;
    }
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&c->pipes[0]);
    stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(&c->pipes[1]);
    uv_process_options_t opts{};
    opts.file = cmd.file.c_str();
    opts.args = argv.data();
    opts.env = envp.data();
    opts.cwd = cwd.c_str();
    opts.stdio = stdio;
    opts.stdio_count = 3;
    // Its own process group, so that shutdown ends make's children too.
    if (own_group) opts.flags = UV_PROCESS_DETACHED;
    opts.exit_cb = [](uv_process_t* p, int64_t status, int sig) {
        auto* c = static_cast<child*>(p->data);
        c->exited = true;
        c->exit_status = status;
        c->term_signal = sig;
        c->maybe_finish();
    };
    c->proc.data = c;
    if (int rc = uv_spawn(loop, &c->proc, &opts); rc != 0) {
        error = std::string("cannot run ") + cmd.file + ": " + uv_strerror(rc);
        c->on_done = nullptr;
        c->open_handles = 3;
        uv_close(reinterpret_cast<uv_handle_t*>(&c->proc), child::on_close);
        for (auto& p : c->pipes) uv_close(reinterpret_cast<uv_handle_t*>(&p), child::on_close);
        return nullptr;
    }
    c->open_handles = 3;
    for (auto& p : c->pipes) {
        uv_read_start(
            reinterpret_cast<uv_stream_t*>(&p),
            [](uv_handle_t*, size_t suggested, uv_buf_t* buf) {
                buf->base = new char[suggested];
                buf->len = suggested;
            },
            [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
                auto* c = static_cast<child*>(s->data);
                if (n > 0) c->output.append(buf->base, static_cast<std::size_t>(n));
                delete[] buf->base;
                if (n < 0) {
                    uv_read_stop(s);
                    --c->open_pipes;
                    c->maybe_finish();
                }
            });
    }
    return c;
}

}  // namespace

std::vector<std::string> esbuild_arguments(const config::build_spec& spec,
                                           const esbuild_inputs& inputs,
                                           const fs::path& out_dir) {
    std::vector<std::string> args;
    const property* external = find_property(spec, "external");
    bool all_external = false;
    if (external && external->type == property::kind::list)
        all_external = std::find(external->values.begin(), external->values.end(),
                                 "./node_modules/*") != external->values.end();
    if (all_external)
        for (const auto& d : inputs.dependencies) args.push_back("--external:" + d);
    for (const auto& e : inputs.entry_points) args.push_back(e);
    args.push_back("--bundle");
    args.push_back("--platform=node");
    args.push_back("--outdir=" + out_dir.string());
    if (!find_property(spec, "target")) args.push_back("--target=es2020");
    if (!find_property(spec, "format")) args.push_back("--format=cjs");
    if (!find_property(spec, "minify")) args.push_back("--minify");
    for (const auto& p : spec.esbuild.properties) {
        if (p.key == "bundle" || p.key == "platform" || p.key == "outdir") continue;
        if (p.key == "use_npm_ci" || p.key == "entry_points") continue;
        if (p.key == "external" && all_external) continue;
        const std::string flag = "--" + kebab(p.key);
        switch (p.type) {
        case property::kind::boolean:
            if (p.flag) args.push_back(flag);
            break;
        case property::kind::string:
            args.push_back(flag + "=" + (p.values.empty() ? std::string() : p.values.front()));
            break;
        case property::kind::list:
            for (const auto& v : p.values) args.push_back(flag + ":" + v);
            break;
        }
    }
    return args;
}

std::vector<std::string> resolve_entry_points(const config::build_spec& spec,
                                              const std::string& function) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : spec.esbuild.entry_points) {
        const fs::path path = spec.source_dir / e;
        if (fs::path(e).has_extension()) {
            if (fs::exists(path, ec)) {
                out.push_back(e);
                continue;
            }
        } else if (fs::exists(path.string() + ".ts", ec)) {
            out.push_back(e + ".ts");
            continue;
        } else if (fs::exists(path.string() + ".js", ec)) {
            out.push_back(e + ".js");
            continue;
        }
        throw config::config_error(spec.where, spec.path,
                                   function + ": esbuild entry point " + path.string() +
                                       " does not exist");
    }
    return out;
}

std::vector<std::string> package_dependencies(const fs::path& package_json) {
    std::vector<std::string> out;
    std::ifstream in(package_json);
    if (!in) return out;
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return out;
    auto it = j.find("dependencies");
    if (it == j.end() || !it->is_object()) return out;
    for (const auto& [name, _] : it->items()) out.push_back(name);
    return out;
}

fs::path find_esbuild(const fs::path& source_dir, std::string_view path_env) {
    for (fs::path d = source_dir; !d.empty(); d = d.parent_path()) {
        const fs::path candidate = d / "node_modules" / ".bin" / "esbuild";
        if (executable(candidate)) return candidate;
        if (d == d.parent_path()) break;
    }
    return on_path("esbuild", path_env);
}

command build_command(const config::function& fn, const fs::path& out_dir,
                      const build_environment& env) {
    const config::build_spec& b = *fn.build;
    command cmd;
    cmd.cwd = b.source_dir;
    cmd.env = env.env;
    const std::string path_env = env_value(env, "PATH");
    if (b.method == "esbuild") {
        const fs::path esbuild = find_esbuild(b.source_dir, path_env);
        if (esbuild.empty()) {
            const bool has_package = fs::exists(b.source_dir / "package.json");
            fail(fn, "esbuild is not installed: not in " +
                         (b.source_dir / "node_modules" / ".bin").string() +
                         " (nor a parent directory's) nor on PATH; " +
                         (has_package ? "run `npm install` in " + b.source_dir.string() +
                                            " (add esbuild with `npm install --save-dev "
                                            "esbuild` if package.json lacks it)"
                                      : "run `npm install --save-dev esbuild` in " +
                                            b.source_dir.string()));
        }
        esbuild_inputs in;
        in.entry_points = resolve_entry_points(b, fn.name);
        in.dependencies = package_dependencies(b.source_dir / "package.json");
        cmd.file = esbuild.string();
        cmd.args.push_back(cmd.file);
        for (auto& a : esbuild_arguments(b, in, out_dir)) cmd.args.push_back(std::move(a));
        return cmd;
    }
    if (b.method == "makefile") {
        const fs::path makefile = b.source_dir / "Makefile";
        if (!fs::is_regular_file(makefile))
            fail(fn, "BuildMethod makefile needs a Makefile in " + b.source_dir.string() +
                         " with a build-" + fn.name + " target");
        const fs::path make = on_path("make", path_env);
        if (make.empty()) fail(fn, "make is not on PATH; install make (Debian: apt-get install make)");
        cmd.file = make.string();
        cmd.args = {cmd.file, "--makefile", makefile.string(), "build-" + fn.name};
        cmd.env.push_back("ARTIFACTS_DIR=" + out_dir.string());
        return cmd;
    }
    fail(fn, "BuildMethod " + b.method + " is not built by coldbrew");
}

void check_builds(const config::stack& stack, const build_environment& env) {
    for (const auto& fn : stack.functions)
        if (fn.build) build_command(fn, staging_dir(*fn.build), env);
}

void build_all(config::stack& stack, telemetry::log_sink& logs, const coldbrew::clock& clock,
               const build_environment& env) {
    for (auto& fn : stack.functions) {
        if (!fn.build) continue;
        const config::build_spec& b = *fn.build;
        const fs::path staging = staging_dir(b);
        command cmd = build_command(fn, staging, env);
        const std::string stamp = stamp_text(fn, cmd);
        std::error_code ec;
        if (fs::is_directory(b.artifacts_dir, ec) && read_file(stamp_file(b)) == stamp) {
            fn.code_dir = b.artifacts_dir;
            logs.write(fn.name, "build: " + tool_of(fn) + " up to date in " +
                                    b.artifacts_dir.string());
            continue;
        }
        fs::remove_all(staging, ec);
        fs::create_directories(staging, ec);
        if (ec)
            fail(fn, "cannot create " + staging.string() + ": " + ec.message());
        const auto started = clock.steady();
        uv_loop_t loop;
        uv_loop_init(&loop);
        bool finished = false;
        int64_t status = 0;
        int signal = 0;
        std::string output, spawn_error;
        spawn(&loop, cmd,
              [&](child& c) {
                  finished = true;
                  status = c.exit_status;
                  signal = c.term_signal;
                  output = std::move(c.output);
              },
              spawn_error, false);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        if (!spawn_error.empty()) {
            fs::remove_all(staging, ec);
            fail(fn, spawn_error);
        }
        if (!finished || status != 0 || signal != 0) {
            fs::remove_all(staging, ec);
            fail(fn, failure_text(fn, status, signal, output));
        }
        if (auto sec = swap_in(b))
            fail(fn, "cannot move the build into " + b.artifacts_dir.string() + ": " + sec.message());
        write_stamp(b, stamp);
        fn.code_dir = b.artifacts_dir;
        logs.write(fn.name, done_line(fn, clock.steady() - started));
    }
}

// ---- builder --------------------------------------------------------------------------

struct builder::job {
    std::string name;
    config::function fn;  // the latest request's copy
    child* running = nullptr;
    bool pending = false;  // another build after the running one
    std::chrono::steady_clock::time_point started{};
    std::string stamp;
    std::vector<std::function<void(bool, std::string)>> waiting;  // covered by the running build
    std::vector<std::function<void(bool, std::string)>> next;     // covered by the pending one
};

builder::builder(uv_loop_t* loop, telemetry::log_sink& logs, const coldbrew::clock& clock,
                 build_environment env, supervisor::reaper* reaper)
    : loop_(loop), logs_(logs), clock_(clock), env_(std::move(env)), reaper_(reaper) {}

builder::~builder() { shutdown(); }

void builder::rebuild(const config::function& fn,
                      std::function<void(bool ok, std::string message)> done) {
    if (shut_down_ || !fn.build) {
        if (done) done(!shut_down_, shut_down_ ? "coldbrew is stopping" : "nothing to build");
        return;
    }
    auto it = std::find_if(jobs_.begin(), jobs_.end(),
                           [&](const auto& j) { return j->name == fn.name; });
    if (it == jobs_.end()) {
        jobs_.push_back(std::make_unique<job>());
        it = std::prev(jobs_.end());
        (*it)->name = fn.name;
    }
    job& j = **it;
    j.fn = fn;
    if (j.running) {
        j.pending = true;
        if (done) j.next.push_back(std::move(done));
        return;
    }
    if (done) j.waiting.push_back(std::move(done));
    start(j);
}

void builder::start(job& j) {
    const config::build_spec& b = *j.fn.build;
    auto report = [&j](bool ok, const std::string& message) {
        auto waiting = std::move(j.waiting);
        j.waiting.clear();
        for (auto& d : waiting) d(ok, message);
    };
    command cmd;
    try {
        cmd = build_command(j.fn, staging_dir(b), env_);
    } catch (const config::config_error& e) {
        logs_.write(j.name, std::string("build failed: ") + e.message());
        report(false, e.message());
        return;
    }
    std::error_code ec;
    fs::remove_all(staging_dir(b), ec);
    fs::create_directories(staging_dir(b), ec);
    j.stamp = stamp_text(j.fn, cmd);
    j.started = clock_.steady();
    std::string error;
    j.running = spawn(loop_, cmd,
                      [this, &j](child& c) {
                          if (reaper_) reaper_->forget(c.proc.pid);
                          j.running = nullptr;
                          const std::string out = std::move(c.output);
                          if (c.exit_status == 0 && c.term_signal == 0 && !shut_down_) {
                              finished(j, 0, 0);
                          } else {
                              std::error_code e;
                              fs::remove_all(staging_dir(*j.fn.build), e);
                              const std::string text =
                                  shut_down_ ? std::string("build stopped")
                                             : failure_text(j.fn, c.exit_status, c.term_signal, out);
                              logs_.write(j.name, "build failed: " + text);
                              auto waiting = std::move(j.waiting);
                              j.waiting.clear();
                              for (auto& d : waiting) d(false, text);
                          }
                          if (j.pending && !shut_down_) {
                              j.pending = false;
                              j.waiting = std::move(j.next);
                              j.next.clear();
                              start(j);
                          }
                      },
                      error, true);
    // Registered with the reaper, the build's group ends even when coldbrew is killed.
    if (j.running && reaper_) reaper_->watch(j.running->proc.pid);
    if (!j.running) {
        logs_.write(j.name, "build failed: " + error);
        report(false, error);
    }
}

void builder::finished(job& j, int64_t, int) {
    const config::build_spec& b = *j.fn.build;
    std::string message;
    bool ok = true;
    if (auto ec = swap_in(b)) {
        ok = false;
        message = "cannot move the build into " + b.artifacts_dir.string() + ": " + ec.message();
        logs_.write(j.name, "build failed: " + message);
    } else {
        write_stamp(b, j.stamp);
        message = done_line(j.fn, clock_.steady() - j.started);
        logs_.write(j.name, message);
    }
    auto waiting = std::move(j.waiting);
    j.waiting.clear();
    for (auto& d : waiting) d(ok, message);
}

void builder::shutdown() {
    shut_down_ = true;
    for (auto& j : jobs_) {
        if (j->running) {
            ::kill(-j->running->proc.pid, SIGKILL);
            if (reaper_) reaper_->forget(j->running->proc.pid);
            // The child closes itself when it has exited, after this builder may be gone.
            j->running->on_done = nullptr;
            j->running = nullptr;
            auto waiting = std::move(j->waiting);
            j->waiting.clear();
            for (auto& d : waiting) d(false, "coldbrew is stopping");
        }
        j->pending = false;
        auto next = std::move(j->next);
        j->next.clear();
        for (auto& d : next) d(false, "coldbrew is stopping");
    }
}

}  // namespace coldbrew::build
