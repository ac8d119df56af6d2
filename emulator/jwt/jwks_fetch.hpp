#pragma once
// Internal to coldbrew_jwt: one blocking HTTP/1.1 GET, kept in jwks_fetch.cpp so Beast and
// Asio are compiled in that one translation unit only.

#include <chrono>
#include <string>

namespace coldbrew::jwt::detail {

// GETs an http:// or https:// URL (https verified against the system CA store, with SNI) and
// returns the body of a 200 answer. Redirects are not followed. Throws std::runtime_error
// saying why (bad URL, resolve/connect/TLS failure, timeout, a status other than 200).
std::string http_get(const std::string& url, std::chrono::milliseconds timeout);

}  // namespace coldbrew::jwt::detail
