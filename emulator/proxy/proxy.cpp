// Dependency proxies on the libuv loop. See proxy.hpp for the contract.
//
// Memory and lifetimes: a listener and a connection are plain heap objects owned by their
// libuv handles and requests, not by the proxy. A connection counts its open handles and
// pending requests and frees itself when the last one completes, so the proxy (and its
// impl) may be destroyed while close callbacks are still due; once a connection has ended
// it never touches the proxy again.
//
// Data path: a read lands in a block that is handed to uv_write as it is and freed (back to
// the connection's small pool) in the write callback; small reads are copied into a block of
// their own size so a queue of tiny chunks does not pin large blocks. Each side's read size
// adapts between 64 KiB and 1 MiB: it doubles while reads fill the block (a bulk transfer,
// where fewer, larger system calls measured ~40% more throughput than 256 KiB reads) and
// halves while they use under a quarter of it (request/response traffic).

#include "emulator/proxy/proxy.hpp"

#include "emulator/telemetry/run_recorder.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "emulator/telemetry/decision_log.hpp"
#include "models/distribution/distribution.hpp"

namespace coldbrew::proxy {

namespace mf = models::faults;
namespace bw = models::bandwidth;

namespace {

constexpr std::size_t min_read_bytes = 64 * 1024;
constexpr std::size_t max_read_bytes = 1024 * 1024;
// Backpressure: a side stops reading while more than this waits to be written to the other
// side, and reads again once it is down to resume_below_bytes.
constexpr std::size_t pause_above_bytes = 1024 * 1024;
constexpr std::size_t resume_below_bytes = 512 * 1024;
// Under a bandwidth limit a chunk waits until this much (or the smallest bucket's capacity)
// is available, so the loop wakes per slice, not per byte.
constexpr std::uint64_t min_slice_bytes = 64 * 1024;
constexpr std::size_t pooled_blocks = 2;

// A reference-counted buffer; its bytes follow the header.
struct block {
    std::size_t refs;
    std::size_t capacity;
    char* data() noexcept { return reinterpret_cast<char*>(this + 1); }
    static block* from_data(char* p) noexcept { return reinterpret_cast<block*>(p) - 1; }
};

block* new_block(std::size_t capacity) {
    void* p = std::malloc(sizeof(block) + capacity);
    if (!p) return nullptr;
    auto* b = static_cast<block*>(p);
    b->refs = 1;
    b->capacity = capacity;
    return b;
}

std::string_view action_name(const mf::plan& p) {
    // A delay-only plan's action is `pass`; "delay" says what happened.
    if (mf::is<mf::actions::pass>(p) && p.delay_ms > 0) return "delay";
    return mf::action_name(p.act);
}

bool is_reset(const mf::plan& p) {
    return mf::is<mf::actions::reset>(p) || mf::is<mf::actions::refuse>(p);
}

std::error_code uv_error(int rc) { return {-rc, std::generic_category()}; }

bool parse_address(const std::string& host, int port, sockaddr_storage& out) {
    out = {};
    return uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&out)) == 0 ||
           uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&out)) == 0;
}

struct listener;
struct connection;

}  // namespace

struct dependency_proxy::impl {
    const config::dependency& dep;
    proxy_context& ctx;
    proxy_counters counters;
    std::optional<models::distribution> connect_latency, request_latency;
    sched::scheduler* scheduler;
    models::random_source own_rng{0};
    const models::random_source* rng;
    std::string connect_route, request_route;
    bool upstream_literal = false;
    sockaddr_storage upstream_addr{};
    listener* shared = nullptr;
    std::map<std::uint64_t, listener*> environments;
    std::set<connection*> connections;

    impl(const config::dependency& d, proxy_context& c);

    // The buckets' clock (modeled µs) and the fault rules' clock (modeled ms).
    std::int64_t now_us() const { return modeled_now_us(*scheduler); }
    double fault_now_ms() const { return scheduler->now_ms(); }
    // Modeled milliseconds, never negative (a normal distribution may draw below 0).
    double draw_ms(const std::optional<models::distribution>& d, const std::string& key,
                   std::uint64_t index) const {
        if (!d) return 0;
        double v = d->sample(*rng, "dependency-latency", key, index);
        return std::isfinite(v) && v > 0 ? v : 0;
    }
    mf::decision decide(const connection& c, mf::dependency_phase on);
    void finished(std::uint64_t fault_id) {
        if (fault_id == 0 || !ctx.faults) return;
        if (ctx.recorder) ctx.recorder->fault_ended(fault_id, fault_now_ms());
        ctx.faults->finished(fault_id);
    }

    std::error_code open_listener(listener* l, int port);
    void close_listener(listener* l);
    void accept(listener& l);
    void forget(connection* c);
    void close();
};

namespace {

struct listener {
    uv_tcp_t tcp{};
    dependency_proxy::impl* owner = nullptr;  // null once closing
    std::string key_text;                     // "shared" or the environment key
    std::string function;                     // "" for the shared listener
    std::shared_ptr<environment_link> link;
    std::uint64_t next_index = 0;
    int port = 0;
};

enum class marker { none, reset, hang };

// Bytes waiting to go one way. A request turn's first chunk carries the turn's latency and
// fault; everything behind it waits with it, so order is kept.
struct chunk {
    block* b;
    std::size_t off;
    std::size_t len;
    std::int64_t hold_us = 0;      // modeled µs to wait from when the chunk reaches the head
    std::int64_t ready_at_us = -1;  // set when the hold starts (modeled µs)
    marker m = marker::none;
    std::uint64_t fault_id = 0;  // a delay-only fault, over when the hold is
};

struct direction {
    std::deque<chunk> queue;
    std::size_t queued = 0;     // bytes in queue
    std::size_t in_flight = 0;  // bytes handed to uv_write, not yet called back
    std::size_t read_size = min_read_bytes;  // the source side's next read block
    bool reading = false;       // the source side is being read
    bool eof = false;           // the source side sent EOF
    bool shut = false;          // uv_shutdown issued on the destination
    bool done = false;          // … and completed
    sched::timer_ptr timer;     // waits for latency or bandwidth
    bool timer_armed = false;
    bool waiting_bandwidth = false;
    std::int64_t wait_from_us = 0;  // modeled µs
    uv_shutdown_t shutdown_req{};
    std::optional<bw::token_bucket> per_connection;
    bw::token_bucket* environment = nullptr;        // the link's bucket, kept alive by `link`
    std::optional<bw::token_bucket> slow_connection;  // downstream only: slow_response
    std::optional<bw::token_bucket> slow_request;
};

struct write_op {
    uv_write_t req{};
    connection* conn = nullptr;
    block* b = nullptr;
    std::size_t len = 0;
    bool to_upstream = false;
};

enum class phase { waiting, connecting, open, hung };
enum class phase_timer_use { none, latency, reset_after, connect_timeout, close_after };

struct connection {
    dependency_proxy::impl* owner;  // null once ended
    listener* from;                 // compared by detach(); not used after the connection ends
    uv_loop_t* loop;
    sched::scheduler* scheduler;
    uv_tcp_t client{};
    uv_tcp_t upstream{};
    bool upstream_open = false;     // initialised and not yet closing
    bool connected = false;
    uv_connect_t connect_req{};
    uv_getaddrinfo_t resolve_req{};
    bool resolving = false;
    sched::timer_ptr phase_timer;
    phase_timer_use timer_use = phase_timer_use::none;
    sched::timer_ptr idle_timer;
    double idle_timeout_ms = 0;     // modeled; 0: none
    double last_activity_ms = 0;    // the scheduler's clock
    double idle_armed_at_ms = 0;    // … when idle_timer was set
    direction up, down;  // client → upstream, upstream → client
    int uv_refs = 0;     // open handles + pending requests (the timers are the scheduler's)
    phase state = phase::waiting;
    bool ended = false;
    std::shared_ptr<environment_link> link;
    std::string key;       // "<dependency>|<env key>|<connection index>"
    std::string function;  // the environment's function, "" for the shared listener
    std::uint64_t turns = 0;
    bool downstream_since_turn = false;
    std::vector<std::uint64_t> faults;  // over when the connection ends
    std::uint64_t request_fault = 0;    // over at the next turn (slow_response) or the end
    std::uint64_t connect_fault = 0;    // a connect delay, over once it has been waited
    double hang_close_after_ms = 0;     // modeled ms
    std::vector<block*> pool;

    connection(dependency_proxy::impl& o, listener& l, uv_loop_t* lp)
        : owner(&o), from(&l), loop(lp), scheduler(o.scheduler), link(l.link),
          function(l.function) {
        key = o.dep.name + "|" + l.key_text + "|" + std::to_string(l.next_index++);
        uv_tcp_init(loop, &client);
        client.data = this;
        ++uv_refs;
    }

    ~connection() {
        for (block* b : pool) std::free(b);
    }

    void unref() {
        if (--uv_refs == 0) delete this;
    }

    static void on_handle_closed(uv_handle_t* h) { static_cast<connection*>(h->data)->unref(); }

    // ---- buffers ----------------------------------------------------------------------

    block* take_block(std::size_t size) {
        while (!pool.empty()) {
            block* b = pool.back();
            pool.pop_back();
            if (b->capacity == size) {
                b->refs = 1;
                return b;
            }
            std::free(b);  // from before the read size changed
        }
        return new_block(size);
    }

    void release(block* b) {
        if (--b->refs != 0) return;
        if (b->capacity >= min_read_bytes && pool.size() < pooled_blocks)
            pool.push_back(b);
        else
            std::free(b);
    }

    static void on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* c = static_cast<connection*>(h->data);
        direction& d = h == reinterpret_cast<uv_handle_t*>(&c->client) ? c->up : c->down;
        block* b = c->take_block(d.read_size);
        *buf = b ? uv_buf_init(b->data(), static_cast<unsigned>(b->capacity))
                 : uv_buf_init(nullptr, 0);
    }

    // The chunk for `n` bytes read into `buf` (n > 0) for `d`; null when memory ran out.
    std::optional<chunk> make_chunk(direction& d, const uv_buf_t* buf, std::size_t n) {
        block* b = block::from_data(buf->base);
        if (n == b->capacity)
            d.read_size = std::min(d.read_size * 2, max_read_bytes);
        else if (n < d.read_size / 4)
            d.read_size = std::max(d.read_size / 2, min_read_bytes);
        // Under 1/8 of the block: copied, so at most 1/8 of a queued block is wasted.
        if (n >= b->capacity / 8) return chunk{b, 0, n};
        block* small = new_block(n);
        if (small) std::memcpy(small->data(), buf->base, n);
        release(b);
        if (!small) return std::nullopt;
        return chunk{small, 0, n};
    }

    void clear(direction& d) {
        for (auto& c : d.queue) release(c.b);
        d.queue.clear();
        d.queued = 0;
    }

    // ---- start ------------------------------------------------------------------------

    void start() {
        uv_tcp_nodelay(&client, 1);
        auto& o = *owner;
        ++o.counters.connections;
        ++o.counters.active;
        last_activity_ms = scheduler->now_ms();
        if (o.dep.idle_timeout_ms && *o.dep.idle_timeout_ms > 0) {
            idle_timeout_ms = *o.dep.idle_timeout_ms;
            arm_idle(idle_timeout_ms);
        }
        if (o.dep.per_connection_bytes_per_s && *o.dep.per_connection_bytes_per_s > 0) {
            const std::int64_t t = o.now_us();
            double rate = *o.dep.per_connection_bytes_per_s;
            // The depth is burst_ms of the rate bytes really leave at (at least one 64 KiB
            // read).
            auto burst = bw::burst_bytes(bw::bandwidth_table{}, scheduler->real_rate(rate));
            up.per_connection.emplace(rate, burst, t);
            down.per_connection.emplace(rate, burst, t);
        }
        if (o.dep.environment_cap && link) {
            up.environment = &link->from_environment();
            down.environment = &link->to_environment();
        }

        auto d = o.decide(*this, mf::dependency_phase::connect);
        const mf::plan& p = d.p;
        if (is_reset(p)) {
            // Refused or reset before the upstream is reached; a delay is waited first.
            if (d.id) faults.push_back(d.id);
            if (p.delay_ms > 0) {
                o.counters.latency_ms += p.delay_ms;
                start_phase_timer(phase_timer_use::reset_after, p.delay_ms);
            } else {
                end(true, false);
            }
            return;
        }
        if (const auto* h = std::get_if<mf::actions::hang>(&p.act)) {
            if (d.id) faults.push_back(d.id);
            hang(p.delay_ms + h->close_after_ms, h->close_after_ms > 0);
            return;
        }
        if (const auto* slow = std::get_if<mf::actions::slow_response>(&p.act);
            slow && slow->bytes_per_s > 0) {
            down.slow_connection = slow_bucket(slow->bytes_per_s);
            if (d.id) faults.push_back(d.id);  // active for the connection's life
        } else {
            connect_fault = d.id;  // over once the connect latency has been waited
        }

        double latency = o.draw_ms(o.connect_latency, key, 0) + p.delay_ms;
        o.counters.latency_ms += latency;
        start_reading(up, client_stream());
        if (latency > 0)
            start_phase_timer(phase_timer_use::latency, latency);
        else
            begin_connect();
    }

    bw::token_bucket slow_bucket(double modeled_bytes_per_s) {
        // A shallow bucket (50 ms of the rate bytes really leave at, at least a byte, at most
        // one slice): a slow answer must not start with a burst.
        auto cap = static_cast<std::uint64_t>(std::clamp(
            scheduler->real_rate(modeled_bytes_per_s) * 0.05, 1.0,
            static_cast<double>(min_slice_bytes)));
        return bw::token_bucket(modeled_bytes_per_s, cap, owner->now_us());
    }

    uv_stream_t* client_stream() { return reinterpret_cast<uv_stream_t*>(&client); }
    uv_stream_t* upstream_stream() { return reinterpret_cast<uv_stream_t*>(&upstream); }

    void start_phase_timer(phase_timer_use use, double modeled_ms) {
        timer_use = use;
        phase_timer = scheduler->after(modeled_ms, [this] { on_phase_timer(); });
    }

    void on_phase_timer() {
        if (ended) return;
        auto use = std::exchange(timer_use, phase_timer_use::none);
        switch (use) {
        case phase_timer_use::latency: begin_connect(); break;
        case phase_timer_use::reset_after: end(true, false); break;
        case phase_timer_use::connect_timeout:
            ++owner->counters.connect_timeouts;
            end(true, false);
            break;
        case phase_timer_use::close_after: end(false, false); break;
        case phase_timer_use::none: break;
        }
    }

    void arm_idle(double modeled_ms) {
        idle_armed_at_ms = scheduler->now_ms();
        idle_timer = scheduler->after(modeled_ms, [this] { on_idle_timer(); });
    }

    void on_idle_timer() {
        if (ended) return;
        // Quiet since the timer was set: the whole timeout has passed. (Compared this way, a
        // timer that fires a fraction of a millisecond early on the steady clock still counts.)
        if (last_activity_ms <= idle_armed_at_ms) {
            ++owner->counters.idle_timeouts;
            end(false, false);
            return;
        }
        const double quiet = scheduler->now_ms() - last_activity_ms;
        arm_idle(std::max(0.0, idle_timeout_ms - quiet));
    }

    void touch() {
        if (idle_timeout_ms > 0) last_activity_ms = scheduler->now_ms();
    }

    // ---- upstream connect ---------------------------------------------------------------

    void begin_connect() {
        if (connect_fault) owner->finished(std::exchange(connect_fault, 0));
        state = phase::connecting;
        auto& o = *owner;
        if (o.dep.connect_timeout_ms > 0)
            start_phase_timer(phase_timer_use::connect_timeout, o.dep.connect_timeout_ms);
        if (o.upstream_literal) {
            connect_to(reinterpret_cast<const sockaddr*>(&o.upstream_addr));
            return;
        }
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        resolve_req.data = this;
        std::string port = std::to_string(o.dep.upstream_port);
        int rc = uv_getaddrinfo(loop, &resolve_req, on_resolved, o.dep.upstream_host.c_str(),
                                port.c_str(), &hints);
        if (rc != 0) {
            upstream_failed();
            return;
        }
        resolving = true;
        ++uv_refs;
    }

    static void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
        auto* c = static_cast<connection*>(req->data);
        c->resolving = false;
        if (!c->ended) {
            // The first IPv4 address when there is one: "localhost" often lists ::1 first,
            // while local services tend to listen on 127.0.0.1 or 0.0.0.0.
            const addrinfo* pick = res;
            for (const addrinfo* ai = res; ai; ai = ai->ai_next)
                if (ai->ai_family == AF_INET) {
                    pick = ai;
                    break;
                }
            if (status != 0 || !pick)
                c->upstream_failed();
            else
                c->connect_to(pick->ai_addr);
        }
        if (res) uv_freeaddrinfo(res);
        c->unref();
    }

    void upstream_failed() {
        ++owner->counters.upstream_failures;
        end(true, false);
    }

    void connect_to(const sockaddr* addr) {
        uv_tcp_init(loop, &upstream);
        upstream.data = this;
        ++uv_refs;
        upstream_open = true;
        uv_tcp_nodelay(&upstream, 1);
        connect_req.data = this;
        int rc = uv_tcp_connect(&connect_req, &upstream, addr, on_connected);
        if (rc != 0) {
            upstream_failed();
            return;
        }
        ++uv_refs;
    }

    static void on_connected(uv_connect_t* req, int status) {
        auto* c = static_cast<connection*>(req->data);
        if (!c->ended) {
            if (status != 0) {
                c->upstream_failed();
            } else {
                c->connected = true;
                c->state = phase::open;
                c->timer_use = phase_timer_use::none;
                c->phase_timer.reset();
                c->start_reading(c->down, c->upstream_stream());
                c->pump(c->up);
            }
        }
        c->unref();
    }

    // ---- reading ------------------------------------------------------------------------

    void start_reading(direction& d, uv_stream_t* s) {
        if (d.reading || d.eof || ended) return;
        if (uv_read_start(s, on_alloc, &d == &up ? on_client_read : on_upstream_read) == 0)
            d.reading = true;
    }

    // Backpressure: the source of `d` reads only while little waits to be written.
    void update_reading(direction& d) {
        if (ended || state == phase::hung) return;
        std::size_t pending = d.queued + d.in_flight;
        uv_stream_t* src = &d == &up ? client_stream() : upstream_stream();
        if (&d == &down && !connected) return;
        if (d.reading && pending > pause_above_bytes) {
            uv_read_stop(src);
            d.reading = false;
        } else if (!d.reading && pending <= resume_below_bytes) {
            start_reading(d, src);
        }
    }

    static void on_client_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
        auto* c = static_cast<connection*>(s->data);
        if (n <= 0) {
            if (buf->base) c->release(block::from_data(buf->base));
            if (n == UV_EOF)
                c->client_eof();
            else if (n < 0)
                c->end(false, true);  // the client reset or failed: the upstream is reset too
            return;
        }
        c->touch();
        if (c->state == phase::hung) {
            c->release(block::from_data(buf->base));
            return;
        }
        auto ch = c->make_chunk(c->up, buf, static_cast<std::size_t>(n));
        if (!ch) {
            c->end(true, true);
            return;
        }
        if (c->turns == 0 || c->downstream_since_turn) c->new_turn(*ch);
        c->up.queue.push_back(*ch);
        c->up.queued += ch->len;
        c->pump(c->up);
        if (!c->ended) c->update_reading(c->up);
    }

    static void on_upstream_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
        auto* c = static_cast<connection*>(s->data);
        if (n <= 0) {
            if (buf->base) c->release(block::from_data(buf->base));
            if (n == UV_EOF)
                c->upstream_eof();
            else if (n < 0)
                c->end(true, false);  // the upstream reset or failed: so is the client
            return;
        }
        c->touch();
        auto ch = c->make_chunk(c->down, buf, static_cast<std::size_t>(n));
        if (!ch) {
            c->end(true, true);
            return;
        }
        c->down.queue.push_back(*ch);
        c->down.queued += ch->len;
        c->pump(c->down);
        if (!c->ended) c->update_reading(c->down);
    }

    void client_eof() {
        up.eof = true;
        up.reading = false;
        uv_read_stop(client_stream());
        // A hung connection's client gave up: nothing is held for it any more.
        if (state == phase::hung) {
            end(false, false);
            return;
        }
        maybe_shutdown(up);
    }

    void upstream_eof() {
        down.eof = true;
        down.reading = false;
        uv_read_stop(upstream_stream());
        maybe_shutdown(down);
    }

    // ---- request turns and faults --------------------------------------------------------

    void new_turn(chunk& ch) {
        auto& o = *owner;
        ++turns;
        downstream_since_turn = false;
        ++o.counters.requests;
        // The previous request's slow answer is over.
        down.slow_request.reset();
        o.finished(std::exchange(request_fault, 0));

        auto d = o.decide(*this, mf::dependency_phase::request);
        const mf::plan& p = d.p;
        double latency = o.draw_ms(o.request_latency, key, turns) + p.delay_ms;
        o.counters.latency_ms += latency;
        ch.hold_us = static_cast<std::int64_t>(std::llround(latency * 1000.0));
        const auto* h = std::get_if<mf::actions::hang>(&p.act);
        const auto* slow = std::get_if<mf::actions::slow_response>(&p.act);
        if (is_reset(p)) {
            ch.m = marker::reset;
            if (d.id) faults.push_back(d.id);
        } else if (h) {
            ch.m = marker::hang;
            if (d.id) faults.push_back(d.id);
            hang_close_after_ms = h->close_after_ms > 0 ? h->close_after_ms : 0;
        } else if (slow && slow->bytes_per_s > 0) {
            down.slow_request = slow_bucket(slow->bytes_per_s);
            request_fault = d.id;
        } else {
            ch.fault_id = d.id;
        }
        if (ch.hold_us <= 0 && ch.fault_id) owner->finished(std::exchange(ch.fault_id, 0));
    }

    // Holds the connection: client bytes are dropped and nothing comes back. The upstream,
    // if any, is closed. Ends after `close_after_ms` (modeled) when `close_after`.
    void hang(double close_after_ms, bool close_after) {
        state = phase::hung;
        clear(up);
        clear(down);
        up.timer.reset();
        down.timer.reset();
        up.timer_armed = down.timer_armed = false;
        if (upstream_open) {
            upstream_open = false;
            uv_close(reinterpret_cast<uv_handle_t*>(&upstream), on_handle_closed);
        }
        phase_timer.reset();
        timer_use = phase_timer_use::none;
        if (!up.eof && !up.reading) start_reading(up, client_stream());
        if (close_after) start_phase_timer(phase_timer_use::close_after, close_after_ms);
    }

    // ---- writing ------------------------------------------------------------------------

    void collect_buckets(direction& d, std::array<bw::token_bucket*, 4>& bs, int& k) {
        k = 0;
        if (d.per_connection) bs[k++] = &*d.per_connection;
        if (d.environment) bs[k++] = d.environment;
        if (d.slow_connection) bs[k++] = &*d.slow_connection;
        if (d.slow_request) bs[k++] = &*d.slow_request;
    }

    // Waits `delta_us` (modeled) before pumping `d` again; `now` is the buckets' clock.
    void arm(direction& d, std::int64_t delta_us, bool bandwidth, std::int64_t now) {
        d.timer_armed = true;
        d.waiting_bandwidth = bandwidth;
        d.wait_from_us = now;
        d.timer = scheduler->after(static_cast<double>(delta_us) / 1000.0,
                                   [this, &d] { on_direction_timer(d); });
    }

    void on_direction_timer(direction& d) {
        if (ended) return;
        d.timer_armed = false;
        if (d.waiting_bandwidth) {
            double waited_ms = static_cast<double>(owner->now_us() - d.wait_from_us) / 1000.0;
            owner->counters.shaped_ms += std::max(0.0, waited_ms);
        }
        pump(d);
        if (!ended) update_reading(d);
    }

    // Sends what latency and bandwidth allow from the head of `d`, then waits on a timer.
    void pump(direction& d) {
        if (ended || d.timer_armed || state == phase::hung) return;
        if (&d == &up && !connected) return;
        std::array<bw::token_bucket*, 4> bs{};
        int k = 0;
        collect_buckets(d, bs, k);
        bool clock_read = false;
        std::int64_t now = 0;
        auto read_clock = [&] {
            if (!clock_read) now = owner->now_us();
            clock_read = true;
            return now;
        };
        while (!d.queue.empty()) {
            chunk& c = d.queue.front();
            if (c.hold_us > 0) {
                read_clock();
                if (c.ready_at_us < 0) c.ready_at_us = now + c.hold_us;
                if (now < c.ready_at_us) {
                    arm(d, c.ready_at_us - now, false, now);
                    return;
                }
                c.hold_us = 0;
            }
            if (c.fault_id) owner->finished(std::exchange(c.fault_id, 0));
            if (c.m == marker::reset) {
                end(true, false);
                return;
            }
            if (c.m == marker::hang) {
                hang(hang_close_after_ms, hang_close_after_ms > 0);
                return;
            }
            std::size_t n = c.len;
            if (k > 0) {
                read_clock();
                std::uint64_t avail = std::numeric_limits<std::uint64_t>::max();
                std::uint64_t cap = min_slice_bytes;
                for (int i = 0; i < k; ++i) {
                    avail = std::min(avail, bs[i]->available(now));
                    cap = std::min(cap, bs[i]->capacity());
                }
                std::uint64_t need = std::max<std::uint64_t>(1, std::min<std::uint64_t>(c.len, cap));
                if (avail < need) {
                    std::int64_t at = now;
                    for (int i = 0; i < k; ++i) at = std::max(at, bs[i]->available_at(need, now));
                    arm(d, std::max<std::int64_t>(at - now, 1), true, now);
                    return;
                }
                n = static_cast<std::size_t>(std::min<std::uint64_t>(c.len, avail));
                for (int i = 0; i < k; ++i) bs[i]->take(n, now);
            }
            if (!write(d, n)) return;
        }
        maybe_shutdown(d);
    }

    // Writes the first `n` bytes of d's head chunk. false when the connection ended.
    bool write(direction& d, std::size_t n) {
        chunk& c = d.queue.front();
        auto* op = new write_op;
        op->conn = this;
        op->b = c.b;
        op->len = n;
        op->to_upstream = &d == &up;
        op->req.data = op;
        uv_buf_t buf = uv_buf_init(c.b->data() + c.off, static_cast<unsigned>(n));
        if (n == c.len) {
            d.queue.pop_front();  // the op takes the chunk's reference
        } else {
            ++c.b->refs;
            c.off += n;
            c.len -= n;
        }
        d.queued -= n;
        d.in_flight += n;
        uv_stream_t* dest = op->to_upstream ? upstream_stream() : client_stream();
        if (!op->to_upstream) downstream_since_turn = true;
        int rc = uv_write(&op->req, dest, &buf, 1, on_written);
        if (rc != 0) {
            d.in_flight -= n;
            release(op->b);
            delete op;
            end(true, true);
            return false;
        }
        ++uv_refs;
        return true;
    }

    static void on_written(uv_write_t* req, int status) {
        auto* op = static_cast<write_op*>(req->data);
        connection* c = op->conn;
        direction& d = op->to_upstream ? c->up : c->down;
        d.in_flight -= op->len;
        c->release(op->b);
        const std::size_t len = op->len;
        const bool to_upstream = op->to_upstream;
        delete op;
        // UV_ECANCELED: hang() closed the upstream under it; nothing to do.
        if (!c->ended && status != UV_ECANCELED) {
            if (status != 0) {
                c->end(true, true);
            } else {
                (to_upstream ? c->owner->counters.bytes_upstream
                             : c->owner->counters.bytes_downstream) += len;
                c->touch();
                c->update_reading(d);
            }
        }
        c->unref();
    }

    // Half-close: once the source sent EOF and everything before it is queued for writing,
    // the destination's write side is shut down (libuv shuts down after pending writes).
    void maybe_shutdown(direction& d) {
        if (ended || !d.eof || d.shut || !d.queue.empty() || state == phase::hung) return;
        if (&d == &up && !connected) return;
        d.shut = true;
        d.shutdown_req.data = this;
        uv_stream_t* dest = &d == &up ? upstream_stream() : client_stream();
        int rc = uv_shutdown(&d.shutdown_req, dest, on_shutdown);
        if (rc != 0) {
            end(true, true);
            return;
        }
        ++uv_refs;
    }

    static void on_shutdown(uv_shutdown_t* req, int status) {
        auto* c = static_cast<connection*>(req->data);
        if (!c->ended && status != UV_ECANCELED) {
            direction& d = req == &c->up.shutdown_req ? c->up : c->down;
            if (status != 0) {
                c->end(true, true);
            } else {
                d.done = true;
                if (c->up.done && c->down.done) c->end(false, false);
            }
        }
        c->unref();
    }

    // ---- the end ------------------------------------------------------------------------

    static void close_tcp(uv_tcp_t* t, bool reset) {
        // uv_tcp_close_reset fails once the write side was shut down; a FIN is all that is left.
        if (reset && uv_tcp_close_reset(t, on_handle_closed) == 0) return;
        uv_close(reinterpret_cast<uv_handle_t*>(t), on_handle_closed);
    }

    // Closes both sides (a reset sends RST) and every timer; the connection frees itself once
    // libuv has called back for every handle and request.
    void end(bool reset_client, bool reset_upstream) {
        if (ended) return;
        ended = true;
        if (owner) {
            for (auto id : faults) owner->finished(id);
            owner->finished(std::exchange(request_fault, 0));
            owner->finished(std::exchange(connect_fault, 0));
            for (auto* d : {&up, &down})
                for (auto& ch : d->queue) owner->finished(std::exchange(ch.fault_id, 0));
            owner->forget(this);
            owner = nullptr;
        }
        from = nullptr;
        clear(up);
        clear(down);
        // Cancelled here (possibly from inside one of them): none may fire after the end.
        phase_timer.reset();
        idle_timer.reset();
        up.timer.reset();
        down.timer.reset();
        close_tcp(&client, reset_client);
        if (upstream_open) {
            upstream_open = false;
            close_tcp(&upstream, reset_upstream);
        }
        if (resolving) uv_cancel(reinterpret_cast<uv_req_t*>(&resolve_req));
    }
};

}  // namespace

// ---- impl ---------------------------------------------------------------------------------

dependency_proxy::impl::impl(const config::dependency& d, proxy_context& c)
    : dep(d), ctx(c), scheduler(c.scheduler), rng(c.rng ? c.rng : &own_rng),
      connect_route(d.name + " connect"), request_route(d.name + " request") {
    if (!scheduler) throw std::invalid_argument("dependency proxy " + d.name + ": no scheduler");
    // The config loader checked the text; a bad one here is a programming error (throws).
    if (d.connect_latency) connect_latency = models::parse_distribution(*d.connect_latency);
    if (d.request_latency) request_latency = models::parse_distribution(*d.request_latency);
    upstream_literal = parse_address(d.upstream_host, d.upstream_port, upstream_addr);
}

mf::decision dependency_proxy::impl::decide(const connection& c, mf::dependency_phase on) {
    if (!ctx.faults) return {};
    mf::request_facts facts;
    facts.where = mf::front::dependency;
    facts.dependency = dep.name;
    facts.on = on;
    facts.function = c.function;
    facts.route = on == mf::dependency_phase::connect ? connect_route : request_route;
    const double now = fault_now_ms();
    const auto recorded = ctx.recorder ? ctx.recorder->request(facts, now) : std::nullopt;
    mf::decision d = ctx.faults->decide(facts, now);
    if (ctx.recorder) ctx.recorder->decided(recorded, d);
    if (!d.log_line.empty() && ctx.decisions) ctx.decisions->write(d.log_line);
    if (!d.rule.empty() && !d.overflow) ++counters.faults[std::string(action_name(d.p))];
    return d;
}

std::error_code dependency_proxy::impl::open_listener(listener* l, int port) {
    sockaddr_storage addr{};
    if (!parse_address(ctx.host, port, addr)) {
        delete l;
        return std::make_error_code(std::errc::invalid_argument);
    }
    uv_tcp_init(ctx.loop, &l->tcp);
    l->tcp.data = l;
    l->owner = this;
    int rc = uv_tcp_bind(&l->tcp, reinterpret_cast<sockaddr*>(&addr), 0);
    if (rc == 0)
        rc = uv_listen(reinterpret_cast<uv_stream_t*>(&l->tcp), 511, [](uv_stream_t* s, int status) {
            auto* lst = static_cast<listener*>(s->data);
            if (status == 0 && lst->owner) lst->owner->accept(*lst);
        });
    if (rc != 0) {
        close_listener(l);
        return uv_error(rc);
    }
    sockaddr_storage bound{};
    int len = sizeof(bound);
    uv_tcp_getsockname(&l->tcp, reinterpret_cast<sockaddr*>(&bound), &len);
    l->port = bound.ss_family == AF_INET6
                  ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                  : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    return {};
}

void dependency_proxy::impl::close_listener(listener* l) {
    l->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&l->tcp),
             [](uv_handle_t* h) { delete static_cast<listener*>(h->data); });
}

void dependency_proxy::impl::accept(listener& l) {
    auto* c = new connection(*this, l, ctx.loop);
    if (uv_accept(reinterpret_cast<uv_stream_t*>(&l.tcp), c->client_stream()) != 0) {
        c->owner = nullptr;
        c->end(false, false);
        return;
    }
    connections.insert(c);
    c->start();
}

void dependency_proxy::impl::forget(connection* c) {
    if (connections.erase(c) && counters.active > 0) --counters.active;
}

void dependency_proxy::impl::close() {
    if (shared) close_listener(std::exchange(shared, nullptr));
    for (auto& [key, l] : environments) close_listener(l);
    environments.clear();
    auto open = connections;
    for (connection* c : open) c->end(true, true);
}

// ---- dependency_proxy ---------------------------------------------------------------------

dependency_proxy::dependency_proxy(const config::dependency& dep, proxy_context& ctx)
    : dep_(dep), impl_(std::make_unique<impl>(dep, ctx)) {}

dependency_proxy::~dependency_proxy() { close(); }

std::error_code dependency_proxy::start() {
    auto& s = *impl_;
    if (s.shared) return {};
    auto* l = new listener;
    l->key_text = "shared";
    if (auto ec = s.open_listener(l, dep_.listen_port)) return ec;
    s.shared = l;
    return {};
}

int dependency_proxy::port() const noexcept { return impl_->shared ? impl_->shared->port : 0; }

std::error_code dependency_proxy::attach(std::uint64_t env_key, const std::string& function,
                                         std::shared_ptr<environment_link> link, int& port) {
    auto& s = *impl_;
    if (s.environments.count(env_key)) return std::make_error_code(std::errc::file_exists);
    auto* l = new listener;
    l->key_text = std::to_string(env_key);
    l->function = function;
    l->link = std::move(link);
    if (auto ec = s.open_listener(l, 0)) return ec;
    s.environments.emplace(env_key, l);
    port = l->port;
    return {};
}

void dependency_proxy::detach(std::uint64_t env_key) {
    auto& s = *impl_;
    auto it = s.environments.find(env_key);
    if (it == s.environments.end()) return;
    listener* l = it->second;
    s.environments.erase(it);
    auto open = s.connections;
    for (connection* c : open)
        if (c->from == l) c->end(true, true);
    s.close_listener(l);
}

void dependency_proxy::close() {
    if (impl_) impl_->close();
}

const proxy_counters& dependency_proxy::counters() const noexcept { return impl_->counters; }

void dependency_proxy::reset_counters() {
    auto active = impl_->counters.active;
    impl_->counters = proxy_counters{};
    impl_->counters.active = active;  // a state, not a count
}

// ---- environment_link, counters, templates ------------------------------------------------

environment_link::environment_link(double modeled_bytes_per_s, std::uint64_t burst_bytes,
                                   std::int64_t now_us)
    : modeled_(modeled_bytes_per_s), down_(modeled_bytes_per_s, burst_bytes, now_us),
      up_(modeled_bytes_per_s, burst_bytes, now_us) {}

nlohmann::json proxy_counters::to_json() const {
    nlohmann::json j;
    j["connections"] = connections;
    j["active"] = active;
    j["requests"] = requests;
    j["bytes_upstream"] = bytes_upstream;
    j["bytes_downstream"] = bytes_downstream;
    j["upstream_failures"] = upstream_failures;
    j["connect_timeouts"] = connect_timeouts;
    j["idle_timeouts"] = idle_timeouts;
    j["faults"] = nlohmann::json::object();
    for (const auto& [name, n] : faults) j["faults"][name] = n;
    j["latency_ms"] = std::round(latency_ms * 1000) / 1000;
    j["shaped_ms"] = std::round(shaped_ms * 1000) / 1000;
    return j;
}

std::string expand_env_template(std::string_view tmpl, std::string_view host, int port) {
    const std::string port_text = std::to_string(port);
    // An IPv6 address needs brackets before a port.
    std::string address = host.find(':') != std::string_view::npos
                              ? "[" + std::string(host) + "]:" + port_text
                              : std::string(host) + ":" + port_text;
    std::string out;
    out.reserve(tmpl.size() + address.size());
    for (std::size_t i = 0; i < tmpl.size();) {
        auto rest = tmpl.substr(i);
        if (rest.starts_with("{address}")) {
            out += address;
            i += 9;
        } else if (rest.starts_with("{host}")) {
            out += host;
            i += 6;
        } else if (rest.starts_with("{port}")) {
            out += port_text;
            i += 6;
        } else {
            out += tmpl[i++];
        }
    }
    return out;
}

// ---- proxy_set ----------------------------------------------------------------------------

proxy_set::proxy_set(const std::vector<config::dependency>& deps, proxy_context ctx)
    : ctx_(std::move(ctx)) {
    proxies_.reserve(deps.size());
    for (const auto& d : deps) proxies_.push_back(std::make_unique<dependency_proxy>(d, ctx_));
}

proxy_set::~proxy_set() { close(); }

std::error_code proxy_set::start(std::string& failed_dependency) {
    for (auto& p : proxies_) {
        if (auto ec = p->start()) {
            failed_dependency = p->config().name;
            close();  // nothing stays open
            return ec;
        }
    }
    return {};
}

std::vector<std::pair<std::string, std::string>> proxy_set::attach(
    std::uint64_t env_key, const std::string& function, std::shared_ptr<environment_link> link) {
    std::vector<std::pair<std::string, std::string>> vars;
    for (auto& p : proxies_) {
        const auto& dep = p->config();
        if (!dep.functions.empty() &&
            std::find(dep.functions.begin(), dep.functions.end(), function) == dep.functions.end())
            continue;
        int port = 0;
        if (auto ec = p->attach(env_key, function, link, port)) {
            spdlog::error("dependency {}: no listener for an environment of {}: {}", dep.name,
                          function, ec.message());
            continue;
        }
        for (const auto& [name, tmpl] : dep.env)
            vars.emplace_back(name, expand_env_template(tmpl, ctx_.host, port));
    }
    return vars;
}

void proxy_set::detach(std::uint64_t env_key) {
    for (auto& p : proxies_) p->detach(env_key);
}

void proxy_set::close() {
    for (auto& p : proxies_) p->close();
}

nlohmann::json proxy_set::to_json() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& p : proxies_) {
        const auto& dep = p->config();
        nlohmann::json item = p->counters().to_json();
        item["upstream"] = dep.upstream_host + ":" + std::to_string(dep.upstream_port);
        item["port"] = p->port();
        j[dep.name] = std::move(item);
    }
    return j;
}

void proxy_set::reset_counters() {
    for (auto& p : proxies_) p->reset_counters();
}

}  // namespace coldbrew::proxy
