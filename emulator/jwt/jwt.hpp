#pragma once
// HTTP API JWT authorizers: a JSON Web Key Set, a token's signature checked against it with
// OpenSSL, and its claims judged as API Gateway judges them. No clock: `now_s` comes in.
//
// AWS facts ("Controlling access to HTTP APIs with JWT authorizers", API Gateway developer
// guide): the token is the identity source's value, with or without a "Bearer " prefix; its
// header names a `kid` of the issuer's JWKS and an RSA algorithm; `iss` must equal the
// issuer; `aud` or, when absent, `client_id` must be one of the audiences; `exp` must be in
// the future, `nbf` and `iat` (when present) not; when the route has authorization scopes the
// token's `scope` (or `scp`) must hold at least one. Each function names the detail it keeps.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/http/message.hpp"

namespace coldbrew::jwt {

// The public keys of a JWKS, by kid. RSA ("kty":"RSA", n/e) keys, and EC P-256/P-384/P-521
// keys ("kty":"EC", crv/x/y); keys of other types, or whose "use" is not "sig", are skipped.
class key_set {
public:
    key_set();
    ~key_set();
    key_set(key_set&&) noexcept;
    key_set& operator=(key_set&&) noexcept;

    // Parses a JWKS document ({"keys":[…]}). Throws std::invalid_argument saying what is
    // wrong (not JSON, no "keys" list, a key whose n/e/x/y is not base64url) or when no
    // usable key is left.
    static key_set parse(std::string_view jwks_json);
    std::size_t size() const noexcept;
    std::vector<std::string> kids() const;

    struct impl;
    const impl& get() const { return *impl_; }

private:
    std::unique_ptr<impl> impl_;
};

// What a route asks of a token.
struct requirements {
    std::string issuer;
    std::vector<std::string> audience;
    std::vector<std::string> scopes;  // at least one of them; empty: no scope check
};

struct verdict {
    bool ok = false;
    // Not ok: 401 (no token, malformed, bad signature, unknown kid, wrong iss/aud, expired,
    // not yet valid) or 403 (valid token without a required scope).
    int status = 401;
    // As API Gateway puts it in the WWW-Authenticate header's error_description, e.g.
    // "the token has expired", "signing method HS256 is invalid".
    std::string error_description;
    nlohmann::json claims;            // the payload object (ok)
    std::vector<std::string> scopes;  // the token's scopes (ok), in its order
};

// Checks `token` (with or without "Bearer ") against `keys` and `req` at `now_s` (Unix
// seconds).
verdict validate(std::string_view token, const key_set& keys, const requirements& req,
                 std::int64_t now_s);

// requestContext.authorizer of a 2.0 event: {"jwt":{"claims":{…},"scopes":[…]|null}}, claim
// values as API Gateway passes them (strings; numbers and booleans as their text; arrays as
// "[a b]").
nlohmann::json event_authorizer(const verdict& v);

// API Gateway's answer to a token it turned away: 401 {"message":"Unauthorized"} or 403
// {"message":"Forbidden"}, with www-authenticate: Bearer scope="…" error="invalid_token" |
// "insufficient_scope" error_description="…", and the HTTP API request id headers.
http::response rejection(const verdict& v, const std::string& request_id);

// Loads the keys of a JWT authorizer at start, blocking: `a.jwks` is an absolute file path or
// an http(s) URL of a JWKS; "" reads "{issuer}/.well-known/openid-configuration" and then its
// jwks_uri, as API Gateway does. Throws config::config_error at a.jwks_where (or a.where) when
// the keys cannot be read, saying which file or URL and why, and that coldbrew.yaml
// `authorizers.<name>.jwks` names a local JWKS.
key_set load_keys(const config::authorizer& a, const std::filesystem::path& template_file);

}  // namespace coldbrew::jwt
