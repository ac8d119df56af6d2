// API Gateway's Step Functions integrations as plain functions: template checks and
// evaluation, HTTP API request parameters, what Step Functions reads of the body, and how its
// answer reaches the client.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "emulator/config/config_error.hpp"
#include "emulator/gateway/sfn_integration.hpp"
#include "tests/unit/gateway/gateway_fixtures.hpp"

using namespace coldbrew;
using namespace coldbrew::gateway;
using namespace coldbrew::gateway::testing;
using json = nlohmann::json;

namespace {

constexpr const char* arn = "arn:aws:states:us-east-1:123456789012:stateMachine:Flow";

struct sfn_route {
    config::api api;
    config::route r;
    route_match m;

    explicit sfn_route(config::api a, std::string tmpl = {}, std::string path = "/start")
        : api(std::move(a)) {
        r = route(api.id, "POST", std::move(path), "",
                  api.kind == config::api_kind::http ? "2.0" : "1.0");
        r.state_machine = "Flow";
        r.state_machine_request_template = std::move(tmpl);
        m.route = &r;
        m.api = &api;
        m.path = r.path;
    }
    // The built body, which must be a body (not the gateway's own answer).
    std::string body(const http::request& req) {
        auto b = build_start_request(req, m, info(), arn);
        REQUIRE(std::holds_alternative<std::string>(b));
        return std::get<std::string>(b);
    }
    http::response refused(const http::request& req) {
        auto b = build_start_request(req, m, info(), arn);
        REQUIRE(std::holds_alternative<http::response>(b));
        return std::get<http::response>(b);
    }
};

http::request post(std::string body, http::header_list headers = {{"Content-Type", "application/json"}},
                   std::string target = "/start") {
    return request("POST", std::move(target), std::move(headers), std::move(body));
}

}  // namespace

TEST_CASE("sfn integration: SAM's Api event template makes the body the escaped input", "[unit]") {
    sfn_route s(rest_api());
    auto out = json::parse(s.body(post(R"~({"order": 7, "items": ["a", "b"]})~")));
    CHECK(out["stateMachineArn"] == arn);
    REQUIRE(out["input"].is_string());
    // $input.json('$') re-serialises the body; the input is that JSON, as a string.
    CHECK(json::parse(out["input"].get<std::string>()) ==
          json::parse(R"~({"order":7,"items":["a","b"]})~"));
    CHECK(out.size() == 2);

    SECTION("an empty body is {}") {
        auto e = json::parse(s.body(post("")));
        CHECK(e["input"] == "{}");
    }
    SECTION("no Content-Type is taken for application/json") {
        auto e = json::parse(s.body(post(R"~({"a":1})~", {})));
        CHECK(e["input"] == R"~({"a":1})~");
    }
    SECTION("a body holding ' gives a request Step Functions cannot read, as on AWS") {
        auto body = s.body(post(R"~({"name":"O'Brien"})~"));
        CHECK(body.find(R"~(O\'Brien)~") != std::string::npos);
        CHECK(!json::accept(body));
        auto read = read_start_request(body);
        REQUIRE(std::holds_alternative<service_answer>(read));
        CHECK(std::get<service_answer>(read).status == 400);
        CHECK(json::parse(std::get<service_answer>(read).body)["__type"] == "SerializationException");
    }
    SECTION("UnescapeMappingTemplate's form reads it") {
        sfn_route u(rest_api(),
                    std::string(R"~({"input": "$util.escapeJavaScript($input.json('$')).replaceAll("\\'","'")", )~") +
                        R"~("stateMachineArn": ")~" + arn + "\"}");
        REQUIRE(check_request_template(u.r.state_machine_request_template).empty());
        auto body = u.body(post(R"~({"name":"O'Brien"})~"));
        REQUIRE(json::accept(body));
        CHECK(json::parse(json::parse(body)["input"].get<std::string>())["name"] == "O'Brien");
    }
    SECTION("a body that is not JSON: API Gateway's 400, no request") {
        auto res = s.refused(post("not json"));
        CHECK(res.status == 400);
        CHECK(json::parse(res.body)["message"].get<std::string>().starts_with(
            "Could not parse request body into json"));
        CHECK(res.header("x-amzn-RequestId") == info().request_id);
    }
    SECTION("another Content-Type passes the body through untouched") {
        CHECK(s.body(post("plain words", {{"Content-Type", "text/plain"}})) == "plain words");
        // …which Step Functions cannot read.
        auto read = read_start_request("plain words");
        REQUIRE(std::holds_alternative<service_answer>(read));
        CHECK(std::get<service_answer>(read).status == 400);
    }
    SECTION("application/json with parameters is still JSON") {
        auto e = json::parse(s.body(post(R"~({"a":1})~", {{"Content-Type", "Application/JSON; charset=utf-8"}})));
        CHECK(e["input"] == R"~({"a":1})~");
    }
}

TEST_CASE("sfn integration: REST templates in the evaluated subset", "[unit]") {
    const std::string tmpl = std::string(R"~({
  "input": "{\"id\": \"$input.path('$.order.id')\", \"raw\": $util.escapeJavaScript($input.json('$.order')), \"who\": \"$input.params('who')\", \"q\": \"$input.params('q')\", \"h\": \"$input.params('X-Tenant')\"}",
  "name": "$context.requestId",
  "stateMachineArn": ")~") + arn + R"~("
})~";
    REQUIRE(check_request_template(tmpl).empty());
    sfn_route s(rest_api(), tmpl, "/orders/{who}");
    s.m.path_parameters = {{"who", "ann"}};
    auto req = post(R"~({"order":{"id":"o-1","n":2}})~",
                    {{"Content-Type", "application/json"}, {"X-Tenant", "t9"}}, "/orders/ann?q=7&who=query");
    auto out = json::parse(s.body(req));
    CHECK(out["name"] == info().request_id);
    CHECK(out["stateMachineArn"] == arn);
    auto input = json::parse(out["input"].get<std::string>());
    CHECK(input["id"] == "o-1");
    CHECK(input["raw"] == json::parse(R"~({"id":"o-1","n":2})~"));
    CHECK(input["who"] == "ann");  // the path before the query string
    CHECK(input["q"] == "7");
    CHECK(input["h"] == "t9");

    SECTION("$input.body, $context names, bracket and index paths") {
        sfn_route b(rest_api(),
                    R"~({"input":"$util.escapeJavaScript($input.body)","m":"$context.httpMethod","p":"$context.resourcePath","ip":"$context.identity.sourceIp","s":"$context.stage","x":"$input.path("$['k'][1]")","y":"$input.path('$.k[0]')","none":"$input.path('$.missing')","stateMachineArn":"a"})~");
        auto o = json::parse(b.body(post(R"~({"k":[10,20]})~")));
        CHECK(o["input"] == R"~({"k":[10,20]})~");
        CHECK(o["m"] == "POST");
        CHECK(o["p"] == "/start");
        CHECK(o["ip"] == "192.0.2.7");
        CHECK(o["s"] == "Prod");
        CHECK(o["x"] == "20");
        CHECK(o["y"] == "10");
        CHECK(o["none"] == "");
    }
    SECTION("$ that starts no reference is text") {
        sfn_route b(rest_api(), R"~({"input":"{\"price\":\"$5\"}","stateMachineArn":"a"})~");
        auto o = json::parse(b.body(post("{}")));
        CHECK(o["input"] == R"~({"price":"$5"})~");
    }
}

TEST_CASE("sfn integration: templates outside the subset are refused at start, by name", "[unit]") {
    struct bad {
        const char* tmpl;
        const char* names;
    };
    for (const auto& b : std::vector<bad>{
             {R"~(#set($x = 1){"input":"$x"})~", "directive"},
             {R"~({"input":"$stageVariables.flow"})~", "$stageVariables"},
             {R"~({"input":"$util.base64Encode($input.body)"})~", "$util.base64Encode"},
             {R"~({"input":"$context.authorizer.claims.sub"})~", "$context.authorizer"},
             {R"~({"input":"$input.json('$..a')"})~", "$input.json"},
             {R"~({"input":"$input.json($x)"})~", "$x"},
             {R"~({"input":"$input.params()"})~", "argument"},
             {R"~({"input":"${context.requestId}"})~", "formal reference"},
             {R"~({"input":"$input.body.toUpperCase()"})~", ".toUpperCase"},
             {R"~({"input":"$input.json('$')"  ## note)~", "directive"},
             {R"~({"input":"$input.json('$)"})~", "unterminated"},
             {R"~({"input":"$input.json('$.a[99999999999999999999999]')"})~", "9 digits"},
             {R"~({"input":"$input.path('$.a[*]')"})~", "$input.path"},
             {R"~({"input":"$input.json('a.b')"})~", "starts with $"},
         }) {
        CAPTURE(b.tmpl);
        const auto why = check_request_template(b.tmpl);
        CHECK(why.find(b.names) != std::string::npos);
    }
    // '#' that starts no directive is text.
    CHECK(check_request_template(R"~({"input":"{\"tag\":\"#1 #blue\"}","stateMachineArn":"a"})~").empty());

    config::stack st;
    st.apis.push_back(rest_api());
    auto r = route("ServerlessRestApi", "POST", "/start", "");
    r.state_machine = "Flow";
    r.state_machine_request_template = R"~({"input":"$stageVariables.x"})~";
    r.where = {"template.yaml", 12, 3};
    st.routes.push_back(r);
    try {
        check_state_machine_routes(st);
        FAIL("not refused");
    } catch (const config::config_error& e) {
        CHECK(e.where().line == 12);
        CHECK(e.key_path() == "POST /start");
        CHECK(std::string(e.message()).find("$stageVariables") != std::string::npos);
        CHECK(std::string(e.message()).find("Flow") != std::string::npos);
    }
    st.routes[0].state_machine_request_template.clear();  // SAM's own: fine
    CHECK_NOTHROW(check_state_machine_routes(st));
}

TEST_CASE("sfn integration: HTTP API request parameters", "[unit]") {
    const std::string params =
        json{{"StateMachineArn", arn}, {"Input", "$request.body"}, {"Name", "$request.header.x-order-id"},
             {"Region", "us-east-1"}, {"TraceHeader", "$context.requestId"}}
            .dump();
    REQUIRE(check_request_parameters(params).empty());
    sfn_route s(http_api(), params);
    auto out = json::parse(s.body(post(R"~({"a":1})~", {{"Content-Type", "application/json"},
                                                      {"X-Order-Id", "ord-5"}})));
    CHECK(out["stateMachineArn"] == arn);
    CHECK(out["input"] == R"~({"a":1})~");  // the body as sent
    CHECK(out["name"] == "ord-5");
    CHECK(out["traceHeader"] == info().request_id);
    CHECK(!out.contains("region"));

    SECTION("2.0's context names, whatever the route's payload format version") {
        sfn_route c(http_api(), json{{"StateMachineArn", arn}, {"Name", "$context.http.method"},
                                     {"Input", "$request.path.id"}}
                                    .dump(), "/runs/{id}");
        c.r.payload_format_version = "1.0";  // as the OpenAPI loader sets it
        c.m.path_parameters = {{"id", "r-9"}};
        auto o = json::parse(c.body(post("{}", {}, "/runs/r-9")));
        CHECK(o["name"] == "POST");
        CHECK(o["input"] == "r-9");
    }
    SECTION("an absent source leaves the parameter out") {
        auto o = json::parse(s.body(post(R"~({"a":1})~")));
        CHECK(!o.contains("name"));
    }
    SECTION("body fields, query strings and path parameters") {
        sfn_route q(http_api(), json{{"StateMachineArn", arn}, {"Input", "$request.body.order"},
                                     {"Name", "$request.querystring.n"}}
                                    .dump());
        auto o = json::parse(q.body(post(R"~({"order":{"id":3}})~", {}, "/start?n=run-1")));
        CHECK(o["input"] == R"~({"id":3})~");
        CHECK(o["name"] == "run-1");
        auto bad = q.refused(post("nope", {}, "/start"));
        CHECK(bad.status == 400);
        CHECK(bad.header("apigw-requestid") == info().request_id);
    }
    SECTION("refused at start") {
        CHECK(check_request_parameters(json{{"Input", "$stageVariables.x"}}.dump()).find("$stageVariables") !=
              std::string::npos);
        CHECK(check_request_parameters(json{{"Input", "id-$request.body"}}.dump()).find("mixes") !=
              std::string::npos);
        CHECK(check_request_parameters(json{{"Payload", "x"}}.dump()).find("Payload") != std::string::npos);
        CHECK(check_request_parameters(json{{"Name", "$context.bogus"}}.dump()).find("$context.bogus") !=
              std::string::npos);
        CHECK(!check_request_parameters("[1]").empty());
    }
}

TEST_CASE("sfn integration: request bytes that are not UTF-8 are replaced, not thrown", "[unit]") {
    // Headers, query strings and bodies are a client's bytes; JSON text must be UTF-8, and a
    // throw here would leave the request unanswered.
    SECTION("an HTTP API parameter read from a header or the raw body") {
        sfn_route s(http_api(), json{{"StateMachineArn", arn}, {"Input", "$request.body"},
                                     {"Name", "$request.header.x-run"}}
                                    .dump());
        std::string built;
        REQUIRE_NOTHROW(built = s.body(post("a\xff\xfe", {{"X-Run", "r\xc3\x28"}})));
        auto out = json::parse(built);
        CHECK(out["input"] == "a\xef\xbf\xbd\xef\xbf\xbd");  // U+FFFD per bad byte
        CHECK(out["name"] == "r\xef\xbf\xbd(");
    }
    SECTION("a REST body that is not JSON, echoed in the gateway's 400") {
        sfn_route s(rest_api());
        http::response bad;
        REQUIRE_NOTHROW(bad = s.refused(post("{\"a\": \xff}")));
        CHECK(bad.status == 400);
        auto message = json::parse(bad.body)["message"].get<std::string>();
        CHECK(message.starts_with("Could not parse request body into json"));
    }
}

TEST_CASE("sfn integration: what Step Functions reads of the request body", "[unit]") {
    auto ok = read_start_request(R"~({"stateMachineArn":"a","input":"{\"x\":1}","name":"n1","traceHeader":"Root=1-x"})~");
    REQUIRE(std::holds_alternative<start_call>(ok));
    CHECK(std::get<start_call>(ok).input == R"~({"x":1})~");
    CHECK(std::get<start_call>(ok).name == "n1");
    CHECK(std::get<start_call>(ok).trace_header == "Root=1-x");

    auto defaults = read_start_request(R"~({"stateMachineArn":"a"})~");
    REQUIRE(std::holds_alternative<start_call>(defaults));
    CHECK(std::get<start_call>(defaults).input == "{}");
    CHECK(std::get<start_call>(defaults).name.empty());

    // A template that forgot the quotes around $input.json('$') sends an object.
    auto object_input = read_start_request(R"~({"stateMachineArn":"a","input":{"x":1}})~");
    REQUIRE(std::holds_alternative<service_answer>(object_input));
    CHECK(json::parse(std::get<service_answer>(object_input).body)["__type"] == "SerializationException");

    auto no_arn = read_start_request(R"~({"input":"{}"})~");
    REQUIRE(std::holds_alternative<service_answer>(no_arn));
    CHECK(std::get<service_answer>(no_arn).status == 400);
    CHECK(json::parse(std::get<service_answer>(no_arn).body)["__type"] == "ValidationException");

    CHECK(std::holds_alternative<service_answer>(read_start_request("[]")));
    CHECK(std::holds_alternative<service_answer>(read_start_request("")));
}

TEST_CASE("sfn integration: the service's answer as the client gets it", "[unit]") {
    const std::string started = R"~({"executionArn":"arn:x","startDate":1.7e9})~";
    auto rest = map_start_answer(config::api_kind::rest, {200, started}, "rid");
    CHECK(rest.status == 200);
    CHECK(rest.body == started);
    CHECK(rest.header("Content-Type") == "application/json");
    CHECK(rest.header("x-amzn-RequestId") == "rid");

    const std::string exists = R"~({"__type":"ExecutionAlreadyExists","message":"m"})~";
    auto rest400 = map_start_answer(config::api_kind::rest, {400, exists}, "rid");
    CHECK(rest400.status == 400);
    CHECK(rest400.body == exists);

    // No SAM integration response matches a 5xx.
    auto rest500 = map_start_answer(config::api_kind::rest, {500, R"~({"__type":"InternalFailure"})~"}, "rid");
    CHECK(rest500.status == 500);
    CHECK(json::parse(rest500.body)["message"] == "Internal server error");

    auto http500 = map_start_answer(config::api_kind::http, {500, R"~({"__type":"InternalFailure"})~"}, "rid");
    CHECK(http500.status == 500);
    CHECK(json::parse(http500.body)["__type"] == "InternalFailure");
    CHECK(http500.header("apigw-requestid") == "rid");
}

TEST_CASE("sfn integration: escapeJavaScript follows commons-lang's rules", "[unit]") {
    CHECK(escape_javascript(R"~(a"b'c\d/e)~") == R"~(a\"b\'c\\d\/e)~");
    CHECK(escape_javascript("\b\t\n\f\r") == R"~(\b\t\n\f\r)~");
    CHECK(escape_javascript(std::string("\x01\x1f\x7f", 3)) == "\\u0001\\u001F\x7f");
    CHECK(escape_javascript("caf\xc3\xa9") == "caf\\u00E9");
    CHECK(escape_javascript("\xe2\x82\xac") == "\\u20AC");
    CHECK(escape_javascript("\xf0\x9f\x98\x80") == "\\uD83D\\uDE00");  // a surrogate pair
    CHECK(escape_javascript("\xff") == "\\uFFFD");
    CHECK(escape_javascript("\xc3") == "\\uFFFD");  // truncated
    // Inside a JSON string the escapes other than \' read back as the text.
    const std::string text = "line\n\"q\" / caf\xc3\xa9";
    CHECK(json::parse("\"" + escape_javascript(text) + "\"") == text);
}
