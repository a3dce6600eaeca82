#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <pqxx/connection_base>
#include <pqxx/transaction_base>
#include <stdexcept>
#include <string>
#include <vector>

#include "pos/logic/menu_check.hpp"
#include "pos/logic/menu_file.hpp"
#include "pos/logic/order_request.hpp"

namespace pos::store {

/// Rows written to one table by a menu load.
struct TableChanges {
    std::size_t inserted = 0;
    std::size_t updated = 0;
    std::size_t deleted = 0;

    bool any() const { return inserted + updated + deleted > 0; }
};

/// What load_menu changed, per table.
struct MenuLoadReport {
    TableChanges brands;
    TableChanges branches;
    TableChanges products;
    TableChanges product_branches;
    TableChanges modifiers;

    bool changed() const {
        return brands.any() || branches.any() || products.any() || product_branches.any() || modifiers.any();
    }
};

/// The file contradicts the database in a way a load must not paper over (a branch id that exists under another
/// brand); `problems` are "<JSON pointer>: <problem>" like the file's own validation errors. Nothing was changed.
struct MenuConflict : std::runtime_error {
    explicit MenuConflict(std::vector<std::string> problems);
    std::vector<std::string> problems;
};

/// Makes the database hold `menu`, in one transaction: brands, branches, products and modifiers are inserted or
/// updated (a row is written only when its name or price differs, so loading the same file again changes
/// nothing); for each brand of the file, products and modifiers it no longer lists are deleted and each product
/// is available in exactly the branches it lists. Brands and branches are never deleted (orders, users and
/// tokens refer to them). Concurrent loads run one after another. Throws MenuConflict (nothing changed).
MenuLoadReport load_menu(pqxx::connection_base& c, const MenuFile& menu);

/// Entry `i` of menu_views for `order` of `brand_id`: the branch, products and modifiers it names.
boost::json::object menu_lookup(std::size_t i, const std::string& brand_id, const OrderRequest& order);

/// For each entry of `lookups` (menu_lookup, entry i at position i), the part of its brand's menu that its order
/// names, as a MenuView that check_order_against_menu gives the same answer with as with the whole menu. One
/// statement (kMenuForOrders) for all of them.
std::vector<MenuView> menu_views(pqxx::transaction_base& tx, const boost::json::array& lookups);

/// True when the brand exists.
bool brand_exists(pqxx::transaction_base& tx, const std::string& brand_id);

}  // namespace pos::store
