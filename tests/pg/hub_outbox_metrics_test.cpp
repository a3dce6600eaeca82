#include <catch2/catch.hpp>
#include <map>
#include <pqxx/pqxx>

#include "hub/db/queries.hpp"
#include "tests/pg/hub_support.hpp"

using tests::hubdb::HubDb;

TEST_CASE("outbox depth for /metrics: jobs and oldest wait per open state, from the partial index",
          "[metrics][outbox]") {
    HubDb h;
    auto outcomes = tests::hubdb::store_all(h.db.url(), {{"p1", tests::hubdb::order_json("o1")},
                                                         {"p1", tests::hubdb::order_json("o2")},
                                                         {"p1", tests::hubdb::order_json("o3")},
                                                         {"p1", tests::hubdb::order_json("o4")},
                                                         {"p1", tests::hubdb::order_json("o5")}});
    REQUIRE(outcomes.size() == 5);
    pqxx::connection c(h.db.url());
    {
        pqxx::work tx(c);
        auto set = [&](const std::string& id, const std::string& assignments) {
            tx.exec0("UPDATE hub.forward_jobs SET " + assignments + " WHERE order_id = " + tx.quote(id));
        };
        // Due 30 s ago, never tried: waiting for 30 s.
        set(outcomes[0].order_id, "state = 'pending', attempts = 0, due_at = now() - interval '30 seconds'");
        // Tried twice, next try in a minute: waiting since its order was stored, 200 s ago.
        set(outcomes[1].order_id,
            "state = 'pending', attempts = 2, due_at = now() + interval '1 minute', "
            "created_at = now() - interval '200 seconds'");
        // A scheduled order not due for an hour: counted, but not waiting.
        set(outcomes[2].order_id, "state = 'pending', attempts = 0, due_at = now() + interval '1 hour'");
        set(outcomes[3].order_id, "state = 'dead', attempts = 12, created_at = now() - interval '1 hour'");
        set(outcomes[4].order_id, "state = 'delivered', attempts = 1, created_at = now() - interval '1 day'");
        tx.commit();
    }
    hub::db::prepare_all(c);
    // As if the table held a large delivered history: the planner must be able to use the open jobs' partial
    // index (set before the first execution, since the plan is cached with the statement).
    pqxx::nontransaction(c).exec("SET enable_seqscan = off");
    std::map<std::string, std::pair<long long, double>> by_state;
    {
        pqxx::read_transaction tx(c);
        for (const auto& r : tx.exec_prepared(hub::db::kOutboxDepth))
            by_state[r[0].as<std::string>()] = {r[1].as<long long>(), r[2].as<double>()};
    }
    REQUIRE(by_state.size() == 2);  // delivered jobs are not read
    CHECK(by_state["pending"].first == 3);
    CHECK(by_state["pending"].second == Approx(200).margin(5));
    CHECK(by_state["dead"].first == 1);
    CHECK(by_state["dead"].second == Approx(3600).margin(5));

    // The read stays on the open jobs' partial index however large the delivered history grows.
    pqxx::nontransaction nt(c);
    std::string plan;
    // The statement itself, as prepared on this connection (it ran above).
    for (const auto& r : nt.exec("EXPLAIN EXECUTE " + std::string(hub::db::kOutboxDepth)))
        plan += r[0].as<std::string>() + "\n";
    INFO(plan);
    CHECK(plan.find("forward_jobs_open_idx") != std::string::npos);
}
