// The Step Functions service: see service.hpp.
#include "emulator/states/service.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "emulator/config/config_error.hpp"

namespace coldbrew::states {

namespace {

// StartExecution's input and SendTaskSuccess's output: at most 256 KiB of UTF-8 (API
// Reference, StartExecution "input": "Length constraints apply to the payload size, and are
// expressed as bytes in UTF-8 encoding"; the Step Functions quotas page: 256 KiB).
constexpr std::size_t max_payload_bytes = 256 * 1024;
// StartSyncExecution: a synchronous Express execution lasts at most 5 minutes (developer
// guide, "Choosing workflow type": Synchronous Express "up to five minutes").
constexpr double sync_limit_ms = 5 * 60 * 1000.0;
// maxResults of ListExecutions / GetExecutionHistory / ListStateMachines: 0–1000, 0 (or
// absent) the default of 100 (API Reference, each action's "maxResults").
constexpr std::int64_t default_page = 100;
constexpr std::int64_t max_page = 1000;
// error ≤ 256 and cause ≤ 32768 characters (API Reference, StopExecution, SendTaskFailure).
constexpr std::size_t max_error_chars = 256;
constexpr std::size_t max_cause_chars = 32768;

api_error error_of(std::string type, std::string message) {
    return api_error{std::move(type), std::move(message), 400};
}

// A name as StartExecution takes it (API Reference, StartExecution "name"): 1–80 characters,
// none of them whitespace, < > { } [ ], ? *, " # % \ ^ | ~ ` $ & , ; : /, or a control
// character (U+0000–001F, U+007F–009F).
bool valid_execution_name(std::string_view name) {
    if (name.empty()) return false;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if ((c & 0xC0) != 0x80) ++chars;  // count code points, not bytes
        if (c < 0x20 || c == 0x7F) return false;
        // U+0080–009F arrive as C2 80 … C2 9F.
        if (c == 0xC2 && i + 1 < name.size()) {
            const auto d = static_cast<unsigned char>(name[i + 1]);
            if (d >= 0x80 && d <= 0x9F) return false;
        }
        if (std::string_view(" <>{}[]?*\"#%\\^|~`$&,;:/").find(static_cast<char>(c)) !=
            std::string_view::npos)
            return false;
    }
    return chars <= 80;
}

double seconds(double epoch_ms) { return epoch_ms / 1000.0; }

std::optional<std::string> string_field(const json& req, const char* key) {
    auto it = req.find(key);
    if (it == req.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

// "1 validation error detected: Value null at 'executionArn' failed to satisfy constraint:
// Member must not be null" is how AWS words a missing required member.
api_error missing(const char* key) {
    return error_of("ValidationException",
                    std::string("1 validation error detected: Value null at '") + key +
                        "' failed to satisfy constraint: Member must not be null");
}

std::variant<std::int64_t, api_error> page_size(const json& req) {
    auto it = req.find("maxResults");
    if (it == req.end() || it->is_null()) return default_page;
    if (!it->is_number_integer())
        return error_of("ValidationException", "maxResults must be an integer");
    const auto n = it->get<std::int64_t>();
    if (n < 0 || n > max_page)
        return error_of("ValidationException",
                        "1 validation error detected: Value '" + std::to_string(n) +
                            "' at 'maxResults' failed to satisfy constraint: Member must have "
                            "value less than or equal to 1000");
    return n == 0 ? default_page : n;
}

// nextToken: an opaque string to callers; here the offset of the next item, with the
// operation it belongs to so a token of another listing is refused as AWS refuses it.
std::string make_token(std::string_view what, std::size_t offset) {
    return std::string(what) + "." + std::to_string(offset);
}
std::variant<std::size_t, api_error> read_token(const json& req, std::string_view what) {
    auto it = req.find("nextToken");
    if (it == req.end() || it->is_null()) return std::size_t{0};
    const std::string bad = "Invalid Token: '" + (it->is_string() ? it->get<std::string>()
                                                                    : it->dump()) + "'";
    if (!it->is_string()) return error_of("InvalidToken", bad);
    const auto text = it->get<std::string>();
    if (text.size() <= what.size() + 1 || text.compare(0, what.size(), what) != 0 ||
        text[what.size()] != '.')
        return error_of("InvalidToken", bad);
    std::size_t offset = 0;
    for (std::size_t i = what.size() + 1; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9' || offset > (1u << 30))
            return error_of("InvalidToken", bad);
        offset = offset * 10 + static_cast<std::size_t>(text[i] - '0');
    }
    return offset;
}

std::optional<execution_status> status_named(std::string_view s) {
    for (auto st : {execution_status::running, execution_status::succeeded,
                    execution_status::failed, execution_status::timed_out,
                    execution_status::aborted})
        if (to_string(st) == s) return st;
    return std::nullopt;
}

std::string_view type_name(config::state_machine::kind k) {
    return k == config::state_machine::kind::express ? "EXPRESS" : "STANDARD";
}

}  // namespace

std::string state_machine_arn(const config::settings& s, std::string_view machine_name) {
    return "arn:aws:states:" + s.region + ":" + s.account_id + ":stateMachine:" +
           std::string(machine_name);
}

struct service::impl {
    struct machine_entry {
        const config::state_machine* cfg = nullptr;
        std::shared_ptr<const machine> parsed;
        std::string arn;
        machine_stats stats;
        std::uint64_t next_name = 0;     // index of the next drawn execution name
        std::uint64_t next_express = 0;  // index of the next Express execution id
    };
    struct exec_entry {
        std::unique_ptr<execution> ex;
        std::size_t machine = 0;
        bool express = false;
        std::string input_text;  // as the caller sent it (DescribeExecution answers it so)
        std::string trace_header;
        // The service's own view of the end: a synchronous Express execution stopped at its
        // 5-minute limit is TIMED_OUT, though the interpreter was stopped (aborted).
        bool sync_timed_out = false;
        sched::timer_ptr sync_timer;
        std::function<void(std::variant<json, api_error>)> sync_done;
    };

    const config::stack& stack;
    service_deps deps;
    std::vector<machine_entry> machines;
    std::vector<std::unique_ptr<exec_entry>> executions;  // start order
    std::map<std::string, exec_entry*, std::less<>> by_arn;
    double created_ms = 0;
    bool destroying = false;

    impl(const config::stack& s, service_deps d) : stack(s), deps(std::move(d)) {}

    const machine_entry* machine_by_arn(std::string_view arn) const {
        for (const auto& m : machines)
            if (m.arn == arn) return &m;
        return nullptr;
    }
    machine_entry* machine_for_start(std::string_view ref) {
        for (auto& m : machines)
            if (m.arn == ref || m.cfg->name == ref || m.cfg->state_machine_name == ref) return &m;
        return nullptr;
    }

    static execution_status status_of(const exec_entry& e) {
        if (e.sync_timed_out) return execution_status::timed_out;
        return e.ex->status();
    }
    static std::string error_text(const exec_entry& e) {
        return e.sync_timed_out ? std::string("States.Timeout") : e.ex->error();
    }
    static std::string cause_text(const exec_entry& e) {
        return e.sync_timed_out
                   ? std::string("The synchronous Express execution ran past its 5-minute limit.")
                   : e.ex->cause();
    }

    json describe(const exec_entry& e) const {
        const auto& ex = *e.ex;
        const auto st = status_of(e);
        json out = {{"executionArn", ex.info().execution_arn},
                    {"stateMachineArn", ex.info().state_machine_arn},
                    {"name", ex.info().name},
                    {"status", std::string(to_string(st))},
                    {"startDate", seconds(ex.start_ms())},
                    {"input", e.input_text},
                    {"inputDetails", {{"included", true}}}};
        if (auto stop = ex.stop_ms()) out["stopDate"] = seconds(*stop);
        if (st == execution_status::succeeded && ex.output()) {
            out["output"] = ex.output()->dump();
            out["outputDetails"] = {{"included", true}};
        }
        if (st != execution_status::running && st != execution_status::succeeded) {
            const auto err = error_text(e), cause = cause_text(e);
            if (!err.empty()) out["error"] = err;
            if (!cause.empty()) out["cause"] = cause;
        }
        if (!e.trace_header.empty()) out["traceHeader"] = e.trace_header;
        return out;
    }

    // The answer of StartSyncExecution: DescribeExecution's fields and the billing.
    json sync_answer(const exec_entry& e) const {
        json out = describe(e);
        // Express executions are billed by duration rounded up to the next 100 ms and by
        // memory in 64-MB steps (Step Functions pricing page, Express Workflows); the memory
        // an execution used is not modeled, so it is the first step.
        const double start = e.ex->start_ms();
        const double stop = e.ex->stop_ms().value_or(start);
        const double billed = std::max(100.0, std::ceil((stop - start) / 100.0) * 100.0);
        out["billingDetails"] = {{"billedMemoryUsedInMB", 64},
                                 {"billedDurationInMilliseconds", static_cast<std::int64_t>(billed)}};
        return out;
    }

    void ended(exec_entry& e, execution_status st) {
        auto& stats = machines[e.machine].stats;
        if (e.sync_timed_out) st = execution_status::timed_out;
        switch (st) {
        case execution_status::succeeded: ++stats.succeeded; break;
        case execution_status::failed: ++stats.failed; break;
        case execution_status::timed_out: ++stats.timed_out; break;
        case execution_status::aborted: ++stats.aborted; break;
        case execution_status::running: break;
        }
        stats.state_transitions += e.ex->state_transitions();
        e.sync_timer.reset();
        if (auto done = std::move(e.sync_done)) {
            e.sync_done = nullptr;
            if (!destroying) done(sync_answer(e));
        }
        if (deps.on_end && !destroying) deps.on_end(*e.ex);
    }

    struct prepared {
        machine_entry* m = nullptr;
        json input;
        std::string name;
    };
    std::variant<prepared, api_error> prepare(const start_request& req) {
        prepared p;
        p.m = machine_for_start(req.state_machine_arn);
        if (!p.m) {
            if (req.state_machine_arn.rfind("arn:", 0) == 0 &&
                req.state_machine_arn.find(":stateMachine:") == std::string::npos)
                return error_of("InvalidArn",
                                "Invalid State Machine Arn: '" + req.state_machine_arn + "'");
            return error_of("StateMachineDoesNotExist",
                            "State Machine Does Not Exist: '" + req.state_machine_arn + "'");
        }
        if (req.name && !valid_execution_name(*req.name))
            return error_of("InvalidName", "Invalid Name: '" + *req.name + "'");
        if (req.input.size() > max_payload_bytes)
            return error_of("InvalidExecutionInput",
                            "Invalid State Machine Execution Input: 'the input is larger than "
                            "262144 bytes'");
        p.input = json::parse(req.input, nullptr, false);
        if (p.input.is_discarded())
            return error_of("InvalidExecutionInput",
                            "Invalid State Machine Execution Input: 'not valid JSON'");
        p.name = req.name ? *req.name
                          : models::uuid_v4(*deps.rng, "sfn-execution", p.m->cfg->name,
                                            p.m->next_name++);
        return p;
    }

    // Builds, registers and starts an execution. `sync_done`: StartSyncExecution's answer,
    // with the 5-minute limit armed before the execution starts.
    exec_entry& launch(prepared& p, const start_request& req, bool express,
                       std::function<void(std::variant<json, api_error>)> sync_done = nullptr) {
        const auto& cfg = *p.m->cfg;
        const auto& s = stack.settings;
        execution_info info;
        info.name = p.name;
        info.state_machine_arn = p.m->arn;
        info.state_machine_name = cfg.state_machine_name;
        info.role_arn = cfg.role_arn;
        info.execution_arn = "arn:aws:states:" + s.region + ":" + s.account_id +
                             (express ? ":express:" : ":execution:") + cfg.state_machine_name +
                             ":" + p.name;
        if (express)  // every Express start is its own execution, names repeating or not
            info.execution_arn += ":" + models::uuid_v4(*deps.rng, "sfn-express-id", cfg.name,
                                                        p.m->next_express++);

        auto entry = std::make_unique<exec_entry>();
        auto* e = entry.get();
        e->machine = static_cast<std::size_t>(p.m - machines.data());
        e->express = express;
        e->input_text = req.input;
        e->trace_header = req.trace_header;
        machine_stats* stats = &p.m->stats;

        execution_deps xd;
        xd.clock = deps.clock;
        xd.scheduler = deps.scheduler;
        xd.rng = deps.rng;
        xd.tasks = deps.tasks;
        xd.on_end = [this, e](execution_status st, const json&, const std::string&,
                              const std::string&) { ended(*e, st); };
        xd.on_retry = [stats](const std::string&, const std::string&, int) { ++stats->retries; };
        xd.on_catch = [stats](const std::string&, const std::string&) { ++stats->caught; };
        e->ex = std::make_unique<execution>(p.m->parsed, info, std::move(p.input), std::move(xd));
        by_arn.emplace(info.execution_arn, e);
        executions.push_back(std::move(entry));
        ++stats->started;
        if (sync_done) {
            e->sync_done = std::move(sync_done);
            e->sync_timer = deps.scheduler->after(sync_limit_ms, [e] {
                e->sync_timed_out = true;
                e->ex->stop("States.Timeout", "");
            });
        }
        e->ex->start();
        if (deps.on_start) deps.on_start(*e->ex);
        return *e;
    }

    // An execution the Standard-only operations may see: Express ones are not kept by AWS.
    std::variant<exec_entry*, api_error> standard_execution(const json& req) const {
        auto arn = string_field(req, "executionArn");
        if (!arn) return missing("executionArn");
        if (arn->rfind("arn:aws:states:", 0) != 0 ||
            (arn->find(":execution:") == std::string::npos &&
             arn->find(":express:") == std::string::npos))
            return error_of("InvalidArn", "Invalid Arn: '" + *arn + "'");
        auto it = by_arn.find(*arn);
        if (it == by_arn.end() || it->second->express)
            return error_of("ExecutionDoesNotExist", "Execution Does Not Exist: '" + *arn + "'");
        return it->second;
    }

    // The execution waiting on a task token, or the error SendTask* answers.
    std::variant<execution*, api_error> waiting_on(const json& req) const {
        auto token = string_field(req, "taskToken");
        if (!token) return missing("taskToken");
        // The API takes 1–2048 characters (API Reference, SendTaskSuccess "taskToken").
        if (token->empty() || token->size() > 2048)
            return error_of("InvalidToken", "Invalid Token: '" + *token + "'");
        for (const auto& e : executions)
            if (e->ex->status() == execution_status::running && e->ex->waits_on(*token))
                return e->ex.get();
        return error_of("TaskDoesNotExist", "Task Does Not Exist: '" + *token + "'");
    }
};

service::service(const config::stack& stack, service_deps deps)
    : impl_(std::make_unique<impl>(stack, std::move(deps))) {
    impl_->created_ms = impl_->deps.clock ? static_cast<double>(impl_->deps.clock->epoch_ms()) : 0;
    for (const auto& sm : stack.state_machines) {
        impl::machine_entry m;
        m.cfg = &sm;
        m.arn = state_machine_arn(stack.settings, sm.state_machine_name);
        try {
            // A DefinitionString reaches here as its text.
            const json doc = sm.definition.is_string()
                                 ? json::parse(sm.definition.get<std::string>())
                                 : sm.definition;
            m.parsed = parse_definition(doc);
        } catch (const definition_error& e) {
            std::string message = e.what();
            if (!e.path().empty() && message.rfind(e.path() + ": ", 0) == 0)
                message.erase(0, e.path().size() + 2);
            throw config::config_error(
                sm.where, e.path().empty() ? sm.definition_key : sm.definition_key + "." + e.path(),
                message);
        } catch (const json::exception& e) {  // syntax, or a number overflow
            throw config::config_error(sm.where, sm.definition_key,
                                       std::string("the definition is not JSON: ") + e.what());
        }
        impl_->machines.push_back(std::move(m));
    }
}

service::~service() {
    // Executions call back into the service as they end; none may reach a caller now.
    impl_->destroying = true;
    for (auto& e : impl_->executions) e->sync_timer.reset();
}

std::variant<service::started, api_error> service::start_execution(const start_request& req) {
    auto& im = *impl_;
    auto prep = im.prepare(req);
    if (auto* err = std::get_if<api_error>(&prep)) return *err;
    auto& p = std::get<impl::prepared>(prep);
    const bool express = p.m->cfg->type == config::state_machine::kind::express;
    if (!express) {
        // Standard: exactly once per name (API Reference, StartExecution): a running
        // execution of that name and the same input is answered again; a different input,
        // or an execution of that name that has ended, is ExecutionAlreadyExists.
        const auto arn = "arn:aws:states:" + im.stack.settings.region + ":" +
                         im.stack.settings.account_id + ":execution:" +
                         p.m->cfg->state_machine_name + ":" + p.name;
        if (auto it = im.by_arn.find(arn); it != im.by_arn.end()) {
            const auto& old = *it->second;
            // "Identical" input (API Reference, StartExecution): the same text.
            const bool same_input = old.input_text == req.input;
            if (old.ex->status() == execution_status::running && same_input) {
                ++p.m->stats.duplicate_starts;
                return started{arn, old.ex->start_ms(), true};
            }
            return error_of("ExecutionAlreadyExists", "Execution Already Exists: '" + arn + "'");
        }
    }
    auto& e = im.launch(p, req, express);
    return started{e.ex->info().execution_arn, e.ex->start_ms(), false};
}

void service::start_sync_execution(const start_request& req,
                                   std::function<void(std::variant<json, api_error>)> done) {
    auto& im = *impl_;
    auto prep = im.prepare(req);
    if (auto* err = std::get_if<api_error>(&prep)) {
        done(*err);
        return;
    }
    auto& p = std::get<impl::prepared>(prep);
    if (p.m->cfg->type != config::state_machine::kind::express) {
        done(error_of("StateMachineTypeNotSupported",
                      "This operation is not supported by this type of state machine"));
        return;
    }
    im.launch(p, req, true, std::move(done));
}

std::variant<json, api_error> service::describe_execution(const json& req) const {
    auto found = impl_->standard_execution(req);
    if (auto* err = std::get_if<api_error>(&found)) return *err;
    return impl_->describe(*std::get<impl::exec_entry*>(found));
}

std::variant<json, api_error> service::get_execution_history(const json& req) const {
    auto found = impl_->standard_execution(req);
    if (auto* err = std::get_if<api_error>(&found)) return *err;
    const auto& e = *std::get<impl::exec_entry*>(found);
    auto size = page_size(req);
    if (auto* err = std::get_if<api_error>(&size)) return *err;
    auto from = read_token(req, "history");
    if (auto* err = std::get_if<api_error>(&from)) return *err;
    bool reverse = false, include_data = true;
    if (auto it = req.find("reverseOrder"); it != req.end() && it->is_boolean()) reverse = *it;
    if (auto it = req.find("includeExecutionData"); it != req.end() && it->is_boolean())
        include_data = *it;

    const auto& events = e.ex->history();
    const std::size_t n = events.size();
    const std::size_t start = std::get<std::size_t>(from);
    const auto limit = static_cast<std::size_t>(std::get<std::int64_t>(size));
    json out = {{"events", json::array()}};
    std::size_t i = start;
    for (; i < n && i - start < limit; ++i) {
        json ev = events[reverse ? n - 1 - i : i].to_json();
        if (!include_data) {
            // includeExecutionData false leaves input and output out of every event's details.
            for (auto& [key, details] : ev.items()) {
                if (!details.is_object()) continue;
                details.erase("input");
                details.erase("output");
                if (details.contains("inputDetails")) details["inputDetails"]["included"] = false;
                if (details.contains("outputDetails")) details["outputDetails"]["included"] = false;
            }
        }
        out["events"].push_back(std::move(ev));
    }
    if (i < n) out["nextToken"] = make_token("history", i);
    return out;
}

std::variant<json, api_error> service::stop_execution(const json& req) {
    auto found = impl_->standard_execution(req);
    if (auto* err = std::get_if<api_error>(&found)) return *err;
    auto& e = *std::get<impl::exec_entry*>(found);
    const auto error = string_field(req, "error").value_or("");
    const auto cause = string_field(req, "cause").value_or("");
    if (error.size() > max_error_chars || cause.size() > max_cause_chars)
        return error_of("ValidationException", "error or cause is too long");
    e.ex->stop(error, cause);
    const double stop = e.ex->stop_ms().value_or(
        impl_->deps.clock ? static_cast<double>(impl_->deps.clock->epoch_ms()) : 0);
    return json{{"stopDate", seconds(stop)}};
}

std::variant<json, api_error> service::list_executions(const json& req) const {
    const auto& im = *impl_;
    auto arn = string_field(req, "stateMachineArn");
    if (!arn) return missing("stateMachineArn");
    if (arn->rfind("arn:aws:states:", 0) != 0 || arn->find(":stateMachine:") == std::string::npos)
        return error_of("InvalidArn", "Invalid State Machine Arn: '" + *arn + "'");
    const auto* m = im.machine_by_arn(*arn);
    if (!m) return error_of("StateMachineDoesNotExist", "State Machine Does Not Exist: '" + *arn + "'");
    // AWS keeps no list of Express executions (API Reference, ListExecutions: "not supported
    // by EXPRESS state machines").
    if (m->cfg->type == config::state_machine::kind::express)
        return error_of("StateMachineTypeNotSupported",
                        "This operation is not supported by this type of state machine");
    std::optional<execution_status> filter;
    if (auto it = req.find("statusFilter"); it != req.end() && !it->is_null()) {
        if (it->is_string()) filter = status_named(it->get<std::string>());
        if (!filter)
            return error_of("ValidationException",
                            "1 validation error detected: Value '" +
                                (it->is_string() ? it->get<std::string>() : it->dump()) +
                                "' at 'statusFilter' failed to satisfy constraint: Member must "
                                "satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, "
                                "ABORTED, FAILED, RUNNING]");
    }
    auto size = page_size(req);
    if (auto* err = std::get_if<api_error>(&size)) return *err;
    auto from = read_token(req, "executions");
    if (auto* err = std::get_if<api_error>(&from)) return *err;

    // Most recent first (API Reference, ListExecutions: "sorted by time, with the most recent
    // execution first").
    std::vector<const impl::exec_entry*> match;
    const auto index = static_cast<std::size_t>(m - im.machines.data());
    for (auto it = im.executions.rbegin(); it != im.executions.rend(); ++it)
        if ((*it)->machine == index && (!filter || impl::status_of(**it) == *filter))
            match.push_back(it->get());
    const std::size_t start = std::get<std::size_t>(from);
    const auto limit = static_cast<std::size_t>(std::get<std::int64_t>(size));
    json out = {{"executions", json::array()}};
    std::size_t i = start;
    for (; i < match.size() && i - start < limit; ++i) {
        const auto& ex = *match[i]->ex;
        json item = {{"executionArn", ex.info().execution_arn},
                     {"stateMachineArn", ex.info().state_machine_arn},
                     {"name", ex.info().name},
                     {"status", std::string(to_string(impl::status_of(*match[i])))},
                     {"startDate", seconds(ex.start_ms())}};
        if (auto stop = ex.stop_ms()) item["stopDate"] = seconds(*stop);
        out["executions"].push_back(std::move(item));
    }
    if (i < match.size()) out["nextToken"] = make_token("executions", i);
    return out;
}

std::variant<json, api_error> service::list_state_machines(const json& req) const {
    const auto& im = *impl_;
    auto size = page_size(req);
    if (auto* err = std::get_if<api_error>(&size)) return *err;
    auto from = read_token(req, "machines");
    if (auto* err = std::get_if<api_error>(&from)) return *err;
    const std::size_t start = std::get<std::size_t>(from);
    const auto limit = static_cast<std::size_t>(std::get<std::int64_t>(size));
    json out = {{"stateMachines", json::array()}};
    std::size_t i = start;
    for (; i < im.machines.size() && i - start < limit; ++i) {
        const auto& m = im.machines[i];
        out["stateMachines"].push_back({{"stateMachineArn", m.arn},
                                        {"name", m.cfg->state_machine_name},
                                        {"type", std::string(type_name(m.cfg->type))},
                                        {"creationDate", seconds(im.created_ms)}});
    }
    if (i < im.machines.size()) out["nextToken"] = make_token("machines", i);
    return out;
}

std::variant<json, api_error> service::describe_state_machine(const json& req) const {
    const auto& im = *impl_;
    auto arn = string_field(req, "stateMachineArn");
    if (!arn) return missing("stateMachineArn");
    if (arn->rfind("arn:aws:states:", 0) != 0 || arn->find(":stateMachine:") == std::string::npos)
        return error_of("InvalidArn", "Invalid State Machine Arn: '" + *arn + "'");
    const auto* m = im.machine_by_arn(*arn);
    if (!m) return error_of("StateMachineDoesNotExist", "State Machine Does Not Exist: '" + *arn + "'");
    json out = {{"stateMachineArn", m->arn},
                {"name", m->cfg->state_machine_name},
                {"status", "ACTIVE"},
                {"definition", m->cfg->definition.is_string() ? m->cfg->definition.get<std::string>()
                                                              : m->cfg->definition.dump()},
                {"roleArn", m->cfg->role_arn},
                {"type", std::string(type_name(m->cfg->type))},
                {"creationDate", seconds(im.created_ms)}};
    return out;
}

std::variant<json, api_error> service::send_task_success(const json& req) {
    auto found = impl_->waiting_on(req);
    if (auto* err = std::get_if<api_error>(&found)) return *err;
    auto output_text = string_field(req, "output");
    if (!output_text) return missing("output");
    if (output_text->size() > max_payload_bytes)
        return error_of("InvalidOutput", "Invalid Output: 'the output is larger than 262144 bytes'");
    json output = json::parse(*output_text, nullptr, false);
    if (output.is_discarded()) return error_of("InvalidOutput", "Invalid Output: 'not valid JSON'");
    std::get<execution*>(found)->send_task_success(req["taskToken"].get<std::string>(), output);
    return json::object();
}

std::variant<json, api_error> service::send_task_failure(const json& req) {
    auto found = impl_->waiting_on(req);
    if (auto* err = std::get_if<api_error>(&found)) return *err;
    const auto error = string_field(req, "error").value_or("");
    const auto cause = string_field(req, "cause").value_or("");
    if (error.size() > max_error_chars || cause.size() > max_cause_chars)
        return error_of("ValidationException", "error or cause is too long");
    std::get<execution*>(found)->send_task_failure(req["taskToken"].get<std::string>(), error,
                                                   cause);
    return json::object();
}

std::variant<json, api_error> service::send_task_heartbeat(const json& req) {
    auto found = impl_->waiting_on(req);
    if (auto* err = std::get_if<api_error>(&found)) return *err;
    std::get<execution*>(found)->send_task_heartbeat(req["taskToken"].get<std::string>());
    return json::object();
}

std::shared_ptr<const machine> service::find(std::string_view name) const {
    for (const auto& m : impl_->machines)
        if (m.cfg->name == name) return m.parsed;
    return nullptr;
}

const execution* service::find_execution(std::string_view arn) const {
    auto it = impl_->by_arn.find(arn);
    return it == impl_->by_arn.end() ? nullptr : it->second->ex.get();
}

std::vector<std::pair<std::string, machine_stats>> service::stats() const {
    std::vector<std::pair<std::string, machine_stats>> out;
    for (const auto& m : impl_->machines) out.emplace_back(m.cfg->name, m.stats);
    return out;
}

void service::reset_counters() {
    for (auto& m : impl_->machines) m.stats = machine_stats{};
}

std::size_t service::running() const noexcept {
    std::size_t n = 0;
    for (const auto& e : impl_->executions)
        if (e->ex->status() == execution_status::running) ++n;
    return n;
}

void service::stop_all() {
    // By index: an on_end callback may start another execution, growing the list.
    auto& all = impl_->executions;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i]->ex->status() == execution_status::running)
            all[i]->ex->stop("coldbrew.Shutdown", "coldbrew is shutting down");
}

}  // namespace coldbrew::states
