#pragma once
// Private to emulator/config: the three readers load_stack() combines. Each throws
// config_error (file, line, column, key path) on anything malformed or unsupported, and
// appends "file:line:col: key: message" warnings for things it ignores.

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace coldbrew::config::detail {

// ---- coldbrew.yaml --------------------------------------------------------------------

// A value coldbrew.yaml set, with the node it came from (for errors found after applying).
template <class T> struct set_value {
    T value;
    source_location where;
    std::string path;
};

struct function_override {
    std::string name; // the key under `functions:`
    source_location where;
    std::string path;
    std::optional<int> memory_mb;
    std::optional<int> timeout_s;
    std::optional<int> max_environments;
    std::optional<std::pair<std::size_t, bool>> standby;  // count, auto
    std::map<std::string, std::string> environment; // merged over the function's; wins
    // Outer nullopt: not in coldbrew.yaml; inner nullopt: `null`, which removes the template's.
    std::optional<set_value<std::optional<int>>> reserved_concurrency;
    std::optional<set_value<std::optional<int>>> provisioned_concurrency;
    std::optional<std::string> architecture;
    std::optional<std::string> package_type;
    std::optional<std::string> vpc_mode;
    std::optional<std::vector<std::string>> extensions;
    std::optional<double> package_mb;
    function::model_overrides model; // fields left nullopt are not overridden
    std::optional<int> async_maximum_retry_attempts, async_maximum_event_age_s;
    std::optional<std::filesystem::path> async_on_success, async_on_failure;  // as written
    std::optional<bool> scalable_bandwidth;       // network.scalable_bandwidth
    std::optional<double> bandwidth_bytes_per_s;  // network.bandwidth
    std::optional<function_sim> sim;              // `sim:` (coldbrew sim only)
};

// Where one `dependencies:` item's values were written, for the checks that need the loaded
// template (function names, variables a function already sets) and for errors between items.
struct dependency_source {
    std::vector<set_value<std::string>> functions;  // as written: logical id or FunctionName
    // Parallel to dependency::env: the variable's key (its value for a plain `env: NAME`).
    std::vector<set_value<std::string>> env;
    source_location listen_where;  // the `listen` value; line 0 when not written
    std::string listen_path;
};

// What coldbrew.yaml said. Settings start from the struct defaults.
struct coldbrew_file {
    std::filesystem::path dir; // coldbrew.yaml's directory: relative paths start here
    settings values;
    bool region_set = false; // the template (serverless provider.region) yields to it
    bool account_id_set = false;
    std::vector<function_override> functions;
    std::optional<std::int64_t> integration_timeout_ms; // gateway.integration_timeout_ms
    source_location integration_timeout_where;
    std::vector<dependency_source> dependency_sources;  // parallel to values.dependencies
    // `api_keys: {<name>: value | {value, enabled}}`, in file order.
    struct api_key_setting {
        std::string name;
        std::optional<std::string> value;
        std::optional<bool> enabled;
        source_location where;  // its key
        std::string path;       // "api_keys.partner"
    };
    std::vector<api_key_setting> api_keys;
    // `authorizers: {<name>: {jwks: path or URL}}`; jwks is absolute or an http(s) URL.
    struct authorizer_setting {
        std::string name;
        std::string jwks;
        source_location where, jwks_where;  // its key, its jwks value
        std::string path;                   // "authorizers.cognito"
    };
    std::vector<authorizer_setting> authorizers;
};

// Parses the document; unknown keys are errors ("did you mean" included). An empty document
// is an empty configuration. `dir` (absolute) is the directory relative paths (profile,
// decision_log) are resolved against.
coldbrew_file parse_coldbrew_file(const ynode& root, const std::filesystem::path& dir);

// Applies per-function overrides, the global max_environments and the gateway integration
// timeout to a loaded stack, and points each function's model_where at its override. An
// override naming no function is an error, and so is provisioned concurrency above reserved
// concurrency once applied (at the coldbrew.yaml key that made it so).
// Dependencies: `functions` items become logical ids (a FunctionName is accepted; a name the
// stack lacks is an error), two dependencies setting one variable for a common function are
// an error, and a variable a function already sets gets a warning (the dependency wins).
void apply_coldbrew_file(const coldbrew_file& file, stack& out);

// ---- templates ------------------------------------------------------------------------

// True when the document looks like a SAM/CloudFormation template
// (AWSTemplateFormatVersion, Transform or Resources at the top).
bool looks_like_sam(const ynode& root);
// True when the document has `service` and `provider` at the top.
bool looks_like_serverless(const ynode& root);

// Fills functions, apis, routes and warnings. `out.template_file` and `out.settings` (region,
// account id) must be set.
void load_sam(const ynode& root, const load_options& options, stack& out);

// Same for serverless.yml; also sets out.settings.region from provider.region unless
// `region_fixed` (coldbrew.yaml named one).
void load_serverless(const ynode& root, const load_options& options, bool region_fixed, stack& out);

} // namespace coldbrew::config::detail
