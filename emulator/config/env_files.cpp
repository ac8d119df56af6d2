#include "emulator/config/env_files.hpp"

#include "emulator/config/yaml_tree.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

namespace coldbrew::config {

namespace {

bool is_key_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }
bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\r'; }

std::string trim(std::string s) {
    std::size_t b = 0, e = s.size();
    while (b < e && is_space(s[b])) ++b;
    while (e > b && is_space(s[e - 1])) --e;
    return s.substr(b, e - b);
}

// True when text[from, end of line) is blanks, optionally followed by a '#' comment.
bool rest_is_comment(const std::string& text, std::size_t from) {
    while (from < text.size() && is_blank(text[from])) ++from;
    return from >= text.size() || text[from] == '\n' || text[from] == '#';
}

std::size_t end_of_line(const std::string& text, std::size_t from) {
    auto nl = text.find('\n', from);
    return nl == std::string::npos ? text.size() : nl;
}

std::string read_file_text(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw config_error({file.string(), 0, 0}, "", "cannot read the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// 1-based line and column of byte `offset` of `text`.
source_location position_of(const std::string& text, std::size_t offset, const std::string& file) {
    source_location at{file, 1, 1};
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++at.line;
            at.column = 1;
        } else {
            ++at.column;
        }
    }
    return at;
}

// SAM CLI hands every value to the runtime as a string (env_vars.py `_stringify_value`).
std::string stringify(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();  // 3 → "3", 1.5 → "1.5", 100.0 → "100.0", as str() does
    return "";                          // null, arrays, objects: unresolved intrinsics to SAM CLI
}

}  // namespace

std::vector<dotenv_entry> parse_dotenv(const std::string& raw) {
    // dotenv normalizes line endings before matching.
    std::string text;
    text.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;
        text += raw[i];
    }
    std::vector<dotenv_entry> out;
    std::size_t pos = 0;
    int line = 1;
    auto line_at = [&text](std::size_t from, std::size_t to, int l) {
        for (std::size_t i = from; i < to; ++i)
            if (text[i] == '\n') ++l;
        return l;
    };
    while (pos < text.size()) {
        const std::size_t line_start = pos;
        const std::size_t eol = end_of_line(text, pos);
        auto next_line = [&] {
            line = line_at(line_start, eol, line) + (eol < text.size() ? 1 : 0);
            pos = eol + 1;
        };
        std::size_t p = pos;
        while (p < eol && is_blank(text[p])) ++p;
        if (text.compare(p, 6, "export") == 0 && p + 6 < eol && is_blank(text[p + 6])) {
            std::size_t q = p + 6;
            while (q < eol && is_blank(text[q])) ++q;
            // "export" alone before '=' is a key named export.
            if (q < eol && is_key_char(text[q])) p = q;
        }
        const std::size_t key_start = p;
        while (p < eol && is_key_char(text[p])) ++p;
        std::string key = text.substr(key_start, p - key_start);
        const std::size_t key_end = p;
        while (p < eol && is_blank(text[p])) ++p;
        bool separated = false;
        if (!key.empty() && p < eol && text[p] == '=') {
            separated = true;
            ++p;
        } else if (!key.empty() && key_end < eol && text[key_end] == ':' && key_end + 1 < eol &&
                   is_blank(text[key_end + 1])) {
            // The YAML-like "KEY: value" form: the colon right after the key, then a blank.
            separated = true;
            p = key_end + 1;
        }
        if (!separated) {  // not an assignment: dotenv skips it
            next_line();
            continue;
        }
        std::size_t v = p;
        while (v < eol && is_blank(text[v])) ++v;
        std::string value;
        std::size_t resume = eol;
        bool quoted_ok = false;
        if (v < eol && (text[v] == '"' || text[v] == '\'' || text[v] == '`')) {
            // A quoted value may run over lines; a backslash before the quote keeps it open.
            const char q = text[v];
            std::size_t c = v + 1;
            while (c < text.size() && text[c] != q) c += (text[c] == '\\' && c + 1 < text.size() && text[c + 1] == q) ? 2 : 1;
            if (c < text.size() && rest_is_comment(text, c + 1)) {
                value = text.substr(v + 1, c - v - 1);
                if (q == '"') {
                    std::string unescaped;
                    for (std::size_t i = 0; i < value.size(); ++i) {
                        if (value[i] == '\\' && i + 1 < value.size() && (value[i + 1] == 'n' || value[i + 1] == 'r')) {
                            unescaped += value[i + 1] == 'n' ? '\n' : '\r';
                            ++i;
                        } else {
                            unescaped += value[i];
                        }
                    }
                    value = std::move(unescaped);
                }
                resume = end_of_line(text, c + 1);
                quoted_ok = true;
            }
        }
        if (!quoted_ok) {
            // Unquoted (or a quote that does not close well): up to '#' or the end of the line,
            // trimmed; surrounding quotes of one kind are still removed, as dotenv does.
            std::size_t e = v;
            while (e < eol && text[e] != '#') ++e;
            value = trim(text.substr(v, e - v));
            if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'' || value[0] == '`') &&
                value.back() == value[0]) {
                const bool dq = value[0] == '"';
                value = value.substr(1, value.size() - 2);
                if (dq) {
                    std::string u;
                    for (std::size_t i = 0; i < value.size(); ++i) {
                        if (value[i] == '\\' && i + 1 < value.size() && (value[i + 1] == 'n' || value[i + 1] == 'r')) {
                            u += value[i + 1] == 'n' ? '\n' : '\r';
                            ++i;
                        } else {
                            u += value[i];
                        }
                    }
                    value = std::move(u);
                }
            }
        }
        out.push_back({std::move(key), std::move(value), line});
        line = line_at(line_start, resume, line) + (resume < text.size() ? 1 : 0);
        pos = resume + 1;
    }
    return out;
}

std::map<std::string, std::string> expand_dotenv(const std::vector<dotenv_entry>& entries,
                                                 const std::map<std::string, std::string>& environment) {
    std::map<std::string, std::string> parsed;
    for (const auto& e : entries) parsed[e.key] = e.value;

    // Recursion through the file's own values is bounded: a loop (A=$B, B=$A) ends as "".
    std::function<std::string(const std::string&, int)> interpolate = [&](const std::string& value,
                                                                           int depth) -> std::string {
        std::string out;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const char c = value[i];
            if (c == '\\' && i + 1 < value.size() && value[i + 1] == '$') {
                out += '$';
                ++i;
                continue;
            }
            if (c != '$') {
                out += c;
                continue;
            }
            std::size_t j = i + 1;
            const bool braced = j < value.size() && value[j] == '{';
            if (braced) ++j;
            std::size_t name_start = j;
            while (j < value.size() &&
                   (std::isalnum(static_cast<unsigned char>(value[j])) || value[j] == '_'))
                ++j;
            std::string name = value.substr(name_start, j - name_start);
            std::optional<std::string> fallback;
            if (braced) {
                if (j + 1 < value.size() && value[j] == ':' && value[j + 1] == '-') {
                    auto close = value.find('}', j + 2);
                    if (close == std::string::npos) close = value.size();
                    fallback = value.substr(j + 2, close - j - 2);
                    j = close;
                }
                if (j < value.size() && value[j] == '}') ++j;
            }
            if (name.empty() && !braced) {
                out += '$';
                continue;
            }
            std::string replacement;
            if (auto it = environment.find(name); it != environment.end()) {
                replacement = it->second;
            } else if (auto p = parsed.find(name); p != parsed.end() && depth < 16) {
                replacement = interpolate(p->second, depth + 1);
            }
            if (replacement.empty() && fallback) replacement = interpolate(*fallback, depth + 1);
            out += replacement;
            i = j - 1;
        }
        return out;
    };

    std::map<std::string, std::string> result;
    for (const auto& [key, value] : parsed) {
        if (auto it = environment.find(key); it != environment.end()) {
            result[key] = it->second;
            continue;
        }
        result[key] = interpolate(value, 0);
    }
    return result;
}

dotenv_load load_serverless_dotenv(const std::filesystem::path& dir, const std::string& stage,
                                   const std::map<std::string, std::string>& environment) {
    dotenv_load out;
    std::error_code ec;
    for (const auto& name : {".env." + stage, std::string(".env")}) {
        const auto file = dir / name;
        if (!std::filesystem::exists(file, ec)) continue;
        if (!std::filesystem::is_regular_file(file, ec))
            throw config_error({file.string(), 0, 0}, "useDotenv", "is not a regular file");
        out.file = file;
        for (auto& [k, v] : expand_dotenv(parse_dotenv(read_file_text(file)), environment))
            if (!environment.count(k)) out.added.emplace(k, std::move(v));
        break;
    }
    return out;
}

env_vars_file parse_env_vars(const std::string& text, const std::filesystem::path& file) {
    env_vars_file out;
    out.file = file;
    const std::string name = file.string();
    std::size_t first = 0;
    while (first < text.size() && is_space(text[first])) ++first;
    if (first == text.size() || text[first] != '{') {
        if (first < text.size() && text[first] == '[')
            throw config_error(position_of(text, first, name), "",
                               "an --env-vars file is a JSON object, not an array");
        env_vars_file::section params{"Parameters", {name, 0, 0}, {}};
        for (auto& e : parse_dotenv(text)) {
            std::erase_if(params.variables, [&e](const auto& v) { return v.name == e.key; });
            params.variables.push_back({e.key, e.value, {name, e.line, 1}});
        }
        if (params.variables.empty())
            throw config_error({name, 0, 0}, "",
                               "neither JSON nor a .env file: no KEY=value line found");
        out.sections.push_back(std::move(params));
        return out;
    }

    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based: the byte the parser stopped at.
        const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
        std::string message = e.what();
        // Keep the parser's own reason, not its "[json.exception.parse_error.101] …" prefix.
        if (auto colon = message.find("syntax error"); colon != std::string::npos)
            message = message.substr(colon);
        throw config_error(position_of(text, at, name), "", "not valid JSON: " + message);
    } catch (const nlohmann::json::exception& e) {
        // A number too large for a double (out_of_range.406): no position is given.
        std::string message = e.what();
        if (auto close = message.find("] "); close != std::string::npos) message.erase(0, close + 2);
        throw config_error({name, 0, 0}, "", "not valid JSON: " + message);
    }
    // Positions come from reading the same text as YAML (JSON is YAML 1.2); a file yaml-cpp
    // cannot read gives positions at the file only.
    std::optional<detail::ynode> tree;
    try {
        tree = detail::load_yaml_text(text, name);
    } catch (const config_error&) {
    }
    auto key_where = [&](const detail::ynode* map, const std::string& key) -> source_location {
        if (map && map->is_map())
            if (const auto* m = map->find_member(key)) return m->key_where;
        return {name, 0, 0};
    };
    const detail::ynode* root = tree ? &*tree : nullptr;
    if (!doc.is_object()) throw config_error(position_of(text, first, name), "", "must be a JSON object");
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        const source_location where = key_where(root, it.key());
        if (!it.value().is_object())
            throw config_error(where, it.key(),
                               "must be an object of variable names and values (SAM CLI: "
                               "\"Environment variables … in incorrect format\")");
        env_vars_file::section sec{it.key(), where, {}};
        const detail::ynode* sec_node = root ? root->find(it.key()) : nullptr;
        for (auto v = it.value().begin(); v != it.value().end(); ++v)
            sec.variables.push_back({v.key(), stringify(v.value()), key_where(sec_node, v.key())});
        out.sections.push_back(std::move(sec));
    }
    return out;
}

env_vars_file read_env_vars(const std::filesystem::path& file) {
    const auto absolute = detail::normal_absolute(file);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(absolute, ec))
        throw config_error({absolute.string(), 0, 0}, "", "--env-vars: no such file");
    return parse_env_vars(read_file_text(absolute), absolute);
}

void apply_env_vars(const env_vars_file& file, stack& s) {
    const env_vars_file::section* parameters = nullptr;
    for (const auto& sec : file.sections)
        if (sec.key == "Parameters") parameters = &sec;

    auto named = [&file](const std::string& key) -> const env_vars_file::section* {
        for (const auto& sec : file.sections)
            if (sec.key == key && !sec.variables.empty()) return &sec;
        return nullptr;
    };
    std::set<const env_vars_file::section*> used;
    std::set<std::string> parameters_used;
    auto warn = [&s](const source_location& at, const std::string& path, const std::string& m) {
        s.warnings.push_back(format_config_error(at, path, m));
    };
    for (auto& fn : s.functions) {
        // SAM CLI: logical id, then the function's name (first non-empty section wins).
        const env_vars_file::section* own = named(fn.name);
        if (!own && fn.function_name != fn.name) own = named(fn.function_name);
        if (own) used.insert(own);
        if (parameters)
            for (const auto& v : parameters->variables)
                if (auto it = fn.environment.find(v.name); it != fn.environment.end()) {
                    it->second = v.value;
                    parameters_used.insert(v.name);
                }
        if (!own) continue;
        for (const auto& v : own->variables) {
            if (auto it = fn.environment.find(v.name); it != fn.environment.end()) {
                it->second = v.value;
            } else {
                warn(v.where, own->key + "." + v.name,
                     "function " + fn.name + " declares no variable " + v.name +
                         "; ignored, as sam local ignores it");
            }
        }
    }
    if (parameters)
        for (const auto& v : parameters->variables)
            if (!parameters_used.count(v.name))
                warn(v.where, "Parameters." + v.name,
                     "no function declares " + v.name + "; ignored, as sam local ignores it");
    for (const auto& sec : file.sections) {
        if (&sec == parameters || used.count(&sec) || sec.variables.empty()) continue;
        warn(sec.where, sec.key, "names no function of the template (logical id or FunctionName); ignored");
    }
}

}  // namespace coldbrew::config
