#include "emulator/http/access.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace coldbrew::http {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// "[v6]" → "v6"; anything else as is.
std::string_view unbracket(std::string_view h) {
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') return h.substr(1, h.size() - 2);
    return h;
}

bool is_ipv4(const std::string& h, in_addr* out = nullptr) {
    in_addr a{};
    if (inet_pton(AF_INET, h.c_str(), &a) != 1) return false;
    if (out) *out = a;
    return true;
}

bool is_ipv6(const std::string& h, in6_addr* out = nullptr) {
    in6_addr a{};
    if (inet_pton(AF_INET6, h.c_str(), &a) != 1) return false;
    if (out) *out = a;
    return true;
}

// The same address, whatever the spelling ("::1" and "0:0::1").
bool same_address(const std::string& a, const std::string& b) {
    in_addr a4{}, b4{};
    if (is_ipv4(a, &a4) && is_ipv4(b, &b4)) return a4.s_addr == b4.s_addr;
    in6_addr a6{}, b6{};
    if (is_ipv6(a, &a6) && is_ipv6(b, &b6)) return std::equal(a6.s6_addr, a6.s6_addr + 16, b6.s6_addr);
    return lower(a) == lower(b);
}

struct authority {
    std::string host;  // without brackets
    std::optional<int> port;
};

// "host", "host:port", "[v6]" or "[v6]:port"; nullopt when it is none of them.
std::optional<authority> parse_authority(std::string_view s) {
    authority a;
    std::string_view port;
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        a.host = std::string(s.substr(1, close - 1));
        auto rest = s.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::nullopt;
            port = rest.substr(1);
            if (port.empty()) return std::nullopt;
        }
    } else {
        auto colon = s.rfind(':');
        if (colon != std::string_view::npos) {
            if (s.find(':') != colon) return std::nullopt;  // a bare v6 address needs brackets
            port = s.substr(colon + 1);
            if (port.empty()) return std::nullopt;
            s = s.substr(0, colon);
        }
        a.host = std::string(s);
    }
    if (a.host.empty()) return std::nullopt;
    for (char c : a.host)
        if (static_cast<unsigned char>(c) <= ' ' || c == '/' || c == '@' || c == '\\') return std::nullopt;
    if (!port.empty()) {
        if (port.size() > 5) return std::nullopt;
        int p = 0;
        for (char c : port) {
            if (c < '0' || c > '9') return std::nullopt;
            p = p * 10 + (c - '0');
        }
        if (p > 65535) return std::nullopt;
        a.port = p;
    }
    return a;
}

bool is_ip_literal(const std::string& h) { return is_ipv4(h) || is_ipv6(h); }

// Rule 2 for one host name (no brackets, no port).
bool host_allowed(const std::string& host, const access_policy& p) {
    if (is_loopback_host(host)) return true;
    const std::string bound(unbracket(p.listen_host));
    if (same_address(host, bound)) return true;
    return is_wildcard_host(bound) && is_ip_literal(host);
}

std::string listener_origin(const access_policy& p) {
    const std::string h(unbracket(p.listen_host));
    const bool v6 = h.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(p.listen_port);
}

access_decision refuse(access_verdict v, std::string reason) { return {v, std::move(reason)}; }

}  // namespace

bool is_loopback_host(std::string_view host_in) {
    const std::string host = lower(unbracket(host_in));
    if (host == "localhost" || host == "localhost.") return true;
    constexpr std::string_view suffix = ".localhost";
    if (host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    in_addr a4{};
    if (is_ipv4(host, &a4)) return (ntohl(a4.s_addr) >> 24) == 127;
    in6_addr a6{};
    if (is_ipv6(host, &a6)) {
        if (IN6_IS_ADDR_LOOPBACK(&a6)) return true;
        // ::ffff:127.x.y.z, a v4 loopback address written as v6.
        return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
    }
    return false;
}

bool is_wildcard_host(std::string_view host_in) {
    const std::string host(unbracket(host_in));
    in_addr a4{};
    if (is_ipv4(host, &a4)) return a4.s_addr == INADDR_ANY;
    in6_addr a6{};
    return is_ipv6(host, &a6) && IN6_IS_ADDR_UNSPECIFIED(&a6);
}

bool constant_time_equals(std::string_view a, std::string_view b) {
    // Every byte of the longer is looked at; the result differs in one place only.
    const std::size_t n = a.size() > b.size() ? a.size() : b.size();
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
        const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
        diff = static_cast<unsigned char>(diff | (x ^ y));
    }
    return diff == 0;
}

access_decision check_access(const request& req, const access_policy& p) {
    // Only the first of repeated headers would be checked: a second Origin or Host is refused
    // (RFC 9110 §7.2 answers more than one Host with 400; a browser never repeats either).
    std::size_t origins = 0, hosts = 0;
    for (const auto& [name, value] : req.headers) {
        origins += iequals(name, "Origin");
        hosts += iequals(name, "Host");
    }
    if (origins > 1)
        return refuse(access_verdict::foreign_origin,
                      "coldbrew refuses a request with more than one Origin header");
    if (hosts > 1)
        return refuse(access_verdict::foreign_host,
                      "coldbrew refuses a request with more than one Host header");
    if (auto origin = req.header("Origin")) {
        const std::string_view o = trim(*origin);
        constexpr std::string_view scheme = "http://";
        std::optional<authority> a;
        if (o.size() > scheme.size() && lower(o.substr(0, scheme.size())) == scheme)
            a = parse_authority(o.substr(scheme.size()));
        const bool same = a && a->port.value_or(80) == p.listen_port && host_allowed(a->host, p);
        if (!same)
            return refuse(access_verdict::foreign_origin,
                          "coldbrew refuses cross-origin requests to this API: Origin '" +
                              std::string(o) + "' is not " + listener_origin(p) +
                              " (a web page cannot call it; SDKs, the AWS CLI and curl send no Origin)");
    }
    if (auto host_header = req.header("Host")) {
        const std::string_view h = trim(*host_header);
        auto a = parse_authority(h);
        if (!a || !host_allowed(a->host, p))
            return refuse(access_verdict::foreign_host,
                          "coldbrew refuses requests addressed to another host: Host '" +
                              std::string(h) + "' is not localhost or " +
                              std::string(unbracket(p.listen_host)) +
                              " (a name that resolves here is how DNS rebinding reaches local APIs)");
    }
    if (!p.bearer_token.empty()) {
        auto auth = req.header("Authorization");
        if (!auth)
            return refuse(access_verdict::missing_token,
                          "this API needs 'Authorization: Bearer <token>' with the admin token "
                          "coldbrew printed at start (or admin.token in coldbrew.yaml)");
        std::string_view v = trim(*auth);
        constexpr std::string_view bearer = "bearer ";
        if (v.size() < bearer.size() || lower(v.substr(0, bearer.size())) != bearer ||
            !constant_time_equals(trim(v.substr(bearer.size())), p.bearer_token))
            return refuse(access_verdict::wrong_token, "the bearer token is not this API's admin token");
    }
    return {};
}

}  // namespace coldbrew::http
