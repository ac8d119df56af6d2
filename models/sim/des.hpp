#pragma once
// Private to models/sim: the discrete-event engine, one replication at a time.

#include <cstdint>

#include "models/sim/compiled.hpp"

namespace coldbrew::models::sim::detail {

struct des_plan {
    bool phased = false;
    std::uint64_t requests_per_replication = des_chunk_requests;  // expected, for planning
};

des_plan plan_replications(const scenario& s);

// Runs replication `index` (its own arrival stream and request seeds, from an empty system)
// and adds its counts to `out`. `requests` bounds a constant-rate replication; a phased one
// runs one whole pass of its phases.
void run_replication(const compiled& m, const des_plan& plan, std::uint64_t index,
                     std::uint64_t requests, run_result& out);

}  // namespace coldbrew::models::sim::detail
