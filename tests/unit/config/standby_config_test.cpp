// coldbrew.yaml `standby`: how many standby execution environments each function keeps.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const two_functions = R"(Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties: {Runtime: nodejs22.x, Handler: index.handler, CodeUri: src}
  Other:
    Type: AWS::Serverless::Function
    Properties: {Runtime: nodejs22.x, Handler: index.handler, CodeUri: src}
)";

}  // namespace

TEST_CASE("coldbrew.yaml standby: one per function unless set, globally or per function",
          "[unit]") {
    temp_app app;
    auto s = app.sam(two_functions);
    CHECK(s.find_function("Hello")->standby == 1);
    CHECK_FALSE(s.find_function("Hello")->standby_auto);
    app.write("coldbrew.yaml", "standby: 4\nfunctions:\n  Other:\n    standby: auto\n");
    s = app.sam(two_functions);
    CHECK(s.find_function("Hello")->standby == 4);
    CHECK_FALSE(s.find_function("Hello")->standby_auto);
    CHECK(s.find_function("Other")->standby_auto);
    app.write("coldbrew.yaml", "standby: 0\nfunctions:\n  Other:\n    standby: '7'\n");
    s = app.sam(two_functions);
    CHECK(s.find_function("Hello")->standby == 0);
    CHECK(s.find_function("Other")->standby == 7);
}

TEST_CASE("coldbrew.yaml standby: what is not a count from 0 to 1000 or auto", "[unit]") {
    for (const char* bad : {"-1", "lots", "1001", "[1]", "1.5", "AUTO", ""}) {
        CAPTURE(bad);
        temp_app app;
        app.write("coldbrew.yaml", std::string("seed: 1\nfunctions:\n  Hello:\n    standby: ") + bad + "\n");
        const auto e = error_of([&] { app.sam(two_functions); });
        CHECK(e.where().line == 4);
        CHECK(e.key_path() == "functions.Hello.standby");
        CHECK(contains(e.message(), "must be a number of standby environments from 0 to 1000, or auto"));
    }
}
