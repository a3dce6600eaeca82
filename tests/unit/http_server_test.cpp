// common::http::Server's bound on a handler's time (issue 20, finding 3), over real loopback sockets.
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "tests/unit/http_support.hpp"

namespace asio = boost::asio;
using common::http::Client;
using common::http::ClientFailure;
using common::http::ClientOptions;
using common::http::ClientRequest;
using common::http::Request;
using common::http::Response;
using http_test::Loop;
using http_test::send;
using http_test::TestServer;

namespace {

/// Answers /slow after an hour, anything else at once.
asio::awaitable<Response> slow_or_fast(Request r) {
    if (r.path == "/slow") {
        asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::hours(1));
        co_await t.async_wait(asio::use_awaitable);
    }
    Response res;
    res.content_type = "text/plain";
    res.body = "done " + r.path;
    co_return res;
}

ClientRequest get(const std::string& url) {
    ClientRequest r;
    r.method = "GET";
    r.url = url;
    return r;
}

}  // namespace

TEST_CASE("server: a handler past the handler time-out is answered 503 and the server goes on", "[http]") {
    Loop loop;
    common::http::Limits limits;
    limits.handler_timeout = std::chrono::milliseconds(200);
    TestServer srv(loop, slow_or_fast, limits);
    // The client waits 10 s at most (a bound against hangs): without the server's bound it would see a time-out.
    Client client(loop.ioc.get_executor(), ClientOptions{.read_timeout = std::chrono::seconds(10)});
    auto res = send(loop, client, get(srv.url("/slow")));
    REQUIRE(res.failure == ClientFailure::none);
    REQUIRE(res.response);
    CHECK(res.response->status == 503);
    CHECK(boost::json::parse(res.response->body).at("code") == "handler_timeout");
    CHECK(res.response->header("Retry-After"));
    auto fast = send(loop, client, get(srv.url("/fast")));
    REQUIRE(fast.response);
    CHECK(fast.response->status == 200);
    CHECK(fast.response->body == "done /fast");
}
