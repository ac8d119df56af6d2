#pragma once
// Private to emulator/config: the Lambda and API Gateway rules both template formats share
// (limits, runtimes, methods, paths, environment variables), so SAM and serverless.yml
// reject the same things with the same words.

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
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

// A Node.js, Python or OS-only runtime identifier of lambda_runtimes.hpp's table, judged on
// `today`: past its block-create date it throws "<owner>: The runtime parameter of X is no
// longer supported …" (AWS's InvalidParameterValueException text); deprecated but still
// creatable it appends a warning naming the dates; an identifier not in the table throws
// "<owner>: runtime X is not supported (supported: <the creatable ones>)". Errors and
// warnings are at `n`.
std::string read_runtime(const ynode& n, const std::string& owner,
                         std::chrono::year_month_day today, std::vector<std::string>& warnings);

// "x86_64" or "arm64".
std::string read_architecture(const ynode& n, const std::string& owner);

// Reserved and provisioned concurrency: 0..1000000 (AWS's own upper bound is the account's
// concurrency; coldbrew.yaml's account_concurrency may lift it locally).
inline constexpr int max_concurrency = 1'000'000;
// Throws config_error(where, path) when provisioned > reserved: "<owner>: provisioned
// concurrency P cannot exceed reserved concurrency R (set by <reserved_origin>)". AWS rejects
// it at deploy (PutProvisionedConcurrencyConfig: "Requested Provisioned Concurrency should not
// be greater than the reservedConcurrentExecution for function").
void check_provisioned_concurrency(const source_location& where, const std::string& path,
                                   const std::string& owner, int provisioned, int reserved,
                                   const std::string& reserved_origin);

// HTTP method of a route, upper-cased; "any" and "*" become "ANY".
std::string read_method(const ynode& n);

// Checks a route path: starts with "/" (or is "$default" for HTTP APIs), and a greedy
// `{proxy+}` segment, if any, is the last one (API Gateway rejects it elsewhere [HTTP-ROUTES]).
void check_route_path(const ynode& at, const std::string& path, api_kind kind);

// Appends `r` (a route of an API of `kind`) unless API Gateway would reject it at deploy
// next to a route already in `routes` for the same API; then a config_error at `at` naming
// both definitions (file:line:col of the earlier one):
// - the same method and path;
// - sibling path variables: the same parent path and a different variable at the next
//   segment, e.g. /a/{id} and /a/{name}, whatever the methods. REST: "A sibling ({id}) of this
//   resource already has a variable path part -- only one is allowed", greedy ones included
//   ({id} and {proxy+}; serverless-nextjs/serverless-next.js#206). HTTP APIs reject renamed
//   variables the same way (ConflictException, unverified wording); a {name} beside a
//   {proxy+} is accepted there (unverified), so only same-kind pairs are errors for them.
void add_route(std::vector<route>& routes, route r, api_kind kind, const ynode& at);

// An API the template never declares but its events use (SAM's ServerlessRestApi /
// ServerlessHttpApi, serverless's ApiGatewayRestApi / HttpApi): exists only when some route
// names it, and is located at its first route. nullopt when no route uses `id`.
std::optional<api> implicit_api(const std::vector<route>& routes, std::string_view id,
                                api_kind kind);

// Throws `message` for a missing required key of `map`. When `map` has a key it does not
// know (not in `known`) that looks like a misspelling of `required` (same edit-distance rule
// as "did you mean" elsewhere, case-insensitive), the error points at that key and says
// `<message> (found "Runtim": did you mean Runtime?)`; otherwise it is at `at`.
[[noreturn]] void fail_missing(const ynode& map, std::string_view required,
                               std::span<const std::string_view> known, const ynode& at,
                               const std::string& message);

// " (did you mean Api?)" when `word` looks like a misspelling of one of `candidates`, else "".
// For values (an event type), where a quoted suggestion would read like a key.
std::string value_hint(std::string_view word, std::span<const std::string_view> candidates);

// One of `allowed`, or an error at `v` listing them (with a "did you mean").
std::string expect_choice(const ynode& v, std::string_view what,
                          std::span<const std::string_view> allowed);

// A percentage written 99.95 or "99.95%", in (0, 100] (an SLA, an availability).
double expect_percent(const ynode& v, std::string_view what);

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

// True for the names Lambda reserves (spec §1.6 [ENV]): _HANDLER, AWS_REGION,
// AWS_LAMBDA_RUNTIME_API, LAMBDA_TASK_ROOT, the credentials …
bool lambda_reserved_env(std::string_view name);

// Warns when the variables exceed Lambda's 4 KB total [QUOTA], which AWS rejects at deploy.
void check_environment_size(const function& fn, std::vector<std::string>& warnings);

} // namespace coldbrew::config::detail
