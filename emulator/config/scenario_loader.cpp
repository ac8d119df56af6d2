// Scenario files for `coldbrew sim` (schema in scenario_loader.hpp). Table-driven like
// coldbrew.yaml: each mapping lists its keys with a parse function per key, so unknown keys
// and "did you mean" come from one place.

#include "emulator/config/scenario_loader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <span>

#include "emulator/config/rules.hpp"
#include "emulator/config/scenario_parts.hpp"
#include "emulator/config/yaml_tree.hpp"
#include "models/distribution/distribution.hpp"

namespace coldbrew::config {

namespace sim = models::sim;
using detail::expect_double;
using detail::expect_int;
using detail::expect_map;
using detail::expect_sequence;
using detail::expect_string;
using detail::fail;
using detail::fail_key;
using detail::ymember;
using detail::ynode;

namespace {

template <class Target> struct field {
    std::string_view key;
    void (*parse)(const ynode& value, Target& out);
};

// Runs the row of `fields` named by each key of `map`; unknown keys are errors.
template <class Target>
void parse_section(const ynode& map, std::span<const field<Target>> fields, Target& out,
                   std::string_view what) {
    if (map.is_null()) return;
    expect_map(map, what);
    std::vector<std::string_view> keys;
    for (const auto& f : fields) keys.push_back(f.key);
    for (const auto& m : map.members) {
        auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const field<Target>& f) { return f.key == m.key; });
        if (it == fields.end()) {
            std::string allowed;
            for (auto k : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
            fail_key(m, detail::join_path(map.path, m.key),
                     "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                         "; allowed here: " + allowed);
        }
        it->parse(m.value, out);
    }
}

// ---- scalars -----------------------------------------------------------------------------

double duration_ms(const ynode& v, std::string_view what) {
    if (!v.is_scalar()) fail(v, std::string(what) + " must be a duration such as 250ms or 3s");
    double ms = 0;
    try {
        ms = models::parse_duration_ms(v.text);
    } catch (const models::distribution_error& e) {
        throw config_error(detail::position_in_scalar(v, e.offset()), v.path,
                           std::string(e.what()) + " in '" + v.text + "'");
    }
    if (!(ms >= 0) || !std::isfinite(ms)) fail(v, std::string(what) + " must be >= 0");
    return ms;
}

double positive_duration_ms(const ynode& v, std::string_view what) {
    const double ms = duration_ms(v, what);
    if (!(ms > 0)) fail(v, std::string(what) + " must be longer than 0");
    return ms;
}

std::string shortest(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

double number(const ynode& v, std::string_view what, double lo, double hi) {
    const double x = expect_double(v, what);
    if (!std::isfinite(x) || x < lo || x > hi)
        fail(v, std::string(what) + " must be a number from " + shortest(lo) + " to " + shortest(hi) +
                    ", got " + v.text);
    return x;
}


bool boolean(const ynode& v, std::string_view what) {
    if (v.is_scalar()) {
        if (v.text == "true" || v.text == "True" || v.text == "TRUE") return true;
        if (v.text == "false" || v.text == "False" || v.text == "FALSE") return false;
    }
    fail(v, std::string(what) + " must be true or false, got '" + v.text + "'");
}


models::distribution distribution(const ynode& v, std::string_view what) {
    const std::string& text = expect_string(v, what);
    try {
        models::distribution d = models::parse_distribution(text);
        if (d.quantile(0.001) < 0)
            fail(v, std::string(what) + " is a duration and cannot be negative, got '" + text + "'");
        return d;
    } catch (const models::distribution_error& e) {
        throw config_error(detail::position_in_scalar(v, e.offset()), v.path,
                           std::string(e.what()) + " in '" + text + "'");
    } catch (const std::invalid_argument& e) {
        fail(v, std::string(e.what()) + " in '" + text + "'");
    }
}

int integer(const ynode& v, std::string_view what, int lo, int hi) {
    return static_cast<int>(expect_int(v, lo, hi, what));
}

// ---- retry policies ----------------------------------------------------------------------

std::vector<std::string_view> retry_names = {"none", "client", "sdk-standard", "lambda-async",
                                             "step-functions"};

void retry_on(const ynode& v, sim::retry_policy& p) {
    p.retry_errors = p.retry_timeouts = p.retry_throttles = false;
    static constexpr std::array<std::string_view, 3> kinds = {"error", "timeout", "throttle"};
    for (const auto& item : expect_sequence(v, "retry_on").items) {
        const std::string k = detail::expect_choice(item, "retry_on entry", kinds);
        if (k == "error") p.retry_errors = true;
        if (k == "timeout") p.retry_timeouts = true;
        if (k == "throttle") p.retry_throttles = true;
    }
}

constexpr field<sim::retry_policy> client_fields[] = {
    {"policy", [](const ynode&, sim::retry_policy&) {}},
    {"max_attempts", [](const ynode& v, sim::retry_policy& p) { p.client.max_attempts = integer(v, "max_attempts", 1, 100); }},
    {"base", [](const ynode& v, sim::retry_policy& p) { p.client.base_ms = duration_ms(v, "base"); }},
    {"cap", [](const ynode& v, sim::retry_policy& p) { p.client.cap_ms = duration_ms(v, "cap"); }},
    {"jitter",
     [](const ynode& v, sim::retry_policy& p) {
         static constexpr std::array<std::string_view, 4> kinds = {"none", "full", "equal", "decorrelated"};
         p.client.jitter = *models::parse_jitter_kind(detail::expect_choice(v, "jitter", kinds));
     }},
    {"retry_on", retry_on},
};

constexpr field<sim::retry_policy> sdk_fields[] = {
    {"policy", [](const ynode&, sim::retry_policy&) {}},
    {"max_attempts", [](const ynode& v, sim::retry_policy& p) { p.sdk.max_attempts = integer(v, "max_attempts", 1, 100); }},
    {"base", [](const ynode& v, sim::retry_policy& p) { p.sdk.base_ms = duration_ms(v, "base"); }},
    {"cap", [](const ynode& v, sim::retry_policy& p) { p.sdk.cap_ms = duration_ms(v, "cap"); }},
    {"quota", [](const ynode& v, sim::retry_policy& p) { p.sdk.initial_tokens = integer(v, "quota", 0, 1000000); }},
    {"retry_cost", [](const ynode& v, sim::retry_policy& p) { p.sdk.retry_cost = integer(v, "retry_cost", 0, 1000000); }},
    {"timeout_cost", [](const ynode& v, sim::retry_policy& p) { p.sdk.timeout_retry_cost = integer(v, "timeout_cost", 0, 1000000); }},
    {"retry_on", retry_on},
};

constexpr field<sim::retry_policy> async_fields[] = {
    {"policy", [](const ynode&, sim::retry_policy&) {}},
    {"maximum_retry_attempts",
     [](const ynode& v, sim::retry_policy& p) {
         p.lambda_async.maximum_retry_attempts = integer(v, "maximum_retry_attempts", 0, 2);
     }},
    {"maximum_event_age",
     [](const ynode& v, sim::retry_policy& p) {
         const double ms = duration_ms(v, "maximum_event_age");
         if (ms < models::min_event_age_ms || ms > models::max_event_age_ms)
             fail(v, "maximum_event_age must be from 60s to 6h (EventInvokeConfig), got " + v.text);
         p.lambda_async.maximum_event_age_ms = ms;
     }},
};

constexpr field<models::sfn_retrier> retrier_fields[] = {
    {"ErrorEquals",
     [](const ynode& v, models::sfn_retrier& r) {
         r.error_equals.clear();
         r.errors = 0;
         static constexpr std::array<std::string_view, 7> known = {
             "States.ALL", "States.Timeout", "States.TaskFailed", "Lambda.ServiceException",
             "Lambda.AWSLambdaException", "Lambda.SdkClientException",
             "Lambda.TooManyRequestsException"};
         for (const auto& item : expect_sequence(v, "ErrorEquals").items) {
             const std::string& name = expect_string(item, "error name");
             const auto bits = models::parse_sfn_error(name);
             if (!bits)
                 fail(item, "the simulator raises no error named '" + name + "' (known: States.ALL, "
                            "States.Timeout, States.TaskFailed, Lambda.ServiceException, "
                            "Lambda.AWSLambdaException, Lambda.SdkClientException, "
                            "Lambda.TooManyRequestsException)" + detail::value_hint(name, known));
             r.error_equals.push_back(name);
             r.errors |= *bits;
         }
     }},
    {"IntervalSeconds",
     [](const ynode& v, models::sfn_retrier& r) { r.interval_ms = integer(v, "IntervalSeconds", 1, 99999999) * 1000.0; }},
    {"MaxAttempts", [](const ynode& v, models::sfn_retrier& r) { r.max_attempts = integer(v, "MaxAttempts", 0, 99999999); }},
    {"BackoffRate",
     [](const ynode& v, models::sfn_retrier& r) { r.backoff_rate = number(v, "BackoffRate", 1.0, 1e6); }},
    {"MaxDelaySeconds",
     [](const ynode& v, models::sfn_retrier& r) { r.max_delay_ms = integer(v, "MaxDelaySeconds", 1, 31622400) * 1000.0; }},
    {"JitterStrategy",
     [](const ynode& v, models::sfn_retrier& r) {
         static constexpr std::array<std::string_view, 2> kinds = {"FULL", "NONE"};
         r.full_jitter = detail::expect_choice(v, "JitterStrategy", kinds) == "FULL";
     }},
};

std::vector<models::sfn_retrier> retriers(const ynode& v) {
    std::vector<models::sfn_retrier> out;
    for (const auto& item : expect_sequence(v, "retriers").items) {
        models::sfn_retrier r;
        if (!item.find("ErrorEquals"))
            fail(item, "a retrier needs ErrorEquals (for example [States.ALL])");
        parse_section<models::sfn_retrier>(item, retrier_fields, r, "retrier");
        out.push_back(r);
    }
    try {
        models::validate(out);
    } catch (const std::invalid_argument& e) {
        fail(v, e.what());
    }
    return out;
}

sim::retry_policy retry_policy(const ynode& v) {
    sim::retry_policy p;
    if (v.is_sequence()) {
        p.type = sim::retry_policy::kind::step_functions;
        p.step_functions = retriers(v);
        return p;
    }
    const ynode* kind_node = &v;
    if (v.is_map()) {
        kind_node = v.find("policy");
        if (!kind_node) fail(v, "a retry mapping needs 'policy' (one of none, client, sdk-standard, lambda-async, step-functions)");
    }
    const std::string kind = detail::expect_choice(*kind_node, "retry policy", retry_names);
    if (kind == "none") {
        if (v.is_map() && v.members.size() > 1) fail(v, "retry policy none takes no settings");
        return p;
    }
    if (kind == "client") {
        p.type = sim::retry_policy::kind::client;
        if (v.is_map()) parse_section<sim::retry_policy>(v, client_fields, p, "retry");
        try {
            models::validate(p.client);
        } catch (const std::invalid_argument& e) {
            fail(v, e.what());
        }
    } else if (kind == "sdk-standard") {
        p.type = sim::retry_policy::kind::sdk_standard;
        if (v.is_map()) parse_section<sim::retry_policy>(v, sdk_fields, p, "retry");
    } else if (kind == "lambda-async") {
        p.type = sim::retry_policy::kind::lambda_async;
        if (v.is_map()) parse_section<sim::retry_policy>(v, async_fields, p, "retry");
    } else {
        p.type = sim::retry_policy::kind::step_functions;
        p.step_functions = {models::sfn_retrier{}};
        if (v.is_map()) {
            for (const auto& m : v.members)
                if (m.key != "policy" && m.key != "retriers")
                    fail_key(m, detail::join_path(v.path, m.key),
                             "unknown key '" + m.key + "'; allowed here: policy, retriers");
            if (const ynode* r = v.find("retriers")) p.step_functions = retriers(*r);
        }
    }
    return p;
}

// ---- the document ------------------------------------------------------------------------

struct loader {
    std::string file;
    std::filesystem::path dir;
    std::shared_ptr<const models::profile> profile;
    sim::scenario s;
    std::map<std::string, std::size_t> index;
    std::vector<std::string> names;

    std::size_t component_of(const ynode& v) {
        const std::string& name = expect_string(v, "component name");
        const auto it = index.find(name);
        if (it == index.end()) {
            fail(v, "no component named '" + name + "'" +
                        [&] {
                            const auto m = detail::closest_match(name, names);
                            return m ? " (did you mean '" + *m + "'?)" : std::string();
                        }() +
                        "; components: " + [&] {
                            std::string all;
                            for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
                            return all;
                        }());
        }
        return it->second;
    }

    std::vector<sim::step> steps(const ynode& v) {
        std::vector<sim::step> out;
        if (v.is_null()) return out;
        for (const auto& item : expect_sequence(v, "a list of steps").items) out.push_back(step(item));
        return out;
    }

    sim::step step(const ynode& v) {
        sim::step st;
        if (v.is_scalar()) {
            st.component = component_of(v);
            return st;
        }
        expect_map(v, "a step (a component name, {call: …} or {parallel: […]})");
        if (const ynode* par = v.find("parallel")) {
            if (v.members.size() > 1) {
                for (const auto& m : v.members)
                    if (m.key != "parallel")
                        fail_key(m, detail::join_path(v.path, m.key),
                                 "a parallel step takes only 'parallel' (its branches)");
            }
            st.type = sim::step::kind::parallel;
            for (const auto& branch : expect_sequence(*par, "parallel branches").items) {
                if (branch.is_sequence()) {
                    if (branch.items.empty()) fail(branch, "an empty branch calls nothing");
                    st.branches.push_back(steps(branch));
                } else {
                    st.branches.push_back({step(branch)});
                }
            }
            if (st.branches.empty()) fail(*par, "a parallel step needs at least one branch");
            return st;
        }
        static constexpr std::array<std::string_view, 6> keys = {"call", "retry", "timeout",
                                                                 "async", "cache", "parallel"};
        const ynode* call = v.find("call");
        if (!call) fail(v, "a step needs 'call' (a component name) or 'parallel'");
        st.component = component_of(*call);
        for (const auto& m : v.members) {
            const std::string path = detail::join_path(v.path, m.key);
            if (m.key == "call") continue;
            if (m.key == "retry") {
                st.retry = retry_policy(m.value);
            } else if (m.key == "timeout") {
                st.timeout_ms = positive_duration_ms(m.value, "timeout");
            } else if (m.key == "async") {
                st.async = boolean(m.value, "async");
            } else if (m.key == "cache") {
                st.cache = cache(m.value);
            } else {
                fail_key(m, path,
                         "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                             "; allowed here: call, retry, timeout, async, cache");
            }
        }
        return st;
    }

    sim::cache_config cache(const ynode& v) {
        sim::cache_config c;
        c.latency_ms = models::distribution::fixed(0);
        expect_map(v, "cache");
        static constexpr std::array<std::string_view, 4> keys = {"hit_ratio", "ttl", "instances", "latency"};
        for (const auto& m : v.members) {
            if (m.key == "hit_ratio")
                c.hit_ratio = number(m.value, "hit_ratio", 0.0, 1.0);
            else if (m.key == "ttl")
                c.ttl_ms = positive_duration_ms(m.value, "ttl");
            else if (m.key == "instances")
                c.instances = integer(m.value, "instances", 1, 10000000);
            else if (m.key == "latency")
                c.latency_ms = distribution(m.value, "latency");
            else
                fail_key(m, detail::join_path(v.path, m.key),
                         "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                             "; allowed here: hit_ratio, ttl, instances, latency");
        }
        if (c.hit_ratio.has_value() == c.ttl_ms.has_value())
            fail(v, "a cache needs exactly one of hit_ratio and ttl");
        return c;
    }
};

// Each component key's parser sees the component and the loader.
struct component_target {
    sim::component* c;
    loader* l;
    const ynode* calls = nullptr;
    const ynode* availability = nullptr;
    const ynode* timeout = nullptr;
    std::vector<std::string> kind_only;  // "kind:key" for keys of one service kind
};

sim::failure_mix failure_mix(const ynode& v) {
    sim::failure_mix f;
    if (v.is_scalar()) {
        static constexpr std::array<std::string_view, 3> kinds = {"error", "phantom", "phantom-after"};
        const std::string k = detail::expect_choice(v, "failures", kinds);
        f.error = k == "error" ? 1 : 0;
        f.phantom = k == "phantom" ? 1 : 0;
        f.phantom_after = k == "phantom-after" ? 1 : 0;
        return f;
    }
    f.error = 0;
    static constexpr std::array<std::string_view, 3> keys = {"error", "phantom", "phantom_after"};
    for (const auto& m : expect_map(v, "failures").members) {
        const double x = number(m.value, m.key, 0.0, 1.0);
        if (m.key == "error")
            f.error = x;
        else if (m.key == "phantom")
            f.phantom = x;
        else if (m.key == "phantom_after")
            f.phantom_after = x;
        else
            fail_key(m, detail::join_path(v.path, m.key),
                     "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                         "; allowed here: error, phantom, phantom_after");
    }
    if (!(f.error + f.phantom + f.phantom_after > 0)) fail(v, "failure shares must not all be 0");
    return f;
}

constexpr field<component_target> component_fields[] = {
    {"service", [](const ynode& v, component_target& t) { t.c->service = expect_string(v, "service"); }},
    {"availability", [](const ynode& v, component_target& t) { t.availability = &v; }},
    {"failures", [](const ynode& v, component_target& t) { t.c->failures = failure_mix(v); }},
    {"latency", [](const ynode& v, component_target& t) { t.c->latency_ms = distribution(v, "latency"); }},
    {"timeout", [](const ynode& v, component_target& t) { t.timeout = &v; }},
    {"capacity",
     [](const ynode& v, component_target& t) {
         static constexpr std::array<std::string_view, 2> keys = {"concurrency", "queue"};
         for (const auto& m : expect_map(v, "capacity").members) {
             if (m.key == "concurrency")
                 t.c->cap.concurrency = integer(m.value, "concurrency", 1, 10000000);
             else if (m.key == "queue")
                 t.c->cap.queue = integer(m.value, "queue", 0, 100000000);
             else
                 fail_key(m, detail::join_path(v.path, m.key),
                          "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                              "; allowed here: concurrency, queue");
         }
         if (!t.c->cap.limited()) fail(v, "capacity needs concurrency");
     }},
    {"keys",
     [](const ynode& v, component_target& t) {
         sim::key_space k;
         static constexpr std::array<std::string_view, 4> keys = {"count", "hot", "hot_weight", "shards"};
         for (const auto& m : expect_map(v, "keys").members) {
             if (m.key == "count")
                 k.count = integer(m.value, "count", 1, 10000000);
             else if (m.key == "hot")
                 k.hot = integer(m.value, "hot", 0, 10000000);
             else if (m.key == "hot_weight")
                 k.hot_weight = number(m.value, "hot_weight", 1e-9, 1e9);
             else if (m.key == "shards")
                 k.shards = integer(m.value, "shards", 1, 100000);
             else
                 fail_key(m, detail::join_path(v.path, m.key),
                          "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                              "; allowed here: count, hot, hot_weight, shards");
         }
         if (k.hot > k.count) fail(v, "hot must not exceed count");
         t.c->keys = k;
     }},
    {"writes", [](const ynode& v, component_target& t) { t.c->writes = boolean(v, "writes"); }},
    {"idempotent", [](const ynode& v, component_target& t) { t.c->idempotent = boolean(v, "idempotent"); }},
    {"retry", [](const ynode& v, component_target& t) { t.c->retry = retry_policy(v); }},
    {"price_per_million",
     [](const ynode& v, component_target& t) { t.c->price_per_million_calls = number(v, "price_per_million", 0, 1e9); }},
    {"calls", [](const ynode& v, component_target& t) { t.calls = &v; }},
    // api_gateway
    {"api",
     [](const ynode& v, component_target& t) {
         static constexpr std::array<std::string_view, 2> kinds = {"rest", "http"};
         t.c->http_api = detail::expect_choice(v, "api", kinds) == "http";
         t.kind_only.emplace_back("api_gateway:api");
     }},
    // lambda
    {"runtime",
     [](const ynode& v, component_target& t) {
         t.c->function.traits.runtime = expect_string(v, "runtime");
         t.kind_only.emplace_back("lambda:runtime");
     }},
    {"architecture",
     [](const ynode& v, component_target& t) {
         t.c->function.traits.architecture = detail::read_architecture(v, t.c->name);
         t.kind_only.emplace_back("lambda:architecture");
     }},
    {"memory_mb",
     [](const ynode& v, component_target& t) {
         // Lambda's 128-10240 MB; an express workflow's billing memory uses the same key.
         t.c->function.traits.memory_mb = integer(v, "memory_mb", 64, 10240);
         t.c->sfn.memory_mb = t.c->function.traits.memory_mb;
     }},
    {"package_mb",
     [](const ynode& v, component_target& t) {
         t.c->function.traits.package_zipped_mb = number(v, "package_mb", 0, 10240);
         t.kind_only.emplace_back("lambda:package_mb");
     }},
    {"package_type",
     [](const ynode& v, component_target& t) {
         static constexpr std::array<std::string_view, 2> kinds = {"zip", "image"};
         t.c->function.traits.package = detail::expect_choice(v, "package_type", kinds) == "image"
                                            ? models::package_type::image
                                            : models::package_type::zip;
         t.kind_only.emplace_back("lambda:package_type");
     }},
    {"vpc",
     [](const ynode& v, component_target& t) {
         static constexpr std::array<std::string_view, 3> kinds = {"none", "hyperplane", "legacy-eni"};
         t.c->function.traits.vpc = *models::parse_vpc_mode(detail::expect_choice(v, "vpc", kinds));
         t.kind_only.emplace_back("lambda:vpc");
     }},
    {"extensions",
     [](const ynode& v, component_target& t) {
         for (const auto& item : expect_sequence(v, "extensions").items)
             t.c->function.traits.extensions.push_back(expect_string(item, "extension kind"));
         t.kind_only.emplace_back("lambda:extensions");
     }},
    {"reserved_concurrency",
     [](const ynode& v, component_target& t) {
         t.c->function.reserved_concurrency = integer(v, "reserved_concurrency", 0, detail::max_concurrency);
         t.kind_only.emplace_back("lambda:reserved_concurrency");
     }},
    {"provisioned_concurrency",
     [](const ynode& v, component_target& t) {
         t.c->function.provisioned_concurrency = integer(v, "provisioned_concurrency", 0, detail::max_concurrency);
         t.kind_only.emplace_back("lambda:provisioned_concurrency");
     }},
    {"cold_start_share",
     [](const ynode& v, component_target& t) {
         t.c->function.cold_start_share = number(v, "cold_start_share", 0.0, 1.0);
         t.kind_only.emplace_back("lambda:cold_start_share");
     }},
    {"cpu_share",
     [](const ynode& v, component_target& t) {
         t.c->function.cpu_share = number(v, "cpu_share", 0.0, 1.0);
         t.kind_only.emplace_back("lambda:cpu_share");
     }},
    {"latency_at_memory_mb",
     [](const ynode& v, component_target& t) {
         t.c->function.latency_at_memory_mb = integer(v, "latency_at_memory_mb", 128, 10240);
         t.kind_only.emplace_back("lambda:latency_at_memory_mb");
     }},
    {"threads",
     [](const ynode& v, component_target& t) {
         t.c->function.threads = integer(v, "threads", 1, 64);
         t.kind_only.emplace_back("lambda:threads");
     }},
    // step_functions
    {"workflow",
     [](const ynode& v, component_target& t) {
         static constexpr std::array<std::string_view, 2> kinds = {"standard", "express"};
         t.c->sfn.express = detail::expect_choice(v, "workflow", kinds) == "express";
         t.kind_only.emplace_back("step_functions:workflow");
     }},
    {"transitions",
     [](const ynode& v, component_target& t) {
         t.c->sfn.transitions = integer(v, "transitions", 1, 1000000);
         t.kind_only.emplace_back("step_functions:transitions");
     }},
};

sim::service_kind kind_of(const std::string& service) {
    if (service == "api_gateway") return sim::service_kind::api_gateway;
    if (service == "lambda") return sim::service_kind::lambda;
    if (service == "step_functions") return sim::service_kind::step_functions;
    return sim::service_kind::generic;
}

void read_component(loader& l, const ymember& m, sim::component& c) {
    c.name = m.key;
    component_target t{&c, &l, nullptr, nullptr, nullptr, {}};
    parse_section<component_target>(m.value, component_fields, t, "component");
    if (!m.value.is_map()) fail(m.value, "component '" + m.key + "' must be a mapping");
    const ynode* service = m.value.find("service");
    if (!service)
        fail_key(m, detail::join_path(m.value.path, "service"),
                 "component '" + m.key + "' needs 'service' (api_gateway, lambda, step_functions, "
                 "dynamodb, … or any name with an explicit availability)");
    c.kind = kind_of(c.service);
    // Keys that only mean something for one kind of service.
    for (const std::string& what : t.kind_only) {
        const std::string kind = what.substr(0, what.find(':'));
        const std::string key = what.substr(what.find(':') + 1);
        const bool ok = (kind == "api_gateway" && c.kind == sim::service_kind::api_gateway) ||
                        (kind == "lambda" && c.kind == sim::service_kind::lambda) ||
                        (kind == "step_functions" && c.kind == sim::service_kind::step_functions);
        if (!ok) {
            const ymember* km = m.value.find_member(key);
            fail_key(*km, detail::join_path(m.value.path, key),
                     "'" + key + "' applies to service " + kind + " only (this is '" + c.service + "')");
        }
    }
    if (!m.value.find("latency")) fail_key(m, detail::join_path(m.value.path, "latency"),
                                           "component '" + m.key + "' needs 'latency' (a distribution such as "
                                           "lognormal(median=8ms, p99=40ms))");
    // Availability: given, or the profile's published SLA for the service.
    if (t.availability) {
        c.availability = detail::expect_percent(*t.availability, "availability") / 100.0;
        c.availability_source = "scenario";
    } else {
        const auto it = l.profile->availability_percent.find(c.service);
        if (it == l.profile->availability_percent.end()) {
            std::vector<std::string> known;
            for (const auto& [k, unused] : l.profile->availability_percent) known.push_back(k);
            const auto near = detail::closest_match(c.service, known);
            fail(*service, "profile " + l.profile->name + " has no SLA for service '" + c.service + "'" +
                               (near ? " (did you mean '" + *near + "'?)" : std::string()) +
                               "; give the component an availability");
        }
        c.availability = it->second / 100.0;
        c.availability_source = "profile " + l.profile->name + ": " + c.service + " SLA";
    }
    // Timeouts: Lambda's default 3 s (quotas), API Gateway's 29 s REST / 30 s HTTP
    // integration timeout (model-data §8c); other services: none of their own.
    if (t.timeout) {
        c.timeout_ms = positive_duration_ms(*t.timeout, "timeout");
        if (c.kind == sim::service_kind::lambda && c.timeout_ms > 900000)
            fail(*t.timeout, "a Lambda function's timeout is at most 900s (Lambda quotas)");
    } else if (c.kind == sim::service_kind::lambda) {
        c.timeout_ms = 3000;
    } else if (c.kind == sim::service_kind::api_gateway) {
        c.timeout_ms = c.http_api ? 30000 : 29000;
    }
    if (c.kind == sim::service_kind::lambda) {
        if (c.function.traits.runtime.empty())
            fail_key(m, detail::join_path(m.value.path, "runtime"),
                     "function '" + m.key + "' needs 'runtime' (e.g. nodejs20.x) for its cold starts");
        if (!l.profile->find_runtime(c.function.traits.runtime))
            fail(*m.value.find("runtime"), "profile " + l.profile->name + " has no runtime row for '" +
                                               c.function.traits.runtime + "'");
        if (c.function.reserved_concurrency &&
            c.function.provisioned_concurrency > *c.function.reserved_concurrency)
            fail(*m.value.find("provisioned_concurrency"),
                 "provisioned concurrency cannot exceed reserved concurrency (Lambda rejects it)");
    }
    if (c.writes == false && m.value.find("idempotent"))
        fail(*m.value.find("idempotent"), "idempotent applies to components that write (set writes: true)");
    if (c.retry.type == sim::retry_policy::kind::lambda_async && c.kind != sim::service_kind::lambda)
        fail(*m.value.find("retry"), "lambda-async retries apply to Lambda functions only");
}

// ---- arrivals ----------------------------------------------------------------------------

sim::phase read_phase(const ynode& v) {
    sim::phase p;
    expect_map(v, "a phase");
    static constexpr std::array<std::string_view, 6> keys = {"duration", "arrivalRate", "rampTo",
                                                             "arrivalCount", "pause", "name"};
    bool has_duration = false;
    for (const auto& m : v.members) {
        if (m.key == "duration") {
            p.duration_ms = positive_duration_ms(m.value, "duration");
            has_duration = true;
        } else if (m.key == "arrivalRate") {
            p.arrival_rate = number(m.value, "arrivalRate", 0, 1e9);
        } else if (m.key == "rampTo") {
            p.ramp_to = number(m.value, "rampTo", 0, 1e9);
        } else if (m.key == "arrivalCount") {
            p.arrival_count = static_cast<std::uint64_t>(expect_int(m.value, 0, 1'000'000'000'000, "arrivalCount"));
        } else if (m.key == "pause") {
            p.duration_ms = positive_duration_ms(m.value, "pause");
            p.arrival_rate = 0;
            has_duration = true;
        } else if (m.key == "name") {
            p.name = expect_string(m.value, "name");
        } else {
            fail_key(m, detail::join_path(v.path, m.key),
                     "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                         "; allowed here: duration, arrivalRate, rampTo, arrivalCount, pause, name");
        }
    }
    if (!has_duration) fail(v, "a phase needs duration (or pause)");
    if (p.arrival_count && (v.find("arrivalRate") || v.find("rampTo")))
        fail(v, "arrivalCount replaces arrivalRate and rampTo");
    return p;
}

void read_arrivals(const ynode& v, sim::arrivals& a) {
    expect_map(v, "arrivals");
    static constexpr std::array<std::string_view, 4> keys = {"rate", "poisson", "phases", "bursts"};
    int shapes = 0;
    for (const auto& m : v.members) {
        if (m.key == "rate") {
            a.rate = number(m.value, "rate", 1e-9, 1e9);
            ++shapes;
        } else if (m.key == "poisson") {
            a.poisson = boolean(m.value, "poisson");
        } else if (m.key == "phases") {
            for (const auto& item : expect_sequence(m.value, "phases").items) a.phases.push_back(read_phase(item));
            if (a.phases.empty()) fail(m.value, "phases needs at least one phase");
            ++shapes;
        } else if (m.key == "bursts") {
            // Sugar for phases: (base rate for every - over, then size requests over `over`) × count.
            double base = 0, every = 0, over = 1000;
            std::uint64_t size = 0;
            int count = 1;
            static constexpr std::array<std::string_view, 5> bkeys = {"base_rate", "every", "size", "over", "count"};
            for (const auto& b : expect_map(m.value, "bursts").members) {
                if (b.key == "base_rate") base = number(b.value, "base_rate", 0, 1e9);
                else if (b.key == "every") every = positive_duration_ms(b.value, "every");
                else if (b.key == "size") size = static_cast<std::uint64_t>(expect_int(b.value, 1, 1'000'000'000, "size"));
                else if (b.key == "over") over = positive_duration_ms(b.value, "over");
                else if (b.key == "count") count = integer(b.value, "count", 1, 100000);
                else
                    fail_key(b, detail::join_path(m.value.path, b.key),
                             "unknown key '" + b.key + "'" + detail::did_you_mean(b.key, bkeys) +
                                 "; allowed here: base_rate, every, size, over, count");
            }
            if (!m.value.find("every") || !m.value.find("size")) fail(m.value, "bursts needs every and size");
            if (over >= every) fail(m.value, "a burst's 'over' must be shorter than 'every'");
            for (int i = 0; i < count; ++i) {
                sim::phase quiet;
                quiet.duration_ms = every - over;
                quiet.arrival_rate = base;
                quiet.name = "between bursts";
                sim::phase burst;
                burst.duration_ms = over;
                burst.arrival_count = size;
                burst.name = "burst";
                a.phases.push_back(quiet);
                a.phases.push_back(burst);
            }
            ++shapes;
        } else {
            fail_key(m, detail::join_path(v.path, m.key),
                     "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                         "; allowed here: rate, poisson, phases, bursts");
        }
    }
    if (shapes > 1) fail(v, "give one of rate, phases and bursts");
    if (!a.phases.empty()) {
        // One pass of the phases is one replication, simulated in memory: it must bring
        // requests, and a bounded number of them (memory grows with a pass, not a run).
        double arrivals = 0;
        for (const auto& p : a.phases) {
            if (p.arrival_count) {
                arrivals += static_cast<double>(*p.arrival_count);
            } else {
                const double end_rate = p.ramp_to.value_or(p.arrival_rate);
                arrivals += (p.arrival_rate + end_rate) / 2 * p.duration_ms / 1000.0;
            }
        }
        if (arrivals < 1)
            fail(v, "one pass of these phases brings no request; give a rate or an arrivalCount");
        constexpr double max_pass = 5e6;
        if (arrivals > max_pass)
            fail(v, "one pass of these phases brings about " + shortest(arrivals) +
                        " requests; at most 5000000 (a pass is simulated in memory; repeat a "
                        "shorter pass with `requests:` instead)");
    }
}

// ---- top level ---------------------------------------------------------------------------

sim::scenario read_document(const ynode& root, loader& l) {
    expect_map(root, "a scenario");
    static constexpr std::array<std::string_view, 12> keys = {
        "name", "description", "seed", "requests", "engine", "client_timeout", "slo",
        "profile", "arrivals", "components", "flow", "variants"};
    for (const auto& m : root.members)
        if (std::find(keys.begin(), keys.end(), m.key) == keys.end()) {
            std::string allowed;
            for (auto k : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
            fail_key(m, m.key, "unknown key '" + m.key + "'" + detail::did_you_mean(m.key, keys) +
                                   "; allowed here: " + allowed);
        }
    sim::scenario& s = l.s;
    s.name = std::filesystem::path(l.file).stem().string();
    if (const ynode* v = root.find("name")) s.name = expect_string(*v, "name");
    if (const ynode* v = root.find("description")) s.description = expect_string(*v, "description");
    if (const ynode* v = root.find("seed")) s.seed = detail::expect_uint64(*v, "seed");
    if (const ynode* v = root.find("requests"))
        s.requests = static_cast<std::uint64_t>(expect_int(*v, 1, 1'000'000'000'000, "requests"));
    if (const ynode* v = root.find("engine")) {
        static constexpr std::array<std::string_view, 3> kinds = {"auto", "fast", "events"};
        const std::string e = detail::expect_choice(*v, "engine", kinds);
        s.engine = e == "fast" ? sim::scenario::mode::fast
                   : e == "events" ? sim::scenario::mode::events
                                   : sim::scenario::mode::automatic;
    }
    if (const ynode* v = root.find("client_timeout")) s.client_timeout_ms = positive_duration_ms(*v, "client_timeout");
    if (const ynode* v = root.find("slo")) {
        const double p = detail::expect_percent(*v, "slo");
        if (p >= 100) fail(*v, "an slo below 100% leaves an error budget; 100% has none");
        s.slo = p / 100;
    }
    if (const ynode* v = root.find("profile")) {
        const std::string& path = expect_string(*v, "profile");
        std::filesystem::path p(path);
        if (!p.is_absolute()) p = l.dir / p;
        try {
            l.profile = std::make_shared<models::profile>(models::load_profile(p));
        } catch (const models::profile_error& e) {
            fail(*v, std::string("cannot use profile: ") + e.what());
        }
    }
    s.model_profile = l.profile.get();
    s.price = l.profile->prices;
    if (const ynode* v = root.find("arrivals")) read_arrivals(*v, s.arrival);

    const ymember* comps = root.find_member("components");
    if (!comps) fail(root, "a scenario needs 'components'");
    expect_map(comps->value, "components");
    for (const auto& m : comps->value.members) {
        l.index.emplace(m.key, l.names.size());
        l.names.push_back(m.key);
    }
    s.components.resize(comps->value.members.size());
    for (std::size_t i = 0; i < comps->value.members.size(); ++i)
        read_component(l, comps->value.members[i], s.components[i]);
    for (std::size_t i = 0; i < comps->value.members.size(); ++i)
        if (const ynode* calls = comps->value.members[i].value.find("calls")) s.components[i].calls = l.steps(*calls);

    const ynode* flow = root.find("flow");
    if (!flow) fail(root, "a scenario needs 'flow' (the calls each request makes)");
    s.flow = l.steps(*flow);
    if (s.flow.empty()) fail(*flow, "the flow needs at least one call");
    // Cycles would recurse forever: find them here, with a position.
    std::vector<int> state(s.components.size(), 0);
    std::function<void(std::size_t)> visit = [&](std::size_t c) {
        state[c] = 1;
        std::function<void(const std::vector<sim::step>&)> walk = [&](const std::vector<sim::step>& steps) {
            for (const auto& st : steps) {
                if (st.type == sim::step::kind::parallel) {
                    for (const auto& b : st.branches) walk(b);
                    continue;
                }
                if (state[st.component] == 1)
                    fail(*comps->value.members[c].value.find("calls"),
                         "component '" + s.components[c].name + "' calls '" +
                             s.components[st.component].name + "', which calls back: calls must not form a cycle");
                if (state[st.component] == 0) visit(st.component);
            }
        };
        walk(s.components[c].calls);
        state[c] = 2;
    };
    for (std::size_t c = 0; c < s.components.size(); ++c)
        if (state[c] == 0) visit(c);
    return s;
}

// Sets `value` at `path` in the tree, creating mappings as needed.
void apply_override(ynode& root, const scenario_override& o) {
    ynode* node = &root;
    std::string walked;
    std::size_t start = 0;
    const source_location where{o.origin, 0, 0};
    while (start <= o.path.size()) {
        const std::size_t dot = o.path.find('.', start);
        const std::string key = o.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (key.empty()) throw config_error(where, o.path, "empty key in the path '" + o.path + "'");
        walked = detail::join_path(walked, key);
        if (node->is_scalar()) {
            // "retry: sdk-standard" with retry.max_attempts set: {policy: sdk-standard, …}.
            ynode scalar = *node;
            *node = ynode::make_map(scalar.where, scalar.path);
            node->members.push_back(ymember{"policy", scalar.where, scalar});
        } else if (node->is_null()) {
            *node = ynode::make_map(node->where, node->path);
        } else if (node->is_sequence()) {
            std::size_t i = 0;
            const auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), i);
            if (ec != std::errc() || p != key.data() + key.size() || i >= node->items.size())
                throw config_error(where, o.path, "'" + walked + "' is a list: use an index below " +
                                                      std::to_string(node->items.size()));
            node = &node->items[i];
            if (dot == std::string::npos) break;
            start = dot + 1;
            continue;
        } else if (!node->is_map()) {
            throw config_error(where, o.path, "cannot set '" + o.path + "'");
        }
        ynode* child = node->find(key);
        if (!child && walked.rfind("components.", 0) == 0 &&
            walked.find('.', std::string("components.").size()) == std::string::npos) {
            // An override adds keys, not components: a misspelt name would otherwise make an
            // empty component that "needs 'service'".
            std::vector<std::string> names;
            for (const auto& m : node->members) names.push_back(m.key);
            const auto best = detail::closest_match(key, names);
            throw config_error(where, o.path,
                               "no component named '" + key + "'" +
                                   (best ? " (did you mean '" + *best + "'?)" : std::string()));
        }
        if (!child) {
            node->members.push_back(ymember{key, where, ynode::make_scalar("", where, walked)});
            child = &node->members.back().value;
            child->type = ynode::kind::null;
        }
        node = child;
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    // The value is parsed as YAML, so lists and mappings can be set too ("[a, b]").
    ynode parsed;
    try {
        parsed = detail::load_yaml_text(o.value, o.origin);
    } catch (const config_error& e) {
        throw config_error(where, o.path, "invalid value '" + o.value + "': " + e.message());
    }
    parsed.path = node->path.empty() ? walked : node->path;
    *node = parsed;
    // Errors about the value name the override, not a line of the file.
    std::function<void(ynode&, const std::string&)> relabel = [&](ynode& n, const std::string& path) {
        n.where = where;
        n.path = path;
        for (auto& m : n.members) {
            m.key_where = where;
            relabel(m.value, detail::join_path(path, m.key));
        }
        for (std::size_t i = 0; i < n.items.size(); ++i) relabel(n.items[i], detail::index_path(path, i));
    };
    relabel(*node, walked);
}

loaded_scenario load_tree(ynode root, const std::string& file,
                          const std::vector<scenario_override>& overrides) {
    loaded_scenario out;
    static const std::shared_ptr<const models::profile> builtin(&models::builtin_profile(),
                                                                [](const models::profile*) {});
    std::vector<std::pair<std::string, std::vector<scenario_override>>> variants;
    if (root.is_map()) {
        if (const ymember* v = root.find_member("variants")) {
            for (const auto& item : expect_sequence(v->value, "variants").items) {
                expect_map(item, "a variant ({name: …, set: {path: value, …}})");
                std::string name;
                std::vector<scenario_override> set;
                for (const auto& m : item.members) {
                    if (m.key == "name") {
                        name = expect_string(m.value, "name");
                    } else if (m.key == "set") {
                        for (const auto& s : expect_map(m.value, "set").members) {
                            std::string value;
                            if (s.value.is_scalar())
                                value = s.value.text;
                            else
                                fail(s.value, "a variant sets scalar values (write lists inline as text)");
                            set.push_back({s.key, value, file + ":" + std::to_string(s.key_where.line)});
                        }
                    } else {
                        fail_key(m, detail::join_path(item.path, m.key),
                                 "unknown key '" + m.key + "'; allowed here: name, set");
                    }
                }
                if (name.empty()) fail(item, "a variant needs a name");
                variants.emplace_back(name, std::move(set));
            }
            if (variants.empty()) fail(v->value, "variants needs at least one variant");
        }
    }
    if (variants.empty()) variants.emplace_back("", std::vector<scenario_override>{});
    for (auto& [name, set] : variants) {
        ynode tree = root;
        for (const auto& o : set) apply_override(tree, o);
        for (const auto& o : overrides) apply_override(tree, o);
        loader l;
        l.file = file;
        l.dir = std::filesystem::path(file).parent_path();
        l.profile = builtin;
        sim::scenario s = read_document(tree, l);
        // Each variant keeps the profile it read (its own `profile:` or the built-in one).
        s.model_profile = l.profile.get();
        out.variants.push_back({name, std::move(s), l.profile});
    }
    out.profile = out.variants.front().profile;
    return out;
}

}  // namespace

namespace detail {

void read_sim_arrivals(const ynode& v, models::sim::arrivals& a) { read_arrivals(v, a); }
models::sim::retry_policy read_sim_retry(const ynode& v) { return retry_policy(v); }
models::distribution read_sim_distribution(const ynode& v, std::string_view what) {
    return distribution(v, what);
}
double read_sim_duration_ms(const ynode& v, std::string_view what) { return positive_duration_ms(v, what); }
bool read_sim_bool(const ynode& v, std::string_view what) { return boolean(v, what); }

}  // namespace detail

scenario_override parse_override(const std::string& text, const std::string& origin) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw config_error({origin, 0, 0}, "", "expected path=value, got '" + text + "'");
    return {text.substr(0, eq), text.substr(eq + 1), origin};
}

loaded_scenario load_scenario(const std::filesystem::path& file,
                              const std::vector<scenario_override>& overrides) {
    return load_tree(detail::load_yaml_file(file), file.string(), overrides);
}

loaded_scenario load_scenario_text(const std::string& text, const std::string& file,
                                   const std::vector<scenario_override>& overrides) {
    return load_tree(detail::load_yaml_text(text, file), file, overrides);
}

}  // namespace coldbrew::config
