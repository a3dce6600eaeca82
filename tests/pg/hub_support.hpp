#pragma once

// Helpers for the hub's database tests: a migrated database with a brand, a branch and two partners, webhook
// bodies, and a driver that stores many requests concurrently through the real OrderStore.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <thread>

#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/order_document.hpp"
#include "hub/ingest/store.hpp"
#include "tests/pg/support.hpp"

namespace tests::hubdb {

namespace asio = boost::asio;
using ::hub::ingest::StoreOutcome;

/// A migrated hub database with one branch and two partners.
struct HubDb {
    tests::TempDatabase db;
    HubDb() {
        pqxx::connection c(db.url());
        common::db::migrate(c, "hub", common::db::migrations_hub());
        pqxx::work tx(c);
        tx.exec("INSERT INTO hub.brands (id, name) VALUES ('BR', 'Brand')");
        tx.exec("INSERT INTO hub.branches (id, brand_id, name) VALUES ('B1', 'BR', 'One')");
        tx.exec(
            "INSERT INTO hub.partners (id, name, label, key_hash) VALUES "
            "('p1', 'P one', 'one', repeat('a', 64)), ('p2', 'P two', 'two', repeat('b', 64))");
        tx.commit();
    }
    long long count(const std::string& sql) {
        pqxx::connection c(db.url());
        return pqxx::nontransaction(c).exec1(sql)[0].as<long long>();
    }
};

/// For upgrade tests: `db` migrated up to, not including, the hub migration whose file name starts with `prefix`,
/// with HubDb's brand BR, branch B1 and partner p1.
inline void migrate_hub_before(tests::TempDatabase& db, const std::string& prefix) {
    pqxx::connection c(db.url());
    common::db::migrate(c, "hub", tests::migrations_before(common::db::migrations_hub(), prefix));
    pqxx::work tx(c);
    tx.exec("INSERT INTO hub.brands (id, name) VALUES ('BR', 'Brand')");
    tx.exec("INSERT INTO hub.branches (id, brand_id, name) VALUES ('B1', 'BR', 'One')");
    tx.exec("INSERT INTO hub.partners (id, name, label, key_hash) VALUES ('p1', 'P one', 'one', repeat('a', 64))");
    tx.commit();
}

inline std::string order_json(const std::string& id, const std::string& branch = "B1",
                              const std::string& name = "Sara") {
    return R"({"event":"order_created","event_time":"2024-05-01 18:02:11","branch_id":")" + branch +
           R"(","payload":{"id":")" + id +
           R"(","payment_method":"card","order_type":"DELIVERY","note":"ring","subtotal":41.5,"tax":6.225,
           "discount":5,"total":42.725,"is_schedule":1,"schedule_date":"2024-05-01T19:30:00+03:00","car_data":
           {"color":"#ff0000","plate_number":"123","plate_letters":"ABC","car_brand":"Kia"},"customer":{"name":")" +
           name + R"(","phone":"+966500000001","address":null},"items":[{"id":"burger","quantity":2,"price":18.25,
           "note":"","options":[{"id":"cheese","price":2.5,"quantity":1},{"id":"sauce","price":0.5,"quantity":3}]},
           {"id":"fries","quantity":1,"price":5,"options":[]}]}})";
}

inline ::hub::ingest::Validated validated(const std::string& body) {
    auto parsed = common::json::parse_strict(body);
    REQUIRE(parsed.value);
    auto v = ::hub::ingest::validate_webhook(*parsed.value);
    REQUIRE(v.value);
    return *v.value;
}

inline ::hub::ingest::InboxRecord inbox_for(const std::string& partner, const std::string& body) {
    ::hub::ingest::InboxRecord r;
    r.partner_id = partner;
    r.request_id = "req";
    r.event = "order_created";
    r.headers_json = "{}";
    r.body = body;
    return r;
}

/// OrderStore::store() of arguments this coroutine owns: store() borrows its own (the caller keeps them until it
/// completes), and GCC 12 mishandles temporaries that live across a co_await.
inline asio::awaitable<StoreOutcome> store_owned(::hub::ingest::OrderStore& s, ::hub::ingest::Validated order,
                                                 ::hub::ingest::InboxRecord inbox) {
    co_return co_await s.store(std::move(order), std::move(inbox));
}

/// Whether `store` has a pipeline and it has its connection.
inline bool pipe_ready(const ::hub::ingest::OrderStore& store) {
    const auto stats = store.pipe_stats();
    return stats && stats->ready;
}

/// Waits, at most 10 s, until `store`'s pipeline has its connection (it connects on a thread of its own).
inline void wait_for_pipe(const ::hub::ingest::OrderStore& store) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pipe_ready(store) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(pipe_ready(store));
}

/// Stores each body from its own coroutine, all at once, and returns the outcomes in order.
inline std::vector<StoreOutcome> store_all(const std::string& url,
                                           const std::vector<std::pair<std::string, std::string>>& reqs,
                                           std::size_t workers = 4) {
    asio::io_context ioc;
    common::db::Pool pool({.url = url, .workers = workers, .on_connect = ::hub::db::prepare_all});
    ::hub::ingest::OrderStore store(pool, 64, workers > 1 ? workers - 1 : 1);
    std::vector<StoreOutcome> out(reqs.size());
    std::vector<std::string> errors;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        asio::co_spawn(
            asio::make_strand(ioc),
            [](::hub::ingest::OrderStore& s, std::string partner, std::string body, StoreOutcome& slot,
               std::vector<std::string>& errs) -> asio::awaitable<void> {
                try {
                    slot = co_await store_owned(s, validated(body), inbox_for(partner, body));
                } catch (const std::exception& e) {
                    errs.push_back(e.what());
                }
            }(store, reqs[i].first, reqs[i].second, out[i], errors),
            asio::detached);
    }
    ioc.run();
    REQUIRE(errors.empty());
    return out;
}

/// An order_updated body.
inline std::string update_json(const std::string& order_id, const std::string& status, const std::string& time,
                               const std::string& branch = "B1") {
    return R"({"event":"order_updated","event_time":")" + time + R"(","branch_id":")" + branch +
           R"(","payload":{"order_id":")" + order_id + R"(","status":")" + status + R"("}})";
}

/// Stores an order_created body as a hub before sql/hub/0024 did, with plain SQL: the order row, one row per item in
/// hub.order_items and per option in hub.order_item_options, its first status-log row and its job; returns the
/// order's id. For the upgrade tests, whose databases start at a schema older than the one insert_orders writes.
/// The payload hash is the hub's, so the same body sent after the upgrade is a duplicate.
inline std::string store_before_lines(const std::string& url, const std::string& partner, const std::string& body) {
    const auto v = validated(body);
    const auto& order = std::get<::hub::ingest::OrderCreated>(v.payload);
    pqxx::connection c(url);
    pqxx::work tx(c);
    const auto id = tx.exec_params1(R"(
        WITH d AS (SELECT $3::jsonb AS j),
        o AS (
            INSERT INTO hub.orders (id, partner_id, external_id, branch_id, brand_id, payload_hash, event_time,
                                    payment_method, order_type, note, subtotal, tax, discount, total, is_schedule,
                                    schedule_date, car_color, car_plate_number, car_plate_letters, car_brand,
                                    customer_name, customer_phone, customer_address, status_time)
            SELECT gen_random_uuid()::text, $1, j->>'external_id', b.id, b.brand_id, $2, t.event_time,
                   j->>'payment_method', j->>'order_type', j->>'note', (j->>'subtotal')::numeric,
                   (j->>'tax')::numeric, (j->>'discount')::numeric, (j->>'total')::numeric,
                   (j->>'is_schedule')::boolean, t.schedule_date, j->'car_data'->>'color',
                   j->'car_data'->>'plate_number', j->'car_data'->>'plate_letters', j->'car_data'->>'car_brand',
                   j->'customer'->>'name', j->'customer'->>'phone', j->'customer'->>'address', t.event_time
            FROM d JOIN hub.branches b ON b.id = j->>'branch_id',
            -- Times without an offset are in the partner's zone: UTC for the test partners.
            LATERAL (SELECT CASE WHEN (j->>'event_time_has_offset')::boolean THEN (j->>'event_time')::timestamptz
                                 ELSE (j->>'event_time')::timestamp AT TIME ZONE 'UTC' END AS event_time,
                            CASE WHEN j->>'schedule_date' IS NULL THEN NULL
                                 WHEN (j->>'schedule_date_has_offset')::boolean THEN (j->>'schedule_date')::timestamptz
                                 ELSE (j->>'schedule_date')::timestamp AT TIME ZONE 'UTC' END AS schedule_date) t
            RETURNING id, branch_id, brand_id, event_time),
        i AS (
            INSERT INTO hub.order_items (order_id, line_no, item_id, quantity, price, note)
            SELECT o.id, r.line_no, r.id, r.quantity, r.price, r.note
            FROM o, d, jsonb_to_recordset(d.j->'items') AS r(line_no int, id text, quantity int, price numeric, note text)),
        x AS (
            INSERT INTO hub.order_item_options (order_id, line_no, option_no, option_id, price, quantity)
            SELECT o.id, r.line_no, r.option_no, r.id, r.price, r.quantity
            FROM o, d, jsonb_to_recordset(d.j->'options')
                       AS r(line_no int, option_no int, id text, price numeric, quantity int)),
        l AS (
            INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
            SELECT id, branch_id, $1, 'received', 'platform', event_time, true FROM o),
        jb AS (INSERT INTO hub.forward_jobs (order_id, brand_id, due_at, due_since) SELECT id, brand_id, now(), now() FROM o)
        SELECT id FROM o)",
                                    partner, ::hub::ingest::payload_hash(v.envelope, order),
                                    boost::json::serialize(::hub::ingest::order_document(v.envelope, order)))[0]
                        .as<std::string>();
    tx.commit();
    return id;
}

/// `url` with its user name replaced (URIs of the form postgresql://user@host:port/db).
inline std::string with_user(const std::string& url, const std::string& user) {
    auto scheme = url.find("://") + 3;
    auto at = url.find('@', scheme);
    return url.substr(0, scheme) + user + url.substr(at);
}

/// Runs `sql` in its own transaction: "ok", "denied" (insufficient_privilege, which libpqxx 6.4 reports by type,
/// not by SQLSTATE), or the error's message.
inline std::string outcome_of(pqxx::connection& c, const std::string& sql) {
    try {
        pqxx::work tx(c);
        tx.exec(sql);
        tx.commit();
        return "ok";
    } catch (const pqxx::insufficient_privilege&) {
        return "denied";
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace tests::hubdb
