// coldbrew.yaml beside a fixed SAM template (two functions, REST and HTTP routes, a
// dependency-ready environment): load_stack applies it, then its fault rules are parsed
// against the built-in fault kinds as `coldbrew up` does. Refusals are config_errors only.

#include "emulator/config/config_error.hpp"
#include "emulator/config/fault_rules.hpp"
#include "emulator/config/stack.hpp"
#include "models/faults/faults.hpp"
#include "tools/fuzz/http_bytes.hpp"
#include "tools/fuzz/temp_app.hpp"

#include <cstdio>
#include <cstdlib>

using namespace coldbrew;

namespace {

constexpr std::string_view template_yaml = R"(AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Pay:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: pay-fn
      Runtime: nodejs20.x
      CodeUri: src/
      Handler: app.handler
      Environment:
        Variables:
          TABLE: orders
      Events:
        Post:
          Type: Api
          Properties: {Path: /pay, Method: post, Auth: {ApiKeyRequired: true}}
        Get:
          Type: HttpApi
          Properties: {Path: "/status/{id}", Method: get}
  Report:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      CodeUri: src/
      Handler: app.handler
      Events:
        Jwt:
          Type: HttpApi
          Properties:
            ApiId: !Ref Api
            Path: /report
            Method: get
            Auth: {Authorizer: cognito}
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      Auth:
        Authorizers:
          cognito:
            IdentitySource: $request.header.Authorization
            JwtConfiguration: {issuer: "https://issuer.example.com", audience: [app]}
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fuzz::temp_app app;
    static const bool ready = [] {
        // The template must load on its own, or every input would stop at it.
        app.write("template.yaml", template_yaml);
        app.write("coldbrew.yaml", "");
        try {
            (void)config::load_stack(app.dir(), {});
        } catch (const config::config_error& e) {
            std::fprintf(stderr, "fuzz_coldbrew_yaml: the fixed template does not load: %s\n", e.what());
            std::abort();
        }
        return true;
    }();
    (void)ready;
    static const models::faults::fault_registry registry = [] {
        models::faults::fault_registry r;
        models::faults::register_builtin_faults(r);
        return r;
    }();
    app.write("coldbrew.yaml", fuzz::as_text(data, size));
    try {
        auto s = config::load_stack(app.dir(), {});
        auto rules = config::startup_fault_rules(s, registry);
        for (const auto& r : rules) (void)config::rule_warnings(s, r);
    } catch (const config::config_error&) {
    }
    return 0;
}
