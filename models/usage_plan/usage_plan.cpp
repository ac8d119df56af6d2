// Usage-plan metering (AWS facts and the choices made where none is documented:
// usage_plan.hpp).

#include "models/usage_plan/usage_plan.hpp"

#include <algorithm>
#include <chrono>

namespace coldbrew::models::usage_plan {

namespace {

constexpr std::int64_t ms_per_day = 86'400'000;

// Floor division, so days before 1970 land in the right day.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

request_bucket::request_bucket(double rate_per_s, double burst)
    : rate_per_s_(rate_per_s), burst_(burst), tokens_(burst) {}

double request_bucket::tokens(double now_ms) const {
    if (!started_) return burst_;
    double elapsed_ms = std::max(0.0, now_ms - last_ms_);
    return std::min(burst_, tokens_ + elapsed_ms * rate_per_s_ / 1000.0);
}

bool request_bucket::take(double now_ms) {
    tokens_ = tokens(now_ms);
    // Time never goes back for the bucket: an earlier reading refills nothing.
    if (!started_ || now_ms > last_ms_) last_ms_ = now_ms;
    started_ = true;
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
}

std::optional<period> parse_period(std::string_view text) {
    if (text == "DAY") return period::day;
    if (text == "WEEK") return period::week;
    if (text == "MONTH") return period::month;
    return std::nullopt;
}

std::int64_t period_start_ms(period p, std::int64_t epoch_ms) {
    using namespace std::chrono;
    const std::int64_t day = floor_div(epoch_ms, ms_per_day);  // days since 1970-01-01
    switch (p) {
    case period::day: return day * ms_per_day;
    case period::week: {
        // 1970-01-01 was a Thursday: Sunday is 4 days earlier in the week.
        const std::int64_t since_sunday = ((day + 4) % 7 + 7) % 7;
        return (day - since_sunday) * ms_per_day;
    }
    case period::month: {
        const year_month_day ymd{sys_days{days{day}}};
        const sys_days first{ymd.year() / ymd.month() / 1};
        return static_cast<std::int64_t>(first.time_since_epoch().count()) * ms_per_day;
    }
    }
    return day * ms_per_day;
}

key_meter::key_meter(plan_limits limits) : limits_(limits) {
    if (limits_.rate_per_s)
        bucket_.emplace(*limits_.rate_per_s,
                        limits_.burst.value_or(std::max(1.0, *limits_.rate_per_s)));
}

admission key_meter::admit(double now_ms, std::int64_t epoch_ms) {
    if (limits_.quota_limit) {
        const std::int64_t start = period_start_ms(limits_.quota_period, epoch_ms);
        if (first_period_start_ == INT64_MIN) first_period_start_ = start;
        if (start != period_start_) {
            period_start_ = start;
            used_ = 0;
        }
        std::int64_t limit = *limits_.quota_limit;
        if (start == first_period_start_) limit -= limits_.quota_offset;
        if (used_ >= limit) return admission::quota_exceeded;
    }
    if (bucket_ && !bucket_->take(now_ms)) return admission::throttled;
    ++used_;
    return admission::allowed;
}

}  // namespace coldbrew::models::usage_plan
