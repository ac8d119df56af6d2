// SAM template → stack. What is read, and how, follows what `sam local start-api` does
// (spec §5.1): samtranslator's Globals and implicit-API plugins first, then SAM CLI's
// intrinsic resolver (`samcli/lib/providers/sam_base_provider.py`,
// `samcli/lib/providers/sam_function_provider.py`).

#include "emulator/config/intrinsics.hpp"
#include "emulator/config/layer_zip.hpp"
#include "emulator/config/loaders.hpp"
#include "emulator/config/not_emulated.hpp"
#include "emulator/config/rules.hpp"
#include "emulator/config/openapi_sfn.hpp"
#include "emulator/config/state_machines.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <set>

namespace coldbrew::config::detail {

namespace {

constexpr std::string_view implicit_rest_api = "ServerlessRestApi";
constexpr std::string_view implicit_http_api = "ServerlessHttpApi";
// SAM CLI serves the implicit REST API under the "Prod" stage (its local default), and an
// HTTP API under "$default" [SAM-HTTPAPI].
constexpr std::string_view implicit_rest_stage = "Prod";
constexpr std::string_view default_http_stage = "$default";

constexpr std::array<std::string_view, 11> top_level_keys = {"AWSTemplateFormatVersion",
                                                             "Transform",
                                                             "Description",
                                                             "Metadata",
                                                             "Parameters",
                                                             "Mappings",
                                                             "Conditions",
                                                             "Rules",
                                                             "Resources",
                                                             "Outputs",
                                                             "Globals"};

// [GLOBALS]: the resource types Globals applies to.
constexpr std::array<std::string_view, 7> globals_keys = {
    "Function",     "Api",          "HttpApi",         "SimpleTable",
    "StateMachine", "LayerVersion", "CapacityProvider"};

constexpr std::array<std::string_view, 11> resource_keys = {
    "Type",           "Properties",          "Metadata",     "Condition",      "DependsOn",
    "DeletionPolicy", "UpdateReplacePolicy", "UpdatePolicy", "CreationPolicy", "Connectors",
    "IgnoreGlobals"};

constexpr std::array<std::string_view, 11> parameter_keys = {
    "Type",        "Default",   "AllowedValues", "AllowedPattern", "ConstraintDescription",
    "Description", "MaxLength", "MaxValue",      "MinLength",      "MinValue",
    "NoEcho"};

// [SAM-FN] property list; the ones coldbrew reads plus the ones it accepts and ignores.
constexpr std::array<std::string_view, 48> function_properties = {"Architectures",
                                                                  "AssumeRolePolicyDocument",
                                                                  "AutoPublishAlias",
                                                                  "AutoPublishAliasAllProperties",
                                                                  "AutoPublishCodeSha256",
                                                                  "CapacityProviderConfig",
                                                                  "CodeSigningConfigArn",
                                                                  "CodeUri",
                                                                  "DeadLetterQueue",
                                                                  "DeploymentPreference",
                                                                  "Description",
                                                                  "DurableConfig",
                                                                  "Environment",
                                                                  "EphemeralStorage",
                                                                  "EventInvokeConfig",
                                                                  "Events",
                                                                  "FileSystemConfigs",
                                                                  "FunctionName",
                                                                  "FunctionScalingConfig",
                                                                  "FunctionUrlConfig",
                                                                  "Handler",
                                                                  "ImageConfig",
                                                                  "ImageUri",
                                                                  "InlineCode",
                                                                  "KmsKeyArn",
                                                                  "Layers",
                                                                  "LoggingConfig",
                                                                  "MemorySize",
                                                                  "PackageType",
                                                                  "PermissionsBoundary",
                                                                  "Policies",
                                                                  "PropagateTags",
                                                                  "ProvisionedConcurrencyConfig",
                                                                  "PublishToLatestPublished",
                                                                  "RecursiveLoop",
                                                                  "ReservedConcurrentExecutions",
                                                                  "Role",
                                                                  "RolePath",
                                                                  "Runtime",
                                                                  "RuntimeManagementConfig",
                                                                  "SnapStart",
                                                                  "SourceKMSKeyArn",
                                                                  "Tags",
                                                                  "TenancyConfig",
                                                                  "Timeout",
                                                                  "Tracing",
                                                                  "VersionDescription",
                                                                  "VpcConfig"};

constexpr std::array<std::string_view, 29> api_properties = {"AccessLogSetting",
                                                             "AlwaysDeploy",
                                                             "ApiKeySourceType",
                                                             "Auth",
                                                             "BinaryMediaTypes",
                                                             "CacheClusterEnabled",
                                                             "CacheClusterSize",
                                                             "CanarySetting",
                                                             "Cors",
                                                             "DefinitionBody",
                                                             "DefinitionUri",
                                                             "Description",
                                                             "DisableExecuteApiEndpoint",
                                                             "Domain",
                                                             "EndpointConfiguration",
                                                             "FailOnWarnings",
                                                             "GatewayResponses",
                                                             "MergeDefinitions",
                                                             "MethodSettings",
                                                             "MinimumCompressionSize",
                                                             "Mode",
                                                             "Models",
                                                             "Name",
                                                             "OpenApiVersion",
                                                             "PropagateTags",
                                                             "StageName",
                                                             "Tags",
                                                             "TracingEnabled",
                                                             "Variables"};

constexpr std::array<std::string_view, 16> http_api_properties = {"AccessLogSettings",
                                                                  "Auth",
                                                                  "CorsConfiguration",
                                                                  "DefaultRouteSettings",
                                                                  "DefinitionBody",
                                                                  "DefinitionUri",
                                                                  "Description",
                                                                  "DisableExecuteApiEndpoint",
                                                                  "Domain",
                                                                  "FailOnWarnings",
                                                                  "Name",
                                                                  "PropagateTags",
                                                                  "RouteSettings",
                                                                  "StageName",
                                                                  "StageVariables",
                                                                  "Tags"};

constexpr std::array<std::string_view, 8> api_event_properties = {"Path",
                                                                  "Method",
                                                                  "RestApiId",
                                                                  "Auth",
                                                                  "RequestModel",
                                                                  "RequestParameters",
                                                                  "TimeoutInMillis",
                                                                  "ResponseTransferMode"};

constexpr std::array<std::string_view, 7> http_event_properties = {
    "ApiId", "Path", "Method", "PayloadFormatVersion", "TimeoutInMillis", "RouteSettings", "Auth"};

constexpr std::array<std::string_view, 2> event_keys = {"Type", "Properties"};

// [SAM-FN] Events: every event source type SAM knows; an unknown one may be a typo of ours.
constexpr std::array<std::string_view, 19> sam_event_types = {"Api",
                                                              "HttpApi",
                                                              "S3",
                                                              "SNS",
                                                              "SQS",
                                                              "Kinesis",
                                                              "DynamoDB",
                                                              "MSK",
                                                              "MQ",
                                                              "SelfManagedKafka",
                                                              "DocumentDB",
                                                              "Schedule",
                                                              "ScheduleV2",
                                                              "CloudWatchEvent",
                                                              "EventBridgeRule",
                                                              "CloudWatchLogs",
                                                              "IoTRule",
                                                              "AlexaSkill",
                                                              "Cognito"};
constexpr std::array<std::string_view, 2> emulated_event_types = {"Api", "HttpApi"};

// AWS::Serverless::StateMachine properties (SAM developer guide, sam-resource-statemachine).
// Role, Policies, PermissionsBoundary, RolePath, Logging, Tracing, Tags and the alias and
// deployment keys have no local effect and are accepted without a word.
constexpr std::array<std::string_view, 16> sam_state_machine_properties = {
    "AutoPublishAlias", "Definition",  "DefinitionSubstitutions", "DefinitionUri",
    "DeploymentPreference", "Events",  "Logging",                 "Name",
    "PermissionsBoundary", "Policies", "Role",                    "RolePath",
    "Tags",             "Tracing",     "Type",                    "UseAliasAsEventTarget"};
// AWS::StepFunctions::StateMachine properties (CloudFormation template reference).
constexpr std::array<std::string_view, 11> cfn_state_machine_properties = {
    "Definition",           "DefinitionS3Location", "DefinitionString",
    "DefinitionSubstitutions", "EncryptionConfiguration", "LoggingConfiguration",
    "RoleArn",              "StateMachineName",     "StateMachineType",
    "Tags",                 "TracingConfiguration"};
// SAM StateMachine EventSource Type: "Valid values: Api, Schedule, ScheduleV2,
// CloudWatchEvent, EventBridgeRule" (sam-property-statemachine-statemachineeventsource).
constexpr std::array<std::string_view, 5> state_machine_event_types = {
    "Api", "Schedule", "ScheduleV2", "CloudWatchEvent", "EventBridgeRule"};
constexpr std::array<std::string_view, 5> state_machine_api_event_properties = {
    "Path", "Method", "RestApiId", "Auth", "UnescapeMappingTemplate"};
// Schedule (function and state machine event; EventBridge rule) and ScheduleV2 (EventBridge
// Scheduler) properties: sam-property-function-schedule, sam-property-statemachine-
// statemachineschedule, sam-property-function-schedulev2, ...-statemachineschedulev2.
constexpr std::array<std::string_view, 10> schedule_event_properties = {
    "Schedule", "Enabled", "State",      "Input",  "Name",
    "Description", "DeadLetterConfig", "RetryPolicy", "RoleArn", "Target"};
constexpr std::array<std::string_view, 16> schedule_v2_event_properties = {
    "ScheduleExpression", "ScheduleExpressionTimezone", "State", "Input", "Name",
    "Description", "DeadLetterConfig", "RetryPolicy", "RoleArn", "StartDate", "EndDate",
    "FlexibleTimeWindow", "GroupName", "KmsKeyArn", "OmitName", "PermissionsBoundary"};
constexpr std::array<std::string_view, 2> state_machine_types = {"STANDARD", "EXPRESS"};
constexpr std::array<std::string_view, 2> schedule_states = {"ENABLED", "DISABLED"};

bool is_layer_type(const std::string& type) {
    return type == "AWS::Serverless::LayerVersion" || type == "AWS::Lambda::LayerVersion";
}

bool is_plain_map(const ynode& n) {
    return n.is_map() && intrinsic_name(n).empty();
}

// [GLOBALS] merge: maps deep-merged (resource wins per key), lists concatenated (Globals
// first), anything else: the resource's value wins.
ynode merge_globals(const ynode& global, const ynode& local) {
    if (is_plain_map(global) && is_plain_map(local)) {
        ynode out = local;
        for (const auto& g : global.members) {
            auto mine = std::find_if(out.members.begin(), out.members.end(),
                                     [&](const ymember& m) { return m.key == g.key; });
            if (mine != out.members.end()) {
                mine->value = merge_globals(g.value, mine->value);
            } else {
                out.members.push_back(g);
            }
        }
        return out;
    }
    if (global.is_sequence() && local.is_sequence()) {
        ynode out = local;
        out.items = global.items;
        out.items.insert(out.items.end(), local.items.begin(), local.items.end());
        return out;
    }
    return local;
}

// SAM stores '/' in BinaryMediaTypes as "~1" (API Gateway's JSON-pointer escaping).
std::string decode_media_type(std::string s) {
    for (std::size_t pos = 0; (pos = s.find("~1", pos)) != std::string::npos; ++pos) {
        s.replace(pos, 2, "/");
    }
    return s;
}

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto comma = s.find(',', start);
        std::string item = s.substr(start, comma - start);
        const auto b = item.find_first_not_of(' ');
        const auto e = item.find_last_not_of(' ');
        out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

class sam_loader {
  public:
    sam_loader(const ynode& root, const load_options& options, stack& out)
        : root_(root), options_(options), out_(out), base_dir_(out.template_file.parent_path()) {}

    void run();

  private:
    std::map<std::string, ynode> read_parameters();
    void read_globals();
    void read_function(const ymember& res, const ynode& props_raw);
    void read_api(const ymember& res, const ynode& props_raw, api_kind kind);
    void read_stage_variables(const ynode& props, api& a);
    void read_events(const function& fn, const ynode& events);
    void read_layers(function& fn, const ynode& layers);
    void read_state_machine(const ymember& res, const ynode& props_raw, bool sam);
    void read_state_machine_events(const state_machine& m, const ynode& events);
    // A Schedule / ScheduleV2 event of a function or state machine (target's name in `m` or
    // `fn`): its config::schedule, appended to out_.schedules.
    void read_schedule_event(const ymember& ev, const std::string& type, const ynode& props,
                             const std::string& fn, const std::string& machine);
    std::map<std::string, std::string> read_substitutions(const ynode& props);
    std::optional<std::filesystem::path> layer_dir(const std::string& id, const ynode& at);

    // The resolved value of props[key]; nullopt when absent or AWS::NoValue. Values that
    // cannot be resolved locally are errors here: every caller needs the real value.
    std::optional<ynode> value(const ynode& props, std::string_view key);
    std::string api_ref(const ynode& raw, const std::string& expected_type, std::string_view what);

    // Authorization, CORS and usage plans, read once every function and API is known (the
    // routes an API's defaults apply to, and the functions authorizers name).
    void read_access(api& a, const ynode& props);
    void read_rest_authorizer(api& a, const ymember& m);
    void read_http_authorizer(api& a, const ymember& m);
    std::string authorizer_function(const ynode& arn_raw, const std::string& api_id,
                                    const std::string& name);
    void read_rest_cors(api& a, const ynode& cors);
    void read_http_cors(api& a, const ynode& cors);
    void read_usage_plan(const api& a, const ynode& plan);
    void apply_route_auth(const api& a, const std::string& default_authorizer,
                          bool api_key_required);
    void read_gateway_resources();
    void note_resource(const ymember& res, const std::string& type);
    void note_properties(const function& fn, const ynode& props);

    // Merged (Globals applied), unresolved properties of each explicit API, by id.
    std::map<std::string, ynode> api_props_;
    // The resolved `Auth` of each route's event, by index in out_.routes.
    std::map<std::size_t, ynode> route_auth_;
    // Authorizer names an API declares that coldbrew does not check (Cognito, AWS_IAM):
    // routes naming them run unauthenticated, with a warning at the authorizer.
    std::map<std::string, std::set<std::string>> unchecked_authorizers_;
    // Scopes an HTTP API JWT authorizer declares for the routes it guards (OAuth2Authorizer
    // AuthorizationScopes), by API id then authorizer name.
    std::map<std::string, std::map<std::string, std::vector<std::string>>> authorizer_scopes_;

    const ynode& root_;
    const load_options& options_;
    stack& out_;
    std::filesystem::path base_dir_;
    std::optional<intrinsic_resolver> resolver_;
    ynode globals_function_;
    ynode globals_api_;
    ynode globals_http_api_;
    ynode globals_state_machine_;
    struct openapi_body {
        std::string api_id;
        api_kind kind;
        const ymember* body;  // in root_
    };
    std::vector<openapi_body> openapi_bodies_;
    void read_openapi_bodies();
};

// The Step Functions integrations of each API's OpenAPI DefinitionBody become routes; the rest
// of a definition stays unread, said once per API.
void sam_loader::read_openapi_bodies() {
    for (const auto& b : openapi_bodies_) {
        const ynode& body = b.body->value;
        if (!body.is_map()) {
            out_.warnings.push_back(warning_key_text(
                *b.body, body.path,
                "an OpenAPI definition that is not written inline is not read; declare the "
                "routes as function events"));
            continue;
        }
        const auto read = detail::read_openapi_sfn(body, b.kind == api_kind::http,
                                                   out_.state_machines, out_.settings);
        for (const auto& o : read.routes) {
            route r;
            r.api_id = b.api_id;
            r.method = o.method;
            r.path = o.path;
            r.state_machine = o.state_machine;
            r.state_machine_action = o.action;
            r.state_machine_request_template = o.request_template;
            r.payload_format_version = "1.0";
            r.integration_timeout_ms = b.kind == api_kind::http ? http_integration_timeout_ms
                                                                : rest_integration_timeout_ms;
            r.where = o.where;
            add_route(out_.routes, std::move(r), b.kind, body);
        }
        if (read.other_integrations > 0) {
            out_.warnings.push_back(warning_key_text(
                *b.body, body.path,
                std::to_string(read.other_integrations) +
                    " operation(s) of the OpenAPI definition are not Step Functions integrations "
                    "and are not read; declare those routes as function events"));
        }
    }
}

void sam_loader::run() {
    expect_map(root_, "a SAM template");
    warn_unknown_keys(root_, top_level_keys, out_.warnings);
    const ymember* resources = root_.find_member("Resources");
    if (!resources) {
        throw config_error({out_.template_file.string(), 1, 1}, "Resources",
                           "a SAM template needs a Resources section");
    }
    expect_map(resources->value, "Resources");

    resolver_.emplace(root_, read_parameters(), out_.settings.region, out_.settings.account_id);
    read_globals();

    for (const auto& res : resources->value.members) {
        const ynode& r = res.value;
        expect_map(r, "a resource");
        const ynode* type_node = r.find("Type");
        if (!type_node) {
            fail_missing(r, "Type", resource_keys, ynode::make_map(res.key_where, r.path),
                         "resource " + res.key + " has no Type");
        }
        const std::string& type = expect_string(*type_node, "Type");
        const bool machine = type == "AWS::Serverless::StateMachine" ||
                             type == "AWS::StepFunctions::StateMachine";
        const bool ours = type == "AWS::Serverless::Function" || type == "AWS::Serverless::Api" ||
                          type == "AWS::Serverless::HttpApi" || machine;
        if (!ours) {
            note_resource(res, type);
            continue;
        }
        warn_unknown_keys(r, resource_keys, out_.warnings);
        if (!resolver_->resource_enabled(res.key)) {
            out_.warnings.push_back(
                warning_key_text(res, r.path, res.key + " skipped: its Condition is false"));
            continue;
        }
        ynode empty = ynode::make_map(r.where, join_path(r.path, "Properties"));
        const ynode* props = r.find("Properties");
        if (props && props->is_null()) props = nullptr;
        if (props) expect_map(*props, "Properties");
        const ynode& raw = props ? *props : empty;
        if (type == "AWS::Serverless::Function") {
            read_function(res, raw);
        } else if (machine) {
            read_state_machine(res, raw, type == "AWS::Serverless::StateMachine");
        } else {
            read_api(res, raw, type == "AWS::Serverless::Api" ? api_kind::rest : api_kind::http);
        }
    }

    // Functions may come after the machines that run them.
    for (auto& m : out_.state_machines) collect_function_arns(m, out_.functions);
    read_openapi_bodies();

    // Implicit APIs exist only when some function has an event for them
    // (`samtranslator/plugins/api/implicit_*_api_plugin.py`).
    for (const auto& [id, kind] : {std::pair{implicit_rest_api, api_kind::rest},
                                   std::pair{implicit_http_api, api_kind::http}}) {
        auto found = implicit_api(out_.routes, id, kind);
        if (!found) continue;
        api& a = *found;
        if (kind == api_kind::rest) {
            a.stage = std::string(implicit_rest_stage);
            if (const ynode* types = globals_api_.find("BinaryMediaTypes")) {
                const ynode v = resolver_->resolve(*types);
                if (v.type != ynode::kind::no_value) {
                    for (const auto& t : expect_sequence(v, "BinaryMediaTypes").items) {
                        a.binary_media_types.push_back(
                            decode_media_type(expect_string(t, "media type")));
                    }
                }
            }
            read_stage_variables(globals_api_, a);
        } else {
            a.stage = std::string(default_http_stage);
            read_stage_variables(globals_http_api_, a);
        }
        out_.apis.push_back(std::move(a));
    }

    for (auto& a : out_.apis) {
        auto props = api_props_.find(a.id);
        read_access(a, props != api_props_.end()
                           ? props->second
                           : (a.kind == api_kind::rest ? globals_api_ : globals_http_api_));
    }
    read_gateway_resources();
    if (const ynode* outputs = root_.find("Outputs"); outputs && outputs->is_map()) {
        for (const auto& o : outputs->members)
            add_entry(out_.ignored, {"resource", "Outputs " + o.key, o.key_where, "", "", false});
    }
}

// Every resource the loop above does not read, except those other parts read (layers, API
// keys and usage plans) or warn about (raw API Gateway authorizers).
void sam_loader::note_resource(const ymember& res, const std::string& type) {
    static constexpr std::array<std::string_view, 5> read_elsewhere = {
        "AWS::ApiGateway::ApiKey", "AWS::ApiGateway::UsagePlan", "AWS::ApiGateway::UsagePlanKey",
        "AWS::ApiGateway::Authorizer", "AWS::ApiGatewayV2::Authorizer"};
    if (is_layer_type(type) ||
        std::find(read_elsewhere.begin(), read_elsewhere.end(), type) != read_elsewhere.end())
        return;
    // A resource its Condition leaves out is not deployed either. A Condition coldbrew cannot
    // evaluate keeps it listed: nothing is read from it, so it is no reason to stop the run.
    bool enabled = true;
    try {
        enabled = resolver_->resource_enabled(res.key);
    } catch (const config_error&) {
    }
    if (!enabled) return;
    add_entry(out_.ignored, resource_entry(type, res.key, res.key_where));
}

// Function properties coldbrew reads but does not act on, where a user would notice.
void sam_loader::note_properties(const function& fn, const ynode& props) {
    struct rule {
        const char* key;
        const char* meaning;
        const char* fix;
        bool local_effect;
    };
    static const rule rules[] = {
        {"FunctionUrlConfig", "no function URL is served",
         "an HttpApi event serves the function with the same event (payload 2.0)", true},
        {"Policies", "IAM is not enforced: handlers call AWS with the credentials coldbrew was "
                     "started with, not the function's role",
         "start coldbrew with the role's credentials to try its permissions", true},
        {"Role", "IAM is not enforced: handlers call AWS with the credentials coldbrew was "
                 "started with, not the function's role",
         "start coldbrew with the role's credentials to try its permissions", true},
        {"DeadLetterQueue", "failed asynchronous events are not sent to it",
         "coldbrew.yaml functions.<name>.async.on_failure writes them to a JSONL file", true},
        {"SnapStart", "cold starts are modeled without SnapStart's snapshot restore",
         "coldbrew.yaml functions.<name>.model.init_duration sets the restore time you measured",
         true},
        {"EphemeralStorage", "/tmp is this machine's, not a volume of that size", "", true},
        {"FileSystemConfigs", "the EFS file system is not mounted at its LocalMountPath",
         "point the handler at a local directory through an environment variable", true},
        {"RuntimeManagementConfig", "runtime version pinning does not apply: the local "
                                    "interpreter runs",
         "coldbrew.yaml `runtimes:` names the interpreter a runtime runs on", true},
        // Durable functions (SAM DurableConfig; Lambda developer guide, "Lambda durable
        // functions"): Lambda checkpoints and replays the execution, and the durable SDK
        // expects the service's execution payload, which coldbrew does not send.
        {"DurableConfig", "durable executions are not emulated: the handler gets a plain event, "
                          "which the durable SDK refuses, so each invocation fails",
         "test the steps as plain functions, or run it on AWS", true},
        {"CapacityProviderConfig", "it runs as an ordinary on-demand function here",
         "", true},
        {"FunctionScalingConfig", "its scaling limits are not applied", "coldbrew.yaml "
         "functions.<name>.reserved_concurrency or max_environments bound concurrency", true},
        {"TenancyConfig", "execution environments are not isolated per tenant", "", true},
        {"RecursiveLoop", "recursive invocation loops are not detected or stopped", "", true},
        {"AutoPublishAlias", "", "", false},
        {"AutoPublishAliasAllProperties", "", "", false},
        {"AutoPublishCodeSha256", "", "", false},
        {"DeploymentPreference", "", "", false},
        {"CodeSigningConfigArn", "", "", false},
        {"KmsKeyArn", "", "", false},
        {"PermissionsBoundary", "", "", false},
        {"Tags", "", "", false},
        {"Description", "", "", false},
        {"VersionDescription", "", "", false},
        {"AssumeRolePolicyDocument", "", "", false},
        {"RolePath", "", "", false},
        {"PropagateTags", "", "", false},
        {"PublishToLatestPublished", "", "", false},
        {"SourceKMSKeyArn", "", "", false},
    };
    for (const auto& r : rules) {
        const ynode* v = props.find(r.key);
        if (!v || v->is_null()) continue;
        add_property(out_.ignored, r.key, fn.name, v->where, r.meaning, r.fix, r.local_effect);
    }
    // Tracing: only Active sends anything (Active | PassThrough | Disabled, [SAM-FN]).
    if (const ynode* t = props.find("Tracing"); t && t->is_scalar() && t->text == "Active")
        add_property(out_.ignored, "Tracing", fn.name, t->where, "no X-Ray segments are sent",
                     "coldbrew's own traces: `up --trace-file` or `--otlp-endpoint`");
}

std::map<std::string, ynode> sam_loader::read_parameters() {
    std::map<std::string, ynode> values;
    const ynode* params = root_.find("Parameters");
    if (params && !params->is_null()) {
        expect_map(*params, "Parameters");
        for (const auto& p : params->members) {
            const ynode& def = expect_map(p.value, "a parameter");
            warn_unknown_keys(def, parameter_keys, out_.warnings);
            const ynode* type_node = def.find("Type");
            if (!type_node) fail_key(p, def.path, "parameter " + p.key + " has no Type");
            const std::string& type = expect_string(*type_node, "Type");
            const bool is_list = type == "CommaDelimitedList" || type.rfind("List<", 0) == 0;

            ynode value;
            if (auto o = options_.parameter_overrides.find(p.key);
                o != options_.parameter_overrides.end()) {
                value = ynode::make_scalar(o->second, def.where, def.path);
            } else if (const ynode* d = def.find("Default")) {
                value = *d;
            } else {
                value.type = ynode::kind::unresolved;
                value.text = "parameter " + p.key + " has no Default and no override";
                value.where = def.where;
                value.path = def.path;
                values[p.key] = value;
                continue;
            }
            const std::string what = "parameter " + p.key;
            if (is_list && value.is_scalar()) {
                ynode list = ynode::make_sequence(value.where, value.path);
                for (auto& item : split_list(value.text)) {
                    list.items.push_back(ynode::make_scalar(item, value.where, value.path));
                }
                value = std::move(list);
            } else if (!is_list) {
                expect_string(value, what);
                if (type == "Number") expect_double(value, what);
                if (const ynode* allowed = def.find("AllowedValues")) {
                    const auto& items = expect_sequence(*allowed, "AllowedValues").items;
                    const bool ok = std::any_of(items.begin(), items.end(), [&](const ynode& a) {
                        return a.is_scalar() && a.text == value.text;
                    });
                    if (!ok)
                        fail(value,
                             what + ": '" + value.text + "' is not one of its AllowedValues");
                }
                // AllowedPattern is not checked: CloudFormation's Java regex dialect is not
                // std::regex's, and sam local does not check it either.
            }
            values[p.key] = std::move(value);
        }
    }
    for (const auto& [name, v] : options_.parameter_overrides) {
        if (!values.count(name)) {
            out_.warnings.push_back(
                format_config_error({out_.template_file.string(), 0, 0}, "Parameters",
                                    "override for unknown parameter " + name + " ignored"));
        }
    }
    return values;
}

void sam_loader::read_globals() {
    const ynode* globals = root_.find("Globals");
    globals_function_ = ynode::make_map({}, "Globals.Function");
    globals_api_ = ynode::make_map({}, "Globals.Api");
    globals_http_api_ = ynode::make_map({}, "Globals.HttpApi");
    globals_state_machine_ = ynode::make_map({}, "Globals.StateMachine");
    if (!globals || globals->is_null()) return;
    expect_map(*globals, "Globals");
    warn_unknown_keys(*globals, globals_keys, out_.warnings);
    auto take = [&](std::string_view key, ynode& into, std::span<const std::string_view> known) {
        if (const ynode* g = globals->find(key); g && !g->is_null()) {
            into = expect_map(*g, "Globals." + std::string(key));
            warn_unknown_keys(into, known, out_.warnings);
        }
    };
    take("Function", globals_function_, function_properties);
    take("Api", globals_api_, api_properties);
    take("HttpApi", globals_http_api_, http_api_properties);
    take("StateMachine", globals_state_machine_, sam_state_machine_properties);
}

std::optional<ynode> sam_loader::value(const ynode& props, std::string_view key) {
    const ynode* raw = props.find(key);
    if (!raw) return std::nullopt;
    ynode v = resolver_->resolve(*raw);
    if (v.type == ynode::kind::no_value) return std::nullopt;
    if (v.type == ynode::kind::unresolved)
        fail(v, std::string(key) + " cannot be resolved locally: " + v.text);
    return v;
}

namespace {

// SAM CLI hands BuildProperties to aws-lambda-builders with their keys in snake_case
// (samcli/lib/utils/resource_metadata_normalizer.py, normalize_build_properties: "_" before
// every capital but the first, then lower case): "OutExtension" → "out_extension".
std::string build_property_key(std::string_view key) {
    std::string out;
    for (std::size_t i = 0; i < key.size(); ++i) {
        const char c = key[i];
        if (i > 0 && std::isupper(static_cast<unsigned char>(c))) out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

bool is_yaml_bool(const ynode& n, bool& value) {
    if (!n.is_scalar() || n.quoted || !n.tag.empty()) return false;
    if (n.text == "true" || n.text == "True" || n.text == "TRUE") return value = true, true;
    if (n.text == "false" || n.text == "False" || n.text == "FALSE") return value = false, true;
    return false;
}

bool is_yaml_number(const ynode& n) {
    if (!n.is_scalar() || n.quoted || n.text.empty()) return false;
    std::size_t i = n.text[0] == '-' || n.text[0] == '+' ? 1 : 0;
    if (i == n.text.size()) return false;
    bool digit = false;
    for (; i < n.text.size(); ++i) {
        const char c = n.text[i];
        if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
        else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') return false;
    }
    return digit;
}

// aws-lambda-builders turns a property into flags by its Python type
// (nodejs_npm_esbuild/esbuild.py, _get_config_type_callback): bool, str or list; anything
// else (a number, a mapping) fails the build there, so it is a config error here.
build_spec::esbuild_options::property read_esbuild_property(const ymember& m) {
    using property = build_spec::esbuild_options::property;
    property p;
    p.key = build_property_key(m.key);
    const std::string what = "BuildProperties." + m.key;
    const ynode& v = m.value;
    const std::string expected = " must be a boolean, a string or a list of strings";
    if (bool b = false; is_yaml_bool(v, b)) {
        p.type = property::kind::boolean;
        p.flag = b;
    } else if (v.is_scalar()) {
        if (is_yaml_number(v) || !v.tag.empty())
            fail(v, what + expected + " (quote a number: \"" + v.text + "\")");
        p.type = property::kind::string;
        p.values.push_back(v.text);
    } else if (v.is_sequence()) {
        p.type = property::kind::list;
        for (const ynode& item : v.items) {
            if (!item.is_scalar() || !item.tag.empty()) fail(item, what + expected);
            p.values.push_back(item.text);
        }
    } else {
        fail(v, what + expected);
    }
    // SAM's guide gives Minify as a Boolean ("Building Node.js Lambda functions with
    // esbuild"); anything else would reach esbuild as a flag it refuses, after the start.
    if (p.key == "minify" && p.type != property::kind::boolean)
        fail(v, what + " must be true or false");
    return p;
}

}  // namespace

// A function's resource-level Metadata.BuildMethod, as `sam build` reads it
// (samcli/lib/build/app_builder.py): esbuild and makefile become fn.build; a language's own
// builder or one coldbrew does not run is named in stack::ignored. A stack served from
// .aws-sam/build is already built.
void read_sam_build(const ymember& res, function& fn, stack& out) {
    if (out.built_from) return;
    const ynode* metadata = res.value.find("Metadata");
    if (!metadata || !metadata->is_map()) return;
    const ynode* method_node = metadata->find("BuildMethod");
    if (!method_node || method_node->is_null()) return;
    const std::string& method = expect_string(*method_node, "Metadata.BuildMethod");
    const std::string& id = res.key;
    if (method == "esbuild" || method == "makefile") {
        build_spec b;
        b.method = method;
        b.source_dir = fn.code_dir;
        b.artifacts_dir = out.template_file.parent_path() / ".coldbrew" / "build" / fn.name;
        b.where = method_node->where;
        b.path = method_node->path;
        const ynode* props = metadata->find("BuildProperties");
        if (props && !props->is_null()) expect_map(*props, "Metadata.BuildProperties");
        if (method == "esbuild") {
            bool have_entry_points = false;
            for (const ymember& m : props ? props->members : std::vector<ymember>{}) {
                auto p = read_esbuild_property(m);
                if (p.key == "entry_points") {
                    // esbuild.py build_entry_points: a list, not empty.
                    if (p.type != build_spec::esbuild_options::property::kind::list)
                        fail(m.value, "BuildProperties.EntryPoints must be a list of files");
                    if (p.values.empty())
                        fail(m.value, "BuildProperties.EntryPoints must not be empty");
                    b.esbuild.entry_points = std::move(p.values);
                    have_entry_points = true;
                    continue;
                }
                b.esbuild.properties.push_back(std::move(p));
            }
            if (!have_entry_points)
                fail(props ? *props : *method_node,
                     id + ": BuildMethod esbuild needs BuildProperties.EntryPoints, the files "
                          "esbuild bundles (e.g. [app.ts])");
        }
        fn.build = std::move(b);
        return;
    }
    not_emulated n;
    n.kind = "build";
    n.what = "BuildMethod " + method + " of " + id;
    n.where = method_node->where;
    const bool language_default = method.rfind("nodejs", 0) == 0 || method.rfind("python", 0) == 0;
    if (language_default) {
        n.meaning = "coldbrew runs CodeUri as it is; sam build would install its dependencies "
                    "into the build";
        n.fix = "install the dependencies in " + fn.code_dir.string() +
                ", or run `sam build` first: coldbrew serves .aws-sam/build when it exists";
    } else {
        n.meaning = "coldbrew does not build " + method + "; it runs CodeUri as it is";
        n.fix = "run `sam build` first: coldbrew serves .aws-sam/build when it exists";
    }
    out.ignored.push_back(std::move(n));
}

void sam_loader::read_function(const ymember& res, const ynode& props_raw) {
    const std::string& id = res.key;
    warn_unknown_keys(props_raw, function_properties, out_.warnings);
    const ynode props = merge_globals(globals_function_, props_raw);

    function fn;
    fn.name = id;
    fn.where = res.key_where;
    fn.function_name = resolver_->function_name(id);
    if (const ynode* raw_name = props.find("FunctionName")) {
        const ynode v = resolver_->resolve(*raw_name);
        if (v.type == ynode::kind::unresolved) {
            out_.warnings.push_back(warning_text(v, v.text + "; using the logical id " + id));
        } else if (v.type != ynode::kind::no_value) {
            expect_string(v, "FunctionName");
        }
    }

    if (auto pt = value(props, "PackageType")) {
        const std::string& type = expect_string(*pt, "PackageType");
        if (type == "Image") {
            fail(*pt, id + ": PackageType Image is not supported; coldbrew runs Zip functions from "
                           "a local CodeUri directory");
        }
        if (type != "Zip") fail(*pt, id + ": PackageType must be Zip or Image, got '" + type + "'");
    }
    if (const ymember* inline_code = props.find_member("InlineCode")) {
        fail(inline_code->value,
             id + ": InlineCode is not supported (sam local: \"Inline code is not "
                  "supported for sam local commands\"); put the code in a "
                  "directory and point CodeUri at it");
    }

    const ynode props_at =
        ynode::make_map(res.value.where, join_path(res.value.path, "Properties"));
    auto runtime = value(props, "Runtime");
    if (!runtime)
        fail_missing(props, "Runtime", function_properties, props_at, id + ": Runtime is required");
    fn.runtime = read_runtime(*runtime, id, options_.today, out_.warnings);

    // SAM CLI requires Handler for Zip functions, provided* included
    // (`samcli/lib/providers/sam_function_provider.py`).
    auto handler = value(props, "Handler");
    if (!handler)
        fail_missing(props, "Handler", function_properties, props_at, id + ": Handler is required");
    fn.handler = expect_string(*handler, "Handler");
    if (fn.handler.empty()) fail(*handler, id + ": Handler must not be empty");

    // SAM CLI treats a missing CodeUri as "." (the template's directory).
    if (const ynode* code_raw = props.find("CodeUri")) {
        const ynode code = resolver_->resolve(*code_raw);
        if (code.type == ynode::kind::unresolved)
            fail(code, "CodeUri cannot be resolved locally: " + code.text);
        if (code.is_map()) {
            fail(code, id + ": CodeUri in S3 ({Bucket, Key}) is not supported; point CodeUri at a "
                            "local directory");
        }
        const std::string& uri = expect_string(code, "CodeUri");
        if (uri.rfind("s3://", 0) == 0) {
            fail(code, id + ": CodeUri " + uri +
                           " is in S3, which is not supported; point CodeUri "
                           "at a local directory");
        }
        fn.code_dir = local_directory(code, base_dir_, uri, "CodeUri");
    } else {
        fn.code_dir = normal_absolute(base_dir_);
    }
    read_sam_build(res, fn, out_);

    if (auto v = value(props, "MemorySize")) fn.memory_mb = read_memory_mb(*v, "MemorySize");
    if (auto v = value(props, "Timeout")) fn.timeout_s = read_timeout_s(*v, "Timeout");

    if (const ynode* env_raw = props.find("Environment")) {
        // Not value(): an unresolvable variable becomes "" with a warning, not an error.
        const ynode env = resolver_->resolve(*env_raw);
        if (env.type == ynode::kind::unresolved)
            fail(env, "Environment cannot be resolved locally: " + env.text);
        if (env.type != ynode::kind::no_value && !env.is_null()) {
            expect_map(env, "Environment");
            static constexpr std::array<std::string_view, 1> env_keys = {"Variables"};
            warn_unknown_keys(env, env_keys, out_.warnings);
            if (const ynode* vars = env.find("Variables"))
                read_environment(*vars, fn.environment, out_.warnings);
        }
    }

    if (const ynode* vpc_raw = props.find("VpcConfig")) {
        const ynode vpc = resolver_->resolve(*vpc_raw);
        if (vpc.is_map()) {
            if (const ynode* subnets = vpc.find("SubnetIds")) {
                if (subnets->type == ynode::kind::unresolved) {
                    // The subnets exist on AWS even if their ids are unknown here.
                    fn.vpc = true;
                } else {
                    fn.vpc = !expect_sequence(*subnets, "SubnetIds").items.empty();
                }
            }
        } else if (vpc.type != ynode::kind::no_value) {
            expect_map(vpc, "VpcConfig");
        }
        // Hyperplane ENIs have been the only way Lambda attaches to a VPC since 2019.
        fn.vpc_mode = fn.vpc ? "hyperplane" : "none";
    }

    if (const ynode* layers = props.find("Layers")) read_layers(fn, *layers);

    if (auto v = value(props, "Architectures")) {
        expect_sequence(*v, "Architectures");
        if (v->items.size() != 1) {
            fail(*v, id +
                         ": Architectures must list exactly one of x86_64, arm64 (SAM concatenates "
                         "Globals and function lists), got " +
                         std::to_string(v->items.size()));
        }
        fn.architecture = read_architecture(v->items.front(), id);
    }
    std::string reserved_path;
    if (auto v = value(props, "ReservedConcurrentExecutions")) {
        fn.reserved_concurrency =
            static_cast<int>(expect_int(*v, 0, max_concurrency, "ReservedConcurrentExecutions"));
        reserved_path = v->path;
    }
    if (auto v = value(props, "ProvisionedConcurrencyConfig")) {
        expect_map(*v, "ProvisionedConcurrencyConfig");
        if (const ynode* n = v->find("ProvisionedConcurrentExecutions")) {
            fn.provisioned_concurrency = static_cast<int>(
                expect_int(*n, 0, max_concurrency, "ProvisionedConcurrentExecutions"));
            if (fn.reserved_concurrency) {
                check_provisioned_concurrency(n->where, n->path, id, *fn.provisioned_concurrency,
                                              *fn.reserved_concurrency, reserved_path);
            }
        }
    }

    if (auto v = value(props, "EventInvokeConfig")) {
        expect_map(*v, "EventInvokeConfig");
        if (const ynode* n = v->find("MaximumRetryAttempts"))
            fn.async.maximum_retry_attempts =
                static_cast<int>(expect_int(*n, 0, 2, "MaximumRetryAttempts"));
        if (const ynode* n = v->find("MaximumEventAgeInSeconds"))
            fn.async.maximum_event_age_s =
                static_cast<int>(expect_int(*n, 60, 21600, "MaximumEventAgeInSeconds"));
        if (const ynode* d = v->find("DestinationConfig"); d && !d->is_null())
            out_.warnings.push_back(warning_text(
                *d, "AWS destinations are not delivered locally; set functions." + id +
                        ".async.on_success / on_failure in coldbrew.yaml for JSONL files"));
    }

    // LoggingConfig.LogFormat: Text (Lambda's default) or JSON [SAM-FN]; the log group and
    // levels are AWS-side settings, not emulated.
    if (auto v = value(props, "LoggingConfig"); v && !v->is_null()) {
        expect_map(*v, "LoggingConfig");
        if (const ynode* f = v->find("LogFormat")) {
            const std::string& format = expect_string(*f, "LogFormat");
            if (format != "Text" && format != "JSON")
                fail(*f, id + ": LoggingConfig.LogFormat must be Text or JSON, got '" + format + "'");
            fn.log_format = format;
        }
    }

    if (const ynode* events = props.find("Events"); events && !events->is_null()) {
        read_events(fn, expect_map(*events, "Events"));
    }
    note_properties(fn, props);
    check_environment_size(fn, out_.warnings);
    out_.functions.push_back(std::move(fn));
}

std::optional<std::filesystem::path> sam_loader::layer_dir(const std::string& id, const ynode& at) {
    const ynode* res = resolver_->resource(id);
    const std::string type = resolver_->resource_type(id);
    if (!resolver_->resource_enabled(id)) {
        out_.warnings.push_back(
            warning_text(at, "layer " + id + " is excluded by its Condition, ignored"));
        return std::nullopt;
    }
    const ynode* props = res->find("Properties");
    const std::string key = type == "AWS::Serverless::LayerVersion" ? "ContentUri" : "Content";
    const ynode* content_raw = props ? props->find(key) : nullptr;
    if (!content_raw) fail(*res, "layer " + id + " has no " + key);
    const ynode content = resolver_->resolve(*content_raw);
    if (content.type == ynode::kind::unresolved)
        fail(content, key + " cannot be resolved locally: " + content.text);
    if (content.is_map() || (content.is_scalar() && content.text.rfind("s3://", 0) == 0)) {
        out_.warnings.push_back(warning_text(content, "layer " + id +
                                                          " content is in S3, which is not "
                                                          "downloaded; layer ignored"));
        return std::nullopt;
    }
    // A .zip is extracted into the project (.coldbrew/layers), not into a build directory.
    const auto project = (out_.built_from ? *out_.built_from : out_.template_file).parent_path();
    return local_layer(content, base_dir_, expect_string(content, key), key, project, id);
}

void sam_loader::read_layers(function& fn, const ynode& layers) {
    const ynode resolved_list = resolver_->resolve(layers);
    if (resolved_list.type == ynode::kind::no_value) return;
    if (resolved_list.type == ynode::kind::unresolved) {
        out_.warnings.push_back(
            warning_text(resolved_list, resolved_list.text + "; Layers ignored"));
        return;
    }
    expect_sequence(resolved_list, "Layers");
    // Local layers are found through the unresolved form: `!Ref MyLayer` resolves to a name
    // that would be indistinguishable from an ARN string.
    const bool raw_is_list = layers.is_sequence();
    for (std::size_t i = 0; i < resolved_list.items.size(); ++i) {
        const ynode* raw = raw_is_list && i < layers.items.size() ? &layers.items[i] : nullptr;
        if (raw && intrinsic_name(*raw) == "Ref") {
            const ynode& target = raw->members.front().value;
            if (target.is_scalar() && is_layer_type(resolver_->resource_type(target.text))) {
                if (auto dir = layer_dir(target.text, *raw)) fn.layer_dirs.push_back(*dir);
                continue;
            }
        }
        const ynode& item = resolved_list.items[i];
        if (item.type == ynode::kind::unresolved) {
            out_.warnings.push_back(warning_text(item, item.text + "; layer ignored"));
        } else {
            out_.warnings.push_back(warning_text(
                item, "layer " + expect_string(item, "layer") +
                          " is not in this template and is not downloaded; layer ignored"));
        }
    }
}

void sam_loader::read_api(const ymember& res, const ynode& props_raw, api_kind kind) {
    const std::string& id = res.key;
    warn_unknown_keys(props_raw,
                      kind == api_kind::rest
                          ? std::span<const std::string_view>(api_properties)
                          : std::span<const std::string_view>(http_api_properties),
                      out_.warnings);
    const ynode props =
        merge_globals(kind == api_kind::rest ? globals_api_ : globals_http_api_, props_raw);
    api a;
    a.id = id;
    a.kind = kind;
    a.where = res.key_where;
    auto stage = value(props, "StageName");
    if (stage) {
        a.stage = expect_string(*stage, "StageName");
        if (a.stage.empty()) fail(*stage, id + ": StageName must not be empty");
    }
    read_stage_variables(props, a);
    if (kind == api_kind::rest) {
        const ynode props_at =
            ynode::make_map(res.value.where, join_path(res.value.path, "Properties"));
        if (!stage) {
            fail_missing(props, "StageName", api_properties, props_at,
                         id + ": StageName is required for AWS::Serverless::Api");
        }
        if (auto types = value(props, "BinaryMediaTypes")) {
            for (const auto& t : expect_sequence(*types, "BinaryMediaTypes").items) {
                a.binary_media_types.push_back(decode_media_type(expect_string(t, "media type")));
            }
        }
    } else if (!stage) {
        a.stage = std::string(default_http_stage);
    }
    if (const ymember* m = props_raw.find_member("DefinitionUri")) {
        out_.warnings.push_back(warning_key_text(
            *m, join_path(props_raw.path, "DefinitionUri"),
            "routes in an OpenAPI definition are not read; declare them as function events"));
    }
    // Its Step Functions integrations are read once every state machine is known (they may
    // come later in the template): read_openapi_bodies().
    if (const ymember* m = props_raw.find_member("DefinitionBody")) {
        openapi_bodies_.push_back({id, kind, m});
    }
    api_props_[id] = props;
    out_.apis.push_back(std::move(a));
}

// `Variables` (REST) or `StageVariables` (HTTP API), Globals merged in. Like environment
// variables, a value that cannot be resolved locally becomes "" with a warning.
void sam_loader::read_stage_variables(const ynode& props, api& a) {
    const std::string_view key = a.kind == api_kind::rest ? "Variables" : "StageVariables";
    const ynode* raw = props.find(key);
    if (!raw) return;
    const ynode vars = resolver_->resolve(*raw);
    if (vars.type == ynode::kind::no_value || vars.is_null()) return;
    if (vars.type == ynode::kind::unresolved) {
        out_.warnings.push_back(warning_text(vars, vars.text + "; no stage variables"));
        return;
    }
    expect_map(vars, key);
    for (const auto& m : vars.members) {
        const ynode& v = m.value;
        const bool aws_name = !m.key.empty() && std::all_of(m.key.begin(), m.key.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
        if (!aws_name) {
            out_.warnings.push_back(warning_key_text(
                m, v.path, "AWS rejects stage variable names outside [A-Za-z0-9_]+"));
        }
        switch (v.type) {
        case ynode::kind::scalar:
            a.stage_variables[m.key] = v.text;
            break;
        case ynode::kind::null:
            a.stage_variables[m.key] = "";
            break;
        case ynode::kind::no_value:
            break;
        case ynode::kind::unresolved:
            a.stage_variables[m.key] = "";
            out_.warnings.push_back(warning_text(v, v.text + "; set to \"\""));
            break;
        default:
            fail(v, "stage variable " + m.key + " must be a string, got a " +
                        (v.is_map() ? "mapping" : "list"));
        }
    }
}

std::string sam_loader::api_ref(const ynode& raw, const std::string& expected_type,
                                std::string_view what) {
    std::string target;
    if (intrinsic_name(raw) == "Ref" && raw.members.front().value.is_scalar()) {
        target = raw.members.front().value.text;
    } else if (raw.is_scalar()) {
        target = raw.text;
    } else {
        fail(raw, std::string(what) + " must be !Ref to an " + expected_type + " in this template");
    }
    if (resolver_->resource_type(target) != expected_type) {
        fail(raw, std::string(what) + " refers to " + target + ", which is not an " +
                      expected_type + " in this template");
    }
    if (!resolver_->resource_enabled(target)) {
        fail(raw,
             std::string(what) + " refers to " + target + ", which is excluded by its Condition");
    }
    return target;
}

void sam_loader::read_events(const function& fn, const ynode& events) {
    for (const auto& ev : events.members) {
        const ynode& e = expect_map(ev.value, "an event");
        warn_unknown_keys(e, event_keys, out_.warnings);
        const ynode* type_node = e.find("Type");
        if (!type_node) {
            fail_missing(e, "Type", event_keys, ynode::make_map(ev.key_where, e.path),
                         "event " + ev.key + " has no Type");
        }
        const std::string& type = expect_string(*type_node, "Type");
        if (type == "Schedule" || type == "ScheduleV2") {
            const ynode empty = ynode::make_map(e.where, join_path(e.path, "Properties"));
            const ynode* p = e.find("Properties");
            read_schedule_event(ev, type, p && !p->is_null() ? expect_map(*p, "Properties") : empty,
                                fn.name, "");
            continue;
        }
        if (type != "Api" && type != "HttpApi") {
            const bool known_type = std::find(sam_event_types.begin(), sam_event_types.end(),
                                              type) != sam_event_types.end();
            if (known_type) {
                out_.ignored.push_back(event_entry(type, ev.key, fn.name, ev.key_where));
                continue;
            }
            out_.warnings.push_back(warning_text(
                *type_node, "event type " + type + " is not emulated; event ignored" +
                                (known_type ? "" : value_hint(type, emulated_event_types))));
            continue;
        }
        const ynode empty = ynode::make_map(e.where, join_path(e.path, "Properties"));
        const ynode* props_ptr = e.find("Properties");
        const ynode& props =
            props_ptr && !props_ptr->is_null() ? expect_map(*props_ptr, "Properties") : empty;
        const api_kind kind = type == "Api" ? api_kind::rest : api_kind::http;
        warn_unknown_keys(props,
                          kind == api_kind::rest
                              ? std::span<const std::string_view>(api_event_properties)
                              : std::span<const std::string_view>(http_event_properties),
                          out_.warnings);

        route r;
        r.function = fn.name;
        r.where = ev.key_where;
        auto path = value(props, "Path");
        auto method = value(props, "Method");
        if (kind == api_kind::rest) {
            if (!path) {
                fail_missing(props, "Path", api_event_properties, props,
                             fn.name + ": Api event " + ev.key + " needs a Path");
            }
            if (!method) {
                fail_missing(props, "Method", api_event_properties, props,
                             fn.name + ": Api event " + ev.key + " needs a Method");
            }
            const ynode* api_raw = props.find("RestApiId");
            r.api_id = api_raw ? api_ref(*api_raw, "AWS::Serverless::Api", "RestApiId")
                               : std::string(implicit_rest_api);
            r.payload_format_version = "1.0"; // REST proxy integrations only speak 1.0
            r.integration_timeout_ms = rest_integration_timeout_ms;
        } else {
            // Both omitted: the catch-all $default route
            // (`samtranslator/plugins/api/implicit_http_api_plugin.py`).
            if (path.has_value() != method.has_value()) {
                fail(props, fn.name + ": HttpApi event " + ev.key +
                                " needs both Path and Method, or neither for the $default route");
            }
            const ynode* api_raw = props.find("ApiId");
            r.api_id = api_raw ? api_ref(*api_raw, "AWS::Serverless::HttpApi", "ApiId")
                               : std::string(implicit_http_api);
            r.payload_format_version = "2.0"; // SAM CLI's default when unset [SAM-HTTPAPI]
            if (auto v = value(props, "PayloadFormatVersion")) {
                r.payload_format_version = expect_string(*v, "PayloadFormatVersion");
                if (r.payload_format_version != "1.0" && r.payload_format_version != "2.0") {
                    fail(*v, "PayloadFormatVersion must be \"1.0\" or \"2.0\", got '" +
                                 r.payload_format_version + "'");
                }
            }
            r.integration_timeout_ms = http_integration_timeout_ms;
        }
        if (path) {
            r.path = expect_string(*path, "Path");
            check_route_path(*path, r.path, kind);
            r.method = read_method(*method);
        } else {
            r.path = "$default";
            r.method = "ANY";
        }
        if (auto v = value(props, "TimeoutInMillis")) {
            const std::int64_t max = kind == api_kind::http ? http_integration_timeout_ms : 900'000;
            r.integration_timeout_ms =
                expect_int(*v, min_integration_timeout_ms, max, "TimeoutInMillis");
            if (kind == api_kind::rest && r.integration_timeout_ms > rest_integration_timeout_ms) {
                out_.warnings.push_back(
                    warning_text(*v, "above REST APIs' default 29000 ms limit; AWS needs "
                                     "a quota increase for it"));
            }
        }
        add_route(out_.routes, std::move(r), kind, ev.value);
        // Read once the API's own Auth is known (read_access), since it sets the defaults.
        if (const ynode* auth = props.find("Auth")) {
            const ynode v = resolver_->resolve(*auth);
            if (v.type == ynode::kind::unresolved)
                fail(v, "Auth cannot be resolved locally: " + v.text);
            if (v.type != ynode::kind::no_value) route_auth_[out_.routes.size() - 1] = v;
        }
    }
}

// ---- authorization, CORS, API keys and usage plans -------------------------------------

// Keys of the SAM authorization and CORS objects coldbrew reads or accepts. Sources: the SAM
// developer guide pages ApiAuth, LambdaTokenAuthorizer, LambdaRequestAuthorizer,
// LambdaTokenAuthorizationIdentity, LambdaRequestAuthorizationIdentity, HttpApiAuth,
// LambdaAuthorizer, LambdaAuthorizationIdentity, OAuth2Authorizer, ApiFunctionAuth,
// HttpApiFunctionAuth, ApiUsagePlan, CorsConfiguration, HttpApiCorsConfiguration.
constexpr std::array<std::string_view, 8> rest_auth_keys = {
    "AddApiKeyRequiredToCorsPreflight", "AddDefaultAuthorizerToCorsPreflight", "ApiKeyRequired",
    "Authorizers", "DefaultAuthorizer", "InvokeRole", "ResourcePolicy", "UsagePlan"};
constexpr std::array<std::string_view, 3> http_auth_keys = {"Authorizers", "DefaultAuthorizer",
                                                            "EnableIamAuthorizer"};
constexpr std::array<std::string_view, 5> rest_lambda_authorizer_keys = {
    "FunctionArn", "FunctionInvokeRole", "FunctionPayloadType", "Identity",
    "DisableFunctionDefaultPermissions"};
constexpr std::array<std::string_view, 3> token_identity_keys = {"Header", "ReauthorizeEvery",
                                                                 "ValidationExpression"};
constexpr std::array<std::string_view, 5> request_identity_keys = {
    "Context", "Headers", "QueryStrings", "ReauthorizeEvery", "StageVariables"};
constexpr std::array<std::string_view, 6> http_lambda_authorizer_keys = {
    "AuthorizerPayloadFormatVersion", "EnableFunctionDefaultPermissions", "EnableSimpleResponses",
    "FunctionArn", "FunctionInvokeRole", "Identity"};
constexpr std::array<std::string_view, 3> jwt_authorizer_keys = {
    "AuthorizationScopes", "IdentitySource", "JwtConfiguration"};
constexpr std::array<std::string_view, 2> jwt_configuration_keys = {"audience", "issuer"};
constexpr std::array<std::string_view, 6> rest_event_auth_keys = {
    "ApiKeyRequired", "AuthorizationScopes", "Authorizer", "CustomStatements", "InvokeRole",
    "ResourcePolicy"};
constexpr std::array<std::string_view, 2> http_event_auth_keys = {"AuthorizationScopes",
                                                                  "Authorizer"};
constexpr std::array<std::string_view, 6> usage_plan_keys = {
    "CreateUsagePlan", "Description", "Quota", "Tags", "Throttle", "UsagePlanName"};
constexpr std::array<std::string_view, 5> rest_cors_keys = {
    "AllowCredentials", "AllowHeaders", "AllowMethods", "AllowOrigin", "MaxAge"};
constexpr std::array<std::string_view, 6> http_cors_keys = {
    "AllowCredentials", "AllowHeaders", "AllowMethods", "AllowOrigins", "ExposeHeaders", "MaxAge"};
constexpr std::array<std::string_view, 3> quota_keys = {"Limit", "Offset", "Period"};
constexpr std::array<std::string_view, 2> throttle_keys = {"BurstLimit", "RateLimit"};

// API Gateway caches an authorizer's result 300 s unless told otherwise, 3600 s at most (SAM
// LambdaTokenAuthorizationIdentity / LambdaRequestAuthorizationIdentity ReauthorizeEvery
// "Default: 300"; HTTP APIs: ApiGatewayV2 Authorizer AuthorizerResultTtlInSeconds "If this
// field is not set, the default value is 300").
constexpr int default_result_ttl_s = 300;
constexpr int max_result_ttl_s = 3600;

bool read_bool(const ynode& n, std::string_view what) {
    if (n.is_scalar()) {
        const std::string& t = n.text;
        if (t == "true" || t == "True" || t == "TRUE") return true;
        if (t == "false" || t == "False" || t == "FALSE") return false;
    }
    fail(n, std::string(what) + " must be true or false");
}

// SAM's REST Cors values are API Gateway header-mapping literals, written quoted: "'*'".
std::string strip_sam_quotes(const std::string& s) {
    if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') return s.substr(1, s.size() - 2);
    return s;
}

std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::vector<std::string> string_list(const ynode& n, std::string_view what) {
    std::vector<std::string> out;
    for (const auto& item : expect_sequence(n, what).items) {
        out.push_back(expect_string(item, what));
    }
    return out;
}

bool has_name(const std::vector<authorizer>& list, const std::string& name) {
    return std::any_of(list.begin(), list.end(),
                       [&](const authorizer& z) { return z.name == name; });
}

std::string declared_names(const api& a, const std::set<std::string>& unchecked) {
    std::string out;
    for (const auto& z : a.authorizers) out += (out.empty() ? "" : ", ") + z.name;
    for (const auto& n : unchecked) {
        if (n != "AWS_IAM") out += (out.empty() ? "" : ", ") + n;  // built in, never declared
    }
    return out.empty() ? "none" : out;
}

// Quota and Throttle, the same keys in SAM's Auth.UsagePlan and AWS::ApiGateway::UsagePlan
// (API Gateway API reference QuotaSettings: Period DAY | WEEK | MONTH, Offset "the number of
// requests subtracted from the given limit in the initial time period", so 0..Limit here, as
// models/usage_plan reads it; ThrottleSettings BurstLimit, RateLimit).
void read_limits(const ynode& props, usage_plan& plan, std::vector<std::string>& warnings) {
    if (const ynode* q = props.find("Quota"); q && !q->is_null()) {
        expect_map(*q, "Quota");
        warn_unknown_keys(*q, quota_keys, warnings);
        const ynode* limit = q->find("Limit");
        const ynode* period = q->find("Period");
        if (limit) plan.quota_limit = expect_int(*limit, 0, INT64_MAX, "Quota.Limit");
        if (period) {
            static constexpr std::array<std::string_view, 3> periods = {"DAY", "WEEK", "MONTH"};
            plan.quota_period = expect_choice(*period, "Quota.Period", periods);
        }
        if (limit && !period) fail(*limit, "Quota.Limit needs a Quota.Period (DAY, WEEK or MONTH)");
        if (period && !limit) fail(*period, "Quota.Period needs a Quota.Limit");
        if (const ynode* o = q->find("Offset")) {
            const std::int64_t max = std::min<std::int64_t>(plan.quota_limit.value_or(0), INT32_MAX);
            plan.quota_offset = static_cast<int>(expect_int(*o, 0, max, "Quota.Offset"));
        }
    }
    if (const ynode* t = props.find("Throttle"); t && !t->is_null()) {
        expect_map(*t, "Throttle");
        warn_unknown_keys(*t, throttle_keys, warnings);
        if (const ynode* b = t->find("BurstLimit"))
            plan.burst_limit = static_cast<int>(expect_int(*b, 0, INT32_MAX, "Throttle.BurstLimit"));
        if (const ynode* r = t->find("RateLimit")) {
            plan.rate_limit = expect_double(*r, "Throttle.RateLimit");
            if (*plan.rate_limit < 0) fail(*r, "Throttle.RateLimit must not be negative");
        }
    }
}

} // namespace

// ---- state machines and schedules ------------------------------------------------------

std::map<std::string, std::string> sam_loader::read_substitutions(const ynode& props) {
    std::map<std::string, std::string> subs;
    const ynode* raw = props.find("DefinitionSubstitutions");
    if (!raw) return subs;
    const ynode v = resolver_->resolve(*raw);
    if (v.type == ynode::kind::no_value) return subs;
    if (v.type == ynode::kind::unresolved)
        fail(v, "DefinitionSubstitutions cannot be resolved locally: " + v.text);
    for (const auto& m : expect_map(v, "DefinitionSubstitutions").members) {
        // A value only AWS knows (a table's ARN) leaves its placeholder as written: the
        // definition still loads, and only a state that uses it sees the ${Name}.
        if (m.value.type == ynode::kind::unresolved) {
            out_.warnings.push_back(warning_key_text(
                m, join_path(v.path, m.key), m.value.text + "; ${" + m.key + "} stays as written"));
            continue;
        }
        if (m.value.type == ynode::kind::no_value) continue;
        subs[m.key] = expect_string(m.value, "a DefinitionSubstitutions value");
    }
    return subs;
}

void sam_loader::read_state_machine(const ymember& res, const ynode& props_raw, bool sam) {
    const std::string& id = res.key;
    warn_unknown_keys(props_raw,
                      sam ? std::span<const std::string_view>(sam_state_machine_properties)
                          : std::span<const std::string_view>(cfn_state_machine_properties),
                      out_.warnings);
    const ynode props = sam ? merge_globals(globals_state_machine_, props_raw) : props_raw;
    const std::string key = "Resources." + id + ".Properties";
    const ynode props_at = ynode::make_map(res.value.where, key);

    state_machine m;
    m.name = id;
    m.state_machine_name = id;
    if (auto n = value(props, sam ? "Name" : "StateMachineName")) {
        m.state_machine_name = expect_string(*n, sam ? "Name" : "StateMachineName");
        if (m.state_machine_name.empty()) fail(*n, id + ": the state machine name must not be empty");
    }
    if (auto t = value(props, sam ? "Type" : "StateMachineType")) {
        m.type = expect_choice(*t, sam ? "Type" : "StateMachineType", state_machine_types) ==
                         "EXPRESS"
                     ? state_machine::kind::express
                     : state_machine::kind::standard;
    }
    if (const ynode* role = props.find(sam ? "Role" : "RoleArn")) {
        const ynode v = resolver_->resolve(*role);
        if (v.is_scalar()) m.role_arn = v.text;
    }

    const ymember* inline_def = props.find_member("Definition");
    const ymember* uri = sam ? props.find_member("DefinitionUri") : nullptr;
    const ymember* text = sam ? nullptr : props.find_member("DefinitionString");
    if (!sam) {
        if (const ymember* s3 = props.find_member("DefinitionS3Location")) {
            fail_key(*s3, join_path(key, "DefinitionS3Location"),
                     id + ": DefinitionS3Location is an S3 object, which coldbrew cannot read; "
                          "write the definition inline as Definition or DefinitionString");
        }
    }
    const int given = (inline_def ? 1 : 0) + (uri ? 1 : 0) + (text ? 1 : 0);
    if (given == 0) {
        fail_missing(props, sam ? "DefinitionUri" : "Definition",
                     sam ? std::span<const std::string_view>(sam_state_machine_properties)
                         : std::span<const std::string_view>(cfn_state_machine_properties),
                     props_at,
                     id + (sam ? ": a state machine needs Definition or DefinitionUri"
                               : ": a state machine needs Definition or DefinitionString"));
    }
    if (given > 1) {
        fail(props_at, id + (sam ? ": give one of Definition and DefinitionUri, not both"
                                 : ": give one of Definition and DefinitionString, not both"));
    }
    if (inline_def) {
        m.definition_key = join_path(key, "Definition");
        m.where = inline_def->value.where;
        const ynode v = resolver_->resolve(inline_def->value);
        m.definition = to_json(v, id + ": Definition");
        expect_definition_object(m.definition, inline_def->value, id + ": Definition");
    } else if (text) {
        m.definition_key = join_path(key, "DefinitionString");
        m.where = text->value.where;
        auto v = value(props, "DefinitionString");
        if (!v) fail(text->value, id + ": DefinitionString is empty");
        const std::string& json_text = expect_string(*v, "DefinitionString");
        m.definition = parse_definition_text(json_text, text->value, id + ": DefinitionString");
        expect_definition_object(m.definition, text->value, id + ": DefinitionString");
    } else {
        m.definition_key = join_path(key, "DefinitionUri");
        auto v = value(props, "DefinitionUri");
        if (!v) fail(uri->value, id + ": DefinitionUri is empty");
        if (!v->is_scalar() || v->text.rfind("s3://", 0) == 0) {
            fail(*v, id + ": DefinitionUri names an S3 object, which coldbrew cannot read; "
                          "point it at a local file (statemachine/flow.asl.json) or write the "
                          "definition inline as Definition");
        }
        if (v->text.empty()) fail(*v, id + ": DefinitionUri is empty");
        const std::filesystem::path file = normal_absolute(base_dir_ / v->text);
        m.where = {file.string(), 1, 1};
        m.definition = load_definition_file(file, *v);
        expect_definition_object(m.definition, *v, id + ": the definition in " + v->text);
    }
    apply_substitutions(m.definition, read_substitutions(props));

    const ynode* events = sam ? props.find("Events") : nullptr;
    out_.state_machines.push_back(std::move(m));
    if (events && !events->is_null())
        read_state_machine_events(out_.state_machines.back(), expect_map(*events, "Events"));
}

void sam_loader::read_state_machine_events(const state_machine& m, const ynode& events) {
    for (const auto& ev : events.members) {
        const ynode& e = expect_map(ev.value, "an event");
        warn_unknown_keys(e, event_keys, out_.warnings);
        const ynode* type_node = e.find("Type");
        if (!type_node) {
            fail_missing(e, "Type", event_keys, ynode::make_map(ev.key_where, e.path),
                         "event " + ev.key + " has no Type");
        }
        const std::string& type = expect_string(*type_node, "Type");
        const ynode empty = ynode::make_map(e.where, join_path(e.path, "Properties"));
        const ynode* props_ptr = e.find("Properties");
        const ynode& props =
            props_ptr && !props_ptr->is_null() ? expect_map(*props_ptr, "Properties") : empty;
        if (type == "Schedule" || type == "ScheduleV2") {
            read_schedule_event(ev, type, props, "", m.name);
            continue;
        }
        if (type == "CloudWatchEvent" || type == "EventBridgeRule") {
            out_.ignored.push_back(event_entry(type, ev.key, m.name, ev.key_where));
            continue;
        }
        if (type == "HttpApi") {
            fail(*type_node, m.name + ": a state machine has no HttpApi event in SAM (its event "
                                      "types are Api, Schedule, ScheduleV2, CloudWatchEvent and "
                                      "EventBridgeRule); use an Api event");
        }
        if (type != "Api") {
            fail(*type_node, m.name + ": unknown state machine event type '" + type + "'" +
                                 value_hint(type, state_machine_event_types));
        }
        warn_unknown_keys(props, state_machine_api_event_properties, out_.warnings);
        // SAM wires an Api event to states:action/StartExecution with the request body as the
        // input (samtranslator/model/stepfunctions/events.py, Api._generate_request_template).
        route r;
        r.state_machine = m.name;
        r.state_machine_action = route::sfn_action::start_execution;
        r.where = ev.key_where;
        auto path = value(props, "Path");
        auto method = value(props, "Method");
        if (!path) {
            fail_missing(props, "Path", state_machine_api_event_properties, props,
                         m.name + ": Api event " + ev.key + " needs a Path");
        }
        if (!method) {
            fail_missing(props, "Method", state_machine_api_event_properties, props,
                         m.name + ": Api event " + ev.key + " needs a Method");
        }
        const ynode* api_raw = props.find("RestApiId");
        r.api_id = api_raw ? api_ref(*api_raw, "AWS::Serverless::Api", "RestApiId")
                           : std::string(implicit_rest_api);
        r.payload_format_version = "1.0";
        r.integration_timeout_ms = rest_integration_timeout_ms;
        r.path = expect_string(*path, "Path");
        check_route_path(*path, r.path, api_kind::rest);
        r.method = read_method(*method);
        // UnescapeMappingTemplate: SAM's second template, which turns escapeJavaScript's \'
        // back into ' so that a body holding one stays JSON (samtranslator/model/stepfunctions/
        // events.py, Api._generate_request_template_unescaped).
        if (const ynode* u = props.find("UnescapeMappingTemplate");
            u && read_bool(*u, "UnescapeMappingTemplate")) {
            r.state_machine_request_template =
                R"~({"input": "$util.escapeJavaScript($input.json('$')).replaceAll("\\'","'")", )~"
                R"~("stateMachineArn": ")~" + detail::state_machine_arn_of(m, out_.settings) + "\"}";
        }
        add_route(out_.routes, std::move(r), api_kind::rest, ev.value);
        if (const ynode* auth = props.find("Auth")) {
            const ynode v = resolver_->resolve(*auth);
            if (v.type == ynode::kind::unresolved)
                fail(v, "Auth cannot be resolved locally: " + v.text);
            if (v.type != ynode::kind::no_value) route_auth_[out_.routes.size() - 1] = v;
        }
    }
}

void sam_loader::read_schedule_event(const ymember& ev, const std::string& type,
                                     const ynode& props, const std::string& fn,
                                     const std::string& machine) {
    const bool v2 = type == "ScheduleV2";
    warn_unknown_keys(props,
                      v2 ? std::span<const std::string_view>(schedule_v2_event_properties)
                         : std::span<const std::string_view>(schedule_event_properties),
                      out_.warnings);
    const std::string owner = fn.empty() ? machine : fn;
    schedule s;
    s.name = ev.key;
    s.function = fn;
    s.state_machine = machine;
    s.scheduler = v2;
    s.where = ev.key_where;
    const char* expr_key = v2 ? "ScheduleExpression" : "Schedule";
    auto expr = value(props, expr_key);
    if (!expr) {
        fail_missing(props, expr_key,
                     v2 ? std::span<const std::string_view>(schedule_v2_event_properties)
                        : std::span<const std::string_view>(schedule_event_properties),
                     props, owner + ": " + type + " event " + ev.key + " needs " + expr_key);
    }
    s.expression = expect_string(*expr, expr_key);
    check_schedule_expression(s.expression, *expr);
    if (!v2 && s.expression.rfind("at(", 0) == 0) {
        fail(*expr, "a Schedule event is an EventBridge rule, which takes rate() or cron(); "
                    "one-time at() schedules are ScheduleV2 (EventBridge Scheduler)");
    }
    if (v2) {
        if (auto tz = value(props, "ScheduleExpressionTimezone")) {
            s.timezone = expect_string(*tz, "ScheduleExpressionTimezone");
            check_schedule_timezone(s.timezone, *tz);
        }
    }
    auto enabled = v2 ? std::nullopt : value(props, "Enabled");
    auto state = value(props, "State");
    if (enabled && state) {
        // samtranslator/model/eventsources/push.py (Schedule): both set is an error.
        fail(*state, owner + ": " + type + " event " + ev.key +
                         " sets both Enabled and State; use one");
    }
    if (enabled) s.enabled = read_bool(*enabled, "Enabled");
    if (state) s.enabled = expect_choice(*state, "State", schedule_states) == "ENABLED";
    if (auto input = value(props, "Input")) {
        s.input = expect_string(*input, "Input");
        // EventBridge hands the target Input as its event; it must be a JSON text.
        (void)parse_definition_text(s.input, *input, owner + ": " + type + " event " + ev.key +
                                                         " Input");
    }
    out_.schedules.push_back(std::move(s));
}

void sam_loader::read_access(api& a, const ynode& props) {
    const bool rest = a.kind == api_kind::rest;
    auto& unchecked = unchecked_authorizers_[a.id];
    std::string default_authorizer;
    bool api_key_required = false;
    bool default_to_preflight = true;  // ApiAuth AddDefaultAuthorizerToCorsPreflight "Default: True"
    std::optional<ynode> auth_node;      // where to say the default guards the preflight
    bool preflight_said = false;
    if (rest) {
        if (auto v = value(props, "ApiKeySourceType")) {
            static constexpr std::array<std::string_view, 2> sources = {"HEADER", "AUTHORIZER"};
            a.api_key_source = expect_choice(*v, "ApiKeySourceType", sources);
        }
    }
    // AWS_IAM needs no declaration on REST APIs (ApiAuth note), and EnableIamAuthorizer on
    // HTTP APIs; either way coldbrew has no IAM to check a request signature against.
    if (rest) unchecked.insert("AWS_IAM");
    if (auto auth = value(props, "Auth"); auth && !auth->is_null()) {
        expect_map(*auth, "Auth");
        warn_unknown_keys(*auth,
                          rest ? std::span<const std::string_view>(rest_auth_keys)
                               : std::span<const std::string_view>(http_auth_keys),
                          out_.warnings);
        if (const ynode* list = auth->find("Authorizers"); list && !list->is_null()) {
            for (const auto& m : expect_map(*list, "Authorizers").members) {
                if (rest && m.key == "AWS_IAM") continue;  // ApiAuth: needs no configuration
                if (rest) {
                    read_rest_authorizer(a, m);
                } else {
                    read_http_authorizer(a, m);
                }
            }
        }
        if (const ynode* iam = auth->find("EnableIamAuthorizer"); iam && !rest) {
            if (read_bool(*iam, "EnableIamAuthorizer")) {
                unchecked.insert("AWS_IAM");
                out_.warnings.push_back(warning_text(
                    *iam, "IAM authorization is not checked: routes using AWS_IAM run "
                          "unauthenticated"));
            }
        }
        if (const ynode* d = auth->find("DefaultAuthorizer")) {
            const std::string& name = expect_string(*d, "DefaultAuthorizer");
            if (unchecked.count(name)) {
                out_.warnings.push_back(warning_text(
                    *d, "DefaultAuthorizer " + name +
                            " is not checked: the routes it guards run unauthenticated"));
            } else if (has_name(a.authorizers, name)) {
                default_authorizer = name;
            } else {
                fail(*d, a.id + ": DefaultAuthorizer " + name + " is not one of its Authorizers (" +
                             declared_names(a, unchecked) + ")");
            }
        }
        if (rest) {
            if (const ynode* k = auth->find("ApiKeyRequired"))
                api_key_required = read_bool(*k, "ApiKeyRequired");
            auth_node = *auth;
            if (const ynode* p = auth->find("AddDefaultAuthorizerToCorsPreflight")) {
                default_to_preflight = read_bool(*p, "AddDefaultAuthorizerToCorsPreflight");
                preflight_said = true;
            }
            if (const ynode* k = auth->find("AddApiKeyRequiredToCorsPreflight"))
                read_bool(*k, "AddApiKeyRequiredToCorsPreflight");
            for (const char* key : {"ResourcePolicy", "InvokeRole"}) {
                if (const ymember* m = auth->find_member(key); m && !m->value.is_null()) {
                    out_.warnings.push_back(warning_key_text(
                        *m, m->value.path,
                        std::string(key) + " is not checked: requests are not filtered by it"));
                }
            }
            if (const ynode* plan = auth->find("UsagePlan"); plan && !plan->is_null())
                read_usage_plan(a, *plan);
        }
    }
    if (auto cors = value(props, rest ? "Cors" : "CorsConfiguration")) {
        if (rest) {
            read_rest_cors(a, *cors);
        } else {
            read_http_cors(a, *cors);
        }
    }
    apply_route_auth(a, default_authorizer, api_key_required);
    // ApiAuth AddDefaultAuthorizerToCorsPreflight: SAM puts the default authorizer on the
    // OPTIONS methods it generates for Cors.
    if (rest && default_to_preflight && !default_authorizer.empty() &&
        (a.cors || !a.path_cors.empty())) {
        a.preflight_authorizer = default_authorizer;
        // SAM's default surprises: a browser's preflight carries no credentials, so it gets
        // 401 here as it does once deployed.
        if (!preflight_said && auth_node)
            out_.warnings.push_back(warning_text(
                *auth_node, a.id + ": Cors preflights go through DefaultAuthorizer " +
                                default_authorizer +
                                " (AddDefaultAuthorizerToCorsPreflight defaults to true), so a "
                                "browser's OPTIONS without credentials gets 401; set it to "
                                "false to answer preflights openly"));
    }
}

void sam_loader::read_rest_authorizer(api& a, const ymember& m) {
    const ynode& def = expect_map(m.value, "an authorizer");
    if (def.find("UserPoolArn")) {
        unchecked_authorizers_[a.id].insert(m.key);
        out_.warnings.push_back(warning_key_text(
            m, def.path,
            "Cognito authorizer " + m.key +
                " is not checked: the routes it guards run unauthenticated"));
        return;
    }
    warn_unknown_keys(def, rest_lambda_authorizer_keys, out_.warnings);
    authorizer z;
    z.name = m.key;
    z.where = m.key_where;
    const ynode* arn = def.find("FunctionArn");
    if (!arn) {
        fail_missing(def, "FunctionArn", rest_lambda_authorizer_keys,
                     ynode::make_map(m.key_where, def.path),
                     a.id + ": authorizer " + m.key +
                         " needs a FunctionArn (a Lambda authorizer) or a UserPoolArn (Cognito)");
    }
    z.function = authorizer_function(*arn, a.id, m.key);
    // LambdaTokenAuthorizer / LambdaRequestAuthorizer FunctionPayloadType: TOKEN (the default)
    // or REQUEST.
    std::string type = "TOKEN";
    if (const ynode* t = def.find("FunctionPayloadType")) {
        static constexpr std::array<std::string_view, 2> types = {"TOKEN", "REQUEST"};
        type = expect_choice(*t, "FunctionPayloadType", types);
    }
    const ynode* identity = def.find("Identity");
    if (identity && identity->is_null()) identity = nullptr;
    if (identity) expect_map(*identity, "Identity");
    if (type == "TOKEN") {
        z.kind = authorizer::type::token;
        std::string header = "Authorization";  // LambdaTokenAuthorizationIdentity Header default
        if (identity) {
            warn_unknown_keys(*identity, token_identity_keys, out_.warnings);
            if (const ynode* h = identity->find("Header")) {
                header = expect_string(*h, "Identity.Header");
                if (header.empty()) fail(*h, "Identity.Header must not be empty");
            }
            if (const ynode* e = identity->find("ValidationExpression"))
                z.validation_expression = expect_string(*e, "Identity.ValidationExpression");
        }
        z.identity_sources.push_back("method.request.header." + header);
    } else {
        z.kind = authorizer::type::request;
        // LambdaRequestAuthorizationIdentity: each list becomes method.request.header.X,
        // method.request.querystring.X, stageVariables.X and context.X.
        if (identity) {
            warn_unknown_keys(*identity, request_identity_keys, out_.warnings);
            const std::pair<const char*, const char*> sources[] = {
                {"Headers", "method.request.header."},
                {"QueryStrings", "method.request.querystring."},
                {"StageVariables", "stageVariables."},
                {"Context", "context."}};
            for (const auto& [key, prefix] : sources) {
                if (const ynode* l = identity->find(key); l && !l->is_null()) {
                    for (const auto& name : string_list(*l, std::string("Identity.") + key))
                        z.identity_sources.push_back(prefix + name);
                }
            }
        }
    }
    z.result_ttl_s = default_result_ttl_s;
    if (identity) {
        if (const ynode* r = identity->find("ReauthorizeEvery"))
            z.result_ttl_s =
                static_cast<int>(expect_int(*r, 0, max_result_ttl_s, "Identity.ReauthorizeEvery"));
    }
    // SAM rejects a REQUEST authorizer with no identity source unless its results are not
    // cached, ReauthorizeEvery: 0 (samtranslator/model/apigateway.py, ApiGatewayAuthorizer
    // _is_missing_identity_source): API Gateway caches by the identity sources.
    if (z.kind == authorizer::type::request && z.identity_sources.empty() && z.result_ttl_s > 0) {
        fail(identity ? *identity : ynode::make_map(m.key_where, def.path),
             a.id + ": REQUEST authorizer " + m.key +
                 " must name at least one identity source in Identity (Headers, QueryStrings, "
                 "StageVariables or Context), or set Identity.ReauthorizeEvery: 0");
    }
    a.authorizers.push_back(std::move(z));
}

void sam_loader::read_http_authorizer(api& a, const ymember& m) {
    const ynode& def = expect_map(m.value, "an authorizer");
    authorizer z;
    z.name = m.key;
    z.where = m.key_where;
    if (const ynode* jwt = def.find("JwtConfiguration")) {
        // OAuth2Authorizer: JwtConfiguration {issuer, audience}, IdentitySource (API Gateway's
        // default for JWT authorizers: $request.header.Authorization), AuthorizationScopes.
        warn_unknown_keys(def, jwt_authorizer_keys, out_.warnings);
        z.kind = authorizer::type::jwt;
        expect_map(*jwt, "JwtConfiguration");
        warn_unknown_keys(*jwt, jwt_configuration_keys, out_.warnings);
        const ynode* issuer = jwt->find("issuer");
        if (!issuer) {
            fail_missing(*jwt, "issuer", jwt_configuration_keys, *jwt,
                         a.id + ": JWT authorizer " + m.key + " needs JwtConfiguration.issuer");
        }
        z.issuer = expect_string(*issuer, "issuer");
        if (const ynode* aud = jwt->find("audience"); aud && !aud->is_null())
            z.audience = aud->is_scalar() ? std::vector<std::string>{aud->text}
                                          : string_list(*aud, "audience");
        std::string source = "$request.header.Authorization";
        if (const ynode* s = def.find("IdentitySource")) source = expect_string(*s, "IdentitySource");
        z.identity_sources.push_back(source);
        z.result_ttl_s = 0;  // JWT authorizers have no result cache
        if (const ynode* sc = def.find("AuthorizationScopes"); sc && !sc->is_null())
            authorizer_scopes_[a.id][m.key] = string_list(*sc, "AuthorizationScopes");
        a.authorizers.push_back(std::move(z));
        return;
    }
    warn_unknown_keys(def, http_lambda_authorizer_keys, out_.warnings);
    const ynode* arn = def.find("FunctionArn");
    if (!arn) {
        fail_missing(def, "FunctionArn", http_lambda_authorizer_keys,
                     ynode::make_map(m.key_where, def.path),
                     a.id + ": authorizer " + m.key +
                         " needs a FunctionArn (a Lambda authorizer) or a JwtConfiguration");
    }
    z.kind = authorizer::type::request;
    z.function = authorizer_function(*arn, a.id, m.key);
    // LambdaAuthorizer AuthorizerPayloadFormatVersion: "Required: Yes", 1.0 or 2.0.
    const ynode* version = def.find("AuthorizerPayloadFormatVersion");
    if (!version) {
        fail_missing(def, "AuthorizerPayloadFormatVersion", http_lambda_authorizer_keys,
                     ynode::make_map(m.key_where, def.path),
                     a.id + ": authorizer " + m.key +
                         " needs an AuthorizerPayloadFormatVersion (1.0 or 2.0)");
    }
    // YAML reads an unquoted 2.0 as a number; its text is what was written.
    static constexpr std::array<std::string_view, 2> versions = {"1.0", "2.0"};
    z.payload_format_version = expect_choice(*version, "AuthorizerPayloadFormatVersion", versions);
    if (const ynode* s = def.find("EnableSimpleResponses")) {
        z.simple_responses = read_bool(*s, "EnableSimpleResponses");
        if (z.simple_responses && z.payload_format_version != "2.0")
            fail(*s, "EnableSimpleResponses needs AuthorizerPayloadFormatVersion 2.0");
    }
    z.result_ttl_s = default_result_ttl_s;
    if (const ynode* identity = def.find("Identity"); identity && !identity->is_null()) {
        expect_map(*identity, "Identity");
        warn_unknown_keys(*identity, request_identity_keys, out_.warnings);
        // LambdaAuthorizationIdentity: $request.header.X, $request.querystring.X,
        // $stageVariables.X, $context.X.
        const std::pair<const char*, const char*> sources[] = {
            {"Headers", "$request.header."},
            {"QueryStrings", "$request.querystring."},
            {"StageVariables", "$stageVariables."},
            {"Context", "$context."}};
        for (const auto& [key, prefix] : sources) {
            if (const ynode* l = identity->find(key); l && !l->is_null()) {
                for (const auto& name : string_list(*l, std::string("Identity.") + key))
                    z.identity_sources.push_back(prefix + name);
            }
        }
        if (const ynode* r = identity->find("ReauthorizeEvery"))
            z.result_ttl_s =
                static_cast<int>(expect_int(*r, 0, max_result_ttl_s, "Identity.ReauthorizeEvery"));
    }
    a.authorizers.push_back(std::move(z));
}

// A resolved FunctionArn (`!GetAtt Fn.Arn` and `!Sub ${Fn.Arn}` resolve to the function's
// ARN) → the logical id of the function of this template it names by FunctionName.
std::string sam_loader::authorizer_function(const ynode& arn, const std::string& api_id,
                                            const std::string& name) {
    const std::string what = api_id + ": authorizer " + name +
                             ": the authorizer must be a function of this template "
                             "(!GetAtt Fn.Arn, !Sub ${Fn.Arn} or its function ARN)";
    if (!arn.is_scalar()) fail(arn, what + (arn.type == ynode::kind::unresolved ? "; " + arn.text : ""));
    const std::string& text = arn.text;
    const auto at = text.find(":function:");
    if (text.rfind("arn:", 0) != 0 || at == std::string::npos) fail(arn, what + ", got " + text);
    std::string fn_name = text.substr(at + 10);
    if (const auto colon = fn_name.find(':'); colon != std::string::npos) fn_name.resize(colon);
    for (const auto& fn : out_.functions) {
        if (fn.function_name == fn_name) return fn.name;
    }
    fail(arn, what + "; no function here is named " + fn_name);
}

void sam_loader::read_rest_cors(api& a, const ynode& cors) {
    if (cors.is_null()) return;
    cors_config c;
    c.where = cors.where;
    bool methods_given = false;
    if (cors.is_scalar()) {
        c.allow_origins = {strip_sam_quotes(cors.text)};
    } else {
        expect_map(cors, "Cors");
        warn_unknown_keys(cors, rest_cors_keys, out_.warnings);
        const ynode* origin = cors.find("AllowOrigin");
        // CorsConfiguration AllowOrigin: "Required: Yes".
        if (!origin) {
            fail_missing(cors, "AllowOrigin", rest_cors_keys, cors,
                         a.id + ": Cors needs an AllowOrigin");
        }
        c.allow_origins = {strip_sam_quotes(expect_string(*origin, "AllowOrigin"))};
        if (const ynode* h = cors.find("AllowHeaders"))
            c.allow_headers = split_list(strip_sam_quotes(expect_string(*h, "AllowHeaders")));
        if (const ynode* m = cors.find("AllowMethods")) {
            for (auto& method : split_list(strip_sam_quotes(expect_string(*m, "AllowMethods"))))
                c.allow_methods.push_back(method == "*" ? method : upper(method));
            methods_given = true;
        }
        if (const ynode* age = cors.find("MaxAge")) {
            const ynode bare = ynode::make_scalar(strip_sam_quotes(expect_string(*age, "MaxAge")),
                                                  age->where, age->path);
            c.max_age_s = static_cast<int>(expect_int(bare, 0, INT32_MAX, "MaxAge"));
        }
        if (const ynode* cr = cors.find("AllowCredentials"))
            c.allow_credentials = read_bool(*cr, "AllowCredentials");
    }
    if (methods_given) {
        a.cors = std::move(c);
        return;
    }
    // Without AllowMethods SAM sends, per path, the methods defined on it plus OPTIONS, every
    // method for ANY, upper-cased and sorted (samtranslator swagger.py,
    // _make_cors_allowed_methods_for_path).
    static const std::set<std::string> all_methods = {"DELETE", "GET",  "HEAD", "OPTIONS",
                                                      "PATCH",  "POST", "PUT"};
    std::map<std::string, std::set<std::string>> per_path;
    for (const auto& r : out_.routes) {
        if (r.api_id != a.id) continue;
        auto& set = per_path[r.path];
        if (r.method == "ANY") {
            set.insert(all_methods.begin(), all_methods.end());
        } else {
            set.insert(r.method);
        }
        set.insert("OPTIONS");
    }
    const bool uniform =
        std::all_of(per_path.begin(), per_path.end(),
                    [&](const auto& p) { return p.second == per_path.begin()->second; });
    if (uniform) {
        if (per_path.empty()) {
            c.allow_methods = {"OPTIONS"};
        } else {
            c.allow_methods.assign(per_path.begin()->second.begin(),
                                   per_path.begin()->second.end());
        }
        a.cors = std::move(c);
        return;
    }
    for (const auto& [path, methods] : per_path) {
        cors_config p = c;
        p.allow_methods.assign(methods.begin(), methods.end());
        a.path_cors[path] = std::move(p);
    }
}

void sam_loader::read_http_cors(api& a, const ynode& cors) {
    if (cors.is_null()) return;
    cors_config c;
    c.where = cors.where;
    if (cors.is_scalar()) {
        // `CorsConfiguration: true` sets AllowOrigins to ["*"] and nothing else
        // (samtranslator/model/api/http_api_generator.py, _add_cors); false is no CORS.
        if (!read_bool(cors, "CorsConfiguration")) return;
        c.allow_origins = {"*"};
        a.cors = std::move(c);
        return;
    }
    expect_map(cors, "CorsConfiguration");
    warn_unknown_keys(cors, http_cors_keys, out_.warnings);
    if (const ynode* o = cors.find("AllowOrigins")) c.allow_origins = string_list(*o, "AllowOrigins");
    if (const ynode* h = cors.find("AllowHeaders")) c.allow_headers = string_list(*h, "AllowHeaders");
    if (const ynode* m = cors.find("AllowMethods")) {
        for (auto& method : string_list(*m, "AllowMethods"))
            c.allow_methods.push_back(method == "*" ? method : upper(method));
    }
    if (const ynode* e = cors.find("ExposeHeaders"))
        c.expose_headers = string_list(*e, "ExposeHeaders");
    // API Gateway HTTP API CORS maxAge: -1 (disables caching) to 86400 seconds.
    if (const ynode* age = cors.find("MaxAge"))
        c.max_age_s = static_cast<int>(expect_int(*age, -1, 86400, "MaxAge"));
    if (const ynode* cr = cors.find("AllowCredentials"))
        c.allow_credentials = read_bool(*cr, "AllowCredentials");
    a.cors = std::move(c);
}

// ApiUsagePlan: PER_API creates <api>UsagePlan with the key <api>ApiKey; SHARED one
// ServerlessUsagePlan with ServerlessApiKey for every API that asks for it; NONE nothing.
// The key's value is drawn at start, as AWS generates one at deploy.
void sam_loader::read_usage_plan(const api& a, const ynode& plan) {
    expect_map(plan, "UsagePlan");
    warn_unknown_keys(plan, usage_plan_keys, out_.warnings);
    const ynode* create = plan.find("CreateUsagePlan");
    if (!create) {
        fail_missing(plan, "CreateUsagePlan", usage_plan_keys, plan,
                     a.id + ": UsagePlan needs CreateUsagePlan (PER_API, SHARED or NONE)");
    }
    static constexpr std::array<std::string_view, 3> modes = {"PER_API", "SHARED", "NONE"};
    const std::string mode = expect_choice(*create, "CreateUsagePlan", modes);
    if (mode == "NONE") return;
    const bool shared = mode == "SHARED";
    const std::string plan_id = shared ? "ServerlessUsagePlan" : a.id + "UsagePlan";
    const std::string key_id = shared ? "ServerlessApiKey" : a.id + "ApiKey";
    auto it = std::find_if(out_.usage_plans.begin(), out_.usage_plans.end(),
                           [&](const usage_plan& p) { return p.name == plan_id; });
    if (it == out_.usage_plans.end()) {
        usage_plan p;
        p.name = plan_id;
        p.where = plan.where;
        p.keys.push_back(key_id);
        out_.usage_plans.push_back(std::move(p));
        it = std::prev(out_.usage_plans.end());
        api_key k;
        k.name = key_id;
        k.where = plan.where;
        out_.api_keys.push_back(std::move(k));
    }
    it->api_ids.push_back(a.id);
    read_limits(plan, *it, out_.warnings);
}

void sam_loader::apply_route_auth(const api& a, const std::string& default_authorizer,
                                  bool api_key_required) {
    const bool rest = a.kind == api_kind::rest;
    const auto& unchecked = unchecked_authorizers_[a.id];
    const auto& scopes = authorizer_scopes_[a.id];
    auto scopes_of = [&](const std::string& name) {
        auto s = scopes.find(name);
        return s == scopes.end() ? std::vector<std::string>{} : s->second;
    };
    for (std::size_t i = 0; i < out_.routes.size(); ++i) {
        route& r = out_.routes[i];
        if (r.api_id != a.id) continue;
        r.authorizer = default_authorizer;
        r.authorization_scopes = scopes_of(default_authorizer);
        r.api_key_required = rest && api_key_required;
        auto found = route_auth_.find(i);
        if (found == route_auth_.end() || found->second.is_null()) continue;
        const ynode& auth = expect_map(found->second, "Auth");
        warn_unknown_keys(auth,
                          rest ? std::span<const std::string_view>(rest_event_auth_keys)
                               : std::span<const std::string_view>(http_event_auth_keys),
                          out_.warnings);
        if (const ynode* z = auth.find("Authorizer")) {
            const std::string& name = expect_string(*z, "Authorizer");
            if (name == "NONE") {
                r.authorizer.clear();
                r.authorization_scopes.clear();
            } else if (unchecked.count(name)) {
                r.authorizer.clear();
                r.authorization_scopes.clear();
                out_.warnings.push_back(warning_text(
                    *z, "authorizer " + name + " is not checked: this route runs unauthenticated"));
            } else if (has_name(a.authorizers, name)) {
                r.authorizer = name;
                r.authorization_scopes = scopes_of(name);
            } else {
                fail(*z, "Authorizer " + name + " is not one of " + a.id + "'s Authorizers (" +
                             declared_names(a, unchecked) + ")");
            }
        }
        if (const ynode* sc = auth.find("AuthorizationScopes"); sc && !sc->is_null())
            r.authorization_scopes = string_list(*sc, "AuthorizationScopes");
        if (rest) {
            if (const ynode* k = auth.find("ApiKeyRequired"))
                r.api_key_required = read_bool(*k, "ApiKeyRequired");
            for (const char* key : {"ResourcePolicy", "InvokeRole"}) {
                if (const ymember* m = auth.find_member(key); m && !m->value.is_null()) {
                    out_.warnings.push_back(warning_key_text(
                        *m, m->value.path,
                        std::string(key) + " is not checked: requests are not filtered by it"));
                }
            }
        }
    }
}

// AWS::ApiGateway::ApiKey, UsagePlan and UsagePlanKey beside SAM APIs; authorizers of raw
// API Gateway resources attach to methods and routes coldbrew does not load.
void sam_loader::read_gateway_resources() {
    const ynode& resources = *root_.find("Resources");
    std::map<std::string, std::size_t> plan_index;  // logical id → out_.usage_plans index
    std::vector<const ymember*> plan_keys;
    for (const auto& res : resources.members) {
        const std::string type = resolver_->resource_type(res.key);
        const bool ours = type == "AWS::ApiGateway::ApiKey" ||
                          type == "AWS::ApiGateway::UsagePlan" ||
                          type == "AWS::ApiGateway::UsagePlanKey";
        if (type == "AWS::ApiGateway::Authorizer" || type == "AWS::ApiGatewayV2::Authorizer") {
            out_.warnings.push_back(warning_key_text(
                res, res.value.path,
                type + " attaches to AWS::ApiGateway(V2) methods and routes, which are not "
                       "loaded; declare the authorizer in the Auth of an AWS::Serverless::Api "
                       "or HttpApi"));
            continue;
        }
        if (!ours) continue;
        if (!resolver_->resource_enabled(res.key)) continue;
        const ynode empty = ynode::make_map(res.value.where, join_path(res.value.path, "Properties"));
        const ynode* raw = res.value.find("Properties");
        const ynode props = raw && !raw->is_null() ? resolver_->resolve(expect_map(*raw, "Properties"))
                                                   : empty;
        if (type == "AWS::ApiGateway::ApiKey") {
            api_key k;
            k.name = res.key;
            k.where = res.key_where;
            if (auto v = value(props, "Value")) k.value = expect_string(*v, "Value");
            if (auto v = value(props, "Enabled")) k.enabled = read_bool(*v, "Enabled");
            out_.api_keys.push_back(std::move(k));
        } else if (type == "AWS::ApiGateway::UsagePlan") {
            usage_plan p;
            p.name = res.key;
            p.where = res.key_where;
            const ynode* stages_raw = raw ? raw->find("ApiStages") : nullptr;
            if (stages_raw && stages_raw->is_sequence()) {
                for (const auto& st : stages_raw->items) {
                    expect_map(st, "an API stage");
                    const ynode* id = st.find("ApiId");
                    if (!id) fail(st, res.key + ": ApiStages items need an ApiId");
                    std::string target;
                    if (intrinsic_name(*id) == "Ref" && id->members.front().value.is_scalar())
                        target = id->members.front().value.text;
                    const api* a = target.empty() ? nullptr : out_.find_api(target);
                    if (!a || a->kind != api_kind::rest) {
                        fail(*id, "ApiId must be !Ref to a REST API of this template "
                                  "(AWS::Serverless::Api or ServerlessRestApi)");
                    }
                    if (const ynode* stage = st.find("Stage")) {
                        const ynode s = resolver_->resolve(*stage);
                        if (s.is_scalar() && s.text != a->stage) {
                            out_.warnings.push_back(warning_text(
                                *stage, "stage " + s.text + " is not " + a->id + "'s stage " +
                                            a->stage + "; the plan applies to the one it serves"));
                        }
                    }
                    p.api_ids.push_back(target);
                }
            } else if (stages_raw) {
                expect_sequence(*stages_raw, "ApiStages");
            }
            read_limits(props, p, out_.warnings);
            plan_index[res.key] = out_.usage_plans.size();
            out_.usage_plans.push_back(std::move(p));
        } else {
            plan_keys.push_back(&res);
        }
    }
    for (const ymember* res : plan_keys) {
        const ynode* raw = res->value.find("Properties");
        if (!raw || !raw->is_map()) fail(res->value, res->key + " needs KeyId and UsagePlanId");
        auto ref_of = [&](const char* key, const std::string& type) {
            const ynode* n = raw->find(key);
            if (!n) fail(*raw, res->key + " needs a " + key);
            if (intrinsic_name(*n) != "Ref" || !n->members.front().value.is_scalar() ||
                resolver_->resource_type(n->members.front().value.text) != type)
                fail(*n, std::string(key) + " must be !Ref to an " + type + " of this template");
            return n->members.front().value.text;
        };
        const std::string key = ref_of("KeyId", "AWS::ApiGateway::ApiKey");
        const std::string plan = ref_of("UsagePlanId", "AWS::ApiGateway::UsagePlan");
        auto it = plan_index.find(plan);
        if (it == plan_index.end()) continue;  // excluded by its Condition
        out_.usage_plans[it->second].keys.push_back(key);
    }
}

namespace {

} // namespace

bool looks_like_sam(const ynode& root) {
    return root.is_map() && (root.find("AWSTemplateFormatVersion") || root.find("Transform") ||
                             root.find("Resources"));
}

void load_sam(const ynode& root, const load_options& options, stack& out) {
    ynode doc = root;
    expand_short_forms(doc);
    sam_loader(doc, options, out).run();
}

} // namespace coldbrew::config::detail
