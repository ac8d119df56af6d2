// coldbrew.yaml `memory:`: whether MemorySize is enforced with cgroups.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const one_function = R"(Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
)";

}  // namespace

TEST_CASE("coldbrew.yaml memory.enforce: on unless turned off", "[unit]") {
    temp_app app;
    CHECK(app.sam(one_function).settings.enforce_memory);
    app.write("coldbrew.yaml", "memory:\n  enforce: false\n");
    CHECK_FALSE(app.sam(one_function).settings.enforce_memory);
    app.write("coldbrew.yaml", "memory:\n  enforce: true\n");
    CHECK(app.sam(one_function).settings.enforce_memory);
}

TEST_CASE("coldbrew.yaml memory.enforce: a value that is not a boolean", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "seed: 1\nmemory:\n  enforce: \"no\"\n");
    const auto e = error_of([&] { app.sam(one_function); });
    CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
    CHECK(e.where().line == 3);
    CHECK(e.key_path() == "memory.enforce");
    CHECK(contains(e.message(), "memory.enforce must be true or false, got 'no'"));
}

TEST_CASE("coldbrew.yaml memory: an unknown key", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "memory:\n  enforced: false\n");
    const auto e = error_of([&] { app.sam(one_function); });
    CHECK(e.key_path() == "memory.enforced");
    CHECK(e.where().line == 2);
    CHECK(contains(e.message(), "did you mean 'enforce'"));
}

TEST_CASE("coldbrew.yaml memory_budget_mb: none unless set, null removes it", "[unit]") {
    temp_app app;
    CHECK_FALSE(app.sam(one_function).settings.memory_budget_mb.has_value());
    app.write("coldbrew.yaml", "memory_budget_mb: 4096\n");
    CHECK(app.sam(one_function).settings.memory_budget_mb == std::optional<std::uint64_t>(4096));
    app.write("coldbrew.yaml", "memory_budget_mb: null\n");
    CHECK_FALSE(app.sam(one_function).settings.memory_budget_mb.has_value());
}

TEST_CASE("coldbrew.yaml memory_budget_mb: values outside 1..16777216 MB", "[unit]") {
    temp_app app;
    const char* bad[] = {"0", "-5", "16777217", "2.5", "lots", "[1]"};
    for (const char* value : bad) {
        INFO(value);
        app.write("coldbrew.yaml", std::string("seed: 1\nmemory_budget_mb: ") + value + "\n");
        const auto e = error_of([&] { app.sam(one_function); });
        CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
        CHECK(e.where().line == 2);
        CHECK(e.key_path() == "memory_budget_mb");
        CHECK(contains(e.message(), "memory_budget_mb must be"));
        CHECK(contains(e.message(), "between 1 and 16777216"));
    }
}

TEST_CASE("coldbrew.yaml memory_budget_mb: a misspelling is named", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "memory_budget: 100\n");
    const auto e = error_of([&] { app.sam(one_function); });
    CHECK(e.key_path() == "memory_budget");
    CHECK(contains(e.message(), "did you mean 'memory_budget_mb'"));
}
