#include "emulator/functions/service_errors.hpp"

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"

using namespace coldbrew::functions;

TEST_CASE("throttle: Lambda's 429 TooManyRequestsException with the limit as Reason", "[unit]") {
    auto e = too_many_requests("ReservedFunctionConcurrentInvocationLimitExceeded");
    CHECK(e.status == 429);
    CHECK(e.error_type == "TooManyRequestsException");
    CHECK(e.body ==
          R"({"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"})");
    CHECK(nlohmann::json::parse(too_many_requests("ConcurrentInvocationLimitExceeded").body)["Reason"] ==
          "ConcurrentInvocationLimitExceeded");
}
