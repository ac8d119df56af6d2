#pragma once
// `coldbrew up --record FILE`: writes the run record (models/sim/record.hpp) as the run goes,
// one line per event, flushed as written so a run stopped by a signal leaves a whole file.
//
// The live emulator calls it where the models are asked something: the executor and the
// dependency proxies before each fault decision (request) and when a fault stops being in
// effect (fault_ended), the function pools when an invocation arrives, a handler answers, an
// environment's process ends, the expiry timer fires, provisioned environments are asked for
// and the pool stops, and the admin API after each rule or seed change. Each call passes the
// modeled time it also hands to the model, so a replay can hand the models the same times.
//
// Costs nothing when not recording: every caller holds a pointer that is null then.
// Single-threaded (the loop's thread). I/O errors are reported once (a warning) and recording
// stops; the run goes on.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>

#include "models/faults/faults.hpp"
#include "models/sim/record.hpp"

namespace coldbrew::telemetry {

class run_recorder {
public:
    run_recorder() = default;
    ~run_recorder();
    run_recorder(const run_recorder&) = delete;
    run_recorder& operator=(const run_recorder&) = delete;

    // Truncates or creates `path` and writes the header line.
    std::error_code open(const std::filesystem::path& path, const models::sim::record_header& h);
    bool is_open() const noexcept { return file_ != nullptr; }

    // A fault decision is about to be asked for `facts` at `at_ms`: returns the request's id
    // in the record (nullopt when not recording). Call decided() with its decision.
    std::optional<std::uint64_t> request(const models::faults::request_facts& facts, double at_ms);
    // The decision for `request`: a fault in effect (d.id != 0) is remembered, so that
    // fault_ended(d.id) names its request.
    void decided(std::optional<std::uint64_t> request, const models::faults::decision& d);
    // decider::finished(fault_id) is being called (a fault with no request is ignored).
    void fault_ended(std::uint64_t fault_id, double at_ms);

    // An invocation reached `function`'s pool at `at_ms`: returns its id in the record.
    std::optional<std::uint64_t> invoke(const std::string& function, double at_ms,
                                        std::optional<std::uint64_t> request);
    void handler(const models::sim::recorded_handler& h);
    void exit(const std::string& function, std::uint64_t environment, const std::string& reason,
              double at_ms);
    void tick(const std::string& function, double at_ms);
    void provision(const std::string& function, double at_ms);
    void stop(const std::string& function, double at_ms);
    // A successful admin change (recorded_rules' ops and fields).
    void rules(const models::sim::recorded_rules& r);

    std::uint64_t events() const noexcept { return events_; }

private:
    void write(const models::sim::record_event& e);

    std::FILE* file_ = nullptr;
    std::filesystem::path path_;
    std::uint64_t next_request_ = 0;
    std::uint64_t next_invocation_ = 0;
    std::uint64_t events_ = 0;
    std::map<std::uint64_t, std::uint64_t> fault_requests_;  // decider fault id → request id
};

}  // namespace coldbrew::telemetry
