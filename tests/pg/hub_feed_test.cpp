// The dashboard's event feed against a real database: with no board open it only keeps its cursor current; a
// board that opens gets what follows its opening, each event whole, and nothing older.
#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <thread>

#include "hub/dashboard/feed.hpp"
#include "hub/dashboard/queries.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;

namespace {

/// Runs `ioc` on a thread of its own until the object goes away.
struct Runner {
    asio::io_context& ioc;
    asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
    std::thread thread{[this] { ioc.run(); }};
    ~Runner() {
        work.reset();
        ioc.stop();
        thread.join();
    }
};

/// A feed polling every `interval` on a pool of two workers, its io_context run by a thread of its own, started.
struct RunningFeed {
    asio::io_context ioc;
    common::db::Pool pool;
    hub::dashboard::EventFeed feed;
    Runner runner{ioc};

    RunningFeed(const std::string& url, std::chrono::milliseconds interval)
        : pool({.url = url, .workers = 2, .on_connect = hub::db::prepare_all}), feed(ioc, pool, interval) {
        feed.start();
    }
};

/// Waits up to `wait` (10 s: a hang's bound) for `n` events on `sub`, collecting them into `got`.
void take_until(hub::dashboard::Subscription& sub, std::vector<hub::dashboard::Event>& got, std::size_t n,
                std::chrono::milliseconds wait = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
        bool overflowed = false;
        for (auto& e : sub.take(overflowed)) got.push_back(std::move(e));
        REQUIRE_FALSE(overflowed);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

long long max_event_id(HubDb& h) { return h.count("SELECT coalesce(max(id), 0) FROM hub.dashboard_event_log"); }

/// The events after `after` as the feed reads them for an open board: "kind:detail:external_id" each, by id.
std::vector<std::string> events_after(const std::string& url, std::int64_t after = 0) {
    pqxx::connection c(url);
    pqxx::read_transaction tx(c);
    std::vector<std::string> out;
    std::int64_t last = after;
    for (const auto& r : hub::dashboard::exec(tx, hub::dashboard::sql::kEventsAfter, after, 100LL)) {
        CHECK(r["event_id"].as<std::int64_t>() > last);  // ascending, each id once
        last = r["event_id"].as<std::int64_t>();
        out.push_back(r["event_kind"].as<std::string>() + ":" + r["event_detail"].as<std::string>() + ":" +
                      r["external_id"].as<std::string>());
    }
    return out;
}

/// A job-state event for the order `external_id` stored by partner p1, as the job trigger writes one.
void job_event(const std::string& url, const std::string& external_id, const std::string& state) {
    pqxx::connection c(url);
    pqxx::work tx(c);
    tx.exec_params(
        "INSERT INTO hub.dashboard_events (order_id, branch_id, kind, detail) SELECT id, branch_id, 'job', $2 "
        "FROM hub.orders WHERE partner_id = 'p1' AND external_id = $1",
        external_id, state);
    tx.commit();
}

}  // namespace

TEST_CASE("feed: events from before a board opened are not sent to it, later ones are, whole", "[feed]") {
    HubDb h;
    RunningFeed running(h.db.url(), std::chrono::milliseconds(20));
    auto& feed = running.feed;

    // Traffic while nobody listens: the feed reads only ids, and must still move its cursor past them.
    store_all(h.db.url(), {{"p1", order_json("F-1")}, {"p1", order_json("F-2")}});
    const auto before = max_event_id(h);
    REQUIRE(before >= 2);
    // Several polls pass (each one reads the ids above its cursor); the events' ids are then behind the cursor.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));

    auto sub = feed.subscribe({"B1"}, nullptr);
    auto outcomes = store_all(h.db.url(), {{"p1", order_json("F-3")}});
    std::vector<hub::dashboard::Event> got;
    take_until(*sub, got, 1);
    // Give a late duplicate or an old event the chance to show up before checking there is none.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    bool overflowed = false;
    for (auto& e : sub->take(overflowed)) got.push_back(std::move(e));

    REQUIRE(got.size() == 1);
    CHECK(got[0].id > before);
    CHECK(got[0].branch_id == "B1");
    auto data = boost::json::parse(got[0].data).as_object();
    CHECK(data.at("id").as_int64() == got[0].id);
    CHECK(data.at("kind").as_string() == "status");
    CHECK(data.at("order").as_object().at("id").as_string() == outcomes[0].order_id);
    CHECK(data.at("order").as_object().at("external_id").as_string() == "F-3");
    feed.unsubscribe(sub);
    feed.stop();
}

TEST_CASE("feed: a status-log row is a board event read from the log itself, one id sequence with the others",
          "[feed]") {
    HubDb h;
    store_all(h.db.url(), {{"p1", order_json("S-1")}});
    job_event(h.db.url(), "S-1", "in_flight");
    store_all(h.db.url(), {{"p1", order_json("S-2")}});
    job_event(h.db.url(), "S-2", "in_flight");
    CHECK(events_after(h.db.url()) == std::vector<std::string>{"status:received:S-1", "job:in_flight:S-1",
                                                               "status:received:S-2", "job:in_flight:S-2"});
    // No copy of the status rows (sql/hub/0022): the status log is the only place they are written.
    CHECK(h.count("SELECT count(*) FROM hub.dashboard_events WHERE kind = 'status'") == 0);
    CHECK(h.count("SELECT count(*) FROM hub.dashboard_event_log") == 4);
    // The replay after the first status event, and the ids alone, see the same events.
    const auto first = h.count("SELECT min(id) FROM hub.order_status_log");
    CHECK(events_after(h.db.url(), first) ==
          std::vector<std::string>{"job:in_flight:S-1", "status:received:S-2", "job:in_flight:S-2"});
    pqxx::connection c(h.db.url());
    pqxx::read_transaction tx(c);
    CHECK(hub::dashboard::exec(tx, hub::dashboard::sql::kEventIdsAfter, first, 2LL).size() == 2);
    CHECK(hub::dashboard::exec(tx, hub::dashboard::sql::kNewestEventId)[0][0].as<long long>() == max_event_id(h));
}

TEST_CASE("feed: the ids after the cursor read as one span, and an id taken but never written breaks it", "[feed]") {
    HubDb h;
    store_all(h.db.url(), {{"p1", order_json("G-1")}, {"p1", order_json("G-2")}});
    job_event(h.db.url(), "G-1", "in_flight");
    const auto first = h.count("SELECT min(id) FROM hub.dashboard_event_log") - 1;
    const auto last = max_event_id(h);
    REQUIRE(last - first >= 3);
    pqxx::connection c(h.db.url());
    auto span = [&c](long long after, long long limit) {
        pqxx::read_transaction tx(c);
        const auto r = hub::dashboard::exec(tx, hub::dashboard::sql::kEventIdSpanAfter, after, limit)[0];
        return std::pair{r[0].as<long long>(), r[1].as<long long>()};
    };
    // Without a gap the count is the distance from the cursor to the last id: the feed moves over them unread.
    CHECK(span(first, 100) == std::pair{last - first, last});
    CHECK(span(first, 2) == std::pair{2LL, first + 2});  // the limit counts
    CHECK(span(last, 100) == std::pair{0LL, last});      // nothing after the last: the cursor itself
    // An id taken and never written (a transaction that rolled back after nextval): the span has a gap, and the
    // feed reads the ids one by one, as the cursor's grace for late commits needs.
    {
        pqxx::work tx(c);
        tx.exec("SELECT nextval('hub.event_ids')");
        tx.commit();
    }
    store_all(h.db.url(), {{"p1", order_json("G-3")}});
    const auto after = max_event_id(h);
    const auto [count, end] = span(first, 100);
    CHECK(end == after);
    CHECK(count == after - first - 1);
    CHECK(span(last + 1, 100) == std::pair{after - last - 1, after});  // past the gap: one span again
}

TEST_CASE("feed: an event that commits late, below ids passed while no board listened, reaches a board", "[feed]") {
    // While nobody listens, ids that follow the cursor without a gap are passed over unread; across a gap they are
    // read one by one and kept above the cursor, which waits below the gap (its grace for late commits). So an event
    // whose transaction took its id before others and commits after a board opened reaches that board, once, and
    // nothing from before the board opened does.
    HubDb h;
    store_all(h.db.url(), {{"p1", order_json("H-1")}});
    RunningFeed running(h.db.url(), std::chrono::milliseconds(20));
    auto& feed = running.feed;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the cursor past H-1's event
    pqxx::connection late_connection(h.db.url());
    pqxx::work late(late_connection);
    late.exec_params(
        "INSERT INTO hub.dashboard_events (order_id, branch_id, kind, detail) SELECT id, branch_id, 'job', 'in_flight' "
        "FROM hub.orders WHERE partner_id = 'p1' AND external_id = $1",
        std::string("H-1"));  // its id taken now, not yet visible
    store_all(h.db.url(), {{"p1", order_json("H-2")}, {"p1", order_json("H-3")}});
    const auto before = max_event_id(h);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several polls, each across the gap

    auto sub = feed.subscribe({"B1"}, nullptr);
    late.commit();
    std::vector<hub::dashboard::Event> got;
    take_until(*sub, got, 1);
    store_all(h.db.url(), {{"p1", order_json("H-4")}});
    take_until(*sub, got, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    bool overflowed = false;
    for (auto& e : sub->take(overflowed)) got.push_back(std::move(e));
    std::vector<std::string> seen;
    for (const auto& e : got) {
        const auto data = boost::json::parse(e.data);
        seen.push_back(std::string(data.at("kind").as_string()) + ":" +
                       std::string(data.at("order").at("external_id").as_string()));
    }
    CHECK(seen == std::vector<std::string>{"job:H-1", "status:H-4"});
    REQUIRE(got.size() == 2);
    CHECK(got[0].id < before);  // below ids the feed passed while nobody listened
    CHECK(got[1].id > before);
    feed.unsubscribe(sub);
    feed.stop();
}

TEST_CASE("feed: after the upgrade that reads status events from the log, each event is seen once", "[feed]") {
    // A database at 0021 holds status events copied into hub.dashboard_events; 0022 must neither lose nor repeat them.
    tests::TempDatabase db;
    const auto& files = common::db::migrations_hub();
    migrate_hub_before(db, "0022_");
    store_before_lines(db.url(), "p1", order_json("U-1"));
    job_event(db.url(), "U-1", "in_flight");
    {
        pqxx::connection c(db.url());
        CHECK(pqxx::nontransaction(c)
                  .exec1("SELECT count(*) FROM hub.dashboard_events WHERE kind = 'status'")[0]
                  .as<int>() == 1);
        common::db::migrate(c, "hub", files);
    }
    store_all(db.url(), {{"p1", order_json("U-2")}});
    job_event(db.url(), "U-2", "in_flight");
    CHECK(events_after(db.url()) == std::vector<std::string>{"status:received:U-1", "job:in_flight:U-1",
                                                             "status:received:U-2", "job:in_flight:U-2"});
}

TEST_CASE("feed: every dashboard statement is valid against the migrated schema", "[feed]") {
    HubDb h;
    pqxx::connection c(h.db.url());
    hub::dashboard::prepare_dashboard(c);
    pqxx::work tx(c);
    // PREPARE parses, resolves and type-checks a statement without running it.
    for (const auto* s : hub::dashboard::kAllStatements)
        CHECK_NOTHROW(tx.exec(std::string("PREPARE check_") + s->name + " AS " + s->sql));
}

TEST_CASE("feed: cleanup deletes every event past two days however many piled up", "[feed]") {
    // Above about 17 orders a second the old cleanup (50,000 rows per 10 minutes) fell behind for good. Here 130,000
    // old events wait: one cleanup round must take them all (in bounded batches), and keep the newer ones.
    HubDb h;
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec(
            "INSERT INTO hub.dashboard_events (order_id, branch_id, kind, created_at) "
            "SELECT 'old-' || g, 'B1', 'status', now() - interval '3 days' FROM generate_series(1, 130000) g");
        tx.exec(
            "INSERT INTO hub.dashboard_events (order_id, branch_id, kind, created_at) "
            "SELECT 'new-' || g, 'B1', 'status', now() - interval '1 day' FROM generate_series(1, 10) g");
        tx.commit();
    }
    RunningFeed running(h.db.url(), std::chrono::milliseconds(20));  // the first cleanup round runs at once
    auto& feed = running.feed;
    const char* old_events = "SELECT count(*) FROM hub.dashboard_events WHERE created_at < now() - interval '2 days'";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (h.count(old_events) > 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    feed.stop();
    CHECK(h.count(old_events) == 0);
    CHECK(h.count("SELECT count(*) FROM hub.dashboard_events WHERE order_id LIKE 'new-%'") == 10);
}

TEST_CASE("feed: a nudge from this process polls at once, without one the next poll waits for its tick", "[feed]") {
    HubDb h;
    // A tick no test outlives: every event that arrives below was fetched by a poll that a nudge brought forward.
    RunningFeed running(h.db.url(), std::chrono::hours(1));
    auto& feed = running.feed;
    auto sub = feed.subscribe({"B1"}, nullptr);
    std::vector<hub::dashboard::Event> got;

    // The feed's first poll sets its cursor at the newest event when it runs; an order stored before that is
    // history. Store and nudge until one arrives: from then on the cursor is set.
    for (int i = 0; i < 10 && got.empty(); ++i) {
        store_all(h.db.url(), {{"p1", order_json("W-" + std::to_string(i))}});
        feed.nudge();
        take_until(*sub, got, 1, std::chrono::seconds(2));
    }
    REQUIRE(got.size() == 1);

    // An order stored after that reaches the board only through a nudge: the next tick is an hour away.
    got.clear();
    auto stored = store_all(h.db.url(), {{"p1", order_json("N-1")}});
    feed.nudge();
    take_until(*sub, got, 1);
    REQUIRE(got.size() == 1);
    CHECK(boost::json::parse(got[0].data).at("order").at("id").as_string() == stored[0].order_id);

    // A burst of nudges, as many orders stored at once send: coalesced, and still every order arrives.
    got.clear();
    store_all(h.db.url(), {{"p1", order_json("N-2")}, {"p1", order_json("N-3")}, {"p1", order_json("N-4")}});
    for (int i = 0; i < 3; ++i) feed.nudge();
    take_until(*sub, got, 3);
    std::vector<std::string> external;
    for (const auto& e : got)
        external.emplace_back(boost::json::parse(e.data).at("order").at("external_id").as_string());
    std::sort(external.begin(), external.end());
    CHECK(external == std::vector<std::string>{"N-2", "N-3", "N-4"});
    feed.unsubscribe(sub);
    feed.stop();
}
