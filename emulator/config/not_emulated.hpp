#pragma once
// What a template holds that coldbrew does not act on (stack::ignored): the entries both
// loaders make for resources, events, plugins and properties, and the grouped block the CLI
// prints once at start (`validate`, `up`, `invoke`).

#include "emulator/config/stack.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace coldbrew::config {

// The block, "" when `items` is empty:
//
//   Not emulated (3):
//     resource  AWS::Serverless::SimpleTable Orders  template.yaml:40
//               nothing creates the table; ... — fix: run DynamoDB Local and ...
//     no local effect: AWS::IAM::Role StockRole, AuditRole; AWS::Lambda::Permission P
//
// Groups in the order resource, event, plugin, build, property, then any other kind, items in
// their order within a group; entries with local_effect false all go on the last line. An
// entry equal to an earlier one (kind, what, meaning, fix) is printed once. File names are
// relative to `base_dir` when inside it; a line 0 prints no location. Text wraps at `width`
// columns (a word longer than the line is not cut).
std::string format_not_emulated(const std::vector<not_emulated>& items,
                                const std::filesystem::path& base_dir, std::size_t width = 100);

namespace detail {

// A CloudFormation or SAM resource of `type` that coldbrew does not act on, named by its
// logical id. The loaders never pass the types they read (functions, APIs, state machines, layers, API keys,
// usage plans). Unknown types get a generic meaning: nothing creates them locally.
not_emulated resource_entry(const std::string& type, const std::string& id,
                            const source_location& where);

// An event of a function (SAM `Type`, serverless event key) that nothing triggers locally:
// `what` is "<type> event <name> of <function>"; `name` is the SAM event's key or, for
// serverless, "#<index>".
not_emulated event_entry(const std::string& type, const std::string& name,
                         const std::string& function, const source_location& where);

// A serverless.yml plugin. Returns false for the ones coldbrew stands in for or acts on
// (serverless-offline, serverless-esbuild, serverless-step-functions), leaving `out` untouched.
bool plugin_entry(const std::string& name, const source_location& where, not_emulated& out);

// Appends `entry`; one without local effect joins an earlier one of its kind and type
// ("AWS::IAM::Role A" then "AWS::IAM::Role B" make "AWS::IAM::Role A, B").
void add_entry(std::vector<not_emulated>& ignored, not_emulated entry);

// Adds `owner` (a function name, "Globals", "provider") to the entry for `property`, making
// it at `where` the first time: one entry per property whatever the number of functions.
// `what` becomes "<property> of A, B" (or "<property> A, B" when !local_effect).
void add_property(std::vector<not_emulated>& ignored, const std::string& property,
                  const std::string& owner, const source_location& where,
                  const std::string& meaning, const std::string& fix, bool local_effect = true);

}  // namespace detail

}  // namespace coldbrew::config
