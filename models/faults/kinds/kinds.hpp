#pragma once
// Private to models/faults: the built-in kinds (one file each, registered by
// register_builtin_faults) and the JSON readers their parsers share with parse_rule, so every
// key reports its errors in the same words and with the same paths.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "models/faults/faults.hpp"

namespace coldbrew::models::faults {

fault_kind make_phantom_kind();
fault_kind make_delay_kind();
fault_kind make_gateway_error_kind();
fault_kind make_function_error_kind();
fault_kind make_throttle_kind();
fault_kind make_reset_kind();
fault_kind make_slow_response_kind();
fault_kind make_refuse_kind();
fault_kind make_hang_kind();

namespace detail {

// "a string", "a number", "an object", … for messages about a value of the wrong type.
std::string json_type_phrase(const nlohmann::json& v);

// Throws rule_error(prefix + key, "unknown key 'x'; allowed: a, b") for the first key of
// `object` (which must be an object) that is not in `allowed`.
void reject_unknown_keys(const nlohmann::json& object, std::string_view prefix,
                         std::initializer_list<std::string_view> allowed);

// A kind parser's entry check: `fault` is an object whose keys are all in `allowed`
// (errors under "fault."). Parsers may be called directly (sla_rule, tests), so each checks.
void check_fault_object(const nlohmann::json& fault,
                        std::initializer_list<std::string_view> allowed);

// Each reader throws rule_error(path, …) when `v` has the wrong type or range.
const std::string& read_string(const nlohmann::json& v, const std::string& path);
double read_number(const nlohmann::json& v, const std::string& path);  // finite
// A whole number (an integral JSON float such as 3.0 counts) within ±2^53.
std::int64_t read_integer(const nlohmann::json& v, const std::string& path);
// A duration >= 0 in ms: a number of ms, or text such as "50ms", "1.5s", "2min".
double read_duration_ms(const nlohmann::json& v, const std::string& path);

// Up to 6 significant digits without trailing zeros: 0.5 → "0.5", 300 → "300".
std::string format_number(double v);
// A duration for humans: 250 → "250ms", 1500 → "1.5s", 120000 → "2min".
std::string format_ms(double ms);

}  // namespace detail

}  // namespace coldbrew::models::faults
