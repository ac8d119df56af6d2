#pragma once
// Schedules: a stack's Schedule / ScheduleV2 events (SAM), `schedule` events (serverless,
// serverless-step-functions) fired at their times in *modeled* time. The modeled wall clock
// is the wall time at start() plus the modeled time elapsed since (sched::scheduler), so at
// time_scale 0.01 a rate(5 minutes) schedule fires every 3 real seconds, and a cron schedule
// fires at the modeled wall times its fields name.
//
// What the local tools do, for comparison: SAM CLI (`sam local start-api`, `start-lambda`)
// does not fire schedules at all (its docs: `sam local generate-event cloudwatch
// scheduled-event` prints an event to invoke with by hand; SAM CLI command reference);
// serverless-offline fires `schedule` events itself (src/events/schedule, since PR 879 with a
// default event when `input` is unset: a Scheduled Event with an empty `resources` and a
// random account), on the real clock through node-schedule; before that, and for tools
// without it, plugins did (serverless-offline-scheduler: cron only, unmaintained;
// serverless-offline-schedule).
//
// Expression syntax (EventBridge user guide, "Cron expressions reference" and "Rate
// expressions"; EventBridge Scheduler user guide, "Schedule types on EventBridge Scheduler"):
//  - rate(value unit): value a positive whole number, unit minute|minutes|hour|hours|day|days,
//    the singular for 1 and only for 1. A day is 24 hours, also across daylight saving time
//    (AWS re:Post knowledge center, "eventbridge-scheduler-adjust-dst").
//  - cron(Minutes Hours Day-of-month Month Day-of-week Year): Minutes 0-59, Hours 0-23,
//    Day-of-month 1-31, Month 1-12 or JAN-DEC, Day-of-week 1-7 or SUN-SAT (1 = Sunday),
//    Year 1970-2199. Wildcards: `,` lists, `-` ranges, `*` all, `/` increments (`1/10`:
//    1, 11, 21 …), `?` any (Day-of-month and Day-of-week only), `L` last day of the month
//    (Day-of-month) or of the week (Day-of-week: `L` alone is Saturday, `5L` the month's last
//    Thursday), `W` the weekday nearest a day of the month (`3W`; `LW` the last weekday),
//    `#` the n-th weekday of the month (`3#2`: second Tuesday; one such term only). Exactly one
//    of Day-of-month and Day-of-week is `?`. `/` is not allowed in Day-of-week, `L`/`W` not
//    in other fields, as the reference's wildcard table says. Ranges may wrap (`FRI-MON`,
//    `22-2`), as Quartz cron (the syntax's origin) reads them; the AWS reference is silent.
//    `W` never crosses into another month (Quartz's rule, unstated by AWS). `L-n` (n days
//    before the last) is read as Quartz reads it. A Year range may not run backwards.
//  - at(yyyy-mm-ddThh:mm:ss): EventBridge Scheduler's one-time schedule, in its time zone.
// Time zones (ScheduleExpressionTimezone; "Time zones on EventBridge Scheduler": IANA names,
// UTC by default): UTC, and any zone of the system's tz database read from its TZif file
// (/usr/share/zoneinfo, Debian's `tzdata`; libstdc++ 12 has no std::chrono::tzdb), including
// the POSIX rule at its end for instants after its last listed transition. A zone not in the
// database is refused at start. Daylight saving time, as EventBridge Scheduler treats it
// (same re:Post article): a cron time that does not exist (spring forward) is skipped; one
// that happens twice (fall back) fires once, at its first occurrence.
//
// Choices where AWS is vague:
//  - A rate schedule's first firing is one period after start() (EventBridge rules start
//    "about when created"; Scheduler without a StartDate "immediately"), so rate(5 minutes)
//    fires at 5, 10, 15 … modeled minutes; later firings keep the period from that anchor.
//  - EventBridge fires within the minute (60 s precision); here exactly on the minute.
//  - An at() time already past at start never fires; one in a spring-forward gap is read
//    with the offset before the change (02:30 → 03:30).
//  - A repeated (fall-back) local time counts only at its first instant, also when start()
//    falls between its two instants.
//  - The rule / schedule name in ARNs is config::schedule::name (the event's key), not the
//    name CloudFormation would generate.
//  - StartDate, EndDate and FlexibleTimeWindow are not acted on.
//  - Without Input a rule's target gets the Scheduled Event (the EventBridge event envelope
//    of the Lambda developer guide, "Using AWS Lambda with Amazon EventBridge"; SAM CLI's
//    `generate-event cloudwatch scheduled-event`): {"version":"0","id":<uuid>,
//    "detail-type":"Scheduled Event","source":"aws.events","account":<id>,
//    "time":"yyyy-mm-ddThh:mm:ssZ","region":<region>,
//    "resources":["arn:aws:events:<region>:<account>:rule/<name>"],"detail":{}}.
//    An EventBridge Scheduler schedule (config::schedule::scheduler) sends its "default
//    notification" (Scheduler API reference, Target.Input) instead: the same envelope with
//    "source":"aws.scheduler", resources ["arn:aws:scheduler:<region>:<account>:schedule/
//    default/<name>"] and "detail" the *string* "{}" — not documented by AWS; as captured
//    from live events and handled by cloud-custodian (PR 9566) and Powertools for Lambda
//    Python (PR 6134). With Input, the Input text as written.

#include <bitset>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/clock/clock.hpp"
#include "emulator/config/stack.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::schedules {

// Where zones are read from unless told otherwise (Debian's tzdata).
inline constexpr const char* default_zoneinfo_dir = "/usr/share/zoneinfo";

// A time zone: the UTC offset in force at any instant. Cheap to copy (shares its data).
class time_zone {
public:
    time_zone();  // UTC
    static time_zone utc() { return {}; }

    const std::string& name() const;
    // Seconds east of UTC in force at `utc_s` (seconds since the epoch).
    std::int64_t offset_s(std::int64_t utc_s) const;

    struct data;  // transitions and rule; defined in time_zone.cpp
    explicit time_zone(std::shared_ptr<const data> d) : data_(std::move(d)) {}

private:
    std::shared_ptr<const data> data_;
};

// A zone by IANA name ("Europe/Berlin", "America/New_York", "Etc/GMT+5", "UTC"); "" is UTC.
// Error texts say what is wrong ("unknown time zone 'Mars/Olympus' (not in the tz database at
// /usr/share/zoneinfo)", "… is not a TZif file").
struct zone_result {
    std::optional<time_zone> zone;
    std::string error;
    explicit operator bool() const { return zone.has_value(); }
};
zone_result load_time_zone(std::string_view name,
                           const std::filesystem::path& zoneinfo_dir = default_zoneinfo_dir);

// A parsed cron(...) expression. Bit i of a set means value i is in it.
struct cron_spec {
    std::bitset<60> minutes;
    std::bitset<24> hours;
    std::bitset<13> months;    // 1..12
    std::bitset<230> years;    // year - 1970, 1970..2199
    // Day-of-month (used when day-of-week is `?`).
    bool dom_any = false;      // `?`
    std::bitset<32> days;      // 1..31
    bool last_day = false;     // L, or L-n with …
    int last_day_offset = 0;   // … n days before the last (Quartz's form; AWS is silent)
    int nearest_weekday = 0;   // nW: 1..31, 0 = none
    bool last_weekday = false; // LW
    // Day-of-week, 1 = Sunday … 7 = Saturday (used when day-of-month is `?`).
    bool dow_any = false;      // `?`
    std::bitset<8> weekdays;   // 1..7
    int last_of_week = 0;      // dL: the month's last weekday d, 0 = none
    int nth_weekday = 0;       // d#n: weekday d …
    int nth = 0;               // … its n-th (1..5) of the month, 0 = none
};

struct schedule_expression {
    enum class kind { rate, cron, at };
    kind type = kind::rate;
    std::string text;          // as written
    double rate_ms = 0;        // rate: the period
    cron_spec cron;            // cron
    std::int64_t at_local_s = 0;  // at: the local date-time as seconds since 1970-01-01T00:00
    time_zone zone;            // cron and at are read in it; rate ignores it
};

// `expression` with `timezone` ("" = UTC). On error `value` is empty and `error` says what is
// wrong in words a template author can act on, quoting the expression
// ("schedule expression 'cron(0 12 * * * *)': one of day-of-month and day-of-week must be ?").
struct parse_result {
    std::optional<schedule_expression> value;
    std::string error;
    explicit operator bool() const { return value.has_value(); }
};
parse_result parse_schedule(std::string_view expression, std::string_view timezone = "",
                            const std::filesystem::path& zoneinfo_dir = default_zoneinfo_dir);

// The first firing strictly after `after_epoch_ms` (epoch milliseconds, wall time), or nullopt
// when there is none (an at() time passed, a cron whose fields never meet before 2200, e.g.
// Feb 30). A rate's firings are rate_start + k·period, k ≥ 1; without a rate start (NaN) it
// is after + period.
std::optional<double> next_fire_ms(
    const schedule_expression& s, double after_epoch_ms,
    double rate_start_epoch_ms = std::numeric_limits<double>::quiet_NaN());

// "arn:aws:events:<region>:<account>:rule/<name>" (EventBridge user guide, rule ARNs).
std::string rule_arn(const std::string& region, const std::string& account_id,
                     const std::string& rule_name);
// "2026-12-02T15:05:00Z": the ISO 8601 UTC text of an epoch-ms instant, whole seconds.
std::string utc_text(double epoch_ms);
// The Scheduled Event JSON text for `rule_name` firing at `fire_epoch_ms`, with event id `id`.
std::string scheduled_event_json(const std::string& id, double fire_epoch_ms,
                                 const std::string& region, const std::string& account_id,
                                 const std::string& rule_name);
// "arn:aws:scheduler:<region>:<account>:schedule/default/<name>" (the default group).
std::string schedule_arn(const std::string& region, const std::string& account_id,
                         const std::string& schedule_name);
// EventBridge Scheduler's default notification for `schedule_name` (see above).
std::string scheduler_event_json(const std::string& id, double fire_epoch_ms,
                                 const std::string& region, const std::string& account_id,
                                 const std::string& schedule_name);

// Called for each firing with the schedule and the target's event text: its Input when set,
// else the Scheduled Event (a rule) or the default notification (an EventBridge Scheduler
// schedule). Exceptions it throws are caught and counted, never passed on.
using fire_fn = std::function<void(const config::schedule&, std::string event_json)>;

struct runner_options {
    const models::random_source* rng = nullptr;  // event ids; nullptr: seed 0
    std::string region = "us-east-1";
    std::string account_id = "123456789012";
    std::filesystem::path zoneinfo_dir = default_zoneinfo_dir;
};

// Fires a stack's enabled schedules on the scheduler. Disabled schedules are kept (statuses
// names them) but never fire. Event ids are uuid_v4(rng, "schedule-event", <name>, <n>) for
// the schedule's n-th firing (0, 1, …), so a seed gives the same ids.
class schedule_runner {
public:
    // Parses every schedule; throws config::config_error at the schedule's `where` when one
    // does not parse (the loaders check first, so this is a backstop).
    schedule_runner(sched::scheduler& scheduler, const coldbrew::clock& clock,
                    std::vector<config::schedule> schedules, fire_fn fire,
                    runner_options options = {});
    ~schedule_runner();
    schedule_runner(const schedule_runner&) = delete;
    schedule_runner& operator=(const schedule_runner&) = delete;

    // Takes the wall clock and the scheduler's modeled time as the start, and arms each
    // enabled schedule's first firing. A second call does nothing.
    void start();
    // Cancels every pending firing. Safe to call from inside `fire`.
    void stop();

    // Modeled wall time now: wall at start() + modeled ms since (before start(): wall now).
    double modeled_wall_ms() const;

    struct status {
        std::string name;
        bool enabled = true;
        std::optional<double> next_fire_epoch_ms;  // modeled wall time; none when done/stopped
        std::uint64_t fired = 0;
        std::uint64_t fire_errors = 0;  // `fire` threw
    };
    // In template order.
    std::vector<status> statuses() const;

private:
    struct entry;
    void arm(std::size_t i, double after_epoch_ms);
    void wait_for(std::size_t i, double due_epoch_ms);
    void on_fire(std::size_t i, double fire_epoch_ms);

    sched::scheduler& scheduler_;
    const coldbrew::clock& clock_;
    fire_fn fire_;
    runner_options options_;
    models::random_source own_rng_{0};
    std::vector<std::unique_ptr<entry>> entries_;
    bool started_ = false;
    double start_wall_ms_ = 0;
    double start_modeled_ms_ = 0;
};

}  // namespace coldbrew::schedules
