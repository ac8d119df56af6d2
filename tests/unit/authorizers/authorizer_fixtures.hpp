#pragma once
// Hand-built authorizers and stacks for the authorizer unit tests (no YAML).

#include "emulator/authorizers/authorizers.hpp"
#include "tests/catch.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

#include <string>
#include <utility>
#include <vector>

namespace coldbrew::authorizers::testing {

using namespace coldbrew::gateway::testing;

inline config::authorizer token_authorizer(std::string header = "Authorization",
                                           std::string expression = "") {
    config::authorizer a;
    a.name = "TokenAuth";
    a.kind = config::authorizer::type::token;
    a.function = "AuthFn";
    a.identity_sources = {"method.request.header." + header};
    a.validation_expression = std::move(expression);
    return a;
}

inline config::authorizer request_authorizer(std::vector<std::string> sources,
                                             std::string payload_format_version = "") {
    config::authorizer a;
    a.name = "RequestAuth";
    a.kind = config::authorizer::type::request;
    a.function = "AuthFn";
    a.identity_sources = std::move(sources);
    a.payload_format_version = std::move(payload_format_version);
    return a;
}

// One REST API (stage "Prod", a stage variable) and one HTTP API ($default), with a few
// routes each.
struct stack_fixture {
    config::stack stack;
    stack_fixture() {
        config::api rest = rest_api("ServerlessRestApi", "Prod");
        rest.stage_variables = {{"env", "test"}, {"empty", ""}};
        config::api http = http_api("ServerlessHttpApi");
        http.stage_variables = {{"env", "test"}};
        stack.apis = {rest, http};
        stack.routes = {
            route("ServerlessRestApi", "GET", "/pets/{id}", "pet"),
            route("ServerlessRestApi", "ANY", "/{proxy+}", "proxy"),
            route("ServerlessRestApi", "GET", "/", "root"),
            route("ServerlessHttpApi", "GET", "/v2/pets/{id}", "pet2", "2.0"),
            route("ServerlessHttpApi", "POST", "/v1/items", "items1", "1.0"),
        };
    }
    gateway::route_match match(const http::request& req) const {
        auto m = gateway::route_table(stack).match(req.method, req.path());
        REQUIRE(m);
        return *m;
    }
};

} // namespace coldbrew::authorizers::testing
