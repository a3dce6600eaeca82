// The floor under issue 23's "CPU per stored order" (tests/load/floor-bench.sh): the least a C++ service on the
// hub's libraries does for one webhook. One I/O thread; per connection a coroutine that reads each request with
// Beast (a string body, the hub's limits), parses the body with Boost.JSON, takes payload.id, and answers 200 with
// the hub's success body for it, {"order_id":"…","status":"success"}, on the kept-alive connection. Nothing is
// validated, stored, logged or counted.
//
// With PERIOD_US > 0 the answers wait for a tick: one timer releases every answer waiting, every PERIOD_US, as the
// hub's answers wait for their group commit and leave together. wrk's connections then come at the hub's pace, in
// the hub's kind of bursts, instead of as fast as the loop goes (which shares the kernel's and the loop's fixed
// costs among more requests per wake-up and so would understate the floor). A waiting answer costs what the hub's
// wait for its handler costs: a timer that never expires by itself, cancelled (no system call).
//
//   floor_server [PERIOD_US]     listens on 127.0.0.1 at a port of its choosing; prints "listening PORT"
//
// Built with -DORDERHUB_BENCH=ON (tests/load/CMakeLists.txt), linked as orderhub is (Asio and Beast compiled once,
// tcmalloc when orderhub has it).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace json = boost::json;
using asio::ip::tcp;

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::uint32_t kMaxHeader = 16 * 1024;  // the hub's default limits
constexpr std::uint64_t kMaxBody = 1024 * 1024;

/// The answer's body: the hub's for a stored order, with payload.id as the order id (the hub's is a UUID of the
/// same kind of length), or a 400 when the body is not a JSON object with a payload.id.
bhttp::response<bhttp::string_body> answer(const bhttp::request<bhttp::string_body>& req) {
    bhttp::response<bhttp::string_body> res{bhttp::status::ok, req.version()};
    res.set(bhttp::field::server, "floor");
    res.set(bhttp::field::content_type, "application/json");
    boost::system::error_code ec;
    const json::value doc = json::parse(req.body(), ec);
    const json::value* id = ec || !doc.is_object() ? nullptr : doc.as_object().if_contains("payload");
    id = id && id->is_object() ? id->as_object().if_contains("id") : nullptr;
    if (!id || !id->is_string()) {
        res.result(bhttp::status::bad_request);
        res.body() = R"({"error":{"code":"invalid_json"}})";
    } else {
        res.body() = R"({"order_id":)" + json::serialize(*id) + R"(,"status":"success"})";
    }
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    return res;
}

/// The answers waiting for the next tick (one I/O thread: no lock).
struct Ticker {
    std::vector<asio::steady_timer*> waiting;
};

asio::awaitable<void> tick(asio::steady_timer& timer, Ticker& ticker, std::chrono::microseconds period) {
    for (;;) {
        timer.expires_after(period);
        co_await timer.async_wait(kTuple);
        for (asio::steady_timer* t : ticker.waiting) t->cancel();
        ticker.waiting.clear();
    }
}

/// `ticker`: null when unpaced (answers written at once).
asio::awaitable<void> session(tcp::socket socket, Ticker* ticker) {
    beast::flat_buffer buffer;
    asio::steady_timer wait(socket.get_executor(), asio::steady_timer::time_point::max());
    for (;;) {
        bhttp::request_parser<bhttp::string_body> parser;
        parser.header_limit(kMaxHeader);
        parser.body_limit(kMaxBody);
        auto [rec, n] = co_await bhttp::async_read(socket, buffer, parser, kTuple);
        if (rec) co_return;
        const auto res = answer(parser.get());
        if (ticker) {
            ticker->waiting.push_back(&wait);
            co_await wait.async_wait(kTuple);
        }
        auto [wec, w] = co_await bhttp::async_write(socket, res, kTuple);
        if (wec || !res.keep_alive()) co_return;
    }
}

asio::awaitable<void> listen(tcp::acceptor& acceptor, Ticker* ticker) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(kTuple);
        if (ec) co_return;
        socket.set_option(tcp::no_delay(true));
        asio::co_spawn(acceptor.get_executor(), session(std::move(socket), ticker), asio::detached);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::chrono::microseconds period{argc > 1 ? std::strtoll(argv[1], nullptr, 10) : 0};
    asio::io_context ioc(1);
    Ticker ticker;
    const bool paced = period.count() > 0;
    asio::steady_timer tick_timer(ioc);
    if (paced) asio::co_spawn(ioc, tick(tick_timer, ticker, period), asio::detached);
    tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
    std::printf("listening %u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
    std::fflush(stdout);
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&ioc](const boost::system::error_code&, int) { ioc.stop(); });
    asio::co_spawn(ioc, listen(acceptor, paced ? &ticker : nullptr), asio::detached);
    ioc.run();
    return 0;
}
