#pragma once
// What every command that loads an app (`up`, `validate`, `invoke`, `test`, `sim PATH`, `sim
// --replay`) takes from its command line and its process the same way.

#include <map>
#include <string>

namespace coldbrew::config {

// SAM CLI's --parameter-overrides forms, added to `out`: "Key=Value", several separated by
// spaces ('Env=prod Size=2'), values in single or double quotes (A="with space"), and
// CloudFormation's "ParameterKey=Key,ParameterValue=Value". Throws std::invalid_argument
// ("expected Key=Value, got 'x'") on a word of neither form.
void parse_parameter_overrides(const std::string& arg, std::map<std::string, std::string>& out);

// This process's environment as name → value (the loaders resolve ${env:…} and the like
// from it).
std::map<std::string, std::string> process_environment();

}  // namespace coldbrew::config
