// phantom: the request is lost before the function runs (it never sees it) or after (it runs,
// and its answer is dropped on the way back). Either way the client gets no answer; what it
// sees instead is `client_sees`.

#include <memory>
#include <string>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

class phantom_config final : public fault_config {
public:
    phantom_config(double after_share, client_outcome client)
        : after_share_(after_share), client_(client) {}

    void apply(const apply_context& ctx, plan& p) const override {
        // Drawn even for "when": a share of 0 or 1 decides alone, and one code path keeps
        // the draw sequence the same whichever way a rule was written.
        const bool after = ctx.rng.uniform("fault-phantom", ctx.draw_key, ctx.k) < after_share_;
        if (after)
            p.act = actions::phantom_after{client_};
        else
            p.act = actions::phantom_before{client_};
    }

    nlohmann::json to_json() const override {
        nlohmann::json j{{"kind", "phantom"}, {"client_sees", std::string(to_string(client_))}};
        // A share of exactly 0 or 1 is what "when" says; it reads better in a listing.
        if (after_share_ == 0)
            j["when"] = "before";
        else if (after_share_ == 1)
            j["when"] = "after";
        else
            j["after_share"] = after_share_;
        return j;
    }

    std::string describe() const override {
        std::string when = after_share_ == 0 ? "before"
                           : after_share_ == 1
                               ? "after"
                               : "after " + detail::format_number(after_share_ * 100) + "%";
        return "phantom (" + when + ", client sees " + std::string(to_string(client_)) + ")";
    }

private:
    double after_share_;  // in [0, 1]: the share of fired requests lost after the function ran
    client_outcome client_;
};

std::shared_ptr<const fault_config> parse_phantom(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "when", "after_share", "client_sees"});

    double after_share = 0.5;
    const bool has_when = fault.contains("when");
    if (has_when) {
        const std::string& when = detail::read_string(fault["when"], "fault.when");
        if (when == "before")
            after_share = 0;
        else if (when == "after")
            after_share = 1;
        else
            throw rule_error("fault.when",
                             "expected \"before\" or \"after\", got \"" + when + "\"");
    }
    if (fault.contains("after_share")) {
        if (has_when)
            throw rule_error("fault.after_share",
                             "cannot be combined with \"when\" (\"when\" is a share of 0 or 1)");
        after_share = detail::read_number(fault["after_share"], "fault.after_share");
        if (after_share < 0 || after_share > 1)
            throw rule_error("fault.after_share", "expected a share in [0, 1], got " +
                                                      detail::format_number(after_share));
    }

    client_outcome client = client_outcome::timeout;
    if (fault.contains("client_sees")) {
        const std::string& c = detail::read_string(fault["client_sees"], "fault.client_sees");
        if (c == "timeout")
            client = client_outcome::timeout;
        else if (c == "hang")
            client = client_outcome::hang;
        else if (c == "reset")
            client = client_outcome::reset;
        else
            throw rule_error("fault.client_sees",
                             "expected \"timeout\", \"hang\" or \"reset\", got \"" + c + "\"");
    }
    return std::make_shared<const phantom_config>(after_share, client);
}

}  // namespace

fault_kind make_phantom_kind() {
    return {"phantom",
            "lose the request before or after the function runs; the client sees a timeout, a "
            "hang or a reset",
            &parse_phantom};
}

}  // namespace coldbrew::models::faults
