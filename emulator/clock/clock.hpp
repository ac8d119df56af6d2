#pragma once
// The one place time is read. Components take a `const clock&`; main builds system_clock_source
// and tests pass tests/fakes/manual_clock.hpp, which they advance by hand.

#include <chrono>
#include <cstdint>

namespace coldbrew {

class clock {
public:
    virtual ~clock() = default;
    // Wall time: epoch milliseconds for event timestamps, Lambda-Runtime-Deadline-Ms.
    virtual std::chrono::system_clock::time_point wall() const = 0;
    // Monotonic time: durations (Duration, Init Duration, timeouts).
    virtual std::chrono::steady_clock::time_point steady() const = 0;

    std::int64_t epoch_ms() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(wall().time_since_epoch())
            .count();
    }
};

class system_clock_source final : public clock {
public:
    std::chrono::system_clock::time_point wall() const override {
        return std::chrono::system_clock::now();
    }
    std::chrono::steady_clock::time_point steady() const override {
        return std::chrono::steady_clock::now();
    }
};

}  // namespace coldbrew
