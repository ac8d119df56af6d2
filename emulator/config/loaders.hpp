#pragma once
// Private to emulator/config: the three readers load_stack() combines. Each throws
// config_error (file, line, column, key path) on anything malformed or unsupported, and
// appends "file:line:col: key: message" warnings for things it ignores.

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace coldbrew::config::detail {

// ---- coldbrew.yaml --------------------------------------------------------------------

struct function_override {
    std::string name; // the key under `functions:`
    source_location where;
    std::string path;
    std::optional<int> memory_mb;
    std::optional<int> timeout_s;
    std::optional<int> max_environments;
    std::map<std::string, std::string> environment; // merged over the function's; wins
};

// What coldbrew.yaml said. Settings start from the struct defaults.
struct coldbrew_file {
    settings values;
    bool region_set = false; // the template (serverless provider.region) yields to it
    bool account_id_set = false;
    std::vector<function_override> functions;
    std::optional<std::int64_t> integration_timeout_ms; // gateway.integration_timeout_ms
    source_location integration_timeout_where;
};

// Parses the document; unknown keys are errors ("did you mean" included). An empty document
// is an empty configuration.
coldbrew_file parse_coldbrew_file(const ynode& root);

// Applies per-function overrides, the global max_environments and the gateway integration
// timeout to a loaded stack. An override naming no function is an error.
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
