#pragma once
// Plain HTTP/1.1 message values shared by every front end (gateway, Runtime API, later the
// invoke and admin APIs). They carry no socket or Beast types, so protocol logic that takes
// and returns them is testable without a port; emulator/http/server.cpp converts them to and
// from Beast's parser and serializer.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coldbrew::http {

// Header fields in arrival order, names exactly as sent (REST payload 1.0 keeps client casing;
// 2.0 lower-cases them), duplicates kept as separate entries.
using header_list = std::vector<std::pair<std::string, std::string>>;

struct request {
    std::string method;  // as sent, e.g. "GET"
    std::string target;  // raw request-target, e.g. "/pets/1?x=%20y" (not decoded)
    int version = 11;    // 10 or 11
    header_list headers;
    std::string body;
    std::string remote_ip = "127.0.0.1";  // peer address of the connection

    // First value of a header, compared case-insensitively; nullopt when absent.
    std::optional<std::string_view> header(std::string_view name) const;
    // The target split at '?': path part (raw) and query part (raw, without '?').
    std::string_view path() const;
    std::string_view query() const;
};

struct response {
    int status = 200;
    header_list headers;  // sent as given; Content-Length is added by the server
    std::string body;

    void set(std::string name, std::string value);  // replace any field of that name
    void add(std::string name, std::string value);  // append, keeps duplicates (Set-Cookie)
    std::optional<std::string_view> header(std::string_view name) const;
};

// ASCII case-insensitive comparison for header names.
bool iequals(std::string_view a, std::string_view b);

// Percent-decoding of one URL component. '+' is left as '+' (paths keep a literal plus, per
// API Gateway); query decoding passes plus_as_space = true. Invalid escapes are kept verbatim.
std::string percent_decode(std::string_view in, bool plus_as_space = false);

}  // namespace coldbrew::http
