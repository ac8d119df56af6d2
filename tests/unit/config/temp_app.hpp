#pragma once
// A throwaway application directory for config tests: write a template (and a coldbrew.yaml,
// code directories …) into a fresh folder under the system temp dir; removed on destruction.

#include "emulator/config/stack.hpp"
#include "tests/catch.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace coldbrew::test {

class temp_app {
  public:
    temp_app() {
        std::random_device rd;
        dir_ = std::filesystem::temp_directory_path() /
               ("coldbrew-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()) +
                std::to_string(rd()));
        std::filesystem::create_directories(dir_);
    }
    ~temp_app() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    temp_app(const temp_app&) = delete;
    temp_app& operator=(const temp_app&) = delete;

    const std::filesystem::path& dir() const { return dir_; }

    std::filesystem::path write(const std::string& name, const std::string& text) const {
        const auto p = dir_ / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }

    std::filesystem::path mkdir(const std::string& name) const {
        const auto p = dir_ / name;
        std::filesystem::create_directories(p);
        return p;
    }

    // Writes template.yaml (with a `src` code dir) and loads the directory.
    config::stack sam(const std::string& yaml, const config::load_options& options = {}) const {
        mkdir("src");
        write("template.yaml", yaml);
        return config::load_stack(dir_, options);
    }

    config::stack serverless(const std::string& yaml,
                             const config::load_options& options = {}) const {
        write("serverless.yml", yaml);
        return config::load_stack(dir_, options);
    }

  private:
    std::filesystem::path dir_;
};

// The config_error `f` throws; fails the test when it throws none.
template <class F> config::config_error error_of(F&& f) {
    try {
        f();
    } catch (const config::config_error& e) {
        return e;
    }
    FAIL("expected a config_error");
    throw std::logic_error("unreachable");
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

inline bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    for (const auto& l : lines) {
        if (contains(l, part)) return true;
    }
    return false;
}

} // namespace coldbrew::test
