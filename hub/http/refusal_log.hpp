#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace hub::http {

/// The access log of webhooks refused for an unknown key, in summary: a flood of random keys would otherwise write
/// one line per request (about 230 bytes each, thousands a second). Each refusal is counted (metrics still count
/// every request); once a second, when any were counted, one line says how many, over how long, and the request id
/// of the first of them (to find a misconfigured partner by its X-Request-Id). Every other request keeps its own
/// line. Thread-safe.
class UnknownKeyLog {
public:
    static constexpr std::chrono::seconds kPeriod{1};

    /// Counts one refused request.
    void count(std::string_view request_id);
    /// Writes the summary of the requests counted since the last one, if any; returns how many it summed up.
    std::uint64_t flush();
    /// Flushes every kPeriod on `ioc` from now on (the timer stops with the io_context).
    void start(boost::asio::io_context& ioc);

private:
    void schedule();

    std::mutex mutex_;
    std::uint64_t count_ = 0;
    std::string first_request_id_;
    std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
    std::optional<boost::asio::steady_timer> timer_;  ///< touched on its own handler's thread only after start()
};

}  // namespace hub::http
