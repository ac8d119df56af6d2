// schedule_runner: one timer per enabled schedule, re-armed after each firing from the
// firing's own time, so firings never drift with the loop's lateness.

#include <chrono>

#include "emulator/config/config_error.hpp"
#include "emulator/schedules/schedules.hpp"

namespace coldbrew::schedules {

struct schedule_runner::entry {
    config::schedule config;
    schedule_expression expression;
    sched::timer_ptr timer;
    std::optional<double> next_ms;
    std::uint64_t fired = 0;
    std::uint64_t fire_errors = 0;
};

schedule_runner::schedule_runner(sched::scheduler& scheduler, const coldbrew::clock& clock,
                                 std::vector<config::schedule> schedules, fire_fn fire,
                                 runner_options options)
    : scheduler_(scheduler), clock_(clock), fire_(std::move(fire)), options_(std::move(options)) {
    for (auto& s : schedules) {
        auto parsed = parse_schedule(s.expression, s.timezone, options_.zoneinfo_dir);
        if (!parsed) throw config::config_error(s.where, "", s.name + ": " + parsed.error);
        auto e = std::make_unique<entry>();
        e->config = std::move(s);
        e->expression = std::move(*parsed.value);
        entries_.push_back(std::move(e));
    }
}

schedule_runner::~schedule_runner() { stop(); }

double schedule_runner::modeled_wall_ms() const {
    if (!started_) return static_cast<double>(clock_.epoch_ms());
    return start_wall_ms_ + (scheduler_.now_ms() - start_modeled_ms_);
}

void schedule_runner::start() {
    if (started_) return;
    start_wall_ms_ = static_cast<double>(clock_.epoch_ms());
    start_modeled_ms_ = scheduler_.now_ms();
    started_ = true;
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i]->config.enabled) arm(i, start_wall_ms_);
}

void schedule_runner::stop() {
    for (auto& e : entries_) {
        e->timer.reset();
        e->next_ms.reset();
    }
}

void schedule_runner::arm(std::size_t i, double after_epoch_ms) {
    entry& e = *entries_[i];
    e.next_ms = next_fire_ms(e.expression, after_epoch_ms, start_wall_ms_);
    if (!e.next_ms) {
        e.timer.reset();
        return;
    }
    wait_for(i, *e.next_ms);
}

void schedule_runner::wait_for(std::size_t i, double due_epoch_ms) {
    entries_[i]->timer = scheduler_.after(due_epoch_ms - modeled_wall_ms(), [this, i, due_epoch_ms] {
        // The scheduler caps a wait at about 31 years (cron(… 2199)): a timer that comes
        // early waits again for the rest instead of firing.
        if (modeled_wall_ms() + 0.5 < due_epoch_ms) {
            wait_for(i, due_epoch_ms);
            return;
        }
        on_fire(i, due_epoch_ms);
    });
}

void schedule_runner::on_fire(std::size_t i, double fire_epoch_ms) {
    entry& e = *entries_[i];
    const std::uint64_t n = e.fired++;
    const models::random_source& rng = options_.rng ? *options_.rng : own_rng_;
    // Re-armed before the target runs, so a `fire` that calls stop() leaves nothing armed.
    auto keep = std::move(e.timer);  // this timer's handle; it has fired
    arm(i, fire_epoch_ms);
    std::string event = e.config.input;
    if (event.empty()) {
        const auto id = models::uuid_v4(rng, "schedule-event", e.config.name, n);
        event = e.config.scheduler
                    ? scheduler_event_json(id, fire_epoch_ms, options_.region,
                                           options_.account_id, e.config.name)
                    : scheduled_event_json(id, fire_epoch_ms, options_.region,
                                           options_.account_id, e.config.name);
    }
    if (!fire_) return;
    try {
        fire_(e.config, std::move(event));
    } catch (...) {
        // The target's failure is its own; no exception may cross the loop's callback.
        ++e.fire_errors;
    }
}

std::vector<schedule_runner::status> schedule_runner::statuses() const {
    std::vector<status> out;
    for (const auto& e : entries_)
        out.push_back({e->config.name, e->config.enabled, e->next_ms, e->fired, e->fire_errors});
    return out;
}

}  // namespace coldbrew::schedules
