#pragma once
// Private to emulator/config: the Lambda and API Gateway rules both template formats share
// (limits, runtimes, methods, paths, environment variables), so SAM and serverless.yml
// reject the same things with the same words.

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace coldbrew::config::detail {

// Lambda limits [QUOTA] (spec §1.9): memory 128–10240 MB, timeout 1–900 s.
inline constexpr int min_memory_mb = 128;
inline constexpr int max_memory_mb = 10240;
inline constexpr int min_timeout_s = 1;
inline constexpr int max_timeout_s = 900;
// API Gateway integration timeouts [APIGW-LIMITS] (spec §4.6, §6.14): REST 29 s, HTTP API 30 s.
inline constexpr std::int64_t rest_integration_timeout_ms = 29000;
inline constexpr std::int64_t http_integration_timeout_ms = 30000;
inline constexpr std::int64_t min_integration_timeout_ms = 50;

int read_memory_mb(const ynode& n, std::string_view what);
int read_timeout_s(const ynode& n, std::string_view what);

// Accepts nodejs*, python3*, provided, provided.al2, provided.al2023; anything else throws
// "<owner>: runtime X is not supported (supported: nodejs*, python3*, provided*)".
std::string read_runtime(const ynode& n, const std::string& owner);

// "x86_64" or "arm64".
std::string read_architecture(const ynode& n, const std::string& owner);

// HTTP method of a route, upper-cased; "any" and "*" become "ANY".
std::string read_method(const ynode& n);

// Checks a route path: starts with "/" (or is "$default" for HTTP APIs), and a greedy
// `{proxy+}` segment, if any, is the last one (API Gateway rejects it elsewhere [HTTP-ROUTES]).
void check_route_path(const ynode& at, const std::string& path, api_kind kind);

// Appends `r` unless the same API already has a route with this method and path, which
// API Gateway rejects: then a config_error at `at` naming both definitions.
void add_route(std::vector<route>& routes, route r, const ynode& at);

// Copies environment variables from an already-resolved map into `out`. Values that are not
// scalars (unresolvable intrinsics, nested maps) become "" with a warning, and null becomes "",
// as sam local does (`samcli/local/lambdafn/env_vars.py`); unquoted True/False are lower-cased.
// Names Lambda reserves (spec §1.6 [ENV]) and names outside AWS's pattern `[a-zA-Z][a-zA-Z0-9_]+`
// are kept but warned about; names a process environment cannot hold (empty, containing '=') are
// errors.
void read_environment(const ynode& vars, std::map<std::string, std::string>& out,
                      std::vector<std::string>& warnings);

// `value` (from the node `at`) as an existing local directory, relative to `base` unless
// absolute. A `.zip` file is "zip <what> not supported yet, point <what> at the directory";
// a missing path or a file is an error too.
std::filesystem::path local_directory(const ynode& at, const std::filesystem::path& base,
                                      const std::string& value, const std::string& what);

// Warns when the variables exceed Lambda's 4 KB total [QUOTA], which AWS rejects at deploy.
void check_environment_size(const function& fn, std::vector<std::string>& warnings);

} // namespace coldbrew::config::detail
