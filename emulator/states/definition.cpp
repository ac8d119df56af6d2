// Amazon States Language documents: parsing and the checks CreateStateMachine makes.
// See definition.hpp for the sources.
#include "emulator/states/definition.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>

#include "emulator/states/data.hpp"

namespace coldbrew::states {

std::string_view to_string(state_type t) {
    switch (t) {
    case state_type::pass: return "Pass";
    case state_type::task: return "Task";
    case state_type::choice: return "Choice";
    case state_type::wait: return "Wait";
    case state_type::succeed: return "Succeed";
    case state_type::fail: return "Fail";
    case state_type::parallel: return "Parallel";
    case state_type::map: return "Map";
    }
    return "";
}

const state* machine::find(std::string_view name) const {
    auto it = states.find(name);
    return it == states.end() ? nullptr : &it->second;
}

// ---- Task resources ---------------------------------------------------------------------------

namespace {

std::vector<std::string_view> split_colons(std::string_view s) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        const auto c = s.find(':', start);
        if (c == std::string_view::npos) {
            parts.push_back(s.substr(start));
            return parts;
        }
        parts.push_back(s.substr(start, c - start));
        start = c + 1;
    }
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

task_resource classify_resource(std::string_view resource) {
    task_resource t;
    // arn:<partition>:<service>:<region>:<account>:<rest…>; partitions are aws, aws-cn,
    // aws-us-gov (ARN format, AWS General Reference).
    const auto p = split_colons(resource);
    if (p.size() < 6 || p[0] != "arn" || !starts_with(p[1], "aws")) return t;
    if (p[2] == "lambda" && p.size() >= 7 && p[5] == "function" && !p[6].empty()) {
        t.what = task_resource::kind::lambda_arn;
        t.service = "lambda";
        t.action = "invoke";
        t.function = std::string(p[6]);
        if (p.size() == 8) t.qualifier = std::string(p[7]);
        else if (p.size() > 8) t.what = task_resource::kind::unknown;
        return t;
    }
    if (p[2] != "states") return t;
    if (p[5] == "activity" && p.size() == 7 && !p[3].empty()) {
        t.what = task_resource::kind::activity;
        t.service = "activity";
        t.action = std::string(p[6]);
        return t;
    }
    // Service integrations: arn:aws:states:::<service>:<action>[.sync[:2]|.waitForTaskToken],
    // and the SDK integrations arn:aws:states:::aws-sdk:<service>:<action>.
    if (!p[3].empty() || !p[4].empty() || p.size() < 7) return t;
    std::string service(p[5]);
    std::string action(p[6]);
    std::size_t action_index = 6;
    if (service == "aws-sdk") {
        if (p.size() < 8) return t;
        service = "aws-sdk:" + std::string(p[6]);
        action = std::string(p[7]);
        action_index = 7;
    }
    // ".sync:2" puts one more colon-separated part after the action.
    std::string tail;
    for (std::size_t i = action_index + 1; i < p.size(); ++i) tail += ":" + std::string(p[i]);
    const auto dot = action.find('.');
    std::string suffix;
    if (dot != std::string::npos) {
        suffix = action.substr(dot) + tail;
        action.resize(dot);
    } else if (!tail.empty()) {
        return t;
    }
    if (action.empty() || service.empty()) return t;
    if (suffix == ".waitForTaskToken") t.pattern = integration_pattern::wait_for_task_token;
    else if (suffix == ".sync" || suffix == ".sync:2") t.pattern = integration_pattern::run_job;
    else if (!suffix.empty()) return t;
    t.service = service;
    t.action = action;
    t.what = (service == "lambda" && action == "invoke") ? task_resource::kind::lambda_invoke
                                                        : task_resource::kind::service;
    if (t.what == task_resource::kind::lambda_invoke &&
        t.pattern == integration_pattern::run_job)
        t.what = task_resource::kind::unknown;  // lambda:invoke has no .sync form
    return t;
}

// ---- parsing ---------------------------------------------------------------------------------

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& message) {
    throw definition_error(path, message);
}

std::string join(const std::string& base, std::string_view field) {
    return base.empty() ? std::string(field) : base + "." + std::string(field);
}

const std::set<std::string, std::less<>> common_fields = {"Type", "Comment"};

// The fields each state type may have (ASL "State Types"; the developer guide's per-state
// pages). QueryLanguage and Assign are read separately, to say why they are refused.
const std::set<std::string, std::less<>>& allowed_fields(state_type t) {
    static const std::set<std::string, std::less<>> pass = {
        "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result"};
    static const std::set<std::string, std::less<>> task = {
        "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector",
        "Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds",
        "HeartbeatSecondsPath", "Retry", "Catch", "Credentials"};
    static const std::set<std::string, std::less<>> choice = {"Choices", "Default", "InputPath",
                                                              "OutputPath"};
    static const std::set<std::string, std::less<>> wait = {
        "Next", "End", "InputPath", "OutputPath", "Seconds", "Timestamp", "SecondsPath",
        "TimestampPath"};
    static const std::set<std::string, std::less<>> succeed = {"InputPath", "OutputPath"};
    static const std::set<std::string, std::less<>> fail_ = {"Error", "Cause", "ErrorPath",
                                                             "CausePath"};
    static const std::set<std::string, std::less<>> parallel = {
        "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector",
        "Branches", "Retry", "Catch"};
    static const std::set<std::string, std::less<>> map = {
        "Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector",
        "ItemsPath", "ItemSelector", "ItemProcessor", "Iterator", "MaxConcurrency",
        "MaxConcurrencyPath", "ToleratedFailurePercentage", "ToleratedFailurePercentagePath",
        "ToleratedFailureCount", "ToleratedFailureCountPath", "ItemReader", "ItemBatcher",
        "ResultWriter", "Label", "Retry", "Catch"};
    switch (t) {
    case state_type::pass: return pass;
    case state_type::task: return task;
    case state_type::choice: return choice;
    case state_type::wait: return wait;
    case state_type::succeed: return succeed;
    case state_type::fail: return fail_;
    case state_type::parallel: return parallel;
    case state_type::map: return map;
    }
    return pass;
}

std::optional<state_type> parse_type(std::string_view s) {
    static const std::pair<std::string_view, state_type> types[] = {
        {"Pass", state_type::pass},       {"Task", state_type::task},
        {"Choice", state_type::choice},   {"Wait", state_type::wait},
        {"Succeed", state_type::succeed}, {"Fail", state_type::fail},
        {"Parallel", state_type::parallel}, {"Map", state_type::map}};
    for (const auto& [n, t] : types)
        if (n == s) return t;
    return std::nullopt;
}

const std::string& need_string(const json& v, const std::string& path) {
    if (!v.is_string()) fail(path, "must be a string");
    return v.get_ref<const std::string&>();
}

// A Path field ("$.x") that may also be JSON null (meaning: discard), as InputPath,
// OutputPath and ResultPath allow.
std::optional<std::string> nullable_path(const json& v, const std::string& path,
                                         bool reference) {
    if (v.is_null()) return std::nullopt;
    const std::string& p = need_string(v, path);
    if (!is_valid_path(p, reference))
        fail(path, "'" + p + "' is not a valid " +
                       std::string(reference ? "Reference Path" : "Path"));
    return p;
}

std::string path_field(const json& v, const std::string& path, bool reference) {
    const std::string& p = need_string(v, path);
    if (!is_valid_path(p, reference))
        fail(path, "'" + p + "' is not a valid " +
                       std::string(reference ? "Reference Path" : "Path"));
    return p;
}

// A positive integer number of seconds (TimeoutSeconds, HeartbeatSeconds, IntervalSeconds):
// the ASL says "MUST be positive integers".
double positive_integer(const json& v, const std::string& path, bool allow_zero = false) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) ||
        v.get<double>() != std::floor(v.get<double>()) || v.get<double>() < 0 ||
        (!allow_zero && v.get<double>() == 0))
        fail(path, std::string("must be a ") + (allow_zero ? "non-negative" : "positive") +
                       " integer");
    return v.get<double>();
}

// Checks a payload template: every ".$" field holds a Path or an intrinsic function call.
void check_template(const json& t, const std::string& path) {
    if (t.is_object()) {
        for (const auto& [k, v] : t.items()) {
            const std::string here = path + "." + k;
            if (k.size() > 2 && k.compare(k.size() - 2, 2, ".$") == 0) {
                if (!v.is_string())
                    fail(here, "a field ending in \".$\" must hold a Path or an intrinsic "
                               "function as a string");
                const auto& s = v.get_ref<const std::string&>();
                if (!s.empty() && s[0] == '$') {
                    if (!is_valid_path(s, false)) fail(here, "'" + s + "' is not a valid Path");
                } else if (!is_valid_intrinsic(s)) {
                    fail(here, "'" + s + "' is neither a Path nor a valid intrinsic function");
                }
            } else {
                check_template(v, here);
            }
        }
    } else if (t.is_array()) {
        for (std::size_t i = 0; i < t.size(); ++i)
            check_template(t[i], path + "[" + std::to_string(i) + "]");
    }
}

std::optional<json> template_field(const json& v, const std::string& path) {
    if (!v.is_object()) fail(path, "must be a JSON object");
    check_template(v, path);
    return v;
}

std::vector<std::string> error_equals(const json& v, const std::string& path) {
    if (!v.is_array() || v.empty()) fail(path, "must be a non-empty array of error names");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto here = path + "[" + std::to_string(i) + "]";
        const std::string& name = need_string(v[i], here);
        if (name.empty()) fail(here, "an error name must not be empty");
        out.push_back(name);
    }
    // "The reserved name States.ALL … MUST appear alone in its ErrorEquals array" (spec).
    if (out.size() > 1 &&
        std::find(out.begin(), out.end(), "States.ALL") != out.end())
        fail(path, "States.ALL must appear alone in ErrorEquals");
    return out;
}

void check_keys(const json& obj, const std::string& path,
                const std::set<std::string, std::less<>>& allowed, std::string_view what) {
    for (const auto& [k, v] : obj.items())
        if (!allowed.count(k)) fail(path + "." + k, "is not a field of " + std::string(what));
}

std::vector<retrier> parse_retry(const json& v, const std::string& path) {
    if (!v.is_array()) fail(path, "must be an array of retriers");
    static const std::set<std::string, std::less<>> fields = {
        "ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds",
        "JitterStrategy", "Comment"};
    std::vector<retrier> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto here = path + "[" + std::to_string(i) + "]";
        const json& r = v[i];
        if (!r.is_object()) fail(here, "a retrier must be an object");
        check_keys(r, here, fields, "a retrier");
        if (!r.contains("ErrorEquals")) fail(here + ".ErrorEquals", "is required");
        retrier out_r;
        out_r.error_equals = error_equals(r["ErrorEquals"], here + ".ErrorEquals");
        out_r.errors = 0;
        for (const auto& name : out_r.error_equals)
            if (auto bit = models::parse_sfn_error(name)) out_r.errors |= *bit;
        if (r.contains("IntervalSeconds"))
            out_r.interval_ms = positive_integer(r["IntervalSeconds"], here + ".IntervalSeconds") * 1000;
        if (r.contains("MaxAttempts")) {
            const double n = positive_integer(r["MaxAttempts"], here + ".MaxAttempts", true);
            // The developer guide caps MaxAttempts at 99999999.
            if (n > 99999999) fail(here + ".MaxAttempts", "must be at most 99999999");
            out_r.max_attempts = static_cast<int>(n);
        }
        if (r.contains("BackoffRate")) {
            const json& b = r["BackoffRate"];
            if (!b.is_number() || b.get<double>() < 1.0)
                fail(here + ".BackoffRate", "must be a number greater than or equal to 1.0");
            out_r.backoff_rate = b.get<double>();
        }
        if (r.contains("MaxDelaySeconds"))
            out_r.max_delay_ms =
                positive_integer(r["MaxDelaySeconds"], here + ".MaxDelaySeconds") * 1000;
        if (r.contains("JitterStrategy")) {
            const std::string& j = need_string(r["JitterStrategy"], here + ".JitterStrategy");
            if (j != "FULL" && j != "NONE")
                fail(here + ".JitterStrategy", "must be FULL or NONE, not '" + j + "'");
            out_r.full_jitter = j == "FULL";
        }
        // "States.ALL … MUST appear … in the last retrier" (spec).
        if (i + 1 < v.size() &&
            std::find(out_r.error_equals.begin(), out_r.error_equals.end(), "States.ALL") !=
                out_r.error_equals.end())
            fail(here + ".ErrorEquals", "States.ALL must be in the last retrier");
        try {
            models::validate(out_r);
        } catch (const std::invalid_argument& e) {
            fail(here, e.what());
        }
        out.push_back(std::move(out_r));
    }
    return out;
}

std::vector<catcher> parse_catch(const json& v, const std::string& path) {
    if (!v.is_array()) fail(path, "must be an array of catchers");
    static const std::set<std::string, std::less<>> fields = {"ErrorEquals", "Next",
                                                              "ResultPath", "Comment"};
    std::vector<catcher> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto here = path + "[" + std::to_string(i) + "]";
        const json& c = v[i];
        if (!c.is_object()) fail(here, "a catcher must be an object");
        check_keys(c, here, fields, "a catcher");
        if (!c.contains("ErrorEquals")) fail(here + ".ErrorEquals", "is required");
        if (!c.contains("Next")) fail(here + ".Next", "is required");
        if (c.contains("Assign"))
            fail(here + ".Assign", "variables are not supported; only JSONPath states run");
        catcher out_c;
        out_c.error_equals = error_equals(c["ErrorEquals"], here + ".ErrorEquals");
        out_c.next = need_string(c["Next"], here + ".Next");
        if (c.contains("ResultPath"))
            out_c.result_path = nullable_path(c["ResultPath"], here + ".ResultPath", true);
        if (i + 1 < v.size() &&
            std::find(out_c.error_equals.begin(), out_c.error_equals.end(), "States.ALL") !=
                out_c.error_equals.end())
            fail(here + ".ErrorEquals", "States.ALL must be in the last catcher");
        out.push_back(std::move(out_c));
    }
    return out;
}

// ---- Choice rules ----

struct op_name {
    std::string_view name;
    comparison op;
};
const op_name comparison_names[] = {
    {"StringEquals", comparison::string_equals},
    {"StringLessThan", comparison::string_less_than},
    {"StringGreaterThan", comparison::string_greater_than},
    {"StringLessThanEquals", comparison::string_less_than_equals},
    {"StringGreaterThanEquals", comparison::string_greater_than_equals},
    {"StringMatches", comparison::string_matches},
    {"NumericEquals", comparison::numeric_equals},
    {"NumericLessThan", comparison::numeric_less_than},
    {"NumericGreaterThan", comparison::numeric_greater_than},
    {"NumericLessThanEquals", comparison::numeric_less_than_equals},
    {"NumericGreaterThanEquals", comparison::numeric_greater_than_equals},
    {"BooleanEquals", comparison::boolean_equals},
    {"TimestampEquals", comparison::timestamp_equals},
    {"TimestampLessThan", comparison::timestamp_less_than},
    {"TimestampGreaterThan", comparison::timestamp_greater_than},
    {"TimestampLessThanEquals", comparison::timestamp_less_than_equals},
    {"TimestampGreaterThanEquals", comparison::timestamp_greater_than_equals},
    {"IsNull", comparison::is_null},
    {"IsPresent", comparison::is_present},
    {"IsNumeric", comparison::is_numeric},
    {"IsString", comparison::is_string},
    {"IsBoolean", comparison::is_boolean},
    {"IsTimestamp", comparison::is_timestamp},
};

bool is_type_test(comparison c) { return c >= comparison::is_null; }
bool is_string_op(comparison c) { return c <= comparison::string_matches; }
bool is_numeric_op(comparison c) {
    return c >= comparison::numeric_equals && c <= comparison::numeric_greater_than_equals;
}
bool is_timestamp_op(comparison c) {
    return c >= comparison::timestamp_equals && c <= comparison::timestamp_greater_than_equals;
}

choice_rule parse_rule(const json& v, const std::string& path, bool top) {
    if (!v.is_object()) fail(path, "a choice rule must be an object");
    choice_rule r;
    int shapes = 0;
    for (const auto& [k, val] : v.items()) {
        const std::string here = path + "." + k;
        if (k == "Comment") continue;
        if (k == "Next") {
            if (!top) fail(here, "only a top-level choice rule has Next");
            r.next = need_string(val, here);
            continue;
        }
        if (k == "Assign")
            fail(here, "variables are not supported; only JSONPath states run");
        if (k == "Condition")
            fail(here, "JSONata conditions are not supported; only JSONPath states run");
        if (k == "Variable") {
            r.variable = path_field(val, here, false);
            continue;
        }
        if (k == "And" || k == "Or") {
            ++shapes;
            r.form = k == "And" ? choice_rule::shape::and_ : choice_rule::shape::or_;
            if (!val.is_array() || val.empty()) fail(here, "must be a non-empty array of rules");
            for (std::size_t i = 0; i < val.size(); ++i)
                r.children.push_back(parse_rule(val[i], here + "[" + std::to_string(i) + "]", false));
            continue;
        }
        if (k == "Not") {
            ++shapes;
            r.form = choice_rule::shape::not_;
            r.children.push_back(parse_rule(val, here, false));
            continue;
        }
        std::string_view name = k;
        bool is_path = false;
        if (name.size() > 4 && name.substr(name.size() - 4) == "Path" &&
            !starts_with(name, "Is")) {
            is_path = true;
            name.remove_suffix(4);
        }
        const op_name* found = nullptr;
        for (const auto& o : comparison_names)
            if (o.name == name) found = &o;
        // StringMatches has no …Path form in the ASL.
        if (!found || (is_path && found->op == comparison::string_matches))
            fail(here, "is not a field of a choice rule");
        ++shapes;
        r.form = choice_rule::shape::comparison;
        r.op = found->op;
        r.operand_is_path = is_path;
        if (is_path) {
            r.operand = path_field(val, here, false);
        } else if (is_type_test(r.op) || r.op == comparison::boolean_equals) {
            if (!val.is_boolean()) fail(here, "must be true or false");
            r.operand = val;
        } else if (is_numeric_op(r.op)) {
            if (!val.is_number()) fail(here, "must be a number");
            r.operand = val;
        } else if (is_timestamp_op(r.op)) {
            if (!val.is_string() || !parse_timestamp_ms(val.get<std::string>()))
                fail(here, "must be an RFC 3339 timestamp string");
            r.operand = val;
        } else if (is_string_op(r.op)) {
            if (!val.is_string()) fail(here, "must be a string");
            r.operand = val;
        }
    }
    if (shapes == 0) fail(path, "a choice rule needs a comparison, And, Or or Not");
    if (shapes > 1) fail(path, "a choice rule has exactly one of a comparison, And, Or or Not");
    if (r.form == choice_rule::shape::comparison && r.variable.empty())
        fail(path + ".Variable", "is required with a comparison");
    if (r.form != choice_rule::shape::comparison && !r.variable.empty())
        fail(path + ".Variable", "is not allowed with And, Or or Not");
    if (top && r.next.empty()) fail(path + ".Next", "is required");
    return r;
}

// ---- states and machines ----

std::shared_ptr<const machine> parse_machine(const json& doc, const std::string& base,
                                             bool top);

void check_query_language(const json& obj, const std::string& path) {
    if (!obj.contains("QueryLanguage")) return;
    const json& q = obj["QueryLanguage"];
    if (q == "JSONPath") return;
    if (q == "JSONata")
        fail(join(path, "QueryLanguage"),
             "JSONata is not supported; only JSONPath states run (write this state with "
             "InputPath/Parameters/ResultPath, or remove QueryLanguage)");
    fail(join(path, "QueryLanguage"), "must be JSONPath or JSONata");
}

state parse_state(const std::string& name, const json& v, const std::string& path) {
    if (!v.is_object()) fail(path, "a state must be an object");
    check_query_language(v, path);
    if (v.contains("Assign"))
        fail(path + ".Assign",
             "variables (Assign) are not supported; only JSONPath states without variables run");
    if (!v.contains("Type")) fail(path + ".Type", "is required");
    const std::string& type_name = need_string(v["Type"], path + ".Type");
    const auto type = parse_type(type_name);
    if (!type) fail(path + ".Type", "'" + type_name + "' is not a state type");
    state st;
    st.name = name;
    st.type = *type;
    const auto& allowed = allowed_fields(*type);
    for (const auto& [k, val] : v.items())
        if (!allowed.count(k) && !common_fields.count(k) && k != "QueryLanguage")
            fail(path + "." + k, "is not a field of a " + type_name + " state");
    // JSONata-only fields in a JSONPath state are a clear sign of the other language.
    if (v.contains("Comment")) st.comment = need_string(v["Comment"], path + ".Comment");

    const bool transitions = *type != state_type::choice && *type != state_type::succeed &&
                             *type != state_type::fail;
    if (transitions) {
        const bool has_next = v.contains("Next");
        const bool has_end = v.contains("End") && v["End"] == true;
        if (v.contains("End") && !v["End"].is_boolean()) fail(path + ".End", "must be a boolean");
        if (has_next && has_end) fail(path, "has both Next and End");
        if (!has_next && !has_end) fail(path, "needs Next or \"End\": true");
        if (has_next) st.next = need_string(v["Next"], path + ".Next");
        st.end = has_end;
    }

    auto field = [&](const char* f) { return path + "." + f; };
    if (v.contains("InputPath")) st.input_path = nullable_path(v["InputPath"], field("InputPath"), false);
    if (v.contains("OutputPath")) st.output_path = nullable_path(v["OutputPath"], field("OutputPath"), false);
    if (v.contains("ResultPath")) {
        st.result_path = nullable_path(v["ResultPath"], field("ResultPath"), true);
        if (st.result_path && starts_with(*st.result_path, "$$"))
            fail(field("ResultPath"), "cannot write to the context object");
    }
    if (v.contains("Parameters") && *type != state_type::map)
        st.parameters = template_field(v["Parameters"], field("Parameters"));
    if (v.contains("ResultSelector"))
        st.result_selector = template_field(v["ResultSelector"], field("ResultSelector"));
    if (v.contains("Result")) st.result = v["Result"];
    if (v.contains("Retry")) st.retry = parse_retry(v["Retry"], field("Retry"));
    if (v.contains("Catch")) st.catches = parse_catch(v["Catch"], field("Catch"));

    switch (*type) {
    case state_type::task: {
        if (!v.contains("Resource")) fail(field("Resource"), "is required");
        st.resource = need_string(v["Resource"], field("Resource"));
        st.target = classify_resource(st.resource);
        if (st.target.what == task_resource::kind::unknown)
            fail(field("Resource"), "'" + st.resource + "' is not a Lambda function ARN, an "
                                    "activity ARN or a service integration ARN");
        if (v.contains("TimeoutSeconds") && v.contains("TimeoutSecondsPath"))
            fail(path, "has both TimeoutSeconds and TimeoutSecondsPath");
        if (v.contains("HeartbeatSeconds") && v.contains("HeartbeatSecondsPath"))
            fail(path, "has both HeartbeatSeconds and HeartbeatSecondsPath");
        if (v.contains("TimeoutSeconds"))
            st.timeout_s = positive_integer(v["TimeoutSeconds"], field("TimeoutSeconds"));
        if (v.contains("TimeoutSecondsPath"))
            st.timeout_path = path_field(v["TimeoutSecondsPath"], field("TimeoutSecondsPath"), true);
        if (v.contains("HeartbeatSeconds"))
            st.heartbeat_s = positive_integer(v["HeartbeatSeconds"], field("HeartbeatSeconds"));
        if (v.contains("HeartbeatSecondsPath"))
            st.heartbeat_path =
                path_field(v["HeartbeatSecondsPath"], field("HeartbeatSecondsPath"), true);
        // "HeartbeatSeconds … MUST be smaller than TimeoutSeconds" (spec).
        if (st.heartbeat_s && st.timeout_s && *st.heartbeat_s >= *st.timeout_s)
            fail(field("HeartbeatSeconds"), "must be smaller than TimeoutSeconds");
        if (v.contains("Credentials")) {
            if (!v["Credentials"].is_object()) fail(field("Credentials"), "must be an object");
            st.credentials = v["Credentials"];
        }
        break;
    }
    case state_type::choice: {
        if (!v.contains("Choices")) fail(field("Choices"), "is required");
        const json& c = v["Choices"];
        if (!c.is_array() || c.empty()) fail(field("Choices"), "must be a non-empty array");
        for (std::size_t i = 0; i < c.size(); ++i)
            st.choices.push_back(parse_rule(c[i], field("Choices") + "[" + std::to_string(i) + "]", true));
        if (v.contains("Default")) st.default_next = need_string(v["Default"], field("Default"));
        break;
    }
    case state_type::wait: {
        int n = 0;
        if (v.contains("Seconds")) {
            ++n;
            st.seconds = positive_integer(v["Seconds"], field("Seconds"), true);
        }
        if (v.contains("Timestamp")) {
            ++n;
            const std::string& t = need_string(v["Timestamp"], field("Timestamp"));
            if (!parse_timestamp_ms(t))
                fail(field("Timestamp"), "'" + t + "' is not an RFC 3339 timestamp");
            st.timestamp = t;
        }
        if (v.contains("SecondsPath")) {
            ++n;
            st.seconds_path = path_field(v["SecondsPath"], field("SecondsPath"), true);
        }
        if (v.contains("TimestampPath")) {
            ++n;
            st.timestamp_path = path_field(v["TimestampPath"], field("TimestampPath"), true);
        }
        if (n != 1)
            fail(path, "a Wait state needs exactly one of Seconds, Timestamp, SecondsPath and "
                       "TimestampPath");
        break;
    }
    case state_type::fail: {
        if (v.contains("Error") && v.contains("ErrorPath"))
            fail(path, "has both Error and ErrorPath");
        if (v.contains("Cause") && v.contains("CausePath"))
            fail(path, "has both Cause and CausePath");
        if (v.contains("Error")) st.error = need_string(v["Error"], field("Error"));
        if (v.contains("Cause")) st.cause = need_string(v["Cause"], field("Cause"));
        // ErrorPath and CausePath may be a Reference Path or an intrinsic function.
        for (const char* f : {"ErrorPath", "CausePath"}) {
            if (!v.contains(f)) continue;
            const std::string& s = need_string(v[f], field(f));
            if (!(is_valid_path(s, true) || is_valid_intrinsic(s)))
                fail(field(f), "'" + s + "' is neither a Reference Path nor an intrinsic function");
            (std::string_view(f) == "ErrorPath" ? st.error_path : st.cause_path) = s;
        }
        break;
    }
    case state_type::parallel: {
        if (!v.contains("Branches")) fail(field("Branches"), "is required");
        const json& b = v["Branches"];
        if (!b.is_array() || b.empty()) fail(field("Branches"), "must be a non-empty array");
        for (std::size_t i = 0; i < b.size(); ++i)
            st.branches.push_back(
                parse_machine(b[i], field("Branches") + "[" + std::to_string(i) + "]", false));
        break;
    }
    case state_type::map: {
        if (v.contains("ItemReader"))
            fail(field("ItemReader"), "a Distributed Map that reads its items from S3 is not "
                                      "supported; pass the items in the input (ItemsPath)");
        if (v.contains("ItemBatcher"))
            fail(field("ItemBatcher"), "item batching of a Distributed Map is not supported");
        if (v.contains("ResultWriter"))
            fail(field("ResultWriter"), "a Distributed Map writing results to S3 is not supported");
        if (v.contains("ItemProcessor") && v.contains("Iterator"))
            fail(path, "has both ItemProcessor and Iterator");
        if (v.contains("ItemSelector") && v.contains("Parameters"))
            fail(path, "has both ItemSelector and Parameters");
        const char* proc = v.contains("ItemProcessor") ? "ItemProcessor" : "Iterator";
        if (!v.contains(proc)) fail(field("ItemProcessor"), "is required");
        const json& p = v[proc];
        if (!p.is_object()) fail(field(proc), "must be an object");
        if (p.contains("ProcessorConfig")) {
            const json& pc = p["ProcessorConfig"];
            const auto pcp = field(proc) + ".ProcessorConfig";
            if (!pc.is_object()) fail(pcp, "must be an object");
            check_keys(pc, pcp, {"Mode", "ExecutionType"}, "ProcessorConfig");
            if (pc.contains("Mode") && pc["Mode"] != "INLINE" && pc["Mode"] != "DISTRIBUTED")
                fail(pcp + ".Mode", "must be INLINE or DISTRIBUTED");
            if (pc.contains("ExecutionType") && pc["ExecutionType"] != "STANDARD" &&
                pc["ExecutionType"] != "EXPRESS")
                fail(pcp + ".ExecutionType", "must be STANDARD or EXPRESS");
        }
        json body = p;
        body.erase("ProcessorConfig");
        st.item_processor = parse_machine(body, field(proc), false);
        const char* sel = v.contains("ItemSelector") ? "ItemSelector" : "Parameters";
        if (v.contains(sel)) st.item_selector = template_field(v[sel], field(sel));
        if (v.contains("ItemsPath")) st.items_path = path_field(v["ItemsPath"], field("ItemsPath"), true);
        if (v.contains("MaxConcurrency") && v.contains("MaxConcurrencyPath"))
            fail(path, "has both MaxConcurrency and MaxConcurrencyPath");
        if (v.contains("MaxConcurrency"))
            st.max_concurrency = static_cast<int>(
                positive_integer(v["MaxConcurrency"], field("MaxConcurrency"), true));
        if (v.contains("MaxConcurrencyPath"))
            st.max_concurrency_path =
                path_field(v["MaxConcurrencyPath"], field("MaxConcurrencyPath"), true);
        if (v.contains("ToleratedFailurePercentage")) {
            const json& t = v["ToleratedFailurePercentage"];
            if (!t.is_number() || t.get<double>() < 0 || t.get<double>() > 100)
                fail(field("ToleratedFailurePercentage"), "must be a number from 0 to 100");
            st.tolerated_failure_percentage = t.get<double>();
        }
        if (v.contains("ToleratedFailurePercentagePath"))
            st.tolerated_failure_percentage_path = path_field(
                v["ToleratedFailurePercentagePath"], field("ToleratedFailurePercentagePath"), true);
        if (v.contains("ToleratedFailureCount"))
            st.tolerated_failure_count = static_cast<std::int64_t>(
                positive_integer(v["ToleratedFailureCount"], field("ToleratedFailureCount"), true));
        if (v.contains("ToleratedFailureCountPath"))
            st.tolerated_failure_count_path = path_field(
                v["ToleratedFailureCountPath"], field("ToleratedFailureCountPath"), true);
        if (v.contains("Label") && (!v["Label"].is_string() || v["Label"].get<std::string>().size() > 40))
            fail(field("Label"), "must be a string of at most 40 characters");
        break;
    }
    case state_type::pass:
    case state_type::succeed:
        break;
    }
    return st;
}

std::shared_ptr<const machine> parse_machine(const json& doc, const std::string& base,
                                             bool top) {
    if (!doc.is_object()) fail(base, "must be a JSON object");
    auto m = std::make_shared<machine>();
    check_query_language(doc, base);
    static const std::set<std::string, std::less<>> top_fields = {
        "StartAt", "States", "Comment", "Version", "TimeoutSeconds", "QueryLanguage"};
    static const std::set<std::string, std::less<>> inner_fields = {"StartAt", "States",
                                                                    "Comment", "QueryLanguage"};
    for (const auto& [k, v] : doc.items())
        if (!(top ? top_fields : inner_fields).count(k))
            fail(join(base, k), top ? "is not a field of a state machine"
                                    : "is not a field of a branch or item processor");
    if (!doc.contains("StartAt")) fail(join(base, "StartAt"), "is required");
    if (!doc.contains("States")) fail(join(base, "States"), "is required");
    m->start_at = need_string(doc["StartAt"], join(base, "StartAt"));
    if (doc.contains("Comment")) m->comment = need_string(doc["Comment"], join(base, "Comment"));
    if (top && doc.contains("Version") && doc["Version"] != "1.0")
        fail("Version", "must be \"1.0\"");
    if (top && doc.contains("TimeoutSeconds"))
        m->timeout_s = positive_integer(doc["TimeoutSeconds"], "TimeoutSeconds");
    const json& states = doc["States"];
    if (!states.is_object() || states.empty())
        fail(join(base, "States"), "must be a non-empty object");
    for (const auto& [name, v] : states.items()) {
        const std::string path = join(base, "States") + "." + name;
        // "State names MUST have length of less than or equal to 80 Unicode characters."
        if (name.empty() || name.size() > 80)
            fail(path, "a state name must have 1 to 80 characters");
        m->order.push_back(name);
        m->states.emplace(name, parse_state(name, v, path));
    }
    if (!m->find(m->start_at))
        fail(join(base, "StartAt"), "'" + m->start_at + "' names no state of these States");
    // Every transition stays inside its own States (a branch cannot jump out).
    for (const auto& name : m->order) {
        const state& st = m->states.at(name);
        const std::string path = join(base, "States") + "." + name;
        auto check = [&](const std::string& next, const std::string& where) {
            if (!next.empty() && !m->find(next))
                fail(path + where, "'" + next + "' names no state of these States");
        };
        check(st.next, ".Next");
        check(st.default_next, ".Default");
        for (std::size_t i = 0; i < st.choices.size(); ++i)
            check(st.choices[i].next, ".Choices[" + std::to_string(i) + "].Next");
        for (std::size_t i = 0; i < st.catches.size(); ++i)
            check(st.catches[i].next, ".Catch[" + std::to_string(i) + "].Next");
    }
    // CreateStateMachine refuses a state nothing leads to (UNREACHABLE_STATE).
    std::set<std::string, std::less<>> reached{m->start_at};
    std::vector<std::string> todo{m->start_at};
    while (!todo.empty()) {
        const state& st = m->states.at(todo.back());
        todo.pop_back();
        std::vector<std::string> targets{st.next, st.default_next};
        for (const auto& c : st.choices) targets.push_back(c.next);
        for (const auto& c : st.catches) targets.push_back(c.next);
        for (auto& t : targets)
            if (!t.empty() && reached.insert(t).second) todo.push_back(t);
    }
    for (const auto& name : m->order)
        if (!reached.count(name))
            fail(join(base, "States") + "." + name,
                 "the state is not reachable from StartAt '" + m->start_at + "'");
    return m;
}

void list_tasks(const machine& m, const std::string& prefix, std::vector<task_ref>& out) {
    for (const auto& name : m.order) {
        const state& st = m.states.at(name);
        const std::string path = prefix.empty() ? name : prefix + "/" + name;
        if (st.type == state_type::task) out.push_back({path, &st});
        for (std::size_t i = 0; i < st.branches.size(); ++i)
            list_tasks(*st.branches[i], path + "/branch " + std::to_string(i), out);
        if (st.item_processor) list_tasks(*st.item_processor, path, out);
    }
}

}  // namespace

std::shared_ptr<const machine> parse_definition(const json& doc) {
    return parse_machine(doc, "", true);
}

std::vector<task_ref> task_states(const machine& m) {
    std::vector<task_ref> out;
    list_tasks(m, "", out);
    return out;
}

}  // namespace coldbrew::states
