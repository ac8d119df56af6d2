#pragma once
// Standard base64 (RFC 4648 §4, with padding): isBase64Encoded bodies, X-Amz-Log-Result,
// X-Amz-Client-Context.

#include <optional>
#include <string>
#include <string_view>

namespace coldbrew::codec {

std::string base64_encode(std::string_view bytes);

// nullopt when `text` is not valid base64 (padding optional; whitespace is not allowed).
std::optional<std::string> base64_decode(std::string_view text);

// True when `bytes` is well-formed UTF-8.
bool is_valid_utf8(std::string_view bytes);

}  // namespace coldbrew::codec
