#include "emulator/functions/package_size.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "tests/catch.hpp"
#include "tests/unit/functions/package_tree.hpp"

namespace fs = std::filesystem;
using coldbrew::functions::measure_package;
using coldbrew::functions::package_measure;

namespace {

constexpr std::uint64_t mib = 1 << 20;
// Per file: local header 30 + central directory entry 46 + the name twice; per archive: 22.
std::uint64_t zip_overhead(const std::string& name) {
    return 30 + 46 + 2 * name.size();
}
constexpr std::uint64_t end_record = 22;

using temp_dir = coldbrew::test::package_tree;
using coldbrew::test::write_file;

std::string random_bytes(std::size_t n, std::mt19937_64& rng) {
    std::string s(n, '\0');
    for (auto& c : s)
        c = static_cast<char>(rng() & 0xff);
    return s;
}

// Text-like content: 16 letters (4 bits each), so deflate gets it to roughly half.
std::string letters(std::size_t n, std::mt19937_64& rng) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; i += 16)
        for (std::uint64_t r = rng(), j = i; j < std::min(n, i + 16); ++j, r >>= 4)
            s[j] = static_cast<char>('a' + (r & 0xf));
    return s;
}

package_measure measure(const std::vector<fs::path>& dirs, std::uint64_t limit = 64 * mib) {
    std::error_code ec;
    auto m = measure_package(dirs, ec, limit);
    REQUIRE_FALSE(ec);
    return m;
}

}  // namespace

TEST_CASE("package size: random bytes are stored, not deflated", "[unit]") {
    temp_dir d;
    std::mt19937_64 rng(1);
    write_file(d.path() / "random.bin", random_bytes(mib, rng));
    auto m = measure({d.path()});
    CHECK(m.files == 1);
    CHECK(m.bytes == mib);
    CHECK(m.zipped_bytes == mib + zip_overhead("random.bin") + end_record);
    CHECK_FALSE(m.estimated);
}

TEST_CASE("package size: zeros deflate to almost nothing", "[unit]") {
    temp_dir d;
    write_file(d.path() / "zeros.bin", std::string(mib, '\0'));
    auto m = measure({d.path()});
    CHECK(m.files == 1);
    CHECK(m.bytes == mib);
    CHECK(m.zipped_bytes > zip_overhead("zeros.bin") + end_record);
    CHECK(m.zipped_bytes < 4096);
}

TEST_CASE("package size: files and bytes over nested directories and layers", "[unit]") {
    temp_dir code, layer;
    write_file(code.path() / "index.js", std::string(100, 'x'));
    write_file(code.path() / "lib" / "util.js", std::string(250, 'y'));
    write_file(code.path() / "lib" / "deep" / "data.json", "");
    fs::create_directories(code.path() / "empty");
    write_file(layer.path() / "nodejs" / "node_modules" / "m" / "index.js", std::string(1000, 'z'));

    auto m = measure({code.path(), layer.path()});
    CHECK(m.files == 4);
    CHECK(m.bytes == 1350);
    const std::uint64_t overhead = zip_overhead("index.js") + zip_overhead("lib/util.js") +
                                   zip_overhead("lib/deep/data.json") +
                                   zip_overhead("nodejs/node_modules/m/index.js") + 2 * end_record;
    CHECK(m.zipped_bytes > overhead);
    CHECK(m.zipped_bytes < overhead + 100);  // runs of one letter deflate to a few bytes each
}

TEST_CASE("package size: many small files are dominated by headers", "[unit]") {
    temp_dir d;
    for (int i = 0; i < 200; ++i)
        write_file(d.path() / "node_modules" / ("f" + std::to_string(1000 + i) + ".js"), "1;");
    auto m = measure({d.path()});
    CHECK(m.files == 200);
    CHECK(m.bytes == 400);
    const std::uint64_t headers = 200 * zip_overhead("node_modules/f1000.js") + end_record;
    CHECK(m.zipped_bytes >= headers + 400);  // two bytes deflate to four
    CHECK(m.zipped_bytes <= headers + 200 * 4);
}

TEST_CASE("package size: a sample extrapolates to the whole", "[unit]") {
    temp_dir d;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 32; ++i)
        write_file(d.path() / ("dir" + std::to_string(i % 4)) / ("f" + std::to_string(i)),
                   letters(64 * 1024, rng));
    write_file(d.path() / "big.bin", letters(2 * mib, rng));

    auto full = measure({d.path()});
    CHECK_FALSE(full.estimated);
    CHECK(full.files == 33);
    CHECK(full.bytes == 4 * mib);
    // Deflate codes 16 letters in about 4 bits each.
    CHECK(full.zipped_bytes > full.bytes * 45 / 100);
    CHECK(full.zipped_bytes < full.bytes * 65 / 100);

    // An eighth: whole small files here and there, and a prefix of big.bin.
    auto sampled = measure({d.path()}, mib / 2);
    CHECK(sampled.estimated);
    CHECK(sampled.files == full.files);
    CHECK(sampled.bytes == full.bytes);
    const double error = std::abs(static_cast<double>(sampled.zipped_bytes) -
                                  static_cast<double>(full.zipped_bytes)) /
                         static_cast<double>(full.zipped_bytes);
    INFO("full " << full.zipped_bytes << ", sampled " << sampled.zipped_bytes);
    CHECK(error < 0.10);

    // Nothing compressed at all: content counted as stored.
    auto none = measure({d.path()}, 0);
    CHECK(none.estimated);
    CHECK(none.zipped_bytes > none.bytes);
}

TEST_CASE("package size: a directory that does not exist is an error", "[unit]") {
    temp_dir d;
    std::error_code ec;
    auto m = measure_package({d.path(), d.path() / "missing"}, ec);
    CHECK(ec == std::errc::no_such_file_or_directory);
    CHECK(m.files == 0);
    CHECK(m.zipped_bytes == 0);

    write_file(d.path() / "file", "x");
    measure_package({d.path() / "file"}, ec);
    CHECK(ec == std::errc::not_a_directory);

    measure_package({d.path()}, ec);
    CHECK_FALSE(ec);
}

TEST_CASE("package size: symlinks are not followed", "[unit]") {
    temp_dir outside, d;
    std::mt19937_64 rng(3);
    write_file(outside.path() / "big" / "blob", random_bytes(mib, rng));
    const std::string handler = "def handler(e, c):\n    return 1\n";
    write_file(d.path() / "handler.py", handler);
    fs::create_symlink(outside.path() / "big" / "blob", d.path() / "blob-link");
    fs::create_directory_symlink(outside.path() / "big", d.path() / "dir-link");
    fs::create_symlink(d.path() / "missing", d.path() / "dangling");

    auto m = measure({d.path()});
    CHECK(m.files == 1);
    CHECK(m.bytes == handler.size());
    CHECK(m.zipped_bytes < 1024);
}

TEST_CASE("package size: __pycache__ written by a local run is not part of the package", "[unit]") {
    temp_dir d;
    write_file(d.path() / "app.py", std::string(300, 'x'));
    const auto before = measure({d.path()});
    write_file(d.path() / "__pycache__" / "app.cpython-311.pyc", std::string(5000, 'p'));
    write_file(d.path() / "lib" / "__pycache__" / "m.cpython-311.pyc", std::string(5000, 'q'));
    const auto after = measure({d.path()});
    CHECK(after.files == before.files);
    CHECK(after.zipped_bytes == before.zipped_bytes);
}
