#include "emulator/config/config_error.hpp"

#include <utility>

namespace coldbrew::config {

config_error::config_error(source_location where, std::string key_path, std::string message)
    : std::runtime_error(format_config_error(where, key_path, message)), where_(std::move(where)),
      key_path_(std::move(key_path)), message_(std::move(message)) {}

std::string format_config_error(const source_location& where, const std::string& key_path,
                                const std::string& message) {
    // Parts that are unknown (no file, line 0 = a default or a whole-file problem, no key) are
    // left out rather than printed as "0", so the line stays clickable in editors and terminals.
    std::string out;
    if (!where.file.empty()) {
        out += where.file;
        if (where.line > 0) {
            out += ':' + std::to_string(where.line);
            if (where.column > 0) out += ':' + std::to_string(where.column);
        }
        out += ": ";
    }
    if (!key_path.empty()) {
        out += key_path;
        out += ": ";
    }
    out += message;
    return out;
}

} // namespace coldbrew::config
