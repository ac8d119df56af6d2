#pragma once
// Helpers shared by routing.cpp, events.cpp and responses.cpp. Internal to the gateway
// component: nothing outside emulator/gateway/ includes this.

#include "emulator/config/stack.hpp"
#include "emulator/http/message.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::gateway::detail {

// FNV-1a, 64 bit: stable across platforms and standard libraries (std::hash is not), so ids
// derived from it are the same on every machine.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t seed = 14695981039346656037ull);

// `count` characters of [a-z0-9] drawn from a hash of `key`.
std::string base36_id(std::string_view key, std::size_t count);

std::string ascii_lower(std::string_view s);

// "Image/PNG; charset=x" -> "image/png": the media type without parameters, lower case.
std::string media_type_of(std::string_view content_type);

// Whether a binaryMediaTypes entry matches a media type. Entries may be "*/*", "image/*" or
// exact; SAM's "~1" escape for '/' ("image~1png") is accepted as well. [REST-PROXY]
bool media_type_matches(std::string_view pattern, std::string_view media_type);
bool matches_any(const std::vector<std::string>& patterns, std::string_view media_type);

// The API a route belongs to, nullptr when the stack has none with that id.
const config::api* find_api(const config::stack& stack, std::string_view id);

// Whether the API's stage is served under a "/{stage}" prefix: every REST stage, and an HTTP
// API stage other than $default (only $default is served at the root).
bool has_named_stage(const config::api& api);

// The path a function sees for a stage: "/{stage}" + path, or path alone for "$default".
std::string stage_path(const config::api& api, std::string_view path);

} // namespace coldbrew::gateway::detail
