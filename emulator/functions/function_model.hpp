#pragma once
// The models a stack runs under, built from the config before anything starts: the profile
// (built in, or the user's `profile:` file), the account's concurrency, and for each
// function its cold-start model (runtime, measured package, memory, VPC, extensions), its
// lifetime model, its pool limits and its network bandwidth. Shared by `up`, `invoke` and
// `validate`.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/config/stack.hpp"
#include "emulator/functions/package_size.hpp"
#include "models/bandwidth/bandwidth.hpp"
#include "models/coldstart/cold_start.hpp"
#include "models/pool/pool_policy.hpp"
#include "models/profile/profile.hpp"

namespace coldbrew::functions {

struct function_model {
    models::function_traits traits;
    std::optional<package_measure> package;  // nullopt when coldbrew.yaml gave package_mb
    models::cold_start_model cold_start;
    models::lifetime_model lifetime;
    models::pool_limits limits;
    // The execution environment's network bandwidth, per direction (models/bandwidth): the
    // profile's rate for its memory, VPC attachment and quota, or coldbrew.yaml's explicit
    // rate; and the token bucket's depth for that rate.
    double bandwidth_bytes_per_s = 0;
    std::uint64_t bandwidth_burst_bytes = 0;
};

class stack_models {
public:
    const models::profile& profile() const noexcept { return *profile_; }
    models::account_concurrency& account() noexcept { return *account_; }
    const models::account_concurrency& account() const noexcept { return *account_; }
    // nullptr for a name the stack does not have.
    const function_model* find(std::string_view function) const;

private:
    friend std::unique_ptr<stack_models> build_models(const config::stack& stack);
    std::unique_ptr<models::profile> owned_profile_;
    const models::profile* profile_ = nullptr;
    std::unique_ptr<models::account_concurrency> account_;
    std::map<std::string, std::unique_ptr<function_model>, std::less<>> functions_;
};

// Throws config::config_error: a malformed profile (at its own file and line), a runtime,
// architecture or extension the profile cannot model, or reservations that leave the
// account fewer than its unreserved minimum (at the function's position).
std::unique_ptr<stack_models> build_models(const config::stack& stack);

}  // namespace coldbrew::functions
