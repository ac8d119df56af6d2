// The run record: what is written reads back equal, byte for byte, and a malformed file is
// refused at its line with the key named.

#include <sstream>
#include <string>

#include "models/sim/record.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models::sim;

namespace {

std::string write_all(const run_record& r) {
    std::string out = to_json_line(r.header) + "\n";
    for (const auto& e : r.events) out += to_json_line(e) + "\n";
    return out;
}

run_record read_text(const std::string& text) {
    std::istringstream in(text);
    return read_record(in, "run.jsonl");
}

std::string header() { return R"({"record":"coldbrew-run","version":1,"seed":7,"time_scale":0.01,"app":"template.yaml"})"; }

}  // namespace

TEST_CASE("record: every event kind round-trips to the same bytes", "[unit]") {
    run_record r;
    r.header.seed = 42;
    r.header.time_scale = 0.5;
    r.header.app = "examples/payments/template.yaml";
    r.header.cpu_limited = true;
    recorded_request a;
    a.id = 0;
    a.at_ms = 12.125;
    a.front = "gateway";
    a.route = "POST /pay";
    a.method = "POST";
    a.path = "/pay";
    a.function = "Pay";
    a.function_name = "pay-fn";
    a.headers = {{"idempotency-key", "k1"}};
    r.events.emplace_back(a);
    recorded_request b;
    b.id = 1;
    b.at_ms = 13.0 / 3.0 + 12.125;  // not a short decimal: must survive exactly
    b.front = "states";
    b.route = "Checkout Charge";
    b.function = "Charge";
    b.state_machine = "Checkout";
    b.state_machine_name = "checkout-sm";
    b.state = "Charge";
    b.state_path = "Charge";
    b.parent = 0;
    b.async = true;
    r.events.emplace_back(b);
    recorded_request dep;
    dep.id = 2;
    dep.at_ms = 16.5;
    dep.front = "dependency";
    dep.route = "redis request";
    dep.function = "Charge";
    dep.dependency = "redis";
    dep.on = "request";
    r.events.emplace_back(dep);
    recorded_request auth;
    auth.id = 3;
    auth.at_ms = 16.6;
    auth.front = "gateway";
    auth.route = "POST /pay";
    auth.function = "Auth";
    auth.authorizer = true;
    r.events.emplace_back(auth);
    r.events.emplace_back(recorded_invoke{0, 17, "Charge", 1});
    r.events.emplace_back(recorded_invoke{1, 17.5, "Pay", std::nullopt});
    recorded_handler h;
    h.invocation = 0;
    h.at_ms = 18.0 + 1.0 / 3.0;
    h.delivery_lag_ms = 0.25;
    h.duration_ms = 1.0 / 7.0;
    h.cpu_ms = 1.0 / 9.0;
    h.result = recorded_handler::outcome::crash;
    h.error_type = "Runtime.ExitError";
    h.response_bytes = 17;
    r.events.emplace_back(h);
    r.events.emplace_back(recorded_exit{19, "Charge", 3, "exited: exit status 3"});
    r.events.emplace_back(recorded_end{19.5, 1});
    r.events.emplace_back(recorded_provision{20, "Pay"});
    r.events.emplace_back(recorded_tick{360000.5, "Pay"});
    recorded_rules rules;
    rules.at_ms = 400000;
    rules.op = "add";
    rules.rules = nlohmann::json::parse(R"([{"name":"x","fault":{"kind":"phantom"}}])");
    r.events.emplace_back(rules);
    recorded_rules replace;
    replace.at_ms = 400001;
    replace.op = "replace";
    replace.rules = nlohmann::json::array();
    replace.max_active_faults.emplace(std::nullopt);
    r.events.emplace_back(replace);
    recorded_rules remove;
    remove.at_ms = 400002;
    remove.op = "remove";
    remove.name = "x";
    r.events.emplace_back(remove);
    recorded_rules seed;
    seed.at_ms = 400003;
    seed.op = "seed";
    seed.seed = 18446744073709551615ull;
    r.events.emplace_back(seed);
    r.events.emplace_back(recorded_stop{500000, "Pay"});

    const std::string text = write_all(r);
    const run_record back = read_text(text);
    CHECK(write_all(back) == text);
    REQUIRE(back.events.size() == r.events.size());
    const auto& b2 = std::get<recorded_request>(back.events[1]);
    CHECK(b2.at_ms == b.at_ms);
    CHECK(b2.parent == std::optional<std::uint64_t>(0));
    CHECK(b2.state_path == "Charge");
    CHECK(std::get<recorded_request>(back.events[2]).on == "request");
    CHECK(std::get<recorded_request>(back.events[3]).authorizer);
    CHECK(std::get<recorded_invoke>(back.events[4]).request == std::optional<std::uint64_t>(1));
    CHECK_FALSE(std::get<recorded_invoke>(back.events[5]).request);
    const auto& h2 = std::get<recorded_handler>(back.events[6]);
    CHECK(h2.at_ms == h.at_ms);
    CHECK(h2.duration_ms == h.duration_ms);
    CHECK(h2.cpu_ms == h.cpu_ms);
    CHECK(back.header.cpu_limited);
    CHECK(h2.result == recorded_handler::outcome::crash);
    CHECK(std::get<recorded_exit>(back.events[7]).reason == "exited: exit status 3");
    const auto& rep = std::get<recorded_rules>(back.events[12]);
    REQUIRE(rep.max_active_faults);
    CHECK_FALSE(*rep.max_active_faults);
    CHECK(std::get<recorded_rules>(back.events[14]).seed == 18446744073709551615ull);
    CHECK(back.header.app == r.header.app);
}

TEST_CASE("record: malformed files are refused at the line, naming the key", "[unit]") {
    auto refused = [](const std::string& text) -> std::string {
        try {
            read_text(text);
        } catch (const record_error& e) {
            return e.what();
        }
        return "accepted";
    };
    CHECK(refused("") == "run.jsonl:0: empty file: not a coldbrew run record");
    CHECK_THAT(refused(R"({"event":"tick","at_ms":1,"function":"F"})"),
               Catch::Contains("run.jsonl:1: not a coldbrew run record"));
    CHECK_THAT(refused(R"({"record":"coldbrew-run","version":2,"seed":1,"time_scale":1})"),
               Catch::Contains("record version 2"));
    CHECK_THAT(refused(header() + "\nnot json\n"), Catch::Contains("run.jsonl:2: not a JSON object"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"tick","at_ms":1,"function":"F","extra":1})"),
               Catch::Contains("run.jsonl:2: unknown key \"extra\""));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"handler","invocation":0,"at_ms":0,"delivery_lag_ms":0,"duration_ms":1,"outcome":"success"})"),
               Catch::Contains("not recorded before it"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"invoke","id":0,"at_ms":0,"function":"F","request":0})"),
               Catch::Contains("\"request\" must be the id of an earlier request"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"rules","at_ms":0,"op":"remove"})"),
               Catch::Contains("missing \"name\""));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"end","at_ms":0,"request":4})"),
               Catch::Contains("not recorded before it"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"request","id":1,"at_ms":0,"front":"gateway","route":"$default"})" +
                       "\n" + R"({"event":"request","id":1,"at_ms":0,"front":"gateway","route":"$default"})"),
               Catch::Contains("run.jsonl:3: request id 1 out of order"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"tick","at_ms":5,"function":"F"})" + "\n" +
                       R"({"event":"tick","at_ms":4,"function":"F"})"),
               Catch::Contains("run.jsonl:3: at_ms 4.000000 is before"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"request","id":0,"at_ms":0,"front":"sqs","route":"x"})"),
               Catch::Contains("\"front\" must be gateway, invoke, states or dependency"));
    CHECK_THAT(refused(header() + "\n" + R"({"event":"request","id":0,"at_ms":-1,"front":"invoke","route":"x"})"),
               Catch::Contains("\"at_ms\" must be a number of milliseconds >= 0"));
}
