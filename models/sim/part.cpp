#include "models/sim/part.hpp"

#include <cstdio>
#include <iterator>
#include <utility>
#include <vector>

namespace coldbrew::models::sim {

namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

struct counter_field {
    const char* name;
    std::uint64_t component_counts::*member;
};

// Every scalar counter of component_counts, in its declaration order.
constexpr counter_field component_fields[] = {
    {"calls", &component_counts::calls},
    {"calls_ok", &component_counts::calls_ok},
    {"attempts", &component_counts::attempts},
    {"invocations", &component_counts::invocations},
    {"cold_starts", &component_counts::cold_starts},
    {"effects", &component_counts::effects},
    {"duplicates", &component_counts::duplicates},
    {"billed_mb_ms", &component_counts::billed_mb_ms},
    {"init_ms_sum", &component_counts::init_ms_sum},
    {"transitions", &component_counts::transitions},
    {"express_billed_mb_100ms", &component_counts::express_billed_mb_100ms},
    {"executions", &component_counts::executions},
    {"cache_lookups", &component_counts::cache_lookups},
    {"cache_hits", &component_counts::cache_hits},
    {"admitted", &component_counts::admitted},
    {"queued", &component_counts::queued},
    {"queue_wait_us", &component_counts::queue_wait_us},
    {"async_events", &component_counts::async_events},
    {"async_delivered", &component_counts::async_delivered},
    {"async_given_up", &component_counts::async_given_up},
    {"provisioned_mb_ms", &component_counts::provisioned_mb_ms},
};

// A counter added to component_counts or run_result changes their size: it must be written and
// read here too, or a merged run would silently lose it.
static_assert(sizeof(component_counts) ==
                  (std::size(component_fields) + 2 * cause_count) * sizeof(std::uint64_t) + sizeof(histogram),
              "component_counts has a counter the part format does not carry: add it to component_fields");
static_assert(sizeof(fault_counts) == sizeof(std::uint64_t) + 2 * sizeof(std::vector<std::uint64_t>),
              "fault_counts has a counter the part format does not carry: add it to run_result_to_json and back");
static_assert(sizeof(entry_counts) == 2 * sizeof(std::uint64_t) + sizeof(histogram),
              "entry_counts has a counter the part format does not carry: add it to run_result_to_json and back");
static_assert(sizeof(run_result) == sizeof(std::string) + 5 * sizeof(std::uint64_t) + 2 * sizeof(histogram) +
                                        sizeof(std::vector<component_counts>) + sizeof(fault_counts) +
                                        sizeof(std::vector<entry_counts>),
              "run_result has a field the part format does not carry: add it to run_result_to_json and back");

std::string path_of(const std::string& key, const std::string& sub) { return key.empty() ? sub : key + "." + sub; }

const json& member(const json& j, const char* name, const std::string& file, const std::string& key) {
    if (!j.is_object()) throw part_error(file, key, "expected an object");
    const auto it = j.find(name);
    if (it == j.end()) throw part_error(file, path_of(key, name), "missing");
    return *it;
}

std::uint64_t count_of(const json& j, const std::string& file, const std::string& key) {
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
        throw part_error(file, key, "expected a whole number >= 0");
    return j.get<std::uint64_t>();
}

std::uint64_t count_member(const json& j, const char* name, const std::string& file, const std::string& key) {
    return count_of(member(j, name, file, key), file, path_of(key, name));
}

ojson causes_to_json(const std::uint64_t (&v)[cause_count]) {
    ojson j = ojson::object();
    for (int c = 0; c < cause_count; ++c) j[cause_name(c)] = v[c];
    return j;
}

void causes_from_json(const json& j, std::uint64_t (&v)[cause_count], const std::string& file, const std::string& key) {
    for (int c = 0; c < cause_count; ++c) v[c] = count_member(j, cause_name(c), file, key);
}

std::string num(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

template <class T>
ojson opt(const std::optional<T>& v) {
    if (!v) return nullptr;
    if constexpr (std::is_same_v<T, double>)
        return num(*v);
    else
        return *v;
}

ojson fp(const distribution& d) { return d.to_string(); }

ojson fp(const retry_policy& p) {
    ojson j;
    j["type"] = static_cast<int>(p.type);
    j["client"] = {p.client.max_attempts, num(p.client.base_ms), num(p.client.cap_ms), static_cast<int>(p.client.jitter)};
    ojson sfn = ojson::array();
    for (const auto& r : p.step_functions)
        sfn.push_back({r.error_equals, r.errors, num(r.interval_ms), r.max_attempts, num(r.backoff_rate),
                       opt(r.max_delay_ms), r.full_jitter});
    j["step_functions"] = sfn;
    j["sdk"] = {p.sdk.max_attempts, num(p.sdk.base_ms), num(p.sdk.cap_ms), p.sdk.initial_tokens,
                p.sdk.retry_cost, p.sdk.timeout_retry_cost, p.sdk.no_retry_increment};
    ojson delays = ojson::array();
    for (double d : p.lambda_async.function_error_delays_ms) delays.push_back(num(d));
    j["lambda_async"] = {p.lambda_async.maximum_retry_attempts, num(p.lambda_async.maximum_event_age_ms), delays,
                         num(p.lambda_async.throttle_initial_delay_ms), num(p.lambda_async.throttle_max_delay_ms)};
    j["retry_on"] = {p.retry_errors, p.retry_timeouts, p.retry_throttles};
    return j;
}

ojson fp(const std::vector<step>& steps);

ojson fp(const step& st) {
    ojson j;
    j["type"] = static_cast<int>(st.type);
    j["component"] = st.component;
    j["retry"] = st.retry ? fp(*st.retry) : ojson(nullptr);
    j["timeout_ms"] = opt(st.timeout_ms);
    if (st.cache) {
        const cache_config& c = *st.cache;
        j["cache"] = {opt(c.hit_ratio), opt(c.ttl_ms), c.instances, fp(c.latency_ms)};
    } else {
        j["cache"] = nullptr;
    }
    j["async"] = st.async;
    if (st.live) {
        const live_request& l = *st.live;
        j["live"] = {static_cast<int>(l.where), l.route, l.function, l.function_name, l.method, l.path,
                     l.state_machine, l.state_machine_name, l.state, l.state_path};
    } else {
        j["live"] = nullptr;
    }
    ojson branches = ojson::array();
    for (const auto& b : st.branches) branches.push_back(fp(b));
    j["branches"] = branches;
    return j;
}

ojson fp(const std::vector<step>& steps) {
    ojson j = ojson::array();
    for (const auto& st : steps) j.push_back(fp(st));
    return j;
}

ojson fp(const component& c) {
    ojson j;
    j["name"] = c.name;
    j["service"] = c.service;
    j["kind"] = static_cast<int>(c.kind);
    j["availability"] = num(c.availability);
    j["availability_source"] = c.availability_source;
    j["failures"] = {num(c.failures.error), num(c.failures.phantom), num(c.failures.phantom_after)};
    j["latency_ms"] = fp(c.latency_ms);
    j["timeout_ms"] = num(c.timeout_ms);
    j["capacity"] = {c.cap.concurrency, opt(c.cap.queue)};
    j["keys"] = c.keys ? ojson{c.keys->count, c.keys->hot, num(c.keys->hot_weight), c.keys->shards} : ojson(nullptr);
    j["writes"] = c.writes;
    j["idempotent"] = c.idempotent;
    j["retry"] = fp(c.retry);
    j["price_per_million_calls"] = opt(c.price_per_million_calls);
    j["http_api"] = c.http_api;
    const function_config& f = c.function;
    j["function"] = {f.traits.runtime, f.traits.architecture, static_cast<int>(f.traits.package),
                     num(f.traits.package_zipped_mb), f.traits.memory_mb, static_cast<int>(f.traits.vpc),
                     f.traits.extensions, opt(f.reserved_concurrency), f.provisioned_concurrency,
                     f.max_environments, opt(f.cold_start_share), num(f.cpu_share), f.latency_at_memory_mb,
                     f.threads, f.keep_alive_ms ? fp(*f.keep_alive_ms) : ojson(nullptr),
                     f.max_lifetime_ms ? fp(*f.max_lifetime_ms) : ojson(nullptr),
                     opt(f.cold_start.runtime_row),
                     f.cold_start.runtime_init ? fp(*f.cold_start.runtime_init) : ojson(nullptr),
                     opt(f.cold_start.package_ms_per_zipped_mb)};
    j["sfn"] = {c.sfn.express, num(c.sfn.memory_mb), opt(c.sfn.transitions)};
    j["calls"] = fp(c.calls);
    return j;
}

}  // namespace

part_error::part_error(std::string file, std::string key, const std::string& message)
    : std::runtime_error(file + ": " + (key.empty() ? std::string() : key + ": ") + message),
      file_(std::move(file)),
      key_(std::move(key)) {}

ojson histogram_to_json(const histogram& h) {
    ojson j;
    j["count"] = h.count();
    j["sum_us"] = h.sum_us();
    j["min_ns"] = h.min_ns();
    j["max_ns"] = h.max_ns();
    ojson buckets = ojson::array();
    for (std::size_t i = 0; i < histogram::bucket_count; ++i)
        if (h.count_at(i)) buckets.push_back({i, h.count_at(i)});
    j["buckets"] = buckets;
    return j;
}

histogram histogram_from_json(const json& j, const std::string& file, const std::string& key) {
    const std::uint64_t count = count_member(j, "count", file, key);
    const std::uint64_t sum_us = count_member(j, "sum_us", file, key);
    const std::uint64_t min_ns = count_member(j, "min_ns", file, key);
    const std::uint64_t max_ns = count_member(j, "max_ns", file, key);
    const json& b = member(j, "buckets", file, key);
    const std::string bkey = path_of(key, "buckets");
    if (!b.is_array()) throw part_error(file, bkey, "expected a list of [index, count]");
    std::vector<std::uint64_t> counts(histogram::bucket_count, 0);
    std::uint64_t total = 0;
    std::size_t previous = 0;
    for (std::size_t n = 0; n < b.size(); ++n) {
        const std::string ekey = bkey + "[" + std::to_string(n) + "]";
        if (!b[n].is_array() || b[n].size() != 2) throw part_error(file, ekey, "expected [index, count]");
        const std::uint64_t index = count_of(b[n][0], file, ekey + "[0]");
        const std::uint64_t c = count_of(b[n][1], file, ekey + "[1]");
        if (index >= histogram::bucket_count)
            throw part_error(file, ekey, "bucket index " + std::to_string(index) + " is not below " +
                                             std::to_string(histogram::bucket_count));
        if (n && index <= previous) throw part_error(file, ekey, "bucket indexes must increase");
        if (c == 0) throw part_error(file, ekey, "an empty bucket is not listed");
        previous = static_cast<std::size_t>(index);
        counts[previous] = c;
        total += c;
    }
    if (total != count)
        throw part_error(file, path_of(key, "count"), std::to_string(count) + " is not the buckets' sum " +
                                                          std::to_string(total));
    try {
        return histogram::from_state(std::move(counts), sum_us, min_ns, max_ns);
    } catch (const std::invalid_argument& e) {
        throw part_error(file, key, e.what());
    }
}

ojson run_result_to_json(const run_result& r) {
    ojson j;
    j["engine"] = r.engine;
    j["requests"] = r.requests;
    j["successes"] = r.successes;
    j["requests_with_cold_start"] = r.requests_with_cold_start;
    j["simulated_us"] = r.simulated_us;
    j["chunks"] = r.chunks;
    j["latency"] = histogram_to_json(r.latency);
    j["latency_all"] = histogram_to_json(r.latency_all);
    ojson comps = ojson::array();
    for (const component_counts& c : r.components) {
        ojson x;
        for (const auto& f : component_fields) {
            x[f.name] = c.*f.member;
            if (std::string_view(f.name) == "attempts") {
                x["attempt_failures"] = causes_to_json(c.attempt_failures);
                x["root_causes"] = causes_to_json(c.root_causes);
            }
        }
        x["latency"] = histogram_to_json(c.latency);
        comps.push_back(std::move(x));
    }
    j["components"] = comps;
    ojson entries = ojson::array();
    for (const entry_counts& e : r.entries)
        entries.push_back({{"requests", e.requests}, {"successes", e.successes}, {"latency", histogram_to_json(e.latency)}});
    j["entries"] = std::move(entries);
    ojson f;
    f["decisions"] = r.faults.decisions;
    f["fired"] = r.faults.fired;
    f["missed"] = r.faults.missed;
    j["faults"] = std::move(f);
    return j;
}

run_result run_result_from_json(const json& j, const std::string& file, const std::string& key) {
    run_result r;
    const json& engine = member(j, "engine", file, key);
    if (!engine.is_string() || (engine != "fast" && engine != "events"))
        throw part_error(file, path_of(key, "engine"), "expected \"fast\" or \"events\"");
    r.engine = engine.get<std::string>();
    r.requests = count_member(j, "requests", file, key);
    r.successes = count_member(j, "successes", file, key);
    r.requests_with_cold_start = count_member(j, "requests_with_cold_start", file, key);
    r.simulated_us = count_member(j, "simulated_us", file, key);
    r.chunks = count_member(j, "chunks", file, key);
    if (r.successes > r.requests)
        throw part_error(file, path_of(key, "successes"), "more successes than requests");
    r.latency = histogram_from_json(member(j, "latency", file, key), file, path_of(key, "latency"));
    r.latency_all = histogram_from_json(member(j, "latency_all", file, key), file, path_of(key, "latency_all"));
    const json& comps = member(j, "components", file, key);
    const std::string ckey = path_of(key, "components");
    if (!comps.is_array()) throw part_error(file, ckey, "expected a list");
    for (std::size_t n = 0; n < comps.size(); ++n) {
        const std::string xkey = ckey + "[" + std::to_string(n) + "]";
        const json& x = comps[n];
        component_counts c;
        for (const auto& f : component_fields) c.*f.member = count_member(x, f.name, file, xkey);
        causes_from_json(member(x, "attempt_failures", file, xkey), c.attempt_failures, file,
                         path_of(xkey, "attempt_failures"));
        causes_from_json(member(x, "root_causes", file, xkey), c.root_causes, file, path_of(xkey, "root_causes"));
        c.latency = histogram_from_json(member(x, "latency", file, xkey), file, path_of(xkey, "latency"));
        r.components.push_back(std::move(c));
    }
    const json& entries = member(j, "entries", file, key);
    const std::string ekey = path_of(key, "entries");
    if (!entries.is_array()) throw part_error(file, ekey, "expected a list");
    for (std::size_t n = 0; n < entries.size(); ++n) {
        const std::string xkey = ekey + "[" + std::to_string(n) + "]";
        entry_counts e;
        e.requests = count_member(entries[n], "requests", file, xkey);
        e.successes = count_member(entries[n], "successes", file, xkey);
        if (e.successes > e.requests) throw part_error(file, path_of(xkey, "successes"), "more successes than requests");
        e.latency = histogram_from_json(member(entries[n], "latency", file, xkey), file, path_of(xkey, "latency"));
        r.entries.push_back(std::move(e));
    }
    const json& f = member(j, "faults", file, key);
    const std::string fkey = path_of(key, "faults");
    r.faults.decisions = count_member(f, "decisions", file, fkey);
    for (const char* name : {"fired", "missed"}) {
        const json& v = member(f, name, file, fkey);
        const std::string vkey = path_of(fkey, name);
        if (!v.is_array()) throw part_error(file, vkey, "expected a list");
        auto& out = std::string_view(name) == "fired" ? r.faults.fired : r.faults.missed;
        for (std::size_t n = 0; n < v.size(); ++n)
            out.push_back(count_of(v[n], file, vkey + "[" + std::to_string(n) + "]"));
    }
    return r;
}

ojson scenario_fingerprint(const scenario& s) {
    ojson j;
    j["name"] = s.name;
    j["description"] = s.description;
    j["seed"] = s.seed;
    j["requests"] = s.requests;
    ojson phases = ojson::array();
    for (const phase& p : s.arrival.phases)
        phases.push_back({num(p.duration_ms), num(p.arrival_rate), opt(p.ramp_to), opt(p.arrival_count), p.name});
    j["arrivals"] = {phases, num(s.arrival.rate), s.arrival.poisson};
    ojson comps = ojson::array();
    for (const component& c : s.components) comps.push_back(fp(c));
    j["components"] = comps;
    j["flow"] = fp(s.flow);
    ojson entries = ojson::array();
    for (const entry& e : s.entries) entries.push_back({e.name, num(e.weight), fp(e.flow)});
    j["entries"] = entries;
    ojson rules = ojson::array();
    for (const auto& r : s.fault_rules) rules.push_back(ojson::parse(r.to_json().dump()));
    j["fault_rules"] = rules;
    j["fault_seed"] = s.fault_seed;
    j["client_timeout_ms"] = num(s.client_timeout_ms);
    j["slo"] = opt(s.slo);
    j["engine"] = static_cast<int>(s.engine);
    const prices& p = s.price;
    j["prices"] = {p.date,
                   p.region,
                   p.source,
                   num(p.lambda_per_million),
                   num(p.lambda_gb_s_x86),
                   num(p.lambda_gb_s_arm),
                   num(p.lambda_provisioned_gb_s_x86),
                   num(p.lambda_provisioned_gb_s_arm),
                   num(p.lambda_provisioned_duration_gb_s_x86),
                   num(p.lambda_provisioned_duration_gb_s_arm),
                   num(p.api_rest_per_million),
                   num(p.api_http_per_million),
                   num(p.sfn_standard_per_thousand_transitions),
                   num(p.sfn_express_per_million),
                   num(p.sfn_express_gb_s),
                   num(p.sfn_express_increment_ms),
                   num(p.sfn_express_memory_increment_mb)};
    // By name only: the same profile file may sit at different paths on different machines
    // (a caller that reads files folds in the file's bytes).
    j["profile"] = s.model_profile ? ojson(s.model_profile->name) : ojson(nullptr);
    return j;
}

std::string identity_hash(std::string_view text) {
    std::uint64_t a = 0xcbf29ce484222325ull, b = 0x6c62272e07bb0142ull;
    constexpr std::uint64_t prime = 0x100000001b3ull;
    for (unsigned char ch : text) {
        a = (a ^ ch) * prime;
        b = (b ^ ch) * prime;
        b ^= b >> 29;  // a second, differently mixed stream, so one collision does not make both
    }
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
}

}  // namespace coldbrew::models::sim
