#include "emulator/config/openapi_sfn.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <nlohmann/json.hpp>

namespace coldbrew::config::detail {

namespace {

constexpr std::array<std::string_view, 8> operation_keys = {
    "get", "put", "post", "delete", "options", "head", "patch", "x-amazon-apigateway-any-method"};

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
}

// The text of a Fn::Sub (short or long form, the string of its list form); nullptr otherwise.
const ynode* sub_text(const ynode& n) {
    if (n.is_scalar() && n.tag == "!Sub") return &n;
    const ynode* sub = n.is_map() && n.members.size() == 1 ? n.find("Fn::Sub") : nullptr;
    if (!sub) return nullptr;
    if (sub->is_scalar()) return sub;
    if (sub->is_sequence() && !sub->items.empty() && sub->items[0].is_scalar()) return &sub->items[0];
    return nullptr;
}

// Which machine a text names: ${Id} / ${Id.Arn} (a Sub), or the machine's ARN written out.
const state_machine* named_in_text(std::string_view text, const std::vector<state_machine>& machines,
                                   const settings& s) {
    for (const auto& m : machines) {
        if (text.find("${" + m.name + "}") != std::string_view::npos ||
            text.find("${" + m.name + ".Arn}") != std::string_view::npos ||
            text.find(state_machine_arn_of(m, s)) != std::string_view::npos) {
            return &m;
        }
    }
    return nullptr;
}

// The machine a StateMachineArn value refers to.
const state_machine* referenced(const ynode& n, const std::vector<state_machine>& machines,
                                const settings& s) {
    auto by_id = [&](std::string id) -> const state_machine* {
        if (auto dot = id.find('.'); dot != std::string::npos) id.resize(dot);  // X.Arn
        auto it = std::find_if(machines.begin(), machines.end(),
                               [&](const state_machine& m) { return m.name == id; });
        return it == machines.end() ? nullptr : &*it;
    };
    if (n.is_scalar() && (n.tag == "!Ref" || n.tag == "!GetAtt")) return by_id(n.text);
    if (n.is_map() && n.members.size() == 1) {
        if (const ynode* ref = n.find("Ref"); ref && ref->is_scalar()) return by_id(ref->text);
        if (const ynode* att = n.find("Fn::GetAtt")) {
            if (att->is_scalar()) return by_id(att->text);
            if (att->is_sequence() && !att->items.empty() && att->items[0].is_scalar())
                return by_id(att->items[0].text);
        }
    }
    if (const ynode* sub = sub_text(n)) return named_in_text(sub->text, machines, s);
    if (n.is_scalar()) {
        if (const state_machine* m = named_in_text(n.text, machines, s)) return m;
        return by_id(n.text);
    }
    return nullptr;
}

// The action after "states:action/" in a REST integration uri, or after "StepFunctions-" in
// an HTTP API subtype.
route::sfn_action action_of(std::string_view action, const ynode& at) {
    if (action == "StartExecution") return route::sfn_action::start_execution;
    if (action == "StartSyncExecution") return route::sfn_action::start_sync_execution;
    fail(at, "Step Functions integration action " + std::string(action) +
                 " is not emulated; only StartExecution and StartSyncExecution start executions");
}

std::string scalar_text(const ynode& n) {
    if (const ynode* sub = sub_text(n)) return sub->text;
    return n.is_scalar() ? n.text : std::string();
}

}  // namespace

std::string state_machine_arn_of(const state_machine& m, const settings& s) {
    return "arn:aws:states:" + s.region + ":" + s.account_id + ":stateMachine:" +
           m.state_machine_name;
}

openapi_sfn_read read_openapi_sfn(const ynode& body, bool http_api,
                                  const std::vector<state_machine>& machines, const settings& s) {
    openapi_sfn_read out;
    const ynode* paths = body.find("paths");
    if (!paths || !paths->is_map()) return out;
    for (const auto& p : paths->members) {
        if (!p.value.is_map()) continue;
        for (const auto& op : p.value.members) {
            if (std::find(operation_keys.begin(), operation_keys.end(), op.key) ==
                operation_keys.end())
                continue;
            const ynode* integ = op.value.find("x-amazon-apigateway-integration");
            if (!integ || !integ->is_map()) {
                ++out.other_integrations;
                continue;
            }
            openapi_sfn_route r;
            r.method = op.key == "x-amazon-apigateway-any-method" ? "ANY" : upper(op.key);
            r.path = p.key;
            r.where = integ->where;
            const state_machine* machine = nullptr;
            const ynode* subtype = integ->find("integrationSubtype");
            const std::string uri = integ->find("uri") ? scalar_text(*integ->find("uri")) : "";
            const std::string_view rest_marker = ":states:action/";
            if (http_api && subtype && subtype->is_scalar() &&
                subtype->text.starts_with("StepFunctions-")) {
                r.action = action_of(std::string_view(subtype->text).substr(14), *subtype);
                const ynode* params = integ->find("requestParameters");
                const ynode* arn = params ? params->find("StateMachineArn") : nullptr;
                if (!arn) {
                    fail(*integ, "a " + subtype->text +
                                     " integration needs requestParameters.StateMachineArn");
                }
                machine = referenced(*arn, machines, s);
                if (!machine) {
                    fail(*arn, "StateMachineArn names no state machine of this template");
                }
                nlohmann::json rp = nlohmann::json::object();
                for (const auto& m : params->members) {
                    rp[m.key] = m.key == "StateMachineArn" ? state_machine_arn_of(*machine, s)
                                                           : scalar_text(m.value);
                }
                // Template values are the author's bytes: invalid UTF-8 is replaced (U+FFFD),
                // not thrown out of the loader (a found crash).
                r.request_template = rp.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            } else if (!http_api && uri.find(rest_marker) != std::string::npos) {
                r.action = action_of(
                    std::string_view(uri).substr(uri.find(rest_marker) + rest_marker.size()),
                    *integ->find("uri"));
                const ynode* templates = integ->find("requestTemplates");
                const ynode* json_template =
                    templates ? templates->find("application/json") : nullptr;
                if (!json_template) {
                    fail(*integ, "a Step Functions integration needs a requestTemplates "
                                 "application/json template naming the stateMachineArn");
                }
                std::string text = scalar_text(*json_template);
                machine = named_in_text(text, machines, s);
                if (!machine) {
                    fail(*json_template,
                         "the request template names no state machine of this template "
                         "(write \"stateMachineArn\": \"${Machine}\" in a !Sub)");
                }
                const std::string arn = state_machine_arn_of(*machine, s);
                replace_all(text, "${" + machine->name + ".Arn}", arn);
                replace_all(text, "${" + machine->name + "}", arn);
                r.request_template = std::move(text);
            } else {
                ++out.other_integrations;
                continue;
            }
            r.state_machine = machine->name;
            out.routes.push_back(std::move(r));
        }
    }
    return out;
}

}  // namespace coldbrew::config::detail
