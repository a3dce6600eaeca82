// The plain connection's idle read (common/http/drain_aware_socket.hpp): a read that empties the socket leaves the
// next read to wait for the socket's next edge; nothing is lost or left waiting either way.

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "common/http/drain_aware_socket.hpp"

namespace drain_aware_test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using common::http::detail::DrainAwareSocket;

/// What one read gave: its error and the bytes it read.
struct Got {
    error_code ec;
    std::string bytes;
};

/// A connected pair on 127.0.0.1 and one loop: the accepted side a DrainAwareSocket, the connecting side plain.
struct Pair {
    asio::io_context ioc;
    tcp::socket client{ioc};
    std::optional<DrainAwareSocket> server;
    std::string into;
    std::optional<Got> got;

    Pair() {
        tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
        client.connect(acceptor.local_endpoint());
        server.emplace(acceptor.accept());
    }

    /// Starts a read of at most `n` bytes; `got` holds its outcome once the loop ran it.
    template <class Wrap>
    void start(std::size_t n, Wrap wrap) {
        into.assign(n, '\0');
        got.reset();
        server->async_read_marking_drained(asio::buffer(into), wrap([this](error_code ec, std::size_t k) {
                                               got = Got{ec, into.substr(0, k)};
                                           }));
    }
    void start(std::size_t n) {
        start(n, [](auto h) { return h; });
    }

    /// Runs the loop until the read started completes, for at most 10 s.
    std::optional<Got> finish() {
        ioc.restart();
        ioc.run_for(std::chrono::seconds(10));
        return got;
    }

    /// A read of at most `n` bytes run to its end (or the 10 s).
    std::optional<Got> read(std::size_t n) {
        start(n);
        return finish();
    }

    void send(std::string_view bytes) { asio::write(client, asio::buffer(bytes)); }
};

TEST_CASE("drain-aware read: a full read leaves the rest to be read at once, a short one waits for what comes next",
          "[http]") {
    Pair p;
    p.send("abcdefghij");
    // Reads that fill their buffer have not emptied the socket: the next one takes the bytes still there (were such
    // a read taken for one that emptied it, the next would wait for an edge that never comes, here 10 s).
    for (const char* expected : {"abcd", "efgh"}) {
        const auto r = p.read(4);
        REQUIRE(r);
        CHECK_FALSE(r->ec);
        CHECK(r->bytes == expected);
    }
    const auto last = p.read(4);  // two bytes of four: the socket is empty now
    REQUIRE(last);
    CHECK(last->bytes == "ij");

    // The next read waits for the socket's next edge, which the bytes sent after it raise.
    p.start(8);
    p.ioc.restart();
    CHECK(p.ioc.poll() == 0);  // nothing to do yet: the read waits
    CHECK_FALSE(p.got);
    p.send("xyz");
    const auto later = p.finish();
    REQUIRE(later);
    CHECK_FALSE(later->ec);
    CHECK(later->bytes == "xyz");

    // Bytes that arrive while no read is pending (a pipelining client) are read at once by the next one.
    p.send("pipelined");
    const auto waiting = p.read(64);
    REQUIRE(waiting);
    CHECK(waiting->bytes == "pipelined");

    // An ordinary read after a drained one waits for the edge as well, and gets what comes.
    std::string plain(16, '\0');
    std::optional<std::string> plain_got;
    p.server->async_read_some(asio::buffer(plain), [&](error_code ec, std::size_t k) {
        if (!ec) plain_got = plain.substr(0, k);
    });
    p.send("after");
    p.ioc.restart();
    p.ioc.run_for(std::chrono::seconds(10));
    CHECK(plain_got == std::optional<std::string>("after"));
}

TEST_CASE("drain-aware read: bytes and the end of stream that arrive together, then the end at once", "[http]") {
    // One edge for both: the read waits in the reactor, the client sends and closes its side, and the read that the
    // edge runs takes the bytes (fewer than its buffer) with the end of stream behind them. No edge comes for that end
    // any more, so the next read must try the socket rather than wait (a read that took "fewer bytes than its buffer"
    // for "the socket is empty" waited here for the 10 s, as the server did for the idle time-out).
    Pair p;
    p.start(64);
    p.ioc.restart();
    CHECK(p.ioc.poll() == 0);  // the read waits for the socket's edge
    p.send("GET / HTTP/1.1\r\n\r\n");
    p.client.shutdown(tcp::socket::shutdown_send);
    const auto request = p.finish();
    REQUIRE(request);
    CHECK_FALSE(request->ec);
    CHECK(request->bytes == "GET / HTTP/1.1\r\n\r\n");
    const auto end = p.read(64);
    REQUIRE(end);  // not left waiting
    CHECK(end->ec == asio::error::eof);
    CHECK(end->bytes.empty());
}

TEST_CASE("drain-aware read: the peer's close, cancel() and a cancellation slot end a read that waits", "[http]") {
    SECTION("the peer closes: end of stream") {
        Pair p;
        p.send("a");
        REQUIRE(p.read(4));  // emptied
        p.start(4);
        p.client.shutdown(tcp::socket::shutdown_send);
        const auto r = p.finish();
        REQUIRE(r);
        CHECK(r->ec == asio::error::eof);
        CHECK(r->bytes.empty());
    }
    SECTION("cancel() on the socket") {
        Pair p;
        p.start(4);
        p.ioc.restart();
        CHECK(p.ioc.poll() == 0);
        p.server->cancel();
        const auto r = p.finish();
        REQUIRE(r);
        CHECK(r->ec == asio::error::operation_aborted);
    }
    SECTION("a cancellation slot, and the socket reads on after it") {
        Pair p;
        asio::cancellation_signal signal;
        p.start(4, [&](auto h) { return asio::bind_cancellation_slot(signal.slot(), std::move(h)); });
        p.ioc.restart();
        CHECK(p.ioc.poll() == 0);
        signal.emit(asio::cancellation_type::terminal);
        const auto r = p.finish();
        REQUIRE(r);
        CHECK(r->ec == asio::error::operation_aborted);
        p.send("next");
        const auto next = p.read(4);
        REQUIRE(next);
        CHECK(next->bytes == "next");
    }
    SECTION("an empty buffer completes at once with nothing read") {
        Pair p;
        const auto r = p.read(0);
        REQUIRE(r);
        CHECK_FALSE(r->ec);
        CHECK(r->bytes.empty());
    }
}

}  // namespace drain_aware_test
