#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using Kind = hub::ingest::StoreOutcome::Kind;

namespace {

/// Creates order A-1 of partner p1 and returns its hub id.
std::string status_order(HubDb& h) {
    auto out = store_all(h.db.url(), {{"p1", order_json("A-1")}});
    REQUIRE(out[0].kind == Kind::created);
    return out[0].order_id;
}

std::string current_status(HubDb& h, const std::string& id) {
    pqxx::connection c(h.db.url());
    return pqxx::nontransaction(c)
        .exec_params1("SELECT delivery_status FROM hub.orders WHERE id = $1", id)[0]
        .as<std::string>();
}

}  // namespace

TEST_CASE("status: an update finds the order by the platform id and by the hub id", "[status]") {
    HubDb h;
    const std::string id = status_order(h);
    auto out = store_all(h.db.url(), {{"p1", update_json("A-1", "assigned", "2024-05-01 18:10:00")}});
    CHECK(out[0].kind == Kind::appended);
    CHECK(out[0].applied);
    CHECK(out[0].order_id == id);
    out = store_all(h.db.url(), {{"p1", update_json(id, "at_pick_up", "2024-05-01 18:20:00")}});
    CHECK(out[0].kind == Kind::appended);
    CHECK(out[0].order_id == id);
    CHECK(current_status(h, id) == "at_pick_up");
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE source = 'platform'") == 3);
}

TEST_CASE("status: another partner's order is not found, nor an unknown one", "[status]") {
    HubDb h;
    const std::string id = status_order(h);
    auto out = store_all(h.db.url(), {{"p2", update_json("A-1", "assigned", "2024-05-01 18:10:00")},
                                      {"p2", update_json(id, "assigned", "2024-05-01 18:10:00")},
                                      {"p1", update_json("NOPE", "assigned", "2024-05-01 18:10:00")}});
    for (const auto& o : out) CHECK(o.kind == Kind::order_not_found);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.inbox WHERE error_code = 'order_not_found' AND http_status = 404") == 3);
}

TEST_CASE("status: a branch_id that differs from the order's is refused", "[status]") {
    HubDb h;
    status_order(h);
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO hub.branches (id, brand_id, name) VALUES ('B2', 'BR', 'Two')");
        tx.commit();
    }
    auto out = store_all(h.db.url(), {{"p1", update_json("A-1", "assigned", "2024-05-01 18:10:00", "B2")}});
    CHECK(out[0].kind == Kind::branch_mismatch);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 1);
}

TEST_CASE("status: out-of-order updates are logged, the latest event time is current", "[status]") {
    HubDb h;
    const std::string id = status_order(h);
    store_all(h.db.url(), {{"p1", update_json("A-1", "on_the_way", "2024-05-01 18:30:00")}});
    auto late = store_all(h.db.url(), {{"p1", update_json("A-1", "assigned", "2024-05-01 18:10:00")}});
    CHECK(late[0].kind == Kind::appended);
    CHECK_FALSE(late[0].applied);
    CHECK(current_status(h, id) == "on_the_way");
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE status = 'assigned' AND NOT applied") == 1);
    // Offsets count: 18:40+03:00 is 15:40 UTC, older than 18:30 UTC.
    auto offset = store_all(h.db.url(), {{"p1", update_json("A-1", "at_pick_up", "2024-05-01T18:40:00+03:00")}});
    CHECK_FALSE(offset[0].applied);
    CHECK(current_status(h, id) == "on_the_way");
}

TEST_CASE("status: delivered and cancelled are final", "[status]") {
    HubDb h;
    const std::string id = status_order(h);
    store_all(h.db.url(), {{"p1", update_json("A-1", "delivered", "2024-05-01 18:30:00")}});
    auto after = store_all(h.db.url(), {{"p1", update_json("A-1", "on_the_way", "2024-05-01 18:40:00")},
                                        {"p1", update_json("A-1", "cancelled", "2024-05-01 18:50:00")}});
    for (const auto& o : after) {
        CHECK(o.kind == Kind::appended);
        CHECK_FALSE(o.applied);
    }
    CHECK(current_status(h, id) == "delivered");
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE NOT applied") == 2);
}

TEST_CASE("status: cancelled before it was sent, the order is not sent", "[status]") {
    HubDb h;
    const std::string id = status_order(h);
    store_all(h.db.url(), {{"p1", update_json("A-1", "cancelled", "2024-05-01 18:30:00")}});
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'cancelled'") == 1);
}

TEST_CASE("status: exact retries add nothing, 50 concurrent identical updates make one row", "[status]") {
    HubDb h;
    status_order(h);
    std::vector<std::pair<std::string, std::string>> reqs(
        50, {"p1", update_json("A-1", "assigned", "2024-05-01 18:10:00")});
    auto out = store_all(h.db.url(), reqs);
    int appended = 0;
    for (const auto& o : out) {
        CHECK((o.kind == Kind::appended || o.kind == Kind::repeated));
        appended += o.kind == Kind::appended;
    }
    CHECK(appended == 1);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE status = 'assigned'") == 1);
    // The same status at another time is another update.
    auto other = store_all(h.db.url(), {{"p1", update_json("A-1", "assigned", "2024-05-01 18:11:00")}});
    CHECK(other[0].kind == Kind::appended);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE status = 'assigned'") == 2);
}

TEST_CASE("status log: append-only for the app role, the owner and a superuser", "[status][roles]") {
    HubDb h;
    status_order(h);
    pqxx::connection c(h.db.url());  // the test cluster's superuser, who also ran the migrations
    const std::string owner = "log_owner_" + h.db.name();
    {
        pqxx::work tx(c);
        REQUIRE(tx.exec1("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].as<bool>());
        tx.exec("CREATE ROLE " + owner + " NOLOGIN");
        tx.exec("GRANT USAGE ON SCHEMA hub TO " + owner);
        tx.exec("ALTER TABLE hub.order_status_log OWNER TO " + owner);
        tx.commit();
    }
    for (std::string role : {std::string(), owner, std::string("orderhub_app")}) {
        INFO("role: " << (role.empty() ? "superuser" : role));
        const std::string set = role.empty() ? "" : "SET LOCAL ROLE " + role + "; ";
        const std::string upd = outcome_of(c, set + "UPDATE hub.order_status_log SET applied = false");
        const std::string del = outcome_of(c, set + "DELETE FROM hub.order_status_log");
        const std::string trunc = outcome_of(c, set + "TRUNCATE hub.order_status_log");
        CHECK(upd == "denied");  // insufficient_privilege: the trigger's code, or the missing grant's
        CHECK(del == "denied");
        CHECK(trunc == "denied");
    }
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 1);
    // Appending still works.
    CHECK(outcome_of(c,
                     "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, "
                     "event_time, applied) SELECT id, branch_id, partner_id, 'note', 'operator', now(), false "
                     "FROM hub.orders") == "ok");
}

TEST_CASE("status log: a superuser under session_replication_role replica cannot change it", "[status][roles]") {
    HubDb h;
    status_order(h);
    pqxx::connection c(h.db.url());  // the test cluster's superuser, who also ran the migrations
    REQUIRE(pqxx::nontransaction(c).exec1("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].as<bool>());
    const std::string replica = "SET LOCAL session_replication_role = replica; ";
    CHECK(outcome_of(c, replica + "UPDATE hub.order_status_log SET applied = NOT applied") == "denied");
    CHECK(outcome_of(c, replica + "DELETE FROM hub.order_status_log") == "denied");
    CHECK(outcome_of(c, replica + "TRUNCATE hub.order_status_log") == "denied");
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 1);
    CHECK(h.count("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'hub.order_status_log'::regclass AND tgname "
                  "LIKE 'order_status_log_no_%' AND tgenabled = 'A'") == 2);
}

TEST_CASE("auditor: reads the log, orders and items, cannot write nor read partners or the inbox", "[status][roles]") {
    HubDb h;
    status_order(h);
    const std::string user = "auditor_" + h.db.name();
    {
        pqxx::connection c(h.db.url());
        pqxx::nontransaction nt(c);
        nt.exec("CREATE ROLE " + user + " LOGIN IN ROLE orderhub_auditor");
    }
    pqxx::connection a(with_user(h.db.url(), user));
    CHECK(outcome_of(a, "SELECT * FROM hub.order_status_log") == "ok");
    CHECK(outcome_of(a, "SELECT * FROM hub.orders") == "ok");
    CHECK(outcome_of(a, "SELECT * FROM hub.order_items JOIN hub.order_item_options USING (order_id, line_no)") == "ok");
    CHECK(outcome_of(a, "SELECT * FROM hub.partners") == "denied");
    CHECK(outcome_of(a, "SELECT * FROM hub.inbox") == "denied");
    CHECK(outcome_of(a, "SELECT * FROM hub.forward_jobs") == "denied");
    CHECK(outcome_of(a,
                     "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, "
                     "event_time, applied) SELECT id, branch_id, partner_id, 'x', 'operator', now(), false "
                     "FROM hub.orders") == "denied");
    CHECK(outcome_of(a, "UPDATE hub.orders SET note = 'x'") == "denied");
}

TEST_CASE("app role: serving connections drop to orderhub_app and can do their work", "[status][roles]") {
    HubDb h;
    pqxx::connection c(h.db.url());
    hub::db::prepare_serving(c);
    CHECK(pqxx::nontransaction(c).exec1("SELECT current_user")[0].as<std::string>() == "orderhub_app");
    CHECK(outcome_of(c, "SELECT * FROM hub.partners") == "ok");
    CHECK(outcome_of(c, "DELETE FROM hub.orders") == "denied");
    CHECK(outcome_of(c, "UPDATE hub.partners SET name = 'x'") == "denied");
    // The whole request path works under the role.
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 2, .on_connect = hub::db::prepare_serving});
    hub::ingest::OrderStore store(pool, 8, 1);
    StoreOutcome out;
    asio::co_spawn(
        ioc,
        [](hub::ingest::OrderStore& s, StoreOutcome& o) -> asio::awaitable<void> {
            o = co_await store_owned(s, validated(order_json("ROLE-1")), inbox_for("p1", "{}"));
            o = co_await store_owned(s, validated(update_json("ROLE-1", "assigned", "2024-05-01 18:10:00")),
                                     inbox_for("p1", "{}"));
        }(store, out),
        asio::detached);
    ioc.run();
    CHECK(out.kind == Kind::appended);
    CHECK(out.applied);
}

TEST_CASE("app role: a login that owns nothing serves, and cannot switch the log's triggers off", "[status][roles]") {
    HubDb h;
    const std::string login = "serve_" + h.db.name();
    {
        pqxx::connection c(h.db.url());
        pqxx::nontransaction(c).exec("CREATE ROLE " + login + " LOGIN IN ROLE orderhub_app");
    }
    const std::string url = with_user(h.db.url(), login);
    {
        asio::io_context ioc;
        common::db::Pool pool({.url = url, .workers = 2, .on_connect = hub::db::prepare_serving});
        hub::ingest::OrderStore store(pool, 8, 1);
        StoreOutcome out;
        asio::co_spawn(
            ioc,
            [](hub::ingest::OrderStore& s, StoreOutcome& o) -> asio::awaitable<void> {
                o = co_await store_owned(s, validated(order_json("LOGIN-1")), inbox_for("p1", "{}"));
            }(store, out),
            asio::detached);
        ioc.run();
        CHECK(out.kind == Kind::created);
        pqxx::connection c(url);
        CHECK(outcome_of(c, "RESET ROLE; UPDATE hub.order_status_log SET applied = NOT applied") == "denied");
        CHECK(outcome_of(c, "ALTER TABLE hub.order_status_log DISABLE TRIGGER USER") != "ok");
        CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 1);
    }
    {
        pqxx::connection admin(h.db.url());
        pqxx::nontransaction(admin).exec("DROP OWNED BY " + login + "; DROP ROLE " + login);
    }
}
