#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hub/forward/breaker.hpp"

namespace common::metrics {
class Registry;
}

namespace hub::forward {

/// What /metrics shows of one POS host; written on the forwarder's strand, read by any thread.
struct HostGauges {
    std::atomic<std::int64_t> state{0};  ///< 0 closed, 1 half open, 2 open
    std::atomic<std::int64_t> in_flight{0};
    std::atomic<std::int64_t> queued{0};
};

/// One POS host (scheme://host:port): its bulkhead (deliveries in flight), its circuit breaker, and its due jobs
/// waiting in the database.
struct PosHost {
    explicit PosHost(BreakerSettings s) : breaker(s), gauges(std::make_shared<HostGauges>()) {}
    Breaker breaker;
    std::size_t in_flight = 0;
    std::string url;  ///< a POS URL on this host and its CA file: the client's adaptive limit is per pool
    std::string ca_file;
    std::string last_error;  ///< of the last failed exchange
    /// Until then no job waits for a slot of this host (see host_room()): one went back unsent, so its slots do not
    /// free up within the client's queue time-out (a hung or very slow POS).
    Breaker::Clock::time_point no_claim_ahead_until{};
    std::shared_ptr<HostGauges> gauges;

    /// Updates the gauges from the state at `now`.
    void publish(Breaker::Clock::time_point now);
};

/// The POS hosts one forwarder delivers to, by host. Not thread-safe (the forwarder's strand), except collect(),
/// which /metrics calls from any thread. Hosts come and go with the POS connections of the environment; the metric
/// series are those of the hosts known now (bounded by the configured POS connections).
class PosHosts {
public:
    explicit PosHosts(BreakerSettings settings) : settings_(settings) {}

    /// The host, made on first use.
    PosHost& at(const std::string& host);
    PosHost* find(const std::string& host);
    /// Forgets the hosts not in `keep` that have nothing in flight and a closed breaker.
    void prune(const std::map<std::string, bool>& keep);
    /// The earliest probe time of an open breaker, if any.
    std::optional<Breaker::Clock::time_point> next_probe() const;

    std::map<std::string, PosHost>& all() { return hosts_; }

    /// Registers the three families orderhub_pos_breaker_state, orderhub_pos_in_flight, orderhub_pos_queued.
    void expose(common::metrics::Registry& registry);

private:
    /// What /metrics reads: the hosts' gauges, the list replaced under the mutex when hosts come or go. Shared with
    /// the registry's collectors, so a scrape after the forwarder is gone reads an empty list.
    struct Exposed {
        std::mutex mutex;
        std::vector<std::pair<std::string, std::shared_ptr<HostGauges>>> list;
    };
    void publish_list();

    BreakerSettings settings_;
    std::map<std::string, PosHost> hosts_;
    std::shared_ptr<Exposed> exposed_ = std::make_shared<Exposed>();
};

}  // namespace hub::forward
