// The authorizer's answer: parsing, IAM policy evaluation, the verdict and the gateway's
// answer when the request is turned away (authorizers.hpp for the AWS facts and sources).

#include "emulator/authorizers/authorizers.hpp"
#include "emulator/authorizers/detail.hpp"

#include <stdexcept>

namespace coldbrew::authorizers {

namespace {

using json = nlohmann::json;

using detail::is_rest;

std::nullopt_t fail(std::string* why, std::string reason) {
    if (why) *why = std::move(reason);
    return std::nullopt;
}

char fold(char c, bool ignore_case) {
    return ignore_case && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// IAM wildcard matching. '?' is one character and '*' any run, both within one
// colon-separated segment when `segments`; a '*' that ends its segment (next pattern character
// ':' or the end) may also run past colons. Table-driven, so a pattern of many '*' costs
// pattern × text steps, never backtracking.
bool wildcard_match(std::string_view pattern, std::string_view text, bool ignore_case,
                    bool segments) {
    const std::size_t n = text.size();
    // reach[j]: the pattern consumed so far can end exactly at text position j.
    std::vector<char> reach(n + 1, 0), next(n + 1, 0);
    reach[0] = 1;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char p = pattern[i];
        std::fill(next.begin(), next.end(), 0);
        if (p == '*') {
            const bool ends_segment = i + 1 == pattern.size() || pattern[i + 1] == ':';
            const bool any = !segments || ends_segment;
            bool open = false;
            for (std::size_t j = 0; j <= n; ++j) {
                if (reach[j]) open = true;
                if (open) next[j] = 1;
                // A run stops at a colon unless this '*' may cross it.
                if (j < n && !any && text[j] == ':') open = false;
            }
        } else {
            for (std::size_t j = 0; j < n; ++j) {
                if (!reach[j]) continue;
                bool ok = p == '?' ? !(segments && text[j] == ':')
                                   : fold(p, ignore_case) == fold(text[j], ignore_case);
                if (ok) next[j + 1] = 1;
            }
        }
        reach.swap(next);
    }
    return reach[n] != 0;
}

bool string_or_strings(const json& v) {
    if (v.is_string()) return true;
    if (!v.is_array() || v.empty()) return false;
    for (const auto& e : v)
        if (!e.is_string()) return false;
    return true;
}

bool any_matches(const json& patterns, std::string_view text, bool ignore_case, bool segments) {
    if (patterns.is_string())
        return wildcard_match(patterns.get<std::string>(), text, ignore_case, segments);
    for (const auto& p : patterns)
        if (p.is_string() && wildcard_match(p.get<std::string>(), text, ignore_case, segments))
            return true;
    return false;
}

// The statements of a policyDocument as a list; empty when Statement is neither an object
// nor a list.
std::vector<const json*> statements_of(const json& policy) {
    std::vector<const json*> out;
    if (!policy.is_object() || !policy.contains("Statement")) return out;
    const json& s = policy["Statement"];
    if (s.is_object()) {
        out.push_back(&s);
    } else if (s.is_array()) {
        for (const auto& e : s)
            out.push_back(&e);
    }
    return out;
}

std::optional<std::string> check_statement(const json& st) {
    if (!st.is_object()) return "policy statement is not an object";
    if (!st.contains("Effect") || !st["Effect"].is_string() ||
        (st["Effect"] != "Allow" && st["Effect"] != "Deny"))
        return "policy statement Effect must be \"Allow\" or \"Deny\"";
    const bool action = st.contains("Action"), not_action = st.contains("NotAction");
    if (action == not_action) return "policy statement needs one of Action or NotAction";
    if (!string_or_strings(st[action ? "Action" : "NotAction"]))
        return "policy statement Action must be a string or a list of strings";
    const bool resource = st.contains("Resource"), not_resource = st.contains("NotResource");
    if (resource == not_resource) return "policy statement needs one of Resource or NotResource";
    if (!string_or_strings(st[resource ? "Resource" : "NotResource"]))
        return "policy statement Resource must be a string or a list of strings";
    return std::nullopt;
}

std::optional<std::string> check_context(const json& ctx, bool rest) {
    if (!ctx.is_object()) return "context must be an object";
    if (!rest) return std::nullopt;
    for (const auto& [k, v] : ctx.items())
        if (!v.is_string() && !v.is_number() && !v.is_boolean())
            return "context value of '" + k + "' must be a string, number or boolean";
    return std::nullopt;
}

http::response make(config::api_kind kind, int status, const char* body, const char* error_type,
                    const std::string& request_id) {
    http::response res;
    res.status = status;
    res.body = body;
    res.add("Content-Type", "application/json");
    if (kind == config::api_kind::rest && error_type) res.add("x-amzn-ErrorType", error_type);
    gateway::stamp_request_id(res, kind, request_id);
    return res;
}

} // namespace

std::optional<result> parse_result(const config::authorizer& a, std::string_view output,
                                   std::string* why) {
    json j = json::parse(output, nullptr, false);
    if (j.is_discarded()) return fail(why, "authorizer output is not JSON");
    if (!j.is_object()) return fail(why, "authorizer output is not a JSON object");
    const bool rest = is_rest(a);
    result r;
    r.context = nullptr;
    if (j.contains("context") && !j["context"].is_null()) {
        if (auto bad = check_context(j["context"], rest)) return fail(why, *bad);
        r.context = j["context"];
    }

    if (!rest && a.simple_responses && a.payload_format_version == "2.0") {
        if (!j.contains("isAuthorized") || !j["isAuthorized"].is_boolean())
            return fail(why, "simple response needs a boolean isAuthorized");
        r.simple = true;
        r.is_authorized = j["isAuthorized"].get<bool>();
        return r;
    }

    if (!j.contains("principalId") || !j["principalId"].is_string())
        return fail(why, "principalId missing or not a string");
    if (!j.contains("policyDocument") || !j["policyDocument"].is_object())
        return fail(why, "policyDocument missing or not an object");
    const json& policy = j["policyDocument"];
    if (!policy.contains("Statement") ||
        !(policy["Statement"].is_object() ||
          (policy["Statement"].is_array() && !policy["Statement"].empty())))
        return fail(why, "policyDocument Statement must be an object or a non-empty list");
    for (const json* st : statements_of(policy))
        if (auto bad = check_statement(*st)) return fail(why, *bad);
    if (j.contains("usageIdentifierKey") && !j["usageIdentifierKey"].is_null()) {
        if (!j["usageIdentifierKey"].is_string())
            return fail(why, "usageIdentifierKey must be a string");
        r.usage_identifier_key = j["usageIdentifierKey"].get<std::string>();
    }
    r.principal_id = j["principalId"].get<std::string>();
    r.policy = policy;
    if (why) why->clear();
    return r;
}

effect evaluate_policy(const nlohmann::json& policy_document, std::string_view arn) {
    static constexpr std::string_view invoke = "execute-api:Invoke";
    bool allowed = false;
    for (const json* st : statements_of(policy_document)) {
        if (check_statement(*st)) continue; // parse_result refuses these; be safe anyway
        bool action = st->contains("Action")
                          ? any_matches((*st)["Action"], invoke, true, false)
                          : !any_matches((*st)["NotAction"], invoke, true, false);
        if (!action) continue;
        bool resource = st->contains("Resource")
                            ? any_matches((*st)["Resource"], arn, false, true)
                            : !any_matches((*st)["NotResource"], arn, false, true);
        if (!resource) continue;
        if ((*st)["Effect"] == "Deny") return effect::deny;
        allowed = true;
    }
    return allowed ? effect::allow : effect::no_match;
}

verdict judge(const result& r, std::string_view arn) {
    if (r.simple) return r.is_authorized ? verdict::allow : verdict::deny;
    switch (evaluate_policy(r.policy, arn)) {
    case effect::allow: return verdict::allow;
    case effect::deny: return verdict::deny;
    case effect::no_match: return verdict::implicit_deny;
    }
    return verdict::implicit_deny;
}

verdict judge_function_error(std::string_view error_payload) {
    json j = json::parse(error_payload, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("errorMessage") &&
        j["errorMessage"].is_string() && j["errorMessage"] == "Unauthorized")
        return verdict::unauthorized;
    return verdict::failure;
}

http::response answer(config::api_kind kind, verdict v, const std::string& request_id) {
    const bool rest = kind == config::api_kind::rest;
    switch (v) {
    case verdict::unauthorized:
        return make(kind, 401, R"({"message":"Unauthorized"})", "UnauthorizedException",
                    request_id);
    case verdict::deny:
        return make(kind, 403,
                    rest ? R"({"Message":"User is not authorized to access this resource with an explicit deny"})"
                         : R"({"message":"Forbidden"})",
                    "AccessDeniedException", request_id);
    case verdict::implicit_deny:
        return make(kind, 403,
                    rest ? R"({"Message":"User is not authorized to access this resource"})"
                         : R"({"message":"Forbidden"})",
                    "AccessDeniedException", request_id);
    case verdict::failure:
        return make(kind, 500,
                    rest ? R"({"message": null})" : R"({"message":"Internal Server Error"})",
                    "AuthorizerConfigurationException", request_id);
    case verdict::allow: break;
    }
    throw std::invalid_argument("authorizers::answer: an allowed request has no error answer");
}

} // namespace coldbrew::authorizers
