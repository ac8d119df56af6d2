#include "emulator/telemetry/decision_log.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/catch.hpp"

using coldbrew::telemetry::decision_log;

TEST_CASE("decision log: one line per decision, written through at once", "[unit]") {
    auto path = std::filesystem::temp_directory_path() / ("coldbrew-decisions-" + std::to_string(::getpid()) + ".jsonl");
    {
        decision_log log;
        REQUIRE_FALSE(log.open(path));
        log.write(R"({"event":"created"})");
        // Readable before the log is closed: lines are flushed as written.
        std::ifstream early(path);
        std::stringstream seen;
        seen << early.rdbuf();
        CHECK(seen.str() == "{\"event\":\"created\"}\n");
        log.write(R"({"event":"reused"})");
        CHECK(log.lines() == 2);
    }
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    CHECK(all.str() == "{\"event\":\"created\"}\n{\"event\":\"reused\"}\n");
    std::filesystem::remove(path);
}

TEST_CASE("decision log: an unopened log counts lines and writes nothing; a bad path is an error", "[unit]") {
    decision_log log;
    log.write("{}");
    CHECK(log.lines() == 1);
    CHECK(log.open("/nonexistent-dir/x.jsonl"));
}
