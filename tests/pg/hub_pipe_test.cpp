// The order store's pipeline (hub/ingest/pipe.hpp): insert_orders on a connection of its own, the next statement
// sent while the last one runs. What it answers must be what the pool's group commit answers (hub_batch_test.cpp
// runs every batch case through both); here, what is its own: many statements in a row, a lost connection, no
// connection at all, a statement cancelled by its timeout.
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "hub/ingest/pipe.hpp"
#include "hub/ingest/store_job.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using Kind = hub::ingest::StoreOutcome::Kind;

namespace {

struct PipeAnswer {
    std::optional<StoreOutcome> out;
    std::string error;
    bool unavailable = false;
};

struct PipeStore {
    asio::io_context ioc;
    common::db::Pool pool;
    hub::ingest::OrderStore store;
    PipeStore(const std::string& url, const std::string& pipe_url,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(0))
        : pool({.url = url, .workers = 2, .on_connect = hub::db::prepare_all, .statement_timeout = timeout}),
          store(pool, 256, 1, std::chrono::microseconds(0),
                hub::ingest::PipeSettings{.url = pipe_url, .statement_timeout = timeout, .always = true}) {}

    /// Stores every body of `reqs` (partner, body) from its own coroutine, all at once.
    std::vector<PipeAnswer> store_all(const std::vector<std::pair<std::string, std::string>>& reqs) {
        std::vector<PipeAnswer> answers(reqs.size());
        for (std::size_t i = 0; i < reqs.size(); ++i) {
            asio::co_spawn(
                ioc,
                [](hub::ingest::OrderStore& s, std::string partner, std::string body,
                   PipeAnswer& a) -> asio::awaitable<void> {
                    try {
                        a.out = co_await store_owned(s, validated(body), inbox_for(partner, body));
                    } catch (const std::exception& e) {
                        a.error = e.what();
                        a.unavailable = common::db::is_unavailable(std::current_exception());
                    }
                }(store, reqs[i].first, reqs[i].second, answers[i]),
                asio::detached);
        }
        ioc.restart();
        ioc.run();
        return answers;
    }
};

const char* kPipeBackends =
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'orderhub ingest pipeline' "
    "AND datname = current_database()";

/// Terminates the pipe's backend; returns how many were terminated.
long long terminate_pipe_backend(HubDb& h) {
    return h.count(std::string("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE ") +
                   "application_name = 'orderhub ingest pipeline' AND datname = current_database()");
}

/// Waits, at most 10 s, until the pipe's statement waits for a lock; REQUIREs that it does.
void wait_for_lock_wait(HubDb& h) {
    const std::string waiting = std::string(kPipeBackends) + " AND wait_event_type = 'Lock'";
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (h.count(waiting) == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(h.count(waiting) == 1);
}

void check_all_created(const std::vector<PipeAnswer>& answers) {
    for (const auto& a : answers) {
        INFO(a.error);
        REQUIRE(a.out);
        CHECK(a.out->kind == Kind::created);
    }
}

}  // namespace

TEST_CASE("pipe: many statements in a row, with repeats and conflicts, each answered once", "[pipe]") {
    HubDb h;
    PipeStore s(h.db.url(), h.db.url());
    wait_for_pipe(s.store);
    // 200 orders, then 50 of them again unchanged and 50 again with another customer, all at once.
    std::vector<std::pair<std::string, std::string>> reqs;
    for (int i = 0; i < 200; ++i) reqs.emplace_back("p1", order_json("M-" + std::to_string(i)));
    for (int i = 0; i < 50; ++i) reqs.emplace_back("p1", order_json("M-" + std::to_string(i)));
    for (int i = 50; i < 100; ++i) reqs.emplace_back("p1", order_json("M-" + std::to_string(i), "B1", "Other"));
    const auto a = s.store_all(reqs);
    std::map<std::string, std::set<std::string>> order_ids;  // payload.id -> the hub order ids answered
    std::map<std::string, int> created;
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(i << ": " << a[i].error);
        REQUIRE(a[i].out);
        const std::string id = "M-" + std::to_string(i < 200 ? i : i - 200);
        if (!a[i].out->order_id.empty()) order_ids[id].insert(a[i].out->order_id);  // a conflict names none
        if (a[i].out->kind == Kind::created) ++created[id];
        if (i >= 200 && i < 250) CHECK((a[i].out->kind == Kind::created || a[i].out->kind == Kind::duplicate));
        if (i >= 250) CHECK((a[i].out->kind == Kind::created || a[i].out->kind == Kind::conflict));
    }
    CHECK(created.size() == 200);
    for (const auto& [id, n] : created) CHECK(n == 1);
    for (const auto& [id, ids] : order_ids) CHECK(ids.size() == 1);  // every answer for one id names one order
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 200);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 300);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs") == 200);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 200);
    // Every request went in the pipe's statements; those it handed back (none is pending here) were counted.
    const auto stats = s.store.pipe_stats();
    REQUIRE(stats);
    CHECK(stats->ready);
    CHECK(stats->requests == 300);
    CHECK(stats->statements >= 2);
    CHECK(stats->statements <= 300);
    CHECK(stats->handed_back == 0);
    CHECK(stats->connections_lost == 0);
}

TEST_CASE("pipe: an order_updated waits for the order_created sent to the pipe before it", "[pipe]") {
    HubDb h;
    PipeStore s(h.db.url(), h.db.url());
    wait_for_pipe(s.store);
    // The pipe's statement inserts the order, then waits for a lock on the jobs' table, which the update never
    // takes: stored at once beside it, the update would not see the order (not committed yet).
    pqxx::connection locker(h.db.url());
    pqxx::work lock(locker);
    lock.exec0("LOCK TABLE hub.forward_jobs IN EXCLUSIVE MODE");
    auto stored = std::async(std::launch::async, [&] {
        return s.store_all({{"p1", order_json("U-1")}, {"p1", update_json("U-1", "assigned", "2024-05-01 18:10:00")}});
    });
    wait_for_lock_wait(h);
    // Time for an update that did not wait to be stored wrongly (the test passes however long this takes).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    lock.commit();
    const auto a = stored.get();
    for (const auto& x : a) {
        INFO(x.error);
        REQUIRE(x.out);
    }
    CHECK(a[0].out->kind == Kind::created);
    CHECK(a[1].out->kind == Kind::appended);
    CHECK(a[1].out->order_id == a[0].out->order_id);
    CHECK(a[1].out->applied);
}

TEST_CASE("pipe: a connection lost under a statement fails it as unavailable, and the pipe comes back", "[pipe]") {
    HubDb h;
    PipeStore s(h.db.url(), h.db.url());
    wait_for_pipe(s.store);
    REQUIRE(h.count(kPipeBackends) == 1);
    REQUIRE(s.store_all({{"p1", order_json("L-0")}})[0].out->kind == Kind::created);

    // The pipe's statement waits for a lock another transaction holds; its backend is terminated meanwhile.
    pqxx::connection locker(h.db.url());
    pqxx::work lock(locker);
    lock.exec0("LOCK TABLE hub.orders IN EXCLUSIVE MODE");
    auto stored = std::async(std::launch::async, [&] { return s.store_all({{"p1", order_json("L-1")}}); });
    wait_for_lock_wait(h);
    REQUIRE(terminate_pipe_backend(h) == 1);
    const auto lost = stored.get();
    CHECK(s.store.pipe_stats()->connections_lost == 1);
    lock.commit();
    REQUIRE_FALSE(lost[0].out);
    CHECK(lost[0].unavailable);  // 503: retry later
    CHECK(h.count("SELECT count(*) FROM hub.orders WHERE external_id = 'L-1'") == 0);

    // Meanwhile and after, orders are stored (through the pool until the pipe has connected again).
    const auto meanwhile = s.store_all({{"p1", order_json("L-1")}, {"p1", order_json("L-2")}});
    check_all_created(meanwhile);
    wait_for_pipe(s.store);
    CHECK(h.count(kPipeBackends) == 1);
    const auto after = s.store_all({{"p1", order_json("L-3")}, {"p1", order_json("L-1")}});
    REQUIRE(after[0].out);
    CHECK(after[0].out->kind == Kind::created);
    REQUIRE(after[1].out);
    CHECK(after[1].out->kind == Kind::duplicate);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 4);
}

TEST_CASE("pipe: a backend terminated while idle costs no request", "[pipe]") {
    HubDb h;
    PipeStore s(h.db.url(), h.db.url());
    wait_for_pipe(s.store);
    REQUIRE(terminate_pipe_backend(h) == 1);
    // The server's goodbye reaches the idle connection: the pipe lets go of it and hands requests to the pool.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pipe_ready(s.store) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto a = s.store_all({{"p1", order_json("I-1")}, {"p1", order_json("I-2")}});
    check_all_created(a);
    wait_for_pipe(s.store);
    CHECK(s.store_all({{"p1", order_json("I-3")}})[0].out->kind == Kind::created);
}

TEST_CASE("pipe: without a connection of its own every order goes through the pool", "[pipe]") {
    HubDb h;
    // Nothing listens on port 1.
    PipeStore s(h.db.url(), "postgresql://orderhub@127.0.0.1:1/nothing?connect_timeout=2");
    const auto a = s.store_all({{"p1", order_json("N-1")}, {"p1", order_json("N-2")}, {"p1", order_json("N-1")}});
    for (const auto& x : a) {
        INFO(x.error);
        REQUIRE(x.out);
    }
    CHECK_FALSE(pipe_ready(s.store));
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 3);
}

TEST_CASE("pipe: a statement cancelled by its timeout answers unavailable, and stores nothing", "[pipe]") {
    HubDb h;
    PipeStore s(h.db.url(), h.db.url(), std::chrono::milliseconds(300));
    wait_for_pipe(s.store);
    pqxx::connection locker(h.db.url());
    pqxx::work lock(locker);
    lock.exec0("LOCK TABLE hub.orders IN EXCLUSIVE MODE");
    const auto a = s.store_all({{"p1", order_json("T-1")}});
    lock.commit();
    REQUIRE_FALSE(a[0].out);
    CHECK(a[0].unavailable);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 0);
    CHECK(s.store_all({{"p1", order_json("T-1")}})[0].out->kind == Kind::created);
}

TEST_CASE("pipe: entries whose arguments cannot be built are handed back, and the pipe goes on", "[pipe]") {
    HubDb h;
    asio::io_context ioc;
    using Entry = hub::ingest::IngestPipe::Entry;
    std::mutex m;
    std::condition_variable changed;
    std::vector<Entry> back;
    hub::ingest::IngestPipe pipe(hub::ingest::PipeSettings{.url = h.db.url(), .always = true}, 256, [&](Entry e) {
        std::lock_guard lock(m);
        back.push_back(std::move(e));
        changed.notify_all();
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pipe.ready() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(pipe.ready());

    // An entry cut short (make_entry never writes one): nothing is sent for it, it goes to the one-by-one path.
    Entry bad;
    bad.job->inbox.partner_id = "p1";
    bad.job->created = true;
    bad.job->entry = std::string("\0\0", 2);
    bad.complete = [](std::exception_ptr, StoreOutcome) { FAIL("a handed-back entry is answered by its new path"); };
    bad.executor = ioc.get_executor();
    pipe.push(std::move(bad));
    {
        std::unique_lock lock(m);
        REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return back.size() == 1; }));
        CHECK(back[0].job->entry == std::string("\0\0", 2));
    }

    // The next statement is built and answered as usual.
    const std::string body = order_json("A-1");
    const auto v = validated(body);
    Entry good;
    good.job->created = true;
    good.job->inbox = inbox_for("p1", body);
    good.job->entry = hub::ingest::detail::make_entry(&v, good.job->inbox);
    std::promise<StoreOutcome> answered;
    good.complete = [&answered](std::exception_ptr e, StoreOutcome out) {
        if (e)
            answered.set_exception(e);
        else
            answered.set_value(std::move(out));
    };
    good.executor = ioc.get_executor();
    pipe.push(std::move(good));
    auto future = answered.get_future();
    REQUIRE(future.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(future.get().kind == Kind::created);
    CHECK(h.count("SELECT count(*) FROM hub.orders WHERE external_id = 'A-1'") == 1);
    CHECK(pipe.stats().handed_back == 1);
    CHECK(pipe.stats().statements == 1);  // the one that was sent
}
