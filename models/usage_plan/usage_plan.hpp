#pragma once
// API keys and usage plans of REST APIs: which key may call which API, at what rate and how
// often per period. Pure: modeled time for the token buckets and epoch time for quota periods
// come in as arguments.
//
// AWS facts ("Usage plans and API keys for REST APIs", "Throttle requests to your REST APIs",
// API Gateway developer guide): every key of a plan has its own token bucket (RateLimit
// requests per second, BurstLimit deep) and its own quota (Limit requests per DAY, WEEK or
// MONTH); a request without a valid key gets 403 {"message":"Forbidden"}, one over the rate
// 429 {"message":"Too Many Requests"} (localstack/localstack#8801 reports both bodies from
// AWS), one over the quota 429 {"message":"Limit Exceeded"} (QUOTA_EXCEEDED, "Gateway response
// types"; x-amzn-ErrorType LimitExceededException seen in massif-press/compcon#2237).
// Quota Offset is a number of requests, not days: "the number of requests subtracted from the
// given limit in the initial time period" (API reference, QuotaSettings; CloudFormation
// AWS::ApiGateway::UsagePlan QuotaSettings: for a plan that starts mid-week or mid-month).
// Unverified, chosen here: periods are aligned to UTC (a DAY from 00:00 UTC, a WEEK from
// Sunday 00:00 UTC, a MONTH from the 1st 00:00 UTC); a plan with RateLimit and no BurstLimit
// gets a bucket max(1, RateLimit) deep; one with BurstLimit and no RateLimit is not
// throttled (a bucket that never refills would lock the key out for good).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::models::usage_plan {

// A token bucket of whole requests: `rate_per_s` tokens a second up to `burst`, starting
// full. take() at modeled time `now_ms` (never decreasing).
class request_bucket {
public:
    request_bucket(double rate_per_s, double burst);
    bool take(double now_ms);
    double tokens(double now_ms) const;

private:
    double rate_per_s_, burst_, tokens_, last_ms_ = 0;
    bool started_ = false;
};

enum class period { day, week, month };
// "DAY", "WEEK", "MONTH" (upper case, as the templates spell them).
std::optional<period> parse_period(std::string_view text);

// The start (epoch ms, UTC) of the quota period holding `epoch_ms`: a DAY starts at 00:00
// UTC, a WEEK on Sunday 00:00 UTC, a MONTH on the 1st at 00:00 UTC (alignment unverified, see
// above). Times before 1970 work too.
std::int64_t period_start_ms(period p, std::int64_t epoch_ms);

struct plan_limits {
    std::optional<double> rate_per_s;
    std::optional<double> burst;
    std::optional<std::int64_t> quota_limit;
    period quota_period = period::day;
    // Requests subtracted from quota_limit in the initial period: the period of the first
    // request this meter sees (QuotaSettings.offset).
    std::int64_t quota_offset = 0;
};

enum class admission { allowed, throttled, quota_exceeded };

// One key's state under one plan: its bucket and the requests counted in the current quota
// period.
class key_meter {
public:
    explicit key_meter(plan_limits limits);
    // The request at modeled `now_ms` and wall `epoch_ms`: the quota is checked first, then
    // the bucket (order unverified); a request over the quota takes no token, a throttled one
    // is not counted against the quota.
    admission admit(double now_ms, std::int64_t epoch_ms);
    std::int64_t used_in_period() const noexcept { return used_; }

private:
    plan_limits limits_;
    std::optional<request_bucket> bucket_;
    std::int64_t period_start_ = INT64_MIN;
    std::int64_t first_period_start_ = INT64_MIN;
    std::int64_t used_ = 0;
};

}  // namespace coldbrew::models::usage_plan
