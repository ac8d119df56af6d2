// Boost's assertion handler for the translation units that compile Beast (server.cpp, the
// JWKS fetch, the fuzz harnesses' parser), which define BOOST_ENABLE_ASSERT_DEBUG_HANDLER: in
// builds without NDEBUG, Boost's assertions come here instead of to assert().
//
// One assertion is known to be wrong: Boost 1.74's Beast (Debian 12) asserts `n >= 5` in
// basic_parser::parse_chunk_header when a last chunk's line arrives again after the parser
// asked for more (e.g. "0;\r\n" before the trailer's CRLF): 4 bytes is a valid state there,
// and the code that follows answers need_more correctly. Beast fixed the assertion in 2024
// (boostorg/beast pull request 2861). A debug build would otherwise abort on such a request
// from any client. Every other failed assertion aborts, as assert() does.

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace boost {

void assertion_failed(char const* expr, char const* function, char const* file, long line) {
    if (std::string_view(expr) == "n >= 5" &&
        std::string_view(file).ends_with("beast/http/impl/basic_parser.ipp"))
        return;
    std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
    std::abort();
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
    std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
    std::abort();
}

}  // namespace boost
