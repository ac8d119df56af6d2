#pragma once
// Private to emulator/config: a plain, position-carrying copy of a YAML document.
//
// yaml-cpp's Node has reference semantics (assigning into a map aliases nodes, operator[] on
// a non-const node inserts) which makes merging Globals or substituting variables error-prone.
// Every loader therefore converts the document once into this value tree. Each node keeps
// the file, 1-based line/column and key path it came from, so an error about a value that
// travelled (a Globals entry merged into a function, a `${self:…}` substitution, a `!Ref` to
// a parameter) still points at the text the user wrote.

#include "emulator/config/config_error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::config::detail {

struct ymember;

struct ynode {
    enum class kind {
        null,
        scalar,
        sequence,
        map,
        unresolved, // an intrinsic that cannot be resolved locally; `text` says why
        no_value,   // AWS::NoValue: the enclosing key or item is removed
    };

    kind type = kind::null;
    std::string text;             // scalar text exactly as written (numbers and booleans too)
    std::string tag;              // explicit tag such as "!Ref"; "" for none
    bool quoted = false;          // scalar was quoted, i.e. certainly a string
    std::vector<ynode> items;     // sequence
    std::vector<ymember> members; // map, in document order
    source_location where;
    std::string path; // YAML key path, "Resources.Hello.Properties.Layers[0]"

    bool is_null() const { return type == kind::null; }
    bool is_scalar() const { return type == kind::scalar; }
    bool is_sequence() const { return type == kind::sequence; }
    bool is_map() const { return type == kind::map; }

    // Map member lookup; nullptr when absent or when this is not a map.
    const ynode* find(std::string_view key) const;
    ynode* find(std::string_view key);
    const ymember* find_member(std::string_view key) const;

    static ynode make_scalar(std::string text, const source_location& where, std::string path);
    static ynode make_map(const source_location& where, std::string path);
    static ynode make_sequence(const source_location& where, std::string path);
};

struct ymember {
    std::string key;
    source_location key_where; // position of the key itself (for "unknown key" messages)
    ynode value;
};

// "Resources" + "Hello" → "Resources.Hello"; "" + "x" → "x".
std::string join_path(std::string_view parent, std::string_view key);
std::string index_path(std::string_view parent, std::size_t index);

// Bounds on the tree a document may become. Aliases are copied into the tree, so nested
// aliases ("billion laughs") grow it exponentially from a few lines of text; real templates
// stay far below both bounds (a large one is tens of thousands of nodes, < 30 levels deep).
struct yaml_limits {
    std::size_t max_nodes = 1'000'000;
    int max_depth = 256;
};

// Parses `file`. Missing or unreadable file, YAML syntax error (with the parser's mark),
// duplicate mapping keys and a document beyond `yaml_limits` ("document expands to more than
// N nodes (YAML aliases?)", at the node where the bound was crossed) throw config_error.
// Merge keys (`<<: *anchor`) are expanded, because serverless.yml files use them and
// yaml-cpp 0.7 does not.
ynode load_yaml_file(const std::filesystem::path& file);
// Same, from text already in memory; `file` is only used for positions.
ynode load_yaml_text(const std::string& text, const std::string& file,
                     const yaml_limits& limits = {});

// ---- errors and warnings ---------------------------------------------------------------

[[noreturn]] void fail(const ynode& at, const std::string& message);
[[noreturn]] void fail_key(const ymember& at, const std::string& path, const std::string& message);
std::string warning_text(const ynode& at, const std::string& message);
std::string warning_key_text(const ymember& at, const std::string& path,
                             const std::string& message);

// The closest of `candidates` to `word` by edit distance, when close enough to be a typo.
std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates);
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);
// " (did you mean 'X'?)" or "".
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

// Adds a warning for each key of `map` not in `known` (keys we read plus keys we accept and
// deliberately do nothing with). Templates tolerate unknown keys; coldbrew.yaml does not.
void warn_unknown_keys(const ynode& map, std::span<const std::string_view> known,
                       std::vector<std::string>& warnings);

// The position of byte `offset` of scalar `n`'s text in its file, for errors inside a value
// (a distribution's parse error). Exact when `n` is a plain or quoted scalar written on one
// line as it reads (the file is read again to check: no escapes, no folding); otherwise, or
// when the file cannot be read, `n.where`, the start of the value.
source_location position_in_scalar(const ynode& n, std::size_t offset);

// ---- typed reads (throw config_error at the node) ---------------------------------------

const std::string& expect_string(const ynode& n, std::string_view what);
const ynode& expect_map(const ynode& n, std::string_view what);
const ynode& expect_sequence(const ynode& n, std::string_view what);
std::int64_t expect_int(const ynode& n, std::int64_t min, std::int64_t max, std::string_view what);
std::uint64_t expect_uint64(const ynode& n, std::string_view what);
double expect_double(const ynode& n, std::string_view what);

// Absolute, lexically normal, without a trailing separator.
std::filesystem::path normal_absolute(const std::filesystem::path& p);

} // namespace coldbrew::config::detail
