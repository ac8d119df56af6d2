#include "emulator/functions/service_errors.hpp"

#include <nlohmann/json.hpp>

namespace coldbrew::functions {

service_error too_many_requests(std::string_view reason) {
    nlohmann::ordered_json j;
    // Field names as the service model spells them: Type and Reason capitalised, message not.
    j["Type"] = "User";
    j["message"] = "Rate Exceeded.";
    j["Reason"] = std::string(reason);
    return {429, "TooManyRequestsException", j.dump()};
}

}  // namespace coldbrew::functions
