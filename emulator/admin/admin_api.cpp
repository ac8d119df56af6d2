#include "emulator/admin/admin_api.hpp"

#include "emulator/telemetry/metrics.hpp"

#include <charconv>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

namespace coldbrew::admin {

namespace {

using nlohmann::json;
namespace faults = models::faults;

// The page size GET /decisions promises (admin_api.hpp).
constexpr std::size_t decisions_per_call = 10000;

// ---- responses -------------------------------------------------------------------------

http::response reply(int status, const json& body) {
    http::response res;
    res.status = status;
    res.set("Content-Type", "application/json");
    // Messages and rule names echo bytes a client sent; replacing invalid UTF-8 keeps dump()
    // from throwing on them.
    res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    res.body += '\n';
    return res;
}

http::response error(int status, std::string message) {
    json body = json::object();
    body["message"] = std::move(message);
    return reply(status, body);
}

// A 400 (or 409) about the body: `path` is the key path inside it, "" for the body itself.
http::response error(int status, std::string message, std::string path) {
    json body = json::object();
    body["message"] = std::move(message);
    body["path"] = std::move(path);
    return reply(status, body);
}

// "rules" + "[2].nth" → "rules[2].nth"; "rules" + "nth" → "rules.nth"; "" + p → p.
std::string join_path(std::string_view prefix, std::string_view path) {
    std::string out(prefix);
    if (!out.empty() && !path.empty() && path.front() != '[') out += '.';
    out += path;
    return out;
}

std::string index_path(std::string_view prefix, std::size_t i, std::string_view inner) {
    return join_path(std::string(prefix) + "[" + std::to_string(i) + "]", inner);
}

json rules_json(std::vector<faults::rule>::const_iterator first,
                std::vector<faults::rule>::const_iterator last) {
    json out = json::array();
    for (; first != last; ++first)
        out.push_back(first->to_json());
    return out;
}

json rules_json(const std::vector<faults::rule>& rules) {
    return rules_json(rules.begin(), rules.end());
}

json cap_json(std::optional<std::size_t> cap) {
    return cap ? json(*cap) : json(nullptr);
}

// ---- the context -----------------------------------------------------------------------

// A missing piece of the context is a wiring bug in the app: handle() turns it into a 500.
faults::decider& decider_of(const admin_context& ctx) {
    if (!ctx.faults) throw std::logic_error("the admin API was started without a fault decider");
    return *ctx.faults;
}

const faults::fault_registry& registry_of(const admin_context& ctx) {
    if (!ctx.registry) throw std::logic_error("the admin API was started without a fault registry");
    return *ctx.registry;
}

// A change that succeeded, for the run record (`up --record`).
void record(const admin_context& ctx, double at_ms, std::string op, json rules = json::array(),
            std::string name = {}, std::uint64_t seed = 0,
            std::optional<std::optional<std::size_t>> cap = std::nullopt) {
    if (!ctx.recorder) return;
    models::sim::recorded_rules r;
    r.at_ms = at_ms;
    r.op = std::move(op);
    r.rules = std::move(rules);
    r.name = std::move(name);
    r.seed = seed;
    if (cap) r.max_active_faults.emplace(*cap ? std::optional<std::uint64_t>(**cap) : std::nullopt);
    ctx.recorder->rules(r);
}

double now_ms(const admin_context& ctx) {
    if (!ctx.now_ms) throw std::logic_error("the admin API was started without a clock");
    return ctx.now_ms();
}

// ---- request bodies --------------------------------------------------------------------

// Records the parser's reason and stops; builds nothing. Used only after a parse failed, so
// the message names the line and column without parsing with exceptions.
class parse_error_reader final : public json::json_sax_t {
  public:
    std::string reason = "invalid JSON";

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&,
                     const nlohmann::detail::exception& e) override {
        // Drop nlohmann's "[json.exception.parse_error.101] " tag.
        std::string what = e.what();
        auto close = what.find("] ");
        reason = close == std::string::npos ? what : what.substr(close + 2);
        return false;
    }
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The body as JSON, or the 415/400 to answer.
std::variant<json, http::response> read_body(const http::request& req) {
    if (auto type = req.header("Content-Type"); type && !req.body.empty()) {
        // Parameters (charset) do not change the media type; an empty value says nothing,
        // like a missing header. `curl -d` labels its body form-encoded unless told
        // otherwise; that label is accepted so the plain curl line works.
        auto media = trim(type->substr(0, type->find(';')));
        if (!media.empty() && !http::iequals(media, "application/json") &&
            !http::iequals(media, "application/x-www-form-urlencoded"))
            return error(415, "Content-Type '" + std::string(*type) +
                                  "' is not accepted; send the body as application/json");
    }
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) {
        parse_error_reader reader;
        (void)json::sax_parse(req.body, &reader);
        return error(400, "request body is not JSON: " + reader.reason, "");
    }
    return body;
}

// "unknown key 'x'" (or keys) naming every key of `object` outside `allowed`; nullopt when
// there is none. Its path is the first such key.
std::optional<http::response> unknown_keys(const json& object,
                                           std::initializer_list<std::string_view> allowed) {
    std::string first, listed;
    std::size_t count = 0;
    for (const auto& [key, value] : object.items()) {
        bool known = false;
        for (auto a : allowed)
            known = known || key == a;
        if (known) continue;
        if (count++ == 0) first = key;
        if (!listed.empty()) listed += ", ";
        listed += "'" + key + "'";
    }
    if (count == 0) return std::nullopt;
    std::string expected;
    for (auto a : allowed) {
        if (!expected.empty()) expected += ", ";
        expected += a;
    }
    return error(
        400, (count == 1 ? "unknown key " : "unknown keys ") + listed + "; allowed: " + expected,
        first);
}

std::optional<std::uint64_t> parse_unsigned(std::string_view s) {
    std::uint64_t n = 0;
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, n);
    if (s.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
    return n;
}

// ---- rules -----------------------------------------------------------------------------

// Default names for the rules of one batch (a JSON array) that have no "name": "rule-<n>",
// "rule-<n+1>", … from the decider's next one. The decider gives only that one name, and two
// unnamed rules added together must not share it; names taken by rules that stay, or named in
// the batch, are skipped, as the decider skips them. "" for a rule that names itself.
std::vector<std::string> default_names(const faults::decider& d, const json& items,
                                       bool existing_stay) {
    std::set<std::string, std::less<>> taken;
    if (existing_stay)
        for (const auto& r : d.rules())
            taken.insert(r.name);
    auto named = [](const json& item) { return item.is_object() && item.contains("name"); };
    for (const auto& item : items)
        if (named(item) && item["name"].is_string()) taken.insert(item["name"].get<std::string>());

    const std::string first = d.next_default_name();
    constexpr std::string_view prefix = "rule-";
    std::optional<std::uint64_t> n;
    if (std::string_view(first).substr(0, prefix.size()) == prefix)
        n = parse_unsigned(std::string_view(first).substr(prefix.size()));

    std::vector<std::string> out(items.size());
    std::size_t unnamed = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (named(items[i])) continue;
        if (!n) {
            // Another format than "rule-<n>": still distinct within the batch.
            out[i] = unnamed++ == 0 ? first : first + "-" + std::to_string(i);
            continue;
        }
        do {
            out[i] = std::string(prefix) + std::to_string((*n)++);
        } while (taken.count(out[i]) != 0);
    }
    return out;
}

// Parses every rule of the array `items` before anything changes; a bad one is a 400 whose
// path is "<prefix>[i].<key>".
std::variant<std::vector<faults::rule>, http::response>
parse_rules(const json& items, const faults::fault_registry& registry,
            const std::vector<std::string>& names, std::string_view prefix) {
    std::vector<faults::rule> rules;
    rules.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        try {
            rules.push_back(faults::parse_rule(items[i], registry, names[i]));
        } catch (const faults::rule_error& e) {
            return error(400, e.message(), index_path(prefix, i, e.path()));
        }
    }
    return rules;
}

// ---- endpoints -------------------------------------------------------------------------

http::response get_faults(const admin_context& ctx) {
    const auto& d = decider_of(ctx);
    json body = json::object();
    body["seed"] = d.seed();
    body["max_active_faults"] = cap_json(d.max_active());
    body["rules"] = rules_json(d.rules());
    return reply(200, body);
}

// "warnings": rules in [first, last) that name no route or function of the stack.
void add_warnings(json& out, const admin_context& ctx,
                  std::vector<faults::rule>::const_iterator first,
                  std::vector<faults::rule>::const_iterator last) {
    if (!ctx.rule_warnings) return;
    auto warnings = json::array();
    for (auto it = first; it != last; ++it)
        for (auto& w : ctx.rule_warnings(*it)) warnings.push_back(std::move(w));
    if (!warnings.empty()) out["warnings"] = std::move(warnings);
}

http::response post_faults(const http::request& req, const admin_context& ctx) {
    auto& d = decider_of(ctx);
    const auto& registry = registry_of(ctx);
    auto read = read_body(req);
    if (auto* res = std::get_if<http::response>(&read)) return std::move(*res);
    json body = std::move(std::get<json>(read));
    const bool single = body.is_object();

    std::vector<faults::rule> rules;
    if (single) {
        try {
            // Moved, not copied: a copy recurses once per level of a deeply nested body.
            json items = json::array();
            items.push_back(std::move(body));
            auto names = default_names(d, items, true);
            rules.push_back(faults::parse_rule(items[0], registry, names[0]));
        } catch (const faults::rule_error& e) {
            return error(400, e.message(), e.path());
        }
    } else if (body.is_array()) {
        if (body.empty()) return error(400, "an empty array adds no rule; send one or more", "");
        auto parsed = parse_rules(body, registry, default_names(d, body, true), "");
        if (auto* res = std::get_if<http::response>(&parsed)) return std::move(*res);
        rules = std::move(std::get<std::vector<faults::rule>>(parsed));
    } else {
        return error(400, "expected a rule object or an array of them", "");
    }

    const std::size_t added = rules.size();
    const double now = now_ms(ctx);
    try {
        d.add_rules(std::move(rules), now);
    } catch (const faults::rule_error& e) {
        // A duplicate name; nothing was added. The decider names the rule's index in the
        // batch ("[0].name"), which for a body that is one object is just its key.
        std::string_view path = e.path();
        if (single && path.substr(0, 3) == "[0]") {
            path.remove_prefix(3);
            if (!path.empty() && path.front() == '.') path.remove_prefix(1);
        }
        return error(409, e.message(), std::string(path));
    }
    json out = json::object();
    out["rules"] =
        rules_json(d.rules().end() - static_cast<std::ptrdiff_t>(added), d.rules().end());
    record(ctx, now, "add", out["rules"]);
    add_warnings(out, ctx, d.rules().end() - static_cast<std::ptrdiff_t>(added), d.rules().end());
    return reply(201, out);
}

http::response put_faults(const http::request& req, const admin_context& ctx) {
    auto& d = decider_of(ctx);
    const auto& registry = registry_of(ctx);
    auto read = read_body(req);
    if (auto* res = std::get_if<http::response>(&read)) return std::move(*res);
    const json& body = std::get<json>(read);

    // Either a bare array of rules, or an object that may also set the cap.
    const json* items = &body;
    std::string prefix;
    std::optional<std::optional<std::size_t>> cap; // outer nullopt: keep the current cap
    if (body.is_object()) {
        if (auto res = unknown_keys(body, {"rules", "max_active_faults"})) return std::move(*res);
        // Required: a body that only sets the cap would otherwise delete every rule.
        auto r = body.find("rules");
        if (r == body.end())
            return error(400, "required: an array of rules (may be empty)", "rules");
        if (!r->is_array()) return error(400, "expected an array of rules", "rules");
        items = &*r;
        prefix = "rules";
        if (auto m = body.find("max_active_faults"); m != body.end()) {
            if (m->is_null()) {
                cap.emplace(std::nullopt);
            } else if (m->is_number_unsigned() && m->get<std::uint64_t>() >= 1 &&
                       m->get<std::uint64_t>() <= 1'000'000) {
                // The same range as coldbrew.yaml's faults.max_active_faults.
                cap.emplace(static_cast<std::size_t>(m->get<std::uint64_t>()));
            } else {
                return error(400, "expected an integer from 1 to 1000000, or null for no cap",
                             "max_active_faults");
            }
        }
    } else if (!body.is_array()) {
        return error(400, R"(expected an array of rules or {"rules":[…],"max_active_faults":n})",
                     "");
    }

    auto parsed = parse_rules(*items, registry, default_names(d, *items, false), prefix);
    if (auto* res = std::get_if<http::response>(&parsed)) return std::move(*res);
    const double now = now_ms(ctx);
    try {
        d.set_rules(std::move(std::get<std::vector<faults::rule>>(parsed)), now);
    } catch (const faults::rule_error& e) {
        // Duplicate names; set_rules left the old rules in place and the cap is not set yet.
        return error(409, e.message(), join_path(prefix, e.path()));
    }
    if (cap) d.set_max_active(*cap);
    record(ctx, now, "replace", rules_json(d.rules()), {}, 0, cap);

    json out = json::object();
    out["rules"] = rules_json(d.rules());
    out["max_active_faults"] = cap_json(d.max_active());
    add_warnings(out, ctx, d.rules().begin(), d.rules().end());
    return reply(200, out);
}

http::response delete_faults(const admin_context& ctx) {
    auto& d = decider_of(ctx);
    const std::size_t removed = d.rules().size();
    d.clear_rules();
    record(ctx, now_ms(ctx), "clear");
    json out = json::object();
    out["removed"] = removed;
    return reply(200, out);
}

http::response no_rule(const std::string& name) {
    return error(404, "no fault rule named '" + name + "'");
}

http::response get_fault(const std::string& name, const admin_context& ctx) {
    for (const auto& r : decider_of(ctx).rules())
        if (r.name == name) return reply(200, r.to_json());
    return no_rule(name);
}

http::response delete_fault(const std::string& name, const admin_context& ctx) {
    if (!decider_of(ctx).remove_rule(name)) return no_rule(name);
    record(ctx, now_ms(ctx), "remove", json::array(), name);
    json out = json::object();
    out["removed"] = 1;
    return reply(200, out);
}

http::response get_seed(const admin_context& ctx) {
    json out = json::object();
    out["seed"] = decider_of(ctx).seed();
    return reply(200, out);
}

http::response put_seed(const http::request& req, const admin_context& ctx) {
    auto& d = decider_of(ctx);
    auto read = read_body(req);
    if (auto* res = std::get_if<http::response>(&read)) return std::move(*res);
    const json& body = std::get<json>(read);
    if (!body.is_object()) return error(400, R"(expected {"seed": N})", "");
    if (auto res = unknown_keys(body, {"seed"})) return std::move(*res);

    // The decimal string form exists because JSON numbers above 2^53 lose precision in many
    // clients (JavaScript's among them).
    const char* expected = "expected an unsigned 64-bit integer, as a number or a decimal string";
    auto v = body.find("seed");
    if (v == body.end()) return error(400, std::string("required: ") + expected, "seed");
    std::optional<std::uint64_t> seed;
    if (v->is_number_unsigned())
        seed = v->get<std::uint64_t>();
    else if (v->is_string())
        seed = parse_unsigned(v->get_ref<const std::string&>());
    if (!seed) return error(400, expected, "seed");

    d.set_seed(*seed);
    record(ctx, now_ms(ctx), "seed", json::array(), {}, *seed);
    json out = json::object();
    out["seed"] = *seed;
    return reply(200, out);
}

http::response get_counters(const admin_context& ctx) {
    const auto& c = decider_of(ctx).counters();
    json fault_counts = json::object();
    fault_counts["by_kind"] = json(c.by_kind);
    fault_counts["by_action"] = json(c.by_action);
    fault_counts["by_rule"] = json(c.by_rule);
    fault_counts["by_front"] = json(c.by_front);
    fault_counts["missed"] = c.missed;
    fault_counts["missed_by_kind"] = json(c.missed_by_kind);
    fault_counts["overflow"] = c.overflow;
    fault_counts["active"] = c.active;
    fault_counts["decisions"] = c.decisions;

    json out = json::object();
    out["requests"] = ctx.request_counters ? ctx.request_counters() : json::object();
    out["faults"] = std::move(fault_counts);
    out["functions"] = ctx.function_counters ? ctx.function_counters() : json::object();
    if (ctx.state_machine_counters) out["state_machines"] = ctx.state_machine_counters();
    out["dependencies"] = ctx.proxy_counters ? ctx.proxy_counters() : json::object();
    return reply(200, out);
}

// GET /metrics: the Prometheus exposition of everything GET /counters reports, and the
// request records (telemetry/metrics.hpp).
http::response get_metrics(const admin_context& ctx) {
    const auto& c = decider_of(ctx).counters();
    telemetry::metrics_input in;
    in.requests = ctx.request_stats;
    in.faults.by_kind_action = c.by_kind_action;
    in.faults.by_rule = c.by_rule;
    in.faults.missed_by_kind = c.missed_by_kind;
    in.faults.overflow = c.overflow;
    in.faults.active = c.active;
    in.faults.decisions = c.decisions;
    // A count: an integer of either signedness (a negative one is a bug, shown as 0).
    auto as_count = [](const json& v) -> std::uint64_t {
        if (v.is_number_unsigned()) return v.get<std::uint64_t>();
        if (v.is_number_integer() && v.get<std::int64_t>() > 0)
            return static_cast<std::uint64_t>(v.get<std::int64_t>());
        return 0;
    };
    auto count = [&](const json& j, const char* key) -> std::uint64_t {
        auto it = j.find(key);
        return it == j.end() ? 0 : as_count(*it);
    };
    // Held in locals: items() of a temporary would outlive it in a range-for.
    const json requests = ctx.request_counters ? ctx.request_counters() : json::object();
    for (const auto& [front, outcomes] : requests.items())
        for (const auto& [outcome, n] : outcomes.items())
            if (n.is_number_integer()) in.outcomes[front][outcome] = as_count(n);
    const json functions = ctx.function_counters ? ctx.function_counters() : json::object();
    for (const auto& [name, f] : functions.items()) {
        auto& m = in.functions[name];
        m.invocations = count(f, "invocations");
        m.cold_starts = count(f, "cold_starts");
        m.function_errors = count(f, "function_errors");
        m.timeouts = count(f, "timeouts");
        m.throttles = count(f, "throttles");
        m.waits = count(f, "waits");
        m.evictions = count(f, "evictions");
        m.environments = count(f, "environments");
        m.busy = count(f, "busy");
        m.init_overruns = count(f, "init_overruns");
        if (auto it = f.find("init_overrun_ms"); it != f.end() && it->is_number())
            m.init_overrun_seconds = it->get<double>() / 1000.0;
        m.standby = count(f, "standby");
        m.standby_ready = count(f, "standby_ready");
    }
    if (ctx.proxy_counters) in.dependencies = ctx.proxy_counters();
    const json machines = ctx.state_machine_counters ? ctx.state_machine_counters() : json::object();
    for (const auto& [name, c] : machines.items()) {
        auto& m = in.state_machines[name];
        m.started = count(c, "started");
        m.succeeded = count(c, "succeeded");
        m.failed = count(c, "failed");
        m.timed_out = count(c, "timed_out");
        m.aborted = count(c, "aborted");
        m.duplicate_starts = count(c, "duplicate_starts");
        m.retries = count(c, "retries");
        m.caught = count(c, "caught");
        m.state_transitions = count(c, "state_transitions");
    }
    http::response res;
    res.status = 200;
    res.set("Content-Type", std::string(telemetry::prometheus::content_type));
    res.body = telemetry::render_metrics(in);
    return res;
}

// GET /proxies: every dependency proxy, its addresses and counters; /proxies/{name}: one.
http::response get_proxies(const admin_context& ctx, const std::string& name) {
    json all = ctx.proxy_counters ? ctx.proxy_counters() : json::object();
    if (name.empty()) return reply(200, all);
    if (!all.contains(name))
        return error(404, "no dependency named '" + name + "'; see GET /proxies");
    return reply(200, all[name]);
}

http::response post_counters_reset(const admin_context& ctx) {
    decider_of(ctx).reset();
    record(ctx, now_ms(ctx), "reset");
    if (ctx.reset_request_counters) ctx.reset_request_counters();
    json out = json::object();
    out["reset"] = true;
    return reply(200, out);
}

// The first value of `key` in a raw query string, decoded; nullopt when absent.
std::optional<std::string> query_value(std::string_view query, std::string_view key) {
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        auto eq = pair.find('=');
        if (http::percent_decode(pair.substr(0, eq), true) != key) continue;
        return eq == std::string_view::npos ? std::string{}
                                            : http::percent_decode(pair.substr(eq + 1), true);
    }
    return std::nullopt;
}

http::response get_decisions(const http::request& req, const admin_context& ctx) {
    std::uint64_t since = 0;
    if (auto v = query_value(req.query(), "since")) {
        auto n = parse_unsigned(*v);
        if (!n)
            return error(400,
                         "since: expected an unsigned integer (a line number), got '" + *v + "'");
        since = *n;
    }
    json out = json::object();
    json lines = json::array();
    if (!ctx.decisions) {
        out["next"] = since;
        out["dropped"] = 0;
    } else {
        auto recent = ctx.decisions->recent(since, decisions_per_call);
        out["next"] = recent.next;
        out["dropped"] = recent.dropped;
        for (const auto& line : recent.lines) {
            json j = json::parse(line, nullptr, false);
            // Every line is written as a JSON object; should one not be, it is still served,
            // as its text, rather than lost.
            lines.push_back(j.is_discarded() ? json(line) : std::move(j));
        }
    }
    out["decisions"] = std::move(lines);
    return reply(200, out);
}

// GET /ready: a readiness probe for scripts that start `up` themselves.
http::response get_ready(const admin_context& ctx) {
    json out = ctx.readiness ? ctx.readiness() : json::object();
    if (!out.is_object()) out = json::object();
    const bool ready = out.value("ready", false);
    out["ready"] = ready;
    if (!ready && !out.contains("message")) out["message"] = "not ready";
    return reply(ready ? 200 : 503, out);
}

http::response post_reset(const admin_context& ctx) {
    auto& d = decider_of(ctx);
    std::vector<faults::rule> rules;
    if (ctx.configured_rules) rules = *ctx.configured_rules;
    const double now = now_ms(ctx);
    d.set_rules(std::move(rules), now);
    d.set_max_active(ctx.configured_max_active);
    d.reset();
    record(ctx, now, "restore");
    if (ctx.reset_request_counters) ctx.reset_request_counters();
    json out = json::object();
    out["rules"] = rules_json(d.rules());
    return reply(200, out);
}

// ---- routing ---------------------------------------------------------------------------

enum class endpoint { faults, fault, seed, counters, counters_reset, decisions, reset, proxies,
                      metrics, ready };

struct route {
    endpoint id;
    std::string_view allow; // the Allow header of a 405
    std::string name;       // /faults/{name}, decoded
};

std::optional<route> match(std::string_view path) {
    if (path == "/faults") return route{endpoint::faults, "GET, POST, PUT, DELETE", {}};
    if (path == "/seed") return route{endpoint::seed, "GET, PUT", {}};
    if (path == "/counters") return route{endpoint::counters, "GET", {}};
    if (path == "/counters/reset") return route{endpoint::counters_reset, "POST", {}};
    if (path == "/decisions") return route{endpoint::decisions, "GET", {}};
    if (path == "/reset") return route{endpoint::reset, "POST", {}};
    if (path == "/proxies") return route{endpoint::proxies, "GET", {}};
    if (path == "/metrics") return route{endpoint::metrics, "GET", {}};
    if (path == "/ready") return route{endpoint::ready, "GET", {}};
    constexpr std::string_view proxy_prefix = "/proxies/";
    if (path.substr(0, proxy_prefix.size()) == proxy_prefix) {
        auto segment = path.substr(proxy_prefix.size());
        if (!segment.empty() && segment.find('/') == std::string_view::npos)
            return route{endpoint::proxies, "GET", http::percent_decode(segment)};
    }
    constexpr std::string_view fault_prefix = "/faults/";
    if (path.substr(0, fault_prefix.size()) == fault_prefix) {
        // One raw segment; a name with '/' in it arrives as %2F.
        auto segment = path.substr(fault_prefix.size());
        if (!segment.empty() && segment.find('/') == std::string_view::npos)
            return route{endpoint::fault, "GET, DELETE", http::percent_decode(segment)};
    }
    return std::nullopt;
}

bool allows(std::string_view allow, std::string_view method) {
    while (!allow.empty()) {
        auto comma = allow.find(", ");
        if (allow.substr(0, comma) == method) return true;
        allow = comma == std::string_view::npos ? std::string_view{} : allow.substr(comma + 2);
    }
    return false;
}

http::response dispatch(const http::request& req, admin_context& ctx) {
    const std::string_view path = req.path();
    auto r = match(path);
    if (!r)
        return error(404, "no such admin endpoint: " + req.method + " " + std::string(path) +
                              "; see GET /faults, /counters, /decisions, /seed, /metrics, /ready");
    const std::string& m = req.method;
    if (!allows(r->allow, m)) {
        auto res = error(405, "method " + m + " is not allowed on " + std::string(path) +
                                  "; allowed: " + std::string(r->allow));
        res.set("Allow", std::string(r->allow));
        return res;
    }
    switch (r->id) {
    case endpoint::faults:
        if (m == "GET") return get_faults(ctx);
        if (m == "POST") return post_faults(req, ctx);
        if (m == "PUT") return put_faults(req, ctx);
        return delete_faults(ctx);
    case endpoint::fault:
        return m == "GET" ? get_fault(r->name, ctx) : delete_fault(r->name, ctx);
    case endpoint::seed:
        return m == "GET" ? get_seed(ctx) : put_seed(req, ctx);
    case endpoint::counters:
        return get_counters(ctx);
    case endpoint::counters_reset:
        return post_counters_reset(ctx);
    case endpoint::decisions:
        return get_decisions(req, ctx);
    case endpoint::reset:
        return post_reset(ctx);
    case endpoint::proxies:
        return get_proxies(ctx, r->name);
    case endpoint::metrics:
        return get_metrics(ctx);
    case endpoint::ready:
        return get_ready(ctx);
    }
    throw std::logic_error("unrouted admin endpoint");
}

} // namespace

json request_outcomes::to_json() const {
    json out = json::object();
    out["served"] = served;
    out["injected_fault"] = injected_fault;
    out["handler_error"] = handler_error;
    out["emulator_error"] = emulator_error;
    return out;
}

http::response handle(const http::request& req, admin_context& ctx) {
    // Anything thrown here is a defect in coldbrew, not in the request; the client still gets
    // an answer and the loop keeps running.
    if (ctx.access) {
        auto d = http::check_access(req, *ctx.access);
        if (!d.allowed()) {
            const bool missing = d.verdict == http::access_verdict::missing_token;
            auto res = error(missing ? 401 : 403, d.reason);
            res.set("x-amzn-ErrorType", missing ? "UnauthorizedException" : "AccessDeniedException");
            if (missing) res.set("WWW-Authenticate", "Bearer realm=\"coldbrew admin\"");
            return res;
        }
    }
    try {
        return dispatch(req, ctx);
    } catch (const std::exception& e) {
        return error(500, std::string("internal error in the admin API: ") + e.what());
    } catch (...) {
        return error(500, "internal error in the admin API");
    }
}

} // namespace coldbrew::admin
