// Paths, ResultPath, payload templates, error names and timestamps, against the examples of
// the Amazon States Language specification and the developer guide.
#include "emulator/states/data.hpp"

#include "models/random/random_source.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::states;
using nlohmann::json;

namespace {

json sel(const char* path, const json& input, const json& ctx = json::object()) {
    return select(path, data_scope{input, ctx});
}

std::string error_of_select(const char* path, const json& input) {
    try {
        sel(path, input);
    } catch (const runtime_failure& f) {
        return f.error();
    }
    return "";
}

}  // namespace

TEST_CASE("paths: the specification's Reference Path examples", "[unit]") {
    const json in = json::parse(R"({"foo": 123, "bar": ["a", "b", "c"], "car": {"cdr": true}})");
    CHECK(sel("$.foo", in) == 123);
    CHECK(sel("$.bar", in) == json::parse(R"(["a","b","c"])"));
    CHECK(sel("$.car.cdr", in) == true);
    CHECK(sel("$", in) == in);
    CHECK(sel("$.bar[1]", in) == "b");
    CHECK(sel("$.bar[-1]", in) == "c");
    CHECK(sel("$['car']['cdr']", in) == true);
    CHECK(sel("$[\"foo\"]", in) == 123);
}

TEST_CASE("paths: indefinite paths select arrays", "[unit]") {
    const json in = json::parse(R"({"vals": [0, 10, 20, 30, 40, 50],
        "books": [{"title": "a", "price": 8, "isbn": "x"}, {"title": "b", "price": 12},
                  {"title": "c", "price": 9.5, "tags": {"price": 1}}]})");
    CHECK(sel("$.vals[-3:]", in) == json::parse("[30,40,50]"));
    CHECK(sel("$.vals[1:3]", in) == json::parse("[10,20]"));
    CHECK(sel("$.vals[:2]", in) == json::parse("[0,10]"));
    CHECK(sel("$.vals[::2]", in) == json::parse("[0,20,40]"));
    CHECK(sel("$.vals[0,2]", in) == json::parse("[0,20]"));
    CHECK(sel("$.books[*].title", in) == json::parse(R"(["a","b","c"])"));
    CHECK(sel("$.books[?(@.price < 10)].title", in) == json::parse(R"(["a","c"])"));
    CHECK(sel("$.books[?(@.isbn)].title", in) == json::parse(R"(["a"])"));
    CHECK(sel("$.books[?(@.title == 'b')].price", in) == json::parse("[12]"));
    CHECK(sel("$.books[?(@.price >= 9 && @.price <= 12)].title", in) ==
          json::parse(R"(["b","c"])"));
    CHECK(sel("$..price", in) == json::parse("[8,12,9.5,1]"));
    // An indefinite path that matches nothing is an empty array, not an error.
    CHECK(sel("$.books[?(@.price > 100)]", in) == json::array());
}

TEST_CASE("paths: the context object and bracket steps after a dot", "[unit]") {
    const json ctx = json::parse(R"({"Execution": {"Id": "arn:x", "Input": {"a": 1}}})");
    const json in = json::parse(R"({"abc": {"def ghi": 5}})");
    CHECK(sel("$$.Execution.Id", in, ctx) == "arn:x");
    CHECK(sel("$$.Execution.Input.a", in, ctx) == 1);
    CHECK(sel("$.abc.['def ghi']", in) == 5);
}

TEST_CASE("paths: a definite path that matches nothing is States.Runtime", "[unit]") {
    const json in = json::parse(R"({"a": {"b": 1}, "l": [1]})");
    CHECK(error_of_select("$.x", in) == "States.Runtime");
    CHECK(error_of_select("$.a.b.c", in) == "States.Runtime");
    CHECK(error_of_select("$.l[3]", in) == "States.Runtime");
    try {
        sel("$.x", in);
        FAIL("no error");
    } catch (const runtime_failure& f) {
        CHECK(std::string(f.what()).find("$.x") != std::string::npos);
    }
    CHECK(present("$.a.b", data_scope{in, json::object()}));
    CHECK_FALSE(present("$.a.c", data_scope{in, json::object()}));
}

TEST_CASE("paths: validity, and Reference Paths name one node", "[unit]") {
    CHECK(is_valid_path("$", true));
    CHECK(is_valid_path("$$.Map.Item.Value", true));
    CHECK(is_valid_path("$.a[0].b", true));
    CHECK(is_valid_path("$.a[*]", false));
    CHECK_FALSE(is_valid_path("$.a[*]", true));
    CHECK_FALSE(is_valid_path("$..a", true));
    CHECK_FALSE(is_valid_path("$.a[1:2]", true));
    CHECK_FALSE(is_valid_path("$.a[?(@.x)]", true));
    CHECK_FALSE(is_valid_path("$['a','b']", true));
    CHECK_FALSE(is_valid_path("a.b", false));
    CHECK_FALSE(is_valid_path("$.", false));
    CHECK_FALSE(is_valid_path("$.a[", false));
    CHECK_FALSE(is_valid_path("$.a[?(@.x <)]", false));
    CHECK_FALSE(is_valid_path("", false));
}

TEST_CASE("ResultPath: the specification's examples", "[unit]") {
    const json in = json::parse(R"({"master": {"detail": [1, 2, 3]}})");
    CHECK(apply_result_path(in, std::string("$.master.detail"), "Hi") ==
          json::parse(R"({"master": {"detail": "Hi"}})"));
    CHECK(apply_result_path(in, std::string("$.master.result.sum"), 6) ==
          json::parse(R"({"master": {"detail": [1,2,3], "result": {"sum": 6}}})"));
    CHECK(apply_result_path(in, std::string("$"), "Hi") == "Hi");
    CHECK(apply_result_path(in, std::nullopt, "Hi") == in);
    CHECK(apply_result_path(in, std::string("$.master.detail[1]"), 9) ==
          json::parse(R"({"master": {"detail": [1, 9, 3]}})"));
    // A step on the way that is not an object.
    CHECK_THROWS_MATCHES(apply_result_path(in, std::string("$.master.detail.x"), 1),
                         runtime_failure,
                         Catch::Predicate<runtime_failure>([](const runtime_failure& f) {
                             return f.error() == "States.ResultPathMatchFailure";
                         }));
    CHECK_THROWS_AS(apply_result_path(json("text"), std::string("$.x"), 1), runtime_failure);
}

TEST_CASE("InputPath and OutputPath: null gives an empty object", "[unit]") {
    const json in = json::parse(R"({"a": 1})");
    CHECK(apply_path(std::nullopt, data_scope{in, json::object()}) == json::object());
    CHECK(apply_path(std::string("$.a"), data_scope{in, json::object()}) == 1);
}

TEST_CASE("templates: the specification's Parameters example", "[unit]") {
    const json in = json::parse(R"({"flagged": 7, "vals": [0, 10, 20, 30, 40, 50]})");
    const json tmpl = json::parse(R"({"flagged": true,
        "parts": {"first.$": "$.vals[0]", "last3.$": "$.vals[-3:]"}})");
    intrinsic_env env;
    CHECK(apply_template(tmpl, data_scope{in, json::object()}, env) ==
          json::parse(R"({"flagged": true, "parts": {"first": 0, "last3": [30, 40, 50]}})"));
}

TEST_CASE("templates: context paths, intrinsics, arrays and missing paths", "[unit]") {
    const json in = json::parse(R"({"name": "Ann", "n": 3})");
    const json ctx = json::parse(R"({"Task": {"Token": "tok"}})");
    coldbrew::models::random_source rng(7);
    std::uint64_t counter = 0;
    intrinsic_env env{&rng, "arn:e", &counter};
    const json tmpl = json::parse(R"J({"token.$": "$$.Task.Token",
        "greeting.$": "States.Format('Hi {}, {} times', $.name, $.n)",
        "list": [{"v.$": "$.n"}, "plain"], "literal.$x": 1})J");
    CHECK(apply_template(tmpl, data_scope{in, ctx}, env) == json::parse(R"({"token": "tok",
        "greeting": "Hi Ann, 3 times", "list": [{"v": 3}, "plain"], "literal.$x": 1})"));
    const json bad = json::parse(R"({"x.$": "$.missing"})");
    try {
        apply_template(bad, data_scope{in, ctx}, env);
        FAIL("no error");
    } catch (const runtime_failure& f) {
        CHECK(f.error() == "States.Runtime");
        CHECK(std::string(f.what()).find("'x.$'") != std::string::npos);
    }
}

TEST_CASE("error names: States.ALL, States.TaskFailed and exact names", "[unit]") {
    CHECK(error_matches({"States.ALL"}, "Lambda.ServiceException"));
    CHECK(error_matches({"States.ALL"}, "States.Timeout"));
    CHECK_FALSE(error_matches({"States.ALL"}, "States.Runtime"));
    CHECK(error_matches({"States.TaskFailed"}, "CustomError"));
    CHECK_FALSE(error_matches({"States.TaskFailed"}, "States.Timeout"));
    CHECK(error_matches({"A", "Lambda.TooManyRequestsException"},
                        "Lambda.TooManyRequestsException"));
    CHECK_FALSE(error_matches({"A"}, "B"));
}

TEST_CASE("timestamps: RFC 3339 with offsets and fractions", "[unit]") {
    CHECK(parse_timestamp_ms("1970-01-01T00:00:00Z") == 0);
    CHECK(parse_timestamp_ms("2016-03-14T01:59:00Z") == 1457920740000.0);
    CHECK(parse_timestamp_ms("2016-03-14T02:59:00+01:00") == 1457920740000.0);
    CHECK(parse_timestamp_ms("2016-03-14T01:59:00.250Z") == 1457920740250.0);
    CHECK(parse_timestamp_ms("2024-02-29T00:00:00Z").has_value());
    CHECK_FALSE(parse_timestamp_ms("2023-02-29T00:00:00Z"));
    CHECK_FALSE(parse_timestamp_ms("2016-03-14 01:59:00Z"));
    CHECK_FALSE(parse_timestamp_ms("2016-03-14T01:59:00"));
    CHECK_FALSE(parse_timestamp_ms("2016-13-14T01:59:00Z"));
    CHECK_FALSE(parse_timestamp_ms("yesterday"));
    CHECK(format_timestamp_ms(1457920740250.0) == "2016-03-14T01:59:00.250Z");
    CHECK(format_timestamp_ms(0) == "1970-01-01T00:00:00.000Z");
}
