#pragma once
// `coldbrew report FILE…`: reads Lambda REPORT lines (emulator/report/report.hpp lists the
// formats) and prints the Logs Insights cold-start query's numbers per function and bin.
//
// Exit status: 0 when the inputs were read (malformed REPORT lines are counted on stderr,
// "skipped N malformed REPORT lines (first at file:line)"); 1 when the --html file cannot be
// written; 2 for a missing or unreadable input or a bad flag.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace coldbrew::report {

struct report_options {
    std::vector<std::string> files; // files, directories (their files) or "-" for stdin
    std::string bin = "5m";         // Insights bin(): 30s, 1m, 5m, 1h, 1d
    bool json = false;              // print the rows as JSON instead of the table
    std::string html;               // also write a self-contained HTML page here
    std::string function;           // function of lines without a "[Function]" prefix
};

// Adds the `report` subcommand and its flags to `app`, filling `opts` when parsed; check
// app.got_subcommand("report") and call run_report(opts).
void add_report_command(CLI::App& app, report_options& opts);

// Reads every input, then prints. Output to stdout, diagnostics to stderr.
int run_report(const report_options& opts);

} // namespace coldbrew::report
