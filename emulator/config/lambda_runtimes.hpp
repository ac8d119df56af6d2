#pragma once
// The Lambda runtime identifiers coldbrew runs (Node.js, Python, OS-only) and where each is in
// its lifecycle, in one table.
//
// Source: "Lambda runtimes" (docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html),
// tables "Supported runtimes" and "Deprecated runtimes": Deprecation date, Block function
// create, Block function update; cross-checked against cfn-lint's LmbdRuntimeLifecycle.json
// (updated from those pages on 2026-06-02). Checked on 2026-12-01.
//
// AWS's answer to CreateFunction / UpdateFunctionConfiguration with a runtime past its
// block-create date is InvalidParameterValueException: "The runtime parameter of nodejs4.3 is
// no longer supported for creating or updating AWS Lambda functions. We recommend you use the
// new runtime (nodejs8.10) while creating or updating functions." (wording as reported by
// CloudFormation and SDK users, e.g. SWO-GS/auto-tag#41, aws-samples/aws-backup-automation#3;
// the recommended runtime is the newest of the family at the time).

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace coldbrew::config {

struct lambda_runtime {
    std::string_view id;          // "nodejs22.x", "python3.12", "provided.al2023"
    std::string_view successor;   // what AWS recommends instead; "" for the newest
    // Dates in UTC; nullopt: none announced.
    std::optional<std::chrono::year_month_day> deprecated;
    std::optional<std::chrono::year_month_day> block_create;
    std::optional<std::chrono::year_month_day> block_update;
};

// The day the table was last checked against AWS's pages: the default "today" of
// load_options, so loading a stack is the same on every machine unless the caller says
// otherwise (the CLI passes the real date).
inline constexpr std::chrono::year_month_day runtime_table_checked{
    std::chrono::year{2026}, std::chrono::month{12}, std::chrono::day{1}};

// Every row, newest first within a family.
std::span<const lambda_runtime> lambda_runtimes();

// The row for `id`, or null when AWS has no such Node.js, Python or OS-only runtime.
const lambda_runtime* find_lambda_runtime(std::string_view id);

// What AWS does with `id` on `today`.
struct runtime_check {
    enum class verdict {
        supported,   // creatable, not deprecated
        deprecated,  // deprecated, still creatable: `message` is a warning
        blocked,     // past its block-create date: `message` is AWS's error
        unknown,     // not in the table: `message` lists the supported ones
    } kind = verdict::supported;
    std::string message;
};
runtime_check check_lambda_runtime(std::string_view id, std::chrono::year_month_day today);

// "2026-04-30".
std::string format_date(std::chrono::year_month_day d);

}  // namespace coldbrew::config
