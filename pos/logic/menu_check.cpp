#include "pos/logic/menu_check.hpp"

namespace pos {

ValidationErrors check_order_against_menu(const OrderRequest& order, const MenuView& menu) {
    ValidationErrors errors;
    // An empty id failed request validation already (see ParsedOrderRequest::draft): nothing to add here.
    const bool branch_known = menu.branches.contains(order.branch_id);
    if (!branch_known && !order.branch_id.empty()) {
        add_error(errors, "branch_id", "The selected branch id is invalid.");
    }
    for (std::size_t i = 0; i < order.products.size(); ++i) {
        const OrderProduct& product = order.products[i];
        const std::string key = "products." + std::to_string(i);
        if (product.id.empty()) {
            // Request validation reported this line's id; its modifiers are still checked below.
        } else if (!menu.products.contains(product.id)) {
            add_error(errors, key + ".id", "The selected " + key + ".id is invalid.");
        } else if (branch_known) {
            const auto branches = menu.product_branches.find(product.id);
            if (branches == menu.product_branches.end() || !branches->second.contains(order.branch_id)) {
                add_error(errors, key + ".id",
                          "Product " + product.id + " is not available in branch " + order.branch_id + ".");
            }
        }
        for (std::size_t j = 0; j < product.modifiers.size(); ++j) {
            const std::string& modifier_id = product.modifiers[j].id;
            if (!modifier_id.empty() && !menu.modifiers.contains(modifier_id)) {
                const std::string modifier_key = key + ".modifiers." + std::to_string(j) + ".id";
                add_error(errors, modifier_key, "The selected " + modifier_key + " is invalid.");
            }
        }
    }
    return errors;
}

}  // namespace pos
