#include "tools/fuzz/http_bytes.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace coldbrew::fuzz {

namespace bhttp = boost::beast::http;

std::optional<http::request> parse_request(std::string_view bytes, std::size_t* used) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.body_limit(10 * 1024 * 1024);
    parser.header_limit(64 * 1024);
    boost::beast::error_code ec;
    std::size_t taken = 0;
    // As the server does: put() until done, feeding what the parser did not use.
    for (;;) {
        std::size_t n = parser.put(boost::asio::buffer(bytes.data() + taken, bytes.size() - taken), ec);
        taken += n;
        if (parser.is_done()) break;
        if (ec == bhttp::error::need_more) {
            if (n == 0 || taken == bytes.size()) {
                // Nothing more will come: what the input holds is all there is.
                if (!parser.got_some()) return std::nullopt;
                parser.put_eof(ec);
                if (ec || !parser.is_done()) return std::nullopt;
                break;
            }
            continue;
        }
        if (ec || n == 0) return std::nullopt;
    }
    auto msg = parser.release();
    http::request req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    req.version = static_cast<int>(msg.version());
    for (const auto& field : msg)
        req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    req.body = std::move(msg.body());
    if (used) *used = taken;
    return req;
}

}  // namespace coldbrew::fuzz
