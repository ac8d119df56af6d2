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

#include "emulator/config/config_error.hpp"

namespace coldbrew::config {

enum class api_kind {
    rest,  // API Gateway REST API (SAM `Api` event, serverless `http` event)
    http,  // API Gateway HTTP API (SAM `HttpApi` event, serverless `httpApi` event)
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
    source_location where;
};

struct route {
    std::string api_id;        // api::id this route belongs to
    std::string method;        // upper case: GET, POST, …, or ANY
    std::string path;          // "/pets/{id}", "/{proxy+}", "/", or "$default" (HTTP API only)
    std::string function;      // function::name of the integration
    std::string payload_format_version;  // "1.0" (always for REST) or "2.0"
    std::int64_t integration_timeout_ms = 0;  // REST 29000, HTTP API 30000 unless configured
    source_location where;
};

struct function {
    std::string name;           // logical id (SAM) or function key (serverless); the name
                                // used by routes, `coldbrew invoke` and coldbrew.yaml
    std::string function_name;  // deployed name: FunctionName, or SAM's logical id, or
                                // serverless "${service}-${stage}-${key}"
    std::string runtime;        // "nodejs20.x", "python3.12", "provided.al2023", …
    std::string handler;        // "index.handler", "app.lambda_handler", "bootstrap"
    std::filesystem::path code_dir;               // absolute, exists, is a directory
    std::vector<std::filesystem::path> layer_dirs;  // local layer content dirs (absolute)
    int memory_mb = 128;        // SAM default 128, serverless default 1024
    int timeout_s = 3;          // SAM default 3, serverless default 6
    std::map<std::string, std::string> environment;  // user variables, resolved
    std::string architecture = "x86_64";           // "x86_64" or "arm64"
    bool vpc = false;                              // VpcConfig / vpc with subnets present
    std::optional<int> reserved_concurrency;       // ReservedConcurrentExecutions
    std::optional<int> provisioned_concurrency;    // ProvisionedConcurrentExecutions
    // coldbrew's cap on this function's concurrent execution environments. AWS's default is
    // the account's concurrency, 1000 per region shared by all functions [QUOTA] (spec §1.9);
    // coldbrew's default is a local safety limit (each environment is a process), configurable
    // with `max_environments` in coldbrew.yaml (global or per function).
    // ReservedConcurrentExecutions lowers it further, as on AWS.
    int max_environments = 100;
    source_location where;
};

// coldbrew's own options (coldbrew.yaml, top-level keys). Ports: 0 = pick a free one.
struct settings {
    std::string host = "127.0.0.1";
    int gateway_port = 3000;
    int invoke_port = 3001;  // reserved for the Lambda Invoke API
    int admin_port = 3002;   // reserved for the admin API
    std::optional<std::uint64_t> seed;  // nullopt: drawn at start and printed
    double time_scale = 1.0;            // multiplies injected delays (0 < x)
    std::string region = "us-east-1";         // SAM CLI's local default
    std::string account_id = "123456789012";  // SAM CLI's local default
    int default_max_environments = 100;  // function::max_environments unless overridden
};

struct stack {
    enum class source_kind { sam, serverless };
    source_kind kind = source_kind::sam;
    std::filesystem::path template_file;  // absolute
    std::optional<std::filesystem::path> coldbrew_file;  // absolute, when present
    std::vector<function> functions;
    std::vector<api> apis;
    std::vector<route> routes;
    config::settings settings;
    std::vector<std::string> warnings;  // "file:line:col: key: message" for ignored keys etc.

    const function* find_function(std::string_view name) const;
    const api* find_api(std::string_view id) const;
};

struct load_options {
    std::map<std::string, std::string> parameter_overrides;  // SAM --parameter-overrides
    std::optional<std::string> stage;                        // serverless --stage
    std::map<std::string, std::string> env;  // process environment, for ${env:…}
};

// Loads `path`: a template file (template.yaml/.yml, serverless.yml/.yaml) or a directory
// holding one (template.yaml, template.yml, serverless.yml, serverless.yaml, in that order).
// Reads coldbrew.yaml from the same directory when present and applies it.
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
//   seed: uint64            time_scale: 0 < x <= 1000       region: "us-east-1"-shaped
//   account_id: 12 digits   max_environments: 1..10000 (every function's default; 100)
//   functions: {<function::name>: {memory_mb, timeout_s, max_environments, environment}}
//   gateway: {integration_timeout_ms: 50..900000}  (every route)
// Template keys coldbrew does not know (and events, layers it does not emulate) are
// warnings in stack::warnings, not errors.
stack load_stack(const std::filesystem::path& path, const load_options& options);

}  // namespace coldbrew::config
