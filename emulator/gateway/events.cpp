// Lambda proxy events: payload format 1.0 (REST, and HTTP API with PayloadFormatVersion 1.0)
// and 2.0 (HTTP API). Key order follows AWS's samples: REST input format in [REST-PROXY],
// HTTP API 1.0 and 2.0 samples in [HTTP-LAMBDA]. Spec §4.1, §4.3, §8.

#include "emulator/codec/base64.hpp"
#include "emulator/gateway/detail.hpp"
#include "emulator/gateway/gateway.hpp"

#include <chrono>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

namespace coldbrew::gateway {

namespace {

using json = nlohmann::ordered_json;

// Invalid UTF-8 in a text body or header is replaced (U+FFFD) instead of throwing; AWS passes
// text through a UTF-8 conversion too (unverified how it treats invalid bytes).
std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// "04/Mar/2020:19:15:17 +0000" [REST-PROXY]; "12/Mar/2020:19:03:58 +0000" [HTTP-LAMBDA].
std::string format_time(std::int64_t epoch_ms) {
    using namespace std::chrono;
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    sys_time<milliseconds> tp{milliseconds(epoch_ms)};
    auto day = floor<days>(tp);
    year_month_day ymd{day};
    hh_mm_ss<seconds> hms{floor<seconds>(tp - day)};
    char buf[40];
    std::snprintf(buf, sizeof buf, "%02u/%s/%04d:%02d:%02d:%02d +0000",
                  static_cast<unsigned>(ymd.day()), months[static_cast<unsigned>(ymd.month()) - 1],
                  static_cast<int>(ymd.year()), static_cast<int>(hms.hours().count()),
                  static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()));
    return buf;
}

using pairs = std::vector<std::pair<std::string, std::string>>;

// Query parameters, decoded with '+' as space. "k" without '=' has the value "". REST also
// splits on ';' ([KNOWN]: "the semicolon character ... results in data being split").
pairs parse_query(std::string_view raw, bool split_semicolon) {
    pairs out;
    std::size_t start = 0;
    while (start <= raw.size()) {
        std::size_t end = raw.find_first_of(split_semicolon ? "&;" : "&", start);
        if (end == std::string_view::npos) end = raw.size();
        std::string_view piece = raw.substr(start, end - start);
        if (!piece.empty()) {
            auto eq = piece.find('=');
            std::string key = http::percent_decode(piece.substr(0, eq), true);
            std::string value = eq == std::string_view::npos
                                    ? std::string()
                                    : http::percent_decode(piece.substr(eq + 1), true);
            if (!key.empty()) out.emplace_back(std::move(key), std::move(value));
        }
        start = end + 1;
    }
    return out;
}

std::string host_of(const http::request& req) {
    auto host = req.header("Host");
    return host && !host->empty() ? std::string(*host) : std::string("localhost");
}

// "api.example.com:3000" -> "api"; "[::1]:3000" -> "[::1]".
std::string domain_prefix_of(std::string_view host) {
    if (host.starts_with('[')) {
        auto close = host.find(']');
        return std::string(host.substr(0, close == std::string_view::npos ? close : close + 1));
    }
    std::string_view label = host.substr(0, host.find('.'));
    return std::string(label.substr(0, label.find(':')));
}

// The port the client connected to, read from Host; "80" (plain HTTP) when Host has none.
std::string port_of(std::string_view host) {
    std::size_t from = host.starts_with('[') ? host.find(']') : 0;
    if (from == std::string_view::npos) return "80";
    auto colon = host.find(':', from);
    if (colon == std::string_view::npos || colon + 1 == host.size()) return "80";
    return std::string(host.substr(colon + 1));
}

// The request's header fields plus the ones API Gateway adds when the client did not send
// them: X-Amzn-Trace-Id, X-Forwarded-For, X-Forwarded-Port, X-Forwarded-Proto ([APIGW-LAMBDA]
// sample). Unverified: AWS appends its peer address to a client-sent X-Forwarded-For (REST),
// and HTTP APIs fold X-Forwarded-* into a `Forwarded` header ([KNOWN]); coldbrew leaves
// client-sent values alone.
http::header_list with_gateway_headers(const http::request& req, const request_info& info) {
    http::header_list out = req.headers;
    if (!info.trace_id.empty() && !req.header("X-Amzn-Trace-Id"))
        out.emplace_back("X-Amzn-Trace-Id", info.trace_id);
    if (!req.header("X-Forwarded-For")) out.emplace_back("X-Forwarded-For", info.source_ip);
    if (!req.header("X-Forwarded-Port"))
        out.emplace_back("X-Forwarded-Port", port_of(host_of(req)));
    if (!req.header("X-Forwarded-Proto")) out.emplace_back("X-Forwarded-Proto", "http");
    return out;
}

// HTTP API rule for which request bodies reach the function as text [HTTP-LAMBDA]. The
// content-type list is not published (unverified); chosen: text/*, JSON, XML, JavaScript,
// GraphQL and their +json/+xml suffixes. application/x-www-form-urlencoded and
// multipart/form-data are base64-encoded, as HTTP APIs do. No Content-Type: text when the
// body is valid UTF-8. A text type whose bytes are not valid UTF-8 is base64-encoded too, so
// no byte is lost (unverified).
bool http_api_body_is_text(const http::request& req) {
    auto ct = req.header("Content-Type");
    if (!ct) return codec::is_valid_utf8(req.body);
    std::string mt = detail::media_type_of(*ct);
    bool text = mt.starts_with("text/") || mt == "application/json" || mt.ends_with("+json") ||
                mt == "application/xml" || mt.ends_with("+xml") || mt == "application/javascript" ||
                mt == "application/x-javascript" || mt == "application/ecmascript" ||
                mt == "application/graphql";
    return text && codec::is_valid_utf8(req.body);
}

// 1.0: base64 iff the request Content-Type matches binaryMediaTypes (REST, [REST-PROXY]);
// HTTP APIs have no binaryMediaTypes and apply their own text rule to both payload formats.
bool v1_body_is_binary(const http::request& req, const config::api& api) {
    if (api.kind == config::api_kind::http) return !http_api_body_is_text(req);
    auto ct = req.header("Content-Type");
    return ct && detail::matches_any(api.binary_media_types, detail::media_type_of(*ct));
}

std::string route_key(const config::route& r) {
    return r.path == "$default" ? r.path : r.method + " " + r.path;
}

std::string resource_id_for(const config::api& api, const config::route& r) {
    return detail::base36_id(api.id + " " + r.path, 6);
}

// The API's stage variables (SAM `Variables` / `StageVariables`), an empty object when none.
json stage_variables(const config::api& api) {
    json v = json::object();
    for (const auto& [k, value] : api.stage_variables)
        v[k] = value;
    return v;
}

// requestContext.authorizer from request_info::authorizer_json (built by
// authorizers::event_authorizer or jwt::event_authorizer); nullopt when the route has none.
// REST events of a method without an authorizer carry no `authorizer` key at all (captured
// events: aws-powertools/powertools-lambda-typescript packages/parser/tests/events/apigw-rest/
// no-auth.json, next to lambda-authorizer-auth.json's {"principalId","integrationLatency"});
// 1.0 and 2.0 samples place it after apiId [REST-PROXY][HTTP-LAMBDA]. Text that is not JSON is
// a caller's bug and is left out rather than failing the request.
std::optional<json> authorizer_of(const request_info& info) {
    if (info.authorizer_json.empty()) return std::nullopt;
    json a = json::parse(info.authorizer_json, nullptr, false);
    if (a.is_discarded()) return std::nullopt;
    return a;
}

json path_parameters(const route_match& m) {
    json p = json::object();
    for (const auto& [k, v] : m.path_parameters)
        p[k] = v;
    return p;
}

} // namespace

std::string build_event_v1(const http::request& req, const route_match& m,
                           const request_info& info) {
    const config::api& api = *m.api;
    const config::route& route = *m.route;
    const bool http_api = api.kind == config::api_kind::http;
    json ev = json::object();
    if (http_api) ev["version"] = "1.0"; // [HTTP-LAMBDA]
    ev["resource"] = route.path;
    // Without stage (spec §8). REST keeps the client's percent-encoding, HTTP APIs decode
    // the path (live captures in hotsock/voker#8, cited by middleapi/standard-server#93).
    const std::string path = http_api ? http::percent_decode(m.path) : m.path;
    ev["path"] = path;
    ev["httpMethod"] = req.method;

    // headers: last value; multiValueHeaders: all values in order (spec §8). REST keeps the
    // client's casing; HTTP APIs lower-case names in both formats (unverified for 1.0, whose
    // doc sample shows "Header1").
    json headers = json::object();
    json multi_headers = json::object();
    for (const auto& [name, value] : with_gateway_headers(req, info)) {
        std::string key = http_api ? detail::ascii_lower(name) : name;
        headers[key] = value;
        multi_headers[key].push_back(value);
    }
    ev["headers"] = headers.empty() ? json(nullptr) : headers;
    ev["multiValueHeaders"] = multi_headers.empty() ? json(nullptr) : multi_headers;

    // null, not {}, when the request has no query (aws-sam-cli#277, serverless-offline#479).
    json query = json::object();
    json multi_query = json::object();
    for (auto& [k, v] : parse_query(req.query(), !http_api)) {
        query[k] = v;
        multi_query[k].push_back(v);
    }
    ev["queryStringParameters"] = query.empty() ? json(nullptr) : query;
    ev["multiValueQueryStringParameters"] = multi_query.empty() ? json(nullptr) : multi_query;

    json params = m.path_parameters.empty() ? json(nullptr) : path_parameters(m);
    json stage_vars = api.stage_variables.empty() ? json(nullptr) : stage_variables(api);
    if (!http_api) {
        ev["pathParameters"] = params;
        ev["stageVariables"] = stage_vars;
    }

    std::string host = host_of(req);
    auto user_agent = req.header("User-Agent");
    json identity = json::object();
    identity["accessKey"] = nullptr;
    identity["accountId"] = nullptr;
    if (!http_api) {
        // REST: the API key of a method that requires one ($context.identity.apiKey /
        // apiKeyId, "$context variables" reference); null otherwise (aws/aws-sam-cli
        // samcli/local/events/api_event.py writes apiKey null the same way).
        identity["apiKey"] = info.api_key.empty() ? json(nullptr) : json(info.api_key);
        identity["apiKeyId"] = info.api_key_id.empty() ? json(nullptr) : json(info.api_key_id);
    }
    identity["caller"] = nullptr;
    identity["cognitoAuthenticationProvider"] = nullptr;
    identity["cognitoAuthenticationType"] = nullptr;
    identity["cognitoIdentityId"] = nullptr;
    identity["cognitoIdentityPoolId"] = nullptr;
    identity["principalOrgId"] = nullptr;
    identity["sourceIp"] = info.source_ip;
    identity["user"] = nullptr;
    identity["userAgent"] = user_agent ? json(std::string(*user_agent)) : json(nullptr);
    identity["userArn"] = nullptr;
    identity["clientCert"] = nullptr; // no mutual TLS locally

    json ctx = json::object();
    ctx["accountId"] = info.account_id;
    ctx["apiId"] = api_id_for(api);
    if (auto authorizer = authorizer_of(info)) ctx["authorizer"] = std::move(*authorizer);
    // domainName is the Host the client used (AWS: the API's own domain, the same value).
    ctx["domainName"] = host;
    ctx["domainPrefix"] = domain_prefix_of(host);
    ctx["extendedRequestId"] = info.extended_request_id;
    ctx["httpMethod"] = req.method;
    ctx["identity"] = identity;
    // Includes the stage, e.g. "/Prod/hello" (spec §8); encoded or decoded like `path`.
    ctx["path"] = detail::stage_path(api, http_api ? http::percent_decode(m.path) : m.path);
    ctx["protocol"] = req.version == 10 ? "HTTP/1.0" : "HTTP/1.1";
    ctx["requestId"] = info.request_id;
    ctx["requestTime"] = format_time(info.epoch_ms);
    ctx["requestTimeEpoch"] = info.epoch_ms;
    // REST: a resource id like "roq9wj" [REST-PROXY]. HTTP API 1.0: the route key (the doc
    // sample shows null; deployed APIs show e.g. "ANY /hello" — unverified).
    ctx["resourceId"] = http_api ? route_key(route) : resource_id_for(api, route);
    ctx["resourcePath"] = route.path;
    ctx["stage"] = api.stage;
    ev["requestContext"] = ctx;

    if (http_api) {
        ev["pathParameters"] = params;
        ev["stageVariables"] = stage_vars;
    }

    // Empty body is null (spec §8).
    bool binary = !req.body.empty() && v1_body_is_binary(req, api);
    if (req.body.empty())
        ev["body"] = nullptr;
    else
        ev["body"] = binary ? codec::base64_encode(req.body) : req.body;
    ev["isBase64Encoded"] = binary;
    return dump(ev);
}

std::string build_event_v2(const http::request& req, const route_match& m,
                           const request_info& info) {
    const config::api& api = *m.api;
    const config::route& route = *m.route;
    json ev = json::object();
    ev["version"] = "2.0";
    ev["routeKey"] = route_key(route);
    // rawPath as sent; "/{stage}" first when the stage is not $default (API Gateway serves a
    // named stage under that prefix; coldbrew serves it at the bare path).
    std::string raw_path = detail::stage_path(api, m.path);
    ev["rawPath"] = raw_path;
    ev["rawQueryString"] = std::string(req.query());

    // Cookie headers go to cookies[] (split at ';') and are left out of headers [HTTP-LAMBDA].
    json cookies = json::array();
    json headers = json::object();
    for (const auto& [name, value] : with_gateway_headers(req, info)) {
        std::string key = detail::ascii_lower(name);
        if (key == "cookie") {
            std::string_view rest(value);
            while (!rest.empty()) {
                auto semi = rest.find(';');
                std::string_view c = rest.substr(0, semi);
                while (!c.empty() && c.front() == ' ')
                    c.remove_prefix(1);
                while (!c.empty() && c.back() == ' ')
                    c.remove_suffix(1);
                if (!c.empty()) cookies.push_back(std::string(c));
                rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
            }
            continue;
        }
        // Lower-case names, duplicates joined with ',' [HTTP-LAMBDA].
        if (headers.contains(key))
            headers[key] = headers[key].get<std::string>() + "," + value;
        else
            headers[key] = value;
    }
    // Absent values are omitted, not null (spec §4.3).
    if (!cookies.empty()) ev["cookies"] = cookies;
    if (!headers.empty()) ev["headers"] = headers;

    json query = json::object();
    for (auto& [k, v] : parse_query(req.query(), false)) {
        if (query.contains(k))
            query[k] = query[k].get<std::string>() + "," + v;
        else
            query[k] = v;
    }
    if (!query.empty()) ev["queryStringParameters"] = query;

    std::string host = host_of(req);
    auto user_agent = req.header("User-Agent");
    json http_ctx = json::object();
    http_ctx["method"] = req.method;
    http_ctx["path"] = raw_path;
    http_ctx["protocol"] = req.version == 10 ? "HTTP/1.0" : "HTTP/1.1";
    http_ctx["sourceIp"] = info.source_ip;
    http_ctx["userAgent"] = user_agent ? std::string(*user_agent) : std::string();

    json ctx = json::object();
    ctx["accountId"] = info.account_id;
    ctx["apiId"] = api_id_for(api);
    if (auto authorizer = authorizer_of(info)) ctx["authorizer"] = std::move(*authorizer);
    ctx["domainName"] = host;
    ctx["domainPrefix"] = domain_prefix_of(host);
    ctx["http"] = http_ctx;
    ctx["requestId"] = info.request_id;
    ctx["routeKey"] = route_key(route);
    ctx["stage"] = api.stage.empty() ? std::string("$default") : api.stage;
    ctx["time"] = format_time(info.epoch_ms);
    ctx["timeEpoch"] = info.epoch_ms;
    ev["requestContext"] = ctx;

    bool binary = !req.body.empty() && !http_api_body_is_text(req);
    if (!req.body.empty()) ev["body"] = binary ? codec::base64_encode(req.body) : req.body;
    if (!m.path_parameters.empty()) ev["pathParameters"] = path_parameters(m);
    ev["isBase64Encoded"] = binary;
    // Last, as in AWS's 2.0 sample [HTTP-LAMBDA]; omitted when the API has none (spec §4.3).
    if (!api.stage_variables.empty()) ev["stageVariables"] = stage_variables(api);
    return dump(ev);
}

} // namespace coldbrew::gateway
