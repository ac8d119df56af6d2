#include "emulator/codec/base64.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::codec;

TEST_CASE("base64: RFC 4648 test vectors", "[unit]") {
    CHECK(base64_encode("") == "");
    CHECK(base64_encode("f") == "Zg==");
    CHECK(base64_encode("fo") == "Zm8=");
    CHECK(base64_encode("foo") == "Zm9v");
    CHECK(base64_encode("foob") == "Zm9vYg==");
    CHECK(base64_encode("fooba") == "Zm9vYmE=");
    CHECK(base64_encode("foobar") == "Zm9vYmFy");
    CHECK(base64_decode("Zm9vYmE=") == std::optional<std::string>("fooba"));
    CHECK(base64_decode("Zm9vYg") == std::optional<std::string>("foob"));
}

TEST_CASE("base64: binary round trip and invalid input", "[unit]") {
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
    CHECK(base64_decode(base64_encode(bytes)) == std::optional<std::string>(bytes));
    CHECK_FALSE(base64_decode("Zm9v!").has_value());
    CHECK_FALSE(base64_decode("Z").has_value());
}

TEST_CASE("utf8 validation", "[unit]") {
    CHECK(is_valid_utf8("plain ascii"));
    CHECK(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    CHECK_FALSE(is_valid_utf8("\xc3"));
    CHECK_FALSE(is_valid_utf8("\xff\xfe"));
    CHECK_FALSE(is_valid_utf8("\xe2\x28\xa1"));
}
