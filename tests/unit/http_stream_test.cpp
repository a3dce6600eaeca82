// Streamed responses (Server-Sent Events) of common::http::Server over real loopback sockets.
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include "tests/unit/http_support.hpp"

namespace {

namespace asio = boost::asio;
using common::http::Request;
using common::http::Response;
using common::http::StreamWriter;
using namespace std::chrono_literals;

/// What the test and the stream share.
struct State {
    std::mutex mutex;
    std::shared_ptr<StreamWriter> writer;  // set once the stream runs
    std::atomic<int> wakes{0};
    std::atomic<bool> ended{false};
    bool finite = true;  // write "a", wait for a wake, write "b", return; else wait until told to end
};

asio::awaitable<void> body(std::shared_ptr<State> s, std::shared_ptr<StreamWriter> w) {
    {
        std::lock_guard lock(s->mutex);
        s->writer = w;
    }
    if (co_await w->write("data: a\n\n")) {
        if (s->finite) {
            if (co_await w->wait(10s)) co_await w->write("data: b\n\n");
        } else {
            while (co_await w->wait(10s)) {
            }
        }
    }
    s->ended = true;
}

asio::awaitable<Response> handle(std::shared_ptr<State> s, Request) {
    Response r;
    r.content_type = "text/event-stream";
    r.stream = [s](std::shared_ptr<StreamWriter> w) { return body(s, std::move(w)); };
    co_return r;
}

common::http::Handler handler(std::shared_ptr<State> s) {
    return [s](Request r) { return handle(s, std::move(r)); };
}

/// A blocking client: sends a GET and reads the answer's headers.
struct RawClient {
    explicit RawClient(std::uint16_t port) : socket(ioc) {
        socket.connect({asio::ip::make_address("127.0.0.1"), port});
        asio::write(socket, asio::buffer(std::string("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")));
        asio::read_until(socket, buf, "\r\n\r\n");
        std::istream in(&buf);
        std::string line;
        while (std::getline(in, line) && line != "\r") head += line + "\n";
    }
    /// Reads until `text` arrived (or EOF); returns everything read so far.
    std::string read_until(const std::string& text) {
        boost::system::error_code ec;
        asio::read_until(socket, buf, text, ec);
        return std::string(asio::buffers_begin(buf.data()), asio::buffers_end(buf.data()));
    }
    /// True when the server closed the connection (after consuming what is left).
    bool at_eof() {
        boost::system::error_code ec;
        while (!ec) asio::read(socket, buf, asio::transfer_at_least(1), ec);
        return ec == asio::error::eof || ec == asio::error::connection_reset;
    }
    asio::io_context ioc;
    asio::ip::tcp::socket socket;
    asio::streambuf buf;
    std::string head;
};

std::shared_ptr<StreamWriter> writer_of(State& s) {
    std::lock_guard lock(s.mutex);
    return s.writer;
}

}  // namespace

TEST_CASE("a streamed response has no length, writes as it goes, and ends with the connection", "[http]") {
    http_test::Loop loop;
    auto state = std::make_shared<State>();
    http_test::TestServer server(loop, handler(state));
    RawClient client(server.server.port());
    CHECK(client.head.find("HTTP/1.1 200") == 0);
    CHECK(client.head.find("Content-Type: text/event-stream") != std::string::npos);
    CHECK(client.head.find("Content-Length") == std::string::npos);
    CHECK(client.read_until("data: a\n\n").find("data: a") != std::string::npos);
    REQUIRE(http_test::eventually([&] { return writer_of(*state) != nullptr; }));
    writer_of(*state)->wake();  // from another thread
    CHECK(client.read_until("data: b\n\n").find("data: b") != std::string::npos);
    CHECK(client.at_eof());
    CHECK(state->ended);
    CHECK(http_test::eventually([&] { return server.server.connections() == 0; }));
}

TEST_CASE("a wake before the wait is not lost", "[http]") {
    http_test::Loop loop;
    auto state = std::make_shared<State>();
    http_test::TestServer server(loop, handler(state));
    RawClient client(server.server.port());
    REQUIRE(http_test::eventually([&] { return writer_of(*state) != nullptr; }));
    writer_of(*state)->wake();
    writer_of(*state)->wake();
    CHECK(client.read_until("data: b\n\n").find("data: b") != std::string::npos);
}

TEST_CASE("a stream ends when the client goes away", "[http]") {
    http_test::Loop loop;
    auto state = std::make_shared<State>();
    state->finite = false;
    http_test::TestServer server(loop, handler(state));
    {
        RawClient client(server.server.port());
        client.read_until("data: a\n\n");
    }
    CHECK(http_test::eventually([&] { return state->ended.load(); }));
    CHECK(http_test::eventually([&] { return server.server.connections() == 0; }));
}

TEST_CASE("stop() ends an open stream", "[http]") {
    http_test::Loop loop;
    auto state = std::make_shared<State>();
    state->finite = false;
    http_test::TestServer server(loop, handler(state));
    RawClient client(server.server.port());
    client.read_until("data: a\n\n");
    REQUIRE(http_test::eventually([&] { return writer_of(*state) != nullptr; }));
    const auto started = std::chrono::steady_clock::now();
    server.server.stop();
    CHECK(http_test::eventually([&] { return state->ended.load(); }));
    CHECK(client.at_eof());
    CHECK(http_test::eventually([&] { return server.server.connections() == 0; }));
    CHECK(std::chrono::steady_clock::now() - started < 5s);  // not the 10 s wait
}
