// hub::forward::Wakeup, the forwarder's sleep between claims: a wake-up given while nobody sleeps is not lost.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include "hub/forward/wakeup.hpp"

namespace asio = boost::asio;
using hub::forward::Wakeup;
using namespace std::chrono_literals;

namespace {

/// Starts one sleep of `d` on `w`; `done` becomes true when it returns, `woken` what it returned.
void sleep_on(asio::io_context& ioc, Wakeup& w, std::chrono::steady_clock::duration d, bool& done,
              bool* woken = nullptr) {
    asio::co_spawn(
        ioc,
        [](Wakeup& wake, std::chrono::steady_clock::duration length, bool& flag, bool* said) -> asio::awaitable<void> {
            const bool w = co_await wake.sleep_for(length);
            if (said) *said = w;
            flag = true;
        }(w, d, done, woken),
        asio::detached);
}

}  // namespace

TEST_CASE("wakeup: a wake-up given while nobody sleeps ends the next sleep at once, which says it was woken",
          "[forward]") {
    asio::io_context ioc;
    Wakeup w(ioc.get_executor());
    w.notify();  // e.g. a NOTIFY that arrived while a claim was running
    bool done = false;
    bool woken = false;
    sleep_on(ioc, w, 1h, done, &woken);
    ioc.run_for(2s);  // the guard of a failure; an hour's sleep ends here only when woken
    CHECK(done);
    CHECK(woken);
}

TEST_CASE("wakeup: a wake-up during a sleep ends it, and once used the next sleep lasts", "[forward]") {
    asio::io_context ioc;
    Wakeup w(ioc.get_executor());
    bool first = false;
    bool woken = false;
    sleep_on(ioc, w, 1h, first, &woken);
    ioc.poll();  // the sleep has started
    CHECK_FALSE(first);
    asio::post(ioc, [&] { w.notify(); });
    ioc.run_for(2s);
    CHECK(first);
    CHECK(woken);

    ioc.restart();
    bool second = false;
    sleep_on(ioc, w, 1h, second);
    ioc.run_for(100ms);
    CHECK_FALSE(second);  // the wake-up was used by the first sleep
    w.notify();
    ioc.run_for(2s);
    CHECK(second);
}

TEST_CASE("wakeup: without a wake-up a sleep ends when its time is up, and says so", "[forward]") {
    asio::io_context ioc;
    Wakeup w(ioc.get_executor());
    bool done = false;
    bool woken = true;
    sleep_on(ioc, w, 10ms, done, &woken);
    ioc.run_for(5s);
    CHECK(done);
    CHECK_FALSE(woken);  // the forwarder's poll: time ran out
}
