// SAM template → stack. What is read, and how, follows what `sam local start-api` does
// (spec §5.1): samtranslator's Globals and implicit-API plugins first, then SAM CLI's
// intrinsic resolver (`samcli/lib/providers/sam_base_provider.py`,
// `samcli/lib/providers/sam_function_provider.py`).

#include "emulator/config/intrinsics.hpp"
#include "emulator/config/loaders.hpp"
#include "emulator/config/rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>

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

bool is_layer_type(const std::string& type) {
    return type == "AWS::Serverless::LayerVersion" || type == "AWS::Lambda::LayerVersion";
}

bool is_plain_map(const ynode& n) {
    return n.is_map() && intrinsic_name(n).empty();
}

// An Auth block that only opts out (`Authorizer: NONE`, `ApiKeyRequired: false`) asks for
// nothing coldbrew skips; anything else does.
bool asks_for_auth(const ynode& auth) {
    if (auth.is_null()) return false;
    if (!is_plain_map(auth)) return true;
    return std::any_of(auth.members.begin(), auth.members.end(), [](const ymember& m) {
        const std::string& v = m.value.is_scalar() ? m.value.text : std::string();
        const bool opt_out =
            ((m.key == "Authorizer" || m.key == "DefaultAuthorizer") && v == "NONE") ||
            (m.key == "ApiKeyRequired" && (v == "false" || v == "False"));
        return !opt_out;
    });
}

// Warns about each Cors / CorsConfiguration / Auth key of `map` (a resource's own properties,
// a Globals section or an event's properties): declared, not emulated.
void warn_not_emulated(const ynode& map, std::vector<std::string>& warnings) {
    if (!map.is_map()) return;
    for (const auto& m : map.members) {
        if ((m.key == "Cors" || m.key == "CorsConfiguration") && !m.value.is_null()) {
            warn_cors_not_emulated(m, m.value.path, warnings);
        } else if (m.key == "Auth" && asks_for_auth(m.value)) {
            warn_auth_not_emulated(m, m.value.path, warnings);
        }
    }
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
    std::optional<std::filesystem::path> layer_dir(const std::string& id, const ynode& at);

    // The resolved value of props[key]; nullopt when absent or AWS::NoValue. Values that
    // cannot be resolved locally are errors here: every caller needs the real value.
    std::optional<ynode> value(const ynode& props, std::string_view key);
    std::string api_ref(const ynode& raw, const std::string& expected_type, std::string_view what);

    const ynode& root_;
    const load_options& options_;
    stack& out_;
    std::filesystem::path base_dir_;
    std::optional<intrinsic_resolver> resolver_;
    ynode globals_function_;
    ynode globals_api_;
    ynode globals_http_api_;
};

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
        const bool ours = type == "AWS::Serverless::Function" || type == "AWS::Serverless::Api" ||
                          type == "AWS::Serverless::HttpApi";
        if (!ours) {
            if (type == "AWS::Lambda::Function") {
                out_.warnings.push_back(
                    warning_key_text(res, r.path,
                                     "AWS::Lambda::Function resources are not emulated; use "
                                     "AWS::Serverless::Function"));
            }
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
        } else {
            read_api(res, raw, type == "AWS::Serverless::Api" ? api_kind::rest : api_kind::http);
        }
    }

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
    if (!globals || globals->is_null()) return;
    expect_map(*globals, "Globals");
    warn_unknown_keys(*globals, globals_keys, out_.warnings);
    auto take = [&](std::string_view key, ynode& into, std::span<const std::string_view> known) {
        if (const ynode* g = globals->find(key); g && !g->is_null()) {
            into = expect_map(*g, "Globals." + std::string(key));
            warn_unknown_keys(into, known, out_.warnings);
            if (key != "Function") warn_not_emulated(into, out_.warnings);
        }
    };
    take("Function", globals_function_, function_properties);
    take("Api", globals_api_, api_properties);
    take("HttpApi", globals_http_api_, http_api_properties);
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
    return local_directory(content, base_dir_, expect_string(content, key), key);
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
    warn_not_emulated(props_raw, out_.warnings);
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
    for (const char* key : {"DefinitionBody", "DefinitionUri"}) {
        if (const ymember* m = props_raw.find_member(key)) {
            out_.warnings.push_back(warning_key_text(
                *m, join_path(props_raw.path, key),
                "routes in an OpenAPI definition are not read; declare them as function events"));
        }
    }
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
        if (type != "Api" && type != "HttpApi") {
            const bool known_type = std::find(sam_event_types.begin(), sam_event_types.end(),
                                              type) != sam_event_types.end();
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
        warn_not_emulated(props, out_.warnings);

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
    }
}

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
