// schedule_runner on the manual scheduler: firings in modeled time, events, disabled
// schedules, Input, errors from the target.

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/config_error.hpp"
#include "emulator/schedules/schedules.hpp"
#include "tests/catch.hpp"
#include "tests/fakes/manual_clock.hpp"
#include "tests/fakes/manual_scheduler.hpp"

using namespace coldbrew;
using namespace coldbrew::schedules;

namespace {

constexpr double minute_ms = 60'000;

double utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0) {
    using namespace std::chrono;
    const auto days = sys_days{year{y} / month{mo} / day{d}}.time_since_epoch().count();
    return (static_cast<double>(days) * 86400 + h * 3600 + mi * 60) * 1000;
}

config::schedule make(const std::string& name, const std::string& expr, bool enabled = true) {
    config::schedule s;
    s.name = name;
    s.expression = expr;
    s.enabled = enabled;
    s.function = "Fn";
    s.where = {"template.yaml", 12, 9};
    return s;
}

struct firing {
    std::string name;
    double modeled_ms;
    std::string event;
};

struct fixture {
    // 2026-12-02T14:42:19Z
    testing::manual_clock clock{static_cast<std::int64_t>(utc(2026, 12, 2, 14, 42) + 19'000)};
    testing::manual_scheduler scheduler{1.0, &clock};
    std::vector<firing> fired;
    fire_fn recorder() {
        return [this](const config::schedule& s, std::string e) {
            fired.push_back({s.name, scheduler.now_ms(), std::move(e)});
        };
    }
};

}  // namespace

TEST_CASE("runner: rate(5 minutes) fires at 5, 10 and 15 modeled minutes", "[unit]") {
    fixture f;
    schedule_runner r(f.scheduler, f.clock, {make("Every5", "rate(5 minutes)")}, f.recorder());
    r.start();
    f.scheduler.advance(4.9 * minute_ms);
    CHECK(f.fired.empty());
    f.scheduler.advance(11 * minute_ms);  // to 15.9 minutes
    REQUIRE(f.fired.size() == 3);
    CHECK(f.fired[0].modeled_ms == 5 * minute_ms);
    CHECK(f.fired[1].modeled_ms == 10 * minute_ms);
    CHECK(f.fired[2].modeled_ms == 15 * minute_ms);
    const auto st = r.statuses();
    REQUIRE(st.size() == 1);
    CHECK(st[0].fired == 3);
    CHECK(*st[0].next_fire_epoch_ms == utc(2026, 12, 2, 15, 2) + 19'000);
}

TEST_CASE("runner: the Scheduled Event names the rule, the time and a seeded id", "[unit]") {
    fixture f;
    models::random_source rng(42);
    runner_options o;
    o.rng = &rng;
    o.region = "eu-west-1";
    o.account_id = "111122223333";
    schedule_runner r(f.scheduler, f.clock, {make("Nightly", "rate(1 minute)")}, f.recorder(), o);
    r.start();
    f.scheduler.advance(2 * minute_ms);
    REQUIRE(f.fired.size() == 2);
    const auto e = nlohmann::json::parse(f.fired[0].event);
    CHECK(e["version"] == "0");
    CHECK(e["detail-type"] == "Scheduled Event");
    CHECK(e["source"] == "aws.events");
    CHECK(e["account"] == "111122223333");
    CHECK(e["region"] == "eu-west-1");
    CHECK(e["time"] == "2026-12-02T14:43:19Z");
    CHECK(e["resources"] == nlohmann::json::array({"arn:aws:events:eu-west-1:111122223333:rule/Nightly"}));
    CHECK(e["detail"] == nlohmann::json::object());
    CHECK(e["id"] == models::uuid_v4(rng, "schedule-event", "Nightly", 0));
    CHECK(nlohmann::json::parse(f.fired[1].event)["id"] ==
          models::uuid_v4(rng, "schedule-event", "Nightly", 1));
    CHECK(e["id"] != nlohmann::json::parse(f.fired[1].event)["id"]);
    // Field order as EventBridge sends it.
    CHECK(f.fired[0].event.rfind("{\"version\":\"0\",\"id\":", 0) == 0);
    CHECK(f.fired[0].event.find("\"detail-type\"") < f.fired[0].event.find("\"resources\""));
}

TEST_CASE("runner: Input is the event as written; disabled schedules never fire", "[unit]") {
    fixture f;
    auto with_input = make("WithInput", "rate(1 minute)");
    with_input.input = R"({"job": "report", "n": 1})";
    schedule_runner r(f.scheduler, f.clock,
                      {with_input, make("Off", "rate(1 minute)", false),
                       make("OffCron", "cron(* * * * ? *)", false)},
                      f.recorder());
    r.start();
    f.scheduler.advance(3 * minute_ms);
    REQUIRE(f.fired.size() == 3);
    for (const auto& x : f.fired) {
        CHECK(x.name == "WithInput");
        CHECK(x.event == R"({"job": "report", "n": 1})");
    }
    const auto st = r.statuses();
    CHECK_FALSE(st[1].enabled);
    CHECK(st[1].fired == 0);
    CHECK_FALSE(st[1].next_fire_epoch_ms);
    CHECK(st[2].fired == 0);
}

TEST_CASE("runner: cron fires at modeled wall times, scaled time included", "[unit]") {
    testing::manual_clock clock{static_cast<std::int64_t>(utc(2026, 12, 2, 14, 42) + 19'000)};
    // time_scale 0.01: modeled minutes pass 100× faster on the real clock.
    testing::manual_scheduler scheduler{0.01, &clock};
    std::vector<double> times;
    schedule_runner r(scheduler, clock, {make("Quarter", "cron(0/15 * * * ? *)")},
                      [&](const config::schedule&, std::string e) {
                          times.push_back(r.modeled_wall_ms());
                          CHECK(nlohmann::json::parse(e)["time"].get<std::string>().size() == 20);
                      });
    r.start();
    scheduler.advance(60 * minute_ms);
    REQUIRE(times.size() == 4);
    CHECK(times[0] == utc(2026, 12, 2, 14, 45));
    CHECK(times[1] == utc(2026, 12, 2, 15, 0));
    CHECK(times[2] == utc(2026, 12, 2, 15, 15));
    CHECK(times[3] == utc(2026, 12, 2, 15, 30));
    // The first firing came 2 min 41 s of modeled time after start.
    CHECK(r.statuses()[0].fired == 4);
}

TEST_CASE("runner: at() fires once; a past at() never", "[unit]") {
    fixture f;
    auto later = make("Once", "at(2026-12-02T15:00:00)");
    auto past = make("Gone", "at(2026-12-01T15:00:00)");
    schedule_runner r(f.scheduler, f.clock, {later, past}, f.recorder());
    r.start();
    f.scheduler.advance(24 * 60 * minute_ms);
    REQUIRE(f.fired.size() == 1);
    CHECK(f.fired[0].name == "Once");
    CHECK(f.fired[0].modeled_ms == 17 * minute_ms + 41'000);
    CHECK_FALSE(r.statuses()[0].next_fire_epoch_ms);
    CHECK(f.scheduler.pending() == 0);
}

TEST_CASE("runner: a target that throws is counted and the schedule goes on", "[unit]") {
    fixture f;
    int calls = 0;
    schedule_runner r(f.scheduler, f.clock, {make("Flaky", "rate(1 minute)")},
                      [&](const config::schedule&, std::string) {
                          ++calls;
                          throw std::runtime_error("target down");
                      });
    r.start();
    CHECK_NOTHROW(f.scheduler.advance(3 * minute_ms));
    CHECK(calls == 3);
    CHECK(r.statuses()[0].fire_errors == 3);
    CHECK(r.statuses()[0].fired == 3);
}

TEST_CASE("runner: stop() from inside a firing ends every schedule", "[unit]") {
    fixture f;
    schedule_runner* self = nullptr;
    int calls = 0;
    schedule_runner r(f.scheduler, f.clock,
                      {make("A", "rate(1 minute)"), make("B", "rate(2 minutes)")},
                      [&](const config::schedule&, std::string) {
                          ++calls;
                          self->stop();
                      });
    self = &r;
    r.start();
    r.start();  // a second start changes nothing
    f.scheduler.advance(10 * minute_ms);
    CHECK(calls == 1);
    CHECK(f.scheduler.pending() == 0);
}

TEST_CASE("runner: nothing fires before start(); destroying it cancels its timers", "[unit]") {
    fixture f;
    {
        schedule_runner r(f.scheduler, f.clock, {make("A", "rate(1 minute)")}, f.recorder());
        f.scheduler.advance(5 * minute_ms);
        CHECK(f.fired.empty());
        CHECK(f.scheduler.pending() == 0);
        r.start();
        CHECK(f.scheduler.pending() == 1);
    }
    CHECK(f.scheduler.pending() == 0);
}

TEST_CASE("runner: an expression that does not parse is a config error at the schedule",
          "[unit]") {
    fixture f;
    try {
        schedule_runner r(f.scheduler, f.clock, {make("Bad", "cron(0 12 * * * *)")},
                          f.recorder());
        FAIL("no config_error");
    } catch (const config::config_error& e) {
        CHECK(e.where().file == "template.yaml");
        CHECK(e.where().line == 12);
        CHECK(e.message().find("Bad: schedule expression 'cron(0 12 * * * *)'") !=
              std::string::npos);
    }
    auto tz = make("Tz", "cron(0 12 * * ? *)");
    tz.timezone = "Nowhere/Land";
    CHECK_THROWS_AS(schedule_runner(f.scheduler, f.clock, {tz}, f.recorder()),
                    config::config_error);
}

TEST_CASE("runner: a firing beyond the scheduler's longest wait is not fired early", "[unit]") {
    fixture f;
    schedule_runner r(f.scheduler, f.clock, {make("Far", "cron(0 0 1 1 ? 2199)")}, f.recorder());
    r.start();
    const double year_ms = 365.25 * 24 * 60 * minute_ms;
    f.scheduler.advance(40 * year_ms);  // past the manual scheduler's ~31.7-year cap
    CHECK(f.fired.empty());
    CHECK(f.scheduler.pending() == 1);
    CHECK(*r.statuses()[0].next_fire_epoch_ms == utc(2199, 1, 1));
}

TEST_CASE("runner: a cron in New York across the fall-back night fires each local time once",
          "[unit]") {
    // 2026-11-01 04:00Z = 00:00 EDT; clocks go back at 06:00Z (02:00 EDT → 01:00 EST).
    testing::manual_clock clock{static_cast<std::int64_t>(utc(2026, 11, 1, 4, 0))};
    testing::manual_scheduler scheduler{1.0, &clock};
    std::vector<std::string> times;
    auto s = make("HalfHourly", "cron(0/30 * * * ? *)");
    s.timezone = "America/New_York";
    schedule_runner r(scheduler, clock, {s}, [&](const config::schedule&, std::string e) {
        times.push_back(nlohmann::json::parse(e)["time"].get<std::string>());
    });
    r.start();
    scheduler.advance(4 * 60 * minute_ms);  // to 08:00Z
    // 00:30, 01:00, 01:30 EDT; then 02:00 EST (07:00Z): the repeated 01:xx hour is not re-run.
    CHECK(times == std::vector<std::string>{"2026-11-01T04:30:00Z", "2026-11-01T05:00:00Z",
                                            "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z",
                                            "2026-11-01T07:30:00Z", "2026-11-01T08:00:00Z"});
}

TEST_CASE("runner: an EventBridge Scheduler schedule sends Scheduler's default notification",
          "[unit]") {
    fixture f;
    auto v2 = make("Hourly", "rate(1 hour)");
    v2.scheduler = true;
    schedule_runner r(f.scheduler, f.clock, {v2, make("Rule", "rate(1 hour)")}, f.recorder());
    r.start();
    f.scheduler.advance(60 * minute_ms);
    REQUIRE(f.fired.size() == 2);
    const auto e = nlohmann::json::parse(f.fired[0].event);
    CHECK(e["source"] == "aws.scheduler");
    CHECK(e["detail-type"] == "Scheduled Event");
    CHECK(e["resources"] == nlohmann::json::array(
                                {"arn:aws:scheduler:us-east-1:123456789012:schedule/default/Hourly"}));
    CHECK(e["detail"] == "{}");  // a string, as Scheduler sends it
    CHECK(e["time"] == "2026-12-02T15:42:19Z");
    const auto rule = nlohmann::json::parse(f.fired[1].event);
    CHECK(rule["source"] == "aws.events");
    CHECK(rule["detail"] == nlohmann::json::object());
}
