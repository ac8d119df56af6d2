#pragma once
// Fixture trees for the package-size tests: a temporary directory removed with its contents,
// and files written into it with their parent directories.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/catch.hpp"

namespace coldbrew::test {

class package_tree {
public:
    package_tree() {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "coldbrew-package-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path_ = tmpl;
    }
    ~package_tree() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    package_tree(const package_tree&) = delete;
    package_tree& operator=(const package_tree&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& p, const std::string& content) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
}

}  // namespace coldbrew::test
