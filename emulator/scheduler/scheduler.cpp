#include "emulator/scheduler/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace coldbrew::sched {

namespace {

// About 31 years: a draw from a distribution's tail (1e300 ms) must not overflow the cast.
constexpr double max_real_ms = 1e12;

// One libuv timer. The handle's close is deferred to libuv, so the object may be destroyed
// from inside its own callback; the callback is moved out before it runs for the same reason.
class uv_timer final : public timer {
public:
    uv_timer(uv_loop_t* loop, double real_ms, std::function<void()> fn)
        : handle_(new uv_timer_t), fn_(std::move(fn)) {
        uv_timer_init(loop, handle_);
        handle_->data = this;
        const double ms = std::isfinite(real_ms) ? std::clamp(real_ms, 0.0, max_real_ms) : 0.0;
        uv_timer_start(
            handle_,
            [](uv_timer_t* t) {
                auto* self = static_cast<uv_timer*>(t->data);
                if (!self) return;
                auto fn = std::move(self->fn_);  // may destroy *self
                self->fn_ = nullptr;
                if (fn) fn();
            },
            // Rounded up: a timer never fires before its modeled time has passed.
            static_cast<std::uint64_t>(std::ceil(ms)), 0);
    }
    ~uv_timer() override {
        uv_timer_stop(handle_);
        handle_->data = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(handle_),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }
    uv_timer(const uv_timer&) = delete;
    uv_timer& operator=(const uv_timer&) = delete;

    void cancel() override {
        uv_timer_stop(handle_);
        fn_ = nullptr;
    }
    bool pending() const override { return static_cast<bool>(fn_); }

private:
    uv_timer_t* handle_;
    std::function<void()> fn_;
};

}  // namespace

uv_scheduler::uv_scheduler(uv_loop_t* loop, const coldbrew::clock& clock, double time_scale)
    : loop_(loop), clock_(clock), time_scale_(time_scale), origin_(clock.steady()) {
    if (!std::isfinite(time_scale) || time_scale <= 0)
        throw std::invalid_argument("time_scale must be a positive number");
}

double uv_scheduler::now_ms() const {
    return modeled_ms(std::chrono::duration<double, std::milli>(clock_.steady() - origin_).count());
}

timer_ptr uv_scheduler::after(double modeled_ms, std::function<void()> fn) {
    // The loop's cached time can lag by however long this loop turn has run; a wait counted
    // from it would end early.
    uv_update_time(loop_);
    return std::make_unique<uv_timer>(loop_, real_ms(modeled_ms), std::move(fn));
}

double uv_scheduler::real_rate(double modeled_bytes_per_s) const {
    if (!std::isfinite(modeled_bytes_per_s) || modeled_bytes_per_s <= 0) return modeled_bytes_per_s;
    return modeled_bytes_per_s / time_scale_;
}

double uv_scheduler::real_ms(double modeled_ms) const { return modeled_ms * time_scale_; }

double uv_scheduler::modeled_ms(double real_ms) const { return real_ms / time_scale_; }

}  // namespace coldbrew::sched
