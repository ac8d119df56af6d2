#include "emulator/http/message.hpp"

#include <algorithm>

namespace coldbrew::http {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]);
        unsigned char y = static_cast<unsigned char>(b[i]);
        if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
        if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
        if (x != y) return false;
    }
    return true;
}

namespace {
std::optional<std::string_view> find_header(const header_list& headers, std::string_view name) {
    for (const auto& [k, v] : headers)
        if (iequals(k, name)) return std::string_view(v);
    return std::nullopt;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
}  // namespace

std::optional<std::string_view> request::header(std::string_view name) const {
    return find_header(headers, name);
}

std::string_view request::path() const {
    std::string_view t(target);
    return t.substr(0, t.find('?'));
}

std::string_view request::query() const {
    std::string_view t(target);
    auto q = t.find('?');
    return q == std::string_view::npos ? std::string_view{} : t.substr(q + 1);
}

void response::set(std::string name, std::string value) {
    headers.erase(std::remove_if(headers.begin(), headers.end(),
                                 [&](const auto& h) { return iequals(h.first, name); }),
                  headers.end());
    headers.emplace_back(std::move(name), std::move(value));
}

void response::add(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string_view> response::header(std::string_view name) const {
    return find_header(headers, name);
}

std::string percent_decode(std::string_view in, bool plus_as_space) {
    std::string out;
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%' && i + 2 < in.size()) {
            int hi = hex_value(in[i + 1]);
            int lo = hex_value(in[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out.push_back(static_cast<char>(hi * 16 + lo));
                i += 2;
                continue;
            }
        }
        out.push_back(plus_as_space && c == '+' ? ' ' : c);
    }
    return out;
}

}  // namespace coldbrew::http
