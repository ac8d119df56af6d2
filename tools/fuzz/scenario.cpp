// `coldbrew sim` scenario files from memory: load_scenario_text (components, flows, retry
// policies, arrivals, variants, distributions inside them). Refusals are config_errors only.

#include "emulator/config/scenario_loader.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <string>

using namespace coldbrew;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        auto s = config::load_scenario_text(std::string(fuzz::as_text(data, size)),
                                            "/nonexistent/coldbrew-fuzz/scenario.yaml");
        (void)s;
    } catch (const config::config_error&) {
    }
    return 0;
}
