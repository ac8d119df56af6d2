#pragma once
// The admin API (default 127.0.0.1:3002): what a test drives at run time, in the spirit of
// Toxiproxy's HTTP API. JSON in, JSON out; a bad rule is a 4xx naming the key, and a request
// that fails changes nothing (a batch of rules is added all or nothing).
//
//   GET    /faults              {"seed":N,"max_active_faults":N|null,"rules":[rule…]}
//   POST   /faults              a rule object or an array of them → 201 {"rules":[added…]},
//                               plus "warnings":[…] for rules naming no route or function
//   PUT    /faults              {"rules":[…],"max_active_faults":N|null} or an array:
//                               replaces every rule (an absent max_active_faults keeps the
//                               cap) → 200 {"rules":[…],"max_active_faults":N|null}
//   DELETE /faults              removes every rule → 200 {"removed":n}
//   GET    /faults/{name}       200 rule | 404
//   DELETE /faults/{name}       200 {"removed":1} | 404
//   GET    /seed                {"seed":N}
//   PUT    /seed                {"seed":N} (N an unsigned 64-bit integer, or its decimal
//                               string) → 200; restarts every rule's request counting
//   GET    /counters            {"requests":{"gateway":{…},"invoke":{…}},
//                                "faults":{"by_kind":{},"by_action":{},"by_rule":{},
//                                          "by_front":{},"missed":n,"missed_by_kind":{},
//                                          "overflow":n,"active":n,"decisions":n},
//                               (by_*: faults injected; missed: those taken back because
//                               the handler answered before an injected kill)
//                                "functions":{"<name>":{pool counters}},
//                                "dependencies":{"<dependency>":{proxy counters}}}
//   POST   /counters/reset      zeroes request and fault counters, restarts counting → 200
//   GET    /decisions?since=N   {"next":M,"dropped":D,"decisions":[line objects…]}: decision-
//                               log lines from number N (0-based, default 0) on, oldest
//                               first, at most 10,000 per call; `next` is the number to ask
//                               for next; `dropped` counts lines that left the buffer
//   GET    /proxies             {"<dependency>":{"upstream":"h:p","port":N,…counters…}}:
//                               the dependency proxies (emulator/proxy/proxy.hpp)
//   GET    /proxies/{name}      one of them | 404
//   GET    /metrics             every counter above, request counts and latency histograms,
//                               Init Durations, environments busy/idle, in the Prometheus
//                               text format 0.0.4 (text/plain; version=0.0.4; charset=utf-8;
//                               names in emulator/telemetry/metrics.hpp)
//   GET    /ready               200 {"ready":true,"gateway":"http://…",…}: every listener is
//                               open, provisioned environments started and standby ones
//                               settled (the moment `up` prints its listening lines; the same
//                               addresses `up --ready-file` writes); before that, and once
//                               shutting down, 503 {"ready":false,"message":"…"}
//   POST   /reset               back to the start: the rules coldbrew.yaml configured, zeroed
//                               counters, counting restarted (seed kept) → 200
//
// Errors: 400 {"message":"…","path":"[1].fault.status"} for bad JSON or a bad rule (path is
// the key path inside the body; "" for the body itself), 404 {"message":"…"} for an unknown
// rule or endpoint, 405 for a known endpoint with another method, 409 for a duplicate rule
// name, 415 when a body is sent with a Content-Type other than application/json. A missing
// Content-Type, and application/x-www-form-urlencoded (what `curl -d` labels any body), are
// read as JSON too.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/http/access.hpp"
#include "emulator/http/message.hpp"
#include "emulator/telemetry/decision_log.hpp"
#include "emulator/telemetry/request_stats.hpp"
#include "emulator/telemetry/run_recorder.hpp"
#include "models/faults/faults.hpp"

namespace coldbrew::admin {

// How requests ended, per front end (architecture principle 6): exactly one per request.
struct request_outcomes {
    // Answered as AWS would without a fault: the function's result, or the gateway's or
    // Lambda's own answer that is not the handler's doing (no route, a modeled throttle, a
    // payload over the limit, coldbrew shutting down).
    std::uint64_t served = 0;
    std::uint64_t injected_fault = 0;  // a fault rule fired (delay and slow_response included)
    // The handler failed: function error, crash, timeout, a malformed proxy response, or an
    // integration timeout because the handler was slow.
    std::uint64_t handler_error = 0;
    std::uint64_t emulator_error = 0;  // coldbrew could not serve it (a bug: expected 0)
    nlohmann::json to_json() const;
};

// What the handler reads and changes; all owned by the caller (the app), all on the loop.
struct admin_context {
    models::faults::decider* faults = nullptr;
    const models::faults::fault_registry* registry = nullptr;
    // The rules coldbrew.yaml configured (and the SLA rules), for POST /reset.
    const std::vector<models::faults::rule>* configured_rules = nullptr;
    std::optional<std::size_t> configured_max_active;
    // Sentences about a rule that names nothing in the stack (it would never fire); added
    // and replaced rules' warnings are returned as "warnings":[…]. May be empty.
    std::function<std::vector<std::string>(const models::faults::rule&)> rule_warnings;
    const telemetry::decision_log* decisions = nullptr;  // its recent() buffer
    // Null unless the run is recorded: every change that succeeded (rules, cap, seed, resets).
    telemetry::run_recorder* recorder = nullptr;
    std::function<double()> now_ms;                     // wall ms, the decider's clock
    // The request outcome counters, and how to zero them.
    std::function<nlohmann::json()> request_counters;   // {"gateway":{…},"invoke":{…}}
    std::function<nlohmann::json()> function_counters;  // {"<name>":{…}}
    // {"<state machine>":{"started","succeeded","failed","timed_out","aborted",
    //  "duplicate_starts","retries","caught","state_transitions"}}; may be empty.
    std::function<nlohmann::json()> state_machine_counters;
    std::function<void()> reset_request_counters;
    // The dependency proxies' counters, {"<dependency>": {…}} (GET /proxies, and
    // "dependencies" in GET /counters); empty when the stack declares none.
    std::function<nlohmann::json()> proxy_counters;
    // GET /ready: {"ready":bool,…} as the app sees it; null: never ready (503).
    std::function<nlohmann::json()> readiness;
    // Every client request's record and the Init Durations (GET /metrics); may be null.
    const telemetry::request_stats* request_stats = nullptr;
    // Who may call (emulator/http/access.hpp), checked before anything else; null: anyone
    // (unit tests of the endpoints). A refusal is 403 {"message":"…"} with x-amzn-ErrorType
    // AccessDeniedException, or 401 with WWW-Authenticate: Bearer when the token is missing
    // (RFC 6750 §3), as API Gateway answers a missing identity source with 401.
    const http::access_policy* access = nullptr;
};

// Answers one admin request. Never throws.
http::response handle(const http::request& req, admin_context& ctx);

}  // namespace coldbrew::admin
