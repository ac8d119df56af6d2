#pragma once
// Fault rules and the one decision point every request goes through.
//
// A rule = matchers (function, route, method, headers, which request by index, a probability,
// a time window) + one fault (a kind from the registry with its immutable config). The
// decision point checks, in Envoy's fault-filter order: matchers, then the probability
// (through the counter-based random source), then the cap on simultaneously active faults;
// the first rule that fires gives the plan, a plain value the emulator acts on. Nothing here
// touches a socket, a process or a clock: time comes in as an argument.
//
// Determinism: the draw for the k-th request a rule matched on a route is
// random_source::uniform("fault", "<rule>|<route>", k) — a function of (seed, rule, route, k)
// only. Same seed + same request sequence ⇒ same decisions, byte-identical decision lines.
//
// Rule JSON (the admin API takes it as is; coldbrew.yaml `faults.rules` items are the same
// shape in YAML). Every key but `fault` is optional; unknown keys are errors.
//   {
//     "name": "lose-third-confirm",   // unique; default "rule-<n>" (n counts rules added)
//     "front": "gateway" | "invoke" | "any",          // default "any"
//     "function": "Payments",         // logical id or deployed FunctionName
//     "route": "POST /v1/payment_intents/{id}/confirm",  // the route key as declared
//     "method": "POST",               // request method, case-insensitive
//     "path": "/v1/payment_intents/*",  // request path; '*' matches any run of characters
//     "headers": {"x-scenario": "retry", "x-present": true},  // value, or true = present
//     "nth": 3,                       // only the 3rd matching request (1-based) …
//     "every_nth": 5,                 // … or every 5th (5th, 10th, …) …
//     "first": 2,                     // … or the first 2 (at most one of the three)
//     "probability": 0.25,            // 0..1 (also "25%"); default 1
//     "window": {"from": "10s", "until": "1min"},  // wall time since the rule was added
//     "fault": {"kind": "phantom", …kind's own keys…}
//   }
// Counting: k is the index (0-based) of the request among those that passed the rule's
// function/route/method/path/header/window matchers, per route; nth/every_nth/first and the
// probability draw use it. On the invoke front the route key is "Invoke <logical id>".

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/distribution/distribution.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::models::faults {

// A bad rule. path() is the key path inside the rule ("fault.status", "nth", "headers.x");
// "" for the rule itself. what() is "<path>: <message>" (or the message when path is empty).
class rule_error : public std::runtime_error {
public:
    rule_error(std::string path, const std::string& message);
    const std::string& path() const noexcept { return path_; }
    const std::string& message() const noexcept { return message_; }

private:
    std::string path_;
    std::string message_;
};

enum class front { gateway, invoke };
std::string_view to_string(front f);

// What the client of a lost request sees (phantoms).
enum class client_outcome {
    timeout,  // the connection hangs until the integration timeout, then the gateway's
              // timeout error (REST 504, HTTP API 503): the AWS default
    hang,     // no answer at all until the client gives up
    reset,    // the connection is reset (TCP RST)
};
std::string_view to_string(client_outcome c);

// The plan for one request: a value the emulator executes. `delay_ms` (modeled, before
// time_scale) is waited first, whatever the action.
struct plan {
    enum class action {
        pass,             // invoke and answer normally
        phantom_before,   // never invoke; the client sees `client`
        phantom_after,    // invoke; the answer is dropped; the client sees `client`
        gateway_error,    // answer `status` with AWS's body for the front; no invocation
        function_exit,    // invoke, kill the execution environment `kill_after_ms` (modeled)
                          // after delivery: Runtime.ExitError, as a crashing handler gives
        handler_error,    // answer as a handler error {errorType, errorMessage}; no invocation
        throttle,         // answer Lambda's throttle (Reason `throttle_reason`); no invocation
        reset,            // reset the connection; no invocation
        slow_response,    // invoke; write the response at `bytes_per_s`
    };
    action act = action::pass;
    double delay_ms = 0;
    client_outcome client = client_outcome::timeout;
    int status = 0;                 // gateway_error: 429, 500, 502, 503 or 504
    std::string error_type;         // handler_error
    std::string error_message;      // handler_error
    std::string throttle_reason;    // throttle
    double kill_after_ms = 0;       // function_exit
    double bytes_per_s = 0;         // slow_response, > 0

    bool injects() const noexcept { return act != action::pass || delay_ms > 0; }
};
std::string_view to_string(plan::action a);

// Everything a kind may use to fill a plan for one request.
struct apply_context {
    const random_source& rng;
    std::string_view draw_key;  // "<rule>|<route>": the key of every draw for this request
    std::uint64_t k;            // the request's index for this rule and route
    front where;
};

// One kind's parsed, immutable configuration. Shared between the rule set and any request
// in flight.
class fault_config {
public:
    virtual ~fault_config() = default;
    // Fills `p` (already reset to pass) for one request. Draws only through ctx.rng with
    // stream "fault-<kind>" and key ctx.draw_key, index ctx.k.
    virtual void apply(const apply_context& ctx, plan& p) const = 0;
    // The canonical form, kind included: {"kind":"delay","duration":"fixed(300ms)"}.
    // parse(to_json()) gives an equal config.
    virtual nlohmann::json to_json() const = 0;
    // The kinds it may produce, for the `up` banner: "phantom after, client sees timeout".
    virtual std::string describe() const = 0;
};

// parse: reads the rule's "fault" object (its "kind" key already checked); throws
// rule_error with paths under "fault." on anything wrong or unknown.
using fault_parser = std::shared_ptr<const fault_config> (*)(const nlohmann::json& fault);

struct fault_kind {
    std::string name;     // "phantom"
    std::string summary;  // one line: what it does, for docs and errors
    fault_parser parse = nullptr;
};

// Kinds by name. Built once in main (or a test) and passed in; adding a kind is one file
// with its parse/apply and one line in register_builtin_faults.
class fault_registry {
public:
    // Throws std::logic_error on a duplicate name.
    void add(fault_kind kind);
    const fault_kind* find(std::string_view name) const;
    std::vector<std::string> names() const;  // sorted

private:
    std::map<std::string, fault_kind, std::less<>> kinds_;
};

// phantom, delay, gateway_error, function_error, throttle, reset, slow_response.
void register_builtin_faults(fault_registry& registry);

// ---- rules -----------------------------------------------------------------------------

enum class index_selector { every, nth, every_nth, first };

struct rule {
    std::string name;
    std::optional<front> only_front;
    std::string function;  // "" = any
    std::string route;     // "" = any; compared exactly to request_facts::route
    std::string method;    // "" = any; upper-cased
    std::string path;      // "" = any; glob with '*'
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;  // lower-case
                                                                             // name; nullopt
                                                                             // = present
    index_selector selector = index_selector::every;
    std::uint64_t selector_n = 0;
    double probability = 1.0;
    std::optional<double> window_from_ms, window_until_ms;
    std::string kind;  // registry name
    std::shared_ptr<const fault_config> fault;

    // The canonical JSON (defaults omitted, `fault` from to_json()); parse_rule of it gives
    // the same rule.
    nlohmann::json to_json() const;
    // One line for the `up` banner and logs: "lose-third: POST /pay, nth 3 → phantom after …".
    std::string describe() const;
};

// Parses one rule. `default_name` is used when it has no "name". Throws rule_error.
rule parse_rule(const nlohmann::json& j, const fault_registry& registry,
                const std::string& default_name);

// A phantom rule for an SLA: fires with probability 1 - sla_percent/100 on every request of
// `where`; `after_share` in [0, 1] of them are phantom-after, the rest phantom-before.
// Named "sla-<front>". Throws rule_error when sla_percent is outside (0, 100].
rule sla_rule(front where, double sla_percent, double after_share, client_outcome client,
              const fault_registry& registry);

// ---- the decision point ----------------------------------------------------------------

struct request_facts {
    front where = front::gateway;
    std::string_view function;       // logical id
    std::string_view function_name;  // deployed FunctionName (also matches `function`)
    std::string_view route;          // route key: "POST /pets/{id}", "$default", "Invoke Pay"
    std::string_view method;
    std::string_view path;
    const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // may be null
};

struct decision {
    plan p;                    // pass when nothing fired
    std::string rule;          // the rule that fired; "" when none
    std::string kind;          // its kind
    std::uint64_t k = 0;       // that rule's index for this request
    bool overflow = false;     // a rule fired but the cap was reached: passed instead
    std::uint64_t id = 0;      // token for finished(); 0 when nothing is active
    // {"event":"fault","front":"gateway","route":"POST /pay","method":"POST","rule":"r",
    //  "kind":"phantom","k":2,"action":"phantom_after","client":"timeout"} — no time, stable
    // key order; then the action's detail ("status", "reason", "error_type", "kill_after_ms",
    // "bytes_per_s"), "delay_ms" when > 0 and "overflow":true when the cap suppressed it.
    // Empty when no rule fired (plain pass, nothing to log).
    std::string log_line;
};

struct fault_counters {
    std::map<std::string, std::uint64_t> by_kind;    // fired, by kind name
    std::map<std::string, std::uint64_t> by_action;  // fired, by plan::action name
    std::map<std::string, std::uint64_t> by_rule;    // fired, by rule name
    std::uint64_t overflow = 0;  // fired but suppressed by max_active_faults
    std::uint64_t decisions = 0; // requests decided
    std::size_t active = 0;      // faults in effect now
};

// Owns the rule set, the per-(rule, route) request counts, the active-fault count and the
// counters. Single-threaded (the loop's thread).
class decider {
public:
    decider(const fault_registry& registry, std::uint64_t seed);

    // Replaces every rule at once (config at start, admin "replace"). Throws rule_error
    // naming the rule's index ("[2].nth") and leaves the rules untouched on any error;
    // duplicate names are an error. Counting restarts for the new rules; windows start now.
    void set_rules(std::vector<rule> rules, double now_ms);
    // Adds rules after the existing ones, all or nothing (a duplicate name is an error).
    void add_rules(std::vector<rule> rules, double now_ms);
    // false when no rule has that name.
    bool remove_rule(std::string_view name);
    void clear_rules();
    const std::vector<rule>& rules() const noexcept { return rules_; }
    // The name a rule without one gets: "rule-<n>", n counting every rule ever added.
    std::string next_default_name() const;

    // nullopt = unlimited (the default, as Envoy's max_active_faults).
    void set_max_active(std::optional<std::size_t> cap) { max_active_ = cap; }
    std::optional<std::size_t> max_active() const noexcept { return max_active_; }

    // A new seed for fault draws; restarts counting (k = 0 for every rule and route).
    void set_seed(std::uint64_t seed);
    std::uint64_t seed() const noexcept { return rng_.seed(); }
    // Zeroes the counters and restarts counting; rules and active faults stay.
    void reset();

    // The decision for one request at `now_ms` (wall ms, same clock as set_rules). When the
    // plan injects, the fault counts as active until finished(d.id).
    decision decide(const request_facts& facts, double now_ms);
    // The fault of `id` is over (answered, reset, or its client went away). Idempotent.
    void finished(std::uint64_t id);

    const fault_counters& counters() const noexcept { return counters_; }

private:
    const fault_registry& registry_;
    random_source rng_;
    std::vector<rule> rules_;
    std::vector<double> added_ms_;  // per rule, for windows
    std::map<std::string, std::uint64_t, std::less<>> seen_;  // "<rule>|<route>" → count
    std::optional<std::size_t> max_active_;
    std::map<std::uint64_t, bool> active_;
    std::uint64_t next_id_ = 1;
    std::uint64_t rules_ever_ = 0;
    fault_counters counters_;
};

}  // namespace coldbrew::models::faults
