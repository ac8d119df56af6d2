#pragma once
// The Lambda Invoke API (POST /2015-03-31/functions/{name}/invocations) as a front end of the
// shared request path: the call's name, qualifier, header and invocation-type rules and
// Lambda's wording of every answer (emulator/invoke/ holds those as plain functions);
// everything else a synchronous invocation goes through is the executor's.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "emulator/config/stack.hpp"
#include "emulator/front/executor.hpp"
#include "emulator/front/gateway_front.hpp"
#include "emulator/http/access.hpp"

namespace coldbrew::front {

// Above the 6 MB synchronous limit (functions::max_sync_request_bytes, shared spec §1.2), so an
// oversized payload is read and answered with Lambda's 413 rather than a dropped connection.
inline constexpr std::size_t invoke_max_body_bytes = 8 * 1024 * 1024;

class invoke_front {
public:
    // Queues an asynchronous (Event) invocation: the function's logical id, the request id,
    // the payload.
    using enqueue_fn = std::function<void(const std::string&, const std::string&, std::string)>;

    // `stack`, `ex`, `clock` and `rng` must outlive it.
    invoke_front(const config::stack& stack, executor& ex, const coldbrew::clock& clock,
                 const models::random_source& rng, function_lookup find, enqueue_fn enqueue);

    // The server's request handler. A bug answers Lambda's 500 ServiceException and is
    // counted as an emulator error; no exception leaves.
    void handle(http::request req, http::responder respond);
    // Lambda's answer to bytes that are not a request it can read (400, 413), and to one that
    // did not arrive in time (408 RequestTimeoutException).
    std::function<http::response(http::parse_failure)> parse_failure_answer();
    // Who may call (emulator/http/access.hpp), once the listener's port is known; a refusal
    // is 403 AccessDeniedException, before the call is parsed. Unset: anyone.
    void set_access(http::access_policy policy) { access_ = std::move(policy); }

private:
    void route(const http::request& req, const std::shared_ptr<request>& r);

    const config::stack& stack_;
    executor& ex_;
    const coldbrew::clock& clock_;
    const models::random_source& rng_;
    function_lookup find_;
    enqueue_fn enqueue_;
    std::uint64_t next_index_ = 0;
    std::optional<http::access_policy> access_;
};

}  // namespace coldbrew::front
