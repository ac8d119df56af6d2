// The authorizer function's event, and what reaches the integration's requestContext
// (authorizers.hpp for the AWS facts and their sources). The proxy events are built by
// gateway::build_event_v1/v2 and edited here, so both share every header, query and body rule.

#include "emulator/authorizers/authorizers.hpp"
#include "emulator/authorizers/detail.hpp"

#include <algorithm>
#include <cmath>

namespace coldbrew::authorizers {

namespace {

using ojson = nlohmann::ordered_json;

using detail::is_rest;

std::string dump(const ojson& j) {
    return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

// Keys moved from `from` into `to` in the order given; an absent key is skipped, and with
// `empty_object` a null value becomes {} (the REQUEST authorizer events show {} where the
// proxy event has null).
void move_keys(ojson& to, ojson& from, std::initializer_list<const char*> keys,
               bool empty_object) {
    for (const char* k : keys) {
        if (!from.contains(k)) continue;
        ojson v = std::move(from[k]);
        if (empty_object && v.is_null()) v = ojson::object();
        to[k] = std::move(v);
    }
}

ojson v1_event(const http::request& req, const gateway::route_match& m,
               const gateway::request_info& info) {
    return ojson::parse(gateway::build_event_v1(req, m, info));
}

} // namespace

std::string build_event(const config::authorizer& a, const http::request& req,
                        const gateway::route_match& m, const gateway::request_info& info,
                        const identity& id, std::string_view arn) {
    gateway::request_info plain = info;
    plain.authorizer_json.clear();
    ojson ev = ojson::object();

    if (a.kind == config::authorizer::type::token) {
        ev["type"] = "TOKEN";
        ev["authorizationToken"] = id.token;
        ev["methodArn"] = std::string(arn);
        return dump(ev);
    }

    if (is_rest(a) || a.payload_format_version == "1.0") {
        ojson proxy = v1_event(req, m, plain);
        if (!is_rest(a)) ev["version"] = "1.0";
        ev["type"] = "REQUEST";
        ev["methodArn"] = std::string(arn);
        if (!is_rest(a)) {
            std::string joined;
            for (std::size_t i = 0; i < id.values.size(); ++i) {
                if (i) joined += ',';
                joined += id.values[i];
            }
            ev["identitySource"] = joined;
            ev["authorizationToken"] = joined;
        }
        move_keys(ev, proxy,
                  {"resource", "path", "httpMethod", "headers", "multiValueHeaders",
                   "queryStringParameters", "multiValueQueryStringParameters", "pathParameters",
                   "stageVariables"},
                  true);
        move_keys(ev, proxy, {"requestContext"}, false);
        return dump(ev);
    }

    ojson proxy = ojson::parse(gateway::build_event_v2(req, m, plain));
    ev["version"] = "2.0";
    ev["type"] = "REQUEST";
    ev["routeArn"] = std::string(arn);
    ev["identitySource"] = id.values;
    move_keys(ev, proxy,
              {"routeKey", "rawPath", "rawQueryString", "cookies", "headers",
               "queryStringParameters", "requestContext", "pathParameters", "stageVariables"},
              false);
    return dump(ev);
}

nlohmann::json event_authorizer(const config::authorizer& a, const result& r,
                                std::string_view payload_format_version, double latency_ms) {
    using json = nlohmann::json;
    if (payload_format_version == "2.0") {
        json out = json::object();
        out["lambda"] = r.context.is_object() ? r.context : json(nullptr);
        return out;
    }
    // nlohmann::json keeps keys sorted, so the order here is the dump's order whatever the
    // insertion order; requestContext.authorizer is an object either way.
    json out = json::object();
    const bool rest = is_rest(a);
    if (r.context.is_object()) {
        for (const auto& [k, v] : r.context.items()) {
            if (rest && !v.is_string())
                out[k] = v.dump(); // 1 -> "1", true -> "true"
            else
                out[k] = v;
        }
    }
    if (!r.simple) out["principalId"] = r.principal_id;
    out["integrationLatency"] = static_cast<std::int64_t>(std::llround(std::max(0.0, latency_ms)));
    return out;
}

} // namespace coldbrew::authorizers
