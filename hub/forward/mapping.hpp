#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hub/ingest/validate.hpp"

namespace hub::forward {

/// Everything the POS order of one stored order is made from.
struct PosSource {
    std::string pos_branch_id;  ///< the branch's POS branch id (default: the hub branch id)
    std::string brand_id;
    std::string partner_label;
    std::string external_id;  ///< the platform's order id
    std::string note;
    ingest::Money subtotal = 0;
    ingest::Money tax = 0;
    ingest::Money total = 0;
    bool auto_accept = false;
    std::optional<std::string> customer_name;
    std::optional<std::string> customer_phone;
    std::vector<ingest::OrderItem> items;
    std::map<std::string, std::string> item_map;    ///< platform item id -> POS product id
    std::map<std::string, std::string> option_map;  ///< platform option id -> POS modifier id
};

/// `<partner label>:<platform order id>`: the POS's idempotency key for the order.
std::string partner_reference(const PosSource& source);

/// The body of `POST {base_url}/api/orders` (interface 2.1, product.md section 6): branch, brand,
/// partner_reference, note, subtotal, tax, total, status (PENDING, or ACCEPTED for an auto-accept branch),
/// customer {name, phone} when known, and per item a product line with its mapped id, quantity,
/// total = price x quantity and note, and per option a modifier with its mapped id, quantity and
/// total = option price x option quantity x item quantity. Money is written with exactly three decimals.
std::string pos_order_json(const PosSource& source);

}  // namespace hub::forward
