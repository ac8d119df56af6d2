// SAM template loading: one TEST_CASE per AWS/SAM rule (spec §5.1).

#include "emulator/config/yaml_tree.hpp"
#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

#include <algorithm>
#include <map>

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

namespace {

const char* const minimal = R"(AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src/
)";

// A template whose HelloFunction properties are `props` (indented by 6 spaces already).
std::string with_props(const std::string& props, const std::string& extra = "") {
    return "Transform: AWS::Serverless-2016-10-31\n" + extra +
           "Resources:\n"
           "  HelloFunction:\n"
           "    Type: AWS::Serverless::Function\n"
           "    Properties:\n"
           "      Runtime: python3.12\n"
           "      Handler: app.handler\n"
           "      CodeUri: src\n" +
           props;
}

} // namespace

TEST_CASE("SAM function defaults: 128 MB, 3 s, x86_64, logical id as name", "[unit]") {
    temp_app app;
    const auto s = app.sam(minimal);
    REQUIRE(s.kind == config::stack::source_kind::sam);
    REQUIRE(s.functions.size() == 1);
    const auto& fn = s.functions[0];
    CHECK(fn.name == "HelloFunction");
    CHECK(fn.function_name == "HelloFunction");
    CHECK(fn.runtime == "nodejs20.x");
    CHECK(fn.handler == "index.handler");
    CHECK(fn.memory_mb == 128);
    CHECK(fn.timeout_s == 3);
    CHECK(fn.architecture == "x86_64");
    CHECK_FALSE(fn.vpc);
    CHECK_FALSE(fn.reserved_concurrency);
    CHECK_FALSE(fn.provisioned_concurrency);
    CHECK(fn.max_environments == 100);
    CHECK(fn.code_dir == app.dir() / "src");
    CHECK(fn.code_dir.is_absolute());
    CHECK(s.template_file == app.dir() / "template.yaml");
    CHECK(s.apis.empty());
    CHECK(s.routes.empty());
    CHECK(s.find_function("HelloFunction") == &s.functions[0]);
    CHECK(s.find_function("Nope") == nullptr);
    // nodejs20.x is deprecated, still creatable, on the runtime table's date: its warning is
    // the only one.
    REQUIRE(s.warnings.size() == 1);
    CHECK(contains(s.warnings[0], "runtime nodejs20.x is deprecated since 2026-04-30"));
}

TEST_CASE("SAM CodeUri omitted means the template's directory", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Resources:
  F:
    Type: AWS::Serverless::Function
    Properties: {Runtime: provided.al2023, Handler: bootstrap}
)");
    CHECK(s.functions.at(0).code_dir == app.dir());
}

TEST_CASE("SAM template can be given as a file path", "[unit]") {
    temp_app app;
    app.mkdir("src");
    const auto file = app.write("my-template.yaml", minimal);
    const auto s = config::load_stack(file, {});
    CHECK(s.template_file == file);
    CHECK(s.functions.size() == 1);
}

TEST_CASE("SAM reads the function properties it needs", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      MemorySize: 1024
      Timeout: 30
      FunctionName: hello-prod
      Architectures: [arm64]
      ReservedConcurrentExecutions: 5
      AutoPublishAlias: live
      ProvisionedConcurrencyConfig:
        ProvisionedConcurrentExecutions: 2
      VpcConfig:
        SecurityGroupIds: [sg-1]
        SubnetIds: [subnet-1, subnet-2]
      Environment:
        Variables:
          TABLE: users
          COUNT: 3
)"));
    const auto& fn = s.functions.at(0);
    CHECK(fn.memory_mb == 1024);
    CHECK(fn.timeout_s == 30);
    CHECK(fn.function_name == "hello-prod");
    CHECK(fn.name == "HelloFunction");
    CHECK(fn.architecture == "arm64");
    CHECK(fn.reserved_concurrency == 5);
    CHECK(fn.provisioned_concurrency == 2);
    CHECK(fn.vpc);
    // Lambda has attached functions to VPCs through Hyperplane ENIs only since 2019.
    CHECK(fn.vpc_mode == "hyperplane");
    CHECK(fn.environment.at("TABLE") == "users");
    CHECK(fn.environment.at("COUNT") == "3");
}

TEST_CASE("SAM VpcConfig without subnets is not a VPC function", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props("      VpcConfig:\n        SubnetIds: []\n"));
    CHECK_FALSE(s.functions.at(0).vpc);
    CHECK(s.functions.at(0).vpc_mode == "none");
}

TEST_CASE("SAM VpcConfig with unresolvable subnets is a Hyperplane VPC function", "[unit]") {
    temp_app app;
    const auto s =
        app.sam(with_props("      VpcConfig:\n        SubnetIds: [!ImportValue shared-subnet]\n"));
    CHECK(s.functions.at(0).vpc);
    CHECK(s.functions.at(0).vpc_mode == "hyperplane");
}

TEST_CASE("SAM provisioned concurrency above reserved concurrency is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props(R"(      ReservedConcurrentExecutions: 2
      ProvisionedConcurrencyConfig:
        ProvisionedConcurrentExecutions: 3
)"));
    });
    CHECK(e.where().file == (app.dir() / "template.yaml").string());
    CHECK(e.where().line == 11);
    CHECK(e.where().column == 42);
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.ProvisionedConcurrencyConfig."
                          "ProvisionedConcurrentExecutions");
    CHECK(e.message() == "HelloFunction: provisioned concurrency 3 cannot exceed reserved "
                         "concurrency 2 (set by "
                         "Resources.HelloFunction.Properties.ReservedConcurrentExecutions); AWS "
                         "rejects it at deploy");

    // Equal is accepted, and so is provisioned concurrency without a reserved value.
    auto s = app.sam(with_props(R"(      ReservedConcurrentExecutions: 3
      ProvisionedConcurrencyConfig: {ProvisionedConcurrentExecutions: 3}
)"));
    CHECK(s.functions.at(0).provisioned_concurrency == 3);
    s = app.sam(
        with_props("      ProvisionedConcurrencyConfig: {ProvisionedConcurrentExecutions: 300}\n"));
    CHECK(s.functions.at(0).provisioned_concurrency == 300);
    CHECK_FALSE(s.functions.at(0).reserved_concurrency);
}

TEST_CASE("SAM Globals concurrency applies and is checked", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props("      ProvisionedConcurrencyConfig:\n"
                           "        ProvisionedConcurrentExecutions: 9\n",
                           "Globals:\n  Function:\n    ReservedConcurrentExecutions: 4\n"));
    });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.ProvisionedConcurrencyConfig."
                          "ProvisionedConcurrentExecutions");
    CHECK(contains(e.message(), "(set by Globals.Function.ReservedConcurrentExecutions)"));
}

TEST_CASE("SAM concurrency values: 0..1000000", "[unit]") {
    temp_app app;
    auto e =
        error_of([&] { app.sam(with_props("      ReservedConcurrentExecutions: 1000001\n")); });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.ReservedConcurrentExecutions");
    CHECK(e.where().line == 9);
    CHECK(e.where().column == 37);
    e = error_of([&] {
        app.sam(with_props(
            "      ProvisionedConcurrencyConfig: {ProvisionedConcurrentExecutions: -1}\n"));
    });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.ProvisionedConcurrencyConfig."
                          "ProvisionedConcurrentExecutions");
    CHECK(contains(e.message(), "between 0 and 1000000"));
}

TEST_CASE("SAM Globals: primitives resource wins, maps deep-merged", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: nodejs18.x
    Handler: index.handler
    CodeUri: src
    Timeout: 10
    MemorySize: 256
    Environment:
      Variables:
        A: global-a
        B: global-b
Resources:
  First:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 20
      Environment:
        Variables:
          B: first-b
          C: first-c
  Second:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.11
)");
    const auto* first = s.find_function("First");
    const auto* second = s.find_function("Second");
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->timeout_s == 20);
    CHECK(first->memory_mb == 256);
    CHECK(first->runtime == "nodejs18.x");
    CHECK(first->environment == std::map<std::string, std::string>{
                                    {"A", "global-a"}, {"B", "first-b"}, {"C", "first-c"}});
    CHECK(second->timeout_s == 10);
    CHECK(second->runtime == "python3.11");
    CHECK(second->environment.at("B") == "global-b");
}

TEST_CASE("SAM Globals: lists are concatenated (Layers)", "[unit]") {
    temp_app app;
    app.mkdir("layers/a");
    app.mkdir("layers/b");
    const auto s = app.sam(R"(Globals:
  Function:
    Layers: [!Ref LayerA]
Resources:
  LayerA:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: layers/a}
  LayerB:
    Type: AWS::Lambda::LayerVersion
    Properties: {Content: layers/b}
  F:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      Layers:
        - !Ref LayerB
        - arn:aws:lambda:us-east-1:123456789012:layer:remote:3
)");
    const auto& fn = s.functions.at(0);
    REQUIRE(fn.layer_dirs.size() == 2);
    CHECK(fn.layer_dirs[0] == app.dir() / "layers/a");
    CHECK(fn.layer_dirs[1] == app.dir() / "layers/b");
    CHECK(any_contains(s.warnings, "layer:remote:3"));
}

TEST_CASE("SAM Globals Architectures concatenated with the function's is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props("      Architectures: [arm64]\n",
                           "Globals:\n  Function:\n    Architectures: [x86_64]\n"));
    });
    CHECK(contains(e.message(), "exactly one"));
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Architectures");
}

TEST_CASE("SAM Parameters: Default, and overrides win", "[unit]") {
    temp_app app;
    const std::string yaml = with_props(R"(      MemorySize: !Ref Memory
      Environment:
        Variables:
          STAGE: !Ref Stage
)",
                                        R"(Parameters:
  Stage:
    Type: String
    Default: dev
    AllowedValues: [dev, prod]
  Memory:
    Type: Number
    Default: 512
)");
    const auto defaults = app.sam(yaml);
    CHECK(defaults.functions.at(0).environment.at("STAGE") == "dev");
    CHECK(defaults.functions.at(0).memory_mb == 512);

    config::load_options options;
    options.parameter_overrides = {{"Stage", "prod"}, {"Memory", "2048"}};
    const auto overridden = app.sam(yaml, options);
    CHECK(overridden.functions.at(0).environment.at("STAGE") == "prod");
    CHECK(overridden.functions.at(0).memory_mb == 2048);

    options.parameter_overrides = {{"Stage", "qa"}};
    const auto e = error_of([&] { app.sam(yaml, options); });
    CHECK(contains(e.message(), "AllowedValues"));
}

TEST_CASE("SAM !Sub: parameters, pseudo-parameters, ${!Literal}, variable map", "[unit]") {
    temp_app app;
    const auto s =
        app.sam(with_props(R"(      Environment:
        Variables:
          A: !Sub "${Stage}-${AWS::Region}-${AWS::AccountId}"
          B: !Sub "${AWS::StackName}/${AWS::Partition}/${AWS::URLSuffix}"
          C: !Sub "cost ${!Price} for ${Stage}"
          D:
            Fn::Sub:
              - "${Name}.${Stage}"
              - Name: !Ref Stage
          E: !Sub "https://${ServerlessRestApi}.execute-api.${AWS::Region}.amazonaws.com/Prod/"
)",
                           "Parameters:\n  Stage:\n    Type: String\n    Default: dev\n"));
    const auto& env = s.functions.at(0).environment;
    CHECK(env.at("A") == "dev-us-east-1-123456789012");
    CHECK(env.at("B") == "local/aws/amazonaws.com");
    CHECK(env.at("C") == "cost ${Price} for dev");
    CHECK(env.at("D") == "dev.dev");
    CHECK(env.at("E") == "https://ServerlessRestApi.execute-api.us-east-1.amazonaws.com/Prod/");
}

TEST_CASE("SAM !GetAtt Function.Arn and !Ref Function give the function's ARN and name", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Resources:
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      FunctionName: my-worker
  Caller:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      Environment:
        Variables:
          WORKER_ARN: !GetAtt Worker.Arn
          WORKER_ARN_LONG: {"Fn::GetAtt": [Worker, Arn]}
          WORKER_NAME: !Ref Worker
          SELF_ARN: !GetAtt Caller.Arn
)");
    const auto& env = s.find_function("Caller")->environment;
    CHECK(env.at("WORKER_ARN") == "arn:aws:lambda:us-east-1:123456789012:function:my-worker");
    CHECK(env.at("WORKER_ARN_LONG") == env.at("WORKER_ARN"));
    CHECK(env.at("WORKER_NAME") == "my-worker");
    CHECK(env.at("SELF_ARN") == "arn:aws:lambda:us-east-1:123456789012:function:Caller");
}

TEST_CASE("SAM !Join, !Split, !Select, !FindInMap, !Base64", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Environment:
        Variables:
          JOINED: !Join [",", [a, !Ref AWS::Region, c]]
          SECOND: !Select [1, !Split ["|", "x|y|z"]]
          SIZE: !FindInMap [Sizes, !Ref AWS::Region, Small]
          ENCODED: !Base64 hello
          LONG: {"Fn::Join": ["-", ["p", "q"]]}
)",
                                      "Mappings:\n  Sizes:\n    us-east-1:\n      Small: '256'\n"));
    const auto& env = s.functions.at(0).environment;
    CHECK(env.at("JOINED") == "a,us-east-1,c");
    CHECK(env.at("SECOND") == "y");
    CHECK(env.at("SIZE") == "256");
    CHECK(env.at("ENCODED") == "aGVsbG8=");
    CHECK(env.at("LONG") == "p-q");
}

TEST_CASE("SAM !If uses the Conditions section", "[unit]") {
    temp_app app;
    const std::string yaml = with_props(R"(      MemorySize: !If [IsProd, 1024, 256]
      Environment:
        Variables:
          MODE: !If [IsProdAndBig, big-prod, other]
)",
                                        R"(Parameters:
  Stage: {Type: String, Default: dev}
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
  IsProdAndBig: !And [!Condition IsProd, !Not [!Equals [!Ref AWS::Region, eu-west-1]]]
)");
    const auto dev = app.sam(yaml);
    CHECK(dev.functions.at(0).memory_mb == 256);
    CHECK(dev.functions.at(0).environment.at("MODE") == "other");
    config::load_options options;
    options.parameter_overrides = {{"Stage", "prod"}};
    const auto prod = app.sam(yaml, options);
    CHECK(prod.functions.at(0).memory_mb == 1024);
    CHECK(prod.functions.at(0).environment.at("MODE") == "big-prod");
}

TEST_CASE("SAM unknown condition name is an error with a suggestion", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props("      MemorySize: !If [IsProdd, 1024, 256]\n",
                           "Conditions:\n  IsProd: !Equals [a, b]\n"));
    });
    CHECK(contains(e.message(), "IsProd'?"));
}

TEST_CASE("SAM AWS::NoValue removes the key", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      MemorySize: !If [Never, 512, !Ref AWS::NoValue]
      Environment:
        Variables:
          KEEP: yes-please
          DROP: !Ref AWS::NoValue
          MAYBE: !If [Never, x, !Ref AWS::NoValue]
)",
                                      "Conditions:\n  Never: !Equals [a, b]\n"));
    const auto& fn = s.functions.at(0);
    CHECK(fn.memory_mb == 128);
    CHECK(fn.environment == std::map<std::string, std::string>{{"KEEP", "yes-please"}});
}

TEST_CASE("SAM resource whose Condition is false is skipped", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Conditions:
  Off: !Equals [a, b]
Resources:
  On:
    Type: AWS::Serverless::Function
    Properties: {Runtime: nodejs20.x, Handler: index.handler, CodeUri: src}
  Disabled:
    Type: AWS::Serverless::Function
    Condition: Off
    Properties: {Runtime: nodejs20.x, Handler: index.handler, CodeUri: src}
)");
    CHECK(s.functions.size() == 1);
    CHECK(s.find_function("Disabled") == nullptr);
}

TEST_CASE("SAM unresolvable env values become \"\" with a warning", "[unit]") {
    temp_app app;
    const auto s = app.sam(R"(Resources:
  Table:
    Type: AWS::DynamoDB::Table
  F:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: src
      Environment:
        Variables:
          TABLE: !Ref Table
          STREAM: !GetAtt Table.StreamArn
          SHARED: !ImportValue shared-bucket
          MISSING: !Ref NoSuchThing
)");
    const auto& env = s.functions.at(0).environment;
    CHECK(env.at("TABLE") == "Table"); // Ref to a resource: its logical id
    CHECK(env.at("STREAM").empty());
    CHECK(env.at("SHARED").empty());
    CHECK(env.at("MISSING").empty());
    CHECK(any_contains(s.warnings, "Environment.Variables.STREAM"));
    CHECK(any_contains(s.warnings, "Fn::ImportValue"));
}

TEST_CASE("SAM unresolvable value where a number is needed is an error", "[unit]") {
    temp_app app;
    const auto e =
        error_of([&] { app.sam(with_props("      Timeout: !ImportValue shared-timeout\n")); });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Timeout");
}

TEST_CASE("SAM implicit REST and HTTP APIs", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        GetHello:
          Type: Api
          Properties: {Path: /hello, Method: get}
        AnyProxy:
          Type: Api
          Properties: {Path: '/{proxy+}', Method: any}
        PostItems:
          Type: HttpApi
          Properties: {Path: /items, Method: post}
        Queue:
          Type: SQS
          Properties: {Queue: arn:aws:sqs:us-east-1:123456789012:q}
)"));
    REQUIRE(s.apis.size() == 2);
    const auto* rest = s.find_api("ServerlessRestApi");
    const auto* http = s.find_api("ServerlessHttpApi");
    REQUIRE(rest);
    REQUIRE(http);
    CHECK(rest->kind == config::api_kind::rest);
    CHECK(rest->stage == "Prod");
    CHECK(http->kind == config::api_kind::http);
    CHECK(http->stage == "$default");

    REQUIRE(s.routes.size() == 3);
    CHECK(s.routes[0].api_id == "ServerlessRestApi");
    CHECK(s.routes[0].method == "GET");
    CHECK(s.routes[0].path == "/hello");
    CHECK(s.routes[0].function == "HelloFunction");
    CHECK(s.routes[0].payload_format_version == "1.0");
    CHECK(s.routes[0].integration_timeout_ms == 29000);
    CHECK(s.routes[1].method == "ANY");
    CHECK(s.routes[1].path == "/{proxy+}");
    CHECK(s.routes[2].api_id == "ServerlessHttpApi");
    CHECK(s.routes[2].method == "POST");
    CHECK(s.routes[2].payload_format_version == "2.0");
    CHECK(s.routes[2].integration_timeout_ms == 30000);
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].kind == "event");
    CHECK(contains(s.ignored[0].what, "SQS event"));
    CHECK_FALSE(any_contains(s.warnings, "event type SQS"));
}

TEST_CASE("SAM only APIs with routes are created implicitly", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        Root:
          Type: HttpApi
          Properties: {Path: /, Method: get}
)"));
    REQUIRE(s.apis.size() == 1);
    CHECK(s.apis[0].id == "ServerlessHttpApi");
}

TEST_CASE("SAM HttpApi event without Path and Method is the $default route", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        CatchAll:
          Type: HttpApi
)"));
    REQUIRE(s.routes.size() == 1);
    CHECK(s.routes[0].path == "$default");
    CHECK(s.routes[0].method == "ANY");
    CHECK(s.routes[0].api_id == "ServerlessHttpApi");
}

TEST_CASE("SAM HttpApi PayloadFormatVersion and TimeoutInMillis", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        Old:
          Type: HttpApi
          Properties: {Path: /old, Method: get, PayloadFormatVersion: '1.0', TimeoutInMillis: 5000}
)"));
    CHECK(s.routes.at(0).payload_format_version == "1.0");
    CHECK(s.routes.at(0).integration_timeout_ms == 5000);
}

TEST_CASE("SAM explicit Api: StageName, BinaryMediaTypes with ~1, Globals.Api", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        Upload:
          Type: Api
          Properties:
            RestApiId: !Ref MyApi
            Path: /upload
            Method: put
)",
                                      R"(Parameters:
  Stage: {Type: String, Default: v1}
Globals:
  Api:
    BinaryMediaTypes: ['application~1octet-stream']
)") + R"(  MyApi:
    Type: AWS::Serverless::Api
    Properties:
      StageName: !Ref Stage
      BinaryMediaTypes: ['image~1png', '*~1*']
)");
    REQUIRE(s.apis.size() == 1);
    const auto& api = s.apis[0];
    CHECK(api.id == "MyApi");
    CHECK(api.kind == config::api_kind::rest);
    CHECK(api.stage == "v1");
    CHECK(api.binary_media_types ==
          std::vector<std::string>{"application/octet-stream", "image/png", "*/*"});
    REQUIRE(s.routes.size() == 1);
    CHECK(s.routes[0].api_id == "MyApi");
    CHECK(s.routes[0].method == "PUT");
}

TEST_CASE("SAM Globals.Api BinaryMediaTypes apply to the implicit REST API", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props("      Events:\n        E:\n          Type: Api\n"
                                      "          Properties: {Path: /, Method: get}\n",
                                      "Globals:\n  Api:\n    BinaryMediaTypes: ['image~1*']\n"));
    CHECK(s.find_api("ServerlessRestApi")->binary_media_types ==
          std::vector<std::string>{"image/*"});
}

TEST_CASE("SAM explicit Api needs StageName", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(std::string(minimal) +
                "  MyApi:\n    Type: AWS::Serverless::Api\n    Properties: {}\n");
    });
    CHECK(contains(e.message(), "MyApi"));
    CHECK(contains(e.message(), "StageName"));
}

TEST_CASE("SAM explicit HttpApi defaults to the $default stage and is kept without routes",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(std::string(minimal) + "  Http:\n    Type: AWS::Serverless::HttpApi\n");
    REQUIRE(s.apis.size() == 1);
    CHECK(s.apis[0].id == "Http");
    CHECK(s.apis[0].kind == config::api_kind::http);
    CHECK(s.apis[0].stage == "$default");
}

TEST_CASE("SAM RestApiId must refer to an AWS::Serverless::Api", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props("      Events:\n        E:\n          Type: Api\n          Properties:\n"
                           "            RestApiId: !Ref Http\n            Path: /\n            "
                           "Method: get\n") +
                "  Http:\n    Type: AWS::Serverless::HttpApi\n");
    });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Events.E.Properties.RestApiId");
}

TEST_CASE("SAM duplicate route is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props(R"(      Events:
        A:
          Type: Api
          Properties: {Path: /x, Method: get}
        B:
          Type: Api
          Properties: {Path: /x, Method: GET}
)"));
    });
    CHECK(contains(e.message(), "already served by HelloFunction"));
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Events.B");
}

TEST_CASE("SAM PackageType Image is unsupported, naming the resource", "[unit]") {
    temp_app app;
    const auto e = error_of([&] { app.sam(with_props("      PackageType: Image\n")); });
    CHECK(contains(e.message(), "HelloFunction"));
    CHECK(contains(e.message(), "Image"));
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.PackageType");
}

TEST_CASE("SAM InlineCode is unsupported, naming the resource", "[unit]") {
    temp_app app;
    const auto e =
        error_of([&] { app.sam(with_props("      InlineCode: 'exports.handler = 1'\n")); });
    CHECK(contains(e.message(), "HelloFunction"));
    CHECK(contains(e.message(), "InlineCode"));
}

TEST_CASE("SAM s3:// CodeUri is unsupported, naming the resource", "[unit]") {
    temp_app app;
    app.mkdir("src");
    app.write("template.yaml", R"(Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: s3://bucket/code.zip
)");
    const auto e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(contains(e.message(), "HelloFunction"));
    CHECK(contains(e.message(), "S3"));
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.CodeUri");
}

TEST_CASE("SAM CodeUri as {Bucket, Key} is unsupported", "[unit]") {
    temp_app app;
    app.write("template.yaml", R"(Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      CodeUri: {Bucket: b, Key: k}
)");
    const auto e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(contains(e.message(), "HelloFunction"));
}

TEST_CASE("SAM zip CodeUri gives a clear error", "[unit]") {
    temp_app app;
    app.write("build/code.zip", "PK");
    app.write("template.yaml", R"(Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties: {Runtime: nodejs20.x, Handler: index.handler, CodeUri: build/code.zip}
)");
    const auto e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(e.message() == "zip CodeUri not supported yet, point CodeUri at the directory");
}

TEST_CASE("SAM CodeUri must be an existing directory", "[unit]") {
    temp_app app;
    app.write("template.yaml", R"(Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties: {Runtime: nodejs20.x, Handler: index.handler, CodeUri: nowhere}
)");
    const auto e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(contains(e.message(), "does not exist"));
}

TEST_CASE("SAM unsupported runtime is an error naming the resource", "[unit]") {
    temp_app app;
    for (const char* runtime : {"java21", "dotnet8", "ruby3.3", "go1.x"}) {
        const auto e = error_of([&] {
            app.sam(
                std::string("Resources:\n  HelloFunction:\n    Type: AWS::Serverless::Function\n"
                            "    Properties: {Handler: h, CodeUri: src, Runtime: ") +
                runtime + "}\n");
        });
        CHECK(contains(e.message(), std::string("HelloFunction: runtime ") + runtime +
                                        " is not supported (supported: nodejs24.x, nodejs22.x, "));
        CHECK(e.key_path() == "Resources.HelloFunction.Properties.Runtime");
    }
}

TEST_CASE("SAM supported runtimes", "[unit]") {
    temp_app app;
    for (const char* runtime : {"nodejs18.x", "nodejs22.x", "python3.9", "python3.13",
                                "provided.al2", "provided.al2023"}) {
        const auto s = app.sam(std::string("Resources:\n  F:\n    Type: AWS::Serverless::Function\n"
                                           "    Properties: {Handler: h, CodeUri: src, Runtime: ") +
                               runtime + "}\n");
        CHECK(s.functions.at(0).runtime == runtime);
    }
}

TEST_CASE("SAM Runtime and Handler are required", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam("Resources:\n  NoRuntime:\n    Type: AWS::Serverless::Function\n"
                "    Properties: {Handler: h, CodeUri: src}\n");
    });
    CHECK(contains(e.message(), "NoRuntime: Runtime is required"));
    e = error_of([&] {
        app.sam("Resources:\n  NoHandler:\n    Type: AWS::Serverless::Function\n"
                "    Properties: {Runtime: provided.al2023, CodeUri: src}\n");
    });
    CHECK(contains(e.message(), "NoHandler: Handler is required"));
}

TEST_CASE("SAM bad Timeout: error carries line, column and key path", "[unit]") {
    temp_app app;
    const auto e = error_of([&] { app.sam(with_props("      Timeout: 901\n")); });
    CHECK(e.where().file == (app.dir() / "template.yaml").string());
    CHECK(e.where().line == 9);
    CHECK(e.where().column == 16);
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Timeout");
    CHECK(contains(e.message(), "between 1 and 900"));
    CHECK(std::string(e.what()) ==
          (app.dir() / "template.yaml").string() +
              ":9:16: Resources.HelloFunction.Properties.Timeout: " + e.message());
}

TEST_CASE("SAM MemorySize must be a number in range", "[unit]") {
    temp_app app;
    auto e = error_of([&] { app.sam(with_props("      MemorySize: lots\n")); });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.MemorySize");
    CHECK(contains(e.message(), "'lots'"));
    e = error_of([&] { app.sam(with_props("      MemorySize: 64\n")); });
    CHECK(contains(e.message(), "between 128 and 10240"));
}

TEST_CASE("SAM a bad value from Globals points at Globals", "[unit]") {
    temp_app app;
    const auto e =
        error_of([&] { app.sam(with_props("", "Globals:\n  Function:\n    Timeout: 0\n")); });
    CHECK(e.key_path() == "Globals.Function.Timeout");
    CHECK(e.where().line == 4);
}

TEST_CASE("SAM Architectures must be x86_64 or arm64", "[unit]") {
    temp_app app;
    const auto e = error_of([&] { app.sam(with_props("      Architectures: [arm32]\n")); });
    CHECK(contains(e.message(), "x86_64 or arm64"));
}

TEST_CASE("SAM unknown properties are warnings with a suggestion", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props("      Timout: 10\n"));
    CHECK(s.functions.at(0).timeout_s == 3);
    REQUIRE(s.warnings.size() == 1);
    CHECK(contains(s.warnings[0], "Resources.HelloFunction.Properties.Timout"));
    CHECK(contains(s.warnings[0], "did you mean 'Timeout'"));
    CHECK(contains(s.warnings[0], ":9:7:"));
}

TEST_CASE("SAM reserved environment variable names are warned about", "[unit]") {
    temp_app app;
    const auto s = app.sam(
        with_props("      Environment:\n        Variables:\n          AWS_REGION: eu-west-1\n"));
    CHECK(any_contains(s.warnings, "reserved"));
}

TEST_CASE("SAM function names must be unique", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.sam(with_props("      FunctionName: same\n") +
                "  Other:\n    Type: AWS::Serverless::Function\n"
                "    Properties: {Runtime: nodejs20.x, Handler: h, CodeUri: src, FunctionName: "
                "same}\n");
    });
    CHECK(contains(e.message(), "same"));
    CHECK(e.key_path() == "Resources.Other");
}

TEST_CASE("SAM YAML syntax error reports the parser's position", "[unit]") {
    temp_app app;
    app.write("template.yaml", "Resources:\n  F:\n    Type: [unclosed\n    Properties: {}\n");
    const auto e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(e.where().file == (app.dir() / "template.yaml").string());
    CHECK(e.where().line > 0);
    CHECK(e.where().column > 0);
    CHECK(contains(e.message(), "YAML syntax error"));
}

TEST_CASE("SAM duplicate keys are an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] { app.sam(with_props("      Timeout: 5\n      Timeout: 6\n")); });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Timeout");
    CHECK(e.where().line == 10);
}

TEST_CASE("missing template file or directory is a config_error", "[unit]") {
    temp_app app;
    auto e = error_of([&] { config::load_stack(app.dir() / "nope.yaml", {}); });
    CHECK(contains(e.message(), "no such file"));
    e = error_of([&] { config::load_stack(app.dir(), {}); });
    CHECK(contains(e.message(), "no template.yaml"));
}

TEST_CASE("directory lookup prefers template.yaml over serverless.yml", "[unit]") {
    temp_app app;
    app.write("serverless.yml", "service: x\nprovider: {name: aws, runtime: nodejs20.x}\n");
    const auto s = app.sam(minimal);
    CHECK(s.kind == config::stack::source_kind::sam);
    CHECK(s.template_file.filename() == "template.yaml");
}

TEST_CASE("SAM environment values: null is \"\", booleans lower-cased, quoted text kept",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Environment:
        Variables:
          EMPTY:
          FLAG: True
          QUOTED: 'TRUE'
          NUMBER: 1.50
)"));
    const auto& env = s.functions.at(0).environment;
    CHECK(env.at("EMPTY").empty());
    CHECK(env.at("FLAG") == "true");
    CHECK(env.at("QUOTED") == "TRUE");
    CHECK(env.at("NUMBER") == "1.50");
    CHECK(s.warnings.empty());
}

TEST_CASE("SAM list parameters and !Join", "[unit]") {
    temp_app app;
    const auto s =
        app.sam(with_props(R"(      VpcConfig:
        SubnetIds: !Ref Subnets
      Environment:
        Variables:
          SUBNETS: !Join ["+", !Ref Subnets]
)",
                           "Parameters:\n  Subnets:\n    Type: List<AWS::EC2::Subnet::Id>\n"
                           "    Default: subnet-1, subnet-2\n"));
    CHECK(s.functions.at(0).vpc);
    CHECK(s.functions.at(0).environment.at("SUBNETS") == "subnet-1+subnet-2");
}

TEST_CASE("SAM FunctionName depending on its own function is an error", "[unit]") {
    temp_app app;
    const auto e = error_of(
        [&] { app.sam(with_props("      FunctionName: !Sub '${HelloFunction.Arn}-x'\n")); });
    CHECK(contains(e.message(), "depends on the function itself"));
}

namespace {

// "Billion laughs": seven lines of anchors whose aliases expand to 10^7 list items.
std::string alias_bomb(const std::string& indent) {
    std::string out = indent + "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
    for (int i = 1; i <= 6; ++i) {
        out += indent + "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int j = 0; j < 10; ++j)
            out += (j ? ",*a" : "*a") + std::to_string(i - 1);
        out += "]\n";
    }
    return out;
}

} // namespace

TEST_CASE("YAML alias bomb is a config error at the expanding node, not an exhausted heap",
          "[unit]") {
    temp_app app;
    const auto e =
        error_of([&] { app.sam(std::string(minimal) + "Metadata:\n" + alias_bomb("  ")); });
    CHECK(e.message() == "document expands to more than 1000000 nodes (YAML aliases?)");
    CHECK(e.where().file == (app.dir() / "template.yaml").string());
    CHECK(e.where().line >= 11); // inside Metadata, where the anchors are
    CHECK(e.key_path().rfind("Metadata.a", 0) == 0);
}

TEST_CASE("YAML tree bounds: node count and nesting depth", "[unit]") {
    using config::detail::load_yaml_text;
    using config::detail::yaml_limits;
    // Aliases are counted as often as they are copied.
    const std::string text = "a: &a [1, 2, 3]\nb: [*a, *a]\n"; // 1 + (1+4) + (1+4+4) nodes
    CHECK(load_yaml_text(text, "t.yaml", yaml_limits{14, 256}).members.size() == 2);
    auto e = error_of([&] { load_yaml_text(text, "t.yaml", yaml_limits{13, 256}); });
    CHECK(e.message() == "document expands to more than 13 nodes (YAML aliases?)");
    CHECK(e.key_path() == "b[1][2]");
    CHECK(e.where().line == 1); // an alias is its anchor's node
    CHECK(e.where().column == 14);

    const std::string deep = std::string(300, '[') + std::string(300, ']');
    e = error_of([&] { load_yaml_text(deep, "t.yaml"); });
    CHECK(e.message() == "document nested more than 256 levels deep (recursive YAML alias?)");
    CHECK(e.key_path().size() < 130); // shortened, not 256 "[0]"s
    e = error_of([&] { load_yaml_text("r: &r [*r]\n", "t.yaml"); });
    CHECK(contains(e.message(), "nested more than 256 levels deep"));
    // yaml-cpp's own guard (deeper than ours) no longer says only "bad file".
    const std::string deeper = std::string(5000, '[') + std::string(5000, ']');
    e = error_of([&] { load_yaml_text(deeper, "t.yaml"); });
    CHECK(e.message() == "document nested more than 256 levels deep");
}

TEST_CASE("SAM stage variables: Api Variables, HttpApi StageVariables, Globals, intrinsics",
          "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        Rest:
          Type: Api
          Properties: {RestApiId: !Ref MyApi, Path: /r, Method: get}
        Implicit:
          Type: Api
          Properties: {Path: /i, Method: get}
        Http:
          Type: HttpApi
          Properties: {ApiId: !Ref MyHttp, Path: /h, Method: get}
)",
                                      R"(Parameters:
  Table: {Type: String, Default: users}
Globals:
  Api:
    Variables: {shared: global, mode: global}
)") + R"(  MyApi:
    Type: AWS::Serverless::Api
    Properties:
      StageName: prod
      Variables:
        mode: api
        table: !Ref Table
        region: !Sub '${AWS::Region}'
  MyHttp:
    Type: AWS::Serverless::HttpApi
    Properties:
      StageVariables: {alias: live}
)");
    const auto* rest = s.find_api("MyApi");
    REQUIRE(rest);
    CHECK(rest->stage_variables ==
          std::map<std::string, std::string>{
              {"mode", "api"}, {"region", "us-east-1"}, {"shared", "global"}, {"table", "users"}});
    const auto* implicit = s.find_api("ServerlessRestApi");
    REQUIRE(implicit);
    CHECK(implicit->stage_variables ==
          std::map<std::string, std::string>{{"mode", "global"}, {"shared", "global"}});
    const auto* http = s.find_api("MyHttp");
    REQUIRE(http);
    CHECK(http->stage_variables == std::map<std::string, std::string>{{"alias", "live"}});
    CHECK(s.warnings.empty());
}

TEST_CASE("SAM stage variable that cannot be resolved is \"\" with a warning", "[unit]") {
    temp_app app;
    const auto s = app.sam(std::string(minimal) + R"(  MyApi:
    Type: AWS::Serverless::Api
    Properties:
      StageName: prod
      Variables: {shared: !ImportValue other-stack-export}
)");
    CHECK(s.find_api("MyApi")->stage_variables.at("shared").empty());
    CHECK(any_contains(s.warnings, "Resources.MyApi.Properties.Variables.shared"));
}

TEST_CASE("SAM sibling path variables with different names are an error", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(with_props(R"(      Events:
        ById:
          Type: Api
          Properties: {Path: '/a/{id}', Method: get}
        ByName:
          Type: Api
          Properties: {Path: '/a/{name}/x', Method: post}
)"));
    });
    CHECK(e.key_path() == "Resources.HelloFunction.Properties.Events.ByName");
    CHECK(e.where().line == 14); // the event's properties
    CHECK(contains(e.message(), "{name} and {id}"));
    CHECK(contains(e.message(), "route GET /a/{id} of HelloFunction, " +
                                    (app.dir() / "template.yaml").string() + ":10:9"));
    CHECK(contains(e.message(), "only one is allowed"));

    // Greedy variables too, on REST APIs: two names, or a name beside {proxy+}.
    for (const char* second : {"/files/{path+}", "/files/{id}"}) {
        e = error_of([&] {
            app.sam(with_props(std::string(R"(      Events:
        Proxy:
          Type: Api
          Properties: {Path: '/files/{proxy+}', Method: any}
        Other:
          Type: Api
          Properties: {Path: ')") +
                               second + R"(', Method: get}
)"));
        });
        CHECK(contains(e.message(), "sibling variable path parts"));
    }

    // HTTP APIs: renamed variables conflict, as on REST.
    e = error_of([&] {
        app.sam(with_props(R"(      Events:
        A:
          Type: HttpApi
          Properties: {Path: '/a/{id}', Method: get}
        B:
          Type: HttpApi
          Properties: {Path: '/a/{key}', Method: delete}
)"));
    });
    CHECK(contains(e.message(), "{key} and {id}"));
}

TEST_CASE("SAM path variables that may coexist", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        Get:
          Type: Api
          Properties: {Path: '/a/{id}', Method: get}
        Put:
          Type: Api
          Properties: {Path: '/a/{id}/tags/{tag}', Method: put}
        Literal:
          Type: Api
          Properties: {Path: '/a/all', Method: get}
        OtherApi:
          Type: HttpApi
          Properties: {Path: '/a/{name}', Method: get}
        HttpGreedy:
          Type: HttpApi
          Properties: {Path: '/a/{proxy+}', Method: any}
)"));
    CHECK(s.routes.size() == 5);
}

TEST_CASE("SAM missing required property next to a misspelt one says so, at the typo", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.sam(
            "Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n"
            "    Properties:\n      Runtim: nodejs20.x\n      Handler: h\n      CodeUri: src\n");
    });
    CHECK(e.message() == "Fn: Runtime is required (found \"Runtim\": did you mean Runtime?)");
    CHECK(e.key_path() == "Resources.Fn.Properties.Runtim");
    CHECK(e.where().line == 5);
    CHECK(e.where().column == 7);

    // Case counts as a typo; a misspelling in Globals points at Globals.
    e = error_of([&] {
        app.sam("Globals:\n  Function:\n    handler: index.handler\nResources:\n  Fn:\n"
                "    Type: AWS::Serverless::Function\n"
                "    Properties: {Runtime: nodejs20.x, CodeUri: src}\n");
    });
    CHECK(e.message() == "Fn: Handler is required (found \"handler\": did you mean Handler?)");
    CHECK(e.key_path() == "Globals.Function.handler");
    CHECK(e.where().line == 3);

    // Nothing close: the plain message, at the properties.
    e = error_of([&] {
        app.sam("Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n"
                "    Properties: {Handler: h, CodeUri: src, Timeout: 3}\n");
    });
    CHECK(e.message() == "Fn: Runtime is required");

    e = error_of([&] {
        app.sam(std::string(minimal) +
                "  MyApi:\n    Type: AWS::Serverless::Api\n    Properties: {StageNme: v1}\n");
    });
    CHECK(contains(e.message(), "(found \"StageNme\": did you mean StageName?)"));
}

TEST_CASE("SAM misspelt event type: the warning suggests the emulated one", "[unit]") {
    temp_app app;
    const auto s = app.sam(with_props(R"(      Events:
        Typo:
          Type: Apii
          Properties: {Path: /x, Method: get}
        Queue:
          Type: SQS
          Properties: {Queue: arn:aws:sqs:us-east-1:123456789012:q}
)"));
    CHECK(s.routes.empty());
    CHECK(any_contains(s.warnings,
                       "event type Apii is not emulated; event ignored (did you mean Api?)"));
    // A known type is listed as not emulated, without a suggestion.
    CHECK_FALSE(any_contains(s.warnings, "event type SQS"));
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "SQS event Queue of HelloFunction");
}
