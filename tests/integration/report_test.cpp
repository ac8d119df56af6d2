// `coldbrew report` on tests/fixtures/report/: the real binary, its table, --json, --html,
// stdin, and its exit status for a missing file or a bad flag. The expected numbers are worked
// out by hand in tests/unit/report/report_test.cpp.

#include "tests/catch.hpp"
#include "tests/integration/harness.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using namespace coldbrew::testing;

namespace {

struct result {
    int code = -1;
    std::string out, err;
};

// Runs to the end. The process can exit before the harness has read all of its output, so
// the text is collected once a line containing each of `last` (its final stdout and stderr
// lines) has been read.
result run(std::vector<std::string> args, std::vector<std::string> last, std::string program = {}) {
    coldbrew_process p(std::move(args), {}, std::move(program));
    result r;
    r.code = p.wait_exit(std::chrono::seconds(30)).value_or(-1);
    for (const auto& text : last)
        p.wait_for_line([&text](const std::string& l) { return l.find(text) != std::string::npos; },
                        std::chrono::seconds(10));
    r.out = p.stdout_text();
    r.err = p.stderr_text();
    return r;
}

std::string fixture(const char* name) {
    return (source_dir() / "tests" / "fixtures" / "report" / name).string();
}

std::vector<std::string> timed_fixtures() {
    return {fixture("checkout.log"), fixture("checkout.json"), fixture("thumbnail.log"),
            fixture("thumbnail.txt")};
}

// The whitespace-separated cells of the table line for `function` whose bin column reads
// `bin` ("2026-11-30 23:25:00", "-" or "total"); the bin's date and time are one cell.
std::vector<std::string> table_row(const std::string& out, const std::string& function,
                                   const std::string& bin) {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind(function + " ", 0) != 0) continue;
        std::istringstream cells(line);
        std::vector<std::string> v;
        for (std::string c; cells >> c;)
            v.push_back(c);
        if (v.size() > 2 && v[1].size() == 10 && v[1][4] == '-') { // a date: join it to its time
            v[1] += " " + v[2];
            v.erase(v.begin() + 2);
        }
        if (v.size() > 1 && v[1] == bin) return v;
    }
    return {};
}

} // namespace

TEST_CASE("report: the table of the fixture's four formats", "[integration][report]") {
    std::vector<std::string> args = {"report"};
    for (const auto& f : timed_fixtures())
        args.push_back(f);
    const result r = run(args, {"slept scaled", "skipped"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("skipped 1 malformed REPORT line (first at ") != std::string::npos);
    CHECK(r.err.find("checkout.log:14)") != std::string::npos);
    CHECK(r.out.find("11 invocations of 2 functions, by bin(5m)") != std::string::npos);

    // function, bin, invocations, cold starts, cold %, max init, avg, max, min, memory, mem used %
    using cells = std::vector<std::string>;
    CHECK(table_row(r.out, "checkout", "2026-11-30 23:15:00") ==
          cells{"checkout", "2026-11-30 23:15:00", "2", "1", "50.0", "800.00", "75.00", "100.00",
                "50.00", "256", "25.0"});
    CHECK(table_row(r.out, "checkout", "2026-11-30 23:20:00") ==
          cells{"checkout", "2026-11-30 23:20:00", "1", "0", "0.0", "-", "30.00", "30.00", "30.00",
                "256", "37.5"});
    CHECK(table_row(r.out, "checkout", "2026-11-30 23:25:00") ==
          cells{"checkout", "2026-11-30 23:25:00", "3", "1", "33.3", "1000.00", "1106.67",
                "3000.00", "120.00", "256", "58.3"});
    CHECK(table_row(r.out, "checkout", "total") == cells{"checkout", "total", "6", "2", "33.3",
                                                         "1000.00", "583.33", "3000.00", "30.00",
                                                         "256", "43.8"});
    CHECK(table_row(r.out, "thumbnail", "2026-11-30 23:15:00") ==
          cells{"thumbnail", "2026-11-30 23:15:00", "2", "1", "50.0", "1500.00", "250.00", "400.00",
                "100.00", "1024", "25.0"});
    CHECK(table_row(r.out, "thumbnail", "2026-11-30 23:20:00") ==
          cells{"thumbnail", "2026-11-30 23:20:00", "1", "0", "0.0", "-", "300.00", "300.00",
                "300.00", "1024", "50.0"});
    CHECK(table_row(r.out, "thumbnail", "2026-11-30 23:25:00") ==
          cells{"thumbnail", "2026-11-30 23:25:00", "2", "1", "50.0", "2000.00", "300.00", "500.00",
                "100.00", "1024", "62.5"});
    CHECK(table_row(r.out, "thumbnail", "total") == cells{"thumbnail", "total", "5", "2", "40.0",
                                                          "2000.00", "280.00", "500.00", "100.00",
                                                          "1024", "45.0"});
    // checkout comes first, each function's total after its bins.
    CHECK(r.out.rfind("\ncheckout ") < r.out.find("\nthumbnail "));
}

TEST_CASE("report: --json rows, and --bin 1h folds the bins", "[integration][report]") {
    std::vector<std::string> args = {"report", "--json"};
    for (const auto& f : timed_fixtures())
        args.push_back(f);
    const result r = run(args, {"]", "skipped"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.size() == 8);
    const auto& c3 = j[2];
    CHECK(c3["function"] == "checkout");
    CHECK(c3["bin_start"] == "2026-11-30T23:25:00Z");
    CHECK(c3["total"] == false);
    CHECK(c3["invocations"] == 3);
    CHECK(c3["cold_starts"] == 1);
    CHECK(c3["cold_start_pct"].get<double>() == Approx(33.33));
    CHECK(c3["max_init_ms"].get<double>() == Approx(1000));
    CHECK(c3["avg_duration_ms"].get<double>() == Approx(1106.67));
    CHECK(c3["max_duration_ms"].get<double>() == Approx(3000));
    CHECK(c3["min_duration_ms"].get<double>() == Approx(120));
    CHECK(c3["memory_mb"] == 256);
    CHECK(c3["avg_memory_used_pct"].get<double>() == Approx(58.33));
    CHECK(j[1]["max_init_ms"].is_null());
    const auto& tt = j[7];
    CHECK(tt["function"] == "thumbnail");
    CHECK(tt["total"] == true);
    CHECK(tt["bin_start"].is_null());
    CHECK(tt["invocations"] == 5);
    CHECK(tt["cold_start_pct"].get<double>() == Approx(40));
    CHECK(tt["avg_duration_ms"].get<double>() == Approx(280));
    CHECK(tt["avg_memory_used_pct"].get<double>() == Approx(45));

    args.insert(args.begin() + 1, {"--bin", "1h"});
    const result hour = run(args, {"]", "skipped"});
    REQUIRE(hour.code == 0);
    const auto h = nlohmann::json::parse(hour.out);
    REQUIRE(h.size() == 4); // one bin and a total per function
    CHECK(h[0]["bin_start"] == "2026-11-30T23:00:00Z");
    CHECK(h[0]["invocations"] == 6);
    CHECK(h[0]["avg_duration_ms"].get<double>() == Approx(583.33));
}

TEST_CASE("report: coldbrew up's stdout on stdin falls in one '-' bin per function",
          "[integration][report]") {
    const result r =
        run({"-c", "exec \"$0\" report - < \"$1\"", coldbrew_binary(), fixture("up-stdout.log")},
            {"counted in one bin"}, "/bin/sh");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    using cells = std::vector<std::string>;
    CHECK(table_row(r.out, "checkout", "-") == cells{"checkout", "-", "1", "1", "100.0", "5.00",
                                                     "10.00", "10.00", "10.00", "256", "12.5"});
    CHECK(table_row(r.out, "thumbnail", "-") ==
          cells{"thumbnail", "-", "1", "0", "0.0", "-", "20.00", "20.00", "20.00", "1024", "50.0"});
    CHECK(r.out.find("without a timestamp") != std::string::npos);
    CHECK(r.err.find("malformed") == std::string::npos);
}

TEST_CASE("report: a directory, --function and --html", "[integration][report]") {
    temp_dir dir;
    const auto page = (dir.path() / "report.html").string();
    // The whole fixture folder: up-stdout.log adds one untimed checkout invocation (6 + 1).
    const result r = run({"report", (source_dir() / "tests" / "fixtures" / "report").string(),
                          "--json", "--html", page},
                         {"]", "wrote", "skipped"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    bool seen = false;
    for (const auto& row : j)
        if (row["function"] == "checkout" && row["total"] == true) {
            CHECK(row["invocations"] == 7);
            seen = true;
        }
    CHECK(seen);
    std::ifstream in(page);
    REQUIRE(in);
    std::stringstream html;
    html << in.rdbuf();
    CHECK(html.str().find("<svg") != std::string::npos);
    CHECK(html.str().find("thumbnail") != std::string::npos);
    CHECK(html.str().find("<script") == std::string::npos);

    // --function names lines that carry no [Function] prefix.
    const result named =
        run({"report", "--json", "--function", "orders", fixture("checkout.json")}, {"]"});
    REQUIRE(named.code == 0);
    CHECK(nlohmann::json::parse(named.out)[0]["function"] == "orders");
}

TEST_CASE("report: a missing file or a bad flag exits 2 with a message", "[integration][report]") {
    const result missing =
        run({"report", fixture("checkout.log"), "/nonexistent/no-such.log"}, {"no-such.log"});
    CHECK(missing.code == 2);
    CHECK(missing.err.find("no-such.log") != std::string::npos);
    CHECK(missing.out.empty()); // nothing printed before every input was read

    const result bad_bin = run({"report", "--bin", "5x", fixture("checkout.log")}, {"5x"});
    CHECK(bad_bin.code == 2);
    CHECK(bad_bin.err.find("5x") != std::string::npos);

    const result unknown = run({"report", "--frobnicate", fixture("checkout.log")}, {"frobnicate"});
    CHECK(unknown.code == 2);

    const result none = run({"report"}, {"required"});
    CHECK(none.code == 2);
}
