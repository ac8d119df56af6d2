#pragma once
// Private to emulator/config: CloudFormation intrinsic functions in a SAM template, resolved
// the way SAM CLI's IntrinsicResolver does it with ignore_errors=True
// (`samcli/lib/intrinsic_resolver/intrinsic_property_resolver.py`, spec §5.1):
//   Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::Split, Fn::Select, Fn::Base64, Fn::FindInMap,
//   Fn::GetAZs, Fn::If, Fn::Equals, Fn::Not, Fn::And, Fn::Or, and named Conditions.
// Pseudo-parameters follow `intrinsics_symbol_table.py`: AWS::AccountId 123456789012,
// AWS::Region us-east-1 (both from coldbrew settings), AWS::StackName "local",
// AWS::Partition "aws", AWS::URLSuffix "amazonaws.com", AWS::NoValue removes the key.
// What cannot be known locally (GetAtt of a table, Fn::ImportValue, Fn::Transform, a
// parameter without a value) becomes a ynode of kind `unresolved` carrying the reason; the
// caller decides whether that is "" plus a warning (environment variables, as sam local does)
// or a config_error (a MemorySize it needs).
// Malformed intrinsics (wrong argument shapes, unknown condition names) are config_errors.

#include "emulator/config/yaml_tree.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace coldbrew::config::detail {

// Rewrites YAML short forms in place: `!Ref X` → {Ref: X}, `!GetAtt A.B` → {Fn::GetAtt: A.B},
// `!Sub …` → {Fn::Sub: …}, `!Condition C` → {Condition: C}; positions are kept.
void expand_short_forms(ynode& n);

// The function name when `n` is an intrinsic call ({Ref: …} or a single "Fn::…" key), else "".
std::string intrinsic_name(const ynode& n);

class intrinsic_resolver {
  public:
    // `root` is the whole template with short forms expanded; it must outlive the resolver.
    // `parameters` maps each parameter to its value (a scalar, a list for list types, or an
    // `unresolved` node when it has neither Default nor override).
    intrinsic_resolver(const ynode& root, std::map<std::string, ynode> parameters,
                       std::string region, std::string account_id);

    // Deep copy of `n` with every intrinsic evaluated; members and items that resolve to
    // AWS::NoValue are dropped, and `n` itself may come back as kind::no_value.
    ynode resolve(const ynode& n);

    // Value of the named condition; nullopt when it depends on something unresolvable.
    std::optional<bool> condition(const std::string& name, const ynode& at);

    // False when the resource carries a `Condition` that evaluates to false.
    bool resource_enabled(const std::string& logical_id);

    // Resources section entry (the resource map) or nullptr.
    const ynode* resource(const std::string& logical_id) const;
    std::string resource_type(const std::string& logical_id) const;

    // A function's deployed name: its resolved FunctionName, else its logical id.
    std::string function_name(const std::string& logical_id);
    // arn:aws:lambda:<region>:<account>:function:<name>
    std::string function_arn(const std::string& logical_id);

    const std::string& region() const { return region_; }
    const std::string& account_id() const { return account_id_; }

  private:
    ynode call(const std::string& fn, const ynode& arg, const ynode& at);
    ynode ref(const ynode& arg, const ynode& at);
    ynode ref_name(const std::string& name, const ynode& at);
    ynode get_att(const std::string& resource, const std::string& attribute, const ynode& at);
    ynode get_att_call(const ynode& arg, const ynode& at);
    ynode sub(const ynode& arg, const ynode& at);
    ynode join(const ynode& arg, const ynode& at);
    ynode split(const ynode& arg, const ynode& at);
    ynode select(const ynode& arg, const ynode& at);
    ynode if_call(const ynode& arg, const ynode& at);
    ynode find_in_map(const ynode& arg, const ynode& at);
    ynode base64(const ynode& arg, const ynode& at);
    ynode get_azs(const ynode& arg, const ynode& at);
    std::optional<bool> evaluate_condition(const ynode& n);

    const ynode& root_;
    const ynode* resources_ = nullptr;
    const ynode* conditions_ = nullptr;
    const ynode* mappings_ = nullptr;
    std::map<std::string, ynode> parameters_;
    std::string region_;
    std::string account_id_;
    std::map<std::string, std::optional<bool>> condition_cache_;
    std::set<std::string> conditions_in_progress_;
    std::map<std::string, std::string> function_name_cache_;
    std::set<std::string> function_names_in_progress_;
};

} // namespace coldbrew::config::detail
