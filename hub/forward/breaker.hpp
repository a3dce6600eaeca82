#pragma once

#include <chrono>
#include <string_view>

namespace hub::forward {

/// The settings of every POS host's circuit breaker (`orderhub serve --forward-breaker-*`).
struct BreakerSettings {
    int failures_to_open = 5;                     ///< consecutive failures that open a closed breaker
    std::chrono::milliseconds first_probe{5000};  ///< from opening to the first probe
    std::chrono::milliseconds max_probe{60000};   ///< the probe interval doubles up to this
};

enum class BreakerState { closed, half_open, open };

/// "closed", "half_open", "open".
std::string_view to_string(BreakerState state);

/// What one HTTP exchange with a host says about the host (not about the order).
enum class HostSignal {
    answered,  ///< an HTTP answer other than 502/503/504, whatever it says about the order
    failed,    ///< no answer (refused, time-out, reset, TLS failure) or 502/503/504
};

/// The signal of an exchange: `http_status` 0 when no answer arrived; `bad_url` for a URL that cannot work (a
/// configuration error, not the host's fault: counted as `answered`, so it never opens a breaker).
HostSignal host_signal(unsigned http_status, bool bad_url);

/// What a recorded signal changed.
enum class BreakerChange { none, opened, probe_failed, closed };

/// The circuit breaker of one POS host: a pure state machine; the caller gives the time and the jitter.
///
/// - closed: deliveries go; `failures_to_open` consecutive failures open it (an answer resets the count).
/// - open: nothing goes until the probe time (`first_probe` after opening, ±20 % jitter), then half open.
/// - half open: one delivery goes, the probe. Its answer closes the breaker; its failure opens it again with twice
///   the previous interval, up to `max_probe`. A probe given up without an exchange frees the slot at once.
/// Answers of deliveries sent before the breaker opened still count: any answer closes it (the host is back); their
/// failures change nothing while it is open. Not thread-safe: one owner (the forwarder's strand).
class Breaker {
public:
    using Clock = std::chrono::steady_clock;

    explicit Breaker(BreakerSettings settings = {}) : settings_(settings) {}

    /// The state at `now`: an open breaker whose probe time has come reads as half open.
    BreakerState state(Clock::time_point now) const;
    /// How many deliveries may start now beside those in flight: `kUnlimited` when closed, 1 when a probe may go, 0
    /// otherwise.
    static constexpr int kUnlimited = 1 << 30;
    int room(Clock::time_point now) const;
    /// Takes the room for one delivery; true when it is the probe. Call only when room(now) > 0.
    bool admit();
    /// Records what an exchange said; `probe` when the delivery was admitted as the probe; `jitter` in [-1, 1].
    BreakerChange record(HostSignal signal, bool probe, Clock::time_point now, double jitter);
    /// The probe went without an exchange (given back): the next delivery may probe at once.
    void probe_abandoned();

    int consecutive_failures() const { return failures_; }
    /// The wait between the last opening and its probe.
    std::chrono::milliseconds interval() const { return interval_; }
    Clock::time_point next_probe() const { return next_probe_; }

private:
    void open(Clock::time_point now, double jitter);

    BreakerSettings settings_;
    bool open_ = false;
    bool probing_ = false;  // the probe is in flight
    int failures_ = 0;
    std::chrono::milliseconds interval_{0};
    Clock::time_point next_probe_{};
};

}  // namespace hub::forward
