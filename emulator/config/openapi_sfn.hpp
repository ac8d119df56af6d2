#pragma once
// The Step Functions integrations of an API's OpenAPI DefinitionBody: the one part of an
// OpenAPI definition coldbrew reads, because an API Gateway that starts a state machine is
// almost always written this way (SAM's `Api` event on a state machine only starts
// asynchronous executions).
//
// Forms read (the API Gateway developer guide, "x-amazon-apigateway-integration object", and
// the HTTP API "Integration subtype reference" for AWS service integrations):
//  - REST: `type: aws` with `uri: arn:aws:apigateway:<region>:states:action/StartExecution`
//    or `…/StartSyncExecution`; the state machine is the `stateMachineArn` its
//    `requestTemplates` `application/json` template names (`${Machine}` in a `!Sub`, or the
//    machine's ARN written out).
//  - HTTP API: `integrationSubtype: StepFunctions-StartExecution` or
//    `StepFunctions-StartSyncExecution` with `requestParameters` {StateMachineArn, Input, Name};
//    StateMachineArn a `!Ref Machine`, `{"Ref": Machine}`, `!GetAtt Machine.Arn`, a `!Sub`
//    naming it, or its ARN.
// Every other integration of the definition stays unread (the loader warns once).

#include <string>
#include <vector>

#include "emulator/config/stack.hpp"
#include "emulator/config/yaml_tree.hpp"

namespace coldbrew::config::detail {

struct openapi_sfn_route {
    std::string method;  // upper case, or ANY (x-amazon-apigateway-any-method)
    std::string path;    // the OpenAPI path: "/pay", "/orders/{id}"
    std::string state_machine;  // state_machine::name (logical id)
    route::sfn_action action = route::sfn_action::start_execution;
    // REST: the application/json request template with the machine's reference replaced by
    // its ARN; HTTP API: requestParameters as a JSON object text (StateMachineArn an ARN).
    std::string request_template;
    source_location where;  // the integration object
};

struct openapi_sfn_read {
    std::vector<openapi_sfn_route> routes;
    std::size_t other_integrations = 0;  // operations whose integration is not Step Functions
};

// `body` is the DefinitionBody as written (tags kept, not resolved); `machines` the stack's
// state machines, already loaded. Throws config_error at the integration when a Step Functions
// integration names no state machine of the stack, or an action other than StartExecution and
// StartSyncExecution.
openapi_sfn_read read_openapi_sfn(const ynode& body, bool http_api,
                                  const std::vector<state_machine>& machines,
                                  const settings& s);

// arn:aws:states:<region>:<account>:stateMachine:<state_machine_name>
std::string state_machine_arn_of(const state_machine& m, const settings& s);

}  // namespace coldbrew::config::detail
