#include "emulator/gateway/detail.hpp"

namespace coldbrew::gateway::detail {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t seed) {
    std::uint64_t h = seed;
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

std::string base36_id(std::string_view key, std::size_t count) {
    static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string out;
    out.reserve(count);
    std::uint64_t h = fnv1a64(key);
    // 12 base-36 digits use ~62 bits; rehash for longer ids so no digit is a constant 0.
    for (std::size_t i = 0; i < count; ++i) {
        if (i > 0 && i % 12 == 0) h = fnv1a64(key, h);
        out.push_back(digits[h % 36]);
        h /= 36;
    }
    return out;
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    return out;
}

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}
} // namespace

std::string media_type_of(std::string_view content_type) {
    return ascii_lower(trim(content_type.substr(0, content_type.find(';'))));
}

bool media_type_matches(std::string_view pattern_in, std::string_view media_type) {
    std::string pattern;
    for (std::string_view p = trim(pattern_in); !p.empty();) {
        if (p.starts_with("~1")) {
            pattern.push_back('/');
            p.remove_prefix(2);
        } else {
            pattern.push_back(p.front());
            p.remove_prefix(1);
        }
    }
    pattern = ascii_lower(pattern);
    if (pattern.empty() || media_type.empty()) return false;
    if (pattern == "*/*") return true;
    if (pattern.size() >= 2 && pattern.ends_with("/*"))
        return media_type.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1));
    return pattern == media_type;
}

bool matches_any(const std::vector<std::string>& patterns, std::string_view media_type) {
    for (const auto& p : patterns)
        if (media_type_matches(p, media_type)) return true;
    return false;
}

const config::api* find_api(const config::stack& stack, std::string_view id) {
    for (const auto& a : stack.apis)
        if (a.id == id) return &a;
    return nullptr;
}

bool has_named_stage(const config::api& api) {
    return !api.stage.empty() && api.stage != "$default";
}

std::string stage_path(const config::api& api, std::string_view path) {
    if (!has_named_stage(api)) return std::string(path);
    std::string out = "/" + api.stage;
    // The root under a stage is "/{stage}/", as in the REST sample's requestContext.path
    // "/test/" for resourcePath "/". [REST-PROXY]
    out += path.empty() ? std::string_view("/") : path;
    return out;
}

} // namespace coldbrew::gateway::detail
