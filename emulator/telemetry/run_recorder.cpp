#include "emulator/telemetry/run_recorder.hpp"

#include <cerrno>

#include <spdlog/spdlog.h>

namespace coldbrew::telemetry {

namespace sim = models::sim;
namespace mf = models::faults;

run_recorder::~run_recorder() {
    if (file_) std::fclose(file_);
}

std::error_code run_recorder::open(const std::filesystem::path& path, const sim::record_header& h) {
    if (file_) std::fclose(file_);
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) return {errno, std::generic_category()};
    path_ = path;
    const std::string line = sim::to_json_line(h) + "\n";
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
    return {};
}

void run_recorder::write(const sim::record_event& e) {
    if (!file_) return;
    const std::string line = sim::to_json_line(e) + "\n";
    // A record with a line missing would replay as another run: stop at the first failure.
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
        spdlog::warn("run record {}: write failed; recording stopped here", path_.string());
        std::fclose(file_);
        file_ = nullptr;
        return;
    }
    ++events_;
}

std::optional<std::uint64_t> run_recorder::request(const mf::request_facts& f, double at_ms,
                                                   std::optional<std::uint64_t> parent) {
    if (!file_) return std::nullopt;
    sim::recorded_request r;
    r.id = next_request_++;
    r.at_ms = at_ms;
    r.parent = parent;
    r.front = std::string(mf::to_string(f.where));
    r.route = std::string(f.route);
    r.method = std::string(f.method);
    r.path = std::string(f.path);
    r.function = std::string(f.function);
    r.function_name = std::string(f.function_name);
    if (f.headers) r.headers = *f.headers;
    r.state_machine = std::string(f.state_machine);
    r.state_machine_name = std::string(f.state_machine_name);
    r.state = std::string(f.state);
    r.state_path = std::string(f.state_path);
    if (f.where == mf::front::dependency) {
        r.dependency = std::string(f.dependency);
        r.on = std::string(mf::to_string(f.on));
    }
    r.authorizer = f.authorizer;
    write(r);
    return r.id;
}

void run_recorder::decided(std::optional<std::uint64_t> request, const mf::decision& d) {
    if (request && d.id != 0) fault_requests_[d.id] = *request;
}

void run_recorder::fault_ended(std::uint64_t fault_id, double at_ms) {
    auto it = fault_requests_.find(fault_id);
    if (it == fault_requests_.end()) return;
    const auto request = it->second;
    fault_requests_.erase(it);
    write(sim::recorded_end{at_ms, request});
}

std::optional<std::uint64_t> run_recorder::invoke(const std::string& function, double at_ms,
                                                  std::optional<std::uint64_t> request,
                                                  const std::string& trace_id) {
    if (!file_) return std::nullopt;
    sim::recorded_invoke i{next_invocation_++, at_ms, function, request};
    write(i);
    if (request && !trace_id.empty() && request_by_trace_.emplace(trace_id, *request).second)
        trace_by_invocation_.emplace(i.id, trace_id);
    return i.id;
}

std::optional<std::uint64_t> run_recorder::parent_of(const std::string& trace_id) const {
    if (trace_id.empty()) return std::nullopt;
    auto it = request_by_trace_.find(trace_id);
    if (it == request_by_trace_.end()) return std::nullopt;
    return it->second;
}

void run_recorder::handler(const sim::recorded_handler& h) {
    write(h);
    if (auto it = trace_by_invocation_.find(h.invocation); it != trace_by_invocation_.end()) {
        request_by_trace_.erase(it->second);
        trace_by_invocation_.erase(it);
    }
}

void run_recorder::exit(const std::string& function, std::uint64_t environment,
                        const std::string& reason, double at_ms) {
    write(sim::recorded_exit{at_ms, function, environment, reason});
}

void run_recorder::tick(const std::string& function, double at_ms) {
    write(sim::recorded_tick{at_ms, function});
}

void run_recorder::provision(const std::string& function, double at_ms) {
    write(sim::recorded_provision{at_ms, function});
}

void run_recorder::stop(const std::string& function, double at_ms) {
    write(sim::recorded_stop{at_ms, function});
}

void run_recorder::rules(const sim::recorded_rules& r) { write(r); }

}  // namespace coldbrew::telemetry
