#include "pos/logic/menu_check.hpp"

namespace pos {

ValidationErrors check_order_against_menu(const OrderRequest& order, const MenuView& menu) {
    ValidationErrors errors;
    const bool branch_known = menu.branches.contains(order.branch_id);
    if (!branch_known) {
        add_error(errors, "branch_id", "The selected branch id is invalid.");
    }
    for (std::size_t i = 0; i < order.products.size(); ++i) {
        const OrderProduct& product = order.products[i];
        const std::string key = "products." + std::to_string(i);
        if (!menu.products.contains(product.id)) {
            add_error(errors, key + ".id", "The selected " + key + ".id is invalid.");
        } else if (branch_known) {
            const auto branches = menu.product_branches.find(product.id);
            if (branches == menu.product_branches.end() || !branches->second.contains(order.branch_id)) {
                add_error(errors, key + ".id",
                          "Product " + product.id + " is not available in branch " + order.branch_id + ".");
            }
        }
        for (std::size_t j = 0; j < product.modifiers.size(); ++j) {
            if (!menu.modifiers.contains(product.modifiers[j].id)) {
                const std::string modifier_key = key + ".modifiers." + std::to_string(j) + ".id";
                add_error(errors, modifier_key, "The selected " + modifier_key + " is invalid.");
            }
        }
    }
    return errors;
}

}  // namespace pos
