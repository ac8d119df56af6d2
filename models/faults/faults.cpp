#include "models/faults/faults.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

// --- errors and names ---------------------------------------------------------------------

rule_error::rule_error(std::string path, const std::string& message)
    : std::runtime_error(path.empty() ? message : path + ": " + message), path_(std::move(path)),
      message_(message) {}

std::string_view to_string(front f) {
    switch (f) {
    case front::gateway:
        return "gateway";
    case front::invoke:
        return "invoke";
    case front::dependency:
        return "dependency";
    case front::states:
        return "states";
    }
    return "?";
}

std::string_view to_string(dependency_phase p) {
    switch (p) {
    case dependency_phase::connect:
        return "connect";
    case dependency_phase::request:
        return "request";
    }
    return "?";
}

std::string_view to_string(client_outcome c) {
    switch (c) {
    case client_outcome::timeout:
        return "timeout";
    case client_outcome::hang:
        return "hang";
    case client_outcome::reset:
        return "reset";
    }
    return "?";
}

namespace {

// The overload set for a std::visit: one lambda per alternative, and no catch-all, so an
// action without its case does not compile.
template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

}  // namespace

std::string_view action_name(const action& a) {
    return std::visit(
        overloaded{
            [](const actions::pass&) -> std::string_view { return "pass"; },
            [](const actions::phantom_before&) -> std::string_view { return "phantom_before"; },
            [](const actions::phantom_after&) -> std::string_view { return "phantom_after"; },
            [](const actions::gateway_error&) -> std::string_view { return "gateway_error"; },
            [](const actions::function_exit&) -> std::string_view { return "function_exit"; },
            [](const actions::handler_error&) -> std::string_view { return "handler_error"; },
            [](const actions::throttle&) -> std::string_view { return "throttle"; },
            [](const actions::reset&) -> std::string_view { return "reset"; },
            [](const actions::slow_response&) -> std::string_view { return "slow_response"; },
            [](const actions::refuse&) -> std::string_view { return "refuse"; },
            [](const actions::hang&) -> std::string_view { return "hang"; },
        },
        a);
}

bool plan::injects() const noexcept {
    return !std::holds_alternative<actions::pass>(act) || delay_ms > 0;
}

// --- readers shared with the kinds --------------------------------------------------------

namespace detail {

namespace {

// 2^53: every integer up to it is exact in a double, so counts survive a JSON round trip
// through any client.
constexpr double max_exact_integer = 9007199254740992.0;

}  // namespace

std::string json_type_phrase(const nlohmann::json& v) {
    switch (v.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::boolean:
        return v.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
        return "a number";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::object:
        return "an object";
    default:
        return "a value of another type";
    }
}

void reject_unknown_keys(const nlohmann::json& object, std::string_view prefix,
                         std::initializer_list<std::string_view> allowed) {
    for (const auto& item : object.items()) {
        const std::string& key = item.key();
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        std::string list;
        for (auto a : allowed)
            list += (list.empty() ? "" : ", ") + std::string(a);
        throw rule_error(std::string(prefix) + key, "unknown key '" + key + "'; allowed: " + list);
    }
}

void check_fault_object(const nlohmann::json& fault,
                        std::initializer_list<std::string_view> allowed) {
    if (!fault.is_object())
        throw rule_error("fault", "expected an object such as {\"kind\": \"phantom\"}, got " +
                                      json_type_phrase(fault));
    reject_unknown_keys(fault, "fault.", allowed);
}

const std::string& read_string(const nlohmann::json& v, const std::string& path) {
    if (!v.is_string()) throw rule_error(path, "expected a string, got " + json_type_phrase(v));
    return v.get_ref<const std::string&>();
}

double read_number(const nlohmann::json& v, const std::string& path) {
    if (!v.is_number()) throw rule_error(path, "expected a number, got " + json_type_phrase(v));
    const double d = v.get<double>();
    // A JSON text cannot hold NaN or infinity, but a json built in code can.
    if (!std::isfinite(d)) throw rule_error(path, "expected a finite number");
    return d;
}

std::int64_t read_integer(const nlohmann::json& v, const std::string& path) {
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (static_cast<double>(u) > max_exact_integer)
            throw rule_error(path, "number " + std::to_string(u) + " is too large");
        return static_cast<std::int64_t>(u);
    }
    if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        if (std::fabs(static_cast<double>(i)) > max_exact_integer)
            throw rule_error(path, "number " + std::to_string(i) + " is too large");
        return i;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!std::isfinite(d) || std::floor(d) != d)
            throw rule_error(path, "expected a whole number, got " + format_number(d));
        if (std::fabs(d) > max_exact_integer)
            throw rule_error(path, "number " + format_number(d) + " is too large");
        return static_cast<std::int64_t>(d);
    }
    throw rule_error(path, "expected a whole number, got " + json_type_phrase(v));
}

double read_duration_ms(const nlohmann::json& v, const std::string& path) {
    double ms = 0;
    if (v.is_number()) {
        ms = read_number(v, path);
    } else if (v.is_string()) {
        try {
            ms = parse_duration_ms(v.get_ref<const std::string&>());
        } catch (const distribution_error& e) {
            throw rule_error(path,
                             std::string(e.what()) + " at offset " + std::to_string(e.offset()));
        }
    } else {
        throw rule_error(path, "expected a duration (a number of ms, or text such as \"50ms\", "
                               "\"1.5s\" or \"2min\"), got " +
                                   json_type_phrase(v));
    }
    if (ms < 0) throw rule_error(path, "a duration cannot be negative, got " + format_ms(ms));
    return ms;
}

std::string format_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string format_ms(double ms) {
    if (ms >= 60000 && std::fmod(ms, 60000) == 0) return format_number(ms / 60000) + "min";
    if (ms >= 1000) return format_number(ms / 1000) + "s";
    return format_number(ms) + "ms";
}

}  // namespace detail

// --- the registry -------------------------------------------------------------------------

bool fault_kind::applies_to(front f) const {
    return std::find(fronts.begin(), fronts.end(), f) != fronts.end();
}

std::string fault_kind::fronts_phrase() const {
    std::string out = "the ";
    for (std::size_t i = 0; i < fronts.size(); ++i) {
        if (i > 0) out += i + 1 == fronts.size() ? " and " : ", ";
        out += std::string(to_string(fronts[i]));
    }
    return out + (fronts.size() == 1 ? " front" : " fronts");
}

void fault_registry::add(fault_kind kind) {
    if (kind.name.empty() || kind.parse == nullptr)
        throw std::logic_error("fault kind needs a name and a parser");
    if (kinds_.count(kind.name))
        throw std::logic_error("fault kind '" + kind.name + "' is already registered");
    std::string name = kind.name;
    kinds_.emplace(std::move(name), std::move(kind));
}

const fault_kind* fault_registry::find(std::string_view name) const {
    auto it = kinds_.find(name);
    return it == kinds_.end() ? nullptr : &it->second;
}

std::vector<std::string> fault_registry::names() const {
    std::vector<std::string> out;
    out.reserve(kinds_.size());
    for (const auto& [name, kind] : kinds_)
        out.push_back(name);
    return out;  // std::map keeps them sorted
}

// --- rules --------------------------------------------------------------------------------

namespace {

using detail::format_ms;
using detail::format_number;
using detail::json_type_phrase;
using detail::read_duration_ms;
using detail::read_integer;
using detail::read_number;
using detail::read_string;

constexpr std::size_t max_name_length = 64;

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
char upper(char c) {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

// Names travel in URLs (/faults/{name}) and in "<rule>|<route>" draw keys, so they keep to
// characters that need no escaping and never contain '|'.
bool valid_name(std::string_view s) {
    if (s.empty() || s.size() > max_name_length) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == ':' || c == '-';
    });
}

// RFC 9110 token: methods and header field names.
bool is_token(std::string_view s) {
    if (s.empty()) return false;
    static constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               extra.find(c) != std::string_view::npos;
    });
}

// '*' matches any run of characters, '/' included; everything else matches itself.
bool glob_match(std::string_view pattern, std::string_view text) {
    std::size_t p = 0, t = 0;
    std::size_t star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (p < pattern.size() && pattern[p] == text[t]) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

std::string known_kinds(const fault_registry& registry) {
    std::string out;
    for (const auto& n : registry.names())
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::string non_empty_string(const nlohmann::json& v, const std::string& path) {
    const std::string& s = read_string(v, path);
    if (s.empty()) throw rule_error(path, "must not be empty (leave the key out to match any)");
    return s;
}

double read_probability(const nlohmann::json& v) {
    const std::string path = "probability";
    const std::string expected = "expected a probability in [0, 1] or a percentage such as "
                                 "\"25%\"";
    if (v.is_number()) {
        const double p = read_number(v, path);
        if (p < 0 || p > 1) throw rule_error(path, expected + ", got " + format_number(p));
        return p;
    }
    if (!v.is_string()) throw rule_error(path, expected + ", got " + json_type_phrase(v));
    const std::string& s = v.get_ref<const std::string&>();
    const std::string got = expected + ", got \"" + s + "\"";
    if (s.size() < 2 || s.back() != '%') throw rule_error(path, got);
    // strtod stops at the first character it cannot use; the whole text before '%' must go.
    const std::string body = s.substr(0, s.size() - 1);
    if (body.find_first_not_of("0123456789.") != std::string::npos) throw rule_error(path, got);
    char* end = nullptr;
    const double percent = std::strtod(body.c_str(), &end);
    if (end != body.c_str() + body.size() || !std::isfinite(percent)) throw rule_error(path, got);
    if (percent < 0 || percent > 100)
        throw rule_error(path, "a percentage must be in [0%, 100%], got \"" + s + "\"");
    return percent / 100;
}

void read_headers(const nlohmann::json& v, rule& r) {
    if (!v.is_object())
        throw rule_error("headers", "expected an object such as {\"x-scenario\": \"retry\", "
                                    "\"x-present\": true}, got " +
                                        json_type_phrase(v));
    for (const auto& item : v.items()) {
        const std::string path = "headers." + item.key();
        if (!is_token(item.key())) throw rule_error(path, "not a valid header name");
        std::string name = item.key();
        std::transform(name.begin(), name.end(), name.begin(), lower);
        std::optional<std::string> value;
        const nlohmann::json& h = item.value();
        if (h.is_string())
            value = h.get<std::string>();
        else if (!(h.is_boolean() && h.get<bool>()))
            throw rule_error(path, "expected a string (the exact value) or true (present), got " +
                                       json_type_phrase(h));
        for (const auto& [seen, ignored] : r.headers)
            if (seen == name)
                throw rule_error(path, "header '" + name +
                                           "' is given twice (header names are case-insensitive)");
        r.headers.emplace_back(std::move(name), std::move(value));
    }
    // By lower-case name, so the canonical JSON parses back to the same order.
    std::sort(r.headers.begin(), r.headers.end());
}

void read_window(const nlohmann::json& v, rule& r) {
    if (!v.is_object())
        throw rule_error("window", "expected an object such as {\"from\": \"10s\", \"until\": "
                                   "\"1min\"}, got " +
                                       json_type_phrase(v));
    detail::reject_unknown_keys(v, "window.", {"from", "until"});
    if (v.contains("from")) r.window_from_ms = read_duration_ms(v["from"], "window.from");
    if (v.contains("until")) r.window_until_ms = read_duration_ms(v["until"], "window.until");
    if (r.window_until_ms && !(*r.window_until_ms > 0))
        throw rule_error("window.until", "must be later than 0 (the rule would never fire)");
    if (r.window_from_ms && r.window_until_ms && !(*r.window_from_ms < *r.window_until_ms))
        throw rule_error("window.until", "must be later than window.from (" +
                                             format_ms(*r.window_from_ms) + "), got " +
                                             format_ms(*r.window_until_ms));
}

void read_fault(const nlohmann::json& j, const fault_registry& registry, rule& r) {
    if (!j.contains("fault"))
        throw rule_error("fault", "required: the fault to inject, such as {\"kind\": "
                                  "\"phantom\"}");
    const nlohmann::json& f = j["fault"];
    if (!f.is_object())
        throw rule_error("fault", "expected an object such as {\"kind\": \"phantom\"}, got " +
                                      json_type_phrase(f));
    if (!f.contains("kind"))
        throw rule_error("fault.kind", "required: one of " + known_kinds(registry));
    const std::string& kind = read_string(f["kind"], "fault.kind");
    const fault_kind* k = registry.find(kind);
    if (!k)
        throw rule_error("fault.kind",
                         "unknown fault kind '" + kind + "'; known: " + known_kinds(registry));
    try {
        r.fault = k->parse(f);
    } catch (const rule_error&) {
        throw;
    } catch (const nlohmann::json::exception& e) {
        // A kind's parser should report its own paths; this keeps a slip from escaping as a
        // library exception the admin API would answer with a 500.
        throw rule_error("fault", e.what());
    } catch (const std::logic_error& e) {
        throw rule_error("fault", e.what());
    }
    if (!r.fault) throw rule_error("fault", "the " + kind + " parser gave no configuration");
    r.kind = kind;
}

// A rule for one front must have a kind that means something there; a rule for any front
// just never fires where its kind does not apply.
void check_applies(const rule& r, const fault_kind& k, const std::string& at) {
    if (r.only_front && !k.applies_to(*r.only_front))
        throw rule_error(at + "fault.kind", "'" + k.name + "' applies to " + k.fronts_phrase() +
                                                ", not the " +
                                                std::string(to_string(*r.only_front)) + " front");
    if (r.on && !(r.only_front && *r.only_front == front::dependency))
        throw rule_error(at + "on", "only applies to the dependency front (give \"dependency\" "
                                    "or \"front\": \"dependency\")");
    if (k.connect_only && r.on == dependency_phase::request)
        throw rule_error(at + "on", "'" + k.name + "' only applies when a connection is made; "
                                    "use \"on\": \"connect\" or leave \"on\" out");
    if (!r.dependency.empty() && !(r.only_front && *r.only_front == front::dependency))
        throw rule_error(at + "front",
                         "\"dependency\" only applies to the dependency front, not " +
                             (r.only_front ? "the " + std::string(to_string(*r.only_front)) +
                                                 " front"
                                           : std::string("any front")));
}

rule parse_rule_object(const nlohmann::json& j, const fault_registry& registry,
                       const std::string& default_name) {
    if (!j.is_object()) throw rule_error("", "a rule is a JSON object");
    detail::reject_unknown_keys(j, "",
                                {"name", "front", "function", "route", "method", "path", "headers",
                                 "nth", "every_nth", "first", "probability", "window",
                                 "dependency", "on", "state_machine", "state", "fault"});
    rule r;
    r.name = default_name;
    if (j.contains("name")) {
        r.name = read_string(j["name"], "name");
        if (!valid_name(r.name))
            throw rule_error("name", "expected 1 to " + std::to_string(max_name_length) +
                                         " characters from A-Z a-z 0-9 . _ : -, got \"" + r.name +
                                         "\"");
    }
    if (j.contains("front")) {
        const std::string& f = read_string(j["front"], "front");
        if (f == "gateway")
            r.only_front = front::gateway;
        else if (f == "invoke")
            r.only_front = front::invoke;
        else if (f == "dependency")
            r.only_front = front::dependency;
        else if (f == "states")
            r.only_front = front::states;
        else if (f != "any")
            throw rule_error("front", "expected \"gateway\", \"invoke\", \"dependency\", "
                                      "\"states\" or \"any\", got \"" +
                                          f + "\"");
    }
    if (j.contains("dependency")) {
        r.dependency = non_empty_string(j["dependency"], "dependency");
        if (r.only_front && *r.only_front != front::dependency)
            throw rule_error("front", "\"dependency\" names a dependency, so the rule is for the "
                                      "dependency front, not " +
                                          std::string(to_string(*r.only_front)));
        r.only_front = front::dependency;
    }
    if (j.contains("on")) {
        const std::string& on = read_string(j["on"], "on");
        if (on == "connect")
            r.on = dependency_phase::connect;
        else if (on == "request")
            r.on = dependency_phase::request;
        else
            throw rule_error("on", "expected \"connect\" or \"request\", got \"" + on + "\"");
        if (!(r.only_front && *r.only_front == front::dependency))
            throw rule_error("on", "only applies to the dependency front (give \"dependency\" "
                                   "or \"front\": \"dependency\")");
    }
    // A Task's state machine and state exist on the states front only; naming them with
    // another front could never match, so it is a mistake worth saying.
    for (const char* key : {"state_machine", "state"}) {
        if (!j.contains(key)) continue;
        (std::string_view(key) == "state" ? r.state : r.state_machine) =
            non_empty_string(j[key], key);
        if (r.only_front && *r.only_front != front::states)
            throw rule_error(key, "only applies to the states front, not the " +
                                      std::string(to_string(*r.only_front)) + " front");
    }
    if (j.contains("function")) r.function = non_empty_string(j["function"], "function");
    if (j.contains("route")) r.route = non_empty_string(j["route"], "route");
    if (j.contains("method")) {
        r.method = read_string(j["method"], "method");
        if (!is_token(r.method))
            throw rule_error("method",
                             "expected an HTTP method such as \"POST\", got \"" + r.method + "\"");
        std::transform(r.method.begin(), r.method.end(), r.method.begin(), upper);
    }
    if (j.contains("path")) r.path = non_empty_string(j["path"], "path");
    if (j.contains("headers")) read_headers(j["headers"], r);

    // Checked in the order the header documents them; the error names the later key.
    const std::pair<const char*, index_selector> selectors[] = {
        {"nth", index_selector::nth},
        {"every_nth", index_selector::every_nth},
        {"first", index_selector::first},
    };
    const char* chosen = nullptr;
    for (const auto& [key, selector] : selectors) {
        if (!j.contains(key)) continue;
        if (chosen)
            throw rule_error(key, std::string("cannot be combined with \"") + chosen +
                                      "\" (use at most one of nth, every_nth, first)");
        chosen = key;
        const std::int64_t n = read_integer(j[key], key);
        if (n < 1) throw rule_error(key, "expected a whole number >= 1, got " + std::to_string(n));
        r.selector = selector;
        r.selector_n = static_cast<std::uint64_t>(n);
    }
    if (j.contains("probability")) r.probability = read_probability(j["probability"]);
    if (j.contains("window")) read_window(j["window"], r);
    read_fault(j, registry, r);
    check_applies(r, *registry.find(r.kind), "");
    return r;
}

}  // namespace

rule parse_rule(const nlohmann::json& j, const fault_registry& registry,
                const std::string& default_name) {
    try {
        return parse_rule_object(j, registry, default_name);
    } catch (const nlohmann::json::exception& e) {
        // The readers check types before reading, so this is a backstop: no library exception
        // leaves a rule parse.
        throw rule_error("", std::string("invalid rule: ") + e.what());
    }
}

nlohmann::json rule::to_json() const {
    nlohmann::json j = nlohmann::json::object();
    j["name"] = name;
    if (only_front) j["front"] = std::string(faults::to_string(*only_front));
    if (!function.empty()) j["function"] = function;
    if (!route.empty()) j["route"] = route;
    if (!method.empty()) j["method"] = method;
    if (!path.empty()) j["path"] = path;
    if (!headers.empty()) {
        nlohmann::json h = nlohmann::json::object();
        for (const auto& [n, v] : headers) {
            if (v)
                h[n] = *v;
            else
                h[n] = true;
        }
        j["headers"] = std::move(h);
    }
    switch (selector) {
    case index_selector::every:
        break;
    case index_selector::nth:
        j["nth"] = selector_n;
        break;
    case index_selector::every_nth:
        j["every_nth"] = selector_n;
        break;
    case index_selector::first:
        j["first"] = selector_n;
        break;
    }
    if (probability != 1.0) j["probability"] = probability;
    if (window_from_ms || window_until_ms) {
        nlohmann::json w = nlohmann::json::object();
        if (window_from_ms) w["from"] = *window_from_ms;
        if (window_until_ms) w["until"] = *window_until_ms;
        j["window"] = std::move(w);
    }
    if (!dependency.empty()) j["dependency"] = dependency;
    if (on) j["on"] = std::string(faults::to_string(*on));
    if (!state_machine.empty()) j["state_machine"] = state_machine;
    if (!state.empty()) j["state"] = state;
    j["fault"] = fault ? fault->to_json() : nlohmann::json();
    return j;
}

std::string rule::describe() const {
    std::vector<std::string> parts;
    // A named dependency says the front already.
    if (only_front && dependency.empty())
        parts.push_back(std::string(faults::to_string(*only_front)) + " only");
    if (!dependency.empty()) parts.push_back("dependency " + dependency);
    if (on) parts.push_back("on " + std::string(faults::to_string(*on)));
    if (!function.empty()) parts.push_back("function " + function);
    if (!state_machine.empty()) parts.push_back("state machine " + state_machine);
    if (!state.empty()) parts.push_back("state " + state);
    if (!route.empty()) parts.push_back(route);
    if (!method.empty()) parts.push_back("method " + method);
    if (!path.empty()) parts.push_back("path " + path);
    for (const auto& [n, v] : headers)
        parts.push_back("header " + n + (v ? "=" + *v : " present"));
    switch (selector) {
    case index_selector::every:
        break;
    case index_selector::nth:
        parts.push_back("nth " + std::to_string(selector_n));
        break;
    case index_selector::every_nth:
        parts.push_back("every " + std::to_string(selector_n) + "th");
        break;
    case index_selector::first:
        parts.push_back("first " + std::to_string(selector_n));
        break;
    }
    if (probability != 1.0) parts.push_back(format_number(probability * 100) + "%");
    if (window_from_ms) parts.push_back("from " + format_ms(*window_from_ms));
    if (window_until_ms) parts.push_back("until " + format_ms(*window_until_ms));

    std::string out = name + ": ";
    if (parts.empty()) out += "every request";
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i ? ", " : "") + parts[i];
    return out + " → " + (fault ? fault->describe() : std::string("no fault"));
}

rule sla_rule(front where, double sla_percent, double after_share, client_outcome client,
              const fault_registry& registry) {
    if (!(sla_percent > 0 && sla_percent <= 100))
        throw rule_error("",
                         "an SLA is a percentage in (0, 100], got " + format_number(sla_percent));
    if (where == front::dependency)
        throw rule_error("front", "phantoms do not apply to the dependency front; a dependency's "
                                  "SLA is an availability rule");
    const fault_kind* phantom = registry.find("phantom");
    if (!phantom) throw std::logic_error("sla_rule needs the phantom fault kind registered");
    rule r;
    r.name = "sla-" + std::string(to_string(where));
    r.only_front = where;
    // Rounded to 12 decimals so 99.95% reads back as 0.0005, not 0.000499999999999945.
    r.probability = std::round((100 - sla_percent) * 1e10) / 1e12;
    r.kind = "phantom";
    // The phantom parser, not the config class: one code path checks after_share and builds
    // the config, whether the rule came from JSON or from an SLA.
    r.fault = phantom->parse({{"kind", "phantom"},
                              {"after_share", after_share},
                              {"client_sees", std::string(to_string(client))}});
    return r;
}

rule availability_rule(std::string_view dependency, double sla_percent, std::string_view outcome,
                       std::optional<dependency_phase> on, const fault_registry& registry) {
    if (!(sla_percent > 0 && sla_percent <= 100))
        throw rule_error("", "an availability is a percentage in (0, 100], got " +
                                 format_number(sla_percent));
    if (outcome != "refuse" && outcome != "reset" && outcome != "hang")
        throw rule_error("", "an availability outcome is \"refuse\", \"reset\" or \"hang\", "
                             "got \"" +
                                 std::string(outcome) + "\"");
    rule r;
    r.name = "availability-" + std::string(dependency);
    if (dependency.empty() || !valid_name(r.name))
        throw rule_error("", "a dependency's availability rule is named \"" + r.name +
                                 "\", which needs 1 to " +
                                 std::to_string(max_name_length - 13) +
                                 " characters from A-Z a-z 0-9 . _ : - after \"availability-\"");
    const fault_kind* kind = registry.find(outcome);
    if (!kind)
        throw std::logic_error("availability_rule needs the " + std::string(outcome) +
                               " fault kind registered");
    r.only_front = front::dependency;
    r.dependency = std::string(dependency);
    // A refused connection has no request turns: refuse decides connections whatever `on`
    // says (config gives "request" by default).
    r.on = kind->connect_only ? std::optional(dependency_phase::connect) : on;
    // Rounded to 12 decimals as sla_rule's.
    r.probability = std::round((100 - sla_percent) * 1e10) / 1e12;
    r.kind = std::string(outcome);
    r.fault = kind->parse({{"kind", r.kind}});
    return r;
}

// --- the decision point -------------------------------------------------------------------

decider::decider(const fault_registry& registry, std::uint64_t seed)
    : registry_(registry), rng_(seed) {}

namespace {

// Checks a batch before anything changes: names valid and unique among `taken` and the batch,
// a fault present and of a registered kind. Paths name the rule's index in the batch.
void check_batch(const std::vector<rule>& batch, std::set<std::string, std::less<>> taken,
                 const fault_registry& registry) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const rule& r = batch[i];
        const std::string at = "[" + std::to_string(i) + "]";
        if (!valid_name(r.name))
            throw rule_error(at + ".name", "expected 1 to " + std::to_string(max_name_length) +
                                               " characters from A-Z a-z 0-9 . _ : -, got \"" +
                                               r.name + "\"");
        if (!taken.insert(r.name).second)
            throw rule_error(at + ".name", "a rule named '" + r.name + "' already exists");
        if (!r.fault) throw rule_error(at + ".fault", "required: the fault to inject");
        const fault_kind* kind = registry.find(r.kind);
        if (!kind)
            throw rule_error(at + ".fault.kind", "unknown fault kind '" + r.kind +
                                                     "'; known: " + known_kinds(registry));
        // Rules built in code (sla_rule, availability_rule, config) skip parse_rule's checks.
        check_applies(r, *kind, at + ".");
    }
}

bool headers_match(const rule& r, const request_facts& facts) {
    for (const auto& [name, value] : r.headers) {
        if (!facts.headers) return false;
        const bool found =
            std::any_of(facts.headers->begin(), facts.headers->end(), [&](const auto& h) {
                return iequals(h.first, name) && (!value || h.second == *value);
            });
        if (!found) return false;
    }
    return true;
}

// Whether `m` counts at least one for `key`.
template <class Map, class Key>
bool held(const Map& m, const Key& key) {
    auto it = m.find(key);
    return it != m.end() && it->second > 0;
}

// One less; an entry at 0 is erased, as if that fault had never fired.
template <class Map, class Key>
void take_back(Map& m, const Key& key) {
    auto it = m.find(key);
    if (it == m.end() || it->second == 0) return;
    if (--it->second == 0) m.erase(it);
}

double round3(double v) {
    return std::round(v * 1000) / 1000;
}

}  // namespace

// --- the decision, step by step -----------------------------------------------------------

bool matches(const rule& r, const fault_kind& kind, const request_facts& facts) {
    if (r.only_front && *r.only_front != facts.where) return false;
    // A rule for any front never fires where its kind means nothing (a phantom on a
    // dependency, a refuse on the gateway).
    if (!kind.applies_to(facts.where)) return false;
    if (facts.where == front::dependency) {
        if (!r.dependency.empty() && r.dependency != facts.dependency) return false;
        if (r.on && *r.on != facts.on) return false;
        if (kind.connect_only && facts.on != dependency_phase::connect) return false;
    }
    if (facts.authorizer && r.function.empty()) return false;
    if (!r.function.empty() && r.function != facts.function && r.function != facts.function_name)
        return false;
    if (!r.state_machine.empty() && r.state_machine != facts.state_machine &&
        r.state_machine != facts.state_machine_name)
        return false;
    if (!r.state.empty() && r.state != facts.state && r.state != facts.state_path) return false;
    if (!r.route.empty() && r.route != facts.route) return false;
    if (!r.method.empty() && !iequals(r.method, facts.method)) return false;
    if (!r.path.empty() && !glob_match(r.path, facts.path)) return false;
    return headers_match(r, facts);
}

bool in_window(const rule& r, double elapsed_ms) {
    if (r.window_from_ms && elapsed_ms < *r.window_from_ms) return false;
    if (r.window_until_ms && elapsed_ms >= *r.window_until_ms) return false;
    return true;
}

bool selects(const rule& r, std::uint64_t k) {
    switch (r.selector) {
    case index_selector::every:
        return true;
    case index_selector::nth:
        return k + 1 == r.selector_n;
    case index_selector::every_nth:
        return (k + 1) % r.selector_n == 0;
    case index_selector::first:
        return k < r.selector_n;
    }
    return true;
}

bool fires(const rule& r, const random_source& rng, std::string_view key, std::uint64_t k) {
    if (!selects(r, k)) return false;
    // 1 and 0 decide without a draw, so "probability": 1 never depends on the seed.
    if (r.probability <= 0) return false;
    return r.probability >= 1 || rng.uniform("fault", key, k) < r.probability;
}

void apply(const rule& r, const random_source& rng, std::string_view key, std::uint64_t k,
           front where, plan& p) {
    p = plan{};
    r.fault->apply(apply_context{rng, key, k, where}, p);
}

std::string log_line(const request_facts& facts, const decision& d) {
    // ordered_json keeps insertion order: the line reads the same in every run.
    nlohmann::ordered_json j;
    j["event"] = "fault";
    j["front"] = std::string(to_string(facts.where));
    j["route"] = std::string(facts.route);
    if (facts.where == front::dependency) {
        j["dependency"] = std::string(facts.dependency);
        j["on"] = std::string(to_string(facts.on));
    } else {
        j["method"] = std::string(facts.method);
    }
    if (!facts.state_machine.empty()) j["state_machine"] = std::string(facts.state_machine);
    if (!facts.state.empty()) j["state"] = std::string(facts.state);
    if (facts.authorizer) j["authorizer"] = std::string(facts.function);
    j["rule"] = d.rule;
    j["kind"] = d.kind;
    j["k"] = d.k;
    j["action"] = std::string(action_name(d.p.act));
    const plan& p = d.p;
    // Each action's detail, in the order the line has always had it.
    std::visit(
        overloaded{
            [&](const actions::phantom_before& a) {
                j["client"] = std::string(to_string(a.client));
            },
            [&](const actions::phantom_after& a) {
                j["client"] = std::string(to_string(a.client));
            },
            [&](const actions::gateway_error& a) { j["status"] = a.status; },
            [&](const actions::function_exit& a) { j["kill_after_ms"] = round3(a.kill_after_ms); },
            [&](const actions::handler_error& a) { j["error_type"] = a.error_type; },
            [&](const actions::throttle& a) { j["reason"] = a.reason; },
            [&](const actions::slow_response& a) { j["bytes_per_s"] = a.bytes_per_s; },
            [&](const actions::hang& a) { j["close_after_ms"] = round3(a.close_after_ms); },
            [](const actions::pass&) {},
            [](const actions::reset&) {},
            [](const actions::refuse&) {},
        },
        p.act);
    if (p.delay_ms > 0) j["delay_ms"] = round3(p.delay_ms);
    if (d.overflow) j["overflow"] = true;
    // Routes come from config and requests; a stray byte must not turn a log line into an
    // exception.
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void decider::set_rules(std::vector<rule> rules, double now_ms) {
    check_batch(rules, {}, registry_);
    rules_ever_ += rules.size();
    rules_ = std::move(rules);
    added_ms_.assign(rules_.size(), now_ms);
    seen_.clear();
}

void decider::add_rules(std::vector<rule> rules, double now_ms) {
    std::set<std::string, std::less<>> taken;
    for (const auto& r : rules_)
        taken.insert(r.name);
    check_batch(rules, std::move(taken), registry_);
    rules_ever_ += rules.size();
    for (auto& r : rules) {
        rules_.push_back(std::move(r));
        added_ms_.push_back(now_ms);
    }
}

bool decider::remove_rule(std::string_view name) {
    auto it =
        std::find_if(rules_.begin(), rules_.end(), [&](const rule& r) { return r.name == name; });
    if (it == rules_.end()) return false;
    added_ms_.erase(added_ms_.begin() + (it - rules_.begin()));
    rules_.erase(it);
    // Forget its counts: a rule added later under the same name starts from k = 0.
    const std::string prefix = std::string(name) + "|";
    for (auto s = seen_.lower_bound(prefix);
         s != seen_.end() && s->first.compare(0, prefix.size(), prefix) == 0;)
        s = seen_.erase(s);
    return true;
}

void decider::clear_rules() {
    rules_.clear();
    added_ms_.clear();
    seen_.clear();
}

std::string decider::next_default_name() const {
    // Skips a name a user already chose, so the default never collides.
    for (std::uint64_t n = rules_ever_ + 1;; ++n) {
        std::string name = "rule-" + std::to_string(n);
        if (std::none_of(rules_.begin(), rules_.end(),
                         [&](const rule& r) { return r.name == name; }))
            return name;
    }
}

void decider::set_seed(std::uint64_t seed) {
    rng_ = random_source(seed);
    seen_.clear();
}

void decider::reset() {
    counters_ = fault_counters{};
    counters_.active = active_.size();
    seen_.clear();
    // Faults decided before now are no longer in any count: missed() must not take them back.
    first_id_since_reset_ = next_id_;
    missed_ids_.clear();
}

decision decider::decide(const request_facts& facts, double now_ms) {
    ++counters_.decisions;
    decision d;
    d.where = facts.where;
    // The first rule that fires wins and the rules after it are not looked at, so their k
    // does not advance for this request: a rule's count is of the requests that reached it.
    for (std::size_t i = 0; i < rules_.size(); ++i) {
        const rule& r = rules_[i];
        // check_batch made sure the kind is there.
        const fault_kind* kind = registry_.find(r.kind);
        if (!kind || !matches(r, *kind, facts)) continue;
        if (!in_window(r, now_ms - added_ms_[i])) continue;

        std::string key = r.name + "|" + std::string(facts.route);
        const std::uint64_t k = seen_[key]++;
        if (!fires(r, rng_, key, k)) continue;

        d.rule = r.name;
        d.kind = r.kind;
        d.k = k;
        if (max_active_ && active_.size() >= *max_active_) {
            // Envoy's max_active_faults: over the cap the request passes untouched.
            d.overflow = true;
            ++counters_.overflow;
        } else {
            apply(r, rng_, key, k, facts.where, d.p);
            d.deferred = facts.counted_by_caller;
            if (!d.deferred) count_fired(d);
            if (d.p.injects()) {
                d.id = next_id_++;
                active_.emplace(d.id, true);
                counters_.active = active_.size();
            }
        }
        d.log_line = log_line(facts, d);
        return d;
    }
    return d;
}

void decider::finished(std::uint64_t id) {
    active_.erase(id);
    counters_.active = active_.size();
}

void decider::count_fired(const decision& d) {
    const std::string act(action_name(d.p.act));
    ++counters_.by_kind[d.kind];
    ++counters_.by_action[act];
    ++counters_.by_rule[d.rule];
    ++counters_.by_kind_action[{d.kind, act}];
    ++counters_.by_front[std::string(to_string(d.where))];
}

void decider::injected(const decision& d) {
    if (d.rule.empty() || d.overflow || !d.deferred) return;
    count_fired(d);
}

void decider::missed(const decision& d) {
    finished(d.id);
    if (d.rule.empty() || d.overflow) return;
    if (d.deferred) {
        // Never counted as fired: only as missed.
        ++counters_.missed;
        ++counters_.missed_by_kind[d.kind];
        return;
    }
    if (d.id != 0 && (d.id < first_id_since_reset_ || !missed_ids_.insert(d.id).second)) return;
    const std::string act(action_name(d.p.act));
    const std::pair<std::string, std::string> kind_act{d.kind, act};
    const std::string where(to_string(d.where));
    fault_counters& c = counters_;
    // All or nothing, so the maps keep summing to the same total.
    if (!(held(c.by_kind, d.kind) && held(c.by_action, act) && held(c.by_rule, d.rule) &&
          held(c.by_kind_action, kind_act) && held(c.by_front, where)))
        return;
    take_back(c.by_kind, d.kind);
    take_back(c.by_action, act);
    take_back(c.by_rule, d.rule);
    take_back(c.by_kind_action, kind_act);
    take_back(c.by_front, where);
    ++c.missed;
    ++c.missed_by_kind[d.kind];
}

}  // namespace coldbrew::models::faults
