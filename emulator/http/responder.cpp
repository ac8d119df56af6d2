// responder: the one-shot handle a request handler answers through. The server's connection
// target lives in server.cpp (it needs the codec); this file has what needs no socket.

#include "emulator/http/server.hpp"

#include <utility>

namespace coldbrew::http {

namespace {

// Hands the response to a plain function; used by tests and internal callers.
struct function_target final : responder::target {
    std::function<void(response)> send_fn;

    explicit function_target(std::function<void(response)> f) : send_fn(std::move(f)) {}

    void send(response res, const send_options&) override {
        // Emptied before the call, so copies of the responder sharing this target stay one-shot
        // even if the function answers again from inside.
        auto f = std::exchange(send_fn, nullptr);
        if (f) f(std::move(res));
    }
    void reset() override { send_fn = nullptr; }
    bool alive() const override { return static_cast<bool>(send_fn); }
    // No client, so nothing ever closes: fn would never be called, and is not kept.
    void on_close(std::function<void()>) override {}
};

}  // namespace

responder::responder(std::function<void(response)> send) {
    if (send) target_ = std::make_shared<function_target>(std::move(send));
}

void responder::send(response res, const send_options& opts) {
    // Released before forwarding: a handler that answers from inside the target's call (or
    // twice) reaches an empty responder.
    if (auto t = std::exchange(target_, nullptr)) t->send(std::move(res), opts);
}

void responder::reset() {
    if (auto t = std::exchange(target_, nullptr)) t->reset();
}

bool responder::alive() const { return target_ && target_->alive(); }

void responder::on_close(std::function<void()> fn) {
    // A copy of the target is held for the call: fn may run inside it and drop this responder.
    if (auto t = target_) t->on_close(std::move(fn));
}

}  // namespace coldbrew::http
