// The admin API: bytes a test (or anything that reaches the port) sends → the server's parser
// → admin::handle, for up to eight requests in a row on one fault decider (the input is
// requests back to back, as on a keep-alive connection), then decisions on every front with
// whatever rules were accepted. Every answer ends in a newline; a JSON one is one object.

#include "emulator/admin/admin_api.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <cstdlib>
#include <string>
#include <vector>

using namespace coldbrew;
using nlohmann::json;
namespace faults = coldbrew::models::faults;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const faults::fault_registry registry = [] {
        faults::fault_registry r;
        faults::register_builtin_faults(r);
        return r;
    }();
    faults::decider decider{registry, 42};
    std::vector<faults::rule> configured;
    telemetry::decision_log log;
    double now = 1000;
    admin::admin_context ctx;
    ctx.faults = &decider;
    ctx.registry = &registry;
    ctx.configured_rules = &configured;
    ctx.decisions = &log;
    ctx.now_ms = [&now] { return now; };
    ctx.request_counters = [] { return json{{"gateway", json::object()}, {"invoke", json::object()}}; };
    ctx.function_counters = [] { return json::object(); };
    ctx.reset_request_counters = [] {};
    ctx.readiness = [] { return json{{"ready", true}}; };

    std::string_view rest = fuzz::as_text(data, size);
    for (int n = 0; n < 8 && !rest.empty(); ++n) {
        std::size_t used = 0;
        auto req = fuzz::parse_request(rest, &used);
        if (!req || used == 0) break;
        rest.remove_prefix(used);
        auto res = admin::handle(*req, ctx);
        if (res.body.empty() || res.body.back() != '\n') std::abort();
        // GET /metrics answers in the Prometheus text format; everything else in JSON.
        if (res.header("Content-Type").value_or("") == "application/json" &&
            !json::parse(res.body, nullptr, false).is_object())
            std::abort();
        now += 250;
    }

    // The accepted rules decide requests: their matchers, selectors, windows and faults run.
    const std::vector<std::pair<std::string, std::string>> headers = {{"x-test", "1"}};
    for (auto where : {faults::front::gateway, faults::front::invoke, faults::front::dependency,
                       faults::front::states}) {
        for (int i = 0; i < 3; ++i) {
            faults::request_facts f;
            f.where = where;
            f.function = "Pay";
            f.function_name = "pay-fn";
            f.route = where == faults::front::dependency ? "redis request" : "POST /pay";
            f.method = "POST";
            f.path = "/pay";
            f.headers = &headers;
            f.dependency = "redis";
            f.state_machine = "Flow";
            f.state = "Charge";
            auto d = decider.decide(f, now);
            decider.finished(d.id);
            now += 10;
        }
    }
    return 0;
}
