// The POS store against a real PostgreSQL: menu loads (idempotent, atomic, authoritative per brand), users,
// logins and tokens, and order intake (authorisation, validation with the menu, idempotency under concurrency).
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json/parse.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "common/crypto/digest.hpp"
#include "common/crypto/password.hpp"
#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "pos/logic/menu_file.hpp"
#include "pos/store/intake.hpp"
#include "pos/store/menu.hpp"
#include "pos/store/orders.hpp"
#include "pos/store/queries.hpp"
#include "pos/store/users.hpp"
#include "tests/pg/support.hpp"

namespace asio = boost::asio;

namespace {

constexpr std::string_view kMenu = R"({
 "brands":   [{"id": "BRAND-A", "name": "Brand A"}, {"id": "BRAND-B"}],
 "branches": [{"id": "BR-1", "brand_id": "BRAND-A", "name": "Olaya"},
              {"id": "BR-2", "brand_id": "BRAND-A", "name": "Malaz"},
              {"id": "BR-B", "brand_id": "BRAND-B"}],
 "products": [{"id": "P-1", "brand_id": "BRAND-A", "name": "Burger", "price": 20.0, "branches": ["BR-1", "BR-2"]},
              {"id": "P-2", "brand_id": "BRAND-A", "name": "Fries", "price": 7.25, "branches": ["BR-2"]},
              {"id": "P-1", "brand_id": "BRAND-B", "name": "Other burger", "price": 1, "branches": ["BR-B"]}],
 "modifiers":[{"id": "M-1", "brand_id": "BRAND-A", "name": "Cheese", "price": 2.5},
              {"id": "M-2", "brand_id": "BRAND-A", "name": "Bacon", "price": 4}]})";

pos::MenuFile menu_of(std::string_view text) {
    auto parsed = pos::parse_menu_file_text(text);
    INFO((parsed.errors.empty() ? std::string() : parsed.errors.front()));
    REQUIRE(parsed.menu);
    return *parsed.menu;
}

// A connection with the schema migrated and the statements prepared.
std::unique_ptr<pqxx::connection> connect(const tests::TempDatabase& db) {
    auto c = std::make_unique<pqxx::connection>(db.url());
    common::db::migrate(*c, "pos", common::db::migrations_pos());
    pos::store::prepare_statements(*c);
    return c;
}

// Every row of the menu tables with its xmin, so that an unchanged snapshot proves that nothing was rewritten.
std::string menu_snapshot(pqxx::connection& c) {
    pqxx::read_transaction tx(c);
    std::string out;
    for (const char* table : {"pos.brands", "pos.branches", "pos.products", "pos.product_branches", "pos.modifiers"}) {
        for (const auto& row : tx.exec(std::string("SELECT t.xmin::text, t::text FROM ") + table + " t ORDER BY 2")) {
            out += std::string(table) + " " + row[0].c_str() + " " + row[1].c_str() + "\n";
        }
    }
    return out;
}

int count(pqxx::connection& c, const std::string& sql) {
    pqxx::read_transaction tx(c);
    return tx.exec1(sql)[0].as<int>();
}

pos::store::OrderSubmission submission(const std::string& token_brand, std::string_view body) {
    pos::store::OrderSubmission s;
    s.token_brand = token_brand;
    const auto value = boost::json::parse(body);
    if (const auto* brand = value.as_object().if_contains("brand_id"); brand != nullptr && brand->is_string()) {
        s.body_brand = std::string(brand->get_string());
    }
    s.parsed = pos::parse_order_request(value);
    s.raw_body = std::string(body);
    return s;
}

constexpr std::string_view kOrder = R"({
    "branch_id": "BR-1", "brand_id": "BRAND-A", "partner_reference": "talabat:1001", "note": "No onions",
    "total": 57.5, "subtotal": 50, "tax": 7.5, "status": "ACCEPTED",
    "customer": {"name": "Sara", "phone": "+966500000000"},
    "products": [
        {"id": "P-1", "quantity": 2, "total": 45, "note": null, "modifiers": [
            {"id": "M-1", "quantity": 1, "total": 2.5, "note": "extra"},
            {"id": "M-2", "quantity": 2, "total": 8}]},
        {"id": "P-1", "quantity": 1, "total": 20}]})";

std::string render(const pos::ValidationErrors& errors) {
    std::string out;
    for (const auto& [key, messages] : errors) {
        for (const auto& message : messages) out += key + ": " + message + "\n";
    }
    return out;
}

// The winner holds its uncommitted order 'winner' (BRAND-A, talabat:1001) while `loser` runs on a connection of
// its own: the loser finds no order, waits on the unique key in INSERT ... ON CONFLICT, and reads the winner's id
// once it commits.
template <class Loser>
void race_an_uncommitted_winner(const tests::TempDatabase& db, pqxx::connection& c, Loser loser) {
    pqxx::connection winner(db.url());
    pqxx::work winner_tx(winner);
    winner_tx.exec(
        "INSERT INTO pos.orders (id, brand_id, branch_id, partner_reference, subtotal, tax, total, raw_request) "
        "VALUES ('winner', 'BRAND-A', 'BR-1', 'talabat:1001', 0, 0, 0, '{}')");
    std::thread loser_thread([&] {
        auto own = connect(db);
        loser(*own);
    });
    for (int i = 0; i < 500 && count(c,
                                     "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                     "AND datname = current_database()") == 0;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    winner_tx.commit();
    loser_thread.join();
}

}  // namespace

TEST_CASE("every POS statement prepares against the migrated schema", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    for (const pos::store::Statement* s : pos::store::kAllStatements) {
        INFO(s->name);
        CHECK_NOTHROW(c->prepare_now(s->name));
    }
}

TEST_CASE("menu load: loading the same file twice changes nothing", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    const auto first = pos::store::load_menu(*c, menu_of(kMenu));
    CHECK(first.brands.inserted == 2);
    CHECK(first.branches.inserted == 3);
    CHECK(first.products.inserted == 3);
    CHECK(first.product_branches.inserted == 4);
    CHECK(first.modifiers.inserted == 2);
    const std::string before = menu_snapshot(*c);
    CHECK(before.find("(BRAND-A,P-2,Fries,7.250,") != std::string::npos);

    const auto second = pos::store::load_menu(*c, menu_of(kMenu));
    CHECK_FALSE(second.changed());
    CHECK(menu_snapshot(*c) == before);
}

TEST_CASE("menu load: the file is authoritative for the products and modifiers of its brands", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    // Brand A: P-1 now only in BR-2 and dearer, P-2 gone, M-2 gone, M-3 new; BR-2 renamed. Brand B not listed.
    const auto report = pos::store::load_menu(*c, menu_of(R"({
        "brands": [{"id": "BRAND-A", "name": "Brand A"}],
        "branches": [{"id": "BR-1", "name": "Olaya"}, {"id": "BR-2", "name": "Malaz 2"}],
        "products": [{"id": "P-1", "name": "Burger", "price": 21, "branches": ["BR-2"]}],
        "modifiers": [{"id": "M-1", "name": "Cheese", "price": 2.5}, {"id": "M-3", "price": 1}]})"));
    CHECK(report.brands.inserted + report.brands.updated + report.brands.deleted == 0);
    CHECK(report.branches.updated == 1);
    CHECK(report.products.updated == 1);
    CHECK(report.products.deleted == 1);
    CHECK(report.product_branches.deleted == 2);  // P-1 in BR-1, and P-2 in BR-2
    CHECK(report.product_branches.inserted == 0);
    CHECK(report.modifiers.inserted == 1);
    CHECK(report.modifiers.deleted == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.products WHERE brand_id = 'BRAND-A'") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.product_branches WHERE brand_id = 'BRAND-A'") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.products WHERE price = 21 AND id = 'P-1' AND brand_id = 'BRAND-A'") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.products WHERE brand_id = 'BRAND-B'") == 1);  // untouched
    CHECK(count(*c, "SELECT count(*) FROM pos.branches") == 3);                             // never deleted
}

TEST_CASE("menu load: a problem anywhere changes nothing", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const std::string before = menu_snapshot(*c);

    SECTION("a branch that exists under another brand is refused with its path") {
        try {
            pos::store::load_menu(*c, menu_of(R"({
                "brands": [{"id": "BRAND-C"}],
                "branches": [{"id": "BR-9"}, {"id": "BR-1"}],
                "products": [{"id": "P-9", "price": 1, "branches": ["BR-9", "BR-1"]}]})"));
            FAIL("no MenuConflict");
        } catch (const pos::store::MenuConflict& e) {
            REQUIRE(e.problems.size() == 1);
            CHECK(e.problems[0] == "/branches/1/brand_id: branch BR-1 already belongs to brand BRAND-A, not BRAND-C");
        }
    }
    SECTION("a statement failing after others ran rolls them all back") {
        // The parser never lets an empty id through; build one by hand to make the products upsert fail after
        // the brands and branches upserts ran in the same transaction.
        pos::MenuFile menu = menu_of(kMenu);
        menu.brands.push_back({"BRAND-NEW", "New"});
        menu.branches.push_back({"BR-NEW", "BRAND-NEW", "New"});
        menu.products.push_back({"", "BRAND-NEW", "Broken", 1000, {}});
        CHECK_THROWS_AS(pos::store::load_menu(*c, menu), pqxx::check_violation);
    }
    CHECK(menu_snapshot(*c) == before);
}

TEST_CASE("users: add, duplicate email in any case, unknown brand", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const std::string hash = common::crypto::hash_password("secret-pass", 1000);
    const auto added = pos::store::add_user(*c, "Ops@Example.com", hash, "BRAND-A");
    CHECK(added.result == pos::store::AddUserResult::added);
    CHECK(added.id > 0);
    CHECK(pos::store::add_user(*c, "ops@example.COM", hash, "BRAND-B").result ==
          pos::store::AddUserResult::email_taken);
    CHECK(pos::store::add_user(*c, "x@example.com", hash, "NOPE").result == pos::store::AddUserResult::unknown_brand);
    CHECK(count(*c, "SELECT count(*) FROM pos.users") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.users WHERE password_hash LIKE 'pbkdf2_sha256$1000$%'") == 1);
}

TEST_CASE("logins: a good login issues a token stored as its hash, tokens authenticate their brand", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const std::string hash = common::crypto::hash_password("secret-pass", 1000);
    const auto user = pos::store::add_user(*c, "ops@example.com", hash, "BRAND-A");

    // One failed attempt first (counted up front), then a good one that clears the count.
    auto candidate = pos::store::begin_login(*c, "OPS@example.com");
    CHECK(candidate.allowed);
    CHECK(candidate.user_found);
    CHECK(count(*c, "SELECT failure_count FROM pos.login_failures WHERE email = 'ops@example.com'") == 1);
    candidate = pos::store::begin_login(*c, "ops@example.com");
    REQUIRE(candidate.allowed);
    REQUIRE(candidate.user_found);
    CHECK(candidate.user_id == user.id);
    CHECK(candidate.brand_id == "BRAND-A");
    CHECK(common::crypto::verify_password("secret-pass", candidate.password_hash));
    const std::string token_hash = common::crypto::sha256_hex("the-token");
    pos::store::finish_login(*c, "ops@example.com", candidate.user_id, candidate.brand_id, token_hash);
    CHECK(count(*c, "SELECT count(*) FROM pos.login_failures") == 0);
    CHECK(count(*c, "SELECT count(*) FROM pos.tokens WHERE token_hash = '" + token_hash +
                        "' AND user_id = " + std::to_string(user.id) + " AND last_used_at IS NULL") == 1);

    CHECK(pos::store::authenticate_token(*c, token_hash) == "BRAND-A");
    CHECK(count(*c, "SELECT count(*) FROM pos.tokens WHERE last_used_at IS NOT NULL") == 1);
    CHECK(pos::store::authenticate_token(*c, common::crypto::sha256_hex("another")).empty());
    CHECK(pos::store::authenticate_token(*c, "the-token").empty());  // the clear token is not what is stored

    // An unknown email is counted the same way and has no user.
    candidate = pos::store::begin_login(*c, "nobody@example.com");
    CHECK(candidate.allowed);
    CHECK_FALSE(candidate.user_found);
    CHECK(candidate.password_hash.empty());
}

TEST_CASE("logins: five attempts per email, then refused until 15 minutes after the last", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    for (int i = 0; i < 5; ++i) CHECK(pos::store::begin_login(*c, "x@example.com").allowed);
    auto refused = pos::store::begin_login(*c, "X@example.com");
    CHECK_FALSE(refused.allowed);
    CHECK_FALSE(refused.user_found);
    CHECK(count(*c, "SELECT failure_count FROM pos.login_failures WHERE email = 'x@example.com'") == 5);
    CHECK(pos::store::begin_login(*c, "y@example.com").allowed);  // other emails are not affected

    {
        pqxx::work tx(*c);
        tx.exec("UPDATE pos.login_failures SET last_failure_at = now() - interval '14 minutes'");
        tx.commit();
    }
    CHECK_FALSE(pos::store::begin_login(*c, "x@example.com").allowed);
    {
        pqxx::work tx(*c);
        tx.exec("UPDATE pos.login_failures SET last_failure_at = now() - interval '16 minutes'");
        tx.commit();
    }
    CHECK(pos::store::begin_login(*c, "x@example.com").allowed);
    CHECK(count(*c, "SELECT failure_count FROM pos.login_failures WHERE email = 'x@example.com'") == 1);
}

TEST_CASE("logins: failure rows older than the window are purged, a bounded number per login", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    {
        pqxx::work tx(*c);
        tx.exec(
            "INSERT INTO pos.login_failures (email, failure_count, last_failure_at) "
            "SELECT 'old' || i || '@example.com', 3, now() - interval '16 minutes' FROM generate_series(1, 150) i");
        tx.exec(
            "INSERT INTO pos.login_failures (email, failure_count, last_failure_at) "
            "VALUES ('recent@example.com', 5, now() - interval '14 minutes')");
        tx.commit();
    }
    const std::string stale = "SELECT count(*) FROM pos.login_failures WHERE email LIKE 'old%'";
    pos::store::begin_login(*c, "someone@example.com");
    CHECK(count(*c, stale) == 150 - pos::store::kPurgeBatch);
    pos::store::begin_login(*c, "someone@example.com");
    CHECK(count(*c, stale) == 0);
    // Rows that still count stay: the recent streak still refuses.
    CHECK(count(*c, "SELECT count(*) FROM pos.login_failures WHERE email = 'recent@example.com'") == 1);
    CHECK_FALSE(pos::store::begin_login(*c, "recent@example.com").allowed);
}

TEST_CASE("tokens: a token expires after its lifetime, and expired tokens are purged at the next login", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const auto user =
        pos::store::add_user(*c, "ops@example.com", common::crypto::hash_password("secret-pass", 1000), "BRAND-A");
    const std::string old_hash = common::crypto::sha256_hex("old-token");
    pos::store::finish_login(*c, "ops@example.com", user.id, "BRAND-A", old_hash, std::chrono::seconds(3600));
    CHECK(pos::store::authenticate_token(*c, old_hash) == "BRAND-A");
    CHECK(count(*c,
                "SELECT count(*) FROM pos.tokens WHERE expires_at BETWEEN now() + interval '59 minutes' AND "
                "now() + interval '61 minutes'") == 1);
    {
        pqxx::work tx(*c);
        tx.exec("UPDATE pos.tokens SET expires_at = now() - interval '1 second'");
        tx.commit();
    }
    CHECK(pos::store::authenticate_token(*c, old_hash).empty());
    const std::string new_hash = common::crypto::sha256_hex("new-token");
    pos::store::finish_login(*c, "ops@example.com", user.id, "BRAND-A", new_hash);  // the default lifetime
    CHECK(count(*c, "SELECT count(*) FROM pos.tokens") == 1);
    CHECK(count(*c,
                "SELECT count(*) FROM pos.tokens WHERE expires_at BETWEEN now() + interval '11 hours 59 minutes' "
                "AND now() + interval '12 hours 1 minute'") == 1);
    CHECK(pos::store::authenticate_token(*c, new_hash) == "BRAND-A");
}

TEST_CASE("orders: a valid order is stored with its lines, modifiers, status and raw body", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const auto created = pos::store::submit_order(*c, submission("BRAND-A", kOrder));
    REQUIRE(created.outcome == pos::store::SubmitOutcome::created);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders WHERE id = '" + created.order_id +
                        "' AND status = 'ACCEPTED' AND total = 57.5 AND subtotal = 50 AND tax = 7.5 AND note = "
                        "'No onions' AND customer_name = 'Sara' AND customer_phone = '+966500000000' AND "
                        "raw_request->>'partner_reference' = 'talabat:1001'") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_products WHERE order_id = '" + created.order_id +
                        "' AND ((line_no = 0 AND quantity = 2 AND total = 45 AND note IS NULL) OR "
                        "(line_no = 1 AND quantity = 1 AND total = 20))") == 2);
    CHECK(count(*c,
                "SELECT count(*) FROM pos.order_modifiers WHERE line_no = 0 AND ((mod_no = 0 AND modifier_id = "
                "'M-1' AND note = 'extra' AND total = 2.5) OR (mod_no = 1 AND modifier_id = 'M-2' AND quantity "
                "= 2 AND note IS NULL))") == 2);

    // PENDING when the request has no status.
    std::string pending(kOrder);
    pending.replace(pending.find("\"ACCEPTED\""), 10, "null");
    pending.replace(pending.find("talabat:1001"), 12, "talabat:1002");
    const auto second = pos::store::submit_order(*c, submission("BRAND-A", pending));
    REQUIRE(second.outcome == pos::store::SubmitOutcome::created);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders WHERE id = '" + second.order_id + "' AND status = 'PENDING'") ==
          1);

    // The same reference again: the first id, nothing new; the same reference in another brand is another order.
    const auto again = pos::store::submit_order(*c, submission("BRAND-A", kOrder));
    CHECK(again.outcome == pos::store::SubmitOutcome::existing);
    CHECK(again.order_id == created.order_id);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 2);
    std::string other_brand(kOrder);
    other_brand.replace(other_brand.find("\"BRAND-A\""), 9, "\"BRAND-B\"");
    other_brand.replace(other_brand.find("\"BR-1\""), 6, "\"BR-B\"");
    for (auto at = other_brand.find("\"M-"); at != std::string::npos; at = other_brand.find("\"M-")) {
        other_brand.replace(at, 5, "\"X-1\"");
    }
    const auto b = pos::store::submit_order(*c, submission("BRAND-B", other_brand));
    CHECK(b.outcome == pos::store::SubmitOutcome::invalid);  // BRAND-B has no modifiers
    CHECK(render(b.errors) ==
          "products.0.modifiers.0.id: The selected products.0.modifiers.0.id is invalid.\n"
          "products.0.modifiers.1.id: The selected products.0.modifiers.1.id is invalid.\n");
}

TEST_CASE("orders: another brand's token is forbidden, an unknown brand and every problem are one answer", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    CHECK(pos::store::submit_order(*c, submission("BRAND-B", kOrder)).outcome == pos::store::SubmitOutcome::forbidden);

    std::string unknown_brand(kOrder);
    unknown_brand.replace(unknown_brand.find("\"BRAND-A\""), 9, "\"BRAND-Z\"");
    auto r = pos::store::submit_order(*c, submission("BRAND-A", unknown_brand));
    CHECK(r.outcome == pos::store::SubmitOutcome::invalid);
    CHECK(render(r.errors) == "brand_id: The selected brand id is invalid.\n");

    // Mistyped fields, an unknown product, an unknown modifier and a product not sold in the branch, at once.
    r = pos::store::submit_order(*c, submission("BRAND-A", R"({
        "branch_id": "BR-1", "brand_id": "BRAND-A", "partner_reference": "r-1", "total": "57.5", "subtotal": 50,
        "products": [{"id": "P-1", "quantity": 1, "total": 1, "modifiers": [{"id": "M-1", "quantity": 1, "total": 1},
                                                                          {"id": "M-9", "quantity": 1, "total": 1}]},
                     {"id": "P-2", "quantity": 1, "total": 1},
                     {"id": "P-9", "quantity": 0, "total": 1}]})"));
    CHECK(r.outcome == pos::store::SubmitOutcome::invalid);
    CHECK(render(r.errors) ==
          "products.0.modifiers.1.id: The selected products.0.modifiers.1.id is invalid.\n"
          "products.1.id: Product P-2 is not available in branch BR-1.\n"
          "products.2.id: The selected products.2.id is invalid.\n"
          "products.2.quantity: The products.2.quantity must be at least 1.\n"
          "tax: The tax field is required.\n"
          "total: The total must be a number.\n");
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 0);
}

namespace {

asio::awaitable<void> submit_one(common::db::Pool& pool, pos::store::OrderSubmission s, std::mutex& m,
                                 std::vector<pos::store::SubmitResult>& results) {
    auto job = [s = std::move(s)](pqxx::connection& c) { return pos::store::submit_order(c, s); };
    auto result = co_await pool.run(std::move(job));
    std::lock_guard lock(m);
    results.push_back(std::move(result));
}

}  // namespace

TEST_CASE("orders: 20 concurrent identical requests store one order and all answer with its id", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    constexpr int kRequests = 20;
    std::mutex m;
    std::vector<pos::store::SubmitResult> results;
    {
        asio::io_context ioc;
        common::db::Pool pool({.url = db.url(), .workers = kRequests, .on_connect = pos::store::prepare_statements});
        for (int i = 0; i < kRequests; ++i) {
            asio::co_spawn(asio::make_strand(ioc), submit_one(pool, submission("BRAND-A", kOrder), m, results),
                           asio::detached);
        }
        std::thread second([&] { ioc.run(); });
        ioc.run();
        second.join();
    }
    REQUIRE(results.size() == kRequests);
    std::set<std::string> ids;
    int created = 0;
    for (const auto& r : results) {
        CHECK((r.outcome == pos::store::SubmitOutcome::created || r.outcome == pos::store::SubmitOutcome::existing));
        created += r.outcome == pos::store::SubmitOutcome::created ? 1 : 0;
        ids.insert(r.order_id);
    }
    CHECK(created == 1);
    REQUIRE(ids.size() == 1);
    CHECK_FALSE(ids.begin()->empty());
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_products") == 2);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_modifiers") == 2);
}

TEST_CASE("orders: a submission that loses the insert race answers with the winner's id", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    pos::store::SubmitResult loser;
    race_an_uncommitted_winner(
        db, *c, [&](pqxx::connection& own) { loser = pos::store::submit_order(own, submission("BRAND-A", kOrder)); });
    CHECK(loser.outcome == pos::store::SubmitOutcome::existing);
    CHECK(loser.order_id == "winner");
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_products") == 0);
}

namespace {

// Everything stored about the orders, without the ids and times the store picks: the same text means the same
// orders, lines, modifiers and raw bodies.
std::string stored_orders(pqxx::connection& c) {
    pqxx::read_transaction tx(c);
    std::string out;
    for (const auto& row : tx.exec(R"(
        SELECT concat_ws(' | ', o.brand_id, o.branch_id, o.partner_reference, o.status, o.note, o.subtotal, o.tax,
                         o.total, o.customer_name, o.customer_phone, o.raw_request::text,
                         (SELECT jsonb_agg(to_jsonb(p) - 'order_id' ORDER BY p.line_no)
                          FROM pos.order_products p WHERE p.order_id = o.id)::text,
                         (SELECT jsonb_agg(to_jsonb(m) - 'order_id' ORDER BY m.line_no, m.mod_no)
                          FROM pos.order_modifiers m WHERE m.order_id = o.id)::text)
        FROM pos.orders o ORDER BY o.brand_id, o.partner_reference)")) {
        out += row[0].as<std::string>() + "\n";
    }
    return out;
}

std::string with(std::string_view text, std::string_view from, std::string_view to) {
    std::string body(text);
    const auto at = body.find(from);
    REQUIRE(at != std::string::npos);
    return body.replace(at, from.size(), to);
}

struct Batch {
    std::vector<pos::store::SubmitResult> results;
    std::vector<std::exception_ptr> errors;
};

Batch submit_batch(pqxx::connection& c, const std::vector<pos::store::OrderSubmission>& submissions) {
    Batch b{std::vector<pos::store::SubmitResult>(submissions.size()),
            std::vector<std::exception_ptr>(submissions.size())};
    pos::store::submit_orders(c, submissions, b.results, b.errors);
    return b;
}

}  // namespace

TEST_CASE("orders in one batch: each answered and stored as if it came alone", "[pos]") {
    const std::string pending = with(with(kOrder, "\"ACCEPTED\"", "null"), "talabat:1001", "talabat:1002");
    const std::string no_customer = with(with(kOrder, R"("customer": {"name": "Sara", "phone": "+966500000000"},)", ""),
                                         "talabat:1001", "talabat:1003");
    const std::string not_in_branch = with(with(kOrder, "talabat:1001", "talabat:1004"),
                                           R"("id": "P-1", "quantity": 1)", R"("id": "P-2", "quantity": 1)");
    const std::string unknown_brand = with(with(kOrder, "\"BRAND-A\"", "\"BRAND-Z\""), "talabat:1001", "talabat:1005");
    const std::string no_brand = with(with(kOrder, R"("brand_id": "BRAND-A",)", ""), "talabat:1001", "talabat:1006");
    const std::string mistyped =
        with(with(kOrder, R"("total": 57.5)", R"("total": "57.5")"), "talabat:1001", "talabat:1007");
    const std::vector<pos::store::OrderSubmission> batch{
        submission("BRAND-A", kOrder),        submission("BRAND-A", pending),     submission("BRAND-A", kOrder),
        submission("BRAND-B", kOrder),        submission("BRAND-A", no_customer), submission("BRAND-A", not_in_branch),
        submission("BRAND-A", unknown_brand), submission("BRAND-A", no_brand),    submission("BRAND-A", mistyped),
        submission("BRAND-A", pending)};

    tests::TempDatabase alone_db;
    auto alone = connect(alone_db);
    pos::store::load_menu(*alone, menu_of(kMenu));
    std::vector<pos::store::SubmitResult> expected;
    for (const auto& s : batch) expected.push_back(pos::store::submit_order(*alone, s));

    tests::TempDatabase batch_db;
    auto c = connect(batch_db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const Batch got = submit_batch(*c, batch);

    using Outcome = pos::store::SubmitOutcome;
    const std::vector<Outcome> outcomes{Outcome::created, Outcome::created, Outcome::existing, Outcome::forbidden,
                                        Outcome::created, Outcome::invalid, Outcome::invalid,  Outcome::invalid,
                                        Outcome::invalid, Outcome::existing};
    for (std::size_t k = 0; k < batch.size(); ++k) {
        INFO("submission " << k);
        CHECK_FALSE(got.errors[k]);
        CHECK(expected[k].outcome == outcomes[k]);
        CHECK(got.results[k].outcome == outcomes[k]);
        CHECK(render(got.results[k].errors) == render(expected[k].errors));
        CHECK(got.results[k].order_id.empty() == expected[k].order_id.empty());
    }
    CHECK(render(got.results[5].errors) == "products.1.id: Product P-2 is not available in branch BR-1.\n");
    // Repeats in the batch answer with the id of the order stored for their reference.
    CHECK(got.results[2].order_id == got.results[0].order_id);
    CHECK(got.results[9].order_id == got.results[1].order_id);
    CHECK(got.results[0].order_id != got.results[1].order_id);
    CHECK(stored_orders(*c) == stored_orders(*alone));
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 3);

    // A later batch with the same references: existing, with the first ids; nothing new.
    const Batch again = submit_batch(*c, {submission("BRAND-A", pending), submission("BRAND-A", kOrder)});
    CHECK(again.results[0].outcome == Outcome::existing);
    CHECK(again.results[0].order_id == got.results[1].order_id);
    CHECK(again.results[1].outcome == Outcome::existing);
    CHECK(again.results[1].order_id == got.results[0].order_id);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 3);

    // The menu no longer has M-2: a repeat of a stored order still answers with its id, a new one is refused.
    std::string menu(kMenu);
    menu = with(menu, R"(,
              {"id": "M-2", "brand_id": "BRAND-A", "name": "Bacon", "price": 4})",
                "");
    pos::store::load_menu(*c, menu_of(menu));
    const Batch changed = submit_batch(
        *c, {submission("BRAND-A", kOrder), submission("BRAND-A", with(kOrder, "talabat:1001", "talabat:1010"))});
    CHECK(changed.results[0].outcome == Outcome::existing);
    CHECK(changed.results[0].order_id == got.results[0].order_id);
    CHECK(changed.results[1].outcome == Outcome::invalid);
    CHECK(render(changed.results[1].errors) ==
          "products.0.modifiers.1.id: The selected products.0.modifiers.1.id is invalid.\n");
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 3);
}

TEST_CASE("orders in one batch: a body PostgreSQL refuses fails alone, the others are stored", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    // A valid order whose raw body jsonb does not take (U+0000 in an ignored field): the batch statement fails,
    // and the submissions are decided one by one.
    const std::string refused = with(with(kOrder, R"("note": "No onions")", R"("note": "No onions", "x": "\u0000")"),
                                     "talabat:1001", "talabat:2002");
    const std::string second = with(kOrder, "talabat:1001", "talabat:2003");
    const Batch got = submit_batch(
        *c, {submission("BRAND-A", kOrder), submission("BRAND-A", refused), submission("BRAND-A", second)});
    CHECK_FALSE(got.errors[0]);
    CHECK(got.results[0].outcome == pos::store::SubmitOutcome::created);
    CHECK(got.errors[1]);
    CHECK_FALSE(got.errors[2]);
    CHECK(got.results[2].outcome == pos::store::SubmitOutcome::created);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 2);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders WHERE partner_reference = 'talabat:2002'") == 0);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_products") == 4);
}

TEST_CASE("orders in one batch: bodies beyond one statement's size go in several, all stored", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const std::string padding(1'500'000, 'x');
    std::vector<pos::store::OrderSubmission> batch;
    for (int i = 0; i < 4; ++i) {
        batch.push_back(submission(
            "BRAND-A", with(with(kOrder, "talabat:1001", "big:" + std::to_string(i)), R"("note": "No onions")",
                            R"("note": "No onions", "padding": ")" + padding + "\"")));
    }
    const Batch got = submit_batch(*c, batch);
    for (std::size_t k = 0; k < batch.size(); ++k) {
        INFO("submission " << k);
        CHECK_FALSE(got.errors[k]);
        CHECK(got.results[k].outcome == pos::store::SubmitOutcome::created);
    }
    CHECK(count(*c, "SELECT count(*) FROM pos.orders WHERE length(raw_request->>'padding') = 1500000") == 4);
    CHECK(count(*c, "SELECT count(DISTINCT xmin::text) FROM pos.orders") >= 2);  // more than one statement
}

TEST_CASE("orders in one batch: a submission that loses the insert race answers with the winner's id", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    const std::string other = with(kOrder, "talabat:1001", "talabat:3001");
    Batch got;
    race_an_uncommitted_winner(db, *c, [&](pqxx::connection& own) {
        got = submit_batch(
            own, {submission("BRAND-A", kOrder), submission("BRAND-A", other), submission("BRAND-A", kOrder)});
    });
    REQUIRE(got.results.size() == 3);
    CHECK(got.results[0].outcome == pos::store::SubmitOutcome::existing);
    CHECK(got.results[0].order_id == "winner");
    CHECK(got.results[1].outcome == pos::store::SubmitOutcome::created);
    CHECK(got.results[2].outcome == pos::store::SubmitOutcome::existing);
    CHECK(got.results[2].order_id == "winner");
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == 2);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_products") == 2);  // the created order's two lines only
}

namespace {

asio::awaitable<void> submit_to(pos::store::OrderIntake& intake, int i, pos::store::OrderSubmission s, std::mutex& m,
                                std::vector<std::pair<int, pos::store::SubmitResult>>& results) {
    auto result = co_await intake.submit(std::move(s));
    std::lock_guard lock(m);
    results.emplace_back(i, std::move(result));
}

}  // namespace

TEST_CASE("orders through the intake's group commit: 40 concurrent requests, 20 of them one order", "[pos]") {
    tests::TempDatabase db;
    auto c = connect(db);
    pos::store::load_menu(*c, menu_of(kMenu));
    constexpr int kRequests = 40;
    std::mutex m;
    std::vector<std::pair<int, pos::store::SubmitResult>> results;
    {
        asio::io_context ioc;
        common::db::Pool pool({.url = db.url(), .workers = 4, .on_connect = pos::store::prepare_statements});
        pos::store::OrderIntake intake(pool, 8, 2);
        for (int i = 0; i < kRequests; ++i) {
            // Even requests repeat one order; odd ones are orders of their own.
            const std::string body =
                i % 2 == 0 ? std::string(kOrder) : with(kOrder, "talabat:1001", "own:" + std::to_string(i));
            asio::co_spawn(asio::make_strand(ioc), submit_to(intake, i, submission("BRAND-A", body), m, results),
                           asio::detached);
        }
        std::thread second([&] { ioc.run(); });
        ioc.run();
        second.join();
    }
    REQUIRE(results.size() == kRequests);
    std::set<std::string> repeated_ids, own_ids;
    int created_repeats = 0;
    for (const auto& [i, r] : results) {
        INFO("request " << i);
        if (i % 2 == 0) {
            CHECK(
                (r.outcome == pos::store::SubmitOutcome::created || r.outcome == pos::store::SubmitOutcome::existing));
            created_repeats += r.outcome == pos::store::SubmitOutcome::created ? 1 : 0;
            repeated_ids.insert(r.order_id);
        } else {
            CHECK(r.outcome == pos::store::SubmitOutcome::created);
            own_ids.insert(r.order_id);
        }
    }
    CHECK(created_repeats == 1);
    CHECK(repeated_ids.size() == 1);
    CHECK(own_ids.size() == kRequests / 2);
    CHECK(count(*c, "SELECT count(*) FROM pos.orders") == kRequests / 2 + 1);
    CHECK(count(*c, "SELECT count(*) FROM pos.order_products") == 2 * (kRequests / 2 + 1));
}
