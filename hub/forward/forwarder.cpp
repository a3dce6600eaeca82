#include "hub/forward/forwarder.hpp"

#include <unistd.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <random>

#include "common/crypto/random.hpp"
#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "common/text/excerpt.hpp"
#include "hub/forward/policy.hpp"
#include "hub/forward/secrets.hpp"
#include "hub/metrics/hub_metrics.hpp"

namespace hub::forward {
namespace {

namespace asio = boost::asio;

std::string join_url(const std::string& base, std::string_view path) {
    std::string b = base;
    while (!b.empty() && b.back() == '/') b.pop_back();
    return b + std::string(path);
}

double jitter() {
    thread_local std::mt19937 rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
}

/// Calls back on every notification of the forwarding channel.
class Receiver : public pqxx::notification_receiver {
public:
    Receiver(pqxx::connection_base& c, std::function<void()> on)
        : notification_receiver(c, "orderhub_forward_jobs"), on_(std::move(on)) {}
    void operator()(const std::string&, int) override { on_(); }

private:
    std::function<void()> on_;
};

}  // namespace

/// Answers from many deliveries end their claims in shared transactions: one commit for a batch instead of one
/// per order (at 2,000 orders/s the commits, not the statements, are what PostgreSQL spends its time on).
struct Forwarder::Finisher {
    explicit Finisher(common::db::Pool& pool)
        : batcher(
              pool,
              [](pqxx::connection& c, std::span<FinishRequest> requests, std::span<FinishOutcome> owned,
                 std::span<std::exception_ptr> errors) { finish_jobs(c, requests, owned, errors); },
              128, 2) {}
    common::db::Batcher<FinishRequest, FinishOutcome> batcher;
};

std::string new_forwarder_id() {
    char host[64] = {};
    gethostname(host, sizeof host - 1);
    return std::string(host) + "-" + std::to_string(getpid()) + "-" + common::crypto::random_token(16).substr(0, 6);
}

Forwarder::Forwarder(asio::io_context& ioc, common::db::Pool& pool, common::crypto::SecretBox box,
                     ForwarderOptions options)
    : pool_(pool),
      finisher_(std::make_unique<Finisher>(pool)),
      box_(std::move(box)),
      options_(std::move(options)),
      strand_(asio::make_strand(ioc)),
      wake_(strand_),
      client_(strand_, options_.client) {}

Forwarder::~Forwarder() {
    listen_stop_.store(true);
    if (listener_.joinable()) listener_.join();
}

void Forwarder::start() {
    listener_ = std::thread([this] { listen_thread(); });
    asio::co_spawn(strand_, loop(), [](std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            common::log::error("forwarder stopped by an error", {{"error", ex.what()}});
        }
    });
    common::log::info("forwarder started", {{"forwarder", options_.id}, {"environment", options_.environment}});
}

void Forwarder::stop() {
    listen_stop_.store(true);
    asio::post(strand_, [this] {
        stopping_ = true;
        wake_.notify();
    });
}

void Forwarder::wake() {
    asio::post(strand_, [this] { wake_.notify(); });
}

void Forwarder::listen_thread() {
    // A connection of its own, blocked in LISTEN; polling covers whatever is missed while it reconnects.
    while (!listen_stop_.load()) {
        try {
            pqxx::connection conn(options_.database_url);
            Receiver receiver(conn, [this] { wake(); });
            while (!listen_stop_.load()) conn.await_notification(1, 0);
        } catch (const std::exception& e) {
            if (listen_stop_.load()) break;
            common::log::warn("forwarder LISTEN connection lost; polling meanwhile", {{"error", e.what()}});
            for (int i = 0; i < 10 && !listen_stop_.load(); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
}

asio::awaitable<void> Forwarder::loop() {
    while (!stopping_) {
        const std::size_t free = options_.max_in_flight - in_flight_;
        std::vector<ClaimedJob> jobs;
        if (free > 0) {
            auto claim = [id = options_.id, limit = static_cast<int>(free), lease = options_.lease,
                          env = options_.environment](pqxx::connection& c) {
                return claim_jobs(c, id, limit, lease, env);
            };
            try {
                jobs = co_await pool_.run(std::move(claim));
            } catch (const std::exception& e) {
                common::log::warn("forwarder cannot claim jobs", {{"error", e.what()}});
            }
        }
        for (auto& job : jobs) {
            ++in_flight_;
            asio::co_spawn(strand_, deliver(std::move(job)), [this](std::exception_ptr e) {
                if (e) {
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                        common::log::error("delivery failed", {{"error", ex.what()}});
                    }
                }
                --in_flight_;
                wake_.notify();
            });
        }
        if (!jobs.empty() && jobs.size() == free) continue;  // more may be due right now
        // A NOTIFY or a delivery's end during the claim returns at once: the claim may not have seen its job.
        co_await wake_.sleep_for(options_.poll_interval);
    }
    // Stopping: let deliveries in flight end (each is bounded by the client's time-outs), then give back the rest.
    while (in_flight_ > 0) co_await wake_.sleep_for(std::chrono::milliseconds(50));
    auto release = [id = options_.id](pqxx::connection& c) { release_jobs(c, id); };
    try {
        co_await pool_.run(std::move(release));
    } catch (const std::exception& e) {
        common::log::warn("forwarder could not release its jobs; their leases will expire", {{"error", e.what()}});
    }
    finished_.store(true);
}

asio::awaitable<Classified> Forwarder::send_order(const PosConnection& c, const std::string& token,
                                                  const std::string& body, JobResult& r) {
    common::http::ClientRequest req;
    req.url = join_url(c.base_url, "/api/orders");
    req.headers = {
        {"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}, {"Accept", "application/json"}};
    req.body = body;
    req.ca_file = c.ca_file;
    auto res = co_await client_.send(std::move(req));
    AttemptRecord a;
    a.url = join_url(c.base_url, "/api/orders");
    a.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(res.latency).count();
    Classified cl;
    if (res.response) {
        a.http_status = res.response->status;
        a.response_excerpt = common::text::excerpt(res.response->body, 500);
        cl = classify_response(res.response->status, res.response->body, res.response->header("Retry-After"));
    } else {
        cl = classify_failure(res.failure == common::http::ClientFailure::bad_url,
                              std::string(common::http::to_string(res.failure)) + ": " + res.error);
        a.error = cl.reason;
    }
    switch (cl.verdict) {
        case Verdict::delivered: a.outcome = "delivered"; break;
        case Verdict::unauthorized: a.outcome = "unauthorized"; break;
        case Verdict::rejected: a.outcome = "rejected"; break;
        case Verdict::retry: a.outcome = "retry"; break;
    }
    if (a.error.empty() && cl.verdict != Verdict::delivered) a.error = cl.reason;
    r.attempts.push_back(a);
    co_return cl;
}

const Forwarder::CachedToken* Forwarder::cached_token(const PosConnection& c) const {
    auto it = tokens_.find(c.brand_id + ":" + c.environment);
    if (it == tokens_.end()) return nullptr;
    const auto& t = it->second;
    return c.token_sealed == t.sealed || c.token_sealed == t.replaced ? &t : nullptr;
}

std::optional<std::string> Forwarder::current_token(const PosConnection& c) {
    if (const auto* t = cached_token(c)) return t->token;
    if (c.token_sealed.empty()) return std::nullopt;
    return box_.open(c.token_sealed, token_aad(c.brand_id, c.environment));
}

std::optional<std::string> Forwarder::newer_token(const PosConnection& c, const std::string& failed) {
    const auto* t = cached_token(c);
    if (t == nullptr || t->token == failed) return std::nullopt;
    return t->token;
}

asio::awaitable<std::optional<std::string>> Forwarder::login(const PosConnection& c, JobResult& r) {
    const std::string key = c.brand_id + ":" + c.environment;
    if (auto it = logins_.find(key); it != logins_.end()) {
        // Someone is logging in to this POS already: wait for that login instead of starting another.
        auto flight = it->second;
        while (!flight->finished) co_await flight->done.async_wait(asio::as_tuple(asio::use_awaitable));
        co_return flight->token;
    }
    auto flight = std::make_shared<LoginFlight>(strand_);
    logins_[key] = flight;
    auto password = box_.open(c.password_sealed, password_aad(c.brand_id, c.environment));
    AttemptRecord a;
    a.url = join_url(c.base_url, "/api/login");
    std::optional<std::string> token;
    if (!password) {
        a.error = "the stored password cannot be opened with this ORDERHUB_SECRET_KEY";
    } else {
        common::http::ClientRequest req;
        req.url = a.url;
        req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
        req.body = boost::json::serialize(boost::json::object{{"email", c.email}, {"password", *password}});
        req.ca_file = c.ca_file;
        auto res = co_await client_.send(std::move(req));
        a.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(res.latency).count();
        if (res.response) {
            a.http_status = res.response->status;
            boost::system::error_code ec;
            auto v = boost::json::parse(res.response->body, ec);
            const auto* o = ec ? nullptr : v.if_object();
            const auto* t = o ? o->if_contains("access_token") : nullptr;
            if (res.response->status == 200 && t && t->is_string() && !t->get_string().empty())
                token = std::string(t->get_string());
            else
                a.error = "login refused: HTTP " + std::to_string(res.response->status);
        } else {
            a.error = std::string(common::http::to_string(res.failure)) + ": " + res.error;
        }
    }
    a.outcome = token ? "logged_in" : "login_failed";  // never the token itself
    r.attempts.push_back(a);
    if (token) {
        r.new_token_sealed = box_.seal(*token, token_aad(c.brand_id, c.environment));
        tokens_[key] = CachedToken{*r.new_token_sealed, c.token_sealed, *token};
    }
    flight->token = token;
    flight->finished = true;
    flight->done.cancel();
    logins_.erase(key);
    co_return token;
}

asio::awaitable<void> Forwarder::deliver(ClaimedJob job) {
    JobResult r;
    r.order_id = job.order_id;
    r.first_attempt = job.attempt;
    std::optional<Classified> outcome;
    if (job.delivery_status == "cancelled") {
        r.state = "cancelled";
        r.error = "cancelled before it was sent";
    } else if (!job.connection) {
        r.state = "auth_failed";
        r.error = "no POS connection for brand " + job.source.brand_id + " in environment " + options_.environment +
                  ": run `orderhub pos set`";
    } else {
        const PosConnection& c = *job.connection;
        const bool can_login = !c.email.empty();
        std::optional<std::string> token = current_token(c);
        bool logged_in = false;
        if (!token && can_login) {
            token = co_await login(c, r);
            logged_in = true;
        }
        if (!token) {
            r.state = "auth_failed";
            r.error = c.token_sealed.empty() || can_login ? "no usable token and the login failed"
                                                          : "the stored token cannot be opened with this "
                                                            "ORDERHUB_SECRET_KEY";
        } else {
            const std::string body = pos_order_json(job.source);
            outcome = co_await send_order(c, *token, body, r);
            if (outcome->verdict == Verdict::unauthorized && can_login && !logged_in) {
                // One login and one retry per claim: a POS that keeps refusing new tokens ends in auth_failed.
                // Another delivery may have logged in meanwhile: its token is tried before a login of our own.
                std::optional<std::string> fresh = newer_token(c, *token);
                if (!fresh) fresh = co_await login(c, r);
                if (fresh) outcome = co_await send_order(c, *fresh, body, r);
            }
            switch (outcome->verdict) {
                case Verdict::delivered:
                    r.state = "delivered";
                    r.pos_order_id = outcome->pos_order_id;
                    break;
                case Verdict::rejected:
                    r.state = "rejected";
                    r.error = outcome->reason;
                    break;
                case Verdict::unauthorized:
                    r.state = "auth_failed";
                    r.error = outcome->reason;
                    break;
                case Verdict::retry:
                    if (job.attempt >= kMaxAttempts) {
                        r.state = "dead";
                        r.error = "gave up after " + std::to_string(job.attempt) + " attempts: " + outcome->reason;
                    } else {
                        r.state = "pending";
                        r.delay = backoff(job.attempt, jitter(), outcome->retry_after);
                        r.error = outcome->reason;
                    }
                    break;
            }
        }
    }
    // One line per HTTP exchange and one for the claim's end, each with the hub order id and the platform's
    // (the webhook's request line has both), so that an operator can follow an order from webhook to POS.
    int exchange = r.first_attempt;
    for (const auto& a : r.attempts) {
        const bool login = a.outcome == "logged_in" || a.outcome == "login_failed";
        common::log::write(
            a.outcome == "delivered" || a.outcome == "logged_in" ? common::log::Level::info : common::log::Level::warn,
            "forward attempt",
            {{"forwarder", options_.id},
             {"order_id", r.order_id},
             {"external_id", job.source.external_id},
             {"partner_label", job.source.partner_label},
             {"attempt", exchange++},
             {"call", login ? "login" : "order"},
             {"outcome", a.outcome},
             {"http_status", a.http_status},
             {"latency_ms", a.latency_ms},
             {"error", a.error}});
        if (options_.metrics) options_.metrics->forward_attempt(a.outcome, a.latency_ms);
    }
    const auto& last = r.attempts.empty() ? AttemptRecord{} : r.attempts.back();
    common::log::info("forward", {{"forwarder", options_.id},
                                  {"order_id", r.order_id},
                                  {"external_id", job.source.external_id},
                                  {"partner_label", job.source.partner_label},
                                  {"pos_branch_id", job.source.pos_branch_id},
                                  {"attempt", job.attempt},
                                  {"state", r.state},
                                  {"http_status", last.http_status},
                                  {"latency_ms", last.latency_ms},
                                  {"pos_order_id", r.pos_order_id}});
    if (options_.metrics) {
        options_.metrics->forward_finished(r.state);
        // The hub's clock against the database's storage time: skew between the two hosts shows up here.
        if (r.state == "delivered" && !job.scheduled) {
            const double now =
                std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
            options_.metrics->forward_latency(std::max(0.0, now - job.stored_at));
        }
    }
    // The outcome is known: record it, and keep trying while the database is away (a restart), for as long as
    // the claim is ours. Should that fail too, the lease expires and another claim re-sends; the POS's
    // partner_reference keeps that from doubling the order.
    const auto give_up = std::chrono::steady_clock::now() + options_.lease - std::chrono::seconds(2);
    for (bool retrying = false;; retrying = true) {
        FinishRequest request{options_.id, r, std::nullopt, retrying};
        if (job.connection) request.token_owner = std::pair{job.connection->brand_id, job.connection->environment};
        try {
            const FinishOutcome outcome = co_await finisher_->batcher.submit(std::move(request));
            if (!outcome.owned) common::log::warn("forward claim was lost before it ended", {{"order_id", r.order_id}});
            break;
        } catch (const std::exception& e) {
            if (std::chrono::steady_clock::now() >= give_up) {
                common::log::warn("could not record a delivery; it will be sent again after its lease",
                                  {{"order_id", r.order_id}, {"error", e.what()}});
                break;
            }
            if (!retrying)
                common::log::warn("could not record a delivery yet; retrying",
                                  {{"order_id", r.order_id}, {"error", e.what()}});
        }
        asio::steady_timer pause(strand_, std::chrono::milliseconds(500));
        co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

}  // namespace hub::forward
