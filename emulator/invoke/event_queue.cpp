#include "emulator/invoke/event_queue.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <system_error>
#include <utility>
#include <vector>

#include "emulator/functions/service_errors.hpp"

namespace coldbrew::invoke {

namespace {

// A JSON string literal; bytes that are not UTF-8 are replaced rather than thrown on.
std::string json_string(std::string_view text) {
    return nlohmann::json(std::string(text))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Drops the whitespace between tokens of valid JSON text, leaving strings untouched, so a
// pretty-printed event stays on one line and its numbers keep their exact spelling (a parse
// and re-dump would round integers beyond 64 bits).
std::string compact(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            out += c;
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        if (c == '"') in_string = true;
        out += c;
    }
    return out;
}

// A payload as a JSON value: itself when it is JSON, else a string; null when empty.
std::string embed(std::string_view text) {
    if (text.empty()) return "null";
    if (nlohmann::json::accept(text.begin(), text.end())) return compact(text);
    return json_string(text);
}

models::attempt_outcome classify(functions::outcome kind) {
    switch (kind) {
    case functions::outcome::success:
        return models::attempt_outcome::success;
    case functions::outcome::throttled:
        return models::attempt_outcome::throttled;
    case functions::outcome::function_error:
    // An event is at most 1 MB, so the pool's 6 MB limit cannot refuse it; should it ever,
    // retrying cannot help, so it is bounded like a function error.
    case functions::outcome::too_large:
        return models::attempt_outcome::function_error;
    case functions::outcome::unavailable:
        break;
    }
    return models::attempt_outcome::system_error;
}

std::string_view outcome_name(models::attempt_outcome o) {
    switch (o) {
    case models::attempt_outcome::success:
        return "succeeded";
    case models::attempt_outcome::function_error:
        return "function error";
    case models::attempt_outcome::throttled:
        return "throttled";
    case models::attempt_outcome::system_error:
        return "service error";
    }
    return "?";
}

}  // namespace

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
    // Floor division, so instants before 1970 still print their own millisecond.
    std::int64_t secs = ms / 1000, millis = ms % 1000;
    if (millis < 0) {
        millis += 1000;
        secs -= 1;
    }
    const std::time_t tt = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[40];
    const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(millis));
    return std::string(buf, n) + frac;
}

std::string destination_record::to_json() const {
    // Built by hand to keep Lambda's field order and the payloads' own text.
    std::string out;
    out.reserve(256 + request_payload.size() + response_payload.size());
    out += "{\"version\":\"1.0\",\"timestamp\":";
    out += json_string(timestamp);
    out += ",\"requestContext\":{\"requestId\":";
    out += json_string(request_id);
    out += ",\"functionArn\":";
    out += json_string(function_arn);
    out += ",\"condition\":";
    out += json_string(condition);
    out += ",\"approximateInvokeCount\":";
    out += std::to_string(approximate_invoke_count);
    out += "},\"requestPayload\":";
    out += embed(request_payload);
    if (response) {
        out += ",\"responseContext\":{\"statusCode\":";
        out += std::to_string(response->status_code);
        if (response->executed_version) {
            out += ",\"executedVersion\":";
            out += json_string(*response->executed_version);
        }
        if (response->function_error) {
            out += ",\"functionError\":";
            out += json_string(*response->function_error);
        }
        out += "},\"responsePayload\":";
        out += embed(response_payload);
    }
    out += '}';
    return out;
}

void set_response(destination_record& record, const functions::invocation_result& result) {
    destination_record::response_context ctx;
    auto service = [&](const functions::service_error& e) {
        ctx.status_code = e.status;
        record.response_payload = e.body;
    };
    switch (result.kind) {
    case functions::outcome::success:
        ctx.executed_version = "$LATEST";
        record.response_payload = result.payload;
        break;
    case functions::outcome::function_error:
        // X-Amz-Function-Error is "Unhandled" for every function error coldbrew reports.
        ctx.executed_version = "$LATEST";
        ctx.function_error = "Unhandled";
        record.response_payload = result.payload;
        break;
    case functions::outcome::throttled:
        service(functions::too_many_requests(result.throttle_reason));
        break;
    case functions::outcome::too_large:
        service(functions::request_too_large(result.message));
        break;
    case functions::outcome::unavailable:
        service(functions::service_exception(result.message));
        break;
    }
    record.response = ctx;
}

event_queue::event_queue(
    sched::scheduler& scheduler, const coldbrew::clock& clock, std::string region,
    std::string account_id,
    std::function<void(const std::string& function, functions::invocation)> invoke)
    : scheduler_(scheduler), clock_(clock), region_(std::move(region)),
      account_id_(std::move(account_id)), invoke_(std::move(invoke)),
      self_(std::make_shared<event_queue*>(this)) {}

event_queue::~event_queue() {
    try {
        shutdown();
        // Attempts still in flight will never be heard from: end them now so none is lost.
        std::vector<std::uint64_t> in_flight;
        for (const auto& [id, ev] : events_) in_flight.push_back(id);
        for (auto id : in_flight) finish(id, condition_shutdown);
    } catch (const std::exception& e) {
        spdlog::error("async event queue: {}", e.what());
    }
    self_.reset();
    due_.clear();
    for (auto& [path, file] : files_) std::fclose(file);
}

void event_queue::shutdown() {
    if (shut_down_) return;
    shut_down_ = true;
    due_.clear();
    std::vector<std::uint64_t> queued;
    for (const auto& [id, ev] : events_)
        if (!ev.in_flight) queued.push_back(id);
    if (!queued.empty())
        spdlog::info("async event queue: {} queued event(s) ended at shutdown ({})",
                     queued.size(), condition_shutdown);
    for (auto id : queued) finish(id, condition_shutdown);
}

event_queue::function_entry& event_queue::entry(const std::string& function) {
    auto [it, inserted] = functions_.try_emplace(function);
    if (inserted) it->second.name = function;
    return it->second;
}

void event_queue::configure(const std::string& function, const std::string& function_name,
                            async_function_config cfg) {
    models::validate(cfg.retry);
    auto& e = entry(function);
    e.name = function_name;
    e.cfg = std::move(cfg);
}

event_queue::stats event_queue::counters(const std::string& function) const {
    auto it = functions_.find(function);
    return it == functions_.end() ? stats{} : it->second.counters;
}

void event_queue::enqueue(const std::string& function, std::string request_id,
                          std::string payload) {
    auto& e = entry(function);
    ++e.counters.accepted;
    ++e.counters.pending;
    const std::uint64_t id = next_id_++;
    event ev;
    ev.id = id;
    ev.function = function;
    ev.request_id = std::move(request_id);
    ev.payload = std::move(payload);
    ev.accepted_ms = scheduler_.now_ms();
    events_.emplace(id, std::move(ev));
    if (shut_down_) {
        finish(id, condition_shutdown);
        return;
    }
    schedule(id, 0);
}

double event_queue::age_ms(const event& ev) const { return scheduler_.now_ms() - ev.accepted_ms; }

void event_queue::schedule(std::uint64_t id, double delay_ms) {
    due_[id] = scheduler_.after(delay_ms, [this, id] { on_due(id); });
}

void event_queue::on_due(std::uint64_t id) {
    try {
        // Dropping the handle from inside its own callback is allowed; the lambda has been
        // moved out of it.
        due_.erase(id);
        auto it = events_.find(id);
        if (it != events_.end() && !it->second.in_flight) start_attempt(it->second);
    } catch (const std::exception& e) {
        spdlog::error("async event queue: {}", e.what());
    }
}

void event_queue::start_attempt(event& ev) {
    const std::uint64_t id = ev.id;
    const int attempt = ++ev.attempts;
    ev.in_flight = true;
    const std::string function = ev.function;
    functions::invocation inv;
    inv.payload = ev.payload;
    inv.request_id = ev.request_id;
    inv.on_done = [weak = std::weak_ptr<event_queue*>(self_), id,
                   attempt](functions::invocation_result r) {
        const auto self = weak.lock();
        if (!self) return;
        try {
            (*self)->on_result(id, attempt, std::move(r));
        } catch (const std::exception& e) {
            spdlog::error("async event queue: {}", e.what());
        }
    };
    // `ev` may be gone once invoke_ returns: the answer can come before it does.
    try {
        invoke_(function, std::move(inv));
    } catch (const std::exception& e) {
        auto it = events_.find(id);
        if (it == events_.end() || !it->second.in_flight || it->second.attempts != attempt)
            return;
        spdlog::error("{}: async event {} could not be invoked: {}", function,
                      it->second.request_id, e.what());
        it->second.in_flight = false;
        // As Lambda treats its own 5xx: back to the queue with backoff.
        functions::invocation_result r;
        r.kind = functions::outcome::unavailable;
        r.request_id = it->second.request_id;
        r.message = e.what();
        settle(it->second, models::attempt_outcome::system_error, std::move(r));
    }
}

void event_queue::on_result(std::uint64_t id, int attempt, functions::invocation_result r) {
    auto it = events_.find(id);
    if (it == events_.end() || !it->second.in_flight || it->second.attempts != attempt) return;
    event& ev = it->second;
    ev.in_flight = false;
    r.log.clear();
    if (r.kind == functions::outcome::unavailable) {
        // The function pool is shutting down: nothing will run this event any more.
        ev.last = std::move(r);
        finish(id, condition_shutdown);
        return;
    }
    settle(ev, classify(r.kind), std::move(r));
}

void event_queue::settle(event& ev, models::attempt_outcome outcome,
                         functions::invocation_result r) {
    using models::attempt_outcome;
    const std::uint64_t id = ev.id;
    if (outcome == attempt_outcome::function_error) ++ev.function_errors;
    if (outcome == attempt_outcome::throttled || outcome == attempt_outcome::system_error)
        ++ev.throttles;
    ev.last = std::move(r);
    if (outcome == attempt_outcome::success) {
        finish(id, models::condition_success);
        return;
    }
    if (shut_down_) {
        finish(id, condition_shutdown);
        return;
    }
    auto& e = entry(ev.function);
    const auto d =
        models::next_attempt(e.cfg.retry, outcome, ev.function_errors, ev.throttles, age_ms(ev));
    if (!d.retry) {
        finish(id, d.give_up_reason);
        return;
    }
    ++e.counters.retried;
    spdlog::debug("{}: async event {} attempt {}: {}; retry in {:.0f} ms (modeled)", e.name,
                  ev.request_id, ev.attempts, outcome_name(outcome), d.delay_ms);
    schedule(id, d.delay_ms);
}

void event_queue::finish(std::uint64_t id, std::string_view condition) {
    auto it = events_.find(id);
    if (it == events_.end()) return;
    const event& ev = it->second;
    auto& e = entry(ev.function);

    destination_record record;
    record.timestamp = iso8601_utc(clock_.wall());
    record.request_id = ev.request_id;
    record.function_arn =
        "arn:aws:lambda:" + region_ + ":" + account_id_ + ":function:" + e.name + ":$LATEST";
    record.condition = std::string(condition);
    record.approximate_invoke_count = ev.attempts;
    record.request_payload = ev.payload;
    if (ev.last) set_response(record, *ev.last);

    if (condition == models::condition_success) {
        ++e.counters.succeeded;
        if (e.cfg.on_success) write(*e.cfg.on_success, record.to_json());
    } else {
        ++e.counters.failed;
        if (e.cfg.on_failure) {
            write(*e.cfg.on_failure, record.to_json());
        } else {
            spdlog::warn("{}: async event {} discarded: {} after {} attempt(s) (no on-failure "
                         "destination configured)",
                         e.name, ev.request_id, condition, ev.attempts);
        }
    }
    --e.counters.pending;
    events_.erase(it);
}

void event_queue::write(const std::filesystem::path& path, const std::string& line) {
    std::FILE* file = nullptr;
    if (auto it = files_.find(path); it != files_.end()) {
        file = it->second;
    } else {
        std::error_code ec;
        if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
        file = std::fopen(path.c_str(), "a");
        if (!file) {
            spdlog::error("could not open destination {}: {}; record not written: {}",
                          path.string(), std::strerror(errno), line);
            return;
        }
        files_.emplace(path, file);
    }
    const bool ok = std::fwrite(line.data(), 1, line.size(), file) == line.size() &&
                    std::fputc('\n', file) != EOF && std::fflush(file) == 0;
    if (!ok)
        spdlog::error("could not write to destination {}: {}; record: {}", path.string(),
                      std::strerror(errno), line);
}

}  // namespace coldbrew::invoke
