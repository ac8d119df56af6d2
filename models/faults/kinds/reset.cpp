// reset: the connection is reset (TCP RST) without an answer; the function is not invoked.
// On a dependency the client's connection is reset (and the upstream one closed), when it
// connects or at a request turn.

#include <memory>
#include <string>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

class reset_config final : public fault_config {
public:
    void apply(const apply_context&, plan& p) const override { p.act = actions::reset{}; }
    nlohmann::json to_json() const override { return {{"kind", "reset"}}; }
    std::string describe() const override { return "reset"; }
};

std::shared_ptr<const fault_config> parse_reset(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind"});
    return std::make_shared<const reset_config>();
}

}  // namespace

fault_kind make_reset_kind() {
    return {"reset",
            "reset the connection (TCP RST) without invoking the function, or a dependency's "
            "connection at connect or mid-request",
            &parse_reset,
            {front::gateway, front::invoke, front::dependency, front::states}};
}

}  // namespace coldbrew::models::faults
