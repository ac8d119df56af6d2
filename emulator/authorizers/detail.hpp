#pragma once
// What the authorizer component's files share (not part of its interface).

#include "emulator/config/stack.hpp"

namespace coldbrew::authorizers::detail {

// A REST authorizer has no payload format version; HTTP API Lambda authorizers have "1.0" or
// "2.0" (config::authorizer::payload_format_version).
inline bool is_rest(const config::authorizer& a) { return a.payload_format_version.empty(); }

}  // namespace coldbrew::authorizers::detail
