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

TEST_CASE("routing: REST keeps %2F inside one segment and passes values as sent", "[unit]") {
    config::stack s;
    s.apis = {rest_api()};
    s.routes = {route("ServerlessRestApi", "GET", "/files/{name}", "file"),
                route("ServerlessRestApi", "GET", "/items/{id}/tags", "tags"),
                route("ServerlessRestApi", "GET", "/a b", "space"),
                route("ServerlessRestApi", "GET", "/c+d", "plus"),
                route("ServerlessRestApi", "ANY", "/raw/{proxy+}", "raw")};
    route_table t(s);
    auto m = t.match("GET", "/files/a%2Fb");
    REQUIRE(m);
    CHECK(m->route->function == "file");
    // REST pathParameters stay percent-encoded (serverless/serverless#5037).
    CHECK(m->path_parameters[0].second == "a%2Fb");
    CHECK_FALSE(t.match("GET", "/files/a/b"));
    auto tagged = t.match("GET", "/items/abc%2F100/tags");
    REQUIRE(tagged);
    CHECK(tagged->route->function == "tags");
    CHECK(tagged->path_parameters[0].second == "abc%2F100");
    auto spaced = t.match("GET", "/files/a%20b");
    REQUIRE(spaced);
    CHECK(spaced->path_parameters[0].second == "a%20b");
    // Literal resources compare decoded.
    CHECK(served_by(t, "GET", "/a%20b") == "space");
    // A literal '+' in a path stays '+' (spec §8).
    CHECK(served_by(t, "GET", "/c+d") == "plus");
    CHECK_FALSE(t.match("GET", "/c%20d"));
    auto greedy = t.match("GET", "/raw/x%2Fy/z%20w");
    REQUIRE(greedy);
    CHECK(greedy->path_parameters[0].second == "x%2Fy/z%20w");
}

TEST_CASE("routing: HTTP APIs decode the path before matching, %2F included", "[unit]") {
    config::stack s;
    s.apis = {http_api()};
    s.routes = {route("ServerlessHttpApi", "GET", "/items/{id}", "item", "2.0"),
                route("ServerlessHttpApi", "GET", "/items/{id}/{sub}", "sub", "2.0"),
                route("ServerlessHttpApi", "GET", "/a b", "space", "2.0"),
                route("ServerlessHttpApi", "ANY", "/raw/{proxy+}", "raw", "2.0")};
    route_table t(s);
    // "abc%2F100" is two segments once decoded.
    auto m = t.match("GET", "/items/abc%2F100");
    REQUIRE(m);
    CHECK(m->route->function == "sub");
    CHECK(m->path_parameters[0].second == "abc");
    CHECK(m->path_parameters[1].second == "100");
    CHECK(m->path == "/items/abc%2F100");  // as sent
    auto spaced = t.match("GET", "/items/a%20b");
    REQUIRE(spaced);
    CHECK(spaced->route->function == "item");
    CHECK(spaced->path_parameters[0].second == "a b");
    CHECK(served_by(t, "GET", "/a%20b") == "space");
    auto greedy = t.match("GET", "/raw/x%2Fy/z%20w");
    REQUIRE(greedy);
    CHECK(greedy->path_parameters[0].second == "x/y/z w");
}

TEST_CASE("routing: one trailing slash is ignored, REST and HTTP API alike", "[unit]") {
    config::stack s;
    s.apis = {rest_api("R", "Prod"), http_api("H", "v1")};
    s.routes = {route("R", "GET", "/hello", "hello"), route("R", "GET", "/users/{id}", "user"),
                route("R", "GET", "/", "root"), route("H", "GET", "/pets", "pets", "2.0"),
                route("H", "ANY", "/h/{proxy+}", "h", "2.0")};
    route_table t(s);
    CHECK(served_by(t, "GET", "/hello") == "hello");
    auto slash = t.match("GET", "/hello/");
    REQUIRE(slash);
    CHECK(slash->route->function == "hello");
    CHECK(slash->path == "/hello/");  // what the client sent
    // Under the stage, with the stage stripped.
    auto staged = t.match("GET", "/Prod/hello/");
    REQUIRE(staged);
    CHECK(staged->route->function == "hello");
    CHECK(staged->path == "/hello/");
    CHECK(served_by(t, "GET", "/Prod/") == "root");
    CHECK(served_by(t, "GET", "/") == "root");
    // "/users/" is "/users": no empty {id}.
    CHECK_FALSE(t.match("GET", "/users/"));
    CHECK_FALSE(t.match("GET", "/users//"));
    CHECK(served_by(t, "GET", "/users/7/") == "user");
    // Only one slash is dropped.
    CHECK_FALSE(t.match("GET", "/hello//"));
    // HTTP API, bare and under its named stage.
    CHECK(served_by(t, "GET", "/pets/") == "pets");
    auto hs = t.match("GET", "/v1/pets/");
    REQUIRE(hs);
    CHECK(hs->route->function == "pets");
    CHECK(hs->path == "/pets/");
    auto g = t.match("GET", "/h/x/");
    REQUIRE(g);
    CHECK(g->path_parameters[0] == std::pair<std::string, std::string>{"proxy", "x"});
}

TEST_CASE("match_preflight: the route of any method whose API has CORS for its path",
          "[unit]") {
    config::cors_config any;
    any.allow_origins = {"*"};
    config::cors_config own;
    own.allow_origins = {"https://own.example"};

    config::stack s;
    s.apis = {rest_api("R", "Prod"), http_api("H", "v1"), rest_api("Plain", "dev")};
    s.apis[0].path_cors["/pets/{id}"] = own;
    s.apis[1].cors = any;
    s.routes = {route("R", "GET", "/pets/{id}", "pet"), route("R", "POST", "/orders", "orders"),
                route("H", "PUT", "/things/{proxy+}", "things", "2.0"),
                route("Plain", "GET", "/plain", "plain"),
                route("H", "ANY", "$default", "default", "2.0")};
    route_table t(s);

    auto p = t.match_preflight("/pets/7");
    REQUIRE(p);
    CHECK(p->api == &s.apis[0]);
    CHECK(p->cors == &s.apis[0].path_cors.at("/pets/{id}"));
    CHECK(p->resource_path == "/pets/{id}");
    // Stage handling and the trailing slash as in match().
    auto staged = t.match_preflight("/Prod/pets/7/");
    REQUIRE(staged);
    CHECK(staged->resource_path == "/pets/{id}");

    // A REST path without settings of its own, in an API without API-wide CORS.
    CHECK_FALSE(t.match_preflight("/orders"));
    CHECK_FALSE(t.match_preflight("/plain"));
    CHECK_FALSE(t.match_preflight("/dev/plain"));

    auto h = t.match_preflight("/v1/things/a/b");
    REQUIRE(h);
    CHECK(h->api == &s.apis[1]);
    CHECK(h->cors == &*s.apis[1].cors);
    CHECK(h->resource_path == "/things/{proxy+}");
    // $default never counts, so a path no route template matches has no preflight answer.
    CHECK_FALSE(t.match_preflight("/nowhere"));
    CHECK_FALSE(t.match_preflight("/v1/nowhere"));
}

TEST_CASE("match_preflight: match()'s priority among the routes with CORS", "[unit]") {
    config::cors_config cors;
    cors.allow_origins = {"*"};
    config::stack s;
    s.apis = {rest_api("R", "Prod")};
    s.apis[0].path_cors["/{proxy+}"] = cors;
    s.apis[0].path_cors["/pets/{id}"] = cors;
    s.apis[0].path_cors["/pets/dog"] = cors;
    s.routes = {route("R", "ANY", "/{proxy+}", "proxy"), route("R", "GET", "/pets/{id}", "pet"),
                route("R", "GET", "/pets/dog", "dog"), route("R", "GET", "/bare/x", "bare")};
    route_table t(s);
    CHECK(t.match_preflight("/pets/dog")->resource_path == "/pets/dog");
    CHECK(t.match_preflight("/pets/cat")->resource_path == "/pets/{id}");
    CHECK(t.match_preflight("/zoo/a/b")->resource_path == "/{proxy+}");
    // "/bare/x" has no CORS of its own: the greedy resource's OPTIONS answers it.
    CHECK(t.match_preflight("/bare/x")->resource_path == "/{proxy+}");
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
