#pragma once
// A clock that moves only when a test advances it.

#include "emulator/clock/clock.hpp"

namespace coldbrew::testing {

class manual_clock final : public clock {
public:
    explicit manual_clock(std::int64_t epoch_ms = 1700000000000)
        : wall_(std::chrono::system_clock::time_point(std::chrono::milliseconds(epoch_ms))) {}

    std::chrono::system_clock::time_point wall() const override { return wall_; }
    std::chrono::steady_clock::time_point steady() const override { return steady_; }

    void advance(std::chrono::nanoseconds d) {
        wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
        steady_ += d;
    }

private:
    std::chrono::system_clock::time_point wall_;
    std::chrono::steady_clock::time_point steady_{};
};

}  // namespace coldbrew::testing
