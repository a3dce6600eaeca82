// Claims against a real database: fair across brands, blind to blocked ones, leaving jobs past their give-up time
// to the sweep that ends them; and the claim's lease bookkeeping (give back unsent, renew).
#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "hub/forward/outbox.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using hub::forward::ClaimPlan;
using namespace std::chrono_literals;

namespace {

/// A second brand with its branch B2, `big` orders for B1 (brand BR) and `small` for B2 (brand BR2).
std::vector<StoreOutcome> two_brands(HubDb& h, int big, int small) {
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO hub.brands (id, name) VALUES ('BR2', 'Brand two')");
        tx.exec("INSERT INTO hub.branches (id, brand_id, name) VALUES ('B2', 'BR2', 'Two')");
        tx.commit();
    }
    std::vector<std::pair<std::string, std::string>> reqs;
    for (int i = 0; i < big; ++i) reqs.emplace_back("p1", order_json("big-" + std::to_string(i), "B1"));
    for (int i = 0; i < small; ++i) reqs.emplace_back("p1", order_json("small-" + std::to_string(i), "B2"));
    return store_all(h.db.url(), reqs);
}

std::map<std::string, int> by_brand(const std::vector<hub::forward::ClaimedJob>& jobs) {
    std::map<std::string, int> n;
    for (const auto& j : jobs) ++n[j.source.brand_id];
    return n;
}

}  // namespace

TEST_CASE("claim: a brand with a large backlog cannot fill a claim", "[claim]") {
    HubDb h;
    two_brands(h, 200, 5);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    const ClaimPlan plan{20, 10, {}};
    auto jobs = hub::forward::claim_jobs(c, "f1", plan, 60s, "production", 1800s);
    CHECK(by_brand(jobs) == std::map<std::string, int>{{"BR", 10}, {"BR2", 5}});
    // The stored jobs know their brand: the claim walked each brand's own index.
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id "
                  "WHERE j.brand_id <> o.brand_id") == 0);
}

TEST_CASE("claim: the overall limit holds, and quotas override the default per brand", "[claim]") {
    HubDb h;
    two_brands(h, 50, 50);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    auto jobs = hub::forward::claim_jobs(c, "f1", ClaimPlan{7, 64, {}}, 60s, "production", 1800s);
    CHECK(jobs.size() == 7);
    jobs = hub::forward::claim_jobs(c, "f1", ClaimPlan{100, 64, {{"BR", 3}, {"BR2", 2}}}, 60s, "production", 1800s);
    CHECK(by_brand(jobs) == std::map<std::string, int>{{"BR", 3}, {"BR2", 2}});
}

TEST_CASE("claim: a blocked brand's due jobs stay in the database, untouched and not counted as attempts", "[claim]") {
    HubDb h;
    two_brands(h, 30, 4);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    auto jobs = hub::forward::claim_jobs(c, "f1", ClaimPlan{100, 64, {{"BR", 0}}}, 60s, "production", 1800s);
    CHECK(by_brand(jobs) == std::map<std::string, int>{{"BR2", 4}});
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE brand_id = 'BR' AND state = 'pending' "
                  "AND attempts = 0 AND claimed_by IS NULL") == 30);
    CHECK(hub::forward::claim_jobs(c, "f1", ClaimPlan{100, 64, {{"BR", 0}}}, 60s, "production", 1800s).empty());
}

TEST_CASE("claim: jobs past their give-up time are not claimed, the sweep ends them as dead with a status row",
          "[claim]") {
    HubDb h;
    auto stored = two_brands(h, 6, 0);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    pqxx::nontransaction(c).exec_params(
        "UPDATE hub.forward_jobs SET due_since = now() - interval '31 minutes', last_error = 'connect_refused' "
        "WHERE order_id IN ($1, $2)",
        stored[0].order_id, stored[1].order_id);
    auto jobs = hub::forward::claim_jobs(c, "f1", ClaimPlan{100, 64, {}}, 60s, "production", 1800s);
    CHECK(jobs.size() == 4);
    for (const auto& j : jobs) {
        CHECK(j.order_id != stored[0].order_id);
        CHECK(j.order_id != stored[1].order_id);
    }
    CHECK(hub::forward::give_up_jobs(c, 1800s) == 2);
    CHECK(hub::forward::give_up_jobs(c, 1800s) == 0);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'dead' AND attempts = 0 AND "
                  "last_error = 'gave up: not delivered within 00:30:00 of being due (last error: connect_refused)'") ==
          2);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log WHERE status = 'forward_dead' AND source = 'hub' "
                  "AND detail LIKE 'gave up%'") == 2);
    // Jobs in flight are not the sweep's: their claim ends them.
    pqxx::nontransaction(c).exec("UPDATE hub.forward_jobs SET due_since = now() - interval '2 hours'");
    CHECK(hub::forward::give_up_jobs(c, 1800s) == 0);
}

TEST_CASE("claim: jobs given back unsent are due again and their claim is not an attempt", "[claim]") {
    HubDb h;
    two_brands(h, 3, 0);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    auto jobs = hub::forward::claim_jobs(c, "f1", ClaimPlan{100, 64, {}}, 60s, "production", 1800s);
    REQUIRE(jobs.size() == 3);
    hub::forward::give_back_jobs(c, "f2", {jobs[0].order_id});  // not f2's: nothing happens
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'in_flight'") == 3);
    hub::forward::give_back_jobs(c, "f1", {jobs[0].order_id, jobs[1].order_id});
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'pending' AND attempts = 0 "
                  "AND claimed_by IS NULL AND lease_until IS NULL") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE state = 'in_flight' AND claimed_by = 'f1'") == 1);
    auto again = hub::forward::claim_jobs(c, "f3", ClaimPlan{100, 64, {}}, 60s, "production", 1800s);
    CHECK(again.size() == 2);
    for (const auto& j : again) CHECK(j.attempt == 1);
}

TEST_CASE("claim: renewing extends the leases of the jobs a forwarder holds, and only those", "[claim]") {
    HubDb h;
    two_brands(h, 2, 2);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    REQUIRE(hub::forward::claim_jobs(c, "f1", ClaimPlan{100, 64, {{"BR2", 0}}}, 10s, "production", 1800s).size() == 2);
    REQUIRE(hub::forward::claim_jobs(c, "f2", ClaimPlan{100, 64, {}}, 10s, "production", 1800s).size() == 2);
    hub::forward::renew_leases(c, "f1", 600s);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE claimed_by = 'f1' "
                  "AND lease_until > now() + interval '500 seconds'") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE claimed_by = 'f2' "
                  "AND lease_until < now() + interval '11 seconds'") == 2);
}

TEST_CASE("claim: a breaker's opening and closing are recorded for every brand on its host", "[claim]") {
    HubDb h;
    two_brands(h, 0, 0);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    pqxx::nontransaction(c).exec(
        "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed) VALUES "
        "('BR', 'production', 'http://127.0.0.1:9/', 't'), ('BR2', 'production', 'http://127.0.0.1:9/x', 't'), "
        "('BR', 'staging', 'http://127.0.0.1:9/', 't')");
    hub::forward::write_pos_health(c, "production", "http://127.0.0.1:9", true, "read_timeout", {"BR", "BR2"}, "f1");
    CHECK(h.count("SELECT count(*) FROM hub.pos_connection_health WHERE state = 'open' AND environment = 'production' "
                  "AND host = 'http://127.0.0.1:9' AND last_error = 'read_timeout'") == 2);
    const auto since = h.count(
        "SELECT extract(epoch FROM unreachable_since)::bigint FROM hub.pos_connection_health "
        "WHERE brand_id = 'BR'");
    pqxx::nontransaction(c).exec("SELECT pg_sleep(1.1)");
    // Opened again by another forwarder: the banner keeps the time it first became unreachable.
    hub::forward::write_pos_health(c, "production", "http://127.0.0.1:9", true, "connect_refused", {"BR"}, "f2");
    CHECK(h.count("SELECT extract(epoch FROM unreachable_since)::bigint FROM hub.pos_connection_health "
                  "WHERE brand_id = 'BR'") == since);
    hub::forward::write_pos_health(c, "production", "http://127.0.0.1:9", false, "", {"BR", "BR2"}, "f1");
    CHECK(h.count("SELECT count(*) FROM hub.pos_connection_health WHERE state = 'closed' "
                  "AND unreachable_since IS NULL") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.pos_connection_health WHERE environment = 'staging'") == 0);
}
