// The forwarder's upkeep, every few seconds: the POS hosts and their queues, the acceptance time-out and give-up
// sweeps, lease renewal, and the breaker changes written for the dashboard's banner.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <pqxx/pqxx>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "common/log/spawned.hpp"
#include "hub/forward/forwarder.hpp"
#include "hub/forward/forwarder_detail.hpp"
#include "hub/forward/job_state.hpp"
#include "hub/metrics/hub_metrics.hpp"

namespace hub::forward {

namespace asio = boost::asio;
using common::http::join_url;

asio::awaitable<void> Forwarder::tend() {
    using Clock = std::chrono::steady_clock;
    // Leases are renewed at a quarter of their length; one that could not be renewed stops new exchanges of its
    // jobs (lease_allows_exchange) rather than let another forwarder send them too.
    const Clock::duration renew_every = std::max<Clock::duration>(options_.lease / 4, std::chrono::seconds(1));
    Clock::time_point next_sweep{};
    Clock::time_point next_renewal = Clock::now() + renew_every;
    while (!stopping_) {
        if (Clock::now() >= next_sweep) {
            co_await refresh_hosts();
            co_await sweep_late_jobs();
            next_sweep = Clock::now() + options_.tend_interval;
        }
        if (!stopping_ && Clock::now() >= next_renewal) {
            const auto sent = Clock::now();
            auto renew = [id = options_.id, lease = options_.lease](pqxx::connection& c) {
                renew_leases(c, id, lease);
            };
            try {
                if (in_flight_ > 0) co_await pool_.run(std::move(renew));
                renewed_at_ = sent;
            } catch (const std::exception& e) {
                common::log::warn("forwarder could not renew its leases", {{"error", e.what()}});
            }
            next_renewal = sent + renew_every;
        }
        if (stopping_) break;
        tend_timer_.expires_at(std::min(next_sweep, next_renewal));
        co_await tend_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    tending_ = false;
    wake_.notify();
}

asio::awaitable<void> Forwarder::sweep_late_jobs() {
    auto time_out = [](pqxx::connection& c) { return time_out_held_jobs(c); };
    try {
        if (const std::int64_t n = co_await pool_.run(std::move(time_out)); n > 0)
            common::log::info("orders not accepted in time: not sent", {{"jobs", n}});
    } catch (const std::exception& e) {
        common::log::warn("forwarder acceptance time-out sweep failed", {{"error", e.what()}});
    }
    auto sweep = [give_up = options_.give_up](pqxx::connection& c) { return give_up_jobs(c, give_up); };
    try {
        const std::int64_t dead = co_await pool_.run(std::move(sweep));
        if (dead == 0) co_return;
        common::log::warn("forward jobs given up: not delivered in time",
                          {{"jobs", dead}, {"give_up_after_s", static_cast<std::int64_t>(options_.give_up.count())}});
        if (options_.metrics)
            for (std::int64_t i = 0; i < dead; ++i) options_.metrics->forward_finished(to_text(JobState::dead));
    } catch (const std::exception& e) {
        common::log::warn("forwarder give-up sweep failed", {{"error", e.what()}});
    }
}

asio::awaitable<void> Forwarder::refresh_hosts() {
    auto read = [env = options_.environment](pqxx::connection& c) { return pos_hosts(c, env); };
    std::vector<PosHostRow> rows;
    try {
        rows = co_await pool_.run(std::move(read));
    } catch (const std::exception& e) {
        common::log::warn("forwarder cannot read the POS connections", {{"error", e.what()}});
        co_return;
    }
    std::map<std::string, std::string> brands;
    std::map<std::string, bool> keep;
    std::map<std::string, std::int64_t> queued;
    for (const auto& row : rows) {
        const std::string host = common::http::origin(row.base_url).value_or("");
        brands[row.brand_id] = host;
        if (host.empty()) continue;
        keep[host] = true;
        queued[host] += row.due;
        PosHost& h = hosts_.at(host);
        if (h.url.empty()) {
            h.url = join_url(row.base_url, "/api/orders");
            h.ca_file = row.ca_file;
        }
    }
    brand_hosts_ = std::move(brands);
    hosts_.prune(keep);
    const auto now = std::chrono::steady_clock::now();
    for (auto& [host, h] : hosts_.all()) {
        h.gauges->queued.store(queued[host], std::memory_order_relaxed);
        h.publish(now);
    }
}

void Forwarder::write_health(const std::string& host, bool open, const std::string& error) {
    HealthWrite w{host, open, error, {}};
    for (const auto& [brand, h] : brand_hosts_)
        if (h == host) w.brands.push_back(brand);
    health_queue_.push_back(std::move(w));
    if (health_writing_) return;
    health_writing_ = true;
    asio::co_spawn(strand_, health_writer(), common::log::on_failure("recording a POS breaker failed"));
}

asio::awaitable<void> Forwarder::health_writer() {
    // In order, one at a time: an opening recorded after the closing that followed it would leave a false banner.
    while (!health_queue_.empty()) {
        HealthWrite w = std::move(health_queue_.front());
        health_queue_.pop_front();
        auto write = [w, env = options_.environment, id = options_.id](pqxx::connection& c) {
            write_pos_health(c, env, w.host, w.open, w.error, w.brands, id);
        };
        try {
            co_await pool_.run(std::move(write));
        } catch (const std::exception& e) {
            common::log::warn("could not record a POS breaker change", {{"host", w.host}, {"error", e.what()}});
        }
    }
    health_writing_ = false;
    wake_.notify();
}

}  // namespace hub::forward
