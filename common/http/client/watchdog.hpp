#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

namespace common::http::detail {

/// Cancels (or closes) a socket, or cancels a resolver, when its time is up. Lives on the request's strand, as
/// does every object it touches; a later arm() or disarm() voids an earlier arm().
class Watchdog {
public:
    using tcp = boost::asio::ip::tcp;

    explicit Watchdog(const boost::asio::any_io_executor& ex) : timer_(ex) {}
    ~Watchdog() { disarm(); }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    /// At `deadline`: cancels `resolver` and cancels (or, with `close`, closes) `socket`; either may be null.
    void arm(std::chrono::steady_clock::time_point deadline, tcp::socket* socket, tcp::resolver* resolver, bool close) {
        disarm();
        state_->socket = socket;
        state_->resolver = resolver;
        state_->close = close;
        state_->fired = false;
        timer_.expires_at(deadline);
        timer_.async_wait([state = state_, gen = state_->generation](boost::system::error_code ec) {
            if (ec || state->generation != gen) return;
            state->fired = true;
            boost::system::error_code ignored;
            if (state->resolver) state->resolver->cancel();
            if (state->socket) {
                if (state->close)
                    state->socket->close(ignored);
                else
                    state->socket->cancel(ignored);
            }
        });
    }
    void disarm() {
        ++state_->generation;
        state_->socket = nullptr;
        state_->resolver = nullptr;
        timer_.cancel();
    }
    /// True when the last arm() expired.
    bool fired() const { return state_->fired; }

private:
    struct State {
        tcp::socket* socket = nullptr;
        tcp::resolver* resolver = nullptr;
        bool close = false;
        bool fired = false;
        std::uint64_t generation = 0;
    };
    std::shared_ptr<State> state_ = std::make_shared<State>();
    boost::asio::steady_timer timer_;
};

}  // namespace common::http::detail
