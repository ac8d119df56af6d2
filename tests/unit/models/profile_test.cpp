#include "models/profile/profile.hpp"
#include "tests/catch.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace coldbrew::models;

namespace {

// A small valid profile; error cases change one line of it, so line numbers are known.
const std::string tiny = R"(name: tiny
runtimes:
  source: test
  node:
    family: nodejs
    zip: {x86_64: fixed(100ms), arm64: fixed(90ms)}
    image: {x86_64: fixed(200ms), arm64: fixed(180ms)}
runtime_aliases:
  source: test
  node*: node
package:
  source: test
  families:
    default: {ms_per_zipped_mb: 100, p99_ratio: 1.5}
  image_ms_per_zipped_mb: 0
  memory_factor: {128: 1.0}
vpc:
  source: test
  none: fixed(0)
  hyperplane: fixed(200ms)
  legacy-eni: fixed(9s)
extensions:
  agent:
    init: fixed(50ms)
    source: test
lifetime:
  source: test
  keep_alive: fixed(5min)
  max_lifetime: fixed(2h)
scaling:
  source: test
  account_concurrency: 1000
  unreserved_minimum: 100
  environments_per_window: 1000
  window: 10s
compute:
  source: test
  mb_per_vcpu: 1769
  max_vcpus: 6
availability:
  source: test
  api_gateway: 99.95
  lambda: 99.9
prices:
  source: test
  date: "2026-08"
  region: us-east-1
  lambda:
    requests_per_million: 0.2
    duration_gb_s: {x86_64: 0.0000166667, arm64: 0.0000133334}
    provisioned_gb_s: {x86_64: 0.0000041667, arm64: 0.0000033334}
    provisioned_duration_gb_s: {x86_64: 0.0000097222, arm64: 0.0000077778}
  api_gateway: {rest_per_million: 3.5, http_per_million: 1.0}
  step_functions:
    standard_per_thousand_transitions: 0.025
    express_per_million: 1.0
    express_gb_s: 0.00001667
    express_increment: 100ms
    express_memory_increment_mb: 64
bandwidth:
  source: test
  default: 625Mbps
  scalable: {from_mb: 2048, to_mb: 10240, max: 3000Mbps}
  burst: 50ms
  streaming: {uncapped: 6MB, rate: 2MBps}
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
}

profile_error error_of(const std::string& text) {
    try {
        parse_profile(text, "my-profile.yaml");
    } catch (const profile_error& e) {
        return e;
    }
    FAIL("the profile was accepted");
    throw std::logic_error("unreachable");
}

std::string line_of(const std::string& text, int line) {
    std::size_t start = 0;
    for (int i = 1; i < line; ++i)
        start = text.find('\n', start) + 1;
    return text.substr(start, text.find('\n', start) - start);
}

} // namespace

TEST_CASE("profile: the built-in profile parses and is the documented aws-2026 data", "[unit]") {
    const profile& p = builtin_profile();
    CHECK(&p == &builtin_profile()); // parsed once
    CHECK(p.name == "aws-2026");
    CHECK(p.origin == "built-in");
    CHECK(builtin_profile_text().find("name: aws-2026") != std::string::npos);

    const std::vector<std::string> rows = {
        "nodejs20.x", "nodejs22.x",     "nodejs24.x", "python3.9", "python3.12", "python3.13",
        "python3.14", "java11",         "java17",     "java21",    "java25",     "dotnet8",
        "dotnet10",   "dotnet8-aot",    "ruby3.3",    "ruby3.4",   "go",         "rust",
        "cpp",        "graalvm-java21", "llrt"};
    CHECK(p.runtimes.size() == rows.size());
    for (const auto& name : rows) {
        INFO(name);
        REQUIRE(p.runtimes.count(name) == 1);
        const runtime_row& row = p.runtimes.at(name);
        CHECK(row.name == name);
        CHECK(p.package_families.count(row.family) == 1);
        CHECK(row.source.find("lambda-perf") != std::string::npos);
    }
    CHECK(p.runtimes.at("java21").family == "java");
    CHECK(p.runtimes.at("ruby3.4").family == "ruby");
    CHECK(p.runtimes.at("go").family == "provided");

    // model-data §1a, p50/p95/p99 of the lambda-perf table.
    const auto& node20 = p.runtimes.at("nodejs20.x");
    CHECK(node20.zip_x86_64.quantile(0.50) == Approx(142));
    CHECK(node20.zip_x86_64.quantile(0.95) == Approx(168));
    CHECK(node20.zip_x86_64.quantile(0.99) == Approx(190));
    CHECK(node20.image_arm64.quantile(0.95) == Approx(449));
    CHECK(p.runtimes.at("go").zip_arm64.quantile(0.50) == Approx(43));
    CHECK(p.runtimes.at("dotnet8").image_arm64.quantile(0.99) == Approx(864));
    CHECK(p.runtimes.at("rust").zip_x86_64.quantile(0.50) == Approx(16));
    CHECK(p.runtimes.at("java17").zip_x86_64.quantile(0.99) == Approx(533));
    CHECK(p.runtimes.at("python3.14").image_x86_64.quantile(0.95) == Approx(372));
    CHECK(p.runtimes.at("llrt").image_arm64.quantile(0.50) == Approx(48));

    // §2a package cost.
    CHECK(p.package_families.at("nodejs").ms_per_zipped_mb == 103);
    CHECK(p.package_families.at("nodejs").p99_ratio == Approx(1.6));
    CHECK(p.package_families.at("python").ms_per_zipped_mb == 103);
    CHECK(p.package_families.at("provided").ms_per_zipped_mb == 0);
    CHECK(p.package_families.at("default").ms_per_zipped_mb == 103);
    CHECK(p.image_ms_per_zipped_mb == 0);
    REQUIRE(p.package_memory_factor.size() == 3);
    CHECK(p.package_memory_factor[0] == std::pair<double, double>(128, 1.06));
    CHECK(p.package_memory_factor[1] == std::pair<double, double>(2048, 1.0));
    CHECK(p.package_memory_factor[2] == std::pair<double, double>(8192, 0.916));

    // §3 VPC.
    CHECK(p.vpc.at("none").quantile(0.99) == 0);
    CHECK(p.vpc.at("hyperplane").quantile(0.50) == Approx(240));
    CHECK(p.vpc.at("hyperplane").quantile(0.99) == Approx(630));
    // legacy-eni is the structured ENI pool entry (model-data section 3, AWS's 3 GB rule).
    CHECK(p.vpc.count("legacy-eni") == 0);
    REQUIRE(p.legacy_eni);
    CHECK(p.legacy_eni->creation_ms.quantile(0.5) == Approx(9100));
    CHECK(p.legacy_eni->creation_ms.quantile(0.99) == Approx(21000));
    CHECK(p.legacy_eni->memory_per_eni_gb == 3);
    CHECK(p.legacy_eni->idle_release_ms.quantile(0) == Approx(20 * 60000));
    CHECK(p.legacy_eni->idle_release_ms.quantile(1) == Approx(45 * 60000));
    CHECK_FALSE(p.legacy_eni->source.empty());

    // §2c extensions.
    CHECK(p.extensions.at("go-agent").init_ms.quantile(0.5) == Approx(520));
    CHECK(p.extensions.at("rust-agent").init_ms.quantile(0.5) == Approx(66));
    CHECK(p.extensions.at("rust-agent").init_ms.quantile(0.99) == Approx(111));
    CHECK(p.extensions.at("go-agent").source.find("188") != std::string::npos);

    // §4a lifetime: 0% cold at 5 min, 41% at 6 min, 100% at 7 min.
    CHECK(p.keep_alive_ms.quantile(0) == Approx(5 * 60000));
    CHECK(p.keep_alive_ms.quantile(0.41) == Approx(6 * 60000));
    CHECK(p.keep_alive_ms.quantile(1) == Approx(7 * 60000));
    CHECK(p.max_lifetime_ms.quantile(0) == Approx(2 * 3600000));
    CHECK(p.max_lifetime_ms.quantile(1) <= 4 * 3600000);

    // §4b scaling, §2b compute.
    CHECK(p.account_concurrency == 1000);
    CHECK(p.unreserved_minimum == 100);
    CHECK(p.scaling_environments == 1000);
    CHECK(p.scaling_window_ms == 10000);
    CHECK(p.mb_per_vcpu == 1769);
    CHECK(p.max_vcpus == 6);

    for (const std::string* source :
         {&p.runtimes_source, &p.aliases_source, &p.package_source, &p.vpc_source,
          &p.lifetime_source, &p.scaling_source, &p.compute_source})
        CHECK_FALSE(source->empty());
}

TEST_CASE("profile: the built-in text can be embedded in a raw string", "[unit]") {
    const std::string& text = builtin_profile_text();
    CHECK(text.find('@') == std::string::npos);
    CHECK(text.find(")coldbrew_profile\"") == std::string::npos);
}

TEST_CASE("profile: runtime ids resolve to rows, aliases and the longest prefix", "[unit]") {
    const profile& p = builtin_profile();
    const auto row_of = [&](const std::string& id) -> std::string {
        const runtime_row* row = p.find_runtime(id);
        return row ? row->name : "(none)";
    };
    CHECK(row_of("nodejs20.x") == "nodejs20.x");
    CHECK(row_of("go") == "go");
    CHECK(row_of("nodejs18.x") == "nodejs20.x");
    CHECK(row_of("python3.11") == "python3.12");
    CHECK(row_of("python3.10") == "python3.12");
    CHECK(row_of("java8.al2") == "java11");
    CHECK(row_of("ruby3.2") == "ruby3.3");
    CHECK(row_of("dotnet6") == "dotnet8");
    CHECK(row_of("provided.al2023") == "go");
    CHECK(row_of("provided.al2") == "go");
    CHECK(row_of("provided") == "go");
    CHECK(row_of("nodejs26.x") == "nodejs24.x"); // a family prefix
    CHECK(row_of("cobol") == "(none)");
    CHECK(row_of("") == "(none)");

    // The longest matching prefix wins, whatever the order in the file.
    const std::string text =
        replace(tiny, "  node*: node\n", "  n*: node\n  node*: nodeslow\n  nodejs*: node\n");
    const std::string with_row =
        replace(text, "runtime_aliases:",
                "  nodeslow:\n    family: nodejs\n"
                "    zip: {x86_64: fixed(1s), arm64: fixed(1s)}\n"
                "    image: {x86_64: fixed(1s), arm64: fixed(1s)}\nruntime_aliases:");
    const profile q = parse_profile(with_row, "t.yaml");
    CHECK(q.find_runtime("nodejs99")->name == "node");
    CHECK(q.find_runtime("node99")->name == "nodeslow");
    CHECK(q.find_runtime("nx")->name == "node");
}

TEST_CASE("profile: the tiny test profile parses", "[unit]") {
    const profile p = parse_profile(tiny, "my-profile.yaml");
    CHECK(p.name == "tiny");
    CHECK(p.origin == "my-profile.yaml");
    CHECK(p.runtimes.at("node").zip_arm64.quantile(0.5) == 90);
    CHECK(p.runtimes.at("node").source == "test"); // the section's
    CHECK(p.extensions.at("agent").init_ms.quantile(0.5) == 50);
    CHECK(p.vpc.at("legacy-eni").quantile(0.5) == 9000);
    CHECK(p.keep_alive_ms.quantile(0.5) == 300000);
}

TEST_CASE("profile: legacy-eni in the structured form; the flat form still reads", "[unit]") {
    // Flat (tiny): a distribution drawn per environment, no ENI pool.
    CHECK_FALSE(parse_profile(tiny, "my-profile.yaml").legacy_eni);

    const std::string structured = replace(
        tiny, "  legacy-eni: fixed(9s)\n",
        "  legacy-eni:\n    eni_creation: fixed(8s)\n    memory_per_eni_gb: 1.5\n"
        "    idle_release: fixed(30min)\n    source: test\n");
    const profile p = parse_profile(structured, "my-profile.yaml");
    REQUIRE(p.legacy_eni);
    CHECK(p.vpc.count("legacy-eni") == 0);
    CHECK(p.legacy_eni->creation_ms.quantile(0.5) == 8000);
    CHECK(p.legacy_eni->memory_per_eni_gb == 1.5);
    CHECK(p.legacy_eni->idle_release_ms.quantile(0.5) == 1800000);
    CHECK(p.legacy_eni->source == "test");

    // legacy-eni: is line 21; its keys from line 22.
    const auto typo = error_of(replace(structured, "    memory_per_eni_gb: 1.5\n",
                                       "    memory_per_eni: 1.5\n"));
    CHECK(typo.key() == "vpc.legacy-eni.memory_per_eni");
    CHECK(typo.line() == 23);
    CHECK(std::string(typo.what()).find("allowed: eni_creation, memory_per_eni_gb") !=
          std::string::npos);
    const auto missing = error_of(replace(structured, "    idle_release: fixed(30min)\n", ""));
    CHECK(missing.key() == "vpc.legacy-eni.idle_release");
    CHECK(missing.line() == 21);
    const auto zero = error_of(replace(structured, "memory_per_eni_gb: 1.5", "memory_per_eni_gb: 0"));
    CHECK(zero.key() == "vpc.legacy-eni.memory_per_eni_gb");
    CHECK(zero.line() == 23);
    const auto list = error_of(replace(tiny, "  legacy-eni: fixed(9s)\n", "  legacy-eni: [9s]\n"));
    CHECK(list.key() == "vpc.legacy-eni");
    CHECK(list.line() == 21);
    CHECK(std::string(list.what()).find("or a distribution") != std::string::npos);
}

TEST_CASE("profile: an unknown key is an error that lists the allowed keys", "[unit]") {
    const auto e = error_of(replace(tiny, "  hyperplane: fixed(200ms)\n",
                                    "  hyperplane: fixed(200ms)\n  hyperplan: fixed(1ms)\n"));
    CHECK(e.file() == "my-profile.yaml");
    CHECK(e.line() == 21);
    CHECK(e.column() == 3);
    CHECK(e.key() == "vpc.hyperplan");
    const std::string what = e.what();
    CHECK(what.find("my-profile.yaml:21:3: vpc.hyperplan: unknown key 'hyperplan'") == 0);
    CHECK(what.find("allowed: none, hyperplane, legacy-eni, source") != std::string::npos);

    const auto top = error_of(tiny + "colour: blue\n");
    CHECK(top.key() == "colour");
    CHECK(top.line() == 66);
    CHECK(top.column() == 1);
    CHECK(std::string(top.what()).find("name, runtimes, runtime_aliases") != std::string::npos);

    const auto row =
        error_of(replace(tiny, "    family: nodejs\n", "    family: nodejs\n    famliy: x\n"));
    CHECK(row.key() == "runtimes.node.famliy");
    CHECK(row.line() == 6);
}

TEST_CASE("profile: every section needs a source", "[unit]") {
    // The error points at the section's key (vpc: is line 17).
    const auto e = error_of(replace(tiny, "vpc:\n  source: test\n", "vpc:\n"));
    CHECK(e.key() == "vpc.source");
    CHECK(e.line() == 17);
    CHECK(e.column() == 1);
    CHECK(std::string(e.what()).find("missing required key 'source'") != std::string::npos);

    const auto scaling = error_of(replace(tiny, "scaling:\n  source: test\n", "scaling:\n"));
    CHECK(scaling.key() == "scaling.source");

    // A runtime row takes the section's source, or its own; with neither it is an error.
    const auto row = error_of(replace(tiny, "runtimes:\n  source: test\n", "runtimes:\n"));
    CHECK(row.key() == "runtimes.node.source");
    CHECK(row.line() == 3);
    const profile own = parse_profile(
        replace(replace(tiny, "runtimes:\n  source: test\n", "runtimes:\n"), "    family: nodejs\n",
                "    family: nodejs\n    source: my benchmark\n"),
        "t.yaml");
    CHECK(own.runtimes.at("node").source == "my benchmark");

    const auto ext = error_of(
        replace(tiny, "    init: fixed(50ms)\n    source: test\n", "    init: fixed(50ms)\n"));
    CHECK(ext.key() == "extensions.agent.source");
}

TEST_CASE("profile: a bad distribution is reported at its column", "[unit]") {
    const std::string bad = "  hyperplane: lognormal(median=200ms, p99=oops)\n";
    const std::string text = replace(tiny, "  hyperplane: fixed(200ms)\n", bad);
    const auto e = error_of(text);
    CHECK(e.key() == "vpc.hyperplane");
    CHECK(e.line() == 20);
    // The column is the offending character, not the start of the value.
    CHECK(e.column() > 15);
    CHECK(line_of(text, 20).substr(static_cast<std::size_t>(e.column()) - 1, 4) == "oops");
    CHECK(std::string(e.what()).find("invalid distribution 'lognormal(median=200ms, p99=oops)'") !=
          std::string::npos);

    // Quoted values count their quote.
    const std::string quoted = replace(tiny, "  hyperplane: fixed(200ms)\n",
                                       "  hyperplane: \"lognormal(median=200ms, p99=oops)\"\n");
    const auto q = error_of(quoted);
    CHECK(q.column() == e.column() + 1);
    CHECK(line_of(quoted, 20).substr(static_cast<std::size_t>(q.column()) - 1, 4) == "oops");

    const auto window = error_of(replace(tiny, "  window: 10s\n", "  window: 10parsecs\n"));
    CHECK(window.key() == "scaling.window");
    CHECK(window.line() == 35);
    CHECK(window.column() == 13);
}

TEST_CASE("profile: values of the wrong type are errors with their position", "[unit]") {
    const auto integer =
        error_of(replace(tiny, "  account_concurrency: 1000\n", "  account_concurrency: lots\n"));
    CHECK(integer.key() == "scaling.account_concurrency");
    CHECK(integer.line() == 32);
    CHECK(integer.column() == 24);
    CHECK(std::string(integer.what()).find("expected an integer, got 'lots'") != std::string::npos);

    CHECK(error_of(replace(tiny, "  account_concurrency: 1000\n", "  account_concurrency: 1.5\n"))
              .key() == "scaling.account_concurrency");

    const auto list =
        error_of(replace(tiny, "    default: {ms_per_zipped_mb: 100, p99_ratio: 1.5}\n",
                         "    default: [100, 1.5]\n"));
    CHECK(list.key() == "package.families.default");
    CHECK(std::string(list.what()).find("expected a mapping, got a list") != std::string::npos);

    const auto number = error_of(replace(tiny, "  mb_per_vcpu: 1769\n", "  mb_per_vcpu: {a: 1}\n"));
    CHECK(number.key() == "compute.mb_per_vcpu");
    CHECK(std::string(number.what()).find("expected a number, got a mapping") != std::string::npos);

    const auto source =
        error_of(replace(tiny, "compute:\n  source: test\n", "compute:\n  source: [a]\n"));
    CHECK(source.key() == "compute.source");

    const auto dist = error_of(replace(tiny, "  none: fixed(0)\n", "  none: {fixed: 0}\n"));
    CHECK(dist.key() == "vpc.none");
    CHECK(std::string(dist.what()).find("expected a distribution") != std::string::npos);

    const auto ratio = error_of(replace(tiny, "p99_ratio: 1.5", "p99_ratio: 0.5"));
    CHECK(ratio.key() == "package.families.default.p99_ratio");
    CHECK(std::string(ratio.what()).find("must be >= 1") != std::string::npos);

    const auto memory = error_of(replace(tiny, "{128: 1.0}", "{lots: 1.0}"));
    CHECK(memory.key() == "package.memory_factor.lots");
    CHECK(memory.line() == 16);

    const auto unreserved =
        error_of(replace(tiny, "  unreserved_minimum: 100\n", "  unreserved_minimum: 2000\n"));
    CHECK(unreserved.key() == "scaling.unreserved_minimum");
}

TEST_CASE("profile: structural errors", "[unit]") {
    const auto alias = error_of(replace(tiny, "  node*: node\n", "  node*: deno\n"));
    CHECK(alias.key() == "runtime_aliases.node*");
    CHECK(alias.line() == 10);
    CHECK(alias.column() == 10);
    CHECK(std::string(alias.what()).find("'deno' is not a runtime row (rows: node)") !=
          std::string::npos);

    const auto star = error_of(replace(tiny, "  node*: node\n", "  no*de: node\n"));
    CHECK(star.key() == "runtime_aliases.no*de");

    const auto duplicate =
        error_of(replace(tiny, "  none: fixed(0)\n", "  none: fixed(0)\n  none: fixed(1)\n"));
    CHECK(duplicate.key() == "vpc.none");
    CHECK(duplicate.line() == 20);

    const auto missing = error_of(replace(tiny, "  legacy-eni: fixed(9s)\n", ""));
    CHECK(missing.key() == "vpc.legacy-eni");

    const auto no_default = error_of(replace(tiny, "    default:", "    nodejs:"));
    CHECK(no_default.key() == "package.families.default");

    const auto syntax = error_of(replace(tiny, "  none: fixed(0)\n", "  none: [fixed(0)\n"));
    CHECK(syntax.line() > 0);
    CHECK(std::string(syntax.what()).find("invalid YAML") != std::string::npos);

    const auto empty = error_of("");
    CHECK(std::string(empty.what()).find("empty") != std::string::npos);

    CHECK(error_of("just text").line() == 1);
}

TEST_CASE("profile: loading from a file", "[unit]") {
    const auto dir = std::filesystem::temp_directory_path();
    const auto path = dir / ("coldbrew-profile-test-" + std::to_string(::getpid()) + ".yaml");
    {
        std::ofstream out(path);
        out << builtin_profile_text();
    }
    const profile p = load_profile(path);
    CHECK(p.origin == path.string());
    CHECK(p.runtimes.size() == builtin_profile().runtimes.size());
    std::filesystem::remove(path);

    try {
        load_profile(path);
        FAIL("a missing file was accepted");
    } catch (const profile_error& e) {
        CHECK(e.file() == path.string());
        CHECK(e.line() == 0);
        CHECK(std::string(e.what()).find("cannot read profile") != std::string::npos);
    }
}

TEST_CASE("profile: availability is a table of SLA percentages", "[unit]") {
    const auto p = parse_profile(tiny, "my-profile.yaml");
    CHECK(p.availability_percent.at("api_gateway") == 99.95);
    CHECK(p.availability_percent.at("lambda") == 99.9);
    CHECK(p.availability_source == "test");

    const auto over = error_of(replace(tiny, "lambda: 99.9", "lambda: 100.5"));
    CHECK(over.key() == "availability.lambda");
    CHECK(over.message().find("at most 100") != std::string::npos);
    CHECK(error_of(replace(tiny, "lambda: 99.9", "lambda: 0")).key() == "availability.lambda");
    const auto missing = error_of(replace(tiny, "  lambda: 99.9\n", ""));
    CHECK(missing.message().find("'lambda'") != std::string::npos);

    const auto& builtin = builtin_profile();
    CHECK(builtin.availability_percent.at("api_gateway") == 99.95);
    CHECK(builtin.availability_percent.at("lambda") == 99.95);
    CHECK(builtin.availability_percent.at("dynamodb") == 99.99);
    CHECK(builtin.availability_percent.at("step_functions") == 99.9);
}

TEST_CASE("profile: prices for the simulator's cost", "[unit]") {
    const auto p = parse_profile(tiny, "my-profile.yaml");
    CHECK(p.prices.date == "2026-08");
    CHECK(p.prices.lambda_per_million == 0.2);
    CHECK(p.prices.lambda_gb_s_arm == 0.0000133334);
    CHECK(p.prices.api_rest_per_million == 3.5);
    CHECK(p.prices.sfn_express_increment_ms == 100);

    const auto negative = error_of(replace(tiny, "rest_per_million: 3.5", "rest_per_million: -1"));
    CHECK(negative.key() == "prices.api_gateway.rest_per_million");
    const auto unknown = error_of(replace(tiny, "http_per_million: 1.0", "http_per_milion: 1.0"));
    CHECK(unknown.key() == "prices.api_gateway.http_per_milion");
    const auto missing = error_of(replace(tiny, "  date: \"2026-08\"\n", ""));
    CHECK(missing.message().find("'date'") != std::string::npos);

    const auto& builtin = builtin_profile();
    CHECK(builtin.prices.region == "us-east-1");
    CHECK(builtin.prices.lambda_gb_s_x86 == 0.0000166667);
    CHECK(builtin.prices.sfn_standard_per_thousand_transitions == 0.025);
}

TEST_CASE("profile: bandwidth per execution environment", "[unit]") {
    const auto p = parse_profile(tiny, "my-profile.yaml");
    const auto& t = p.bandwidth;
    CHECK(t.source == "test");
    CHECK(t.default_bytes_per_s == 78'125'000);  // 625 Mbps
    CHECK(t.scalable_from_mb == 2048);
    CHECK(t.scalable_to_mb == 10240);
    CHECK(t.scalable_max_bytes_per_s == 375'000'000);  // 3,000 Mbps
    CHECK(t.burst_ms == 50);
    CHECK(t.streaming_uncapped_bytes == 6'291'456);  // 6 MiB
    CHECK(t.streaming_bytes_per_s == 2'000'000);    // 2 MBps, decimal

    // Other spellings of the same numbers.
    const auto q = parse_profile(
        replace(replace(replace(tiny, "default: 625Mbps", "default: 78.125 MB/s"),
                        "{uncapped: 6MB, rate: 2MBps}", "{uncapped: 6144 KiB, rate: 16 Mbps}"),
                "burst: 50ms", "burst: 0.05s"),
        "t.yaml");
    CHECK(q.bandwidth.default_bytes_per_s == Approx(78'125'000));
    CHECK(q.bandwidth.streaming_uncapped_bytes == 6'291'456);
    CHECK(q.bandwidth.streaming_bytes_per_s == Approx(2'000'000));
    CHECK(q.bandwidth.burst_ms == Approx(50));

    // model-data §5: the built-in profile carries the quotas page's numbers.
    const auto& builtin = builtin_profile().bandwidth;
    CHECK(builtin.default_bytes_per_s == 78'125'000);
    CHECK(builtin.scalable_from_mb == 2048);
    CHECK(builtin.scalable_to_mb == 10240);
    CHECK(builtin.scalable_max_bytes_per_s == 375'000'000);
    CHECK(builtin.streaming_uncapped_bytes == 6'291'456);
    CHECK(builtin.streaming_bytes_per_s == 2'000'000);
    CHECK(builtin.burst_ms > 0);
    CHECK(builtin.source.find("quotas") != std::string::npos);
}

TEST_CASE("profile: bandwidth errors, each at its key and line", "[unit]") {
    struct bad {
        std::string from, to;
        std::string key;
        int line;
        std::string says;
    };
    // bandwidth: is line 60; its keys follow.
    const bad cases[] = {
        {"  source: test\n  default: 625Mbps", "  default: 625Mbps", "bandwidth.source", 60,
         "missing required key 'source'"},
        {"  default: 625Mbps\n", "", "bandwidth.default", 60, "missing required key 'default'"},
        {"default: 625Mbps", "default: 625", "bandwidth.default", 62, "has no unit"},
        {"default: 625Mbps", "default: 10 furlongs", "bandwidth.default", 62,
         "unknown unit \"furlongs\""},
        {"default: 625Mbps", "default: -5Mbps", "bandwidth.default", 62, "greater than 0"},
        {"default: 625Mbps", "default: 0Mbps", "bandwidth.default", 62, "greater than 0"},
        {"default: 625Mbps", "default: Mbps", "bandwidth.default", 62, "start with a number"},
        {"default: 625Mbps", "default: {rate: 1}", "bandwidth.default", 62,
         "expected a rate such as '625Mbps'"},
        {"  default: 625Mbps\n", "  default: 625Mbps\n  defualt: 1Mbps\n", "bandwidth.defualt",
         63, "unknown key 'defualt' (allowed: default, scalable, burst, streaming, source)"},
        {"  scalable: {from_mb: 2048, to_mb: 10240, max: 3000Mbps}\n", "", "bandwidth.scalable",
         60, "missing required key 'scalable'"},
        {"{from_mb: 2048, to_mb: 10240, max: 3000Mbps}", "[2048, 10240]", "bandwidth.scalable",
         63, "expected a mapping"},
        {"from_mb: 2048,", "from_mb: 0,", "bandwidth.scalable.from_mb", 63, "must be > 0"},
        {"from_mb: 2048,", "from_mb: lots,", "bandwidth.scalable.from_mb", 63,
         "expected a number"},
        {"to_mb: 10240,", "to_mb: 1024,", "bandwidth.scalable.to_mb", 63,
         "must be more than from_mb (2048)"},
        {"max: 3000Mbps}", "max: 100Mbps}", "bandwidth.scalable.max", 63,
         "must be at least the default rate (625 Mbps)"},
        {"max: 3000Mbps}", "max: 3000Mbps, min: 1Mbps}", "bandwidth.scalable.min", 63,
         "unknown key 'min' (allowed: from_mb, to_mb, max)"},
        {", max: 3000Mbps}", "}", "bandwidth.scalable.max", 63, "missing required key 'max'"},
        {"burst: 50ms", "burst: soon", "bandwidth.burst", 64, "invalid duration 'soon'"},
        {"burst: 50ms", "burst: -1ms", "bandwidth.burst", 64, ""},
        {"  burst: 50ms\n", "", "bandwidth.burst", 60, "missing required key 'burst'"},
        {"uncapped: 6MB", "uncapped: 6", "bandwidth.streaming.uncapped", 65, "has no unit"},
        {"uncapped: 6MB", "uncapped: 6MBps", "bandwidth.streaming.uncapped", 65,
         "unknown size unit 'MBps'"},
        {"uncapped: 6MB", "uncapped: -1MB", "bandwidth.streaming.uncapped", 65,
         "cannot be negative"},
        {"uncapped: 6MB", "uncapped: many", "bandwidth.streaming.uncapped", 65,
         "expected a size such as '6MB'"},
        {"rate: 2MBps}", "rate: 2MB}", "bandwidth.streaming.rate", 65,
         "did you mean \"MB/s\"?"},
        {"rate: 2MBps}", "rate: 2MBps, burst: 1s}", "bandwidth.streaming.burst", 65,
         "unknown key 'burst' (allowed: uncapped, rate)"},
        {"{uncapped: 6MB, rate: 2MBps}", "2MBps", "bandwidth.streaming", 65,
         "expected a mapping"},
    };
    for (const auto& c : cases) {
        INFO(c.to);
        const auto e = error_of(replace(tiny, c.from, c.to));
        CHECK(e.file() == "my-profile.yaml");
        CHECK(e.key() == c.key);
        CHECK(e.line() == c.line);
        CHECK(e.column() > 0);
        CHECK(e.message().find(c.says) != std::string::npos);
    }
    // A profile without the table is an error at the top.
    const auto missing = error_of(tiny.substr(0, tiny.find("bandwidth:\n")));
    CHECK(missing.key() == "bandwidth");
    CHECK(missing.message() == "missing required key 'bandwidth'");
}
