// Boost's assertion handler (emulator/http/beast_assert.cpp): the one assertion of Boost
// 1.74's Beast known to be wrong returns; a crashing input for it is replayed by the fuzz
// smoke run (tools/fuzz/seeds/runtime_api/last-chunk-extension), where assertions are on.

#include "tests/catch.hpp"

namespace boost {
void assertion_failed(char const* expr, char const* function, char const* file, long line);
}

TEST_CASE("beast assertions: parse_chunk_header's `n >= 5` returns instead of aborting", "[unit]") {
    // Were the exemption gone, this would abort the test run.
    boost::assertion_failed("n >= 5", "parse_chunk_header",
                            "/usr/include/boost/beast/http/impl/basic_parser.ipp", 688);
    SUCCEED("returned");
}
