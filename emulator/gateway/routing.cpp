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
// - Stage prefix: routes are served at their own paths as `sam local start-api` does; a REST
//   request "/{stage}/rest" that matches nothing directly is retried as "/rest" against that
//   REST API's routes (serverless-offline URLs such as "/dev/hello"). This is tried before any
//   $default route, so a REST stage URL is not swallowed by an HTTP API catch-all.
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

std::optional<route_match> find(const config::stack& stack, std::optional<std::string_view> method,
                                std::string_view raw_path) {
    if (raw_path.empty() || raw_path.front() != '/') return std::nullopt;
    auto segs = split_segments(raw_path);

    if (auto c = find_best(stack, segs, method, [](const config::api&) { return true; }))
        return to_match(std::move(*c), std::string(raw_path));

    if (!segs.empty()) {
        std::string_view first = segs.front();
        std::vector<std::string_view> rest(segs.begin() + 1, segs.end());
        // "/{stage}" and "/{stage}/" both name the stage's root resource.
        if (rest.size() == 1 && rest.front().empty()) rest.clear();
        auto stage_api = [&](const config::api& a) {
            return a.kind == config::api_kind::rest && !a.stage.empty() && a.stage == first;
        };
        if (auto c = find_best(stack, rest, method, stage_api)) {
            std::string path(raw_path.substr(1 + first.size()));
            return to_match(std::move(*c), path.empty() ? "/" : path);
        }
    }

    for (const auto& r : stack.routes) {
        if (r.path != "$default") continue;
        if (const config::api* api = detail::find_api(stack, r.api_id)) {
            route_match m;
            m.route = &r;
            m.api = api;
            m.path = std::string(raw_path);
            return m;
        }
    }
    return std::nullopt;
}

} // namespace

route_table::route_table(const config::stack& stack) : stack_(&stack) {}

std::optional<route_match> route_table::match(std::string_view method,
                                              std::string_view raw_path) const {
    return find(*stack_, method, raw_path);
}

config::api_kind route_table::miss_kind(std::string_view raw_path) const {
    if (auto m = find(*stack_, std::nullopt, raw_path)) return m->api->kind;
    for (const auto& a : stack_->apis)
        if (a.kind == config::api_kind::rest) return config::api_kind::rest;
    return config::api_kind::http;
}

std::string api_id_for(const config::api& api) {
    return detail::base36_id(api.id, 10);
}

} // namespace coldbrew::gateway
