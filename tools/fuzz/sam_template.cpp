// SAM / CloudFormation templates: the input as template.yaml → load_stack. A template may be
// refused only with a config_error (file, line, key); anything else escaping is a bug.

#include "emulator/config/config_error.hpp"
#include "emulator/config/stack.hpp"
#include "tools/fuzz/http_bytes.hpp"
#include "tools/fuzz/temp_app.hpp"

using namespace coldbrew;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fuzz::temp_app app;
    app.write("template.yaml", fuzz::as_text(data, size));
    try {
        auto s = config::load_stack(app.dir(), {});
        (void)s;
    } catch (const config::config_error&) {
    }
    return 0;
}
