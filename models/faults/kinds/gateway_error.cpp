// gateway_error: the front answers an error status itself and the function is never invoked,
// as API Gateway does when throttling (429) or when its integration fails (5xx).

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

// The statuses API Gateway itself answers with: 429 Too Many Requests (throttling), 500
// (internal/integration failure), 502 (bad integration response), 503 (service unavailable,
// also HTTP API's integration timeout) and 504 (REST API's integration timeout).
constexpr int allowed_statuses[] = {429, 500, 502, 503, 504};

class gateway_error_config final : public fault_config {
public:
    explicit gateway_error_config(int status) : status_(status) {}

    void apply(const apply_context&, plan& p) const override {
        p.act = actions::gateway_error{status_};
    }

    nlohmann::json to_json() const override {
        return {{"kind", "gateway_error"}, {"status", status_}};
    }

    std::string describe() const override { return "gateway_error " + std::to_string(status_); }

private:
    int status_;
};

std::shared_ptr<const fault_config> parse_gateway_error(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "status"});
    const char* expected = "expected one of 429, 500, 502, 503, 504";
    if (!fault.contains("status"))
        throw rule_error("fault.status", std::string("required: ") + expected);
    const std::int64_t status = detail::read_integer(fault["status"], "fault.status");
    if (std::find(std::begin(allowed_statuses), std::end(allowed_statuses), status) ==
        std::end(allowed_statuses))
        throw rule_error("fault.status", std::string(expected) + ", got " + std::to_string(status));
    return std::make_shared<const gateway_error_config>(static_cast<int>(status));
}

}  // namespace

fault_kind make_gateway_error_kind() {
    return {"gateway_error",
            "answer 429, 500, 502, 503 or 504 from the gateway without invoking the function",
            &parse_gateway_error};
}

}  // namespace coldbrew::models::faults
