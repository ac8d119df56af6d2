// Choice rules: every comparison operator, the …Path forms, type tests, And/Or/Not and
// choose(), on rules parsed from ASL text (the specification's Choice examples).
#include "emulator/states/data.hpp"
#include "emulator/states/definition.hpp"

#include "tests/catch.hpp"

using namespace coldbrew::states;
using nlohmann::json;

namespace {

// A Choice state with one rule (Next "Yes") and Default "No", parsed.
std::string pick(const std::string& rule, const json& input) {
    const json doc = json::parse(R"({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [)" + rule + R"(], "Default": "No"},
        "Yes": {"Type": "Succeed"}, "No": {"Type": "Succeed"}}})");
    auto m = parse_definition(doc);
    return choose(*m->find("C"), data_scope{input, json::object()});
}

bool holds(const std::string& rule_body, const json& input) {
    return pick("{" + rule_body + R"(, "Next": "Yes"})", input) == "Yes";
}

}  // namespace

TEST_CASE("choice: string comparisons and StringMatches", "[unit]") {
    const json in = json::parse(R"({"s": "log-2024.txt", "t": "b", "other": "b"})");
    CHECK(holds(R"("Variable": "$.t", "StringEquals": "b")", in));
    CHECK_FALSE(holds(R"("Variable": "$.t", "StringEquals": "c")", in));
    CHECK(holds(R"("Variable": "$.t", "StringLessThan": "c")", in));
    CHECK(holds(R"("Variable": "$.t", "StringGreaterThan": "a")", in));
    CHECK(holds(R"("Variable": "$.t", "StringLessThanEquals": "b")", in));
    CHECK(holds(R"("Variable": "$.t", "StringGreaterThanEquals": "b")", in));
    CHECK(holds(R"("Variable": "$.t", "StringEqualsPath": "$.other")", in));
    CHECK(holds(R"("Variable": "$.s", "StringMatches": "log-*.txt")", in));
    CHECK(holds(R"("Variable": "$.s", "StringMatches": "*")", in));
    CHECK_FALSE(holds(R"("Variable": "$.s", "StringMatches": "log-*.csv")", in));
    CHECK(holds(R"("Variable": "$.x", "StringMatches": "a\\*b")", json::parse(R"({"x": "a*b"})")));
    CHECK_FALSE(holds(R"("Variable": "$.x", "StringMatches": "a\\*b")", json::parse(R"({"x": "axxb"})")));
    // Another type is false, not an error.
    CHECK_FALSE(holds(R"("Variable": "$.n", "StringEquals": "1")", json::parse(R"({"n": 1})")));
}

TEST_CASE("choice: numeric, boolean and timestamp comparisons", "[unit]") {
    const json in = json::parse(R"({"n": 5, "m": 5.0, "b": true,
        "ts": "2016-03-14T01:59:00Z", "later": "2016-03-14T03:59:00+01:00"})");
    CHECK(holds(R"("Variable": "$.n", "NumericEquals": 5)", in));
    CHECK(holds(R"("Variable": "$.n", "NumericEqualsPath": "$.m")", in));
    CHECK(holds(R"("Variable": "$.n", "NumericLessThan": 6)", in));
    CHECK(holds(R"("Variable": "$.n", "NumericGreaterThan": 4.5)", in));
    CHECK(holds(R"("Variable": "$.n", "NumericLessThanEquals": 5)", in));
    CHECK(holds(R"("Variable": "$.n", "NumericGreaterThanEquals": 5)", in));
    CHECK_FALSE(holds(R"("Variable": "$.n", "NumericGreaterThan": 5)", in));
    CHECK(holds(R"("Variable": "$.b", "BooleanEquals": true)", in));
    CHECK_FALSE(holds(R"("Variable": "$.b", "BooleanEquals": false)", in));
    CHECK(holds(R"("Variable": "$.ts", "TimestampEquals": "2016-03-14T01:59:00.000Z")", in));
    CHECK(holds(R"("Variable": "$.ts", "TimestampLessThanPath": "$.later")", in));
    CHECK(holds(R"("Variable": "$.later", "TimestampGreaterThan": "2016-03-14T01:59:00Z")", in));
    CHECK(holds(R"("Variable": "$.ts", "TimestampLessThanEquals": "2016-03-14T01:59:00Z")", in));
    CHECK(holds(R"("Variable": "$.ts", "TimestampGreaterThanEquals": "2016-03-14T01:59:00Z")", in));
}

TEST_CASE("choice: type tests and IsPresent", "[unit]") {
    const json in = json::parse(R"({"nul": null, "n": 1, "s": "x", "b": false,
        "ts": "2020-01-01T00:00:00Z"})");
    CHECK(holds(R"("Variable": "$.nul", "IsNull": true)", in));
    CHECK(holds(R"("Variable": "$.n", "IsNull": false)", in));
    CHECK(holds(R"("Variable": "$.n", "IsNumeric": true)", in));
    CHECK(holds(R"("Variable": "$.s", "IsString": true)", in));
    CHECK(holds(R"("Variable": "$.b", "IsBoolean": true)", in));
    CHECK(holds(R"("Variable": "$.ts", "IsTimestamp": true)", in));
    CHECK(holds(R"("Variable": "$.s", "IsTimestamp": false)", in));
    CHECK(holds(R"("Variable": "$.n", "IsPresent": true)", in));
    CHECK(holds(R"("Variable": "$.gone", "IsPresent": false)", in));
    CHECK_FALSE(holds(R"("Variable": "$.gone", "IsPresent": true)", in));
}

TEST_CASE("choice: And, Or, Not and the specification's example", "[unit]") {
    // The specification's Choice example (ranges and a Not on a type).
    const std::string rules = R"(
        {"Not": {"Variable": "$.type", "StringEquals": "Private"}, "Next": "Public"},
        {"Variable": "$.value", "NumericEquals": 0, "Next": "ValueIsZero"},
        {"And": [{"Variable": "$.value", "NumericGreaterThanEquals": 20},
                 {"Variable": "$.value", "NumericLessThan": 30}], "Next": "ValueInTwenties"},
        {"Or": [{"Variable": "$.value", "NumericLessThan": -100},
                {"Variable": "$.value", "NumericGreaterThan": 100}], "Next": "Extreme"})";
    const json doc = json::parse(R"({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [)" + rules + R"(]},
        "Public": {"Type": "Succeed"}, "ValueIsZero": {"Type": "Succeed"},
        "ValueInTwenties": {"Type": "Succeed"}, "Extreme": {"Type": "Succeed"}}})");
    auto m = parse_definition(doc);
    const state& c = *m->find("C");
    auto go = [&](const char* in) { return choose(c, data_scope{json::parse(in), json::object()}); };
    CHECK(go(R"({"type": "Public", "value": 0})") == "Public");
    CHECK(go(R"({"type": "Private", "value": 0})") == "ValueIsZero");
    CHECK(go(R"({"type": "Private", "value": 25})") == "ValueInTwenties");
    CHECK(go(R"({"type": "Private", "value": 500})") == "Extreme");
    // No rule and no Default.
    try {
        go(R"({"type": "Private", "value": 50})");
        FAIL("no error");
    } catch (const runtime_failure& f) {
        CHECK(f.error() == "States.NoChoiceMatched");
    }
}

TEST_CASE("choice: a missing Variable is a runtime error outside the type tests", "[unit]") {
    try {
        holds(R"("Variable": "$.gone", "StringEquals": "x")", json::object());
        FAIL("no error");
    } catch (const runtime_failure& f) {
        CHECK(f.error() == "States.Runtime");
    }
    CHECK_FALSE(holds(R"("Variable": "$.gone", "IsNull": true)", json::object()));
}
