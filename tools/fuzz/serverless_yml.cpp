// serverless.yml: the input as serverless.yml → load_stack (variables, stages, events,
// plugins' settings). A file may be refused only with a config_error.

#include "emulator/config/config_error.hpp"
#include "emulator/config/stack.hpp"
#include "tools/fuzz/http_bytes.hpp"
#include "tools/fuzz/temp_app.hpp"

using namespace coldbrew;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fuzz::temp_app app;
    app.write("serverless.yml", fuzz::as_text(data, size));
    config::load_options options;
    options.env = {{"STAGE_NAME", "dev"}, {"TABLE", "orders"}};
    try {
        auto s = config::load_stack(app.dir() / "serverless.yml", options);
        (void)s;
    } catch (const config::config_error&) {
    }
    return 0;
}
