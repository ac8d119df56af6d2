// slow_response: the function runs normally; its response is written at a fixed rate, as over
// a congested or throttled link. On a dependency, the upstream's bytes reach the client at
// that rate.

#include <memory>
#include <string>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

class slow_response_config final : public fault_config {
public:
    explicit slow_response_config(double bytes_per_s) : bytes_per_s_(bytes_per_s) {}

    void apply(const apply_context&, plan& p) const override {
        p.act = actions::slow_response{bytes_per_s_};
    }

    nlohmann::json to_json() const override {
        return {{"kind", "slow_response"}, {"bytes_per_s", bytes_per_s_}};
    }

    std::string describe() const override {
        return "slow_response " + detail::format_number(bytes_per_s_) + " B/s";
    }

private:
    double bytes_per_s_;
};

std::shared_ptr<const fault_config> parse_slow_response(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "bytes_per_s"});
    if (!fault.contains("bytes_per_s"))
        throw rule_error("fault.bytes_per_s", "required: the response's rate in bytes per second");
    const double rate = detail::read_number(fault["bytes_per_s"], "fault.bytes_per_s");
    // 0 would never finish writing; a stuck answer is what phantom with "hang" is for.
    if (!(rate > 0))
        throw rule_error("fault.bytes_per_s", "expected a rate > 0 bytes per second, got " +
                                                  detail::format_number(rate));
    // The token buckets that pace it work between these bounds.
    if (rate < 0.001 || rate > 1e15)
        throw rule_error("fault.bytes_per_s", "expected a rate from 0.001 to 1e15 bytes per "
                                              "second, got " + detail::format_number(rate));
    return std::make_shared<const slow_response_config>(rate);
}

}  // namespace

fault_kind make_slow_response_kind() {
    return {"slow_response",
            "write the function's (or a dependency's) response at a fixed rate in bytes per "
            "second",
            &parse_slow_response,
            {front::gateway, front::invoke, front::dependency}};
}

}  // namespace coldbrew::models::faults
