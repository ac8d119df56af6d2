// serverless.yml → stack (spec §5.2). Variables are resolved lazily, only in the keys
// coldbrew reads, so a `${ssm:…}` under `resources:` or `provider.iam` does not stop a
// local run; an unresolvable variable in a key coldbrew needs is a config_error.

#include "emulator/config/loaders.hpp"
#include "emulator/config/rules.hpp"

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

constexpr std::array<std::string_view, 36> function_keys = {"handler",
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
                                                            "iamRoleStatements"};

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

// `cors: true` or a cors map asks for CORS handling; `cors: false` and an empty value do not.
bool cors_enabled(const ynode& cors) {
    if (cors.is_null()) return false;
    return !(cors.is_scalar() && (cors.text == "false" || cors.text == "False"));
}

// serverless' getLambdaLayerLogicalId: "my-layer" → "MyDashlayerLambdaLayer".
std::string layer_logical_id(const std::string& name) {
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
    return out + "LambdaLayer";
}

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
    void read_layers(function& fn, const ynode& layers);
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
        if (const ymember* cors = expect_map(*http, "provider.httpApi").find_member("cors")) {
            if (cors_enabled(cors->value))
                warn_cors_not_emulated(*cors, cors->value.path, out_.warnings);
        }
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
    }
    for (const auto& [id, kind] :
         {std::pair{rest_api_id, api_kind::rest}, std::pair{http_api_id, api_kind::http}}) {
        auto found = implicit_api(out_.routes, id, kind);
        if (!found) continue;
        api& a = *found;
        a.stage = kind == api_kind::rest ? stage_ : "$default";
        if (kind == api_kind::rest) a.binary_media_types = binary_types;
        out_.apis.push_back(std::move(a));
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
                if (!path)
                    fail_key(l, join_path(local->path, l.key), "layer " + l.key + " has no path");
                fn.layer_dirs.push_back(local_directory(
                    *path, service_dir_, expect_string(*path, "path"), "layer path"));
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
        if (m.key != "http" && m.key != "httpApi") {
            const bool known_type =
                std::find(serverless_event_types.begin(), serverless_event_types.end(), m.key) !=
                serverless_event_types.end();
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
            if (const ymember* cors = spec.find_member("cors"); cors && cors_enabled(cors->value))
                warn_cors_not_emulated(*cors, cors->value.path, out_.warnings);
            if (const ymember* auth = spec.find_member("authorizer");
                auth && !auth->value.is_null())
                warn_auth_not_emulated(*auth, auth->value.path, out_.warnings);
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
        r.method = method;
        r.path = path;
        add_route(out_.routes, std::move(r), kind, spec);
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
