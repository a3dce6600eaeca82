#include "pos/store/orders.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "common/crypto/uuid.hpp"
#include "pos/logic/menu_check.hpp"
#include "pos/logic/money.hpp"
#include "pos/store/menu.hpp"
#include "pos/store/queries.hpp"

namespace pos::store {
namespace {

namespace json = boost::json;

json::value optional_text(const std::optional<std::string>& s) { return s ? json::value(*s) : json::value(nullptr); }

// The product lines and modifiers as the JSON arrays the insert statements expand.
std::pair<std::string, std::string> order_lines(const OrderRequest& order) {
    json::array products, modifiers;
    for (std::size_t i = 0; i < order.products.size(); ++i) {
        const OrderProduct& p = order.products[i];
        products.push_back(json::object{{"line_no", i},
                                        {"product_id", p.id},
                                        {"quantity", p.quantity},
                                        {"total", format_money(p.total)},
                                        {"note", optional_text(p.note)}});
        for (std::size_t j = 0; j < p.modifiers.size(); ++j) {
            const OrderModifier& m = p.modifiers[j];
            modifiers.push_back(json::object{{"line_no", i},
                                             {"mod_no", j},
                                             {"modifier_id", m.id},
                                             {"quantity", m.quantity},
                                             {"total", format_money(m.total)},
                                             {"note", optional_text(m.note)}});
        }
    }
    return {json::serialize(products), json::serialize(modifiers)};
}

SubmitResult invalid(ValidationErrors errors) { return {SubmitOutcome::invalid, {}, std::move(errors)}; }

SubmitResult insert_order(pqxx::work& tx, const OrderRequest& order, const std::string& raw_body) {
    const std::optional<std::string> no_text;
    const auto& customer_name = order.customer ? order.customer->name : no_text;
    const auto& customer_phone = order.customer ? order.customer->phone : no_text;
    const std::string id = common::crypto::uuid_v7();
    const pqxx::result inserted =
        exec(tx, sql::kInsertOrder, id, order.brand_id, order.branch_id, order.partner_reference,
             std::string(to_string(order.status)), nullable(order.note), format_money(order.subtotal),
             format_money(order.tax), format_money(order.total), nullable(customer_name), nullable(customer_phone),
             raw_body);
    if (inserted.empty()) {
        // A concurrent request with the same reference committed first (this INSERT waited for it).
        const pqxx::result existing = exec(tx, sql::kFindOrder, order.brand_id, order.partner_reference);
        return {SubmitOutcome::existing, existing.at(0)[0].as<std::string>(), {}};
    }
    const auto [products, modifiers] = order_lines(order);
    exec(tx, sql::kInsertOrderProducts, id, products);
    exec(tx, sql::kInsertOrderModifiers, id, modifiers);
    tx.commit();
    return {SubmitOutcome::created, id, {}};
}

}  // namespace

SubmitResult submit_order(pqxx::connection_base& c, const OrderSubmission& submission) {
    const ParsedOrderRequest& parsed = submission.parsed;
    ValidationErrors errors = parsed.errors;
    pqxx::work tx(c);
    if (!submission.body_brand) return invalid(std::move(errors));  // brand_id missing or not a string
    const std::string& brand = *submission.body_brand;
    if (brand != submission.token_brand) {
        if (brand_exists(tx, brand)) return {SubmitOutcome::forbidden, {}, {}};
        if (!errors.contains("brand_id")) add_error(errors, "brand_id", "The selected brand id is invalid.");
        return invalid(std::move(errors));
    }
    const OrderRequest& order = parsed.order ? *parsed.order : parsed.draft;
    if (parsed.order) {
        const pqxx::result existing = exec(tx, sql::kFindOrder, order.brand_id, order.partner_reference);
        if (!existing.empty()) return {SubmitOutcome::existing, existing[0][0].as<std::string>(), {}};
    }
    merge_errors(errors, check_order_against_menu(order, menu_view_for_order(tx, brand, order)));
    if (!errors.empty()) return invalid(std::move(errors));
    return insert_order(tx, order, submission.raw_body);
}

std::vector<OrderSummary> list_orders(pqxx::connection_base& c, std::size_t limit) {
    pqxx::read_transaction tx(c);
    std::vector<OrderSummary> orders;
    for (const auto& row : exec(tx, sql::kListOrders, limit)) {
        orders.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                          row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>(),
                          row[6].as<std::string>(), row[7].as<std::size_t>(), row[8].as<std::string>()});
    }
    return orders;
}

}  // namespace pos::store
