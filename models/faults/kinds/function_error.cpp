// function_error: the function fails. "exit" really invokes it and kills its execution
// environment `after` ms after delivery, so the caller gets Lambda's Runtime.ExitError and the
// next request starts cold, as with a crashing handler. "handler" answers as if the handler
// had thrown {errorType, errorMessage}, without invoking it.

#include <memory>
#include <string>
#include <utility>

#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

namespace {

constexpr const char* default_error_type = "Error";
constexpr const char* default_error_message = "coldbrew injected a function error";

class exit_config final : public fault_config {
public:
    explicit exit_config(double after_ms) : after_ms_(after_ms) {}

    void apply(const apply_context&, plan& p) const override {
        p.act = actions::function_exit{after_ms_};
    }

    nlohmann::json to_json() const override {
        return {{"kind", "function_error"}, {"mode", "exit"}, {"after", after_ms_}};
    }

    std::string describe() const override {
        return "function_error exit after " + detail::format_ms(after_ms_);
    }

private:
    double after_ms_;
};

class handler_config final : public fault_config {
public:
    handler_config(std::string error_type, std::string error_message)
        : error_type_(std::move(error_type)), error_message_(std::move(error_message)) {}

    void apply(const apply_context&, plan& p) const override {
        p.act = actions::handler_error{error_type_, error_message_};
    }

    nlohmann::json to_json() const override {
        return {{"kind", "function_error"},
                {"mode", "handler"},
                {"error_type", error_type_},
                {"error_message", error_message_}};
    }

    std::string describe() const override {
        return "function_error handler (" + error_type_ + ": " + error_message_ + ")";
    }

private:
    std::string error_type_;
    std::string error_message_;
};

std::shared_ptr<const fault_config> parse_function_error(const nlohmann::json& fault) {
    detail::check_fault_object(fault, {"kind", "mode", "after", "error_type", "error_message"});

    std::string mode = "exit";
    if (fault.contains("mode")) {
        mode = detail::read_string(fault["mode"], "fault.mode");
        if (mode != "exit" && mode != "handler")
            throw rule_error("fault.mode",
                             "expected \"exit\" or \"handler\", got \"" + mode + "\"");
    }
    // A key of the other mode would be silently ignored; saying so catches a forgotten "mode".
    const auto only_for = [&](const char* key, const char* its_mode) {
        if (fault.contains(key) && mode != its_mode)
            throw rule_error(std::string("fault.") + key, std::string("only applies to mode \"") +
                                                              its_mode + "\" (mode is \"" + mode +
                                                              "\")");
    };
    only_for("after", "exit");
    only_for("error_type", "handler");
    only_for("error_message", "handler");

    if (mode == "exit") {
        double after_ms = 0;
        if (fault.contains("after"))
            after_ms = detail::read_duration_ms(fault["after"], "fault.after");
        return std::make_shared<const exit_config>(after_ms);
    }

    std::string error_type = default_error_type;
    if (fault.contains("error_type")) {
        error_type = detail::read_string(fault["error_type"], "fault.error_type");
        if (error_type.empty())
            throw rule_error("fault.error_type", "must not be empty (Lambda's errorType, such as "
                                                 "\"Error\" or \"TypeError\")");
    }
    std::string error_message = default_error_message;
    if (fault.contains("error_message"))
        error_message = detail::read_string(fault["error_message"], "fault.error_message");
    return std::make_shared<const handler_config>(std::move(error_type), std::move(error_message));
}

}  // namespace

fault_kind make_function_error_kind() {
    return {"function_error",
            "fail the function: kill its execution environment (exit) or answer a handler error",
            &parse_function_error};
}

}  // namespace coldbrew::models::faults
