#include "hub/forward/breaker.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/text/names.hpp"

namespace hub::forward {

std::string_view to_string(BreakerState state) {
    static constexpr std::array<std::string_view, 3> kNames = {"closed", "half_open", "open"};
    return common::text::name_of(kNames, state);
}

HostSignal host_signal(unsigned http_status, bool bad_url) {
    if (bad_url) return HostSignal::answered;
    if (http_status == 0 || http_status == 502 || http_status == 503 || http_status == 504) return HostSignal::failed;
    return HostSignal::answered;
}

BreakerState Breaker::state(Clock::time_point now) const {
    if (!open_) return BreakerState::closed;
    return probing_ || now >= next_probe_ ? BreakerState::half_open : BreakerState::open;
}

int Breaker::room(Clock::time_point now) const {
    if (!open_) return kUnlimited;
    return !probing_ && now >= next_probe_ ? 1 : 0;
}

bool Breaker::admit() {
    if (!open_) return false;
    probing_ = true;
    return true;
}

void Breaker::probe_abandoned() { probing_ = false; }

void Breaker::open(Clock::time_point now, double jitter) {
    const double j = 1.0 + 0.2 * std::clamp(jitter, -1.0, 1.0);
    next_probe_ = now + std::chrono::milliseconds(std::llround(static_cast<double>(interval_.count()) * j));
    open_ = true;
    probing_ = false;
}

BreakerChange Breaker::record(HostSignal signal, bool probe, Clock::time_point now, double jitter) {
    if (signal == HostSignal::answered) {
        failures_ = 0;
        if (!open_) return BreakerChange::none;
        open_ = false;
        probing_ = false;
        interval_ = std::chrono::milliseconds(0);
        return BreakerChange::closed;
    }
    ++failures_;
    if (!open_) {
        if (failures_ < settings_.failures_to_open) return BreakerChange::none;
        interval_ = settings_.first_probe;
        open(now, jitter);
        return BreakerChange::opened;
    }
    if (!probe) return BreakerChange::none;  // a delivery sent before it opened
    interval_ = std::min(interval_ * 2, settings_.max_probe);
    open(now, jitter);
    return BreakerChange::probe_failed;
}

}  // namespace hub::forward
