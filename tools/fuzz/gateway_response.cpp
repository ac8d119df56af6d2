// Response mapping from whatever a handler returns: the first byte picks the route (REST
// payload 1.0, HTTP API 1.0, HTTP API 2.0) and a request header set, the rest is the
// function's output. Whatever the output, the answer must be a valid HTTP response: a final
// status, header names that are tokens and values without CR, LF or NUL (the server writes
// them as given).

#include "emulator/gateway/gateway.hpp"
#include "tools/fuzz/gateway_stack.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <cstdlib>
#include <string_view>

using namespace coldbrew;

namespace {

bool token_char(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

void check(const http::response& res) {
    if (res.status < 200 || res.status > 599) std::abort();
    for (const auto& [name, value] : res.headers) {
        if (name.empty()) std::abort();
        for (unsigned char c : name)
            if (!token_char(c)) std::abort();
        for (unsigned char c : value)
            if (c == '\r' || c == '\n' || c == '\0') std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const config::stack stack = fuzz::gateway_stack();
    static const gateway::route_table table(stack);
    if (size == 0) return 0;
    static const char* const targets[] = {"/pets/7?a=1", "/v1fmt/7", "/v2/pets/7", "/hello"};
    http::request req;
    req.method = "GET";
    req.target = targets[data[0] % 4];
    if (data[0] & 0x10) req.headers = {{"Origin", "https://app.example.com"}, {"Accept", "*/*"}};
    if (data[0] & 0x20) req.method = "HEAD";
    auto m = table.match(req.method == "HEAD" ? "GET" : req.method, req.path());
    if (!m) return 0;
    std::string_view output = fuzz::as_text(data + 1, size - 1);
    std::string why;
    auto res = gateway::map_response(output, req, *m, "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", &why);
    check(res);
    if (res.status == 502 || res.status == 500) {
        // Malformed output is named in printable ASCII (it reaches the execution log line).
        for (unsigned char c : why)
            if (c < 0x20 || c > 0x7e) std::abort();
    }
    return 0;
}
