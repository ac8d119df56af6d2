#pragma once
// The decision log: one JSON object per line for every modeled decision (environment
// created, reused, evicted, throttled, …), in the order they were made. Lines carry no wall
// time, so two runs with the same seed and the same request sequence write identical files.

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace coldbrew::telemetry {

class decision_log {
public:
    decision_log() = default;  // discards every line
    ~decision_log();
    decision_log(const decision_log&) = delete;
    decision_log& operator=(const decision_log&) = delete;

    // Truncates or creates `path`; each line is flushed as it is written so a test or `tail -f`
    // sees it at once.
    std::error_code open(const std::filesystem::path& path);
    bool is_open() const noexcept { return file_ != nullptr; }

    // One JSON object, without the trailing newline.
    void write(std::string_view json_line);
    std::uint64_t lines() const noexcept { return lines_; }

private:
    std::FILE* file_ = nullptr;
    std::uint64_t lines_ = 0;
};

}  // namespace coldbrew::telemetry
