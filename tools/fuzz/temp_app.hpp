#pragma once
// A directory the loader harnesses write their input into: one per process under the system
// temp dir, with a `src` code directory and a handler file so templates that point there load
// as far as a real project would; removed when the process exits.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace coldbrew::fuzz {

class temp_app {
public:
    temp_app() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "coldbrew-fuzz-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) std::abort();
        dir_ = pattern;
        std::filesystem::create_directories(dir_ / "src");
        write("src/app.js", "exports.handler = async () => ({statusCode: 200});\n");
        write("src/app.py", "def handler(event, context):\n    return {}\n");
    }
    ~temp_app() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    temp_app(const temp_app&) = delete;
    temp_app& operator=(const temp_app&) = delete;

    const std::filesystem::path& dir() const { return dir_; }

    void write(const std::string& name, std::string_view text) const {
        std::ofstream(dir_ / name, std::ios::binary | std::ios::trunc)
            .write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    void remove(const std::string& name) const {
        std::error_code ec;
        std::filesystem::remove(dir_ / name, ec);
    }

private:
    std::filesystem::path dir_;
};

}  // namespace coldbrew::fuzz
