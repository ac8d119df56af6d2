#include "emulator/sim_cli/stack_scenario.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "emulator/config/command_line.hpp"
#include "emulator/config/fault_rules.hpp"
#include "emulator/states/definition.hpp"
#include <nlohmann/json.hpp>

#include "models/compute/cpu.hpp"
#include "models/distribution/distribution.hpp"

namespace coldbrew::sim_cli {

namespace {

namespace sim = models::sim;
namespace mf = models::faults;

std::string route_key(const config::route& r) {
    return r.path == "$default" ? std::string("$default") : r.method + " " + r.path;
}

std::string invoke_path(const config::function& fn) {
    return "/2015-03-31/functions/" + fn.function_name + "/invocations";
}

sim::live_request invoke_live(const config::function& fn) {
    sim::live_request l;
    l.where = mf::front::invoke;
    l.route = "Invoke " + fn.name;
    l.function = fn.name;
    l.function_name = fn.function_name;
    l.method = "POST";
    l.path = invoke_path(fn);
    return l;
}

// The closest name by edit distance, when close enough to be a typo (a third of its length).
std::optional<std::string> closest(const std::string& word, const std::vector<std::string>& names) {
    std::optional<std::string> best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& n : names) {
        std::vector<std::size_t> row(n.size() + 1);
        for (std::size_t j = 0; j <= n.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= word.size(); ++i) {
            std::size_t diag = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= n.size(); ++j) {
                const std::size_t up = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (word[i - 1] == n[j - 1] ? 0u : 1u)});
                diag = up;
            }
        }
        if (row[n.size()] < best_d) {
            best_d = row[n.size()];
            best = n;
        }
    }
    return best;
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

class converter {
public:
    converter(const config::stack& s, const functions::stack_models& m, const stack_sim_options& o,
              stack_scenario& out)
        : s_(s), m_(m), o_(o), out_(out), sc_(out.scenario) {}

    void run(std::vector<mf::rule> rules) {
        sc_.name = s_.template_file.parent_path().filename().string();
        if (sc_.name.empty()) sc_.name = s_.template_file.stem().string();
        sc_.description = "the stack in " + s_.template_file.filename().string() +
                          (s_.coldbrew_file ? " with coldbrew.yaml" : "");
        sc_.seed = o_.seed.value_or(s_.settings.seed.value_or(1));
        sc_.fault_seed = sc_.seed;
        sc_.requests = o_.requests.value_or(s_.settings.sim.requests.value_or(100000));
        sc_.model_profile = &m_.profile();
        sc_.price = m_.profile().prices;
        if (s_.settings.sim.arrivals) sc_.arrival = *s_.settings.sim.arrivals;
        else out_.notes.push_back("no sim.arrivals in coldbrew.yaml: " + std::to_string(static_cast<int>(sc_.arrival.rate)) +
                                  " requests per second, evenly spaced");
        if (o_.rate_scale != 1) scale_arrivals(sc_.arrival, o_.rate_scale);
        if (s_.settings.sim.client_timeout_ms) sc_.client_timeout_ms = *s_.settings.sim.client_timeout_ms;
        sc_.slo = s_.settings.sim.slo;
        classify_rules(rules);
        sc_.fault_rules = std::move(rules);

        // Components: APIs, functions, dependencies, then simulated state machines.
        for (const auto& api : s_.apis) add_api(api);
        for (const auto& fn : s_.functions) add_function(fn);
        for (const auto& d : s_.settings.dependencies) add_dependency(d);
        for (const auto& fn : s_.functions) fill_calls(fn);
        for (const auto& sm : s_.state_machines) add_state_machine(sm);
        add_entries();
    }

private:
    std::size_t add(sim::component c) {
        index_[c.name] = sc_.components.size();
        sc_.components.push_back(std::move(c));
        return sc_.components.size() - 1;
    }

    void classify_rules(const std::vector<mf::rule>& rules) {
        for (const auto& r : rules) {
            if (r.name == "sla-gateway") sla_gateway_ = true;
            if (r.name == "sla-invoke") sla_invoke_ = true;
            auto skip = [&](const std::string& why) {
                out_.not_simulated.push_back("fault rule '" + r.name + "': " + why);
            };
            const bool dependency_rule = !r.dependency.empty() || (r.only_front && *r.only_front == mf::front::dependency);
            if (dependency_rule) {
                if (r.name.rfind("availability-", 0) == 0)
                    out_.notes.push_back("fault rule '" + r.name +
                                         "': simulated as the dependency component's availability");
                else
                    skip("the dependency front (connections and request turns on a dependency's proxy) is not "
                         "simulated; give the dependency an availability instead");
                continue;
            }
            if (!r.headers.empty())
                skip("header matchers: the simulated requests carry no headers, so it never fires");
            else if (r.kind == "slow_response")
                skip("slow_response: response bandwidth is not simulated");
            if (r.window_from_ms || r.window_until_ms)
                out_.notes.push_back("fault rule '" + r.name +
                                     "': its time window counts from the start of each replication "
                                     "(virtual time), as live it counts from when the rule was added");
        }
    }

    void add_api(const config::api& api) {
        sim::component c;
        c.name = api.id;
        c.service = "api_gateway";
        c.kind = sim::service_kind::api_gateway;
        c.http_api = api.kind == config::api_kind::http;
        c.latency_ms = models::distribution::fixed(0);
        c.availability = 1.0;
        c.availability_source = sla_gateway_ ? "the stack's SLA rule sla-gateway (through the fault rules)"
                                             : "none lost: no faults.sla.gateway (--realistic-sla adds the SLA)";
        add(std::move(c));
    }

    void add_function(const config::function& fn) {
        const functions::function_model* fm = m_.find(fn.name);
        sim::component c;
        c.name = fn.name;
        c.service = "lambda";
        c.kind = sim::service_kind::lambda;
        c.timeout_ms = fn.timeout_s * 1000.0;
        c.function.traits = fm ? fm->traits : models::function_traits{};
        c.function.reserved_concurrency = fn.reserved_concurrency;
        c.function.provisioned_concurrency = fn.provisioned_concurrency.value_or(0);
        c.function.max_environments = std::max(1, fn.max_environments);
        if (fn.model.keep_alive) c.function.keep_alive_ms = models::parse_distribution(*fn.model.keep_alive);
        if (fn.model.max_lifetime) c.function.max_lifetime_ms = models::parse_distribution(*fn.model.max_lifetime);
        c.function.cold_start.runtime_row = fn.model.runtime;
        if (fn.model.init_duration) c.function.cold_start.runtime_init = models::parse_distribution(*fn.model.init_duration);
        c.function.cold_start.package_ms_per_zipped_mb = fn.model.package_ms_per_mb;
        if (fn.build && !fn.package_mb)
            out_.notes.push_back(fn.name + ": package measured from its sources (a simulation builds nothing)");
        const config::function_sim* fs = fn.sim ? &*fn.sim : nullptr;
        if (fs && fs->latency_ms) {
            c.latency_ms = *fs->latency_ms;
        } else {
            c.latency_ms = models::parse_distribution(default_handler_latency);
            out_.notes.push_back(fn.name + ": no sim.latency, using " + default_handler_latency);
        }
        if (fs && fs->cpu_share) {
            c.function.cpu_share = *fs->cpu_share;
            c.function.latency_at_memory_mb = fs->latency_at_memory_mb.value_or(fn.memory_mb);
        }
        c.availability = 1.0;
        if (fs && fs->error_rate && *fs->error_rate > 0) {
            c.availability = 1.0 - *fs->error_rate;
            c.availability_source = "coldbrew.yaml " + fs->path + ".errors (handler errors)";
        } else {
            c.availability_source = "no handler errors (sim.errors)";
        }
        c.failures = sim::failure_mix{1.0, 0.0, 0.0};
        if (sla_invoke_) c.availability_source += "; SLA through fault rule sla-invoke";
        add(std::move(c));
    }

    void add_dependency(const config::dependency& d) {
        sim::component c;
        c.name = d.name;
        c.service = d.service.empty() ? "dependency" : d.service;
        c.kind = sim::service_kind::generic;
        if (d.request_latency) {
            c.latency_ms = models::parse_distribution(*d.request_latency);
        } else {
            c.latency_ms = models::parse_distribution(default_dependency_latency);
            out_.notes.push_back(d.name + ": no latency.request, using " + default_dependency_latency);
        }
        if (d.availability_percent) {
            c.availability = *d.availability_percent / 100.0;
            c.availability_source = "coldbrew.yaml " + d.path + ".availability";
            // hang: the caller waits for its timeout; refuse and reset answer at once.
            c.failures = d.availability_outcome == "hang" ? sim::failure_mix{0.0, 1.0, 0.0}
                                                          : sim::failure_mix{1.0, 0.0, 0.0};
        } else {
            c.availability = 1.0;
            c.availability_source = "coldbrew.yaml gives no availability";
        }
        add(std::move(c));
    }

    const config::function* function_named(const std::string& name) const {
        for (const auto& f : s_.functions)
            if (f.name == name || f.function_name == name) return &f;
        return nullptr;
    }

    void fill_calls(const config::function& fn) {
        if (!fn.sim) return;
        sim::component& c = sc_.components[index_.at(fn.name)];
        for (const auto& call : fn.sim->calls) {
            sim::step st;
            st.retry = call.retry;
            st.timeout_ms = call.timeout_ms;
            st.async = call.async;
            if (const config::function* target = function_named(call.target)) {
                st.component = index_.at(target->name);
                // The live Invoke API decides synchronous invocations only; Event
                // invocations are queued without a decision.
                if (!call.async) st.live = invoke_live(*target);
            } else if (std::any_of(s_.settings.dependencies.begin(), s_.settings.dependencies.end(),
                                   [&](const config::dependency& d) { return d.name == call.target; })) {
                st.component = index_.at(call.target);
            } else {
                std::vector<std::string> names;
                for (const auto& f : s_.functions) names.push_back(f.name);
                for (const auto& d : s_.settings.dependencies) names.push_back(d.name);
                const auto best = closest(call.target, names);
                throw config::config_error(call.where, call.path,
                                           "no function or dependency named '" + call.target + "'" +
                                               (best ? " (did you mean '" + *best + "'?)" : std::string()) +
                                               "; functions and dependencies: " + join(names));
            }
            c.calls.push_back(std::move(st));
        }
    }

    // A chain of Task states that invoke the stack's functions (Pass and Succeed between
    // them): the only shape simulated; the reason otherwise.
    std::optional<std::string> simple_chain(const config::state_machine& sm,
                                            std::vector<std::pair<const states::state*, const config::function*>>& tasks) const {
        std::shared_ptr<const states::machine> m;
        try {
            m = states::parse_definition(sm.definition);
        } catch (const std::exception& e) {
            return std::string("its definition does not parse: ") + e.what();
        }
        std::string at = m->start_at;
        for (std::size_t guard = 0; guard <= m->states.size(); ++guard) {
            const states::state* st = m->find(at);
            if (!st) return "state " + at + " is missing";
            switch (st->type) {
            case states::state_type::pass: break;
            case states::state_type::succeed: return std::nullopt;
            case states::state_type::task: {
                using kind = states::task_resource::kind;
                std::string name;
                if (st->target.what == kind::lambda_arn) {
                    name = st->resource;
                } else if (st->target.what == kind::lambda_invoke && st->parameters &&
                           st->parameters->is_object() && st->parameters->contains("FunctionName") &&
                           (*st->parameters)["FunctionName"].is_string()) {
                    name = (*st->parameters)["FunctionName"].get<std::string>();
                } else {
                    return "Task " + st->name + " runs something other than a function of the stack (" +
                           st->resource + ")";
                }
                const config::function* fn = nullptr;
                if (auto it = sm.function_arns.find(name); it != sm.function_arns.end())
                    fn = s_.find_function(it->second);
                if (!fn) fn = function_named(name);
                if (!fn && st->target.what == kind::lambda_arn) fn = function_named(st->target.function);
                if (!fn) return "Task " + st->name + " names no function of the stack (" + name + ")";
                if (!st->catches.empty()) return "Task " + st->name + " has a Catch (branches are not simulated)";
                tasks.emplace_back(st, fn);
                break;
            }
            default:
                return "it has a " + std::string(states::to_string(st->type)) + " state (" + st->name +
                       "); only chains of Task, Pass and Succeed states are simulated";
            }
            if (st->end) return std::nullopt;
            at = st->next;
        }
        return "its states form a loop";
    }

    void add_state_machine(const config::state_machine& sm) {
        const bool routed = std::any_of(s_.routes.begin(), s_.routes.end(),
                                        [&](const config::route& r) { return r.state_machine == sm.name; });
        if (!routed) {
            out_.not_simulated.push_back("state machine " + sm.name +
                                         ": no route starts it (only routes and functions are entries)");
            return;
        }
        std::vector<std::pair<const states::state*, const config::function*>> tasks;
        if (auto why = simple_chain(sm, tasks)) {
            out_.not_simulated.push_back("state machine " + sm.name + " and the routes that start it: " + *why);
            return;
        }
        sim::component c;
        c.name = sm.name;
        c.service = "step_functions";
        c.kind = sim::service_kind::step_functions;
        c.sfn.express = sm.type == config::state_machine::kind::express;
        c.latency_ms = models::distribution::fixed(0);
        c.availability = 1.0;
        c.availability_source = "none lost (Step Functions faults come through the rules)";
        for (const auto& [st, fn] : tasks) {
            sim::step call;
            call.component = index_.at(fn->name);
            if (!st->retry.empty()) {
                sim::retry_policy p;
                p.type = sim::retry_policy::kind::step_functions;
                p.step_functions = st->retry;
                call.retry = p;
            }
            // A Task waits TimeoutSeconds, 60 s by default in coldbrew's interpreter.
            call.timeout_ms = st->timeout_s.value_or(60) * 1000.0;
            sim::live_request l;
            l.where = mf::front::states;
            l.route = sm.name + " " + st->name;
            l.function = fn->name;
            l.function_name = fn->function_name;
            l.method = "POST";
            l.path = invoke_path(*fn);
            l.state_machine = sm.name;
            l.state_machine_name = sm.state_machine_name;
            l.state = st->name;
            l.state_path = st->name;
            call.live = std::move(l);
            c.calls.push_back(std::move(call));
        }
        add(std::move(c));
    }

    void add_entries() {
        struct candidate {
            std::string name;
            std::vector<sim::step> flow;
        };
        std::vector<candidate> all;
        for (const auto& r : s_.routes) {
            const std::string key = route_key(r);
            const auto target = r.state_machine.empty() ? r.function : r.state_machine;
            if (!index_.count(target)) continue;  // a state machine left out (listed above)
            candidate c;
            c.name = key;
            sim::step gw;
            gw.component = index_.at(r.api_id);
            c.flow.push_back(gw);
            sim::step call;
            call.component = index_.at(target);
            call.timeout_ms = static_cast<double>(r.integration_timeout_ms);
            if (r.state_machine.empty()) {
                const config::function& fn = *s_.find_function(r.function);
                sim::live_request l;
                l.where = mf::front::gateway;
                l.route = key;
                l.function = fn.name;
                l.function_name = fn.function_name;
                l.method = r.method;
                // A route's requests have concrete paths; its declared path stands for them.
                l.path = r.path;
                call.live = std::move(l);
            }
            c.flow.push_back(std::move(call));
            all.push_back(std::move(c));
        }
        // Functions invoked directly ("Invoke <logical id>"): entries when sim.routes names
        // them, or when the stack has no routes at all.
        for (const auto& fn : s_.functions) {
            candidate c;
            c.name = "Invoke " + fn.name;
            sim::step call;
            call.component = index_.at(fn.name);
            call.live = invoke_live(fn);
            c.flow.push_back(std::move(call));
            all.push_back(std::move(c));
        }
        const auto& weights = s_.settings.sim.routes;
        if (weights.empty()) {
            const bool has_routes = std::any_of(all.begin(), all.end(),
                                                [](const candidate& c) { return c.name.rfind("Invoke ", 0) != 0; });
            for (auto& c : all) {
                if (has_routes && c.name.rfind("Invoke ", 0) == 0) continue;
                sc_.entries.push_back({c.name, 1.0, std::move(c.flow)});
            }
            if (!sc_.entries.empty())
                out_.notes.push_back("no sim.routes in coldbrew.yaml: " + std::to_string(sc_.entries.size()) +
                                     (has_routes ? " routes" : " functions invoked directly") + ", equal weights");
        } else {
            std::vector<std::string> names;
            for (const auto& c : all) names.push_back(c.name);
            for (const auto& w : weights) {
                auto it = std::find_if(all.begin(), all.end(), [&](const candidate& c) { return c.name == w.route; });
                if (it == all.end()) {
                    const auto best = closest(w.route, names);
                    throw config::config_error(w.where, w.path,
                                               "no route '" + w.route + "' in the stack" +
                                                   (best ? " (did you mean '" + *best + "'?)" : std::string()) +
                                                   "; routes: " + join(names));
                }
                sc_.entries.push_back({it->name, w.weight, it->flow});
            }
        }
        if (sc_.entries.empty())
            throw config::config_error({s_.template_file.string(), 0, 0}, "",
                                       "the stack has nothing to simulate: no route and no function");
    }

    const config::stack& s_;
    const functions::stack_models& m_;
    const stack_sim_options& o_;
    stack_scenario& out_;
    sim::scenario& sc_;
    std::map<std::string, std::size_t> index_;
    bool sla_gateway_ = false, sla_invoke_ = false;
};

bool yaml_file_looks_like_app(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string line;
    bool service = false, provider = false;
    for (int n = 0; n < 400 && std::getline(in, line); ++n) {
        if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#') continue;
        auto key = line.substr(0, line.find(':'));
        if (key == "AWSTemplateFormatVersion" || key == "Transform" || key == "Resources") return true;
        if (key == "service") service = true;
        if (key == "provider") provider = true;
        if (key == "components" || key == "flow") return false;
    }
    return service && provider;
}

double number(const std::string& path, const std::string& text) {
    double x = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(x))
        throw std::invalid_argument("--set " + path + ": expected a number, got '" + text + "'");
    return x;
}

std::string percent(double share) {
    std::ostringstream o;
    o << std::setprecision(4) << share * 100.0 << "%";
    return o.str();
}

std::string ms(double v) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(v < 10 ? 2 : 1) << v << " ms";
    return o.str();
}

std::string call_text(const sim::fitted_call& c) {
    return c.async ? "{call: " + c.target + ", async: true}" : c.target;
}

// Puts what was fitted where coldbrew.yaml's `sim:` sections go, so the conversion below reads
// it as it reads those; says what it did in `notes`.
void apply_fit(config::stack& s, const stack_fit& f, std::vector<std::string>& notes) {
    const config::source_location at{f.file, 0, 0};
    const auto& fit = f.fit;
    notes.push_back("fitted to " + f.file + ": " + std::to_string(fit.client_requests) + " client requests over " +
                    ms(fit.span_ms) + " (real time: the record's times × its time_scale)");
    for (const auto& ff : fit.functions) {
        auto fn = std::find_if(s.functions.begin(), s.functions.end(),
                               [&](const config::function& x) { return x.name == ff.function; });
        if (fn == s.functions.end()) {
            notes.push_back(ff.function + ": in the record, not in the app; left out");
            continue;
        }
        if (ff.invocations == 0) {
            notes.push_back(ff.function + ": no answered invocation in the record" +
                            std::string(fn->sim ? "; its coldbrew.yaml sim section stays" : ""));
            continue;
        }
        config::function_sim fs;
        fs.where = at;
        fs.path = "functions." + fn->name + ".sim";
        fs.latency_ms = ff.latency_ms;
        fs.latency_text = ff.latency_text;
        if (ff.error_rate > 0) fs.error_rate = ff.error_rate;
        std::string cpu_text;
        if (ff.cpu_fraction) {
            // Under the live run's quota the CPU work ran at vcpus(MemorySize); without one, on
            // a whole core, which is what 1,769 MB buys (models/compute/cpu.hpp).
            const bool limited = f.record.header.cpu_limited;
            const double q = limited ? std::min(1.0, models::vcpu_share(fn->memory_mb)) : 1.0;
            const double share = *ff.cpu_fraction / q;
            fs.cpu_share = std::clamp(share, 0.0, 1.0);
            if (!limited) fs.latency_at_memory_mb = 1769;
            cpu_text = ", cpu_share " + percent(*fs.cpu_share) + " (CPU time " + percent(*ff.cpu_fraction) +
                       " of own work, " + (limited ? "at " + std::to_string(fn->memory_mb) + " MB's CPU quota"
                                                   : std::string("on a whole core: the record's run had no CPU quota")) +
                       (share > 1 ? "; capped at 100%: the handler ran on more CPU than its quota gives" : "") + ")";
        }
        std::vector<std::string> calls;
        for (std::size_t i = 0; i < ff.calls.size(); ++i) {
            config::function_sim::call c;
            c.target = ff.calls[i].target;
            c.async = ff.calls[i].async;
            c.where = at;
            c.path = fs.path + ".calls[" + std::to_string(i) + "]";
            fs.calls.push_back(std::move(c));
            calls.push_back(call_text(ff.calls[i]));
        }
        std::string line = fn->name + ": " + std::to_string(ff.invocations) + " invocations: latency " +
                           ff.latency_text + " (own work; recorded duration p50 " + ms(ff.duration_p50_ms) +
                           ", delivery lag p50 " + ms(ff.lag_p50_ms) + "), errors " + percent(ff.error_rate) + cpu_text;
        if (ff.timeouts) line += ", " + std::to_string(ff.timeouts) + " timeouts";
        line += calls.empty() ? ", no calls" : ", calls [" + join(calls) + "]";
        if (ff.calls_share < 1) line += " (" + percent(ff.calls_share) + " of invocations made exactly these)";
        if (ff.injected) line += "; " + std::to_string(ff.injected) + " cut by injected faults left out";
        if (fn->sim) line += "; replaces its coldbrew.yaml sim section";
        notes.push_back(line);
        fn->sim = std::move(fs);
    }
    if (!fit.routes.empty()) {
        s.settings.sim.routes.clear();
        for (const auto& r : fit.routes)
            s.settings.sim.routes.push_back({r.route, static_cast<double>(r.requests), at, "sim.routes." + r.route});
    }
    if (fit.rate_per_s > 0) {
        models::sim::arrivals a;
        a.rate = fit.rate_per_s;
        a.poisson = fit.poisson;
        s.settings.sim.arrivals = a;
        std::ostringstream o;
        o << "arrivals: " << std::setprecision(6) << fit.rate_per_s << " requests per second, "
          << (fit.poisson ? "poisson" : "evenly spaced") << " (gaps' coefficient of variation "
          << std::setprecision(3) << fit.gap_cv << ")";
        notes.push_back(o.str());
    }
}

// The fitted sections as coldbrew.yaml would say them: `s` after apply_fit.
std::string fitted_yaml(const config::stack& s, const stack_fit& f) {
    std::ostringstream y;
    y << "# Fitted by `coldbrew sim --fit " << f.file << "`: " << f.fit.client_requests
      << " client requests. Merge into coldbrew.yaml (a functions: block already there takes these\n"
      << "# sim: keys under its own entries); `coldbrew up` ignores the sim sections.\n";
    auto quoted = [](const std::string& t) { return nlohmann::json(t).dump(); };
    bool any = false;
    for (const auto& ff : f.fit.functions) {
        auto fn = std::find_if(s.functions.begin(), s.functions.end(),
                               [&](const config::function& x) { return x.name == ff.function; });
        if (ff.invocations == 0 || fn == s.functions.end() || !fn->sim) continue;
        const config::function_sim& fs = *fn->sim;
        if (!any) y << "functions:\n";
        any = true;
        y << "  " << quoted(ff.function) << ":\n    sim:\n";
        y << "      latency: " << quoted(fs.latency_text) << "   # " << ff.invocations << " invocations\n";
        if (fs.error_rate) y << "      errors: " << percent(*fs.error_rate) << "\n";
        if (fs.cpu_share) y << "      cpu_share: " << std::setprecision(4) << *fs.cpu_share << "\n";
        if (fs.latency_at_memory_mb) y << "      latency_at_memory_mb: " << *fs.latency_at_memory_mb << "\n";
        if (!ff.calls.empty()) {
            std::vector<std::string> calls;
            for (const auto& c : ff.calls)
                calls.push_back(c.async ? "{call: " + quoted(c.target) + ", async: true}" : quoted(c.target));
            y << "      calls: [" << join(calls) << "]";
            if (ff.calls_share < 1) y << "   # " << percent(ff.calls_share) << " of invocations";
            y << "\n";
        }
    }
    y << "sim:\n";
    if (f.fit.rate_per_s > 0)
        y << "  arrivals: {rate: " << std::setprecision(6) << f.fit.rate_per_s
          << (f.fit.poisson ? ", poisson: true" : "") << "}\n";
    if (!f.fit.routes.empty()) {
        y << "  routes:\n";
        for (const auto& r : f.fit.routes) y << "    " << quoted(r.route) << ": {weight: " << r.requests << "}\n";
    }
    return y.str();
}

}  // namespace

std::shared_ptr<const stack_fit> load_fit(const std::string& file) {
    auto f = std::make_shared<stack_fit>();
    f->file = file;
    f->record = sim::read_record(file);
    f->fit = sim::fit_record(f->record);
    const bool answered = std::any_of(f->fit.functions.begin(), f->fit.functions.end(),
                                      [](const sim::fitted_function& x) { return x.invocations > 0; });
    if (f->fit.client_requests == 0 || !answered)
        throw std::invalid_argument("--fit " + file + ": the record holds " +
                                    std::to_string(f->fit.client_requests) + " client requests and " +
                                    (answered ? "some" : "no") +
                                    " answered invocations: nothing to fit (record a run with traffic)");
    return f;
}

bool is_app_path(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return true;
    const std::string name = path.filename().string();
    for (const char* n : {"template.yaml", "template.yml", "serverless.yml", "serverless.yaml"})
        if (name == n) return true;
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    return yaml_file_looks_like_app(path);
}

void scale_arrivals(sim::arrivals& a, double factor) {
    a.rate *= factor;
    for (auto& p : a.phases) {
        p.arrival_rate *= factor;
        if (p.ramp_to) *p.ramp_to *= factor;
        if (p.arrival_count)
            *p.arrival_count = static_cast<std::uint64_t>(std::llround(static_cast<double>(*p.arrival_count) * factor));
    }
}

stack_scenario stack_to_scenario(const config::stack& s, std::unique_ptr<functions::stack_models> models,
                                 std::vector<mf::rule> rules, const stack_sim_options& o) {
    stack_scenario out;
    out.models = std::move(models);
    converter(s, *out.models, o, out).run(std::move(rules));
    return out;
}

stack_scenario load_stack_scenario(const std::filesystem::path& path, const stack_sim_options& o,
                                   const config::load_options& lo) {
    config::stack s = config::load_stack(path, lo);
    std::vector<std::string> fit_notes;
    if (o.fit) apply_fit(s, *o.fit, fit_notes);
    auto models = functions::build_models(s);
    mf::fault_registry kinds;
    mf::register_builtin_faults(kinds);
    if (o.realistic_sla || (o.fit && o.fit->record.header.realistic_sla))
        config::apply_realistic_sla(s, models->profile());
    auto rules = config::startup_fault_rules(s, kinds);
    stack_sim_options eff = o;
    std::optional<std::uint64_t> fault_seed;
    std::string fitted;
    if (o.fit) {
        // The rules and seed the live run ended with: what a what-if of it should meet.
        sim::fitted_rules fr;
        try {
            fr = sim::rules_at_end(rules, o.fit->record, kinds);
        } catch (const mf::rule_error& e) {
            throw std::invalid_argument("--fit " + o.fit->file + ": a recorded rule does not parse: " + e.what());
        }
        // What --fit-out keeps: the sections, and the rules the admin API added (coldbrew.yaml
        // has the others), with the record's seed.
        std::vector<std::string> added;
        for (const auto& r : fr.rules)
            if (std::none_of(rules.begin(), rules.end(), [&](const mf::rule& x) { return x.name == r.name; }))
                added.push_back(r.to_json().dump());
        fitted = fitted_yaml(s, *o.fit);
        fitted += "# The record's seed";
        if (!added.empty()) fitted += ", and the fault rules the admin API added during the run (in effect at its end)";
        fitted += ":\nseed: " + std::to_string(fr.seed) + "\n";
        if (!added.empty()) {
            fitted += "faults:\n  rules:\n";
            for (const auto& r : added) fitted += "    - " + r + "\n";
        }
        std::vector<std::string> names;
        for (const auto& r : fr.rules) names.push_back(r.name);
        rules = std::move(fr.rules);
        if (!eff.seed) {
            eff.seed = o.fit->record.header.seed;
            fault_seed = fr.seed;
        }
        if (fr.changes)
            fit_notes.push_back(std::to_string(fr.changes) +
                                " fault rule or seed changes were made through the admin API during the recorded run; "
                                "the fitted run applies the rules in effect when it ended, to all its requests: " +
                                (names.empty() ? std::string("none") : join(names)));
    }
    stack_scenario out = stack_to_scenario(s, std::move(models), std::move(rules), eff);
    if (fault_seed) out.scenario.fault_seed = *fault_seed;
    out.fitted_yaml = std::move(fitted);
    out.notes.insert(out.notes.begin(), fit_notes.begin(), fit_notes.end());
    for (const auto& r : out.scenario.fault_rules)
        for (const auto& w : config::rule_warnings(s, r)) out.notes.push_back(w);
    return out;
}

stack_plan plan_stack_run(const std::filesystem::path& path, const stack_sim_options& o,
                          const config::load_options& lo,
                          const std::vector<config::scenario_override>& overrides) {
    stack_scenario st = load_stack_scenario(path, o, lo);
    for (const auto& ov : overrides) apply_stack_override(st, ov.path, ov.value);
    stack_plan plan;
    plan.notes = std::move(st.notes);
    plan.not_simulated = std::move(st.not_simulated);
    plan.fitted_yaml = std::move(st.fitted_yaml);
    std::shared_ptr<const functions::stack_models> models(std::move(st.models));
    std::shared_ptr<const models::profile> profile(models, &models->profile());
    plan.loaded.profile = profile;
    plan.loaded.variants.push_back({"", std::move(st.scenario), profile});
    return plan;
}

void apply_stack_override(stack_scenario& st, const std::string& path, const std::string& value) {
    sim::scenario& sc = st.scenario;
    // Exact to 2^64 - 1 (a seed `up` printed must come back as itself): no double on the way.
    auto whole = [&](const std::string& p, const std::string& v) -> std::uint64_t {
        std::uint64_t x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size())
            throw std::invalid_argument("--set " + p + ": expected a whole number from 0 to 18446744073709551615, got '" +
                                        v + "'");
        return x;
    };
    if (path == "requests") {
        sc.requests = std::max<std::uint64_t>(1, whole(path, value));
        return;
    }
    if (path == "seed") {
        sc.seed = sc.fault_seed = whole(path, value);
        return;
    }
    if (path == "arrivals.rate") {
        const double r = number(path, value);
        if (!(r > 0)) throw std::invalid_argument("--set arrivals.rate: must be above 0");
        sc.arrival.phases.clear();
        sc.arrival.rate = r;
        return;
    }
    if (path == "client_timeout") {
        try {
            sc.client_timeout_ms = models::parse_duration_ms(value);
        } catch (const models::distribution_error& e) {
            throw std::invalid_argument("--set client_timeout: " + std::string(e.what()));
        }
        return;
    }
    const std::string comp = "components.", ent = "entries.";
    if (path.rfind(comp, 0) == 0) {
        const auto dot = path.rfind('.');
        const std::string name = path.substr(comp.size(), dot - comp.size());
        const std::string key = path.substr(dot + 1);
        auto it = std::find_if(sc.components.begin(), sc.components.end(),
                               [&](const sim::component& c) { return c.name == name; });
        if (dot <= comp.size() || it == sc.components.end())
            throw std::invalid_argument("--set " + path + ": no component named '" + name + "'");
        try {
            if (key == "memory_mb" && it->kind == sim::service_kind::lambda) {
                it->function.traits.memory_mb = static_cast<int>(whole(path, value));
            } else if (key == "availability") {
                std::string v = value;
                if (!v.empty() && v.back() == '%') v.pop_back();
                const double p = number(path, v);
                if (!(p > 0 && p <= 100)) throw std::invalid_argument("--set " + path + ": a percentage in (0, 100]");
                it->availability = p / 100;
                it->availability_source = "--set";
            } else if (key == "latency") {
                it->latency_ms = models::parse_distribution(value);
            } else {
                throw std::invalid_argument("--set " + path + ": on a stack, components take memory_mb (functions), "
                                            "availability and latency");
            }
        } catch (const models::distribution_error& e) {
            throw std::invalid_argument("--set " + path + ": " + e.what());
        }
        return;
    }
    if (path.rfind(ent, 0) == 0 && path.size() > ent.size() + 7 && path.compare(path.size() - 7, 7, ".weight") == 0) {
        const std::string name = path.substr(ent.size(), path.size() - 7 - ent.size());
        auto it = std::find_if(sc.entries.begin(), sc.entries.end(), [&](const sim::entry& e) { return e.name == name; });
        if (it == sc.entries.end()) throw std::invalid_argument("--set " + path + ": no entry named '" + name + "'");
        const double w = number(path, value);
        if (!(w > 0)) throw std::invalid_argument("--set " + path + ": a weight above 0");
        it->weight = w;
        return;
    }
    throw std::invalid_argument("--set " + path +
                                ": on a stack, --set takes requests, seed, arrivals.rate, client_timeout, "
                                "components.<name>.memory_mb|availability|latency and entries.<route>.weight");
}

stack_sim_options stack_options(const sim_options& opts) {
    stack_sim_options o;
    o.realistic_sla = opts.realistic_sla;
    o.rate_scale = opts.rate_scale;
    return o;
}

config::load_options app_load_options(const sim_options& opts) {
    config::load_options o;
    for (const auto& arg : opts.parameter_overrides) {
        try {
            config::parse_parameter_overrides(arg, o.parameter_overrides);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--parameter-overrides: ") + e.what());
        }
    }
    if (!opts.stage.empty()) o.stage = opts.stage;
    o.env = config::process_environment();
    // Runtime lifecycles are judged on today's date, as `up` judges them.
    o.today = std::chrono::year_month_day{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
    return o;
}

void print_stack_notes(const std::vector<std::string>& notes, const std::vector<std::string>& not_simulated,
                       std::ostream& out) {
    for (const auto& n : notes) out << "note: " << n << "\n";
    if (!not_simulated.empty()) {
        out << "not simulated:\n";
        for (const auto& n : not_simulated) out << "  - " << n << "\n";
    }
    if (!notes.empty() || !not_simulated.empty()) out << "\n";
}

}  // namespace coldbrew::sim_cli
