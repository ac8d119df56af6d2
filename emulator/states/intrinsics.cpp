// Intrinsic functions of JSONPath states. Source: the Step Functions developer guide,
// "Intrinsic functions for JSONPath states" (docs.aws.amazon.com/step-functions/latest/dg/
// intrinsic-functions.html): argument counts and types, the 1,000-item limit of ArrayRange,
// the 10,000-character limit of Base64Encode/Base64Decode/Hash, shallow-only JsonMerge,
// MathRandom's inclusive start and exclusive end, MathAdd's 32-bit range, non-integer
// arguments rounded to the nearest integer, at most 10 nested calls, and the escapes \' \{ \}
// and \\ in string literals.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <openssl/evp.h>

#include "emulator/codec/base64.hpp"
#include "emulator/states/data.hpp"
#include "emulator/states/json_path.hpp"

namespace coldbrew::states {

namespace {

[[noreturn]] void intrinsic_error(const std::string& message) {
    throw runtime_failure("States.IntrinsicFailure", message);
}

// An argument as written: a literal, a Path, or a nested call.
struct call;
struct argument {
    enum class kind { literal, path, nested };
    kind what = kind::literal;
    json literal;
    std::string path;
    std::shared_ptr<call> nested;
};

struct call {
    std::string name;  // "States.Format"
    std::vector<argument> args;
};

constexpr int max_nesting = 10;

class call_parser {
public:
    explicit call_parser(std::string_view s) : s_(s) {}

    // Throws intrinsic failures with the position of the problem.
    call parse() {
        skip_ws();
        call c = parse_call(1);
        skip_ws();
        if (i_ != s_.size()) bad("unexpected text after the closing parenthesis");
        return c;
    }

private:
    [[noreturn]] void bad(const std::string& why) {
        intrinsic_error("Invalid intrinsic function '" + std::string(s_) + "': " + why +
                        " (at character " + std::to_string(i_) + ")");
    }
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
    }

    call parse_call(int depth) {
        if (depth > max_nesting) bad("more than 10 nested intrinsic functions");
        const auto start = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) ||
                                  s_[i_] == '.'))
            ++i_;
        call c;
        c.name = std::string(s_.substr(start, i_ - start));
        if (c.name.rfind("States.", 0) != 0) bad("a function name starts with 'States.'");
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != '(') bad("'(' expected after " + c.name);
        ++i_;
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ')') {
            ++i_;
            return c;
        }
        for (;;) {
            skip_ws();
            c.args.push_back(parse_argument(depth));
            skip_ws();
            if (i_ < s_.size() && s_[i_] == ',') {
                ++i_;
                continue;
            }
            if (i_ < s_.size() && s_[i_] == ')') {
                ++i_;
                return c;
            }
            bad("',' or ')' expected");
        }
    }

    argument parse_argument(int depth) {
        argument a;
        if (i_ >= s_.size()) bad("an argument expected");
        const char ch = s_[i_];
        if (ch == '\'') {
            ++i_;
            std::string out;
            for (;;) {
                if (i_ >= s_.size()) bad("unterminated string literal");
                const char c = s_[i_];
                if (c == '\\') {
                    if (i_ + 1 >= s_.size()) bad("an open escape backslash");
                    const char n = s_[i_ + 1];
                    if (n != '\'' && n != '{' && n != '}' && n != '\\')
                        bad(std::string("'\\") + n + "' is not an escape (\\' \\{ \\} \\\\)");
                    // \{ and \} stay escaped so States.Format can tell them from "{}".
                    if (n == '{' || n == '}') out += '\\';
                    out += n;
                    i_ += 2;
                    continue;
                }
                if (c == '\'') {
                    ++i_;
                    break;
                }
                out += c;
                ++i_;
            }
            a.literal = out;
            return a;
        }
        if (ch == '$') {
            // The path runs to the ',' or ')' that ends the argument (brackets and quotes
            // inside it respected).
            const auto start = i_;
            int depth_b = 0;
            char quote = 0;
            while (i_ < s_.size()) {
                const char c = s_[i_];
                if (quote) {
                    if (c == quote) quote = 0;
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '[' || c == '(') {
                    ++depth_b;
                } else if (c == ']' || (c == ')' && depth_b > 0)) {
                    --depth_b;
                } else if (depth_b == 0 && (c == ',' || c == ')')) {
                    break;
                }
                ++i_;
            }
            std::string p(s_.substr(start, i_ - start));
            while (!p.empty() && (p.back() == ' ' || p.back() == '\t')) p.pop_back();
            if (!is_valid_path(p, false)) bad("'" + p + "' is not a valid Path");
            a.what = argument::kind::path;
            a.path = p;
            return a;
        }
        if (s_.substr(i_, 7) == "States.") {
            a.what = argument::kind::nested;
            a.nested = std::make_shared<call>(parse_call(depth + 1));
            return a;
        }
        // A number, true, false or null.
        const auto start = i_;
        while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ')' && s_[i_] != ' ') ++i_;
        auto lit = json::parse(s_.substr(start, i_ - start), nullptr, false);
        if (lit.is_discarded() || lit.is_object() || lit.is_array() || lit.is_string())
            bad("'" + std::string(s_.substr(start, i_ - start)) + "' is not a valid argument");
        a.literal = std::move(lit);
        return a;
    }

    std::string_view s_;
    std::size_t i_ = 0;
};

// A string literal keeps "\{" and "\}" escaped until States.Format has seen it; everywhere
// else they mean the plain characters.
std::string unescape_braces(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '{' || s[i + 1] == '}')) continue;
        out += s[i];
    }
    return out;
}

struct evaluator {
    const data_scope& scope;
    intrinsic_env& env;

    json value(const argument& a, bool raw_literal = false) {
        switch (a.what) {
        case argument::kind::literal:
            if (a.literal.is_string() && !raw_literal)
                return unescape_braces(a.literal.get<std::string>());
            return a.literal;
        case argument::kind::path:
            try {
                return select(a.path, scope);
            } catch (const runtime_failure&) {
                intrinsic_error("The JSONPath '" + a.path +
                                "' of an intrinsic function argument could not be found");
            }
        case argument::kind::nested:
            return run(*a.nested);
        }
        return nullptr;
    }

    static void arity(const call& c, std::size_t lo, std::size_t hi) {
        if (c.args.size() < lo || c.args.size() > hi) {
            std::string want = lo == hi ? std::to_string(lo)
                                        : std::to_string(lo) + " to " + std::to_string(hi);
            intrinsic_error(c.name + " takes " + want + " argument" + (hi == 1 ? "" : "s") +
                            ", not " + std::to_string(c.args.size()));
        }
    }
    static const json& need_array(const call& c, const json& v, int n) {
        if (!v.is_array())
            intrinsic_error(c.name + ": argument " + std::to_string(n) + " must be an array, not " +
                            v.dump());
        return v;
    }
    static std::string need_string(const call& c, const json& v, int n) {
        if (!v.is_string())
            intrinsic_error(c.name + ": argument " + std::to_string(n) + " must be a string, not " +
                            v.dump());
        return v.get<std::string>();
    }
    // Non-integer numbers are rounded to the nearest integer (developer guide).
    static long long need_integer(const call& c, const json& v, int n) {
        if (!v.is_number())
            intrinsic_error(c.name + ": argument " + std::to_string(n) + " must be a number, not " +
                            v.dump());
        const double d = std::round(v.get<double>());
        if (!std::isfinite(d) || std::fabs(d) > 9.0e15)
            intrinsic_error(c.name + ": argument " + std::to_string(n) + " is out of range");
        return static_cast<long long>(d);
    }

    json run(const call& c) {
        const std::string& f = c.name;
        if (f == "States.Format") return format(c);
        if (f == "States.StringToJson") {
            arity(c, 1, 1);
            const std::string s = need_string(c, value(c.args[0]), 1);
            auto parsed = json::parse(s, nullptr, false);
            if (parsed.is_discarded())
                intrinsic_error("States.StringToJson: the argument is not JSON text: " + s);
            return parsed;
        }
        if (f == "States.JsonToString") {
            arity(c, 1, 1);
            return value(c.args[0]).dump();
        }
        if (f == "States.Array") {
            json out = json::array();
            for (const auto& a : c.args) out.push_back(value(a));
            return out;
        }
        if (f == "States.ArrayPartition") {
            arity(c, 2, 2);
            const json arr = value(c.args[0]);
            need_array(c, arr, 1);
            const long long size = need_integer(c, value(c.args[1]), 2);
            if (size <= 0) intrinsic_error("States.ArrayPartition: the chunk size must be positive");
            json out = json::array();
            for (std::size_t i = 0; i < arr.size(); i += static_cast<std::size_t>(size)) {
                json chunk = json::array();
                for (std::size_t j = i; j < std::min(arr.size(), i + static_cast<std::size_t>(size)); ++j)
                    chunk.push_back(arr[j]);
                out.push_back(std::move(chunk));
            }
            return out;
        }
        if (f == "States.ArrayContains") {
            arity(c, 2, 2);
            const json arr = value(c.args[0]);
            need_array(c, arr, 1);
            const json want = value(c.args[1]);
            return std::find(arr.begin(), arr.end(), want) != arr.end();
        }
        if (f == "States.ArrayRange") {
            arity(c, 3, 3);
            const long long a = need_integer(c, value(c.args[0]), 1);
            const long long b = need_integer(c, value(c.args[1]), 2);
            const long long step = need_integer(c, value(c.args[2]), 3);
            if (step == 0) intrinsic_error("States.ArrayRange: the step must not be 0");
            json out = json::array();
            for (long long x = a; step > 0 ? x <= b : x >= b; x += step) {
                if (out.size() == 1000)
                    intrinsic_error("States.ArrayRange: the array would have more than 1000 items");
                out.push_back(x);
            }
            return out;
        }
        if (f == "States.ArrayGetItem") {
            arity(c, 2, 2);
            const json arr = value(c.args[0]);
            need_array(c, arr, 1);
            const long long i = need_integer(c, value(c.args[1]), 2);
            if (i < 0 || i >= static_cast<long long>(arr.size()))
                intrinsic_error("States.ArrayGetItem: index " + std::to_string(i) +
                                " is outside the array of " + std::to_string(arr.size()) +
                                " items");
            return arr[static_cast<std::size_t>(i)];
        }
        if (f == "States.ArrayLength") {
            arity(c, 1, 1);
            const json arr = value(c.args[0]);
            return need_array(c, arr, 1).size();
        }
        if (f == "States.ArrayUnique") {
            arity(c, 1, 1);
            const json arr = value(c.args[0]);
            need_array(c, arr, 1);
            json out = json::array();
            for (const auto& v : arr)
                if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
            return out;
        }
        if (f == "States.Base64Encode") {
            arity(c, 1, 1);
            const std::string s = need_string(c, value(c.args[0]), 1);
            if (s.size() > 10000)
                intrinsic_error("States.Base64Encode: the input exceeds 10000 characters");
            return codec::base64_encode(s);
        }
        if (f == "States.Base64Decode") {
            arity(c, 1, 1);
            const std::string s = need_string(c, value(c.args[0]), 1);
            if (s.size() > 10000)
                intrinsic_error("States.Base64Decode: the input exceeds 10000 characters");
            auto d = codec::base64_decode(s);
            if (!d) intrinsic_error("States.Base64Decode: the input is not valid base64");
            return *d;
        }
        if (f == "States.Hash") return hash(c);
        if (f == "States.JsonMerge") {
            arity(c, 3, 3);
            json a = value(c.args[0]);
            const json b = value(c.args[1]);
            const json deep = value(c.args[2]);
            if (!a.is_object() || !b.is_object())
                intrinsic_error("States.JsonMerge: the first two arguments must be JSON objects");
            if (!deep.is_boolean())
                intrinsic_error("States.JsonMerge: the third argument must be a boolean");
            if (deep.get<bool>())
                intrinsic_error("States.JsonMerge: only shallow merging is supported (the third "
                                "argument must be false)");
            for (const auto& [k, v] : b.items()) a[k] = v;
            return a;
        }
        if (f == "States.MathRandom") {
            arity(c, 2, 3);
            const long long a = need_integer(c, value(c.args[0]), 1);
            const long long b = need_integer(c, value(c.args[1]), 2);
            if (a >= b) intrinsic_error("States.MathRandom: the start must be less than the end");
            double u = 0;
            if (c.args.size() == 3) {
                // A seed gives the same number every time, whatever the execution.
                const long long seed = need_integer(c, value(c.args[2]), 3);
                if (!env.rng) intrinsic_error("States.MathRandom: no random source");
                u = env.rng->uniform("sfn-random", "seed:" + std::to_string(seed), 0);
            } else {
                if (!env.rng || !env.counter) intrinsic_error("States.MathRandom: no random source");
                u = env.rng->uniform("sfn-random", env.key, (*env.counter)++);
            }
            return a + std::min(b - a - 1, static_cast<long long>(std::floor(u * static_cast<double>(b - a))));
        }
        if (f == "States.MathAdd") {
            arity(c, 2, 2);
            const long long a = need_integer(c, value(c.args[0]), 1);
            const long long b = need_integer(c, value(c.args[1]), 2);
            constexpr long long lo = -2147483648LL, hi = 2147483647LL;
            if (a < lo || a > hi || b < lo || b > hi)
                intrinsic_error("States.MathAdd: arguments must be within -2147483648 and "
                                "2147483647");
            return a + b;
        }
        if (f == "States.StringSplit") {
            arity(c, 2, 2);
            const std::string s = need_string(c, value(c.args[0]), 1);
            const std::string delims = need_string(c, value(c.args[1]), 2);
            // Every character of the second argument delimits; empty pieces are dropped
            // (the guide's example "This.is+a,test=string" split on ".+,=").
            json out = json::array();
            std::string cur;
            for (char ch : s) {
                if (delims.find(ch) != std::string::npos) {
                    if (!cur.empty()) out.push_back(cur);
                    cur.clear();
                } else {
                    cur += ch;
                }
            }
            if (!cur.empty()) out.push_back(cur);
            return out;
        }
        if (f == "States.UUID") {
            arity(c, 0, 0);
            if (!env.rng || !env.counter) intrinsic_error("States.UUID: no random source");
            return models::uuid_v4(*env.rng, "sfn-uuid", env.key, (*env.counter)++);
        }
        intrinsic_error("'" + f + "' is not an intrinsic function");
    }

    json format(const call& c) {
        if (c.args.empty()) intrinsic_error("States.Format takes at least 1 argument");
        const json tmpl = value(c.args[0], true);
        if (!tmpl.is_string()) intrinsic_error("States.Format: the first argument must be a string");
        const std::string& t = tmpl.get_ref<const std::string&>();
        std::string out;
        std::size_t next = 1;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] == '\\' && i + 1 < t.size() && (t[i + 1] == '{' || t[i + 1] == '}')) {
                out += t[++i];
                continue;
            }
            if (t[i] == '{' && i + 1 < t.size() && t[i + 1] == '}') {
                if (next >= c.args.size())
                    intrinsic_error("States.Format: the template has more {} than arguments");
                const json v = value(c.args[next++]);
                if (v.is_object() || v.is_array())
                    intrinsic_error("States.Format: arguments must be strings, numbers, booleans "
                                    "or null, not " + v.dump());
                out += v.is_string() ? v.get<std::string>() : v.dump();
                ++i;
                continue;
            }
            out += t[i];
        }
        if (next != c.args.size())
            intrinsic_error("States.Format: " + std::to_string(c.args.size() - 1) +
                            " arguments for " + std::to_string(next - 1) + " {} in the template");
        return out;
    }

    json hash(const call& c) {
        arity(c, 2, 2);
        const json data = value(c.args[0]);
        const std::string algorithm = need_string(c, value(c.args[1]), 2);
        const std::string text = data.is_string() ? data.get<std::string>() : data.dump();
        if (text.size() > 10000) intrinsic_error("States.Hash: the input exceeds 10000 characters");
        const EVP_MD* md = nullptr;
        if (algorithm == "MD5") md = EVP_md5();
        else if (algorithm == "SHA-1") md = EVP_sha1();
        else if (algorithm == "SHA-256") md = EVP_sha256();
        else if (algorithm == "SHA-384") md = EVP_sha384();
        else if (algorithm == "SHA-512") md = EVP_sha512();
        else
            intrinsic_error("States.Hash: the algorithm must be MD5, SHA-1, SHA-256, SHA-384 or "
                            "SHA-512, not '" + algorithm + "'");
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_Digest(text.data(), text.size(), digest, &len, md, nullptr) != 1)
            intrinsic_error("States.Hash: the digest failed");
        std::string hex;
        char b[3];
        for (unsigned i = 0; i < len; ++i) {
            std::snprintf(b, sizeof b, "%02x", digest[i]);
            hex += b;
        }
        return hex;
    }
};

const std::vector<std::string_view>& known_functions() {
    static const std::vector<std::string_view> names = {
        "States.Format", "States.StringToJson", "States.JsonToString", "States.Array",
        "States.ArrayPartition", "States.ArrayContains", "States.ArrayRange",
        "States.ArrayGetItem", "States.ArrayLength", "States.ArrayUnique",
        "States.Base64Encode", "States.Base64Decode", "States.Hash", "States.JsonMerge",
        "States.MathRandom", "States.MathAdd", "States.StringSplit", "States.UUID"};
    return names;
}

bool names_known(const call& c) {
    const auto& k = known_functions();
    if (std::find(k.begin(), k.end(), c.name) == k.end()) return false;
    for (const auto& a : c.args)
        if (a.what == argument::kind::nested && !names_known(*a.nested)) return false;
    return true;
}

}  // namespace

json evaluate_intrinsic(std::string_view text, const data_scope& scope, intrinsic_env& env) {
    const call c = call_parser(text).parse();
    evaluator e{scope, env};
    return e.run(c);
}

bool is_valid_intrinsic(std::string_view text) {
    try {
        return names_known(call_parser(text).parse());
    } catch (const runtime_failure&) {
        return false;
    }
}

}  // namespace coldbrew::states
