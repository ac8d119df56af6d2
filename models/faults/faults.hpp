#pragma once
// Fault rules and the one decision point every request goes through.
//
// Four fronts decide here: "gateway" (an HTTP request to an API Gateway route), "invoke"
// (a Lambda Invoke API call), "dependency" (a connection to, or a request turn on, a
// dependency the handlers reach through a coldbrew proxy: Redis, Postgres, an HTTP store) and
// "states" (a Step Functions Task state's call to a function or a service: the hop between a
// state machine and what it runs).
//
// A rule = matchers (front, function, route, method, headers, dependency and phase, which
// request by index, a probability, a time window) + one fault (a kind from the registry with
// its immutable config). The decision point checks, in Envoy's fault-filter order: matchers,
// then the probability (through the counter-based random source), then the cap on
// simultaneously active faults; the first rule that fires gives the plan, a plain value the
// emulator acts on. Nothing here touches a socket, a process or a clock: time comes in as an
// argument.
//
// Determinism: the draw for the k-th request a rule matched on a route is
// random_source::uniform("fault", "<rule>|<route>", k) — a function of (seed, rule, route, k)
// only. Same seed + same request sequence ⇒ same decisions, byte-identical decision lines.
//
// Rule JSON (the admin API takes it as is; coldbrew.yaml `faults.rules` items are the same
// shape in YAML). Every key but `fault` is optional; unknown keys are errors.
//   {
//     "name": "lose-third-confirm",   // unique; default "rule-<n>" (n counts rules added)
//     "front": "gateway" | "invoke" | "dependency" | "states" | "any",   // default "any"
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
//     "dependency": "redis",          // a dependency's name; implies "front": "dependency"
//                                     // (with "gateway" or "invoke" it is an error at "front")
//     "on": "connect" | "request",    // dependency front only (else an error at "on");
//                                     // default both phases ("request" with refuse is an
//                                     // error: refuse decides connections only)
//     "state_machine": "Checkout",    // states front only: the machine's logical id or name
//     "state": "Charge",              // states front only: the Task's name, or its path
//                                     // ("Each/Charge" inside a Map or Parallel)
//     "fault": {"kind": "phantom", …kind's own keys…}
//   }
// A rule with "function" and no "front" matches that function's invocations on every front
// where its kind applies, Task invocations from a state machine included; "front": "invoke"
// keeps it to the Invoke API. "state_machine" and "state" match only the states front (with
// another "front" they are an error at that key).
// An API Gateway Lambda authorizer is decided apart, before its route (request_facts::
// authorizer): only a rule naming the authorizer's function fires there.
// Counting: k is the index (0-based) of the request among those that passed the rule's
// function/route/method/path/header/dependency/window matchers, per route; nth/every_nth/first
// and the probability draw use it. On the invoke front the route key is "Invoke <logical id>";
// on the dependency front it is "<dependency> <connect|request>" ("redis request"), so a
// dependency's connections and its request turns are counted apart, and `function` is the
// logical id of the function whose execution environment opened the connection ("" for a
// client outside any function). Method, path and headers are empty there. On the states front
// the route key is "<state machine> <state>" ("Checkout Charge"), `function` the logical id of
// the function a Lambda Task invokes ("" for other service integrations), and the method and
// path those of the synthetic Invoke request ("POST", "/2015-03-31/functions/<name>/
// invocations"); a Task's retries are new requests (k advances on each attempt).
//
// Kinds and fronts: each kind lists the fronts it applies to (fault_kind::fronts).
//   phantom, gateway_error, function_error, throttle   gateway, invoke, states
//   delay, reset                                       gateway, invoke, dependency, states
//   slow_response                                      gateway, invoke, dependency
//   refuse (connections only), hang                    dependency
// A rule whose front (given, or implied by "dependency") is not one of its kind's is an error
// at "fault.kind". A rule for any front simply never fires where its kind does not apply.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
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

enum class front { gateway, invoke, dependency, states };
std::string_view to_string(front f);  // "gateway", "invoke", "dependency", "states"

// Which part of a dependency's traffic a decision is for: a new connection (decided once,
// when the client connects, before the upstream is dialled) or one request turn on it (the
// client's bytes after the upstream last answered).
enum class dependency_phase { connect, request };
std::string_view to_string(dependency_phase p);  // "connect", "request"

// What the client of a lost request sees (phantoms).
enum class client_outcome {
    timeout,  // the connection hangs until the integration timeout, then the gateway's
              // timeout error (REST 504, HTTP API 503): the AWS default
    hang,     // no answer at all until the client gives up
    reset,    // the connection is reset (TCP RST)
};
std::string_view to_string(client_outcome c);

// What the emulator does with one request: one alternative per action, each holding only what
// that action needs, so a new action is a new alternative and every std::visit over it has to
// say what it does.
namespace actions {
// Invoke and answer normally.
struct pass {};
// Never invoke; the client sees `client`.
struct phantom_before { client_outcome client = client_outcome::timeout; };
// Invoke; the answer is dropped; the client sees `client`.
struct phantom_after  { client_outcome client = client_outcome::timeout; };
// Answer `status` with AWS's body for the front; no invocation.
struct gateway_error  { int status = 0; };                  // 429, 500, 502, 503, 504
// Invoke, and kill the execution environment `kill_after_ms` (modeled) after delivery:
// Runtime.ExitError, as a crashing handler gives.
struct function_exit  { double kill_after_ms = 0; };        // modeled ms after delivery
// Answer as a handler error {errorType, errorMessage}; no invocation.
struct handler_error  { std::string error_type, error_message; };
// Answer Lambda's throttle with Reason `reason`; no invocation.
struct throttle       { std::string reason; };
// Reset the connection; no invocation (dependency: TCP RST to the client, and the upstream
// connection closed).
struct reset {};
// Invoke; write the response at `bytes_per_s` (dependency: the upstream's bytes reach the
// client at that rate).
struct slow_response  { double bytes_per_s = 0; };          // modeled rate, > 0
// Dependency only: the client's connection is reset before the upstream is ever reached (as
// a closed port); meaningful on connect.
struct refuse {};                                           // dependency only
// Dependency only: nothing is answered and the client's bytes are dropped; after
// `close_after_ms` (modeled) the connection is closed (FIN), or, when 0, held until the
// client leaves (Toxiproxy's `timeout` toxic).
struct hang           { double close_after_ms = 0; };       // modeled; 0 = until the client leaves
}  // namespace actions
using action = std::variant<actions::pass, actions::phantom_before, actions::phantom_after,
                            actions::gateway_error, actions::function_exit, actions::handler_error,
                            actions::throttle, actions::reset, actions::slow_response,
                            actions::refuse, actions::hang>;

// The plan for one request: a value the emulator executes.
struct plan {
    action act;              // default: pass
    double delay_ms = 0;     // modeled; waited first, whatever the action
    bool injects() const noexcept;   // not pass, or delay_ms > 0
};
// "pass", "phantom_before", "phantom_after", "gateway_error", "function_exit",
// "handler_error", "throttle", "reset", "slow_response", "refuse", "hang": the alternative's
// name, as the decision log, counters and metrics spell it.
std::string_view action_name(const action& a);
// Whether `p` acts as A: is<actions::function_exit>(d.p).
template <class A> bool is(const plan& p) { return std::holds_alternative<A>(p.act); }

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
    // The fronts its plans mean something on. The default is the three request fronts (a
    // Task's invocation is a request too); a kind the dependency proxy can carry out lists
    // front::dependency.
    std::vector<front> fronts{front::gateway, front::invoke, front::states};
    // Dependency front: decides connections only (refuse: a request turn has nothing left to
    // refuse). Such a kind never fires on a request turn, and "on": "request" is an error.
    bool connect_only = false;

    bool applies_to(front f) const;
    // "the gateway and invoke fronts", "the dependency front", for messages.
    std::string fronts_phrase() const;
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

// phantom, delay, gateway_error, function_error, throttle, reset, slow_response, refuse,
// hang.
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
    std::string dependency;                // "" = any; only_front is dependency when set
    std::optional<dependency_phase> on;    // nullopt = both; only on the dependency front
    std::string state_machine;  // "" = any; states front only (logical id or name)
    std::string state;          // "" = any; states front only (state name or path)
    std::string kind;  // registry name
    std::shared_ptr<const fault_config> fault;

    // The canonical JSON (defaults omitted, `fault` from to_json()); parse_rule of it gives
    // the same rule.
    nlohmann::json to_json() const;
    // One line for the `up` banner and logs: "lose-third: POST /pay, nth 3 → phantom after …".
    std::string describe() const;
};

// Parses one rule. `default_name` is used when it has no "name". Throws rule_error (also
// when the kind does not apply to the rule's front: path "fault.kind").
rule parse_rule(const nlohmann::json& j, const fault_registry& registry,
                const std::string& default_name);

// A phantom rule for an SLA: fires with probability 1 - sla_percent/100 on every request of
// `where`; `after_share` in [0, 1] of them are phantom-after, the rest phantom-before.
// Named "sla-<front>". Throws rule_error when sla_percent is outside (0, 100], and at "front"
// for the dependency front (phantoms do not apply there: see availability_rule).
rule sla_rule(front where, double sla_percent, double after_share, client_outcome client,
              const fault_registry& registry);

// An availability rule for a dependency (coldbrew.yaml `dependencies.<name>.availability`):
// fires with probability 1 - sla_percent/100 on the dependency's connections (`on` connect),
// request turns (`on` request) or both (nullopt), with the fault `outcome`: "refuse",
// "reset" or "hang" (hang holds until the client leaves). "refuse" always decides on
// connect, whatever `on` says: a refused connection has no request turns. Named
// "availability-<dependency>". Throws rule_error (path "") when sla_percent is outside
// (0, 100], the outcome is not one of the three, or the dependency name is empty or not
// usable in a rule name.
rule availability_rule(std::string_view dependency, double sla_percent, std::string_view outcome,
                       std::optional<dependency_phase> on, const fault_registry& registry);

// ---- the decision point ----------------------------------------------------------------

struct request_facts {
    front where = front::gateway;
    std::string_view function;       // logical id ("" on the dependency front for a client
                                     // outside any function)
    std::string_view function_name;  // deployed FunctionName (also matches `function`)
    std::string_view route;          // route key: "POST /pets/{id}", "$default", "Invoke Pay",
                                     // "redis request" (dependency: "<name> <phase>")
    std::string_view method;
    std::string_view path;
    const std::vector<std::pair<std::string, std::string>>* headers = nullptr;  // may be null
    std::string_view dependency;     // dependency front: the dependency's name
    dependency_phase on = dependency_phase::connect;  // dependency front: what is decided
    // States front: the state machine (logical id, and its StateMachineName) and the Task
    // (name, and its path from the top: "Each/Charge" inside a Map; "" = same as the name).
    std::string_view state_machine;
    std::string_view state_machine_name;
    std::string_view state;
    std::string_view state_path;
    // The caller tells, once the request has ended, what became of a fault that fired:
    // decider::injected (it reached the client) or decider::missed (it did not). The fired
    // counts are added then, at the moment the request's outcome is counted, so they never run
    // ahead of the outcomes, never go down, and a request decided before a reset() and ended
    // after it is counted on both sides of the reset alike. false: counted when decided (the
    // dependency proxy, which has no per-request outcome).
    bool counted_by_caller = false;
    // The decision is for an API Gateway Lambda authorizer's invocation, made before the
    // route's own: `function` is the authorizer function and `route` the route it guards. Only
    // rules that name a function match it (so SLA phantoms and route-only rules stay with the
    // integration, decided once per request), and its log line says "authorizer": function.
    bool authorizer = false;
};

struct decision {
    plan p;                    // pass when nothing fired
    front where = front::gateway;  // the request's front, whether or not a rule fired
    std::string rule;          // the rule that fired; "" when none
    std::string kind;          // its kind
    std::uint64_t k = 0;       // that rule's index for this request
    bool overflow = false;     // a rule fired but the cap was reached: passed instead
    bool deferred = false;     // its counts wait for injected() or missed() (counted_by_caller)
    std::uint64_t id = 0;      // token for finished(); 0 when nothing is active
    // {"event":"fault","front":"gateway","route":"POST /pay","method":"POST","rule":"r",
    //  "kind":"phantom","k":2,"action":"phantom_after","client":"timeout"} — no time, stable
    // key order; then the action's detail ("status", "reason", "error_type", "kill_after_ms",
    // "bytes_per_s", "close_after_ms"), "delay_ms" when > 0 and "overflow":true when the cap
    // suppressed it. On the dependency front "dependency" and "on" stand where "method" does:
    // {"event":"fault","front":"dependency","route":"redis request","dependency":"redis",
    //  "on":"request","rule":"r","kind":"hang","k":0,"action":"hang","close_after_ms":30000}
    // On the states front "state_machine" and "state" follow "method" (each when set).
    // Empty when no rule fired (plain pass, nothing to log).
    std::string log_line;
};

// ---- the decision, step by step ---------------------------------------------------------
// decider::decide is these, in this order, over its rules; the simulator (models/sim) calls
// the same functions for the requests it stands in for, so a what-if run and a live run of
// the same request sequence take the same decisions with the same draws.

// Whether `r`, of kind `kind`, matches `facts` on everything but its window and its request
// index: front (and the kind's fronts), dependency and phase, authorizer, function (logical
// id or FunctionName), state machine, state, route, method (case-insensitive), path (glob)
// and headers (a rule with header matchers never matches facts without headers).
bool matches(const rule& r, const fault_kind& kind, const request_facts& facts);
// Whether `elapsed_ms` since the rule was added lies in its window (always, without one).
bool in_window(const rule& r, double elapsed_ms);
// Whether the k-th (0-based) request the rule matched on a route is one its nth / every_nth /
// first selector chooses (every request without a selector).
bool selects(const rule& r, std::uint64_t k);
// Whether the rule fires for the k-th request it matched, `key` being "<rule>|<route>": its
// selector, then its probability, drawn as rng.uniform("fault", key, k) < probability
// (probability 1 and 0 decide without a draw).
bool fires(const rule& r, const random_source& rng, std::string_view key, std::uint64_t k);
// The plan of a rule that fired: `p` reset to pass, then the kind's apply() with the same
// key and k (a kind draws only with (stream "fault-<kind>", key, k)).
void apply(const rule& r, const random_source& rng, std::string_view key, std::uint64_t k,
           front where, plan& p);
// The decision-log line of `d` for `facts`, as decision::log_line describes it ("" is not
// special-cased: call it for a decision where a rule fired).
std::string log_line(const request_facts& facts, const decision& d);

// "Fired" counts are of faults injected and not taken back by decider::missed; entries that
// drop to 0 are erased, so every map lists only what happened and all of them sum to the same
// total.
struct fault_counters {
    std::map<std::string, std::uint64_t> by_kind;    // fired, by kind name
    std::map<std::string, std::uint64_t> by_action;  // fired, by action_name
    std::map<std::string, std::uint64_t> by_rule;    // fired, by rule name
    // fired, by (kind, action_name): a kind may act more than one way (phantom before
    // or after, error at the gateway or in the handler)
    std::map<std::pair<std::string, std::string>, std::uint64_t> by_kind_action;
    // fired, by front name ("gateway", "invoke", "dependency", "states"): the gateway, invoke
    // and states parts are what a front's injected_fault request outcomes can be checked
    // against
    std::map<std::string, std::uint64_t> by_front;
    std::uint64_t missed = 0;  // fired, then taken back by decider::missed
    std::map<std::string, std::uint64_t> missed_by_kind;  // the same, by kind name
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
    // duplicate names, and rules built in code whose kind does not apply to their front, are
    // errors. Counting restarts for the new rules; windows start now.
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

    // The decision for one request at `now_ms` (wall ms, same clock as set_rules). Rules
    // whose kind does not apply to facts.where are skipped (and not counted). When the plan
    // injects, the fault counts as active until finished(d.id).
    decision decide(const request_facts& facts, double now_ms);
    // The fault of `id` is over (answered, reset, or its client went away). Idempotent.
    void finished(std::uint64_t id);
    // The fault of `d` did not happen (a function_error exit whose handler answered before
    // the kill: the client got the handler's answer). Its by_kind, by_action, by_rule,
    // by_kind_action and by_front counts are taken back, it is counted in missed and
    // missed_by_kind, and it is finished(d.id). A decision where no rule fired, or an
    // overflow, was never counted: it is only finished. A decision with an id is taken back
    // once (later calls only finish it), and not at all when it was decided before the last
    // reset() (whose zeroing took it back already). A decision without an id (a fired plan
    // that injects nothing, as a 0 ms delay) cannot be told apart: each call takes one back,
    // as long as every one of its counts is above 0.
    void missed(const decision& d);
    // The fault of a deferred decision (request_facts::counted_by_caller) reached the client:
    // its by_kind, by_action, by_rule, by_kind_action and by_front counts are added now. Call
    // it once per decision; for one that did not fire, an overflow, or one not deferred (its
    // counts were added when decided) it does nothing.
    void injected(const decision& d);

    const fault_counters& counters() const noexcept { return counters_; }

private:
    void count_fired(const decision& d);
    const fault_registry& registry_;
    random_source rng_;
    std::vector<rule> rules_;
    std::vector<double> added_ms_;  // per rule, for windows
    std::map<std::string, std::uint64_t, std::less<>> seen_;  // "<rule>|<route>" → count
    std::optional<std::size_t> max_active_;
    std::map<std::uint64_t, bool> active_;
    std::uint64_t next_id_ = 1;
    std::uint64_t first_id_since_reset_ = 1;  // ids below it were decided before reset()
    std::set<std::uint64_t> missed_ids_;      // taken back since reset(), for idempotence
    std::uint64_t rules_ever_ = 0;
    fault_counters counters_;
};

}  // namespace coldbrew::models::faults
