#pragma once
// Modeled time, in one place. Every wait the emulator models (an injected delay, a phantom's
// timeout, a modeled Init Duration, a function or integration timeout, a keep-alive, a
// retry's back-off, a dependency's latency) is asked for here in *modeled* milliseconds, and
// every modeled rate (bytes per second) is turned into a real one here. The libuv
// implementation is the only code that applies `time_scale`: a modeled duration d is waited
// d × time_scale real milliseconds, and a modeled rate r is sent at r / time_scale real bytes
// per second, so a run at time_scale 0.01 keeps the modeled proportions 100× faster.
//
// Tests use tests/fakes/manual_scheduler.hpp, whose time moves only when the test advances
// it and which fires the timers that are due, in order.

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "emulator/clock/clock.hpp"

namespace coldbrew::sched {

// A timer waiting to fire. Destroying it (or cancel()) stops it; either may be done from
// inside its own callback.
class timer {
public:
    virtual ~timer() = default;
    virtual void cancel() = 0;
    // True until it fired or was cancelled.
    virtual bool pending() const = 0;
};
using timer_ptr = std::unique_ptr<timer>;

class scheduler {
public:
    virtual ~scheduler() = default;

    // Modeled milliseconds since the scheduler was built (the fault rules' windows, the pool
    // policy's clock, the event queue's event age).
    virtual double now_ms() const = 0;

    // Calls `fn` once, on the loop, after `modeled_ms` of modeled time (≤ 0, NaN: on the next
    // turn of the loop, never from inside this call). Huge values (a distribution's tail) are
    // capped at about 31 years. Keep the handle: dropping it cancels the timer.
    virtual timer_ptr after(double modeled_ms, std::function<void()> fn) = 0;

    // A modeled rate (bytes per second, > 0) as the real rate to send at; 0 and non-finite
    // rates stay as they are (0 = unlimited).
    virtual double real_rate(double modeled_bytes_per_s) const = 0;
    // A modeled duration as real milliseconds, for what leaves coldbrew with a real clock
    // (the Lambda-Runtime-Deadline-Ms a handler reads), and a real duration measured on the
    // steady clock as modeled milliseconds (a process start's share of an Init Duration).
    virtual double real_ms(double modeled_ms) const = 0;
    virtual double modeled_ms(double real_ms) const = 0;

    // The factor itself, only for what states it (REPORT's Time Scale, trace attributes, the
    // run summary): never to compute with.
    virtual double scale() const = 0;
};

// The live scheduler: libuv timers on the loop, modeled time = steady time since
// construction ÷ time_scale. Throws std::invalid_argument when time_scale is not a positive
// finite number.
class uv_scheduler final : public scheduler {
public:
    uv_scheduler(uv_loop_t* loop, const coldbrew::clock& clock, double time_scale);

    double now_ms() const override;
    timer_ptr after(double modeled_ms, std::function<void()> fn) override;
    double real_rate(double modeled_bytes_per_s) const override;
    double real_ms(double modeled_ms) const override;
    double modeled_ms(double real_ms) const override;
    double scale() const override { return time_scale_; }

private:
    uv_loop_t* loop_;
    const coldbrew::clock& clock_;
    double time_scale_;
    std::chrono::steady_clock::time_point origin_;
};

}  // namespace coldbrew::sched
