#pragma once

#include <boost/json/array.hpp>
#include <string>

namespace pqxx {
class transaction_base;
}

namespace hub::db {

/// The items of a stored order with their options, as shown by `orderhub order show` and the dashboard:
/// [{id, quantity, price (decimal text), note, options: [{id, price, quantity}]}], in line order.
boost::json::array order_items_json(pqxx::transaction_base& tx, const std::string& order_id);

}  // namespace hub::db
