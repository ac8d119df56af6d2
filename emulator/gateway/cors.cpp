// CORS answers (AWS facts and sources: cors.hpp).

#include "emulator/gateway/cors.hpp"

#include "emulator/gateway/gateway.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace coldbrew::gateway {

namespace {

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) {
        if (!out.empty()) out += ',';
        out += i;
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool contains_star(const std::vector<std::string>& items) {
    return std::find(items.begin(), items.end(), "*") != items.end();
}

// serverless's origin patterns: '*' stands for one or more characters, the rest is literal
// (cors.js regexifyWildcards turns "*" into ".+" and escapes dots).
// Without recursion (the Origin is the client's and may be long): each '*' is read as one
// any character followed by a run of any length, and the run is matched by the usual greedy
// two-pointer walk, which retries only from the last run.
bool glob_matches(std::string_view pattern, std::string_view text) {
    enum class kind { literal, one, run };
    std::vector<std::pair<kind, char>> tokens;
    for (char c : pattern) {
        if (c == '*') {
            tokens.emplace_back(kind::one, 0);
            tokens.emplace_back(kind::run, 0);
        } else {
            tokens.emplace_back(kind::literal, c);
        }
    }
    std::size_t p = 0, t = 0;
    std::size_t run = tokens.size(), run_t = 0;  // the last run seen, and where it started
    while (t < text.size()) {
        if (p < tokens.size() && tokens[p].first == kind::run) {
            run = p++;
            run_t = t;
        } else if (p < tokens.size() && (tokens[p].first == kind::one ||
                                         tokens[p].second == text[t])) {
            ++p;
            ++t;
        } else if (run != tokens.size()) {
            p = run + 1;  // the run takes one more character
            t = ++run_t;
        } else {
            return false;
        }
    }
    while (p < tokens.size() && tokens[p].first == kind::run) ++p;
    return p == tokens.size();
}

// HTTP API AllowOrigins entries: "*", "https://*" / "http://*" (any origin of that scheme),
// or one exact origin ("Configure CORS for HTTP APIs" lists exactly these forms). Origins are
// compared without regard to case, as scheme and host are case-insensitive.
bool http_origin_allowed(const config::cors_config& cors, std::string_view origin) {
    for (const auto& o : cors.allow_origins) {
        if (o == "*") return true;
        if (o.size() > 4 && o.compare(o.size() - 4, 4, "://*") == 0) {
            std::string_view prefix(o.data(), o.size() - 1);  // "https://"
            if (origin.size() > prefix.size() &&
                http::iequals(origin.substr(0, prefix.size()), prefix))
                return true;
            continue;
        }
        if (http::iequals(o, origin)) return true;
    }
    return false;
}

// The Access-Control-Allow-Origin value an allowed origin gets: "*" when any origin is
// allowed, else the request's own Origin.
std::string http_allow_origin(const config::cors_config& cors, std::string_view origin) {
    return contains_star(cors.allow_origins) ? std::string("*") : std::string(origin);
}

bool method_allowed(const config::cors_config& cors, std::string_view method) {
    for (const auto& m : cors.allow_methods)
        if (m == "*" || m == method) return true;
    return false;
}

// Every name of a comma-separated Access-Control-Request-Headers value is allowed
// (case-insensitively), or the list is "*".
bool headers_allowed(const config::cors_config& cors, std::string_view requested) {
    if (contains_star(cors.allow_headers)) return true;
    while (!requested.empty()) {
        auto comma = requested.find(',');
        std::string_view name = trim(requested.substr(0, comma));
        requested = comma == std::string_view::npos ? std::string_view{}
                                                    : requested.substr(comma + 1);
        if (name.empty()) continue;
        bool found = false;
        for (const auto& h : cors.allow_headers)
            if (http::iequals(h, name)) found = true;
        if (!found) return false;
    }
    return true;
}

bool is_cors_header(std::string_view name) {
    constexpr std::string_view prefix = "access-control-";
    return name.size() >= prefix.size() && http::iequals(name.substr(0, prefix.size()), prefix);
}

// REST: the generated mock's static Access-Control-Allow-Origin. One origin is sent as is
// (SAM AllowOrigin, serverless `origin`); with several (serverless `origins`) the mock's
// response template echoes a matching Origin, else the header keeps the first one
// (serverless cors.js generateCorsResponseTemplate).
std::string rest_allow_origin(const config::cors_config& cors, const http::request& req) {
    if (cors.allow_origins.empty()) return "*";
    if (cors.allow_origins.size() > 1) {
        if (auto origin = req.header("Origin"))
            for (const auto& o : cors.allow_origins)
                if (glob_matches(o, *origin)) return std::string(*origin);
    }
    return cors.allow_origins.front();
}

http::response rest_preflight(const config::cors_config& cors, const http::request& req,
                              const std::string& request_id) {
    http::response res;
    res.status = 200;
    res.add("Content-Type", "application/json");
    res.add("Access-Control-Allow-Origin", rest_allow_origin(cors, req));
    if (!cors.allow_headers.empty()) res.add("Access-Control-Allow-Headers", join(cors.allow_headers));
    if (!cors.allow_methods.empty()) res.add("Access-Control-Allow-Methods", join(cors.allow_methods));
    if (cors.max_age_s) res.add("Access-Control-Max-Age", std::to_string(*cors.max_age_s));
    if (cors.allow_credentials) res.add("Access-Control-Allow-Credentials", "true");
    res.body = "{}";
    stamp_request_id(res, config::api_kind::rest, request_id);
    return res;
}

http::response http_preflight(const config::cors_config& cors, const http::request& req,
                              const std::string& request_id) {
    // A plain OPTIONS (no Origin or no Access-Control-Request-Method) is not a preflight, so
    // API Gateway does not answer it for CORS: with no OPTIONS route it is a missing route.
    if (!is_preflight(req))
        return error_response(config::api_kind::http, gateway_error::missing_route, request_id);
    http::response res;
    res.status = 204;
    const std::string_view origin = *req.header("Origin");
    const std::string_view method = trim(*req.header("Access-Control-Request-Method"));
    const std::string_view requested = req.header("Access-Control-Request-Headers").value_or("");
    if (http_origin_allowed(cors, origin) && method_allowed(cors, method) &&
        headers_allowed(cors, requested)) {
        res.add("Access-Control-Allow-Origin", http_allow_origin(cors, origin));
        if (!cors.allow_methods.empty())
            res.add("Access-Control-Allow-Methods", join(cors.allow_methods));
        if (!cors.allow_headers.empty())
            res.add("Access-Control-Allow-Headers", join(cors.allow_headers));
        if (cors.max_age_s) res.add("Access-Control-Max-Age", std::to_string(*cors.max_age_s));
        if (cors.allow_credentials) res.add("Access-Control-Allow-Credentials", "true");
    }
    stamp_request_id(res, config::api_kind::http, request_id);
    return res;
}

}  // namespace

const config::cors_config* cors_for(const config::api& api, std::string_view resource_path) {
    if (api.kind == config::api_kind::rest) {
        auto it = api.path_cors.find(std::string(resource_path));
        if (it != api.path_cors.end()) return &it->second;
    }
    return api.cors ? &*api.cors : nullptr;
}

bool is_preflight(const http::request& req) {
    return req.method == "OPTIONS" && req.header("Origin") &&
           req.header("Access-Control-Request-Method");
}

http::response preflight_response(const config::api& api, const config::cors_config& cors,
                                  const http::request& req, const std::string& request_id) {
    return api.kind == config::api_kind::rest ? rest_preflight(cors, req, request_id)
                                              : http_preflight(cors, req, request_id);
}

void add_cors_headers(const config::api& api, const config::cors_config& cors,
                      const http::request& req, http::response& res) {
    if (api.kind != config::api_kind::http) return;
    // "API Gateway ignores CORS headers returned from your backend integration."
    res.headers.erase(std::remove_if(res.headers.begin(), res.headers.end(),
                                     [](const auto& h) { return is_cors_header(h.first); }),
                      res.headers.end());
    auto origin = req.header("Origin");
    if (!origin || !http_origin_allowed(cors, *origin)) return;
    res.add("Access-Control-Allow-Origin", http_allow_origin(cors, *origin));
    if (cors.allow_credentials) res.add("Access-Control-Allow-Credentials", "true");
    if (!cors.expose_headers.empty())
        res.add("Access-Control-Expose-Headers", join(cors.expose_headers));
}

}  // namespace coldbrew::gateway
