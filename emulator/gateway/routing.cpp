// Routing: which route of which API answers a request. [HTTP-ROUTES] spec §4.7.
//
// Rules, and where a choice was made:
// - REST: paths are matched segment by segment on the raw path split at '/', each request
//   segment percent-decoded before comparing with a literal, so "%2F" stays inside one segment
//   (spec §8, routing); path parameter values reach the event as sent, still percent-encoded
//   ("/posts/%40" gives id "%40": serverless/serverless#5037; REST keeps the path encoded:
//   live captures cited in middleapi/standard-server#93).
// - HTTP API: the path is percent-decoded before matching, so "%2F" separates segments
//   ("/a%2Fb/thing" does not match "/{x}/thing", a Stack Exchange report; HTTP APIs deliver
//   the path decoded: middleapi/standard-server#93), and parameter values are the decoded
//   segments ("API Gateway decodes URL-encoded request parameters before passing them to your
//   backend integration" [HTTP-ROUTES]). Not done: the second decoding of values that report
//   also describes ("a%252Fb" reaching the function as "a/b"), which nothing else confirms.
// - Per segment a literal beats {param}, which beats {proxy+}; candidates are compared
//   segment by segment from the left (a REST resource tree is walked that way). Among equal
//   paths an explicit method beats ANY. The method is part of the match: when the most
//   specific path has no route for the method, a less specific path (e.g. ANY /{proxy+})
//   still answers — HTTP-ROUTES' "POST /test/5 -> ANY /{proxy+}". REST applies the same
//   rules (spec §4.7: unverified for REST, "mirror HTTP API rules").
// - HEAD is not implied by GET (spec §8).
// - {proxy+} must be the last segment and needs at least one non-empty rest: "/{proxy+}"
//   does not serve "/", "/a/{proxy+}" does not serve "/a" (aws-sam-cli#437, [SETUP-HTTP]).
// - {param} needs a non-empty segment (unverified; an empty segment naming a resource would
//   be "//" in the URL).
// - Trailing slash: one trailing '/' is ignored when matching, on REST and HTTP APIs alike:
//   "/hello/" is served by "/hello" (both kinds tested on AWS in
//   aws-powertools/powertools-lambda-python#1552; REST in aws/chalice#65), so "/users/" is
//   "/users" and does not match "/users/{id}" (aws/chalice#588), and "/{proxy+}" sees
//   "hello" for "/hello/" (the greedy value without the slash: a choice). route_match::path
//   keeps the slash the client sent.
// - $default (HTTP API) answers any method and path, after everything else.
// - Stage prefix: AWS serves a named stage under "/{stage}" — every REST stage, and an HTTP
//   API stage other than $default (rawPath then includes it). When the first segment names
//   such a stage, the rest of the path is matched first against that API's routes ("/v1/h/x"
//   -> "/h/x", route_match::path "/h/x"); so "/dev/users" gives {proxy+} "users", not
//   "dev/users"; then that API's $default route (path stripped too). Otherwise routes are
//   served at their own paths as `sam local start-api` does ("/h/x" works for a v1 stage
//   too), and last any $default route. So a stage URL is not swallowed by another API's
//   routes or catch-all.
// - Several APIs on one port: the best candidate over all of them; ties go to the route listed
//   first in the stack.

#include "emulator/gateway/cors.hpp"
#include "emulator/gateway/detail.hpp"
#include "emulator/gateway/gateway.hpp"

#include <algorithm>

namespace coldbrew::gateway {

namespace {

constexpr int rank_literal = 0;
constexpr int rank_param = 1;
constexpr int rank_greedy = 2;

// "/a/b/" -> {"a", "b", ""}; "/" and "" -> {}.
std::vector<std::string_view> split_segments(std::string_view path) {
    std::vector<std::string_view> out;
    if (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (path.empty()) return out;
    std::size_t start = 0;
    while (true) {
        auto slash = path.find('/', start);
        if (slash == std::string_view::npos) {
            out.push_back(path.substr(start));
            break;
        }
        out.push_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    return out;
}

// A path as each API kind splits it: REST the raw path, HTTP APIs the decoded one.
struct split_path {
    std::vector<std::string_view> raw;
    std::string decoded_text;
    std::vector<std::string_view> decoded;  // views into decoded_text

    explicit split_path(std::string_view path)
        : raw(split_segments(path)), decoded_text(http::percent_decode(path)) {
        decoded = split_segments(decoded_text);
    }
    split_path(const split_path&) = delete;
    split_path& operator=(const split_path&) = delete;
};

// The path matched against templates: one trailing '/' dropped ("/hello/" is "/hello").
std::string_view match_form(std::string_view raw_path) {
    if (raw_path.size() > 1 && raw_path.back() == '/') raw_path.remove_suffix(1);
    return raw_path;
}

struct candidate {
    const config::route* route = nullptr;
    const config::api* api = nullptr;
    std::vector<int> ranks; // one per template segment, rank_* values
    bool any_method = false;
    std::vector<std::pair<std::string, std::string>> params;
};

// Lower ranks are more specific; compared left to right, then explicit method before ANY.
bool better(const candidate& a, const candidate& b) {
    if (a.ranks != b.ranks)
        return std::lexicographical_compare(a.ranks.begin(), a.ranks.end(), b.ranks.begin(),
                                            b.ranks.end());
    return !a.any_method && b.any_method;
}

// Matches one route template against request segments; fills ranks and params. REST
// segments are raw (literals compare decoded, values stay as sent); HTTP API segments are
// already decoded.
bool match_template(std::string_view tmpl, const std::vector<std::string_view>& segs,
                    bool raw_segments, candidate& c) {
    auto t = split_segments(tmpl);
    std::size_t i = 0;
    for (; i < t.size(); ++i) {
        std::string_view ts = t[i];
        bool is_var = ts.size() >= 2 && ts.front() == '{' && ts.back() == '}';
        bool greedy = is_var && ts.size() >= 3 && ts[ts.size() - 2] == '+';
        if (greedy) {
            if (i + 1 != t.size() || i >= segs.size()) return false;
            std::string rest;
            for (std::size_t j = i; j < segs.size(); ++j) {
                if (j > i) rest += '/';
                rest += segs[j];
            }
            if (rest.empty()) return false;
            c.ranks.push_back(rank_greedy);
            c.params.emplace_back(std::string(ts.substr(1, ts.size() - 3)), std::move(rest));
            return true;
        }
        if (i >= segs.size()) return false;
        if (is_var) {
            if (segs[i].empty()) return false;
            c.ranks.push_back(rank_param);
            c.params.emplace_back(std::string(ts.substr(1, ts.size() - 2)), std::string(segs[i]));
        } else {
            if (raw_segments ? http::percent_decode(segs[i]) != ts : segs[i] != ts) return false;
            c.ranks.push_back(rank_literal);
        }
    }
    return i == segs.size();
}

bool method_matches(const config::route& r, std::optional<std::string_view> method,
                    bool& any_method) {
    any_method = r.method == "ANY";
    return !method || any_method || r.method == *method;
}

// Which routes may answer: every one for match(), those with CORS for preflights.
using route_filter = bool (*)(const config::api&, const config::route&);
bool every_route(const config::api&, const config::route&) { return true; }
bool route_with_cors(const config::api& api, const config::route& r) {
    return cors_for(api, r.path) != nullptr;
}

template <class ApiFilter>
std::optional<candidate> find_best(const config::stack& stack, const split_path& path,
                                   std::optional<std::string_view> method, ApiFilter allow,
                                   route_filter keep) {
    std::optional<candidate> best;
    for (const auto& r : stack.routes) {
        if (r.path == "$default") continue;
        const config::api* api = detail::find_api(stack, r.api_id);
        if (!api || !allow(*api) || !keep(*api, r)) continue;
        candidate c;
        if (!method_matches(r, method, c.any_method)) continue;
        const bool rest = api->kind == config::api_kind::rest;
        if (!match_template(r.path, rest ? path.raw : path.decoded, rest, c)) continue;
        c.route = &r;
        c.api = api;
        if (!best || better(c, *best)) best = std::move(c);
    }
    return best;
}

route_match to_match(candidate&& c, std::string path) {
    route_match m;
    m.route = c.route;
    m.api = c.api;
    m.path_parameters = std::move(c.params);
    m.path = std::move(path);
    return m;
}

// Whether `segment` (a raw first path segment) is the API's "/{stage}" prefix.
bool names_stage(const config::api& a, std::string_view segment) {
    return detail::has_named_stage(a) && a.stage == segment;
}

// The first $default route, of the API whose named stage is `stage` when one is given; it
// sees `path`.
std::optional<route_match> default_match(const config::stack& stack,
                                         std::optional<std::string_view> stage,
                                         std::string_view path) {
    for (const auto& r : stack.routes) {
        if (r.path != "$default") continue;
        const config::api* api = detail::find_api(stack, r.api_id);
        if (!api || (stage && !names_stage(*api, *stage))) continue;
        route_match m;
        m.route = &r;
        m.api = api;
        m.path = std::string(path);
        return m;
    }
    return std::nullopt;
}

// `with_default`: whether $default routes answer (not for preflights, which need CORS
// settings of a resource path).
std::optional<route_match> find(const config::stack& stack, std::optional<std::string_view> method,
                                std::string_view raw_path, route_filter keep = every_route,
                                bool with_default = true) {
    if (raw_path.empty() || raw_path.front() != '/') return std::nullopt;
    const std::string_view matched = match_form(raw_path);
    auto segs = split_segments(matched);

    // 1. A stage URL: the rest of the path against that stage's API, then its $default.
    if (!segs.empty()) {
        std::string_view first = segs.front();
        std::string_view stripped = raw_path.substr(1 + first.size()); // "" for "/{stage}"
        if (stripped.empty()) stripped = "/";
        const split_path rest(matched.substr(1 + first.size()));
        auto stage_api = [&](const config::api& a) { return names_stage(a, first); };
        if (auto c = find_best(stack, rest, method, stage_api, keep))
            return to_match(std::move(*c), std::string(stripped));
        if (with_default)
            if (auto m = default_match(stack, first, stripped)) return m;
    }

    // 2. The bare path, sam local style; 3. any $default route.
    const split_path whole(matched);
    if (auto c = find_best(stack, whole, method, [](const config::api&) { return true; }, keep))
        return to_match(std::move(*c), std::string(raw_path));
    if (!with_default) return std::nullopt;
    return default_match(stack, std::nullopt, raw_path);
}

} // namespace

route_table::route_table(const config::stack& stack) : stack_(&stack) {}

std::optional<route_match> route_table::match(std::string_view method,
                                              std::string_view raw_path) const {
    return find(*stack_, method, raw_path);
}

std::optional<route_table::preflight_match>
route_table::match_preflight(std::string_view raw_path) const {
    auto m = find(*stack_, std::nullopt, raw_path, route_with_cors, false);
    if (!m) return std::nullopt;
    preflight_match p;
    p.api = m->api;
    p.cors = cors_for(*m->api, m->route->path);
    p.resource_path = m->route->path;
    return p;
}

config::api_kind route_table::miss_kind(std::string_view raw_path) const {
    if (auto m = find(*stack_, std::nullopt, raw_path)) return m->api->kind;
    // Under a stage's URL the miss is that API's: "/v1/nope" on an HTTP API stage v1 is a 404.
    if (auto segs = split_segments(raw_path); !segs.empty())
        for (const auto& a : stack_->apis)
            if (names_stage(a, segs.front())) return a.kind;
    for (const auto& a : stack_->apis)
        if (a.kind == config::api_kind::rest) return config::api_kind::rest;
    return config::api_kind::http;
}

std::string api_id_for(const config::api& api) {
    return detail::base36_id(api.id, 10);
}

} // namespace coldbrew::gateway
