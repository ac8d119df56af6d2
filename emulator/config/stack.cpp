#include "emulator/config/stack.hpp"

#include "emulator/config/loaders.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <algorithm>
#include <array>
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
    throw config_error(
        {path.string(), 0, 0}, "",
        "no template.yaml, template.yml, serverless.yml or serverless.yaml in this directory");
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
    for (const auto& r : s.routes) {
        if (!s.find_function(r.function) || !s.find_api(r.api_id)) {
            throw config_error(r.where, "",
                               "route " + r.method + " " + r.path + " on " + r.api_id +
                                   " refers to an unknown function or API");
        }
    }
}

} // namespace

const function* stack::find_function(std::string_view name) const {
    auto it = std::find_if(functions.begin(), functions.end(),
                           [&](const function& f) { return f.name == name; });
    return it == functions.end() ? nullptr : &*it;
}

const api* stack::find_api(std::string_view id) const {
    auto it = std::find_if(apis.begin(), apis.end(), [&](const api& a) { return a.id == id; });
    return it == apis.end() ? nullptr : &*it;
}

stack load_stack(const std::filesystem::path& path, const load_options& options) {
    stack out;
    out.template_file = normal_absolute(find_template(normal_absolute(path)));

    // coldbrew.yaml first: the template's pseudo-parameters (AWS::Region, AWS::AccountId)
    // take their values from it.
    coldbrew_file options_file;
    const auto coldbrew_path = out.template_file.parent_path() / coldbrew_name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(coldbrew_path, ec)) {
        out.coldbrew_file = coldbrew_path;
        options_file =
            parse_coldbrew_file(load_yaml_file(coldbrew_path), out.template_file.parent_path());
    }
    out.settings = options_file.values;

    const ynode root = load_yaml_file(out.template_file);
    const std::string file_name = out.template_file.filename().string();
    const bool named_serverless = file_name.rfind("serverless", 0) == 0;
    if (named_serverless || (!looks_like_sam(root) && looks_like_serverless(root))) {
        out.kind = stack::source_kind::serverless;
        load_serverless(root, options, options_file.region_set, out);
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
    return out;
}

} // namespace coldbrew::config
