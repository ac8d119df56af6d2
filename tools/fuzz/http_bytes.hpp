#pragma once
// Turns a fuzz input into the http::request values the front ends receive, the way the
// server does it: Beast's request parser with the server's default limits (eager body,
// 10 MiB body, 64 KiB header), then the same field-by-field copy as server.cpp's dispatch().
// Kept apart so Beast is compiled once for every harness that speaks HTTP.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "emulator/http/message.hpp"

namespace coldbrew::fuzz {

// The first complete request in `bytes`; nullopt when the parser rejects the bytes or they
// end before the request does. `used` (when given) receives how many bytes the request took.
std::optional<http::request> parse_request(std::string_view bytes, std::size_t* used = nullptr);

// The input as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace coldbrew::fuzz
