#include "emulator/config/layer_zip.hpp"

#include "emulator/config/rules.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace coldbrew::config::detail {

namespace {

std::uint64_t fnv1a_file(const std::filesystem::path& file, bool& ok) {
    std::ifstream in(file, std::ios::binary);
    ok = static_cast<bool>(in);
    std::uint64_t h = 1469598103934665603ull;
    char buf[65536];
    while (in) {
        in.read(buf, sizeof(buf));
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 1099511628211ull;
        }
    }
    return h;
}

bool escapes(const std::filesystem::path& relative) {
    int depth = 0;
    for (const auto& part : relative) {
        const auto s = part.string();
        if (s == "..") {
            if (--depth < 0) return true;
        } else if (s != "." && !s.empty()) {
            ++depth;
        }
    }
    return false;
}

// Closes both archives whatever happens.
struct archives {
    archive* in = archive_read_new();
    archive* out = archive_write_disk_new();
    ~archives() {
        archive_read_free(in);
        archive_write_free(out);
    }
};

void extract(const ynode& at, const std::filesystem::path& zip, const std::filesystem::path& into) {
    archives a;
    archive_read_support_format_zip(a.in);
    // libarchive's own guards as well as the checks here: no "..", no writing through a
    // symbolic link. (Not its absolute-path guard: each entry is written to an absolute path
    // under `into`, after unsafe_layer_entry has refused absolute names.)
    archive_write_disk_set_options(a.out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                              ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                              ARCHIVE_EXTRACT_SECURE_SYMLINKS);
    if (archive_read_open_filename(a.in, zip.c_str(), 65536) != ARCHIVE_OK)
        fail(at, "cannot read layer zip " + zip.string() + ": " + archive_error_string(a.in));
    archive_entry* entry = nullptr;
    for (;;) {
        const int r = archive_read_next_header(a.in, &entry);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN)
            fail(at, "cannot read layer zip " + zip.string() + ": " + archive_error_string(a.in));
        const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
        const char* link = archive_entry_symlink(entry);
        std::string why = unsafe_layer_entry(name, link ? link : "");
        if (why.empty() && archive_entry_hardlink(entry)) why = "is a hard link";
        if (!why.empty()) fail(at, "layer zip " + zip.string() + ": entry " + name + " " + why);
        archive_entry_set_pathname(entry, (into / name).c_str());
        if (archive_write_header(a.out, entry) < ARCHIVE_WARN)
            fail(at, "cannot extract " + name + " of " + zip.string() + ": " + archive_error_string(a.out));
        const void* buf = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        for (;;) {
            const int d = archive_read_data_block(a.in, &buf, &size, &offset);
            if (d == ARCHIVE_EOF) break;
            if (d < ARCHIVE_WARN)
                fail(at, "cannot read " + name + " of " + zip.string() + ": " + archive_error_string(a.in));
            if (archive_write_data_block(a.out, buf, size, offset) < ARCHIVE_WARN)
                fail(at, "cannot extract " + name + " of " + zip.string() + ": " +
                             archive_error_string(a.out));
        }
        archive_write_finish_entry(a.out);
    }
}

}  // namespace

std::string unsafe_layer_entry(const std::string& path, const std::string& link_target) {
    if (path.empty()) return "has no name";
    const std::filesystem::path p(path);
    if (p.is_absolute()) return "has an absolute path";
    for (const auto& part : p)
        if (part == "..") return "has a '..' component";
    if (!link_target.empty()) {
        const std::filesystem::path t(link_target);
        if (t.is_absolute()) return "links outside the layer (" + link_target + ")";
        if (escapes(p.parent_path() / t)) return "links outside the layer (" + link_target + ")";
    }
    return "";
}

std::filesystem::path local_layer(const ynode& at, const std::filesystem::path& base,
                                  const std::string& value, const std::string& what,
                                  const std::filesystem::path& project_dir,
                                  const std::string& layer_id) {
    std::filesystem::path p(value);
    if (p.is_relative()) p = base / p;
    p = normal_absolute(p);
    std::string ext = p.extension().string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::error_code ec;
    if (!value.empty() && ext == ".zip" && !std::filesystem::exists(p, ec))
        fail(at, what + " " + p.string() + " does not exist");
    if (value.empty() || ext != ".zip" || !std::filesystem::is_regular_file(p, ec))
        return local_directory(at, base, value, what);

    bool ok = false;
    const std::uint64_t hash = fnv1a_file(p, ok);
    if (!ok) fail(at, "cannot read layer zip " + p.string());
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
    const auto layers = project_dir / ".coldbrew" / "layers";
    const auto target = layers / (layer_id + "-" + std::string(hex, 12));
    if (std::filesystem::is_directory(target, ec)) return target;

    // Extracted beside the target and renamed, so a stopped extraction never looks finished.
    std::filesystem::create_directories(layers, ec);
    if (ec) fail(at, "cannot create " + layers.string() + ": " + ec.message());
    const auto partial = layers / (target.filename().string() + ".partial-" + std::to_string(::getpid()));
    std::filesystem::remove_all(partial, ec);
    std::filesystem::create_directories(partial, ec);
    try {
        extract(at, p, partial);
    } catch (...) {
        std::filesystem::remove_all(partial, ec);
        throw;
    }
    std::filesystem::rename(partial, target, ec);
    if (ec) {
        std::filesystem::remove_all(partial, ec);
        // Another coldbrew extracted the same zip meanwhile: its copy is as good.
        if (!std::filesystem::is_directory(target, ec))
            fail(at, "cannot create " + target.string());
    }
    return target;
}

}  // namespace coldbrew::config::detail
