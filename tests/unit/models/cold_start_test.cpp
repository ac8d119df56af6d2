#include "models/coldstart/cold_start.hpp"
#include "tests/catch.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace coldbrew::models;

namespace {

const random_source rng(20260822);

function_traits node20() {
    function_traits t;
    t.runtime = "nodejs20.x";
    return t;
}

cold_start_model::summary summary_of(const function_traits& t) {
    return cold_start_model(builtin_profile(), t).percentiles(rng, "fn", 20000);
}

std::vector<init_draw> draws_of(const function_traits& t, int n = 20000) {
    const cold_start_model model(builtin_profile(), t);
    std::vector<init_draw> out;
    for (int i = 0; i < n; ++i)
        out.push_back(model.sample(rng, "fn", static_cast<std::uint64_t>(i)));
    return out;
}

// Nearest-rank percentile of one part of the draws.
double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const auto rank =
        static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(v.size()))));
    return v[rank - 1];
}

std::string model_error_of(const function_traits& t, const cold_start_overrides& o = {}) {
    try {
        cold_start_model(builtin_profile(), t, o);
    } catch (const model_error& e) {
        return e.what();
    }
    return "(accepted)";
}

} // namespace

TEST_CASE("cold start: a bare function's Init Duration is the lambda-perf row", "[unit]") {
    // nodejs20.x zip x86_64: 142/168/190 ms (model-data §1a).
    const auto s = summary_of(node20());
    CHECK(s.p50 == Approx(142).epsilon(0.02));
    CHECK(s.p95 == Approx(168).epsilon(0.02));
    CHECK(s.p99 == Approx(190).epsilon(0.03));
}

TEST_CASE("cold start: arm64 is faster than x86_64 for Node.js", "[unit]") {
    auto arm = node20();
    arm.architecture = "arm64";
    const auto x = summary_of(node20());
    const auto a = summary_of(arm);
    CHECK(a.p50 < x.p50);
    CHECK(a.p50 / x.p50 == Approx(131.0 / 142.0).epsilon(0.02)); // ~8% faster
    CHECK(a.p99 < x.p99);
}

TEST_CASE("cold start: a container image is slower at p50 than a zip for Node.js", "[unit]") {
    auto image = node20();
    image.package = package_type::image;
    const auto z = summary_of(node20());
    const auto i = summary_of(image);
    CHECK(i.p50 / z.p50 == Approx(264.0 / 142.0).epsilon(0.03)); // ~1.9x
    CHECK(i.p99 > 3 * z.p99);                                    // the heavy image tail
}

TEST_CASE("cold start: a 14 MB zipped package adds about 1.44 s at p50", "[unit]") {
    // Shilkov 2021: 1 KB 0.26 s, 14 MB 1.70 s at p50; measured relative to 2048 MB.
    auto t = node20();
    t.memory_mb = 2048;
    const auto bare = summary_of(t);
    t.package_zipped_mb = 14;
    const auto heavy = summary_of(t);
    CHECK(heavy.p50 - bare.p50 == Approx(1440).epsilon(0.03));
    // The package term's own spread: p99 / p50 = 1.6.
    std::vector<double> package;
    for (const auto& d : draws_of(t))
        package.push_back(d.package_ms);
    CHECK(percentile(package, 0.99) / percentile(package, 0.5) == Approx(1.6).epsilon(0.03));
}

TEST_CASE("cold start: a native binary's package and an image's size cost nothing", "[unit]") {
    function_traits go;
    go.runtime = "provided.al2023";
    go.package_zipped_mb = 5;
    for (const auto& d : draws_of(go, 200))
        CHECK(d.package_ms == 0);

    auto image = node20();
    image.package = package_type::image;
    image.package_zipped_mb = 100;
    for (const auto& d : draws_of(image, 200))
        CHECK(d.package_ms == 0);
}

TEST_CASE("cold start: a Hyperplane VPC adds about 240 ms at p50", "[unit]") {
    auto vpc = node20();
    vpc.vpc = vpc_mode::hyperplane;
    const auto bare = summary_of(node20());
    const auto with = summary_of(vpc);
    CHECK(with.p50 - bare.p50 == Approx(240).epsilon(0.08));
    std::vector<double> extra;
    for (const auto& d : draws_of(vpc))
        extra.push_back(d.vpc_ms);
    CHECK(percentile(extra, 0.5) == Approx(240).epsilon(0.03));
    CHECK(percentile(extra, 0.99) == Approx(630).epsilon(0.05));
}

// The built-in profile as it was before the ENI pool: legacy-eni in the flat form.
const profile& flat_eni_profile() {
    static const profile p = [] {
        std::string text = builtin_profile_text();
        const auto at = text.find("  legacy-eni:\n");
        const auto end = text.find("\n# Extensions", at);
        REQUIRE(at != std::string::npos);
        REQUIRE(end != std::string::npos);
        text.replace(at, end - at,
                     "  legacy-eni: \"mixture(0.5: fixed(0), 0.5: lognormal(median=9.1s, p99=21s))\"\n");
        return parse_profile(text, "flat.yaml");
    }();
    return p;
}

TEST_CASE("cold start: a flat-form legacy ENI VPC is drawn per environment, bimodal", "[unit]") {
    auto t = node20();
    t.vpc = vpc_mode::legacy_eni;
    const cold_start_model model(flat_eni_profile(), t);
    CHECK(model.eni() == nullptr);
    CHECK(model.explanation()[2].find("flat form: no ENI pool") != std::string::npos);
    std::vector<init_draw> draws;
    for (int i = 0; i < 20000; ++i) draws.push_back(model.sample(rng, "fn", static_cast<std::uint64_t>(i)));
    std::vector<double> extra;
    std::size_t zero = 0;
    for (const auto& d : draws) {
        extra.push_back(d.vpc_ms);
        if (d.vpc_ms < 1) ++zero;
    }
    const double fast = static_cast<double>(zero) / static_cast<double>(extra.size());
    CHECK(fast > 0.48);
    CHECK(fast < 0.52);
    const double p99 = percentile(extra, 0.99);
    CHECK(p99 > 15000);
    CHECK(p99 < 25000);
    // The slow half: median 8.7-9.5 s attaching an ENI (2019).
    std::vector<double> slow;
    for (double x : extra)
        if (x >= 1) slow.push_back(x);
    CHECK(percentile(slow, 0.5) > 8700);
    CHECK(percentile(slow, 0.5) < 9500);
}

TEST_CASE("cold start: with the ENI pool the vpc term is left to pool_policy; an isolated one waits a creation",
          "[unit]") {
    auto t = node20();
    t.vpc = vpc_mode::legacy_eni;
    t.memory_mb = 1024;
    const cold_start_model model(builtin_profile(), t);
    REQUIRE(model.eni() != nullptr);
    CHECK(model.memory_mb() == 1024);
    CHECK(model.eni()->memory_per_eni_gb == 3);
    for (const auto& d : draws_of(t, 200)) CHECK(d.vpc_ms == 0);
    // The same draws as without a VPC: the vpc term takes no uniform here.
    const auto bare = draws_of(node20(), 5);
    const auto eni = draws_of(t, 5);
    for (std::size_t i = 0; i < bare.size(); ++i) CHECK(eni[i].runtime_ms == bare[i].runtime_ms);
    // Isolated: runtime (~142 ms) plus one ENI creation, log-normal median 9.1 s, p99 21 s.
    const auto s = model.percentiles(rng, "fn", 20000);
    CHECK(s.p50 == Approx(9100 + 142).epsilon(0.03));
    CHECK(s.p99 == Approx(21000 + 170).epsilon(0.06));
    const std::string line = model.explanation()[2];
    CHECK(line.find("vpc: legacy-eni shared ENIs: 3 environments per ENI at 1024 MB") == 0);
    CHECK(line.find("lognormal(median=9100ms, p99=21000ms)") != std::string::npos);
}

TEST_CASE("cold start: extensions add their init, and several take the slowest", "[unit]") {
    auto go = node20();
    go.extensions = {"go-agent"};
    const auto bare = summary_of(node20());
    const auto with = summary_of(go);
    CHECK(with.p50 - bare.p50 == Approx(520).epsilon(0.05));

    auto rust = node20();
    rust.extensions = {"rust-agent"};
    CHECK(summary_of(rust).p50 - bare.p50 == Approx(66).epsilon(0.1));

    // Two Go agents initialise side by side: the term is the larger of two draws, well
    // below the ~1,040 ms their sum would have at p50.
    auto two = node20();
    two.extensions = {"go-agent", "go-agent"};
    std::vector<double> both;
    for (const auto& d : draws_of(two))
        both.push_back(d.extensions_ms);
    CHECK(percentile(both, 0.5) > 540);
    CHECK(percentile(both, 0.5) < 700);

    // Draw by draw: the uniforms go runtime, vpc, then each extension in order.
    auto mixed = node20();
    mixed.extensions = {"go-agent", "rust-agent"};
    const cold_start_model model(builtin_profile(), mixed);
    const profile& p = builtin_profile();
    for (std::uint64_t i = 0; i < 100; ++i) {
        draw d(rng, "init-duration", "fn", i);
        const double runtime = p.runtimes.at("nodejs20.x").zip_x86_64.sample(d);
        const double vpc = p.vpc.at("none").sample(d);
        const double go_ms = p.extensions.at("go-agent").init_ms.sample(d);
        const double rust_ms = p.extensions.at("rust-agent").init_ms.sample(d);
        const init_draw got = model.sample(rng, "fn", i);
        CHECK(got.runtime_ms == runtime);
        CHECK(got.vpc_ms == vpc);
        CHECK(got.extensions_ms == std::max(go_ms, rust_ms));
        CHECK(got.total_ms == runtime + std::max(go_ms, rust_ms));
    }
}

TEST_CASE("cold start: memory scales the package term only", "[unit]") {
    // Shilkov bymemoryxl: 1.77 / 1.67 / 1.53 s at 128 / 2048 / 8192 MB.
    auto t = node20();
    t.package_zipped_mb = 14;
    const auto at = [&](int memory_mb) {
        t.memory_mb = memory_mb;
        return cold_start_model(builtin_profile(), t).sample(rng, "fn", 7);
    };
    const init_draw base = at(2048);
    REQUIRE(base.package_ms > 0);
    CHECK(at(128).package_ms / base.package_ms == Approx(1.06));
    CHECK(at(8192).package_ms / base.package_ms == Approx(0.916));
    CHECK(at(512).package_ms / base.package_ms == Approx(1.03)); // halfway in log2
    CHECK(at(64).package_ms / base.package_ms == Approx(1.06));  // clamped outside
    CHECK(at(10240).package_ms / base.package_ms == Approx(0.916));
    CHECK(at(128).runtime_ms == base.runtime_ms); // no memory effect on hello-world Init

    auto bare = node20();
    bare.memory_mb = 128;
    const auto small = cold_start_model(builtin_profile(), bare).sample(rng, "fn", 7);
    bare.memory_mb = 8192;
    const auto large = cold_start_model(builtin_profile(), bare).sample(rng, "fn", 7);
    CHECK(small.total_ms == large.total_ms);
}

TEST_CASE("cold start: draws are a pure function of seed, key and index", "[unit]") {
    auto t = node20();
    t.package_zipped_mb = 3;
    t.vpc = vpc_mode::hyperplane;
    t.extensions = {"rust-agent"};
    const cold_start_model model(builtin_profile(), t);
    const random_source same(20260822), other(20260823);
    const init_draw a = model.sample(rng, "fn", 5);
    const init_draw b = model.sample(same, "fn", 5);
    CHECK(a.runtime_ms == b.runtime_ms);
    CHECK(a.package_ms == b.package_ms);
    CHECK(a.vpc_ms == b.vpc_ms);
    CHECK(a.extensions_ms == b.extensions_ms);
    CHECK(a.total_ms == b.total_ms);
    CHECK(a.total_ms == a.runtime_ms + a.package_ms + a.vpc_ms + a.extensions_ms);
    CHECK(model.sample(other, "fn", 5).total_ms != a.total_ms);
    CHECK(model.sample(rng, "fn", 6).total_ms != a.total_ms);
    CHECK(model.sample(rng, "fn2", 5).total_ms != a.total_ms);

    const auto s1 = model.percentiles(rng, "fn", 500);
    const auto s2 = model.percentiles(same, "fn", 500);
    CHECK(s1.p50 == s2.p50);
    CHECK(s1.p99 == s2.p99);
    CHECK(s1.p50 <= s1.p95);
    CHECK(s1.p95 <= s1.p99);
    // Summaries draw under a key of their own.
    CHECK(model.percentiles(rng, "fn", 1).p50 == model.sample(rng, "fn#summary", 0).total_ms);
    CHECK_THROWS_AS(model.percentiles(rng, "fn", 0), std::invalid_argument);
}

TEST_CASE("cold start: pinned draw, so a seeded run stays reproducible", "[unit]") {
    // If this changes, every seeded run's cold starts change.
    auto t = node20();
    t.package_zipped_mb = 14;
    const init_draw d = cold_start_model(builtin_profile(), t).sample(random_source(7), "fn", 3);
    CHECK(d.runtime_ms == Approx(159.78836793296807).epsilon(1e-12));
    CHECK(d.package_ms == Approx(1822.5907218392565).epsilon(1e-12));
    CHECK(d.total_ms == Approx(1982.3790897722247).epsilon(1e-12));
}

TEST_CASE("cold start: aliases and per-function overrides", "[unit]") {
    function_traits old = node20();
    old.runtime = "nodejs18.x";
    CHECK(cold_start_model(builtin_profile(), old).sample(rng, "fn", 1).total_ms ==
          cold_start_model(builtin_profile(), node20()).sample(rng, "fn", 1).total_ms);

    function_traits custom;
    custom.runtime = "provided.al2023";
    cold_start_overrides rust;
    rust.runtime_row = "rust";
    const auto s = cold_start_model(builtin_profile(), custom, rust).percentiles(rng, "fn", 5000);
    CHECK(s.p50 == Approx(16).epsilon(0.05));

    // A runtime without a row is fine when its Init is given outright.
    function_traits exotic;
    exotic.runtime = "cobol";
    exotic.package_zipped_mb = 10;
    cold_start_overrides given;
    given.runtime_init = distribution::fixed(300);
    given.package_ms_per_zipped_mb = 10;
    exotic.memory_mb = 2048;
    const cold_start_model m(builtin_profile(), exotic, given);
    const init_draw d = m.sample(rng, "fn", 0);
    CHECK(d.runtime_ms == 300);
    CHECK(m.percentiles(rng, "fn", 5000).p50 == Approx(400).epsilon(0.02));
}

TEST_CASE("cold start: the explanation names each term, its distribution and source", "[unit]") {
    auto t = node20();
    t.package_zipped_mb = 14;
    t.vpc = vpc_mode::hyperplane;
    t.extensions = {"go-agent"};
    const cold_start_model model(builtin_profile(), t);
    const auto& lines = model.explanation();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0].find("runtime: nodejs20.x zip x86_64 percentiles(p50=142ms") == 0);
    CHECK(lines[0].find("lambda-perf") != std::string::npos);
    CHECK(lines[1].find("package: 14 MB zipped") == 0);
    CHECK(lines[1].find("memory factor 1.06 at 128 MB") != std::string::npos);
    CHECK(lines[1].find("lognormal(median=1528.52ms") != std::string::npos);
    CHECK(lines[1].find("Shilkov") != std::string::npos);
    CHECK(lines[2].find("vpc: hyperplane lognormal(median=240ms, p99=630ms)") == 0);
    CHECK(lines[3].find("extension: go-agent lognormal(median=520ms, p99=900ms) — ") == 0);
    CHECK(lines[3].find("188") != std::string::npos);

    auto aliased = node20();
    aliased.runtime = "provided.al2";
    const cold_start_model alias_model(builtin_profile(), aliased);
    CHECK(alias_model.explanation()[0].find("provided.al2 → row go") != std::string::npos);
}

TEST_CASE("cold start: what cannot be modeled is a model_error saying how to fix it", "[unit]") {
    function_traits unknown;
    unknown.runtime = "cobol";
    const std::string runtime = model_error_of(unknown);
    CHECK(runtime.find("runtime 'cobol' has no row in profile aws-2026 (rows: cpp, dotnet10") == 0);
    CHECK(runtime.find("set functions.<name>.model.runtime in coldbrew.yaml") != std::string::npos);

    auto arch = node20();
    arch.architecture = "mips";
    CHECK(model_error_of(arch).find("architecture 'mips'") != std::string::npos);

    auto ext = node20();
    ext.extensions = {"go-agent", "otel"};
    CHECK(model_error_of(ext) ==
          "extension kind 'otel' is not in profile aws-2026 (kinds: go-agent, rust-agent)");

    cold_start_overrides bad_row;
    bad_row.runtime_row = "rust2";
    CHECK(model_error_of(node20(), bad_row).find("runtime row 'rust2'") == 0);

    auto negative = node20();
    negative.package_zipped_mb = -1;
    CHECK(model_error_of(negative).find("package size") == 0);

    cold_start_overrides bad_rate;
    bad_rate.package_ms_per_zipped_mb = -5;
    CHECK(model_error_of(node20(), bad_rate).find("package cost") == 0);

    CHECK(parse_vpc_mode("legacy-eni") == vpc_mode::legacy_eni);
    CHECK(parse_vpc_mode("hyperplane") == vpc_mode::hyperplane);
    CHECK(parse_vpc_mode("none") == vpc_mode::none);
    CHECK_FALSE(parse_vpc_mode("eni").has_value());
    CHECK(to_string(vpc_mode::legacy_eni) == "legacy-eni");
}
