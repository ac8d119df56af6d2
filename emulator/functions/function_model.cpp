#include "emulator/functions/function_model.hpp"

#include <spdlog/spdlog.h>

namespace coldbrew::functions {

namespace {

config::config_error at_function(const config::function& fn, const std::string& message) {
    return config::config_error(fn.model_where, fn.model_path, message);
}

models::distribution override_or(const std::optional<std::string>& text,
                                 const models::distribution& fallback) {
    // The text was validated while loading coldbrew.yaml.
    return text ? models::parse_distribution(*text) : fallback;
}

}  // namespace

const function_model* stack_models::find(std::string_view function) const {
    auto it = functions_.find(function);
    return it == functions_.end() ? nullptr : it->second.get();
}

std::unique_ptr<stack_models> build_models(const config::stack& stack) {
    auto out = std::make_unique<stack_models>();
    const auto& s = stack.settings;
    if (s.profile) {
        try {
            out->owned_profile_ = std::make_unique<models::profile>(models::load_profile(*s.profile));
        } catch (const models::profile_error& e) {
            throw config::config_error({e.file(), e.line(), e.column()}, e.key(), e.message());
        }
        out->profile_ = out->owned_profile_.get();
    } else {
        out->profile_ = &models::builtin_profile();
    }
    const auto& profile = *out->profile_;
    out->account_ = std::make_unique<models::account_concurrency>(
        s.account_concurrency.value_or(profile.account_concurrency), profile.unreserved_minimum);

    // Reservations are checked here against a scratch account so the error stops the start;
    // the pools reserve again on the real one.
    models::account_concurrency scratch(out->account_->limit(), profile.unreserved_minimum);
    for (const auto& fn : stack.functions) {
        // Provisioned concurrency is allocated from the account too: from the function's
        // reservation when it has one, else from the unreserved pool, which must keep its
        // minimum ("Configuring provisioned concurrency", Lambda Developer Guide).
        const bool reserved = fn.reserved_concurrency.has_value();
        const int allocated = reserved ? *fn.reserved_concurrency : fn.provisioned_concurrency.value_or(0);
        if (allocated > 0) {
            try {
                scratch.reserve(allocated);
            } catch (const std::invalid_argument& e) {
                throw at_function(fn, std::string(reserved ? "ReservedConcurrentExecutions: "
                                                           : "ProvisionedConcurrentExecutions: ") +
                                          e.what());
            }
        }

        models::function_traits t;
        t.runtime = fn.runtime;
        t.architecture = fn.architecture;
        t.package = fn.package_type == "image" ? models::package_type::image
                                                : models::package_type::zip;
        t.memory_mb = fn.memory_mb;
        t.vpc = models::parse_vpc_mode(fn.vpc_mode).value_or(models::vpc_mode::none);
        t.extensions = fn.extensions;

        std::optional<package_measure> measured;
        if (fn.package_mb) {
            t.package_zipped_mb = *fn.package_mb;
        } else {
            std::vector<std::filesystem::path> dirs{fn.code_dir};
            dirs.insert(dirs.end(), fn.layer_dirs.begin(), fn.layer_dirs.end());
            std::error_code ec;
            auto m = measure_package(
                dirs, package_rules{fn.package_patterns, fn.exclude_dev_dependencies}, ec);
            if (ec) {
                // The loader checked the directories exist; a race or a permission problem
                // leaves the package term at zero rather than stopping the start.
                spdlog::warn("{}: could not measure the deployment package ({}); modeled as 0 MB",
                             fn.name, ec.message());
            } else {
                t.package_zipped_mb = static_cast<double>(m.zipped_bytes) / (1024.0 * 1024.0);
                measured = m;
            }
        }

        models::cold_start_overrides o;
        o.runtime_row = fn.model.runtime;
        if (fn.model.init_duration) o.runtime_init = models::parse_distribution(*fn.model.init_duration);
        o.package_ms_per_zipped_mb = fn.model.package_ms_per_mb;

        try {
            auto fm = std::make_unique<function_model>(function_model{
                t, measured, models::cold_start_model(profile, t, o),
                models::lifetime_model{override_or(fn.model.keep_alive, profile.keep_alive_ms),
                                       override_or(fn.model.max_lifetime, profile.max_lifetime_ms)},
                models::pool_limits{}});
            fm->limits.reserved_concurrency = fn.reserved_concurrency;
            fm->limits.provisioned_concurrency = fn.provisioned_concurrency.value_or(0);
            fm->limits.max_environments = std::max(1, fn.max_environments);
            fm->limits.scaling_environments = profile.scaling_environments;
            fm->limits.scaling_window_ms = profile.scaling_window_ms;
            models::bandwidth::environment_network net;
            net.memory_mb = fn.memory_mb;
            net.vpc = fn.vpc;
            net.scalable = fn.scalable_bandwidth.value_or(s.scalable_bandwidth);
            fm->bandwidth_bytes_per_s = fn.bandwidth_bytes_per_s.value_or(
                models::bandwidth::environment_rate(profile.bandwidth, net));
            fm->bandwidth_burst_bytes =
                models::bandwidth::burst_bytes(profile.bandwidth, fm->bandwidth_bytes_per_s);
            if (fm->limits.provisioned_concurrency > fm->limits.max_environments) {
                throw at_function(fn, "ProvisionedConcurrentExecutions (" +
                                          std::to_string(fm->limits.provisioned_concurrency) +
                                          ") is more than max_environments (" +
                                          std::to_string(fm->limits.max_environments) +
                                          "); raise max_environments in coldbrew.yaml");
            }
            out->functions_.emplace(fn.name, std::move(fm));
        } catch (const models::model_error& e) {
            throw at_function(fn, e.what());
        }
    }
    return out;
}

}  // namespace coldbrew::functions
