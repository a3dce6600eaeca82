// The forwarder's group commit: many claims ended in one statement (hub::forward::finish_jobs), each exactly as
// it would end alone.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "hub/forward/mapping.hpp"
#include "hub/forward/outbox.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using hub::forward::AttemptOutcome;
using hub::forward::AttemptRecord;
using hub::forward::FinishOutcome;
using hub::forward::FinishRequest;
using hub::forward::JobState;

namespace {

AttemptRecord attempt(unsigned status, AttemptOutcome outcome, const std::string& error = "") {
    AttemptRecord a;
    a.url = "http://127.0.0.1:1/api/orders";
    a.http_status = status;
    a.latency_ms = 7;
    a.outcome = outcome;
    a.error = error;
    return a;
}

FinishRequest end(const std::string& order_id, JobState state, AttemptRecord a, bool retrying = false) {
    FinishRequest r;
    r.forwarder = "f1";
    r.result.order_id = order_id;
    r.result.state = state;
    r.result.attempts.push_back(std::move(a));
    r.retrying = retrying;
    return r;
}

}  // namespace

TEST_CASE("outbox: a claim reads each order whole: lines in order, options, its partner's mappings, the POS",
          "[outbox]") {
    HubDb h;
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec(
            "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed, email, password_sealed) "
            "VALUES ('BR', 'production', 'http://127.0.0.1:9/', 'sealed-token', 'ops@example.test', 'sealed-pw')");
        tx.exec(
            "INSERT INTO hub.item_mappings (partner_id, kind, external_id, pos_id) VALUES "
            "('p1', 'item', 'burger', 'P-BURGER'), ('p1', 'option', 'sauce', 'M-SAUCE'), "
            "('p2', 'item', 'fries', 'P-FRIES-2'), ('p1', 'option', 'burger', 'not-an-item')");
        tx.commit();
    }
    auto stored = store_all(h.db.url(), {{"p1", order_json("X")}, {"p2", order_json("Y", "B1", "Ali")}});
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);

    auto claimed = hub::forward::claim_jobs(c, "f1", 10, std::chrono::seconds(60), "production");
    REQUIRE(claimed.size() == 2);
    std::map<std::string, const hub::forward::ClaimedJob*> by_external;
    for (const auto& j : claimed) by_external[j.source.external_id] = &j;
    REQUIRE(by_external.size() == 2);
    const auto& x = *by_external.at("X");
    const auto& y = *by_external.at("Y");

    CHECK(x.order_id == stored[0].order_id);
    CHECK(x.attempt == 1);
    CHECK(x.delivery_status == "received");
    CHECK(x.scheduled);
    CHECK(x.stored_at > 1.7e9);
    const auto& s = x.source;
    CHECK(s.pos_branch_id == "B1");
    CHECK(s.brand_id == "BR");
    CHECK(s.partner_label == "one");
    CHECK(s.note == "ring");
    CHECK(s.subtotal == 41'500);
    CHECK(s.tax == 6'225);
    CHECK(s.total == 42'725);
    CHECK_FALSE(s.auto_accept);
    CHECK(s.customer_name == std::optional<std::string>("Sara"));
    CHECK(s.customer_phone == std::optional<std::string>("+966500000001"));
    REQUIRE(s.items.size() == 2);
    CHECK(s.items[0].id == "burger");
    CHECK(s.items[0].quantity == 2);
    CHECK(s.items[0].price == 18'250);
    CHECK(s.items[0].note.empty());
    REQUIRE(s.items[0].options.size() == 2);
    CHECK(s.items[0].options[0].id == "cheese");
    CHECK(s.items[0].options[0].price == 2'500);
    CHECK(s.items[0].options[0].quantity == 1);
    CHECK(s.items[0].options[1].id == "sauce");
    CHECK(s.items[0].options[1].price == 500);
    CHECK(s.items[0].options[1].quantity == 3);
    CHECK(s.items[1].id == "fries");
    CHECK(s.items[1].price == 5'000);
    CHECK(s.items[1].options.empty());
    // Only p1's mappings, each of its own kind: an option mapping never renames an item of the same id.
    CHECK(s.item_map == std::map<std::string, std::string>{{"burger", "P-BURGER"}});
    CHECK(s.option_map == std::map<std::string, std::string>{{"sauce", "M-SAUCE"}});
    CHECK(y.source.item_map == std::map<std::string, std::string>{{"fries", "P-FRIES-2"}});
    CHECK(y.source.option_map.empty());
    CHECK(y.source.partner_label == "two");
    CHECK(y.source.customer_name == std::optional<std::string>("Ali"));

    REQUIRE(x.connection);
    CHECK(x.connection->brand_id == "BR");
    CHECK(x.connection->environment == "production");
    CHECK(x.connection->base_url == "http://127.0.0.1:9/");
    CHECK(x.connection->token_sealed == "sealed-token");
    CHECK(x.connection->email == "ops@example.test");
    CHECK(x.connection->password_sealed == "sealed-pw");
    CHECK(x.connection->ca_file.empty());

    // What the POS receives: mapped ids where a mapping exists, the platform's ids elsewhere.
    const std::string body = hub::forward::pos_order_json(s);
    CHECK(body.find(R"("id":"P-BURGER")") != std::string::npos);
    CHECK(body.find(R"("id":"M-SAUCE")") != std::string::npos);
    CHECK(body.find(R"("id":"cheese")") != std::string::npos);
    CHECK(body.find(R"("id":"fries")") != std::string::npos);

    // Claimed jobs are not claimed again; given back, they are, and another environment has no POS connection.
    CHECK(hub::forward::claim_jobs(c, "f2", 10, std::chrono::seconds(60), "production").empty());
    hub::forward::release_jobs(c, "f1");
    auto again = hub::forward::claim_jobs(c, "f2", 10, std::chrono::seconds(60), "staging");
    REQUIRE(again.size() == 2);
    for (const auto& j : again) {
        CHECK(j.attempt == 1);
        CHECK_FALSE(j.connection);
        CHECK(j.source.items.size() == 2);
    }
}

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
    requests.push_back(end(ids["A"], JobState::delivered, attempt(201, AttemptOutcome::delivered)));
    requests.back().result.pos_order_id = "POS-1";
    requests.push_back(
        end(ids["B"], JobState::rejected, attempt(422, AttemptOutcome::rejected, "unknown product"), false));
    requests.back().result.error = std::string(499, 'y') + "éé" + long_error;
    requests.push_back(end(ids["C"], JobState::pending, attempt(503, AttemptOutcome::retry, "busy")));
    requests.back().result.delay = std::chrono::milliseconds(60'000);
    requests.back().result.error = "busy";
    requests.push_back(end(ids["D"], JobState::delivered, attempt(201, AttemptOutcome::delivered)));  // lost, first try
    requests.push_back(
        end(ids["E"], JobState::delivered, attempt(201, AttemptOutcome::delivered), true));  // lost, a retry
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

TEST_CASE("outbox: a single claim's end follows the same rules", "[outbox]") {
    HubDb h;
    auto stored = store_all(h.db.url(), {{"p1", order_json("S")}});
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    auto claimed = hub::forward::claim_jobs(c, "f1", 10, std::chrono::seconds(60), "production");
    REQUIRE(claimed.size() == 1);
    auto r = end(stored[0].order_id, JobState::rejected, attempt(422, AttemptOutcome::rejected));
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
    requests.push_back(end(stored[0].order_id, JobState::delivered, attempt(201, AttemptOutcome::delivered)));
    requests.back().result.pos_order_id = "POS-1";
    requests.push_back(
        end(stored[1].order_id, JobState::rejected, attempt(422, AttemptOutcome::rejected, "unknown product")));
    requests.push_back(end(stored[2].order_id, JobState::pending, attempt(503, AttemptOutcome::retry, "busy")));
    requests.back().result.delay = std::chrono::milliseconds(60'000);
    std::vector<FinishOutcome> owned(requests.size());
    std::vector<std::exception_ptr> errors(requests.size());
    hub::forward::finish_jobs(c, requests, owned, errors);
    for (const auto& e : errors) CHECK_FALSE(e);

    // By event id: a status-log row takes its id as it is written (it is its own event, sql/hub/0022), the job-state
    // and attempt events theirs at the end of the statement that wrote them (their statement triggers).
    auto events = [&](const std::string& id) {
        return pqxx::nontransaction(c)
            .exec_params1(
                "SELECT string_agg(branch_id || ':' || kind || ':' || coalesce(detail, ''), ',' ORDER BY id) "
                "FROM hub.dashboard_event_log WHERE order_id = $1",
                id)[0]
            .as<std::string>("");
    };
    CHECK(events(stored[0].order_id) ==
          "B1:status:received,B1:job:in_flight,B1:status:pos_accepted,B1:job:delivered,B1:attempt:delivered");
    CHECK(events(stored[1].order_id) ==
          "B1:status:received,B1:job:in_flight,B1:status:pos_rejected,B1:job:rejected,B1:attempt:rejected");
    CHECK(events(stored[2].order_id) == "B1:status:received,B1:job:in_flight,B1:job:pending,B1:attempt:retry");
    CHECK(pqxx::nontransaction(c).exec1("SELECT count(*) FROM hub.dashboard_event_log")[0].as<int>() == 14);
}

TEST_CASE("outbox: when the one statement refuses a claim's data, the claims end one by one, none lost", "[outbox]") {
    HubDb h;
    std::vector<std::pair<std::string, std::string>> reqs;
    for (const char* id : {"A", "B", "C"}) reqs.emplace_back("p1", order_json(id));
    auto stored = store_all(h.db.url(), reqs);
    REQUIRE(stored.size() == 3);
    pqxx::connection c(h.db.url());
    hub::db::prepare_all(c);
    REQUIRE(hub::forward::claim_jobs(c, "f1", 10, std::chrono::seconds(60), "production").size() == 3);

    std::vector<FinishRequest> requests;
    requests.push_back(end(stored[0].order_id, JobState::delivered, attempt(201, AttemptOutcome::delivered)));
    requests.back().result.pos_order_id = "POS-A";
    // A NUL in the POS's error text: JSON carries it as \u0000, which PostgreSQL refuses to turn into text.
    requests.push_back(end(stored[1].order_id, JobState::rejected,
                           attempt(422, AttemptOutcome::rejected, std::string("bad\0byte", 8))));
    requests.push_back(end(stored[2].order_id, JobState::pending, attempt(503, AttemptOutcome::retry, "busy")));
    requests.back().result.delay = std::chrono::milliseconds(60'000);
    std::vector<FinishOutcome> owned(requests.size());
    std::vector<std::exception_ptr> errors(requests.size());
    hub::forward::finish_jobs(c, requests, owned, errors);

    auto q = [&](const std::string& sql, const std::string& id) {
        return pqxx::nontransaction(c).exec_params1(sql, id)[0].as<std::string>("");
    };
    const char* job = "SELECT state || '|' || coalesce(pos_order_id, '') FROM hub.forward_jobs WHERE order_id = $1";
    const char* attempts = "SELECT count(*)::text FROM hub.pos_delivery_attempts WHERE order_id = $1";
    CHECK_FALSE(errors[0]);
    CHECK(owned[0].owned);
    CHECK(q(job, stored[0].order_id) == "delivered|POS-A");
    CHECK(q(attempts, stored[0].order_id) == "1");
    CHECK_FALSE(errors[2]);
    CHECK(owned[2].owned);
    CHECK(q(job, stored[2].order_id) == "pending|");
    CHECK(q(attempts, stored[2].order_id) == "1");
    // Alone, B's text goes as a statement parameter (up to the NUL), so its claim ends too.
    CHECK_FALSE(errors[1]);
    CHECK(owned[1].owned);
    CHECK(q(job, stored[1].order_id) == "rejected|");
    CHECK(q(attempts, stored[1].order_id) == "1");
}
