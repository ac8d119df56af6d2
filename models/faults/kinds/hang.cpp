// hang: a dependency stops answering. Nothing comes back to the client and the client's bytes
// are dropped; after `close_after` the connection is closed (FIN), or with none it is held
// until the client gives up. Toxiproxy's `timeout` toxic (timeout ms, 0 = hold forever, data
// dropped; shared spec peers §5). On connect the upstream is never dialled; on a request turn
// the connection goes quiet from that turn on.

#include <memory>
#include <string>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

class hang_config final : public fault_config {
public:
    explicit hang_config(double close_after_ms) : close_after_ms_(close_after_ms) {}

    void apply(const apply_context&, plan& p) const override {
        p.act = actions::hang{close_after_ms_};
    }

    nlohmann::json to_json() const override {
        nlohmann::json j{{"kind", "hang"}};
        // 0 is the default (hold until the client leaves), left out as parse_rule leaves out
        // every default.
        if (close_after_ms_ > 0) j["close_after"] = close_after_ms_;
        return j;
    }

    std::string describe() const override {
        if (close_after_ms_ > 0) return "hang, close after " + detail::format_ms(close_after_ms_);
        return "hang until the client leaves";
    }

private:
    double close_after_ms_;
};

std::shared_ptr<const fault_config> parse_hang(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "close_after"});
    double close_after_ms = 0;
    if (fault.contains("close_after"))
        close_after_ms = detail::read_duration_ms(fault["close_after"], "fault.close_after");
    return std::make_shared<const hang_config>(close_after_ms);
}

}  // namespace

fault_kind make_hang_kind() {
    return {"hang",
            "answer nothing on a dependency's connection and drop the client's bytes; close it "
            "after close_after, or hold it until the client leaves",
            &parse_hang,
            {front::dependency}};
}

}  // namespace coldbrew::models::faults
