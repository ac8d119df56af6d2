// Layers importable as on Lambda (directories and a .zip), and an --env-vars file, with real
// node and python handlers.

#include <nlohmann/json.hpp>

#include "tests/catch.hpp"
#include "tests/fakes/zip_writer.hpp"
#include "tests/integration/harness.hpp"

using namespace coldbrew::testing;
using json = nlohmann::json;

namespace {

// Two layers, in this order on both functions: Shared holds `greet` and a `which` module;
// Later holds another `which` in the runtime-versioned directories. On Lambda the later
// layer's files replace the earlier's in /opt, so `which` must come from Later.
void write_app(temp_dir& dir) {
    dir.write("template.yaml",
              "AWSTemplateFormatVersion: '2010-09-09'\n"
              "Transform: AWS::Serverless-2016-10-31\n"
              "Globals:\n"
              "  Function:\n"
              "    Layers: [!Ref Shared, !Ref Later, !Ref Zipped]\n"
              "    Environment:\n"
              "      Variables: {GREETING: from-template, STAGE: from-template}\n"
              "Resources:\n"
              "  Shared:\n"
              "    Type: AWS::Serverless::LayerVersion\n"
              "    Properties: {ContentUri: layers/shared}\n"
              "  Later:\n"
              "    Type: AWS::Serverless::LayerVersion\n"
              "    Properties: {ContentUri: layers/later}\n"
              "  Zipped:\n"
              "    Type: AWS::Serverless::LayerVersion\n"
              "    Properties: {ContentUri: zipped.zip}\n"
              "  NodeFn:\n"
              "    Type: AWS::Serverless::Function\n"
              "    Properties:\n"
              "      Runtime: nodejs20.x\n"
              "      Handler: index.handler\n"
              "      CodeUri: node\n"
              "      Events:\n"
              "        Get: {Type: HttpApi, Properties: {Path: /node, Method: get}}\n"
              "  PyFn:\n"
              "    Type: AWS::Serverless::Function\n"
              "    Properties:\n"
              "      Runtime: python3.11\n"
              "      Handler: app.handler\n"
              "      CodeUri: py\n"
              "      Events:\n"
              "        Get: {Type: HttpApi, Properties: {Path: /py, Method: get}}\n");
    dir.write("layers/shared/nodejs/node_modules/greet/index.js",
              "exports.greet = (n) => 'hello ' + n;\n");
    dir.write("layers/shared/nodejs/node_modules/which/index.js", "module.exports = 'shared';\n");
    dir.write("layers/shared/python/greet.py", "def greet(n):\n    return 'hello ' + n\n");
    dir.write("layers/shared/python/which.py", "WHO = 'shared'\n");
    dir.write("layers/later/nodejs/node20/node_modules/which/index.js", "module.exports = 'later';\n");
    dir.write("layers/later/python/lib/python3.11/site-packages/which.py", "WHO = 'later'\n");
    coldbrew::test::write_zip(dir.path() / "zipped.zip",
                              {{"nodejs/node_modules/zipped/index.js", "module.exports = 'from zip';\n"},
                               {"python/zipped.py", "WHAT = 'from zip'\n"}});
    dir.write("node/index.js",
              "const {greet} = require('greet');\n"
              "const which = require('which');\n"
              "const zipped = require('zipped');\n"
              "exports.handler = async () => ({statusCode: 200, body: JSON.stringify({\n"
              "  greet: greet('node'), which, zipped, greeting: process.env.GREETING,\n"
              "  stage: process.env.STAGE, extra: process.env.NOT_DECLARED || null})});\n");
    dir.write("py/app.py",
              "import json, os\n"
              "from greet import greet\n"
              "import which, zipped\n"
              "def handler(event, context):\n"
              "    return {'statusCode': 200, 'body': json.dumps({'greet': greet('python'),\n"
              "        'which': which.WHO, 'zipped': zipped.WHAT, 'greeting': os.environ.get('GREETING'),\n"
              "        'stage': os.environ.get('STAGE')})}\n");
    dir.write("env.json",
              "{\"Parameters\": {\"STAGE\": \"from-parameters\", \"NOT_DECLARED\": \"x\"},\n"
              " \"NodeFn\": {\"GREETING\": \"from-file\"}}\n");
}

json get(int port, const std::string& path) {
    auto r = http_request(port, "GET", path);
    INFO(path << ": " << r.status << " " << r.body);
    REQUIRE(r.status == 200);
    return json::parse(r.body);
}

}  // namespace

TEST_CASE("layers: node and python import from local layers, the later layer first; --env-vars "
          "overrides template variables",
          "[integration]") {
    temp_dir dir;
    write_app(dir);
    coldbrew_process up({"up", dir.path().string(), "--port", "0", "--seed", "1", "--env-vars",
                         (dir.path() / "env.json").string()});
    const int port = up.wait_for_port();

    const auto node = get(port, "/node");
    CHECK(node["greet"] == "hello node");
    CHECK(node["which"] == "later");
    CHECK(node["zipped"] == "from zip");
    CHECK(node["greeting"] == "from-file");
    CHECK(node["stage"] == "from-parameters");
    CHECK(node["extra"].is_null());  // not declared in the template: sam local ignores it

    const auto py = get(port, "/py");
    CHECK(py["greet"] == "hello python");
    CHECK(py["which"] == "later");
    CHECK(py["zipped"] == "from zip");
    CHECK(py["greeting"] == "from-template");
    CHECK(py["stage"] == "from-parameters");

    bool warned = false;
    for (const auto& l : up.lines())
        if (l.find("NOT_DECLARED") != std::string::npos) warned = true;
    CHECK(warned);
}

TEST_CASE("env-vars file: malformed JSON stops validate with exit 2 at its line", "[integration]") {
    temp_dir dir;
    write_app(dir);
    dir.write("bad.json", "{\n  \"Parameters\": {\"STAGE\": }\n}\n");
    coldbrew_process v({"validate", dir.path().string(), "--env-vars",
                        (dir.path() / "bad.json").string()});
    REQUIRE(v.wait_exit() == 2);
    CHECK(v.stderr_text().find("bad.json:2:") != std::string::npos);
}
