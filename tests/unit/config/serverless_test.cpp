// serverless.yml loading: one TEST_CASE per Serverless Framework rule (spec §5.2).

#include "tests/catch.hpp"
#include "tests/unit/config/temp_app.hpp"

using namespace coldbrew;
using coldbrew::test::any_contains;
using coldbrew::test::contains;
using coldbrew::test::error_of;
using coldbrew::test::temp_app;

TEST_CASE("serverless defaults: 1024 MB, 6 s, service dir, ${service}-${stage}-${key}", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
)");
    REQUIRE(s.kind == config::stack::source_kind::serverless);
    REQUIRE(s.functions.size() == 1);
    const auto& fn = s.functions[0];
    CHECK(fn.name == "hello");
    CHECK(fn.function_name == "shop-dev-hello");
    CHECK(fn.memory_mb == 1024);
    CHECK(fn.timeout_s == 6);
    CHECK(fn.runtime == "nodejs20.x");
    CHECK(fn.handler == "handler.hello");
    CHECK(fn.code_dir == app.dir());
    CHECK(fn.architecture == "x86_64");
    CHECK(fn.max_environments == 100);
    CHECK(s.settings.region == "us-east-1");
}

TEST_CASE("serverless provider values apply, function values win", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: {name: shop}
provider:
  name: aws
  runtime: python3.12
  memorySize: 512
  timeout: 20
  architecture: arm64
  region: eu-west-1
  vpc:
    securityGroupIds: [sg-1]
    subnetIds: [subnet-1]
functions:
  a:
    handler: a.handler
  b:
    handler: b.handler
    runtime: nodejs22.x
    memorySize: 2048
    timeout: 1
    name: custom-b
    reservedConcurrency: 3
    provisionedConcurrency: 1
    vpc: {subnetIds: []}
)");
    const auto* a = s.find_function("a");
    const auto* b = s.find_function("b");
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->function_name == "shop-dev-a");
    CHECK(a->runtime == "python3.12");
    CHECK(a->memory_mb == 512);
    CHECK(a->timeout_s == 20);
    CHECK(a->architecture == "arm64");
    CHECK(a->vpc);
    CHECK(a->vpc_mode == "hyperplane");
    CHECK(b->runtime == "nodejs22.x");
    CHECK(b->memory_mb == 2048);
    CHECK(b->timeout_s == 1);
    CHECK(b->function_name == "custom-b");
    CHECK(b->reserved_concurrency == 3);
    CHECK(b->provisioned_concurrency == 1);
    CHECK_FALSE(b->vpc);
    CHECK(b->vpc_mode == "none");
    CHECK(s.settings.region == "eu-west-1");
}

TEST_CASE("serverless provisionedConcurrency above reservedConcurrency is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless(R"(service: shop
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello:
    handler: h.hello
    reservedConcurrency: 2
    provisionedConcurrency: 5
)");
    });
    CHECK(e.where().file == (app.dir() / "serverless.yml").string());
    CHECK(e.where().line == 7);
    CHECK(e.where().column == 29);
    CHECK(e.key_path() == "functions.hello.provisionedConcurrency");
    CHECK(e.message() == "hello: provisioned concurrency 5 cannot exceed reserved concurrency 2 "
                         "(set by functions.hello.reservedConcurrency); AWS rejects it at deploy");
}

TEST_CASE("serverless concurrency and architecture values are checked", "[unit]") {
    temp_app app;
    const std::string head = "service: shop\nprovider: {name: aws, runtime: nodejs20.x}\n"
                             "functions:\n  hello:\n    handler: h.hello\n";
    auto e = error_of([&] { app.serverless(head + "    reservedConcurrency: -1\n"); });
    CHECK(e.key_path() == "functions.hello.reservedConcurrency");
    CHECK(e.where().line == 6);
    CHECK(e.where().column == 26);
    e = error_of([&] { app.serverless(head + "    provisionedConcurrency: many\n"); });
    CHECK(e.key_path() == "functions.hello.provisionedConcurrency");
    e = error_of([&] { app.serverless(head + "    architecture: arm\n"); });
    CHECK(e.key_path() == "functions.hello.architecture");
    CHECK(contains(e.message(), "architecture must be x86_64 or arm64, got 'arm'"));
    // A serverless vpc without subnets is no VPC.
    const auto s = app.serverless(head + "    vpc: {securityGroupIds: [sg-1]}\n");
    CHECK_FALSE(s.functions.at(0).vpc);
    CHECK(s.functions.at(0).vpc_mode == "none");
}

TEST_CASE("serverless provider and function environments are merged", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  environment:
    SHARED: provider
    OVERRIDDEN: provider
functions:
  hello:
    handler: handler.hello
    environment:
      OVERRIDDEN: function
      OWN: 42
)");
    CHECK(s.functions.at(0).environment ==
          std::map<std::string, std::string>{
              {"SHARED", "provider"}, {"OVERRIDDEN", "function"}, {"OWN", "42"}});
}

TEST_CASE("serverless http events: string and map forms, relative paths", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  apiGateway:
    binaryMediaTypes: ['image/png']
functions:
  hello:
    handler: handler.hello
    events:
      - http: 'GET hello'
      - http: 'ANY {proxy+}'
      - http:
          method: post
          path: /users/{id}/
      - http: {method: get, path: ''}
      - schedule: rate(1 minute)
)");
    REQUIRE(s.apis.size() == 1);
    CHECK(s.apis[0].id == "ApiGatewayRestApi");
    CHECK(s.apis[0].kind == config::api_kind::rest);
    CHECK(s.apis[0].stage == "dev");
    CHECK(s.apis[0].binary_media_types == std::vector<std::string>{"image/png"});
    REQUIRE(s.routes.size() == 4);
    CHECK(s.routes[0].method == "GET");
    CHECK(s.routes[0].path == "/hello");
    CHECK(s.routes[0].payload_format_version == "1.0");
    CHECK(s.routes[0].integration_timeout_ms == 29000);
    CHECK(s.routes[0].api_id == "ApiGatewayRestApi");
    CHECK(s.routes[1].method == "ANY");
    CHECK(s.routes[1].path == "/{proxy+}");
    CHECK(s.routes[2].method == "POST");
    CHECK(s.routes[2].path == "/users/{id}");
    CHECK(s.routes[3].path == "/");
    // A schedule event is a schedule now, not a not-emulated event.
    CHECK(s.ignored.empty());
    REQUIRE(s.schedules.size() == 1);
    CHECK(s.schedules[0].function == "hello");
    CHECK_FALSE(any_contains(s.warnings, "event type schedule"));
}

TEST_CASE("serverless httpApi events: '*', 'GET /x', '* /y', map form", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
    events:
      - httpApi: '*'
      - httpApi: 'GET /x'
      - httpApi: '* /y'
      - httpApi:
          method: put
          path: /z/{id}
)");
    REQUIRE(s.apis.size() == 1);
    CHECK(s.apis[0].id == "HttpApi");
    CHECK(s.apis[0].kind == config::api_kind::http);
    CHECK(s.apis[0].stage == "$default");
    REQUIRE(s.routes.size() == 4);
    CHECK(s.routes[0].path == "$default");
    CHECK(s.routes[0].method == "ANY");
    CHECK(s.routes[0].payload_format_version == "2.0");
    CHECK(s.routes[0].integration_timeout_ms == 30000);
    CHECK(s.routes[1].method == "GET");
    CHECK(s.routes[1].path == "/x");
    CHECK(s.routes[2].method == "ANY");
    CHECK(s.routes[2].path == "/y");
    CHECK(s.routes[3].method == "PUT");
    CHECK(s.routes[3].path == "/z/{id}");
}

TEST_CASE("serverless provider.httpApi.payload sets the payload format version", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  httpApi: {payload: '1.0'}
functions:
  hello:
    handler: handler.hello
    events: [{httpApi: 'GET /x'}]
)");
    CHECK(s.routes.at(0).payload_format_version == "1.0");
}

TEST_CASE("serverless httpApi path must be absolute", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n"
                       "  f:\n    handler: h.h\n    events:\n      - httpApi: 'GET x'\n");
    });
    CHECK(contains(e.message(), "must start with '/'"));
    CHECK(e.key_path() == "functions.f.events[0].httpApi");
}

TEST_CASE("serverless ${opt:stage, 'dev'}: option given or fallback", "[unit]") {
    temp_app app;
    const std::string yaml = R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
  stage: ${opt:stage, 'dev'}
  environment:
    STAGE: ${opt:stage, "dev"}
    SLS_STAGE: ${sls:stage}
functions:
  hello:
    handler: handler.hello
    events: [{http: 'GET hello'}]
)";
    const auto dev = app.serverless(yaml);
    CHECK(dev.functions.at(0).function_name == "shop-dev-hello");
    CHECK(dev.functions.at(0).environment.at("STAGE") == "dev");
    CHECK(dev.apis.at(0).stage == "dev");

    config::load_options options;
    options.stage = "prod";
    const auto prod = app.serverless(yaml, options);
    CHECK(prod.functions.at(0).function_name == "shop-prod-hello");
    CHECK(prod.functions.at(0).environment.at("STAGE") == "prod");
    CHECK(prod.functions.at(0).environment.at("SLS_STAGE") == "prod");
    CHECK(prod.apis.at(0).stage == "prod");
}

TEST_CASE("serverless stage defaults to provider.stage, then dev", "[unit]") {
    temp_app app;
    const auto s = app.serverless("service: shop\nprovider: {name: aws, runtime: nodejs20.x, "
                                  "stage: qa}\nfunctions:\n  f: {handler: h.h}\n");
    CHECK(s.functions.at(0).function_name == "shop-qa-f");
}

TEST_CASE("serverless ${self:...}: embedded, whole value keeps its type, nested", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
custom:
  memory: 256
  tableName: ${self:service}-table
  stages:
    dev: {url: http://dev.local}
  sharedEnv:
    FROM_CUSTOM: yes
provider:
  name: aws
  runtime: nodejs20.x
  environment: ${self:custom.sharedEnv}
functions:
  hello:
    handler: handler.hello
    memorySize: ${self:custom.memory}
    environment:
      TABLE: ${self:custom.tableName}
      URL: ${self:custom.stages.${opt:stage, 'dev'}.url}
      SERVICE_FN: ${self:service}-${self:functions.hello.handler}
)");
    const auto& fn = s.functions.at(0);
    CHECK(fn.memory_mb == 256);
    CHECK(fn.environment.at("TABLE") == "shop-table");
    CHECK(fn.environment.at("URL") == "http://dev.local");
    CHECK(fn.environment.at("SERVICE_FN") == "shop-handler.hello");
    CHECK(fn.environment.at("FROM_CUSTOM") == "yes");
}

TEST_CASE("serverless ${env:NAME} reads load_options.env, with fallbacks", "[unit]") {
    temp_app app;
    const std::string yaml = R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
    environment:
      KEY: ${env:API_KEY}
      LEVEL: ${env:LOG_LEVEL, ${self:custom.level}}
      OLD_STYLE: ${env:NOPE, self:custom.level}
custom:
  level: info
)";
    config::load_options options;
    options.env = {{"API_KEY", "secret"}};
    const auto s = app.serverless(yaml, options);
    CHECK(s.functions.at(0).environment.at("KEY") == "secret");
    CHECK(s.functions.at(0).environment.at("LEVEL") == "info");
    CHECK(s.functions.at(0).environment.at("OLD_STYLE") == "info");
    options.env["LOG_LEVEL"] = "debug";
    CHECK(app.serverless(yaml, options).functions.at(0).environment.at("LEVEL") == "debug");
}

TEST_CASE("serverless unresolvable variable is an error with position and key", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
    environment:
      KEY: ${env:API_KEY}
)");
    });
    CHECK(e.key_path() == "functions.hello.environment.KEY");
    CHECK(e.where().line == 9);
    CHECK(e.where().column == 12);
    CHECK(contains(e.message(), "API_KEY"));
}

TEST_CASE("serverless missing self reference is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n"
                       "  f:\n    handler: h.h\n    timeout: ${self:custom.nope}\n");
    });
    CHECK(e.key_path() == "functions.f.timeout");
    CHECK(contains(e.message(), "self:custom.nope does not exist"));
}

TEST_CASE("serverless self-referencing variable is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\ncustom:\n  a: ${self:custom.b}\n  b: ${self:custom.a}\n"
                       "provider: {name: aws, runtime: nodejs20.x}\nfunctions:\n  f:\n    handler: "
                       "${self:custom.a}\n");
    });
    CHECK(contains(e.message(), "refers to itself"));
}

TEST_CASE("serverless ${file(...)}, ${param:...}, ${aws:region}", "[unit]") {
    temp_app app;
    app.write("config/dev.yml", "timeout: 12\nnested:\n  name: ${self:service}-from-file\n");
    const auto s = app.serverless(R"(service: shop
params:
  default: {color: blue}
  dev: {size: small}
provider:
  name: aws
  runtime: nodejs20.x
  region: ap-south-1
functions:
  hello:
    handler: handler.hello
    timeout: ${file(./config/${sls:stage}.yml):timeout}
    environment:
      NAME: ${file(config/dev.yml):nested.name}
      COLOR: ${param:color}
      SIZE: ${param:size}
      REGION: ${aws:region}
      CFN: arn:${AWS::Partition}:s3:::bucket
)");
    const auto& fn = s.functions.at(0);
    CHECK(fn.timeout_s == 12);
    CHECK(fn.environment.at("NAME") == "shop-from-file");
    CHECK(fn.environment.at("COLOR") == "blue");
    CHECK(fn.environment.at("SIZE") == "small");
    CHECK(fn.environment.at("REGION") == "ap-south-1");
    CHECK(fn.environment.at("CFN") == "arn:${AWS::Partition}:s3:::bucket");
}

TEST_CASE("serverless CloudFormation intrinsics in environment become \"\" with a warning",
          "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
    environment:
      TABLE: !Ref UsersTable
      ARN: {"Fn::GetAtt": [UsersTable, Arn]}
)");
    CHECK(s.functions.at(0).environment.at("TABLE").empty());
    CHECK(s.functions.at(0).environment.at("ARN").empty());
    CHECK(any_contains(s.warnings, "functions.hello.environment.TABLE"));
}

TEST_CASE("serverless local layers are used, remote ones ignored with a warning", "[unit]") {
    temp_app app;
    app.mkdir("layers/deps");
    const auto s = app.serverless(R"(service: shop
layers:
  shared-deps:
    path: layers/deps
provider:
  name: aws
  runtime: nodejs20.x
functions:
  hello:
    handler: handler.hello
    layers:
      - {Ref: SharedDashdepsLambdaLayer}
      - arn:aws:lambda:us-east-1:123456789012:layer:remote:1
)");
    CHECK(s.functions.at(0).layer_dirs ==
          std::vector<std::filesystem::path>{app.dir() / "layers/deps"});
    CHECK(any_contains(s.warnings, "functions.hello.layers[1]"));
}

TEST_CASE("serverless package.artifact is ignored with a warning", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
package:
  artifact: build/app.zip
provider: {name: aws, runtime: nodejs20.x}
functions:
  hello: {handler: handler.hello}
)");
    CHECK(any_contains(s.warnings, "package.artifact"));
    CHECK(s.functions.at(0).code_dir == app.dir());
}

TEST_CASE("serverless unsupported runtime and provider are errors", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: java17}\nfunctions:\n  f: "
                       "{handler: h.h}\n");
    });
    CHECK(e.message() ==
          "f: runtime java17 is not supported (supported: nodejs24.x, nodejs22.x, nodejs20.x, "
          "nodejs18.x, nodejs16.x, python3.14, python3.13, python3.12, python3.11, python3.10, "
          "python3.9, python3.8, provided.al2023, provided.al2)");
    CHECK(e.key_path() == "provider.runtime");
    e = error_of([&] {
        app.serverless("service: s\nprovider: {name: azure, runtime: nodejs20.x}\nfunctions:\n  f: "
                       "{handler: h.h}\n");
    });
    CHECK(e.key_path() == "provider.name");
}

TEST_CASE("serverless handler is required", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n  f:\n "
                       "   timeout: 3\n");
    });
    CHECK(contains(e.message(), "f: handler is required"));
    CHECK(e.key_path() == "functions.f");
}

TEST_CASE("serverless duplicate http route is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n"
                       "  a: {handler: a.h, events: [{http: 'GET x'}]}\n"
                       "  b: {handler: b.h, events: [{http: {method: get, path: /x}}]}\n");
    });
    CHECK(contains(e.message(), "already served by a"));
}

TEST_CASE("serverless file detected by content when not named serverless.yml", "[unit]") {
    temp_app app;
    const auto file =
        app.write("app.yml", "service: s\nprovider: {name: aws, runtime: nodejs20.x}\n"
                             "functions:\n  f: {handler: h.h}\n");
    const auto s = config::load_stack(file, {});
    CHECK(s.kind == config::stack::source_kind::serverless);
}

TEST_CASE("serverless YAML merge keys and unavailable sources with fallbacks", "[unit]") {
    temp_app app;
    const auto s = app.serverless(R"(service: shop
custom:
  defaults: &defaults
    memorySize: 512
    timeout: 9
provider:
  name: aws
  runtime: nodejs20.x
  iam:
    role: ${ssm:/not/read/because/unused}
functions:
  hello:
    <<: *defaults
    timeout: 10
    handler: handler.hello
    environment:
      SECRET: ${ssm:/app/secret, 'local-secret'}
)");
    const auto& fn = s.functions.at(0);
    CHECK(fn.memory_mb == 512);
    CHECK(fn.timeout_s == 10);
    CHECK(fn.environment.at("SECRET") == "local-secret");
}

TEST_CASE("serverless unavailable source without fallback is an error", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n"
                       "  f:\n    handler: h.h\n    environment: {S: '${ssm:/x}'}\n");
    });
    CHECK(contains(e.message(), "not available locally"));
    CHECK(e.key_path() == "functions.f.environment.S");
}

TEST_CASE("serverless nested YAML aliases are a config error, not an exhausted heap", "[unit]") {
    temp_app app;
    std::string yaml = "service: s\nprovider: {name: aws, runtime: nodejs20.x}\ncustom:\n"
                       "  a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
    for (int i = 1; i <= 6; ++i) {
        yaml += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int j = 0; j < 10; ++j)
            yaml += (j ? ",*a" : "*a") + std::to_string(i - 1);
        yaml += "]\n";
    }
    const auto e = error_of([&] { app.serverless(yaml); });
    CHECK(e.message() == "document expands to more than 1000000 nodes (YAML aliases?)");
    CHECK(e.key_path().rfind("custom.a", 0) == 0);
}

TEST_CASE("serverless sibling path variables with different names are an error", "[unit]") {
    temp_app app;
    auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n"
                       "  a: {handler: a.h, events: [{http: 'GET users/{id}'}]}\n"
                       "  b: {handler: b.h, events: [{http: 'DELETE users/{userId}'}]}\n");
    });
    CHECK(contains(e.message(), "{userId} and {id}"));
    CHECK(contains(e.message(), "route GET /users/{id} of a, " +
                                    (app.dir() / "serverless.yml").string() + ":4:31"));
    CHECK(e.where().line == 5);

    // The REST API and the HTTP API are different APIs.
    const auto s = app.serverless(
        "service: s\nprovider: {name: aws, runtime: nodejs20.x}\nfunctions:\n"
        "  a: {handler: a.h, events: [{http: 'GET users/{id}'}, {httpApi: 'GET /users/{key}'}]}\n");
    CHECK(s.routes.size() == 2);
}

TEST_CASE("serverless misspelt keys: the required-key error and event warning say so", "[unit]") {
    temp_app app;
    const auto e = error_of([&] {
        app.serverless("service: s\nprovider: {name: aws}\nfunctions:\n"
                       "  f:\n    runtme: nodejs20.x\n    handler: h.h\n");
    });
    CHECK(contains(e.message(), "f: runtime is required"));
    CHECK(contains(e.message(), "(found \"runtme\": did you mean runtime?)"));
    CHECK(e.key_path() == "functions.f.runtme");
    CHECK(e.where().line == 5);

    const auto s = app.serverless("service: s\nprovider: {name: aws, runtime: nodejs20.x}\n"
                                  "functions:\n  f:\n    handler: h.h\n"
                                  "    events: [{htpApi: 'GET /x'}, {sqs: arn}]\n");
    CHECK(any_contains(s.warnings, "event type htpApi is not emulated; event ignored (did you "
                                   "mean httpApi?)"));
    CHECK_FALSE(any_contains(s.warnings, "event type sqs"));
    REQUIRE(s.ignored.size() == 1);
    CHECK(s.ignored[0].what == "sqs event #1 of f");
}
