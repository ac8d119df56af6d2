#include "emulator/telemetry/decision_log.hpp"

#include <algorithm>
#include <cerrno>

namespace coldbrew::telemetry {

decision_log::~decision_log() {
    if (file_) std::fclose(file_);
}

std::error_code decision_log::open(const std::filesystem::path& path) {
    if (file_) std::fclose(file_);
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) return {errno, std::generic_category()};
    return {};
}

void decision_log::write(std::string_view json_line) {
    ++lines_;
    memory_.emplace_back(json_line);
    while (memory_.size() > capacity_) memory_.pop_front();
    if (!file_) return;
    std::fwrite(json_line.data(), 1, json_line.size(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
}

decision_log::recent_lines decision_log::recent(std::uint64_t since, std::size_t max) const {
    recent_lines out;
    const std::uint64_t first = lines_ - memory_.size();
    std::uint64_t from = since;
    if (from < first) {
        out.dropped = first - from;
        from = first;
    }
    std::uint64_t to = std::min<std::uint64_t>(lines_, from + max);
    for (std::uint64_t i = from; i < to; ++i) out.lines.push_back(memory_[i - first]);
    out.next = std::max(to, since);
    return out;
}

void decision_log::set_capacity(std::size_t lines) {
    capacity_ = lines;
    while (memory_.size() > capacity_) memory_.pop_front();
}

}  // namespace coldbrew::telemetry
