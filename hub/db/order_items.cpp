#include "hub/db/order_items.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

namespace hub::db {

boost::json::array order_items_json(pqxx::transaction_base& tx, const std::string& order_id) {
    boost::json::array items;
    for (const auto& it : tx.exec_params("SELECT line_no, item_id, quantity, price::text, note FROM hub.order_items "
                                         "WHERE order_id = $1 ORDER BY line_no",
                                         order_id)) {
        boost::json::array options;
        for (const auto& op : tx.exec_params("SELECT option_id, price::text, quantity FROM hub.order_item_options "
                                             "WHERE order_id = $1 AND line_no = $2 ORDER BY option_no",
                                             order_id, it[0].as<int>()))
            options.push_back({{"id", op[0].c_str()}, {"price", op[1].c_str()}, {"quantity", op[2].as<int>()}});
        items.push_back({{"id", it[1].c_str()},
                         {"quantity", it[2].as<int>()},
                         {"price", it[3].c_str()},
                         {"note", it[4].c_str()},
                         {"options", std::move(options)}});
    }
    return items;
}

}  // namespace hub::db
