// The control plane's access rules: Origin, Host and the bearer token, without a socket.

#include "emulator/http/access.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::http;

namespace {

request with(std::initializer_list<std::pair<std::string, std::string>> headers) {
    request r;
    r.method = "POST";
    r.target = "/faults";
    for (const auto& h : headers) r.headers.push_back(h);
    return r;
}

access_policy loopback(int port = 3002) {
    access_policy p;
    p.listen_host = "127.0.0.1";
    p.listen_port = port;
    return p;
}

}  // namespace

TEST_CASE("access: what SDKs, the AWS CLI and curl send passes", "[unit]") {
    CHECK(check_access(with({{"Host", "127.0.0.1:3002"}}), loopback()).allowed());
    CHECK(check_access(with({{"Host", "localhost:3002"}, {"User-Agent", "aws-cli/2"}}), loopback()).allowed());
    CHECK(check_access(with({{"Host", "LOCALHOST"}}), loopback()).allowed());
    CHECK(check_access(with({}), loopback()).allowed());  // HTTP/1.0 without Host
    CHECK(check_access(with({{"Host", "[::1]:3002"}}), loopback()).allowed());
    CHECK(check_access(with({{"Host", "app.localhost:3002"}}), loopback()).allowed());
}

TEST_CASE("access: a foreign Origin is refused, the listener's own passes", "[unit]") {
    auto evil = check_access(with({{"Host", "127.0.0.1:3002"}, {"Origin", "http://evil.example"}}), loopback());
    CHECK(evil.verdict == access_verdict::foreign_origin);
    CHECK(evil.reason.find("http://evil.example") != std::string::npos);
    // Same host, another port: a local dev server is another origin.
    CHECK(check_access(with({{"Origin", "http://localhost:5173"}}), loopback()).verdict ==
          access_verdict::foreign_origin);
    CHECK(check_access(with({{"Origin", "null"}}), loopback()).verdict == access_verdict::foreign_origin);
    CHECK(check_access(with({{"Origin", "https://127.0.0.1:3002"}}), loopback()).verdict ==
          access_verdict::foreign_origin);
    CHECK(check_access(with({{"Origin", ""}}), loopback()).verdict == access_verdict::foreign_origin);
    CHECK(check_access(with({{"Origin", "http://127.0.0.1"}}), loopback()).verdict ==
          access_verdict::foreign_origin);  // port 80
    CHECK(check_access(with({{"Origin", "http://127.0.0.1:3002"}}), loopback()).allowed());
    CHECK(check_access(with({{"Origin", "http://localhost:3002"}}), loopback()).allowed());
    CHECK(check_access(with({{"Origin", "http://127.0.0.1:80"}}), loopback(80)).allowed());
    CHECK(check_access(with({{"Origin", "http://127.0.0.1"}}), loopback(80)).allowed());
}

TEST_CASE("access: a repeated Origin or Host is refused, though its first value passes", "[unit]") {
    auto origins = check_access(with({{"Host", "127.0.0.1:3002"},
                                      {"Origin", "http://127.0.0.1:3002"},
                                      {"origin", "http://evil.example"}}),
                                loopback());
    CHECK(origins.verdict == access_verdict::foreign_origin);
    CHECK(origins.reason.find("more than one Origin") != std::string::npos);
    auto hosts =
        check_access(with({{"Host", "127.0.0.1:3002"}, {"HOST", "rebind.evil.example"}}), loopback());
    CHECK(hosts.verdict == access_verdict::foreign_host);
    CHECK(hosts.reason.find("more than one Host") != std::string::npos);
}

TEST_CASE("access: a Host naming another machine is refused (DNS rebinding)", "[unit]") {
    auto r = check_access(with({{"Host", "rebind.evil.example:3002"}}), loopback());
    CHECK(r.verdict == access_verdict::foreign_host);
    CHECK(r.reason.find("rebind.evil.example") != std::string::npos);
    CHECK(check_access(with({{"Host", "192.168.1.20:3002"}}), loopback()).verdict == access_verdict::foreign_host);
    CHECK(check_access(with({{"Host", "localhost.evil.example"}}), loopback()).verdict ==
          access_verdict::foreign_host);
    CHECK(check_access(with({{"Host", "::1"}}), loopback()).verdict == access_verdict::foreign_host);  // unbracketed
    CHECK(check_access(with({{"Host", "a:b:c"}}), loopback()).verdict == access_verdict::foreign_host);
    CHECK(check_access(with({{"Host", "x:99999"}}), loopback()).verdict == access_verdict::foreign_host);
}

TEST_CASE("access: a listener on one address accepts that address; on a wildcard any IP literal", "[unit]") {
    access_policy lan;
    lan.listen_host = "192.168.1.20";
    lan.listen_port = 3001;
    CHECK(check_access(with({{"Host", "192.168.1.20:3001"}}), lan).allowed());
    CHECK(check_access(with({{"Host", "127.0.0.1:3001"}}), lan).allowed());
    CHECK(check_access(with({{"Host", "10.0.0.1:3001"}}), lan).verdict == access_verdict::foreign_host);
    CHECK(check_access(with({{"Origin", "http://192.168.1.20:3001"}}), lan).allowed());

    access_policy any;
    any.listen_host = "0.0.0.0";
    any.listen_port = 3001;
    CHECK(check_access(with({{"Host", "10.0.0.1:3001"}}), any).allowed());
    CHECK(check_access(with({{"Host", "[fe80::1]:3001"}}), any).allowed());
    CHECK(check_access(with({{"Host", "my-laptop.lan:3001"}}), any).verdict == access_verdict::foreign_host);
    CHECK(check_access(with({{"Origin", "http://evil.example:3001"}}), any).verdict ==
          access_verdict::foreign_origin);
}

TEST_CASE("access: with a token, the bearer token is required and compared exactly", "[unit]") {
    auto p = loopback();
    p.bearer_token = "s3cret-token";
    CHECK(check_access(with({{"Host", "127.0.0.1:3002"}}), p).verdict == access_verdict::missing_token);
    CHECK(check_access(with({{"Authorization", "Bearer s3cret-token"}}), p).allowed());
    CHECK(check_access(with({{"Authorization", "bearer s3cret-token"}}), p).allowed());
    CHECK(check_access(with({{"Authorization", "Bearer s3cret-tokeN"}}), p).verdict == access_verdict::wrong_token);
    CHECK(check_access(with({{"Authorization", "Bearer s3cret-token2"}}), p).verdict == access_verdict::wrong_token);
    CHECK(check_access(with({{"Authorization", "Bearer "}}), p).verdict == access_verdict::wrong_token);
    CHECK(check_access(with({{"Authorization", "Basic s3cret-token"}}), p).verdict == access_verdict::wrong_token);
    // Origin and Host are decided first: a browser learns nothing about the token.
    CHECK(check_access(with({{"Origin", "http://evil.example"}, {"Authorization", "Bearer s3cret-token"}}), p)
              .verdict == access_verdict::foreign_origin);
}

TEST_CASE("access: loopback and wildcard addresses, constant-time comparison", "[unit]") {
    CHECK(is_loopback_host("127.0.0.1"));
    CHECK(is_loopback_host("127.0.0.2"));
    CHECK(is_loopback_host("::1"));
    CHECK(is_loopback_host("[::1]"));
    CHECK(is_loopback_host("localhost"));
    CHECK(is_loopback_host("::ffff:127.0.0.1"));
    CHECK_FALSE(is_loopback_host("0.0.0.0"));
    CHECK_FALSE(is_loopback_host("128.0.0.1"));
    CHECK_FALSE(is_loopback_host("evil-localhost"));
    CHECK(is_wildcard_host("0.0.0.0"));
    CHECK(is_wildcard_host("::"));
    CHECK(is_wildcard_host("[::]"));
    CHECK_FALSE(is_wildcard_host("127.0.0.1"));
    CHECK(constant_time_equals("abc", "abc"));
    CHECK(constant_time_equals("", ""));
    CHECK_FALSE(constant_time_equals("abc", "abd"));
    CHECK_FALSE(constant_time_equals("abc", "abcd"));
    CHECK_FALSE(constant_time_equals("abc", ""));
}
