#pragma once
// The API key check and usage-plan metering of REST methods with ApiKeyRequired (AWS facts:
// models/usage_plan/usage_plan.hpp). Plain state, no clock: times come in.

#include <map>
#include <string>
#include <string_view>

#include "emulator/config/stack.hpp"
#include "emulator/http/message.hpp"
#include "models/usage_plan/usage_plan.hpp"

namespace coldbrew::gateway {

class api_key_gate {
public:
    // Every key of `stack` must have its value (the app draws the missing ones first).
    // `stack` must outlive the gate.
    explicit api_key_gate(const config::stack& stack);

    enum class result {
        allowed,
        forbidden,       // no key, an unknown or disabled key, or no plan of the key covers api
        throttled,       // over the plan's rate / burst for this key
        quota_exceeded,  // over the plan's quota for this key in this period
    };
    struct check {
        result r = result::forbidden;
        const config::api_key* key = nullptr;  // the key presented, when known
        std::string key_id;  // requestContext.identity.apiKeyId: stable, 10 characters
    };
    // The request to `api` presenting `key_value` (x-api-key, or the authorizer's
    // usageIdentifierKey), at modeled `now_ms` and wall `epoch_ms`.
    check admit(const config::api& api, std::string_view key_value, double now_ms,
                std::int64_t epoch_ms);
    // Zeroes every bucket and quota (the admin counters reset).
    void reset();

private:
    const config::stack* stack_;
    std::map<std::string, models::usage_plan::key_meter> meters_;  // "<plan>|<key>"
};

// API Gateway's answer for a key check that did not pass: 403 {"message":"Forbidden"}
// (INVALID_API_KEY / ForbiddenException), 429 {"message":"Too Many Requests"} (THROTTLED /
// TooManyRequestsException), 429 {"message":"Limit Exceeded"} (QUOTA_EXCEEDED /
// LimitExceededException); REST request id headers stamped. `r` must not be allowed.
http::response api_key_answer(api_key_gate::result r, const std::string& request_id);

}  // namespace coldbrew::gateway
