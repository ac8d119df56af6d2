#pragma once
// Tier-1 errors: anything wrong with the user's configuration. Thrown while loading, before a
// port opens or a process starts; the CLI prints what() and exits with status 2.

#include <stdexcept>
#include <string>

namespace coldbrew::config {

// Where a value came from. line and column are 1-based; 0 means unknown (e.g. a default).
struct source_location {
    std::string file;
    int line = 0;
    int column = 0;
};

class config_error : public std::runtime_error {
public:
    // key_path is the YAML path of the offending key, e.g. "Resources.Hello.Properties.Timeout".
    config_error(source_location where, std::string key_path, std::string message);

    const source_location& where() const noexcept { return where_; }
    const std::string& key_path() const noexcept { return key_path_; }
    const std::string& message() const noexcept { return message_; }

private:
    source_location where_;
    std::string key_path_;
    std::string message_;
};

// "file:line:column: key.path: message" — the one format every config error (and every
// stack warning) is printed in. Unknown parts are left out: no ":line:column" when line is 0,
// no "key.path: " when the path is empty, no "file: " when the file is empty.
std::string format_config_error(const source_location& where, const std::string& key_path,
                                const std::string& message);

}  // namespace coldbrew::config
