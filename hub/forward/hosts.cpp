#include "hub/forward/hosts.hpp"

#include "common/metrics/metrics.hpp"

namespace hub::forward {

void PosHost::publish(Breaker::Clock::time_point now) {
    const auto s = breaker.state(now);
    gauges->state.store(s == BreakerState::closed      ? 0
                        : s == BreakerState::half_open ? 1
                                                       : 2,
                        std::memory_order_relaxed);
    gauges->in_flight.store(static_cast<std::int64_t>(in_flight), std::memory_order_relaxed);
}

PosHost& PosHosts::at(const std::string& host) {
    auto it = hosts_.find(host);
    if (it != hosts_.end()) return it->second;
    auto& h = hosts_.emplace(host, PosHost(settings_)).first->second;
    publish_list();
    return h;
}

PosHost* PosHosts::find(const std::string& host) {
    auto it = hosts_.find(host);
    return it == hosts_.end() ? nullptr : &it->second;
}

void PosHosts::prune(const std::map<std::string, bool>& keep) {
    const auto now = Breaker::Clock::now();
    bool changed = false;
    for (auto it = hosts_.begin(); it != hosts_.end();) {
        const auto& h = it->second;
        if (!keep.contains(it->first) && h.in_flight == 0 && h.breaker.state(now) == BreakerState::closed) {
            it = hosts_.erase(it);
            changed = true;
        } else {
            ++it;
        }
    }
    if (changed) publish_list();
}

std::optional<Breaker::Clock::time_point> PosHosts::next_probe() const {
    std::optional<Breaker::Clock::time_point> first;
    for (const auto& [host, h] : hosts_) {
        const auto now = Breaker::Clock::now();
        if (h.breaker.state(now) == BreakerState::closed || h.breaker.room(now) > 0) continue;
        if (h.breaker.next_probe() > now && (!first || h.breaker.next_probe() < *first)) first = h.breaker.next_probe();
    }
    return first;
}

void PosHosts::publish_list() {
    std::vector<std::pair<std::string, std::shared_ptr<HostGauges>>> list;
    list.reserve(hosts_.size());
    for (const auto& [host, h] : hosts_) list.emplace_back(host, h.gauges);
    std::lock_guard lock(exposed_->mutex);
    exposed_->list = std::move(list);
}

void PosHosts::expose(common::metrics::Registry& registry) {
    using common::metrics::Type;
    using common::metrics::Writer;
    auto family = [&](const char* name, const char* help, std::atomic<std::int64_t> HostGauges::*field) {
        registry.collector(name, help, Type::gauge, [exposed = exposed_, name, field](Writer& w) {
            std::lock_guard lock(exposed->mutex);
            for (const auto& [host, g] : exposed->list)
                w.sample(name, {{"host", host}}, static_cast<double>(((*g).*field).load(std::memory_order_relaxed)));
        });
    };
    family("orderhub_pos_breaker_state",
           "Circuit breaker of each POS host this forwarder delivers to: 0 closed, 1 half open (probing), 2 open "
           "(nothing is sent).",
           &HostGauges::state);
    family("orderhub_pos_in_flight", "Deliveries in flight to each POS host (bounded by --forward-per-host).",
           &HostGauges::in_flight);
    family("orderhub_pos_queued",
           "Due jobs waiting in the database for each POS host (read every few seconds; database-wide).",
           &HostGauges::queued);
}

}  // namespace hub::forward
