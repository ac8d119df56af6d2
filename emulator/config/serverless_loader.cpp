// serverless.yml → stack (spec §5.2). Variables are resolved lazily, only in the keys
// coldbrew reads, so a `${ssm:…}` under `resources:` or `provider.iam` does not stop a
// local run; an unresolvable variable in a key coldbrew needs is a config_error.

#include "emulator/config/layer_zip.hpp"
#include "emulator/config/loaders.hpp"
#include "emulator/config/not_emulated.hpp"
#include "emulator/config/rules.hpp"
#include "emulator/config/serverless_esbuild.hpp"
#include "emulator/config/state_machines.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace coldbrew::config::detail {

namespace {

constexpr std::string_view rest_api_id = "ApiGatewayRestApi"; // serverless' CloudFormation id
constexpr std::string_view http_api_id = "HttpApi";
constexpr int default_memory_mb = 1024; // lib/utils/functionInfoUtils.js (serverless@1.20.0)
constexpr int default_timeout_s = 6;    // same; serverless-offline src/config/constants.js

constexpr std::array<std::string_view, 26> top_level_keys = {"service",
                                                             "frameworkVersion",
                                                             "configValidationMode",
                                                             "deprecationNotificationMode",
                                                             "disabledDeprecations",
                                                             "useDotenv",
                                                             "variablesResolutionMode",
                                                             "unresolvedVariablesNotificationMode",
                                                             "org",
                                                             "app",
                                                             "console",
                                                             "dashboard",
                                                             "plugins",
                                                             "custom",
                                                             "provider",
                                                             "functions",
                                                             "resources",
                                                             "package",
                                                             "layers",
                                                             "params",
                                                             "stages",
                                                             "outputs",
                                                             "build",
                                                             "license",
                                                             "stepFunctions",
                                                             "configSchema"};

constexpr std::array<std::string_view, 60> provider_keys = {"name",
                                                            "runtime",
                                                            "stage",
                                                            "region",
                                                            "profile",
                                                            "memorySize",
                                                            "timeout",
                                                            "environment",
                                                            "vpc",
                                                            "architecture",
                                                            "httpApi",
                                                            "apiGateway",
                                                            "iam",
                                                            "iamRoleStatements",
                                                            "iamManagedPolicies",
                                                            "role",
                                                            "deploymentBucket",
                                                            "deploymentMethod",
                                                            "deploymentPrefix",
                                                            "stackName",
                                                            "stackTags",
                                                            "tags",
                                                            "tracing",
                                                            "logs",
                                                            "logRetentionInDays",
                                                            "versionFunctions",
                                                            "layers",
                                                            "kmsKeyArn",
                                                            "lambdaHashingVersion",
                                                            "endpointType",
                                                            "apiName",
                                                            "websocketsApiName",
                                                            "websocketsApiRouteSelectionExpression",
                                                            "websocketsDescription",
                                                            "rolePermissionsBoundary",
                                                            "cfnRole",
                                                            "notificationArns",
                                                            "stackParameters",
                                                            "stackPolicy",
                                                            "rollbackConfiguration",
                                                            "alb",
                                                            "eventBridge",
                                                            "s3",
                                                            "ecr",
                                                            "cloudFront",
                                                            "disableRollback",
                                                            "runtimeManagement",
                                                            "logDataProtectionPolicy",
                                                            "usagePlan",
                                                            "apiKeys",
                                                            "resourcePolicy",
                                                            "vpcEndpointIds",
                                                            "description",
                                                            "tracingConfig",
                                                            "cloudwatch",
                                                            "disableDefaultOutputExportNames",
                                                            "ephemeralStorageSize",
                                                            "snapStart",
                                                            "kinesis",
                                                            "build"};

constexpr std::array<std::string_view, 37> function_keys = {"handler",
                                                            "runtime",
                                                            "name",
                                                            "description",
                                                            "memorySize",
                                                            "timeout",
                                                            "environment",
                                                            "vpc",
                                                            "layers",
                                                            "reservedConcurrency",
                                                            "provisionedConcurrency",
                                                            "events",
                                                            "architecture",
                                                            "package",
                                                            "role",
                                                            "tags",
                                                            "tracing",
                                                            "image",
                                                            "url",
                                                            "destinations",
                                                            "onError",
                                                            "kmsKeyArn",
                                                            "disableLogs",
                                                            "logRetentionInDays",
                                                            "logDataProtectionPolicy",
                                                            "maximumEventAge",
                                                            "maximumRetryAttempts",
                                                            "condition",
                                                            "dependsOn",
                                                            "fileSystemConfig",
                                                            "ephemeralStorageSize",
                                                            "snapStart",
                                                            "runtimeManagement",
                                                            "versionFunction",
                                                            "logs",
                                                            "iamRoleStatements",
                                                            "esbuildEntrypoint"};

constexpr std::array<std::string_view, 13> http_event_keys = {
    "method",   "path",  "cors",        "private",        "integration",  "authorizer", "request",
    "response", "async", "operationId", "connectionType", "connectionId", "timeout"};

constexpr std::array<std::string_view, 4> http_api_event_keys = {"method", "path", "authorizer",
                                                                 "name"};

// Event types the Serverless Framework (v3) knows; an unknown one may be a typo of ours.
constexpr std::array<std::string_view, 22> serverless_event_types = {"http",
                                                                     "httpApi",
                                                                     "websocket",
                                                                     "s3",
                                                                     "schedule",
                                                                     "sns",
                                                                     "sqs",
                                                                     "stream",
                                                                     "kafka",
                                                                     "activemq",
                                                                     "rabbitmq",
                                                                     "msk",
                                                                     "alexaSkill",
                                                                     "alexaSmartHome",
                                                                     "iot",
                                                                     "iotFleetProvisioning",
                                                                     "cloudwatchEvent",
                                                                     "cloudwatchLog",
                                                                     "cognitoUserPool",
                                                                     "alb",
                                                                     "eventBridge",
                                                                     "cloudFront"};
constexpr std::array<std::string_view, 2> emulated_event_types = {"http", "httpApi"};

constexpr std::array<std::string_view, 3> vpc_keys = {"securityGroupIds", "subnetIds",
                                                      "ipv6AllowedForDualStack"};

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\n");
    if (b == std::string_view::npos) return "";
    const auto e = s.find_last_not_of(" \t\n");
    return std::string(s.substr(b, e - b + 1));
}

bool is_quoted(std::string_view s) {
    return s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front();
}

// Index of the '}' closing the "${" at `open`, skipping nested "${…}" and quoted text.
std::size_t matching_brace(const std::string& s, std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (s.compare(i, 2, "${") == 0) {
            ++depth;
            ++i;
        } else if (s[i] == '}') {
            if (--depth == 0) return i;
        } else if ((s[i] == '\'' || s[i] == '"') && depth > 0) {
            const auto close = s.find(s[i], i + 1);
            if (close == std::string::npos) return std::string::npos;
            i = close;
        }
    }
    return std::string::npos;
}

// Splits "opt:stage, 'dev'" at the commas outside quotes, nested ${…} and parentheses.
std::vector<std::string> split_fallbacks(const std::string& s) {
    std::vector<std::string> parts;
    std::string current;
    int depth = 0;
    char quote = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '{' || c == '(') {
            ++depth;
        } else if (c == '}' || c == ')') {
            --depth;
        } else if (c == ',' && depth == 0) {
            parts.push_back(current);
            current.clear();
            continue;
        }
        current += c;
    }
    parts.push_back(current);
    return parts;
}

// serverless' variable sources look like "source:address" or "file(…)"; anything else in
// ${…} (CloudFormation's ${AWS::Region}, a Fn::Sub ${Param}) is left alone, as serverless does.
bool is_variable_ref(const std::string& ref) {
    if (ref.rfind("file(", 0) == 0) return true;
    const auto colon = ref.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    if (ref.compare(colon, 2, "::") == 0) return false;
    return std::all_of(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(colon),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

bool is_literal_fallback(const std::string& s) {
    if (s == "true" || s == "false" || s == "null") return true;
    if (s.empty()) return false;
    std::size_t i = s[0] == '-' ? 1 : 0;
    bool digits = false;
    for (; i < s.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(s[i]))) {
            digits = true;
        } else if (s[i] != '.') {
            return false;
        }
    }
    return digits;
}

// serverless' naming.js normalization of a name into a CloudFormation logical id: '-' is
// "Dash", '_' is "Underscore", the first letter upper case ("my-layer" → "MyDashlayer").
std::string normalized_name(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (c == '-') {
            out += "Dash";
        } else if (c == '_') {
            out += "Underscore";
        } else {
            out += c;
        }
    }
    if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
}

// serverless' getLambdaLayerLogicalId: "my-layer" → "MyDashlayerLambdaLayer".
std::string layer_logical_id(const std::string& name) { return normalized_name(name) + "LambdaLayer"; }

// ---- authorizers, CORS, API keys (serverless v3 lib/plugins/aws/package/compile/events/) ----

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// serverless.yml booleans as its schema takes them: unquoted true / false.
bool read_flag(const ynode& v, const std::string& what) {
    if (v.is_scalar() && !v.quoted) {
        if (v.text == "true" || v.text == "True" || v.text == "TRUE") return true;
        if (v.text == "false" || v.text == "False" || v.text == "FALSE") return false;
    }
    fail(v, what + " must be true or false, got " +
                (v.is_scalar() ? "'" + v.text + "'" : std::string("a ") +
                                                          (v.is_map() ? "mapping" : "list")));
}

// A string, or a list of strings (serverless' toSet for HTTP API lists, a string for one).
std::vector<std::string> read_strings(const ynode& v, const std::string& what) {
    std::vector<std::string> out;
    if (v.is_sequence()) {
        for (const auto& item : v.items)
            out.push_back(expect_string(item, what));
    } else {
        out.push_back(expect_string(v, what));
    }
    return out;
}

// Appends the items of `add` not in `to` yet (a JavaScript Set's insertion order).
void add_unique(std::vector<std::string>& to, const std::vector<std::string>& add) {
    for (const auto& x : add)
        if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
}

// serverless' getNormalizedFunctionName + "LambdaFunction": the function's CloudFormation id,
// which `Fn::GetAtt: [HelloLambdaFunction, Arn]` names.
std::string lambda_logical_id(const std::string& key) { return normalized_name(key) + "LambdaFunction"; }

// naming.js extractAuthorizerNameFromArn: the last '-' part of the ARN's last ':' part
// ("arn:…:function:shop-dev-auth" → "auth").
std::string authorizer_name_from_arn(const std::string& arn) {
    const std::string last = arn.substr(arn.rfind(':') + 1);
    return last.substr(last.rfind('-') + 1);
}

// The function name in a Lambda ARN ("arn:aws:lambda:r:a:function:NAME[:alias]"), or "".
std::string function_name_in_arn(const std::string& arn) {
    const auto at = arn.find(":function:");
    if (at == std::string::npos) return "";
    const std::string rest = arn.substr(at + 10);
    return rest.substr(0, rest.find(':'));
}

// The REST `http` event's `cors` headers when it names none (validate.js getCors).
const std::vector<std::string> rest_default_cors_headers = {
    "Content-Type",         "X-Amz-Date",       "Authorization",  "X-Api-Key",
    "X-Amz-Security-Token", "X-Amz-User-Agent", "X-Amzn-Trace-Id"};
// provider.httpApi.cors: true's headers (http-api.js defaultCors): the same seven.
const std::vector<std::string>& http_default_cors_headers = rest_default_cors_headers;
// What ANY stands for in an Access-Control-Allow-Methods list: cors.js replaces it with these
// (REST); http-api.js adds every method it allows but ANY, in its order (HTTP API).
const std::vector<std::string> rest_any_methods = {"DELETE", "GET",  "HEAD", "PATCH",
                                                   "POST",   "PUT"};
const std::vector<std::string> http_any_methods = {"GET",     "POST", "PUT",   "PATCH",
                                                   "OPTIONS", "HEAD", "DELETE"};

constexpr std::array<std::string_view, 11> rest_authorizer_keys = {
    "name",   "arn",          "resultTtlInSeconds", "identitySource", "identityValidationExpression",
    "type",   "authorizerId", "claims",             "scopes",         "managedExternally",
    "logicalId"};
constexpr std::array<std::string_view, 7> rest_cors_keys = {
    "origin", "origins", "headers", "methods", "allowCredentials", "maxAge", "cacheControl"};
constexpr std::array<std::string_view, 4> http_event_authorizer_keys = {"name", "scopes", "id",
                                                                        "type"};
constexpr std::array<std::string_view, 12> http_authorizer_keys = {
    "type",         "name",           "identitySource", "issuerUrl",
    "audience",     "functionName",   "functionArn",    "managedExternally",
    "resultTtlInSeconds", "enableSimpleResponses", "payloadVersion", "id"};
constexpr std::array<std::string_view, 6> http_cors_keys = {
    "allowedOrigins", "allowedHeaders", "allowedMethods", "allowCredentials",
    "exposedResponseHeaders", "maxAge"};
constexpr std::array<std::string_view, 5> api_key_keys = {"name", "value", "description",
                                                          "customerId", "enabled"};
constexpr std::array<std::string_view, 2> usage_plan_keys = {"quota", "throttle"};
constexpr std::array<std::string_view, 3> quota_keys = {"limit", "offset", "period"};
constexpr std::array<std::string_view, 2> throttle_keys = {"burstLimit", "rateLimit"};

// Resolves serverless variables: ${self:…}, ${opt:stage}, ${env:…}, ${sls:stage},
// ${aws:region|accountId}, ${param:…}, ${file(…):…}, with fallbacks (`, 'literal'`,
// `, ${other}`, `, other:source`).
class variables {
  public:
    variables(const ynode& root, const load_options& options, std::filesystem::path service_dir,
              const settings& settings, bool region_fixed)
        : root_(root), options_(options), service_dir_(std::move(service_dir)), settings_(settings),
          region_fixed_(region_fixed) {}

    // Deep copy of `n` with every variable substituted. A whole-value variable takes the
    // referenced value's shape (a map, a list); an embedded one must be a scalar.
    ynode resolve(const ynode& n) {
        switch (n.type) {
        case ynode::kind::scalar:
            return n.text.find("${") == std::string::npos ? n : resolve_string(n);
        case ynode::kind::sequence: {
            ynode out = n;
            for (auto& item : out.items)
                item = resolve(item);
            return out;
        }
        case ynode::kind::map: {
            ynode out = n;
            for (auto& m : out.members)
                m.value = resolve(m.value);
            return out;
        }
        default:
            return n;
        }
    }

    // resolve() of parent.key, or nullopt when absent or null.
    std::optional<ynode> get(const ynode* parent, std::string_view key) {
        const ynode* raw = parent ? parent->find(key) : nullptr;
        if (!raw || raw->is_null()) return std::nullopt;
        ynode v = resolve(*raw);
        if (v.is_null()) return std::nullopt;
        return v;
    }

    // options.stage, else provider.stage, else "dev".
    const std::string& stage() {
        if (stage_) return *stage_;
        if (options_.stage) {
            stage_ = *options_.stage;
        } else {
            if (computing_stage_) fail(*root_.find("provider"), "provider.stage refers to itself");
            computing_stage_ = true;
            auto v = get(root_.find("provider"), "stage");
            computing_stage_ = false;
            stage_ = v ? expect_string(*v, "provider.stage") : "dev";
        }
        return *stage_;
    }

    // coldbrew.yaml's region when it names one, else provider.region, else us-east-1.
    const std::string& region() {
        if (region_) return *region_;
        auto v = region_fixed_ ? std::nullopt : get(root_.find("provider"), "region");
        region_ = v ? expect_string(*v, "provider.region") : settings_.region;
        return *region_;
    }

  private:
    ynode resolve_string(const ynode& n) {
        const std::string& text = n.text;
        std::string out;
        std::size_t i = 0;
        while (i < text.size()) {
            const auto open = text.find("${", i);
            if (open == std::string::npos) break;
            const auto close = matching_brace(text, open);
            if (close == std::string::npos) fail(n, "unterminated variable in '" + text + "'");
            const std::string inner = text.substr(open + 2, close - open - 2);
            const std::string primary = trim(split_fallbacks(inner).front());
            if (!is_variable_ref(primary)) { // CloudFormation's, not ours
                out.append(text, i, close + 1 - i);
                i = close + 1;
                continue;
            }
            ynode value = evaluate(inner, n);
            if (open == 0 && close + 1 == text.size()) {
                // The whole value: keep the referenced node's type; a scalar reports the
                // position of the key that referenced it.
                if (value.is_scalar() || value.is_null()) {
                    value.where = n.where;
                    value.path = n.path;
                }
                return value;
            }
            if (!value.is_scalar()) {
                fail(n, "variable ${" + inner + "} is not a string and cannot be embedded in '" +
                            text + "'");
            }
            out.append(text, i, open - i);
            out += value.text;
            i = close + 1;
        }
        out.append(text, std::min(i, text.size()), std::string::npos);
        ynode result = n;
        result.text = std::move(out);
        return result;
    }

    // The value of the inside of one ${…}; an error when neither it nor a fallback resolves.
    ynode evaluate(const std::string& inner, const ynode& at) {
        std::vector<std::string> reasons;
        if (auto v = evaluate_optional(inner, at, reasons)) return *v;
        std::string why;
        for (const auto& r : reasons)
            why += (why.empty() ? "" : "; ") + r;
        fail(at, "variable ${" + inner + "} cannot be resolved: " + why);
    }

    std::optional<ynode> evaluate_optional(const std::string& inner, const ynode& at,
                                           std::vector<std::string>& reasons) {
        const auto parts = split_fallbacks(inner);
        for (std::size_t idx = 0; idx < parts.size(); ++idx) {
            const std::string part = trim(parts[idx]);
            if (idx > 0) {
                if (is_quoted(part))
                    return ynode::make_scalar(part.substr(1, part.size() - 2), at.where, at.path);
                if (is_literal_fallback(part)) {
                    if (part == "null") continue;
                    return ynode::make_scalar(part, at.where, at.path);
                }
            }
            if (part.rfind("${", 0) == 0 && matching_brace(part, 0) == part.size() - 1) {
                if (auto v = evaluate_optional(part.substr(2, part.size() - 3), at, reasons))
                    return v;
                continue;
            }
            if (!is_variable_ref(part)) {
                fail(at, "'" + part + "' in ${" + inner +
                             "} is neither a variable (source:address) "
                             "nor a quoted string");
            }
            if (auto v = lookup(substitute_nested(part, at), at, reasons); v && !v->is_null())
                return v;
        }
        return std::nullopt;
    }

    // "self:custom.${opt:stage}.url" → "self:custom.dev.url".
    std::string substitute_nested(const std::string& ref, const ynode& at) {
        if (ref.find("${") == std::string::npos) return ref;
        ynode tmp = ynode::make_scalar(ref, at.where, at.path);
        ynode v = resolve_string(tmp);
        return expect_string(v, "variable address");
    }

    std::optional<ynode> lookup(const std::string& ref, const ynode& at,
                                std::vector<std::string>& reasons) {
        if (std::find(in_progress_.begin(), in_progress_.end(), ref) != in_progress_.end()) {
            fail(at, "variable ${" + ref + "} refers to itself");
        }
        in_progress_.push_back(ref);
        auto v = lookup_source(ref, at, reasons);
        in_progress_.pop_back();
        return v;
    }

    std::optional<ynode> lookup_source(const std::string& ref, const ynode& at,
                                       std::vector<std::string>& reasons) {
        auto scalar = [&](std::string text) {
            return ynode::make_scalar(std::move(text), at.where, at.path);
        };
        if (ref.rfind("file(", 0) == 0) return lookup_file(ref, at, reasons);
        const auto colon = ref.find(':');
        const std::string source = ref.substr(0, colon);
        const std::string address = trim(ref.substr(colon + 1));
        if (source == "self") {
            if (address == "service") {
                const ynode* service = root_.find("service");
                if (service && service->is_map()) {
                    if (const ynode* name = service->find("name")) return resolve(*name);
                }
            }
            auto v = walk(root_, address);
            if (!v) reasons.push_back("self:" + address + " does not exist");
            return v;
        }
        if (source == "opt") {
            if (address == "stage" && options_.stage) return scalar(*options_.stage);
            reasons.push_back("option --" + address + " was not given");
            return std::nullopt;
        }
        if (source == "env") {
            if (auto it = options_.env.find(address); it != options_.env.end())
                return scalar(it->second);
            reasons.push_back("environment variable " + address + " is not set");
            return std::nullopt;
        }
        if (source == "sls") {
            if (address == "stage") return scalar(stage());
            if (address == "instanceId") return scalar("coldbrew-local");
        } else if (source == "aws") {
            if (address == "region") return scalar(region());
            if (address == "accountId") return scalar(settings_.account_id);
        } else if (source == "param") {
            const ynode* params = root_.find("params");
            for (const std::string& group : {stage(), std::string("default")}) {
                const ynode* g = params ? params->find(group) : nullptr;
                if (const ynode* v = g ? g->find(address) : nullptr) return resolve(*v);
            }
            reasons.push_back("params has no " + address + " for stage " + stage() + " or default");
            return std::nullopt;
        }
        reasons.push_back("${" + source + ":…} is not available locally");
        return std::nullopt;
    }

    std::optional<ynode> lookup_file(const std::string& ref, const ynode& at,
                                     std::vector<std::string>& reasons) {
        const auto close = ref.find(')');
        if (close == std::string::npos) fail(at, "unterminated file(…) in ${" + ref + "}");
        std::string name = trim(ref.substr(5, close - 5));
        if (is_quoted(name)) name = name.substr(1, name.size() - 2);
        std::string address;
        if (close + 1 < ref.size()) {
            if (ref[close + 1] != ':') fail(at, "expected ':' after file(…) in ${" + ref + "}");
            address = trim(ref.substr(close + 2));
        }
        std::filesystem::path p(name);
        if (p.is_relative()) p = service_dir_ / p;
        p = normal_absolute(p);
        const std::string ext = p.extension().string();
        if (ext != ".yml" && ext != ".yaml" && ext != ".json") {
            fail(at, "file(" + name + "): only YAML and JSON files can be read locally");
        }
        std::error_code ec;
        if (!std::filesystem::exists(p, ec)) {
            reasons.push_back("file " + p.string() + " does not exist");
            return std::nullopt;
        }
        auto it = files_.find(p.string());
        if (it == files_.end()) it = files_.emplace(p.string(), load_yaml_file(p)).first;
        auto v = walk(it->second, address);
        if (!v) reasons.push_back(p.string() + " has no " + address);
        return v;
    }

    // Follows a dotted address through `start`, resolving variables met on the way (so
    // `custom: ${file(x.yml)}` can be walked into).
    std::optional<ynode> walk(const ynode& start, const std::string& address) {
        ynode current = start;
        std::size_t pos = 0;
        while (pos < address.size()) {
            const auto dot = address.find('.', pos);
            const std::string key =
                address.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
            pos = dot == std::string::npos ? address.size() : dot + 1;
            if (current.is_scalar() && current.text.find("${") != std::string::npos) {
                current = resolve_string(current);
            }
            const ynode* next = nullptr;
            if (current.is_map()) {
                next = current.find(key);
            } else if (current.is_sequence() && !key.empty() &&
                       std::all_of(key.begin(), key.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c));
                       })) {
                const auto index = std::stoul(key);
                if (index < current.items.size()) next = &current.items[index];
            }
            if (!next) return std::nullopt;
            ynode copy = *next;
            current = std::move(copy);
        }
        return resolve(current);
    }

    const ynode& root_;
    const load_options& options_;
    std::filesystem::path service_dir_;
    const settings& settings_;
    bool region_fixed_;
    std::optional<std::string> stage_;
    std::optional<std::string> region_;
    bool computing_stage_ = false;
    std::vector<std::string> in_progress_;
    std::map<std::string, ynode> files_;
};

class serverless_loader {
  public:
    serverless_loader(const ynode& root, const load_options& options, bool region_fixed, stack& out)
        : root_(root), out_(out), service_dir_(out.template_file.parent_path()),
          vars_(root, options, service_dir_, out.settings, region_fixed), today_(options.today) {}

    void run();

  private:
    void read_function(const ymember& entry);
    void read_events(const function& fn, const ynode& events);
    void read_state_machines();
    void read_state_machine_http(const ymember& event, const std::string& machine);
    // A `schedule` event (scalar or map, `rate` one expression or a list) of a function or a
    // state machine: one config::schedule per expression.
    void read_schedule(const ymember& event, const std::string& fn, const std::string& machine);
    nlohmann::json definition_json(const ynode& n);
    // What serverless.yml holds that coldbrew does not act on (stack::ignored).
    void note_plugins();
    void note_resources();
    void note_properties(const std::string& owner, const ynode& def);
    void read_layers(function& fn, const ynode& layers);
    // serverless-esbuild (serverless_esbuild.hpp): fn.build when the plugin builds it.
    bool uses_plugin(std::string_view name) const;
    const ynode& esbuild_options();
    void read_esbuild(function& fn, const ynode& def, const ynode& handler);
    std::optional<ynode> esbuild_options_;  // custom.esbuild, resolved once
    std::string read_service();
    // serverless.yml `package:` at service or function level (serverless v3 "Packaging").
    struct package_section {
        std::vector<std::string> patterns, include, exclude;
        std::optional<bool> individually, exclude_dev_dependencies;
        source_location patterns_where;
    };
    void read_package(const ynode& package, package_section& out);
    std::vector<std::string> package_patterns(const package_section* fn) const;
    package_section service_package_;

    // Authorization, CORS and API keys (serverless v3 lib/plugins/aws/package/compile/events/
    // api-gateway/lib/{validate,authorizers,cors,api-keys,usage-plan,usage-plan-keys}.js and
    // http-api.js). The name a REST route's authorizer goes by, "" when coldbrew does not
    // check it (AWS_IAM, Cognito, an authorizer managed elsewhere; each warned about).
    std::string read_rest_authorizer(const ymember& key);
    void read_rest_cors(const ynode& cors, const std::string& path, const std::string& method);
    void read_http_api(const ynode& http);
    void read_http_authorizer(const ymember& entry);
    void read_http_event_authorizer(const ymember& key, route& r);
    void read_api_keys(const ynode& gateway);
    void read_usage_plan(const ynode& def, usage_plan& plan);
    void resolve_authorizer_arns();
    void finish_apis(api& a);

    std::vector<authorizer> rest_authorizers_, http_authorizers_;
    // Authorizers given by ARN: which function of this service the ARN names, once all are read.
    struct arn_target {
        api_kind kind;
        std::string authorizer;     // authorizer::name
        std::string function_name;  // the ARN's function name ("" for Fn::GetAtt)
        std::string logical_id;     // Fn::GetAtt's resource ("" for a text ARN)
        ynode at;
    };
    std::vector<arn_target> arn_targets_;
    // REST CORS merged per resource path as validate.js merges the events of one path.
    struct cors_merge {
        std::vector<std::string> headers, methods, origins;
        std::optional<std::string> origin;
        bool allow_credentials = false;
        std::optional<int> max_age_s;
        source_location where;
    };
    std::map<std::string, cors_merge> rest_cors_;
    std::optional<cors_config> http_cors_;
    bool http_cors_fill_methods_ = false;
    std::string api_key_source_ = "HEADER";

    const ynode& root_;
    stack& out_;
    std::filesystem::path service_dir_;
    variables vars_;
    const ynode* provider_ = nullptr;
    std::string service_;
    std::string stage_;
    std::string http_payload_ = "2.0"; // serverless-offline src/ServerlessOffline.js default
    std::chrono::year_month_day today_;  // runtime lifecycle date (load_options::today)
};

std::string serverless_loader::read_service() {
    const ynode* raw = root_.find("service");
    if (!raw)
        throw config_error({out_.template_file.string(), 1, 1}, "service",
                           "serverless.yml needs a service name");
    ynode v = vars_.resolve(*raw);
    if (v.is_map()) {
        const ynode* name = v.find("name");
        if (!name) fail(v, "service needs a name");
        ynode name_node = *name; // `name` points into `v`
        v = std::move(name_node);
    }
    const std::string& name = expect_string(v, "service");
    if (name.empty()) fail(v, "service name must not be empty");
    return name;
}

void serverless_loader::run() {
    expect_map(root_, "a serverless.yml");
    warn_unknown_keys(root_, top_level_keys, out_.warnings);
    const ymember* provider = root_.find_member("provider");
    if (!provider)
        throw config_error({out_.template_file.string(), 1, 1}, "provider",
                           "serverless.yml needs a provider section");
    provider_ = &expect_map(provider->value, "provider");
    warn_unknown_keys(*provider_, provider_keys, out_.warnings);
    if (auto name = vars_.get(provider_, "name")) {
        if (expect_string(*name, "provider.name") != "aws") {
            fail(*name, "only provider 'aws' can be emulated, got '" + name->text + "'");
        }
    } else {
        fail_key(*provider, "provider", "provider.name is required (aws)");
    }
    service_ = read_service();
    stage_ = vars_.stage();
    out_.settings.region = vars_.region();

    if (auto http = vars_.get(provider_, "httpApi")) {
        read_http_api(expect_map(*http, "provider.httpApi"));
        if (auto payload = vars_.get(&expect_map(*http, "provider.httpApi"), "payload")) {
            http_payload_ = expect_string(*payload, "provider.httpApi.payload");
            if (http_payload_ != "1.0" && http_payload_ != "2.0") {
                fail(*payload, "provider.httpApi.payload must be '1.0' or '2.0', got '" +
                                   http_payload_ + "'");
            }
        }
    }
    if (const ynode* package = root_.find("package"); package && package->is_map()) {
        if (const ymember* m = package->find_member("artifact")) {
            out_.warnings.push_back(
                warning_key_text(*m, join_path(package->path, "artifact"),
                                 "ignored: coldbrew runs the service directory as is"));
        }
        read_package(*package, service_package_);
    }

    if (const ynode* functions = root_.find("functions"); functions && !functions->is_null()) {
        const ynode resolved = functions->is_map() ? *functions : vars_.resolve(*functions);
        for (const auto& entry : expect_map(resolved, "functions").members)
            read_function(entry);
    }

    std::vector<std::string> binary_types;
    if (auto gw = vars_.get(provider_, "apiGateway")) {
        if (auto types = vars_.get(&expect_map(*gw, "provider.apiGateway"), "binaryMediaTypes")) {
            for (const auto& t : expect_sequence(*types, "binaryMediaTypes").items) {
                binary_types.push_back(expect_string(t, "media type"));
            }
        }
        read_api_keys(*gw);
    }
    // serverless v3 reads keys and plans under provider.apiGateway only (api-keys.js,
    // usage-plan.js); the v1 places are ignored by it, so they are here.
    for (std::string_view key : {"apiKeys", "usagePlan"}) {
        if (const ymember* m = provider_->find_member(key)) {
            out_.warnings.push_back(warning_key_text(
                *m, join_path(provider_->path, key),
                "ignored, as serverless v3 ignores it: use provider.apiGateway." + std::string(key)));
        }
    }
    read_state_machines();
    note_plugins();
    note_resources();
    note_properties("provider", *provider_);
    resolve_authorizer_arns();
    for (const auto& [id, kind] :
         {std::pair{rest_api_id, api_kind::rest}, std::pair{http_api_id, api_kind::http}}) {
        auto found = implicit_api(out_.routes, id, kind);
        if (!found) continue;
        api& a = *found;
        a.stage = kind == api_kind::rest ? stage_ : "$default";
        if (kind == api_kind::rest) a.binary_media_types = binary_types;
        finish_apis(a);
        out_.apis.push_back(std::move(a));
    }
    // One usage plan covers the stage of the service's REST API (usage-plan.js ApiStages).
    if (std::any_of(out_.apis.begin(), out_.apis.end(),
                    [](const api& a) { return a.id == rest_api_id; })) {
        for (auto& plan : out_.usage_plans)
            plan.api_ids.push_back(std::string(rest_api_id));
    }
    // API Gateway answers 403 to every request of a key-required method no key can pass.
    if (out_.api_keys.empty()) {
        for (const auto& r : out_.routes) {
            if (!r.api_key_required) continue;
            out_.warnings.push_back(format_config_error(
                r.where, "", "private: true but provider.apiGateway.apiKeys declares no key: "
                             "every request gets 403 unless coldbrew.yaml api_keys adds one"));
            break;
        }
    }
}

void serverless_loader::read_function(const ymember& entry) {
    const std::string& key = entry.key;
    const ynode raw = entry.value.is_null() ? ynode::make_map(entry.key_where, entry.value.path)
                                            : vars_.resolve(entry.value);
    const ynode& def = expect_map(raw, "a function");
    warn_unknown_keys(def, function_keys, out_.warnings);

    function fn;
    fn.name = key;
    fn.where = entry.key_where;
    const ynode at = ynode::make_map(entry.key_where, entry.value.path);

    if (const ynode* image = def.find("image")) {
        fail(*image, key + ": container image functions are not supported; use a handler in the "
                           "service directory");
    }
    auto field = [&](std::string_view name) -> std::optional<ynode> {
        if (const ynode* v = def.find(name); v && !v->is_null()) return *v;
        return vars_.get(provider_, name);
    };

    if (auto name = def.find("name"); name && !name->is_null()) {
        fn.function_name = expect_string(*name, "name");
    } else {
        fn.function_name = service_ + "-" + stage_ + "-" + key; // functionInfoUtils.js
    }
    auto runtime = field("runtime");
    if (!runtime) {
        fail_missing(def, "runtime", function_keys, at,
                     key + ": runtime is required (set provider.runtime or functions." + key +
                         ".runtime)");
    }
    fn.runtime = read_runtime(*runtime, key, today_, out_.warnings);

    const ynode* handler = def.find("handler");
    if (!handler || handler->is_null())
        fail_missing(def, "handler", function_keys, at, key + ": handler is required");
    fn.handler = expect_string(*handler, "handler");
    if (fn.handler.empty()) fail(*handler, key + ": handler must not be empty");
    // serverless packages the whole service directory.
    fn.code_dir = normal_absolute(service_dir_);
    read_esbuild(fn, def, *handler);

    fn.memory_mb = default_memory_mb;
    fn.timeout_s = default_timeout_s;
    if (auto v = field("memorySize")) fn.memory_mb = read_memory_mb(*v, "memorySize");
    if (auto v = field("timeout")) fn.timeout_s = read_timeout_s(*v, "timeout");
    if (auto v = field("architecture")) fn.architecture = read_architecture(*v, key);

    // Function variables are merged over the provider's, the function winning per key.
    auto intrinsics_unresolved = [](ynode env) {
        for (auto& m : env.members) {
            if (!m.value.tag.empty()) {
                m.value.type = ynode::kind::unresolved;
                m.value.text = "CloudFormation " + m.value.tag + " cannot be resolved locally";
                m.value.items.clear();
                m.value.members.clear();
            }
        }
        return env;
    };
    if (auto env = vars_.get(provider_, "environment")) {
        read_environment(intrinsics_unresolved(*env), fn.environment, out_.warnings);
    }
    if (const ynode* env = def.find("environment"); env && !env->is_null()) {
        read_environment(intrinsics_unresolved(*env), fn.environment, out_.warnings);
    }

    if (auto vpc = field("vpc")) {
        expect_map(*vpc, "vpc");
        warn_unknown_keys(*vpc, vpc_keys, out_.warnings);
        if (const ynode* subnets = vpc->find("subnetIds")) {
            fn.vpc = !subnets->is_sequence() || !subnets->items.empty();
        }
        // Hyperplane ENIs have been the only way Lambda attaches to a VPC since 2019.
        fn.vpc_mode = fn.vpc ? "hyperplane" : "none";
    }
    if (auto layers = field("layers")) read_layers(fn, *layers);
    const ynode* reserved = def.find("reservedConcurrency");
    if (reserved && !reserved->is_null()) {
        fn.reserved_concurrency =
            static_cast<int>(expect_int(*reserved, 0, max_concurrency, "reservedConcurrency"));
    }
    if (const ynode* v = def.find("provisionedConcurrency"); v && !v->is_null()) {
        fn.provisioned_concurrency =
            static_cast<int>(expect_int(*v, 0, max_concurrency, "provisionedConcurrency"));
        if (fn.reserved_concurrency) {
            check_provisioned_concurrency(v->where, v->path, key, *fn.provisioned_concurrency,
                                          *fn.reserved_concurrency, reserved->path);
        }
    }
    // Asynchronous invocation settings (serverless.yml function keys, v3 docs "Functions").
    if (const ynode* v = def.find("maximumRetryAttempts"); v && !v->is_null())
        fn.async.maximum_retry_attempts = static_cast<int>(expect_int(*v, 0, 2, "maximumRetryAttempts"));
    if (const ynode* v = def.find("maximumEventAge"); v && !v->is_null())
        fn.async.maximum_event_age_s = static_cast<int>(expect_int(*v, 60, 21600, "maximumEventAge"));
    package_section fn_package;
    if (const ynode* package = def.find("package"); package && package->is_map()) {
        if (const ymember* m = package->find_member("artifact")) {
            out_.warnings.push_back(
                warning_key_text(*m, join_path(package->path, "artifact"),
                                 "ignored: coldbrew runs the service directory as is"));
        }
        read_package(*package, fn_package);
    }
    // Function-level patterns apply only to a function packaged on its own (either level
    // saying so is enough); serverless warns and uses the service's otherwise
    // (package-service.js, packageService).
    const bool individually = fn_package.individually.value_or(false) ||
                              service_package_.individually.value_or(false);
    if (!individually &&
        !(fn_package.patterns.empty() && fn_package.include.empty() && fn_package.exclude.empty())) {
        out_.warnings.push_back(format_config_error(
            fn_package.patterns_where, "functions." + key + ".package",
            "ignored, as serverless ignores it: function-level patterns need "
            "package.individually: true"));
    }
    fn.package_patterns = package_patterns(individually ? &fn_package : nullptr);
    fn.exclude_dev_dependencies = service_package_.exclude_dev_dependencies.value_or(true);
    if (const ynode* events = def.find("events"); events && !events->is_null()) {
        read_events(fn, expect_sequence(*events, "events"));
    }
    note_properties(key, def);
    check_environment_size(fn, out_.warnings);
    out_.functions.push_back(std::move(fn));
}

void serverless_loader::read_package(const ynode& package, package_section& out) {
    auto flag = [&](std::string_view key, std::optional<bool>& to) {
        if (auto v = vars_.get(&package, key)) {
            const auto& text = expect_string(*v, key);
            if (text != "true" && text != "false")
                fail(*v, "package." + std::string(key) + " must be true or false, got '" + text + "'");
            to = text == "true";
        }
    };
    flag("individually", out.individually);
    flag("excludeDevDependencies", out.exclude_dev_dependencies);
    for (auto [key, list] : {std::pair<const char*, std::vector<std::string>*>{"patterns", &out.patterns},
                             {"include", &out.include},
                             {"exclude", &out.exclude}}) {
        if (auto v = vars_.get(&package, key)) {
            if (out.patterns_where.line == 0) out.patterns_where = v->where;
            for (const auto& item : expect_sequence(*v, key).items) {
                const ynode resolved = vars_.resolve(item);
                const auto& text = expect_string(resolved, "a package pattern");
                if (text.empty() || text == "!") fail(resolved, "a package pattern must not be empty");
                list->push_back(text);
            }
        }
    }
}

// The order serverless v3 applies them in (package-service.js, getExcludes, getIncludes and
// resolveFilePathsFromPatterns): excludes first, each as "!x" ("!x" written there means x),
// then includes, each list without repeats (lodash union). Layers inside the service
// directory are left out by the measurement itself; a local plugins path is not modeled.
std::vector<std::string> serverless_loader::package_patterns(const package_section* fn) const {
    std::vector<std::string> excludes = {".git/**",        ".gitignore",     ".DS_Store",
                                         "npm-debug.log",  "yarn-*.log",     ".serverless/**",
                                         ".serverless_plugins/**"};
    excludes.push_back(out_.template_file.filename().string());
    excludes.insert(excludes.end(), service_package_.exclude.begin(), service_package_.exclude.end());
    if (const ynode* dotenv = root_.find("useDotenv"); dotenv && dotenv->is_scalar() &&
                                                       dotenv->text == "true")
        excludes.push_back(".env*");
    std::vector<std::string> includes = service_package_.include;
    includes.insert(includes.end(), service_package_.patterns.begin(), service_package_.patterns.end());
    if (fn) {
        excludes.insert(excludes.end(), fn->exclude.begin(), fn->exclude.end());
        includes.insert(includes.end(), fn->include.begin(), fn->include.end());
        includes.insert(includes.end(), fn->patterns.begin(), fn->patterns.end());
    }
    std::vector<std::string> out;
    auto add_unique = [&out](const std::vector<std::string>& list, bool negate) {
        std::vector<std::string> seen;
        for (const auto& p : list) {
            if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
            seen.push_back(p);
            out.push_back(!negate ? p : p[0] == '!' ? p.substr(1) : "!" + p);
        }
    };
    add_unique(excludes, true);
    add_unique(includes, false);
    return out;
}

void serverless_loader::read_layers(function& fn, const ynode& layers) {
    expect_sequence(layers, "layers");
    const ynode* local = root_.find("layers");
    for (const auto& item : layers.items) {
        std::string ref;
        if (item.is_scalar() && item.tag == "!Ref") {
            ref = item.text;
        } else if (item.is_map() && item.members.size() == 1 && item.members.front().key == "Ref" &&
                   item.members.front().value.is_scalar()) {
            ref = item.members.front().value.text;
        }
        bool found = false;
        if (!ref.empty() && local && local->is_map()) {
            for (const auto& l : local->members) {
                if (layer_logical_id(l.key) != ref) continue;
                const ynode layer = vars_.resolve(l.value);
                const ynode* path = expect_map(layer, "a layer").find("path");
                // A layer packaged beforehand names its .zip as package.artifact instead.
                if (const ynode* pkg = layer.find("package"); !path && pkg && pkg->is_map())
                    path = pkg->find("artifact");
                if (!path)
                    fail_key(l, join_path(local->path, l.key), "layer " + l.key + " has no path");
                fn.layer_dirs.push_back(local_layer(*path, service_dir_, expect_string(*path, "path"),
                                                    "layer path", service_dir_, l.key));
                found = true;
            }
        }
        if (!found) {
            out_.warnings.push_back(warning_text(item,
                                                 "layer is not defined under `layers:` in this "
                                                 "service and is not downloaded; ignored"));
        }
    }
}

void serverless_loader::read_events(const function& fn, const ynode& events) {
    for (const auto& ev : events.items) {
        if (!ev.is_map() || ev.members.size() != 1)
            fail(ev, "each event must be a mapping with one key, e.g. `- http: GET /`");
        const ymember& m = ev.members.front();
        const ynode& spec = m.value;
        if (m.key == "schedule") {
            read_schedule(m, fn.name, "");
            continue;
        }
        if (m.key != "http" && m.key != "httpApi") {
            const bool known_type =
                std::find(serverless_event_types.begin(), serverless_event_types.end(), m.key) !=
                serverless_event_types.end();
            if (known_type) {
                const auto index = static_cast<std::size_t>(&ev - events.items.data());
                out_.ignored.push_back(
                    event_entry(m.key, "#" + std::to_string(index), fn.name, m.key_where));
                continue;
            }
            out_.warnings.push_back(
                warning_key_text(m, join_path(ev.path, m.key),
                                 "event type " + m.key + " is not emulated; event ignored" +
                                     (known_type ? "" : value_hint(m.key, emulated_event_types))));
            continue;
        }
        const api_kind kind = m.key == "http" ? api_kind::rest : api_kind::http;
        route r;
        r.function = fn.name;
        r.where = m.key_where;
        r.api_id = std::string(kind == api_kind::rest ? rest_api_id : http_api_id);
        r.payload_format_version = kind == api_kind::rest ? "1.0" : http_payload_;
        r.integration_timeout_ms =
            kind == api_kind::rest ? rest_integration_timeout_ms : http_integration_timeout_ms;

        std::string method, path;
        const ynode* path_at = &spec;
        const ynode* cors = nullptr;
        if (spec.is_scalar()) {
            const std::string text = trim(spec.text);
            if (kind == api_kind::http && text == "*") {
                method = "ANY";
                path = "$default";
            } else {
                const auto space = text.find_first_of(" \t");
                if (space == std::string::npos) {
                    fail(spec,
                         kind == api_kind::rest
                             ? "http event must be 'METHOD path', e.g. 'GET hello'"
                             : "httpApi event must be '*' or 'METHOD /path', e.g. 'GET /hello'");
                }
                method =
                    read_method(ynode::make_scalar(text.substr(0, space), spec.where, spec.path));
                path = trim(text.substr(space));
            }
        } else {
            expect_map(spec, m.key + " event");
            warn_unknown_keys(spec,
                              kind == api_kind::rest
                                  ? std::span<const std::string_view>(http_event_keys)
                                  : std::span<const std::string_view>(http_api_event_keys),
                              out_.warnings);
            if (const ymember* auth = spec.find_member("authorizer");
                auth && !auth->value.is_null()) {
                if (kind == api_kind::rest) {
                    r.authorizer = read_rest_authorizer(*auth);
                } else {
                    read_http_event_authorizer(*auth, r);
                }
            }
            if (const ynode* priv = spec.find("private");
                kind == api_kind::rest && priv && !priv->is_null())
                r.api_key_required = read_flag(*priv, "private");
            if (kind == api_kind::rest) cors = spec.find("cors");
            const ynode* p = spec.find("path");
            const ynode* mt = spec.find("method");
            if (!p) {
                fail_missing(spec, "path",
                             kind == api_kind::rest
                                 ? std::span<const std::string_view>(http_event_keys)
                                 : std::span<const std::string_view>(http_api_event_keys),
                             spec, m.key + " event needs a path");
            }
            path_at = p;
            path = trim(expect_string(*p, "path"));
            if (mt) {
                method = read_method(*mt);
            } else if (kind == api_kind::http) {
                method = "ANY";
            } else {
                fail(spec, "http event needs a method");
            }
            if (kind == api_kind::rest) {
                if (const ynode* integration = spec.find("integration")) {
                    const std::string i = expect_string(*integration, "integration");
                    if (i != "lambda-proxy" && i != "aws_proxy" && i != "AWS_PROXY") {
                        out_.warnings.push_back(warning_text(
                            *integration, "integration " + i + " is emulated as lambda-proxy"));
                    }
                }
            }
        }
        if (kind == api_kind::rest) {
            // serverless paths are relative ("users/{id}"); strip slashes and root them.
            const auto b = path.find_first_not_of('/');
            const auto e = path.find_last_not_of('/');
            path = b == std::string::npos ? "/" : "/" + path.substr(b, e - b + 1);
        } else if (path == "*") {
            if (method != "ANY") fail(*path_at, "the catch-all path '*' takes method '*'");
            path = "$default";
        }
        check_route_path(*path_at, path, kind);
        if (cors) read_rest_cors(*cors, path, method);
        r.method = method;
        r.path = path;
        add_route(out_.routes, std::move(r), kind, spec);
    }
}


// `plugins:` is a list of names, or {localPath, modules: [names]} (serverless v3 "Plugins").
void serverless_loader::note_plugins() {
    const ynode* plugins = root_.find("plugins");
    if (!plugins) return;
    const ynode* list = plugins->is_map() ? plugins->find("modules") : plugins;
    if (!list || !list->is_sequence()) return;
    for (const auto& item : list->items) {
        if (!item.is_scalar()) continue;
        not_emulated n;
        if (plugin_entry(item.text, item.where, n)) add_entry(out_.ignored, std::move(n));
        if (item.text == "serverless-esbuild") serverless_esbuild_ignored(esbuild_options(), out_.ignored);
    }
}

bool serverless_loader::uses_plugin(std::string_view name) const {
    const ynode* plugins = root_.find("plugins");
    if (!plugins) return false;
    const ynode* list = plugins->is_map() ? plugins->find("modules") : plugins;
    if (!list || !list->is_sequence()) return false;
    return std::any_of(list->items.begin(), list->items.end(),
                       [&](const ynode& i) { return i.is_scalar() && i.text == name; });
}

const ynode& serverless_loader::esbuild_options() {
    if (!esbuild_options_) {
        esbuild_options_ = ynode{};
        if (const ynode* custom = root_.find("custom"); custom && custom->is_map())
            if (const ynode* e = custom->find("esbuild")) esbuild_options_ = vars_.resolve(*e);
    }
    return *esbuild_options_;
}

void serverless_loader::read_esbuild(function& fn, const ynode& def, const ynode& handler) {
    if (!uses_plugin("serverless-esbuild")) return;
    std::string provider_runtime;
    if (auto r = vars_.get(provider_, "runtime"); r && r->is_scalar()) provider_runtime = r->text;
    fn.build = serverless_esbuild_build(esbuild_options(), provider_runtime, fn, handler,
                                        def.find("esbuildEntrypoint"), service_dir_);
}

// `resources:` holds CloudFormation (Resources, Outputs, Conditions), as a map or a list of
// such maps (serverless v3 "AWS Infrastructure Resources"). Read unresolved: a `${ssm:…}` there must not stop a run.
void serverless_loader::note_resources() {
    auto one = [&](const ynode& section) {
        if (!section.is_map()) return;
        if (const ynode* res = section.find("Resources"); res && res->is_map()) {
            for (const auto& r : res->members) {
                const ynode* type = r.value.is_map() ? r.value.find("Type") : nullptr;
                if (!type || !type->is_scalar()) continue;
                add_entry(out_.ignored, resource_entry(type->text, r.key, r.key_where));
            }
        }
        if (const ynode* outputs = section.find("Outputs"); outputs && outputs->is_map()) {
            for (const auto& o : outputs->members)
                add_entry(out_.ignored, {"resource", "Outputs " + o.key, o.key_where, "", "", false});
        }
    };
    if (const ynode* resources = root_.find("resources")) {
        if (resources->is_sequence()) {
            for (const auto& item : resources->items) one(item);
        } else {
            one(*resources);
        }
    }
}

// Function (or provider) keys coldbrew reads but does not act on, where a user would notice
// (serverless v3 "Functions" and "AWS provider" references). Unresolved text: only presence
// and a few literal values matter here.
void serverless_loader::note_properties(const std::string& owner, const ynode& def) {
    const bool provider = owner == "provider";
    auto present = [&](std::string_view key) -> const ynode* {
        const ynode* v = def.find(key);
        return v && !v->is_null() ? v : nullptr;
    };
    const std::string iam_meaning = "IAM is not enforced: handlers call AWS with the credentials "
                                    "coldbrew was started with, not the function's role";
    const std::string iam_fix = "start coldbrew with the role's credentials to try its permissions";
    for (const char* key : {"iam", "iamRoleStatements", "role"}) {
        if (const ynode* v = present(key)) add_property(out_.ignored, key, owner, v->where,
                                                        iam_meaning, iam_fix);
    }
    if (const ynode* v = present("tracing")) {
        // provider.tracing is {lambda, apiGateway}; a function's is Active | PassThrough.
        const ynode* lambda = provider && v->is_map() ? v->find("lambda") : v;
        if (lambda && lambda->is_scalar() && (lambda->text == "true" || lambda->text == "Active"))
            add_property(out_.ignored, "tracing", owner, lambda->where,
                         "no X-Ray segments are sent",
                         "coldbrew's own traces: `up --trace-file` or `--otlp-endpoint`");
    }
    if (const ynode* v = present("runtimeManagement"))
        add_property(out_.ignored, "runtimeManagement", owner, v->where,
                     "runtime version pinning does not apply: the local interpreter runs",
                     "coldbrew.yaml `runtimes:` names the interpreter a runtime runs on");
    if (const ynode* v = present("snapStart"))
        add_property(out_.ignored, "snapStart", owner, v->where,
                     "cold starts are modeled without SnapStart's snapshot restore",
                     "coldbrew.yaml functions.<name>.model.init_duration sets the restore time "
                     "you measured");
    if (const ynode* v = present("ephemeralStorageSize"))
        add_property(out_.ignored, "ephemeralStorageSize", owner, v->where,
                     "/tmp is this machine's, not a volume of that size", "");
    if (provider) return;
    if (const ynode* v = present("url"))
        add_property(out_.ignored, "url", owner, v->where, "no function URL is served",
                     "an httpApi event serves the function with the same event (payload 2.0)");
    if (const ynode* v = present("destinations"))
        add_property(out_.ignored, "destinations", owner, v->where,
                     "AWS destinations are not delivered locally",
                     "coldbrew.yaml functions.<name>.async.on_success / on_failure write JSONL "
                     "files");
    if (const ynode* v = present("onError"))
        add_property(out_.ignored, "onError", owner, v->where,
                     "failed asynchronous events are not sent to it",
                     "coldbrew.yaml functions.<name>.async.on_failure writes them to a JSONL file");
    if (const ynode* v = present("fileSystemConfig"))
        add_property(out_.ignored, "fileSystemConfig", owner, v->where,
                     "the EFS file system is not mounted at its localMountPath",
                     "point the handler at a local directory through an environment variable");
}

// ---- authorizers -----------------------------------------------------------------------

// An http event's `authorizer` (validate.js getAuthorizer, authorizers.js): a function key of
// this service, an ARN, `aws_iam`, or a map {name | arn, type: token (default) | request |
// cognito_user_pools | aws_iam, resultTtlInSeconds (default 300), identitySource (default
// method.request.header.Authorization, none for a REQUEST authorizer with TTL 0),
// identityValidationExpression, authorizerId (an authorizer managed elsewhere)}.
std::string serverless_loader::read_rest_authorizer(const ymember& key) {
    const ynode& v = key.value;
    const std::string& path = v.path;
    auto unchecked = [&](const std::string& what) {
        out_.warnings.push_back(warning_key_text(
            key, path, what + " is not checked locally: requests reach the function unauthenticated"));
        return std::string();
    };
    authorizer a;
    a.where = v.where;
    std::string type = "token";
    std::optional<ynode> arn;
    if (v.is_scalar()) {
        const std::string& text = expect_string(v, "authorizer");
        if (text.empty()) fail(v, "authorizer must not be empty");
        if (lower(text) == "aws_iam") return unchecked("AWS_IAM authorization");
        if (text.find(':') == std::string::npos) {
            a.name = a.function = text;
        } else {
            arn = v;
            a.name = authorizer_name_from_arn(text);
        }
    } else {
        expect_map(v, "authorizer");
        warn_unknown_keys(v, rest_authorizer_keys, out_.warnings);
        if (const ynode* t = v.find("type"); t && !t->is_null()) {
            type = lower(expect_string(*t, "authorizer.type"));
            static constexpr std::array<std::string_view, 5> types = {
                "token", "request", "cognito_user_pools", "aws_iam", "custom"};
            if (std::find(types.begin(), types.end(), type) == types.end())
                fail(*t, "authorizer type must be token, request, cognito_user_pools or aws_iam, "
                         "got '" + t->text + "'" + value_hint(type, types));
        }
        if (const ynode* id = v.find("authorizerId"); id && !id->is_null())
            return unchecked("the authorizer managed outside this service (authorizerId)");
        if (type == "aws_iam") return unchecked("AWS_IAM authorization");
        if (type == "custom") fail(v, "authorizer type custom needs an authorizerId");
        const ynode* name = v.find("name");
        if (name && !name->is_null()) {
            a.name = expect_string(*name, "authorizer.name");
            if (a.name.empty()) fail(*name, "authorizer.name must not be empty");
        }
        if (const ynode* n = v.find("arn"); n && !n->is_null()) {
            arn = *n;
            if (a.name.empty()) {
                if (!n->is_scalar() || !n->tag.empty())
                    fail(v, "an authorizer whose arn is not a plain ARN needs a name");
                a.name = authorizer_name_from_arn(n->text);
            }
        } else if (!a.name.empty()) {
            a.function = a.name;
        } else {
            fail(v, "authorizer needs a name (a function of this service) or an arn");
        }
        if (const ynode* ttl = v.find("resultTtlInSeconds"); ttl && !ttl->is_null())
            a.result_ttl_s = static_cast<int>(expect_int(*ttl, 0, 3600, "resultTtlInSeconds"));
        // IdentitySource is one string; a REQUEST authorizer lists its sources with commas.
        if (const ynode* src = v.find("identitySource"); src && !src->is_null()) {
            const std::string& text = expect_string(*src, "identitySource");
            std::size_t start = 0;
            while (start <= text.size()) {
                const auto comma = text.find(',', start);
                const std::string part =
                    trim(text.substr(start, comma == std::string::npos ? std::string::npos
                                                                       : comma - start));
                if (!part.empty()) a.identity_sources.push_back(part);
                if (comma == std::string::npos) break;
                start = comma + 1;
            }
            if (a.identity_sources.empty()) fail(*src, "identitySource must not be empty");
        }
        if (const ynode* e = v.find("identityValidationExpression"); e && !e->is_null())
            a.validation_expression = expect_string(*e, "identityValidationExpression");
    }
    const bool cognito_arn = arn && arn->is_scalar() && arn->text.find(":cognito-idp:") != std::string::npos;
    if (type == "cognito_user_pools" || cognito_arn)
        return unchecked("the Cognito user pool authorizer " + a.name);
    a.kind = type == "request" ? authorizer::type::request : authorizer::type::token;
    if (a.identity_sources.empty() && !(a.kind == authorizer::type::request && a.result_ttl_s == 0))
        a.identity_sources.push_back("method.request.header.Authorization");
    if (arn) {
        arn_target t{api_kind::rest, a.name, "", "", *arn};
        if (arn->is_scalar() && arn->tag == "!GetAtt") {
            t.logical_id = arn->text.substr(0, arn->text.find('.'));
        } else if (const ynode* get = arn->is_map() ? arn->find("Fn::GetAtt") : nullptr;
                   get && get->is_sequence() && !get->items.empty() && get->items[0].is_scalar()) {
            t.logical_id = get->items[0].text;
        } else if (arn->is_scalar()) {
            t.function_name = function_name_in_arn(arn->text);
        }
        arn_targets_.push_back(std::move(t));
    }
    // One authorizer resource per name (authorizers.js merges by logical id): the last
    // definition of a name wins.
    auto same = std::find_if(rest_authorizers_.begin(), rest_authorizers_.end(),
                             [&](const authorizer& x) { return x.name == a.name; });
    const std::string name = a.name;
    if (same != rest_authorizers_.end()) {
        *same = std::move(a);
    } else {
        rest_authorizers_.push_back(std::move(a));
    }
    return name;
}

// An authorizer given by ARN runs locally when the ARN names a function of this service
// (its deployed name, or Fn::GetAtt of its CloudFormation id); otherwise it cannot be called
// and its routes go unguarded, with a warning.
void serverless_loader::resolve_authorizer_arns() {
    for (const auto& t : arn_targets_) {
        auto fn = std::find_if(out_.functions.begin(), out_.functions.end(), [&](const function& f) {
            return (!t.function_name.empty() && f.function_name == t.function_name) ||
                   (!t.logical_id.empty() && lambda_logical_id(f.name) == t.logical_id);
        });
        auto& list = t.kind == api_kind::rest ? rest_authorizers_ : http_authorizers_;
        auto a = std::find_if(list.begin(), list.end(),
                              [&](const authorizer& x) { return x.name == t.authorizer; });
        if (a == list.end()) continue;
        if (fn != out_.functions.end()) {
            a->function = fn->name;
            continue;
        }
        out_.warnings.push_back(warning_text(
            t.at, "authorizer " + t.authorizer +
                      " is not a function of this service and cannot be called locally: "
                      "requests to its routes reach the function unauthenticated"));
        list.erase(a);
        const std::string_view api_id = t.kind == api_kind::rest ? rest_api_id : http_api_id;
        for (auto& r : out_.routes)
            if (r.api_id == api_id && r.authorizer == t.authorizer) r.authorizer.clear();
    }
}

// ---- serverless-step-functions: stepFunctions.stateMachines, and schedules ---------------

namespace {

// serverless-step-functions README ("Setup", "Events"; lib/deploy/stepFunctions/
// compileStateMachines.schema.js): the keys of one state machine coldbrew reads or accepts.
constexpr std::array<std::string_view, 20> sfn_machine_keys = {
    "name",         "type",          "definition",      "events",    "role",
    "id",           "dependsOn",     "tags",            "alarms",    "notifications",
    "loggingConfig", "tracingConfig", "encryptionConfig", "retain",  "useExactVersion",
    "inheritGlobalTags", "kmsKeyArns", "iamRoleStatements", "noOutput", "deploymentPreference"};
// http event keys (lib/deploy/events/apiGateway/validate.js, methods.js).
constexpr std::array<std::string_view, 10> sfn_http_event_keys = {
    "path", "method", "action", "cors", "private", "authorizer", "request", "response",
    "timeoutInMillis", "integration"};
// schedule event keys (lib/deploy/events/schedule/compileScheduledEvents.js; serverless v3
// "Schedule" event for functions).
constexpr std::array<std::string_view, 11> schedule_keys = {
    "rate", "enabled", "input", "inputPath", "inputTransformer", "name", "description",
    "method", "timezone", "role", "retryPolicy"};
constexpr std::array<std::string_view, 2> machine_types = {"STANDARD", "EXPRESS"};

}  // namespace

// CloudFormation intrinsics inside a definition, as CloudFormation would resolve them for the
// ones that name this service's functions (the plugin's README: `Fn::GetAtt: [hello, Arn]`,
// `Ref`, `Fn::Sub`, `Fn::Join`); anything else (Fn::ImportValue, another resource's
// attribute) stays as written, with a warning.
nlohmann::json serverless_loader::definition_json(const ynode& n) {
    const function* fn_by_id = nullptr;
    auto function_for = [&](const std::string& id) -> const function* {
        for (const auto& f : out_.functions)
            if (f.name == id || lambda_logical_id(f.name) == id) return &f;
        return nullptr;
    };
    auto arn = [&](const function& f) {
        return "arn:aws:lambda:" + out_.settings.region + ":" + out_.settings.account_id +
               ":function:" + f.function_name;
    };
    auto keep = [&](const ynode& at, const std::string& why) {
        out_.warnings.push_back(warning_text(at, why + "; left as written in the definition"));
        return to_json(at, "the definition");
    };
    if (n.is_map() && n.members.size() == 1) {
        const std::string& k = n.members[0].key;
        const ynode& arg = n.members[0].value;
        if (k == "Fn::GetAtt") {
            std::string id, attr;
            if (arg.is_sequence() && arg.items.size() == 2 && arg.items[0].is_scalar() &&
                arg.items[1].is_scalar()) {
                id = arg.items[0].text;
                attr = arg.items[1].text;
            } else if (arg.is_scalar() && arg.text.find('.') != std::string::npos) {
                id = arg.text.substr(0, arg.text.find('.'));
                attr = arg.text.substr(arg.text.find('.') + 1);
            }
            fn_by_id = function_for(id);
            if (fn_by_id && attr == "Arn") return arn(*fn_by_id);
            return keep(n, "Fn::GetAtt " + id + "." + attr + " names no function of the service");
        }
        if (k == "Ref" && arg.is_scalar()) {
            if (const function* f = function_for(arg.text)) return f->function_name;
            if (arg.text == "AWS::Region") return out_.settings.region;
            if (arg.text == "AWS::AccountId") return out_.settings.account_id;
            if (arg.text == "AWS::Partition") return "aws";
            return keep(n, "Ref " + arg.text + " names no function of the service");
        }
        if (k == "Fn::Sub" && arg.is_scalar()) {
            std::string out, text = arg.text;
            std::size_t i = 0;
            while (i < text.size()) {
                const auto open = text.find("${", i);
                const auto close = open == std::string::npos ? open : text.find('}', open);
                if (close == std::string::npos) break;
                out.append(text, i, open - i);
                std::string name = text.substr(open + 2, close - open - 2);
                i = close + 1;
                std::string value;
                if (name == "AWS::Region") {
                    value = out_.settings.region;
                } else if (name == "AWS::AccountId") {
                    value = out_.settings.account_id;
                } else if (name == "AWS::Partition") {
                    value = "aws";
                } else if (const auto dot = name.find('.');
                           dot != std::string::npos && name.substr(dot) == ".Arn" &&
                           function_for(name.substr(0, dot))) {
                    value = arn(*function_for(name.substr(0, dot)));
                } else if (const function* f = function_for(name)) {
                    value = f->function_name;
                } else {
                    return keep(n, "Fn::Sub ${" + name + "} names nothing coldbrew knows");
                }
                out += value;
            }
            out.append(text, i, std::string::npos);
            return out;
        }
        if (k == "Fn::Join" && arg.is_sequence() && arg.items.size() == 2 &&
            arg.items[0].is_scalar() && arg.items[1].is_sequence()) {
            std::string out;
            for (std::size_t i = 0; i < arg.items[1].items.size(); ++i) {
                const auto part = definition_json(arg.items[1].items[i]);
                if (!part.is_string()) return keep(n, "Fn::Join of something not a string");
                out += (i ? arg.items[0].text : "") + part.get<std::string>();
            }
            return out;
        }
        if (k == "Ref" || k.rfind("Fn::", 0) == 0)
            return keep(n, k + " cannot be resolved locally");
    }
    if (n.is_map()) {
        auto o = nlohmann::json::object();
        for (const auto& m : n.members) o[m.key] = definition_json(m.value);
        return o;
    }
    if (n.is_sequence()) {
        auto a = nlohmann::json::array();
        for (const auto& item : n.items) a.push_back(definition_json(item));
        return a;
    }
    return to_json(n, "the definition");
}

void serverless_loader::read_schedule(const ymember& m, const std::string& fn,
                                      const std::string& machine) {
    const std::string owner = fn.empty() ? machine : fn;
    const ynode& spec = m.value;
    std::vector<const ynode*> rates;
    schedule base;
    base.function = fn;
    base.state_machine = machine;
    base.where = m.key_where;
    std::string name;
    if (spec.is_scalar()) {
        rates.push_back(&spec);
    } else {
        expect_map(spec, "schedule event");
        warn_unknown_keys(spec, schedule_keys, out_.warnings);
        const ynode* rate = spec.find("rate");
        if (!rate) fail_missing(spec, "rate", schedule_keys, spec, "schedule event needs a rate");
        // serverless v3 takes a list of expressions; the plugin, one.
        if (rate->is_sequence()) {
            for (const auto& r : rate->items) rates.push_back(&r);
        } else {
            rates.push_back(rate);
        }
        if (const ynode* e = spec.find("enabled"); e && !e->is_null())
            base.enabled = read_flag(*e, "enabled");
        if (const ynode* n = spec.find("name"); n && n->is_scalar()) name = n->text;
        const ynode* method = spec.find("method");
        const bool scheduler = method && method->is_scalar() && method->text == "scheduler";
        base.scheduler = scheduler;
        if (const ynode* tz = spec.find("timezone"); tz && !tz->is_null()) {
            // compileScheduledEvents.js: "timezone" is only supported with method: scheduler.
            if (!scheduler)
                fail(*tz, owner + ": a schedule's timezone needs `method: scheduler`");
            base.timezone = expect_string(*tz, "timezone");
            check_schedule_timezone(base.timezone, *tz);
        }
        if (const ynode* in = spec.find("input"); in && !in->is_null()) {
            if (in->is_scalar()) {
                base.input = in->text;
                (void)parse_definition_text(base.input, *in, owner + ": schedule input");
            } else {
                base.input = to_json(*in, "schedule input").dump();
            }
        }
        for (const char* k : {"inputPath", "inputTransformer"}) {
            if (const ymember* x = spec.find_member(k)) {
                out_.warnings.push_back(warning_key_text(
                    *x, join_path(spec.path, k),
                    "not emulated: the target gets the Scheduled Event or `input` instead"));
            }
        }
    }
    for (const ynode* r : rates) {
        schedule s = base;
        s.expression = trim(expect_string(*r, "schedule rate"));
        check_schedule_expression(s.expression, *r);
        const auto count = std::count_if(out_.schedules.begin(), out_.schedules.end(),
                                         [&](const schedule& x) {
                                             return x.function == fn && x.state_machine == machine;
                                         });
        s.name = !name.empty() && rates.size() == 1
                     ? name
                     : owner + "-schedule-" + std::to_string(count + 1);
        out_.schedules.push_back(std::move(s));
    }
}

void serverless_loader::read_state_machines() {
    const ynode* sf = root_.find("stepFunctions");
    if (!sf || sf->is_null()) return;
    const ynode* machines_raw = sf->is_map() ? sf->find("stateMachines") : nullptr;
    if (!machines_raw || machines_raw->is_null()) return;
    if (!uses_plugin("serverless-step-functions")) {
        out_.warnings.push_back(warning_text(
            *machines_raw, "stepFunctions is read by the serverless-step-functions plugin, which "
                           "plugins: does not list; coldbrew loads the state machines anyway"));
    }
    const ynode machines = vars_.resolve(*machines_raw);
    for (const auto& entry : expect_map(machines, "stepFunctions.stateMachines").members) {
        const ynode& def = expect_map(entry.value, "a state machine");
        warn_unknown_keys(def, sfn_machine_keys, out_.warnings);
        state_machine m;
        m.name = entry.key;
        m.state_machine_name = entry.key;
        if (const ynode* n = def.find("name"); n && !n->is_null()) {
            m.state_machine_name = expect_string(*n, "name");
            if (m.state_machine_name.empty()) fail(*n, entry.key + ": name must not be empty");
        }
        if (const ynode* t = def.find("type"); t && !t->is_null()) {
            m.type = expect_choice(*t, "type", machine_types) == "EXPRESS"
                         ? state_machine::kind::express
                         : state_machine::kind::standard;
        }
        if (const ynode* r = def.find("role"); r && r->is_scalar()) m.role_arn = r->text;
        const ymember* d = def.find_member("definition");
        if (!d || d->value.is_null()) {
            fail_missing(def, "definition", sfn_machine_keys,
                         ynode::make_map(entry.key_where, def.path),
                         entry.key + ": a state machine needs a definition");
        }
        m.definition_key = join_path(def.path, "definition");
        m.where = d->value.where;
        if (d->value.is_scalar()) {
            m.definition = parse_definition_text(d->value.text, d->value, entry.key + ": definition");
        } else {
            m.definition = definition_json(d->value);
        }
        expect_definition_object(m.definition, d->value, entry.key + ": definition");
        collect_function_arns(m, out_.functions);
        out_.state_machines.push_back(std::move(m));

        const ynode* events = def.find("events");
        if (!events || events->is_null()) continue;
        for (const auto& ev : expect_sequence(*events, "events").items) {
            if (!ev.is_map() || ev.members.size() != 1)
                fail(ev, "each event must be a mapping with one key, e.g. `- http: GET start`");
            const ymember& em = ev.members.front();
            if (em.key == "schedule") {
                read_schedule(em, "", entry.key);
                continue;
            }
            if (em.key != "http") {
                const auto index = static_cast<std::size_t>(&ev - events->items.data());
                out_.ignored.push_back(
                    event_entry(em.key, "#" + std::to_string(index), entry.key, em.key_where));
                continue;
            }
            read_state_machine_http(em, entry.key);
        }
    }
}

void serverless_loader::read_state_machine_http(const ymember& em, const std::string& machine) {
    const ynode& spec = em.value;
    route r;
    r.state_machine = machine;
    r.where = em.key_where;
    r.api_id = std::string(rest_api_id);
    r.payload_format_version = "1.0";
    r.integration_timeout_ms = rest_integration_timeout_ms;
    std::string method, path;
    const ynode* path_at = &spec;
    if (spec.is_scalar()) {
        const std::string text = trim(spec.text);
        const auto space = text.find_first_of(" \t");
        if (space == std::string::npos)
            fail(spec, "http event must be 'METHOD path', e.g. 'POST start'");
        method = read_method(ynode::make_scalar(text.substr(0, space), spec.where, spec.path));
        path = trim(text.substr(space));
    } else {
        expect_map(spec, "http event");
        warn_unknown_keys(spec, sfn_http_event_keys, out_.warnings);
        const ynode* p = spec.find("path");
        if (!p) fail_missing(spec, "path", sfn_http_event_keys, spec, "http event needs a path");
        const ynode* mt = spec.find("method");
        if (!mt) fail(spec, "http event needs a method");
        path_at = p;
        path = trim(expect_string(*p, "path"));
        method = read_method(*mt);
        if (const ynode* a = spec.find("action"); a && !a->is_null()) {
            // methods.js: the integration is states:action/<action>, StartExecution by default.
            const std::string& action = expect_string(*a, "action");
            if (action == "StartSyncExecution") {
                r.state_machine_action = route::sfn_action::start_sync_execution;
            } else if (action != "StartExecution") {
                out_.ignored.push_back(
                    {"event", "http event " + method + " " + path + " of " + machine, a->where,
                     "the route is not served: API Gateway would call Step Functions " + action +
                         ", which coldbrew's gateway does not",
                     "call " + action + " on coldbrew's Step Functions endpoint with an SDK",
                     true});
                return;
            }
        }
        if (const ynode* t = spec.find("timeoutInMillis"); t && !t->is_null())
            r.integration_timeout_ms = expect_int(*t, min_integration_timeout_ms, 900'000,
                                                  "timeoutInMillis");
        if (const ynode* priv = spec.find("private"); priv && !priv->is_null())
            r.api_key_required = read_flag(*priv, "private");
        if (const ymember* auth = spec.find_member("authorizer"); auth && !auth->value.is_null())
            r.authorizer = read_rest_authorizer(*auth);
        if (const ynode* req = spec.find("request"); req && req->is_map()) {
            const ynode* t = req->find("template");
            const ynode* json = t && t->is_map() ? t->find("application/json") : nullptr;
            if (json && json->is_scalar()) r.state_machine_request_template = json->text;
        }
        if (const ynode* cors = spec.find("cors"))
            read_rest_cors(*cors, "/" + path, method);
    }
    const auto b = path.find_first_not_of('/');
    const auto e = path.find_last_not_of('/');
    path = b == std::string::npos ? "/" : "/" + path.substr(b, e - b + 1);
    check_route_path(*path_at, path, api_kind::rest);
    r.method = method;
    r.path = path;
    add_route(out_.routes, std::move(r), api_kind::rest, spec);
}

// ---- REST CORS -------------------------------------------------------------------------

// An http event's `cors` (validate.js getCors): true gives origin '*', the seven default
// headers, OPTIONS and the event's method, no credentials; a map replaces what it names (origin,
// origins, headers, methods, allowCredentials, maxAge), OPTIONS and the event's method being
// added to its methods. The events of one path merge: headers, methods and origins united (the
// later event's first), origin and maxAge from the last event that sets them, credentials
// allowed when any event allows them.
void serverless_loader::read_rest_cors(const ynode& cors, const std::string& path,
                                       const std::string& method) {
    if (cors.is_null()) return;
    if (cors.is_scalar() && !read_flag(cors, "cors")) return;
    cors_merge ev;
    ev.origin = "*";
    ev.headers = rest_default_cors_headers;
    ev.methods = {"OPTIONS"};
    if (cors.is_map()) {
        warn_unknown_keys(cors, rest_cors_keys, out_.warnings);
        if (const ynode* o = cors.find("origins"); o && !o->is_null()) {
            ev.origin.reset();
            for (const auto& item : expect_sequence(*o, "cors.origins").items)
                ev.origins.push_back(expect_string(item, "cors.origins"));
        }
        if (const ynode* o = cors.find("origin"); o && !o->is_null())
            ev.origin = expect_string(*o, "cors.origin");
        if (const ynode* h = cors.find("headers"); h && !h->is_null())
            ev.headers = read_strings(*h, "cors.headers");
        if (const ynode* m = cors.find("methods"); m && !m->is_null()) {
            ev.methods.clear();
            for (const auto& item : expect_sequence(*m, "cors.methods").items)
                add_unique(ev.methods, {read_method(item)});
            add_unique(ev.methods, {"OPTIONS"});
        }
        if (const ynode* c = cors.find("allowCredentials"); c && !c->is_null())
            ev.allow_credentials = read_flag(*c, "cors.allowCredentials");
        if (const ynode* a = cors.find("maxAge"); a && !a->is_null())
            ev.max_age_s = static_cast<int>(expect_int(*a, 1, 2147483647, "cors.maxAge"));
        if (const ymember* cc = cors.find_member("cacheControl")) {
            out_.warnings.push_back(warning_key_text(
                *cc, join_path(cors.path, "cacheControl"),
                "ignored: the generated OPTIONS answer carries no Cache-Control locally"));
        }
    }
    add_unique(ev.methods, {method});

    auto [it, fresh] = rest_cors_.try_emplace(path);
    cors_merge& merged = it->second;
    if (fresh) merged.where = cors.where;
    auto unite = [](const std::vector<std::string>& first, const std::vector<std::string>& then) {
        std::vector<std::string> out;
        add_unique(out, first);
        add_unique(out, then);
        return out;
    };
    merged.headers = unite(ev.headers, merged.headers);
    merged.methods = unite(ev.methods, merged.methods);
    merged.origins = unite(ev.origins, merged.origins);
    merged.origin = ev.origin;
    merged.allow_credentials = merged.allow_credentials || ev.allow_credentials;
    if (ev.max_age_s) merged.max_age_s = ev.max_age_s;
}

// The REST API's path_cors and the HTTP API's cors, authorizers and key source, once every
// event is read.
void serverless_loader::finish_apis(api& a) {
    if (a.kind == api_kind::rest) {
        a.authorizers = rest_authorizers_;
        a.api_key_source = api_key_source_;
        for (const auto& [path, m] : rest_cors_) {
            cors_config c;
            c.where = m.where;
            // cors.js: an origin with commas is a list; with a list, the first origin is the
            // static answer and the mock echoes a request Origin matching one of them.
            std::vector<std::string> origins = m.origins;
            if (m.origin && m.origin->find(',') != std::string::npos) {
                origins.clear();
                std::size_t start = 0;
                while (true) {
                    const auto comma = m.origin->find(',', start);
                    origins.push_back(trim(m.origin->substr(
                        start, comma == std::string::npos ? std::string::npos : comma - start)));
                    if (comma == std::string::npos) break;
                    start = comma + 1;
                }
            }
            c.allow_origins = !origins.empty() ? origins : std::vector<std::string>{m.origin.value_or("*")};
            for (const auto& method : m.methods)
                add_unique(c.allow_methods, method == "ANY" ? rest_any_methods
                                                             : std::vector<std::string>{method});
            c.allow_headers = m.headers;
            c.allow_credentials = m.allow_credentials;
            c.max_age_s = m.max_age_s;
            a.path_cors[path] = std::move(c);
        }
    } else {
        a.authorizers = http_authorizers_;
        if (http_cors_) {
            cors_config c = *http_cors_;
            // http-api.js: without allowedMethods, OPTIONS and the method of every route.
            if (http_cors_fill_methods_) {
                c.allow_methods = {"OPTIONS"};
                for (const auto& r : out_.routes) {
                    if (r.api_id != http_api_id) continue;
                    add_unique(c.allow_methods, r.method == "ANY" ? http_any_methods
                                                                  : std::vector<std::string>{r.method});
                }
            }
            a.cors = std::move(c);
        }
    }
}

// ---- HTTP API --------------------------------------------------------------------------

// provider.httpApi: `authorizers` and `cors` (http-api.js resolveConfiguration).
void serverless_loader::read_http_api(const ynode& http) {
    if (const ynode* auths = http.find("authorizers"); auths && !auths->is_null()) {
        for (const auto& m : expect_map(*auths, "provider.httpApi.authorizers").members)
            read_http_authorizer(m);
    }
    const ynode* cors = http.find("cors");
    if (!cors || cors->is_null()) return;
    if (cors->is_scalar() && !read_flag(*cors, "provider.httpApi.cors")) return;
    // cors: true, and the map's defaults (http-api.js defaultCors): any origin, the seven
    // headers, the routes' methods, no credentials, no max age.
    cors_config c;
    c.where = cors->where;
    c.allow_origins = {"*"};
    c.allow_headers = http_default_cors_headers;
    http_cors_fill_methods_ = true;
    if (cors->is_map()) {
        warn_unknown_keys(*cors, http_cors_keys, out_.warnings);
        auto list = [&](std::string_view key, std::vector<std::string>& to) {
            if (const ynode* v = cors->find(key); v && !v->is_null()) {
                to = read_strings(*v, "provider.httpApi.cors." + std::string(key));
                return true;
            }
            return false;
        };
        list("allowedOrigins", c.allow_origins);
        list("allowedHeaders", c.allow_headers);
        if (list("allowedMethods", c.allow_methods)) {
            http_cors_fill_methods_ = false;
            for (auto& m : c.allow_methods)
                for (auto& ch : m)
                    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        }
        list("exposedResponseHeaders", c.expose_headers);
        if (const ynode* v = cors->find("allowCredentials"); v && !v->is_null())
            c.allow_credentials = read_flag(*v, "provider.httpApi.cors.allowCredentials");
        if (const ynode* v = cors->find("maxAge"); v && !v->is_null())
            c.max_age_s = static_cast<int>(expect_int(*v, 0, 2147483647, "provider.httpApi.cors.maxAge"));
    }
    http_cors_ = std::move(c);
}

// One provider.httpApi.authorizers entry: type jwt (default) {identitySource, issuerUrl,
// audience}, all three required by serverless' schema; or type request {functionName |
// functionArn, identitySource (string or list), resultTtlInSeconds, enableSimpleResponses,
// payloadVersion (default 2.0)}. Routes name it by its key.
void serverless_loader::read_http_authorizer(const ymember& entry) {
    const std::string path = join_path("provider.httpApi.authorizers", entry.key);
    const ynode& def = expect_map(entry.value, path);
    warn_unknown_keys(def, http_authorizer_keys, out_.warnings);
    authorizer a;
    a.name = entry.key;
    a.where = entry.key_where;
    std::string type = "jwt";
    if (const ynode* t = def.find("type"); t && !t->is_null()) {
        type = lower(expect_string(*t, path + ".type"));
        static constexpr std::array<std::string_view, 2> types = {"jwt", "request"};
        if (type != "jwt" && type != "request")
            fail(*t, "HTTP API authorizer type must be jwt or request, got '" + t->text + "'" +
                         value_hint(type, types));
    }
    const ynode* source = def.find("identitySource");
    if (source && !source->is_null()) {
        a.identity_sources = read_strings(*source, path + ".identitySource");
        for (const auto& s : a.identity_sources)
            if (s.empty()) fail(*source, path + ".identitySource must not be empty");
    }
    auto required = [&](std::string_view key, const std::string& what) -> const ynode& {
        const ynode* v = def.find(key);
        if (!v || v->is_null())
            fail_key(entry, path, "JWT authorizer " + entry.key + " needs " + std::string(key) +
                                      " (" + what + ")");
        return *v;
    };
    if (type == "jwt") {
        a.kind = authorizer::type::jwt;
        required("identitySource", "e.g. $request.header.Authorization");
        a.issuer = expect_string(required("issuerUrl", "the token's iss"), path + ".issuerUrl");
        a.audience = read_strings(required("audience", "a client id, or a list of them"),
                                  path + ".audience");
        http_authorizers_.push_back(std::move(a));
        return;
    }
    a.kind = authorizer::type::request;
    const ynode* fn_name = def.find("functionName");
    const ynode* fn_arn = def.find("functionArn");
    if (fn_name && fn_arn)
        fail_key(entry, path,
                 "authorizer " + entry.key + " sets both functionName and functionArn; set one");
    if (!fn_name && !fn_arn)
        fail_key(entry, path,
                 "authorizer " + entry.key + " needs functionName (a function of this service) or "
                                             "functionArn");
    if (fn_name) {
        a.function = expect_string(*fn_name, path + ".functionName");
    } else {
        arn_target t{api_kind::http, a.name, "", "", *fn_arn};
        if (fn_arn->is_scalar() && fn_arn->tag == "!GetAtt") {
            t.logical_id = fn_arn->text.substr(0, fn_arn->text.find('.'));
        } else if (const ynode* get = fn_arn->is_map() ? fn_arn->find("Fn::GetAtt") : nullptr;
                   get && get->is_sequence() && !get->items.empty() && get->items[0].is_scalar()) {
            t.logical_id = get->items[0].text;
        } else if (fn_arn->is_scalar()) {
            t.function_name = function_name_in_arn(fn_arn->text);
        }
        arn_targets_.push_back(std::move(t));
    }
    if (const ynode* ttl = def.find("resultTtlInSeconds"); ttl && !ttl->is_null()) {
        a.result_ttl_s = static_cast<int>(expect_int(*ttl, 0, 3600, path + ".resultTtlInSeconds"));
        // http-api.js refuses caching without an identity to cache by.
        if (a.result_ttl_s != 0 && a.identity_sources.empty())
            fail(*ttl, "authorizer " + entry.key +
                           ": resultTtlInSeconds other than 0 needs identitySource");
    }
    if (const ynode* v = def.find("enableSimpleResponses"); v && !v->is_null())
        a.simple_responses = read_flag(*v, path + ".enableSimpleResponses");
    a.payload_format_version = "2.0";
    if (const ynode* v = def.find("payloadVersion"); v && !v->is_null()) {
        a.payload_format_version = expect_string(*v, path + ".payloadVersion");
        if (a.payload_format_version != "1.0" && a.payload_format_version != "2.0")
            fail(*v, path + ".payloadVersion must be '1.0' or '2.0', got '" +
                         a.payload_format_version + "'");
    }
    if (a.simple_responses && a.payload_format_version != "2.0")
        fail(*def.find("enableSimpleResponses"),
             "authorizer " + entry.key + ": enableSimpleResponses needs payloadVersion 2.0");
    http_authorizers_.push_back(std::move(a));
}

// An httpApi event's `authorizer`: a name, or {name, scopes} naming one of
// provider.httpApi.authorizers, {type: aws_iam} (not checked), or {id} (an authorizer of an
// API managed elsewhere, not called).
void serverless_loader::read_http_event_authorizer(const ymember& key, route& r) {
    const ynode& v = key.value;
    auto unchecked = [&](const std::string& what) {
        out_.warnings.push_back(warning_key_text(
            key, v.path, what + " is not checked locally: requests reach the function unauthenticated"));
    };
    if (v.is_scalar()) {
        r.authorizer = expect_string(v, "authorizer");
        if (r.authorizer.empty()) fail(v, "authorizer must not be empty");
        return;
    }
    expect_map(v, "authorizer");
    warn_unknown_keys(v, http_event_authorizer_keys, out_.warnings);
    std::string type;
    if (const ynode* t = v.find("type"); t && !t->is_null()) {
        type = lower(expect_string(*t, "authorizer.type"));
        static constexpr std::array<std::string_view, 3> types = {"request", "jwt", "aws_iam"};
        if (std::find(types.begin(), types.end(), type) == types.end())
            fail(*t, "authorizer type must be request, jwt or aws_iam, got '" + t->text + "'" +
                         value_hint(type, types));
    }
    const ynode* name = v.find("name");
    const ynode* id = v.find("id");
    const ynode* scopes = v.find("scopes");
    if (type == "aws_iam") {
        if (name || id || scopes)
            fail(v, "an aws_iam authorizer takes no name, id or scopes");
        return unchecked("AWS_IAM authorization");
    }
    if (id && !id->is_null()) return unchecked("the authorizer managed outside this service (id)");
    if (!name || name->is_null())
        fail(v, "authorizer needs the name of one of provider.httpApi.authorizers");
    r.authorizer = expect_string(*name, "authorizer.name");
    if (scopes && !scopes->is_null()) {
        for (const auto& item : expect_sequence(*scopes, "authorizer.scopes").items)
            add_unique(r.authorization_scopes, {expect_string(item, "a scope")});
    }
}

// ---- API keys and usage plans ----------------------------------------------------------

// provider.apiGateway apiKeySourceType, apiKeys and usagePlan (api-keys.js, usage-plan.js,
// usage-plan-keys.js). Keys or a plan make usage plans: one plan named "<service>-<stage>" from
// a usagePlan map (or none at all), or one "<service>-<plan>-<stage>" per item of a usagePlan
// list; each covers the stage of the service's REST API. apiKeys items are a key name, a map
// {name, value, enabled, description, customerId}, or {<plan name>: [keys…]} for a plan of the
// list; the other forms go to the single plan.
void serverless_loader::read_api_keys(const ynode& gateway) {
    if (auto src = vars_.get(&gateway, "apiKeySourceType")) {
        std::string text = expect_string(*src, "apiKeySourceType");
        for (auto& c : text)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (text != "HEADER" && text != "AUTHORIZER")
            fail(*src, "apiKeySourceType must be HEADER or AUTHORIZER, got '" + src->text + "'");
        api_key_source_ = text;
    }
    const auto keys = vars_.get(&gateway, "apiKeys");
    const auto plans = vars_.get(&gateway, "usagePlan");
    if (!keys && !plans) return;

    const std::size_t first_plan = out_.usage_plans.size();
    std::vector<std::string> plan_names;  // the usagePlan list's names, parallel to the plans
    if (plans && plans->is_sequence()) {
        for (const auto& item : plans->items) {
            const ynode& entry = expect_map(item, "a usage plan");
            if (entry.members.size() != 1)
                fail(entry, "each usagePlan item is one plan: {<name>: {quota, throttle}}");
            const ymember& m = entry.members.front();
            usage_plan plan;
            plan.name = service_ + "-" + m.key + "-" + stage_;
            plan.where = m.key_where;
            if (!m.value.is_null()) read_usage_plan(m.value, plan);
            plan_names.push_back(m.key);
            out_.usage_plans.push_back(std::move(plan));
        }
    } else {
        usage_plan plan;
        plan.name = service_ + "-" + stage_;
        plan.where = plans ? plans->where : keys->where;
        if (plans) read_usage_plan(*plans, plan);
        out_.usage_plans.push_back(std::move(plan));
    }
    if (!keys) return;

    const bool listed = !plan_names.empty();
    int number = 0;  // keys without a name are named after their CloudFormation id
    auto add_key = [&](const ynode& item, std::size_t plan, const std::string& group) {
        api_key k;
        k.where = item.where;
        ++number;
        if (item.is_scalar()) {
            k.name = expect_string(item, "an API key name");
        } else {
            const ynode& def = expect_map(item, "an API key");
            warn_unknown_keys(def, api_key_keys, out_.warnings);
            if (const ynode* n = def.find("name"); n && !n->is_null())
                k.name = expect_string(*n, "API key name");
            if (const ynode* v = def.find("value"); v && !v->is_null()) {
                k.value = expect_string(*v, "API key value");
                // API Gateway refuses shorter values (CreateApiKey; CDK ApiKeyOptions.value:
                // "Must be at least 20 characters long").
                if (k.value.size() < 20)
                    fail(*v, "an API key value must be at least 20 characters, got " +
                                 std::to_string(k.value.size()));
            }
            if (const ynode* e = def.find("enabled"); e && !e->is_null())
                k.enabled = read_flag(*e, "API key enabled");
        }
        if (k.name.empty()) k.name = "ApiGatewayApiKey" + group + std::to_string(number);
        for (const auto& other : out_.api_keys)
            if (other.name == k.name)
                fail(item, "API key name " + k.name + " is used twice; coldbrew.yaml and usage "
                                                       "plans tell keys apart by name");
        out_.usage_plans[plan].keys.push_back(k.name);
        out_.api_keys.push_back(std::move(k));
    };
    for (const auto& item : expect_sequence(*keys, "apiKeys").items) {
        const bool grouped = item.is_map() && item.members.size() == 1 &&
                             item.members.front().value.is_sequence();
        if (grouped) {
            const ymember& g = item.members.front();
            const auto plan = std::find(plan_names.begin(), plan_names.end(), g.key);
            if (plan == plan_names.end())
                fail_key(g, join_path(item.path, g.key),
                         "API key group " + g.key + " names no plan of provider.apiGateway.usagePlan" +
                             (listed ? did_you_mean(g.key, std::vector<std::string_view>(
                                                               plan_names.begin(), plan_names.end()))
                                     : std::string(" (it is not a list of named plans)")));
            // usage-plan-keys.js numbers each group's keys from 1.
            number = 0;
            for (const auto& k : g.value.items)
                add_key(k, first_plan + static_cast<std::size_t>(plan - plan_names.begin()),
                        g.key);
            continue;
        }
        if (listed)
            fail(item, "with a list of usage plans every API key goes under a plan's name, e.g. "
                       "apiKeys: [{" + plan_names.front() + ": [myKey]}]");
        add_key(item, first_plan, "");
    }
}

// A usage plan's {quota: {limit, offset, period}, throttle: {burstLimit, rateLimit}}.
void serverless_loader::read_usage_plan(const ynode& def, usage_plan& plan) {
    expect_map(def, "a usage plan");
    warn_unknown_keys(def, usage_plan_keys, out_.warnings);
    if (const ynode* q = def.find("quota"); q && !q->is_null()) {
        expect_map(*q, "quota");
        warn_unknown_keys(*q, quota_keys, out_.warnings);
        const ynode* limit = q->find("limit");
        const ynode* period = q->find("period");
        if (limit && !limit->is_null())
            plan.quota_limit = expect_int(*limit, 0, INT32_MAX, "quota.limit");
        if (period && !period->is_null()) {
            static constexpr std::array<std::string_view, 3> periods = {"DAY", "WEEK", "MONTH"};
            plan.quota_period = expect_choice(*period, "quota.period", periods);
        }
        if (plan.quota_limit && plan.quota_period.empty())
            fail(*q, "quota needs a period (DAY, WEEK or MONTH) with its limit");
        if (const ynode* offset = q->find("offset"); offset && !offset->is_null()) {
            // Requests taken off the limit in the first period (QuotaSettings.offset, API
            // Gateway API reference; older SDK docs called it the day the period starts).
            const auto max = plan.quota_limit ? *plan.quota_limit : std::int64_t{INT32_MAX};
            plan.quota_offset = static_cast<int>(expect_int(*offset, 0, max, "quota.offset"));
        }
    }
    if (const ynode* t = def.find("throttle"); t && !t->is_null()) {
        expect_map(*t, "throttle");
        warn_unknown_keys(*t, throttle_keys, out_.warnings);
        if (const ynode* b = t->find("burstLimit"); b && !b->is_null())
            plan.burst_limit = static_cast<int>(expect_int(*b, 0, INT32_MAX, "throttle.burstLimit"));
        if (const ynode* r = t->find("rateLimit"); r && !r->is_null()) {
            plan.rate_limit = expect_double(*r, "throttle.rateLimit");
            if (*plan.rate_limit < 0) fail(*r, "throttle.rateLimit must not be negative");
        }
    }
}

} // namespace

bool looks_like_serverless(const ynode& root) {
    return root.is_map() && root.find("service") && root.find("provider");
}

void load_serverless(const ynode& root, const load_options& options, bool region_fixed,
                     stack& out) {
    serverless_loader(root, options, region_fixed, out).run();
}

} // namespace coldbrew::config::detail
