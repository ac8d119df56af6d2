#include "tests/unit/authorizers/authorizer_fixtures.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

using namespace coldbrew;
using namespace coldbrew::authorizers;
using namespace coldbrew::authorizers::testing;
using nlohmann::json;

namespace {

const std::string rid = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef";

std::string header(const http::response& res, std::string_view name) {
    auto h = res.header(name);
    return h ? std::string(*h) : std::string("<absent>");
}

} // namespace

TEST_CASE("answer: REST statuses, exact bodies and x-amzn-ErrorType", "[unit]") {
    const auto rest = config::api_kind::rest;
    auto u = answer(rest, verdict::unauthorized, rid);
    CHECK(u.status == 401);
    CHECK(u.body == R"({"message":"Unauthorized"})");
    CHECK(header(u, "x-amzn-ErrorType") == "UnauthorizedException");

    auto d = answer(rest, verdict::deny, rid);
    CHECK(d.status == 403);
    CHECK(d.body == R"({"Message":"User is not authorized to access this resource with an explicit deny"})");
    CHECK(d.body.size() == 82); // Content-Length in captured responses
    CHECK(header(d, "x-amzn-ErrorType") == "AccessDeniedException");

    auto i = answer(rest, verdict::implicit_deny, rid);
    CHECK(i.status == 403);
    CHECK(i.body == R"({"Message":"User is not authorized to access this resource"})");
    CHECK(header(i, "x-amzn-ErrorType") == "AccessDeniedException");

    auto f = answer(rest, verdict::failure, rid);
    CHECK(f.status == 500);
    CHECK(f.body == R"({"message": null})");
    CHECK(header(f, "x-amzn-ErrorType") == "AuthorizerConfigurationException");

    for (const auto& res : {u, d, i, f}) {
        CHECK(header(res, "Content-Type") == "application/json");
        CHECK(header(res, "x-amzn-RequestId") == rid);
        CHECK(header(res, "x-amz-apigw-id") == gateway::apigw_id_for(rid));
    }
}

TEST_CASE("answer: HTTP API statuses and bodies, no x-amzn-ErrorType", "[unit]") {
    const auto http = config::api_kind::http;
    auto u = answer(http, verdict::unauthorized, rid);
    CHECK(u.status == 401);
    CHECK(u.body == R"({"message":"Unauthorized"})");
    auto d = answer(http, verdict::deny, rid);
    auto i = answer(http, verdict::implicit_deny, rid);
    CHECK(d.status == 403);
    CHECK(d.body == R"({"message":"Forbidden"})");
    CHECK(i.status == 403);
    CHECK(i.body == d.body);
    auto f = answer(http, verdict::failure, rid);
    CHECK(f.status == 500);
    CHECK(f.body == R"({"message":"Internal Server Error"})");
    for (const auto& res : {u, d, i, f}) {
        CHECK(header(res, "x-amzn-ErrorType") == "<absent>");
        CHECK(header(res, "Apigw-Requestid") == rid);
        CHECK(header(res, "x-amzn-RequestId") == rid);
    }
}

TEST_CASE("answer: an allowed request has no error answer", "[unit]") {
    CHECK_THROWS_AS(answer(config::api_kind::rest, verdict::allow, rid), std::invalid_argument);
}

TEST_CASE("cache_key: name, function and identity values; TTL 0 or no sources: none",
          "[unit]") {
    auto token = token_authorizer();
    identity alice{true, {"Bearer alice"}, "Bearer alice"};
    identity bob{true, {"Bearer bob"}, "Bearer bob"};
    auto ka = cache_key(token, alice);
    REQUIRE(ka);
    CHECK(ka == cache_key(token, alice));
    CHECK(ka != cache_key(token, bob));

    auto other_name = token;
    other_name.name = "Other";
    CHECK(ka != cache_key(other_name, alice));
    auto other_function = token;
    other_function.function = "OtherFn";
    CHECK(ka != cache_key(other_function, alice));

    auto no_ttl = token;
    no_ttl.result_ttl_s = 0;
    CHECK_FALSE(cache_key(no_ttl, alice));

    CHECK_FALSE(cache_key(request_authorizer({}), identity{true, {}, ""}));

    auto req = request_authorizer({"method.request.header.A", "method.request.header.B"});
    // Values are kept apart: ("ab", "c") and ("a", "bc") are different identities.
    CHECK(cache_key(req, identity{true, {"ab", "c"}, ""}) !=
          cache_key(req, identity{true, {"a", "bc"}, ""}));

    auto jwt = token;
    jwt.kind = config::authorizer::type::jwt;
    CHECK_FALSE(cache_key(jwt, alice));
}

TEST_CASE("result_cache: hit within the TTL, miss at expiry, keyed apart", "[unit]") {
    result_cache cache;
    result r;
    r.principal_id = "alice";
    cache.put("k1", r, 300000, 1000);
    CHECK(cache.size() == 1);
    REQUIRE(cache.find("k1", 1000));
    CHECK(cache.find("k1", 1000)->principal_id == "alice");
    CHECK(cache.find("k1", 300999));
    CHECK_FALSE(cache.find("k2", 2000));
    CHECK_FALSE(cache.find("k1", 301000)); // stored at 1000 with 300 s: gone at 301000
    CHECK(cache.size() == 0);              // the expired entry is dropped

    result b;
    b.principal_id = "bob";
    cache.put("k1", r, 1000, 0);
    cache.put("k1", b, 1000, 500); // replaced, and its TTL restarts
    REQUIRE(cache.find("k1", 1400));
    CHECK(cache.find("k1", 1400)->principal_id == "bob");
    CHECK(cache.find("k1", 1499));

    cache.put("zero", r, 0, 0);
    CHECK_FALSE(cache.find("zero", 0));
    cache.clear();
    CHECK(cache.size() == 0);
}

TEST_CASE("result_cache: a cached policy is judged again for another path", "[unit]") {
    const std::string pets7 = "arn:aws:execute-api:us-east-1:1:abc/Prod/GET/pets/7";
    const std::string pets8 = "arn:aws:execute-api:us-east-1:1:abc/Prod/GET/pets/8";
    auto a = token_authorizer();
    auto r = parse_result(a, json{{"principalId", "u"},
                                  {"policyDocument",
                                   {{"Version", "2012-10-17"},
                                    {"Statement",
                                     {{{"Effect", "Allow"},
                                       {"Action", "execute-api:Invoke"},
                                       {"Resource", pets7}}}}}}}
                                 .dump());
    REQUIRE(r);
    identity id{true, {"tok"}, "tok"};
    auto key = cache_key(a, id);
    REQUIRE(key);
    result_cache cache;
    cache.put(*key, *r, a.result_ttl_s * 1000.0, 0);
    const result* hit = cache.find(*key, 10);
    REQUIRE(hit);
    CHECK(judge(*hit, pets7) == verdict::allow);
    CHECK(judge(*hit, pets8) == verdict::implicit_deny);
}
