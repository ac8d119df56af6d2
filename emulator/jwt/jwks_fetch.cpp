// The one place coldbrew_jwt speaks HTTP: a synchronous Beast GET with a deadline, used once
// per JWT authorizer at start (load_keys), never while serving requests.

#include "emulator/jwt/jwks_fetch.hpp"

#include <optional>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/version.hpp>
#include <openssl/ssl.h>

namespace coldbrew::jwt::detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

struct url_parts {
    bool tls = false;
    std::string host;
    std::string port;
    std::string target;
};

url_parts split_url(const std::string& url) {
    url_parts u;
    std::string rest;
    if (url.rfind("https://", 0) == 0) {
        u.tls = true;
        rest = url.substr(8);
    } else if (url.rfind("http://", 0) == 0) {
        rest = url.substr(7);
    } else {
        throw std::runtime_error("not an http:// or https:// URL");
    }
    auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    u.target = slash == std::string::npos ? "/" : rest.substr(slash);
    if (auto hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
    if (authority.empty()) throw std::runtime_error("the URL has no host");
    if (authority.front() == '[') {  // [v6]:port
        auto close = authority.find(']');
        if (close == std::string::npos) throw std::runtime_error("the URL's host is malformed");
        u.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':')
            u.port = authority.substr(close + 2);
    } else if (auto colon = authority.rfind(':'); colon != std::string::npos) {
        u.host = authority.substr(0, colon);
        u.port = authority.substr(colon + 1);
    } else {
        u.host = authority;
    }
    if (u.port.empty()) u.port = u.tls ? "443" : "80";
    return u;
}

template <class Stream>
std::string exchange(Stream& stream, const url_parts& u) {
    bhttp::request<bhttp::empty_body> req{bhttp::verb::get, u.target, 11};
    req.set(bhttp::field::host, u.host);
    req.set(bhttp::field::user_agent, "coldbrew");
    req.set(bhttp::field::accept, "application/json");
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response<bhttp::string_body> res;
    bhttp::read(stream, buffer, res);
    if (res.result_int() != 200)
        throw std::runtime_error("answered HTTP " + std::to_string(res.result_int()));
    return std::move(res.body());
}

}  // namespace

std::string http_get(const std::string& url, std::chrono::milliseconds timeout) {
    const url_parts u = split_url(url);
    asio::io_context ioc;
    asio::ip::tcp::resolver resolver{ioc};
    beast::error_code ec;
    auto endpoints = resolver.resolve(u.host, u.port, ec);
    if (ec) throw std::runtime_error("cannot resolve " + u.host + ": " + ec.message());

    // Every step runs under one deadline: tcp_stream's timer covers connect, write and read
    // (the TLS handshake included, since it reads and writes through that stream).
    try {
        if (!u.tls) {
            beast::tcp_stream stream{ioc};
            stream.expires_after(timeout);
            stream.connect(endpoints);
            std::string body = exchange(stream, u);
            stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
            return body;
        }
        asio::ssl::context ctx{asio::ssl::context::tls_client};
        ctx.set_default_verify_paths();
        ctx.set_verify_mode(asio::ssl::verify_peer);
        beast::ssl_stream<beast::tcp_stream> stream{ioc, ctx};
        if (!SSL_set_tlsext_host_name(stream.native_handle(), u.host.c_str()))
            throw std::runtime_error("cannot set the TLS server name");
        stream.set_verify_callback(asio::ssl::host_name_verification(u.host));
        beast::get_lowest_layer(stream).expires_after(timeout);
        beast::get_lowest_layer(stream).connect(endpoints);
        stream.handshake(asio::ssl::stream_base::client);
        std::string body = exchange(stream, u);
        stream.shutdown(ec);  // servers often close without close_notify: not an error here
        return body;
    } catch (const beast::system_error& e) {
        if (e.code() == beast::error::timeout)
            throw std::runtime_error("no answer within " + std::to_string(timeout.count()) +
                                     " ms");
        throw std::runtime_error(e.code().message());
    }
}

}  // namespace coldbrew::jwt::detail
