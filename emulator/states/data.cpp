// Amazon States Language paths, payload templates, ResultPath, error matching and timestamps.
// See data.hpp for the sources. Paths follow the JsonPath dialect Step Functions uses (Jayway
// JsonPath): a definite path selects one node or fails; an indefinite one (wildcards, slices,
// unions, filters, descendants) selects an array, possibly empty.
#include "emulator/states/data.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <variant>

#include "emulator/states/json_path.hpp"

namespace coldbrew::states {

namespace detail {

namespace {

bool name_char(char c) {
    return c != '.' && c != '[' && c != ']' && c != ' ' && c != '\t' && c != '(' &&
           c != ')' && c != ',' && c != '\'' && c != '"';
}

class path_parser {
public:
    explicit path_parser(std::string_view text) : s_(text) {}

    std::optional<parsed_path> parse() {
        parsed_path p;
        if (!eat('$')) return std::nullopt;
        p.context = eat('$');
        while (i_ < s_.size()) {
            auto st = step();
            if (!st) return std::nullopt;
            p.steps.push_back(std::move(*st));
        }
        return p;
    }

private:
    bool eat(char c) {
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    }

    std::optional<std::string> name() {
        const auto start = i_;
        while (i_ < s_.size() && name_char(s_[i_])) ++i_;
        if (i_ == start) return std::nullopt;
        return std::string(s_.substr(start, i_ - start));
    }

    std::optional<std::string> quoted() {
        if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return std::nullopt;
        const char q = s_[i_++];
        std::string out;
        while (i_ < s_.size() && s_[i_] != q) {
            if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
            out += s_[i_++];
        }
        if (!eat(q)) return std::nullopt;
        return out;
    }

    std::optional<long long> integer() {
        const auto start = i_;
        if (i_ < s_.size() && s_[i_] == '-') ++i_;
        const auto digits = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        if (i_ == digits) {
            i_ = start;
            return std::nullopt;
        }
        return std::stoll(std::string(s_.substr(start, i_ - start)));
    }

    std::optional<path_step> step() {
        if (eat('.')) {
            if (eat('.')) {
                // Descendants: "..name", "..*" or "..[…]".
                path_step inner;
                if (eat('*')) inner.what = path_step::kind::wildcard;
                else if (i_ < s_.size() && s_[i_] == '[') {
                    auto b = bracket();
                    if (!b) return std::nullopt;
                    inner = std::move(*b);
                } else {
                    auto n = name();
                    if (!n) return std::nullopt;
                    inner.what = path_step::kind::child;
                    inner.names = {*n};
                }
                inner.descendant = true;
                return inner;
            }
            path_step st;
            if (eat('*')) {
                st.what = path_step::kind::wildcard;
                return st;
            }
            // "$.abc.['def ghi']": the developer guide writes bracket steps after a dot too.
            if (i_ < s_.size() && s_[i_] == '[') return bracket();
            auto n = name();
            if (!n) return std::nullopt;
            st.what = path_step::kind::child;
            st.names = {*n};
            return st;
        }
        if (i_ < s_.size() && s_[i_] == '[') return bracket();
        return std::nullopt;
    }

    std::optional<path_step> bracket() {
        if (!eat('[')) return std::nullopt;
        skip_ws();
        path_step st;
        if (eat('*')) {
            skip_ws();
            if (!eat(']')) return std::nullopt;
            st.what = path_step::kind::wildcard;
            return st;
        }
        if (eat('?')) {
            skip_ws();
            if (!eat('(')) return std::nullopt;
            // The filter runs to the ')' that closes it, quotes respected.
            const auto start = i_;
            int depth = 1;
            char quote = 0;
            while (i_ < s_.size() && depth > 0) {
                const char c = s_[i_];
                if (quote) {
                    if (c == '\\') ++i_;
                    else if (c == quote) quote = 0;
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '(') {
                    ++depth;
                } else if (c == ')') {
                    --depth;
                }
                ++i_;
            }
            if (depth != 0) return std::nullopt;
            auto f = parse_filter(s_.substr(start, i_ - 1 - start));
            if (!f) return std::nullopt;
            skip_ws();
            if (!eat(']')) return std::nullopt;
            st.what = path_step::kind::filter;
            st.filter = std::make_shared<filter_expr>(std::move(*f));
            return st;
        }
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"')) {
            st.what = path_step::kind::child;
            for (;;) {
                skip_ws();
                auto q = quoted();
                if (!q) return std::nullopt;
                st.names.push_back(*q);
                skip_ws();
                if (eat(']')) return st;
                if (!eat(',')) return std::nullopt;
            }
        }
        // Indexes, a union of indexes, or a slice.
        std::optional<long long> a = integer();
        skip_ws();
        if (eat(':')) {
            st.what = path_step::kind::slice;
            st.slice_start = a;
            skip_ws();
            st.slice_end = integer();
            skip_ws();
            if (eat(':')) {
                skip_ws();
                auto stp = integer();
                if (stp) {
                    if (*stp == 0) return std::nullopt;
                    st.slice_step = *stp;
                }
                skip_ws();
            }
            if (!eat(']')) return std::nullopt;
            return st;
        }
        if (!a) return std::nullopt;
        st.what = path_step::kind::index;
        st.indexes.push_back(*a);
        for (;;) {
            skip_ws();
            if (eat(']')) return st;
            if (!eat(',')) return std::nullopt;
            skip_ws();
            auto b = integer();
            if (!b) return std::nullopt;
            st.indexes.push_back(*b);
        }
    }

    std::string_view s_;
    std::size_t i_ = 0;
};

// ---- filters: "@.price < 10", "@.isbn", "@.a == 'x' && @.b", "!@.c" ----

class filter_parser {
public:
    explicit filter_parser(std::string_view s) : s_(s) {}

    std::optional<filter_expr> parse() {
        auto e = or_expr();
        skip_ws();
        if (!e || i_ != s_.size()) return std::nullopt;
        return e;
    }

private:
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    }
    bool eat(std::string_view t) {
        skip_ws();
        if (s_.substr(i_, t.size()) == t) {
            i_ += t.size();
            return true;
        }
        return false;
    }

    std::optional<filter_expr> or_expr() {
        auto l = and_expr();
        if (!l) return std::nullopt;
        while (eat("||")) {
            auto r = and_expr();
            if (!r) return std::nullopt;
            filter_expr e;
            e.what = filter_expr::kind::or_;
            e.children = {std::move(*l), std::move(*r)};
            l = std::move(e);
        }
        return l;
    }
    std::optional<filter_expr> and_expr() {
        auto l = unary();
        if (!l) return std::nullopt;
        while (eat("&&")) {
            auto r = unary();
            if (!r) return std::nullopt;
            filter_expr e;
            e.what = filter_expr::kind::and_;
            e.children = {std::move(*l), std::move(*r)};
            l = std::move(e);
        }
        return l;
    }
    std::optional<filter_expr> unary() {
        skip_ws();
        if (i_ < s_.size() && s_[i_] == '!' && s_.substr(i_, 2) != "!=") {
            ++i_;
            auto c = unary();
            if (!c) return std::nullopt;
            filter_expr e;
            e.what = filter_expr::kind::not_;
            e.children = {std::move(*c)};
            return e;
        }
        if (eat("(")) {
            auto e = or_expr();
            if (!e || !eat(")")) return std::nullopt;
            return e;
        }
        auto left = operand();
        if (!left) return std::nullopt;
        static const std::string_view ops[] = {"==", "!=", "<=", ">=", "<", ">"};
        for (auto op : ops) {
            if (eat(op)) {
                auto right = operand();
                if (!right) return std::nullopt;
                filter_expr e;
                e.what = filter_expr::kind::compare;
                e.op = std::string(op);
                e.left = std::move(*left);
                e.right = std::move(*right);
                return e;
            }
        }
        if (!left->relative) return std::nullopt;  // a bare literal is no test
        filter_expr e;
        e.what = filter_expr::kind::exists;
        e.left = std::move(*left);
        return e;
    }

    // "@…" (a path relative to the item), "$…" (from the root), or a literal.
    std::optional<filter_operand> operand() {
        skip_ws();
        if (i_ >= s_.size()) return std::nullopt;
        filter_operand o;
        const char c = s_[i_];
        if (c == '@' || c == '$') {
            const auto start = i_;
            ++i_;
            // The path runs until an operator or the end.
            int depth = 0;
            char quote = 0;
            while (i_ < s_.size()) {
                const char d = s_[i_];
                if (quote) {
                    if (d == quote) quote = 0;
                } else if (d == '\'' || d == '"') {
                    quote = d;
                } else if (d == '[') {
                    ++depth;
                } else if (d == ']') {
                    --depth;
                } else if (depth == 0 && (d == ' ' || d == '=' || d == '!' || d == '<' ||
                                          d == '>' || d == '&' || d == '|' || d == ')')) {
                    break;
                }
                ++i_;
            }
            std::string text(s_.substr(start, i_ - start));
            o.relative = c == '@';
            if (o.relative) text[0] = '$';
            auto p = parse_path(text);
            if (!p) return std::nullopt;
            o.path = std::make_shared<parsed_path>(std::move(*p));
            return o;
        }
        if (c == '\'' || c == '"') {
            ++i_;
            std::string out;
            while (i_ < s_.size() && s_[i_] != c) {
                if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
                out += s_[i_++];
            }
            if (i_ >= s_.size()) return std::nullopt;
            ++i_;
            o.literal = out;
            return o;
        }
        // A JSON literal: number, true, false, null.
        const auto start = i_;
        while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != ')' && s_[i_] != '&' &&
               s_[i_] != '|' && s_[i_] != '=' && s_[i_] != '!' && s_[i_] != '<' &&
               s_[i_] != '>')
            ++i_;
        auto lit = json::parse(s_.substr(start, i_ - start), nullptr, false);
        if (lit.is_discarded() || lit.is_object() || lit.is_array()) return std::nullopt;
        o.literal = std::move(lit);
        return o;
    }

    std::string_view s_;
    std::size_t i_ = 0;
};

// ---- evaluation ----

void collect_descendants(const json& v, std::vector<const json*>& out) {
    out.push_back(&v);
    if (v.is_object() || v.is_array())
        for (const auto& c : v) collect_descendants(c, out);
}

void apply_step(const path_step& st, const json& v, const json& root,
                std::vector<const json*>& out);

bool filter_holds(const filter_expr& f, const json& item, const json& root);

std::optional<json> operand_value(const filter_operand& o, const json& item, const json& root) {
    if (!o.path) return o.literal;
    auto nodes = evaluate_path(*o.path, o.relative ? item : root);
    if (nodes.empty()) return std::nullopt;
    if (path_is_definite(*o.path)) return *nodes.front();
    json arr = json::array();
    for (auto* n : nodes) arr.push_back(*n);
    return arr;
}

bool compare(const json& a, const json& b, std::string_view op) {
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    // Ordering only between two numbers or two strings (Jayway: otherwise false).
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        if (op == "<") return x < y;
        if (op == "<=") return x <= y;
        if (op == ">") return x > y;
        return x >= y;
    }
    if (a.is_string() && b.is_string()) {
        const auto& x = a.get_ref<const std::string&>();
        const auto& y = b.get_ref<const std::string&>();
        if (op == "<") return x < y;
        if (op == "<=") return x <= y;
        if (op == ">") return x > y;
        return x >= y;
    }
    return false;
}

bool filter_holds(const filter_expr& f, const json& item, const json& root) {
    switch (f.what) {
    case filter_expr::kind::and_:
        return filter_holds(f.children[0], item, root) && filter_holds(f.children[1], item, root);
    case filter_expr::kind::or_:
        return filter_holds(f.children[0], item, root) || filter_holds(f.children[1], item, root);
    case filter_expr::kind::not_:
        return !filter_holds(f.children[0], item, root);
    case filter_expr::kind::exists:
        return operand_value(f.left, item, root).has_value();
    case filter_expr::kind::compare: {
        auto a = operand_value(f.left, item, root);
        auto b = operand_value(f.right, item, root);
        if (!a || !b) return false;
        return compare(*a, *b, f.op);
    }
    }
    return false;
}

void apply_plain(const path_step& st, const json& v, const json& root,
                 std::vector<const json*>& out) {
    switch (st.what) {
    case path_step::kind::child:
        if (v.is_object())
            for (const auto& n : st.names) {
                auto it = v.find(n);
                if (it != v.end()) out.push_back(&*it);
            }
        break;
    case path_step::kind::wildcard:
        if (v.is_object() || v.is_array())
            for (const auto& c : v) out.push_back(&c);
        break;
    case path_step::kind::index:
        if (v.is_array()) {
            const auto n = static_cast<long long>(v.size());
            for (long long i : st.indexes) {
                if (i < 0) i += n;
                if (i >= 0 && i < n) out.push_back(&v[static_cast<std::size_t>(i)]);
            }
        }
        break;
    case path_step::kind::slice:
        if (v.is_array()) {
            const auto n = static_cast<long long>(v.size());
            const long long step = st.slice_step.value_or(1);
            auto clamp = [n](long long x) { return std::max(0LL, std::min(n, x < 0 ? x + n : x)); };
            if (step > 0) {
                const long long a = clamp(st.slice_start.value_or(0));
                const long long b = clamp(st.slice_end.value_or(n));
                for (long long i = a; i < b; i += step) out.push_back(&v[static_cast<std::size_t>(i)]);
            } else {
                const long long a = st.slice_start ? std::min(n - 1, *st.slice_start < 0 ? *st.slice_start + n : *st.slice_start) : n - 1;
                const long long b = st.slice_end ? (*st.slice_end < 0 ? *st.slice_end + n : *st.slice_end) : -1;
                for (long long i = a; i > b && i >= 0; i += step) out.push_back(&v[static_cast<std::size_t>(i)]);
            }
        }
        break;
    case path_step::kind::filter:
        if (v.is_array()) {
            for (const auto& c : v)
                if (filter_holds(*st.filter, c, root)) out.push_back(&c);
        } else if (v.is_object()) {
            // Jayway applies a filter to an object's own value as well as to arrays.
            for (const auto& c : v)
                if (filter_holds(*st.filter, c, root)) out.push_back(&c);
        }
        break;
    }
}

void apply_step(const path_step& st, const json& v, const json& root,
                std::vector<const json*>& out) {
    if (!st.descendant) {
        apply_plain(st, v, root, out);
        return;
    }
    std::vector<const json*> all;
    collect_descendants(v, all);
    for (auto* d : all) apply_plain(st, *d, root, out);
}

}  // namespace

std::optional<parsed_path> parse_path(std::string_view text) { return path_parser(text).parse(); }

std::optional<filter_expr> parse_filter(std::string_view text) {
    return filter_parser(text).parse();
}

bool path_is_definite(const parsed_path& p) {
    for (const auto& st : p.steps) {
        if (st.descendant || st.what == path_step::kind::wildcard ||
            st.what == path_step::kind::slice || st.what == path_step::kind::filter)
            return false;
        if (st.names.size() > 1 || st.indexes.size() > 1) return false;
    }
    return true;
}

std::vector<const json*> evaluate_path(const parsed_path& p, const json& root) {
    std::vector<const json*> cur{&root};
    for (const auto& st : p.steps) {
        std::vector<const json*> next;
        for (auto* v : cur) apply_step(st, *v, root, next);
        cur = std::move(next);
        if (cur.empty()) break;
    }
    return cur;
}

}  // namespace detail

// ---- paths ---------------------------------------------------------------------------------

bool is_valid_path(std::string_view path, bool reference) {
    auto p = detail::parse_path(path);
    if (!p) return false;
    return !reference || detail::path_is_definite(*p);
}

namespace {

std::string excerpt(const json& v) {
    std::string s = v.dump();
    if (s.size() > 256) s = s.substr(0, 253) + "...";
    return s;
}

}  // namespace

json select(std::string_view path, const data_scope& scope) {
    auto p = detail::parse_path(path);
    if (!p)
        throw runtime_failure("States.Runtime", "Invalid path '" + std::string(path) +
                                                    "': not a JSONPath");
    const json& root = p->context ? scope.context : scope.input;
    auto nodes = detail::evaluate_path(*p, root);
    if (detail::path_is_definite(*p)) {
        if (nodes.empty())
            throw runtime_failure("States.Runtime",
                                  "Invalid path '" + std::string(path) +
                                      "' : No results for path: " + std::string(path) +
                                      " in the input '" + excerpt(root) + "'");
        return *nodes.front();
    }
    json out = json::array();
    for (auto* n : nodes) out.push_back(*n);
    return out;
}

bool present(std::string_view path, const data_scope& scope) {
    auto p = detail::parse_path(path);
    if (!p) return false;
    auto nodes = detail::evaluate_path(*p, p->context ? scope.context : scope.input);
    return !nodes.empty();
}

json apply_path(const std::optional<std::string>& path, const data_scope& scope) {
    if (!path) return json::object();
    return select(*path, scope);
}

json apply_result_path(json input, const std::optional<std::string>& result_path, json result) {
    if (!result_path) return input;
    auto p = detail::parse_path(*result_path);
    if (!p || p->context || !detail::path_is_definite(*p))
        throw runtime_failure("States.ResultPathMatchFailure",
                              "Unable to apply ResultPath '" + result_path.value_or("") +
                                  "': not a Reference Path");
    if (p->steps.empty()) return result;
    auto mismatch = [&](const json& at) {
        return runtime_failure("States.ResultPathMatchFailure",
                               "Unable to apply ResultPath '" + *result_path +
                                   "' to input '" + excerpt(input) + "': " + excerpt(at) +
                                   " is not an object on the way");
    };
    json* cur = &input;
    for (std::size_t i = 0; i < p->steps.size(); ++i) {
        const auto& st = p->steps[i];
        const bool last = i + 1 == p->steps.size();
        if (st.what == detail::path_step::kind::child) {
            if (cur->is_null() && cur != &input) *cur = json::object();
            if (!cur->is_object()) throw mismatch(*cur);
            json& slot = (*cur)[st.names.front()];
            if (last) {
                slot = std::move(result);
                return input;
            }
            if (slot.is_null()) slot = json::object();
            cur = &slot;
        } else {  // a single index into an existing array
            if (!cur->is_array()) throw mismatch(*cur);
            long long idx = st.indexes.front();
            const auto n = static_cast<long long>(cur->size());
            if (idx < 0) idx += n;
            if (idx < 0 || idx >= n) throw mismatch(*cur);
            json& slot = (*cur)[static_cast<std::size_t>(idx)];
            if (last) {
                slot = std::move(result);
                return input;
            }
            cur = &slot;
        }
    }
    return input;
}

// ---- payload templates ------------------------------------------------------------------------

json apply_template(const json& tmpl, const data_scope& scope, intrinsic_env& env) {
    if (tmpl.is_object()) {
        json out = json::object();
        for (const auto& [k, v] : tmpl.items()) {
            if (k.size() > 2 && k.compare(k.size() - 2, 2, ".$") == 0 && v.is_string()) {
                const std::string name = k.substr(0, k.size() - 2);
                const auto& expr = v.get_ref<const std::string&>();
                if (!expr.empty() && expr[0] == '$') {
                    try {
                        out[name] = select(expr, scope);
                    } catch (const runtime_failure& f) {
                        throw runtime_failure(
                            f.error(), "The JSONPath '" + expr + "' specified for the field '" +
                                           k + "' could not be found in the input '" +
                                           excerpt(expr.rfind("$$", 0) == 0 ? scope.context
                                                                           : scope.input) +
                                           "'");
                    }
                } else {
                    out[name] = evaluate_intrinsic(expr, scope, env);
                }
            } else {
                out[k] = apply_template(v, scope, env);
            }
        }
        return out;
    }
    if (tmpl.is_array()) {
        json out = json::array();
        for (const auto& v : tmpl) out.push_back(apply_template(v, scope, env));
        return out;
    }
    return tmpl;
}

// ---- errors ---------------------------------------------------------------------------------

bool error_matches(const std::vector<std::string>& error_equals, std::string_view error) {
    for (const auto& e : error_equals) {
        if (e == error) return true;
        // States.ALL matches any error but the ones that end an execution whatever it says:
        // States.Runtime (the developer guide, "Error names") and States.DataLimitExceeded.
        if (e == "States.ALL" && error != "States.Runtime" && error != "States.DataLimitExceeded")
            return true;
        // "States.TaskFailed … matches any known error name except for States.Timeout."
        if (e == "States.TaskFailed" && error != "States.Timeout" && error != "States.Runtime" &&
            error != "States.DataLimitExceeded")
            return true;
    }
    return false;
}

// ---- timestamps -----------------------------------------------------------------------------

std::optional<double> parse_timestamp_ms(std::string_view t) {
    // RFC 3339: yyyy-mm-ddThh:mm:ss[.fraction](Z|±hh:mm). Step Functions requires the 'T'
    // and an offset or 'Z' ("Timestamp" in the Wait and Choice pages).
    auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
        if (at + n > t.size()) return std::nullopt;
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (t[i] < '0' || t[i] > '9') return std::nullopt;
            v = v * 10 + (t[i] - '0');
        }
        return v;
    };
    auto Y = digits(0, 4), M = digits(5, 2), D = digits(8, 2), h = digits(11, 2),
         m = digits(14, 2), s = digits(17, 2);
    if (!Y || !M || !D || !h || !m || !s || t.size() < 20 || t[4] != '-' || t[7] != '-' ||
        (t[10] != 'T' && t[10] != 't') || t[13] != ':' || t[16] != ':')
        return std::nullopt;
    if (*M < 1 || *M > 12 || *D < 1 || *h > 23 || *m > 59 || *s > 60) return std::nullopt;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (*Y % 4 == 0 && *Y % 100 != 0) || *Y % 400 == 0;
    if (*D > mdays[*M - 1] || (*M == 2 && *D == 29 && !leap)) return std::nullopt;
    std::size_t i = 19;
    double frac = 0;
    if (i < t.size() && t[i] == '.') {
        ++i;
        double scale = 0.1;
        const auto start = i;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
            frac += (t[i] - '0') * scale;
            scale /= 10;
            ++i;
        }
        if (i == start) return std::nullopt;
    }
    double offset_min = 0;
    if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
        ++i;
    } else if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
        auto oh = digits(i + 1, 2), om = digits(i + 4, 2);
        if (!oh || !om || i + 3 >= t.size() || t[i + 3] != ':' || *oh > 23 || *om > 59)
            return std::nullopt;
        offset_min = (*oh * 60 + *om) * (t[i] == '+' ? 1 : -1);
        i += 6;
    } else {
        return std::nullopt;
    }
    if (i != t.size()) return std::nullopt;
    // Days from the civil date (Howard Hinnant's days_from_civil).
    const int y = *M <= 2 ? *Y - 1 : *Y;
    const int era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * static_cast<unsigned>(*M + (*M > 2 ? -3 : 9)) + 2) / 5 +
                         static_cast<unsigned>(*D) - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const double days = static_cast<double>(era) * 146097 + doe - 719468;
    const double secs = days * 86400 + *h * 3600 + *m * 60 + std::min(*s, 59) - offset_min * 60;
    return secs * 1000 + std::round(frac * 1000);
}

std::string format_timestamp_ms(double epoch_ms) {
    const auto total_ms = static_cast<long long>(std::floor(epoch_ms));
    long long secs = total_ms / 1000;
    long long ms = total_ms % 1000;
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    const std::time_t tt = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    return buf;
}

}  // namespace coldbrew::states
