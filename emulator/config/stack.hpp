#pragma once
// The internal stack model: what a SAM template or a serverless.yml becomes once loaded,
// resolved and validated, merged with the optional coldbrew.yaml beside it. Everything
// downstream (gateway, function pool, CLI) reads only this; nothing reads YAML again.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/config/config_error.hpp"
#include "emulator/config/lambda_runtimes.hpp"
#include "models/distribution/distribution.hpp"
#include "models/sim/scenario.hpp"

namespace coldbrew::config {

enum class api_kind {
    rest,  // API Gateway REST API (SAM `Api` event, serverless `http` event)
    http,  // API Gateway HTTP API (SAM `HttpApi` event, serverless `httpApi` event)
};

// Cross-origin resource sharing on an API (AWS facts and sources: emulator/gateway/cors.hpp).
// REST (SAM `Cors` on AWS::Serverless::Api / Globals.Api, serverless `cors` on an http event):
// SAM and serverless add an OPTIONS method with a mock integration to every resource path that
// has none, answering with these headers whatever the Origin; the function's own responses get
// nothing added (a proxy integration sets its own CORS headers).
// HTTP API (`CorsConfiguration`, serverless provider.httpApi.cors): API Gateway answers every
// preflight itself and adds the headers to every response, for an allowed Origin only.
struct cors_config {
    // REST: one value sent as is ("*" or "https://app.example.com"; SAM writes it quoted,
    // "'*'", and the quotes are removed here). HTTP API: the allowed origins, "*" for any.
    std::vector<std::string> allow_origins;
    std::vector<std::string> allow_methods;   // upper case, or "*"
    std::vector<std::string> allow_headers;   // as written, or "*"
    std::vector<std::string> expose_headers;  // HTTP API ExposeHeaders
    std::optional<int> max_age_s;             // Access-Control-Max-Age; nullopt: not sent
    bool allow_credentials = false;
    source_location where;
};

// An authorizer of one API (AWS facts and sources: emulator/authorizers/authorizers.hpp,
// emulator/jwt/jwt.hpp): SAM Auth.Authorizers, serverless `authorizer`
// on http events and provider.httpApi.authorizers.
struct authorizer {
    enum class type {
        token,    // REST Lambda TOKEN authorizer: one header, an optional validation expression
        request,  // Lambda REQUEST authorizer (REST, or HTTP API)
        jwt,      // HTTP API JWT authorizer
    };
    std::string name;  // what routes name it by: the SAM Authorizers key, serverless's name
    type kind = type::token;
    std::string function;  // token / request: function::name of the authorizer function
    // Where the identity comes from, in API Gateway's syntax for the API's kind: REST
    // "method.request.header.Authorization", "method.request.querystring.q",
    // "stageVariables.v", "context.requestId"; HTTP API "$request.header.Authorization",
    // "$request.querystring.q", "$stageVariables.v", "$context.requestId". A request missing
    // any of them gets 401 without the authorizer being called. Empty (a REQUEST authorizer
    // without identity sources): always called, never cached.
    std::vector<std::string> identity_sources;
    std::string validation_expression;  // TOKEN: a regex the whole token must match; "" none
    // Result cache TTL in seconds (AuthorizerResultTtlInSeconds, SAM ReauthorizeEvery,
    // serverless resultTtlInSeconds); 0: not cached. Defaults as the loaders document them.
    int result_ttl_s = 300;
    // HTTP API Lambda authorizers: AuthorizerPayloadFormatVersion "1.0" or "2.0", and
    // EnableSimpleResponses (2.0 only). REST: "".
    std::string payload_format_version;
    bool simple_responses = false;
    // JWT: the token's `iss` must equal issuer; its `aud` (or `client_id`) must be one of
    // audience. Keys: coldbrew.yaml `authorizers.<name>.jwks`, an absolute file path or an
    // http(s) URL of a JWKS; "": the issuer's OpenID discovery document names it, as AWS reads
    // it (fetched at start).
    std::string issuer;
    std::vector<std::string> audience;
    std::string jwks;
    source_location jwks_where;  // the `jwks` value in coldbrew.yaml (line 0: none)
    source_location where;
};

struct api {
    std::string id;     // logical id: "ServerlessRestApi", "ServerlessHttpApi", or the
                        // template's own AWS::Serverless::Api / HttpApi resource id
    api_kind kind = api_kind::rest;
    std::string stage;  // REST: "Prod" for SAM's implicit API, serverless: the stage ("dev");
                        // HTTP API: "$default" unless the template names one
    std::vector<std::string> binary_media_types;  // REST only, e.g. "image/png", "*/*"
    // Stage variables, resolved: SAM `Variables` (AWS::Serverless::Api, Globals.Api) or
    // `StageVariables` (AWS::Serverless::HttpApi, Globals.HttpApi). Events carry them as
    // `stageVariables` (spec §4.1, §4.3). serverless.yml has none in v3 core.
    std::map<std::string, std::string> stage_variables;
    std::vector<authorizer> authorizers;  // routes name them by authorizer::name
    std::optional<cors_config> cors;      // the API's CORS; nullopt: none
    // REST only: resource path ("/pets/{id}") → CORS for that path (serverless `cors` on an
    // http event), in place of `cors` there.
    std::map<std::string, cors_config> path_cors;
    // REST: the authorizer that guards the OPTIONS methods SAM generates for Cors (its
    // DefaultAuthorizer, when AddDefaultAuthorizerToCorsPreflight is true, SAM's default);
    // "" for none.
    std::string preflight_authorizer;
    // REST ApiKeySourceType: "HEADER" (the x-api-key header) or "AUTHORIZER" (the Lambda
    // authorizer's usageIdentifierKey).
    std::string api_key_source = "HEADER";
    source_location where;
};

struct route {
    std::string api_id;        // api::id this route belongs to
    std::string method;        // upper case: GET, POST, …, or ANY
    std::string path;          // "/pets/{id}", "/{proxy+}", "/", or "$default" (HTTP API only)
    std::string function;      // function::name of the integration ("" when state_machine)
    // A Step Functions integration instead of a function's: state_machine::name it starts,
    // and how. SAM `Api` events on a state machine and REST `states:action/StartExecution`
    // integrations start asynchronously (200 {"executionArn","startDate"}); HTTP API subtype
    // StepFunctions-StartSyncExecution and REST `states:action/StartSyncExecution` wait for the
    // Express execution's result.
    std::string state_machine;
    enum class sfn_action { start_execution, start_sync_execution };
    sfn_action state_machine_action = sfn_action::start_execution;
    // REST: the integration's `application/json` request template (VTL text) when the
    // template gave one; empty: the request body is the execution input, as SAM wires an Api
    // event ({"input": "$util.escapeJavaScript($input.json('$'))", "stateMachineArn": …}).
    std::string state_machine_request_template;
    std::string payload_format_version;  // "1.0" (always for REST) or "2.0"
    std::int64_t integration_timeout_ms = 0;  // REST 29000, HTTP API 30000 unless configured
    // The authorizer::name in its API's authorizers that guards the route; "" for none (also
    // an explicit `Authorizer: NONE`, or AWS_IAM, which coldbrew does not check).
    std::string authorizer;
    // HTTP API JWT: the token must carry at least one of these scopes (AuthorizationScopes,
    // serverless `authorizer.scopes`); empty: no scope check.
    std::vector<std::string> authorization_scopes;
    bool api_key_required = false;  // REST: x-api-key must name an enabled key of a usage plan
    source_location where;
};

// How a function's code is built before it runs: SAM `Metadata.BuildMethod` esbuild or
// makefile (what `sam build` does, aws-lambda-builders), or the serverless-esbuild plugin.
// The build writes into artifacts_dir, which becomes the function's code_dir when it has run
// (emulator/build/build.hpp); source_dir is what was built and what `--watch` watches.
struct build_spec {
    std::string method;                   // "esbuild" or "makefile"
    std::filesystem::path source_dir;     // the CodeUri directory (absolute)
    std::filesystem::path artifacts_dir;  // absolute: <project>/.coldbrew/build/<function::name>
    // esbuild's options, from BuildProperties (SAM) or custom.esbuild (serverless).
    struct esbuild_options {
        std::vector<std::string> entry_points;  // relative to source_dir
        // Every other BuildProperties key, in template order, as aws-lambda-builders receives
        // it from SAM CLI (samcli/lib/utils/resource_metadata_normalizer.py: PascalCase →
        // snake_case, "OutExtension" → "out_extension"). A boolean is a flag, a string one
        // value, a list one value per item (nodejs_npm_esbuild/esbuild.py).
        struct property {
            enum class kind { boolean, string, list };
            std::string key;  // snake_case
            kind type = kind::string;
            bool flag = false;                // boolean
            std::vector<std::string> values;  // string: one; list: each item
        };
        std::vector<property> properties;
    } esbuild;
    source_location where;  // the BuildMethod value
    std::string path;       // its key path, "Resources.Hello.Metadata.BuildMethod"
};

// Something in the template that coldbrew reads but does not act on (a resource, an event, a
// plugin, a build method, a property): named once at start, grouped by `kind`, with what it
// means for the run and what would make it work.
struct not_emulated {
    std::string kind;     // the group: "resource", "event", "plugin", "build", "property"
    std::string what;     // "AWS::Serverless::SimpleTable Orders", "Schedule event Nightly of Report"
    source_location where;
    std::string meaning;  // what it means for this run: "nothing creates the table"
    std::string fix;      // what would make it work: "declare it under dependencies: in coldbrew.yaml"
    // false: nothing a local run does would differ were it emulated (IAM roles, log groups,
    // alarms, a published alias). Such entries are printed on one line, and their `what` is
    // "<type> <names>" ("AWS::IAM::Role StockRole, AuditRole") so the line can group them.
    bool local_effect = true;
};

// coldbrew.yaml `functions.<name>.sim`: what the function's handler does, for `coldbrew sim`
// on the stack (a template says what runs, not how long it takes or what it calls). Read only
// by the simulator (emulator/sim_cli/stack_scenario.hpp); `up` ignores it.
//   sim:
//     latency: lognormal(median=40ms, p99=200ms)  # the handler's own work (distribution text)
//     errors: 0.5%                                 # handler errors, share of invocations
//     cpu_share: 0.6                               # of latency, CPU work (at the function's MemorySize)
//     latency_at_memory_mb: 1769                   # where latency was measured, if not at MemorySize
//     calls: [Ledger, {call: payments-db, retry: sdk-standard, timeout: 2s}, {call: Notify, async: true}]
struct function_sim {
    struct call {
        std::string target;  // a function (logical id or FunctionName) or a dependency, as written
        std::optional<models::sim::retry_policy> retry;  // the scenario grammar's policies
        std::optional<double> timeout_ms;                // the caller's wait, > 0
        bool async = false;                              // an Event invocation / fire and forget
        source_location where;
        std::string path;  // "functions.Pay.sim.calls[1]"
    };
    std::optional<models::distribution> latency_ms;
    std::string latency_text;         // as written, for messages
    std::optional<double> error_rate;  // [0, 1)
    // The share of `latency` that is CPU work, in [0, 1]: at another memory size it takes
    // vcpus(MemorySize) / vcpus(memory) times as long (models/sim/scenario.hpp, cpu_share).
    std::optional<double> cpu_share;
    // The memory `latency` was measured at, MB; nullopt: the function's MemorySize. A fit to a
    // run without CPU limits says 1,769 (one full vCPU: the speed the handler ran at).
    std::optional<int> latency_at_memory_mb;
    std::vector<call> calls;
    source_location where;  // the `sim` key
    std::string path;       // "functions.Pay.sim"
};

// coldbrew.yaml top-level `sim:`: the traffic `coldbrew sim` sends the stack.
//   sim:
//     requests: 200000
//     arrivals: {rate: 50}            # the scenario files' grammar (scenario_loader.hpp)
//     routes: {"POST /pay": {weight: 3}, "GET /pay/{id}": 1, "Invoke Worker": 1}
//     client_timeout: 30s
//     slo: 99.9%
// Route keys are the fault rules' ("METHOD /path" as declared, "$default", "Invoke <logical
// id>"); routes not listed get weight 1 unless `routes` lists some, then only those run.
struct stack_sim {
    std::optional<std::uint64_t> requests;
    std::optional<models::sim::arrivals> arrivals;
    struct route_weight {
        std::string route;
        double weight = 1;
        source_location where;  // its key
        std::string path;       // "sim.routes.POST /pay"
    };
    std::vector<route_weight> routes;
    std::optional<double> client_timeout_ms;
    std::optional<double> slo;  // in (0, 1)
    source_location where;      // the `sim` key; line 0 when coldbrew.yaml has none
};

struct function {
    std::string name;           // logical id (SAM) or function key (serverless); the name
                                // used by routes, `coldbrew invoke` and coldbrew.yaml
    std::string function_name;  // deployed name: FunctionName, or SAM's logical id, or
                                // serverless "${service}-${stage}-${key}"
    std::string runtime;        // "nodejs20.x", "python3.12", "provided.al2023", …
    std::string handler;        // "index.handler", "app.lambda_handler", "bootstrap"
    std::filesystem::path code_dir;               // absolute, exists, is a directory
    std::vector<std::filesystem::path> layer_dirs;  // local layer content dirs (absolute), in
                                                    // template order; a .zip layer's is where it
                                                    // was extracted (.coldbrew/layers/…)
    // nullopt: code_dir runs as it is. Set: code_dir is source_dir until the build has run at
    // start, then build->artifacts_dir.
    std::optional<build_spec> build;
    int memory_mb = 128;        // SAM default 128, serverless default 1024
    int timeout_s = 3;          // SAM default 3, serverless default 6
    std::map<std::string, std::string> environment;  // user variables, resolved
    std::string architecture = "x86_64";           // "x86_64" or "arm64"
    bool vpc = false;                              // VpcConfig / vpc with subnets present;
                                                   // always vpc == (vpc_mode != "none")
    // How a VPC function reaches its subnets: "none", "hyperplane" (shared Hyperplane ENIs,
    // the only mode since 2019, so the template loaders set it whenever `vpc` is true) or
    // "legacy-eni" (an ENI per execution environment, pre-2019; coldbrew.yaml only, for
    // comparison). Model input: coldbrew itself runs no VPC.
    std::string vpc_mode = "none";
    // "zip" or "image". Model input only (coldbrew.yaml `package_type`): coldbrew always runs
    // the code directory; templates declaring PackageType Image are rejected.
    std::string package_type = "zip";
    // Lambda extensions the function's environments start, by kind as the model profile
    // names them ("go-agent", "rust-agent"), in coldbrew.yaml order; a kind may repeat (two
    // extensions of one kind). Kinds are checked against the profile, not here.
    std::vector<std::string> extensions;
    // Zipped deployment package size in MB (coldbrew.yaml `package_mb`); nullopt: coldbrew
    // measures code_dir.
    std::optional<double> package_mb;
    // What goes into the .zip from code_dir when coldbrew measures it. serverless.yml: its
    // patterns in the order serverless v3 applies them (lib/plugins/package/lib/
    // package-service.js: defaultExcludes, the configuration file, package.exclude as "!x",
    // then package.include and package.patterns; function-level ones only when packaged
    // individually); '!' leaves out, later patterns win. nullopt: SAM, measured as `sam build`
    // would copy it (functions::measure_package).
    std::optional<std::vector<std::string>> package_patterns;
    bool exclude_dev_dependencies = true;  // serverless package.excludeDevDependencies
    // Network bandwidth (coldbrew.yaml `network:` at the top level, overridden per function):
    // whether the raised quota applies (bandwidth scales with memory for non-VPC functions),
    // and an explicit rate replacing the model's (bytes per second, > 0).
    std::optional<bool> scalable_bandwidth;  // nullopt: settings::scalable_bandwidth
    std::optional<double> bandwidth_bytes_per_s;
    std::optional<int> reserved_concurrency;       // ReservedConcurrentExecutions
    std::optional<int> provisioned_concurrency;    // ProvisionedConcurrentExecutions;
                                                   // never above reserved_concurrency
    // coldbrew's cap on this function's concurrent execution environments. AWS's default is
    // the account's concurrency, 1000 per region shared by all functions [QUOTA] (spec §1.9);
    // coldbrew's default is a local safety limit (each environment is a process), configurable
    // with `max_environments` in coldbrew.yaml (global or per function).
    // ReservedConcurrentExecutions lowers it further, as on AWS.
    int max_environments = 100;
    // Standby execution environments (coldbrew.yaml `standby`, global or per function, or
    // `up --standby`): processes started ahead with their runtime and the handler's init done,
    // outside the model until a cold start takes one, so a burst waits the modeled Init
    // Duration instead of this machine's process starts. `standby_auto`: follow the peak
    // number of concurrently busy environments seen (at least `standby`).
    std::size_t standby = 1;
    bool standby_auto = false;
    // "Text" or "JSON": SAM LoggingConfig.LogFormat (`coldbrew up --log-format` overrides it).
    // JSON turns platform lines into JSON objects and sets AWS_LAMBDA_LOG_FORMAT=JSON.
    std::string log_format = "Text";
    // Asynchronous (Event) invocations (SAM EventInvokeConfig, serverless
    // maximumRetryAttempts/maximumEventAge, coldbrew.yaml `async`). Lambda's defaults: 2
    // retries of a function error, events kept up to 6 h ("Error handling and automatic retries
    // in Lambda", invocation-async-error-handling). Destinations are JSONL files here: AWS
    // destinations (SQS, SNS, EventBridge, Lambda ARNs) are not delivered locally.
    struct async_settings {
        int maximum_retry_attempts = 2;   // 0..2
        int maximum_event_age_s = 21600;  // 60..21600
        std::optional<std::filesystem::path> on_success, on_failure;  // absolute
    } async;
    // Per-function overrides of the model profile (coldbrew.yaml `functions.<name>.model`).
    // Distribution fields hold text already validated with models::parse_distribution().
    struct model_overrides {
        std::optional<std::string> runtime;        // profile runtime row to use, by name
        std::optional<std::string> init_duration;  // distribution (ms)
        std::optional<double> package_ms_per_mb;   // added Init Duration per package MB, >= 0
        std::optional<std::string> keep_alive;     // distribution (ms): idle environment life
        std::optional<std::string> max_lifetime;   // distribution (ms): environment life cap
        source_location where;  // the `model` key; line 0 when coldbrew.yaml has none
        std::string path;       // its key path, "functions.Hello.model"
    } model;
    // Where to report an error about this function's model inputs that only the profile can
    // detect (an unknown extension kind or runtime row): its entry under coldbrew.yaml
    // `functions` when there is one, else the template's function. model_path is the key path
    // for config_error ("functions.Hello", "Resources.Hello").
    source_location model_where;
    std::string model_path;
    std::optional<function_sim> sim;  // coldbrew.yaml `functions.<name>.sim`
    source_location where;
    // The interpreter a nodejs* or python* function runs on, as the resolution pass at start
    // found it (functions::resolve_interpreters, emulator/functions/launcher.hpp); empty:
    // not resolved, the first `node` / `python3` on PATH.
    std::string interpreter;
};

// coldbrew's own options (coldbrew.yaml, top-level keys). Ports: 0 = pick a free one.
// One item of coldbrew.yaml `faults.rules`, kept as JSON text: the rule is parsed against the
// fault registry once main has built it (config knows positions, not fault kinds).
struct fault_rule_text {
    std::string json;      // the YAML item converted to JSON (scalars typed as YAML 1.2 core)
    source_location where;  // the item
    std::string path;       // "faults.rules[2]"
    // Key path inside the rule ("fault.status", "headers.x-id", "nth") → where its value is.
    std::map<std::string, source_location> positions;
};

// coldbrew.yaml `faults:`. Everything is off unless configured.
struct fault_settings {
    std::optional<std::size_t> max_active_faults;  // nullopt: unlimited
    source_location max_active_where;
    // Phantom requests at an SLA's rate (percent in (0, 100]): gateway = API Gateway,
    // invoke = the Lambda Invoke endpoint. nullopt: none.
    std::optional<double> sla_gateway_percent, sla_invoke_percent;
    double phantom_after_share = 0.5;          // share of SLA phantoms that are phantom-after
    std::string phantom_client_sees = "timeout";  // timeout | hang | reset
    std::vector<fault_rule_text> rules;
};

// One item of coldbrew.yaml `dependencies:`: a service handlers talk to (Redis, Postgres, an
// HTTP object store, anything TCP), reached through a coldbrew proxy on 127.0.0.1.
//
//   dependencies:
//     datastore:
//       upstream: 127.0.0.1:8642         # host:port the proxy connects to (required)
//       env: DATA_ADDR                   # handlers get DATA_ADDR=127.0.0.1:<proxy port> …
//       # env: {DATA_URL: "http://{address}/", DATA_HOST: "{host}", DATA_PORT: "{port}"}
//       functions: [Worker]              # which functions get it; default: every function
//       listen: 0                        # the shared listener for clients outside functions
//       latency: {connect: "fixed(2ms)", request: "lognormal(median=1ms, p99=8ms)"}
//       bandwidth: {per_connection: 50MB/s, environment: true}
//       timeouts: {connect: 2s, idle: 5min}
//       availability: {sla: 99.9%, outcome: reset, on: request}
struct dependency {
    std::string name;           // its key; also the fault rules' `dependency`
    std::string upstream_host;  // as written: an IPv4 address or a host name
    int upstream_port = 0;      // 1..65535
    // Variable → template; {host}, {port} and {address} (= host:port) are the proxy's
    // address for the environment. A plain `env: NAME` is {NAME: "{address}"}.
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::string> functions;  // logical ids; empty = every function
    // coldbrew.yaml `service: dynamodb` (or sqs, sns, eventbridge, …): Step Functions Task
    // states of that service (arn:aws:states:::dynamodb:putItem, …:aws-sdk:dynamodb:…) call
    // this dependency with the service's AWS JSON protocol, through its proxy (so its faults
    // apply). "" = none.
    std::string service;
    int listen_port = 0;                 // the shared listener; 0 = ephemeral
    std::optional<std::string> connect_latency;  // distribution (ms), once per connection
    std::optional<std::string> request_latency;  // distribution (ms), once per request turn
    std::optional<double> per_connection_bytes_per_s;  // each direction of each connection
    bool environment_cap = true;         // the environment's modeled bandwidth applies
    double connect_timeout_ms = 5000;    // upstream connect; then the client is reset
    std::optional<double> idle_timeout_ms;  // no byte either way for this long: both closed
    // Availability: requests (or connections) fail at 1 − sla/100. outcome: "refuse" (reset
    // before the upstream is reached), "reset" (RST) or "hang" (held, data dropped).
    std::optional<double> availability_percent;
    std::string availability_outcome = "reset";
    std::string availability_on = "request";  // "connect" or "request"
    source_location where;  // its key
    std::string path;       // "dependencies.datastore"
};

struct settings {
    std::string host = "127.0.0.1";
    int gateway_port = 3000;
    int invoke_port = 3001;  // reserved for the Lambda Invoke API
    int admin_port = 3002;   // reserved for the admin API
    int sfn_port = 3003;     // the Step Functions API (when the stack has state machines)
    // coldbrew.yaml `admin: {host, token}` (up --admin-host / --admin-token win): the admin
    // API binds to admin_host whatever `host` says, so `--host 0.0.0.0` exposes the gateway
    // and the Invoke API, not the control of faults. Off loopback it requires
    // `Authorization: Bearer <admin_token>`; an empty token is then drawn at start and
    // printed (emulator/http/access.hpp). A token set on loopback is required too.
    std::string admin_host = "127.0.0.1";
    std::string admin_token;
    // coldbrew.yaml `request_timeout_ms`: a request must arrive in full within this long of
    // its first byte, else it is answered 408 and its connection closed
    // (http::server_options::request_timeout_ms; every front end).
    std::uint64_t request_timeout_ms = 30000;
    std::optional<std::uint64_t> seed;  // nullopt: drawn at start and printed
    double time_scale = 1.0;            // multiplies injected delays (0 < x)
    std::string region = "us-east-1";         // SAM CLI's local default
    std::string account_id = "123456789012";  // SAM CLI's local default
    int default_max_environments = 100;  // function::max_environments unless overridden
    std::size_t default_standby = 1;     // function::standby unless overridden
    bool default_standby_auto = false;
    // coldbrew.yaml `memory_budget_mb`: all execution environments together past this many MB
    // (each counted as its last REPORT's Max Memory Used) evict idle ones, least recently used
    // first (emulator/functions/memory_budget.hpp); nullopt: no budget.
    std::optional<std::uint64_t> memory_budget_mb;
    // coldbrew.yaml `memory.enforce`: put each execution environment in a cgroup limited to
    // MemorySize where the machine allows it (false: Max Memory Used is measured only).
    bool enforce_memory = true;
    // A model profile file replacing the built-in one (absolute, an existing regular file;
    // not parsed here). profile_where is the `profile` value in coldbrew.yaml.
    std::optional<std::filesystem::path> profile;
    source_location profile_where;
    // The account's concurrency limit for the model; nullopt: the profile's (AWS default
    // 1000 per region [QUOTA]). account_concurrency_where is its value in coldbrew.yaml.
    std::optional<int> account_concurrency;
    source_location account_concurrency_where;
    // File the model's decisions are written to (absolute; its directory exists).
    std::optional<std::filesystem::path> decision_log;
    fault_settings faults;
    // coldbrew.yaml `network: {scalable_bandwidth: true}`: the account has the raised
    // bandwidth quota (function::scalable_bandwidth overrides it per function).
    bool scalable_bandwidth = false;
    std::vector<dependency> dependencies;  // in coldbrew.yaml order
    // coldbrew.yaml `telemetry:` (the CLI's --trace-file / --otlp-endpoint win): the trace
    // file (absolute; its directory exists) and the OTLP/HTTP endpoint ("" when none).
    std::optional<std::filesystem::path> trace_file;
    std::string otlp_endpoint;
    // coldbrew.yaml `runtimes:`: the interpreter each runtime identifier runs on, e.g.
    // {python3.12: /opt/py312/bin/python3}; it wins over every search. `file` is absolute and
    // was an executable file when loaded; `where` is its value.
    struct runtime_interpreter {
        std::filesystem::path file;
        source_location where;
    };
    std::map<std::string, runtime_interpreter> runtimes;
    // coldbrew.yaml `sim:` (what `coldbrew sim PATH` sends the stack; `up` ignores it).
    stack_sim sim;
    // coldbrew.yaml `watch: true` (or `up --watch`): a change to a function's code, build
    // inputs or layers retires its idle and standby environments (emulator/watch/watch.hpp).
    bool watch = false;
};

// A REST API key (SAM Auth.UsagePlan, serverless provider.apiGateway.apiKeys, coldbrew.yaml
// `api_keys`). AWS facts and sources: models/usage_plan/usage_plan.hpp.
struct api_key {
    std::string name;
    // The x-api-key value: the template's or coldbrew.yaml's; "" until the app draws one from
    // the seed at start (printed then, as AWS generates one at deploy).
    std::string value;
    bool enabled = true;
    source_location where;
};

// A usage plan: which keys may call which REST APIs, how fast and how much (SAM
// Auth.UsagePlan, serverless provider.apiGateway.usagePlan). Every key of a plan has its own
// token bucket and quota, as on AWS.
struct usage_plan {
    std::string name;
    std::vector<std::string> api_ids;  // api::id of the REST APIs (their one stage) it covers
    std::vector<std::string> keys;     // api_key::name
    std::optional<double> rate_limit;  // steady requests per second (Throttle.RateLimit)
    std::optional<int> burst_limit;    // bucket depth (Throttle.BurstLimit)
    std::optional<std::int64_t> quota_limit;  // requests per quota period (Quota.Limit)
    std::string quota_period;  // "DAY", "WEEK" or "MONTH" when quota_limit is set
    int quota_offset = 0;      // Quota.Offset: requests subtracted from Limit in the first period
    source_location where;
};

// A schedule (SAM `Schedule` / `ScheduleV2` events, serverless `schedule` events, a state
// machine's `Events`): fires its target on its expression, in modeled time.
struct schedule {
    std::string name;        // the event's key ("Nightly") or "<target>-schedule-<n>"
    std::string expression;  // "rate(5 minutes)", "cron(0 12 * * ? *)", "at(2026-12-01T10:00:00)"
    std::string timezone;    // ScheduleV2 ScheduleExpressionTimezone; "" = UTC
    bool enabled = true;     // Enabled / State: DISABLED → false
    std::string input;       // JSON text handed to the target; "" = the Scheduled Event
    // An EventBridge Scheduler schedule (SAM ScheduleV2, serverless `method: scheduler`)
    // rather than an EventBridge rule: its default event differs (emulator/schedules).
    bool scheduler = false;
    std::string function;        // function::name fired, or
    std::string state_machine;   // state_machine::name whose execution starts
    source_location where;
};

// A Step Functions state machine (AWS::Serverless::StateMachine,
// AWS::StepFunctions::StateMachine, serverless-step-functions `stepFunctions.stateMachines`).
// The definition is kept as JSON with substitutions applied; emulator/states/ parses and
// checks it (states::parse_definition) before anything starts.
struct state_machine {
    std::string name;               // logical id (SAM/CFN) or the plugin's key
    std::string state_machine_name; // deployed name: StateMachineName / `name`, else the id
    enum class kind { standard, express };
    kind type = kind::standard;     // Type / type (STANDARD default, as AWS)
    nlohmann::json definition;      // the Amazon States Language document
    // Where the definition came from, for messages: the template's Definition key, or the
    // DefinitionUri file (its `where.file`).
    source_location where;
    std::string definition_key;     // "Resources.Flow.Properties.Definition"
    std::string role_arn;           // Role / role, resolved or "" (not acted on)
    // Task resources as written that name this stack's functions, resolved by the loader:
    // resource text or FunctionName value → function::name. Filled for
    // `arn:aws:lambda:…:function:NAME`, `!GetAtt Fn.Arn`, `!Ref Fn`, `${Fn}`, `${Fn.Arn}` and
    // DefinitionSubstitutions that resolve to a function.
    std::map<std::string, std::string> function_arns;
};

struct stack {
    enum class source_kind { sam, serverless };
    source_kind kind = source_kind::sam;
    std::filesystem::path template_file;  // absolute
    std::optional<std::filesystem::path> coldbrew_file;  // absolute, when present
    std::vector<function> functions;
    std::vector<api> apis;
    std::vector<route> routes;
    std::vector<api_key> api_keys;
    std::vector<usage_plan> usage_plans;
    std::vector<config::state_machine> state_machines;  // template order
    std::vector<config::schedule> schedules;            // template order
    config::settings settings;
    std::vector<std::string> warnings;  // "file:line:col: key: message" for ignored keys etc.
    // What the template holds that coldbrew does not act on, in template order.
    std::vector<config::not_emulated> ignored;
    // When template_file is `sam build`'s copy (.aws-sam/build/template.yaml), the project's
    // template it was built from (absolute); CodeUri paths are then relative to the build.
    std::optional<std::filesystem::path> built_from;

    const function* find_function(std::string_view name) const;
    const api* find_api(std::string_view id) const;
    const config::state_machine* find_state_machine(std::string_view name) const;
};

struct load_options {
    std::map<std::string, std::string> parameter_overrides;  // SAM --parameter-overrides
    std::optional<std::string> stage;                        // serverless --stage
    std::map<std::string, std::string> env;  // process environment, for ${env:…}
    // The date a runtime's lifecycle is judged on (lambda_runtimes.hpp): a runtime past its
    // block-create date is an error, a deprecated one a warning. The CLI passes today's.
    std::chrono::year_month_day today = runtime_table_checked;
};

// Loads `path`: a template file (template.yaml/.yml, serverless.yml/.yaml) or a directory
// holding one (template.yaml, template.yml, serverless.yml, serverless.yaml, in that order).
// Reads coldbrew.yaml from the same directory when present and applies it.
// `sam build` output is served as sam local serves it: when the directory, or its template.yaml
// or template.yml, was given and .aws-sam/build/template.yaml exists there, that built
// template is loaded instead (CodeUri relative to .aws-sam/build; errors point into it;
// stack::built_from names the project's template, and a built template older than it adds a
// warning). A path to .aws-sam/build/template.yaml itself is served the same way. coldbrew.yaml
// is always read from the project directory.
// serverless.yml `useDotenv: true`: `.env.<stage>`, else `.env`, adds to options.env what it
// does not set, before variables are resolved (env_files.hpp). A layer whose content is a
// .zip is extracted into <project>/.coldbrew/layers/ while loading (layer_zip.hpp).
// Throws config_error on anything malformed, unsupported or inconsistent.
//
// Format: a file named serverless* is a serverless.yml; otherwise AWSTemplateFormatVersion,
// Transform or Resources at the top mean SAM, `service` + `provider` mean serverless.
// SAM (spec §5.1, [SAM-FN], [GLOBALS], SAM CLI `sam_function_provider.py`): Globals merged,
// Parameters (Default, then options.parameter_overrides) and intrinsics resolved as sam local
// does; values it cannot resolve become "" in Environment.Variables with a warning and are
// errors elsewhere. serverless.yml (spec §5.2): ${self:}, ${opt:stage}, ${env:} (from
// options.env), ${sls:stage}, ${aws:region|accountId}, ${param:}, ${file(x.yml):key}, with
// fallbacks; an unresolvable variable in a key coldbrew reads is an error. The region is
// coldbrew.yaml's, else serverless provider.region, else us-east-1.
// coldbrew.yaml (unknown keys are errors, with a "did you mean"):
//   host: string            ports: {gateway, invoke, admin}: 0..65535, distinct unless 0
//   admin: {host: address (default 127.0.0.1), token: string of 16+ characters}
//   request_timeout_ms: 1..3600000 (default 30000)
//   seed: uint64            time_scale: 0 < x <= 1000       region: "us-east-1"-shaped
//   account_id: 12 digits   max_environments: 1..10000 (every function's default; 100)
//   standby: 0..1000 | auto  (every function's default; 1)
//   memory_budget_mb: 1..16777216 | null  (all environments together; no budget by default)
//   profile: path            (relative to coldbrew.yaml's directory; an existing file)
//   account_concurrency: 1..1000000                 (the model's; default: the profile's)
//   decision_log: path       (relative to coldbrew.yaml's directory; its directory exists)
//   watch: bool              (hot reload, as `up --watch`; emulator/watch/watch.hpp)
//   functions: {<function::name>: {
//       memory_mb, timeout_s, max_environments, standby, environment,
//       reserved_concurrency: 0..1000000 | null (null removes the template's),
//       provisioned_concurrency: 0..1000000 | null (at most reserved_concurrency),
//       architecture: x86_64 | arm64,   package_type: zip | image,
//       vpc: none | hyperplane | legacy-eni | true (hyperplane) | false (none),
//       extensions: [kind, …] (non-empty strings, repeats allowed, at most 10: Lambda's
//                   limit per function, Extensions API guide),
//       package_mb: number >= 0,
//       model: {runtime: row name, init_duration: distribution, package_ms_per_mb: >= 0,
//               keep_alive: distribution, max_lifetime: distribution}}}
//     distributions in the text form of models/distribution/distribution.hpp, e.g.
//     "lognormal(median=140ms, p99=190ms)"; errors point at the offending character.
//   gateway: {integration_timeout_ms: 50..900000}  (every route)
//   faults: {max_active_faults: 1..1000000,
//            sla: {gateway: percent, invoke: percent}   (0 < x <= 100; "99.95%" or 99.95),
//            phantom: {after_share: 0..1, client_sees: timeout | hang | reset},
//            rules: [rule, …]}  (models/faults/faults.hpp; parsed by parse_fault_rules)
//   network: {scalable_bandwidth: bool}; per function (functions.<name>.network):
//            {scalable_bandwidth: bool, bandwidth: rate}  (models::bandwidth::parse_rate)
//   runtimes: {<nodejs* or python* runtime id>: path to the interpreter (relative to
//             coldbrew.yaml's directory, absolute, or ~/…; an existing executable file)}
//   telemetry: {trace_file: path (relative to coldbrew.yaml's directory; its directory
//              exists), otlp_endpoint: "http://host:port[/path]"}
//   dependencies: {<name>: dependency}  (see `struct dependency`; names [A-Za-z0-9_-]+)
//     upstream "host:port" or "[v6]:port" (port 1..65535, required);
//     env: NAME | {NAME: template}  (NAME [A-Za-z_][A-Za-z0-9_]*, not one Lambda reserves;
//          templates use only {host}, {port}, {address});
//     functions: [logical id or FunctionName, …]; listen: 0..65535 (distinct unless 0, and
//     from coldbrew.yaml's ports); latency: {connect, request: distribution};
//     bandwidth: {per_connection: rate, environment: bool}; timeouts: {connect, idle: > 0};
//     availability: {sla: percent, outcome: refuse | reset | hang, on: connect | request}
//     (refuse is on connect). One variable from two dependencies for a common function is an
//     error; a variable the function already sets is replaced, with a warning.
//   api_keys: {<name>: value | {value: string, enabled: bool}}  (values of 20 characters or
//     more, as API Gateway requires): a key the template declares takes them; another name
//     adds a key to the usage plan "coldbrew.yaml" (no limits), which covers every REST API
//     with a key-required route. A key left without a value is drawn at start.
//   authorizers: {<name>: {jwks: path | http(s) URL}}  (path relative to coldbrew.yaml's
//     directory, an existing file): the JWKS of every JWT authorizer of that name
//     (authorizer::jwks, jwks_where); a name no JWT authorizer has is an error.
// Provisioned concurrency above reserved concurrency is an error wherever the two values
// come from (AWS rejects it at deploy: PutProvisionedConcurrencyConfig).
// Template keys coldbrew does not know (and events, layers it does not emulate) are
// warnings in stack::warnings, not errors.
stack load_stack(const std::filesystem::path& path, const load_options& options);

// The checks load_stack runs on authorization once the template and coldbrew.yaml are both
// applied, whichever loader produced the stack: a route's authorizer is one of its API's; a
// TOKEN or REQUEST authorizer's function is a function of the stack (config_error at the
// authorizer); TOKEN authorizers only on REST APIs, JWT only on HTTP APIs; api_key_required
// only on REST; usage plans name REST APIs and API keys of the stack. A REST API with
// key-required routes that no usage plan with a key covers gets a warning (every such request
// gets 403 Forbidden, as on AWS).
void check_access(stack& s);

}  // namespace coldbrew::config
