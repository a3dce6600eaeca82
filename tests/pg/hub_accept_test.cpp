// Manual-accept branches in the database (sql/hub/0017_manual_accept.sql): a held job is never claimed nor given
// up; the time-out sweep ends each late one exactly once however many sweep at a time, and skips a job that an
// accept holds; an accepted job is claimed and sent as ACCEPTED.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "hub/forward/outbox.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;

TEST_CASE("manual accept: held jobs wait and the time-out ends each once but never one an accept holds", "[outbox]") {
    HubDb h;
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec("UPDATE hub.branches SET manual_accept = true, accept_timeout_minutes = 3 WHERE id = 'B1'");
        tx.exec(
            "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed) "
            "VALUES ('BR', 'production', 'http://127.0.0.1:9/', 'sealed-token')");
        tx.commit();
    }
    constexpr int kOrders = 60;
    std::vector<std::pair<std::string, std::string>> reqs;
    for (int i = 0; i < kOrders; ++i) reqs.emplace_back("p1", order_json("H-" + std::to_string(i)));
    auto stored = store_all(h.db.url(), reqs);
    const std::string first = stored[0].order_id;

    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'awaiting_acceptance' AND accept_deadline "
                  "BETWEEN created_at + interval '179 seconds' AND created_at + interval '181 seconds'") == kOrders);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    CHECK(hub::forward::claim_jobs(c, "f1", 100, std::chrono::seconds(60), "production").empty());
    CHECK(hub::forward::give_up_jobs(c, std::chrono::seconds(0)) == 0);
    CHECK(hub::forward::time_out_held_jobs(c) == 0);  // not late yet

    pqxx::nontransaction(c).exec("UPDATE hub.forward_jobs SET accept_deadline = now() - interval '1 second'");
    // An accept in progress holds the first job (as the dashboard's accept does) while two hubs sweep at once.
    pqxx::connection accepting(h.db.url());
    pqxx::work decision(accepting);
    decision.exec_params("SELECT 1 FROM hub.forward_jobs WHERE order_id = $1 FOR UPDATE", first);
    decision.exec_params(
        "UPDATE hub.forward_jobs SET state = 'pending', accepted_at = now() WHERE order_id = $1 "
        "AND state = 'awaiting_acceptance'",
        first);
    std::int64_t ended[2] = {0, 0};
    std::thread sweepers[2];
    for (int i = 0; i < 2; ++i)
        sweepers[i] = std::thread([&, i] {
            pqxx::connection s(h.db.url());
            hub::db::prepare_all(s);
            for (std::int64_t n = 1; n > 0;) ended[i] += n = hub::forward::time_out_held_jobs(s);
        });
    for (auto& t : sweepers) t.join();
    CHECK(ended[0] + ended[1] == kOrders - 1);
    decision.commit();
    CHECK(hub::forward::time_out_held_jobs(c) == 0);

    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE status = 'time_out' AND source = 'hub'") ==
          kOrders - 1);
    CHECK(h.count("SELECT count(DISTINCT order_id) FROM hub.order_status_log WHERE status = 'time_out'") ==
          kOrders - 1);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'timed_out'") == kOrders - 1);

    // The accepted one is claimed, and goes to the POS as ACCEPTED.
    auto claimed = hub::forward::claim_jobs(c, "f1", 100, std::chrono::seconds(60), "production");
    REQUIRE(claimed.size() == 1);
    CHECK(claimed[0].order_id == first);
    CHECK(claimed[0].source.auto_accept);
}

TEST_CASE("manual accept: a branch without the flag is not held, and a platform cancellation ends a wait", "[outbox]") {
    HubDb h;
    auto plain = store_all(h.db.url(), {{"p1", order_json("N-1")}});
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'pending' AND accept_deadline IS NULL") == 1);
    {
        pqxx::connection c(h.db.url());
        pqxx::nontransaction(c).exec("UPDATE hub.branches SET manual_accept = true WHERE id = 'B1'");
    }
    auto held = store_all(h.db.url(), {{"p1", order_json("N-2")}});
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    {
        pqxx::work tx(c);
        tx.exec_prepared(hub::db::kCancelPendingJob, held[0].order_id);
        tx.commit();
    }
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'cancelled'") == 1);
    auto claimed = hub::forward::claim_jobs(c, "f1", 100, std::chrono::seconds(60), "production");
    REQUIRE(claimed.size() == 1);
    CHECK(claimed[0].order_id == plain[0].order_id);
    CHECK_FALSE(claimed[0].source.auto_accept);
}
