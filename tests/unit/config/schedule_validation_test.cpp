// Schedule expressions and time zones in a template are checked at load with the parser that
// fires them (emulator/schedules): a bad one stops the start at its file, line and key.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const sam_header = R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: nodejs22.x
      Events:
        Tick:
)";

const char* const sls_header = R"(service: svc
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
    events:
)";

}  // namespace

TEST_CASE("SAM schedules: cron fields and time zones are checked where they are written",
          "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(std::string(sam_header) +
                "          Type: Schedule\n"
                "          Properties:\n"
                "            Schedule: cron(0 12 * * * *)\n");
    });
    CHECK(contains(e.message(), "one of day-of-month and day-of-week must be '?'"));
    CHECK(e.where().line == 14);
    CHECK(contains(e.key_path(), "Schedule"));

    e = error_of([&] {
        app.sam(std::string(sam_header) +
                "          Type: ScheduleV2\n"
                "          Properties:\n"
                "            ScheduleExpression: cron(0 9 ? * MON-FRI *)\n"
                "            ScheduleExpressionTimezone: Europe/Atlantis\n");
    });
    CHECK(contains(e.message(), "unknown time zone 'Europe/Atlantis'"));
    CHECK(e.where().line == 15);
    CHECK(contains(e.key_path(), "ScheduleExpressionTimezone"));

    e = error_of([&] {
        app.sam(std::string(sam_header) +
                "          Type: Schedule\n"
                "          Properties:\n"
                "            Schedule: cron(61 12 * * ? *)\n");
    });
    CHECK(contains(e.message(), "minutes: 61 is out of range 0-59"));

    const auto s = app.sam(std::string(sam_header) +
                           "          Type: ScheduleV2\n"
                           "          Properties:\n"
                           "            ScheduleExpression: cron(0 9 ? * 2#1 *)\n"
                           "            ScheduleExpressionTimezone: America/New_York\n");
    REQUIRE(s.schedules.size() == 1);
    CHECK(s.schedules[0].timezone == "America/New_York");
}

TEST_CASE("serverless schedules: cron fields and time zones are checked where they are written",
          "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.serverless(std::string(sls_header) + "      - schedule: cron(0 0 L * MON *)\n");
    });
    CHECK(contains(e.message(), "must be '?'"));
    CHECK(e.where().line == 9);

    e = error_of([&] {
        app.serverless(std::string(sls_header) +
                       "      - schedule:\n"
                       "          rate: cron(0 9 * * ? *)\n"
                       "          method: scheduler\n"
                       "          timezone: Not/AZone\n");
    });
    CHECK(contains(e.message(), "unknown time zone 'Not/AZone'"));
    CHECK(e.where().line == 12);

    const auto s = app.serverless(std::string(sls_header) +
                                  "      - schedule:\n"
                                  "          rate: cron(0 9 * * ? *)\n"
                                  "          method: scheduler\n"
                                  "          timezone: Asia/Tokyo\n");
    REQUIRE(s.schedules.size() == 1);
    CHECK(s.schedules[0].timezone == "Asia/Tokyo");
}

TEST_CASE("schedules: ScheduleV2 and `method: scheduler` are EventBridge Scheduler schedules",
          "[unit]") {
    temp_app app;
    const auto sam = app.sam(std::string(sam_header) +
                             "          Type: ScheduleV2\n"
                             "          Properties:\n"
                             "            ScheduleExpression: rate(1 hour)\n"
                             "        Old:\n"
                             "          Type: Schedule\n"
                             "          Properties:\n"
                             "            Schedule: rate(1 hour)\n");
    REQUIRE(sam.schedules.size() == 2);
    CHECK(sam.schedules[0].scheduler);
    CHECK_FALSE(sam.schedules[1].scheduler);

    const auto sls = app.serverless(std::string(sls_header) +
                                    "      - schedule:\n"
                                    "          rate: rate(1 hour)\n"
                                    "          method: scheduler\n"
                                    "      - schedule: rate(2 hours)\n");
    REQUIRE(sls.schedules.size() == 2);
    CHECK(sls.schedules[0].scheduler);
    CHECK_FALSE(sls.schedules[1].scheduler);
}
