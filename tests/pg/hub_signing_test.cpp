#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <sstream>

#include "common/cli/cli.hpp"
#include "common/crypto/encoding.hpp"
#include "common/crypto/random.hpp"
#include "common/db/pool.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/secrets.hpp"
#include "hub/db/queries.hpp"
#include "hub/forward/secrets.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/signature.hpp"
#include "tests/pg/hub_support.hpp"

namespace asio = boost::asio;
using common::crypto::SecretBox;
using namespace tests::hubdb;

namespace {

SecretBox random_box() { return *SecretBox::from_bytes(common::crypto::random_bytes(32)); }

std::string random_hex() { return common::crypto::hex_encode(common::crypto::random_bytes(32)); }

/// Runs one operator command (`words`) as the CLI would, with options already merged; returns its --json output.
boost::json::value run_command(const std::vector<std::string>& words, common::config::ParsedArgs args) {
    std::vector<common::cli::Command> all;
    for (auto group : {hub::admin::partner_commands(), hub::admin::secret_commands()})
        for (auto& c : group) all.push_back(std::move(c));
    for (const auto& c : all) {
        if (c.words != words) continue;
        args.values["json"] = {""};
        std::ostringstream out;
        int rc = 0;
        {
            struct Restore {
                std::streambuf* saved;
                ~Restore() { std::cout.rdbuf(saved); }
            } restore{std::cout.rdbuf(out.rdbuf())};
            rc = c.run(args);  // errors propagate as the CLI's exceptions
        }
        REQUIRE(rc == 0);
        return boost::json::parse(out.str());
    }
    FAIL("no such command");
    return nullptr;
}

common::config::ParsedArgs args_for(const std::string& url, const std::string& key_hex,
                                    std::vector<std::string> positional = {}) {
    common::config::ParsedArgs a;
    a.values["database-url"] = {url};
    a.values["secret-key"] = {key_hex};
    a.positional = std::move(positional);
    return a;
}

/// A signing partner made by `partner create --signing`: its id, URL key and secret.
struct Created {
    std::string id;
    std::string key;
    std::string secret;
};

Created create_signing(const std::string& url, const std::string& key_hex, const std::string& name) {
    auto a = args_for(url, key_hex);
    a.values["name"] = {name};
    a.values["signing"] = {""};
    auto out = run_command({"partner", "create"}, a).as_object();
    CHECK(out.at("signing").as_bool());
    const std::string webhook_url(out.at("webhook_url").as_string());
    return {std::string(out.at("id").as_string()), webhook_url.substr(webhook_url.rfind('/') + 1),
            std::string(out.at("signing_secret").as_string())};
}

std::optional<hub::ingest::Partner> lookup(const std::string& url, const std::string& key,
                                           std::optional<SecretBox> box) {
    asio::io_context ioc;
    common::db::Pool pool({.url = url, .workers = 1, .on_connect = hub::db::prepare_all});
    hub::ingest::PartnerDirectory dir(pool, std::chrono::milliseconds(0), std::move(box));
    auto f = asio::co_spawn(ioc, dir.find(key), asio::use_future);
    ioc.run();
    return f.get();
}

std::string key_of(const std::string& secret) { return *hub::ingest::signing_key_from_secret(secret); }

}  // namespace

TEST_CASE("signing: partner create --signing stores one sealed secret bound to the partner", "[signing]") {
    HubDb h;
    const std::string hex = random_hex();
    auto p = create_signing(h.db.url(), hex, "Signed Platform");
    CHECK(p.secret.rfind("whsec_", 0) == 0);
    CHECK(key_of(p.secret).size() == 32);
    CHECK(h.count("SELECT count(*) FROM hub.partners WHERE signing AND id = '" + p.id + "'") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets WHERE expires_at IS NULL AND partner_id = '" +
                  p.id + "'") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets WHERE secret_sealed LIKE '%" +
                  p.secret.substr(6, 20) + "%'") == 0);  // sealed, not stored as is

    auto found = lookup(h.db.url(), p.key, SecretBox::from_hex(hex));
    REQUIRE(found);
    CHECK(found->signing);
    CHECK_FALSE(found->signing_keys_unreadable);
    CHECK(found->signing_keys == std::vector<std::string>{key_of(p.secret)});

    // Without the key, or with another one, the secrets are unreadable (and the partner is refused).
    auto blind = lookup(h.db.url(), p.key, std::nullopt);
    REQUIRE(blind);
    CHECK(blind->signing_keys_unreadable);
    CHECK(blind->signing_keys.empty());
    CHECK(lookup(h.db.url(), p.key, random_box())->signing_keys_unreadable);

    // A sealed secret moved to another partner does not open there (associated data).
    auto q = create_signing(h.db.url(), hex, "Other Platform");
    {
        pqxx::connection c(h.db.url());
        pqxx::work tx(c);
        tx.exec_params(
            "UPDATE hub.partner_signing_secrets SET secret_sealed = (SELECT secret_sealed FROM "
            "hub.partner_signing_secrets WHERE partner_id = $1) WHERE partner_id = $2",
            p.id, q.id);
        tx.commit();
    }
    CHECK(lookup(h.db.url(), q.key, SecretBox::from_hex(hex))->signing_keys_unreadable);

    // An unsigned partner needs no key and has no secrets.
    auto a = args_for(h.db.url(), "");
    a.values["name"] = {"Plain"};
    auto plain = run_command({"partner", "create"}, a).as_object();
    CHECK_FALSE(plain.contains("signing_secret"));
    CHECK_FALSE(plain.at("signing").as_bool());
}

TEST_CASE("signing: --signing without ORDERHUB_SECRET_KEY is a clear error and writes nothing", "[signing]") {
    HubDb h;
    auto a = args_for(h.db.url(), "");
    a.values["name"] = {"Signed"};
    a.values["signing"] = {""};
    CHECK_THROWS_WITH(run_command({"partner", "create"}, a), Catch::Contains("ORDERHUB_SECRET_KEY is not set"));
    CHECK(h.count("SELECT count(*) FROM hub.partners WHERE name = 'Signed'") == 0);
}

TEST_CASE("signing: rotate-secret keeps the older secrets for the grace period", "[signing]") {
    HubDb h;
    const std::string hex = random_hex();
    auto p = create_signing(h.db.url(), hex, "Rotating");

    auto r1 = run_command({"partner", "rotate-secret"}, args_for(h.db.url(), hex, {p.id})).as_object();
    const std::string second(r1.at("signing_secret").as_string());
    CHECK(second != p.secret);
    CHECK(r1.at("previous_secrets").as_int64() == 1);
    // Default grace: 24 hours.
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets WHERE partner_id = '" + p.id +
                  "' AND expires_at BETWEEN now() + interval '23 hours 59 minutes' AND now() + interval '24 hours'") ==
          1);
    auto both = lookup(h.db.url(), p.key, SecretBox::from_hex(hex));
    REQUIRE(both);
    CHECK(both->signing_keys == std::vector<std::string>{key_of(second), key_of(p.secret)});  // newest first

    // A longer grace later does not extend an earlier end; the second secret gets the longer one.
    auto a = args_for(h.db.url(), hex, {p.id});
    a.values["grace-hours"] = {"48"};
    auto r2 = run_command({"partner", "rotate-secret"}, a).as_object();
    const std::string third(r2.at("signing_secret").as_string());
    CHECK(r2.at("previous_secrets").as_int64() == 1);
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets WHERE partner_id = '" + p.id +
                  "' AND expires_at < now() + interval '25 hours'") == 1);
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets WHERE partner_id = '" + p.id +
                  "' AND expires_at > now() + interval '47 hours'") == 1);
    CHECK(lookup(h.db.url(), p.key, SecretBox::from_hex(hex))->signing_keys.size() == 3);

    // No grace: only the newest secret is valid from now on.
    a.values["grace-hours"] = {"0"};
    auto r3 = run_command({"partner", "rotate-secret"}, a).as_object();
    CHECK(r3.at("previous_secrets").as_int64() == 3);
    auto last = lookup(h.db.url(), p.key, SecretBox::from_hex(hex));
    REQUIRE(last);
    CHECK(last->signing_keys == std::vector<std::string>{key_of(std::string(r3.at("signing_secret").as_string()))});
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets WHERE partner_id = '" + p.id + "'") == 4);
}

TEST_CASE("signing: rotate-secret refuses unknown and unsigned partners", "[signing]") {
    HubDb h;
    const std::string hex = random_hex();
    CHECK_THROWS_AS(run_command({"partner", "rotate-secret"}, args_for(h.db.url(), hex, {"p1"})),
                    common::cli::UserError);  // p1 of HubDb does not sign
    CHECK_THROWS_WITH(run_command({"partner", "rotate-secret"}, args_for(h.db.url(), hex, {"p1"})),
                      Catch::Contains("without --signing"));
    CHECK_THROWS_WITH(run_command({"partner", "rotate-secret"}, args_for(h.db.url(), hex, {"nope"})),
                      Catch::Contains("no partner"));
    auto a = args_for(h.db.url(), hex, {"p1"});
    a.values["grace-hours"] = {"-1"};
    CHECK_THROWS_AS(run_command({"partner", "rotate-secret"}, a), common::cli::UsageError);
    CHECK(h.count("SELECT count(*) FROM hub.partner_signing_secrets") == 0);
}

namespace {

/// A database with two POS connections (token only; token and password) and two signing partners, all sealed
/// under `box`.
void seed_sealed(HubDb& h, const std::string& hex) {
    auto box = *SecretBox::from_hex(hex);
    pqxx::connection c(h.db.url());
    pqxx::work tx(c);
    tx.exec("INSERT INTO hub.brands (id, name) VALUES ('BR2', 'Brand two')");
    tx.exec_params(
        "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed) "
        "VALUES ('BR', 'production', 'http://127.0.0.1:1', $1)",
        box.seal("token-one", hub::forward::token_aad("BR", "production")));
    tx.exec_params(
        "INSERT INTO hub.pos_connections (brand_id, environment, base_url, token_sealed, email, "
        "password_sealed) VALUES ('BR2', 'staging', 'http://127.0.0.1:1', $1, 'e@x', $2)",
        box.seal("token-two", hub::forward::token_aad("BR2", "staging")),
        box.seal("password-two", hub::forward::password_aad("BR2", "staging")));
    tx.commit();
}

std::vector<std::string> all_sealed(HubDb& h) {
    pqxx::connection c(h.db.url());
    pqxx::nontransaction nt(c);
    std::vector<std::string> out;
    for (const auto& r : nt.exec("SELECT coalesce(token_sealed, '') || '|' || coalesce(password_sealed, '') FROM "
                                 "hub.pos_connections ORDER BY brand_id"))
        out.push_back(r[0].as<std::string>());
    for (const auto& r : nt.exec("SELECT secret_sealed FROM hub.partner_signing_secrets ORDER BY id"))
        out.push_back(r[0].as<std::string>());
    return out;
}

}  // namespace

TEST_CASE("signing: secrets rotate-key re-seals every sealed value under the new key", "[signing]") {
    HubDb h;
    const std::string old_hex = random_hex();
    const std::string new_hex = random_hex();
    seed_sealed(h, old_hex);
    auto p = create_signing(h.db.url(), old_hex, "Signed One");
    run_command({"partner", "rotate-secret"}, args_for(h.db.url(), old_hex, {p.id}));
    auto q = create_signing(h.db.url(), old_hex, "Signed Two");

    auto a = args_for(h.db.url(), old_hex);
    a.values["new-key"] = {new_hex};
    auto out = run_command({"secrets", "rotate-key"}, a).as_object();
    CHECK(out.at("pos_tokens").as_int64() == 2);
    CHECK(out.at("pos_passwords").as_int64() == 1);
    CHECK(out.at("signing_secrets").as_int64() == 3);
    const std::string printed = boost::json::serialize(out);
    CHECK(printed.find(old_hex) == std::string::npos);
    CHECK(printed.find(new_hex) == std::string::npos);

    auto old_box = *SecretBox::from_hex(old_hex);
    auto new_box = *SecretBox::from_hex(new_hex);
    pqxx::connection c(h.db.url());
    pqxx::nontransaction nt(c);
    auto pos = nt.exec(
        "SELECT brand_id, environment, token_sealed, password_sealed FROM hub.pos_connections "
        "ORDER BY brand_id");
    REQUIRE(pos.size() == 2);
    CHECK(new_box.open(pos[0][2].c_str(), hub::forward::token_aad("BR", "production")) == "token-one");
    CHECK_FALSE(old_box.open(pos[0][2].c_str(), hub::forward::token_aad("BR", "production")));
    CHECK(pos[0][3].is_null());
    CHECK(new_box.open(pos[1][2].c_str(), hub::forward::token_aad("BR2", "staging")) == "token-two");
    CHECK(new_box.open(pos[1][3].c_str(), hub::forward::password_aad("BR2", "staging")) == "password-two");
    // The hub with the new key reads the signing secrets; with the old key it cannot.
    auto with_new = lookup(h.db.url(), p.key, new_box);
    REQUIRE(with_new);
    CHECK_FALSE(with_new->signing_keys_unreadable);
    CHECK(with_new->signing_keys.size() == 2);
    CHECK(lookup(h.db.url(), q.key, new_box)->signing_keys == std::vector<std::string>{key_of(q.secret)});
    CHECK(lookup(h.db.url(), q.key, old_box)->signing_keys_unreadable);

    // The same key twice is refused; a bad new key is refused without echoing it.
    auto same = args_for(h.db.url(), new_hex);
    same.values["new-key"] = {new_hex};
    CHECK_THROWS_WITH(run_command({"secrets", "rotate-key"}, same), Catch::Contains("is the current key"));
    auto bad = args_for(h.db.url(), new_hex);
    bad.values["new-key"] = {"zz" + new_hex.substr(2)};
    try {
        run_command({"secrets", "rotate-key"}, bad);
        FAIL("a malformed new key was accepted");
    } catch (const common::cli::UserError& e) {
        CHECK(std::string(e.what()).find(new_hex.substr(2)) == std::string::npos);
    }
}

TEST_CASE("signing: a value sealed under another key aborts rotate-key and changes nothing", "[signing]") {
    HubDb h;
    const std::string old_hex = random_hex();
    seed_sealed(h, old_hex);
    create_signing(h.db.url(), old_hex, "Signed One");
    auto stray = create_signing(h.db.url(), random_hex(), "Sealed Elsewhere");  // another key: cannot be opened
    create_signing(h.db.url(), old_hex, "Signed Three");
    const auto before = all_sealed(h);

    auto old_box = *SecretBox::from_hex(old_hex);
    auto new_box = random_box();
    pqxx::connection c(h.db.url());
    try {
        hub::admin::reseal_all(c, old_box, new_box);
        FAIL("rotate-key succeeded with a value it cannot open");
    } catch (const common::cli::UserError& e) {
        const std::string m = e.what();
        CHECK(m.find("hub.partner_signing_secrets") != std::string::npos);
        CHECK(m.find(stray.id) != std::string::npos);
        CHECK(m.find("nothing was changed") != std::string::npos);
        CHECK(m.find(stray.secret) == std::string::npos);
    }
    CHECK(all_sealed(h) == before);

    // A POS token sealed under another key names its brand and environment.
    {
        pqxx::work tx(c);
        tx.exec("DELETE FROM hub.partner_signing_secrets WHERE partner_id = '" + stray.id + "'");
        tx.exec_params("UPDATE hub.pos_connections SET token_sealed = $1 WHERE brand_id = 'BR2'",
                       random_box().seal("x", hub::forward::token_aad("BR2", "staging")));
        tx.commit();
    }
    const auto before2 = all_sealed(h);
    CHECK_THROWS_WITH(hub::admin::reseal_all(c, old_box, new_box),
                      Catch::Contains("hub.pos_connections (brand 'BR2', environment 'staging') token_sealed"));
    CHECK(all_sealed(h) == before2);
}
