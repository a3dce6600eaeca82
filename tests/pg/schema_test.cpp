// Rules of the hub's and the reference POS's schemas as a whole: ids, codes, states and hashes compare byte by byte
// (sql/hub/0023_identifiers_compare_bytes.sql, sql/pos/0003_…), also in tables that later migrations add.
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using Kind = hub::ingest::StoreOutcome::Kind;

namespace {

/// "table.column" of the text columns of `schema` that are keys or name another row (a column of an index, of a
/// constraint, or an `id` or `…_id`) and compare by a collation other than "C". Emails are people's text: they are
/// matched through lower(), which lowers letters beyond ASCII only in the database's collation.
std::vector<std::string> locale_compared_keys(pqxx::connection& c, const std::string& schema = "hub") {
    std::vector<std::string> out;
    for (const auto& row : pqxx::nontransaction(c).exec_params(R"(
            SELECT cl.relname || '.' || a.attname
            FROM pg_attribute a
            JOIN pg_class cl ON cl.oid = a.attrelid
            WHERE cl.relnamespace = $1::regnamespace AND cl.relkind IN ('r', 'p') AND NOT cl.relispartition
              AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'text'::regtype AND a.attname <> 'email'
              AND a.attcollation <> (SELECT oid FROM pg_collation
                                     WHERE collname = 'C' AND collnamespace = 'pg_catalog'::regnamespace)
              AND (a.attname = 'id' OR a.attname LIKE '%\_id'
                   OR EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = cl.oid AND a.attnum = ANY (x.indkey::int2[]))
                   OR EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = cl.oid AND a.attnum = ANY (k.conkey)
                                                              AND k.contype IN ('p', 'u', 'f')))
            ORDER BY 1)",
                                                               schema))
        out.push_back(row[0].as<std::string>());
    return out;
}

std::string collation_of(pqxx::connection& c, const std::string& table, const std::string& column) {
    return pqxx::nontransaction(c)
        .exec_params1(
            "SELECT coalesce(co.collname, '') FROM pg_attribute a LEFT JOIN pg_collation co "
            "ON co.oid = a.attcollation WHERE a.attrelid = $1::regclass AND a.attname = $2",
            table, column)[0]
        .as<std::string>();
}

/// Every trigger of the hub's tables with what makes it what it is: its definition and when it fires.
std::vector<std::string> triggers(pqxx::connection& c) {
    std::vector<std::string> out;
    for (const auto& row : pqxx::nontransaction(c).exec(
             "SELECT pg_get_triggerdef(t.oid) || ' [' || t.tgenabled::text || ']' FROM pg_trigger t "
             "JOIN pg_class cl ON cl.oid = t.tgrelid "
             "WHERE cl.relnamespace = 'hub'::regnamespace AND NOT t.tgisinternal ORDER BY 1"))
        out.push_back(row[0].as<std::string>());
    return out;
}

}  // namespace

TEST_CASE("schema: every key and id column of the hub compares bytes, people's text the database's collation",
          "[schema]") {
    HubDb h;
    pqxx::connection c(h.db.url());
    CHECK(locale_compared_keys(c).empty());
    // The rule above has something to find: the keys that matter most, and text for people left alone.
    CHECK(collation_of(c, "hub.orders", "id") == "C");
    CHECK(collation_of(c, "hub.forward_jobs", "state") == "C");
    CHECK(collation_of(c, "hub.inbox", "external_id") == "C");
    CHECK(collation_of(c, "hub.orders", "customer_name") == "default");
    CHECK(collation_of(c, "hub.branches", "name") == "default");
    CHECK(collation_of(c, "hub.dashboard_users", "email") == "default");
    // Its CHECK (email = lower(email)) still lowers beyond ASCII: an upper-case É is refused, é taken.
    const std::string user = "INSERT INTO hub.dashboard_users (id, email, password_hash, brand_id) VALUES ";
    CHECK(outcome_of(c, user + "('u1', 'Élodie@example.com', 'pbkdf2_sha256$x', 'BR')").find("check constraint") !=
          std::string::npos);
    CHECK(outcome_of(c, user + "('u2', 'élodie@example.com', 'pbkdf2_sha256$x', 'BR')") == "ok");
}

TEST_CASE("schema: the upgrade to byte-compared ids keeps every row, trigger and the boards' view", "[schema]") {
    tests::TempDatabase db;
    const auto& files = common::db::migrations_hub();
    migrate_hub_before(db, "0023_");
    std::vector<std::string> before;
    {
        pqxx::connection c(db.url());
        CHECK(!locale_compared_keys(c).empty());  // what this migration changes
        before = triggers(c);
    }
    const std::string first = store_before_lines(db.url(), "p1", order_json("U-1"));
    pqxx::connection c(db.url());
    common::db::migrate(c, "hub", tests::migrations_before(files, "0024_"));  // 0024 changes triggers of its own
    CHECK(locale_compared_keys(c).empty());
    CHECK(triggers(c) == before);  // made again as they were, still enabled always where they were
    CHECK(outcome_of(c, "UPDATE hub.orders SET id = 'other'") == "denied");  // orders_never_renamed
    CHECK(pqxx::nontransaction(c)
              .exec_params1("SELECT count(*) FROM hub.dashboard_event_log WHERE order_id = $1 AND kind = 'status'",
                            first)[0]
              .as<int>() == 1);
    // An order stored before is found by its keys, and one with the same payload id is a duplicate.
    common::db::migrate(c, "hub", files);
    auto again = store_all(db.url(), {{"p1", order_json("U-1")}, {"p1", order_json("U-2")}});
    CHECK(again[0].kind == Kind::duplicate);
    CHECK(again[0].order_id == first);
    CHECK(again[1].kind == Kind::created);
}

TEST_CASE("schema: every key and id column of the reference POS compares bytes, names and notes the database's",
          "[schema]") {
    tests::TempDatabase db;
    pqxx::connection c(db.url());
    const auto& files = common::db::migrations_pos();
    common::db::migrate(c, "pos", tests::migrations_before(files, "0003_"));
    CHECK(!locale_compared_keys(c, "pos").empty());  // what 0003 changes
    common::db::migrate(c, "pos", files);
    CHECK(locale_compared_keys(c, "pos").empty());
    CHECK(collation_of(c, "pos.orders", "id") == "C");
    CHECK(collation_of(c, "pos.orders", "customer_name") == "default");
    CHECK(collation_of(c, "pos.users", "email") == "default");
}
