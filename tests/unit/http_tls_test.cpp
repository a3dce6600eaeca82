// The TLS side of common::http::Server (protocol versions, ciphers, limits over TLS, certificate reload) and the
// --tls-cert / --tls-key options of common::app::service_config.
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>

#include "common/app/service.hpp"
#include "common/cli/cli.hpp"
#include "tests/unit/http_support.hpp"

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using common::http::Client;
using common::http::ClientFailure;
using common::http::ClientRequest;
using common::http::Request;
using common::http::Response;
using common::http::TlsFiles;
using http_test::Certs;
using http_test::Loop;
using http_test::send;
using http_test::TestServer;

namespace {

asio::awaitable<Response> answer_ok(Request r) {
    Response res;
    res.content_type = "text/plain";
    res.body = "ok " + r.target;
    co_return res;
}

/// Shuts a socket down after 10 s unless destroyed first, so a blocking probe can never hang the test run.
class HangGuard {
public:
    explicit HangGuard(int fd)
        : thread_([this, fd] {
              std::unique_lock lock(mutex_);
              if (!cv_.wait_for(lock, std::chrono::seconds(10), [this] { return done_; })) ::shutdown(fd, SHUT_RDWR);
          }) {}
    ~HangGuard() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

tcp::endpoint local(std::uint16_t port) { return {asio::ip::make_address("127.0.0.1"), port}; }

/// A client context with the protocol range and ciphers given, verifying nothing (the server is under test).
ssl::context probe_context(int max_version, const char* ciphers) {
    ssl::context ctx(ssl::context::tls_client);
    SSL_CTX* c = ctx.native_handle();
    SSL_CTX_set_security_level(c, 0);  // let this client offer what a modern server must refuse
    SSL_CTX_set_min_proto_version(c, TLS1_VERSION);
    SSL_CTX_set_max_proto_version(c, max_version);
    SSL_CTX_set_cipher_list(c, ciphers);
    ctx.set_verify_mode(ssl::verify_none);
    return ctx;
}

/// A blocking TLS client for one connection.
struct Probe {
    Probe(std::uint16_t port, int max_version, const char* ciphers = "DEFAULT:@SECLEVEL=0")
        : ctx(probe_context(max_version, ciphers)), stream(ioc, ctx) {
        stream.next_layer().connect(local(port));
        guard.emplace(stream.next_layer().native_handle());
    }
    /// The handshake's error text, empty on success.
    std::string handshake() {
        boost::system::error_code ec;
        stream.handshake(ssl::stream_base::client, ec);
        return ec ? ec.message() : "";
    }
    std::string version() { return SSL_get_version(stream.native_handle()); }
    std::string cipher() { return SSL_get_cipher_name(stream.native_handle()); }
    /// Writes `text`, then reads until the server closes.
    std::string exchange(const std::string& text) {
        boost::system::error_code ec;
        asio::write(stream, asio::buffer(text), ec);
        std::string out;
        asio::read(stream, asio::dynamic_buffer(out), ec);
        return out;
    }

    asio::io_context ioc;
    ssl::context ctx;
    ssl::stream<tcp::socket> stream;
    std::optional<HangGuard> guard;
};

common::config::EnvLookup tls_env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

common::app::ServiceConfig config(std::vector<std::string> args, std::map<std::string, std::string> env) {
    env["ORDERPOS_DATABASE_URL"] = "postgresql://x@127.0.0.1/db";
    auto spec = common::app::service_options("ORDERPOS", "127.0.0.1:9090");
    auto parsed = common::config::parse_args(args, spec, tls_env(env));
    if (auto* e = std::get_if<std::string>(&parsed)) FAIL("unexpected usage error: " << *e);
    return common::app::service_config(std::get<common::config::ParsedArgs>(parsed), "ORDERPOS");
}

}  // namespace

TEST_CASE("tls server: TLS 1.2 and 1.3 only, strong ciphers only", "[http]") {
    const auto& certs = Certs::get();
    Loop loop;
    TestServer srv(loop, answer_ok, {}, certs.server());
    REQUIRE(srv.server.tls());

    SECTION("a TLS 1.1 client is refused by the server") {
        Probe p(srv.server.port(), TLS1_1_VERSION);
        CHECK_THAT(p.handshake(), Catch::Contains("protocol version"));
    }
    SECTION("a TLS 1.0 client is refused by the server") {
        Probe p(srv.server.port(), TLS1_VERSION);
        CHECK_THAT(p.handshake(), Catch::Contains("protocol version"));
    }
    SECTION("TLS 1.2 with a forward-secret AEAD suite") {
        Probe p(srv.server.port(), TLS1_2_VERSION);
        REQUIRE(p.handshake().empty());
        CHECK(p.version() == "TLSv1.2");
        CHECK_THAT(p.cipher(), Catch::StartsWith("ECDHE-") && Catch::Contains("GCM"));
        auto answer = p.exchange("GET /v12 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200") && Catch::EndsWith("ok /v12"));
    }
    SECTION("TLS 1.3") {
        Probe p(srv.server.port(), TLS1_3_VERSION);
        REQUIRE(p.handshake().empty());
        CHECK(p.version() == "TLSv1.3");
    }
    SECTION("a TLS 1.2 client offering only a static-RSA CBC suite is refused") {
        Probe p(srv.server.port(), TLS1_2_VERSION, "AES128-SHA:@SECLEVEL=0");
        CHECK_FALSE(p.handshake().empty());
    }
}

TEST_CASE("tls server: the limits answer over TLS as over plain HTTP", "[http]") {
    const auto& certs = Certs::get();
    Loop loop;
    common::http::Limits limits;
    limits.max_body = 1024;
    limits.max_header = 2048;
    limits.request_timeout = std::chrono::milliseconds(300);
    TestServer srv(loop, answer_ok, limits, certs.server());
    Client client(loop.ioc.get_executor());

    SECTION("413 for a body over the limit") {
        ClientRequest r;
        r.url = srv.url("/big", true);
        r.ca_file = certs.ca();
        r.body = std::string(4096, 'x');
        auto res = send(loop, client, r);
        REQUIRE(res.response);
        CHECK(res.response->status == 413);
        CHECK_THAT(res.response->body, Catch::Contains("body_too_large"));
        // The listener keeps serving.
        r.body = "small";
        auto after = send(loop, client, r);
        REQUIRE(after.response);
        CHECK(after.response->status == 200);
    }
    SECTION("431 for headers over the limit") {
        ClientRequest r;
        r.url = srv.url("/hdr", true);
        r.ca_file = certs.ca();
        r.headers = {{"X-Big", std::string(4000, 'h')}};
        auto res = send(loop, client, r);
        REQUIRE(res.response);
        CHECK(res.response->status == 431);
    }
    SECTION("408 for a request that does not finish in time") {
        Probe p(srv.server.port(), TLS1_3_VERSION);
        REQUIRE(p.handshake().empty());
        auto answer = p.exchange("GET /slow HTTP/1.1\r\nHost: x\r\n");
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 408") && Catch::Contains("request_timeout"));
    }
    SECTION("a connection that never starts its handshake is closed") {
        asio::io_context ioc;
        tcp::socket s(ioc);
        s.connect(local(srv.server.port()));
        HangGuard guard(s.native_handle());
        char byte = 0;
        boost::system::error_code ec;
        const auto n = s.read_some(asio::buffer(&byte, 1), ec);
        CHECK(n == 0);
        CHECK(ec == asio::error::eof);
        CHECK(http_test::eventually([&] { return srv.server.connections() == 0; }));
    }
    SECTION("plain HTTP to the TLS port is closed without an answer") {
        asio::io_context ioc;
        tcp::socket s(ioc);
        s.connect(local(srv.server.port()));
        HangGuard guard(s.native_handle());
        boost::system::error_code ec;
        asio::write(s, asio::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), ec);
        std::string out;
        asio::read(s, asio::dynamic_buffer(out), ec);
        CHECK(out.find("HTTP/1.1") == std::string::npos);
        CHECK(http_test::eventually([&] { return srv.server.connections() == 0; }));
    }
}

TEST_CASE("tls server: a connection over max-connections is closed before any handshake", "[http]") {
    const auto& certs = Certs::get();
    Loop loop;
    common::http::Limits limits;
    limits.max_connections = 1;
    TestServer srv(loop, answer_ok, limits, certs.server());
    Probe first(srv.server.port(), TLS1_3_VERSION);
    REQUIRE(first.handshake().empty());
    REQUIRE(http_test::eventually([&] { return srv.server.connections() == 1; }));
    // The server spends no handshake on it: the client sees the connection closed, not a 503 over TLS.
    Probe over(srv.server.port(), TLS1_3_VERSION);
    CHECK_FALSE(over.handshake().empty());
    // The connection within the limit is unaffected.
    auto answer = first.exchange("GET /still HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200") && Catch::EndsWith("ok /still"));
}

TEST_CASE("tls server: a handshake has its own deadline, shorter than the request time-out", "[http]") {
    const auto& certs = Certs::get();
    Loop loop;
    common::http::Limits limits;
    limits.request_timeout = std::chrono::minutes(5);  // longer than the HangGuard: only the handshake's closes
    limits.handshake_timeout = std::chrono::milliseconds(200);
    TestServer srv(loop, answer_ok, limits, certs.server());
    asio::io_context ioc;
    tcp::socket s(ioc);
    s.connect(local(srv.server.port()));
    // Half a ClientHello, then nothing: the handshake stays in flight until its deadline closes it.
    boost::system::error_code ec;
    asio::write(s, asio::buffer(std::string("\x16\x03\x01\x02\x00\x01", 6)), ec);
    // Waits (10 s at most, a bound against hangs) for the server to close its side; 0 bytes: closed.
    pollfd p{s.native_handle(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10'000) == 1);
    char byte = 0;
    const auto n = s.read_some(asio::buffer(&byte, 1), ec);
    CHECK(n == 0);
    CHECK(ec == asio::error::eof);
    CHECK(http_test::eventually([&] { return srv.server.connections() == 0; }));
}

TEST_CASE("tls server: reload_tls swaps the certificate for new connections only", "[http]") {
    const auto& certs = Certs::get();
    const fs::path dir = certs.dir / "reload";
    fs::create_directories(dir);
    const TlsFiles files{(dir / "cert.pem").string(), (dir / "key.pem").string()};
    auto install = [&](const TlsFiles& from) {
        fs::copy_file(from.cert_file, files.cert_file, fs::copy_options::overwrite_existing);
        fs::copy_file(from.key_file, files.key_file, fs::copy_options::overwrite_existing);
    };
    install(certs.server());

    Loop loop;
    TestServer srv(loop, answer_ok, {}, files);
    Client before(loop.ioc.get_executor());
    ClientRequest r;
    r.method = "GET";
    r.url = srv.url("/", true);
    r.ca_file = certs.ca();
    REQUIRE(send(loop, before, r).response);
    REQUIRE(before.open_connections() == 1);

    // A broken file is refused and the current certificate stays.
    { std::ofstream(files.cert_file) << "not a certificate\n"; }
    CHECK_THROWS_AS(srv.server.reload_tls(), std::runtime_error);
    Client during(loop.ioc.get_executor());
    CHECK(send(loop, during, r).response);

    // The wrong.example pair: new connections get it, the open keep-alive connection keeps its session.
    install(certs.wrong());
    srv.server.reload_tls();
    Client after(loop.ioc.get_executor());
    auto refused = send(loop, after, r);
    CHECK(refused.failure == ClientFailure::tls_verify);
    auto kept = send(loop, before, r);
    REQUIRE(kept.response);
    CHECK(kept.response->status == 200);
    CHECK(srv.server.accepted() == 3);

    // And back.
    install(certs.server());
    srv.server.reload_tls();
    CHECK(send(loop, after, r).response);
}

TEST_CASE("tls server: one network thread with TLS makes no io_uring ring and answers", "[http]") {
    // Its records are written and read by the TLS stream, never through the burst ring: none is made, and the
    // metric that reports it (orderhub_http_io_uring) says 0.
    const auto& certs = Certs::get();
    Loop loop(1);
    TestServer srv(loop, answer_ok, {}, certs.server(), 1);
    CHECK_FALSE(srv.server.bursts_through_io_uring());
    Client client(loop.ioc.get_executor());
    ClientRequest r;
    r.method = "GET";
    r.url = srv.url("/", true);
    r.ca_file = certs.ca();
    const auto res = send(loop, client, r);
    REQUIRE(res.response);
    CHECK(res.response->status == 200);
}

TEST_CASE("tls server: a plain server ignores reload_tls", "[http]") {
    Loop loop;
    TestServer srv(loop, answer_ok);
    CHECK_FALSE(srv.server.tls());
    CHECK_NOTHROW(srv.server.reload_tls());
}

TEST_CASE("tls server: missing or mismatched files are refused at construction", "[http]") {
    const auto& certs = Certs::get();
    Loop loop;
    auto make = [&](TlsFiles f) { TestServer srv(loop, answer_ok, {}, std::move(f)); };
    CHECK_THROWS_WITH(make({"/nonexistent.pem", certs.server().key_file}), Catch::Contains("/nonexistent.pem"));
    CHECK_THROWS_WITH(make({certs.server().cert_file, certs.wrong().key_file}), Catch::Contains("does not match"));
}

TEST_CASE("service options: --tls-cert and --tls-key", "[http]") {
    const auto& certs = Certs::get();
    const auto server = certs.server();
    using common::cli::UserError;

    CHECK_FALSE(config({}, {}).tls);
    auto by_env = config({}, {{"ORDERPOS_TLS_CERT", server.cert_file}, {"ORDERPOS_TLS_KEY", server.key_file}});
    REQUIRE(by_env.tls);
    CHECK(by_env.tls->cert_file == server.cert_file);
    CHECK(by_env.tls->key_file == server.key_file);
    auto by_flag = config({"--tls-cert", server.cert_file, "--tls-key", server.key_file},
                          {{"ORDERPOS_TLS_CERT", "/env/ignored.pem"}, {"ORDERPOS_TLS_KEY", "/env/ignored.key"}});
    REQUIRE(by_flag.tls);
    CHECK(by_flag.tls->cert_file == server.cert_file);

    CHECK_THROWS_WITH(config({"--tls-cert", server.cert_file}, {}),
                      Catch::Contains("ORDERPOS_TLS_CERT") && Catch::Contains("ORDERPOS_TLS_KEY"));
    CHECK_THROWS_AS(config({}, {{"ORDERPOS_TLS_KEY", server.key_file}}), UserError);
    CHECK_THROWS_WITH(config({"--tls-cert", "/nonexistent.pem", "--tls-key", server.key_file}, {}),
                      Catch::Contains("cannot read") && Catch::Contains("/nonexistent.pem"));
    CHECK_THROWS_AS(config({"--tls-cert", server.cert_file, "--tls-key", certs.wrong().key_file}, {}), UserError);
    CHECK_THROWS_AS(config({"--tls-cert", server.key_file, "--tls-key", server.key_file}, {}), UserError);
}
