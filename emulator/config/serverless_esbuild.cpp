#include "emulator/config/serverless_esbuild.hpp"

#include "emulator/config/config_error.hpp"
#include "emulator/config/not_emulated.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace coldbrew::config {

namespace fs = std::filesystem;
using property = build_spec::esbuild_options::property;
using detail::ynode;
using detail::ymember;
using detail::normal_absolute;
using detail::add_entry;
using detail::fail;

namespace {

// The plugin's own options, which it removes before calling esbuild (bundle.ts).
constexpr std::array<std::string_view, 21> plugin_only = {
    "concurrency",     "zipConcurrency",     "exclude",           "nativeZip",
    "packager",        "packagePath",        "watch",             "keepOutputDirectory",
    "packagerOptions", "installExtraArgs",   "outputFileExtension", "outputBuildFolder",
    "outputWorkFolder", "nodeExternals",     "skipBuild",         "skipRebuild",
    "skipBuildExcludeFns", "stripEntryResolveExtensions", "disposeContext",
    // Not esbuild's either: read by the plugin (index.ts), handled here or not_emulated.
    "config",          "plugins"};

// esbuild CLI options whose list is one comma-separated value (`--main-fields=a,b`); other
// lists repeat the flag (`--external:a --external:b`). esbuild's CLI documentation.
constexpr std::array<std::string_view, 5> comma_lists = {"main_fields", "resolve_extensions",
                                                         "conditions", "target", "drop_labels"};

// Options coldbrew fixes itself (emulator/build esbuild_arguments, plus outbase here).
constexpr std::array<std::string_view, 6> fixed = {"bundle", "platform", "outdir",
                                                   "outfile", "outbase", "metafile"};

// esbuild CLI options given as `--key:name=value` per member of a JS object (esbuild's CLI
// documentation); any other object option (tsconfigRaw, mangleCache, stdin) has no flag form.
constexpr std::array<std::string_view, 8> map_options = {
    "define", "loader", "banner", "footer", "alias", "out_extension", "supported", "log_override"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& a, std::string_view s) {
    return std::find(a.begin(), a.end(), s) != a.end();
}

// mainFields → main_fields (esbuild_arguments turns it into --main-fields).
std::string snake(std::string_view key) {
    std::string out;
    for (char c : key) {
        if (std::isupper(static_cast<unsigned char>(c))) {
            if (!out.empty()) out += '_';
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out;
}

bool is_true(const ynode* n) { return n && n->is_scalar() && !n->quoted && n->text == "true"; }

std::vector<std::string> strings_of(const ynode* n) {
    std::vector<std::string> out;
    if (!n) return out;
    if (n->is_scalar()) out.push_back(n->text);
    if (n->is_sequence())
        for (const auto& i : n->items)
            if (i.is_scalar()) out.push_back(i.text);
    return out;
}

// One custom.esbuild option as esbuild flags: true a flag, false `=false`, a scalar one value, a list
// one value per item (or one comma-joined value), a map one `key=value` per member
// (define, loader, banner, footer, alias: `--define:K=V`).
std::optional<property> to_property(const ymember& m) {
    property p;
    p.key = snake(m.key);
    const ynode& v = m.value;
    if (v.is_scalar()) {
        if (!v.quoted && v.text == "true") {
            p.type = property::kind::boolean;
            p.flag = true;
        } else if (!v.quoted && v.text == "false") {
            // `--key=false`, not nothing: the plugin hands false to esbuild, which turns off
            // options that are on by default (sourcesContent, treeShaking when bundling).
            p.type = property::kind::string;
            p.values = {"false"};
        } else {
            p.type = property::kind::string;
            p.values = {v.text};
        }
        return p;
    }
    if (v.is_sequence()) {
        std::vector<std::string> items = strings_of(&v);
        if (contains(comma_lists, p.key)) {
            std::string joined;
            for (const auto& i : items) joined += (joined.empty() ? "" : ",") + i;
            p.type = property::kind::string;
            p.values = {joined};
        } else {
            p.type = property::kind::list;
            p.values = std::move(items);
        }
        return p;
    }
    if (v.is_map()) {
        if (!contains(map_options, p.key)) return std::nullopt;
        p.type = property::kind::list;
        for (const auto& kv : v.members)
            if (kv.value.is_scalar()) p.values.push_back(kv.key + "=" + kv.value.text);
        return p;
    }
    return std::nullopt;
}

}  // namespace

std::string serverless_esbuild_target(const std::string& runtime) {
    // helper.ts awsNodeMatcher: nodejs<N>.x → node<N>.
    constexpr std::string_view prefix = "nodejs";
    if (runtime.rfind(prefix, 0) != 0) return {};
    std::string version;
    for (std::size_t i = prefix.size(); i < runtime.size() && std::isdigit(static_cast<unsigned char>(runtime[i])); ++i)
        version += runtime[i];
    return version.empty() ? std::string() : "node" + version;
}

std::optional<build_spec> serverless_esbuild_build(const detail::ynode& options,
                                                   const std::string& provider_runtime,
                                                   const function& fn, const detail::ynode& handler,
                                                   const detail::ynode* entrypoint,
                                                   const fs::path& service_dir) {
    if (serverless_esbuild_target(fn.runtime).empty()) return std::nullopt;
    const ynode* opts = options.is_map() ? &options : nullptr;
    auto option = [&](std::string_view key) { return opts ? opts->find(key) : nullptr; };
    if (is_true(option("skipBuild"))) {
        const auto keep = strings_of(option("skipBuildExcludeFns"));
        if (std::find(keep.begin(), keep.end(), fn.name) == keep.end()) return std::nullopt;
    }

    build_spec b;
    b.method = "esbuild";
    b.source_dir = normal_absolute(service_dir);
    b.artifacts_dir = b.source_dir / ".coldbrew" / "build" / fn.name;
    b.where = handler.where;
    b.path = handler.path;

    // The entry file (helper.ts extractFunctionEntries).
    const std::string from =
        entrypoint && entrypoint->is_scalar() ? entrypoint->text : fn.handler;
    const std::string ext = fs::path(from).extension().string();
    const std::string file = ext.empty() ? from : from.substr(0, from.rfind(ext));
    std::vector<std::string> extensions = strings_of(option("resolveExtensions"));
    if (extensions.empty()) extensions = {".ts", ".js", ".jsx", ".tsx"};
    std::error_code ec;
    for (const auto& e : extensions) {
        for (const std::string& candidate : {file + e, (fs::path(file) / "index").string() + e}) {
            if (fs::is_regular_file(b.source_dir / candidate, ec)) {
                b.esbuild.entry_points = {fs::path(candidate).lexically_normal().string()};
                break;
            }
        }
        if (!b.esbuild.entry_points.empty()) break;
    }
    if (b.esbuild.entry_points.empty()) {
        std::string tried;
        for (const auto& e : extensions) tried += (tried.empty() ? "" : ", ") + e;
        throw config_error(entrypoint ? entrypoint->where : handler.where,
                           entrypoint ? entrypoint->path : handler.path,
                           fn.name + ": serverless-esbuild finds no entry file for " + from +
                               ": neither " + file + "<ext> nor " + file + "/index<ext> exists in " +
                               b.source_dir.string() + " (ext: " + tried + ")");
    }

    // Defaults first, so a custom.esbuild key of the same name replaces them.
    auto& props = b.esbuild.properties;
    auto set = [&](property p) {
        auto it = std::find_if(props.begin(), props.end(),
                               [&](const property& q) { return q.key == p.key; });
        if (it != props.end()) *it = std::move(p);
        else props.push_back(std::move(p));
    };
    std::string target = serverless_esbuild_target(provider_runtime);
    set({"target", property::kind::string, false, {target.empty() ? "node18" : target}});
    set({"minify", property::kind::boolean, false, {}});
    // The output keeps the entry's directory (bundle.ts outdir = build/dirname(entry)).
    set({"outbase", property::kind::string, false, {"."}});

    std::vector<std::string> external = strings_of(option("external"));
    std::vector<std::string> exclude = {"aws-sdk"};
    if (const ynode* x = option("exclude")) exclude = strings_of(x);
    if (std::find(exclude.begin(), exclude.end(), "*") == exclude.end())
        external.insert(external.end(), exclude.begin(), exclude.end());

    if (opts) {
        for (const auto& m : opts->members) {
            if (contains(plugin_only, m.key) || m.key == "external") continue;
            auto p = to_property(m);
            if (!p || contains(fixed, p->key)) continue;
            set(std::move(*p));
        }
    }
    if (!external.empty()) set({"external", property::kind::list, false, external});
    if (const ynode* x = option("outputFileExtension"); x && x->is_scalar() && x->text != ".js") {
        // bundle.ts refuses an extension node would load in the other module system.
        const ynode* format = option("format");
        const ynode* platform = option("platform");
        const bool esm = (format && format->is_scalar() && format->text == "esm") ||
                         (!format && platform && platform->is_scalar() && platform->text == "neutral");
        if (esm && x->text == ".cjs")
            fail(*x, fn.name + ": serverless-esbuild: format esm (or platform neutral) cannot "
                               "output .cjs files");
        if (!esm && x->text == ".mjs")
            fail(*x, fn.name + ": serverless-esbuild: .mjs output needs format: esm");
        set({"out_extension", property::kind::list, false, {".js=" + x->text}});
    }
    // The outbase property must not be dropped by a custom `outbase`: it is what keeps the
    // handler path valid.
    set({"outbase", property::kind::string, false, {"."}});
    return b;
}

void serverless_esbuild_ignored(const detail::ynode& options, std::vector<not_emulated>& ignored) {
    if (!options.is_map()) return;
    auto entry = [&](const ymember& m, std::string meaning, std::string fix) {
        not_emulated n;
        n.kind = "plugin";
        n.what = "serverless-esbuild custom.esbuild." + m.key;
        n.where = m.key_where;
        n.meaning = std::move(meaning);
        n.fix = std::move(fix);
        add_entry(ignored, std::move(n));
    };
    for (const auto& m : options.members) {
        const ynode& v = m.value;
        if (m.key == "config")
            entry(m, "coldbrew does not run the JS config file; it builds from the rest of "
                     "custom.esbuild and the plugin's defaults",
                  "write the options into custom.esbuild in serverless.yml");
        else if (m.key == "plugins")
            entry(m, "esbuild plugins are JS and are not run: the build goes without them",
                  "drop what needs a plugin, or run `serverless package` and serve "
                  ".esbuild/.build");
        else if (m.key == "nodeExternals")
            entry(m, "coldbrew bundles the packages nodeExternals would leave in node_modules, "
                     "so the measured package is larger",
                  "list them under custom.esbuild.external");
        else if (m.key == "metafile" && is_true(&v))
            entry(m, "no metafile is written", "run esbuild --metafile yourself to inspect the bundle");
        else if (m.key == "bundle" && v.is_scalar() && v.text == "false")
            entry(m, "coldbrew always bundles", "leave bundle at its default (true)");
        else if (m.key == "platform" && v.is_scalar() && v.text != "node")
            entry(m, "coldbrew builds for platform node", "use platform: node");
        else if (v.is_map() && !contains(plugin_only, m.key) && !contains(map_options, snake(m.key)))
            entry(m, "an object option has no esbuild command-line form: the build goes without it",
                  "give it in a form esbuild's CLI takes (tsconfigRaw: a tsconfig file under tsconfig)");
        else if (m.key == "outdir" || m.key == "outfile" || m.key == "outbase")
            entry(m, "the build goes to .coldbrew/build/<function>, laid out like the entries",
                  "remove it: the handler path stays valid without it");
    }
}

}  // namespace coldbrew::config
