#pragma once

#include <cstddef>
#include <cstdint>

namespace common::http::detail {

/// How many requests a host is allowed at once. Pure; the caller serialises access.
///   - starts at the ceiling (ClientOptions::max_connections_per_host) and stays between 1 and it;
///   - an overload signal (429, 503, a connect, write or read time-out) halves it, rounding down, but only for a
///     request sent since the last decrease (same `epoch`): a round of requests sent together halves it once;
///   - any other answer adds 1/limit, so a round of answers adds one whole slot; only whole slots count.
struct AdaptiveLimit {
    enum class Change { none, reduced, raised, recovered };  ///< recovered: back at the ceiling after a decrease

    explicit AdaptiveLimit(std::size_t max) : ceiling(static_cast<double>(max)), value(ceiling) {}
    /// The answer of a request sent at `sent_epoch`.
    Change on_answer(std::uint64_t sent_epoch, bool overloaded);
    /// Whole slots allowed now, at least one.
    std::size_t allowed() const { return value < 1 ? 1 : static_cast<std::size_t>(value); }

    double ceiling;
    double value;
    std::uint64_t epoch = 0;  ///< one more per decrease
    bool reduced = false;     ///< below the ceiling since the last decrease
};

}  // namespace common::http::detail
