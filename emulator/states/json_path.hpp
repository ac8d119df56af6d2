#pragma once
// Internal to emulator/states: the parsed form of a JSONPath, shared by data.cpp (paths,
// ResultPath), choice.cpp and intrinsics.cpp. Not part of the component's interface.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace coldbrew::states::detail {

using json = nlohmann::json;

struct parsed_path;
struct filter_expr;

// "@.price" (relative to the filtered item), "$.limit" (from the root) or a literal.
struct filter_operand {
    bool relative = false;
    std::shared_ptr<parsed_path> path;  // null for a literal
    json literal;
};

struct filter_expr {
    enum class kind { compare, exists, and_, or_, not_ };
    kind what = kind::exists;
    std::string op;  // ==, !=, <, <=, >, >=
    filter_operand left, right;
    std::vector<filter_expr> children;
};

struct path_step {
    enum class kind { child, wildcard, index, slice, filter };
    kind what = kind::child;
    bool descendant = false;          // reached through ".."
    std::vector<std::string> names;   // child: one, or a union ['a','b']
    std::vector<long long> indexes;   // index: one, or a union [0,2]
    std::optional<long long> slice_start, slice_end, slice_step;
    std::shared_ptr<filter_expr> filter;
};

struct parsed_path {
    bool context = false;  // "$$": the context object
    std::vector<path_step> steps;
};

std::optional<parsed_path> parse_path(std::string_view text);
std::optional<filter_expr> parse_filter(std::string_view text);
// No wildcard, slice, union, filter or descendant step: the path names one node.
bool path_is_definite(const parsed_path& p);
// The nodes `p` selects from `root` (which must outlive the result).
std::vector<const json*> evaluate_path(const parsed_path& p, const json& root);

}  // namespace coldbrew::states::detail
