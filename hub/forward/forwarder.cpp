#include "hub/forward/forwarder.hpp"

#include <unistd.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <random>

#include "common/crypto/random.hpp"
#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "common/log/spawned.hpp"
#include "common/text/excerpt.hpp"
#include "hub/forward/forwarder_detail.hpp"
#include "hub/forward/policy.hpp"
#include "hub/forward/secrets.hpp"
#include "hub/metrics/hub_metrics.hpp"

namespace hub::forward {
namespace {

namespace asio = boost::asio;
using common::http::join_url;
using detail::add_trace_headers;
using detail::unix_us;

AttemptOutcome attempt_outcome(Verdict v) {
    switch (v) {
        case Verdict::delivered: return AttemptOutcome::delivered;
        case Verdict::unauthorized: return AttemptOutcome::unauthorized;
        case Verdict::rejected: return AttemptOutcome::rejected;
        case Verdict::retry: return AttemptOutcome::retry;
    }
    return AttemptOutcome::retry;
}

/// How long a host whose job went back unsent (no slot within the client's queue time-out) gets no job claimed
/// ahead of its free slots.
constexpr auto kNoClaimAheadAfterUnsent = std::chrono::seconds(30);

/// At low rates every statement of the forwarder would carry about one order and pay its fixed costs (plan,
/// triggers, commit) alone. A NOTIFY of a new job that wakes the forwarder waits this long before it claims, so
/// that the jobs stored meanwhile share the claim. A claim that took all it could is followed by the next at once,
/// and a delivery's end (room for a host's backlog) does not wait.
constexpr auto kClaimGather = std::chrono::milliseconds(25);

/// The same for the end of claims: the first delivery to end while the finisher is idle waits this long for
/// others to share its transaction. The order is at the POS already; only the record of it waits.
constexpr auto kFinishGather = std::chrono::milliseconds(50);

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
/// per order (at 2,000 orders/s the commits, not the statements, are what PostgreSQL spends its time on). One
/// batch at a time: the answers that come while it runs share the next one (as the ingest's group commit,
/// hub/app/serve.cpp), and at low rates the first answer waits `kFinishGather` for company.
struct Forwarder::Finisher {
    explicit Finisher(common::db::Pool& pool)
        : batcher(
              pool,
              [](pqxx::connection& c, std::span<FinishRequest> requests, std::span<FinishOutcome> owned,
                 std::span<std::exception_ptr> errors) { finish_jobs(c, requests, owned, errors); },
              128, 1, std::chrono::microseconds(1000), kFinishGather) {}
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
      client_(strand_, options_.client),
      hosts_(options_.breaker),
      tend_timer_(strand_) {
    if (options_.metrics) hosts_.expose(options_.metrics->registry);
}

Forwarder::~Forwarder() {
    listen_stop_.store(true);
    if (listener_.joinable()) listener_.join();
}

void Forwarder::start() {
    listener_ = std::thread([this] { listen_thread(); });
    tending_ = true;
    asio::co_spawn(strand_, loop(), common::log::on_failure("forwarder stopped by an error"));
    asio::co_spawn(strand_, tend(), common::log::on_failure("forwarder upkeep stopped by an error"));
    common::log::info("forwarder started", {{"forwarder", options_.id},
                                            {"environment", options_.environment},
                                            {"per_host", options_.per_host},
                                            {"in_flight_max", options_.max_in_flight}});
}

void Forwarder::stop() {
    listen_stop_.store(true);
    asio::post(strand_, [this] {
        stopping_ = true;
        wake_.notify();
        tend_timer_.cancel();
    });
}

void Forwarder::wake() {
    asio::post(strand_, [this] {
        full_look_ = true;  // a new job, of any brand
        wake_.notify();
    });
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
        if (co_await claim_and_start()) continue;  // more may be due right now
        // A NOTIFY or a delivery's end during the claim returns at once: the claim may not have seen its job. An
        // open breaker whose probe comes before the next poll shortens the sleep.
        auto sleep = std::chrono::steady_clock::duration(options_.poll_interval);
        if (auto probe = hosts_.next_probe())
            sleep = std::clamp<std::chrono::steady_clock::duration>(*probe - std::chrono::steady_clock::now(),
                                                                    std::chrono::milliseconds(10), sleep);
        if (!co_await wake_.sleep_for(sleep)) {
            full_look_ = true;                  // the poll: retries due, leases expired
        } else if (full_look_ && !stopping_) {  // a NOTIFY of a new job, not a delivery's end
            asio::steady_timer gather(strand_, kClaimGather);
            co_await gather.async_wait(asio::as_tuple(asio::use_awaitable));
        }
    }
    // Stopping: let deliveries in flight end (each is bounded by the client's time-outs) and the upkeep and the
    // breaker records finish, then give back the rest.
    while (in_flight_ > 0 || tending_ || health_writing_) co_await wake_.sleep_for(std::chrono::milliseconds(50));
    auto release = [id = options_.id](pqxx::connection& c) { release_jobs(c, id); };
    try {
        co_await pool_.run(std::move(release));
    } catch (const std::exception& e) {
        common::log::warn("forwarder could not release its jobs; their leases will expire", {{"error", e.what()}});
    }
    finished_.store(true);
}

std::map<std::string, int> Forwarder::host_room() {
    std::map<std::string, int> room;
    const auto now = std::chrono::steady_clock::now();
    for (auto& [key, h] : hosts_.all()) {
        const int breaker = h.breaker.room(now);
        // The client lowers a host's limit while it signals overload (429, 503, time-outs): the bulkhead follows it.
        // A healthy host may have as many jobs again waiting for its slots, while the forwarder is less than half
        // full (so that hosts with a backlog do not take the slots of the others).
        std::size_t limit = options_.per_host;
        if (!h.url.empty())
            limit = std::min(limit, std::max<std::size_t>(1, client_.in_flight_limit(h.url, h.ca_file)));
        const bool ahead = breaker == Breaker::kUnlimited && h.breaker.consecutive_failures() == 0 &&
                           now >= h.no_claim_ahead_until && in_flight_ < options_.max_in_flight / 2;
        room[key] = forward::host_room(static_cast<int>(limit), static_cast<int>(h.in_flight), breaker, ahead);
    }
    return room;
}

asio::awaitable<bool> Forwarder::claim_and_start() {
    const int free = static_cast<int>(options_.max_in_flight - std::min(in_flight_, options_.max_in_flight));
    if (free == 0) co_return false;
    auto room = host_room();
    ClaimPlan plan = plan_claim(brand_hosts_, room, free, static_cast<int>(options_.per_host));
    // A delivery's end only frees room: look again at the brands that may have jobs waiting for it, if any.
    const bool full_look = std::exchange(full_look_, false);
    if (!full_look) narrow_to_backlog(plan, backlog_);
    if (!claims_anything(plan)) co_return false;
    const auto claimed_at = std::chrono::steady_clock::now();
    std::vector<ClaimedJob> jobs;
    auto claim = [id = options_.id, plan, lease = options_.lease, env = options_.environment,
                  give_up = options_.give_up](pqxx::connection& c) {
        return claim_jobs(c, id, plan, lease, env, give_up);
    };
    try {
        jobs = co_await pool_.run(std::move(claim));
    } catch (const std::exception& e) {
        common::log::warn("forwarder cannot claim jobs", {{"error", e.what()}});
        full_look_ = true;
        co_return false;
    }
    std::map<std::string, int> per_brand;
    for (const auto& job : jobs) ++per_brand[job.source.brand_id];
    note_claimed(plan, per_brand, full_look, backlog_);
    std::vector<std::string> give_back_ids;
    const std::size_t claimed = jobs.size();
    for (auto& job : jobs) start_delivery(std::move(job), claimed_at, give_back_ids, room);
    const bool full = claimed > 0 && claimed == static_cast<std::size_t>(plan.limit) && give_back_ids.empty();
    if (full) full_look_ = true;
    if (!give_back_ids.empty())
        asio::co_spawn(strand_, give_back(std::move(give_back_ids)),
                       common::log::on_failure("giving back claims failed"));
    co_return full;
}

void Forwarder::start_delivery(ClaimedJob job, std::chrono::steady_clock::time_point claimed_at,
                               std::vector<std::string>& give_back_ids, std::map<std::string, int>& room) {
    Delivery d;
    if (job.connection) {
        d.host = common::http::origin(job.connection->base_url).value_or("");
        brand_hosts_[job.source.brand_id] = d.host;
    }
    if (!d.host.empty()) {
        PosHost& h = hosts_.at(d.host);
        h.url = join_url(job.connection->base_url, "/api/orders");
        h.ca_file = job.connection->ca_file;
        if (!room.contains(d.host)) room = host_room();  // a host first seen in this claim
    }
    // A host shared by several brands may have been offered to each: what exceeds its room goes back unsent.
    std::vector<std::string> one{d.host};
    if (!admit_claimed(one, room).front()) {
        give_back_ids.push_back(job.order_id);
        return;
    }
    if (!d.host.empty()) {
        PosHost& h = hosts_.at(d.host);
        d.probe = d.probed = h.breaker.admit();
        if (d.probe) common::log::info("POS breaker probing", {{"host", d.host}, {"order_id", job.order_id}});
        ++h.in_flight;
        h.publish(std::chrono::steady_clock::now());
    }
    d.job = std::move(job);
    d.claimed_at = claimed_at;
    ++in_flight_;
    d.holds_host = std::make_shared<bool>(!d.host.empty());
    std::string host = d.host;
    auto holds = d.holds_host;
    asio::co_spawn(strand_, deliver(std::move(d)), [this, host, holds](const std::exception_ptr& e) {
        common::log::on_failure("delivery failed")(e);
        if (PosHost* h = *holds ? hosts_.find(host) : nullptr) {
            --h->in_flight;
            h->publish(std::chrono::steady_clock::now());
        }
        --in_flight_;
        wake_.notify();
    });
}

void Forwarder::free_host_slot(Delivery& d) {
    if (!d.holds_host || !std::exchange(*d.holds_host, false)) return;
    if (PosHost* h = hosts_.find(d.host)) {
        --h->in_flight;
        h->publish(std::chrono::steady_clock::now());
    }
    wake_.notify();
}

asio::awaitable<void> Forwarder::give_back(std::vector<std::string> orders) {
    auto run = [id = options_.id, orders = std::move(orders)](pqxx::connection& c) { give_back_jobs(c, id, orders); };
    try {
        co_await pool_.run(std::move(run));
    } catch (const std::exception& e) {
        // Nothing was sent: when the lease expires, the jobs are claimed again (that claim counts one attempt more).
        common::log::warn("could not give back unsent claims; they return after their lease", {{"error", e.what()}});
    }
}

std::chrono::milliseconds longest_exchange(const common::http::ClientOptions& o) {
    return o.queue_timeout + o.connect_timeout + o.handshake_timeout + o.write_timeout + o.read_timeout +
           std::chrono::seconds(2);
}

bool Forwarder::lease_allows_exchange(const Delivery& d) const {
    const auto held_until = std::max(d.claimed_at, renewed_at_) + options_.lease;
    return std::chrono::steady_clock::now() + longest_exchange(options_.client) < held_until;
}

void Forwarder::note_exchange(Delivery& d, const common::http::ClientResult& res, std::string_view why) {
    if (d.host.empty()) return;
    PosHost* h = hosts_.find(d.host);
    if (h == nullptr) return;
    const bool probe = std::exchange(d.probe, false);  // the probe is its first exchange
    const auto signal =
        host_signal(res.response ? res.response->status : 0, res.failure == common::http::ClientFailure::bad_url);
    if (signal == HostSignal::failed) h->last_error = std::string(why);
    const auto now = std::chrono::steady_clock::now();
    const auto change = h->breaker.record(signal, probe, now, jitter());
    h->publish(now);
    const auto probe_in = std::chrono::duration_cast<std::chrono::milliseconds>(h->breaker.next_probe() - now);
    switch (change) {
        case BreakerChange::none: return;
        case BreakerChange::opened:
            common::log::warn("POS breaker opened", {{"host", d.host},
                                                     {"failures", h->breaker.consecutive_failures()},
                                                     {"error", h->last_error},
                                                     {"probe_in_ms", probe_in.count()}});
            write_health(d.host, true, h->last_error);
            return;
        case BreakerChange::probe_failed:
            common::log::info("POS breaker probe failed",
                              {{"host", d.host}, {"error", h->last_error}, {"probe_in_ms", probe_in.count()}});
            return;
        case BreakerChange::closed:
            common::log::info("POS breaker closed", {{"host", d.host}});
            write_health(d.host, false, "");
            return;
    }
}

asio::awaitable<Classified> Forwarder::send_order(Delivery& d, const std::string& token, const std::string& body,
                                                  JobResult& r) {
    const PosConnection& c = *d.job.connection;
    common::http::ClientRequest req;
    req.url = join_url(c.base_url, "/api/orders");
    req.headers = {
        {"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}, {"Accept", "application/json"}};
    add_trace_headers(req, d.job.request_id);
    req.body = body;
    req.ca_file = c.ca_file;
    AttemptRecord a;
    a.url = req.url;
    a.started_us = unix_us();
    auto res = co_await client_.send(std::move(req));
    if (res.failure == common::http::ClientFailure::queue_timeout) {
        // Not an exchange: no attempt, no word on the host.
        d.unsent = true;
        co_return Classified{Verdict::retry, "queue_timeout: " + res.error, {}, std::nullopt};
    }
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
    a.outcome = attempt_outcome(cl.verdict);
    if (a.error.empty() && cl.verdict != Verdict::delivered) a.error = cl.reason;
    note_exchange(d, res, cl.reason);
    r.attempts.push_back(std::move(a));
    co_return cl;
}

asio::awaitable<void> Forwarder::exchange_all(Delivery& d, JobResult& r) {
    const PosConnection& c = *d.job.connection;
    const bool can_login = !c.email.empty();
    std::optional<std::string> token = current_token(c);
    bool logged_in = false;
    std::optional<Classified> outcome;
    if (!token && can_login) {
        LoginAnswer l = co_await login(d, r);
        token = l.token;
        logged_in = true;
        if (!token && l.retry) outcome = Classified{Verdict::retry, "login: " + l.reason, {}, std::nullopt};
    }
    if (!token && !outcome) {
        r.state = JobState::auth_failed;
        r.error = c.token_sealed.empty() || can_login ? "no usable token and the login failed"
                                                      : "the stored token cannot be opened with this "
                                                        "ORDERHUB_SECRET_KEY";
        co_return;
    }
    if (token) {
        const std::string body = pos_order_json(d.job.source);
        outcome = co_await send_order(d, *token, body, r);
        if (outcome->verdict == Verdict::unauthorized && can_login && !logged_in && lease_allows_exchange(d)) {
            // One login and one retry per claim: a POS that keeps refusing new tokens ends in auth_failed.
            // Another delivery may have logged in meanwhile: its token is tried before a login of our own.
            std::optional<std::string> fresh = newer_token(c, *token);
            if (!fresh) {
                LoginAnswer l = co_await login(d, r);
                fresh = l.token;
                if (!fresh && l.retry) outcome = Classified{Verdict::retry, "login: " + l.reason, {}, std::nullopt};
            }
            if (fresh && lease_allows_exchange(d)) outcome = co_await send_order(d, *fresh, body, r);
        }
    }
    Decision next = decide(*outcome, d.job.attempt, jitter());
    r.state = next.state;
    r.delay = next.delay;
    r.error = std::move(next.error);
    r.pos_order_id = std::move(next.pos_order_id);
}

asio::awaitable<void> Forwarder::deliver(Delivery d) {
    JobResult r;
    r.order_id = d.job.order_id;
    r.first_attempt = d.job.attempt;
    if (d.job.delivery_status == "cancelled") {
        r.state = JobState::cancelled;
        r.error = "cancelled before it was sent";
    } else if (!d.job.connection) {
        r.state = JobState::auth_failed;
        r.error = "no POS connection for brand " + d.job.source.brand_id + " in environment " + options_.environment +
                  ": run `orderhub pos set`";
    } else if (lease_allows_exchange(d)) {
        co_await exchange_all(d, r);
    } else {
        // The lease could run out during the exchange (renewals failed: the database is away): another forwarder
        // could then claim and send it too.
        d.unsent = true;
    }
    if (d.unsent && r.attempts.empty()) {
        // Nothing reached the POS (a lease too short, or the host's slots stayed busy): the claim goes back, not
        // counted as an attempt.
        if (!d.host.empty()) {
            PosHost& h = hosts_.at(d.host);
            if (d.probe) h.breaker.probe_abandoned();
            h.no_claim_ahead_until = std::chrono::steady_clock::now() + kNoClaimAheadAfterUnsent;
        }
        std::vector<std::string> unsent;
        unsent.push_back(d.job.order_id);
        co_await give_back(std::move(unsent));
        co_return;
    }
    log_result(d, r);
    free_host_slot(d);  // the exchanges are over; the host may take another order while this one's end is recorded
    co_await record(d, r);
}

void Forwarder::log_result(const Delivery& d, const JobResult& r) {
    // One line per HTTP exchange and one for the claim's end, each with the hub order id and the platform's
    // (the webhook's request line has both), so that an operator can follow an order from webhook to POS.
    const auto& job = d.job;
    int exchange = r.first_attempt;
    bool probe = d.probed;
    for (const auto& a : r.attempts) {
        const bool login = is_login(a.outcome);
        const bool ok = a.outcome == AttemptOutcome::delivered || a.outcome == AttemptOutcome::logged_in;
        common::log::write(ok ? common::log::Level::info : common::log::Level::warn, "forward attempt",
                           {{"forwarder", options_.id},
                            {"order_id", r.order_id},
                            {"request_id", job.request_id},
                            {"external_id", job.source.external_id},
                            {"partner_label", job.source.partner_label},
                            {"attempt", exchange++},
                            {"call", login ? "login" : "order"},
                            {"host", d.host},
                            {"probe", probe},
                            {"outcome", to_text(a.outcome)},
                            {"http_status", a.http_status},
                            {"latency_ms", a.latency_ms},
                            {"error", a.error}});
        probe = false;
        if (options_.metrics) options_.metrics->forward_attempt(to_text(a.outcome), a.latency_ms);
    }
    const auto& last = r.attempts.empty() ? AttemptRecord{} : r.attempts.back();
    common::log::info("forward", {{"forwarder", options_.id},
                                  {"order_id", r.order_id},
                                  {"request_id", job.request_id},
                                  {"external_id", job.source.external_id},
                                  {"partner_label", job.source.partner_label},
                                  {"pos_branch_id", job.source.pos_branch_id},
                                  {"attempt", job.attempt},
                                  {"state", to_text(r.state)},
                                  {"http_status", last.http_status},
                                  {"latency_ms", last.latency_ms},
                                  {"pos_order_id", r.pos_order_id}});
    if (options_.metrics) {
        options_.metrics->forward_finished(to_text(r.state));
        // The hub's clock against the database's storage time: skew between the two hosts shows up here.
        if (r.state == JobState::delivered && !job.scheduled) {
            const double now =
                std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
            options_.metrics->forward_latency(std::max(0.0, now - job.stored_at));
        }
    }
}

asio::awaitable<void> Forwarder::record(const Delivery& d, const JobResult& r) {
    // The outcome is known: record it, and keep trying while the database is away (a restart), for as long as
    // the claim is ours. Should that fail too, the lease expires and another claim re-sends; the POS's
    // partner_reference keeps that from doubling the order.
    const auto give_up = std::max(d.claimed_at, renewed_at_) + options_.lease - std::chrono::seconds(2);
    for (bool retrying = false;; retrying = true) {
        FinishRequest request{options_.id, r, std::nullopt, retrying};
        if (d.job.connection)
            request.token_owner = std::pair{d.job.connection->brand_id, d.job.connection->environment};
        try {
            const FinishOutcome outcome = co_await finisher_->batcher.submit(std::move(request));
            if (!outcome.owned) common::log::warn("forward claim was lost before it ended", {{"order_id", r.order_id}});
            co_return;
        } catch (const std::exception& e) {
            if (std::chrono::steady_clock::now() >= give_up) {
                common::log::warn("could not record a delivery; it will be sent again after its lease",
                                  {{"order_id", r.order_id}, {"error", e.what()}});
                co_return;
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
