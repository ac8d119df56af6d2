#include "models/sim/record.hpp"

#include <cmath>
#include <fstream>
#include <istream>
#include <set>

namespace coldbrew::models::sim {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

record_error::record_error(std::string file, std::size_t line, const std::string& message)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " + message),
      file_(std::move(file)),
      line_(line),
      message_(message) {}

const char* outcome_name(recorded_handler::outcome o) {
    switch (o) {
    case recorded_handler::outcome::success: return "success";
    case recorded_handler::outcome::error: return "error";
    case recorded_handler::outcome::crash: return "crash";
    case recorded_handler::outcome::timeout: return "timeout";
    }
    return "success";
}

std::optional<recorded_handler::outcome> parse_outcome(std::string_view s) {
    using o = recorded_handler::outcome;
    for (o x : {o::success, o::error, o::crash, o::timeout})
        if (s == outcome_name(x)) return x;
    return std::nullopt;
}

std::string to_json_line(const record_header& h) {
    ojson j;
    j["record"] = "coldbrew-run";
    j["version"] = h.version;
    j["seed"] = h.seed;
    j["time_scale"] = h.time_scale;
    j["app"] = h.app;
    j["realistic_sla"] = h.realistic_sla;
    if (h.cpu_limited) j["cpu_limited"] = true;
    return j.dump();
}

namespace {

struct line_writer {
    ojson& j;
    void operator()(const recorded_request& r) const {
        j["event"] = "request";
        j["id"] = r.id;
        j["at_ms"] = r.at_ms;
        j["front"] = r.front;
        j["route"] = r.route;
        j["method"] = r.method;
        j["path"] = r.path;
        j["function"] = r.function;
        j["function_name"] = r.function_name;
        ojson headers = ojson::array();
        for (const auto& [k, v] : r.headers) headers.push_back(ojson::array({k, v}));
        j["headers"] = std::move(headers);
        if (r.front == "states") {
            j["state_machine"] = r.state_machine;
            j["state_machine_name"] = r.state_machine_name;
            j["state"] = r.state;
            j["state_path"] = r.state_path;
        }
        if (r.front == "dependency") {
            j["dependency"] = r.dependency;
            j["on"] = r.on;
        }
        if (r.authorizer) j["authorizer"] = true;
        j["parent"] = r.parent ? ojson(*r.parent) : ojson(nullptr);
        j["async"] = r.async;
    }
    void operator()(const recorded_invoke& i) const {
        j["event"] = "invoke";
        j["id"] = i.id;
        j["at_ms"] = i.at_ms;
        j["function"] = i.function;
        j["request"] = i.request ? ojson(*i.request) : ojson(nullptr);
    }
    void operator()(const recorded_handler& h) const {
        j["event"] = "handler";
        j["invocation"] = h.invocation;
        j["at_ms"] = h.at_ms;
        j["delivery_lag_ms"] = h.delivery_lag_ms;
        j["duration_ms"] = h.duration_ms;
        if (h.cpu_ms) j["cpu_ms"] = *h.cpu_ms;
        j["outcome"] = outcome_name(h.result);
        if (h.result != recorded_handler::outcome::success) j["error_type"] = h.error_type;
        j["response_bytes"] = h.response_bytes;
    }
    void operator()(const recorded_exit& x) const {
        j["event"] = "exit";
        j["at_ms"] = x.at_ms;
        j["function"] = x.function;
        j["environment"] = x.environment;
        j["reason"] = x.reason;
    }
    void operator()(const recorded_end& e) const {
        j["event"] = "end";
        j["at_ms"] = e.at_ms;
        j["request"] = e.request;
    }
    void operator()(const recorded_tick& t) const {
        j["event"] = "tick";
        j["at_ms"] = t.at_ms;
        j["function"] = t.function;
    }
    void operator()(const recorded_provision& p) const {
        j["event"] = "provision";
        j["at_ms"] = p.at_ms;
        j["function"] = p.function;
    }
    void operator()(const recorded_stop& p) const {
        j["event"] = "stop";
        j["at_ms"] = p.at_ms;
        j["function"] = p.function;
    }
    void operator()(const recorded_rules& r) const {
        j["event"] = "rules";
        j["at_ms"] = r.at_ms;
        j["op"] = r.op;
        if (r.op == "replace" || r.op == "add") j["rules"] = r.rules;
        if (r.op == "remove") j["name"] = r.name;
        if (r.op == "seed") j["seed"] = r.seed;
        if (r.op == "replace" && r.max_active_faults)
            j["max_active_faults"] =
                *r.max_active_faults ? ojson(**r.max_active_faults) : ojson(nullptr);
    }
};

// Reads one line's object key by key, so an unknown or mistyped key is reported by name.
class fields {
public:
    fields(const json& j, const std::string& file, std::size_t line) : j_(j), file_(file), line_(line) {}

    [[noreturn]] void fail(const std::string& message) const { throw record_error(file_, line_, message); }

    const json& need(const char* key) {
        auto it = j_.find(key);
        if (it == j_.end()) fail(std::string("missing \"") + key + "\"");
        seen_.insert(key);
        return *it;
    }
    const json* maybe(const char* key) {
        auto it = j_.find(key);
        if (it == j_.end()) return nullptr;
        seen_.insert(key);
        return &*it;
    }
    std::string str(const char* key) {
        const json& v = need(key);
        if (!v.is_string()) fail(std::string("\"") + key + "\" must be a string");
        return v.get<std::string>();
    }
    std::string str_or_empty(const char* key) {
        const json* v = maybe(key);
        if (!v) return {};
        if (!v->is_string()) fail(std::string("\"") + key + "\" must be a string");
        return v->get<std::string>();
    }
    double ms(const char* key) {
        const json& v = need(key);
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
            fail(std::string("\"") + key + "\" must be a number of milliseconds >= 0");
        return v.get<double>();
    }
    std::uint64_t count(const char* key) {
        const json& v = need(key);
        if (!v.is_number_unsigned()) fail(std::string("\"") + key + "\" must be an integer >= 0");
        return v.get<std::uint64_t>();
    }
    bool flag(const char* key) {
        const json* v = maybe(key);
        if (!v) return false;
        if (!v->is_boolean()) fail(std::string("\"") + key + "\" must be true or false");
        return v->get<bool>();
    }
    void done() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (!seen_.count(it.key())) fail("unknown key \"" + it.key() + "\"");
    }

private:
    const json& j_;
    const std::string& file_;
    std::size_t line_;
    std::set<std::string> seen_;
};

}  // namespace

std::string to_json_line(const record_event& e) {
    ojson j;
    std::visit(line_writer{j}, e);
    return j.dump();
}

run_record read_record(std::istream& in, const std::string& name) {
    run_record out;
    std::string text;
    std::size_t line = 0;
    bool have_header = false;
    std::set<std::uint64_t> requests;
    std::uint64_t invocations = 0;  // the next id an invocation may have
    std::set<std::uint64_t> seen_invocations;
    double last_ms = 0;
    auto check_time = [&](fields& f, double at) {
        if (at < last_ms) f.fail("at_ms " + std::to_string(at) + " is before the previous event's");
        last_ms = at;
    };
    while (std::getline(in, text)) {
        ++line;
        if (text.empty() || text.find_first_not_of(" \t\r") == std::string::npos) continue;
        json j = json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object()) throw record_error(name, line, "not a JSON object");
        fields f(j, name, line);
        if (!have_header) {
            if (!j.contains("record") || j["record"] != "coldbrew-run")
                f.fail("not a coldbrew run record (the first line must have \"record\": \"coldbrew-run\"; "
                       "write one with `coldbrew up --record FILE`)");
            f.need("record");
            const auto v = f.count("version");
            if (v != static_cast<std::uint64_t>(record_version))
                f.fail("record version " + std::to_string(v) + "; this coldbrew reads version " +
                       std::to_string(record_version));
            out.header.seed = f.count("seed");
            const json& ts = f.need("time_scale");
            if (!ts.is_number() || !(ts.get<double>() > 0)) f.fail("\"time_scale\" must be a number > 0");
            out.header.time_scale = ts.get<double>();
            out.header.app = f.str_or_empty("app");
            out.header.realistic_sla = f.flag("realistic_sla");
            out.header.cpu_limited = f.flag("cpu_limited");
            f.done();
            have_header = true;
            continue;
        }
        const std::string kind = f.str("event");
        if (kind == "request") {
            recorded_request r;
            r.id = f.count("id");
            // Ids increase; a gap is a request the record leaves out (cut by hand, say).
            if (!requests.empty() && r.id <= *requests.rbegin())
                f.fail("request id " + std::to_string(r.id) + " out of order (after " +
                       std::to_string(*requests.rbegin()) + ")");
            r.at_ms = f.ms("at_ms");
            check_time(f, r.at_ms);
            r.front = f.str("front");
            if (r.front != "gateway" && r.front != "invoke" && r.front != "states" &&
                r.front != "dependency")
                f.fail("\"front\" must be gateway, invoke, states or dependency, not \"" +
                       r.front + "\"");
            r.route = f.str("route");
            r.method = f.str_or_empty("method");
            r.path = f.str_or_empty("path");
            r.function = f.str_or_empty("function");
            r.function_name = f.str_or_empty("function_name");
            if (const json* h = f.maybe("headers")) {
                if (!h->is_array()) f.fail("\"headers\" must be a list of [name, value] pairs");
                for (const auto& p : *h) {
                    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string())
                        f.fail("\"headers\" must be a list of [name, value] pairs");
                    r.headers.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
                }
            }
            r.state_machine = f.str_or_empty("state_machine");
            r.state_machine_name = f.str_or_empty("state_machine_name");
            r.state = f.str_or_empty("state");
            r.state_path = f.str_or_empty("state_path");
            r.dependency = f.str_or_empty("dependency");
            r.on = f.str_or_empty("on");
            if (r.front == "dependency" && r.on != "connect" && r.on != "request")
                f.fail("\"on\" must be connect or request on the dependency front");
            r.authorizer = f.flag("authorizer");
            if (const json* p = f.maybe("parent"); p && !p->is_null()) {
                if (!p->is_number_unsigned() || !requests.count(p->get<std::uint64_t>()))
                    f.fail("\"parent\" must be the id of an earlier request, or null");
                r.parent = p->get<std::uint64_t>();
            }
            r.async = f.flag("async");
            f.done();
            requests.insert(r.id);
            out.events.emplace_back(std::move(r));
        } else if (kind == "invoke") {
            recorded_invoke i;
            i.id = f.count("id");
            if (i.id < invocations)
                f.fail("invocation id " + std::to_string(i.id) + " out of order (expected " +
                       std::to_string(invocations) + " or more)");
            i.at_ms = f.ms("at_ms");
            check_time(f, i.at_ms);
            i.function = f.str("function");
            if (const json* p = f.maybe("request"); p && !p->is_null()) {
                if (!p->is_number_unsigned() || !requests.count(p->get<std::uint64_t>()))
                    f.fail("\"request\" must be the id of an earlier request, or null");
                i.request = p->get<std::uint64_t>();
            }
            f.done();
            invocations = i.id + 1;
            seen_invocations.insert(i.id);
            out.events.emplace_back(std::move(i));
        } else if (kind == "handler") {
            recorded_handler h;
            h.invocation = f.count("invocation");
            if (!seen_invocations.count(h.invocation))
                f.fail("handler for invocation " + std::to_string(h.invocation) +
                       ", which was not recorded before it");
            h.at_ms = f.ms("at_ms");
            check_time(f, h.at_ms);
            h.delivery_lag_ms = f.ms("delivery_lag_ms");
            h.duration_ms = f.ms("duration_ms");
            if (f.maybe("cpu_ms")) h.cpu_ms = f.ms("cpu_ms");
            const std::string o = f.str("outcome");
            auto parsed = parse_outcome(o);
            if (!parsed) f.fail("\"outcome\" must be success, error, crash or timeout, not \"" + o + "\"");
            h.result = *parsed;
            h.error_type = f.str_or_empty("error_type");
            if (f.maybe("response_bytes")) h.response_bytes = f.count("response_bytes");
            f.done();
            out.events.emplace_back(std::move(h));
        } else if (kind == "exit") {
            recorded_exit x;
            x.at_ms = f.ms("at_ms");
            check_time(f, x.at_ms);
            x.function = f.str("function");
            x.environment = f.count("environment");
            x.reason = f.str("reason");
            f.done();
            out.events.emplace_back(std::move(x));
        } else if (kind == "end") {
            recorded_end e;
            e.at_ms = f.ms("at_ms");
            check_time(f, e.at_ms);
            e.request = f.count("request");
            if (!requests.count(e.request))
                f.fail("end of request " + std::to_string(e.request) +
                       ", which was not recorded before it");
            f.done();
            out.events.emplace_back(std::move(e));
        } else if (kind == "provision" || kind == "stop") {
            const double at = f.ms("at_ms");
            check_time(f, at);
            std::string fn = f.str("function");
            f.done();
            if (kind == "provision")
                out.events.emplace_back(recorded_provision{at, std::move(fn)});
            else
                out.events.emplace_back(recorded_stop{at, std::move(fn)});
        } else if (kind == "tick") {
            recorded_tick t;
            t.at_ms = f.ms("at_ms");
            check_time(f, t.at_ms);
            t.function = f.str("function");
            f.done();
            out.events.emplace_back(std::move(t));
        } else if (kind == "rules") {
            recorded_rules r;
            r.at_ms = f.ms("at_ms");
            check_time(f, r.at_ms);
            r.op = f.str("op");
            static const std::set<std::string> ops{"replace", "add",   "remove", "clear",
                                                   "seed",    "reset", "restore"};
            if (!ops.count(r.op))
                f.fail("\"op\" must be replace, add, remove, clear, seed, reset or restore, not \"" +
                       r.op + "\"");
            if (r.op == "replace" || r.op == "add") {
                const json& rules = f.need("rules");
                if (!rules.is_array()) f.fail("\"rules\" must be a list of rules");
                r.rules = rules;
            }
            if (r.op == "remove") r.name = f.str("name");
            if (r.op == "seed") r.seed = f.count("seed");
            if (r.op == "replace") {
                if (const json* m = f.maybe("max_active_faults")) {
                    if (m->is_null())
                        r.max_active_faults.emplace(std::nullopt);
                    else if (m->is_number_unsigned())
                        r.max_active_faults.emplace(m->get<std::uint64_t>());
                    else
                        f.fail("\"max_active_faults\" must be an integer >= 1, or null");
                }
            }
            f.done();
            out.events.emplace_back(std::move(r));
        } else {
            f.fail("unknown event \"" + kind +
                   "\" (request, invoke, handler, exit, end, tick, provision, rules or stop)");
        }
    }
    if (!have_header) throw record_error(name, line, "empty file: not a coldbrew run record");
    return out;
}

run_record read_record(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) throw record_error(file.string(), 0, "cannot read the file");
    return read_record(in, file.string());
}

}  // namespace coldbrew::models::sim
