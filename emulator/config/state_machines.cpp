#include "emulator/config/state_machines.hpp"

#include "emulator/schedules/schedules.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string_view>

namespace coldbrew::config::detail {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

nlohmann::json scalar_json(const ynode& n) {
    if (n.quoted) return n.text;
    const std::string l = lower(n.text);
    if (l.empty() || l == "null" || l == "~") return nullptr;
    if (l == "true") return true;
    if (l == "false") return false;
    // A number only when JSON reads the whole text as one ("1", "-2.5", "1e3"; not "0x1F",
    // "1_000" or ".5", which stay strings).
    const char c = n.text.front();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
        auto j = nlohmann::json::parse(n.text, nullptr, false);
        if (j.is_number()) return j;
    }
    return n.text;
}

void replace_placeholders(std::string& s, const std::map<std::string, std::string>& subs) {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto open = s.find("${", i);
        if (open == std::string::npos) break;
        const auto close = s.find('}', open + 2);
        if (close == std::string::npos) break;
        out.append(s, i, open - i);
        const auto it = subs.find(s.substr(open + 2, close - open - 2));
        if (it != subs.end()) {
            out += it->second;
        } else {
            out.append(s, open, close - open + 1);
        }
        i = close + 1;
    }
    if (i == 0) return;
    out.append(s, i, std::string::npos);
    s = std::move(out);
}

void walk_states(const nlohmann::json& states, state_machine& m,
                 const std::vector<function>& functions);

void walk_state(const nlohmann::json& st, state_machine& m, const std::vector<function>& functions) {
    if (!st.is_object()) return;
    auto note = [&](const nlohmann::json& v) {
        if (!v.is_string()) return;
        if (const function* fn = function_named(v.get<std::string>(), functions))
            m.function_arns[v.get<std::string>()] = fn->name;
    };
    if (auto r = st.find("Resource"); r != st.end()) note(*r);
    if (auto p = st.find("Parameters"); p != st.end() && p->is_object()) {
        if (auto f = p->find("FunctionName"); f != p->end()) note(*f);
    }
    // JSONata states take Arguments where JSONPath ones take Parameters.
    if (auto p = st.find("Arguments"); p != st.end() && p->is_object()) {
        if (auto f = p->find("FunctionName"); f != p->end()) note(*f);
    }
    if (auto b = st.find("Branches"); b != st.end() && b->is_array()) {
        for (const auto& branch : *b)
            if (branch.is_object() && branch.contains("States")) walk_states(branch["States"], m, functions);
    }
    for (const char* key : {"Iterator", "ItemProcessor"}) {
        if (auto it = st.find(key); it != st.end() && it->is_object() && it->contains("States"))
            walk_states((*it)["States"], m, functions);
    }
}

void walk_states(const nlohmann::json& states, state_machine& m,
                 const std::vector<function>& functions) {
    if (!states.is_object()) return;
    for (const auto& [name, st] : states.items()) walk_state(st, m, functions);
}

}  // namespace

nlohmann::json to_json(const ynode& n, const std::string& what) {
    switch (n.type) {
    case ynode::kind::null:
    case ynode::kind::no_value: return nullptr;
    case ynode::kind::scalar: return scalar_json(n);
    case ynode::kind::unresolved: fail(n, what + " cannot be resolved locally: " + n.text);
    case ynode::kind::sequence: {
        auto a = nlohmann::json::array();
        for (const auto& item : n.items) a.push_back(to_json(item, what));
        return a;
    }
    case ynode::kind::map: {
        auto o = nlohmann::json::object();
        for (const auto& m : n.members) o[m.key] = to_json(m.value, what);
        return o;
    }
    }
    return nullptr;
}

nlohmann::json parse_definition_text(const std::string& text, const ynode& at,
                                     const std::string& what) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        fail(at, what + " is not valid JSON: " + e.what());
    }
}

nlohmann::json load_definition_file(const std::filesystem::path& file, const ynode& at) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        fail(at, "definition file " + file.string() + " does not exist");
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof()) fail(at, "definition file " + file.string() + " cannot be read");
    if (lower(file.extension().string()) == ".json") {
        try {
            return nlohmann::json::parse(text.str());
        } catch (const nlohmann::json::parse_error& e) {
            // e.byte is the 1-based offset where parsing stopped: point at its line.
            const std::string& t = text.str();
            const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, t.size());
            int line = 1, column = 1;
            for (std::size_t i = 0; i < end; ++i) {
                if (t[i] == '\n') {
                    ++line;
                    column = 1;
                } else {
                    ++column;
                }
            }
            throw config_error({file.string(), line, column}, "",
                               "state machine definition is not valid JSON: " +
                                   std::string(e.what()));
        } catch (const nlohmann::json::exception& e) {  // a number too large for a double
            throw config_error({file.string(), 0, 0}, "",
                               "state machine definition is not valid JSON: " +
                                   std::string(e.what()));
        }
    }
    // YAML errors carry the file's own line and column.
    const ynode doc = load_yaml_text(text.str(), file.string());
    return to_json(doc, "the definition");
}

void expect_definition_object(const nlohmann::json& definition, const ynode& at,
                              const std::string& what) {
    if (!definition.is_object()) {
        fail(at, what + " must be a JSON object (an Amazon States Language document with "
                        "StartAt and States), got " + std::string(definition.type_name()));
    }
}

void apply_substitutions(nlohmann::json& j, const std::map<std::string, std::string>& subs) {
    if (subs.empty()) return;
    if (j.is_string()) {
        replace_placeholders(j.get_ref<std::string&>(), subs);
    } else if (j.is_array() || j.is_object()) {
        for (auto& v : j) apply_substitutions(v, subs);
    }
}

const function* function_named(const std::string& text, const std::vector<function>& functions) {
    std::string name = text;
    if (text.rfind("arn:", 0) == 0) {
        // arn : partition : lambda : region : account : function : name [: qualifier]
        std::vector<std::string> parts;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= text.size(); ++i) {
            if (i == text.size() || text[i] == ':') {
                parts.push_back(text.substr(start, i - start));
                start = i + 1;
            }
        }
        if (parts.size() < 7 || parts.size() > 8 || parts[2] != "lambda" || parts[5] != "function")
            return nullptr;
        name = parts[6];
    } else if (text.find(':') != std::string::npos) {
        // name:qualifier, as FunctionName accepts
        name = text.substr(0, text.find(':'));
    }
    if (name.empty()) return nullptr;
    for (const auto& fn : functions)
        if (fn.function_name == name) return &fn;
    for (const auto& fn : functions)
        if (fn.name == name) return &fn;
    return nullptr;
}

void collect_function_arns(state_machine& m, const std::vector<function>& functions) {
    if (m.definition.is_object() && m.definition.contains("States"))
        walk_states(m.definition["States"], m, functions);
}

void check_schedule_expression(const std::string& e, const ynode& at) {
    // The runner's own parser, so what loads is what fires (emulator/schedules).
    if (auto r = schedules::parse_schedule(e); !r) fail(at, r.error);
}

void check_schedule_timezone(const std::string& timezone, const ynode& at) {
    if (auto z = schedules::load_time_zone(timezone); !z) fail(at, z.error);
}

}  // namespace coldbrew::config::detail
