#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "pos/logic/menu_check.hpp"
#include "pos/logic/money.hpp"

namespace pos {

/// A brand of the menu file.
struct MenuBrand {
    std::string id;
    std::string name;
};

/// A branch of the menu file; branch ids are unique across the whole file.
struct MenuBranch {
    std::string id;
    std::string brand_id;
    std::string name;
};

/// A product of the menu file; ids are unique per brand. Sold only in `branches` (all of its brand).
struct MenuProduct {
    std::string id;
    std::string brand_id;
    std::string name;
    Money price = 0;
    std::vector<std::string> branches;
};

/// A modifier of the menu file; ids are unique per brand.
struct MenuModifier {
    std::string id;
    std::string brand_id;
    std::string name;
    Money price = 0;
};

/// The validated content of a menu file (product.md section 7), in file order.
struct MenuFile {
    std::vector<MenuBrand> brands;
    std::vector<MenuBranch> branches;
    std::vector<MenuProduct> products;
    std::vector<MenuModifier> modifiers;
};

/// The outcome of parsing a menu file: `menu` is set exactly when `errors` is empty.
struct ParsedMenuFile {
    std::optional<MenuFile> menu;
    std::vector<std::string>
        errors;  ///< "<JSON pointer>: <problem>", e.g. "/products/0/branches/1: unknown branch BR-9"
};

/// Validates a parsed menu file and reports every problem with its JSON pointer ("/" for the root).
/// `brands` is a required non-empty array; `branches`, `products`, `modifiers` are optional arrays. Every
/// item needs a non-empty string `id` (at most 191 characters); `name` is optional (defaults to the id);
/// `brand_id` may be left out on branches, products and modifiers when the file has exactly one brand, and
/// must name a brand of the file otherwise; products need `price` (number >= 0, three decimals) and
/// `branches` (array of branch ids of the product's brand, no repeats); modifiers need `price`. Duplicate ids
/// (brands, branches; products and modifiers within a brand) are refused. Extra fields are ignored. Pure.
ParsedMenuFile parse_menu_file(const boost::json::value& root);

/// Parses `text` strictly as JSON (common::json::parse_strict: a syntax error or a duplicate key gives
/// "/: invalid JSON: <reason>") and validates it as above.
ParsedMenuFile parse_menu_file_text(std::string_view text);

/// The order-check view of brand `brand_id` in `menu` (empty sets for an unknown brand).
MenuView menu_view_for_brand(const MenuFile& menu, std::string_view brand_id);

}  // namespace pos
