#include "emulator/sim_cli/sim_command.hpp"

#include <stdexcept>

#include "tests/catch.hpp"

using namespace coldbrew::sim_cli;

TEST_CASE("sim: --ensure expressions", "[unit]") {
    const auto a = parse_ensure("availability >= 99.99%");
    CHECK(a.metric == "availability");
    CHECK(a.op == ">=");
    CHECK(a.threshold == 99.99);
    CHECK(ensure_holds(a, 99.995));
    CHECK(!ensure_holds(a, 99.98));
    const auto p = parse_ensure("p99 <= 1s");
    CHECK(p.metric == "p99");
    CHECK(p.threshold == 1000);
    CHECK(ensure_holds(p, 1000));
    CHECK(parse_ensure("p95<300ms").threshold == 300);
    CHECK(parse_ensure("duplicates == 0").op == "==");
    CHECK(parse_ensure("cost_per_million < 5").threshold == 5);
    CHECK(parse_ensure("p99.9 < 2s").metric == "p99.9");
    CHECK_THROWS_AS(parse_ensure("availabilty >= 99%"), std::invalid_argument);
    CHECK_THROWS_AS(parse_ensure("p95 < 3 parsecs"), std::invalid_argument);
    CHECK_THROWS_AS(parse_ensure("duplicates"), std::invalid_argument);
    CHECK_THROWS_AS(parse_ensure("availability >= 99 ms"), std::invalid_argument);
}

TEST_CASE("ensure: a threshold must be a finite number", "[unit]") {
    CHECK_THROWS_AS(coldbrew::sim_cli::parse_ensure("p95 < nan"), std::invalid_argument);
    CHECK_THROWS_AS(coldbrew::sim_cli::parse_ensure("p95 < inf"), std::invalid_argument);
}

TEST_CASE("sweep: values split at commas outside brackets", "[unit]") {
    using coldbrew::sim_cli::parse_sweep;
    const auto [path, values] =
        parse_sweep("components.api.latency=lognormal(median=5ms, p99=20ms), fixed(5ms),[a, b]");
    CHECK(path == "components.api.latency");
    REQUIRE(values.size() == 3);
    CHECK(values[0] == "lognormal(median=5ms, p99=20ms)");
    CHECK(values[1] == "fixed(5ms)");
    CHECK(values[2] == "[a, b]");
    CHECK_THROWS_AS(parse_sweep("x=fixed(5ms"), std::invalid_argument);
    CHECK_THROWS_AS(parse_sweep("x=1,,2"), std::invalid_argument);
}
