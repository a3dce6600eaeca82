// PartnerDirectory against a real database: what a flood of unknown webhook keys costs (finding 3 of issue 20).
// Database lookups are counted by the pool's job counter: each lookup is one job.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <thread>
#include <vector>

#include "common/db/pool.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/partners.hpp"
#include "tests/pg/hub_support.hpp"

namespace asio = boost::asio;
using hub::ingest::Partner;
using hub::ingest::PartnerDirectory;
using tests::hubdb::HubDb;

namespace {

/// A partner with webhook key `key`.
void add_partner(const HubDb& h, const std::string& id, const std::string& key) {
    pqxx::connection c(h.db.url());
    pqxx::work tx(c);
    tx.exec_params("INSERT INTO hub.partners (id, name, label, key_hash) VALUES ($1, 'x', $1, $2)", id,
                   hub::ingest::webhook_key_hash(key));
    tx.commit();
}

/// Looks `key` up in `dir`, waiting for the answer.
std::optional<Partner> find(asio::io_context& ioc, PartnerDirectory& dir, const std::string& key) {
    auto f = asio::co_spawn(ioc, dir.find(key), asio::use_future);
    ioc.restart();
    ioc.run();
    return f.get();
}

}  // namespace

TEST_CASE("partners: repeated unknown keys cost one lookup each per miss TTL", "[partners]") {
    HubDb h;
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1));
    const auto before = pool.stats().jobs;
    for (int i = 0; i < 50; ++i) CHECK_FALSE(find(ioc, dir, "no-such-key"));
    for (int i = 0; i < 50; ++i) CHECK_FALSE(find(ioc, dir, "another-unknown-key"));
    CHECK(pool.stats().jobs - before == 2);
}

TEST_CASE("partners: a flood of unknown keys never evicts a real partner", "[partners]") {
    HubDb h;
    add_partner(h, "real", "real-partner-key");
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1));
    REQUIRE(find(ioc, dir, "real-partner-key"));
    // More distinct random keys than the old directory held (it cleared everything, partners too, past 10,000).
    for (int i = 0; i < 10'050; ++i) CHECK_FALSE(find(ioc, dir, "random-" + std::to_string(i)));
    const auto before = pool.stats().jobs;
    auto again = find(ioc, dir, "real-partner-key");
    REQUIRE(again);
    CHECK(again->id == "real");
    CHECK(pool.stats().jobs == before);  // answered from the cache: no database lookup
}

TEST_CASE("partners: a partner created after its key was missed works once the miss TTL passed", "[partners]") {
    HubDb h;
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1), std::nullopt, {.miss_ttl = std::chrono::milliseconds(200)});
    CHECK_FALSE(find(ioc, dir, "late-partner-key"));
    add_partner(h, "late", "late-partner-key");
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    auto found = find(ioc, dir, "late-partner-key");
    REQUIRE(found);
    CHECK(found->id == "late");
}

TEST_CASE("partners: lookups of keys never seen before are bounded, and one key's lookups are shared", "[partners]") {
    HubDb h;
    add_partner(h, "real", "real-partner-key");
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    // TTL 0: the partner is known but each request looks it up again, as after its cache entry expired.
    PartnerDirectory dir(pool, std::chrono::milliseconds(0), std::nullopt, {.max_new_key_lookups = 2});
    REQUIRE(find(ioc, dir, "real-partner-key"));
    const auto before = pool.stats().jobs;
    // All start before any lookup answers (one thread): their fates are decided in this order.
    std::vector<std::future<std::optional<Partner>>> unknown, same, real;
    for (int i = 0; i < 5; ++i)
        unknown.push_back(asio::co_spawn(ioc, dir.find("random-" + std::to_string(i)), asio::use_future));
    for (int i = 0; i < 5; ++i) same.push_back(asio::co_spawn(ioc, dir.find("random-0"), asio::use_future));
    real.push_back(asio::co_spawn(ioc, dir.find("real-partner-key"), asio::use_future));
    ioc.restart();
    ioc.run();
    int busy = 0;
    for (auto& f : unknown) {
        std::optional<Partner> answer;
        try {
            answer = f.get();
        } catch (...) {
            CHECK(common::db::is_unavailable(std::current_exception()));
            ++busy;
        }
        CHECK_FALSE(answer);
    }
    CHECK(busy == 3);                           // two new keys at once, the others told to retry
    for (auto& f : same) CHECK_FALSE(f.get());  // joined the lookup of random-0
    const auto found = real.front().get();      // a known partner is never refused for the flood
    REQUIRE(found);
    CHECK(found->id == "real");
    CHECK(pool.stats().jobs - before == 3);  // random-0, random-1, the real partner
}
