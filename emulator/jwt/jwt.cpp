// JWKS parsing, token verification with OpenSSL 3 (EVP_PKEY_fromdata, EVP_DigestVerify) and
// API Gateway's claim rules. AWS facts and their sources: jwt.hpp.

#include "emulator/jwt/jwt.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "emulator/config/config_error.hpp"
#include "emulator/gateway/gateway.hpp"
#include "emulator/jwt/jwks_fetch.hpp"

namespace coldbrew::jwt {

namespace {

using json = nlohmann::json;

struct pkey_free {
    void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;

// RFC 4648 §5 without padding (JWS compact serialization, JWK members); padding is tolerated
// in JWK members some issuers pad.
std::optional<std::string> base64url_decode(std::string_view in) {
    while (!in.empty() && in.back() == '=') in.remove_suffix(1);
    std::string out;
    out.reserve(in.size() * 3 / 4);
    unsigned buffer = 0;
    int bits = 0;
    for (char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '-') v = 62;
        else if (c == '_') v = 63;
        else return std::nullopt;
        buffer = (buffer << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
        }
    }
    if (bits >= 6) return std::nullopt;  // a lone trailing character cannot encode a byte
    return out;
}

pkey_ptr rsa_public_key(const std::string& n, const std::string& e) {
    BIGNUM* bn_n = BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()),
                             static_cast<int>(n.size()), nullptr);
    BIGNUM* bn_e = BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()),
                             static_cast<int>(e.size()), nullptr);
    OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM* params = nullptr;
    EVP_PKEY_CTX* ctx = nullptr;
    EVP_PKEY* key = nullptr;
    if (bn_n && bn_e && bld && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) &&
        (params = OSSL_PARAM_BLD_to_param(bld)) &&
        (ctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr)) &&
        EVP_PKEY_fromdata_init(ctx) > 0) {
        if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) <= 0) key = nullptr;
    }
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn_n);
    BN_free(bn_e);
    return pkey_ptr{key};
}

const EVP_MD* rsa_digest(std::string_view alg) {
    if (alg == "RS256") return EVP_sha256();
    if (alg == "RS384") return EVP_sha384();
    if (alg == "RS512") return EVP_sha512();
    return nullptr;
}

bool verify_signature(EVP_PKEY* key, const EVP_MD* md, std::string_view signing_input,
                      const std::string& signature) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestVerifyInit(ctx, nullptr, md, nullptr, key) == 1 &&
              EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                               signature.size(),
                               reinterpret_cast<const unsigned char*>(signing_input.data()),
                               signing_input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}

std::string_view strip_bearer(std::string_view token) {
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (token.size() > 7 && http::iequals(token.substr(0, 7), "bearer ")) {
        token.remove_prefix(7);
        while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    }
    return token;
}

std::vector<std::string> split_spaces(std::string_view s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ') ++j;
        if (j > i) out.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

// The token's scopes: `scope` (RFC 6749 §3.3, space-separated), else `scp` (a string or a
// list of strings, as Okta and Entra ID write it).
std::vector<std::string> token_scopes(const json& claims) {
    if (auto it = claims.find("scope"); it != claims.end() && it->is_string())
        return split_spaces(it->get_ref<const std::string&>());
    if (auto it = claims.find("scp"); it != claims.end()) {
        if (it->is_string()) return split_spaces(it->get_ref<const std::string&>());
        std::vector<std::string> out;
        if (it->is_array())
            for (const auto& s : *it)
                if (s.is_string()) out.push_back(s.get<std::string>());
        return out;
    }
    return {};
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

verdict refuse(std::string description, const requirements& req, int status = 401) {
    verdict v;
    v.status = status;
    v.error_description = std::move(description);
    for (const auto& s : req.scopes) v.scope += (v.scope.empty() ? "" : " ") + s;
    return v;
}

// Go's fmt rendering of a decoded JSON value, which is how API Gateway turns claims into
// strings (jwt.hpp says which forms are observed).
std::string claim_text(const json& v) {
    switch (v.type()) {
    case json::value_t::string: return v.get<std::string>();
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
    case json::value_t::number_unsigned: return std::to_string(v.get<std::uint64_t>());
    case json::value_t::number_float: {
        double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15)
            return std::to_string(static_cast<std::int64_t>(d));
        return v.dump();
    }
    case json::value_t::array: {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + claim_text(v[i]);
        return out + "]";
    }
    case json::value_t::object: {
        std::string out = "map[";
        bool first = true;
        for (const auto& [k, x] : v.items()) {  // nlohmann keeps object keys sorted
            out += (first ? "" : " ") + k + ":" + claim_text(x);
            first = false;
        }
        return out + "]";
    }
    case json::value_t::null: return "<nil>";
    default: return v.dump();
    }
}

// A NumericDate claim (RFC 7519 §2): nullopt when absent; throws when not a number.
std::optional<double> numeric_date(const json& claims, const char* name) {
    auto it = claims.find(name);
    if (it == claims.end()) return std::nullopt;
    if (!it->is_number()) throw std::invalid_argument(name);
    return it->get<double>();
}

}  // namespace

struct key_set::impl {
    std::map<std::string, pkey_ptr> keys;  // kid → RSA public key
};

key_set::key_set() : impl_(std::make_unique<impl>()) {}
key_set::~key_set() = default;
key_set::key_set(key_set&&) noexcept = default;
key_set& key_set::operator=(key_set&&) noexcept = default;

std::size_t key_set::size() const noexcept { return impl_->keys.size(); }

std::vector<std::string> key_set::kids() const {
    std::vector<std::string> out;
    for (const auto& [kid, key] : impl_->keys) out.push_back(kid);
    return out;
}

key_set key_set::parse(std::string_view jwks_json) {
    json doc = json::parse(jwks_json, nullptr, false);
    if (doc.is_discarded()) throw std::invalid_argument("the JWKS is not JSON");
    if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array())
        throw std::invalid_argument("the JWKS has no \"keys\" list");
    key_set set;
    std::size_t index = 0;
    for (const auto& k : doc["keys"]) {
        const std::string where = "keys[" + std::to_string(index++) + "]";
        if (!k.is_object()) throw std::invalid_argument(where + " is not an object");
        auto str = [&](const char* name) -> std::optional<std::string> {
            auto it = k.find(name);
            if (it == k.end() || !it->is_string()) return std::nullopt;
            return it->get<std::string>();
        };
        if (str("kty") != "RSA") continue;  // EC and oct keys: no RSA-based algorithm uses them
        if (auto use = str("use"); use && *use != "sig") continue;
        auto kid = str("kid");
        if (!kid) continue;  // a token names its key by kid, so a key without one is unreachable
        auto n_text = str("n"), e_text = str("e");
        if (!n_text || !e_text)
            throw std::invalid_argument(where + " (kid \"" + *kid + "\") has no \"n\" or \"e\"");
        auto n = base64url_decode(*n_text), e = base64url_decode(*e_text);
        if (!n || !e || n->empty() || e->empty())
            throw std::invalid_argument(where + " (kid \"" + *kid +
                                        "\"): \"n\" or \"e\" is not base64url");
        pkey_ptr key = rsa_public_key(*n, *e);
        if (!key)
            throw std::invalid_argument(where + " (kid \"" + *kid + "\") is not a valid RSA key");
        set.impl_->keys[*kid] = std::move(key);
    }
    if (set.impl_->keys.empty())
        throw std::invalid_argument("the JWKS has no RSA signing key with a kid");
    return set;
}

verdict validate(std::string_view token_in, const key_set& keys, const requirements& req,
                 std::int64_t now_s) {
    const std::string_view token = strip_bearer(token_in);
    if (token.empty()) return refuse("the token is missing", req);

    // Compact JWS: exactly three base64url parts.
    const auto dot1 = token.find('.');
    const auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
    if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos)
        return refuse("the token is malformed", req);
    auto header_text = base64url_decode(token.substr(0, dot1));
    auto payload_text = base64url_decode(token.substr(dot1 + 1, dot2 - dot1 - 1));
    auto signature = base64url_decode(token.substr(dot2 + 1));
    if (!header_text || !payload_text || !signature)
        return refuse("the token is malformed", req);
    json header = json::parse(*header_text, nullptr, false);
    json claims = json::parse(*payload_text, nullptr, false);
    if (!header.is_object() || !claims.is_object()) return refuse("the token is malformed", req);

    // Algorithm, then key, then signature.
    const std::string alg = header.contains("alg") && header["alg"].is_string()
                                ? header["alg"].get<std::string>()
                                : std::string{};
    const EVP_MD* md = rsa_digest(alg);
    if (!md) return refuse("signing method " + (alg.empty() ? "(none)" : alg) + " is invalid", req);
    if (!header.contains("kid") || !header["kid"].is_string())
        return refuse("the token has no kid", req);
    const auto& key_map = keys.get().keys;
    auto key = key_map.find(header["kid"].get<std::string>());
    if (key == key_map.end())
        return refuse("no key of the issuer's JWKS has the token's kid", req);
    if (!verify_signature(key->second.get(), md, token.substr(0, dot2), *signature))
        return refuse("the token's signature is invalid", req);

    // Claims, in the order the developer guide lists them.
    auto iss = claims.find("iss");
    if (iss == claims.end() || !iss->is_string() || iss->get<std::string>() != req.issuer)
        return refuse("the token does not have a valid issuer", req);

    bool audience_ok = false;
    if (auto aud = claims.find("aud"); aud != claims.end()) {
        // aud decides alone when present (http-api-troubleshooting-jwt).
        if (aud->is_string()) audience_ok = contains(req.audience, aud->get<std::string>());
        else if (aud->is_array())
            for (const auto& a : *aud)
                if (a.is_string() && contains(req.audience, a.get<std::string>())) audience_ok = true;
    } else if (auto cid = claims.find("client_id"); cid != claims.end() && cid->is_string()) {
        audience_ok = contains(req.audience, cid->get<std::string>());
    }
    if (!audience_ok) return refuse("the token does not have a valid audience", req);

    std::optional<double> exp, nbf, iat;
    try {
        exp = numeric_date(claims, "exp");
        nbf = numeric_date(claims, "nbf");
        iat = numeric_date(claims, "iat");
    } catch (const std::invalid_argument& e) {
        return refuse(std::string("the token's ") + e.what() + " is not a number", req);
    }
    const auto now = static_cast<double>(now_s);
    if (!exp) return refuse("the token has no expiry (exp)", req);
    if (!(now < *exp)) return refuse("the token has expired", req);
    if (nbf && *nbf > now) return refuse("the token is not valid yet", req);
    if (iat && *iat > now) return refuse("the token was issued in the future", req);

    std::vector<std::string> scopes = token_scopes(claims);
    if (!req.scopes.empty() &&
        std::none_of(scopes.begin(), scopes.end(),
                     [&](const std::string& s) { return contains(req.scopes, s); }))
        return refuse("the token does not have any of the route's scopes", req, 403);

    verdict v;
    v.ok = true;
    v.status = 200;
    v.claims = std::move(claims);
    v.scopes = std::move(scopes);
    for (const auto& s : req.scopes) v.scope += (v.scope.empty() ? "" : " ") + s;
    return v;
}

nlohmann::json event_authorizer(const verdict& v) {
    json claims = json::object();
    if (v.claims.is_object())
        for (const auto& [k, x] : v.claims.items()) claims[k] = claim_text(x);
    json scopes = v.scopes.empty() ? json(nullptr) : json(v.scopes);
    return json{{"jwt", json{{"claims", std::move(claims)}, {"scopes", std::move(scopes)}}}};
}

http::response rejection(const verdict& v, const std::string& request_id) {
    http::response res;
    const bool forbidden = v.status == 403;
    res.status = forbidden ? 403 : 401;
    res.body = forbidden ? R"({"message":"Forbidden"})" : R"({"message":"Unauthorized"})";
    res.add("content-type", "application/json");
    res.add("www-authenticate", "Bearer scope=\"" + v.scope + "\" error=\"" +
                                    (forbidden ? "insufficient_scope" : "invalid_token") +
                                    "\" error_description=\"" + v.error_description + "\"");
    gateway::stamp_request_id(res, config::api_kind::http, request_id);
    return res;
}

key_set load_keys(const config::authorizer& a, const std::filesystem::path& template_file) {
    const config::source_location& where = a.jwks_where.line != 0 ? a.jwks_where : a.where;
    // The coldbrew.yaml key when it named the keys; else the error is at the authorizer in
    // the template, which has no such key.
    const std::string key_path = a.jwks_where.line != 0 ? "authorizers." + a.name + ".jwks" : "";
    const std::string hint =
        " (coldbrew.yaml `authorizers." + a.name + ".jwks` can name a local JWKS file)";
    constexpr std::chrono::milliseconds timeout{5000};

    auto is_url = [](const std::string& s) {
        return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
    };
    auto fetch = [&](const std::string& url, const std::string& what) {
        try {
            return detail::http_get(url, timeout);
        } catch (const std::exception& e) {
            throw config::config_error(where, key_path,
                                       "cannot read " + what + " " + url + ": " + e.what() + hint);
        }
    };
    auto parse = [&](const std::string& text, const std::string& what) {
        try {
            return key_set::parse(text);
        } catch (const std::invalid_argument& e) {
            throw config::config_error(where, key_path, what + ": " + e.what() + hint);
        }
    };

    if (a.jwks.empty()) {
        // As API Gateway finds the keys: the issuer's OpenID discovery document names them.
        std::string issuer = a.issuer;
        while (!issuer.empty() && issuer.back() == '/') issuer.pop_back();
        const std::string discovery = issuer + "/.well-known/openid-configuration";
        if (!is_url(discovery))
            throw config::config_error(where, key_path,
                                       "the issuer \"" + a.issuer +
                                           "\" is not an http(s) URL, so its JWKS cannot be "
                                           "discovered" + hint);
        json doc = json::parse(fetch(discovery, "the OpenID discovery document"), nullptr, false);
        if (!doc.is_object() || !doc.contains("jwks_uri") || !doc["jwks_uri"].is_string())
            throw config::config_error(where, key_path,
                                       "the OpenID discovery document " + discovery +
                                           " has no \"jwks_uri\"" + hint);
        const std::string jwks_uri = doc["jwks_uri"].get<std::string>();
        return parse(fetch(jwks_uri, "the JWKS"), "the JWKS " + jwks_uri);
    }
    if (is_url(a.jwks)) return parse(fetch(a.jwks, "the JWKS"), "the JWKS " + a.jwks);

    std::filesystem::path file = a.jwks;
    if (file.is_relative()) file = template_file.parent_path() / file;
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw config::config_error(where, key_path,
                                   "cannot read the JWKS file " + file.string() + hint);
    std::ostringstream text;
    text << in.rdbuf();
    return parse(text.str(), "the JWKS file " + file.string());
}

}  // namespace coldbrew::jwt
