#include "emulator/config/intrinsics.hpp"

#include "emulator/codec/base64.hpp"

#include <algorithm>
#include <array>

namespace coldbrew::config::detail {

namespace {

constexpr std::array<std::string_view, 18> short_form_functions = {
    "Sub",         "Join", "Split",     "Select",    "If",           "Equals",
    "Not",         "And",  "Or",        "FindInMap", "Base64",       "GetAZs",
    "ImportValue", "Cidr", "Transform", "Length",    "ToJsonString", "GetAtt",
};

// SAM CLI's symbol table default for AWS::StackId (`intrinsics_symbol_table.py`).
constexpr std::string_view stack_id_suffix = ":stack/local/51af3dc0-da77-11e4-872e-1234567db123";

ynode scalar_at(std::string text, const ynode& at) {
    return ynode::make_scalar(std::move(text), at.where, at.path);
}

ynode unresolved_at(std::string reason, const ynode& at) {
    ynode n;
    n.type = ynode::kind::unresolved;
    n.text = std::move(reason);
    n.where = at.where;
    n.path = at.path;
    return n;
}

// A value that came from elsewhere (a parameter, a mapping) reports the position of the
// intrinsic that pulled it in.
ynode relocated(ynode v, const ynode& at) {
    v.where = at.where;
    v.path = at.path;
    for (auto& item : v.items) {
        item.where = at.where;
        item.path = at.path;
    }
    return v;
}

const ynode& expect_args(const ynode& arg, const std::string& fn, std::size_t min_count,
                         std::size_t max_count) {
    if (!arg.is_sequence() || arg.items.size() < min_count || arg.items.size() > max_count) {
        const std::string count =
            min_count == max_count ? std::to_string(min_count)
                                   : std::to_string(min_count) + " to " + std::to_string(max_count);
        fail(arg, fn + " takes a list of " + count + " arguments");
    }
    return arg;
}

bool same_value(const ynode& a, const ynode& b) {
    if (a.type != b.type) return false;
    switch (a.type) {
    case ynode::kind::scalar:
        return a.text == b.text;
    case ynode::kind::sequence:
        return std::equal(a.items.begin(), a.items.end(), b.items.begin(), b.items.end(),
                          same_value);
    case ynode::kind::null:
        return true;
    default:
        return false;
    }
}

} // namespace

void expand_short_forms(ynode& n) {
    for (auto& item : n.items)
        expand_short_forms(item);
    for (auto& m : n.members)
        expand_short_forms(m.value);
    if (n.tag.size() < 2 || n.tag[0] != '!') return;
    const std::string name = n.tag.substr(1);
    std::string key;
    if (name == "Ref" || name == "Condition") {
        key = name;
    } else if (std::find(short_form_functions.begin(), short_form_functions.end(), name) !=
               short_form_functions.end()) {
        key = "Fn::" + name;
    } else {
        return; // not CloudFormation's; left as a tagged value
    }
    ynode arg = std::move(n);
    arg.tag.clear();
    n = ynode::make_map(arg.where, arg.path);
    const source_location where = arg.where;
    n.members.push_back(ymember{std::move(key), where, std::move(arg)});
}

std::string intrinsic_name(const ynode& n) {
    if (!n.is_map() || n.members.size() != 1) return "";
    const std::string& key = n.members.front().key;
    if (key == "Ref" || key.rfind("Fn::", 0) == 0) return key;
    return "";
}

intrinsic_resolver::intrinsic_resolver(const ynode& root, std::map<std::string, ynode> parameters,
                                       std::string region, std::string account_id)
    : root_(root), parameters_(std::move(parameters)), region_(std::move(region)),
      account_id_(std::move(account_id)) {
    resources_ = root_.find("Resources");
    conditions_ = root_.find("Conditions");
    mappings_ = root_.find("Mappings");
}

ynode intrinsic_resolver::resolve(const ynode& n) {
    switch (n.type) {
    case ynode::kind::sequence: {
        ynode out = n;
        out.items.clear();
        for (const auto& item : n.items) {
            ynode r = resolve(item);
            if (r.type != ynode::kind::no_value) out.items.push_back(std::move(r));
        }
        return out;
    }
    case ynode::kind::map: {
        if (const std::string fn = intrinsic_name(n); !fn.empty()) {
            return call(fn, n.members.front().value, n);
        }
        ynode out = n;
        out.members.clear();
        for (const auto& m : n.members) {
            ynode r = resolve(m.value);
            if (r.type != ynode::kind::no_value)
                out.members.push_back(ymember{m.key, m.key_where, std::move(r)});
        }
        return out;
    }
    default:
        return n;
    }
}

ynode intrinsic_resolver::call(const std::string& fn, const ynode& arg, const ynode& at) {
    if (fn == "Ref") return ref(arg, at);
    if (fn == "Fn::GetAtt") return get_att_call(arg, at);
    if (fn == "Fn::Sub") return sub(arg, at);
    if (fn == "Fn::Join") return join(arg, at);
    if (fn == "Fn::Split") return split(arg, at);
    if (fn == "Fn::Select") return select(arg, at);
    if (fn == "Fn::If") return if_call(arg, at);
    if (fn == "Fn::FindInMap") return find_in_map(arg, at);
    if (fn == "Fn::Base64") return base64(arg, at);
    if (fn == "Fn::GetAZs") return get_azs(arg, at);
    if (fn == "Fn::Equals" || fn == "Fn::Not" || fn == "Fn::And" || fn == "Fn::Or") {
        const auto value = evaluate_condition(at);
        if (!value) return unresolved_at(fn + " cannot be evaluated locally", at);
        return scalar_at(*value ? "true" : "false", at);
    }
    if (fn == "Fn::ImportValue") {
        // SAM CLI raises "not supported" for it and, ignoring errors, leaves it unresolved.
        return unresolved_at("Fn::ImportValue is not supported locally", at);
    }
    return unresolved_at(fn + " is not supported locally", at);
}

ynode intrinsic_resolver::ref(const ynode& arg, const ynode& at) {
    const ynode name = resolve(arg);
    if (name.type == ynode::kind::unresolved) return relocated(name, at);
    if (!name.is_scalar()) fail(arg, "Ref takes the name of a parameter or resource");
    return ref_name(name.text, at);
}

ynode intrinsic_resolver::ref_name(const std::string& name, const ynode& at) {
    if (name.rfind("AWS::", 0) == 0) {
        if (name == "AWS::NoValue") {
            ynode n;
            n.type = ynode::kind::no_value;
            n.where = at.where;
            n.path = at.path;
            return n;
        }
        if (name == "AWS::Region") return scalar_at(region_, at);
        if (name == "AWS::AccountId") return scalar_at(account_id_, at);
        if (name == "AWS::StackName") return scalar_at("local", at);
        if (name == "AWS::Partition") return scalar_at("aws", at);
        if (name == "AWS::URLSuffix") return scalar_at("amazonaws.com", at);
        if (name == "AWS::StackId") {
            return scalar_at("arn:aws:cloudformation:" + region_ + ":" + account_id_ +
                                 std::string(stack_id_suffix),
                             at);
        }
        if (name == "AWS::NotificationARNs") return ynode::make_sequence(at.where, at.path);
        fail(at, "unknown pseudo parameter " + name);
    }
    if (auto it = parameters_.find(name); it != parameters_.end()) return relocated(it->second, at);
    if (resource(name)) {
        if (!resource_enabled(name)) {
            return unresolved_at("Ref " + name + ": the resource is excluded by its Condition", at);
        }
        const std::string type = resource_type(name);
        if (type == "AWS::Serverless::Function" || type == "AWS::Lambda::Function") {
            return scalar_at(function_name(name), at);
        }
        return scalar_at(name, at);
    }
    if (name == "ServerlessRestApi" || name == "ServerlessHttpApi") return scalar_at(name, at);
    return unresolved_at("Ref " + name + ": no such parameter or resource in the template", at);
}

ynode intrinsic_resolver::get_att_call(const ynode& arg, const ynode& at) {
    if (arg.is_scalar()) {
        const auto dot = arg.text.find('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == arg.text.size()) {
            fail(arg, "Fn::GetAtt takes 'Resource.Attribute', got '" + arg.text + "'");
        }
        return get_att(arg.text.substr(0, dot), arg.text.substr(dot + 1), at);
    }
    expect_args(arg, "Fn::GetAtt", 2, 2);
    const std::string& res = expect_string(arg.items[0], "Fn::GetAtt resource");
    const ynode attr = resolve(arg.items[1]);
    if (attr.type == ynode::kind::unresolved) return relocated(attr, at);
    return get_att(res, expect_string(attr, "Fn::GetAtt attribute"), at);
}

ynode intrinsic_resolver::get_att(const std::string& res, const std::string& attribute,
                                  const ynode& at) {
    const std::string what = "Fn::GetAtt " + res + "." + attribute;
    if (!resource(res)) return unresolved_at(what + ": no such resource in the template", at);
    if (!resource_enabled(res))
        return unresolved_at(what + ": the resource is excluded by its Condition", at);
    const std::string type = resource_type(res);
    if ((type == "AWS::Serverless::Function" || type == "AWS::Lambda::Function") &&
        attribute == "Arn") {
        return scalar_at(function_arn(res), at);
    }
    return unresolved_at(what + " cannot be resolved locally", at);
}

ynode intrinsic_resolver::sub(const ynode& arg, const ynode& at) {
    std::string tmpl;
    const ynode* vars = nullptr;
    if (arg.is_scalar()) {
        tmpl = arg.text;
    } else {
        expect_args(arg, "Fn::Sub", 1, 2);
        const ynode t = resolve(arg.items[0]);
        if (t.type == ynode::kind::unresolved) return relocated(t, at);
        tmpl = expect_string(t, "Fn::Sub template");
        if (arg.items.size() == 2) vars = &expect_map(arg.items[1], "Fn::Sub variables");
    }
    std::string out;
    std::size_t i = 0;
    while (i < tmpl.size()) {
        const auto open = tmpl.find("${", i);
        if (open == std::string::npos) break;
        const auto close = tmpl.find('}', open + 2);
        if (close == std::string::npos) break; // no closing brace: literal, as CloudFormation
        out.append(tmpl, i, open - i);
        const std::string inner = tmpl.substr(open + 2, close - open - 2);
        i = close + 1;
        if (!inner.empty() && inner.front() == '!') { // ${!Literal} → ${Literal}
            out += "${" + inner.substr(1) + "}";
            continue;
        }
        const auto first = inner.find_first_not_of(" \t");
        const auto last = inner.find_last_not_of(" \t");
        const std::string name =
            first == std::string::npos ? "" : inner.substr(first, last - first + 1);
        if (name.empty()) fail(at, "Fn::Sub: empty variable ${} in '" + tmpl + "'");
        ynode value;
        if (const ynode* v = vars ? vars->find(name) : nullptr) {
            value = resolve(*v);
        } else if (const auto dot = name.find('.');
                   dot != std::string::npos && name.rfind("AWS::", 0) != 0) {
            value = get_att(name.substr(0, dot), name.substr(dot + 1), at);
        } else {
            value = ref_name(name, at);
        }
        if (value.type == ynode::kind::unresolved) return relocated(value, at);
        if (!value.is_scalar()) {
            fail(at, "Fn::Sub: ${" + name + "} does not resolve to a string");
        }
        out += value.text;
    }
    if (i < tmpl.size()) out.append(tmpl, i, std::string::npos);
    return scalar_at(out, at);
}

ynode intrinsic_resolver::join(const ynode& arg, const ynode& at) {
    expect_args(arg, "Fn::Join", 2, 2);
    const ynode delim = resolve(arg.items[0]);
    if (delim.type == ynode::kind::unresolved) return relocated(delim, at);
    const std::string& d = expect_string(delim, "Fn::Join delimiter");
    const ynode list = resolve(arg.items[1]);
    if (list.type == ynode::kind::unresolved) return relocated(list, at);
    expect_sequence(list, "Fn::Join list");
    std::string out;
    for (std::size_t i = 0; i < list.items.size(); ++i) {
        const ynode& item = list.items[i];
        if (item.type == ynode::kind::unresolved) return relocated(item, at);
        if (i) out += d;
        out += expect_string(item, "Fn::Join list item");
    }
    return scalar_at(out, at);
}

ynode intrinsic_resolver::split(const ynode& arg, const ynode& at) {
    expect_args(arg, "Fn::Split", 2, 2);
    const ynode delim = resolve(arg.items[0]);
    const ynode source = resolve(arg.items[1]);
    if (delim.type == ynode::kind::unresolved) return relocated(delim, at);
    if (source.type == ynode::kind::unresolved) return relocated(source, at);
    const std::string& d = expect_string(delim, "Fn::Split delimiter");
    const std::string& s = expect_string(source, "Fn::Split source");
    if (d.empty()) fail(arg.items[0], "Fn::Split delimiter must not be empty");
    ynode out = ynode::make_sequence(at.where, at.path);
    std::size_t start = 0;
    while (true) {
        const auto pos = s.find(d, start);
        out.items.push_back(scalar_at(s.substr(start, pos - start), at));
        if (pos == std::string::npos) break;
        start = pos + d.size();
    }
    return out;
}

ynode intrinsic_resolver::select(const ynode& arg, const ynode& at) {
    expect_args(arg, "Fn::Select", 2, 2);
    const ynode index = resolve(arg.items[0]);
    if (index.type == ynode::kind::unresolved) return relocated(index, at);
    const auto i = expect_int(index, 0, 1'000'000, "Fn::Select index");
    const ynode list = resolve(arg.items[1]);
    if (list.type == ynode::kind::unresolved) return relocated(list, at);
    expect_sequence(list, "Fn::Select list");
    if (static_cast<std::size_t>(i) >= list.items.size()) {
        fail(arg.items[0], "Fn::Select index " + std::to_string(i) +
                               " is out of range for a list of " +
                               std::to_string(list.items.size()));
    }
    return list.items[static_cast<std::size_t>(i)];
}

ynode intrinsic_resolver::if_call(const ynode& arg, const ynode& at) {
    expect_args(arg, "Fn::If", 3, 3);
    const std::string& name = expect_string(arg.items[0], "Fn::If condition name");
    const auto value = condition(name, arg.items[0]);
    if (!value) return unresolved_at("condition " + name + " cannot be evaluated locally", at);
    return resolve(arg.items[*value ? 1 : 2]);
}

ynode intrinsic_resolver::find_in_map(const ynode& arg, const ynode& at) {
    // A fourth argument {DefaultValue: …} comes from AWS::LanguageExtensions.
    expect_args(arg, "Fn::FindInMap", 3, 4);
    std::array<std::string, 3> keys;
    for (std::size_t i = 0; i < 3; ++i) {
        const ynode k = resolve(arg.items[i]);
        if (k.type == ynode::kind::unresolved) return relocated(k, at);
        keys[i] = expect_string(k, "Fn::FindInMap key");
    }
    const ynode* v = mappings_ ? mappings_->find(keys[0]) : nullptr;
    if (v) v = v->find(keys[1]);
    if (v) v = v->find(keys[2]);
    if (v) return relocated(resolve(*v), at);
    if (arg.items.size() == 4) {
        if (const ynode* d = arg.items[3].find("DefaultValue")) return resolve(*d);
    }
    return unresolved_at(
        "Fn::FindInMap: no entry Mappings." + keys[0] + "." + keys[1] + "." + keys[2], at);
}

ynode intrinsic_resolver::base64(const ynode& arg, const ynode& at) {
    const ynode v = resolve(arg);
    if (v.type == ynode::kind::unresolved) return relocated(v, at);
    return scalar_at(codec::base64_encode(expect_string(v, "Fn::Base64 argument")), at);
}

ynode intrinsic_resolver::get_azs(const ynode& arg, const ynode& at) {
    const ynode v = resolve(arg);
    if (v.type == ynode::kind::unresolved) return relocated(v, at);
    std::string region = v.is_scalar() ? v.text : "";
    if (region.empty()) region = region_;
    // Three zones is what every commercial region offers at least; which letters a real
    // account sees differs per account, so nothing more precise is knowable locally.
    ynode out = ynode::make_sequence(at.where, at.path);
    for (const char* zone : {"a", "b", "c"})
        out.items.push_back(scalar_at(region + zone, at));
    return out;
}

std::optional<bool> intrinsic_resolver::condition(const std::string& name, const ynode& at) {
    if (auto it = condition_cache_.find(name); it != condition_cache_.end()) return it->second;
    const ynode* def = conditions_ ? conditions_->find(name) : nullptr;
    if (!def) {
        std::vector<std::string> names;
        if (conditions_) {
            for (const auto& m : conditions_->members)
                names.push_back(m.key);
        }
        const auto best = closest_match(name, names);
        fail(at, "unknown condition '" + name + "'" +
                     (best ? " (did you mean '" + *best + "'?)" : std::string()));
    }
    if (!conditions_in_progress_.insert(name).second) {
        fail(at, "condition '" + name + "' refers to itself");
    }
    const auto value = evaluate_condition(*def);
    conditions_in_progress_.erase(name);
    condition_cache_[name] = value;
    return value;
}

std::optional<bool> intrinsic_resolver::evaluate_condition(const ynode& n) {
    if (n.is_map() && n.members.size() == 1 && n.members.front().key == "Condition") {
        const ynode& ref = n.members.front().value;
        return condition(expect_string(ref, "Condition"), ref);
    }
    const std::string fn = intrinsic_name(n);
    const ynode* arg = fn.empty() ? nullptr : &n.members.front().value;
    if (fn == "Fn::Equals") {
        expect_args(*arg, fn, 2, 2);
        const ynode a = resolve(arg->items[0]);
        const ynode b = resolve(arg->items[1]);
        if (a.type == ynode::kind::unresolved || b.type == ynode::kind::unresolved)
            return std::nullopt;
        return same_value(a, b);
    }
    if (fn == "Fn::Not") {
        expect_args(*arg, fn, 1, 1);
        const auto v = evaluate_condition(arg->items[0]);
        if (!v) return std::nullopt;
        return !*v;
    }
    if (fn == "Fn::And" || fn == "Fn::Or") {
        expect_args(*arg, fn, 2, 10);
        const bool is_and = fn == "Fn::And";
        bool unknown = false;
        for (const auto& item : arg->items) {
            const auto v = evaluate_condition(item);
            if (!v) {
                unknown = true;
            } else if (*v != is_and) {
                return !is_and; // a false in And, a true in Or decides
            }
        }
        if (unknown) return std::nullopt;
        return is_and;
    }
    const ynode v = resolve(n);
    if (v.type == ynode::kind::unresolved) return std::nullopt;
    if (v.is_scalar() && (v.text == "true" || v.text == "false")) return v.text == "true";
    fail(n, "not a condition: expected Fn::Equals, Fn::Not, Fn::And, Fn::Or or {Condition: name}");
}

bool intrinsic_resolver::resource_enabled(const std::string& logical_id) {
    const ynode* r = resource(logical_id);
    const ynode* cond = r && r->is_map() ? r->find("Condition") : nullptr;
    if (!cond) return true;
    // Unknown conditions keep the resource: sam local does not evaluate them at all.
    return condition(expect_string(*cond, "Condition"), *cond).value_or(true);
}

const ynode* intrinsic_resolver::resource(const std::string& logical_id) const {
    return resources_ ? resources_->find(logical_id) : nullptr;
}

std::string intrinsic_resolver::resource_type(const std::string& logical_id) const {
    const ynode* r = resource(logical_id);
    const ynode* type = r ? r->find("Type") : nullptr;
    return type && type->is_scalar() ? type->text : "";
}

std::string intrinsic_resolver::function_name(const std::string& logical_id) {
    if (auto it = function_name_cache_.find(logical_id); it != function_name_cache_.end()) {
        return it->second;
    }
    std::string name = logical_id;
    const ynode* r = resource(logical_id);
    const ynode* props = r ? r->find("Properties") : nullptr;
    const ynode* fn_name = props ? props->find("FunctionName") : nullptr;
    if (fn_name) {
        // CloudFormation rejects the circular dependency too.
        if (!function_names_in_progress_.insert(logical_id).second) {
            fail(*fn_name, "FunctionName of " + logical_id + " depends on the function itself");
        }
        const ynode v = resolve(*fn_name);
        function_names_in_progress_.erase(logical_id);
        if (v.is_scalar() && !v.text.empty()) name = v.text;
    }
    function_name_cache_[logical_id] = name;
    return name;
}

std::string intrinsic_resolver::function_arn(const std::string& logical_id) {
    return "arn:aws:lambda:" + region_ + ":" + account_id_ +
           ":function:" + function_name(logical_id);
}

} // namespace coldbrew::config::detail
