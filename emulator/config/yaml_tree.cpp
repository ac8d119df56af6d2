#include "emulator/config/yaml_tree.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

namespace coldbrew::config::detail {

namespace {

source_location location_of(const YAML::Mark& mark, const std::string& file) {
    source_location where{file, 0, 0};
    if (mark.line >= 0 && mark.column >= 0) {
        where.line = mark.line + 1;
        where.column = mark.column + 1;
    }
    return where;
}

bool is_merge_key(const YAML::Node& key) {
    return key.IsScalar() && key.Scalar() == "<<" && key.Tag() == "?";
}

// The key path of a node deep inside an expansion runs to hundreds of "[0]"s; its start says
// where the expansion is.
[[noreturn]] void too_big(const source_location& where, const std::string& path,
                          const std::string& message) {
    constexpr std::size_t max_path = 120;
    throw config_error(where, path.size() > max_path ? path.substr(0, max_path) + "..." : path,
                       message);
}

// yaml-cpp keeps an aliased node shared, so parsing nested aliases ("billion laughs": ten
// aliases of a list of ten aliases of …) is cheap; the copy into ynodes is where they
// multiply. measure() therefore walks the document first exactly as convert() will, counting
// nodes and depth without building anything, and rejects it before any memory is spent.
class converter {
  public:
    converter(const std::string& file, const yaml_limits& limits) : file_(file), limits_(limits) {}

    // Throws config_error at the first node beyond the limits, in document order.
    void measure(const YAML::Node& node, const std::string& path, const source_location* key_where,
                 int depth);
    ynode convert(const YAML::Node& node, std::string path, const source_location* key_where,
                  int depth);

  private:
    void merge_into(ynode& out, const YAML::Node& merged, int depth);

    const std::string& file_;
    const yaml_limits& limits_;
    std::size_t nodes_ = 0;
};

void converter::measure(const YAML::Node& node, const std::string& path,
                        const source_location* key_where, int depth) {
    const auto where = [&] {
        return node.IsNull() && key_where ? *key_where : location_of(node.Mark(), file_);
    };
    if (depth > limits_.max_depth) {
        too_big(where(), path,
                "document nested more than " + std::to_string(limits_.max_depth) +
                    " levels deep (recursive YAML alias?)");
    }
    if (++nodes_ > limits_.max_nodes) {
        too_big(where(), path,
                "document expands to more than " + std::to_string(limits_.max_nodes) +
                    " nodes (YAML aliases?)");
    }
    if (node.IsSequence()) {
        std::size_t i = 0;
        for (const auto& item : node)
            measure(item, index_path(path, i++), nullptr, depth + 1);
    } else if (node.IsMap()) {
        std::vector<YAML::Node> merges;
        for (auto it = node.begin(); it != node.end(); ++it) {
            const YAML::Node k = it->first;
            const YAML::Node v = it->second;
            if (is_merge_key(k)) {
                merges.push_back(v);
            } else if (k.IsScalar()) {
                const source_location kw = location_of(k.Mark(), file_);
                measure(v, join_path(path, k.Scalar()), &kw, depth + 1);
            }
        }
        // As merge_into(): each merged mapping is converted whole.
        for (const auto& merged : merges) {
            if (merged.IsSequence()) {
                for (const auto& item : merged)
                    measure(item, path, nullptr, depth + 1);
            } else {
                measure(merged, path, nullptr, depth + 1);
            }
        }
    }
}

void converter::merge_into(ynode& out, const YAML::Node& merged, int depth) {
    // Explicit keys win over merged ones, whatever their order (YAML merge key semantics).
    auto add = [&](const YAML::Node& source) {
        if (!source.IsMap()) {
            fail(convert(source, join_path(out.path, "<<"), nullptr, depth + 1),
                 "merge key '<<' needs a mapping or a list of mappings");
        }
        ynode converted = convert(source, out.path, nullptr, depth + 1);
        for (auto& m : converted.members) {
            if (!out.find(m.key)) out.members.push_back(std::move(m));
        }
    };
    if (merged.IsSequence()) {
        for (const auto& item : merged)
            add(item);
    } else {
        add(merged);
    }
}

// Only after measure() accepted the document: it bounds the recursion and the size here.
ynode converter::convert(const YAML::Node& node, std::string path, const source_location* key_where,
                         int depth) {
    ynode out;
    out.path = std::move(path);
    out.where = location_of(node.Mark(), file_);
    std::string tag = node.Tag();
    if (tag == "?" || tag == "") {
        tag.clear();
    } else if (tag == "!" || tag == "tag:yaml.org,2002:str") {
        tag.clear();
        out.quoted = true;
    }
    out.tag = std::move(tag);

    switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
        out.type = ynode::kind::null;
        // An empty value has no mark of its own (yaml-cpp points at the next line).
        if (key_where) out.where = *key_where;
        break;
    case YAML::NodeType::Scalar:
        out.type = ynode::kind::scalar;
        out.text = node.Scalar();
        break;
    case YAML::NodeType::Sequence: {
        out.type = ynode::kind::sequence;
        std::size_t i = 0;
        for (const auto& item : node) {
            out.items.push_back(convert(item, index_path(out.path, i), nullptr, depth + 1));
            ++i;
        }
        break;
    }
    case YAML::NodeType::Map: {
        out.type = ynode::kind::map;
        std::vector<YAML::Node> merges;
        for (auto it = node.begin(); it != node.end(); ++it) {
            // Copies: yaml-cpp's iterator-> returns a temporary proxy, so a reference to
            // `it->first` would dangle.
            const YAML::Node k = it->first;
            const YAML::Node v = it->second;
            source_location kw = location_of(k.Mark(), file_);
            if (!k.IsScalar()) {
                throw config_error(kw, out.path, "mapping keys must be plain strings");
            }
            if (is_merge_key(k)) {
                merges.push_back(v);
                continue;
            }
            std::string key = k.Scalar();
            std::string child_path = join_path(out.path, key);
            if (out.find(key)) {
                throw config_error(kw, child_path, "duplicate key '" + key + "'");
            }
            ymember m{key, kw, convert(v, child_path, &kw, depth + 1)};
            out.members.push_back(std::move(m));
        }
        for (const auto& merged : merges)
            merge_into(out, merged, depth);
        break;
    }
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Optimal string alignment distance, case-insensitive: a swapped pair of letters counts as
// one edit, so "prots" still finds "ports".
std::size_t edit_distance(std::string_view a_in, std::string_view b_in) {
    const std::string a = lower(a_in), b = lower(b_in);
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

template <class Range>
std::optional<std::string> closest_in(std::string_view word, const Range& candidates) {
    const std::size_t limit = word.size() <= 3 ? 1 : word.size() <= 8 ? 2 : 3;
    std::optional<std::string> best;
    std::size_t best_distance = limit + 1;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d < best_distance) {
            best_distance = d;
            best = std::string(c);
        }
    }
    return best;
}

std::string describe(const ynode& n) {
    switch (n.type) {
    case ynode::kind::null:
        return "nothing";
    case ynode::kind::scalar:
        return "'" + n.text + "'";
    case ynode::kind::sequence:
        return "a list";
    case ynode::kind::map:
        return "a mapping";
    case ynode::kind::unresolved:
        return "an unresolvable value (" + n.text + ")";
    case ynode::kind::no_value:
        return "AWS::NoValue";
    }
    return "?";
}

} // namespace

const ymember* ynode::find_member(std::string_view key) const {
    if (type != kind::map) return nullptr;
    for (const auto& m : members) {
        if (m.key == key) return &m;
    }
    return nullptr;
}

const ynode* ynode::find(std::string_view key) const {
    const ymember* m = find_member(key);
    return m ? &m->value : nullptr;
}

ynode* ynode::find(std::string_view key) {
    return const_cast<ynode*>(static_cast<const ynode*>(this)->find(key));
}

ynode ynode::make_scalar(std::string text, const source_location& where, std::string path) {
    ynode n;
    n.type = kind::scalar;
    n.text = std::move(text);
    n.where = where;
    n.path = std::move(path);
    return n;
}

ynode ynode::make_map(const source_location& where, std::string path) {
    ynode n;
    n.type = kind::map;
    n.where = where;
    n.path = std::move(path);
    return n;
}

ynode ynode::make_sequence(const source_location& where, std::string path) {
    ynode n;
    n.type = kind::sequence;
    n.where = where;
    n.path = std::move(path);
    return n;
}

std::string join_path(std::string_view parent, std::string_view key) {
    if (parent.empty()) return std::string(key);
    std::string out(parent);
    out += '.';
    out += key;
    return out;
}

std::string index_path(std::string_view parent, std::size_t index) {
    return std::string(parent) + "[" + std::to_string(index) + "]";
}

ynode load_yaml_text(const std::string& text, const std::string& file, const yaml_limits& limits) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::DeepRecursion& e) {
        // yaml-cpp's own guard (about 500 levels) says only "bad file".
        throw config_error(location_of(e.mark, file), "",
                           "document nested more than " + std::to_string(limits.max_depth) +
                               " levels deep");
    } catch (const YAML::ParserException& e) {
        throw config_error(location_of(e.mark, file), "", "YAML syntax error: " + e.msg);
    } catch (const YAML::Exception& e) {
        throw config_error(location_of(e.mark, file), "", "YAML error: " + e.msg);
    }
    source_location top{file, 1, 1};
    converter c(file, limits);
    c.measure(root, "", &top, 0);
    return c.convert(root, "", &top, 0);
}

ynode load_yaml_file(const std::filesystem::path& file) {
    const std::string name = file.string();
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        throw config_error({name, 0, 0}, "", "file not found");
    }
    if (std::filesystem::is_directory(file, ec)) {
        throw config_error({name, 0, 0}, "", "is a directory, expected a YAML file");
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) throw config_error({name, 0, 0}, "", "cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    return load_yaml_text(text.str(), name);
}

void fail(const ynode& at, const std::string& message) {
    throw config_error(at.where, at.path, message);
}

void fail_key(const ymember& at, const std::string& path, const std::string& message) {
    throw config_error(at.key_where, path, message);
}

std::string warning_text(const ynode& at, const std::string& message) {
    return format_config_error(at.where, at.path, message);
}

std::string warning_key_text(const ymember& at, const std::string& path,
                             const std::string& message) {
    return format_config_error(at.key_where, path, message);
}

std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates) {
    return closest_in(word, candidates);
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
    return closest_in(word, candidates);
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
    auto best = closest_match(word, candidates);
    return best ? " (did you mean '" + *best + "'?)" : "";
}

void warn_unknown_keys(const ynode& map, std::span<const std::string_view> known,
                       std::vector<std::string>& warnings) {
    if (!map.is_map()) return;
    for (const auto& m : map.members) {
        if (std::find(known.begin(), known.end(), m.key) != known.end()) continue;
        warnings.push_back(warning_key_text(m, join_path(map.path, m.key),
                                            "unknown key, ignored" + did_you_mean(m.key, known)));
    }
}

source_location position_in_scalar(const ynode& n, std::size_t offset) {
    if (!n.is_scalar() || n.where.line <= 0 || n.where.column <= 0 || offset > n.text.size())
        return n.where;
    std::ifstream in(n.where.file, std::ios::binary);
    std::string line;
    for (int i = 0; i < n.where.line; ++i) {
        if (!std::getline(in, line)) return n.where;
    }
    const auto start = static_cast<std::size_t>(n.where.column - 1);
    if (start >= line.size()) return n.where;
    std::string_view rest = std::string_view(line).substr(start);
    int quote = 0;
    if (n.quoted && (rest.front() == '"' || rest.front() == '\'')) {
        const char q = rest.front();
        rest.remove_prefix(1);
        // The text must be followed by its closing quote on the same line.
        if (rest.size() <= n.text.size() || rest[n.text.size()] != q) return n.where;
        quote = 1;
    }
    if (rest.substr(0, n.text.size()) != n.text) return n.where;
    source_location at = n.where;
    at.column += quote + static_cast<int>(offset);
    return at;
}

const std::string& expect_string(const ynode& n, std::string_view what) {
    if (!n.is_scalar()) fail(n, std::string(what) + " must be a string, got " + describe(n));
    return n.text;
}

const ynode& expect_map(const ynode& n, std::string_view what) {
    if (!n.is_map()) fail(n, std::string(what) + " must be a mapping, got " + describe(n));
    return n;
}

const ynode& expect_sequence(const ynode& n, std::string_view what) {
    if (!n.is_sequence()) fail(n, std::string(what) + " must be a list, got " + describe(n));
    return n;
}

std::int64_t expect_int(const ynode& n, std::int64_t min, std::int64_t max, std::string_view what) {
    const std::string range = " between " + std::to_string(min) + " and " + std::to_string(max);
    if (!n.is_scalar())
        fail(n, std::string(what) + " must be an integer" + range + ", got " + describe(n));
    std::string_view s = n.text;
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec == std::errc::invalid_argument || end != s.data() + s.size()) {
        fail(n, std::string(what) + " must be an integer" + range + ", got '" + n.text + "'");
    }
    if (ec == std::errc::result_out_of_range || value < min || value > max) {
        fail(n, std::string(what) + " must be" + range + ", got " + n.text);
    }
    return value;
}

std::uint64_t expect_uint64(const ynode& n, std::string_view what) {
    if (!n.is_scalar())
        fail(n, std::string(what) + " must be an unsigned integer, got " + describe(n));
    std::string_view s = n.text;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
        fail(n, std::string(what) + " must be an unsigned 64-bit integer, got '" + n.text + "'");
    }
    return value;
}

double expect_double(const ynode& n, std::string_view what) {
    if (!n.is_scalar()) fail(n, std::string(what) + " must be a number, got " + describe(n));
    std::string_view s = n.text;
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
        fail(n, std::string(what) + " must be a number, got '" + n.text + "'");
    }
    return value;
}

std::filesystem::path normal_absolute(const std::filesystem::path& p) {
    std::filesystem::path out = std::filesystem::absolute(p).lexically_normal();
    if (!out.has_filename() && out.has_parent_path() && out != out.root_path()) {
        out = out.parent_path();
    }
    return out;
}

} // namespace coldbrew::config::detail
