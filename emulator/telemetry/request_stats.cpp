#include "emulator/telemetry/request_stats.hpp"

#include <algorithm>
#include <cmath>

namespace coldbrew::telemetry {

void latency_histogram::record(double ms) noexcept {
    if (!(ms > 0)) ms = 0; // NaN too
    // The first bound at or above ms: Prometheus buckets are upper-inclusive (le).
    auto it = std::lower_bound(bounds_ms.begin(), bounds_ms.end(), ms);
    if (it != bounds_ms.end()) ++in_bucket_[static_cast<std::size_t>(it - bounds_ms.begin())];
    if (std::isfinite(ms)) sum_ms_ += ms;
    quantiles_.record_ms(ms);
}

void latency_histogram::merge(const latency_histogram& other) noexcept {
    for (std::size_t i = 0; i < in_bucket_.size(); ++i)
        in_bucket_[i] += other.in_bucket_[i];
    sum_ms_ += other.sum_ms_;
    quantiles_.merge(other.quantiles_);
}

double latency_histogram::mean_ms() const noexcept {
    return count() ? sum_ms_ / static_cast<double>(count()) : 0.0;
}

std::uint64_t latency_histogram::cumulative_count(std::size_t i) const noexcept {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k <= i && k < in_bucket_.size(); ++k)
        n += in_bucket_[k];
    return n;
}

std::string_view to_string(request_end e) noexcept {
    switch (e) {
    case request_end::served:
        return "served";
    case request_end::injected_fault:
        return "injected_fault";
    case request_end::handler_error:
        return "handler_error";
    case request_end::emulator_error:
        return "emulator_error";
    case request_end::client_gone:
        return "client_gone";
    }
    return "served";
}

namespace {

void add(request_stats::totals& t, const request_record& r) {
    ++t.requests;
    ++t.by_status[r.status];
    ++t.by_end[r.end];
    if (!r.fault_kind.empty()) ++t.faults_by_kind[r.fault_kind];
    if (r.cold_start) ++t.cold_starts;
    t.latency.record(r.latency_ms);
}

} // namespace

void request_stats::record(const request_record& r) {
    auto& route = routes_[{r.front, r.route}];
    if (!r.function.empty()) route.function = r.function;
    ++route.by_status[r.status];
    route.latency.record(r.latency_ms);
    add(fronts_[r.front], r);
    add(all_, r);
    const double end = r.start_ms + std::max(0.0, r.latency_ms);
    first_start_ms_ = first_start_ms_ ? std::min(*first_start_ms_, r.start_ms) : r.start_ms;
    last_end_ms_ = last_end_ms_ ? std::max(*last_end_ms_, end) : end;
}

void request_stats::record_init(std::string_view function, double init_duration_ms) {
    auto it = init_.find(function);
    if (it == init_.end()) it = init_.emplace(std::string(function), latency_histogram{}).first;
    it->second.record(init_duration_ms);
}

void request_stats::reset() {
    routes_.clear();
    fronts_.clear();
    all_ = totals{};
    init_.clear();
    first_start_ms_.reset();
    last_end_ms_.reset();
}

double request_stats::mean_rps() const noexcept {
    if (all_.requests < 2 || !first_start_ms_ || !last_end_ms_) return 0.0;
    const double span_s = (*last_end_ms_ - *first_start_ms_) / 1000.0;
    return span_s > 0 ? static_cast<double>(all_.requests) / span_s : 0.0;
}

} // namespace coldbrew::telemetry
