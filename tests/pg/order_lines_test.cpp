// An order's items and options live in its own row (sql/hub/0024_order_lines_in_the_order.sql): what insert_orders
// writes there, what the views with the old tables' shape and the hub's readers make of it, and the upgrade that
// moved the rows of hub.order_items and hub.order_item_options into it.
#include <boost/json/serialize.hpp>

#include "hub/db/order_items.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using Kind = hub::ingest::StoreOutcome::Kind;

namespace {

/// The first column of `sql`'s rows, as text.
std::vector<std::string> strings(const std::string& url, const std::string& sql) {
    pqxx::connection c(url);
    std::vector<std::string> out;
    for (const auto& r : pqxx::nontransaction(c).exec(sql)) out.push_back(r[0].as<std::string>());
    return out;
}

// order_json()'s lines as hub.order_items and hub.order_item_options hold them: order, line, item id, quantity,
// price, note; order, line, option number, option id, price, quantity.
std::vector<std::string> item_rows(const std::string& url) {
    return strings(url,
                   "SELECT o.external_id || '|' || i.line_no || '|' || i.item_id || '|' || i.quantity || '|' || "
                   "i.price || '|' || i.note FROM hub.order_items i JOIN hub.orders o ON o.id = i.order_id ORDER BY 1");
}

std::vector<std::string> option_rows(const std::string& url) {
    return strings(url,
                   "SELECT o.external_id || '|' || x.line_no || '|' || x.option_no || '|' || x.option_id || '|' || "
                   "x.price || '|' || x.quantity FROM hub.order_item_options x JOIN hub.orders o ON o.id = x.order_id "
                   "ORDER BY 1");
}

const std::vector<std::string> kItems{"L-1|0|burger|2|18.250|", "L-1|1|fries|1|5.000|"};
const std::vector<std::string> kOptions{"L-1|0|0|cheese|2.500|1", "L-1|0|1|sauce|0.500|3"};

std::string items_json(const std::string& url, const std::string& order_id) {
    pqxx::connection c(url);
    pqxx::read_transaction tx(c);
    return boost::json::serialize(hub::db::order_items_json(tx, order_id));
}

constexpr const char* kItemsJson =
    R"([{"id":"burger","quantity":2,"price":"18.250","note":"","options":[{"id":"cheese","price":"2.500","quantity":1},)"
    R"({"id":"sauce","price":"0.500","quantity":3}]},{"id":"fries","quantity":1,"price":"5.000","note":"","options":[]}])";

}  // namespace

TEST_CASE("lines: an order's items and options are written into its row and read back in the tables' shape",
          "[lines]") {
    HubDb h;
    auto out = store_all(h.db.url(), {{"p1", order_json("L-1")}});
    REQUIRE(out[0].kind == Kind::created);
    CHECK(h.count(R"(SELECT count(*) FROM hub.orders WHERE lines = '{"items": [
        {"line_no": 0, "id": "burger", "quantity": 2, "price": "18.250", "note": ""},
        {"line_no": 1, "id": "fries", "quantity": 1, "price": "5.000", "note": ""}], "options": [
        {"line_no": 0, "option_no": 0, "id": "cheese", "price": "2.500", "quantity": 1},
        {"line_no": 0, "option_no": 1, "id": "sauce", "price": "0.500", "quantity": 3}]}')") == 1);
    CHECK(item_rows(h.db.url()) == kItems);
    CHECK(option_rows(h.db.url()) == kOptions);
    CHECK(items_json(h.db.url(), out[0].order_id) == kItemsJson);
    // A repeat writes nothing; another order's lines are its own.
    store_all(h.db.url(), {{"p1", order_json("L-1")}, {"p2", order_json("L-1")}});
    CHECK(h.count("SELECT count(*) FROM hub.order_items") == 4);
    CHECK(h.count("SELECT count(*) FROM hub.order_item_options i JOIN hub.orders o ON o.id = i.order_id "
                  "WHERE o.partner_id = 'p2'") == 2);
}

TEST_CASE("lines: the upgrade that keeps items and options in the order's row keeps every line", "[lines]") {
    tests::TempDatabase db;
    const auto& files = common::db::migrations_hub();
    migrate_hub_before(db, "0024_");
    const std::string first = store_before_lines(db.url(), "p1", order_json("L-1"));
    REQUIRE(item_rows(db.url()) == kItems);  // the tables as they were
    REQUIRE(option_rows(db.url()) == kOptions);
    const std::string before = items_json(db.url(), first);
    {
        pqxx::connection c(db.url());
        CHECK(pqxx::nontransaction(c).exec1("SELECT to_regclass('hub.order_items')::text")[0].as<std::string>() ==
              "hub.order_items");
        common::db::migrate(c, "hub", files);
        CHECK(pqxx::nontransaction(c)
                  .exec1("SELECT relkind FROM pg_class WHERE oid = 'hub.order_items'::regclass")[0]
                  .as<std::string>() == "v");
    }
    CHECK(item_rows(db.url()) == kItems);
    CHECK(option_rows(db.url()) == kOptions);
    CHECK(items_json(db.url(), first) == before);
    CHECK(before == kItemsJson);
    // The same body again is a duplicate of the order stored before the upgrade; a new one is stored beside it.
    auto again = store_all(db.url(), {{"p1", order_json("L-1")}, {"p1", order_json("L-2")}});
    CHECK(again[0].kind == Kind::duplicate);
    CHECK(again[0].order_id == first);
    CHECK(again[1].kind == Kind::created);
    CHECK(items_json(db.url(), again[1].order_id) == kItemsJson);
    // The order written as before the upgrade (store_before_lines) holds what insert_orders writes for the same body.
    CHECK(
        strings(db.url(),
                "SELECT count(DISTINCT (payment_method, order_type, note, subtotal, tax, discount, total, is_schedule, "
                "event_time, schedule_date, car_color, car_plate_number, car_plate_letters, car_brand, customer_name, "
                "customer_phone, customer_address, status_time))::text FROM hub.orders") ==
        std::vector<std::string>{"1"});
}
