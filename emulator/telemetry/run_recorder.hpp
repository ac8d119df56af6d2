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
#include <unordered_map>
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
    // `parent`: the request whose handler made this one (parent_of the invocation's trace).
    std::optional<std::uint64_t> request(const models::faults::request_facts& facts, double at_ms,
                                         std::optional<std::uint64_t> parent = std::nullopt);
    // The request whose invocation's handler runs with `trace_id` (its _X_AMZN_TRACE_ID), while
    // it runs: the AWS SDKs send that value as X-Amzn-Trace-Id on the calls a handler makes
    // (recursion detection: the JS SDK v3's middleware-recursion-detection and botocore's
    // add_recursion_detection_header, both when AWS_LAMBDA_FUNCTION_NAME is set), so an Invoke
    // API call that carries it came from that handler. nullopt for any other value. A call that reuses its caller's header passes it
    // on unchanged, so a grandchild's call is attributed to the first handler that ran with
    // the header, not to its own caller.
    std::optional<std::uint64_t> parent_of(const std::string& trace_id) const;
    // The decision for `request`: a fault in effect (d.id != 0) is remembered, so that
    // fault_ended(d.id) names its request.
    void decided(std::optional<std::uint64_t> request, const models::faults::decision& d);
    // decider::finished(fault_id) is being called (a fault with no request is ignored).
    void fault_ended(std::uint64_t fault_id, double at_ms);

    // An invocation reached `function`'s pool at `at_ms`: returns its id in the record.
    // `trace_id` is the header its handler will run with (parent_of).
    std::optional<std::uint64_t> invoke(const std::string& function, double at_ms,
                                        std::optional<std::uint64_t> request,
                                        const std::string& trace_id = {});
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
    // Invocations in flight by their trace header (parent_of): header → request id, and the
    // invocation that registered each header → the header, to forget it at its answer.
    std::unordered_map<std::string, std::uint64_t> request_by_trace_;
    std::unordered_map<std::uint64_t, std::string> trace_by_invocation_;
};

}  // namespace coldbrew::telemetry
