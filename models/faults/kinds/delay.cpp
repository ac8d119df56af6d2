// delay: the request waits a sampled time first, then goes on normally (act stays pass).

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

constexpr const char* duration_hint =
    "a distribution such as \"fixed(300ms)\" or \"lognormal(median=200ms, p99=2s)\", or a "
    "number of ms";

class delay_config final : public fault_config {
public:
    explicit delay_config(distribution duration) : duration_(std::move(duration)) {}

    void apply(const apply_context& ctx, plan& p) const override {
        // A normal distribution may sample below 0; a wait cannot be negative.
        const double ms = duration_.sample(ctx.rng, "fault-delay", ctx.draw_key, ctx.k);
        p.delay_ms = std::isnan(ms) ? 0 : std::max(0.0, ms);
    }

    nlohmann::json to_json() const override {
        return {{"kind", "delay"}, {"duration", duration_.to_string()}};
    }

    std::string describe() const override { return "delay " + duration_.to_string(); }

private:
    distribution duration_;
};

// A plain duration ("300ms") is read as fixed(300ms): the distribution grammar wants a name
// first, and a bare duration is what people write for a constant delay.
bool looks_like_duration(const std::string& text) {
    auto it = std::find_if(text.begin(), text.end(),
                           [](char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; });
    return it != text.end() && ((*it >= '0' && *it <= '9') || *it == '.' || *it == '+');
}

std::shared_ptr<const fault_config> parse_delay(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "duration"});
    if (!fault.contains("duration"))
        throw rule_error("fault.duration", std::string("required: ") + duration_hint);
    const nlohmann::json& v = fault["duration"];
    if (v.is_number()) {
        const double ms = detail::read_number(v, "fault.duration");
        if (ms < 0)
            throw rule_error("fault.duration",
                             "a delay cannot be negative, got " + detail::format_number(ms));
        return std::make_shared<const delay_config>(distribution::fixed(ms));
    }
    if (!v.is_string())
        throw rule_error("fault.duration", std::string("expected ") + duration_hint + ", got " +
                                               detail::json_type_phrase(v));
    const std::string& text = v.get_ref<const std::string&>();
    if (looks_like_duration(text)) {
        const double ms = detail::read_duration_ms(v, "fault.duration");
        return std::make_shared<const delay_config>(distribution::fixed(ms));
    }
    try {
        return std::make_shared<const delay_config>(parse_distribution(text));
    } catch (const distribution_error& e) {
        throw rule_error("fault.duration",
                         std::string(e.what()) + " at offset " + std::to_string(e.offset()));
    }
}

}  // namespace

fault_kind make_delay_kind() {
    // On a dependency: before the upstream is dialled (connect), or before the client's
    // request turn is passed on (request).
    return {"delay", "wait a sampled duration before handling the request normally", &parse_delay,
            {front::gateway, front::invoke, front::dependency, front::states}};
}

}  // namespace coldbrew::models::faults
