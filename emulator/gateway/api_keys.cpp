// API key check and usage-plan metering (AWS facts: models/usage_plan/usage_plan.hpp).

#include "emulator/gateway/api_keys.hpp"

#include "emulator/gateway/detail.hpp"
#include "emulator/gateway/gateway.hpp"

#include <algorithm>
#include <stdexcept>

namespace coldbrew::gateway {

namespace {

bool has(const std::vector<std::string>& items, std::string_view value) {
    return std::find(items.begin(), items.end(), value) != items.end();
}

models::usage_plan::plan_limits limits_of(const config::usage_plan& plan) {
    models::usage_plan::plan_limits l;
    l.rate_per_s = plan.rate_limit;
    if (plan.burst_limit) l.burst = static_cast<double>(*plan.burst_limit);
    l.quota_limit = plan.quota_limit;
    if (auto p = models::usage_plan::parse_period(plan.quota_period)) l.quota_period = *p;
    l.quota_offset = plan.quota_offset;
    return l;
}

}  // namespace

api_key_gate::api_key_gate(const config::stack& stack) : stack_(&stack) {}

api_key_gate::check api_key_gate::admit(const config::api& api, std::string_view key_value,
                                        double now_ms, std::int64_t epoch_ms) {
    check c;
    if (key_value.empty()) return c;
    for (const auto& k : stack_->api_keys)
        if (k.value == key_value) {
            c.key = &k;
            break;
        }
    if (!c.key) return c;
    // Salted so a key and an API of the same name do not share an id.
    c.key_id = detail::base36_id("api-key:" + c.key->name, 10);
    if (!c.key->enabled) return c;
    // AWS lets a key be in one usage plan per API stage, so the first covering plan is it.
    const config::usage_plan* plan = nullptr;
    for (const auto& p : stack_->usage_plans)
        if (has(p.api_ids, api.id) && has(p.keys, c.key->name)) {
            plan = &p;
            break;
        }
    if (!plan) return c;
    auto [it, inserted] =
        meters_.try_emplace(plan->name + "|" + c.key->name, limits_of(*plan));
    switch (it->second.admit(now_ms, epoch_ms)) {
    case models::usage_plan::admission::allowed: c.r = result::allowed; break;
    case models::usage_plan::admission::throttled: c.r = result::throttled; break;
    case models::usage_plan::admission::quota_exceeded: c.r = result::quota_exceeded; break;
    }
    return c;
}

void api_key_gate::reset() { meters_.clear(); }

http::response api_key_answer(api_key_gate::result r, const std::string& request_id) {
    http::response res;
    switch (r) {
    case api_key_gate::result::forbidden:
        res.status = 403;
        res.body = R"({"message":"Forbidden"})";
        res.add("Content-Type", "application/json");
        res.add("x-amzn-ErrorType", "ForbiddenException");
        break;
    case api_key_gate::result::throttled:
        res.status = 429;
        res.body = R"({"message":"Too Many Requests"})";
        res.add("Content-Type", "application/json");
        res.add("x-amzn-ErrorType", "TooManyRequestsException");
        break;
    case api_key_gate::result::quota_exceeded:
        res.status = 429;
        res.body = R"({"message":"Limit Exceeded"})";
        res.add("Content-Type", "application/json");
        res.add("x-amzn-ErrorType", "LimitExceededException");
        break;
    case api_key_gate::result::allowed:
        throw std::invalid_argument("api_key_answer: the request was allowed");
    }
    stamp_request_id(res, config::api_kind::rest, request_id);
    return res;
}

}  // namespace coldbrew::gateway
