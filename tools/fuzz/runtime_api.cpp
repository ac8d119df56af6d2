// The Runtime API's request handling: bytes a handler process sends its environment's
// listener → the server's parser → parse_call, the phase checks in every phase, and the
// error normalisation of /error and /init/error bodies. A caller always gets an answer it can
// act on: an error body that is one JSON object.

#include "emulator/runtime_api/runtime_api.hpp"
#include "tools/fuzz/http_bytes.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <variant>

using namespace coldbrew;

namespace {

void must_be_object(const std::string& body) {
    if (!nlohmann::json::parse(body, nullptr, false).is_object()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto req = fuzz::parse_request(fuzz::as_text(data, size));
    if (!req) return 0;
    auto call = runtime_api::parse_call(*req);
    if (auto* r = std::get_if<runtime_api::rejected_call>(&call)) {
        if (r->response.status < 400) std::abort();
        must_be_object(r->response.body);
        return 0;
    }
    using runtime_api::phase;
    for (auto p : {phase::initializing, phase::waiting, phase::invoking, phase::finishing,
                   phase::init_failed}) {
        for (const char* id : {"8476a536-e9f4-11e8-9739-2dfe598c3fcd", ""}) {
            if (auto res = runtime_api::check_call(p, id, call)) must_be_object(res->body);
        }
    }
    if (auto* e = std::get_if<runtime_api::error_call>(&call)) {
        auto f = runtime_api::normalise_error(e->error_type, e->body);
        if (f.error_type.empty()) std::abort();
        must_be_object(f.body);
    } else if (auto* i = std::get_if<runtime_api::init_error_call>(&call)) {
        auto f = runtime_api::normalise_error(i->error_type, i->body);
        if (f.error_type.empty()) std::abort();
        must_be_object(f.body);
    }
    return 0;
}
