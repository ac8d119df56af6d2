#include "emulator/telemetry/decision_log.hpp"

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
    if (!file_) return;
    std::fwrite(json_line.data(), 1, json_line.size(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
}

}  // namespace coldbrew::telemetry
