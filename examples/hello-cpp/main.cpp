// HelloCpp: a C++ Lambda function on a custom runtime (`provided.al2023`). The executable is
// the runtime: it is named `bootstrap`, and Lambda (or coldbrew) starts it and talks the
// Runtime API to it through runtime_api_client.hpp.
//
// It answers API Gateway REST (payload 1.0) and HTTP API (payload 2.0) events with a greeting.
// To stay dependency-free it reads the few event fields it needs with a naive scanner; a real
// function would use a JSON library.

#include "runtime_api_client.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

// The first string value of "key" in `json`, unescaped (\" \\ \/ \n \t only). Naive: it does
// not know about nesting, so pick keys that occur once.
std::string string_field(std::string_view json, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\"";
    for (std::size_t at = json.find(needle); at != std::string_view::npos;
         at = json.find(needle, at + 1)) {
        std::size_t p = at + needle.size();
        while (p < json.size() && (json[p] == ' ' || json[p] == '\n' || json[p] == '\t'))
            ++p;
        if (p >= json.size() || json[p] != ':') continue; // a value that happens to match
        ++p;
        while (p < json.size() && (json[p] == ' ' || json[p] == '\n' || json[p] == '\t'))
            ++p;
        if (p >= json.size() || json[p] != '"') return {}; // null, number, object …
        std::string out;
        for (++p; p < json.size() && json[p] != '"'; ++p) {
            if (json[p] == '\\' && p + 1 < json.size()) {
                const char e = json[++p];
                out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
            } else {
                out += json[p];
            }
        }
        return out;
    }
    return {};
}

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : fallback;
}

lambda_runtime::outcome handle(const lambda_runtime::invocation& inv) {
    using lambda_runtime::json_escape;
    const std::string_view event = inv.event;
    const bool v2 = string_field(event, "version") == "2.0";
    // 2.0: requestContext.http.method and routeKey; 1.0: httpMethod and resource.
    const std::string method =
        v2 ? string_field(event, "method") : string_field(event, "httpMethod");
    const std::string route =
        v2 ? string_field(event, "routeKey") : method + " " + string_field(event, "resource");

    // stdout is the function's log stream.
    std::printf("%s (payload %s)\n", route.c_str(), v2 ? "2.0" : "1.0");

    const std::string body =
        "{\"message\":\"" + json_escape(env_or("GREETING", "Hello") + ", world! From C++.") +
        "\",\"payloadVersion\":\"" + (v2 ? "2.0" : "1.0") + "\",\"method\":\"" +
        json_escape(method) + "\",\"route\":\"" + json_escape(route) + "\",\"requestId\":\"" +
        json_escape(inv.request_id) +
        "\",\"remainingTimeMs\":" + std::to_string(inv.remaining_ms()) + "}";
    // API Gateway proxy response: the body is a string holding the JSON above.
    return lambda_runtime::outcome::success(
        "{\"statusCode\":200,\"headers\":{\"content-type\":\"application/json\","
        "\"x-hello-runtime\":\"cpp\"},\"body\":\"" +
        json_escape(body) + "\"}");
}

} // namespace

int main() {
    return lambda_runtime::run(handle);
}
