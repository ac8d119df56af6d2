#pragma once
// Who may talk to coldbrew's control plane (the admin API, the Lambda Invoke API, the Step
// Functions API and each execution environment's Runtime API): a plain function from a
// request's headers and the listener's address to a verdict, with no socket in sight. The API
// Gateway front (the user's own routes) is not checked: it emulates a public API, and its CORS
// is its own configuration.
//
// Why: a web page open in a browser on the same machine can send a "simple" cross-origin POST
// (text/plain or no Content-Type, no preflight) to 127.0.0.1:3002 and change a test's fault
// rules, or to the Invoke API and run a function; a page on a domain that re-resolves to
// 127.0.0.1 (DNS rebinding) can even read the answers. Browsers always send Origin on
// cross-origin writes (Fetch standard, "Origin header"), and the Host header of a rebinding
// page names the attacker's domain. Real SDKs, the AWS CLI, curl, Artillery and coldbrew's
// own clients send no Origin and a Host of the address they were given.
//
// The rules, in the order they are checked (the first failure decides):
//  1. Origin, when present, must be `http://H:P` with P the listener's port and H a host rule
//     2 accepts: the listener's own origin (or the loopback names of that port) is the same
//     API talking to itself and passes; anything else, `null` (sandboxed frames, file:// pages)
//     included, is foreign_origin. A local web app on another port is another origin too.
//  2. Host, when present, must name `localhost` or a `*.localhost` name (RFC 6761: they never
//     resolve off the machine), a loopback address (127.0.0.0/8, ::1), or the address the
//     listener is bound to; a listener bound to a wildcard (0.0.0.0, ::) accepts any IP
//     literal, since a rebinding page can only ever use a name. Its port is not checked. Any
//     other name is foreign_host. An absent Host (HTTP/1.0) passes: browsers always send one.
//  3. With a bearer token set, `Authorization: Bearer <token>` must carry it (the scheme is
//     case-insensitive, RFC 9110 §11.1; compared in constant time): absent is missing_token,
//     another value wrong_token.
// Each front end words the refusal in its own AWS shape (403 for 1–3 but missing_token, which
// is 401 with WWW-Authenticate: Bearer, as RFC 6750 §3 asks).

#include <string>
#include <string_view>

#include "emulator/http/message.hpp"

namespace coldbrew::http {

struct access_policy {
    std::string listen_host = "127.0.0.1";  // the address bound, as given to server::listen
    int listen_port = 0;                    // the port listened on (after 0 picked one)
    std::string bearer_token;               // non-empty: required (rule 3)
};

enum class access_verdict { allowed, foreign_origin, foreign_host, missing_token, wrong_token };

struct access_decision {
    access_verdict verdict = access_verdict::allowed;
    // One sentence for the error body naming what was refused and why; "" when allowed.
    std::string reason;
    bool allowed() const noexcept { return verdict == access_verdict::allowed; }
};

access_decision check_access(const request& req, const access_policy& policy);

// "localhost", a *.localhost name, 127.0.0.0/8 or ::1 (brackets allowed). Case-insensitive.
bool is_loopback_host(std::string_view host);
// 0.0.0.0, :: or [::]: every address of the machine.
bool is_wildcard_host(std::string_view host);
// Equal contents, in time that depends on the lengths only (a token's bytes are not leaked
// through how long a comparison takes).
bool constant_time_equals(std::string_view a, std::string_view b);

}  // namespace coldbrew::http
