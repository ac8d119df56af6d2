// Recursive-descent parser for the distribution text form (grammar in distribution.hpp).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

#include "models/distribution/distribution.hpp"

namespace coldbrew::models {

namespace {

constexpr const char* kind_list =
    "fixed, uniform, normal, lognormal, exponential, percentiles, empirical, mixture";
constexpr const char* duration_hint = "a duration such as 120ms, 1.5s, 5min or 2h";
// Deep enough for any real profile; bounds the recursion on text from the admin API.
constexpr int max_nesting = 32;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ident_start(char c) { return is_alpha(c) || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || is_digit(c); }

class parser {
public:
    explicit parser(std::string_view text) : text_(text) {}

    distribution whole_distribution() {
        distribution d = parse_distribution(0);
        expect_end("the distribution");
        return d;
    }

    double whole_duration() {
        skip_ws();
        double v = value(std::string("expected ") + duration_hint);
        expect_end("the duration");
        return v;
    }

private:
    std::string_view text_;
    std::size_t pos_ = 0;

    [[noreturn]] static void fail(std::size_t at, const std::string& message) {
        throw distribution_error(at, message);
    }

    bool at_end() const { return pos_ >= text_.size(); }

    void skip_ws() {
        while (!at_end() && is_space(text_[pos_])) ++pos_;
    }

    bool consume(char c) {
        skip_ws();
        if (at_end() || text_[pos_] != c) return false;
        ++pos_;
        return true;
    }

    void expect(char c, const std::string& message) {
        if (!consume(c)) fail(pos_, message);
    }

    void expect_end(const char* what) {
        skip_ws();
        if (!at_end())
            fail(pos_, std::string("unexpected '") + text_[pos_] + "' after " + what +
                           " (expected end of text)");
    }

    // Letters, digits, '_' and, when allowed, '.' (for names such as p99.9); no leading digit.
    std::string_view name(bool allow_dot) {
        std::size_t start = pos_;
        if (at_end() || !is_ident_start(text_[pos_])) return {};
        while (!at_end() && (is_ident(text_[pos_]) || (allow_dot && text_[pos_] == '.'))) ++pos_;
        return text_.substr(start, pos_ - start);
    }

    // A decimal number with optional sign, fraction and exponent, at pos_ (no whitespace
    // skipped). Leaves pos_ alone and returns nullopt when no number starts here.
    std::optional<double> number() {
        const std::size_t start = pos_;
        std::size_t i = pos_;
        const std::size_t n = text_.size();
        if (i < n && (text_[i] == '+' || text_[i] == '-')) ++i;
        int digits = 0;
        while (i < n && is_digit(text_[i])) ++i, ++digits;
        if (i < n && text_[i] == '.') {
            ++i;
            while (i < n && is_digit(text_[i])) ++i, ++digits;
        }
        if (digits == 0) return std::nullopt;
        // An 'e' only starts an exponent when digits follow; otherwise it is a unit's letter.
        if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
            std::size_t j = i + 1;
            if (j < n && (text_[j] == '+' || text_[j] == '-')) ++j;
            if (j < n && is_digit(text_[j])) {
                while (j < n && is_digit(text_[j])) ++j;
                i = j;
            }
        }
        const char* first = text_.data() + start;
        const char* last = text_.data() + i;
        if (*first == '+') ++first;  // from_chars takes no '+'
        double v = 0.0;
        auto [ptr, ec] = std::from_chars(first, last, v);
        if (ec != std::errc() || ptr != last || !std::isfinite(v))
            fail(start, "number '" + std::string(text_.substr(start, i - start)) +
                            "' is out of range");
        pos_ = i;
        return v;
    }

    // A plain number (weight, quantile): no unit.
    double plain_number(const std::string& missing_message) {
        skip_ws();
        std::size_t at = pos_;
        auto v = number();
        if (!v) fail(at, missing_message);
        return *v;
    }

    // A duration in ms: number with optional unit ms, s, min or h (bare = ms).
    double value(const std::string& missing_message) {
        skip_ws();
        const std::size_t start = pos_;
        auto v = number();
        if (!v) fail(start, missing_message);
        const std::size_t after_number = pos_;
        skip_ws();
        const std::size_t unit_start = pos_;
        while (!at_end() && is_alpha(text_[pos_])) ++pos_;
        std::string_view unit = text_.substr(unit_start, pos_ - unit_start);
        const bool known = unit == "ms" || unit == "s" || unit == "min" || unit == "h";
        // "120 ms" is a unit, but in "median=1 p99=2" the word after the space is the next
        // token (a missing comma), which the caller reports.
        const bool detached = unit_start != after_number;
        double scale = 1.0;
        if (unit.empty() || (detached && !known)) {
            pos_ = after_number;
        } else if (unit == "ms") {
            scale = 1.0;
        } else if (unit == "s") {
            scale = 1000.0;
        } else if (unit == "min") {
            scale = 60'000.0;
        } else if (unit == "h") {
            scale = 3'600'000.0;
        } else {
            fail(unit_start, "unknown unit '" + std::string(unit) + "' (use ms, s, min or h)");
        }
        double ms = *v * scale;
        if (!std::isfinite(ms)) fail(start, "duration out of range");
        return ms;
    }

    static std::string duration_for(const std::string& what) {
        return "expected a value for " + what + ", " + duration_hint;
    }

    // After one item of a list: ',' continues it, ')' ends it (returns false).
    bool list_continues(const std::string& message) {
        if (consume(',')) return true;
        if (consume(')')) return false;
        fail(pos_, message);
    }

    distribution parse_distribution(int depth) {
        skip_ws();
        const std::size_t start = pos_;
        if (depth >= max_nesting)
            fail(start, "mixture nested too deeply (at most " + std::to_string(max_nesting) +
                            " levels)");
        std::string kind(name(false));
        if (kind.empty())
            fail(start, std::string("expected a distribution (one of ") + kind_list + ")");
        static const char* const kinds[] = {"fixed",       "uniform",   "normal",
                                            "lognormal",   "exponential", "percentiles",
                                            "empirical",   "mixture"};
        if (std::find(std::begin(kinds), std::end(kinds), kind) == std::end(kinds))
            fail(start, "unknown distribution '" + kind + "' (expected one of " + kind_list + ")");
        expect('(', "expected '(' after " + kind);
        try {
            if (kind == "fixed") return parse_fixed();
            if (kind == "uniform") return parse_uniform();
            if (kind == "normal") return parse_normal();
            if (kind == "lognormal") return parse_lognormal();
            if (kind == "exponential") return parse_exponential();
            if (kind == "percentiles") return parse_percentiles();
            if (kind == "empirical") return parse_empirical();
            return parse_mixture(depth);
        } catch (const std::invalid_argument& e) {
            // A range error from the factory: point at the call it came from.
            fail(start, e.what());
        }
    }

    distribution parse_fixed() {
        double v = value(duration_for("fixed"));
        expect(')', "expected ')' after fixed argument");
        return distribution::fixed(v);
    }

    distribution parse_uniform() {
        double lo = value(duration_for("uniform lo"));
        expect(',', "expected ',' between uniform arguments, as in uniform(lo, hi)");
        double hi = value(duration_for("uniform hi"));
        expect(')', "expected ')' after uniform arguments");
        return distribution::uniform(lo, hi);
    }

    // name=value pairs in any order, each name from `names`, all of them required.
    std::vector<double> named_args(const std::string& kind,
                                   const std::vector<std::string>& names) {
        std::string expected;
        for (const auto& n : names) expected += (expected.empty() ? "" : ", ") + n + "=";
        std::vector<std::optional<double>> got(names.size());
        std::size_t count = 0;
        for (;;) {
            skip_ws();
            const std::size_t at = pos_;
            std::string arg(name(true));
            if (arg.empty())
                fail(at, "expected an argument name for " + kind + " (" + expected + ")");
            auto it = std::find(names.begin(), names.end(), arg);
            if (it == names.end())
                fail(at, "unknown argument '" + arg + "' for " + kind + " (expected " + expected +
                             ")");
            auto& slot = got[static_cast<std::size_t>(it - names.begin())];
            if (slot) fail(at, "duplicate argument '" + arg + "' for " + kind);
            expect('=', "expected '=' after argument name '" + arg + "'");
            slot = value(duration_for(kind + " " + arg));
            ++count;
            const std::string message = count == names.size()
                                            ? "expected ')' after " + kind + " arguments"
                                            : "expected ',' or ')' after " + kind + " argument";
            if (!list_continues(message)) break;
        }
        std::vector<double> out;
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!got[i])
                fail(pos_ - 1, kind + ": missing argument '" + names[i] + "' (expected " +
                                   expected + ")");
            out.push_back(*got[i]);
        }
        return out;
    }

    distribution parse_normal() {
        auto a = named_args("normal", {"mean", "stddev"});
        return distribution::normal(a[0], a[1]);
    }

    distribution parse_lognormal() {
        auto a = named_args("lognormal", {"median", "p99"});
        return distribution::lognormal(a[0], a[1]);
    }

    distribution parse_exponential() {
        auto a = named_args("exponential", {"mean"});
        return distribution::exponential(a[0]);
    }

    // "p50" -> 0.5, "p99.9" -> 0.999; nullopt unless 'p' then a number strictly in (0, 100).
    static std::optional<double> percentile_name(std::string_view s) {
        if (s.size() < 2 || s[0] != 'p' || !is_digit(s[1])) return std::nullopt;
        std::size_t dots = 0;
        for (char c : s.substr(1)) {
            if (c == '.')
                ++dots;
            else if (!is_digit(c))
                return std::nullopt;
        }
        if (dots > 1 || s.back() == '.') return std::nullopt;
        double pct = 0.0;
        auto [ptr, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), pct);
        if (ec != std::errc() || ptr != s.data() + s.size() || !(pct > 0.0 && pct < 100.0))
            return std::nullopt;
        return pct / 100.0;
    }

    distribution parse_percentiles() {
        std::vector<std::pair<double, double>> points;
        std::vector<std::string> seen;
        for (;;) {
            skip_ws();
            const std::size_t at = pos_;
            std::string arg(name(true));
            if (arg.empty())
                fail(at, "expected a percentile name such as p50, p99 or p99.9 for percentiles");
            auto q = percentile_name(arg);
            if (!q)
                fail(at, "invalid percentile '" + arg +
                             "' (expected pNN such as p50, p99 or p99.9, between p0 and p100)");
            for (std::size_t i = 0; i < points.size(); ++i)
                if (points[i].first == *q)
                    fail(at, "duplicate percentile '" + arg + "' (same as '" + seen[i] + "')");
            expect('=', "expected '=' after percentile '" + arg + "'");
            double v = value(duration_for("percentiles " + arg));
            points.emplace_back(*q, v);
            seen.push_back(arg);
            if (!list_continues("expected ',' or ')' after percentiles argument")) break;
        }
        // Written in any order; the model wants them by quantile.
        std::sort(points.begin(), points.end());
        return distribution::percentiles(std::move(points));
    }

    distribution parse_empirical() {
        std::vector<std::pair<double, double>> points;
        for (;;) {
            double q = plain_number(
                "expected a quantile in [0, 1] for empirical, as in empirical(0:300s, 1:420s)");
            expect(':', "expected ':' between quantile and value in empirical (q:value)");
            double v = value(duration_for("empirical point"));
            points.emplace_back(q, v);
            if (!list_continues("expected ',' or ')' after empirical point")) break;
        }
        return distribution::empirical(std::move(points));
    }

    distribution parse_mixture(int depth) {
        std::vector<std::pair<double, distribution>> parts;
        for (;;) {
            double w = plain_number(
                "expected a weight for mixture, as in mixture(0.5: fixed(0), 0.5: fixed(10ms))");
            expect(':', "expected ':' after mixture weight (weight: distribution)");
            distribution part = parse_distribution(depth + 1);
            parts.emplace_back(w, std::move(part));
            if (!list_continues("expected ',' or ')' after mixture component")) break;
        }
        return distribution::mixture(std::move(parts));
    }
};

}  // namespace

distribution parse_distribution(std::string_view text) { return parser(text).whole_distribution(); }

double parse_duration_ms(std::string_view text) { return parser(text).whole_duration(); }

}  // namespace coldbrew::models
