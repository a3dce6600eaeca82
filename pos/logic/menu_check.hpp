#pragma once

#include <map>
#include <set>
#include <string>

#include "pos/logic/order_request.hpp"
#include "pos/logic/validation_errors.hpp"

namespace pos {

/// The menu of ONE brand, as far as order validation needs it.
struct MenuView {
    std::set<std::string> products;                                 ///< product ids of the brand
    std::map<std::string, std::set<std::string>> product_branches;  ///< product id -> branches it is sold in
    std::set<std::string> modifiers;                                ///< modifier ids of the brand
    std::set<std::string> branches;                                 ///< branch ids of the brand
};

/// Checks a validated order against the brand's menu and returns the problems (empty when it fits):
/// `branch_id` not a branch of the brand -> "The selected branch id is invalid."; an unknown product ->
/// `products.N.id` "The selected products.N.id is invalid."; a product not sold in the order's branch ->
/// `products.N.id` "Product P-1 is not available in branch BR-2." (skipped when the branch itself is
/// invalid); an unknown modifier -> `products.N.modifiers.M.id` "The selected products.N.modifiers.M.id is
/// invalid.". Empty ids (and an empty branch_id) are skipped: they come from a request draft whose validation
/// already reported them. Pure; thread-safe.
ValidationErrors check_order_against_menu(const OrderRequest& order, const MenuView& menu);

}  // namespace pos
