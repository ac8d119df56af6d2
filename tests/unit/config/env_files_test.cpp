// --env-vars files (SAM CLI's rules) and serverless .env files (dotenv's rules).

#include "emulator/config/env_files.hpp"

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* two_functions = R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: nodejs20.x
      FunctionName: hello-fn
      Environment:
        Variables: {TABLE: orders, STAGE: dev, ONLY_HELLO: a}
  Other:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: nodejs20.x
      Environment:
        Variables: {TABLE: other, STAGE: dev}
)";

const config::function& fn(const config::stack& s, const std::string& name) {
    const auto* f = s.find_function(name);
    REQUIRE(f);
    return *f;
}

}  // namespace

TEST_CASE("env-vars: Parameters apply to all, a function's section wins over them", "[unit]") {
    temp_app app;
    auto s = app.sam(two_functions);
    auto file = config::parse_env_vars(R"({
  "Parameters": {"STAGE": "test", "TABLE": "shared"},
  "Hello": {"TABLE": "hello-table"}
})", app.dir() / "env.json");
    config::apply_env_vars(file, s);
    CHECK(fn(s, "Hello").environment.at("TABLE") == "hello-table");
    CHECK(fn(s, "Hello").environment.at("STAGE") == "test");
    CHECK(fn(s, "Other").environment.at("TABLE") == "shared");
    CHECK(fn(s, "Other").environment.at("STAGE") == "test");
    CHECK(fn(s, "Hello").environment.at("ONLY_HELLO") == "a");
}

TEST_CASE("env-vars: variables the template does not declare are ignored with a warning", "[unit]") {
    temp_app app;
    auto s = app.sam(two_functions);
    auto file = config::parse_env_vars(R"({"Parameters": {"NEW_ONE": "x"},
"Other": {"ONLY_HELLO": "y"}, "Nobody": {"A": "b"}})",
                                       app.dir() / "env.json");
    config::apply_env_vars(file, s);
    CHECK(!fn(s, "Hello").environment.count("NEW_ONE"));
    CHECK(!fn(s, "Other").environment.count("ONLY_HELLO"));
    CHECK(any_contains(s.warnings, "env.json:1:17: Parameters.NEW_ONE: no function declares NEW_ONE"));
    CHECK(any_contains(s.warnings, "Other.ONLY_HELLO: function Other declares no variable ONLY_HELLO"));
    CHECK(any_contains(s.warnings, "Nobody: names no function"));
}

TEST_CASE("env-vars: a section by FunctionName, used when the logical id has none", "[unit]") {
    temp_app app;
    auto s = app.sam(two_functions);
    // SAM CLI's lookup is logical id first, then function name; an empty section falls through.
    config::apply_env_vars(
        config::parse_env_vars(R"({"Hello": {}, "hello-fn": {"TABLE": "by-name"}})", "e.json"), s);
    CHECK(fn(s, "Hello").environment.at("TABLE") == "by-name");
    config::apply_env_vars(config::parse_env_vars(
                               R"({"hello-fn": {"TABLE": "by-name"}, "Hello": {"TABLE": "by-id"}})", "e.json"),
                           s);
    CHECK(fn(s, "Hello").environment.at("TABLE") == "by-id");
}

TEST_CASE("env-vars: values are stringified as SAM CLI does", "[unit]") {
    auto file = config::parse_env_vars(
        R"({"Parameters": {"A": 3, "B": true, "C": false, "D": null, "E": [1], "F": {"x": 1}, "G": 1.5, "H": "s"}})",
        "e.json");
    REQUIRE(file.sections.size() == 1);
    std::map<std::string, std::string> v;
    for (const auto& var : file.sections[0].variables) v[var.name] = var.value;
    CHECK(v == std::map<std::string, std::string>{{"A", "3"}, {"B", "true"}, {"C", "false"}, {"D", ""},
                                                  {"E", ""},  {"F", ""},     {"G", "1.5"},   {"H", "s"}});
}

TEST_CASE("env-vars: malformed JSON and wrong shapes are errors at their line and column", "[unit]") {
    auto e = error_of([] { config::parse_env_vars("{\n  \"Parameters\": {\"A\": 1,}\n}", "bad.json"); });
    CHECK(e.where().file == "bad.json");
    CHECK(e.where().line == 2);
    CHECK(e.where().column == 25);  // the "}" after the trailing comma
    CHECK(contains(e.message(), "not valid JSON"));

    auto shape = error_of([] { config::parse_env_vars("{\"Parameters\": {},\n \"Hello\": \"x\"}", "s.json"); });
    CHECK(shape.key_path() == "Hello");
    CHECK(shape.where().line == 2);
    CHECK(shape.where().column == 2);

    auto array = error_of([] { config::parse_env_vars("  [1]", "a.json"); });
    CHECK(array.where().column == 3);
    auto empty = error_of([] { config::parse_env_vars("# nothing\n", "e.env"); });
    CHECK(contains(empty.message(), "no KEY=value"));
    auto missing = error_of([&] { config::read_env_vars("/nonexistent/env.json"); });
    CHECK(contains(missing.message(), "no such file"));
}

TEST_CASE("env-vars: a .env file gives Parameters", "[unit]") {
    auto file = config::parse_env_vars("STAGE=staging\n# c\nTABLE=t1\nTABLE=t2\n", "x.env");
    REQUIRE(file.sections.size() == 1);
    CHECK(file.sections[0].key == "Parameters");
    REQUIRE(file.sections[0].variables.size() == 2);
    CHECK(file.sections[0].variables[0].name == "STAGE");
    CHECK(file.sections[0].variables[1].value == "t2");
    CHECK(file.sections[0].variables[1].where.line == 4);
}

TEST_CASE("dotenv: export, comments, quotes, multiline, skipped lines", "[unit]") {
    const std::string text =
        "# comment\n"
        "export A=1\n"
        "B = spaced value   # trailing comment\n"
        "C='single # kept'\n"
        "D=\"line1\\nline2\"\n"
        "E=\"multi\n"
        "line\"\n"
        "this line is garbage\n"
        "F: colon\n"
        "G=\n"
        "H=a#b\n"
        "I=`back`\r\n"
        "J='no \\n escape'\n"
        "K : not an assignment\n"
        "A=2\n";
    const auto entries = config::parse_dotenv(text);
    std::map<std::string, std::string> v;
    std::map<std::string, int> line;
    for (const auto& e : entries) {
        v[e.key] = e.value;
        line[e.key] = e.line;
    }
    CHECK(v.at("A") == "2");
    CHECK(v.at("B") == "spaced value");
    CHECK(v.at("C") == "single # kept");
    CHECK(v.at("D") == "line1\nline2");
    CHECK(v.at("E") == "multi\nline");
    CHECK(v.at("F") == "colon");
    CHECK(v.at("G") == "");
    CHECK(v.at("H") == "a");
    CHECK(v.at("I") == "back");
    CHECK(v.at("J") == "no \\n escape");
    CHECK(v.size() == 10);
    CHECK(line.at("F") == 9);
    CHECK(line.at("J") == 13);
}

TEST_CASE("dotenv-expand: references, defaults, the environment wins", "[unit]") {
    const auto entries = config::parse_dotenv(
        "HOST=db\nURL=postgres://${HOST}:$PORT/x\nPORT=5432\nD=${MISSING:-fallback}\nE=\\$HOME\nSET=file\n");
    const auto v = config::expand_dotenv(entries, {{"SET", "shell"}});
    CHECK(v.at("URL") == "postgres://db:5432/x");
    CHECK(v.at("D") == "fallback");
    CHECK(v.at("E") == "$HOME");
    CHECK(v.at("SET") == "shell");
    const auto loop = config::expand_dotenv(config::parse_dotenv("A=$B\nB=$A\n"), {});
    CHECK(loop.at("A").empty());
}

TEST_CASE("serverless useDotenv: .env.<stage> first, feeds ${env:}, never replaces the shell's", "[unit]") {
    temp_app app;
    app.write(".env", "TABLE=from-dotenv\n");
    app.write(".env.prod", "TABLE=from-prod\n");
    const std::string yaml = R"(service: shop
useDotenv: true
provider:
  name: aws
  runtime: nodejs20.x
  environment:
    TABLE: ${env:TABLE}
    KEEP: ${env:KEEP, 'none'}
functions:
  hello:
    handler: handler.hello
)";
    auto dev = app.serverless(yaml);
    CHECK(fn(dev, "hello").environment.at("TABLE") == "from-dotenv");
    CHECK(fn(dev, "hello").environment.at("KEEP") == "none");

    config::load_options prod;
    prod.stage = "prod";
    CHECK(fn(app.serverless(yaml, prod), "hello").environment.at("TABLE") == "from-prod");

    config::load_options shell;
    shell.env["TABLE"] = "from-shell";
    CHECK(fn(app.serverless(yaml, shell), "hello").environment.at("TABLE") == "from-shell");
}

TEST_CASE("serverless without useDotenv reads no .env", "[unit]") {
    temp_app app;
    app.write(".env", "TABLE=from-dotenv\n");
    auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  environment:
    TABLE: ${env:TABLE, 'unset'}
functions:
  hello:
    handler: handler.hello
)");
    CHECK(fn(s, "hello").environment.at("TABLE") == "unset");
}

TEST_CASE("env-vars win over coldbrew.yaml and reach the variables it declares", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "functions:\n  Hello:\n    environment: {TABLE: from-coldbrew, LOG_LEVEL: debug}\n");
    auto s = app.sam(two_functions);
    REQUIRE(fn(s, "Hello").environment.at("TABLE") == "from-coldbrew");
    const auto warnings_before = s.warnings.size();
    config::apply_env_vars(
        config::parse_env_vars(R"({"Hello": {"TABLE": "from-file", "LOG_LEVEL": "warn"}})", "e.json"), s);
    CHECK(fn(s, "Hello").environment.at("TABLE") == "from-file");
    CHECK(fn(s, "Hello").environment.at("LOG_LEVEL") == "warn");
    CHECK(s.warnings.size() == warnings_before);
}

TEST_CASE("env-vars on a serverless stack: sections by function key or deployed name", "[unit]") {
    temp_app app;
    auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  environment: {TABLE: orders}
functions:
  hello:
    handler: handler.hello
  bye:
    handler: handler.bye
)");
    config::apply_env_vars(
        config::parse_env_vars(R"({"hello": {"TABLE": "by-key"}, "shop-dev-bye": {"TABLE": "by-name"}})", "e.json"),
        s);
    CHECK(fn(s, "hello").environment.at("TABLE") == "by-key");
    CHECK(fn(s, "bye").environment.at("TABLE") == "by-name");
}

TEST_CASE("env-vars: an empty object and an empty file section are fine, a top-level scalar is not", "[unit]") {
    temp_app app;
    auto s = app.sam(two_functions);
    const auto warnings_before = s.warnings.size();
    config::apply_env_vars(config::parse_env_vars("{}", "e.json"), s);
    CHECK(fn(s, "Hello").environment.at("TABLE") == "orders");
    CHECK(s.warnings.size() == warnings_before);
    auto e = error_of([] { config::parse_env_vars("{\"Parameters\": 3}", "e.json"); });
    CHECK(e.key_path() == "Parameters");
    CHECK(e.where().line == 1);
    CHECK(e.where().column == 2);
}
