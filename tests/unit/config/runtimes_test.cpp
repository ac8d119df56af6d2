// Runtime identifiers judged against AWS's lifecycle table, and coldbrew.yaml `runtimes:`.

#include <sys/stat.h>

#include <set>

#include "emulator/config/lambda_runtimes.hpp"
#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

std::string sam_with_runtime(const std::string& runtime) {
    return "Resources:\n  Old:\n    Type: AWS::Serverless::Function\n    Properties:\n"
           "      Handler: index.handler\n      CodeUri: src\n      Runtime: " +
           runtime + "\n";
}

config::load_options on(int y, unsigned m, unsigned d) {
    config::load_options o;
    o.today = std::chrono::year_month_day{std::chrono::year{y}, std::chrono::month{m},
                                          std::chrono::day{d}};
    return o;
}

}  // namespace

TEST_CASE("runtimes past AWS's block-create date are errors in AWS's words", "[unit]") {
    temp_app app;
    for (const auto& [runtime, successor] :
         std::vector<std::pair<std::string, std::string>>{{"nodejs4.3", "nodejs24.x"},
                                                          {"python2.7", "python3.14"},
                                                          {"python3.6", "python3.14"},
                                                          {"nodejs14.x", "nodejs24.x"},
                                                          {"provided", "provided.al2023"}}) {
        INFO(runtime);
        const auto e = error_of([&] { app.sam(sam_with_runtime(runtime)); });
        CHECK(contains(e.message(),
                       "Old: The runtime parameter of " + runtime +
                           " is no longer supported for creating or updating AWS Lambda "
                           "functions. We recommend you use the new runtime (" +
                           successor + ") while creating or updating functions."));
        CHECK(e.key_path() == "Resources.Old.Properties.Runtime");
        CHECK(e.where().file == (app.dir() / "template.yaml").string());
        CHECK(e.where().line == 7);
        CHECK(e.where().column == 16);
    }
}

TEST_CASE("a deprecated runtime AWS still accepts is a warning naming its dates", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_with_runtime("python3.9"));
    REQUIRE(s.warnings.size() == 1);
    CHECK(contains(s.warnings[0], "template.yaml:7:16: Resources.Old.Properties.Runtime: Old: "
                                  "runtime python3.9 is deprecated since 2025-12-15; AWS blocks "
                                  "creating functions with it from 2027-02-01 and updating them "
                                  "from 2027-03-03; use python3.14"));
    // The date decides: the same template on the block-create date is an error.
    const auto e = error_of([&] { app.sam(sam_with_runtime("python3.9"), on(2027, 2, 1)); });
    CHECK(contains(e.message(), "The runtime parameter of python3.9 is no longer supported"));
    // … and before the deprecation date, nothing at all.
    CHECK(app.sam(sam_with_runtime("python3.9"), on(2025, 12, 14)).warnings.empty());
}

TEST_CASE("current runtimes load without a word", "[unit]") {
    temp_app app;
    for (const char* runtime : {"nodejs22.x", "nodejs24.x", "python3.12", "python3.13",
                                "python3.14", "provided.al2023"}) {
        INFO(runtime);
        CHECK(app.sam(sam_with_runtime(runtime)).warnings.empty());
    }
}

TEST_CASE("an unknown runtime lists the supported ones", "[unit]") {
    temp_app app;
    const auto e = error_of([&] { app.sam(sam_with_runtime("nodejs99.x")); });
    CHECK(e.message() ==
          "Old: runtime nodejs99.x is not supported (supported: nodejs24.x, nodejs22.x, "
          "nodejs20.x, nodejs18.x, nodejs16.x, python3.14, python3.13, python3.12, python3.11, "
          "python3.10, python3.9, python3.8, provided.al2023, provided.al2)");
    CHECK(e.key_path() == "Resources.Old.Properties.Runtime");
}

TEST_CASE("the runtime table: one row per identifier, dates in order", "[unit]") {
    std::set<std::string_view> seen;
    for (const auto& r : config::lambda_runtimes()) {
        INFO(r.id);
        CHECK(seen.insert(r.id).second);
        REQUIRE(r.block_update);
        REQUIRE(r.block_create);
        CHECK(std::chrono::sys_days{*r.block_create} <= std::chrono::sys_days{*r.block_update});
        if (!r.successor.empty()) CHECK(config::find_lambda_runtime(r.successor));
    }
    CHECK(config::find_lambda_runtime("nodejs22.x"));
    CHECK_FALSE(config::find_lambda_runtime("java21"));
}

TEST_CASE("coldbrew.yaml runtimes: an executable per runtime identifier", "[unit]") {
    temp_app app;
    const auto py = app.write("py/bin/python3", "#!/bin/sh\n");
    ::chmod(py.c_str(), 0755);
    app.write("coldbrew.yaml", "runtimes:\n  python3.12: py/bin/python3\n");
    const auto s = app.sam(sam_with_runtime("python3.12"));
    REQUIRE(s.settings.runtimes.count("python3.12") == 1);
    CHECK(s.settings.runtimes.at("python3.12").file == py);
    CHECK(s.settings.runtimes.at("python3.12").where.line == 2);

    // Not executable.
    const auto plain = app.write("py/bin/plain", "");
    ::chmod(plain.c_str(), 0644);
    app.write("coldbrew.yaml", "runtimes:\n  python3.12: py/bin/plain\n");
    auto e = error_of([&] { app.sam(sam_with_runtime("python3.12")); });
    CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
    CHECK(e.where().line == 2);
    CHECK(e.key_path() == "runtimes.python3.12");
    CHECK(contains(e.message(), "is not executable"));

    // Missing, and a directory.
    app.write("coldbrew.yaml", "runtimes:\n  nodejs22.x: /nonexistent/node\n");
    e = error_of([&] { app.sam(sam_with_runtime("python3.12")); });
    CHECK(contains(e.message(), "/nonexistent/node does not exist"));
    CHECK(e.key_path() == "runtimes.nodejs22.x");
    app.write("coldbrew.yaml", "runtimes:\n  nodejs22.x: py\n");
    e = error_of([&] { app.sam(sam_with_runtime("python3.12")); });
    CHECK(contains(e.message(), "is not a file"));

    // A key that is no Node.js or Python runtime, with a suggestion.
    app.write("coldbrew.yaml", "runtimes:\n  python3.21: py/bin/python3\n");
    e = error_of([&] { app.sam(sam_with_runtime("python3.12")); });
    CHECK(e.where().line == 2);
    CHECK(e.key_path() == "runtimes.python3.21");
    CHECK(contains(e.message(), "unknown runtime 'python3.21'"));
    app.write("coldbrew.yaml", "runtimes:\n  provided.al2023: py/bin/python3\n");
    e = error_of([&] { app.sam(sam_with_runtime("python3.12")); });
    CHECK(contains(e.message(), "runtimes takes Node.js and Python runtime identifiers"));
}
