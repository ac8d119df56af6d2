#include "emulator/config/command_line.hpp"

#include <cctype>
#include <stdexcept>
#include <string_view>
#include <vector>

extern char** environ;

namespace coldbrew::config {

namespace {

// Splits on whitespace outside quotes and drops the quotes: A="with space" B=2.
std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    bool in_word = false;
    char quote = 0;
    for (char c : s) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                cur += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (in_word) out.push_back(std::move(cur));
            cur.clear();
            in_word = false;
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (in_word) out.push_back(std::move(cur));
    return out;
}

}  // namespace

void parse_parameter_overrides(const std::string& arg, std::map<std::string, std::string>& out) {
    for (const auto& word : split_words(arg)) {
        const std::string key_prefix = "ParameterKey=", value_marker = ",ParameterValue=";
        if (word.rfind(key_prefix, 0) == 0) {
            auto marker = word.find(value_marker);
            if (marker == std::string::npos)
                throw std::invalid_argument("expected ParameterKey=K,ParameterValue=V, got '" + word + "'");
            out[word.substr(key_prefix.size(), marker - key_prefix.size())] =
                word.substr(marker + value_marker.size());
            continue;
        }
        auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0)
            throw std::invalid_argument("expected Key=Value, got '" + word + "'");
        out[word.substr(0, eq)] = word.substr(eq + 1);
    }
}

std::map<std::string, std::string> process_environment() {
    std::map<std::string, std::string> out;
    for (char** e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string_view::npos)
            out.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    return out;
}

}  // namespace coldbrew::config
