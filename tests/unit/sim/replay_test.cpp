// Replaying a run record: hand-made records through the decider and the pool policies, with
// fixed Init Durations and keep-alives so every decision line is known in advance.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/coldstart/cold_start.hpp"
#include "models/distribution/distribution.hpp"
#include "models/faults/faults.hpp"
#include "models/profile/profile.hpp"
#include "models/sim/record.hpp"
#include "models/sim/replay.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;
using namespace coldbrew::models::sim;

namespace {

cold_start_model fixed_model() {
    function_traits t;
    t.runtime = "provided.al2023";
    cold_start_overrides o;
    o.runtime_init = parse_distribution("fixed(100ms)");
    return cold_start_model(builtin_profile(), t, o);
}

struct fixture {
    faults::fault_registry kinds;
    cold_start_model model = fixed_model();
    replay_inputs in;
    run_record rec;

    explicit fixture(pool_limits limits = {}) {
        faults::register_builtin_faults(kinds);
        in.registry = &kinds;
        lifetime_model life{parse_distribution("fixed(1000ms)"),
                            parse_distribution("fixed(3600000ms)")};
        in.functions.push_back({"Hello", limits, life, &model});
        rec.header.seed = 42;
    }
    void rule(const std::string& json) {
        in.rules.push_back(faults::parse_rule(nlohmann::json::parse(json), kinds, "r"));
    }
    std::uint64_t request(double at, const std::string& front = "gateway") {
        recorded_request r;
        r.id = next_request++;
        r.at_ms = at;
        r.front = front;
        r.route = front == "gateway" ? "GET /hello" : "Invoke Hello";
        r.method = front == "gateway" ? "GET" : "POST";
        r.path = front == "gateway" ? "/hello" : "/2015-03-31/functions/hello/invocations";
        r.function = "Hello";
        r.function_name = "hello";
        rec.events.emplace_back(r);
        return r.id;
    }
    std::uint64_t invoke(double at, std::optional<std::uint64_t> request) {
        recorded_invoke i{next_invocation++, at, "Hello", request};
        rec.events.emplace_back(i);
        return i.id;
    }
    void answer(std::uint64_t invocation, double at,
                recorded_handler::outcome o = recorded_handler::outcome::success) {
        recorded_handler h;
        h.invocation = invocation;
        h.at_ms = at;
        h.result = o;
        rec.events.emplace_back(h);
    }
    // A request passed by the faults, invoked at once.
    std::uint64_t call(double at) { return invoke(at, request(at)); }

    std::vector<std::string> run() {
        auto r = replay(in, rec);
        INFO(r.divergence.value_or(""));
        REQUIRE_FALSE(r.divergence);
        return r.lines;
    }
    std::uint64_t next_request = 0, next_invocation = 0;
};

// The pool events of a log, as "event env" words ("created 0", "reused 0", "idle 0", …), and
// the fault lines as "fault <action> k=<k>": the sequence to check, without the draws.
std::vector<std::string> shape(const std::vector<std::string>& lines) {
    std::vector<std::string> out;
    for (const auto& l : lines) {
        auto j = nlohmann::json::parse(l);
        std::string s = j.at("event").get<std::string>();
        if (s == "fault") {
            s += " " + j.at("action").get<std::string>() + " k=" + std::to_string(j.at("k").get<int>());
        } else {
            if (j.contains("environment")) s += " " + std::to_string(j["environment"].get<int>());
            if (j.contains("reason")) s += " " + j["reason"].get<std::string>();
        }
        out.push_back(s);
    }
    return out;
}

const std::string created0 =
    R"({"event":"created","function":"Hello","request":0,"environment":0,"init_ms":{"runtime":100.00,"package":0.00,"vpc":0.00,"extensions":0.00,"total":100.00},"max_lifetime_ms":3600000.00})";

}  // namespace

TEST_CASE("replay: a phantom rule by nth fires on the second request only", "[unit]") {
    fixture f;
    f.rule(R"({"name":"lose-2nd","route":"GET /hello","nth":2,"fault":{"kind":"phantom","when":"before"}})");
    const auto i0 = f.call(0);
    f.answer(i0, 150);
    f.request(200);  // phantom before: never invoked
    const auto i2 = f.call(300);
    f.answer(i2, 310);
    const auto lines = f.run();
    REQUIRE(lines.size() == 5);
    CHECK(lines[0] == created0);
    CHECK(lines[1] == R"({"event":"idle","function":"Hello","environment":0,"keep_alive_ms":1000.00})");
    CHECK(lines[2] ==
          R"({"event":"fault","front":"gateway","route":"GET /hello","method":"GET","rule":"lose-2nd","kind":"phantom","k":1,"action":"phantom_before","client":"timeout"})");
    CHECK(lines[3] == R"({"event":"reused","function":"Hello","request":1,"environment":0})");
    CHECK(lines[4] == lines[1]);
}

TEST_CASE("replay: an invocation the replay decided not to make is a divergence", "[unit]") {
    fixture f;
    f.rule(R"({"name":"lose-all","route":"GET /hello","fault":{"kind":"phantom","when":"before"}})");
    f.call(0);  // the live run invoked it: the rule cannot have fired there
    const auto r = replay(f.in, f.rec);
    REQUIRE(r.divergence);
    CHECK_THAT(*r.divergence, Catch::Contains("record line 3") &&
                                  Catch::Contains("decided phantom_before (rule lose-all)"));
    CHECK(r.lines.size() == 1);  // the fault line, then it stopped
}

TEST_CASE("replay: reserved concurrency throttles what overlaps it", "[unit]") {
    pool_limits limits;
    limits.reserved_concurrency = 1;
    fixture f(limits);
    const auto a = f.call(0);
    const auto b = f.call(10);  // while a is busy: throttled
    (void)b;
    f.answer(a, 150);
    const auto c = f.call(200);  // a's environment is idle again: warm
    f.answer(c, 210);
    const auto lines = f.run();
    CHECK(shape(lines) ==
          std::vector<std::string>{"created 0",
                                   "throttled ReservedFunctionConcurrentInvocationLimitExceeded",
                                   "idle 0", "reused 0", "idle 0"});
    CHECK(lines[1] ==
          R"({"event":"throttled","function":"Hello","request":1,"reason":"ReservedFunctionConcurrentInvocationLimitExceeded"})");
}

TEST_CASE("replay: an answer for an invocation the replay throttled is a divergence", "[unit]") {
    pool_limits limits;
    limits.reserved_concurrency = 1;
    fixture f(limits);
    f.call(0);
    const auto b = f.call(10);
    f.answer(b, 20);
    const auto r = replay(f.in, f.rec);
    REQUIRE(r.divergence);
    CHECK_THAT(*r.divergence, Catch::Contains("which the replay throttled"));
}

TEST_CASE("replay: a tick evicts the environment whose keep-alive has passed", "[unit]") {
    fixture f;
    const auto a = f.call(0);
    f.answer(a, 150);
    f.rec.events.emplace_back(recorded_tick{1149.5, "Hello"});  // not yet due: nothing
    f.rec.events.emplace_back(recorded_tick{1150.25, "Hello"});
    const auto b = f.call(2000);  // after the eviction: a cold start on environment 1
    f.answer(b, 2150);
    const auto lines = f.run();
    CHECK(shape(lines) == std::vector<std::string>{"created 0", "idle 0", "evicted 0 keep-alive",
                                                   "created 1", "idle 1"});
}

TEST_CASE("replay: a crash keeps the environment busy until its exit discards it", "[unit]") {
    fixture f;
    const auto a = f.call(0);
    f.answer(a, 120, recorded_handler::outcome::crash);
    const auto b = f.call(125);  // the crashed process has not exited yet: a new environment
    f.rec.events.emplace_back(recorded_exit{130, "Hello", 0, "exited: exit status 3"});
    f.answer(b, 260);
    const auto c = f.call(300);  // warm on environment 1
    f.answer(c, 310);
    const auto lines = f.run();
    CHECK(shape(lines) == std::vector<std::string>{"created 0", "created 1",
                                                   "discarded 0 exited: exit status 3", "idle 1",
                                                   "reused 1", "idle 1"});
}

TEST_CASE("replay: waits at max_environments are placed again as the pool drains them", "[unit]") {
    pool_limits limits;
    limits.max_environments = 1;
    fixture f(limits);
    const auto a = f.call(0);
    const auto b = f.call(5);   // waits
    const auto c = f.call(6);   // waits behind b
    f.answer(a, 150);           // b takes environment 0; c asks again and waits again
    f.answer(b, 160);           // c takes it
    f.answer(c, 170);
    const auto lines = f.run();
    CHECK(shape(lines) == std::vector<std::string>{"created 0", "waited", "waited", "idle 0",
                                                   "reused 0", "waited", "idle 0", "reused 0",
                                                   "idle 0"});
    // Placed again, each keeps its request index.
    CHECK(nlohmann::json::parse(lines[4]).at("request") == 1);
    CHECK(nlohmann::json::parse(lines[5]).at("request") == 2);
    CHECK(nlohmann::json::parse(lines[7]).at("request") == 2);
}

TEST_CASE("replay: provisioned environments serve warm from the start", "[unit]") {
    pool_limits limits;
    limits.provisioned_concurrency = 1;
    fixture f(limits);
    f.rec.events.emplace_back(recorded_provision{0.5, "Hello"});
    const auto a = f.call(10);
    f.answer(a, 20);
    const auto lines = f.run();
    // A provisioned environment is never idle for the keep-alive: no idle line.
    CHECK(shape(lines) == std::vector<std::string>{"created 0", "reused 0"});
    CHECK(nlohmann::json::parse(lines[0]).value("provisioned", false));
}

TEST_CASE("replay: rule changes and the seed take effect where the live run made them", "[unit]") {
    fixture f;
    f.call(0);
    recorded_rules add;
    add.at_ms = 1;
    add.op = "add";
    add.rules = nlohmann::json::parse(
        R"([{"name":"boom","route":"GET /hello","fault":{"kind":"gateway_error","status":503}}])");
    f.rec.events.emplace_back(add);
    f.request(2);
    recorded_rules remove;
    remove.at_ms = 3;
    remove.op = "remove";
    remove.name = "boom";
    f.rec.events.emplace_back(remove);
    f.request(4);  // passes (and is not invoked: the record ends)
    const auto lines = f.run();
    CHECK(shape(lines) == std::vector<std::string>{"created 0", "fault gateway_error k=0"});
}

TEST_CASE("replay: comparing decision logs ignores init_overrun lines", "[unit]") {
    const std::string overrun =
        R"({"event":"init_overrun","function":"Hello","environment":0,"modeled_init_ms":100,"local_init_ms":180,"overrun_ms":80})";
    CHECK_FALSE(compare_decision_logs({"a", overrun, "b"}, {"a", "b"}));
    auto d = compare_decision_logs({"a", overrun, "b"}, {"a", "c"});
    REQUIRE(d);
    CHECK(d->a_line == 3);
    CHECK(d->b_line == 2);
    CHECK(d->a == std::optional<std::string>("b"));
    auto shorter = compare_decision_logs({"a"}, {"a", "b"});
    REQUIRE(shorter);
    CHECK_FALSE(shorter->a);
    CHECK(shorter->b == std::optional<std::string>("b"));
}
