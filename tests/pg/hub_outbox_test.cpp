// The forwarder's group commit: many claims ended in one statement (hub::forward::finish_jobs), each exactly as
// it would end alone.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "hub/forward/outbox.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using hub::forward::AttemptRecord;
using hub::forward::FinishOutcome;
using hub::forward::FinishRequest;

namespace {

AttemptRecord attempt(unsigned status, const std::string& outcome, const std::string& error = "") {
    AttemptRecord a;
    a.url = "http://127.0.0.1:1/api/orders";
    a.http_status = status;
    a.latency_ms = 7;
    a.outcome = outcome;
    a.error = error;
    return a;
}

FinishRequest end(const std::string& order_id, const std::string& state, AttemptRecord a, bool retrying = false) {
    FinishRequest r;
    r.forwarder = "f1";
    r.result.order_id = order_id;
    r.result.state = state;
    r.result.attempts.push_back(std::move(a));
    r.retrying = retrying;
    return r;
}

}  // namespace

TEST_CASE("outbox: one statement ends many claims, each as it would end alone", "[outbox]") {
    HubDb h;
    std::vector<std::pair<std::string, std::string>> reqs;
    for (const char* id : {"A", "B", "C", "D", "E"}) reqs.emplace_back("p1", order_json(id));
    auto stored = store_all(h.db.url(), reqs);
    std::map<std::string, std::string> ids;  // external -> hub id
    for (std::size_t i = 0; i < stored.size(); ++i) ids[std::string(1, "ABCDE"[i])] = stored[i].order_id;

    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    auto claimed = hub::forward::claim_jobs(c, "f1", 10, std::chrono::seconds(60), "production");
    REQUIRE(claimed.size() == 5);
    // D and E were taken over by another forwarder meanwhile (their lease expired).
    pqxx::nontransaction(c).exec_params("UPDATE hub.forward_jobs SET claimed_by = 'f2' WHERE order_id IN ($1, $2)",
                                        ids["D"], ids["E"]);

    const std::string long_error = std::string(600, 'x') + "é";  // cut at 500 characters, not bytes
    std::vector<FinishRequest> requests;
    requests.push_back(end(ids["A"], "delivered", attempt(201, "delivered")));
    requests.back().result.pos_order_id = "POS-1";
    requests.push_back(end(ids["B"], "rejected", attempt(422, "rejected", "unknown product"), false));
    requests.back().result.error = std::string(499, 'y') + "éé" + long_error;
    requests.push_back(end(ids["C"], "pending", attempt(503, "retry", "busy")));
    requests.back().result.delay = std::chrono::milliseconds(60'000);
    requests.back().result.error = "busy";
    requests.push_back(end(ids["D"], "delivered", attempt(201, "delivered")));        // lost, first try
    requests.push_back(end(ids["E"], "delivered", attempt(201, "delivered"), true));  // lost, a retry
    std::vector<FinishOutcome> owned(requests.size());
    std::vector<std::exception_ptr> errors(requests.size());
    hub::forward::finish_jobs(c, requests, owned, errors);

    for (const auto& e : errors) CHECK_FALSE(e);
    CHECK(owned[0].owned);
    CHECK(owned[1].owned);
    CHECK(owned[2].owned);
    CHECK_FALSE(owned[3].owned);
    CHECK_FALSE(owned[4].owned);

    auto q = [&](const std::string& sql, const std::string& id) {
        return pqxx::nontransaction(c).exec_params1(sql, id)[0].as<std::string>("");
    };
    const char* job =
        "SELECT state || '|' || coalesce(pos_order_id, '') || '|' || coalesce(claimed_by, '') || '|' || "
        "(due_at > now() + interval '50 seconds') FROM hub.forward_jobs WHERE order_id = $1";
    CHECK(q(job, ids["A"]) == "delivered|POS-1||false");
    CHECK(q(job, ids["B"]) == "rejected|||false");
    CHECK(q(job, ids["C"]) == "pending|||true");
    CHECK(q(job, ids["D"]) == "in_flight||f2|false");  // the other forwarder's claim is untouched
    CHECK(q(job, ids["E"]) == "in_flight||f2|false");

    const char* log =
        "SELECT string_agg(status || ':' || source || ':' || coalesce(actor, '') || ':' || "
        "coalesce(char_length(detail), 0), ',' ORDER BY id) FROM hub.order_status_log "
        "WHERE order_id = $1 AND status <> 'received'";
    CHECK(q(log, ids["A"]) == "pos_accepted:pos:POS-1:0");
    CHECK(q(log, ids["B"]) == "pos_rejected:pos::500");
    CHECK(q(log, ids["C"]).empty());  // a retry is not an auditor's event
    CHECK(q(log, ids["D"]).empty());

    const char* attempts =
        "SELECT count(*)::text || '|' || coalesce(string_agg(outcome || ':' || "
        "coalesce(http_status, 0) || ':' || forwarder, ','), '') FROM hub.pos_delivery_attempts "
        "WHERE order_id = $1";
    CHECK(q(attempts, ids["A"]) == "1|delivered:201:f1");
    CHECK(q(attempts, ids["C"]) == "1|retry:503:f1");
    CHECK(q(attempts, ids["D"]) == "1|delivered:201:f1");  // it happened: recorded although the claim was lost
    CHECK(q(attempts, ids["E"]) == "0|");                  // a retry of a lost claim may have been recorded before
}

TEST_CASE("outbox: a single claim's end keeps its own path and the same rules", "[outbox]") {
    HubDb h;
    auto stored = store_all(h.db.url(), {{"p1", order_json("S")}});
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    auto claimed = hub::forward::claim_jobs(c, "f1", 10, std::chrono::seconds(60), "production");
    REQUIRE(claimed.size() == 1);
    auto r = end(stored[0].order_id, "rejected", attempt(422, "rejected"));
    r.result.error = std::string(600, 'z') + "é";
    CHECK(hub::forward::finish_job(c, "f1", r.result, claimed[0]));
    CHECK(pqxx::nontransaction(c)
              .exec_params1("SELECT char_length(detail) FROM hub.order_status_log WHERE order_id = $1 AND "
                            "status = 'pos_rejected'",
                            stored[0].order_id)[0]
              .as<int>() == 500);
    CHECK_FALSE(hub::forward::finish_job(c, "f1", r.result, claimed[0], true));  // no longer held
}

TEST_CASE("dashboard events: one per status row, attempt and change of a job's state, many per statement",
          "[outbox][dashboard]") {
    HubDb h;
    std::vector<std::pair<std::string, std::string>> reqs;
    for (const char* id : {"A", "B", "C"}) reqs.emplace_back("p1", order_json(id));
    auto stored = store_all(h.db.url(), reqs);  // one group-commit statement: three 'received' rows
    REQUIRE(stored.size() == 3);

    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    REQUIRE(hub::forward::claim_jobs(c, "f1", 10, std::chrono::seconds(60), "production").size() == 3);
    // An update that changes no job's state writes no event.
    pqxx::nontransaction(c).exec0("UPDATE hub.forward_jobs SET updated_at = now()");
    std::vector<FinishRequest> requests;
    requests.push_back(end(stored[0].order_id, "delivered", attempt(201, "delivered")));
    requests.back().result.pos_order_id = "POS-1";
    requests.push_back(end(stored[1].order_id, "rejected", attempt(422, "rejected", "unknown product")));
    requests.push_back(end(stored[2].order_id, "pending", attempt(503, "retry", "busy")));
    requests.back().result.delay = std::chrono::milliseconds(60'000);
    std::vector<FinishOutcome> owned(requests.size());
    std::vector<std::exception_ptr> errors(requests.size());
    hub::forward::finish_jobs(c, requests, owned, errors);
    for (const auto& e : errors) CHECK_FALSE(e);

    // In each statement's order of writing, as the row triggers of 0006 wrote them.
    auto events = [&](const std::string& id) {
        return pqxx::nontransaction(c)
            .exec_params1(
                "SELECT string_agg(branch_id || ':' || kind || ':' || coalesce(detail, ''), ',' ORDER BY id) "
                "FROM hub.dashboard_events WHERE order_id = $1",
                id)[0]
            .as<std::string>("");
    };
    CHECK(events(stored[0].order_id) ==
          "B1:status:received,B1:job:in_flight,B1:job:delivered,B1:status:pos_accepted,B1:attempt:delivered");
    CHECK(events(stored[1].order_id) ==
          "B1:status:received,B1:job:in_flight,B1:job:rejected,B1:status:pos_rejected,B1:attempt:rejected");
    CHECK(events(stored[2].order_id) == "B1:status:received,B1:job:in_flight,B1:job:pending,B1:attempt:retry");
    CHECK(pqxx::nontransaction(c).exec1("SELECT count(*) FROM hub.dashboard_events")[0].as<int>() == 14);
}
