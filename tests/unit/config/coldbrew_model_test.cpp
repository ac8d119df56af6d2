// coldbrew.yaml keys that feed the cold-start model: profile, account_concurrency,
// decision_log, and per function concurrency, architecture, package, VPC mode, extensions and
// model overrides. Every error names file, line, column and key path.

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <string>

using namespace coldbrew;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const sam_template = R"(Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      ReservedConcurrentExecutions: 10
      ProvisionedConcurrencyConfig:
        ProvisionedConcurrentExecutions: 4
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src
)";

// Writes coldbrew.yaml and returns the error loading the SAM template above throws.
config::config_error error_for(const temp_app& app, const std::string& coldbrew_yaml) {
    app.write("coldbrew.yaml", coldbrew_yaml);
    return error_of([&] { app.sam(sam_template); });
}

void check_at(const config::config_error& e, const temp_app& app, int line, int column,
              const std::string& key_path) {
    CHECK(e.where().file == (app.dir() / "coldbrew.yaml").string());
    CHECK(e.where().line == line);
    CHECK(e.where().column == column);
    CHECK(e.key_path() == key_path);
}

} // namespace

TEST_CASE("model keys absent: defaults", "[unit]") {
    temp_app app;
    const auto s = app.sam(sam_template);
    CHECK_FALSE(s.settings.profile);
    CHECK_FALSE(s.settings.account_concurrency);
    CHECK_FALSE(s.settings.decision_log);
    const auto* worker = s.find_function("Worker");
    CHECK(worker->vpc_mode == "none");
    CHECK_FALSE(worker->vpc);
    CHECK(worker->package_type == "zip");
    CHECK(worker->extensions.empty());
    CHECK_FALSE(worker->package_mb);
    CHECK_FALSE(worker->model.runtime);
    CHECK_FALSE(worker->model.init_duration);
    CHECK_FALSE(worker->model.package_ms_per_mb);
    CHECK_FALSE(worker->model.keep_alive);
    CHECK_FALSE(worker->model.max_lifetime);
    CHECK(worker->model.where.line == 0);
    // No coldbrew.yaml entry: model errors point at the template's function.
    CHECK(worker->model_where.file == (app.dir() / "template.yaml").string());
    CHECK(worker->model_where.line == 11);
    CHECK(worker->model_where.column == 3);
    CHECK(worker->model_path == "Resources.Worker");
}

TEST_CASE("profile, account_concurrency, decision_log: paths relative to coldbrew.yaml", "[unit]") {
    temp_app app;
    app.write("profiles/mine.yaml", "# a profile\n");
    app.mkdir("logs");
    app.write("coldbrew.yaml", "profile: profiles/mine.yaml\n"
                               "account_concurrency: 3000\n"
                               "decision_log: logs/decisions.jsonl\n");
    const auto s = app.sam(sam_template);
    CHECK(s.settings.profile == app.dir() / "profiles" / "mine.yaml");
    CHECK(s.settings.profile_where.line == 1);
    CHECK(s.settings.profile_where.column == 10);
    CHECK(s.settings.account_concurrency == 3000);
    CHECK(s.settings.account_concurrency_where.line == 2);
    CHECK(s.settings.account_concurrency_where.column == 22);
    CHECK(s.settings.decision_log == app.dir() / "logs" / "decisions.jsonl");
}

TEST_CASE("profile and decision_log may be absolute; null leaves them unset", "[unit]") {
    temp_app app;
    const auto profile = app.write("p.yaml", "{}\n");
    app.write("coldbrew.yaml", "profile: " + profile.string() + "\ndecision_log: " +
                                   (app.dir() / "d.log").string() + "\naccount_concurrency:\n");
    auto s = app.sam(sam_template);
    CHECK(s.settings.profile == profile);
    CHECK(s.settings.decision_log == app.dir() / "d.log");
    CHECK_FALSE(s.settings.account_concurrency);

    app.write("coldbrew.yaml", "profile:\ndecision_log:\n");
    s = app.sam(sam_template);
    CHECK_FALSE(s.settings.profile);
    CHECK_FALSE(s.settings.decision_log);
}

TEST_CASE("profile must be an existing regular file", "[unit]") {
    temp_app app;
    auto e = error_for(app, "host: 127.0.0.1\nprofile: missing.yaml\n");
    check_at(e, app, 2, 10, "profile");
    CHECK(contains(e.message(), (app.dir() / "missing.yaml").string() + " does not exist"));

    app.mkdir("profiles");
    e = error_for(app, "profile: profiles\n");
    check_at(e, app, 1, 10, "profile");
    CHECK(contains(e.message(), "is not a regular file"));

    e = error_for(app, "profile: ''\n");
    check_at(e, app, 1, 10, "profile");
    CHECK(contains(e.message(), "must not be empty"));

    e = error_for(app, "profile: [a]\n");
    check_at(e, app, 1, 10, "profile");
    CHECK(contains(e.message(), "profile must be a string"));
}

TEST_CASE("account_concurrency: 1..1000000", "[unit]") {
    temp_app app;
    for (const char* bad : {"0", "1000001", "-5", "many", "1.5"}) {
        INFO(bad);
        const auto e = error_for(app, std::string("account_concurrency: ") + bad + "\n");
        check_at(e, app, 1, 22, "account_concurrency");
        CHECK(contains(e.message(), "between 1 and 1000000"));
    }
    app.write("coldbrew.yaml", "account_concurrency: 1000000\n");
    CHECK(app.sam(sam_template).settings.account_concurrency == 1000000);
}

TEST_CASE("decision_log: its directory must exist, and it must not be one", "[unit]") {
    temp_app app;
    auto e = error_for(app, "\ndecision_log: nowhere/decisions.log\n");
    check_at(e, app, 2, 15, "decision_log");
    CHECK(
        contains(e.message(), "directory " + (app.dir() / "nowhere").string() + " does not exist"));

    app.mkdir("logs");
    e = error_for(app, "decision_log: logs\n");
    check_at(e, app, 1, 15, "decision_log");
    CHECK(contains(e.message(), "is a directory"));

    // A file where its directory should be.
    app.write("plain", "x");
    e = error_for(app, "decision_log: plain/d.log\n");
    check_at(e, app, 1, 15, "decision_log");
    CHECK(contains(e.message(), (app.dir() / "plain").string() + " is not a directory"));
}

TEST_CASE("functions.<name>: concurrency, architecture, package, vpc, extensions", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"(functions:
  Worker:
    reserved_concurrency: 50
    provisioned_concurrency: 20
    architecture: arm64
    package_type: image
    vpc: legacy-eni
    extensions: [go-agent, rust-agent, go-agent]
    package_mb: 12.5
)");
    const auto s = app.sam(sam_template);
    const auto* worker = s.find_function("Worker");
    CHECK(worker->reserved_concurrency == 50);
    CHECK(worker->provisioned_concurrency == 20);
    CHECK(worker->architecture == "arm64");
    CHECK(worker->package_type == "image");
    CHECK(worker->vpc_mode == "legacy-eni");
    CHECK(worker->vpc);
    // Repeats are kept: two extensions of one kind each start.
    CHECK(worker->extensions == std::vector<std::string>{"go-agent", "rust-agent", "go-agent"});
    CHECK(worker->package_mb == 12.5);
    CHECK(worker->model_where.file == (app.dir() / "coldbrew.yaml").string());
    CHECK(worker->model_where.line == 2);
    CHECK(worker->model_where.column == 3);
    CHECK(worker->model_path == "functions.Worker");
    // Untouched: the template's values.
    const auto* hello = s.find_function("Hello");
    CHECK(hello->reserved_concurrency == 10);
    CHECK(hello->provisioned_concurrency == 4);
    CHECK(hello->architecture == "x86_64");
    CHECK(hello->model_path == "Resources.Hello");
}

TEST_CASE("functions.<name>.vpc: booleans and modes, vpc kept in step", "[unit]") {
    temp_app app;
    struct vpc_case {
        const char* value;
        const char* mode;
    };
    for (const auto& c :
         {vpc_case{"true", "hyperplane"}, vpc_case{"True", "hyperplane"}, vpc_case{"false", "none"},
          vpc_case{"none", "none"}, vpc_case{"hyperplane", "hyperplane"},
          vpc_case{"'legacy-eni'", "legacy-eni"}}) {
        INFO(c.value);
        app.write("coldbrew.yaml", std::string("functions: {Worker: {vpc: ") + c.value + "}}\n");
        const auto* worker = app.sam(sam_template).find_function("Worker");
        REQUIRE(worker);
        CHECK(worker->vpc_mode == c.mode);
        CHECK(worker->vpc == (worker->vpc_mode != "none"));
    }
}

TEST_CASE("coldbrew.yaml vpc: none turns off the template's VPC", "[unit]") {
    temp_app app;
    app.mkdir("src");
    app.write("template.yaml", R"(Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      VpcConfig: {SubnetIds: [subnet-1]}
)");
    auto s = config::load_stack(app.dir(), {});
    CHECK(s.functions.at(0).vpc_mode == "hyperplane");
    CHECK(s.functions.at(0).vpc);
    app.write("coldbrew.yaml", "functions:\n  Hello:\n    vpc: none\n");
    s = config::load_stack(app.dir(), {});
    CHECK(s.functions.at(0).vpc_mode == "none");
    CHECK_FALSE(s.functions.at(0).vpc);
}

TEST_CASE("functions.<name>: null concurrency removes the template's", "[unit]") {
    temp_app app;
    app.write(
        "coldbrew.yaml",
        "functions:\n  Hello:\n    reserved_concurrency: null\n    provisioned_concurrency:\n");
    const auto* hello = app.sam(sam_template).find_function("Hello");
    CHECK_FALSE(hello->reserved_concurrency);
    CHECK_FALSE(hello->provisioned_concurrency);

    // Without a reserved value any provisioned value is accepted.
    app.write(
        "coldbrew.yaml",
        "functions:\n  Hello:\n    reserved_concurrency: ~\n    provisioned_concurrency: 500\n");
    const auto s = app.sam(sam_template);
    CHECK_FALSE(s.find_function("Hello")->reserved_concurrency);
    CHECK(s.find_function("Hello")->provisioned_concurrency == 500);
}

TEST_CASE("functions.<name>: extensions null or empty means none", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml",
              "functions:\n  Hello:\n    extensions: []\n  Worker:\n    extensions:\n");
    const auto s = app.sam(sam_template);
    CHECK(s.find_function("Hello")->extensions.empty());
    CHECK(s.find_function("Worker")->extensions.empty());
}

TEST_CASE("functions.<name>: value errors name line, column and key path", "[unit]") {
    temp_app app;
    struct bad_case {
        std::string value; // written after "    <key>: " on line 3
        std::string key;
        int column; // of the value, or of the offending list item
        std::string key_path_suffix;
        std::string message;
    };
    const std::vector<bad_case> cases = {
        {"-1", "reserved_concurrency", 27, "", "between 0 and 1000000"},
        {"1000001", "reserved_concurrency", 27, "", "between 0 and 1000000"},
        {"lots", "provisioned_concurrency", 30, "", "must be an integer between 0 and 1000000"},
        {"x86", "architecture", 19, "", "architecture must be x86_64 or arm64, got 'x86'"},
        {"Zip", "package_type", 19, "", "package_type must be zip or image, got 'Zip'"},
        {"container", "package_type", 19, "", "package_type must be zip or image"},
        {"yes-please", "vpc", 10, "",
         "vpc must be none, hyperplane or legacy-eni, got 'yes-please'"},
        {"legacy_eni", "vpc", 10, "", "(did you mean legacy-eni?)"},
        {"{a: 1}", "vpc", 10, "", "vpc must be a string"},
        {"go-agent", "extensions", 17, "", "extensions must be a list"},
        {"[go-agent, '']", "extensions", 28, "[1]", "extension kind must not be empty"},
        {"[go-agent, [x]]", "extensions", 28, "[1]", "extension kind must be a string"},
        {"[a, b, c, d, e, f, g, h, i, j, k]", "extensions", 48, "[10]",
         "at most 10 extensions per function"},
        {"-0.5", "package_mb", 17, "", "package_mb must be a number >= 0, got -0.5"},
        {"big", "package_mb", 17, "", "package_mb must be a number, got 'big'"},
        {"inf", "package_mb", 17, "", "package_mb must be a number >= 0"},
        {"nan", "package_mb", 17, "", "package_mb must be a number >= 0"},
        {"1e9", "package_mb", 17, "", "package_mb must be at most 10240"},
        {"fast", "model", 12, "", "model must be a mapping"},
    };
    for (const auto& c : cases) {
        INFO(c.key << ": " << c.value);
        const auto e =
            error_for(app, "functions:\n  Worker:\n    " + c.key + ": " + c.value + "\n");
        check_at(e, app, 3, c.column, "functions.Worker." + c.key + c.key_path_suffix);
        CHECK(contains(e.message(), c.message));
    }
}

TEST_CASE("functions.<name>: unknown keys, including inside model", "[unit]") {
    temp_app app;
    auto e = error_for(app, "functions:\n  Worker:\n    extension: [go-agent]\n");
    check_at(e, app, 3, 5, "functions.Worker.extension");
    CHECK(contains(e.message(), "did you mean 'extensions'"));

    e = error_for(app, "functions:\n  Worker:\n    model:\n      keepalive: fixed(5min)\n");
    check_at(e, app, 4, 7, "functions.Worker.model.keepalive");
    CHECK(contains(e.message(), "did you mean 'keep_alive'"));
    CHECK(contains(e.message(), "allowed here: runtime, init_duration, package_ms_per_mb, "
                                "keep_alive, max_lifetime"));
}

TEST_CASE("functions.<name>.model: every override", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", R"yaml(functions:
  Worker:
    model:
      runtime: python3.12-arm64
      init_duration: lognormal(median=140ms, p99=190ms)
      package_ms_per_mb: 2.5
      keep_alive: "uniform(5min, 7min)"
      max_lifetime: 'empirical(0:2h, 0.5:3h, 1:4h)'
  Hello:
    model:
      package_ms_per_mb: 0
)yaml");
    const auto s = app.sam(sam_template);
    const auto& m = s.find_function("Worker")->model;
    CHECK(m.runtime == "python3.12-arm64");
    CHECK(m.init_duration == "lognormal(median=140ms, p99=190ms)");
    CHECK(m.package_ms_per_mb == 2.5);
    CHECK(m.keep_alive == "uniform(5min, 7min)");
    CHECK(m.max_lifetime == "empirical(0:2h, 0.5:3h, 1:4h)");
    CHECK(m.where.file == (app.dir() / "coldbrew.yaml").string());
    CHECK(m.where.line == 3);
    CHECK(m.where.column == 5);
    CHECK(m.path == "functions.Worker.model");

    const auto& hello = s.find_function("Hello")->model;
    CHECK(hello.package_ms_per_mb == 0.0);
    CHECK_FALSE(hello.runtime);
    CHECK_FALSE(hello.init_duration);
    CHECK(hello.where.line == 10);
}

TEST_CASE("functions.<name>.model: null is no override", "[unit]") {
    temp_app app;
    app.write("coldbrew.yaml", "functions:\n  Worker:\n    model:\n");
    const auto& m = app.sam(sam_template).find_function("Worker")->model;
    CHECK_FALSE(m.runtime);
    CHECK_FALSE(m.init_duration);
}

TEST_CASE("functions.<name>.model: scalar errors", "[unit]") {
    temp_app app;
    auto e = error_for(app, "functions:\n  Worker:\n    model:\n      runtime: ''\n");
    check_at(e, app, 4, 16, "functions.Worker.model.runtime");
    CHECK(contains(e.message(), "model runtime must not be empty"));

    e = error_for(app, "functions:\n  Worker:\n    model:\n      runtime: [a]\n");
    check_at(e, app, 4, 16, "functions.Worker.model.runtime");

    e = error_for(app, "functions:\n  Worker:\n    model:\n      package_ms_per_mb: -1\n");
    check_at(e, app, 4, 26, "functions.Worker.model.package_ms_per_mb");
    CHECK(contains(e.message(), "package_ms_per_mb must be a number >= 0, got -1"));

    e = error_for(app, "functions:\n  Worker:\n    model:\n      init_duration: fixed(5)\n      "
                       "keep_alive: {fixed: 1}\n");
    check_at(e, app, 5, 19, "functions.Worker.model.keep_alive");
    CHECK(contains(e.message(), "keep_alive must be a string"));
}

TEST_CASE("functions.<name>.model: distribution errors point at the offending character",
          "[unit]") {
    temp_app app;
    struct dist_case {
        std::string line; // line 4, under "    model:"
        int column;       // 1-based column of the character the parser rejects
        std::string key;
        std::string message;
    };
    const std::vector<dist_case> cases = {
        // Plain scalar: the value starts at column 22; "lognormal(median=140ms, " is 24 bytes.
        {"      init_duration: lognormal(median=140ms, p98=190ms)", 46, "init_duration",
         "unknown argument 'p98'"},
        // Double-quoted: the value's mark is at the quote (column 19), text starts at 20.
        {"      keep_alive: \"uniform(5min; 7min)\"", 32, "keep_alive", "in 'uniform(5min; 7min)'"},
        // Single-quoted.
        {"      max_lifetime: 'fixd(2h)'", 22, "max_lifetime", "unknown distribution 'fixd'"},
        // Unknown unit: offset of the unit.
        {"      init_duration: fixed(120sec)", 31, "init_duration", "unknown unit 'sec'"},
        // Durations cannot be negative (a normal's far tail may be; clamped when drawn).
        {"      keep_alive: fixed(-5min)", 19, "keep_alive", "cannot be negative"},
        {"      init_duration: normal(mean=10ms, stddev=100ms)", 22, "init_duration",
         "cannot be negative"},
    };
    for (const auto& c : cases) {
        INFO(c.line);
        const auto e = error_for(app, "functions:\n  Worker:\n    model:\n" + c.line + "\n");
        check_at(e, app, 4, c.column, "functions.Worker.model." + c.key);
        CHECK(contains(e.message(), c.message));
    }
}

TEST_CASE("functions.<name>.model: distribution error in a value that is not written as it "
          "reads points at the value",
          "[unit]") {
    temp_app app;
    // Escapes and folding: the offset into the text no longer maps onto one source column.
    auto e = error_for(app, "functions:\n  Worker:\n    model:\n"
                            "      keep_alive: \"fixed(\\x31ms) x\"\n");
    check_at(e, app, 4, 19, "functions.Worker.model.keep_alive");
    CHECK(contains(e.message(), "in 'fixed(1ms) x'"));

    e = error_for(app, "functions:\n  Worker:\n    model:\n"
                       "      init_duration: fixed(1ms)\n        junk\n");
    check_at(e, app, 4, 22, "functions.Worker.model.init_duration");

    e = error_for(app, "functions:\n  Worker:\n    model:\n"
                       "      init_duration: |\n        fixed(1ms) junk\n");
    CHECK(e.key_path() == "functions.Worker.model.init_duration");
    CHECK(e.where().line >= 4);
}

TEST_CASE("provisioned concurrency above reserved concurrency is an error", "[unit]") {
    temp_app app;
    // coldbrew.yaml raises provisioned above the template's reserved 10: at its key.
    auto e = error_for(app, "functions:\n  Hello:\n    provisioned_concurrency: 11\n");
    check_at(e, app, 3, 30, "functions.Hello.provisioned_concurrency");
    CHECK(contains(e.message(), "Hello: provisioned concurrency 11 cannot exceed reserved "
                                "concurrency 10 (set by ReservedConcurrentExecutions in "
                                "template.yaml)"));

    // coldbrew.yaml lowers reserved below the template's provisioned 4: at the reserved key.
    e = error_for(app, "functions:\n  Hello:\n    reserved_concurrency: 3\n");
    check_at(e, app, 3, 27, "functions.Hello.reserved_concurrency");
    CHECK(contains(e.message(), "provisioned concurrency 4 cannot exceed reserved concurrency 3 "
                                "(set by functions.Hello.reserved_concurrency)"));

    // Both in coldbrew.yaml: at the provisioned key, which is the one that exceeds.
    e = error_for(app, "functions:\n  Worker:\n    provisioned_concurrency: 2\n"
                       "    reserved_concurrency: 1\n");
    check_at(e, app, 3, 30, "functions.Worker.provisioned_concurrency");

    // Equal is fine, and so is provisioned 0 with reserved 0.
    app.write("coldbrew.yaml", "functions:\n  Hello:\n    provisioned_concurrency: 10\n"
                               "  Worker: {reserved_concurrency: 0, provisioned_concurrency: 0}\n");
    const auto s = app.sam(sam_template);
    CHECK(s.find_function("Hello")->provisioned_concurrency == 10);
    CHECK(s.find_function("Worker")->reserved_concurrency == 0);
}

TEST_CASE("serverless: coldbrew.yaml model keys and the concurrency check", "[unit]") {
    temp_app app;
    const char* yaml = "service: shop\nprovider: {name: aws, runtime: nodejs20.x}\n"
                       "functions:\n  hello:\n    handler: h.h\n    reservedConcurrency: 5\n";
    app.write("coldbrew.yaml", "functions:\n  hello:\n    provisioned_concurrency: 6\n");
    const auto e = error_of([&] { app.serverless(yaml); });
    check_at(e, app, 3, 30, "functions.hello.provisioned_concurrency");
    CHECK(contains(e.message(), "(set by reservedConcurrency in serverless.yml)"));

    app.write("coldbrew.yaml", "functions:\n  hello:\n    architecture: arm64\n"
                               "    extensions: [go-agent]\n");
    const auto s = app.serverless(yaml);
    CHECK(s.functions.at(0).architecture == "arm64");
    CHECK(s.functions.at(0).extensions == std::vector<std::string>{"go-agent"});
    CHECK(s.functions.at(0).model_path == "functions.hello");
    CHECK(s.functions.at(0).model_where.file == (app.dir() / "coldbrew.yaml").string());
}
