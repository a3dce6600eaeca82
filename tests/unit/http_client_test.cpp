// common::http::Client against in-process servers on 127.0.0.1: the real common::http::Server, and for the
// keep-alive retry rule a scripted raw TCP peer.
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <deque>
#include <future>
#include <mutex>

#include "common/http/client/adaptive_limit.hpp"
#include "tests/unit/http_support.hpp"

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using common::http::Client;
using common::http::ClientFailure;
using common::http::ClientOptions;
using common::http::ClientRequest;
using common::http::ClientResult;
using common::http::Request;
using common::http::Response;
using http_test::Certs;
using http_test::eventually;
using http_test::Loop;
using http_test::send;
using http_test::TestServer;

namespace {

asio::awaitable<Response> echo(Request r) {
    Response res;
    res.status = 201;
    res.content_type = "text/plain";
    res.body = r.method + " " + r.target + " " + r.body;
    res.headers.emplace_back("X-Auth", std::string(r.header("Authorization").value_or("-")));
    res.headers.emplace_back("X-Type", std::string(r.header("Content-Type").value_or("-")));
    res.headers.emplace_back("X-Host", std::string(r.header("Host").value_or("-")));
    co_return res;
}

/// Counts requests in flight and their peak.
struct Gauge {
    std::atomic<int> now{0};
    std::atomic<int> peak{0};
    std::atomic<int> seen{0};
};

asio::awaitable<Response> slow(std::shared_ptr<Gauge> g, std::chrono::milliseconds delay, Request) {
    ++g->seen;
    const int n = ++g->now;
    int seen = g->peak.load();
    while (n > seen && !g->peak.compare_exchange_weak(seen, n)) {
    }
    asio::steady_timer t(co_await asio::this_coro::executor, delay);
    co_await t.async_wait(asio::use_awaitable);
    --g->now;
    Response res;
    res.body = "{}";
    co_return res;
}

asio::awaitable<Response> sized(std::size_t n, Request) {
    Response res;
    res.content_type = "text/plain";
    res.body = std::string(n, 'x');
    co_return res;
}

/// Holds every request until opened.
struct Gate {
    std::atomic<bool> open{false};
    std::atomic<int> waiting{0};
    std::atomic<int> seen{0};
};

asio::awaitable<Response> gated(std::shared_ptr<Gate> gate, Request) {
    ++gate->seen;
    ++gate->waiting;
    asio::steady_timer t(co_await asio::this_coro::executor);
    while (!gate->open.load()) {
        t.expires_after(std::chrono::milliseconds(5));
        co_await t.async_wait(asio::use_awaitable);
    }
    --gate->waiting;
    Response res;
    res.body = "{}";
    co_return res;
}

/// Sends with a time limit imposed from outside through cancellation: 0 when the send finished first.
asio::awaitable<std::size_t> send_or_give_up(Client& client, ClientRequest r, std::chrono::milliseconds limit) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer t(co_await asio::this_coro::executor, limit);
    auto v = co_await (client.send(std::move(r)) || t.async_wait(asio::use_awaitable));
    co_return v.index();
}

common::http::Handler slow_handler(std::shared_ptr<Gauge> g, std::chrono::milliseconds delay) {
    return [g, delay](Request r) { return slow(g, delay, std::move(r)); };
}

common::http::Handler sized_handler(std::size_t n) {
    return [n](Request r) { return sized(n, std::move(r)); };
}

ClientRequest get(std::string url) {
    ClientRequest r;
    r.method = "GET";
    r.url = std::move(url);
    return r;
}

/// URLs the client refuses (bad_url) and origin() gives nothing for.
const std::vector<std::string> kBadUrls = {"",
                                           "not a url",
                                           "/relative/path",
                                           "ftp://127.0.0.1/x",
                                           "http://",
                                           "http://:80/",
                                           "http://127.0.0.1:0/",
                                           "http://127.0.0.1:99999/",
                                           "http://user:secret@127.0.0.1/",
                                           "http://[::1/",
                                           "http://exa%6dple.com/"};

/// A port nobody listens on: bound once, then released.
std::uint16_t closed_port() {
    asio::io_context ioc;
    tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const auto port = a.local_endpoint().port();
    a.close();
    return port;
}

/// A scripted HTTP peer on its own thread with blocking sockets, for behaviour the real server never shows. It owns
/// every socket until it is destroyed, so that descriptors are never reused while the destructor may touch them.
class RawServer {
public:
    RawServer() : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}
    ~RawServer() {
        closing_ = true;
        // Unblock a script that waits for a connection or a request that never comes, then join it.
        ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
        {
            std::lock_guard lock(mutex_);
            for (auto& s : sockets_) ::shutdown(s.native_handle(), SHUT_RDWR);
        }
        if (thread_.joinable()) thread_.join();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()) + "/x"; }

    void run(std::function<void(RawServer&)> script) {
        thread_ = std::thread([this, script = std::move(script)] {
            try {
                script(*this);
            } catch (const std::exception&) {
                // The test's assertions on the client side tell what went wrong.
            }
        });
    }
    tcp::socket& accept() {
        tcp::socket s(ioc_);
        acceptor_.accept(s);
        ++accepts;
        std::lock_guard lock(mutex_);
        return sockets_.emplace_back(std::move(s));
    }
    void read_request(tcp::socket& s) {
        const auto n = asio::read_until(s, asio::dynamic_buffer(pending_), "\r\n\r\n");
        pending_.erase(0, n);  // the tests send no bodies
        ++requests;
    }
    static void write(tcp::socket& s, std::string_view text) { asio::write(s, asio::buffer(text)); }
    /// Blocks the script until the RawServer is destroyed.
    void linger() const {
        while (!closing_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    /// Ends the connection both ways (FIN), keeping the descriptor until the destructor.
    static void hang_up(tcp::socket& s) {
        boost::system::error_code ignored;
        s.shutdown(tcp::socket::shutdown_both, ignored);
    }

    std::atomic<int> accepts{0};
    std::atomic<int> requests{0};

private:
    std::atomic<bool> closing_{false};
    asio::io_context ioc_;
    tcp::acceptor acceptor_;
    std::string pending_;
    std::mutex mutex_;
    std::deque<tcp::socket> sockets_;
    std::thread thread_;
};

}  // namespace

TEST_CASE("client: a POST round trip carries method, path, query, headers and body", "[http]") {
    Loop loop;
    TestServer srv(loop, echo);
    Client client(loop.ioc.get_executor());
    ClientRequest r;
    r.url = srv.url("/api/orders?a=1&b=%20x#frag");
    r.headers = {{"Authorization", "Bearer t0k3n"}, {"Content-Type", "application/json"}};
    r.body = R"({"x":1})";
    auto res = send(loop, client, r);
    REQUIRE(res.failure == ClientFailure::none);
    REQUIRE(res.response);
    CHECK(res.response->status == 201);
    CHECK(res.response->body == R"(POST /api/orders?a=1&b=%20x {"x":1})");
    CHECK(res.response->header("x-auth") == "Bearer t0k3n");
    CHECK(res.response->header("X-TYPE") == "application/json");
    CHECK(res.response->header("X-Host") == "127.0.0.1:" + std::to_string(srv.server.port()));
    CHECK(res.response->header("Content-Type") == "text/plain");
    CHECK_FALSE(res.response->header("X-Missing"));
    CHECK(res.error.empty());
    CHECK(res.latency.count() > 0);

    // Other methods, an empty path and a default port in the Host field.
    auto g = send(loop, client, get("http://127.0.0.1:" + std::to_string(srv.server.port())));
    REQUIRE(g.response);
    CHECK(g.response->body == "GET / ");
}

TEST_CASE("client: sequential requests reuse one keep-alive connection", "[http]") {
    Loop loop;
    TestServer srv(loop, echo);
    Client client(loop.ioc.get_executor());
    for (int i = 0; i < 10; ++i) {
        ClientRequest r;
        r.url = srv.url("/n/" + std::to_string(i));
        r.body = "b";
        auto res = send(loop, client, r);
        REQUIRE(res.response);
        CHECK(res.response->body == "POST /n/" + std::to_string(i) + " b");
    }
    CHECK(srv.server.accepted() == 1);
    CHECK(client.open_connections() == 1);
}

TEST_CASE("client: destroying the client closes its pooled connections", "[http]") {
    Loop loop;
    TestServer srv(loop, echo);
    {
        Client client(loop.ioc.get_executor());
        REQUIRE(send(loop, client, get(srv.url())).response);
        REQUIRE(srv.server.connections() == 1);
    }
    CHECK(eventually([&] { return srv.server.connections() == 0; }));
}

TEST_CASE("client: at most max_connections_per_host requests are in flight per host", "[http]") {
    Loop loop(2);
    auto gauge = std::make_shared<Gauge>();
    TestServer srv(loop, slow_handler(gauge, std::chrono::milliseconds(30)));
    Client client(loop.ioc.get_executor(), ClientOptions{.max_connections_per_host = 3});
    std::vector<std::future<ClientResult>> results;
    for (int i = 0; i < 20; ++i)
        results.push_back(asio::co_spawn(loop.ioc, client.send(get(srv.url())), asio::use_future));
    int ok = 0;
    for (auto& f : results) {
        auto res = f.get();
        if (res.response && res.response->status == 200) ++ok;
    }
    CHECK(ok == 20);
    CHECK(gauge->peak.load() >= 1);
    CHECK(gauge->peak.load() <= 3);
    CHECK(srv.server.accepted() <= 3);
    CHECK(client.open_connections() <= 3);
}

/// Answers `status` after `delay`, counting requests in flight.
asio::awaitable<Response> answer_with(std::shared_ptr<Gauge> g, std::shared_ptr<std::atomic<unsigned>> status,
                                      Request) {
    const int n = ++g->now;
    int seen = g->peak.load();
    while (n > seen && !g->peak.compare_exchange_weak(seen, n)) {
    }
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(20));
    co_await t.async_wait(asio::use_awaitable);
    --g->now;
    Response res;
    res.status = status->load();
    res.body = "{}";
    co_return res;
}

/// Sends `n` requests at once and returns how many got `status`.
int send_round(Loop& loop, Client& client, const std::string& url, int n, unsigned status) {
    std::vector<std::future<ClientResult>> results;
    for (int i = 0; i < n; ++i) results.push_back(asio::co_spawn(loop.ioc, client.send(get(url)), asio::use_future));
    int matched = 0;
    for (auto& f : results) {
        auto res = f.get();
        if (res.response && res.response->status == status) ++matched;
    }
    return matched;
}

TEST_CASE("client: a host answering 429 or 503 gets fewer requests at once, and more again once it recovers",
          "[http]") {
    Loop loop(2);
    auto gauge = std::make_shared<Gauge>();
    auto status = std::make_shared<std::atomic<unsigned>>(500);
    TestServer srv(loop, [gauge, status](Request r) { return answer_with(gauge, status, std::move(r)); });
    Client client(loop.ioc.get_executor(), ClientOptions{.max_connections_per_host = 8});
    const std::string url = srv.url("/api/orders");
    CHECK(client.in_flight_limit(url) == 8);
    CHECK(client.in_flight_limit("not a url") == 0);

    // A 500 is the POS's own failure, not a request to slow down.
    CHECK(send_round(loop, client, url, 8, 500) == 8);
    CHECK(client.in_flight_limit(url) == 8);
    CHECK(gauge->peak.load() == 8);

    // Eight 503 answers to requests sent together halve the limit once, not eight times.
    status->store(503);
    CHECK(send_round(loop, client, url, 8, 503) == 8);
    CHECK(client.in_flight_limit(url) == 4);
    status->store(429);
    CHECK(send_round(loop, client, url, 4, 429) == 4);
    CHECK(client.in_flight_limit(url) == 2);
    CHECK(send_round(loop, client, url, 2, 429) == 2);
    CHECK(client.in_flight_limit(url) == 1);
    gauge->peak = 0;
    CHECK(send_round(loop, client, url, 6, 429) == 6);  // never below one
    CHECK(client.in_flight_limit(url) == 1);
    CHECK(gauge->peak.load() == 1);
    // Another host is not affected.
    CHECK(client.in_flight_limit("http://127.0.0.2:1/api/orders") == 8);

    // Answers again: one more slot per round of answers, back up to the ceiling and no further.
    status->store(201);
    gauge->peak = 0;
    CHECK(send_round(loop, client, url, 10, 201) == 10);
    const auto after_ten = client.in_flight_limit(url);
    CHECK(after_ten > 1);
    CHECK(after_ten < 8);
    CHECK(gauge->peak.load() < 8);
    CHECK(send_round(loop, client, url, 60, 201) == 60);
    CHECK(client.in_flight_limit(url) == 8);
    CHECK(gauge->peak.load() <= 8);
    CHECK(srv.server.accepted() <= 8);
}

TEST_CASE("client: the adaptive per-host limit, answer by answer", "[http]") {
    using common::http::detail::AdaptiveLimit;
    using Change = AdaptiveLimit::Change;
    AdaptiveLimit limit(8);
    struct Step {
        std::uint64_t sent_epoch;
        bool overloaded;
        Change change;
        std::size_t allowed;
    };
    const Step steps[] = {
        {0, false, Change::none, 8},    // at the ceiling already
        {0, true, Change::reduced, 4},  // halved
        {0, true, Change::none, 4},     // sent before that decrease: the same round, not counted again
        {1, true, Change::reduced, 2},  // a request sent since: halved again
        {2, true, Change::reduced, 1},  //
        {3, true, Change::none, 1},     // never below one
        {3, false, Change::raised, 2},  // +1/1
        {3, false, Change::raised, 2},  // +1/2: 2.5
        {3, false, Change::raised, 2},  // 2.9
        {3, false, Change::raised, 3},  // 3.24...
    };
    for (const auto& s : steps) {
        INFO("epoch " << s.sent_epoch << " overloaded " << s.overloaded);
        CHECK(limit.on_answer(s.sent_epoch, s.overloaded) == s.change);
        CHECK(limit.allowed() == s.allowed);
    }
    int answers = 0;
    while (limit.on_answer(3, false) != Change::recovered) REQUIRE(++answers < 100);
    CHECK(limit.allowed() == 8);
    CHECK(limit.on_answer(3, false) == Change::none);  // no further than the ceiling
    CHECK(limit.on_answer(3, true) == Change::reduced);
}

TEST_CASE("client: a request cancelled while waiting for a slot gives its place up", "[http]") {
    Loop loop(2);
    auto gate = std::make_shared<Gate>();
    TestServer srv(loop, [gate](Request r) { return gated(gate, std::move(r)); });
    Client client(loop.ioc.get_executor(), ClientOptions{.max_connections_per_host = 1});
    auto first = asio::co_spawn(loop.ioc, client.send(get(srv.url("/1"))), asio::use_future);
    REQUIRE(eventually([&] { return gate->waiting.load() == 1; }));
    // The second waits for the only slot and is cancelled by its caller.
    auto gave_up = asio::co_spawn(loop.ioc, send_or_give_up(client, get(srv.url("/2")), std::chrono::milliseconds(50)),
                                  asio::use_future);
    CHECK(gave_up.get() == 1);
    auto third = asio::co_spawn(loop.ioc, client.send(get(srv.url("/3"))), asio::use_future);
    gate->open = true;
    auto r1 = first.get();
    auto r3 = third.get();
    CHECK(r1.response);
    CHECK(r3.response);  // the slot was neither leaked nor handed to the request that gave up
    CHECK(srv.server.accepted() == 1);
}

TEST_CASE("client: a request that waits for a slot longer than queue_timeout is queue_timeout and sends nothing",
          "[http]") {
    Loop loop(2);
    auto gate = std::make_shared<Gate>();
    TestServer srv(loop, [gate](Request r) { return gated(gate, std::move(r)); });
    Client client(loop.ioc.get_executor(),
                  ClientOptions{.max_connections_per_host = 1, .queue_timeout = std::chrono::milliseconds(100)});
    auto first = asio::co_spawn(loop.ioc, client.send(get(srv.url("/1"))), asio::use_future);
    REQUIRE(eventually([&] { return gate->waiting.load() == 1; }));

    auto second = send(loop, client, get(srv.url("/2")));
    CHECK_FALSE(second.response);
    CHECK(second.failure == ClientFailure::queue_timeout);
    CHECK(common::http::to_string(second.failure) == "queue_timeout");
    CHECK_THAT(second.error, Catch::Contains("100 ms"));
    CHECK(second.latency >= std::chrono::milliseconds(100));
    CHECK(gate->seen.load() == 1);  // the server never saw the second request

    gate->open = true;
    auto r1 = first.get();
    CHECK(r1.response);
    auto r3 = send(loop, client, get(srv.url("/3")));
    CHECK(r3.response);  // the slot was neither leaked nor kept by the request that timed out
    CHECK(gate->seen.load() == 2);
    CHECK(srv.server.accepted() == 1);
}

TEST_CASE("client: slots granted while their waiters time out are passed on, never leaked", "[http]") {
    // Queue time-outs close to the server's delay make grants and time-outs meet; whatever the interleaving, each
    // request is answered or gives up having sent nothing, and the only slot is free afterwards.
    Loop loop(2);
    auto gauge = std::make_shared<Gauge>();
    TestServer srv(loop, slow_handler(gauge, std::chrono::milliseconds(10)));
    Client client(loop.ioc.get_executor(),
                  ClientOptions{.max_connections_per_host = 1, .queue_timeout = std::chrono::milliseconds(25)});
    std::vector<std::future<ClientResult>> results;
    for (int i = 0; i < 40; ++i)
        results.push_back(asio::co_spawn(loop.ioc, client.send(get(srv.url())), asio::use_future));
    int answered = 0;
    int timed_out = 0;
    for (auto& f : results) {
        auto res = f.get();
        if (res.response && res.response->status == 200) ++answered;
        if (res.failure == ClientFailure::queue_timeout) ++timed_out;
    }
    CHECK(answered + timed_out == 40);
    CHECK(answered >= 1);
    CHECK(gauge->seen.load() == answered);
    CHECK(gauge->peak.load() == 1);
    CHECK(send(loop, client, get(srv.url())).response);
}

TEST_CASE("client: origin() names scheme, host and port of a usable URL", "[http]") {
    using common::http::origin;
    CHECK(origin("http://example.com/api/orders?x=1#f") == "http://example.com:80");
    CHECK(origin("https://example.com") == "https://example.com:443");
    CHECK(origin("HTTPS://Api.Example.COM:8443/Path") == "https://api.example.com:8443");
    CHECK(origin("http://example.com:443/") == "http://example.com:443");
    CHECK(origin("https://example.com:443/") == "https://example.com:443");
    CHECK(origin("http://127.0.0.1:8080") == "http://127.0.0.1:8080");
    CHECK(origin("http://[::1]:8080/x") == "http://[::1]:8080");
    CHECK(origin("https://[2001:DB8::1]/") == "https://[2001:db8::1]:443");
    for (const auto& url : kBadUrls) {
        INFO(url);
        CHECK_FALSE(origin(url));
    }
}

TEST_CASE("client: a closed port is connect_refused", "[http]") {
    Loop loop;
    Client client(loop.ioc.get_executor());
    auto res = send(loop, client, get("http://127.0.0.1:" + std::to_string(closed_port()) + "/"));
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::connect_refused);
    CHECK(common::http::to_string(res.failure) == "connect_refused");
    CHECK_FALSE(res.error.empty());
    CHECK(client.open_connections() == 0);
}

TEST_CASE("client: a listener whose accept queue is full is connect_timeout", "[http]") {
    // Linux drops SYNs while the accept queue is full, so the TCP handshake never completes.
    asio::io_context ioc;
    tcp::acceptor full(ioc);
    full.open(tcp::v4());
    full.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    full.listen(0);
    std::vector<std::unique_ptr<tcp::socket>> fillers;
    for (int i = 0; i < 4; ++i) {
        auto s = std::make_unique<tcp::socket>(ioc, tcp::v4());
        s->non_blocking(true);
        const auto ep = full.local_endpoint();
        (void)::connect(s->native_handle(), ep.data(), static_cast<socklen_t>(ep.size()));  // in progress or done
        fillers.push_back(std::move(s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the fillers' handshakes settle
    Loop loop;
    Client client(loop.ioc.get_executor(), ClientOptions{.connect_timeout = std::chrono::milliseconds(200)});
    auto res = send(loop, client, get("http://127.0.0.1:" + std::to_string(full.local_endpoint().port()) + "/"));
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::connect_timeout);
}

TEST_CASE("client: a peer that never answers the TLS handshake is tls_handshake", "[http]") {
    Loop loop;
    RawServer raw;
    raw.run([](RawServer& s) {
        auto& a = s.accept();
        char byte;
        boost::system::error_code ec;
        a.read_some(asio::buffer(&byte, 1), ec);  // the ClientHello arrives; nothing is answered
        s.linger();
    });
    Client client(loop.ioc.get_executor(), ClientOptions{.handshake_timeout = std::chrono::milliseconds(200)});
    ClientRequest r = get("https://127.0.0.1:" + std::to_string(raw.port()) + "/");
    r.ca_file = Certs::get().ca();
    auto res = send(loop, client, r);
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::tls_handshake);
    CHECK_THAT(res.error, Catch::Contains("timed out"));
}

TEST_CASE("client: a peer that stops reading is write_timeout", "[http]") {
    Loop loop;
    RawServer raw;
    raw.run([](RawServer& s) {
        auto& a = s.accept();
        char byte;
        boost::system::error_code ec;
        a.read_some(asio::buffer(&byte, 1), ec);  // reads one byte, then nothing more
        s.linger();
    });
    Client client(loop.ioc.get_executor(), ClientOptions{.write_timeout = std::chrono::milliseconds(200)});
    ClientRequest r = get(raw.url());
    r.method = "POST";
    r.body = std::string(64 * 1024 * 1024, 'x');  // far beyond what loopback socket buffers hold
    auto res = send(loop, client, r);
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::write_timeout);
}

TEST_CASE("client: a server slower than read_timeout is read_timeout", "[http]") {
    Loop loop;
    auto gauge = std::make_shared<Gauge>();
    TestServer srv(loop, slow_handler(gauge, std::chrono::milliseconds(5000)));
    Client client(loop.ioc.get_executor(), ClientOptions{.read_timeout = std::chrono::milliseconds(200)});
    auto res = send(loop, client, get(srv.url()));
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::read_timeout);
    CHECK(eventually([&] { return client.open_connections() == 0; }));  // a timed-out connection is not pooled
}

TEST_CASE("client: a body over max_response_body is too_large", "[http]") {
    Loop loop;
    TestServer big(loop, sized_handler(2000));
    TestServer fits(loop, sized_handler(1000));
    Client client(loop.ioc.get_executor(), ClientOptions{.max_response_body = 1000});
    auto res = send(loop, client, get(big.url()));
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::too_large);
    auto ok = send(loop, client, get(fits.url()));
    REQUIRE(ok.response);
    CHECK(ok.response->body.size() == 1000);
    CHECK(eventually([&] { return client.open_connections() == 1; }));
}

TEST_CASE("client: malformed URLs, methods and headers are bad_url and never echo values", "[http]") {
    Loop loop;
    Client client(loop.ioc.get_executor());
    for (const auto& url : kBadUrls) {
        INFO(url);
        auto res = send(loop, client, get(url));
        CHECK(res.failure == ClientFailure::bad_url);
        CHECK(res.error.find("secret") == std::string::npos);
    }
    ClientRequest r = get("http://127.0.0.1:1/");
    r.headers = {{"Authorization", "Bearer secret\r\nX-Injected: 1"}};
    auto res = send(loop, client, r);
    CHECK(res.failure == ClientFailure::bad_url);
    CHECK(res.error.find("secret") == std::string::npos);
    r.headers = {{"Bad Name", "v"}};
    CHECK(send(loop, client, r).failure == ClientFailure::bad_url);
    r.headers.clear();
    r.method = "GE T";
    CHECK(send(loop, client, r).failure == ClientFailure::bad_url);
}

TEST_CASE("client: a pooled connection the server closed while idle is not used", "[http]") {
    Loop loop;
    common::http::Limits limits;
    limits.idle_timeout = std::chrono::milliseconds(100);
    TestServer srv(loop, echo, limits);
    Client client(loop.ioc.get_executor());
    REQUIRE(send(loop, client, get(srv.url())).response);
    REQUIRE(eventually([&] { return srv.server.connections() == 0; }));
    auto res = send(loop, client, get(srv.url("/again")));
    REQUIRE(res.response);
    CHECK(res.response->body == "GET /again ");
    CHECK(srv.server.accepted() == 2);
}

TEST_CASE("client: idle pooled connections are closed after idle_keepalive", "[http]") {
    Loop loop;
    TestServer srv(loop, echo);
    Client client(loop.ioc.get_executor(), ClientOptions{.idle_keepalive = std::chrono::milliseconds(100)});
    REQUIRE(send(loop, client, get(srv.url())).response);
    CHECK(eventually([&] { return client.open_connections() == 0; }));
    CHECK(eventually([&] { return srv.server.connections() == 0; }));
}

TEST_CASE("client: a reused connection closed before any response byte is retried once on a fresh one", "[http]") {
    Loop loop;
    RawServer raw;
    raw.run([](RawServer& s) {
        auto& a = s.accept();
        s.read_request(a);
        RawServer::write(a, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none");
        s.read_request(a);      // the next request arrives on the kept-alive connection...
        RawServer::hang_up(a);  // ...which the server ends unanswered, as when its idle time-out fires then
        auto& b = s.accept();
        s.read_request(b);
        RawServer::write(b, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo");
    });
    Client client(loop.ioc.get_executor());
    auto first = send(loop, client, get(raw.url()));
    REQUIRE(first.response);
    CHECK(first.response->body == "one");
    auto second = send(loop, client, get(raw.url()));
    REQUIRE(second.response);
    CHECK(second.response->body == "two");
    CHECK(raw.requests.load() == 3);
    CHECK(raw.accepts.load() == 2);
}

TEST_CASE("client: a fresh connection closed before any response byte is not retried", "[http]") {
    Loop loop;
    RawServer raw;
    raw.run([](RawServer& s) {
        auto& a = s.accept();
        s.read_request(a);
        RawServer::hang_up(a);
    });
    Client client(loop.ioc.get_executor(), ClientOptions{.read_timeout = std::chrono::milliseconds(3000)});
    auto res = send(loop, client, get(raw.url()));
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::read);  // a retry would have waited for an answer: read_timeout
    CHECK(raw.requests.load() == 1);
    CHECK(raw.accepts.load() == 1);
}

TEST_CASE("client: a partial response on a reused connection is not retried", "[http]") {
    Loop loop;
    RawServer raw;
    raw.run([](RawServer& s) {
        auto& a = s.accept();
        s.read_request(a);
        RawServer::write(a, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none");
        s.read_request(a);
        RawServer::write(a, "HTTP/1.1 200 OK\r\nContent-Len");
        RawServer::hang_up(a);
    });
    Client client(loop.ioc.get_executor(), ClientOptions{.read_timeout = std::chrono::milliseconds(3000)});
    REQUIRE(send(loop, client, get(raw.url())).response);
    auto res = send(loop, client, get(raw.url()));
    CHECK_FALSE(res.response);
    CHECK(res.failure == ClientFailure::read);
    CHECK(raw.requests.load() == 2);
    CHECK(raw.accepts.load() == 1);
}

TEST_CASE("client: a malformed response is protocol", "[http]") {
    Loop loop;
    RawServer raw;
    raw.run([](RawServer& s) {
        auto& a = s.accept();
        s.read_request(a);
        RawServer::write(a, "HTTP/9 banana\r\n\r\n");
        RawServer::hang_up(a);
    });
    Client client(loop.ioc.get_executor());
    auto res = send(loop, client, get(raw.url()));
    CHECK(res.failure == ClientFailure::protocol);
}

TEST_CASE("client: HTTPS is verified against the CA file, the trust store and the host name", "[http]") {
    const auto& certs = Certs::get();
    Loop loop;
    TestServer good(loop, echo, {}, certs.server());
    TestServer wrong(loop, echo, {}, certs.wrong());
    TestServer plain(loop, echo);
    Client client(loop.ioc.get_executor());

    SECTION("accepted with the CA file, by address and by name, and kept alive") {
        for (const char* host : {"127.0.0.1", "localhost"}) {
            INFO(host);
            ClientRequest r;
            r.url = good.url("/secure", true, host);
            r.ca_file = certs.ca();
            r.body = "b";
            auto res = send(loop, client, r);
            REQUIRE(res.failure == ClientFailure::none);
            REQUIRE(res.response);
            CHECK(res.response->body == "POST /secure b");
        }
        ClientRequest r = get(good.url("/k", true));
        r.ca_file = certs.ca();
        for (int i = 0; i < 5; ++i) REQUIRE(send(loop, client, r).response);
        CHECK(good.server.accepted() == 2);  // one per host name, then reused
    }
    SECTION("refused without the CA file (system trust store)") {
        auto res = send(loop, client, get(good.url("/", true)));
        CHECK_FALSE(res.response);
        CHECK(res.failure == ClientFailure::tls_verify);
    }
    SECTION("refused when the certificate names another host") {
        ClientRequest r = get(wrong.url("/", true));
        r.ca_file = certs.ca();
        auto res = send(loop, client, r);
        CHECK_FALSE(res.response);
        CHECK(res.failure == ClientFailure::tls_verify);
        CHECK_THAT(res.error, Catch::Contains("hostname mismatch"));
        r.url = wrong.url("/", true, "localhost");
        CHECK(send(loop, client, r).failure == ClientFailure::tls_verify);
    }
    SECTION("a CA file that cannot be read is tls_verify") {
        ClientRequest r = get(good.url("/", true));
        r.ca_file = "/nonexistent/ca.pem";
        auto res = send(loop, client, r);
        CHECK(res.failure == ClientFailure::tls_verify);
        CHECK_THAT(res.error, Catch::Contains("/nonexistent/ca.pem"));
    }
    SECTION("plain HTTP to the TLS port fails cleanly and the listener keeps working") {
        auto res = send(loop, client, get(good.url("/", false)));
        CHECK_FALSE(res.response);
        CHECK((res.failure == ClientFailure::read || res.failure == ClientFailure::protocol));
        ClientRequest r = get(good.url("/after", true));
        r.ca_file = certs.ca();
        auto after = send(loop, client, r);
        REQUIRE(after.response);
        CHECK(after.response->body == "GET /after ");
    }
    SECTION("HTTPS to a plain HTTP port is tls_handshake") {
        ClientRequest r = get(plain.url("/", true));
        r.ca_file = certs.ca();
        auto res = send(loop, client, r);
        CHECK_FALSE(res.response);
        CHECK(res.failure == ClientFailure::tls_handshake);
    }
}
