#include "emulator/functions/service_errors.hpp"

#include <nlohmann/json.hpp>

namespace coldbrew::functions {

namespace {
// Client-supplied text may hold bytes that are not UTF-8; replace them rather than throw.
std::string dump(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

service_error user_error(int status, std::string type, std::string_view message_key,
                         std::string_view message) {
    nlohmann::ordered_json j;
    j["Type"] = "User";
    j[std::string(message_key)] = std::string(message);
    return {status, std::move(type), dump(j), std::nullopt};
}
} // namespace

service_error too_many_requests(std::string_view reason) {
    nlohmann::ordered_json j;
    // Field names as the service model spells them: Type and Reason capitalised, message not.
    j["Type"] = "User";
    j["message"] = "Rate Exceeded.";
    j["Reason"] = std::string(reason);
    return {429, "TooManyRequestsException", dump(j), throttle_retry_after_s};
}

service_error resource_not_found(std::string_view message) {
    return user_error(404, "ResourceNotFoundException", "Message", message);
}

service_error request_too_large(std::string_view message) {
    return user_error(413, "RequestEntityTooLargeException", "message", message);
}

service_error invalid_request_content(std::string_view message) {
    return user_error(400, "InvalidRequestContentException", "message", message);
}

service_error invalid_parameter_value(std::string_view message) {
    return user_error(400, "InvalidParameterValueException", "message", message);
}

service_error validation_failed(const std::vector<std::string>& violations) {
    std::string text =
        std::to_string(violations.size()) +
        (violations.size() == 1 ? " validation error detected: " : " validation errors detected: ");
    for (std::size_t i = 0; i < violations.size(); ++i) {
        if (i > 0) text += "; ";
        text += violations[i];
    }
    nlohmann::ordered_json j;
    j["message"] = text;
    return {400, "ValidationException", dump(j), std::nullopt};
}

service_error service_exception(std::string_view message) {
    nlohmann::ordered_json j;
    j["Type"] = "Service";
    j["Message"] = std::string(message);
    return {500, "ServiceException", dump(j), std::nullopt};
}

service_error unknown_operation(std::string_view message) {
    nlohmann::ordered_json j;
    j["message"] = std::string(message);
    return {404, "UnknownOperationException", dump(j), std::nullopt};
}

service_error access_denied(std::string_view message) {
    return user_error(403, "AccessDeniedException", "Message", message);
}

service_error request_timeout(std::string_view message) {
    nlohmann::ordered_json j;
    j["message"] = std::string(message);
    return {408, "RequestTimeoutException", dump(j), std::nullopt};
}

} // namespace coldbrew::functions
