// The distribution grammar: parse_distribution, then what every user of a parsed
// distribution relies on — its canonical text parses back to the same text, and quantiles,
// the CDF and samples are numbers (never NaN) for a distribution the parser accepted.
// Refusals are distribution_errors only, with an offset inside the text.

#include "models/distribution/distribution.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <cmath>
#include <cstdlib>

using namespace coldbrew;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto text = fuzz::as_text(data, size);
    models::distribution d;
    try {
        d = models::parse_distribution(text);
    } catch (const models::distribution_error& e) {
        if (e.offset() > text.size()) std::abort();
        return 0;
    }
    const std::string canonical = d.to_string();
    models::distribution again;
    try {
        again = models::parse_distribution(canonical);
    } catch (const models::distribution_error&) {
        std::abort();  // to_string() must round-trip
    }
    if (again.to_string() != canonical) std::abort();
    for (double q : {0.0, 0.001, 0.5, 0.99, 1.0}) {
        if (std::isnan(d.quantile(q))) std::abort();
    }
    for (double x : {-1.0, 0.0, 1.0, 100.0, 1e9}) {
        double c = d.cdf(x);
        if (std::isnan(c) || c < 0 || c > 1) std::abort();
    }
    models::random_source rng(7);
    for (std::uint64_t i = 0; i < 4; ++i) {
        if (std::isnan(d.sample(rng, "fuzz", "d", i))) std::abort();
    }
    return 0;
}
