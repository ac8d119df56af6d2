// The catalogue of what coldbrew does not act on, and the block that names it at start.
// Sources for the facts the fixes rely on:
// - a Lambda function URL sends the function an event in API Gateway's payload format 2.0
//   (Lambda developer guide, "Invoking Lambda function URLs", Request payload format);
// - handlers inherit the AWS credentials coldbrew was started with (emulator/cli/main.cpp
//   host_env), so IAM roles and policies change nothing locally;
// - serverless-offline is what coldbrew stands in for (spec/peers.md §2); serverless-esbuild
//   is acted on: its nodejs functions get a function::build that emulator/build runs
//   (serverless_esbuild.hpp), and the custom.esbuild options coldbrew cannot honour get their
//   own "plugin" entries (serverless_esbuild_ignored).

#include "emulator/config/not_emulated.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

namespace coldbrew::config {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

const std::string invoke_fix_tail = " -e event.json` sends it one event";

not_emulated make(std::string kind, std::string what, const source_location& where,
                  std::string meaning, std::string fix, bool local_effect = true) {
    not_emulated n;
    n.kind = std::move(kind);
    n.what = std::move(what);
    n.where = where;
    n.meaning = std::move(meaning);
    n.fix = std::move(fix);
    n.local_effect = local_effect;
    return n;
}

// Resources whose absence changes nothing a local run does: permissions, logging, alarms,
// deployment machinery, DNS and certificates.
bool no_local_effect(const std::string& type) {
    static constexpr std::array<std::string_view, 14> prefixes = {
        "AWS::IAM::",           "AWS::Logs::",          "AWS::CloudWatch::",
        "AWS::CodeDeploy::",    "AWS::Route53::",       "AWS::CertificateManager::",
        "AWS::XRay::",          "AWS::Lambda::Permission", "AWS::Lambda::Version",
        "AWS::Lambda::Alias",   "AWS::Serverless::Connector", "AWS::ApiGateway::Account",
        "AWS::Lambda::EventInvokeConfig", "AWS::SSO::"};
    static constexpr std::array<std::string_view, 4> exact = {
        "AWS::ApiGateway::DomainName", "AWS::ApiGateway::BasePathMapping",
        "AWS::ApiGatewayV2::DomainName", "AWS::ApiGatewayV2::ApiMapping"};
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view p) { return starts_with(type, p); }) ||
           std::find(exact.begin(), exact.end(), type) != exact.end();
}

std::string store_fix(const std::string& what_local) {
    return "run " + what_local +
           " and declare it under `dependencies:` in coldbrew.yaml, so handlers get its address";
}

int group_rank(const std::string& kind) {
    static constexpr std::array<std::string_view, 5> order = {"resource", "event", "plugin",
                                                              "build", "property"};
    const auto it = std::find(order.begin(), order.end(), kind);
    return static_cast<int>(it - order.begin());
}

// Appends `text` to `out` as lines of at most `width` columns, every line after the first
// starting with `indent` spaces; `column` is where the first line already is.
void wrap(std::string& out, const std::string& text, std::size_t column, std::size_t indent,
          std::size_t width) {
    std::size_t pos = 0;
    bool first_word = true;
    while (pos < text.size()) {
        auto end = text.find(' ', pos);
        if (end == std::string::npos) end = text.size();
        const std::string_view word(text.data() + pos, end - pos);
        if (!first_word && column + 1 + word.size() > width) {
            out += "\n" + std::string(indent, ' ');
            column = indent;
        } else if (!first_word) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
        first_word = false;
        pos = end + 1;
    }
    out += "\n";
}

std::string location(const source_location& where, const std::filesystem::path& base_dir) {
    if (where.line == 0 || where.file.empty()) return "";
    std::filesystem::path file(where.file);
    if (!base_dir.empty()) {
        const auto rel = file.lexically_relative(base_dir);
        if (!rel.empty() && !starts_with(rel.string(), "..")) file = rel;
    }
    return file.string() + ":" + std::to_string(where.line);
}

}  // namespace

std::string format_not_emulated(const std::vector<not_emulated>& items,
                                const std::filesystem::path& base_dir, std::size_t width) {
    std::vector<const not_emulated*> unique;
    for (const auto& n : items) {
        const bool seen = std::any_of(unique.begin(), unique.end(), [&](const not_emulated* u) {
            return u->kind == n.kind && u->what == n.what && u->meaning == n.meaning &&
                   u->fix == n.fix && u->local_effect == n.local_effect;
        });
        if (!seen) unique.push_back(&n);
    }
    if (unique.empty()) return "";
    std::stable_sort(unique.begin(), unique.end(), [](const not_emulated* a, const not_emulated* b) {
        return group_rank(a->kind) < group_rank(b->kind);
    });

    constexpr std::size_t label_width = 10;  // "  resource  " then the item
    constexpr std::size_t text_indent = 2 + label_width;
    std::string out = "Not emulated (" + std::to_string(unique.size()) + "):\n";
    // "<type> <names>" entries without local effect, grouped by type in first-seen order.
    std::vector<std::pair<std::string, std::string>> inert;
    for (const not_emulated* n : unique) {
        if (!n->local_effect) {
            const auto space = n->what.find(' ');
            const std::string type = n->what.substr(0, space);
            const std::string names = space == std::string::npos ? "" : n->what.substr(space + 1);
            auto it = std::find_if(inert.begin(), inert.end(),
                                   [&](const auto& p) { return p.first == type; });
            if (it == inert.end()) {
                inert.emplace_back(type, names);
            } else if (!names.empty()) {
                it->second += (it->second.empty() ? "" : ", ") + names;
            }
            continue;
        }
        std::string label = n->kind;
        if (label.size() < label_width) label.resize(label_width, ' ');
        std::string head = n->what;
        const std::string at = location(n->where, base_dir);
        if (!at.empty()) head += "  " + at;
        out += "  " + label;
        wrap(out, head, 2 + label.size(), text_indent, width);
        std::string body = n->meaning;
        if (!n->fix.empty()) body += (body.empty() ? "fix: " : " — fix: ") + n->fix;
        if (!body.empty()) {
            out += std::string(text_indent, ' ');
            wrap(out, body, text_indent, text_indent, width);
        }
    }
    if (!inert.empty()) {
        std::string line;
        for (const auto& [type, names] : inert)
            line += (line.empty() ? "" : "; ") + type + (names.empty() ? "" : " " + names);
        const std::string label = "  no local effect: ";
        out += label;
        wrap(out, line, label.size(), text_indent, width);
    }
    return out;
}

namespace detail {

not_emulated resource_entry(const std::string& type, const std::string& id,
                            const source_location& where) {
    const std::string what = type + " " + id;
    if (no_local_effect(type)) return make("resource", what, where, "", "", false);
    if (type == "AWS::Serverless::SimpleTable" || type == "AWS::DynamoDB::Table" ||
        type == "AWS::DynamoDB::GlobalTable")
        return make("resource", what, where,
                    "nothing creates the table; a handler using it reaches real DynamoDB, if "
                    "anything, with the credentials coldbrew was started with",
                    store_fix("DynamoDB Local"));
    if (type == "AWS::SQS::Queue")
        return make("resource", what, where,
                    "nothing creates the queue or delivers its messages to a function",
                    store_fix("a local queue (e.g. ElasticMQ)"));
    if (starts_with(type, "AWS::SNS::"))
        return make("resource", what, where,
                    "nothing creates the topic or delivers its messages to a function",
                    "`coldbrew invoke <Function> -e event.json` delivers one message by hand");
    if (starts_with(type, "AWS::S3::"))
        return make("resource", what, where,
                    "nothing creates the bucket; its notifications trigger nothing",
                    store_fix("an S3-compatible store (e.g. MinIO)"));
    if (starts_with(type, "AWS::Events::") || starts_with(type, "AWS::Scheduler::"))
        return make("resource", what, where, "no rule or schedule fires",
                    "`coldbrew invoke <Function> -e event.json` sends the event it would send");
    if (starts_with(type, "AWS::Cognito::"))
        return make("resource", what, where,
                    "no user pool exists locally: it issues no tokens and its triggers never run",
                    "for an HTTP API JWT authorizer, coldbrew.yaml `authorizers.<name>.jwks` "
                    "names test keys");
    if (type == "AWS::Lambda::Url")
        return make("resource", what, where, "no function URL is served",
                    "an HttpApi event serves the function with the same event (payload 2.0)");
    if (type == "AWS::Lambda::Function")
        return make("resource", what, where,
                    "not served: coldbrew runs AWS::Serverless::Function resources",
                    "declare it as an AWS::Serverless::Function (Runtime, Handler, CodeUri)");
    if (type == "AWS::Lambda::EventSourceMapping")
        return make("resource", what, where, "nothing polls the source for the function",
                    "`coldbrew invoke <Function> -e event.json` sends one batch by hand");
    if (type == "AWS::Serverless::Application" || type == "AWS::CloudFormation::Stack")
        return make("resource", what, where,
                    "the nested application is not loaded: its functions and APIs are not served",
                    "run coldbrew on the nested application's own template beside this one");
    if (starts_with(type, "AWS::ApiGateway::") || starts_with(type, "AWS::ApiGatewayV2::"))
        return make("resource", what, where,
                    "raw API Gateway resources are not read: what it adds to the API is not served",
                    "declare routes as Api / HttpApi events (SAM) or http / httpApi events "
                    "(serverless) of the functions");
    if (type == "AWS::Serverless::GraphQLApi" || starts_with(type, "AWS::AppSync::"))
        return make("resource", what, where, "no GraphQL API is served", "");
    return make("resource", what, where,
                "nothing creates it locally; a handler using it reaches the real service, if "
                "anything, with the credentials coldbrew was started with",
                store_fix("a local stand-in"));
}

not_emulated event_entry(const std::string& type, const std::string& name,
                         const std::string& function, const source_location& where) {
    const std::string what = type + " event " + name + " of " + function;
    const std::string fix = "`coldbrew invoke " + function + invoke_fix_tail;
    static const std::map<std::string, std::string, std::less<>> triggers = {
        {"Schedule", "on a schedule"},       {"ScheduleV2", "on a schedule"},
        {"schedule", "on a schedule"},       {"SQS", "from the queue"},
        {"sqs", "from the queue"},           {"SNS", "from the topic"},
        {"sns", "from the topic"},           {"S3", "from the bucket"},
        {"s3", "from the bucket"},           {"DynamoDB", "from the table's stream"},
        {"Kinesis", "from the stream"},      {"stream", "from the stream"},
        {"EventBridgeRule", "from EventBridge"}, {"eventBridge", "from EventBridge"},
        {"CloudWatchEvent", "from EventBridge"}, {"cloudwatchEvent", "from EventBridge"}};
    if (type == "websocket")
        return make("event", what, where, "no WebSocket API is served", fix);
    if (type == "alb")
        return make("event", what, where, "no load balancer listener is served",
                    "an http or httpApi event serves the function over HTTP");
    const auto t = triggers.find(type);
    const std::string from = t != triggers.end() ? t->second : "from " + type;
    return make("event", what, where, "nothing triggers " + function + " " + from, fix);
}

bool plugin_entry(const std::string& name, const source_location& where, not_emulated& out) {
    if (name == "serverless-offline" || name == "serverless-esbuild" ||
        name == "serverless-step-functions")
        return false;
    const std::string what = "plugin " + name;
    auto set = [&](std::string meaning, std::string fix, bool effect = true) {
        out = make("plugin", what, where, std::move(meaning), std::move(fix), effect);
        return true;
    };
    // Deploy-time plugins: what they change exists only in the cloud.
    static constexpr std::array<std::string_view, 9> deploy_only = {
        "serverless-iam-roles-per-function", "serverless-prune-plugin",
        "serverless-domain-manager",         "serverless-plugin-log-retention",
        "serverless-plugin-aws-alerts",      "serverless-deployment-bucket",
        "serverless-associate-waf",          "serverless-plugin-split-stacks",
        "serverless-plugin-canary-deployments"};
    if (std::find(deploy_only.begin(), deploy_only.end(), name) != deploy_only.end())
        return set("", "", false);
    if (name == "serverless-dynamodb-local" || name == "serverless-dynamodb")
        return set("coldbrew starts no DynamoDB Local and creates no table",
                   store_fix("DynamoDB Local yourself"));
    if (name == "serverless-python-requirements")
        return set("requirements are not installed: handlers import what their interpreter finds",
                   "pip install them into a virtualenv and start coldbrew with it active "
                   "(VIRTUAL_ENV and PYTHONPATH reach the handlers)");
    if (name == "serverless-dotenv-plugin")
        return set("its .env files are not loaded by the plugin",
                   "set the variables in provider.environment or coldbrew.yaml "
                   "functions.<name>.environment");
    if (name == "serverless-webpack" || name == "serverless-plugin-typescript" ||
        name == "serverless-bundle")
        return set("the code is not bundled or compiled: handlers run from the service directory",
                   "build before starting coldbrew, so each handler's file exists");
    if (name == "serverless-plugin-warmup")
        return set("no warmer runs",
                   "coldbrew.yaml `standby` keeps environments ready, as warmed ones would be");
    if (starts_with(name, "serverless-offline-"))
        return set("serverless-offline's plugins do not run with coldbrew",
                   "`coldbrew invoke <function> -e event.json` sends one event by hand");
    return set("the plugin does not run: coldbrew reads serverless.yml itself",
               "check what it adds at deploy and whether a local run needs it");
}

void add_entry(std::vector<not_emulated>& ignored, not_emulated entry) {
    if (!entry.local_effect) {
        const std::string type = entry.what.substr(0, entry.what.find(' '));
        for (auto& n : ignored) {
            if (n.local_effect || n.kind != entry.kind || n.what.substr(0, n.what.find(' ')) != type)
                continue;
            if (entry.what.size() > type.size()) n.what += ", " + entry.what.substr(type.size() + 1);
            return;
        }
    }
    ignored.push_back(std::move(entry));
}

void add_property(std::vector<not_emulated>& ignored, const std::string& property,
                  const std::string& owner, const source_location& where,
                  const std::string& meaning, const std::string& fix, bool local_effect) {
    const std::string head = local_effect ? property + " of " : property + " ";
    for (auto& n : ignored) {
        if (n.kind == "property" && starts_with(n.what, head) && n.meaning == meaning) {
            n.what += ", " + owner;
            return;
        }
    }
    ignored.push_back(make("property", head + owner, where, meaning, fix, local_effect));
}

}  // namespace detail

}  // namespace coldbrew::config
