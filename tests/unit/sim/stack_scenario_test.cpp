// `coldbrew sim PATH` on an app: the stack → scenario conversion on fixture templates (SAM
// with REST and HTTP API routes, concurrency, VPC and a keep-alive override; a
// serverless.yml), coldbrew.yaml's `sim:` sections and their errors, and the entry mix in
// both engines.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include "emulator/config/scenario_loader.hpp"
#include "emulator/sim_cli/stack_scenario.hpp"
#include "models/sim/engine.hpp"
#include "models/sim/report.hpp"
#include "tests/catch.hpp"

using namespace coldbrew;
namespace sim = models::sim;
using sim_cli::load_stack_scenario;
using sim_cli::stack_scenario;
using sim_cli::stack_sim_options;

namespace {

const std::filesystem::path fixtures = COLDBREW_FIXTURES_DIR;

stack_scenario load_fixture(const char* name, stack_sim_options o = {}) {
    return load_stack_scenario(fixtures / name, o, config::load_options{});
}

const sim::component& component(const sim::scenario& s, const std::string& name) {
    auto it = std::find_if(s.components.begin(), s.components.end(),
                           [&](const sim::component& c) { return c.name == name; });
    REQUIRE(it != s.components.end());
    return *it;
}

std::size_t index_of(const sim::scenario& s, const std::string& name) {
    return static_cast<std::size_t>(&component(s, name) - s.components.data());
}

const sim::entry& entry(const sim::scenario& s, const std::string& name) {
    auto it = std::find_if(s.entries.begin(), s.entries.end(), [&](const sim::entry& e) { return e.name == name; });
    REQUIRE(it != s.entries.end());
    return *it;
}

bool has(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

// A copy of a fixture app in a fresh temp directory, with coldbrew.yaml replaced.
class app_copy {
public:
    app_copy(const char* fixture, const std::string& coldbrew_yaml) {
        std::random_device rd;
        dir_ = std::filesystem::temp_directory_path() /
               ("coldbrew-sim-stack-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        std::filesystem::copy(fixtures / fixture, dir_, std::filesystem::copy_options::recursive);
        std::ofstream(dir_ / "coldbrew.yaml", std::ios::binary) << coldbrew_yaml;
    }
    ~app_copy() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

config::config_error error_loading(const std::filesystem::path& dir) {
    try {
        load_stack_scenario(dir, {}, config::load_options{});
    } catch (const config::config_error& e) {
        return e;
    }
    FAIL("expected a config_error");
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("sim stack: a path is an app or a scenario file", "[unit]") {
    CHECK(sim_cli::is_app_path(fixtures / "sim-stack"));
    CHECK(sim_cli::is_app_path(fixtures / "sim-stack" / "template.yaml"));
    CHECK(sim_cli::is_app_path(fixtures / "sim-serverless" / "serverless.yml"));
    const auto whatif = std::filesystem::path(COLDBREW_FIXTURES_DIR).parent_path().parent_path() / "examples" / "whatif";
    CHECK_FALSE(sim_cli::is_app_path(whatif / "compounding.yaml"));
    CHECK_FALSE(sim_cli::is_app_path(whatif / "burst.yaml"));
}

TEST_CASE("sim stack: SAM functions keep their live traits, limits and overrides", "[unit]") {
    const auto st = load_fixture("sim-stack");
    const sim::scenario& s = st.scenario;
    REQUIRE(s.model_profile == &st.models->profile());

    const auto& pay = component(s, "Pay");
    CHECK(pay.kind == sim::service_kind::lambda);
    CHECK(pay.function.traits.runtime == "nodejs20.x");
    CHECK(pay.function.traits.memory_mb == 512);
    CHECK(pay.function.traits.vpc == models::vpc_mode::hyperplane);
    // The package as build_models measured it, not a guess.
    CHECK(pay.function.traits.package_zipped_mb == st.models->find("Pay")->traits.package_zipped_mb);
    CHECK(pay.function.traits.package_zipped_mb > 0);
    CHECK(pay.function.reserved_concurrency == 20);
    CHECK(pay.function.provisioned_concurrency == 2);
    CHECK(pay.function.max_environments == 100);  // coldbrew's local cap, as `up`
    CHECK(pay.timeout_ms == 10000);
    CHECK_FALSE(pay.function.keep_alive_ms);
    CHECK(pay.latency_ms.quantile(0.5) == Approx(40));
    CHECK(pay.availability == Approx(0.995));

    const auto& ledger = component(s, "Ledger");
    CHECK(ledger.function.traits.architecture == "arm64");
    CHECK(ledger.function.traits.runtime == "python3.12");
    REQUIRE(ledger.function.keep_alive_ms);
    CHECK(ledger.function.keep_alive_ms->quantile(0.5) == Approx(60000));
    CHECK(ledger.availability == Approx(0.99));

    // Notify has no sim: section: a documented default, said out loud.
    const auto& notify = component(s, "Notify");
    CHECK(notify.latency_ms.quantile(0.5) == Approx(10));
    CHECK(has(st.notes, "Notify: no sim.latency, using lognormal(median=10ms, p99=50ms)"));
    CHECK_FALSE(has(st.notes, "Pay: no sim.latency"));

    const auto& db = component(s, "payments-db");
    CHECK(db.kind == sim::service_kind::generic);
    CHECK(db.availability == Approx(0.999));
    CHECK(db.latency_ms.quantile(0.5) == Approx(3));
}

TEST_CASE("sim stack: routes are entries through their API with the live gateway's facts", "[unit]") {
    const auto st = load_fixture("sim-stack");
    const sim::scenario& s = st.scenario;
    const auto& rest = component(s, "ServerlessRestApi");
    const auto& http = component(s, "ServerlessHttpApi");
    CHECK(rest.kind == sim::service_kind::api_gateway);
    CHECK_FALSE(rest.http_api);
    CHECK(http.http_api);

    REQUIRE(s.entries.size() == 2);  // sim.routes lists both, with their weights
    const auto& post = entry(s, "POST /pay");
    CHECK(post.weight == 3);
    REQUIRE(post.flow.size() == 2);
    CHECK(post.flow[0].component == index_of(s, "ServerlessRestApi"));
    CHECK(post.flow[1].component == index_of(s, "Pay"));
    CHECK(post.flow[1].timeout_ms == 29000);  // REST's integration timeout
    REQUIRE(post.flow[1].live);
    const auto& l = *post.flow[1].live;
    CHECK(l.where == models::faults::front::gateway);
    CHECK(l.route == "POST /pay");
    CHECK(l.function == "Pay");
    CHECK(l.function_name == "payments-pay");
    CHECK(l.method == "POST");
    CHECK(l.path == "/pay");

    const auto& get = entry(s, "GET /pay/{id}");
    CHECK(get.weight == 1);
    CHECK(get.flow[0].component == index_of(s, "ServerlessHttpApi"));
    CHECK(get.flow[1].timeout_ms == 5000);  // TimeoutInMillis
    CHECK(get.flow[1].live->route == "GET /pay/{id}");
    CHECK(get.flow[1].live->method == "GET");
}

TEST_CASE("sim stack: sim.calls become Invoke API calls and dependency calls", "[unit]") {
    const auto st = load_fixture("sim-stack");
    const sim::scenario& s = st.scenario;
    const auto& calls = component(s, "Pay").calls;
    REQUIRE(calls.size() == 3);
    CHECK(calls[0].component == index_of(s, "Ledger"));
    REQUIRE(calls[0].live);
    CHECK(calls[0].live->where == models::faults::front::invoke);
    CHECK(calls[0].live->route == "Invoke Ledger");
    CHECK(calls[0].live->function == "Ledger");
    CHECK(calls[0].live->method == "POST");
    CHECK(calls[0].live->path == "/2015-03-31/functions/Ledger/invocations");  // its FunctionName
    CHECK(calls[1].component == index_of(s, "payments-db"));
    CHECK_FALSE(calls[1].live);
    REQUIRE(calls[1].retry);
    CHECK(calls[1].retry->type == sim::retry_policy::kind::sdk_standard);
    // An Event invocation: the live Invoke API queues it without a fault decision.
    CHECK(calls[2].component == index_of(s, "Notify"));
    CHECK(calls[2].async);
    CHECK_FALSE(calls[2].live);
}

TEST_CASE("sim stack: fault rules and SLAs carry over; what the simulator cannot act on is listed", "[unit]") {
    stack_sim_options o;
    o.seed = 77;
    const auto st = load_fixture("sim-stack", o);
    const sim::scenario& s = st.scenario;
    CHECK(s.seed == 77);
    CHECK(s.fault_seed == 77);
    std::vector<std::string> names;
    for (const auto& r : s.fault_rules) names.push_back(r.name);
    CHECK(names == std::vector<std::string>{"lose-pay", "by-header", "sla-gateway", "availability-payments-db"});
    CHECK(has(st.not_simulated, "fault rule 'by-header': header matchers"));
    CHECK_FALSE(has(st.not_simulated, "lose-pay"));
    CHECK(has(st.notes, "'availability-payments-db': simulated as the dependency component's availability"));
    // The gateway SLA comes through the rule, so the API components do not count it again.
    CHECK(component(s, "ServerlessRestApi").availability == 1.0);
    CHECK(component(s, "ServerlessRestApi").availability_source.find("sla-gateway") != std::string::npos);

    stack_sim_options realistic;
    realistic.realistic_sla = true;
    const auto r = load_fixture("sim-stack", realistic);
    CHECK(std::any_of(r.scenario.fault_rules.begin(), r.scenario.fault_rules.end(),
                      [](const models::faults::rule& x) { return x.name == "sla-invoke"; }));
    CHECK(component(r.scenario, "Pay").availability == Approx(0.995));  // handler errors only
}

TEST_CASE("sim stack: arrivals, requests and --rate-scale", "[unit]") {
    stack_sim_options o;
    o.rate_scale = 10;
    const auto st = load_fixture("sim-stack", o);
    CHECK(st.scenario.requests == 20000);
    CHECK(st.scenario.arrival.rate == Approx(500));
    o.requests = 1234;
    CHECK(load_fixture("sim-stack", o).scenario.requests == 1234);

    sim::arrivals a;
    a.phases.push_back({1000, 10, 20.0, std::nullopt, "ramp"});
    a.phases.push_back({1000, 0, std::nullopt, 50, "burst"});
    sim_cli::scale_arrivals(a, 3);
    CHECK(a.phases[0].arrival_rate == 30);
    CHECK(*a.phases[0].ramp_to == 60);
    CHECK(*a.phases[1].arrival_count == 150);
}

TEST_CASE("sim stack: a serverless.yml converts the same way", "[unit]") {
    const auto st = load_fixture("sim-serverless");
    const sim::scenario& s = st.scenario;
    const auto& create = component(s, "create");
    CHECK(create.timeout_ms == 12000);
    CHECK(create.function.traits.memory_mb == 256);
    // No sim.routes: every route, equal weights.
    REQUIRE(s.entries.size() == 2);
    CHECK(entry(s, "GET /orders").weight == 1);
    CHECK(entry(s, "POST /orders").weight == 1);
    const auto& post = entry(s, "POST /orders");
    CHECK(s.components[post.flow[0].component].kind == sim::service_kind::api_gateway);
    CHECK_FALSE(s.components[post.flow[0].component].http_api);
    CHECK(post.flow[1].live->function_name == "orders-dev-create");
    CHECK(s.components[entry(s, "GET /orders").flow[0].component].http_api);
    CHECK(has(st.notes, "no sim.routes in coldbrew.yaml: 2 routes, equal weights"));
    CHECK(has(st.notes, "list: no sim.latency"));
}

TEST_CASE("sim stack: the converted stack runs, its routes in their proportions", "[unit]") {
    auto st = load_fixture("sim-stack");
    sim::scenario& s = st.scenario;
    s.requests = 20000;
    const auto r = sim::run(s, {2, {}});
    CHECK(r.engine == "events");  // functions with pools
    REQUIRE(r.entries.size() == 2);
    CHECK(r.entries[0].requests + r.entries[1].requests == r.requests);
    const double post_share = static_cast<double>(r.entries[0].requests) / static_cast<double>(r.requests);
    CHECK(post_share == Approx(0.75).margin(0.02));
    const auto j = sim::report_json(s, r);
    REQUIRE(j.contains("entries"));
    CHECK(j["entries"][0]["name"] == "POST /pay");
    CHECK(j["entries"][0]["weight_percent"].get<double>() == Approx(75));
    CHECK(j["entries"][0]["latency_ms"].contains("p95"));
    CHECK(j["entries"][1]["availability_percent"].get<double>() > 90);
}

TEST_CASE("sim stack: coldbrew.yaml sim sections are strict, errors at file, line and key", "[unit]") {
    {
        app_copy app("sim-stack", "functions:\n  Pay:\n    sim:\n      latncy: fixed(1ms)\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
        CHECK(e.where().line == 4);
        CHECK(e.key_path() == "functions.Pay.sim.latncy");
        CHECK(std::string(e.what()).find("did you mean 'latency'") != std::string::npos);
    }
    {
        app_copy app("sim-stack", "functions:\n  Pay:\n    sim:\n      errors: 0.5\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 4);
        CHECK(e.key_path() == "functions.Pay.sim.errors");
        CHECK(std::string(e.what()).find("% sign") != std::string::npos);
    }
    {
        app_copy app("sim-stack", "functions:\n  Pay:\n    sim:\n      latency: lognormal(median=40ms)\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 4);
        CHECK(e.key_path() == "functions.Pay.sim.latency");
    }
    {
        app_copy app("sim-stack", "functions:\n  Pay:\n    sim:\n      calls: [Ledger, {call: Notfy}]\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 4);
        CHECK(e.key_path() == "functions.Pay.sim.calls[1]");
        CHECK(std::string(e.what()).find("did you mean 'Notify'") != std::string::npos);
    }
    {
        app_copy app("sim-stack", "functions:\n  Pay:\n    sim:\n      calls: [{call: Ledger, retry: sometimes}]\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 4);
        CHECK(e.key_path() == "functions.Pay.sim.calls[0].retry");
    }
    {
        app_copy app("sim-stack", "sim:\n  arrivals: {rate: 5, burst: 3}\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 2);
        CHECK(e.key_path() == "sim.arrivals.burst");
    }
    {
        app_copy app("sim-stack", "sim:\n  routes:\n    \"POST /pya\": 2\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 3);
        CHECK(e.key_path() == "sim.routes.POST /pya");
        CHECK(std::string(e.what()).find("did you mean 'POST /pay'") != std::string::npos);
    }
    {
        app_copy app("sim-stack", "sim:\n  routes:\n    \"POST /pay\": {weight: 0}\n");
        const auto e = error_loading(app.dir());
        CHECK(e.where().line == 3);
        CHECK(e.key_path() == "sim.routes.POST /pay.weight");
    }
    {
        app_copy app("sim-stack", "sim:\n  rqeuests: 5\n");
        const auto e = error_loading(app.dir());
        CHECK(e.key_path() == "sim.rqeuests");
    }
}

TEST_CASE("sim stack: Invoke entries and --set on a stack", "[unit]") {
    app_copy app("sim-stack", "sim:\n  routes: {\"Invoke Notify\": 1, \"POST /pay\": 1}\n");
    auto st = load_stack_scenario(app.dir(), {}, config::load_options{});
    REQUIRE(st.scenario.entries.size() == 2);
    const auto& inv = entry(st.scenario, "Invoke Notify");
    REQUIRE(inv.flow.size() == 1);
    CHECK(inv.flow[0].live->where == models::faults::front::invoke);
    CHECK(inv.flow[0].live->route == "Invoke Notify");

    sim_cli::apply_stack_override(st, "components.Pay.memory_mb", "1024");
    sim_cli::apply_stack_override(st, "arrivals.rate", "400");
    sim_cli::apply_stack_override(st, "entries.Invoke Notify.weight", "4");
    CHECK(component(st.scenario, "Pay").function.traits.memory_mb == 1024);
    CHECK(st.scenario.arrival.rate == 400);
    CHECK(entry(st.scenario, "Invoke Notify").weight == 4);
    CHECK_THROWS_AS(sim_cli::apply_stack_override(st, "components.Nope.latency", "fixed(1ms)"), std::invalid_argument);
    CHECK_THROWS_AS(sim_cli::apply_stack_override(st, "flow", "[a]"), std::invalid_argument);
}

// ---- the entry mix in the engines ----------------------------------------------------------

namespace {

const char* const mix_yaml = R"Y(
requests: 20000
seed: 9
components:
  gw: {service: api_gateway, availability: 100%, latency: fixed(1ms)}
  a: {service: x, availability: 99%, latency: fixed(10ms)}
  b: {service: y, availability: 90%, latency: fixed(50ms)}
flow: [gw, a]
)Y";

}  // namespace

TEST_CASE("sim entries: arrivals follow the weights, per entry counts and latency", "[unit]") {
    for (const char* engine : {"fast", "events"}) {
        CAPTURE(engine);
        auto l = config::load_scenario_text(mix_yaml, "mix.yaml", {{"engine", engine, "test"}});
        sim::scenario& s = l.variants[0].scenario;
        sim::step gw, a, b;
        gw.component = 0;
        a.component = 1;
        b.component = 2;
        s.entries.push_back({"to a", 1, {gw, a}});
        s.entries.push_back({"to b", 3, {gw, b}});
        const auto r = sim::run(s, {2, {}});
        REQUIRE(r.entries.size() == 2);
        CHECK(r.entries[0].requests + r.entries[1].requests == r.requests);
        const double share_b = static_cast<double>(r.entries[1].requests) / static_cast<double>(r.requests);
        CHECK(share_b == Approx(0.75).margin(0.015));
        const double avail_b = static_cast<double>(r.entries[1].successes) / static_cast<double>(r.entries[1].requests);
        CHECK(avail_b == Approx(0.90).margin(0.015));
        CHECK(r.entries[0].latency.quantile_ms(0.5) == Approx(11).margin(0.2));
        CHECK(r.entries[1].latency.quantile_ms(0.5) == Approx(51).margin(0.6));
        // The analytic cross-check is the weighted mix: 0.25 × 0.99 + 0.75 × 0.90.
        const auto j = sim::report_json(s, r);
        CHECK(j["availability"]["analytic"]["percent"].get<double>() == Approx((0.25 * 0.99 + 0.75 * 0.90) * 100));
        CHECK(j["availability"]["analytic"]["within_ci"].get<bool>());
        CHECK(j["entries"].size() == 2);
        // Deterministic whatever the thread count.
        const auto r1 = sim::run(s, {1, {}});
        CHECK(r1.entries[1].requests == r.entries[1].requests);
        CHECK(r1.entries[1].successes == r.entries[1].successes);
    }
}

TEST_CASE("sim entries: one entry runs exactly as the flow it holds", "[unit]") {
    for (const char* engine : {"fast", "events"}) {
        CAPTURE(engine);
        const auto l = config::load_scenario_text(mix_yaml, "mix.yaml", {{"engine", engine, "test"}});
        const sim::scenario& flow_only = l.variants[0].scenario;
        sim::scenario one = flow_only;
        one.entries.push_back({"only", 1, one.flow});
        one.flow.clear();
        const auto a = sim::run(flow_only, {2, {}});
        const auto b = sim::run(one, {2, {}});
        CHECK(a.requests == b.requests);
        CHECK(a.successes == b.successes);
        CHECK(a.latency.quantile_ms(0.99) == b.latency.quantile_ms(0.99));
        CHECK(a.components[1].attempts == b.components[1].attempts);
        CHECK(a.entries.empty());
        // A single entry adds no per-entry table to the report.
        CHECK_FALSE(sim::report_json(one, b).contains("entries"));
    }
}
