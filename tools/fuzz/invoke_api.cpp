// The Invoke API's request parsing: bytes an SDK (or anyone on the port) sends → the server's
// parser → parse_invoke (function name, partial and full ARNs, qualifier, invocation and log
// type headers, client context, payload). Every refusal is an AWS-shaped error with a JSON
// body; every accepted request names a function and carries a JSON payload.

#include "emulator/invoke/invoke_api.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <variant>

using namespace coldbrew;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto req = fuzz::parse_request(fuzz::as_text(data, size));
    if (!req) return 0;
    invoke::context ctx;
    ctx.request_id = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";
    auto parsed = invoke::parse_invoke(*req, ctx);
    if (auto* res = std::get_if<http::response>(&parsed)) {
        if (res->status < 400) std::abort();
        if (!res->header("x-amzn-ErrorType")) std::abort();
        if (!nlohmann::json::parse(res->body, nullptr, false).is_object()) std::abort();
        return 0;
    }
    auto& r = std::get<invoke::invoke_request>(parsed);
    if (r.function.empty()) std::abort();
    if (nlohmann::json::parse(r.payload, nullptr, false).is_discarded()) std::abort();
    if (!r.client_context.empty() && !nlohmann::json::parse(r.client_context, nullptr, false).is_object())
        std::abort();
    (void)invoke::serves_qualifier(r);
    (void)invoke::function_arn(r, ctx);
    auto nf = invoke::function_not_found(r, ctx);
    if (!nlohmann::json::parse(nf.body, nullptr, false).is_object()) std::abort();
    return 0;
}
