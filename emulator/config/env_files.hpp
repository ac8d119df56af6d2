#pragma once
// Environment files a developer keeps beside the app: SAM CLI's `--env-vars` file and the
// dotenv files serverless v3 loads (`useDotenv: true`).

#include "emulator/config/config_error.hpp"
#include "emulator/config/stack.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace coldbrew::config {

// ---- dotenv ------------------------------------------------------------------------------

struct dotenv_entry {
    std::string key;
    std::string value;
    int line = 0;  // 1-based line of the key
};

// Parses dotenv text by the rules of the npm `dotenv` package v16 (lib/main.js `parse`, the
// version serverless v3 depends on: package.json "dotenv": "^16.3.1"):
//   KEY=value or KEY: value, optionally after `export `; keys are [A-Za-z0-9_.-]+;
//   an unquoted value ends at '#' or the end of the line and is trimmed;
//   a value in '…', "…" or `…` may span lines and keeps '#'; in "…" the two-character
//   sequences \n and \r become a newline and a carriage return (nothing else is unescaped);
//   a line that is none of these (a comment, garbage) is skipped, as dotenv skips it;
//   a key given twice keeps its last value.
// Entries are returned in file order, repeats included (the caller keeps the last).
std::vector<dotenv_entry> parse_dotenv(const std::string& text);

// Expands references in the parsed values as dotenv-expand does (serverless v3 runs
// `dotenvExpand.expand` on dotenv's result, lib/cli/load-dotenv.js): $NAME, ${NAME} and
// ${NAME:-default}; `\$` is a literal '$'. A name is looked up in `environment` first (a
// variable already set wins over the file, as dotenv-expand reads process.env first), then in
// the file's own values (expanded in turn); an unknown name becomes "". Returns KEY → value,
// the process environment's value for a key it already sets.
std::map<std::string, std::string> expand_dotenv(const std::vector<dotenv_entry>& entries,
                                                 const std::map<std::string, std::string>& environment);

// serverless v3 with `useDotenv: true` (lib/cli/conditionally-load-dotenv.js, load-dotenv.js):
// loads `.env.<stage>` when it exists, else `.env`, and adds its variables to process.env
// without replacing variables already set, before `${env:…}` is resolved. The stage is the
// --stage option, else provider.stage, else "dev". serverless reads the files from its working
// directory; coldbrew reads them from the service directory (`dir`), where serverless runs.
// Returns the variables to add (keys `environment` already has are left out) and the file read
// (nullopt: none exists). An unreadable file is a config_error.
struct dotenv_load {
    std::optional<std::filesystem::path> file;
    std::map<std::string, std::string> added;
};
dotenv_load load_serverless_dotenv(const std::filesystem::path& dir, const std::string& stage,
                                   const std::map<std::string, std::string>& environment);

// ---- SAM CLI --env-vars --------------------------------------------------------------------

// A parsed `--env-vars` file. SAM CLI's JSON format (samcli/commands/local/lib/local_lambda.py
// `_make_env_vars`): {"Parameters": {VAR: value}, "<function>": {VAR: value}, …}; every
// top-level value must be an object (SAM CLI's OverridesNotWellDefinedError). Values are
// stringified as SAM CLI does (samcli/local/lambdafn/env_vars.py `_stringify_value`): true /
// false as "true" / "false", numbers as Python's str() writes them, null, arrays and objects
// as "". Since SAM CLI 1.156 (invoke_context.py `_get_env_vars_value`) a file that is not JSON
// is read as a dotenv file whose variables all go to "Parameters"; coldbrew does the same for
// a file that does not start with '{' (after blanks), with the rules of parse_dotenv (npm
// dotenv's; python-dotenv, which SAM CLI uses, also expands ${NAME}, which coldbrew does not).
struct env_vars_file {
    struct variable {
        std::string name;
        std::string value;
        source_location where;  // the variable's key
    };
    struct section {
        std::string key;  // "Parameters", or the function it names
        source_location where;
        std::vector<variable> variables;  // in file order; a repeated name keeps the last
    };
    std::filesystem::path file;  // absolute
    std::vector<section> sections;  // in file order
};

// Parses `text` as the `--env-vars` file `file` (used for positions only). Malformed JSON and
// wrong shapes throw config_error at the line and column of the fault; a dotenv file with no
// variable at all is an error (SAM CLI's "not in valid JSON or .env format").
env_vars_file parse_env_vars(const std::string& text, const std::filesystem::path& file);
// Reads and parses the file; a missing or unreadable file is a config_error.
env_vars_file read_env_vars(const std::filesystem::path& file);

// Applies the file to every function as SAM CLI does (`_make_env_vars`, env_vars.py
// `resolve`): first "Parameters", then the one section named after the function, looked up as
// its logical id, then its FunctionName (SAM CLI also tries the nested-stack path
// "Child/Function"; coldbrew has no nested stacks); the first such section that is non-empty
// is used, and its values win over Parameters. Only variables the function already declares
// (template Environment.Variables, serverless environment, coldbrew.yaml `environment`) take a
// value: SAM CLI ignores the others. Each ignored variable and each section that names no
// function adds one warning to s.warnings. Applied after coldbrew.yaml, so the command line
// wins over it. Works the same on serverless stacks (sections named by function key or name).
void apply_env_vars(const env_vars_file& file, stack& s);

}  // namespace coldbrew::config
