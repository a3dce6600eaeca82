#include "hub/admin/order_rules.hpp"

#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/db/order_items.hpp"

namespace hub::admin {

pqxx::row order_row(pqxx::transaction_base& tx, const std::string& sql, const std::string& id) {
    auto rows = tx.exec_params(sql, id);
    if (rows.empty()) throw Refusal(Refusal::Kind::not_found, "no order with id '" + id + "'");
    return rows[0];
}

boost::json::object show_order(pqxx::transaction_base& tx, const std::string& id) {
    // Columns are read by name: adding one to the SELECT cannot shift another.
    const pqxx::row r = order_row(
        tx,
        "SELECT o.id, p.label AS partner, o.external_id, o.branch_id, o.brand_id, o.order_type, o.payment_method, "
        "o.note, o.subtotal::text AS subtotal, o.tax::text AS tax, o.discount::text AS discount, "
        "o.total::text AS total, o.is_schedule, " +
            iso_utc("o.schedule_date") +
            " AS schedule_date, o.customer_name, o.customer_phone, o.customer_address, o.car_color, "
            "o.car_plate_number, o.car_plate_letters, o.car_brand, o.delivery_status, " +
            iso_utc("o.event_time") + " AS event_time, " + iso_utc("o.created_at") +
            " AS created_at, j.state, j.attempts, j.pos_order_id, j.last_error, " + iso_utc("j.due_at") +
            " AS due_at, o.request_id, o.test"
            " FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id "
            "LEFT JOIN hub.forward_jobs j ON j.order_id = o.id WHERE o.id = $1",
        id);
    auto text = [&r](const char* column) { return boost::json::value(r[column].c_str()); };
    auto maybe = [&r](const char* column) { return nullable(r[column]); };
    boost::json::array items = hub::db::order_items_json(tx, id);
    boost::json::object out;
    for (const char* column : {"id", "partner", "external_id", "branch_id", "brand_id", "order_type", "payment_method",
                               "note", "subtotal", "tax", "discount", "total"})
        out[column] = text(column);
    out["is_schedule"] = r["is_schedule"].as<bool>();
    out["schedule_date"] = maybe("schedule_date");
    out["customer"] = r["customer_name"].is_null() ? boost::json::value(nullptr)
                                                   : boost::json::value({{"name", text("customer_name")},
                                                                         {"phone", text("customer_phone")},
                                                                         {"address", maybe("customer_address")}});
    out["car_data"] = r["car_color"].is_null() ? boost::json::value(nullptr)
                                               : boost::json::value({{"color", text("car_color")},
                                                                     {"plate_number", text("car_plate_number")},
                                                                     {"plate_letters", text("car_plate_letters")},
                                                                     {"car_brand", text("car_brand")}});
    out["delivery_status"] = text("delivery_status");
    out["event_time"] = text("event_time");
    out["created_at"] = text("created_at");
    out["request_id"] = maybe("request_id");
    out["test"] = r["test"].as<bool>();
    out["forwarding"] = {{"state", maybe("state")},
                         {"attempts", r["attempts"].is_null() ? 0 : r["attempts"].as<int>()},
                         {"pos_order_id", maybe("pos_order_id")},
                         {"last_error", maybe("last_error")},
                         {"due_at", maybe("due_at")}};
    out["items"] = std::move(items);
    return out;
}

boost::json::array list_orders(pqxx::transaction_base& tx, const OrderFilter& filter) {
    if (filter.limit < 1 || filter.limit > kMaxListLimit)
        throw Refusal(Refusal::Kind::invalid, "limit must be between 1 and " + std::to_string(kMaxListLimit));
    boost::json::array rows;
    for (const auto& r : tx.exec_params(
             "SELECT o.id, p.label, o.external_id, o.branch_id, o.total::text, o.delivery_status, j.state, " +
                 iso_utc("o.created_at") + ", o.test" +
                 " FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id "
                 "LEFT JOIN hub.forward_jobs j ON j.order_id = o.id "
                 "WHERE ($1 = '' OR o.branch_id = $1) AND ($2 = '' OR j.state = $2 OR o.delivery_status = $2) "
                 "AND ($4 = '' OR o.id < $4) ORDER BY o.id DESC LIMIT $3",
             filter.branch, filter.state, static_cast<long long>(filter.limit), filter.before)) {
        rows.push_back({{"id", r[0].c_str()},
                        {"partner", r[1].c_str()},
                        {"external_id", r[2].c_str()},
                        {"branch_id", r[3].c_str()},
                        {"total", r[4].c_str()},
                        {"delivery_status", r[5].c_str()},
                        {"forwarding", nullable(r[6])},
                        {"created_at", r[7].c_str()},
                        {"test", r[8].as<bool>()}});
    }
    return rows;
}

std::string resolve_order_id(pqxx::transaction_base& tx, const std::string& given) {
    if (!tx.exec_params("SELECT 1 FROM hub.orders WHERE id = $1", given).empty()) return given;
    auto matches = tx.exec_params("SELECT id FROM hub.orders WHERE external_id = $1 ORDER BY id LIMIT 11", given);
    if (matches.empty())
        throw Refusal(Refusal::Kind::not_found, "no order with id or platform order id '" + given + "'");
    if (matches.size() > 1) {
        std::string ids;
        for (const auto& m : matches) ids += (ids.empty() ? "" : ", ") + m[0].as<std::string>();
        throw Refusal(Refusal::Kind::conflict,
                      "platform order id '" + given + "' is used by several partners; give the hub order id: " + ids);
    }
    return matches[0][0].as<std::string>();
}

}  // namespace hub::admin
