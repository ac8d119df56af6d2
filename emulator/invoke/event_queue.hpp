#pragma once
// The asynchronous (Event) invocation queue: one per coldbrew, holding every function's events.
// An accepted event is tried at once (on the next loop turn), then retried as
// models::next_attempt decides (by default function errors twice, ~1 min then ~2 min;
// throttles and system errors with backoff up to the maximum event age), each delay in modeled
// ms waited on the scheduler, and an event's age measured on the scheduler's modeled clock.
// Every attempt of an event carries the event's request id, as Lambda reuses it across retries.
//
// Nothing is lost while coldbrew runs. Each event ends in exactly one destination record:
//  - success: to the on-success destination when configured (else nothing is written);
//  - given up (RetriesExhausted, EventAgeExceeded) or cut short by shutdown
//    (condition_shutdown): to the on-failure destination when configured, else a spdlog
//    warning naming the function, request id and condition.
// Destinations are JSONL files opened in append mode (parent folders created), one record a
// line, flushed as written. A record that cannot be written is logged with spdlog error, the
// record included.
//
// Lambda's sources: "How Lambda handles errors and retries with asynchronous invocation" and
// "Capturing records of Lambda asynchronous invocations" (AWS Lambda Developer Guide); shared
// spec model-data §8c. What Lambda does not document is marked "coldbrew's" below.
//
// Single-threaded: every member is called on the loop's thread. No exception leaves a libuv
// callback.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/clock/clock.hpp"
#include "emulator/functions/function_pool.hpp"
#include "emulator/scheduler/scheduler.hpp"
#include "models/retry/async_retry.hpp"

namespace coldbrew::invoke {

// requestContext.condition of an event still queued (waiting for its first attempt or for a
// retry) when coldbrew shuts down. coldbrew's: Lambda keeps its queue and has no such case.
inline constexpr std::string_view condition_shutdown = "EmulatorShutdown";

// One record in Lambda's destination format (AWS Lambda Developer Guide, "Capturing records
// of Lambda asynchronous invocations", example invocation record), written as one JSON line
// with the fields in Lambda's order:
//   {"version":"1.0","timestamp":"2019-11-14T18:16:05.568Z",
//    "requestContext":{"requestId":…,"functionArn":"arn:aws:lambda:<region>:<account>:function:
//      <name>:$LATEST","condition":"Success"|"RetriesExhausted"|"EventAgeExceeded"|
//      "EmulatorShutdown","approximateInvokeCount":N},
//    "requestPayload":<the event>,
//    "responseContext":{"statusCode":200,"executedVersion":"$LATEST","functionError":"Unhandled"},
//    "responsePayload":<the function's result or error>}
// All of the above is Lambda's, except (coldbrew's, where Lambda documents nothing):
//  - approximateInvokeCount counts every attempt handed to the function pool, throttled ones
//    included;
//  - when the last attempt did not reach the function (throttled, service error),
//    responseContext is {"statusCode":<429|413|500>} with no executedVersion and
//    responsePayload is the service error's JSON body (as the Invoke API returns it);
//  - when no attempt has answered yet (shutdown before the first), responseContext and
//    responsePayload are absent;
//  - a payload that is not JSON text is written as a JSON string; an empty one as null.
struct destination_record {
    struct response_context {
        int status_code = 200;
        std::optional<std::string> executed_version;  // "$LATEST" when the function ran
        std::optional<std::string> function_error;    // "Unhandled" on a function error
    };

    std::string timestamp;  // ISO 8601, UTC, milliseconds: "2019-11-14T18:16:05.568Z"
    std::string request_id;
    std::string function_arn;
    std::string condition;
    int approximate_invoke_count = 0;
    std::string request_payload;  // JSON text
    std::optional<response_context> response;
    std::string response_payload;  // JSON text; used only with `response`

    // One line of JSON, no trailing newline. Bytes that are not UTF-8 are replaced (U+FFFD).
    std::string to_json() const;
};

// "2019-11-14T18:16:05.568Z" for `t`, in UTC.
std::string iso8601_utc(std::chrono::system_clock::time_point t);

// The response part of a record for one attempt's result: success and function_error as the
// function answered; throttled, too_large and unavailable as the service error the Invoke API
// would have returned.
void set_response(destination_record& record, const functions::invocation_result& result);

struct async_function_config {
    models::async_retry_config retry;
    std::optional<std::filesystem::path> on_success;  // JSONL file; nothing written when unset
    std::optional<std::filesystem::path> on_failure;  // JSONL file; spdlog warn when unset
};

class event_queue {
public:
    // `invoke` runs one attempt (the caller binds it to the named function's
    // function_pool::invoke) and must call invocation::on_done exactly once, on the loop,
    // possibly before it returns. `scheduler` waits the retry delays and gives event ages
    // (modeled ms); `clock` gives record timestamps (wall). Both must outlive the queue.
    // `region` and `account_id` go into functionArn.
    event_queue(sched::scheduler& scheduler, const coldbrew::clock& clock, std::string region,
                std::string account_id,
                std::function<void(const std::string& function, functions::invocation)> invoke);
    // Shuts down (see shutdown()), then ends every event whose attempt is still in flight
    // with condition_shutdown (a result arriving later is ignored), cancels the timers and
    // closes the destination files.
    ~event_queue();
    event_queue(const event_queue&) = delete;
    event_queue& operator=(const event_queue&) = delete;

    // Sets the retry policy and destinations of `function` (the key `invoke` is called with)
    // and its deployed FunctionName (for functionArn). Unconfigured functions use the
    // defaults, no destinations, and their key as the name. Throws std::invalid_argument
    // when cfg.retry is outside EventInvokeConfig's limits (models::validate).
    void configure(const std::string& function, const std::string& function_name,
                   async_function_config cfg);

    // Accepts one event (already validated: JSON, at most 1 MB). Its first attempt starts on
    // the next loop turn, never inside this call. After shutdown() the event is ended at once
    // with condition_shutdown and approximateInvokeCount 0.
    void enqueue(const std::string& function, std::string request_id, std::string payload);

    // Ends every event that is not in flight (waiting for its first attempt or for a retry)
    // with condition_shutdown, in the order they were accepted, and cancels their timers.
    // An attempt in flight still counts when its result arrives: success is recorded as
    // such; any other result ends the event with condition_shutdown (no retry), its response
    // included. Idempotent.
    void shutdown();

    struct stats {
        std::uint64_t accepted = 0;   // events enqueued
        std::uint64_t succeeded = 0;  // ended with Success
        std::uint64_t retried = 0;    // retries scheduled (attempts after each event's first)
        std::uint64_t failed = 0;     // ended otherwise (given up or shutdown)
        std::uint64_t pending = 0;    // accepted and not yet ended (queued or in flight)
    };
    // Zeros for a function never configured nor enqueued to.
    stats counters(const std::string& function) const;

private:
    struct event {
        std::uint64_t id = 0;
        std::string function;
        std::string request_id;
        std::string payload;
        double accepted_ms = 0;   // the scheduler's modeled clock when enqueued
        int attempts = 0;         // handed to the pool
        int function_errors = 0;  // attempts that ended in a function error
        int throttles = 0;        // attempts that ended throttled or in a service error
        bool in_flight = false;
        std::optional<functions::invocation_result> last;  // the latest answer
    };
    struct function_entry {
        std::string name;
        async_function_config cfg;
        stats counters;
    };

    function_entry& entry(const std::string& function);
    void schedule(std::uint64_t id, double delay_ms);
    void on_due(std::uint64_t id);
    void start_attempt(event& ev);
    void on_result(std::uint64_t id, int attempt, functions::invocation_result r);
    void settle(event& ev, models::attempt_outcome outcome, functions::invocation_result r);
    void finish(std::uint64_t id, std::string_view condition);
    double age_ms(const event& ev) const;
    void write(const std::filesystem::path& path, const std::string& line);

    sched::scheduler& scheduler_;
    const coldbrew::clock& clock_;
    std::string region_, account_id_;
    std::function<void(const std::string&, functions::invocation)> invoke_;
    std::map<std::string, function_entry> functions_;
    std::map<std::uint64_t, event> events_;              // by acceptance order
    // Events waiting for an attempt (the first, or a retry), by id; a timer per event keeps
    // them in due order, ties in the order they were set.
    std::map<std::uint64_t, sched::timer_ptr> due_;
    std::map<std::filesystem::path, std::FILE*> files_;  // destinations opened so far
    std::uint64_t next_id_ = 0;
    bool shut_down_ = false;
    // Attempts hold a weak reference, so a result arriving after destruction is dropped.
    std::shared_ptr<event_queue*> self_;
};

}  // namespace coldbrew::invoke
