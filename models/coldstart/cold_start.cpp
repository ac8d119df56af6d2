#include "models/coldstart/cold_start.hpp"

#include "models/vpc/eni_pool.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace coldbrew::models {

std::optional<vpc_mode> parse_vpc_mode(std::string_view text) {
    if (text == "none") return vpc_mode::none;
    if (text == "hyperplane") return vpc_mode::hyperplane;
    if (text == "legacy-eni") return vpc_mode::legacy_eni;
    return std::nullopt;
}

std::string_view to_string(vpc_mode m) {
    switch (m) {
    case vpc_mode::none:
        return "none";
    case vpc_mode::hyperplane:
        return "hyperplane";
    case vpc_mode::legacy_eni:
        return "legacy-eni";
    }
    return "none";
}

namespace {

std::string number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

template <class Map> std::string key_list(const Map& m) {
    std::string out;
    for (const auto& [name, unused] : m) {
        (void)unused;
        if (!out.empty()) out += ", ";
        out += name;
    }
    return out;
}

// The package term's memory factor: linear in log2(memory) between the profile's points,
// the end values outside them (Shilkov bymemoryxl was measured at 128-8192 MB only).
double memory_factor(const profile& p, int memory_mb) {
    const auto& points = p.package_memory_factor;
    if (points.empty()) return 1;
    const double m = memory_mb;
    if (m <= points.front().first) return points.front().second;
    if (m >= points.back().first) return points.back().second;
    for (std::size_t i = 1; i < points.size(); ++i) {
        const auto& [hi_mb, hi_factor] = points[i];
        if (m > hi_mb) continue;
        const auto& [lo_mb, lo_factor] = points[i - 1];
        const double t = (std::log2(m) - std::log2(lo_mb)) / (std::log2(hi_mb) - std::log2(lo_mb));
        return lo_factor + t * (hi_factor - lo_factor);
    }
    return points.back().second;
}

std::string with_source(std::string line, const std::string& source) {
    if (!source.empty()) line += " — " + source;
    return line;
}

} // namespace

cold_start_model::cold_start_model(const profile& p, const function_traits& traits,
                                   const cold_start_overrides& overrides) {
    const bool arm = traits.architecture == "arm64";
    if (!arm && traits.architecture != "x86_64") {
        throw model_error("architecture '" + traits.architecture +
                          "' is not modeled (use x86_64 or arm64)");
    }
    if (!(traits.package_zipped_mb >= 0)) {
        throw model_error("package size must be >= 0 MB zipped, got " +
                          number(traits.package_zipped_mb));
    }
    if (traits.memory_mb <= 0) {
        throw model_error("memory must be > 0 MB, got " + std::to_string(traits.memory_mb));
    }
    const bool image = traits.package == package_type::image;
    const std::string shape = std::string(image ? "image " : "zip ") + traits.architecture;

    // Runtime term. The row also gives the package family, so it is looked up even when
    // the term itself is replaced; only then may it be missing.
    const runtime_row* row = nullptr;
    if (overrides.runtime_row) {
        row = p.find_runtime(*overrides.runtime_row);
        if (!row) {
            throw model_error("runtime row '" + *overrides.runtime_row +
                              "' (functions.<name>.model.runtime) is not in profile " + p.name +
                              " (rows: " + key_list(p.runtimes) + ")");
        }
    } else {
        row = p.find_runtime(traits.runtime);
        if (!row && !overrides.runtime_init) {
            throw model_error("runtime '" + traits.runtime + "' has no row in profile " + p.name +
                              " (rows: " + key_list(p.runtimes) +
                              "); set functions.<name>.model.runtime in coldbrew.yaml");
        }
    }
    if (overrides.runtime_init) {
        runtime_ = *overrides.runtime_init;
        explanation_.push_back("runtime: " + traits.runtime + " " + shape + " " +
                               runtime_.to_string() + " — set for this function");
    } else {
        runtime_ = image ? (arm ? row->image_arm64 : row->image_x86_64)
                         : (arm ? row->zip_arm64 : row->zip_x86_64);
        std::string line = "runtime: " + traits.runtime;
        if (row->name != traits.runtime) line += " → row " + row->name;
        explanation_.push_back(
            with_source(line + " " + shape + " " + runtime_.to_string(), row->source));
    }

    // Package term.
    const std::string family = row ? row->family : std::string("default");
    package_cost cost;
    auto fam = p.package_families.find(family);
    if (fam == p.package_families.end()) fam = p.package_families.find("default");
    if (fam != p.package_families.end()) cost = fam->second;
    double ms_per_mb = image ? p.image_ms_per_zipped_mb : cost.ms_per_zipped_mb;
    std::string rate_origin = image ? "container image" : "family " + family;
    if (overrides.package_ms_per_zipped_mb) {
        ms_per_mb = *overrides.package_ms_per_zipped_mb;
        rate_origin = "set for this function";
        if (!(ms_per_mb >= 0)) {
            throw model_error("package cost must be >= 0 ms per zipped MB, got " +
                              number(ms_per_mb));
        }
    }
    const double factor = memory_factor(p, traits.memory_mb);
    const double median = ms_per_mb * traits.package_zipped_mb * factor;
    std::string line = "package: " + number(traits.package_zipped_mb) + " MB zipped × " +
                       number(ms_per_mb) + " ms/MB (" + rate_origin + ") × memory factor " +
                       number(factor) + " at " + std::to_string(traits.memory_mb) + " MB";
    if (median > 0) {
        package_ = distribution::lognormal(median, median * std::max(cost.p99_ratio, 1.0));
        line += " → " + package_->to_string();
    } else {
        line += " → none";
    }
    explanation_.push_back(with_source(line, p.package_source));

    // VPC term.
    memory_mb_ = traits.memory_mb;
    const std::string mode(to_string(traits.vpc));
    const auto vpc = p.vpc.find(mode);
    if (traits.vpc == vpc_mode::legacy_eni && p.legacy_eni && vpc == p.vpc.end()) {
        eni_ = *p.legacy_eni;
        const int per_eni = environments_per_eni(traits.memory_mb, eni_->memory_per_eni_gb);
        explanation_.push_back(with_source(
            "vpc: legacy-eni shared ENIs: " + std::to_string(per_eni) + " environment" +
                (per_eni == 1 ? "" : "s") + " per ENI at " + std::to_string(traits.memory_mb) +
                " MB (" + number(eni_->memory_per_eni_gb) + " GB per ENI); creation " +
                eni_->creation_ms.to_string() + ", waited for by every environment that needs " +
                "the new ENI; an unused ENI is released after " +
                eni_->idle_release_ms.to_string(),
            eni_->source));
    } else if (vpc == p.vpc.end()) {
        throw model_error("profile " + p.name + " has no vpc entry '" + mode +
                          "' (entries: " + key_list(p.vpc) + ")");
    } else {
        vpc_ = vpc->second;
        explanation_.push_back(with_source("vpc: " + mode + " " + vpc_.to_string() +
                                               (traits.vpc == vpc_mode::legacy_eni
                                                    ? " per environment (flat form: no ENI pool)"
                                                    : ""),
                                           p.vpc_source));
    }

    // Extensions term: one line per extension, so each keeps its own source.
    for (const auto& kind : traits.extensions) {
        const auto ext = p.extensions.find(kind);
        if (ext == p.extensions.end()) {
            throw model_error("extension kind '" + kind + "' is not in profile " + p.name +
                              " (kinds: " + key_list(p.extensions) + ")");
        }
        extensions_.push_back(ext->second.init_ms);
        explanation_.push_back(with_source("extension: " + kind + " " + ext->second.init_ms.to_string(),
                                           ext->second.source));
    }
    if (extensions_.empty()) {
        explanation_.push_back("extensions: none");
    } else if (extensions_.size() > 1) {
        explanation_.push_back("extensions: they initialise in parallel, so the slowest counts");
    }
}

init_draw cold_start_model::sample(const random_source& rng, std::string_view key,
                                   std::uint64_t index) const {
    draw d(rng, "init-duration", key, index);
    init_draw out;
    out.runtime_ms = std::max(0.0, runtime_.sample(d));
    if (package_) out.package_ms = std::max(0.0, package_->sample(d));
    // With an ENI pool the wait is pool_policy's; not drawing here keeps it out of the sum.
    if (!eni_) out.vpc_ms = std::max(0.0, vpc_.sample(d));
    for (const auto& ext : extensions_)
        out.extensions_ms = std::max(out.extensions_ms, ext.sample(d));
    out.total_ms = out.runtime_ms + out.package_ms + out.vpc_ms + out.extensions_ms;
    return out;
}

cold_start_model::summary cold_start_model::percentiles(const random_source& rng,
                                                        std::string_view key, int n) const {
    if (n < 1) throw std::invalid_argument("percentiles needs n >= 1 samples");
    // A key of its own, so a summary never replays the draws of live environments.
    const std::string summary_key = std::string(key) + "#summary";
    std::vector<double> totals;
    totals.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const auto index = static_cast<std::uint64_t>(i);
        double total = sample(rng, summary_key, index).total_ms;
        // An isolated cold start finds no ENI: it waits for a whole creation.
        if (eni_)
            total += std::max(0.0, eni_->creation_ms.sample(rng, "eni-creation", summary_key, index));
        totals.push_back(total);
    }
    std::sort(totals.begin(), totals.end());
    // Nearest rank: the smallest value with at least pct% of the samples at or below it.
    const auto at = [&](long pct) {
        const long rank = std::max(1L, (pct * n + 99) / 100);
        return totals[static_cast<std::size_t>(rank - 1)];
    };
    return {at(50), at(95), at(99)};
}

} // namespace coldbrew::models
