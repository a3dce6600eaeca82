#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <utility>

namespace hub::forward {

/// A sleep that a wake-up cuts short, and that remembers a wake-up given while nobody slept: the next sleep then
/// returns at once. The forwarder sleeps on one between claims; a NOTIFY of a new job, or a delivery's end, that
/// arrives while a claim is running must not wait for the next poll. Not thread-safe: use it on one strand.
class Wakeup {
public:
    explicit Wakeup(const boost::asio::any_io_executor& ex) : timer_(ex) {}

    /// Ends the current sleep, or the next one before it starts.
    void notify() {
        pending_ = true;
        timer_.cancel();
    }

    /// Sleeps for `d` at most; returns at once when woken since the last sleep. What woke it is consumed. True when
    /// woken, false when `d` ran out.
    boost::asio::awaitable<bool> sleep_for(std::chrono::steady_clock::duration d) {
        if (!pending_) {
            timer_.expires_after(d);
            co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
        co_return std::exchange(pending_, false);
    }

private:
    boost::asio::steady_timer timer_;
    bool pending_ = false;
};

}  // namespace hub::forward
