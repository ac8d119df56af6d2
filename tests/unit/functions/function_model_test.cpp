#include "emulator/functions/function_model.hpp"

#include <unistd.h>

#include <fstream>
#include <optional>

#include "tests/catch.hpp"

using namespace coldbrew;

namespace {

struct scratch_dir {
    std::filesystem::path path;
    scratch_dir() {
        path = std::filesystem::temp_directory_path() /
               ("coldbrew-model-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        std::filesystem::create_directories(path / "code");
        std::ofstream(path / "code" / "app.py") << std::string(4096, 'x');
    }
    ~scratch_dir() { std::filesystem::remove_all(path); }
    static int& counter() {
        static int n = 0;
        return n;
    }
};

config::stack one_function(const std::filesystem::path& code) {
    config::stack s;
    config::function f;
    f.name = "Hello";
    f.function_name = "Hello";
    f.runtime = "python3.12";
    f.handler = "app.handler";
    f.code_dir = code;
    f.model_where = {"coldbrew.yaml", 7, 3};
    f.model_path = "functions.Hello";
    s.functions.push_back(f);
    return s;
}

}  // namespace

TEST_CASE("stack models: the built-in profile, a measured package and the function's limits", "[unit]") {
    scratch_dir d;
    auto s = one_function(d.path / "code");
    s.functions[0].reserved_concurrency = 5;
    s.functions[0].provisioned_concurrency = 2;
    auto m = functions::build_models(s);
    CHECK(m->profile().name == "aws-2026");
    CHECK(m->account().limit() == 1000);
    const auto* fm = m->find("Hello");
    REQUIRE(fm);
    REQUIRE(fm->package);
    CHECK(fm->package->files == 1);
    CHECK(fm->package->bytes == 4096);
    // 4 KB of one repeated byte compresses to almost nothing.
    CHECK(fm->traits.package_zipped_mb < 0.001);
    CHECK(fm->limits.reserved_concurrency == std::optional<int>(5));
    CHECK(fm->limits.provisioned_concurrency == 2);
    CHECK(fm->limits.scaling_environments == 1000);
    CHECK(m->find("Nope") == nullptr);
}

TEST_CASE("stack models: package_mb replaces measuring; overrides reach the model", "[unit]") {
    scratch_dir d;
    auto s = one_function(d.path / "code");
    s.functions[0].package_mb = 14;
    s.functions[0].model.init_duration = "fixed(100ms)";
    s.functions[0].model.keep_alive = "fixed(1min)";
    s.settings.account_concurrency = 300;
    auto m = functions::build_models(s);
    const auto* fm = m->find("Hello");
    CHECK_FALSE(fm->package);
    CHECK(fm->traits.package_zipped_mb == 14);
    CHECK(fm->lifetime.keep_alive_ms.quantile(0.5) == 60000);
    CHECK(m->account().limit() == 300);
    models::random_source rng(1);
    auto draw = fm->cold_start.sample(rng, "Hello", 0);
    CHECK(draw.runtime_ms == 100);
    CHECK(draw.package_ms > 1000);  // ~0.1 s per zipped MB
}

TEST_CASE("stack models: what the profile cannot model stops the start at the function", "[unit]") {
    scratch_dir d;
    auto s = one_function(d.path / "code");
    s.functions[0].extensions = {"datadog"};
    try {
        functions::build_models(s);
        FAIL("expected a config error");
    } catch (const config::config_error& e) {
        CHECK(e.where().file == "coldbrew.yaml");
        CHECK(e.where().line == 7);
        CHECK(e.key_path() == "functions.Hello");
        CHECK(e.message().find("extension kind 'datadog'") != std::string::npos);
    }
}

TEST_CASE("stack models: reservations must leave the account its unreserved minimum", "[unit]") {
    scratch_dir d;
    auto s = one_function(d.path / "code");
    s.settings.account_concurrency = 150;
    s.functions[0].reserved_concurrency = 60;
    CHECK_THROWS_AS(functions::build_models(s), config::config_error);
    s.functions[0].reserved_concurrency = 50;
    CHECK_NOTHROW(functions::build_models(s));
}

TEST_CASE("stack models: a malformed profile file is reported at its own line", "[unit]") {
    scratch_dir d;
    auto s = one_function(d.path / "code");
    auto bad = d.path / "profile.yaml";
    std::ofstream(bad) << "name: mine\nruntimes: 3\n";
    s.settings.profile = bad;
    try {
        functions::build_models(s);
        FAIL("expected a config error");
    } catch (const config::config_error& e) {
        CHECK(e.where().file == bad.string());
        CHECK(e.where().line >= 1);
        // The position is said once, by the config error itself.
        CHECK(e.message().find(bad.string()) == std::string::npos);
    }
}

TEST_CASE("stack models: provisioned concurrency without a reservation comes from the unreserved pool",
          "[unit]") {
    scratch_dir d;
    auto s = one_function(d.path / "code");
    s.settings.account_concurrency = 150;
    s.functions[0].provisioned_concurrency = 60;
    s.functions[0].max_environments = 100;
    try {
        functions::build_models(s);
        FAIL("expected a config error");
    } catch (const config::config_error& e) {
        CHECK(e.message().find("ProvisionedConcurrentExecutions") == 0);
    }
    s.functions[0].provisioned_concurrency = 50;
    CHECK_NOTHROW(functions::build_models(s));
}

TEST_CASE("stack models: network bandwidth from memory, VPC and the raised quota", "[unit]") {
    scratch_dir d;
    const auto rate_for = [&](int memory_mb, bool vpc, std::optional<bool> fn_scalable,
                              bool account_scalable) {
        auto s = one_function(d.path / "code");
        s.functions[0].package_mb = 1;  // no measuring
        s.functions[0].memory_mb = memory_mb;
        s.functions[0].vpc = vpc;
        s.functions[0].vpc_mode = vpc ? "hyperplane" : "none";
        s.functions[0].scalable_bandwidth = fn_scalable;
        s.settings.scalable_bandwidth = account_scalable;
        return functions::build_models(s)->find("Hello")->bandwidth_bytes_per_s;
    };
    constexpr double mbps = 125'000;
    // 625 Mbps by default, whatever the memory.
    CHECK(rate_for(128, false, std::nullopt, false) == 625 * mbps);
    CHECK(rate_for(10240, false, std::nullopt, false) == 625 * mbps);
    // The account's raised quota scales non-VPC functions with memory …
    CHECK(rate_for(10240, false, std::nullopt, true) == 3000 * mbps);
    CHECK(rate_for(6144, false, std::nullopt, true) == Approx(1812.5 * mbps));
    CHECK(rate_for(1024, false, std::nullopt, true) == 625 * mbps);
    // … never VPC ones …
    CHECK(rate_for(10240, true, std::nullopt, true) == 625 * mbps);
    // … and a function's own setting wins over the account's, either way.
    CHECK(rate_for(10240, false, true, false) == 3000 * mbps);
    CHECK(rate_for(10240, false, false, true) == 625 * mbps);

    // An explicit rate replaces the model; the burst follows the rate (10 ms of it, at least
    // 64 KiB).
    auto s = one_function(d.path / "code");
    s.functions[0].package_mb = 1;
    s.functions[0].memory_mb = 10240;
    s.settings.scalable_bandwidth = true;
    s.functions[0].bandwidth_bytes_per_s = 10'000'000;
    auto m = functions::build_models(s);
    const auto* fm = m->find("Hello");
    CHECK(fm->bandwidth_bytes_per_s == 10'000'000);
    CHECK(fm->bandwidth_burst_bytes == 100'000);
    s.functions[0].bandwidth_bytes_per_s.reset();
    CHECK(functions::build_models(s)->find("Hello")->bandwidth_burst_bytes == 3'750'000);
}
