#include "emulator/gateway/api_keys.hpp"

#include "tests/catch.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

#include <stdexcept>

using namespace coldbrew;
using namespace coldbrew::gateway;
using namespace coldbrew::gateway::testing;

namespace {

using result = api_key_gate::result;

constexpr std::int64_t noon_2024_03_06 = 1709683200000 + 12 * 3'600'000;
constexpr std::int64_t day_ms = 86'400'000;

config::api_key key(std::string name, std::string value, bool enabled = true) {
    config::api_key k;
    k.name = std::move(name);
    k.value = std::move(value);
    k.enabled = enabled;
    return k;
}

config::stack keyed_stack() {
    config::stack s;
    s.apis = {rest_api("Api", "Prod"), rest_api("Other", "Prod")};
    s.api_keys = {key("Alice", "alice-secret-value-0001"), key("Bob", "bob-secret-value-00002"),
                  key("Off", "off-secret-value-000003", false),
                  key("Loner", "loner-secret-value-0004")};
    config::usage_plan basic;
    basic.name = "Basic";
    basic.api_ids = {"Api"};
    basic.keys = {"Alice", "Bob", "Off"};
    basic.rate_limit = 1;
    basic.burst_limit = 2;
    basic.quota_limit = 3;
    basic.quota_period = "DAY";
    s.usage_plans = {basic};
    return s;
}

}  // namespace

TEST_CASE("api_key_gate: missing, unknown and disabled keys are forbidden", "[unit]") {
    auto s = keyed_stack();
    api_key_gate gate(s);
    const auto& api = s.apis[0];
    auto none = gate.admit(api, "", 0, noon_2024_03_06);
    CHECK(none.r == result::forbidden);
    CHECK(none.key == nullptr);
    CHECK(none.key_id.empty());

    auto unknown = gate.admit(api, "not-a-key-of-this-stack", 0, noon_2024_03_06);
    CHECK(unknown.r == result::forbidden);
    CHECK(unknown.key == nullptr);

    auto off = gate.admit(api, "off-secret-value-000003", 0, noon_2024_03_06);
    CHECK(off.r == result::forbidden);
    REQUIRE(off.key != nullptr);
    CHECK(off.key->name == "Off");
    CHECK(off.key_id.size() == 10);
}

TEST_CASE("api_key_gate: a key is forbidden on an API none of its plans covers", "[unit]") {
    auto s = keyed_stack();
    api_key_gate gate(s);
    CHECK(gate.admit(s.apis[1], "alice-secret-value-0001", 0, noon_2024_03_06).r ==
          result::forbidden);
    // A key in no plan at all.
    CHECK(gate.admit(s.apis[0], "loner-secret-value-0004", 0, noon_2024_03_06).r ==
          result::forbidden);
    CHECK(gate.admit(s.apis[0], "alice-secret-value-0001", 0, noon_2024_03_06).r ==
          result::allowed);
}

TEST_CASE("api_key_gate: key ids are stable, 10 characters, one per key", "[unit]") {
    auto s = keyed_stack();
    api_key_gate gate(s);
    auto a1 = gate.admit(s.apis[0], "alice-secret-value-0001", 0, noon_2024_03_06);
    auto a2 = gate.admit(s.apis[1], "alice-secret-value-0001", 0, noon_2024_03_06);
    auto b = gate.admit(s.apis[0], "bob-secret-value-00002", 0, noon_2024_03_06);
    CHECK(a1.key_id.size() == 10);
    for (char ch : a1.key_id) CHECK(((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')));
    CHECK(a1.key_id == a2.key_id);
    CHECK(a1.key_id != b.key_id);
    api_key_gate other(s);
    CHECK(other.admit(s.apis[0], "alice-secret-value-0001", 0, noon_2024_03_06).key_id ==
          a1.key_id);
}

TEST_CASE("api_key_gate: every key has its own bucket and quota", "[unit]") {
    auto s = keyed_stack();
    api_key_gate gate(s);
    const auto& api = s.apis[0];
    const std::string alice = "alice-secret-value-0001", bob = "bob-secret-value-00002";
    // Burst 2 at 1/s.
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::allowed);
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::allowed);
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::throttled);
    // Bob is not slowed by Alice.
    CHECK(gate.admit(api, bob, 0, noon_2024_03_06).r == result::allowed);
    // A second later Alice has one token: her third request of the day; the quota is 3.
    CHECK(gate.admit(api, alice, 1000, noon_2024_03_06).r == result::allowed);
    CHECK(gate.admit(api, alice, 5000, noon_2024_03_06).r == result::quota_exceeded);
    // The next UTC day the quota starts again.
    CHECK(gate.admit(api, alice, 6000, noon_2024_03_06 + day_ms).r == result::allowed);
}

TEST_CASE("api_key_gate: reset zeroes buckets and quotas", "[unit]") {
    auto s = keyed_stack();
    api_key_gate gate(s);
    const auto& api = s.apis[0];
    const std::string alice = "alice-secret-value-0001";
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::allowed);
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::allowed);
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::throttled);
    gate.reset();
    CHECK(gate.admit(api, alice, 0, noon_2024_03_06).r == result::allowed);
}

TEST_CASE("api_key_gate: a plan without throttle or quota only checks the key", "[unit]") {
    config::stack s;
    s.apis = {rest_api("Api", "Prod")};
    s.api_keys = {key("K", "k-secret-value-00000001")};
    config::usage_plan open;
    open.name = "Open";
    open.api_ids = {"Api"};
    open.keys = {"K"};
    s.usage_plans = {open};
    api_key_gate gate(s);
    for (int i = 0; i < 50; ++i)
        CHECK(gate.admit(s.apis[0], "k-secret-value-00000001", 0, noon_2024_03_06).r ==
              result::allowed);
}

TEST_CASE("api_key_answer: API Gateway's bodies and error types", "[unit]") {
    const std::string rid = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef";
    auto forbidden = api_key_answer(result::forbidden, rid);
    CHECK(forbidden.status == 403);
    CHECK(forbidden.body == R"({"message":"Forbidden"})");
    CHECK(forbidden.header("x-amzn-ErrorType") == "ForbiddenException");
    CHECK(forbidden.header("Content-Type") == "application/json");
    CHECK(forbidden.header("x-amzn-RequestId") == rid);
    CHECK(forbidden.header("x-amz-apigw-id"));

    auto throttled = api_key_answer(result::throttled, rid);
    CHECK(throttled.status == 429);
    CHECK(throttled.body == R"({"message":"Too Many Requests"})");
    CHECK(throttled.header("x-amzn-ErrorType") == "TooManyRequestsException");

    auto quota = api_key_answer(result::quota_exceeded, rid);
    CHECK(quota.status == 429);
    CHECK(quota.body == R"({"message":"Limit Exceeded"})");
    CHECK(quota.header("x-amzn-ErrorType") == "LimitExceededException");

    CHECK_THROWS_AS(api_key_answer(result::allowed, rid), std::invalid_argument);
}
