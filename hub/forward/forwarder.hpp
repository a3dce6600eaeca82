#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/crypto/secret_box.hpp"
#include "common/http/client.hpp"
#include "hub/forward/breaker.hpp"
#include "hub/forward/hosts.hpp"
#include "hub/forward/outbox.hpp"
#include "hub/forward/policy.hpp"
#include "hub/forward/wakeup.hpp"

namespace common::db {
class Pool;
}

namespace hub::metrics {
class HubMetrics;
}

namespace hub::forward {

struct ForwarderOptions {
    std::string id;  ///< names this forwarder's claims (host, pid, random)
    std::string environment = "production";
    std::string database_url;         ///< for the LISTEN connection
    std::size_t max_in_flight = 512;  ///< deliveries at once, all hosts together
    std::size_t per_host = 64;        ///< deliveries at once to one POS host (its bulkhead)
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::seconds lease{120};     ///< renewed while held; longer than a delivery with a re-login can take
    std::chrono::seconds give_up{1800};  ///< a job not delivered this long after it was due is dead
    std::chrono::milliseconds tend_interval{5000};  ///< the give-up sweep and the read of the POS hosts
    BreakerSettings breaker;
    common::http::ClientOptions client;
    metrics::HubMetrics* metrics = nullptr;  ///< attempts, outcomes and latency, when set
};

/// Delivers stored orders to their branch's POS: claims due jobs (FOR UPDATE SKIP LOCKED, with a lease it renews),
/// wakes on LISTEN/NOTIFY and polls as a fallback, sends each order with the brand's bearer token, logs in again
/// once on a 401 when credentials are stored, and ends each claim by the answer table of product.md section 6.
///
/// Isolation between POS hosts (product.md section 10): each host (scheme, host, port) has a bulkhead of
/// `per_host` deliveries and a circuit breaker (hub/forward/breaker.hpp). A claim takes per brand at most its
/// host's room (hub/forward/bulkhead.hpp: a healthy host's slots and as many again waiting for them, with a
/// deadline), and the jobs of a host whose breaker is open stay in the database. A job is never sent on a lease
/// that could expire during the exchange. Runs on the given io_context; LISTEN waits on a thread of its own.
class Forwarder {
public:
    Forwarder(boost::asio::io_context& ioc, common::db::Pool& pool, common::crypto::SecretBox box,
              ForwarderOptions options);
    ~Forwarder();
    Forwarder(const Forwarder&) = delete;
    Forwarder& operator=(const Forwarder&) = delete;

    void start();
    /// Stops claiming; deliveries in flight finish, then the jobs still held are released.
    void stop();
    /// True until stop() has completed its release.
    bool busy() const { return !finished_.load(); }

private:
    /// A claimed job on its way: its POS host ("" when it has none) and whether it is that host's probe.
    struct Delivery {
        ClaimedJob job;
        std::string host;
        bool probe = false;   ///< its next exchange is the host's probe
        bool probed = false;  ///< it was admitted as the probe (for the log)
        bool unsent = false;  ///< a request found no free slot of its host in time: nothing was sent
        std::chrono::steady_clock::time_point claimed_at;  ///< taken before the claim was sent
        /// It still takes a slot of its host's bulkhead: from its start until its exchanges are over (the record
        /// of its end, which may wait for others to share it, no longer holds the host's slot).
        std::shared_ptr<bool> holds_host;
    };

    boost::asio::awaitable<void> loop();
    /// Claims what the hosts have room for and starts those deliveries; false when nothing more is due now.
    boost::asio::awaitable<bool> claim_and_start();
    void start_delivery(ClaimedJob job, std::chrono::steady_clock::time_point claimed_at,
                        std::vector<std::string>& give_back, std::map<std::string, int>& room);
    boost::asio::awaitable<void> deliver(Delivery d);
    /// Gives back `d`'s slot of its host's bulkhead, once.
    void free_host_slot(Delivery& d);
    boost::asio::awaitable<void> exchange_all(Delivery& d, JobResult& r);
    boost::asio::awaitable<void> record(const Delivery& d, const JobResult& r);
    void log_result(const Delivery& d, const JobResult& r);
    boost::asio::awaitable<LoginAnswer> login(Delivery& d, JobResult& r);
    boost::asio::awaitable<Classified> send_order(Delivery& d, const std::string& token, const std::string& body,
                                                  JobResult& r);
    /// One exchange's word on its host: feeds the breaker, logs and records a change.
    void note_exchange(Delivery& d, const common::http::ClientResult& res, std::string_view why);
    /// True when the claim's lease outlasts one more exchange (else the job must not be sent now).
    bool lease_allows_exchange(const Delivery& d) const;
    /// How many more deliveries each known host may start now.
    std::map<std::string, int> host_room();
    /// The next claim looks at every brand (after a NOTIFY, a poll, a claim that filled its limit); otherwise only
    /// at `backlog_`, the brands whose last claim took all it could (a delivery's end frees room for those only).
    bool full_look_ = true;
    std::set<std::string> backlog_;
    boost::asio::awaitable<void> give_back(std::vector<std::string> orders);
    /// Every few seconds: the POS hosts and their queues, the give-up sweep, lease renewal.
    boost::asio::awaitable<void> tend();
    boost::asio::awaitable<void> refresh_hosts();
    boost::asio::awaitable<void> sweep_late_jobs();
    void write_health(const std::string& host, bool open, const std::string& error);
    boost::asio::awaitable<void> health_writer();
    void listen_thread();
    void wake();
    /// The token to use for `c`: the one this forwarder logged in for, while the stored token is still that one
    /// (or none is stored yet); else the stored token.
    std::optional<std::string> current_token(const PosConnection& c);
    /// A token this forwarder obtained for the same configuration other than `failed`, if any.
    std::optional<std::string> newer_token(const PosConnection& c, const std::string& failed);

    /// One login at a time per POS connection: deliveries that need a token meanwhile wait for its result
    /// instead of logging in themselves (a POS throttles bursts of logins).
    struct LoginFlight {
        // The expiry is set once: setting it again would cancel the waits already pending on the timer.
        explicit LoginFlight(boost::asio::strand<boost::asio::io_context::executor_type>& s) : done(s) {
            done.expires_at(boost::asio::steady_timer::time_point::max());
        }
        boost::asio::steady_timer done;
        LoginAnswer result;
        bool finished = false;
    };

    common::db::Pool& pool_;
    struct Finisher;  // group commit of the claims' ends (hub/forward/forwarder.cpp)
    std::unique_ptr<Finisher> finisher_;
    common::crypto::SecretBox box_;
    ForwarderOptions options_;
    boost::asio::strand<boost::asio::io_context::executor_type> strand_;
    Wakeup wake_;  // on strand_: the loop sleeps on it between claims
    common::http::Client client_;
    std::size_t in_flight_ = 0;                       // on strand_
    PosHosts hosts_;                                  // on strand_
    std::map<std::string, std::string> brand_hosts_;  // on strand_: brand -> POS host ("" without a connection)
    /// When the last lease renewal that succeeded was sent (on strand_): every job claimed before holds its lease
    /// until this plus the lease.
    std::chrono::steady_clock::time_point renewed_at_{};
    boost::asio::steady_timer tend_timer_;  // on strand_
    bool tending_ = false;                  // on strand_
    struct HealthWrite {
        std::string host;
        bool open = false;
        std::string error;
        std::vector<std::string> brands;
    };
    std::deque<HealthWrite> health_queue_;  // on strand_: written in order by one writer
    bool health_writing_ = false;           // on strand_
    /// A token from this forwarder's login. It stands while the stored token is the one the login replaced
    /// (jobs claimed before the new one was stored) or the one it stored; an operator's `pos set` ends it.
    struct CachedToken {
        std::string sealed;
        std::string replaced;
        std::string token;
    };
    const CachedToken* cached_token(const PosConnection& c) const;
    std::map<std::string, CachedToken> tokens_;                   // on strand_: brand:env -> token
    std::map<std::string, std::shared_ptr<LoginFlight>> logins_;  // on strand_
    bool stopping_ = false;                                       // on strand_
    std::atomic<bool> listen_stop_{false};
    std::atomic<bool> finished_{false};
    std::thread listener_;
};

/// The longest one exchange with a POS can take with these time-outs (a wait for a slot, connect, TLS handshake,
/// write, read), plus a margin: a claim's lease must be longer, or no job could ever be sent on it.
std::chrono::milliseconds longest_exchange(const common::http::ClientOptions& client);

/// A forwarder id: host name, process id and a random suffix.
std::string new_forwarder_id();

}  // namespace hub::forward
