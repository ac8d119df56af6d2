#include "tests/catch.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

using namespace coldbrew;
using namespace coldbrew::gateway;
using namespace coldbrew::gateway::testing;

namespace {

std::string served_by(const route_table& t, std::string_view method, std::string_view path) {
    auto m = t.match(method, path);
    return m ? m->route->function : std::string("<none>");
}

config::stack http_priority_stack() {
    // The example of [HTTP-ROUTES] plus a $default route.
    config::stack s;
    s.apis = {http_api()};
    s.routes = {route("ServerlessHttpApi", "GET", "/pets/dog/1", "exact", "2.0"),
                route("ServerlessHttpApi", "GET", "/pets/dog/{id}", "param", "2.0"),
                route("ServerlessHttpApi", "GET", "/pets/{proxy+}", "greedy", "2.0"),
                route("ServerlessHttpApi", "ANY", "/{proxy+}", "any_greedy", "2.0"),
                route("ServerlessHttpApi", "ANY", "$default", "default", "2.0")};
    return s;
}

} // namespace

TEST_CASE("routing priority: exact > {param} > {proxy+} > $default", "[unit]") {
    auto s = http_priority_stack();
    route_table t(s);
    CHECK(served_by(t, "GET", "/pets/dog/1") == "exact");
    CHECK(served_by(t, "GET", "/pets/dog/2") == "param");
    CHECK(served_by(t, "GET", "/pets/cat/1") == "greedy");
    CHECK(served_by(t, "POST", "/test/5") == "any_greedy");
    // Nothing but $default serves the root: /{proxy+} does not match "/".
    CHECK(served_by(t, "GET", "/") == "default");
    // Declaration order does not matter.
    std::reverse(s.routes.begin(), s.routes.end());
    route_table reversed(s);
    CHECK(served_by(reversed, "GET", "/pets/dog/1") == "exact");
    CHECK(served_by(reversed, "GET", "/pets/dog/2") == "param");
    CHECK(served_by(reversed, "GET", "/pets/cat/1") == "greedy");
}

TEST_CASE("routing: path parameters are decoded, the greedy one is the whole rest", "[unit]") {
    auto s = http_priority_stack();
    route_table t(s);
    auto m = t.match("GET", "/pets/dog/a%20b");
    REQUIRE(m);
    REQUIRE(m->path_parameters.size() == 1);
    CHECK(m->path_parameters[0] == std::pair<std::string, std::string>{"id", "a b"});
    CHECK(m->path == "/pets/dog/a%20b"); // raw

    auto g = t.match("GET", "/pets/cat/x/y/z");
    REQUIRE(g);
    CHECK(g->route->function == "greedy");
    CHECK(g->path_parameters[0] == std::pair<std::string, std::string>{"proxy", "cat/x/y/z"});
}

TEST_CASE("routing: an explicit method beats ANY on the same path", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "ANY", "/items", "any"),
                route("ServerlessRestApi", "POST", "/items", "post")};
    route_table t(s);
    CHECK(served_by(t, "POST", "/items") == "post");
    CHECK(served_by(t, "GET", "/items") == "any");
    CHECK(served_by(t, "DELETE", "/items") == "any");
}

TEST_CASE("routing: the method is part of the match", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "GET", "/items", "get_items"),
                route("ServerlessRestApi", "ANY", "/{proxy+}", "proxy")};
    route_table t(s);
    CHECK(served_by(t, "GET", "/items") == "get_items");
    // No POST on /items: the greedy ANY route answers (HTTP-ROUTES "POST /test/5").
    CHECK(served_by(t, "POST", "/items") == "proxy");
}

TEST_CASE("routing: HEAD is not implied by GET", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "GET", "/hello", "hello")};
    route_table t(s);
    CHECK(served_by(t, "GET", "/hello") == "hello");
    CHECK_FALSE(t.match("HEAD", "/hello"));
    CHECK_FALSE(t.match("POST", "/hello"));
}

TEST_CASE("routing: {proxy+} does not match its parent (aws-sam-cli#437)", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "ANY", "/{proxy+}", "root_proxy"),
                route("ServerlessRestApi", "ANY", "/a/{proxy+}", "a_proxy")};
    route_table t(s);
    CHECK_FALSE(t.match("GET", "/"));
    CHECK(served_by(t, "GET", "/a") == "root_proxy"); // "a" is a non-empty rest for /{proxy+}
    CHECK(served_by(t, "GET", "/a/b") == "a_proxy");
    CHECK(served_by(t, "GET", "/x") == "root_proxy");

    config::stack only_a;
    only_a.apis = {rest_api()};
    only_a.routes = {route("ServerlessRestApi", "ANY", "/a/{proxy+}", "a_proxy")};
    route_table ta(only_a);
    CHECK_FALSE(ta.match("GET", "/a"));
    CHECK_FALSE(ta.match("GET", "/a/"));
    CHECK(served_by(ta, "GET", "/a/b/c") == "a_proxy");
}

TEST_CASE("routing: a REST path under /{stage} matches with the stage stripped", "[unit]") {
    config::stack s;
    s.apis = {rest_api("Api", "dev"), rest_api("Other", "prod")};
    s.routes = {route("Api", "GET", "/hello", "hello"), route("Api", "GET", "/", "root"),
                route("Other", "GET", "/bye", "bye")};
    route_table t(s);
    auto m = t.match("GET", "/dev/hello");
    REQUIRE(m);
    CHECK(m->route->function == "hello");
    CHECK(m->path == "/hello");
    CHECK(served_by(t, "GET", "/hello") == "hello"); // sam local style, no stage
    auto root = t.match("GET", "/dev");
    REQUIRE(root);
    CHECK(root->route->function == "root");
    CHECK(root->path == "/");
    CHECK(served_by(t, "GET", "/dev/") == "root");
    // A stage only strips for its own API.
    CHECK_FALSE(t.match("GET", "/dev/bye"));
    CHECK(served_by(t, "GET", "/prod/bye") == "bye");
}

TEST_CASE("routing: a named HTTP API stage is served under /{stage}", "[unit]") {
    config::stack s;
    s.apis = {http_api("H", "v1")};
    s.routes = {route("H", "GET", "/hello", "hello", "2.0"),
                route("H", "ANY", "/h/{proxy+}", "h", "2.0")};
    route_table t(s);
    auto m = t.match("GET", "/v1/hello");
    REQUIRE(m);
    CHECK(m->route->function == "hello");
    CHECK(m->path == "/hello");
    auto g = t.match("POST", "/v1/h/x");
    REQUIRE(g);
    CHECK(g->route->function == "h");
    CHECK(g->path == "/h/x");
    CHECK(g->path_parameters[0] == std::pair<std::string, std::string>{"proxy", "x"});
    // The unprefixed path still works (sam local style).
    auto bare = t.match("GET", "/hello");
    REQUIRE(bare);
    CHECK(bare->route->function == "hello");
    CHECK(bare->path == "/hello");
    CHECK_FALSE(t.match("GET", "/v2/hello"));

    // rawPath carries the stage exactly once either way.
    auto raw_path = [&](std::string_view path) {
        auto req = request("POST", std::string(path));
        auto mm = t.match("POST", path);
        REQUIRE(mm);
        return nlohmann::json::parse(build_event_v2(req, *mm, info()))["rawPath"]
            .get<std::string>();
    };
    CHECK(raw_path("/v1/h/x") == "/v1/h/x");
    CHECK(raw_path("/h/x") == "/v1/h/x");

    // The $default stage has no prefix.
    config::stack d;
    d.apis = {http_api("D", "$default")};
    d.routes = {route("D", "GET", "/hello", "hello", "2.0")};
    CHECK_FALSE(route_table(d).match("GET", "/$default/hello"));
}

TEST_CASE("routing: a stage URL matches the stage's routes before the bare path", "[unit]") {
    // "/dev/users" on AWS is resource "/users" of stage dev, so {proxy+} is "users".
    config::stack s;
    s.apis = {rest_api("R", "dev"), http_api("H", "v1")};
    s.routes = {route("R", "ANY", "/{proxy+}", "r"), route("H", "ANY", "$default", "h", "2.0")};
    route_table t(s);
    auto m = t.match("GET", "/dev/users");
    REQUIRE(m);
    CHECK(m->route->function == "r");
    CHECK(m->path == "/users");
    CHECK(m->path_parameters[0] == std::pair<std::string, std::string>{"proxy", "users"});
    // A $default route of a named HTTP API stage sees the path without the stage.
    auto d = t.match("GET", "/v1");
    REQUIRE(d);
    CHECK(d->route->function == "h");
    CHECK(d->path == "/");
    // Without a stage prefix the bare path is matched as before.
    auto bare = t.match("GET", "/v1x/users");
    REQUIRE(bare);
    CHECK(bare->route->function == "r");
    CHECK(bare->path == "/v1x/users");

    config::stack only_default;
    only_default.apis = {http_api("H", "v1")};
    only_default.routes = {route("H", "ANY", "$default", "h", "2.0")};
    route_table td(only_default);
    auto staged = td.match("PUT", "/v1/a/b");
    REQUIRE(staged);
    CHECK(staged->path == "/a/b");
    auto unstaged = td.match("PUT", "/a/b");
    REQUIRE(unstaged);
    CHECK(unstaged->path == "/a/b");
}

TEST_CASE("routing: %2F stays inside one segment, other escapes are decoded", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "GET", "/files/{name}", "file"),
                route("ServerlessRestApi", "GET", "/a b", "space"),
                route("ServerlessRestApi", "GET", "/c+d", "plus")};
    route_table t(s);
    auto m = t.match("GET", "/files/a%2Fb");
    REQUIRE(m);
    CHECK(m->route->function == "file");
    CHECK(m->path_parameters[0].second == "a/b");
    CHECK_FALSE(t.match("GET", "/files/a/b"));
    CHECK(served_by(t, "GET", "/a%20b") == "space");
    // A literal '+' in a path stays '+' (spec §8).
    CHECK(served_by(t, "GET", "/c+d") == "plus");
    CHECK_FALSE(t.match("GET", "/c%20d"));
}

TEST_CASE("routing: a trailing slash is an extra empty segment (choice)", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "GET", "/hello", "hello"),
                route("ServerlessRestApi", "GET", "/users/{id}", "user")};
    route_table t(s);
    CHECK(served_by(t, "GET", "/hello") == "hello");
    CHECK_FALSE(t.match("GET", "/hello/"));
    CHECK_FALSE(t.match("GET", "/users/"));
    CHECK_FALSE(t.match("GET", "/users//"));
}

TEST_CASE("routing: $default only when nothing else matches, for any method", "[unit]") {
    config::stack s;
    s.apis = {http_api()};
    s.routes = {route("ServerlessHttpApi", "ANY", "$default", "default", "2.0"),
                route("ServerlessHttpApi", "GET", "/a", "a", "2.0")};
    route_table t(s);
    CHECK(served_by(t, "GET", "/a") == "a");
    CHECK(served_by(t, "POST", "/a") == "default");
    CHECK(served_by(t, "PATCH", "/x/y/z") == "default");
    auto m = t.match("GET", "/x");
    REQUIRE(m);
    CHECK(m->path_parameters.empty());
}

TEST_CASE("routing: miss_kind names the API that would answer", "[unit]") {
    config::stack s;
    s.apis = {rest_api("R", "Prod"), http_api("H")};
    s.routes = {route("R", "GET", "/rest", "r"), route("H", "GET", "/http", "h", "2.0")};
    route_table t(s);
    CHECK(t.miss_kind("/http") == config::api_kind::http); // e.g. POST /http
    CHECK(t.miss_kind("/rest") == config::api_kind::rest);
    CHECK(t.miss_kind("/nowhere") == config::api_kind::rest); // the stack has a REST API

    config::stack only_http;
    only_http.apis = {http_api("H")};
    only_http.routes = {route("H", "GET", "/http", "h", "2.0")};
    CHECK(route_table(only_http).miss_kind("/nowhere") == config::api_kind::http);

    // Under a named HTTP API stage a miss is that API's 404, even beside a REST API.
    config::stack staged;
    staged.apis = {rest_api("R", "Prod"), http_api("H", "v1")};
    staged.routes = {route("R", "GET", "/rest", "r"), route("H", "GET", "/http", "h", "2.0")};
    route_table ts(staged);
    CHECK(ts.miss_kind("/v1/nope") == config::api_kind::http);
    CHECK(ts.miss_kind("/v1") == config::api_kind::http);
    CHECK(ts.miss_kind("/v1/http") == config::api_kind::http); // e.g. POST
    CHECK(ts.miss_kind("/Prod/nope") == config::api_kind::rest);
    CHECK(ts.miss_kind("/nope") == config::api_kind::rest);
}

TEST_CASE("api_id_for: stable 10 characters of [a-z0-9]", "[unit]") {
    auto a = rest_api("ServerlessRestApi");
    auto id = api_id_for(a);
    CHECK(id.size() == 10);
    for (char c : id)
        CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')));
    CHECK(api_id_for(rest_api("ServerlessRestApi")) == id);
    std::set<std::string> ids;
    for (const char* n : {"ServerlessRestApi", "ServerlessHttpApi", "MyApi", "MyApi2", "A"})
        ids.insert(api_id_for(rest_api(n)));
    CHECK(ids.size() == 5);
}
