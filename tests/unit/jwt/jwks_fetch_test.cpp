// load_keys' URL paths against a loopback server that answers a fixed list of requests in
// order: the OpenID discovery document, then the JWKS it names. Nothing leaves the machine.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "emulator/config/config_error.hpp"
#include "emulator/jwt/jwt.hpp"
#include "tests/fakes/jwt_issuer.hpp"

namespace {

// Listens on 127.0.0.1:<ephemeral> and answers one connection per body, each with
// "200 OK" and that body; records each request's first line.
class loopback_server {
public:
    explicit loopback_server(std::vector<std::string> bodies) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        ::listen(fd_, 4);
        socklen_t len = sizeof addr;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this, bodies = std::move(bodies)] {
            for (const auto& body : bodies) {
                int c = ::accept(fd_, nullptr, nullptr);
                if (c < 0) return;
                std::string request;
                char buf[2048];
                while (request.find("\r\n\r\n") == std::string::npos) {
                    auto n = ::read(c, buf, sizeof buf);
                    if (n <= 0) break;
                    request.append(buf, static_cast<std::size_t>(n));
                }
                {
                    std::lock_guard lock(mutex_);
                    lines_.push_back(request.substr(0, request.find("\r\n")));
                }
                std::string res = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                  "Connection: close\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\n\r\n" + body;
                (void)::write(c, res.data(), res.size());
                ::close(c);
            }
        });
    }
    ~loopback_server() {
        ::shutdown(fd_, SHUT_RDWR);
        if (thread_.joinable()) thread_.join();
        ::close(fd_);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::vector<std::string> lines() const {
        std::lock_guard lock(mutex_);
        return lines_;
    }

private:
    int fd_ = -1;
    int port_ = 0;
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
    std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace

TEST_CASE("load_keys with an empty jwks follows the issuer's OpenID discovery", "[unit]") {
    const auto issuer = coldbrew::testing::jwt_issuer::rsa("disc-1");
    std::string base;
    {
        // The discovery document's jwks_uri is only known once the port is: a second server.
        loopback_server jwks_server({issuer.jwks()});
        loopback_server discovery({R"({"issuer":"x","jwks_uri":")" + jwks_server.url() +
                                   R"(/keys.json"})"});
        coldbrew::config::authorizer a;
        a.name = "Oidc";
        a.issuer = discovery.url() + "/pool/";
        auto set = coldbrew::jwt::load_keys(a, "/tmp/template.yaml");
        CHECK(set.kids() == std::vector<std::string>{"disc-1"});
        CHECK(discovery.lines() ==
              std::vector<std::string>{"GET /pool/.well-known/openid-configuration HTTP/1.1"});
        CHECK(jwks_server.lines() == std::vector<std::string>{"GET /keys.json HTTP/1.1"});
    }
}

TEST_CASE("load_keys reads a JWKS URL and reports one that is not a JWKS", "[unit]") {
    const auto issuer = coldbrew::testing::jwt_issuer::rsa("url-1");
    coldbrew::config::authorizer a;
    a.name = "Url";
    a.where = {"template.yaml", 4, 5};
    SECTION("good") {
        loopback_server server({issuer.jwks()});
        a.jwks = server.url() + "/jwks";
        CHECK(coldbrew::jwt::load_keys(a, "/tmp/template.yaml").size() == 1);
    }
    SECTION("not a JWKS") {
        loopback_server server({"<html>"});
        a.jwks = server.url() + "/jwks";
        CHECK_THROWS_AS(coldbrew::jwt::load_keys(a, "/tmp/template.yaml"),
                        coldbrew::config::config_error);
    }
    SECTION("nothing listening: refused at once, not after the timeout") {
        int port;
        {
            loopback_server closed({});
            port = std::stoi(closed.url().substr(closed.url().rfind(':') + 1));
        }
        a.jwks = "http://127.0.0.1:" + std::to_string(port) + "/jwks";
        CHECK_THROWS_WITH(coldbrew::jwt::load_keys(a, "/tmp/template.yaml"),
                          Catch::Contains("127.0.0.1"));
    }
}
