#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "emulator/config/config_error.hpp"
#include "emulator/jwt/jwt.hpp"
#include "tests/fakes/jwt_issuer.hpp"

using coldbrew::testing::base64url;
using coldbrew::testing::jwt_issuer;
using json = nlohmann::json;
namespace jwt = coldbrew::jwt;

namespace {

constexpr std::int64_t now_s = 1'700'000'000;
const std::string issuer_url = "https://issuer.example.com";

// One RSA key pair for the whole file: RSA-2048 generation is the slow part.
const jwt_issuer& rsa_issuer() {
    static const jwt_issuer issuer = jwt_issuer::rsa("rsa-1");
    return issuer;
}

jwt::key_set keys() { return jwt::key_set::parse(rsa_issuer().jwks()); }

jwt::requirements route(std::vector<std::string> scopes = {}) {
    return {issuer_url, {"my-app", "other-app"}, std::move(scopes)};
}

json good_claims() {
    return {{"iss", issuer_url}, {"aud", "my-app"},    {"sub", "user-1"},
            {"exp", now_s + 600}, {"iat", now_s - 10}, {"nbf", now_s - 10}};
}

std::string rs256(const json& claims, const std::string& kid = "rsa-1") {
    return rsa_issuer().sign(json{{"alg", "RS256"}, {"kid", kid}, {"typ", "JWT"}}.dump(),
                             claims.dump());
}

}  // namespace

TEST_CASE("key_set parses the RSA keys of a JWKS by kid", "[unit]") {
    auto set = keys();
    CHECK(set.size() == 1);
    CHECK(set.kids() == std::vector<std::string>{"rsa-1"});
}

TEST_CASE("key_set skips EC keys, encryption keys, kid-less and unknown kinds", "[unit]") {
    const auto ec = jwt_issuer::ec("ec-1");
    json rsa = json::parse(rsa_issuer().jwk());
    json enc = rsa;
    enc["kid"] = "enc-1";
    enc["use"] = "enc";
    json no_kid = rsa;
    no_kid.erase("kid");
    json doc = {{"keys",
                 {json::parse(ec.jwk()), rsa, enc, no_kid, {{"kty", "oct"}, {"kid", "h"}, {"k", "AAAA"}}}}};
    auto set = jwt::key_set::parse(doc.dump());
    CHECK(set.kids() == std::vector<std::string>{"rsa-1"});

    SECTION("a JWKS left with no RSA key is an error") {
        CHECK_THROWS_WITH(jwt::key_set::parse(ec.jwks()),
                          Catch::Contains("no RSA signing key"));
    }
}

TEST_CASE("key_set rejects malformed JWKS documents", "[unit]") {
    CHECK_THROWS_WITH(jwt::key_set::parse("not json"), Catch::Contains("not JSON"));
    CHECK_THROWS_WITH(jwt::key_set::parse(R"({"keys":{}})"), Catch::Contains("\"keys\""));
    CHECK_THROWS_WITH(jwt::key_set::parse(R"({"foo":[]})"), Catch::Contains("\"keys\""));
    CHECK_THROWS_WITH(jwt::key_set::parse(R"({"keys":[{"kty":"RSA","kid":"a","n":"!!","e":"AQAB"}]})"),
                      Catch::Contains("base64url"));
    CHECK_THROWS_WITH(jwt::key_set::parse(R"({"keys":[{"kty":"RSA","kid":"a","e":"AQAB"}]})"),
                      Catch::Contains("no \"n\""));
    CHECK_THROWS_WITH(jwt::key_set::parse(R"({"keys":[]})"), Catch::Contains("no RSA signing key"));
}

TEST_CASE("validate accepts a good RS256 token and returns its claims and scopes", "[unit]") {
    json claims = good_claims();
    claims["scope"] = "read write";
    auto v = jwt::validate(rs256(claims), keys(), route(), now_s);
    REQUIRE(v.ok);
    CHECK(v.claims["sub"] == "user-1");
    CHECK(v.scopes == std::vector<std::string>{"read", "write"});
}

TEST_CASE("validate takes the token with or without a Bearer prefix", "[unit]") {
    const std::string token = rs256(good_claims());
    CHECK(jwt::validate("Bearer " + token, keys(), route(), now_s).ok);
    CHECK(jwt::validate("bearer " + token, keys(), route(), now_s).ok);
    CHECK(jwt::validate(token, keys(), route(), now_s).ok);
    CHECK_FALSE(jwt::validate("Basic " + token, keys(), route(), now_s).ok);
}

TEST_CASE("validate refuses a token whose signature does not verify", "[unit]") {
    SECTION("signed by another key with the same kid") {
        const auto other = jwt_issuer::rsa("rsa-1");
        auto token = other.sign(R"({"alg":"RS256","kid":"rsa-1"})", good_claims().dump());
        auto v = jwt::validate(token, keys(), route(), now_s);
        CHECK_FALSE(v.ok);
        CHECK(v.status == 401);
        CHECK(v.error_description == "the token's signature is invalid");
    }
    SECTION("claims changed after signing") {
        std::string token = rs256(good_claims());
        json forged = good_claims();
        forged["sub"] = "admin";
        auto first = token.find('.'), second = token.find('.', first + 1);
        token = token.substr(0, first + 1) + base64url(forged.dump()) + token.substr(second);
        CHECK(jwt::validate(token, keys(), route(), now_s).error_description ==
              "the token's signature is invalid");
    }
}

TEST_CASE("validate refuses an unknown kid", "[unit]") {
    auto v = jwt::validate(rs256(good_claims(), "rsa-2"), keys(), route(), now_s);
    CHECK_FALSE(v.ok);
    CHECK(v.status == 401);
    CHECK(v.error_description == "no key of the issuer's JWKS has the token's kid");
}

TEST_CASE("validate refuses alg none, HS256 and EC algorithms", "[unit]") {
    const std::string payload = base64url(good_claims().dump());
    SECTION("none") {
        auto token = base64url(R"({"alg":"none","kid":"rsa-1"})") + "." + payload + ".";
        auto v = jwt::validate(token, keys(), route(), now_s);
        CHECK_FALSE(v.ok);
        CHECK(v.error_description == "signing method none is invalid");
    }
    SECTION("HS256, even with a valid-looking signature") {
        auto token = base64url(R"({"alg":"HS256","kid":"rsa-1"})") + "." + payload + "." +
                     base64url("0123456789abcdef0123456789abcdef");
        auto v = jwt::validate(token, keys(), route(), now_s);
        CHECK_FALSE(v.ok);
        CHECK(v.error_description == "signing method HS256 is invalid");
    }
    SECTION("ES256 signed by a key the JWKS lists") {
        const auto ec = jwt_issuer::ec("ec-1");
        json doc = {{"keys", {json::parse(ec.jwk()), json::parse(rsa_issuer().jwk())}}};
        auto set = jwt::key_set::parse(doc.dump());
        auto token = ec.sign(R"({"alg":"ES256","kid":"ec-1"})", good_claims().dump());
        auto v = jwt::validate(token, set, route(), now_s);
        CHECK_FALSE(v.ok);
        CHECK(v.status == 401);
        CHECK(v.error_description == "signing method ES256 is invalid");
    }
}

TEST_CASE("validate applies the time claims without clock skew", "[unit]") {
    json claims = good_claims();
    SECTION("expired") {
        claims["exp"] = now_s;  // exp must be after now: equal is expired
        CHECK(jwt::validate(rs256(claims), keys(), route(), now_s).error_description ==
              "the token has expired");
        claims["exp"] = now_s + 1;
        CHECK(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
    SECTION("no exp") {
        claims.erase("exp");
        CHECK_FALSE(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
    SECTION("nbf in the future") {
        claims["nbf"] = now_s + 1;
        auto v = jwt::validate(rs256(claims), keys(), route(), now_s);
        CHECK(v.status == 401);
        CHECK(v.error_description == "the token is not valid yet");
    }
    SECTION("iat in the future") {
        claims["iat"] = now_s + 1;
        CHECK(jwt::validate(rs256(claims), keys(), route(), now_s).error_description ==
              "the token was issued in the future");
    }
    SECTION("exp that is not a number") {
        claims["exp"] = "tomorrow";
        CHECK_FALSE(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
}

TEST_CASE("validate checks the issuer exactly", "[unit]") {
    json claims = good_claims();
    claims["iss"] = issuer_url + "/";
    auto v = jwt::validate(rs256(claims), keys(), route(), now_s);
    CHECK_FALSE(v.ok);
    CHECK(v.status == 401);
    CHECK(v.error_description == "the token does not have a valid issuer");
}

TEST_CASE("validate checks aud, or client_id only when aud is absent", "[unit]") {
    json claims = good_claims();
    SECTION("wrong audience: AWS's published description") {
        claims["aud"] = "someone-else";
        auto v = jwt::validate(rs256(claims), keys(), route(), now_s);
        CHECK(v.status == 401);
        CHECK(v.error_description == "the token does not have a valid audience");
    }
    SECTION("an aud list with one audience of the authorizer") {
        claims["aud"] = {"x", "other-app"};
        CHECK(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
    SECTION("client_id instead of aud") {
        claims.erase("aud");
        claims["client_id"] = "my-app";
        CHECK(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
        claims["client_id"] = "nobody";
        CHECK_FALSE(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
    SECTION("aud decides when both are present") {
        claims["aud"] = "someone-else";
        claims["client_id"] = "my-app";
        CHECK_FALSE(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
    SECTION("neither") {
        claims.erase("aud");
        CHECK_FALSE(jwt::validate(rs256(claims), keys(), route(), now_s).ok);
    }
}

TEST_CASE("validate requires one of the route's scopes", "[unit]") {
    json claims = good_claims();
    SECTION("no scope claim: 403") {
        auto v = jwt::validate(rs256(claims), keys(), route({"orders:read"}), now_s);
        CHECK_FALSE(v.ok);
        CHECK(v.status == 403);
        CHECK(v.scope == "orders:read");
    }
    SECTION("other scopes only: 403") {
        claims["scope"] = "profile email";
        CHECK(jwt::validate(rs256(claims), keys(), route({"orders:read"}), now_s).status == 403);
    }
    SECTION("one of several in `scope`") {
        claims["scope"] = "profile orders:write";
        CHECK(jwt::validate(rs256(claims), keys(), route({"orders:read", "orders:write"}), now_s).ok);
    }
    SECTION("`scp` as a list") {
        claims["scp"] = {"orders:read"};
        auto v = jwt::validate(rs256(claims), keys(), route({"orders:read"}), now_s);
        CHECK(v.ok);
        CHECK(v.scopes == std::vector<std::string>{"orders:read"});
    }
    SECTION("a bad signature is 401 even without the scope") {
        auto v = jwt::validate(rs256(claims, "rsa-9"), keys(), route({"orders:read"}), now_s);
        CHECK(v.status == 401);
    }
}

TEST_CASE("validate refuses malformed token text with 401", "[unit]") {
    for (const std::string& token : std::vector<std::string>{"", "Bearer ", "abc", "a.b", "a.b.c.d", "!!!.e30.AA",
                              base64url("not json") + "." + base64url("{}") + ".AA",
                              base64url(R"({"alg":"RS256","kid":"rsa-1"})") + ".%%%.AA"}) {
        CAPTURE(token);
        auto v = jwt::validate(token, keys(), route(), now_s);
        CHECK_FALSE(v.ok);
        CHECK(v.status == 401);
        CHECK_FALSE(v.error_description.empty());
    }
}

TEST_CASE("event_authorizer passes every claim as a string", "[unit]") {
    json claims = good_claims();
    claims["email_verified"] = true;
    claims["groups"] = {"admin", "dev"};
    claims["ratio"] = 1.5;
    claims["address"] = {{"zip", "1000"}, {"city", "Oslo"}};
    claims["scope"] = "read write";
    auto v = jwt::validate(rs256(claims), keys(), route(), now_s);
    REQUIRE(v.ok);
    json a = jwt::event_authorizer(v);
    const json& c = a["jwt"]["claims"];
    CHECK(c["sub"] == "user-1");
    CHECK(c["exp"] == std::to_string(now_s + 600));
    CHECK(c["email_verified"] == "true");
    CHECK(c["groups"] == "[admin dev]");
    CHECK(c["ratio"] == "1.5");
    CHECK(c["address"] == "map[city:Oslo zip:1000]");
    CHECK(a["jwt"]["scopes"] == json{"read", "write"});

    SECTION("scopes is null when the token has none") {
        claims.erase("scope");
        auto bare = jwt::validate(rs256(claims), keys(), route(), now_s);
        REQUIRE(bare.ok);
        CHECK(jwt::event_authorizer(bare)["jwt"]["scopes"].is_null());
    }
}

TEST_CASE("rejection answers as API Gateway does", "[unit]") {
    SECTION("401 invalid_token") {
        json claims = good_claims();
        claims["aud"] = "nope";
        auto v = jwt::validate(rs256(claims), keys(), route(), now_s);
        auto res = jwt::rejection(v, "req-1");
        CHECK(res.status == 401);
        CHECK(res.body == R"({"message":"Unauthorized"})");
        CHECK(res.header("www-authenticate") ==
              std::string(R"(Bearer scope="" error="invalid_token" error_description="the token does not have a valid audience")"));
        CHECK(res.header("apigw-requestid"));
        CHECK(res.header("content-type") == std::string("application/json"));
    }
    SECTION("403 insufficient_scope") {
        auto v = jwt::validate(rs256(good_claims()), keys(), route({"a", "b"}), now_s);
        auto res = jwt::rejection(v, "req-2");
        CHECK(res.status == 403);
        CHECK(res.body == R"({"message":"Forbidden"})");
        auto h = std::string(res.header("www-authenticate").value_or(""));
        CHECK(h.rfind(R"(Bearer scope="a b" error="insufficient_scope" error_description=")", 0) == 0);
    }
}

TEST_CASE("load_keys reads a JWKS file and names the file when it cannot", "[unit]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("coldbrew_jwt_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    coldbrew::config::authorizer a;
    a.name = "Auth0";
    a.kind = coldbrew::config::authorizer::type::jwt;
    a.issuer = issuer_url;
    a.where = {"template.yaml", 12, 7};
    a.jwks_where = {"coldbrew.yaml", 3, 11};

    SECTION("a good file") {
        a.jwks = (dir / "jwks.json").string();
        std::ofstream(a.jwks) << rsa_issuer().jwks();
        auto set = jwt::load_keys(a, dir / "template.yaml");
        CHECK(set.kids() == std::vector<std::string>{"rsa-1"});
    }
    SECTION("a missing file: a config error at the jwks key") {
        a.jwks = (dir / "missing.json").string();
        try {
            jwt::load_keys(a, dir / "template.yaml");
            FAIL("no error");
        } catch (const coldbrew::config::config_error& e) {
            CHECK(e.where().file == "coldbrew.yaml");
            CHECK(e.where().line == 3);
            CHECK(e.key_path() == "authorizers.Auth0.jwks");
            CHECK_THAT(e.message(), Catch::Contains("missing.json"));
        }
    }
    SECTION("a file that is not a JWKS, with no coldbrew.yaml position: the authorizer's") {
        a.jwks = (dir / "bad.json").string();
        a.jwks_where = {};
        std::ofstream(a.jwks) << "{";
        try {
            jwt::load_keys(a, dir / "template.yaml");
            FAIL("no error");
        } catch (const coldbrew::config::config_error& e) {
            CHECK(e.where().file == "template.yaml");
            CHECK(e.where().line == 12);
            CHECK_THAT(e.message(), Catch::Contains("bad.json") && Catch::Contains("not JSON"));
        }
    }
    fs::remove_all(dir);
}
