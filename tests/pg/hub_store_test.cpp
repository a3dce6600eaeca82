#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json.hpp>
#include <set>
#include <thread>

#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/store.hpp"
#include "tests/pg/hub_support.hpp"

namespace asio = boost::asio;
using hub::ingest::StoreOutcome;
using namespace tests::hubdb;

TEST_CASE("store: a full order with items, options, first status row, forwarding job and inbox row", "[store]") {
    HubDb h;
    auto out = store_all(h.db.url(), {{"p1", order_json("A-1")}});
    REQUIRE(out[0].kind == StoreOutcome::Kind::created);
    CHECK(out[0].order_id.size() == 36);
    pqxx::connection c(h.db.url());
    pqxx::nontransaction nt(c);
    auto o = nt.exec_params1(
        "SELECT external_id, branch_id, brand_id, subtotal::text, tax::text, discount::text, total::text, "
        "is_schedule, schedule_date = '2024-05-01 16:30:00+00', event_time = '2024-05-01 18:02:11+00', car_color, "
        "customer_name, customer_phone, customer_address IS NULL, note, delivery_status FROM hub.orders WHERE id = $1",
        out[0].order_id);
    CHECK(o[0].as<std::string>() == "A-1");
    CHECK(o[1].as<std::string>() == "B1");
    CHECK(o[2].as<std::string>() == "BR");
    CHECK(o[3].as<std::string>() == "41.500");
    CHECK(o[4].as<std::string>() == "6.225");
    CHECK(o[5].as<std::string>() == "5.000");
    CHECK(o[6].as<std::string>() == "42.725");
    CHECK(o[7].as<bool>());
    CHECK(o[8].as<bool>());  // the offset of schedule_date was honoured
    CHECK(o[9].as<bool>());  // no offset: the partner's zone (UTC)
    CHECK(o[10].as<std::string>() == "#ff0000");
    CHECK(o[11].as<std::string>() == "Sara");
    CHECK(o[12].as<std::string>() == "+966500000001");
    CHECK(o[13].as<bool>());
    CHECK(o[14].as<std::string>() == "ring");
    CHECK(o[15].as<std::string>() == "received");
    CHECK(h.count("SELECT count(*) FROM hub.order_items") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.order_item_options WHERE line_no = 0") == 2);
    CHECK(h.count("SELECT sum(quantity) FROM hub.order_item_options") == 4);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE status = 'received' AND source = 'platform' "
                  "AND applied") == 1);
    // Scheduled for 16:30 UTC with the default 30-minute lead: due at 16:00 UTC (or now, if that has passed).
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'pending' AND due_at <= now()") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.inbox WHERE outcome = 'stored' AND http_status = 200 AND order_id IS "
                  "NOT NULL") == 1);
}

TEST_CASE("store: an exact repeat answers the same id and adds no order, a different payload conflicts", "[store]") {
    HubDb h;
    auto first = store_all(h.db.url(), {{"p1", order_json("A-1")}});
    // The same order re-sent (a new event_time does not make it another order).
    std::string resent = order_json("A-1");
    resent.replace(resent.find("18:02:11"), 8, "18:05:00");
    auto again = store_all(h.db.url(), {{"p1", order_json("A-1")}, {"p1", resent}});
    auto other = store_all(h.db.url(), {{"p1", order_json("A-1", "B1", "Omar")}});
    CHECK(again[0].kind == StoreOutcome::Kind::duplicate);
    CHECK(again[0].order_id == first[0].order_id);
    CHECK(again[1].kind == StoreOutcome::Kind::duplicate);
    CHECK(again[1].order_id == first[0].order_id);
    CHECK(other[0].kind == StoreOutcome::Kind::conflict);
    CHECK(other[0].order_id.empty());
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.order_items") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 4);
    CHECK(h.count("SELECT count(*) FROM hub.inbox WHERE outcome = 'conflict' AND http_status = 409") == 1);
}

TEST_CASE("store: 50 concurrent identical requests make one order and 50 identical answers", "[store]") {
    HubDb h;
    std::vector<std::pair<std::string, std::string>> reqs(50, {"p1", order_json("RACE-1")});
    auto out = store_all(h.db.url(), reqs);
    int created = 0;
    for (const auto& o : out) {
        CHECK((o.kind == StoreOutcome::Kind::created || o.kind == StoreOutcome::Kind::duplicate));
        CHECK(o.order_id == out[0].order_id);
        created += o.kind == StoreOutcome::Kind::created;
    }
    CHECK(created == 1);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 50);
}

TEST_CASE("store: many different orders at once are all stored, sharing transactions", "[store]") {
    HubDb h;
    std::vector<std::pair<std::string, std::string>> reqs;
    for (int i = 0; i < 300; ++i) reqs.emplace_back(i % 2 ? "p1" : "p2", order_json("M-" + std::to_string(i)));
    auto out = store_all(h.db.url(), reqs, 3);
    std::set<std::string> ids;
    for (const auto& o : out) {
        CHECK(o.kind == StoreOutcome::Kind::created);
        ids.insert(o.order_id);
    }
    CHECK(ids.size() == 300);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 300);
    CHECK(h.count("SELECT count(*) FROM hub.order_items") == 600);
    // Group commit: far fewer transactions than orders (rows of one batch share xmin).
    CHECK(h.count("SELECT count(DISTINCT xmin::text) FROM hub.orders") < 300);
}

TEST_CASE("store: two partners may use the same platform order id", "[store]") {
    HubDb h;
    auto out = store_all(h.db.url(), {{"p1", order_json("SAME")}, {"p2", order_json("SAME")}});
    CHECK(out[0].kind == StoreOutcome::Kind::created);
    CHECK(out[1].kind == StoreOutcome::Kind::created);
    CHECK(out[0].order_id != out[1].order_id);
    CHECK(h.count("SELECT count(*) FROM hub.orders WHERE external_id = 'SAME'") == 2);
}

TEST_CASE("store: an unknown branch stores nothing but the inbox row", "[store]") {
    HubDb h;
    auto out = store_all(h.db.url(), {{"p1", order_json("U-1", "NOPE")}, {"p1", order_json("U-2")}});
    CHECK(out[0].kind == StoreOutcome::Kind::unknown_branch);
    CHECK(out[1].kind == StoreOutcome::Kind::created);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.inbox WHERE error_code = 'unknown_branch' AND http_status = 422") == 1);
}

TEST_CASE("store: a stopped database is reported as unavailable and nothing is half-stored", "[store][restart]") {
    // A server that is not there: the same exception path as a stopped one.
    asio::io_context ioc;
    common::db::Pool pool({.url = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2",
                           .workers = 1,
                           .on_connect = hub::db::prepare_all});
    hub::ingest::OrderStore store(pool, 8, 1);
    std::exception_ptr error;
    asio::co_spawn(
        ioc,
        [](hub::ingest::OrderStore& s, std::exception_ptr& err) -> asio::awaitable<void> {
            try {
                co_await store_owned(s, validated(order_json("X")), inbox_for("p1", "{}"));
            } catch (...) {
                err = std::current_exception();
            }
        }(store, error),
        asio::detached);
    ioc.run();
    REQUIRE(error);
    CHECK(common::db::is_unavailable(error));
}

TEST_CASE("partners: keys are random, stored hashed, and looked up by hash", "[store]") {
    HubDb h;
    const std::string key = hub::ingest::new_webhook_key();
    CHECK(key.size() >= 43);
    CHECK(key != hub::ingest::new_webhook_key());
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec_params("INSERT INTO hub.partners (id, name, label, key_hash) VALUES ('p3', 'x', 'three', $1)",
                       hub::ingest::webhook_key_hash(key));
        tx.exec(
            "INSERT INTO hub.partners (id, name, label, key_hash, disabled_at) VALUES "
            "('p4', 'x', 'four', repeat('c', 64), now())");
        tx.commit();
    }
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    hub::ingest::PartnerDirectory dir(pool, std::chrono::milliseconds(0));
    std::optional<hub::ingest::Partner> found, missing;
    asio::co_spawn(
        ioc,
        [](hub::ingest::PartnerDirectory& d, std::string k, std::optional<hub::ingest::Partner>& f,
           std::optional<hub::ingest::Partner>& m) -> asio::awaitable<void> {
            f = co_await d.find(k);
            m = co_await d.find(k + "x");
        }(dir, key, found, missing),
        asio::detached);
    ioc.run();
    REQUIRE(found);
    CHECK(found->id == "p3");
    CHECK(found->label == "three");
    CHECK_FALSE(missing);
    CHECK(h.count("SELECT count(*) FROM hub.partners WHERE key_hash LIKE '%" + key + "%'") == 0);
}
