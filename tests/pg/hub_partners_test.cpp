// PartnerDirectory against a real database: what a flood of unknown webhook keys costs (finding 3 of issue 20).
// Database lookups are counted by the pool's job counter: each lookup is one job.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
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

/// Starts a lookup of each key at once (one thread: all begin before any query answers) and waits for all.
std::vector<std::future<std::optional<Partner>>> find_all(asio::io_context& ioc, PartnerDirectory& dir,
                                                          const std::vector<std::string>& keys) {
    std::vector<std::future<std::optional<Partner>>> answers;
    for (const auto& key : keys) answers.push_back(asio::co_spawn(ioc, dir.find(key), asio::use_future));
    ioc.restart();
    ioc.run();
    return answers;
}

std::vector<std::string> random_keys(int n) {
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) keys.push_back("random-" + std::to_string(i));
    return keys;
}

}  // namespace

TEST_CASE("partners: a flood of unknown keys costs the database a load of the key set, not a query per key",
          "[partners]") {
    HubDb h;
    add_partner(h, "real", "real-partner-key");
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1), std::nullopt, {.max_key_set_waiters = 20'000});
    const auto before = pool.stats().jobs;
    auto keys = random_keys(10'050);
    keys.push_back("real-partner-key");
    auto answers = find_all(ioc, dir, keys);
    for (std::size_t i = 0; i + 1 < answers.size(); ++i) CHECK_FALSE(answers[i].get());
    const auto real = answers.back().get();
    REQUIRE(real);
    CHECK(real->id == "real");
    // The first request's load began before the others arrived; the second, paced, began after all of them;
    // then the real partner's own lookup.
    CHECK(pool.stats().jobs - before == 3);
}

TEST_CASE("partners: a flood of unknown keys never evicts a real partner", "[partners]") {
    HubDb h;
    add_partner(h, "real", "real-partner-key");
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1), std::nullopt, {.max_key_set_waiters = 20'000});
    REQUIRE(find(ioc, dir, "real-partner-key"));
    // More distinct random keys than the old directory held (it cleared everything, partners too, past 10,000).
    for (auto& answer : find_all(ioc, dir, random_keys(10'050))) CHECK_FALSE(answer.get());
    const auto before = pool.stats().jobs;
    auto again = find(ioc, dir, "real-partner-key");
    REQUIRE(again);
    CHECK(again->id == "real");
    CHECK(pool.stats().jobs == before);  // answered from the cache: no database lookup
}

TEST_CASE("partners: a key looked up lately is answered at once, without a wait or the database", "[partners]") {
    HubDb h;
    add_partner(h, "real", "real-partner-key");
    add_partner(h, "off", "off-partner-key");
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec("UPDATE hub.partners SET disabled_at = now() WHERE id = 'off'");
        tx.commit();
    }
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1));
    // Not looked up yet: find() is to be awaited.
    CHECK_FALSE(dir.find_now("real-partner-key"));
    CHECK_FALSE(dir.find_now("off-partner-key"));
    REQUIRE(find(ioc, dir, "real-partner-key"));
    CHECK_FALSE(find(ioc, dir, "off-partner-key"));
    const auto before = pool.stats().jobs;
    const auto real = dir.find_now("real-partner-key");
    REQUIRE(real);
    REQUIRE(*real);
    CHECK((*real)->id == "real");
    CHECK(dir.find_now("real-partner-key") == real);   // the same partner, shared
    CHECK(dir.find_now("real-partner-key") == real);   // and again, its key's hash remembered
    CHECK_FALSE(dir.find_now("real-partner-key2"));    // a longer key is another key
    CHECK_FALSE(dir.find_now("real-partner-ke"));      // and so is a shorter one
    const auto off = dir.find_now("off-partner-key");  // known: its partner is disabled
    REQUIRE(off);
    CHECK_FALSE(*off);
    const auto empty = dir.find_now("");  // cannot be a key
    REQUIRE(empty);
    CHECK_FALSE(*empty);
    CHECK_FALSE(dir.find_now("never-tried-key"));
    CHECK(pool.stats().jobs == before);
}

TEST_CASE("partners: a partner created after its key was tried works on its next request", "[partners]") {
    HubDb h;
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::hours(1));
    CHECK_FALSE(find(ioc, dir, "late-partner-key"));
    CHECK_FALSE(find(ioc, dir, "late-partner-key"));
    add_partner(h, "late", "late-partner-key");
    auto found = find(ioc, dir, "late-partner-key");
    REQUIRE(found);
    CHECK(found->id == "late");
}

TEST_CASE("partners: a disabled or deleted partner's key is unknown once its entry expires", "[partners]") {
    HubDb h;
    add_partner(h, "gone", "gone-partner-key");
    add_partner(h, "off", "off-partner-key");
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    PartnerDirectory dir(pool, std::chrono::milliseconds(0));
    REQUIRE(find(ioc, dir, "gone-partner-key"));
    REQUIRE(find(ioc, dir, "off-partner-key"));
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec("UPDATE hub.partners SET disabled_at = now() WHERE id = 'off'");
        tx.exec("DELETE FROM hub.partners WHERE id = 'gone'");
        tx.commit();
    }
    CHECK_FALSE(find(ioc, dir, "off-partner-key"));
    CHECK_FALSE(find(ioc, dir, "gone-partner-key"));
    CHECK_FALSE(find(ioc, dir, "gone-partner-key"));
}

TEST_CASE("partners: requests waiting for the key set are bounded, and a known partner never waits", "[partners]") {
    HubDb h;
    add_partner(h, "real", "real-partner-key");
    asio::io_context ioc;
    common::db::Pool pool({.url = h.db.url(), .workers = 1, .on_connect = hub::db::prepare_all});
    // TTL 0: the partner is known but each request looks it up again, as after its cache entry expired.
    PartnerDirectory dir(pool, std::chrono::milliseconds(0), std::nullopt, {.max_key_set_waiters = 3});
    REQUIRE(find(ioc, dir, "real-partner-key"));
    const auto before = pool.stats().jobs;
    // All start before any query answers (one thread): their fates are decided in this order.
    std::vector<std::future<std::optional<Partner>>> unknown, real;
    for (int i = 0; i < 6; ++i)
        unknown.push_back(asio::co_spawn(ioc, dir.find("random-" + std::to_string(i)), asio::use_future));
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
    CHECK(busy == 2);                       // one loads the key set, three wait for it, the others told to retry
    const auto found = real.front().get();  // a known partner is never refused for the flood
    REQUIRE(found);
    CHECK(found->id == "real");
    // The key set once (paced after the load before, it began when all of them had arrived) and the real partner.
    CHECK(pool.stats().jobs - before == 2);
}
