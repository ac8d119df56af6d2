#include "emulator/config/lambda_runtimes.hpp"

#include <cstdio>

namespace coldbrew::config {

namespace {

using std::chrono::year_month_day;

constexpr year_month_day ymd(int y, unsigned m, unsigned d) {
    return year_month_day{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}};
}

// Source and date: lambda_runtimes.hpp. Columns: identifier, successor, deprecation date,
// block function create, block function update.
const lambda_runtime table[] = {
    {"nodejs24.x", "", ymd(2028, 4, 30), ymd(2028, 6, 1), ymd(2028, 7, 1)},
    {"nodejs22.x", "nodejs24.x", ymd(2027, 4, 30), ymd(2027, 6, 1), ymd(2027, 7, 1)},
    {"nodejs20.x", "nodejs24.x", ymd(2026, 4, 30), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"nodejs18.x", "nodejs24.x", ymd(2025, 9, 1), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"nodejs16.x", "nodejs24.x", ymd(2024, 6, 12), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"nodejs14.x", "nodejs24.x", ymd(2023, 12, 4), ymd(2024, 1, 9), ymd(2027, 3, 3)},
    {"nodejs12.x", "nodejs24.x", ymd(2023, 3, 31), ymd(2023, 3, 31), ymd(2023, 4, 30)},
    {"nodejs10.x", "nodejs24.x", ymd(2021, 7, 30), ymd(2021, 7, 30), ymd(2022, 2, 14)},
    {"nodejs8.10", "nodejs24.x", ymd(2020, 3, 6), ymd(2020, 2, 4), ymd(2020, 3, 6)},
    {"nodejs6.10", "nodejs24.x", ymd(2019, 8, 12), ymd(2019, 7, 12), ymd(2019, 8, 12)},
    {"nodejs4.3", "nodejs24.x", ymd(2020, 3, 5), ymd(2020, 2, 3), ymd(2020, 3, 5)},
    {"nodejs4.3-edge", "nodejs24.x", ymd(2020, 3, 5), ymd(2019, 3, 31), ymd(2019, 4, 30)},
    {"nodejs", "nodejs24.x", ymd(2016, 8, 30), ymd(2016, 9, 30), ymd(2016, 10, 31)},
    {"python3.14", "", ymd(2029, 6, 30), ymd(2029, 7, 31), ymd(2029, 8, 31)},
    {"python3.13", "python3.14", ymd(2029, 6, 30), ymd(2029, 7, 31), ymd(2029, 8, 31)},
    {"python3.12", "python3.14", ymd(2028, 10, 31), ymd(2028, 11, 30), ymd(2029, 1, 10)},
    {"python3.11", "python3.14", ymd(2027, 6, 30), ymd(2027, 7, 31), ymd(2027, 8, 31)},
    {"python3.10", "python3.14", ymd(2026, 10, 31), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"python3.9", "python3.14", ymd(2025, 12, 15), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"python3.8", "python3.14", ymd(2024, 10, 14), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"python3.7", "python3.14", ymd(2023, 12, 4), ymd(2024, 1, 9), ymd(2027, 3, 3)},
    {"python3.6", "python3.14", ymd(2022, 7, 18), ymd(2022, 7, 18), ymd(2022, 8, 29)},
    {"python2.7", "python3.14", ymd(2021, 7, 15), ymd(2021, 7, 15), ymd(2022, 5, 30)},
    {"provided.al2023", "", ymd(2029, 6, 30), ymd(2029, 7, 31), ymd(2029, 8, 31)},
    {"provided.al2", "provided.al2023", ymd(2026, 7, 31), ymd(2027, 2, 1), ymd(2027, 3, 3)},
    {"provided", "provided.al2023", ymd(2024, 1, 8), ymd(2024, 2, 8), ymd(2027, 3, 3)},
    // AWS runtimes coldbrew does not run (java*, dotnet*, ruby*, go1.x) are not rows: they
    // are "not supported" here whatever their lifecycle.
};

}  // namespace

std::span<const lambda_runtime> lambda_runtimes() { return table; }

const lambda_runtime* find_lambda_runtime(std::string_view id) {
    for (const auto& r : lambda_runtimes())
        if (r.id == id) return &r;
    return nullptr;
}

std::string format_date(year_month_day d) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(d.year()),
                  static_cast<unsigned>(d.month()), static_cast<unsigned>(d.day()));
    return buf;
}

runtime_check check_lambda_runtime(std::string_view id, year_month_day today) {
    using verdict = runtime_check::verdict;
    const auto today_days = std::chrono::sys_days{today};
    const lambda_runtime* r = find_lambda_runtime(id);
    if (!r) {
        std::string list;
        for (const auto& row : lambda_runtimes()) {
            if (row.block_create && std::chrono::sys_days{*row.block_create} <= today_days)
                continue;
            list += (list.empty() ? "" : ", ") + std::string(row.id);
        }
        return {verdict::unknown,
                "runtime " + std::string(id) + " is not supported (supported: " + list + ")"};
    }
    const std::string name(r->id);
    if (r->block_create && std::chrono::sys_days{*r->block_create} <= today_days) {
        // AWS's InvalidParameterValueException text, then when it started.
        return {verdict::blocked,
                "The runtime parameter of " + name +
                    " is no longer supported for creating or updating AWS Lambda functions. "
                    "We recommend you use the new runtime (" +
                    std::string(r->successor) +
                    ") while creating or updating functions. (AWS blocks creating " + name +
                    " functions since " + format_date(*r->block_create) + ")"};
    }
    if (r->deprecated && std::chrono::sys_days{*r->deprecated} <= today_days) {
        std::string m = "runtime " + name + " is deprecated since " + format_date(*r->deprecated);
        if (r->block_create)
            m += "; AWS blocks creating functions with it from " + format_date(*r->block_create);
        if (r->block_update) m += " and updating them from " + format_date(*r->block_update);
        if (!r->successor.empty()) m += "; use " + std::string(r->successor);
        return {verdict::deprecated, m};
    }
    return {verdict::supported, ""};
}

}  // namespace coldbrew::config
