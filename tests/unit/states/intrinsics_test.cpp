// Intrinsic functions, against the developer guide's examples ("Intrinsic functions for
// JSONPath states") and its input validation rules.
#include "emulator/states/data.hpp"

#include "models/random/random_source.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::states;
using nlohmann::json;

namespace {

struct world {
    coldbrew::models::random_source rng{42};
    std::uint64_t counter = 0;
    intrinsic_env env{&rng, "arn:aws:states:us-east-1:1:execution:m:e", &counter};
    json ctx = json::object();

    json run(const char* call, const json& input = json::object()) {
        return evaluate_intrinsic(call, data_scope{input, ctx}, env);
    }
    std::string failure(const char* call, const json& input = json::object()) {
        try {
            run(call, input);
        } catch (const runtime_failure& f) {
            return f.error();
        }
        return "";
    }
};

}  // namespace

TEST_CASE("intrinsics: arrays", "[unit]") {
    world w;
    const json in = json::parse(R"({"Id": 123456, "inputArray": [1,2,3,4,5,6,7,8,9],
        "lookingFor": 5, "index": 5, "dups": [1,2,3,3,3,3,3,3,4]})");
    CHECK(w.run("States.Array($.Id)", in) == json::parse("[123456]"));
    CHECK(w.run("States.Array()", in) == json::array());
    CHECK(w.run("States.Array('a', 1, true, null)", in) == json::parse(R"(["a",1,true,null])"));
    CHECK(w.run("States.ArrayPartition($.inputArray,4)", in) ==
          json::parse("[[1,2,3,4],[5,6,7,8],[9]]"));
    CHECK(w.run("States.ArrayContains($.inputArray, $.lookingFor)", in) == true);
    CHECK(w.run("States.ArrayContains($.inputArray, 42)", in) == false);
    CHECK(w.run("States.ArrayRange(1, 9, 2)", in) == json::parse("[1,3,5,7,9]"));
    CHECK(w.run("States.ArrayRange(5, 1, -2)", in) == json::parse("[5,3,1]"));
    CHECK(w.run("States.ArrayGetItem($.inputArray, $.index)", in) == 6);
    CHECK(w.run("States.ArrayLength($.inputArray)", in) == 9);
    CHECK(w.run("States.ArrayUnique($.dups)", in) == json::parse("[1,2,3,4]"));
    CHECK(w.failure("States.ArrayPartition($.inputArray, 0)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.ArrayRange(1, 2000, 1)", in) == "States.IntrinsicFailure");
    CHECK(w.run("States.ArrayRange(1, 1000, 1)", in).size() == 1000);
    CHECK(w.failure("States.ArrayRange(1, 9, 0)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.ArrayGetItem($.inputArray, 9)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.ArrayLength($.Id)", in) == "States.IntrinsicFailure");
}

TEST_CASE("intrinsics: encoding, hashing and JSON", "[unit]") {
    world w;
    const json in = json::parse(R"({"input": "Data to encode", "Data": "input data",
        "Algorithm": "SHA-1", "escapedJsonString": "{\"foo\": \"bar\"}",
        "unescapedJson": {"foo": "bar"},
        "json1": {"a": {"a1": 1, "a2": 2}, "b": 2}, "json2": {"a": {"a3": 1, "a4": 2}, "c": 3}})");
    CHECK(w.run("States.Base64Encode($.input)", in) == "RGF0YSB0byBlbmNvZGU=");
    CHECK(w.run("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", in) == "Data to encode");
    CHECK(w.failure("States.Base64Decode('***')", in) == "States.IntrinsicFailure");
    // The guide prints this SHA-1 with one digit dropped; the full digest of "input data":
    CHECK(w.run("States.Hash($.Data, $.Algorithm)", in) ==
          "aaff4a450a104cd177d28d18d74485e8cae074b7");
    CHECK(w.run("States.Hash('abc', 'SHA-256')", in) ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(w.run("States.Hash('abc', 'MD5')", in) == "900150983cd24fb0d6963f7d28e17f72");
    CHECK(w.failure("States.Hash('abc', 'SHA-3')", in) == "States.IntrinsicFailure");
    CHECK(w.run("States.StringToJson($.escapedJsonString)", in) == json::parse(R"({"foo":"bar"})"));
    CHECK(w.run("States.JsonToString($.unescapedJson)", in) == R"({"foo":"bar"})");
    CHECK(w.run("States.JsonMerge($.json1, $.json2, false)", in) ==
          json::parse(R"({"a": {"a3": 1, "a4": 2}, "b": 2, "c": 3})"));
    CHECK(w.failure("States.JsonMerge($.json1, $.json2, true)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.StringToJson('{nope')", in) == "States.IntrinsicFailure");
}

TEST_CASE("intrinsics: math, strings and UUIDs", "[unit]") {
    world w;
    const json in = json::parse(R"({"value1": 111, "step": -1, "inputString": "This.is+a,test=string",
        "splitter": ".+,=", "csv": "1,2,3,4,5"})");
    CHECK(w.run("States.MathAdd($.value1, $.step)", in) == 110);
    CHECK(w.run("States.MathAdd(1.6, 1)", in) == 3);  // rounded to the nearest integer
    CHECK(w.failure("States.MathAdd(3000000000, 1)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.MathAdd('1', 1)", in) == "States.IntrinsicFailure");
    for (int i = 0; i < 50; ++i) {
        const auto r = w.run("States.MathRandom(1, 4)", in).get<int>();
        CHECK((r >= 1 && r < 4));
    }
    CHECK(w.run("States.MathRandom(1, 1000, 7)", in) == w.run("States.MathRandom(1, 1000, 7)", in));
    CHECK(w.failure("States.MathRandom(5, 5)", in) == "States.IntrinsicFailure");
    CHECK(w.run("States.StringSplit($.csv, ',')", in) == json::parse(R"(["1","2","3","4","5"])"));
    CHECK(w.run("States.StringSplit($.inputString, $.splitter)", in) ==
          json::parse(R"(["This","is","a","test","string"])"));
    const std::string u1 = w.run("States.UUID()", in);
    const std::string u2 = w.run("States.UUID()", in);
    CHECK(u1.size() == 36);
    CHECK(u1[14] == '4');
    CHECK(u1 != u2);
    // The same seed and execution draw the same ids, in the same order.
    world first, again;
    CHECK(first.run("States.UUID()", in) == again.run("States.UUID()", in));
    world other_seed;
    other_seed.rng = coldbrew::models::random_source(43);
    CHECK(other_seed.run("States.UUID()", in) != world().run("States.UUID()", in));
}

TEST_CASE("intrinsics: States.Format, escapes and nesting", "[unit]") {
    world w;
    const json in = json::parse(R"({"name": "Arnav", "template": "Hello, my name is {}.",
        "ImageRecipe": {"Arn": "arn:aws:imagebuilder:us-east-1:1:image-recipe/my.recipe/1.0.0"}})");
    CHECK(w.run("States.Format('Hello, my name is {}.', $.name)", in) == "Hello, my name is Arnav.");
    CHECK(w.run("States.Format($.template, $.name)", in) == "Hello, my name is Arnav.");
    CHECK(w.run("States.Format('{} {} {}', 1, true, null)", in) == "1 true null");
    CHECK(w.run(R"(States.Format('it\'s \{literal\} {}', 'x'))", in) == "it's {literal} x");
    CHECK(w.run(R"(States.Format('a\\b'))", in) == "a\\b");
    CHECK(w.failure("States.Format('{} {}', 1)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.Format('{}', 1, 2)", in) == "States.IntrinsicFailure");
    CHECK(w.failure("States.Format('{}', $.ImageRecipe)", in) == "States.IntrinsicFailure");
    CHECK(w.run("States.Format('{}.{}.{}', States.ArrayGetItem(States.StringSplit(States."
                "ArrayGetItem(States.StringSplit($.ImageRecipe.Arn, '/'), 2), '.'), 0), States."
                "ArrayGetItem(States.StringSplit(States.ArrayGetItem(States.StringSplit($."
                "ImageRecipe.Arn, '/'), 2), '.'), 1), 'x')",
                in) == "1.0.x");
}

TEST_CASE("intrinsics: shape checks", "[unit]") {
    CHECK(is_valid_intrinsic("States.UUID()"));
    CHECK(is_valid_intrinsic("States.Format('{}', $.a)"));
    CHECK(is_valid_intrinsic("States.Array(States.UUID(), $['a b'], -1.5)"));
    CHECK_FALSE(is_valid_intrinsic("States.Nope(1)"));
    CHECK_FALSE(is_valid_intrinsic("States.Array(1"));
    CHECK_FALSE(is_valid_intrinsic("States.Array(1) extra"));
    CHECK_FALSE(is_valid_intrinsic("Other.Thing()"));
    CHECK_FALSE(is_valid_intrinsic("States.Format('unterminated)"));
    CHECK_FALSE(is_valid_intrinsic(R"(States.Format('bad \q escape'))"));
    CHECK_FALSE(is_valid_intrinsic("States.Array(abc)"));
    // At most 10 nested calls.
    std::string deep = "States.Array(";
    for (int i = 0; i < 10; ++i) deep += "States.Array(";
    deep += "1" + std::string(11, ')');
    CHECK_FALSE(is_valid_intrinsic(deep));
}
