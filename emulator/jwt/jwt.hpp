#pragma once
// HTTP API JWT authorizers: a JSON Web Key Set, a token's signature checked against it with
// OpenSSL, and its claims judged as API Gateway judges them. No clock: `now_s` comes in.
//
// AWS facts ("Controlling access to HTTP APIs with JWT authorizers", API Gateway developer
// guide, http-api-jwt-authorizer; "Troubleshooting issues with HTTP API JWT authorizers",
// http-api-troubleshooting-jwt): the token is the identity source's value, with or without a
// "Bearer " prefix; its header names a `kid` of the issuer's JWKS and an RSA-based algorithm
// ("Currently, only RSA-based algorithms are supported"); `iss` must equal the issuer; `aud`
// or, only when `aud` is absent, `client_id` must be one of the audiences; `exp` must be after
// now, `nbf` and `iat` before it (no clock skew is documented, none is allowed); when the
// route has authorization scopes the token's `scope` (or `scp`) must hold at least one. Each
// function names the detail it keeps and whether AWS documents it.

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

// The public keys of a JWKS, by kid: RSA keys ("kty":"RSA", n/e) only, since HTTP API JWT
// authorizers verify only RSA-based algorithms (http-api-jwt-authorizer). EC keys, keys of
// other types, keys without a kid and keys whose "use" is present and not "sig" are skipped,
// as a JWKS that also lists them is still usable.
class key_set {
public:
    key_set();
    ~key_set();
    key_set(key_set&&) noexcept;
    key_set& operator=(key_set&&) noexcept;

    // Parses a JWKS document ({"keys":[…]}). Throws std::invalid_argument saying what is
    // wrong (not JSON, no "keys" list, an RSA key whose n/e is missing or not base64url) or
    // when no usable (RSA) key is left.
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
    // The WWW-Authenticate header's error_description. AWS publishes one text, "the token
    // does not have a valid audience" (http-api-troubleshooting-jwt), kept exactly; the others
    // are coldbrew's wording in the same style ("the token has expired", "signing method
    // HS256 is invalid", …), not texts AWS documents.
    std::string error_description;
    // The route's authorization scopes, space-separated: the header's scope="…" ("" when the
    // route has none, as in AWS's published 401).
    std::string scope;
    nlohmann::json claims;            // the payload object (ok)
    std::vector<std::string> scopes;  // the token's scopes (ok), in its order
};

// Checks `token` (with or without a "Bearer " prefix, matched case-insensitively as RFC 6750
// schemes are) against `keys` and `req` at `now_s` (Unix seconds), in AWS's documented order:
// decode, algorithm (RS256/RS384/RS512; "none", HS*, ES*, PS* are refused) and kid, signature,
// then iss, aud/client_id, exp (required; now must be below it), nbf and iat (now may equal
// them), and last the scopes (403).
verdict validate(std::string_view token, const key_set& keys, const requirements& req,
                 std::int64_t now_s);

// requestContext.authorizer of a 2.0 event: {"jwt":{"claims":{…},"scopes":[…]|null}}.
// Claim values are all strings, as API Gateway passes them: strings as is, numbers as their
// decimal text ("exp":"1787996002"), booleans "true"/"false", arrays Go-style "[a b]" (observed:
// DefinitelyTyped PR #75458's captured event; aws-solutions-library-samples
// guidance-for-claude-code-with-amazon-bedrock issue #802). Inferred from that Go style, not
// observed: objects "map[k:v …]" (keys sorted), null "<nil>". "scopes" holds the token's
// scopes, null when it has none (aws/aws-lambda-go issue #317).
nlohmann::json event_authorizer(const verdict& v);

// API Gateway's answer to a token it turned away: 401 {"message":"Unauthorized"} with
// `www-authenticate: Bearer scope="…" error="invalid_token" error_description="…"`
// (http-api-troubleshooting-jwt shows exactly this shape), or 403 {"message":"Forbidden"}
// with error="insufficient_scope" in the same shape (observed, not published: KensioSoftware/
// yulin issue #302), content-type application/json, and the HTTP API request id headers.
http::response rejection(const verdict& v, const std::string& request_id);

// Loads the keys of a JWT authorizer at start, blocking: `a.jwks` is an absolute file path
// (a relative one is taken from template_file's directory) or an http(s) URL of a JWKS; ""
// reads "{issuer}/.well-known/openid-configuration" (a trailing '/' of the issuer dropped) and
// then its jwks_uri: the HTTP API guide has the key "fetched from the issuer's jwks_uri"
// (http-api-jwt-authorizer), a member of the issuer's OpenID discovery document, which lives
// at that path (OpenID Connect Discovery 1.0 §4; the guide's page for REST API JWT
// authorizers, rest-api-jwt-authorizer-keys, states the same lookup). URLs: one HTTP/1.1 GET each, https verified against the system CA store, 5 s for the
// whole exchange, no redirects, 200 only. Throws config::config_error at a.jwks_where (or
// a.where when its line is 0), key path "authorizers.<name>.jwks", saying which file or URL
// and why, and that coldbrew.yaml `authorizers.<name>.jwks` can name a local JWKS.
key_set load_keys(const config::authorizer& a, const std::filesystem::path& template_file);

}  // namespace coldbrew::jwt
