// The built-in fault kinds. Adding a kind: one file under kinds/, its make_ function in
// kinds/kinds.hpp, and one line here.

#include "models/faults/faults.hpp"
#include "models/faults/kinds/kinds.hpp"

namespace coldbrew::models::faults {

void register_builtin_faults(fault_registry& registry) {
    registry.add(make_phantom_kind());
    registry.add(make_delay_kind());
    registry.add(make_gateway_error_kind());
    registry.add(make_function_error_kind());
    registry.add(make_throttle_kind());
    registry.add(make_reset_kind());
    registry.add(make_slow_response_kind());
    registry.add(make_refuse_kind());
    registry.add(make_hang_kind());
}

}  // namespace coldbrew::models::faults
