// Fitting a what-if to a run record: own work is the handler's time less its synchronous
// calls, injected kills are left out, the most common call sequence wins, arrivals and route
// weights follow the client requests, and the admin API's rule changes carry over.

#include <sstream>
#include <string>

#include "models/faults/faults.hpp"
#include "models/sim/fit.hpp"
#include "tests/catch.hpp"

using namespace coldbrew::models;
using namespace coldbrew::models::sim;

namespace {

run_record read_text(const std::string& body) {
    std::istringstream in(R"({"record":"coldbrew-run","version":1,"seed":7,"time_scale":1,"app":"template.yaml"})"
                          "\n" +
                          body);
    return read_record(in, "run.jsonl");
}

std::string request(int id, double at, const std::string& route, const std::string& fn,
                    const std::string& parent = "null", const std::string& front = "gateway",
                    bool async = false) {
    return R"({"event":"request","id":)" + std::to_string(id) + R"(,"at_ms":)" + std::to_string(at) +
           R"(,"front":")" + front + R"(","route":")" + route + R"(","method":"POST","path":"/x","function":")" +
           fn + R"(","function_name":")" + fn + R"(","headers":[],"parent":)" + parent +
           R"(,"async":)" + (async ? "true" : "false") + "}\n";
}

std::string invoke(int id, double at, const std::string& fn, int req) {
    return R"({"event":"invoke","id":)" + std::to_string(id) + R"(,"at_ms":)" + std::to_string(at) +
           R"(,"function":")" + fn + R"(","request":)" + std::to_string(req) + "}\n";
}

std::string handler(int inv, double at, double duration, const std::string& outcome = "success",
                    double lag = 0) {
    std::string line = R"({"event":"handler","invocation":)" + std::to_string(inv) + R"(,"at_ms":)" +
                       std::to_string(at) + R"(,"delivery_lag_ms":)" + std::to_string(lag) +
                       R"(,"duration_ms":)" + std::to_string(duration) + R"(,"outcome":")" + outcome + "\"";
    if (outcome != "success") line += R"(,"error_type":"Boom")";
    return line + R"(,"response_bytes":0})" + "\n";
}

const fitted_function& function_named(const fit_result& f, const std::string& name) {
    for (const auto& x : f.functions)
        if (x.function == name) return x;
    FAIL("no fitted function " << name);
    throw;
}

}  // namespace

TEST_CASE("fit: a synchronous call's time is not the caller's own work; parallel calls count once", "[unit]") {
    // Api (request 0, invocation 0) runs 100 ms from t=10 to t=110 with its lag of 2 ms; it
    // calls Ledger twice at once (30→70 and 40→80: 50 ms covered) and Notify async (not a wait).
    std::string body = request(0, 9, "POST /pay", "Api") + invoke(0, 10, "Api", 0) +
                       request(1, 30, "Invoke Ledger", "Ledger", "0", "invoke") + invoke(1, 30, "Ledger", 1) +
                       request(2, 40, "Invoke Ledger", "Ledger", "0", "invoke") + invoke(2, 40, "Ledger", 2) +
                       handler(1, 70, 40) + handler(2, 80, 40) +
                       request(3, 90, "Invoke Notify", "Notify", "0", "invoke", true) + invoke(3, 90, "Notify", 3) +
                       handler(3, 95, 5) + handler(0, 110, 98, "success", 2);
    const auto fit = fit_record(read_text(body));
    const auto& api = function_named(fit, "Api");
    CHECK(api.invocations == 1);
    // 2 ms lag + 98 ms duration - 50 ms covered by Ledger's two overlapping calls.
    CHECK(api.own_p50_ms == Approx(50.0));
    CHECK(api.latency_ms.type() == distribution::kind::fixed);
    REQUIRE(api.calls.size() == 3);
    CHECK(api.calls[0] == fitted_call{"Ledger", false, false});
    CHECK(api.calls[1] == fitted_call{"Ledger", false, false});
    CHECK(api.calls[2] == fitted_call{"Notify", false, true});
    CHECK(function_named(fit, "Ledger").own_p50_ms == Approx(40.0));
    // Only request 0 came from a client.
    CHECK(fit.client_requests == 1);
    REQUIRE(fit.routes.size() == 1);
    CHECK(fit.routes[0].route == "POST /pay");
}

TEST_CASE("fit: errors and crashes are the error rate; an injected kill is left out", "[unit]") {
    std::string body;
    int id = 0;
    // 10 invocations: 8 successes, 1 handler error, 1 crash; then one more crash whose process
    // exit names an injected fault.
    for (; id < 10; ++id) {
        const std::string outcome = id == 3 ? "error" : id == 6 ? "crash" : "success";
        body += request(id, id * 100.0, "POST /pay", "Api") + invoke(id, id * 100.0, "Api", id) +
                handler(id, id * 100.0 + 10, 10, outcome);
        if (outcome == "crash")
            body += R"({"event":"exit","at_ms":)" + std::to_string(id * 100.0 + 11) +
                    R"(,"function":"Api","environment":0,"reason":"exited: exit status 1"})" + "\n";
    }
    body += request(id, id * 100.0, "POST /pay", "Api") + invoke(id, id * 100.0, "Api", id) +
            handler(id, id * 100.0 + 10, 10, "crash") +
            R"({"event":"exit","at_ms":1012,"function":"Api","environment":1,"reason":"injected function error"})" + "\n";
    const auto fit = fit_record(read_text(body));
    const auto& api = function_named(fit, "Api");
    CHECK(api.invocations == 10);
    CHECK(api.injected == 1);
    CHECK(api.errors == 1);
    CHECK(api.crashes == 1);
    CHECK(api.error_rate == Approx(0.2));
    // Evenly spaced clients: 11 requests, 100 ms apart.
    CHECK(fit.client_requests == 11);
    CHECK(fit.span_ms == Approx(1000.0));
    CHECK(fit.rate_per_s == Approx(10.0));
    CHECK(fit.gap_cv == Approx(0.0).margin(1e-9));
    CHECK_FALSE(fit.poisson);
}

TEST_CASE("fit: the most common call sequence is the function's, with its share", "[unit]") {
    std::string body;
    int req = 0, inv = 0;
    for (int i = 0; i < 4; ++i) {
        const int parent = req;
        const double t = i * 100.0;
        body += request(req++, t, "POST /pay", "Api") + invoke(inv++, t, "Api", parent);
        const int parent_inv = inv - 1;
        // Three of four invocations call Ledger once; one calls nothing.
        if (i != 2) {
            body += request(req, t + 1, "Invoke Ledger", "Ledger", std::to_string(parent), "invoke") +
                    invoke(inv, t + 1, "Ledger", req) + handler(inv, t + 3, 2);
            ++req;
            ++inv;
        }
        body += handler(parent_inv, t + 5, 5);
    }
    const auto fit = fit_record(read_text(body));
    const auto& api = function_named(fit, "Api");
    REQUIRE(api.calls.size() == 1);
    CHECK(api.calls[0].target == "Ledger");
    CHECK(api.calls_share == Approx(0.75));
    // The client mix: only the four Api requests; Ledger's came from inside Api.
    CHECK(fit.client_requests == 4);
}

TEST_CASE("fit: an arrival process with irregular gaps is fitted as poisson", "[unit]") {
    std::string body;
    const double times[] = {0, 1, 2, 50, 51, 120, 300, 301, 302, 303, 700};
    int id = 0;
    for (double t : times) {
        body += request(id, t, id % 3 == 0 ? "GET /a" : "GET /b", "Api") + invoke(id, t, "Api", id) +
                handler(id, t + 0.5, 0.5);
        ++id;
    }
    const auto fit = fit_record(read_text(body));
    CHECK(fit.poisson);
    CHECK(fit.gap_cv > 0.5);
    REQUIRE(fit.routes.size() == 2);
    CHECK(fit.routes[0].route == "GET /a");
    CHECK(fit.routes[0].requests == 4);
    CHECK(fit.routes[1].requests == 7);
}

TEST_CASE("fit: latency keeps the sample's percentiles and reads back from its text", "[unit]") {
    std::vector<double> sample;
    for (int i = 1; i <= 1000; ++i) sample.push_back(i * 0.1);  // 0.1 … 100 ms
    const auto d = fit_latency(sample);
    REQUIRE(d.type() == distribution::kind::percentiles);
    std::sort(sample.begin(), sample.end());
    for (double q : {0.10, 0.50, 0.90, 0.99}) CHECK(d.quantile(q) == Approx(sample_quantile(sample, q)).epsilon(1e-3));
    CHECK(parse_distribution(d.to_string()).to_string() == d.to_string());
    // One distinct value: fixed; zeros and negatives count as 0.
    CHECK(fit_latency({4, 4, 4}).to_string() == "fixed(4ms)");
    CHECK(fit_latency({-1, 0, 0}).type() == distribution::kind::fixed);
    CHECK(sample_quantile({1, 2, 3, 4}, 0.5) == Approx(2.5));
}

TEST_CASE("fit: times are real: a record made under --time-scale is scaled back", "[unit]") {
    std::string body;
    for (int id = 0; id < 5; ++id)
        body += request(id, id * 1000.0, "POST /pay", "Api") + invoke(id, id * 1000.0, "Api", id) +
                handler(id, id * 1000.0 + 500, 500);
    std::istringstream in(R"({"record":"coldbrew-run","version":1,"seed":7,"time_scale":0.01,"app":"t.yaml"})"
                          "\n" +
                          body);
    const auto fit = fit_record(read_record(in, "run.jsonl"));
    // 500 modeled ms of handler at time_scale 0.01 is 5 real ms; a request every 1,000
    // modeled ms is one every 10 real ms.
    CHECK(function_named(fit, "Api").own_p50_ms == Approx(5.0));
    CHECK(fit.span_ms == Approx(40.0));
    CHECK(fit.rate_per_s == Approx(100.0));
}

TEST_CASE("fit: the admin API's rule and seed changes give the rules in effect at the end", "[unit]") {
    faults::fault_registry kinds;
    faults::register_builtin_faults(kinds);
    std::vector<faults::rule> initial = {faults::parse_rule(
        nlohmann::json::parse(R"({"name":"boot","probability":0.1,"fault":{"kind":"throttle"}})"), kinds, "r")};
    const std::string add =
        R"({"event":"rules","at_ms":5,"op":"add","rules":[{"name":"lose","probability":0.2,"fault":{"kind":"phantom"}}]})";
    const std::string remove = R"({"event":"rules","at_ms":6,"op":"remove","name":"boot"})";
    const std::string seed = R"({"event":"rules","at_ms":7,"op":"seed","seed":99})";
    auto names = [](const fitted_rules& f) {
        std::vector<std::string> out;
        for (const auto& r : f.rules) out.push_back(r.name);
        return out;
    };
    auto fr = rules_at_end(initial, read_text(add + "\n" + remove + "\n" + seed + "\n"), kinds);
    CHECK(names(fr) == std::vector<std::string>{"lose"});
    CHECK(fr.seed == 99);
    CHECK(fr.changes == 3);
    const std::string restore = R"({"event":"rules","at_ms":8,"op":"restore"})";
    fr = rules_at_end(initial, read_text(add + "\n" + restore + "\n"), kinds);
    CHECK(names(fr) == std::vector<std::string>{"boot"});
    CHECK(fr.seed == 7);
}
