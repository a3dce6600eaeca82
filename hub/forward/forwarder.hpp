#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/crypto/secret_box.hpp"
#include "common/http/client.hpp"
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
    std::string database_url;        ///< for the LISTEN connection
    std::size_t max_in_flight = 64;  ///< deliveries at once, all hosts together
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::seconds lease{120};  ///< longer than a delivery with a re-login can take
    common::http::ClientOptions client;
    metrics::HubMetrics* metrics = nullptr;  ///< attempts, outcomes and latency, when set
};

/// Delivers stored orders to their branch's POS: claims due jobs (FOR UPDATE SKIP LOCKED, with a lease),
/// wakes on LISTEN/NOTIFY and polls as a fallback, sends each order with the brand's bearer token, logs in
/// again once on a 401 when credentials are stored, and ends each claim by the answer table of product.md
/// section 6. Runs on the given io_context; LISTEN waits on a thread of its own.
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
    boost::asio::awaitable<void> loop();
    boost::asio::awaitable<void> deliver(ClaimedJob job);
    boost::asio::awaitable<std::optional<std::string>> login(const PosConnection& c, JobResult& r);
    boost::asio::awaitable<Classified> send_order(const PosConnection& c, const std::string& token,
                                                  const std::string& body, JobResult& r);
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
        std::optional<std::string> token;
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
    std::size_t in_flight_ = 0;  // on strand_
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

/// A forwarder id: host name, process id and a random suffix.
std::string new_forwarder_id();

}  // namespace hub::forward
