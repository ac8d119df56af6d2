#include "emulator/config/stack.hpp"

#include "emulator/config/env_files.hpp"
#include "emulator/config/loaders.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <regex>
#include <set>

namespace coldbrew::config {

namespace {

using namespace detail;

constexpr std::array<std::string_view, 4> template_names = {"template.yaml", "template.yml",
                                                            "serverless.yml", "serverless.yaml"};
constexpr std::string_view coldbrew_name = "coldbrew.yaml";

std::filesystem::path find_template(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw config_error({path.string(), 0, 0}, "", "no such file or directory");
    if (!std::filesystem::is_directory(path, ec)) return path;
    for (auto name : template_names) {
        const auto candidate = path / name;
        if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    }
    // Only the build left: sam local serves it too.
    if (const auto built = path / ".aws-sam" / "build" / "template.yaml";
        std::filesystem::is_regular_file(built, ec))
        return built;
    throw config_error(
        {path.string(), 0, 0}, "",
        "no template.yaml, template.yml, serverless.yml or serverless.yaml in this directory");
}

// `sam build` writes the built template here, beside the project's template; sam local
// commands load it instead of the project's when it exists and no template was named (SAM CLI
// samcli/commands/_utils/options.py, get_or_default_template_file_name: DEFAULT_BUILT_TEMPLATE_PATH
// is searched before template.yaml).
const std::filesystem::path built_template_path = std::filesystem::path(".aws-sam") / "build" /
                                                  "template.yaml";

bool is_default_sam_name(const std::filesystem::path& file) {
    const auto name = file.filename().string();
    return name == "template.yaml" || name == "template.yml";
}

// The project directory a built template belongs to: the one holding .aws-sam/build.
std::optional<std::filesystem::path> project_of_built(const std::filesystem::path& file) {
    const auto build = file.parent_path();
    if (file.filename() != "template.yaml" || build.filename() != "build" ||
        build.parent_path().filename() != ".aws-sam")
        return std::nullopt;
    return build.parent_path().parent_path();
}

std::optional<std::filesystem::path> source_template(const std::filesystem::path& project) {
    std::error_code ec;
    for (auto name : {"template.yaml", "template.yml"})
        if (std::filesystem::is_regular_file(project / name, ec)) return project / name;
    return std::nullopt;
}

// serverless v3 `useDotenv: true`: the .env file's variables join the environment that
// `${env:…}` reads, without replacing variables already set (env_files.hpp). Handlers do not
// get them unless serverless.yml names them: serverless-offline hands a handler only the
// AWS_* variables of its own process.env (src/lambda/LambdaFunction.js, without
// --localEnvironment), so an unreferenced .env variable never reaches it either.
load_options serverless_dotenv(const ynode& root, const load_options& options, stack& out) {
    const ynode* use = root.find("useDotenv");
    if (!use || !use->is_scalar() || use->text != "true") return options;
    std::string stage = "dev";
    if (options.stage) {
        stage = *options.stage;
    } else if (const ynode* provider = root.find("provider"); provider && provider->is_map()) {
        // A stage written as a variable is not resolved yet when serverless loads the file;
        // coldbrew then uses serverless's default.
        if (const ynode* st = provider->find("stage");
            st && st->is_scalar() && st->text.find("${") == std::string::npos && !st->text.empty())
            stage = st->text;
    }
    auto loaded = load_serverless_dotenv(out.template_file.parent_path(), stage, options.env);
    if (!loaded.file) return options;
    load_options with = options;
    for (auto& [k, v] : loaded.added) with.env.emplace(k, v);
    return with;
}

std::string function_key_path(const stack& s, const function& fn) {
    return (s.kind == stack::source_kind::sam ? "Resources." : "functions.") + fn.name;
}

// The checks that hold whatever format the stack came from. Duplicate routes are caught
// earlier, by add_route(), where the YAML key path is still known.
void validate(const stack& s) {
    std::set<std::string> names;
    for (const auto& fn : s.functions) {
        if (fn.handler.empty()) {
            throw config_error(fn.where, function_key_path(s, fn), "handler must not be empty");
        }
        if (!names.insert(fn.function_name).second) {
            throw config_error(fn.where, function_key_path(s, fn),
                               "function name " + fn.function_name +
                                   " is used by two functions; deployed names must be unique");
        }
    }
    std::set<std::string> machine_names;
    for (const auto& m : s.state_machines) {
        // Step Functions names are unique per account and region (CreateStateMachine:
        // StateMachineAlreadyExists).
        if (!machine_names.insert(m.state_machine_name).second) {
            throw config_error(m.where, m.definition_key,
                               "state machine name " + m.state_machine_name +
                                   " is used by two state machines; names must be unique");
        }
        if (!m.definition.is_object()) {
            throw config_error(m.where, m.definition_key,
                               "the definition of " + m.name + " is not a JSON object");
        }
    }
    for (const auto& sc : s.schedules) {
        const bool target = sc.state_machine.empty() ? s.find_function(sc.function) != nullptr
                                                     : s.find_state_machine(sc.state_machine) != nullptr;
        if (!target || sc.function.empty() == sc.state_machine.empty()) {
            throw config_error(sc.where, "",
                               "schedule " + sc.name + " names no function or state machine of "
                               "the stack");
        }
    }
    for (const auto& r : s.routes) {
        const bool target = r.state_machine.empty() ? s.find_function(r.function) != nullptr
                                                    : s.find_state_machine(r.state_machine) != nullptr;
        if (!target || !s.find_api(r.api_id)) {
            throw config_error(r.where, "",
                               "route " + r.method + " " + r.path + " on " + r.api_id +
                                   " refers to an unknown function or API");
        }
    }
}

std::string kind_name(authorizer::type t) {
    switch (t) {
    case authorizer::type::token: return "TOKEN";
    case authorizer::type::request: return "REQUEST";
    case authorizer::type::jwt: return "JWT";
    }
    return "";
}

// Authorization, API keys and usage plans, whichever loader and coldbrew.yaml produced them:
// the rules API Gateway enforces at deploy (TOKEN authorizers exist only on REST APIs, JWT
// authorizers only on HTTP APIs, API keys and usage plans only on REST APIs: API Gateway
// developer guide, "Choose between REST APIs and HTTP APIs").
} // namespace

void check_access(stack& s) {
    for (const auto& a : s.apis) {
        for (const auto& z : a.authorizers) {
            const bool rest = a.kind == api_kind::rest;
            if ((z.kind == authorizer::type::token && !rest) ||
                (z.kind == authorizer::type::jwt && rest)) {
                throw config_error(z.where, "",
                                   "authorizer " + z.name + " of " + a.id + ": a " +
                                       kind_name(z.kind) + " authorizer exists only on " +
                                       (rest ? "HTTP" : "REST") + " APIs");
            }
            if (!z.validation_expression.empty()) {
                // Taken as a mistake to stop at, not a template to serve: such an expression
                // would turn every request away with a 401 (whether API Gateway refuses it at
                // deploy is unverified).
                try {
                    std::regex check(z.validation_expression, std::regex::ECMAScript);
                } catch (const std::regex_error& e) {
                    throw config_error(z.where, "",
                                       "authorizer " + z.name + " of " + a.id +
                                           ": ValidationExpression '" + z.validation_expression +
                                           "' is not a regular expression (" + e.what() + ")");
                }
            }
            if (z.kind != authorizer::type::jwt && !s.find_function(z.function)) {
                throw config_error(z.where, "",
                                   "authorizer " + z.name + " of " + a.id +
                                       " names function " + z.function +
                                       ", which is not a function of this stack");
            }
        }
    }
    for (const auto& r : s.routes) {
        const api* a = s.find_api(r.api_id);
        if (!a) continue;  // validate() reports it
        if (!r.authorizer.empty() &&
            std::none_of(a->authorizers.begin(), a->authorizers.end(),
                         [&](const authorizer& z) { return z.name == r.authorizer; })) {
            throw config_error(r.where, "",
                               "route " + r.method + " " + r.path + " names authorizer " +
                                   r.authorizer + ", which " + a->id + " does not declare");
        }
        if (r.api_key_required && a->kind != api_kind::rest) {
            throw config_error(r.where, "",
                               "route " + r.method + " " + r.path + " on " + a->id +
                                   " requires an API key; only REST APIs have API keys");
        }
    }
    for (const auto& p : s.usage_plans) {
        for (const auto& id : p.api_ids) {
            const api* a = s.find_api(id);
            if (!a || a->kind != api_kind::rest) {
                throw config_error(p.where, "",
                                   "usage plan " + p.name + " names " + id +
                                       ", which is not a REST API of this stack");
            }
        }
        for (const auto& k : p.keys) {
            if (std::none_of(s.api_keys.begin(), s.api_keys.end(),
                             [&](const api_key& key) { return key.name == k; })) {
                throw config_error(p.where, "",
                                   "usage plan " + p.name + " names API key " + k +
                                       ", which is not defined");
            }
        }
    }
    // API Gateway answers 403 Forbidden to a key-required method unless the key belongs to a
    // usage plan that covers the API's stage ("Choose an API key source" / usage plans guide).
    for (const auto& a : s.apis) {
        const auto needs_key = std::find_if(s.routes.begin(), s.routes.end(), [&](const route& r) {
            return r.api_id == a.id && r.api_key_required;
        });
        if (needs_key == s.routes.end()) continue;
        const bool covered = std::any_of(s.usage_plans.begin(), s.usage_plans.end(),
                                         [&](const usage_plan& p) {
                                             return !p.keys.empty() &&
                                                    std::find(p.api_ids.begin(), p.api_ids.end(),
                                                              a.id) != p.api_ids.end();
                                         });
        if (!covered) {
            s.warnings.push_back(format_config_error(
                needs_key->where, "",
                a.id + " has routes that require an API key but no usage plan with a key "
                       "covers it: every such request gets 403 Forbidden, as on AWS; add one "
                       "with `api_keys` in coldbrew.yaml"));
        }
    }
}


const function* stack::find_function(std::string_view name) const {
    auto it = std::find_if(functions.begin(), functions.end(),
                           [&](const function& f) { return f.name == name; });
    return it == functions.end() ? nullptr : &*it;
}

const api* stack::find_api(std::string_view id) const {
    auto it = std::find_if(apis.begin(), apis.end(), [&](const api& a) { return a.id == id; });
    return it == apis.end() ? nullptr : &*it;
}

const state_machine* stack::find_state_machine(std::string_view name) const {
    auto it = std::find_if(state_machines.begin(), state_machines.end(),
                           [&](const state_machine& m) { return m.name == name; });
    return it == state_machines.end() ? nullptr : &*it;
}

stack load_stack(const std::filesystem::path& path, const load_options& options) {
    stack out;
    out.template_file = normal_absolute(find_template(normal_absolute(path)));
    std::error_code ec;

    // A SAM project's own template (the directory, or template.yaml/.yml named) yields to its
    // `sam build` output, as under sam local; a template named otherwise is loaded as named,
    // since .aws-sam/build may have been built from another one. coldbrew.yaml stays the
    // project's.
    auto project_dir = out.template_file.parent_path();
    if (auto project = project_of_built(out.template_file)) {
        project_dir = *project;
        // A build whose project template is gone still names where that template was.
        out.built_from = source_template(project_dir).value_or(project_dir / "template.yaml");
    } else if (is_default_sam_name(out.template_file) &&
               std::filesystem::is_regular_file(project_dir / built_template_path, ec)) {
        out.built_from = out.template_file;
        out.template_file = project_dir / built_template_path;
    }
    if (out.built_from) {
        // SAM CLI serves a stale build silently; a changed template that is not served is a
        // surprise worth a line.
        const auto built_time = std::filesystem::last_write_time(out.template_file, ec);
        const auto source_time =
            ec ? built_time : std::filesystem::last_write_time(*out.built_from, ec);
        if (!ec && built_time < source_time) {
            out.warnings.push_back(format_config_error(
                {out.template_file.string(), 0, 0}, "",
                "older than " + out.built_from->string() +
                    "; run sam build again to serve the template and code as changed"));
        }
    }

    // coldbrew.yaml first: the template's pseudo-parameters (AWS::Region, AWS::AccountId)
    // take their values from it.
    coldbrew_file options_file;
    const auto coldbrew_path = project_dir / coldbrew_name;
    if (std::filesystem::is_regular_file(coldbrew_path, ec)) {
        out.coldbrew_file = coldbrew_path;
        options_file = parse_coldbrew_file(load_yaml_file(coldbrew_path), project_dir);
    }
    out.settings = options_file.values;

    const ynode root = load_yaml_file(out.template_file);
    const std::string file_name = out.template_file.filename().string();
    const bool named_serverless = file_name.rfind("serverless", 0) == 0;
    if (named_serverless || (!looks_like_sam(root) && looks_like_serverless(root))) {
        out.kind = stack::source_kind::serverless;
        const load_options with_dotenv = serverless_dotenv(root, options, out);
        load_serverless(root, with_dotenv, options_file.region_set, out);
    } else if (looks_like_sam(root)) {
        out.kind = stack::source_kind::sam;
        load_sam(root, options, out);
    } else {
        throw config_error(
            {out.template_file.string(), 1, 1}, "",
            "neither a SAM template (no AWSTemplateFormatVersion, Transform or Resources) "
            "nor a serverless.yml (no service and provider)");
    }

    // Model errors only the profile can detect point at the template's function unless
    // coldbrew.yaml has an entry for it (apply_coldbrew_file() moves them there).
    for (auto& fn : out.functions) {
        fn.model_where = fn.where;
        fn.model_path = function_key_path(out, fn);
    }
    apply_coldbrew_file(options_file, out);
    validate(out);
    check_access(out);
    return out;
}

} // namespace coldbrew::config
