#pragma once
// Dependency proxies: one TCP proxy per coldbrew.yaml `dependencies:` item, on 127.0.0.1.
//
// Each execution environment that may use a dependency gets its own listener (ephemeral
// port), so every byte is attributed to the environment that sent it: its connections share
// the environment's bandwidth buckets (environment_link), which its Runtime API payloads use
// too. The environment variables the user named carry that listener's address, so handler
// code runs unchanged. A shared listener (`listen:`, default ephemeral) serves clients outside
// functions (tests, tools); its connections have no environment cap.
//
// Per connection the proxy applies, in order: the fault decision for the connection
// (front "dependency", on "connect"), the connect latency, the upstream connect (timeout:
// the client is reset), then for every request turn (client bytes after upstream bytes, or
// the first client bytes) the decision for the request (on "request") and the request
// latency; bytes in both directions go through the per-connection rate and the
// environment's bucket. Idle timeout closes both sides.
//
// Time is the scheduler's (proxy_context::scheduler): latency, the connect and idle timeouts
// and a hang's close_after are modeled waits asked of it, fault rules see its modeled clock,
// and every token bucket (per connection, slow_response, the environment's link) runs on
// modeled time (modeled_now_us) at the modeled rate, its waits handed to the scheduler in
// modeled terms. A run at another scale thus keeps the modeled proportions.
//
// Faults on this front (models/faults): reset (RST to the client, upstream closed), refuse
// (a reset before the upstream is ever connected), hang (the client's bytes are dropped and
// nothing comes back; closed after close_after if set), delay (added to the latency),
// slow_response (upstream → client at that rate for the connection or the request).
//
// All of it runs on the app's libuv loop. Backpressure: a side stops reading while the other
// side has more than a bounded amount queued.

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/stack.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "models/bandwidth/bandwidth.hpp"
#include "models/faults/faults.hpp"
#include "models/random/random_source.hpp"

namespace coldbrew::telemetry {
class decision_log;
class run_recorder;
}

namespace coldbrew::proxy {

// The clock every bandwidth bucket runs on: the scheduler's modeled time, in microseconds.
inline std::int64_t modeled_now_us(const sched::scheduler& s) {
    return static_cast<std::int64_t>(s.now_ms() * 1000.0);
}

// The network of one execution environment: a bucket per direction shared by its dependency
// connections and its Runtime API payloads. The buckets run on modeled_now_us at the modeled
// rate; `now_us` is that clock now.
class environment_link {
public:
    environment_link(double modeled_bytes_per_s, std::uint64_t burst_bytes, std::int64_t now_us);
    models::bandwidth::token_bucket& to_environment() noexcept { return down_; }   // into it
    models::bandwidth::token_bucket& from_environment() noexcept { return up_; }  // out of it
    double modeled_bytes_per_s() const noexcept { return modeled_; }

private:
    double modeled_;
    models::bandwidth::token_bucket down_, up_;
};

struct proxy_context {
    uv_loop_t* loop = nullptr;
    // Required: every modeled wait, the fault rules' clock and the buckets' clock.
    sched::scheduler* scheduler = nullptr;
    // Latency draws: uniform/sample with stream "dependency-latency", key
    // "<dependency>|<env key>|<connection index>", index = request turn (0 = connect). The env
    // key is attach()'s env_key in decimal, "shared" for the shared listener; the connection
    // index counts that listener's accepted connections from 0.
    const models::random_source* rng = nullptr;
    models::faults::decider* faults = nullptr;        // may be null: no fault rules
    telemetry::decision_log* decisions = nullptr;     // may be null
    telemetry::run_recorder* recorder = nullptr;      // null unless the run is recorded
    std::string host = "127.0.0.1";
};

struct proxy_counters {
    std::uint64_t connections = 0;        // accepted
    std::uint64_t active = 0;             // open now
    std::uint64_t requests = 0;           // request turns
    std::uint64_t bytes_upstream = 0;     // client → upstream, written to the upstream
    std::uint64_t bytes_downstream = 0;   // upstream → client, written to the client
    std::uint64_t upstream_failures = 0;  // the upstream refused or failed to connect
    std::uint64_t connect_timeouts = 0;
    std::uint64_t idle_timeouts = 0;
    // Faults that fired, by plan action (reset, refuse, hang, slow_response); a plan that
    // only delays counts as "delay".
    std::map<std::string, std::uint64_t> faults;
    double latency_ms = 0;                // modeled latency added in all
    double shaped_ms = 0;                 // modeled time bytes waited for bandwidth
    nlohmann::json to_json() const;
};

// Lives on the loop's thread: every call, the destructor included, is made there. `dep`, `ctx`
// and what ctx points to (the decider and the scheduler above all) must outlive it. Throws
// std::invalid_argument when ctx has no scheduler. The destructor closes every
// handle; the loop must run a little longer for libuv's close callbacks, which free the
// per-connection state (nothing in them refers back to the proxy).
// The upstream host may be a name: it is resolved (asynchronously) for every connection, and
// its first IPv4 address is used when it has one.
class dependency_proxy {
public:
    dependency_proxy(const config::dependency& dep, proxy_context& ctx);
    ~dependency_proxy();
    dependency_proxy(const dependency_proxy&) = delete;
    dependency_proxy& operator=(const dependency_proxy&) = delete;

    // Opens the shared listener on ctx.host:dep.listen_port. Errors: libuv's bind/listen
    // error as a generic errno code (EADDRINUSE …), EINVAL for a host that is no IP address.
    // Again after success: nothing.
    std::error_code start();
    int port() const noexcept;  // the shared listener's

    // Opens a listener for one execution environment of `function` (logical id); its
    // connections share `link` (null: no environment cap). `env_key` is unique per
    // environment for the life of the app (EEXIST while it is attached). Sets `port`.
    std::error_code attach(std::uint64_t env_key, const std::string& function,
                           std::shared_ptr<environment_link> link, int& port);
    // The environment ended: closes its listener and resets its connections (on AWS they
    // die with the environment).
    void detach(std::uint64_t env_key);
    // Closes every listener and resets every connection. Idempotent; the destructor calls it.
    // start() and attach() may open listeners again afterwards.
    void close();

    const config::dependency& config() const noexcept { return dep_; }
    const proxy_counters& counters() const noexcept;
    void reset_counters();  // zeroes every counter but `active` (a state, not a count)

    struct impl;

private:
    const config::dependency& dep_;
    std::unique_ptr<impl> impl_;
};

// {address} → "host:port", {host}, {port}; any other text is kept. Pure.
std::string expand_env_template(std::string_view tmpl, std::string_view host, int port);

// Every dependency of the stack.
class proxy_set {
public:
    // `deps` must outlive the set (each proxy refers to its item).
    proxy_set(const std::vector<config::dependency>& deps, proxy_context ctx);
    ~proxy_set();
    proxy_set(const proxy_set&) = delete;  // the proxies refer to ctx_
    proxy_set& operator=(const proxy_set&) = delete;
    // Opens every shared listener; on an error nothing stays open and the error names the
    // dependency.
    std::error_code start(std::string& failed_dependency);
    // Opens the listeners of a new environment of `function` and returns the variables it
    // gets (dependencies that list other functions are skipped). Listener errors are logged
    // and that dependency's variables are left out.
    std::vector<std::pair<std::string, std::string>> attach(
        std::uint64_t env_key, const std::string& function, std::shared_ptr<environment_link> link);
    void detach(std::uint64_t env_key);
    void close();
    bool empty() const noexcept { return proxies_.empty(); }
    const std::vector<std::unique_ptr<dependency_proxy>>& proxies() const noexcept {
        return proxies_;
    }
    // {"<name>": {"upstream": "h:p", "port": shared port, …counters…}}
    nlohmann::json to_json() const;
    void reset_counters();

private:
    proxy_context ctx_;
    std::vector<std::unique_ptr<dependency_proxy>> proxies_;
};

}  // namespace coldbrew::proxy
