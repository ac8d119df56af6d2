#pragma once
// Private to emulator/config: a layer whose local content is a .zip file (SAM ContentUri /
// Content, serverless layer `path` or `package.artifact`), as `sam build` or a packaging step
// leaves it. Lambda extracts a layer's .zip into /opt; coldbrew extracts it once into the
// project, where the function's search paths (emulator/functions/layer_paths.hpp) find it.
//
// Extraction happens while loading, so `validate` extracts too: the result is a cache under
// .coldbrew/ (like coldbrew's build output), keyed by the zip's content, and loading stays the
// one place that turns template paths into directories.

#include "emulator/config/yaml_tree.hpp"

#include <filesystem>
#include <string>

namespace coldbrew::config::detail {

// `value` (from node `at`, relative to `base` unless absolute) as a layer directory: an
// existing directory as local_directory() reads it, or a .zip file extracted into
// <project_dir>/.coldbrew/layers/<layer_id>-<12 hex digits of the zip's FNV-1a hash>/ (reused
// when present). Entries with an absolute path or a ".." component, hard links, and symbolic
// links whose target leaves the extraction directory are config_errors at `at`, and so is a
// zip libarchive cannot read.
std::filesystem::path local_layer(const ynode& at, const std::filesystem::path& base,
                                  const std::string& value, const std::string& what,
                                  const std::filesystem::path& project_dir,
                                  const std::string& layer_id);

// The checks of one entry's path and link target, apart for tests: "" when it may be
// extracted, else why not. `link_target` is "" for an entry that is no symbolic link.
std::string unsafe_layer_entry(const std::string& path, const std::string& link_target);

}  // namespace coldbrew::config::detail
