#pragma once
// Memory → CPU on Lambda. CPU is allocated in proportion to memory: 1,769 MB is one vCPU
// (one vCPU-second of credit per second), up to 10,240 MB (AWS Lambda Developer Guide,
// "Configure Lambda function memory" and "Lambda quotas"; shared spec model-data §2b).
// The number of cores a function sees is stepped: 2 up to 3,008 MB, then 3, 4, 5, 6 at
// 3,009 / 5,308 / 7,077 / 8,846 MB (github.com/rwnx/lambda-cpuinfo; hakk.gg).

namespace coldbrew::models {

// vCPU-equivalents of CPU time per second of wall time: memory_mb / mb_per_vcpu, capped at
// max_vcpus (0.072 at 128 MB, 1.0 at 1,769 MB, 5.79 at 10,240 MB); 0 when memory_mb <= 0.
double vcpu_share(int memory_mb, double mb_per_vcpu = 1769, double max_vcpus = 6);

// Cores visible to the function (/proc/cpuinfo, nproc) at this memory size: 2..6.
int visible_cores(int memory_mb);

}  // namespace coldbrew::models
