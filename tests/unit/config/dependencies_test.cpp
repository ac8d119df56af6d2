// coldbrew.yaml `dependencies:` and `network:`: every key read, the defaults, and every
// mistake reported at the exact file:line:col and key path before anything starts.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <string>
#include <utility>
#include <vector>

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

// Worker has a deployed name of its own and already sets DATA_ADDR; Api has neither.
const char* const two_functions = R"(Resources:
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: worker-fn
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
      Environment:
        Variables:
          DATA_ADDR: from-template
  Api:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
)";

config::stack load(temp_app& app, const std::string& coldbrew_yaml) {
    app.write("coldbrew.yaml", coldbrew_yaml);
    return app.sam(two_functions);
}

config::config_error error_for(temp_app& app, const std::string& coldbrew_yaml) {
    app.write("coldbrew.yaml", coldbrew_yaml);
    return error_of([&] { app.sam(two_functions); });
}

using env_list = std::vector<std::pair<std::string, std::string>>;

} // namespace

TEST_CASE("dependencies: every key is read", "[unit]") {
    temp_app app;
    const auto s = load(app, R"yaml(network:
  scalable_bandwidth: true
functions:
  Api:
    network: {scalable_bandwidth: false, bandwidth: 100Mbps}
dependencies:
  datastore:
    upstream: 127.0.0.1:8642
    env: {DATA_URL: "http://{address}/", DATA_HOST: "{host}", DATA_PORT: "{port}"}
    functions: [Api, worker-fn, Api]
    listen: 7001
    latency: {connect: "fixed(2ms)", request: "lognormal(median=1ms, p99=8ms)"}
    bandwidth: {per_connection: 50MB/s, environment: false}
    timeouts: {connect: 2s, idle: 5min}
    availability: {sla: 99.9%, outcome: hang, on: connect}
)yaml");
    CHECK(s.settings.scalable_bandwidth);
    const auto* api = s.find_function("Api");
    REQUIRE(api);
    CHECK(api->scalable_bandwidth == std::optional<bool>(false));
    CHECK(api->bandwidth_bytes_per_s == std::optional<double>(12'500'000.0));
    const auto* worker = s.find_function("Worker");
    REQUIRE(worker);
    CHECK_FALSE(worker->scalable_bandwidth); // the global value applies
    CHECK_FALSE(worker->bandwidth_bytes_per_s);

    REQUIRE(s.settings.dependencies.size() == 1);
    const auto& d = s.settings.dependencies[0];
    CHECK(d.name == "datastore");
    CHECK(d.path == "dependencies.datastore");
    CHECK(d.where.line == 7);
    CHECK(d.where.column == 3);
    CHECK(d.upstream_host == "127.0.0.1");
    CHECK(d.upstream_port == 8642);
    CHECK(d.env == env_list{{"DATA_URL", "http://{address}/"},
                            {"DATA_HOST", "{host}"},
                            {"DATA_PORT", "{port}"}});
    // The FunctionName became the logical id; the repeat is dropped.
    CHECK(d.functions == std::vector<std::string>{"Api", "Worker"});
    CHECK(d.listen_port == 7001);
    CHECK(d.connect_latency == std::optional<std::string>("fixed(2ms)"));
    CHECK(d.request_latency == std::optional<std::string>("lognormal(median=1ms, p99=8ms)"));
    CHECK(d.per_connection_bytes_per_s == std::optional<double>(50'000'000.0));
    CHECK_FALSE(d.environment_cap);
    CHECK(d.connect_timeout_ms == 2000.0);
    CHECK(d.idle_timeout_ms == std::optional<double>(300'000.0));
    CHECK(d.availability_percent == std::optional<double>(99.9));
    CHECK(d.availability_outcome == "hang");
    CHECK(d.availability_on == "connect");
}

TEST_CASE("dependencies: defaults, and none unless configured", "[unit]") {
    temp_app app;
    {
        const auto s = load(app, "time_scale: 1\n");
        CHECK(s.settings.dependencies.empty());
        CHECK_FALSE(s.settings.scalable_bandwidth);
        CHECK_FALSE(s.find_function("Api")->scalable_bandwidth);
    }
    const auto s = load(app, "dependencies:\n  cache:\n    upstream: localhost:6379\n"
                             "  other-db_2:\n    upstream: db.internal:5432\n"
                             "    env: PG_ADDR\n    availability: {sla: 99.5}\n");
    REQUIRE(s.settings.dependencies.size() == 2);
    const auto& d = s.settings.dependencies[0];
    CHECK(d.name == "cache");
    CHECK(d.upstream_host == "localhost");
    CHECK(d.upstream_port == 6379);
    CHECK(d.env.empty());
    CHECK(d.functions.empty()); // every function
    CHECK(d.listen_port == 0);
    CHECK_FALSE(d.connect_latency);
    CHECK_FALSE(d.request_latency);
    CHECK_FALSE(d.per_connection_bytes_per_s);
    CHECK(d.environment_cap);
    CHECK(d.connect_timeout_ms == 5000.0);
    CHECK_FALSE(d.idle_timeout_ms);
    CHECK_FALSE(d.availability_percent);
    CHECK(d.availability_outcome == "reset");
    CHECK(d.availability_on == "request");

    const auto& e = s.settings.dependencies[1];
    CHECK(e.name == "other-db_2");
    CHECK(e.upstream_host == "db.internal");
    // A plain name is one variable holding host:port.
    CHECK(e.env == env_list{{"PG_ADDR", "{address}"}});
    CHECK(e.availability_percent == std::optional<double>(99.5));
    CHECK(e.availability_outcome == "reset");
    CHECK(e.availability_on == "request");
}

TEST_CASE("dependencies: IPv6 upstreams, refuse on connect, braces that are not placeholders",
          "[unit]") {
    temp_app app;
    const auto s = load(app, R"yaml(dependencies:
  v6:
    upstream: "[::1]:6379"
    env: {CONFIG: '{"addr": "{address}", "n": {}}'}
    availability: {sla: "99%", outcome: refuse}
)yaml");
    REQUIRE(s.settings.dependencies.size() == 1);
    const auto& d = s.settings.dependencies[0];
    CHECK(d.upstream_host == "::1");
    CHECK(d.upstream_port == 6379);
    CHECK(d.env == env_list{{"CONFIG", R"({"addr": "{address}", "n": {}})"}});
    CHECK(d.availability_percent == std::optional<double>(99.0));
    CHECK(d.availability_outcome == "refuse");
    CHECK(d.availability_on == "connect"); // refuse happens before a request exists
}

TEST_CASE("dependencies: the same variable for functions that do not overlap is fine", "[unit]") {
    temp_app app;
    const auto s = load(app, R"yaml(dependencies:
  a:
    upstream: 127.0.0.1:1
    env: CACHE_ADDR
    functions: [Worker]
    listen: 0
  b:
    upstream: 127.0.0.1:2
    env: CACHE_ADDR
    functions: [Api]
    listen: 0
)yaml");
    REQUIRE(s.settings.dependencies.size() == 2);
    CHECK(s.settings.dependencies[0].functions == std::vector<std::string>{"Worker"});
    CHECK(s.settings.dependencies[1].functions == std::vector<std::string>{"Api"});
}

TEST_CASE("dependencies: a variable the function already sets is replaced, with a warning",
          "[unit]") {
    temp_app app;
    const auto file = (app.dir() / "coldbrew.yaml").string();
    {
        const auto s = load(app, "dependencies:\n  db:\n    upstream: 127.0.0.1:5432\n"
                                 "    env: DATA_ADDR\n");
        // Only Worker sets it (in the template): one warning, at the env value.
        std::vector<std::string> hits;
        for (const auto& w : s.warnings)
            if (contains(w, "DATA_ADDR")) hits.push_back(w);
        REQUIRE(hits.size() == 1);
        CHECK(contains(hits[0], file + ":4:10: dependencies.db.env: "));
        CHECK(contains(hits[0], "replaces the value Worker sets in template.yaml"));
    }
    {
        const auto s = load(app, "functions:\n  Api:\n    environment: {DATA_ADDR: x}\n"
                                 "dependencies:\n  db:\n    upstream: 127.0.0.1:5432\n"
                                 "    env: {DATA_ADDR: \"{address}\"}\n    functions: [Api]\n");
        std::vector<std::string> hits;
        for (const auto& w : s.warnings)
            if (contains(w, "DATA_ADDR")) hits.push_back(w);
        REQUIRE(hits.size() == 1);
        CHECK(contains(hits[0], file + ":7:11: dependencies.db.env.DATA_ADDR: "));
        CHECK(contains(hits[0], "Api sets in coldbrew.yaml functions.Api.environment"));
    }
    {
        const auto s = load(app, "dependencies:\n  db:\n    upstream: 127.0.0.1:5432\n"
                                 "    env: OTHER_ADDR\n");
        CHECK_FALSE(any_contains(s.warnings, "OTHER_ADDR"));
    }
}

namespace {

struct bad_case {
    const char* name;
    const char* yaml;
    int line;
    int column;
    const char* path;
    const char* message; // a part of the message
};

// Each case is one mistake; line and column are the character the message is about.
const bad_case bad_cases[] = {
    {"dependencies is a list", "dependencies: [db]\n", 1, 15, "dependencies", "must be a mapping"},
    {"a dependency is a list", "dependencies:\n  db: [a]\n", 2, 7, "dependencies.db",
     "must be a mapping"},
    {"missing upstream", "dependencies:\n  db:\n    env: DB_ADDR\n", 2, 3, "dependencies.db",
     "needs upstream: host:port"},
    {"empty dependency", "dependencies:\n  db:\n", 2, 3, "dependencies.db", "needs upstream"},
    {"name with a space", "dependencies:\n  my db:\n    upstream: a:1\n", 2, 3,
     "dependencies.my db", "letters, digits, '-' and '_'"},
    {"name with a dot", "dependencies:\n  db.main:\n    upstream: a:1\n", 2, 3,
     "dependencies.db.main", "admin API URLs"},
    {"unknown key in a dependency", "dependencies:\n  db:\n    upstrem: a:1\n", 3, 5,
     "dependencies.db.upstrem", "did you mean 'upstream'?"},
    {"upstream without a port", "dependencies:\n  db:\n    upstream: redis\n", 3, 15,
     "dependencies.db.upstream", "no port in 'redis'"},
    {"upstream port 0", "dependencies:\n  db:\n    upstream: redis:0\n", 3, 21,
     "dependencies.db.upstream", "from 1 to 65535, got '0'"},
    {"upstream port 70000", "dependencies:\n  db:\n    upstream: redis:70000\n", 3, 21,
     "dependencies.db.upstream", "got '70000'"},
    {"upstream port not a number", "dependencies:\n  db:\n    upstream: redis:http\n", 3, 21,
     "dependencies.db.upstream", "got 'http'"},
    {"upstream without a host", "dependencies:\n  db:\n    upstream: \":6379\"\n", 3, 16,
     "dependencies.db.upstream", "no host"},
    {"upstream with a scheme", "dependencies:\n  db:\n    upstream: http://x:80\n", 3, 15,
     "dependencies.db.upstream", "without a scheme"},
    {"upstream host with a slash", "dependencies:\n  db:\n    upstream: x/y:80\n", 3, 16,
     "dependencies.db.upstream", "unexpected '/' in the host 'x/y'"},
    {"IPv6 without brackets", "dependencies:\n  db:\n    upstream: \"::1:6379\"\n", 3, 16,
     "dependencies.db.upstream", "needs brackets"},
    {"IPv6 without a port", "dependencies:\n  db:\n    upstream: \"[::1]\"\n", 3, 21,
     "dependencies.db.upstream", "no port after the address"},
    {"upstream is a mapping", "dependencies:\n  db:\n    upstream: {host: a}\n", 3, 15,
     "dependencies.db.upstream", "must be a string"},
    {"env name starting with a digit", "dependencies:\n  db:\n    upstream: a:1\n    env: 1DB\n", 4,
     10, "dependencies.db.env", "'1DB' is not an environment variable name"},
    {"env name with a dash", "dependencies:\n  db:\n    upstream: a:1\n    env: {DB-URL: x}\n", 4,
     11, "dependencies.db.env.DB-URL", "not an environment variable name"},
    {"env name reserved by Lambda",
     "dependencies:\n  db:\n    upstream: a:1\n    env: AWS_LAMBDA_RUNTIME_API\n", 4, 10,
     "dependencies.db.env", "reserved by Lambda"},
    {"env name _HANDLER", "dependencies:\n  db:\n    upstream: a:1\n    env: {_HANDLER: x}\n", 4,
     11, "dependencies.db.env._HANDLER", "reserved by Lambda"},
    {"env name LAMBDA_TASK_ROOT",
     "dependencies:\n  db:\n    upstream: a:1\n    env: {OK: x, LAMBDA_TASK_ROOT: y}\n", 4, 18,
     "dependencies.db.env.LAMBDA_TASK_ROOT", "reserved by Lambda"},
    {"unknown placeholder",
     "dependencies:\n  db:\n    upstream: a:1\n    env: {URL: \"http://{hostname}/\"}\n", 4, 24,
     "dependencies.db.env.URL", "unknown placeholder {hostname}"},
    {"placeholder in the wrong case",
     "dependencies:\n  db:\n    upstream: a:1\n    env: {URL: \"{ADDRESS}\"}\n", 4, 17,
     "dependencies.db.env.URL", "did you mean {address}?"},
    {"env is a list", "dependencies:\n  db:\n    upstream: a:1\n    env: [A, B]\n", 4, 10,
     "dependencies.db.env", "a variable name or a mapping"},
    {"env template is a mapping", "dependencies:\n  db:\n    upstream: a:1\n    env: {A: {x: 1}}\n",
     4, 14, "dependencies.db.env.A", "must be a string"},
    {"unknown function", "dependencies:\n  db:\n    upstream: a:1\n    functions: [Api, Wroker]\n",
     4, 22, "dependencies.db.functions[1]", "no function named 'Wroker'"},
    {"functions is not a list", "dependencies:\n  db:\n    upstream: a:1\n    functions: Worker\n",
     4, 16, "dependencies.db.functions", "must be a list"},
    {"functions is empty", "dependencies:\n  db:\n    upstream: a:1\n    functions: []\n", 4, 16,
     "dependencies.db.functions", "at least one function"},
    {"listen out of range", "dependencies:\n  db:\n    upstream: a:1\n    listen: 70000\n", 4, 13,
     "dependencies.db.listen", "between 0 and 65535"},
    {"two dependencies on one listen port",
     "dependencies:\n  a:\n    upstream: a:1\n    listen: 7000\n"
     "  b:\n    upstream: b:1\n    listen: 7000\n",
     7, 13, "dependencies.b.listen", "already used by dependencies.a.listen"},
    {"listen on the gateway's port",
     "dependencies:\n  a:\n    upstream: a:1\n    listen: 4000\nports: {gateway: 4000}\n", 4, 13,
     "dependencies.a.listen", "already used by ports.gateway"},
    {"one variable from two dependencies",
     "dependencies:\n  a:\n    upstream: a:1\n    env: SHARED\n"
     "  b:\n    upstream: b:1\n    env: {SHARED: \"{host}\"}\n",
     7, 11, "dependencies.b.env.SHARED", "already set by dependencies.a"},
    {"one variable for a function named two ways",
     "dependencies:\n  a:\n    upstream: a:1\n    env: SHARED\n    functions: [Worker]\n"
     "  b:\n    upstream: b:1\n    env: SHARED\n    functions: [worker-fn]\n",
     8, 10, "dependencies.b.env", "for function Worker"},
    {"latency is a list", "dependencies:\n  db:\n    upstream: a:1\n    latency: [1ms]\n", 4, 14,
     "dependencies.db.latency", "must be a mapping"},
    {"unknown key in latency",
     "dependencies:\n  db:\n    upstream: a:1\n    latency: {conect: 1ms}\n", 4, 15,
     "dependencies.db.latency.conect", "did you mean 'connect'?"},
    {"bad latency distribution",
     "dependencies:\n  db:\n    upstream: a:1\n    latency: {request: \"lognormal(median=1ms)\"}\n",
     4, 45, "dependencies.db.latency.request", "missing argument 'p99'"},
    {"bad rate", "dependencies:\n  db:\n    upstream: a:1\n    bandwidth: {per_connection: fast}\n",
     4, 33, "dependencies.db.bandwidth.per_connection", "fast"},
    {"rate without a unit",
     "dependencies:\n  db:\n    upstream: a:1\n    bandwidth: {per_connection: 500}\n", 4, 33,
     "dependencies.db.bandwidth.per_connection", "no unit"},
    {"environment not a boolean",
     "dependencies:\n  db:\n    upstream: a:1\n    bandwidth: {environment: maybe}\n", 4, 30,
     "dependencies.db.bandwidth.environment", "must be true or false, got 'maybe'"},
    {"unknown key in bandwidth",
     "dependencies:\n  db:\n    upstream: a:1\n    bandwidth: {rate: 1Mbps}\n", 4, 17,
     "dependencies.db.bandwidth.rate", "allowed here: per_connection, environment"},
    {"zero connect timeout",
     "dependencies:\n  db:\n    upstream: a:1\n    timeouts: {connect: 0s}\n", 4, 25,
     "dependencies.db.timeouts.connect", "greater than 0"},
    {"negative idle timeout",
     "dependencies:\n  db:\n    upstream: a:1\n    timeouts: {idle: -1s}\n", 4, 22,
     "dependencies.db.timeouts.idle", "greater than 0"},
    {"timeout with an unknown unit",
     "dependencies:\n  db:\n    upstream: a:1\n    timeouts: {idle: 5days}\n", 4, 23,
     "dependencies.db.timeouts.idle", "unknown unit 'days'"},
    {"unknown key in timeouts",
     "dependencies:\n  db:\n    upstream: a:1\n    timeouts: {read: 1s}\n", 4, 16,
     "dependencies.db.timeouts.read", "allowed here: connect, idle"},
    {"SLA written as a fraction",
     "dependencies:\n  db:\n    upstream: a:1\n    availability: {sla: 0.999}\n", 4, 25,
     "dependencies.db.availability.sla", "write it with a % sign"},
    {"SLA above 100", "dependencies:\n  db:\n    upstream: a:1\n    availability: {sla: 101%}\n", 4,
     25, "dependencies.db.availability.sla", "at most 100"},
    {"availability without an SLA",
     "dependencies:\n  db:\n    upstream: a:1\n    availability: {outcome: hang}\n", 4, 19,
     "dependencies.db.availability", "needs sla"},
    {"unknown outcome",
     "dependencies:\n  db:\n    upstream: a:1\n    availability: {sla: 99%, outcome: drop}\n", 4,
     39, "dependencies.db.availability.outcome", "refuse, reset or hang, got 'drop'"},
    {"unknown on",
     "dependencies:\n  db:\n    upstream: a:1\n    availability: {sla: 99%, on: read}\n", 4, 34,
     "dependencies.db.availability.on", "connect or request, got 'read'"},
    {"refuse on request",
     "dependencies:\n  db:\n    upstream: a:1\n"
     "    availability: {sla: 99%, outcome: refuse, on: request}\n",
     4, 51, "dependencies.db.availability.on", "refuse"},
    {"unknown key in availability",
     "dependencies:\n  db:\n    upstream: a:1\n    availability: {sla: 99%, when: connect}\n", 4,
     30, "dependencies.db.availability.when", "allowed here: sla, outcome, on"},
    {"unknown key in top-level network", "network:\n  bandwidth: 1Gbps\n", 2, 3,
     "network.bandwidth", "allowed here: scalable_bandwidth"},
    {"top-level scalable_bandwidth not a boolean", "network:\n  scalable_bandwidth: \"yes\"\n", 2,
     23, "network.scalable_bandwidth", "must be true or false"},
    {"network is a list", "network: [a]\n", 1, 10, "network", "must be a mapping"},
    {"unknown key in a function's network", "functions:\n  Api:\n    network: {scalable: true}\n",
     3, 15, "functions.Api.network.scalable", "allowed here: scalable_bandwidth, bandwidth"},
    {"bad rate in a function's network",
     "functions:\n  Api:\n    network:\n      bandwidth: 10Mbit\n", 4, 18,
     "functions.Api.network.bandwidth", "unknown unit"},
};

} // namespace

TEST_CASE("dependencies: mistakes are errors at their position", "[unit]") {
    temp_app app;
    const auto file = (app.dir() / "coldbrew.yaml").string();
    for (const auto& c : bad_cases) {
        CAPTURE(c.name, c.yaml);
        const auto e = error_for(app, c.yaml);
        CAPTURE(e.what());
        CHECK(e.where().file == file);
        CHECK(e.where().line == c.line);
        CHECK(e.where().column == c.column);
        CHECK(e.key_path() == c.path);
        CHECK(contains(e.message(), c.message));
        // The printed form starts with file:line:col and the key path.
        CHECK(contains(e.what(), file + ":" + std::to_string(c.line) + ":" +
                                     std::to_string(c.column) + ": " + c.path + ": "));
    }
}

TEST_CASE("dependencies: an unknown function lists the known ones", "[unit]") {
    temp_app app;
    const auto e = error_for(app, "dependencies:\n  db:\n    upstream: a:1\n"
                                  "    functions: [Wroker]\n");
    CHECK(contains(e.message(), "in template.yaml (did you mean 'Worker'?)"));
    CHECK(contains(e.message(), "functions: Worker (worker-fn), Api"));
}
