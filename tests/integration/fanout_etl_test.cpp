// examples/fanout-etl end to end: run.py generates a data set, serves it with byte ranges,
// starts coldbrew on the example and runs the same query with 1,024 MB and 10,240 MB workers
// through the datastore dependency proxy. The answers must match the data set, and the
// modeled bandwidth (625 vs 3,000 Mbps with the raised quota) must show in the downloads.

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

TEST_CASE("examples/fanout-etl: 10,240 MB workers download their ranges faster than 1,024 MB ones",
          "[integration][dependencies]") {
    const auto example = source_dir() / "examples" / "fanout-etl";
    if (!std::filesystem::exists(example / "orchestrator" / "node_modules" / "@aws-sdk" / "client-lambda"))
        FAIL("@aws-sdk/client-lambda is not installed in examples/fanout-etl/orchestrator: run tools/setup.sh");
    temp_dir out;
    const auto results = out.path() / "run.json";
    // 96 MB in 4 ranges: 24 MB per worker, about 310 ms at 625 Mbps and 65 ms at 3,000 Mbps
    // (less the 10 ms burst allowance). time_scale 4 divides the real rates by 4, so a busy
    // 2-core machine keeps up with four 3,000 Mbps workers; run.py reports modeled times.
    coldbrew_process run({(example / "run.py").string(), "--coldbrew", coldbrew_binary(), "--mb", "96",
                          "--workers", "4", "--time-scale", "4", "--data-dir", (out.path() / "data").string(), "--json",
                          results.string()},
                         {}, "/usr/bin/python3");
    auto rc = run.wait_exit(std::chrono::seconds(240));
    INFO(run.stdout_text() << run.stderr_text());
    REQUIRE(rc == 0);  // run.py exits non-zero when an answer disagrees with the data set
    std::ifstream in(results);
    auto r = json::parse(in);
    INFO(r.dump(2));
    REQUIRE(r["results"].size() == 2);
    const auto& small = r["results"][0];
    const auto& large = r["results"][1];
    CHECK(small["memory_mb"] == 1024);
    CHECK(large["memory_mb"] == 10240);
    CHECK(small["bytes"] == 96'000'000);
    // The modeled floor at 1,024 MB: 24 MB at 78.125 MB/s minus 10 ms of burst ≈ 297 ms.
    CHECK(small["download_ms_avg"].get<double>() > 200.0);
    CHECK(small["download_ms_avg"].get<double>() > 1.8 * large["download_ms_avg"].get<double>());
}
