#pragma once
// A scheduler whose modeled time moves only when a test advances it. advance() fires every
// timer that falls due, in order of due time (ties: the order they were set), each at its
// own time, and keeps firing the timers those callbacks set while they are due. With a
// manual_clock attached, the clock moves too, by the real time the modeled time stands for
// (× scale), so code that measures on the clock sees consistent durations.

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "emulator/scheduler/scheduler.hpp"
#include "tests/fakes/manual_clock.hpp"

namespace coldbrew::testing {

class manual_scheduler final : public sched::scheduler {
public:
    explicit manual_scheduler(double scale = 1.0, manual_clock* clock = nullptr)
        : state_(std::make_shared<state>()), scale_(scale), clock_(clock) {}

    double now_ms() const override { return state_->now; }

    sched::timer_ptr after(double modeled_ms, std::function<void()> fn) override {
        const double due = state_->now + (std::isfinite(modeled_ms) && modeled_ms > 0
                                              ? std::min(modeled_ms, 1e12 / scale_)
                                              : 0.0);
        const auto key = std::make_pair(due, state_->next_seq++);
        state_->due.emplace(key, std::move(fn));
        return std::make_unique<handle>(state_, key);
    }
    double real_rate(double r) const override {
        return std::isfinite(r) && r > 0 ? r / scale_ : r;
    }
    double real_ms(double m) const override { return m * scale_; }
    double modeled_ms(double r) const override { return r / scale_; }
    double scale() const override { return scale_; }

    // Moves modeled time forward by `modeled_ms`, firing what falls due on the way.
    void advance(double modeled_ms) { run_until(state_->now + modeled_ms); }
    // Fires what is due now (timers set with 0, "the next turn of the loop").
    void run_due() { run_until(state_->now); }

    std::size_t pending() const { return state_->due.size(); }
    // Modeled time of the next timer; -1 when none.
    double next_due() const {
        return state_->due.empty() ? -1.0 : state_->due.begin()->first.first;
    }

private:
    using key_t = std::pair<double, std::uint64_t>;
    struct state {
        double now = 0;
        std::uint64_t next_seq = 0;
        std::map<key_t, std::function<void()>> due;
    };
    class handle final : public sched::timer {
    public:
        handle(std::weak_ptr<state> s, key_t k) : state_(std::move(s)), key_(k) {}
        ~handle() override { cancel(); }
        void cancel() override {
            if (auto s = state_.lock()) s->due.erase(key_);
        }
        bool pending() const override {
            auto s = state_.lock();
            return s && s->due.count(key_) > 0;
        }

    private:
        std::weak_ptr<state> state_;
        key_t key_;
    };

    void run_until(double until) {
        auto s = state_;
        while (!s->due.empty() && s->due.begin()->first.first <= until) {
            auto it = s->due.begin();
            move_to(it->first.first);
            auto fn = std::move(it->second);
            s->due.erase(it);
            if (fn) fn();
        }
        move_to(until);
    }
    void move_to(double t) {
        if (t <= state_->now) return;
        if (clock_)
            clock_->advance(std::chrono::nanoseconds(
                static_cast<std::int64_t>((t - state_->now) * scale_ * 1e6)));
        state_->now = t;
    }

    std::shared_ptr<state> state_;
    double scale_;
    manual_clock* clock_;
};

}  // namespace coldbrew::testing
