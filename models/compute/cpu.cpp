#include "models/compute/cpu.hpp"

#include <algorithm>

namespace coldbrew::models {

double vcpu_share(int memory_mb, double mb_per_vcpu, double max_vcpus) {
    if (memory_mb <= 0 || !(mb_per_vcpu > 0)) return 0;
    return std::min(static_cast<double>(memory_mb) / mb_per_vcpu, max_vcpus);
}

int visible_cores(int memory_mb) {
    // Upper memory bound (MB) of each step, from rwnx/lambda-cpuinfo.
    if (memory_mb <= 3008) return 2;
    if (memory_mb <= 5307) return 3;
    if (memory_mb <= 7076) return 4;
    if (memory_mb <= 8845) return 5;
    return 6;
}

} // namespace coldbrew::models
