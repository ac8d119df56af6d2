#include "models/compute/cpu.hpp"
#include "tests/catch.hpp"

using coldbrew::models::vcpu_share;
using coldbrew::models::visible_cores;

TEST_CASE("cpu: the vCPU share is proportional to memory, 1,769 MB = 1 vCPU", "[unit]") {
    CHECK(vcpu_share(128) == Approx(0.0724).epsilon(0.001));
    CHECK(vcpu_share(1769) == 1.0);
    CHECK(vcpu_share(3538) == 2.0);
    CHECK(vcpu_share(10240) == Approx(5.79).epsilon(0.001));
    // Capped at max_vcpus; other ratios for other profiles.
    CHECK(vcpu_share(20000) == 6.0);
    CHECK(vcpu_share(1000, 1000, 6) == 1.0);
    CHECK(vcpu_share(10240, 1769, 4) == 4.0);
    CHECK(vcpu_share(0) == 0.0);
    CHECK(vcpu_share(-5) == 0.0);
}

TEST_CASE("cpu: visible cores step at 3,009 / 5,308 / 7,077 / 8,846 MB", "[unit]") {
    CHECK(visible_cores(128) == 2);
    CHECK(visible_cores(3008) == 2);
    CHECK(visible_cores(3009) == 3);
    CHECK(visible_cores(5307) == 3);
    CHECK(visible_cores(5308) == 4);
    CHECK(visible_cores(7076) == 4);
    CHECK(visible_cores(7077) == 5);
    CHECK(visible_cores(8845) == 5);
    CHECK(visible_cores(8846) == 6);
    CHECK(visible_cores(10240) == 6);
}
