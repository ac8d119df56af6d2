// Routing: which route of which API answers a request. [HTTP-ROUTES] spec §4.7.
//
// Rules, and where a choice was made:
// - Paths are matched segment by segment on the raw path split at '/', each request segment
//   percent-decoded before comparing, so "%2F" stays inside one segment (spec §8, routing).
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
// - Trailing slash (unverified): "/hello/" is "/hello" plus an empty segment, so it does not
//   match "/hello"; it may match "/{proxy+}" with proxy "hello/". Reported for AWS REST at
//   piotrnowicki.com/aws/2019/01/01/aws-rest-trailing-slash.
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

// Matches one route template against request segments; fills ranks and params.
bool match_template(std::string_view tmpl, const std::vector<std::string_view>& segs,
                    candidate& c) {
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
            c.params.emplace_back(std::string(ts.substr(1, ts.size() - 3)),
                                  http::percent_decode(rest));
            return true;
        }
        if (i >= segs.size()) return false;
        if (is_var) {
            if (segs[i].empty()) return false;
            c.ranks.push_back(rank_param);
            c.params.emplace_back(std::string(ts.substr(1, ts.size() - 2)),
                                  http::percent_decode(segs[i]));
        } else {
            if (http::percent_decode(segs[i]) != ts) return false;
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

template <class ApiFilter>
std::optional<candidate> find_best(const config::stack& stack,
                                   const std::vector<std::string_view>& segs,
                                   std::optional<std::string_view> method, ApiFilter allow) {
    std::optional<candidate> best;
    for (const auto& r : stack.routes) {
        if (r.path == "$default") continue;
        const config::api* api = detail::find_api(stack, r.api_id);
        if (!api || !allow(*api)) continue;
        candidate c;
        if (!method_matches(r, method, c.any_method)) continue;
        if (!match_template(r.path, segs, c)) continue;
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

std::optional<route_match> find(const config::stack& stack, std::optional<std::string_view> method,
                                std::string_view raw_path) {
    if (raw_path.empty() || raw_path.front() != '/') return std::nullopt;
    auto segs = split_segments(raw_path);

    // 1. A stage URL: the rest of the path against that stage's API, then its $default.
    if (!segs.empty()) {
        std::string_view first = segs.front();
        std::string_view stripped = raw_path.substr(1 + first.size()); // "" for "/{stage}"
        if (stripped.empty()) stripped = "/";
        std::vector<std::string_view> rest(segs.begin() + 1, segs.end());
        // "/{stage}" and "/{stage}/" both name the stage's root resource.
        if (rest.size() == 1 && rest.front().empty()) rest.clear();
        auto stage_api = [&](const config::api& a) { return names_stage(a, first); };
        if (auto c = find_best(stack, rest, method, stage_api))
            return to_match(std::move(*c), std::string(stripped));
        if (auto m = default_match(stack, first, stripped)) return m;
    }

    // 2. The bare path, sam local style; 3. any $default route.
    if (auto c = find_best(stack, segs, method, [](const config::api&) { return true; }))
        return to_match(std::move(*c), std::string(raw_path));
    return default_match(stack, std::nullopt, raw_path);
}

} // namespace

route_table::route_table(const config::stack& stack) : stack_(&stack) {}

std::optional<route_match> route_table::match(std::string_view method,
                                              std::string_view raw_path) const {
    return find(*stack_, method, raw_path);
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
