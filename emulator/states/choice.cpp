// Choice rules (ASL "Choice Rules"; the developer guide's "Choice workflow state"): see data.hpp.
#include <cmath>

#include "emulator/states/data.hpp"

namespace coldbrew::states {

namespace {

// StringMatches: '*' matches any run of characters; "\*" is a literal '*' and "\\" a literal
// backslash (developer guide, "Choice Rules": StringMatches).
bool wildcard_match(std::string_view pattern, std::string_view text) {
    std::size_t p = 0, t = 0;
    std::size_t star_p = std::string_view::npos, star_t = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star_p = ++p;
            star_t = t;
            continue;
        }
        if (p < pattern.size()) {
            char want = pattern[p];
            std::size_t width = 1;
            if (want == '\\' && p + 1 < pattern.size()) {
                want = pattern[p + 1];
                width = 2;
            }
            if (want == text[t]) {
                p += width;
                ++t;
                continue;
            }
        }
        if (star_p == std::string_view::npos) return false;
        p = star_p;
        t = ++star_t;
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

json variable_value(const std::string& path, const data_scope& scope, const char* what) {
    if (!present(path, scope))
        throw runtime_failure("States.Runtime",
                              "Invalid path '" + path + "': The choice state's condition path "
                              "references an invalid value (" + std::string(what) + ").");
    return select(path, scope);
}

template <class T>
bool ordered(comparison op, const T& a, const T& b, comparison eq, comparison lt,
             comparison gt, comparison le, comparison ge) {
    if (op == eq) return a == b;
    if (op == lt) return a < b;
    if (op == gt) return a > b;
    if (op == le) return a <= b;
    if (op == ge) return a >= b;
    return false;
}

bool compare(const choice_rule& r, const data_scope& scope) {
    using c = comparison;
    switch (r.op) {
    case c::is_present:
        return present(r.variable, scope) == r.operand.get<bool>();
    case c::is_null:
    case c::is_numeric:
    case c::is_string:
    case c::is_boolean:
    case c::is_timestamp: {
        // A type test on a missing variable is false, not an error (developer guide).
        if (!present(r.variable, scope)) return false;
        const json v = select(r.variable, scope);
        bool is = false;
        switch (r.op) {
        case c::is_null: is = v.is_null(); break;
        case c::is_numeric: is = v.is_number(); break;
        case c::is_string: is = v.is_string(); break;
        case c::is_boolean: is = v.is_boolean(); break;
        default: is = v.is_string() && parse_timestamp_ms(v.get<std::string>()).has_value();
        }
        return is == r.operand.get<bool>();
    }
    default:
        break;
    }
    const json v = variable_value(r.variable, scope, "Variable");
    const json operand = r.operand_is_path
                             ? variable_value(r.operand.get<std::string>(), scope, "operand path")
                             : r.operand;
    if (r.op <= c::string_matches) {
        if (!v.is_string() || !operand.is_string()) return false;
        const auto& a = v.get_ref<const std::string&>();
        const auto& b = operand.get_ref<const std::string&>();
        if (r.op == c::string_matches) return wildcard_match(b, a);
        return ordered(r.op, a, b, c::string_equals, c::string_less_than,
                       c::string_greater_than, c::string_less_than_equals,
                       c::string_greater_than_equals);
    }
    if (r.op <= c::numeric_greater_than_equals) {
        if (!v.is_number() || !operand.is_number()) return false;
        return ordered(r.op, v.get<double>(), operand.get<double>(), c::numeric_equals,
                       c::numeric_less_than, c::numeric_greater_than,
                       c::numeric_less_than_equals, c::numeric_greater_than_equals);
    }
    if (r.op == c::boolean_equals) {
        if (!v.is_boolean() || !operand.is_boolean()) return false;
        return v.get<bool>() == operand.get<bool>();
    }
    // Timestamps compare as instants, whatever offset each is written in.
    if (!v.is_string() || !operand.is_string()) return false;
    const auto a = parse_timestamp_ms(v.get<std::string>());
    const auto b = parse_timestamp_ms(operand.get<std::string>());
    if (!a || !b) return false;
    return ordered(r.op, *a, *b, c::timestamp_equals, c::timestamp_less_than,
                   c::timestamp_greater_than, c::timestamp_less_than_equals,
                   c::timestamp_greater_than_equals);
}

}  // namespace

bool evaluate(const choice_rule& rule, const data_scope& scope) {
    switch (rule.form) {
    case choice_rule::shape::and_:
        for (const auto& c : rule.children)
            if (!evaluate(c, scope)) return false;
        return true;
    case choice_rule::shape::or_:
        for (const auto& c : rule.children)
            if (evaluate(c, scope)) return true;
        return false;
    case choice_rule::shape::not_:
        return !evaluate(rule.children.at(0), scope);
    case choice_rule::shape::comparison:
        return compare(rule, scope);
    }
    return false;
}

std::string choose(const state& choice, const data_scope& scope) {
    for (const auto& r : choice.choices)
        if (evaluate(r, scope)) return r.next;
    if (!choice.default_next.empty()) return choice.default_next;
    throw runtime_failure("States.NoChoiceMatched",
                          "No Choice Rule matched and no Default is specified in the Choice "
                          "state '" + choice.name + "'.");
}

}  // namespace coldbrew::states
