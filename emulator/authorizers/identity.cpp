// Identity sources, the validation expression and the method ARN (authorizers.hpp for the
// AWS facts and their sources).

#include "emulator/authorizers/authorizers.hpp"
#include "emulator/authorizers/detail.hpp"

#include <regex>

namespace coldbrew::authorizers {

namespace {

using json = nlohmann::json;

using detail::is_rest;

// A header's value: REST the last one sent, HTTP APIs all of them joined with ',' (the 1.0
// and 2.0 `headers` rules). nullopt when absent.
std::optional<std::string> header_value(const http::request& req, std::string_view name,
                                        bool join) {
    std::optional<std::string> out;
    for (const auto& [n, v] : req.headers) {
        if (!http::iequals(n, name)) continue;
        if (join && out)
            *out += "," + v;
        else
            out = v;
    }
    return out;
}

// A JSON scalar as the text an identity value is: strings as they are, numbers as written.
std::optional<std::string> scalar_text(const json& j) {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_number() || j.is_boolean()) return j.dump();
    return std::nullopt;
}

// "identity.sourceIp" inside requestContext; nullopt when any step is missing.
std::optional<std::string> dotted(const json& ctx, std::string_view path) {
    const json* at = &ctx;
    while (!path.empty()) {
        auto dot = path.find('.');
        std::string key(path.substr(0, dot));
        if (!at->is_object() || !at->contains(key)) return std::nullopt;
        at = &(*at)[key];
        path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    }
    return scalar_text(*at);
}

// The route's event, built once per read and only when a source needs it (query strings and
// context variables come from it, so they are decoded and named exactly as the event has them).
class event_view {
public:
    event_view(const http::request& req, const gateway::route_match& m,
               const gateway::request_info& info)
        : req_(req), m_(m), info_(info) {}

    const json& get() {
        if (!built_) {
            gateway::request_info plain = info_;
            plain.authorizer_json.clear();
            const bool http_api = m_.api->kind == config::api_kind::http;
            event_ = json::parse(http_api ? gateway::build_event_v2(req_, m_, plain)
                                          : gateway::build_event_v1(req_, m_, plain));
            built_ = true;
        }
        return event_;
    }

private:
    const http::request& req_;
    const gateway::route_match& m_;
    const gateway::request_info& info_;
    json event_;
    bool built_ = false;
};

// HTTP API context variables whose 2.0 event field has another name (HTTP API guide,
// "Customizing HTTP API access logs" names them $context.identity.sourceIp, …).
std::string_view http_context_alias(std::string_view name) {
    if (name == "identity.sourceIp") return "http.sourceIp";
    if (name == "identity.userAgent") return "http.userAgent";
    if (name == "httpMethod") return "http.method";
    if (name == "path") return "http.path";
    if (name == "protocol") return "http.protocol";
    return name;
}

std::optional<std::string> read_source(std::string_view source, const http::request& req,
                                       const gateway::route_match& m, event_view& ev) {
    const bool http_api = m.api->kind == config::api_kind::http;
    auto after = [&](std::string_view prefix) -> std::optional<std::string_view> {
        if (!source.starts_with(prefix)) return std::nullopt;
        return source.substr(prefix.size());
    };
    if (auto name = after("method.request.header.")) return header_value(req, *name, false);
    if (auto name = after("$request.header.")) return header_value(req, *name, true);
    auto query = after("method.request.querystring.");
    if (!query) query = after("$request.querystring.");
    if (query) {
        // Query string names are case-sensitive (HTTP API guide, "Identity sources").
        const json& q = ev.get().value("queryStringParameters", json());
        if (!q.is_object() || !q.contains(std::string(*query))) return std::nullopt;
        return scalar_text(q[std::string(*query)]);
    }
    auto stage_var = after("stageVariables.");
    if (!stage_var) stage_var = after("$stageVariables.");
    if (stage_var) {
        auto it = m.api->stage_variables.find(std::string(*stage_var));
        if (it == m.api->stage_variables.end()) return std::nullopt;
        return it->second;
    }
    auto ctx_var = after("context.");
    if (!ctx_var) ctx_var = after("$context.");
    if (ctx_var) {
        const json& ctx = ev.get().value("requestContext", json());
        auto found = dotted(ctx, *ctx_var);
        if (!found && http_api) found = dotted(ctx, http_context_alias(*ctx_var));
        return found;
    }
    return std::nullopt; // a syntax API Gateway would have refused at deploy
}

} // namespace

identity read_identity(const config::authorizer& a, const http::request& req,
                       const gateway::route_match& m, const gateway::request_info& info) {
    identity id;
    event_view ev(req, m, info);
    std::vector<std::string> sources = a.identity_sources;
    if (sources.empty() && a.kind == config::authorizer::type::token)
        sources.push_back(is_rest(a) ? "method.request.header.Authorization"
                                     : "$request.header.Authorization");
    id.complete = true;
    for (const auto& source : sources) {
        auto value = read_source(source, req, m, ev);
        if (!value || value->empty()) id.complete = false;
        id.values.push_back(value.value_or(std::string()));
    }
    if (a.kind == config::authorizer::type::token && !id.values.empty()) id.token = id.values[0];
    return id;
}

token_validator::token_validator(const config::authorizer& a) {
    if (a.validation_expression.empty()) return;
    any_ = false;
    try {
        re_.emplace(a.validation_expression, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
        re_.reset();
    }
}

bool token_validator::passes(std::string_view token) const {
    if (any_) return true;
    // API Gateway takes at most 10,240 bytes of request line and headers (shared spec §4.6
    // [APIGW-LIMITS]), so no longer token reaches a validation expression there; and
    // std::regex matches by recursion, one frame per character, which a token of tens of KB
    // would run off the stack.
    if (!re_ || token.size() > 10240) return false;
    return std::regex_match(token.begin(), token.end(), *re_);
}

std::string method_arn(const config::api& api, const gateway::route_match& m,
                       const http::request& req, std::string_view region,
                       std::string_view account_id) {
    std::string stage = api.stage.empty() ? std::string("$default") : api.stage;
    std::string path = http::percent_decode(m.path);
    std::string_view rest = path;
    if (rest.starts_with('/')) rest.remove_prefix(1);
    std::string arn = "arn:aws:execute-api:";
    arn += region;
    arn += ':';
    arn += account_id;
    arn += ':';
    arn += gateway::api_id_for(api);
    arn += '/' + stage + '/' + req.method + '/';
    arn += rest;
    return arn;
}

std::optional<std::string> cache_key(const config::authorizer& a, const identity& id) {
    if (a.kind == config::authorizer::type::jwt) return std::nullopt;
    if (a.result_ttl_s <= 0 || id.values.empty()) return std::nullopt;
    // A TOKEN authorizer's sources default to Authorization, so it always has a value; a
    // REQUEST authorizer without identity sources is called every time.
    if (a.kind == config::authorizer::type::request && a.identity_sources.empty())
        return std::nullopt;
    // NUL separators: no header or query value can hold one, so distinct identities never
    // build the same key.
    std::string key = a.name;
    key.push_back('\0');
    key += a.function;
    for (const auto& v : id.values) {
        key.push_back('\0');
        key += v;
    }
    return key;
}

} // namespace coldbrew::authorizers
