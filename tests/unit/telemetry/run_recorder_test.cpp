// The run recorder: what `up --record` writes reads back as the record format, a fault's end
// names the request it was decided for, and a recorder that is not open writes nothing.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <variant>

#include "emulator/telemetry/run_recorder.hpp"
#include "models/sim/record.hpp"
#include "tests/catch.hpp"

using namespace coldbrew;
namespace mf = coldbrew::models::faults;
namespace sim = coldbrew::models::sim;

TEST_CASE("run recorder: events read back in order, a fault's end names its request", "[unit]") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("coldbrew-run-recorder-" + std::to_string(::getpid()) + ".jsonl");
    {
        telemetry::run_recorder rec;
        sim::record_header h;
        h.seed = 9;
        h.time_scale = 0.01;
        REQUIRE_FALSE(rec.open(path, h));
        std::vector<std::pair<std::string, std::string>> headers{{"x-scenario", "retry"}};
        mf::request_facts f;
        f.where = mf::front::gateway;
        f.route = "GET /hello";
        f.method = "GET";
        f.path = "/hello";
        f.function = "Hello";
        f.headers = &headers;
        const auto id = rec.request(f, 10.5);
        REQUIRE(id == std::optional<std::uint64_t>(0));
        mf::decision d;
        d.id = 3;  // a fault in effect
        rec.decided(id, d);
        CHECK(rec.invoke("Hello", 11, id) == std::optional<std::uint64_t>(0));
        sim::recorded_handler answer;
        answer.invocation = 0;
        answer.at_ms = 12;
        rec.handler(answer);
        rec.fault_ended(3, 13);
        rec.fault_ended(3, 14);   // finished twice: one end
        rec.fault_ended(99, 15);  // a fault no recorded request had
        mf::request_facts dep;
        dep.where = mf::front::dependency;
        dep.route = "redis request";
        dep.dependency = "redis";
        dep.on = mf::dependency_phase::request;
        CHECK(rec.request(dep, 16) == std::optional<std::uint64_t>(1));
        rec.stop("Hello", 17);
        CHECK(rec.events() == 6);
    }
    const auto back = sim::read_record(path);
    std::filesystem::remove(path);
    CHECK(back.header.seed == 9);
    REQUIRE(back.events.size() == 6);
    const auto& r = std::get<sim::recorded_request>(back.events[0]);
    CHECK(r.at_ms == 10.5);
    CHECK(r.headers == std::vector<std::pair<std::string, std::string>>{{"x-scenario", "retry"}});
    CHECK(std::get<sim::recorded_invoke>(back.events[1]).request == std::optional<std::uint64_t>(0));
    const auto& end = std::get<sim::recorded_end>(back.events[3]);
    CHECK(end.request == 0);
    CHECK(end.at_ms == 13);
    CHECK(std::get<sim::recorded_request>(back.events[4]).on == "request");
    CHECK(std::holds_alternative<sim::recorded_stop>(back.events[5]));
}

TEST_CASE("run recorder: not open, it gives no ids and writes nothing", "[unit]") {
    telemetry::run_recorder rec;
    mf::request_facts f;
    CHECK_FALSE(rec.request(f, 1));
    CHECK_FALSE(rec.invoke("Hello", 1, std::nullopt));
    rec.tick("Hello", 2);
    CHECK(rec.events() == 0);
}
