#pragma once

#include <cstddef>
#include <pqxx/connection_base>
#include <pqxx/field>
#include <pqxx/transaction_base>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
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

/// The product and modifier ids an order names (empty ids of a draft left out).
struct MenuIds {
    std::set<std::string> products;
    std::set<std::string> modifiers;
};
MenuIds named_menu_ids(const OrderRequest& order);

/// Adds one row of kMenuForOrder or kMenuForOrders (its kind, id and branch_id columns) to `view`; other kinds
/// are ignored.
void add_menu_row(MenuView& view, std::string_view kind, std::string id, const pqxx::field& branch_id);

/// The part of `brand_id`'s menu that `order` names (its branch, products and modifiers), as a MenuView that
/// check_order_against_menu gives the same answer with as with the whole menu.
MenuView menu_view_for_order(pqxx::transaction_base& tx, const std::string& brand_id, const OrderRequest& order);

/// True when the brand exists.
bool brand_exists(pqxx::transaction_base& tx, const std::string& brand_id);

}  // namespace pos::store
