// The I/O around emulator/report/report.hpp: reading files and stdin, printing, writing the
// HTML page.

#include "emulator/report/report_command.hpp"

#include "emulator/report/report.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace coldbrew::report {

void add_report_command(CLI::App& app, report_options& opts) {
    auto* cmd = app.add_subcommand(
        "report", "Cold starts, durations and memory per function and time bin from Lambda REPORT "
                  "lines (coldbrew's output or CloudWatch exports), as Logs Insights' query");
    cmd->fallthrough();
    cmd->add_option("files", opts.files,
                    "Log files, directories (every file in them, e.g. a --log-dir) or - for stdin")
        ->required();
    cmd->add_option("--bin", opts.bin,
                    "Time bin, as Insights' bin(): 30s, 1m, 5m, 1h, 1d (default 5m)")
        ->check(CLI::Validator(
            [](const std::string& text) -> std::string {
                if (parse_bin(text)) return "";
                return "must be a whole number and a unit s, m, h or d (30s, 1m, 5m, 1h), got '" +
                       text + "'";
            },
            "DURATION", "bin"));
    cmd->add_flag("--json", opts.json, "Print the rows as a JSON array");
    cmd->add_option("--html", opts.html,
                    "Also write a self-contained HTML page with plots to this file");
    cmd->add_option("--function", opts.function,
                    "Function name for lines without a [Function] prefix (default: the file name, "
                    "e.g. my-fn.json → my-fn)");
}

namespace {

struct input {
    std::string source; // as named in messages
    std::string text;
};

// Reads `path` (a file, every file of a directory, or "-"), or explains why it could not.
bool read_input(const std::string& path, std::vector<input>& out, bool& stdin_read,
                std::string& error) {
    if (path == "-") {
        if (!stdin_read)
            out.push_back({"-", std::string(std::istreambuf_iterator<char>(std::cin), {})});
        stdin_read = true;
        return true;
    }
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        error = "cannot read '" + path + "': no such file or directory";
        return false;
    }
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(status)) {
        for (const auto& entry : std::filesystem::directory_iterator(path, ec))
            if (entry.is_regular_file()) files.push_back(entry.path());
        if (ec) {
            error = "cannot read directory '" + path + "': " + ec.message();
            return false;
        }
        std::sort(files.begin(), files.end());
    } else {
        files.emplace_back(path);
    }
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            error = "cannot read '" + f.string() + "': " + std::strerror(errno);
            return false;
        }
        std::ostringstream text;
        text << in.rdbuf();
        out.push_back({f.string(), text.str()});
    }
    return true;
}

} // namespace

int run_report(const report_options& opts) {
    const auto bin_ms = parse_bin(opts.bin);
    if (!bin_ms) {
        std::fprintf(stderr,
                     "coldbrew report: --bin must be a whole number and a unit s, m, h or d "
                     "(30s, 1m, 5m, 1h), got '%s'\n",
                     opts.bin.c_str());
        return 2;
    }
    // Every input is read before anything is printed: a missing file is a usage error, not a
    // half-printed report.
    std::vector<input> inputs;
    bool stdin_read = false;
    for (const auto& path : opts.files) {
        std::string error;
        if (!read_input(path, inputs, stdin_read, error)) {
            std::fprintf(stderr, "coldbrew report: %s\n", error.c_str());
            return 2;
        }
    }
    parse_result parsed;
    for (const auto& in : inputs)
        parse_input(in.text, in.source,
                    opts.function.empty() ? function_from_path(in.source) : opts.function, parsed);
    if (parsed.malformed)
        std::fprintf(stderr, "coldbrew report: skipped %zu malformed REPORT line%s (first at %s)\n",
                     parsed.malformed, parsed.malformed == 1 ? "" : "s",
                     parsed.first_malformed.c_str());
    if (parsed.records.empty())
        std::fprintf(stderr, "coldbrew report: no REPORT lines in %zu input%s\n", inputs.size(),
                     inputs.size() == 1 ? "" : "s");

    const table t = aggregate(parsed.records, *bin_ms);
    const std::string out = opts.json ? render_json(t) : render_table(t);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);

    if (!opts.html.empty()) {
        std::vector<std::string> sources;
        for (const auto& in : inputs)
            sources.push_back(in.source);
        std::ofstream page(opts.html, std::ios::binary | std::ios::trunc);
        page << render_html(t, sources);
        page.close();
        if (!page) {
            std::fprintf(stderr, "coldbrew report: cannot write '%s'\n", opts.html.c_str());
            return 1;
        }
        std::fprintf(stderr, "coldbrew report: wrote %s\n", opts.html.c_str());
    }
    return 0;
}

} // namespace coldbrew::report
