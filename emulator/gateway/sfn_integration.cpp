#include "emulator/gateway/sfn_integration.hpp"

#include "emulator/config/config_error.hpp"
#include "emulator/gateway/detail.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <optional>
#include <regex>
#include <vector>

namespace coldbrew::gateway {

using nlohmann::json;

namespace {

// ---- JSONPath subset ($, .name, ['name'], ["name"], [index]) ---------------------------

struct path_step {
    std::string name;
    std::optional<std::size_t> index;
};

// nullopt (and `why`) when `p` is not in the subset.
std::optional<std::vector<path_step>> parse_json_path(std::string_view p, std::string* why) {
    auto fail = [&](std::string w) -> std::optional<std::vector<path_step>> {
        if (why) *why = std::move(w);
        return std::nullopt;
    };
    if (p.empty() || p[0] != '$') return fail("a JSONPath starts with $");
    std::vector<path_step> steps;
    std::size_t i = 1;
    while (i < p.size()) {
        if (p[i] == '.') {
            std::size_t j = i + 1;
            while (j < p.size() && p[j] != '.' && p[j] != '[') ++j;
            if (j == i + 1) return fail("an empty name after '.'");
            std::string name(p.substr(i + 1, j - i - 1));
            if (name == "*" || name.find('.') != std::string::npos)
                return fail("wildcards and '..' are not evaluated");
            steps.push_back({std::move(name), std::nullopt});
            i = j;
        } else if (p[i] == '[') {
            auto close = p.find(']', i);
            if (close == std::string_view::npos) return fail("a '[' without ']'");
            auto inner = p.substr(i + 1, close - i - 1);
            if (inner.size() >= 2 && (inner.front() == '\'' || inner.front() == '"') &&
                inner.back() == inner.front()) {
                steps.push_back({std::string(inner.substr(1, inner.size() - 2)), std::nullopt});
            } else if (!inner.empty() && inner.size() <= 9 &&
                       std::all_of(inner.begin(), inner.end(),
                                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
                steps.push_back({{}, static_cast<std::size_t>(std::stoull(std::string(inner)))});
            } else {
                return fail("only ['name'] and [index] (up to 9 digits) are evaluated between brackets");
            }
            i = close + 1;
        } else {
            return fail("unexpected '" + std::string(1, p[i]) + "'");
        }
    }
    return steps;
}

const json* walk(const json& doc, const std::vector<path_step>& steps) {
    const json* at = &doc;
    for (const auto& s : steps) {
        if (s.index) {
            if (!at->is_array() || *s.index >= at->size()) return nullptr;
            at = &(*at)[*s.index];
        } else {
            if (!at->is_object()) return nullptr;
            auto it = at->find(s.name);
            if (it == at->end()) return nullptr;
            at = &*it;
        }
    }
    return at;
}

// JSON text of values that carry a client's bytes (headers, query strings, bodies, parse
// errors quoting them): bytes that are not UTF-8 become U+FFFD instead of a throw that would
// leave the request unanswered.
std::string json_text(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// A value as text: a string as itself, anything else as JSON.
std::string as_text(const json& v) { return v.is_string() ? v.get<std::string>() : json_text(v); }

// ---- what a template reads of the request ----------------------------------------------

// The request as a template sees it; the body is parsed when first read.
struct request_view {
    const http::request& req;
    const route_match& m;
    const request_info& info;
    std::optional<json> event;  // the payload format's event: requestContext, headers, params
    std::optional<json> body;
    std::string body_error;

    const json& ev() {
        if (!event) {
            // The payload format's names: REST's requestContext, or an HTTP API's 2.0 one
            // (its parameter mapping speaks 2.0's names whatever the route's version).
            const bool v1 = m.api->kind == config::api_kind::rest;
            event = json::parse(v1 ? build_event_v1(req, m, info) : build_event_v2(req, m, info),
                                nullptr, false);
        }
        return *event;
    }
    // The body as JSON: {} when empty; null (and body_error) when it is not JSON.
    const json* body_json() {
        if (!body) {
            if (req.body.empty()) {
                body = json::object();
            } else {
                try {
                    body = json::parse(req.body);
                } catch (const json::exception& e) {  // syntax, or a number overflow
                    body = json();
                    body_error = e.what();
                    return nullptr;
                }
            }
        }
        return body_error.empty() ? &*body : nullptr;
    }
};

struct not_json {};  // the body was read as JSON and is not

// ---- the VTL subset ---------------------------------------------------------------------

// An expression of the subset, parsed once; evaluate() is only called on a checked tree.
struct expr {
    enum class kind { literal, input_json, input_path, input_body, input_params, context, escape };
    kind k = kind::literal;
    std::string text;                    // literal text, path, params name, context name
    std::vector<path_step> steps;        // input_json / input_path
    std::unique_ptr<expr> inner;         // escape
    std::vector<std::pair<std::string, std::string>> replace_all;  // .replaceAll(a, b), in order
};

struct node {
    std::string text;            // literal output, when !e
    std::unique_ptr<expr> e;
};

constexpr std::array<std::string_view, 18> rest_context_names = {
    "requestId", "extendedRequestId", "httpMethod", "resourcePath", "resourceId", "path",
    "stage", "apiId", "accountId", "protocol", "domainName", "domainPrefix", "requestTime",
    "requestTimeEpoch", "identity.sourceIp", "identity.userAgent", "identity.apiKey",
    "identity.apiKeyId"};

constexpr std::array<std::string_view, 14> http_context_names = {
    "accountId", "apiId", "domainName", "domainPrefix", "http.method", "http.path",
    "http.protocol", "http.sourceIp", "http.userAgent", "requestId", "routeKey", "stage",
    "time", "timeEpoch"};

constexpr std::array<std::string_view, 13> directives = {
    "set", "if", "elseif", "else", "foreach", "end", "macro", "parse", "include",
    "define", "evaluate", "break", "stop"};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

class vtl_parser {
public:
    explicit vtl_parser(std::string_view s) : s_(s) {}

    // The template's nodes, or nullopt with error() set.
    std::optional<std::vector<node>> parse() {
        std::vector<node> out;
        std::string text;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '#' && directive_at(i_)) {
                return fail("VTL directive at offset " + std::to_string(i_) + " (" +
                            std::string(s_.substr(i_, std::min<std::size_t>(12, s_.size() - i_))) +
                            "…) is not evaluated; coldbrew evaluates references only");
            }
            if (c == '$' && i_ + 1 < s_.size() &&
                (ident_start(s_[i_ + 1]) || s_[i_ + 1] == '!' || s_[i_ + 1] == '{')) {
                if (s_[i_ + 1] != '!' || (i_ + 2 < s_.size() && ident_start(s_[i_ + 2]))) {
                    if (!text.empty()) out.push_back({std::move(text), nullptr});
                    text.clear();
                    auto e = reference();
                    if (!e) return std::nullopt;
                    out.push_back({{}, std::move(e)});
                    continue;
                }
            }
            text += c;
            ++i_;
        }
        if (!text.empty()) out.push_back({std::move(text), nullptr});
        return out;
    }
    const std::string& error() const noexcept { return error_; }

private:
    std::nullopt_t fail(std::string why) {
        if (error_.empty()) error_ = std::move(why);
        return std::nullopt;
    }

    bool directive_at(std::size_t at) const {
        if (at + 1 >= s_.size()) return false;
        const char n = s_[at + 1];
        if (n == '#' || n == '*' || n == '{') return true;  // comments, #{if}
        std::size_t j = at + 1;
        while (j < s_.size() && std::isalpha(static_cast<unsigned char>(s_[j]))) ++j;
        const auto word = s_.substr(at + 1, j - at - 1);
        return std::find(directives.begin(), directives.end(), word) != directives.end() &&
               (j >= s_.size() || !ident_char(s_[j]));
    }

    std::string ident() {
        const auto start = i_;
        while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
        return std::string(s_.substr(start, i_ - start));
    }

    // A quoted string literal ('…' or "…"; VTL keeps backslashes as they are).
    std::optional<std::string> string_literal() {
        const char q = s_[i_];
        const auto close = s_.find(q, i_ + 1);
        if (close == std::string_view::npos) return fail("an unterminated string literal");
        std::string out(s_.substr(i_ + 1, close - i_ - 1));
        i_ = close + 1;
        return out;
    }

    void skip_spaces() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    }

    // One argument: a string literal or a reference.
    std::unique_ptr<expr> argument() {
        skip_spaces();
        if (i_ >= s_.size()) return fail_e("a call without its closing ')'");
        if (s_[i_] == '\'' || s_[i_] == '"') {
            auto lit = string_literal();
            if (!lit) return nullptr;
            auto e = std::make_unique<expr>();
            e->text = std::move(*lit);
            return e;
        }
        if (s_[i_] == '$') return reference();
        return fail_e("an argument at offset " + std::to_string(i_) +
                      " that is neither a quoted string nor a reference");
    }
    std::unique_ptr<expr> fail_e(std::string why) {
        fail(std::move(why));
        return nullptr;
    }

    // "(" args ")" after a method name.
    std::optional<std::vector<std::unique_ptr<expr>>> arguments() {
        std::vector<std::unique_ptr<expr>> args;
        ++i_;  // (
        skip_spaces();
        if (i_ < s_.size() && s_[i_] == ')') {
            ++i_;
            return args;
        }
        for (;;) {
            auto a = argument();
            if (!a) return std::nullopt;
            args.push_back(std::move(a));
            skip_spaces();
            if (i_ < s_.size() && s_[i_] == ',') {
                ++i_;
                continue;
            }
            if (i_ < s_.size() && s_[i_] == ')') {
                ++i_;
                return args;
            }
            return fail("a call without its closing ')'");
        }
    }

    std::optional<std::string> literal_arg(std::vector<std::unique_ptr<expr>>& args,
                                           std::size_t n, const std::string& call) {
        if (args.size() != n || n == 0) {
            return fail(call + " takes " + std::to_string(n) + " argument(s)");
        }
        for (auto& a : args)
            if (a->k != expr::kind::literal || a->inner)
                return fail(call + " is evaluated with quoted string arguments only");
        return args[0]->text;
    }

    std::unique_ptr<expr> reference() {
        const auto start = i_;
        ++i_;  // $
        if (i_ < s_.size() && s_[i_] == '!') ++i_;
        if (i_ < s_.size() && s_[i_] == '{')
            return fail_e("the formal reference ${…} at offset " + std::to_string(start) +
                          " is not evaluated; write $name");
        const std::string root = ident();
        auto e = std::make_unique<expr>();
        auto unsupported = [&](const std::string& what) {
            return fail_e("the reference " + what + " at offset " + std::to_string(start) +
                          " is not evaluated (coldbrew evaluates $input.json, $input.path, "
                          "$input.body, $input.params, $context.<name> and "
                          "$util.escapeJavaScript)");
        };
        // Segments after the root: names, each maybe called.
        auto next_name = [&]() -> std::string {
            if (i_ + 1 < s_.size() && s_[i_] == '.' && ident_start(s_[i_ + 1])) {
                ++i_;
                return ident();
            }
            return {};
        };
        if (root == "input") {
            const std::string what = next_name();
            if (what == "body") {
                e->k = expr::kind::input_body;
            } else if (what == "json" || what == "path" || what == "params") {
                if (i_ >= s_.size() || s_[i_] != '(')
                    return unsupported("$input." + what + " without an argument");
                auto args = arguments();
                if (!args) return nullptr;
                auto lit = literal_arg(*args, 1, "$input." + what);
                if (!lit) return nullptr;
                e->text = *lit;
                if (what == "params") {
                    e->k = expr::kind::input_params;
                } else {
                    e->k = what == "json" ? expr::kind::input_json : expr::kind::input_path;
                    std::string why;
                    auto steps = parse_json_path(e->text, &why);
                    if (!steps)
                        return fail_e("$input." + what + "('" + e->text + "'): " + why);
                    e->steps = std::move(*steps);
                }
            } else {
                return unsupported("$input." + what);
            }
        } else if (root == "context") {
            std::string name = next_name();
            for (std::string more = next_name(); !more.empty(); more = next_name()) {
                if (more == "replaceAll") {
                    i_ -= more.size() + 1;  // a method on the value, read below
                    break;
                }
                name += "." + more;
            }
            if (std::find(rest_context_names.begin(), rest_context_names.end(), name) ==
                rest_context_names.end())
                return unsupported("$context." + name);
            e->k = expr::kind::context;
            e->text = name;
        } else if (root == "util") {
            const std::string what = next_name();
            if (what != "escapeJavaScript") return unsupported("$util." + what);
            if (i_ >= s_.size() || s_[i_] != '(') return unsupported("$util.escapeJavaScript");
            auto args = arguments();
            if (!args) return nullptr;
            if (args->size() != 1) return fail_e("$util.escapeJavaScript takes one argument");
            e->k = expr::kind::escape;
            e->inner = std::move((*args)[0]);
        } else {
            return unsupported("$" + root);
        }
        // Methods on the value: .replaceAll(regex, replacement) only.
        while (i_ + 1 < s_.size() && s_[i_] == '.' && ident_start(s_[i_ + 1])) {
            const auto at = i_;
            ++i_;
            const std::string m = ident();
            if (m != "replaceAll" || i_ >= s_.size() || s_[i_] != '(') {
                // Not a method call of ours: ".word" is literal text after the reference.
                if (i_ < s_.size() && s_[i_] == '(')
                    return fail_e("the method ." + m + "(…) at offset " + std::to_string(at) +
                                  " is not evaluated (only .replaceAll)");
                i_ = at;
                break;
            }
            auto args = arguments();
            if (!args) return nullptr;
            auto first = literal_arg(*args, 2, ".replaceAll");
            if (!first) return nullptr;
            try {
                std::regex check((*args)[0]->text);
            } catch (const std::regex_error&) {
                return fail_e(".replaceAll at offset " + std::to_string(at) +
                              ": its pattern is not a regular expression coldbrew reads");
            }
            e->replace_all.emplace_back((*args)[0]->text, (*args)[1]->text);
        }
        return e;
    }

    std::string_view s_;
    std::size_t i_ = 0;
    std::string error_;
};

// Java's replacement text: $n is a group and \x a literal x.
std::string java_replacement(std::string_view r) {
    std::string out;
    for (std::size_t i = 0; i < r.size(); ++i) {
        if (r[i] == '\\' && i + 1 < r.size()) {
            out += r[++i] == '$' ? "$$" : std::string(1, r[i]);
        } else {
            out += r[i];
        }
    }
    return out;
}

std::string evaluate(const expr& e, request_view& v) {
    std::string out;
    switch (e.k) {
    case expr::kind::literal:
        out = e.text;
        break;
    case expr::kind::input_body:
        out = v.req.body;
        break;
    case expr::kind::input_json:
    case expr::kind::input_path: {
        const json* body = v.body_json();
        if (!body) throw not_json{};
        const json* at = walk(*body, e.steps);
        // A path that selects nothing: null as JSON, nothing as a value (unverified).
        if (e.k == expr::kind::input_json)
            out = at ? json_text(*at) : "null";
        else
            out = at && !at->is_null() ? as_text(*at) : "";
        break;
    }
    case expr::kind::input_params: {
        // API Gateway looks in the path, then the query string, then the headers.
        const json& ev = v.ev();
        bool found = false;
        for (const char* where : {"pathParameters", "queryStringParameters"}) {
            const auto it = ev.find(where);
            if (!found && it != ev.end() && it->is_object() && it->contains(e.text)) {
                out = as_text((*it)[e.text]);
                found = true;
            }
        }
        if (!found)
            if (auto h = v.req.header(e.text)) out = std::string(*h);
        break;
    }
    case expr::kind::context: {
        const json* at = &v.ev()["requestContext"];
        std::string_view name = e.text;
        while (at && !name.empty()) {
            const auto dot = name.find('.');
            const std::string part(name.substr(0, dot));
            at = at->is_object() && at->contains(part) ? &(*at)[part] : nullptr;
            name = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
        }
        out = at && !at->is_null() ? as_text(*at) : "";
        break;
    }
    case expr::kind::escape:
        out = escape_javascript(evaluate(*e.inner, v));
        break;
    }
    for (const auto& [pattern, replacement] : e.replace_all)
        out = std::regex_replace(out, std::regex(pattern), java_replacement(replacement));
    return out;
}

http::response gateway_answer(config::api_kind kind, int status, const std::string& message,
                              const std::string& request_id) {
    http::response res;
    res.status = status;
    res.set("Content-Type", "application/json");
    res.body = json_text(json{{"message", message}});
    stamp_request_id(res, kind, request_id);
    return res;
}

// ---- HTTP API request parameters --------------------------------------------------------

constexpr std::array<std::string_view, 5> parameter_keys = {"StateMachineArn", "Input", "Name",
                                                            "Region", "TraceHeader"};

// "" when `value` is static or one expression of the subset.
std::string check_parameter_value(const std::string& key, const std::string& value) {
    if (value.find('$') == std::string::npos) return {};
    auto bad = [&](std::string why) {
        return "request parameter " + key + ": " + value + " " + why;
    };
    if (value.front() != '$')
        return bad("mixes text and a mapping expression; coldbrew evaluates one expression or "
                   "static text");
    if (value == "$request.body") return {};
    for (std::string_view prefix : {"$request.body.", "$request.header.", "$request.querystring.",
                                    "$request.path."}) {
        if (value.starts_with(prefix)) {
            const auto rest = std::string_view(value).substr(prefix.size());
            if (rest.empty()) return bad("names nothing after " + std::string(prefix));
            if (prefix == "$request.body.") {
                std::string why;
                if (!parse_json_path("$." + std::string(rest), &why)) return bad("is not read: " + why);
            }
            return {};
        }
    }
    if (value.starts_with("$context.")) {
        const auto name = std::string_view(value).substr(9);
        if (std::find(http_context_names.begin(), http_context_names.end(), name) !=
            http_context_names.end())
            return {};
    }
    return bad("is not evaluated (coldbrew maps $request.body, $request.body.<name>, "
               "$request.header.<name>, $request.querystring.<name>, $request.path.<name> and "
               "$context.<name>)");
}

// nullopt: the source is absent. Throws not_json for $request.body.<x> of a non-JSON body.
std::optional<std::string> parameter_value(const std::string& value, request_view& v) {
    if (value.empty() || value.front() != '$') return value;
    if (value == "$request.body") return v.req.body;
    auto after = [&](std::string_view prefix) { return value.substr(prefix.size()); };
    if (value.starts_with("$request.body.")) {
        const json* body = v.body_json();
        if (!body) throw not_json{};
        const json* at = walk(*body, *parse_json_path("$." + after("$request.body."), nullptr));
        if (!at) return std::nullopt;
        return as_text(*at);
    }
    const json& ev = v.ev();
    auto from = [&](const char* where, std::string name) -> std::optional<std::string> {
        const auto it = ev.find(where);
        if (it == ev.end() || !it->is_object() || !it->contains(name)) return std::nullopt;
        return as_text((*it)[name]);
    };
    if (value.starts_with("$request.header."))
        return from("headers", detail::ascii_lower(after("$request.header.")));
    if (value.starts_with("$request.querystring."))
        return from("queryStringParameters", after("$request.querystring."));
    if (value.starts_with("$request.path.")) return from("pathParameters", after("$request.path."));
    if (value.starts_with("$context.")) {
        const json* at = &ev["requestContext"];
        std::string_view name = std::string_view(value).substr(9);
        while (at && !name.empty()) {
            const auto dot = name.find('.');
            const std::string part(name.substr(0, dot));
            at = at->is_object() && at->contains(part) ? &(*at)[part] : nullptr;
            name = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
        }
        if (!at || at->is_null()) return std::nullopt;
        return as_text(*at);
    }
    return std::nullopt;
}

bool is_json_media_type(const http::request& req) {
    auto ct = req.header("Content-Type");
    return !ct || detail::media_type_of(*ct) == "application/json";
}

}  // namespace

std::string check_request_template(std::string_view vtl) {
    vtl_parser p(vtl);
    if (!p.parse()) return p.error();
    return {};
}

std::string check_request_parameters(std::string_view params_json) {
    json j = json::parse(params_json, nullptr, false);
    if (!j.is_object()) return "the request parameters are not an object";
    for (const auto& [key, value] : j.items()) {
        if (std::find(parameter_keys.begin(), parameter_keys.end(), key) == parameter_keys.end())
            return "request parameter " + key +
                   " is not one of StateMachineArn, Input, Name, Region, TraceHeader";
        if (!value.is_string()) return "request parameter " + key + " is not a string";
        if (auto why = check_parameter_value(key, value.get<std::string>()); !why.empty())
            return why;
    }
    return {};
}

void check_state_machine_routes(const config::stack& stack) {
    for (const auto& r : stack.routes) {
        if (r.state_machine.empty()) continue;
        const auto* api = stack.find_api(r.api_id);
        const bool http_api = api && api->kind == config::api_kind::http;
        std::string why;
        if (http_api)
            why = check_request_parameters(r.state_machine_request_template);
        else if (!r.state_machine_request_template.empty())
            why = check_request_template(r.state_machine_request_template);
        if (!why.empty()) {
            throw config::config_error(
                r.where, r.method + " " + r.path,
                "the Step Functions integration of " + r.method + " " + r.path + " (state machine " +
                    r.state_machine + ") cannot be emulated: " + why);
        }
    }
}

std::string sam_request_template(std::string_view state_machine_arn) {
    return json{{"input", "$util.escapeJavaScript($input.json('$'))"},
                {"stateMachineArn", std::string(state_machine_arn)}}
        .dump();
}

std::variant<std::string, http::response> build_start_request(const http::request& req,
                                                              const route_match& m,
                                                              const request_info& info,
                                                              std::string_view state_machine_arn) {
    const auto& route = *m.route;
    const auto kind = m.api->kind;
    request_view v{req, m, info, std::nullopt, std::nullopt, {}};
    if (kind == config::api_kind::http) {
        json params = json::parse(route.state_machine_request_template, nullptr, false);
        json out = json::object();
        out["stateMachineArn"] = std::string(state_machine_arn);
        if (params.is_object()) {
            try {
                for (const auto& [key, value] : params.items()) {
                    if (!value.is_string() || key == "Region") continue;  // one region here
                    auto got = parameter_value(value.get<std::string>(), v);
                    if (!got) continue;
                    const std::string field = key == "StateMachineArn" ? "stateMachineArn"
                                              : key == "Input"         ? "input"
                                              : key == "Name"          ? "name"
                                                                       : "traceHeader";
                    out[field] = std::move(*got);
                }
            } catch (const not_json&) {
                return gateway_answer(kind, 400, "Bad Request", info.request_id);
            }
        }
        return json_text(out);
    }
    // REST: a request that no template matches passes through (WHEN_NO_MATCH).
    if (!is_json_media_type(req)) return req.body;
    const std::string tmpl = route.state_machine_request_template.empty()
                                 ? sam_request_template(state_machine_arn)
                                 : route.state_machine_request_template;
    vtl_parser p(tmpl);
    auto nodes = p.parse();
    // Validation refused such a template before start; a route built another way answers
    // what API Gateway answers a template it cannot run.
    if (!nodes) return gateway_answer(kind, 500, "Internal server error", info.request_id);
    std::string out;
    try {
        for (const auto& n : *nodes) out += n.e ? evaluate(*n.e, v) : n.text;
    } catch (const not_json&) {
        return gateway_answer(kind, 400, "Could not parse request body into json: " + v.body_error,
                              info.request_id);
    }
    return out;
}

std::variant<start_call, service_answer> read_start_request(std::string_view body) {
    auto error = [](std::string type, std::string message) {
        return service_answer{400, json_text(json{{"__type", std::move(type)}, {"message", std::move(message)}})};
    };
    json j = json::parse(body, nullptr, false);
    if (!j.is_object()) return error("SerializationException", "the request body is not a JSON object");
    start_call call;
    for (const char* key : {"stateMachineArn", "input", "name", "traceHeader"}) {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) continue;
        if (!it->is_string())
            return error("SerializationException",
                         std::string("Expected a string for ") + key + ", got " + it->type_name());
    }
    if (!j.contains("stateMachineArn") || j["stateMachineArn"].is_null())
        return error("ValidationException",
                     "1 validation error detected: Value null at 'stateMachineArn' failed to "
                     "satisfy constraint: Member must not be null");
    if (j.contains("input") && j["input"].is_string()) call.input = j["input"].get<std::string>();
    if (j.contains("name") && j["name"].is_string()) call.name = j["name"].get<std::string>();
    if (j.contains("traceHeader") && j["traceHeader"].is_string())
        call.trace_header = j["traceHeader"].get<std::string>();
    return call;
}

http::response map_start_answer(config::api_kind kind, const service_answer& answer,
                                const std::string& request_id) {
    if (kind == config::api_kind::rest && answer.status != 200 && answer.status != 400)
        return gateway_answer(kind, 500, "Internal server error", request_id);
    http::response res;
    res.status = answer.status;
    res.set("Content-Type", "application/json");
    res.body = answer.body;
    stamp_request_id(res, kind, request_id);
    return res;
}

std::string escape_javascript(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size() + 8);
    auto unicode = [&](std::uint32_t unit) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += hex[(unit >> shift) & 0xF];
    };
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
            case '\b': out += "\\b"; break;
            case '\t': out += "\\t"; break;
            case '\n': out += "\\n"; break;
            case '\f': out += "\\f"; break;
            case '\r': out += "\\r"; break;
            case '"': out += "\\\""; break;
            case '\'': out += "\\'"; break;
            case '\\': out += "\\\\"; break;
            case '/': out += "\\/"; break;
            default:
                if (c < 0x20)
                    unicode(c);
                else
                    out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        // UTF-8 → code point → UTF-16 units.
        std::uint32_t cp = 0xFFFD;
        std::size_t len = 1;
        if ((c & 0xE0) == 0xC0) len = 2;
        else if ((c & 0xF0) == 0xE0) len = 3;
        else if ((c & 0xF8) == 0xF0) len = 4;
        bool ok = len > 1 && i + len <= s.size();
        if (ok) {
            cp = c & (0x7F >> len);
            for (std::size_t k = 1; k < len; ++k) {
                const auto cc = static_cast<unsigned char>(s[i + k]);
                if ((cc & 0xC0) != 0x80) {
                    ok = false;
                    break;
                }
                cp = (cp << 6) | (cc & 0x3F);
            }
        }
        if (!ok) {
            cp = 0xFFFD;
            len = 1;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            unicode(0xD800 + (cp >> 10));
            unicode(0xDC00 + (cp & 0x3FF));
        } else {
            unicode(cp);
        }
        i += len;
    }
    return out;
}

}  // namespace coldbrew::gateway
