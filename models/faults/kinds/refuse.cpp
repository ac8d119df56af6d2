// refuse: a dependency's connection is reset before the upstream is ever reached, as a
// closed port or a service that is down answers a connect. Dependency front only, and only
// when a connection is made: a request turn has nothing left to refuse.

#include <memory>
#include <string>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

class refuse_config final : public fault_config {
public:
    void apply(const apply_context&, plan& p) const override { p.act = actions::refuse{}; }
    nlohmann::json to_json() const override { return {{"kind", "refuse"}}; }
    std::string describe() const override { return "refuse"; }
};

std::shared_ptr<const fault_config> parse_refuse(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind"});
    return std::make_shared<const refuse_config>();
}

}  // namespace

fault_kind make_refuse_kind() {
    fault_kind k{"refuse",
                 "reset a dependency's connection before the upstream is reached (connections "
                 "only)",
                 &parse_refuse,
                 {front::dependency}};
    k.connect_only = true;
    return k;
}

}  // namespace coldbrew::models::faults
