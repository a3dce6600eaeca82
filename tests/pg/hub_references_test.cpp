// What an order names stays as it was: sql/hub/0019_order_references.sql and 0020_status_log_reference.sql replaced
// the per-order foreign-key checks by guards on the rows an order names (docs/auditing.md).
#include <future>
#include <thread>

#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using Kind = hub::ingest::StoreOutcome::Kind;

namespace {

constexpr const char* kNamedByOrders = "named by stored orders";

std::string make_order(HubDb& h, const std::string& partner = "p1") {
    auto out = store_all(h.db.url(), {{partner, order_json("A-1")}});
    REQUIRE(out[0].kind == Kind::created);
    return out[0].order_id;
}

bool refused_as_named(const std::string& outcome) { return outcome.find(kNamedByOrders) != std::string::npos; }

}  // namespace

TEST_CASE("references: a partner or branch that an order names is neither deleted, renamed nor moved", "[references]") {
    HubDb h;
    const std::string id = make_order(h);
    pqxx::connection c(h.db.url());
    CHECK(refused_as_named(outcome_of(c, "DELETE FROM hub.partners WHERE id = 'p1'")));
    CHECK(refused_as_named(outcome_of(c, "UPDATE hub.partners SET id = 'p9' WHERE id = 'p1'")));
    CHECK(refused_as_named(outcome_of(c, "DELETE FROM hub.branches WHERE id = 'B1'")));
    CHECK(refused_as_named(outcome_of(c, "UPDATE hub.branches SET id = 'B9' WHERE id = 'B1'")));
    CHECK(outcome_of(c, "INSERT INTO hub.brands (id, name) VALUES ('BR2', 'Other')") == "ok");
    CHECK(refused_as_named(outcome_of(c, "UPDATE hub.branches SET brand_id = 'BR2' WHERE id = 'B1'")));
    // The order stays where it was stored.
    CHECK(outcome_of(c, "INSERT INTO hub.branches (id, brand_id, name) VALUES ('B3', 'BR2', 'Three')") == "ok");
    for (const char* move : {"partner_id = 'p2'", "branch_id = 'B3'", "brand_id = 'BR2'", "branch_id = 'NOPE'"})
        CHECK(outcome_of(c, std::string("UPDATE hub.orders SET ") + move).find("keeps its partner, branch and brand") !=
              std::string::npos);
    CHECK(outcome_of(c, "UPDATE hub.orders SET delivery_status = 'assigned'") == "ok");
    CHECK(outcome_of(c, "DELETE FROM hub.branches WHERE id = 'B3'") == "ok");
    // The brand keeps its branch, so it stays too.
    CHECK(outcome_of(c, "DELETE FROM hub.brands WHERE id = 'BR'") != "ok");
    CHECK(h.count("SELECT count(*) FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id "
                  "JOIN hub.branches b ON b.id = o.branch_id AND b.brand_id = o.brand_id "
                  "JOIN hub.brands r ON r.id = o.brand_id WHERE o.id = '" +
                  id + "'") == 1);

    // What no order names, and changes that rename nothing, go through.
    CHECK(outcome_of(c, "UPDATE hub.partners SET name = 'Renamed' WHERE id = 'p1'") == "ok");
    CHECK(outcome_of(c, "UPDATE hub.branches SET name = 'Renamed', schedule_lead_minutes = 5 WHERE id = 'B1'") == "ok");
    CHECK(outcome_of(c, "DELETE FROM hub.partners WHERE id = 'p2'") == "ok");
    CHECK(outcome_of(c, "INSERT INTO hub.branches (id, brand_id, name) VALUES ('B2', 'BR', 'Two')") == "ok");
    CHECK(outcome_of(c, "UPDATE hub.branches SET brand_id = 'BR2' WHERE id = 'B2'") == "ok");
    CHECK(outcome_of(c, "DELETE FROM hub.branches WHERE id = 'B2'") == "ok");
    CHECK(outcome_of(c, "DELETE FROM hub.brands WHERE id = 'BR2'") == "ok");
}

TEST_CASE("references: an order's items and options are never changed, and its job keeps its order", "[references]") {
    HubDb h;
    const std::string id = make_order(h);
    const auto rows = [&h] {
        return h.count(
            "SELECT (SELECT count(*) FROM hub.order_items) * 100 + (SELECT count(*) FROM "
            "hub.order_item_options) * 10 + (SELECT count(*) FROM hub.forward_jobs)");
    };
    const auto lines = [&h, &id] {
        pqxx::connection c(h.db.url());
        return pqxx::nontransaction(c)
            .exec_params1("SELECT lines::text FROM hub.orders WHERE id = $1", id)[0]
            .as<std::string>();
    };
    const long long before = rows();
    REQUIRE(before == 221);  // two items, two options, one job
    const std::string lines_before = lines();
    pqxx::connection c(h.db.url());
    // Kept in the order's row (sql/hub/0024): changed by no role, whatever the session's replication role.
    CHECK(outcome_of(c, "UPDATE hub.orders SET lines = jsonb_set(lines, '{items,0,quantity}', '9')") == "denied");
    CHECK(outcome_of(c, R"(UPDATE hub.orders SET lines = '{"items": [], "options": []}')") == "denied");
    CHECK(outcome_of(c, "SET LOCAL session_replication_role = replica; UPDATE hub.orders SET lines = '{}'") ==
          "denied");
    // The tables they were kept in before are read-only views now.
    CHECK(outcome_of(c, "UPDATE hub.order_items SET quantity = 9").find("cannot update view") != std::string::npos);
    CHECK(outcome_of(c, "DELETE FROM hub.order_items").find("cannot delete from view") != std::string::npos);
    CHECK(outcome_of(c,
                     "INSERT INTO hub.order_item_options (order_id, line_no, option_no, option_id, price, quantity) "
                     "VALUES ('" +
                         id + "', 0, 9, 'x', 1, 1)")
              .find("cannot insert into view") != std::string::npos);
    CHECK(outcome_of(c, "UPDATE hub.forward_jobs SET order_id = 'elsewhere'").find("keeps its order") !=
          std::string::npos);
    CHECK(rows() == before);
    CHECK(lines() == lines_before);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs WHERE order_id = '" + id + "'") == 1);
    // The order's and the job's own columns still change (a status, a claim, an end).
    CHECK(outcome_of(c, "UPDATE hub.orders SET delivery_status = 'assigned', lines = lines") == "ok");
    CHECK(outcome_of(c, "UPDATE hub.forward_jobs SET attempts = attempts + 1") == "ok");
}

TEST_CASE("references: deleting a partner while an order naming it is being stored waits for it, then is refused",
          "[references]") {
    HubDb h;
    make_order(h, "p1");
    // An order of p2 inserted and not yet committed.
    pqxx::connection writer(h.db.url());
    pqxx::work tx(writer);
    tx.exec(
        "INSERT INTO hub.orders SELECT (jsonb_populate_record(NULL::hub.orders, to_jsonb(o) || "
        "'{\"id\": \"in-flight\", \"external_id\": \"B-2\", \"partner_id\": \"p2\"}')).* FROM hub.orders o");
    // The delete, from another connection, must wait for that transaction instead of missing its order.
    pqxx::connection deleter(h.db.url());
    const int deleter_pid = deleter.backendpid();
    auto deleted = std::async(std::launch::async,
                              [&deleter] { return outcome_of(deleter, "DELETE FROM hub.partners WHERE id = 'p2'"); });
    pqxx::connection watcher(h.db.url());
    bool waiting = false;
    for (int i = 0; i < 1000 && !waiting; ++i) {  // bounded: 10 s at most
        waiting = pqxx::nontransaction(watcher)
                      .exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
                                    deleter_pid)[0]
                      .as<int>() == 1;
        if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(waiting);
    tx.commit();
    CHECK(refused_as_named(deleted.get()));
    CHECK(h.count("SELECT count(*) FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id "
                  "WHERE o.id = 'in-flight'") == 1);
}

TEST_CASE("references: every status-log row names a stored order, and a stored order is kept for good",
          "[references]") {
    HubDb h;
    const std::string id = make_order(h);
    pqxx::connection c(h.db.url());
    const auto status_row = [](const std::string& order) {
        return "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, "
               "applied) VALUES ('" +
               order + "', 'B1', 'p1', 'accepted', 'pos', now(), false)";
    };
    const long long rows = h.count("SELECT count(*) FROM hub.order_status_log");
    CHECK(outcome_of(c, status_row("NOPE")).find("order NOPE is not stored") != std::string::npos);
    // One statement with a good row and a bad one writes neither.
    CHECK(outcome_of(c,
                     "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, "
                     "event_time, applied) SELECT o, 'B1', 'p1', 'accepted', 'pos', now(), false "
                     "FROM unnest(ARRAY['" +
                         id + "', 'NOPE']) AS o")
              .find("is not stored") != std::string::npos);
    CHECK(outcome_of(c, "SET LOCAL session_replication_role = replica; " + status_row("NOPE")).find("is not stored") !=
          std::string::npos);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == rows);
    CHECK(outcome_of(c, status_row(id)) == "ok");
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == rows + 1);
    // An order that the same statement stores is found (the check runs at the statement's end).
    CHECK(outcome_of(c,
                     "WITH o AS (INSERT INTO hub.orders SELECT (jsonb_populate_record(NULL::hub.orders, "
                     "to_jsonb(x) || '{\"id\": \"same-statement\", \"external_id\": \"S-1\"}')).* "
                     "FROM hub.orders x RETURNING id) "
                     "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, "
                     "event_time, applied) SELECT id, 'B1', 'p1', 'received', 'operator', now(), true FROM o") == "ok");

    // The order is kept: not deleted, renamed or truncated, whatever the session's replication role.
    CHECK(outcome_of(c, "DELETE FROM hub.orders WHERE id = '" + id + "'") == "denied");
    CHECK(outcome_of(c, "SET LOCAL session_replication_role = replica; DELETE FROM hub.orders") == "denied");
    CHECK(outcome_of(c, "UPDATE hub.orders SET id = 'renamed' WHERE id = '" + id + "'") == "denied");
    CHECK(outcome_of(c, "TRUNCATE hub.orders CASCADE") == "denied");
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log l LEFT JOIN hub.orders o ON o.id = l.order_id "
                  "WHERE o.id IS NULL") == 0);
}

TEST_CASE("references: the status log's guard probes the orders' index, also after an ANALYZE of an empty table",
          "[references]") {
    HubDb h;
    pqxx::connection c(h.db.url());
    pqxx::nontransaction(c).exec("ANALYZE hub.orders");
    // The guard's first run in this session plans its probe while hub.orders is empty (statistics: no rows) and
    // plpgsql keeps that plan; sql/hub/0021 keeps sequential scans out of it.
    CHECK(outcome_of(c,
                     "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, "
                     "applied) VALUES ('NOPE', 'B1', 'p1', 'accepted', 'pos', now(), false)")
              .find("is not stored") != std::string::npos);
    std::vector<std::pair<std::string, std::string>> reqs;
    for (int i = 0; i < 300; ++i) reqs.emplace_back("p1", order_json("G-" + std::to_string(i)));
    const auto out = store_all(h.db.url(), reqs);
    REQUIRE(out.back().kind == Kind::created);

    pqxx::work tx(c);
    tx.exec(
        "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied) "
        "VALUES ('" +
        out.back().order_id + "', 'B1', 'p1', 'accepted', 'pos', now(), false)");
    // This transaction's own scans of hub.orders: the guard's probe, by index.
    const auto scans = tx.exec1(
        "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables WHERE schemaname = 'hub' AND relname = 'orders'");
    CHECK(scans[0].as<long long>() == 0);
    CHECK(scans[1].as<long long>() >= 1);
    tx.commit();
}
