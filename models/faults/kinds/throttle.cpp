// throttle: Lambda refuses the invocation with TooManyRequestsException (429) and a Reason;
// the function is not invoked.

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

// Lambda's ThrottleReason values for invocations (the ThrottleReason enum of
// @aws-sdk/client-lambda; ConcurrentSnapshotCreateLimitExceeded, which concerns SnapStart
// snapshot creation rather than invocations, is left out).
constexpr std::string_view reasons[] = {
    "ConcurrentInvocationLimitExceeded",
    "FunctionInvocationRateLimitExceeded",
    "ReservedFunctionConcurrentInvocationLimitExceeded",
    "ReservedFunctionInvocationRateLimitExceeded",
    "CallerRateLimitExceeded",
};

class throttle_config final : public fault_config {
public:
    explicit throttle_config(std::string reason) : reason_(std::move(reason)) {}

    void apply(const apply_context&, plan& p) const override {
        p.act = actions::throttle{reason_};
    }

    nlohmann::json to_json() const override { return {{"kind", "throttle"}, {"reason", reason_}}; }

    std::string describe() const override { return "throttle (" + reason_ + ")"; }

private:
    std::string reason_;
};

std::shared_ptr<const fault_config> parse_throttle(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "reason"});
    std::string reason(reasons[0]);
    if (fault.contains("reason")) {
        reason = detail::read_string(fault["reason"], "fault.reason");
        if (std::find(std::begin(reasons), std::end(reasons), reason) == std::end(reasons)) {
            std::string known;
            for (auto r : reasons)
                known += (known.empty() ? "" : ", ") + std::string(r);
            throw rule_error("fault.reason", "unknown throttle reason \"" + reason +
                                                 "\"; expected one of " + known);
        }
    }
    return std::make_shared<const throttle_config>(std::move(reason));
}

}  // namespace

fault_kind make_throttle_kind() {
    return {"throttle", "refuse the invocation as Lambda's throttle (429, with a Reason)",
            &parse_throttle};
}

}  // namespace coldbrew::models::faults
