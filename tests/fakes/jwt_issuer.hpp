#pragma once
// A test token issuer, header-only (OpenSSL 3): an RSA-2048 or EC P-256 key pair, its public
// JWK and a JWKS with a chosen kid, and JWTs signed from a header and a claims JSON text
// (RS256 with an RSA key, ES256 with an EC key; the header is signed as given, so a test
// states its own "alg" and "kid"). Link OpenSSL::Crypto.
//
//   auto issuer = coldbrew::testing::jwt_issuer::rsa("key-1");
//   std::string jwks = issuer.jwks();
//   std::string token = issuer.sign(R"({"alg":"RS256","kid":"key-1"})", R"({"iss":"…"})");

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>

namespace coldbrew::testing {

inline std::string base64url(std::string_view bytes) {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (unsigned char c : bytes) {
        buffer = (buffer << 8) | c;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out.push_back(alphabet[(buffer >> bits) & 0x3F]);
        }
    }
    if (bits > 0) out.push_back(alphabet[(buffer << (6 - bits)) & 0x3F]);
    return out;
}

class jwt_issuer {
public:
    static jwt_issuer rsa(std::string kid) {
        return jwt_issuer(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048}),
                          std::move(kid), false);
    }
    static jwt_issuer ec(std::string kid) {
        return jwt_issuer(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), std::move(kid),
                          true);
    }

    const std::string& kid() const { return kid_; }

    // {"kty":"RSA","kid":…,"use":"sig","alg":"RS256","n":…,"e":…} or the EC P-256 form.
    std::string jwk() const {
        if (ec_)
            return R"({"kty":"EC","kid":")" + kid_ + R"(","use":"sig","alg":"ES256","crv":"P-256","x":")" +
                   base64url(bn_param(OSSL_PKEY_PARAM_EC_PUB_X, 32)) + R"(","y":")" +
                   base64url(bn_param(OSSL_PKEY_PARAM_EC_PUB_Y, 32)) + R"("})";
        return R"({"kty":"RSA","kid":")" + kid_ + R"(","use":"sig","alg":"RS256","n":")" +
               base64url(bn_param(OSSL_PKEY_PARAM_RSA_N, 0)) + R"(","e":")" +
               base64url(bn_param(OSSL_PKEY_PARAM_RSA_E, 0)) + R"("})";
    }
    std::string jwks() const { return R"({"keys":[)" + jwk() + "]}"; }

    // base64url(header).base64url(claims).signature, SHA-256 with this key (JWS RS256 /
    // ES256: the ECDSA signature as raw r||s, 32 bytes each).
    std::string sign(std::string_view header_json, std::string_view claims_json) const {
        const std::string input = base64url(header_json) + "." + base64url(claims_json);
        std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    EVP_MD_CTX_free);
        std::size_t len = 0;
        if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
            EVP_DigestSign(ctx.get(), nullptr, &len,
                           reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
            throw std::runtime_error("jwt_issuer: cannot sign");
        std::string sig(len, '\0');
        if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                           reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
            throw std::runtime_error("jwt_issuer: cannot sign");
        sig.resize(len);
        if (ec_) sig = der_to_raw(sig);
        return input + "." + base64url(sig);
    }

private:
    jwt_issuer(EVP_PKEY* key, std::string kid, bool ec)
        : key_(key, EVP_PKEY_free), kid_(std::move(kid)), ec_(ec) {
        if (!key) throw std::runtime_error("jwt_issuer: key generation failed");
    }

    // A big-endian unsigned parameter, left-padded to `width` bytes (0: as short as it is).
    std::string bn_param(const char* name, int width) const {
        BIGNUM* bn = nullptr;
        if (EVP_PKEY_get_bn_param(key_.get(), name, &bn) != 1)
            throw std::runtime_error("jwt_issuer: no key parameter");
        int size = width > 0 ? width : BN_num_bytes(bn);
        std::string out(static_cast<std::size_t>(size), '\0');
        BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), size);
        BN_free(bn);
        return out;
    }

    static std::string der_to_raw(const std::string& der) {
        const auto* p = reinterpret_cast<const unsigned char*>(der.data());
        ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
        if (!sig) throw std::runtime_error("jwt_issuer: bad ECDSA signature");
        std::string raw(64, '\0');
        BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
        BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
        ECDSA_SIG_free(sig);
        return raw;
    }

    std::shared_ptr<EVP_PKEY> key_;
    std::string kid_;
    bool ec_ = false;
};

}  // namespace coldbrew::testing
