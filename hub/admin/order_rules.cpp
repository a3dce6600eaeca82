#include "hub/admin/order_rules.hpp"

#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/db/order_items.hpp"

namespace hub::admin {
namespace {

constexpr std::int64_t kMaxLimit = 100000;

}  // namespace

boost::json::object show_order(pqxx::transaction_base& tx, const std::string& id) {
    auto o = tx.exec_params(
        "SELECT o.id, p.label, o.external_id, o.branch_id, o.brand_id, o.order_type, o.payment_method, o.note, "
        "o.subtotal::text, o.tax::text, o.discount::text, o.total::text, o.is_schedule, " +
            iso_utc("o.schedule_date") +
            ", o.customer_name, o.customer_phone, o.customer_address, o.car_color, o.car_plate_number, "
            "o.car_plate_letters, o.car_brand, o.delivery_status, " +
            iso_utc("o.event_time") + ", " + iso_utc("o.created_at") +
            ", j.state, j.attempts, j.pos_order_id, j.last_error, " + iso_utc("j.due_at") + ", o.request_id, o.test" +
            " FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id "
            "LEFT JOIN hub.forward_jobs j ON j.order_id = o.id WHERE o.id = $1",
        id);
    if (o.empty()) throw Refusal(Refusal::Kind::not_found, "no order with id '" + id + "'");
    const auto& r = o[0];
    boost::json::array items = hub::db::order_items_json(tx, id);
    boost::json::object out{
        {"id", r[0].c_str()},
        {"partner", r[1].c_str()},
        {"external_id", r[2].c_str()},
        {"branch_id", r[3].c_str()},
        {"brand_id", r[4].c_str()},
        {"order_type", r[5].c_str()},
        {"payment_method", r[6].c_str()},
        {"note", r[7].c_str()},
        {"subtotal", r[8].c_str()},
        {"tax", r[9].c_str()},
        {"discount", r[10].c_str()},
        {"total", r[11].c_str()},
        {"is_schedule", r[12].as<bool>()},
        {"schedule_date", nullable(r[13])},
        {"customer",
         r[14].is_null()
             ? boost::json::value(nullptr)
             : boost::json::value({{"name", r[14].c_str()}, {"phone", r[15].c_str()}, {"address", nullable(r[16])}})},
        {"car_data", r[17].is_null() ? boost::json::value(nullptr)
                                     : boost::json::value({{"color", r[17].c_str()},
                                                           {"plate_number", r[18].c_str()},
                                                           {"plate_letters", r[19].c_str()},
                                                           {"car_brand", r[20].c_str()}})},
        {"delivery_status", r[21].c_str()},
        {"event_time", r[22].c_str()},
        {"created_at", r[23].c_str()},
        {"request_id", nullable(r[29])},
        {"test", r[30].as<bool>()},
        {"forwarding",
         {{"state", nullable(r[24])},
          {"attempts", r[25].is_null() ? 0 : r[25].as<int>()},
          {"pos_order_id", nullable(r[26])},
          {"last_error", nullable(r[27])},
          {"due_at", nullable(r[28])}}},
        {"items", std::move(items)},
    };
    return out;
}

boost::json::array list_orders(pqxx::transaction_base& tx, const OrderFilter& filter) {
    if (filter.limit < 1 || filter.limit > kMaxLimit)
        throw Refusal(Refusal::Kind::invalid, "limit must be between 1 and " + std::to_string(kMaxLimit));
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
