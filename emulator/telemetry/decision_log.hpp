#pragma once
// The decision log: one JSON object per line for every modeled decision (environment
// created, reused, evicted, throttled, …), in the order they were made. Lines carry no wall
// time, so two runs with the same seed and the same request sequence write identical files,
// with one exception that says where this machine could not keep up with the model:
// `{"event":"init_overrun","function":…,"environment":…,"modeled_init_ms":…,"local_init_ms":…,
// "overrun_ms":…}`, a cold start whose local init outlasted its modeled Init Duration (real ms).

#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

    // One JSON object, without the trailing newline. Also kept in memory (see recent()).
    void write(std::string_view json_line);
    std::uint64_t lines() const noexcept { return lines_; }

    // Lines numbered from 0 in write order; the last `capacity` stay in memory so the admin
    // API can serve them whether or not a file is open.
    struct recent_lines {
        std::uint64_t next = 0;     // the number to ask for next (= lines() when caught up)
        std::uint64_t dropped = 0;  // lines at or after `since` no longer in memory
        std::vector<std::string> lines;
    };
    // Up to `max` lines from number `since` on, oldest first.
    recent_lines recent(std::uint64_t since, std::size_t max) const;
    void set_capacity(std::size_t lines);  // default 100,000

private:
    std::FILE* file_ = nullptr;
    std::uint64_t lines_ = 0;
    std::size_t capacity_ = 100000;
    std::deque<std::string> memory_;  // lines [lines_ - memory_.size(), lines_)
};

}  // namespace coldbrew::telemetry
