#include "emulator/http/message.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::http;

TEST_CASE("request: path and query split the raw target at the first '?'", "[unit]") {
    request r;
    r.target = "/a/b%20c?x=1&y=2?z";
    CHECK(r.path() == "/a/b%20c");
    CHECK(r.query() == "x=1&y=2?z");
    r.target = "/plain";
    CHECK(r.query().empty());
}

TEST_CASE("headers are looked up case-insensitively, first value wins", "[unit]") {
    request r;
    r.headers = {{"Content-Type", "a"}, {"content-type", "b"}};
    CHECK(r.header("CONTENT-TYPE") == std::optional<std::string_view>("a"));
    CHECK_FALSE(r.header("Accept").has_value());
    response res;
    res.add("Set-Cookie", "a=1");
    res.add("Set-Cookie", "b=2");
    res.set("X-One", "1");
    res.set("x-one", "2");
    CHECK(res.headers.size() == 3);
    CHECK(res.header("X-ONE") == std::optional<std::string_view>("2"));
}

TEST_CASE("percent_decode keeps '+' in paths and decodes it in queries", "[unit]") {
    CHECK(percent_decode("a+b%20c") == "a+b c");
    CHECK(percent_decode("a+b%20c", true) == "a b c");
    CHECK(percent_decode("%2F%2f") == "//");
    CHECK(percent_decode("100%") == "100%");
    CHECK(percent_decode("%zz") == "%zz");
}
