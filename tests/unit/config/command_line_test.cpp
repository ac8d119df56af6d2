#include "emulator/config/command_line.hpp"

#include <stdexcept>

#include "tests/catch.hpp"

using coldbrew::config::parse_parameter_overrides;

TEST_CASE("parameter overrides: SAM CLI's forms, one or several per argument", "[unit]") {
    std::map<std::string, std::string> out;
    parse_parameter_overrides("Env=prod Size=2", out);
    parse_parameter_overrides("Greeting=\"hello world\" Empty='' ", out);
    parse_parameter_overrides("ParameterKey=Table,ParameterValue=orders", out);
    CHECK(out == std::map<std::string, std::string>{
                     {"Env", "prod"}, {"Size", "2"}, {"Greeting", "hello world"}, {"Empty", ""}, {"Table", "orders"}});
    // A later value for the same key wins, as on SAM CLI's command line.
    parse_parameter_overrides("Env=dev", out);
    CHECK(out["Env"] == "dev");
}

TEST_CASE("parameter overrides: a word of neither form is refused with what was expected", "[unit]") {
    std::map<std::string, std::string> out;
    CHECK_THROWS_WITH(parse_parameter_overrides("Env", out), "expected Key=Value, got 'Env'");
    CHECK_THROWS_WITH(parse_parameter_overrides("=x", out), "expected Key=Value, got '=x'");
    CHECK_THROWS_WITH(parse_parameter_overrides("ParameterKey=A", out),
                      "expected ParameterKey=K,ParameterValue=V, got 'ParameterKey=A'");
    CHECK(out.empty());
}
