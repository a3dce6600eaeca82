#include "pos/logic/menu_file.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "common/json/parse.hpp"
#include "pos/logic/order_request.hpp"
#include "pos/logic/text.hpp"

namespace pos {
namespace {

namespace json = boost::json;

class MenuParser {
public:
    ParsedMenuFile run(const json::value& root) {
        ParsedMenuFile result;
        if (!root.is_object()) {
            error("/", "must be a JSON object");
        } else {
            const json::object& object = root.get_object();
            read_brands(object);
            read_branches(object);
            read_products(object);
            read_modifiers(object);
        }
        result.errors = std::move(errors_);
        if (result.errors.empty()) {
            result.menu = std::move(menu_);
        }
        return result;
    }

private:
    void error(const std::string& path, std::string_view message) {
        errors_.push_back(path + ": " + std::string(message));
    }

    // The array at /<name>; nullptr when absent (reported if required) or not an array (reported).
    const json::array* section(const json::object& root, std::string_view name, bool required) {
        const std::string path = "/" + std::string(name);
        const json::value* value = root.if_contains(name);
        if (value == nullptr || value->is_null()) {
            if (required) {
                error(path, "required");
            }
            return nullptr;
        }
        if (!value->is_array()) {
            error(path, "must be an array");
            return nullptr;
        }
        return &value->get_array();
    }

    // Calls `read(object, path)` for each element of /<name>, reporting elements that are not objects.
    template <typename Read>
    void for_each_item(const json::array& items, std::string_view name, Read read) {
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::string path = "/" + std::string(name) + "/" + std::to_string(i);
            if (!items[i].is_object()) {
                error(path, "must be an object");
                continue;
            }
            read(items[i].get_object(), path);
        }
    }

    // `value` when it is present (not null) and `is_kind` holds for it; nullptr after reporting "required" or
    // `wrong_kind` at `path` otherwise.
    const json::value* required_kind(const json::value* value, const std::string& path,
                                     bool (json::value::*is_kind)() const noexcept, std::string_view wrong_kind) {
        if (value == nullptr || value->is_null()) {
            error(path, "required");
            return nullptr;
        }
        if (!(value->*is_kind)()) {
            error(path, wrong_kind);
            return nullptr;
        }
        return value;
    }

    // A non-empty string of at most kMaxIdLength characters at `path`; nullopt (reported) otherwise.
    std::optional<std::string> identifier(const json::value* value, const std::string& path) {
        if (required_kind(value, path, &json::value::is_string, "must be a string") == nullptr) {
            return std::nullopt;
        }
        const std::string_view text = value->get_string();
        if (is_blank(text)) {
            error(path, "must not be empty");
            return std::nullopt;
        }
        if (utf8_length(text) > kMaxIdLength) {
            error(path, "must be at most " + std::to_string(kMaxIdLength) + " characters");
            return std::nullopt;
        }
        return std::string(text);
    }

    std::optional<std::string> id_of(const json::object& item, const std::string& path) {
        return identifier(item.if_contains("id"), path + "/id");
    }

    // The optional `name`, defaulting to `fallback`.
    std::string name_of(const json::object& item, const std::string& path, const std::string& fallback) {
        const json::value* value = item.if_contains("name");
        if (value == nullptr || value->is_null()) {
            return fallback;
        }
        if (!value->is_string()) {
            error(path + "/name", "must be a string");
            return fallback;
        }
        if (utf8_length(value->get_string()) > kMaxIdLength) {
            error(path + "/name", "must be at most " + std::to_string(kMaxIdLength) + " characters");
            return fallback;
        }
        return std::string(value->get_string());
    }

    // The item's brand: `brand_id` when it names a brand of the file, else the file's only brand.
    std::optional<std::string> brand_of(const json::object& item, const std::string& path) {
        const json::value* value = item.if_contains("brand_id");
        if (value == nullptr || value->is_null()) {
            if (brand_count_ == 1) {
                return single_brand_;  // nullopt when that brand was itself invalid (already reported)
            }
            error(path + "/brand_id", "required when the file has more than one brand");
            return std::nullopt;
        }
        auto brand = identifier(value, path + "/brand_id");
        if (brand && !brand_ids_.contains(*brand)) {
            error(path + "/brand_id", "unknown brand " + *brand);
            return std::nullopt;
        }
        return brand;
    }

    std::optional<Money> price_of(const json::object& item, const std::string& path) {
        const json::value* value = item.if_contains("price");
        const std::string price_path = path + "/price";
        if (required_kind(value, price_path, &json::value::is_number, "must be a number") == nullptr) {
            return std::nullopt;
        }
        if (value->to_number<double>() < 0) {
            error(price_path, "must be at least 0");
            return std::nullopt;
        }
        const auto price = money_from_json(*value);
        if (!price) {
            error(price_path, "must be at most " + format_money(kMaxMoney));
        }
        return price;
    }

    void read_brands(const json::object& root) {
        const json::array* brands = section(root, "brands", true);
        if (brands == nullptr) {
            return;
        }
        if (brands->empty()) {
            error("/brands", "must contain at least one brand");
            return;
        }
        brand_count_ = brands->size();
        for_each_item(*brands, "brands", [&](const json::object& item, const std::string& path) {
            auto id = id_of(item, path);
            const std::string name = name_of(item, path, id.value_or(""));
            if (!id) {
                return;
            }
            if (!brand_ids_.insert(*id).second) {
                error(path + "/id", "duplicate brand " + *id);
                return;
            }
            if (brand_count_ == 1) {
                single_brand_ = *id;
            }
            menu_.brands.push_back({*id, name});
        });
    }

    void read_branches(const json::object& root) {
        const json::array* branches = section(root, "branches", false);
        if (branches == nullptr) {
            return;
        }
        for_each_item(*branches, "branches", [&](const json::object& item, const std::string& path) {
            auto id = id_of(item, path);
            auto brand = brand_of(item, path);
            const std::string name = name_of(item, path, id.value_or(""));
            if (!id) {
                return;
            }
            if (branch_brands_.contains(*id)) {
                error(path + "/id", "duplicate branch " + *id);
                return;
            }
            // Record the branch even without a valid brand, so products do not also call it unknown.
            branch_brands_.emplace(*id, brand.value_or(""));
            if (brand) {
                menu_.branches.push_back({*id, *brand, name});
            }
        });
    }

    /// What products and modifiers have alike.
    struct PricedEntry {
        std::string id;
        std::string brand_id;
        std::string name;
        Money price = 0;
    };

    /// The entries of a priced section (products, modifiers: `kind`s with an id unique per brand, a name and a
    /// price). For each entry, in file order: its id, brand, name and price are read, then `extra(item, path, brand)`
    /// reads the fields of its kind; an entry with a valid id and brand not listed before, a valid price and a
    /// usable extra goes to `add(entry, extra)`.
    template <class Extra, class Add>
    void read_priced(const json::object& root, const char* name, std::string_view kind, Extra extra, Add add) {
        const json::array* entries = section(root, name, false);
        if (entries == nullptr) {
            return;
        }
        std::set<std::pair<std::string, std::string>> seen;
        for_each_item(*entries, name, [&](const json::object& item, const std::string& path) {
            auto id = id_of(item, path);
            auto brand = brand_of(item, path);
            std::string entry_name = name_of(item, path, id.value_or(""));
            auto price = price_of(item, path);
            auto more = extra(item, path, brand);
            if (!id || !brand) {
                return;
            }
            if (!seen.emplace(*brand, *id).second) {
                error(path + "/id", "duplicate " + std::string(kind) + " " + *id + " in brand " + *brand);
                return;
            }
            if (price && more) {
                add(PricedEntry{*id, *brand, std::move(entry_name), *price}, std::move(*more));
            }
        });
    }

    void read_products(const json::object& root) {
        read_priced(
            root, "products", "product",
            [this](const json::object& item, const std::string& path, const std::optional<std::string>& brand) {
                return branches_of(item, path, brand);
            },
            [this](PricedEntry entry, std::vector<std::string> branches) {
                menu_.products.push_back({std::move(entry.id), std::move(entry.brand_id), std::move(entry.name),
                                          entry.price, std::move(branches)});
            });
    }

    // The product's `branches`: ids of known branches of `brand`, each once.
    std::optional<std::vector<std::string>> branches_of(const json::object& item, const std::string& path,
                                                        const std::optional<std::string>& brand) {
        const std::string list_path = path + "/branches";
        const json::value* value = item.if_contains("branches");
        if (required_kind(value, list_path, &json::value::is_array, "must be an array") == nullptr) {
            return std::nullopt;
        }
        std::vector<std::string> result;
        bool ok = true;
        const json::array& list = value->get_array();
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string entry_path = list_path + "/" + std::to_string(i);
            auto branch = identifier(&list[i], entry_path);
            if (!branch) {
                ok = false;
                continue;
            }
            const auto known = branch_brands_.find(*branch);
            if (known == branch_brands_.end()) {
                error(entry_path, "unknown branch " + *branch);
                ok = false;
            } else if (brand && !known->second.empty() && known->second != *brand) {
                error(entry_path, "branch " + *branch + " belongs to brand " + known->second + ", not " + *brand);
                ok = false;
            } else if (std::find(result.begin(), result.end(), *branch) != result.end()) {
                error(entry_path, "duplicate branch " + *branch);
                ok = false;
            } else {
                result.push_back(std::move(*branch));
            }
        }
        if (!ok) {
            return std::nullopt;
        }
        return result;
    }

    void read_modifiers(const json::object& root) {
        // A modifier has no fields of its own.
        read_priced(
            root, "modifiers", "modifier",
            [](const json::object&, const std::string&, const std::optional<std::string>&) {
                return std::optional<bool>(true);
            },
            [this](PricedEntry entry, bool) {
                menu_.modifiers.push_back(
                    {std::move(entry.id), std::move(entry.brand_id), std::move(entry.name), entry.price});
            });
    }

    std::vector<std::string> errors_;
    MenuFile menu_;
    std::size_t brand_count_ = 0;
    std::optional<std::string> single_brand_;
    std::set<std::string> brand_ids_;
    std::map<std::string, std::string> branch_brands_;  // branch id -> brand id ("" when its brand is invalid)
};

}  // namespace

ParsedMenuFile parse_menu_file(const boost::json::value& root) { return MenuParser().run(root); }

ParsedMenuFile parse_menu_file_text(std::string_view text) {
    // Strict: a duplicate key would otherwise silently keep its last value.
    const common::json::ParseResult parsed = common::json::parse_strict(text);
    if (!parsed.value) {
        ParsedMenuFile result;
        result.errors.push_back("/: invalid JSON: " + parsed.error);
        return result;
    }
    return parse_menu_file(*parsed.value);
}

MenuView menu_view_for_brand(const MenuFile& menu, std::string_view brand_id) {
    MenuView view;
    for (const MenuBranch& branch : menu.branches) {
        if (branch.brand_id == brand_id) {
            view.branches.insert(branch.id);
        }
    }
    for (const MenuProduct& product : menu.products) {
        if (product.brand_id == brand_id) {
            view.products.insert(product.id);
            view.product_branches[product.id].insert(product.branches.begin(), product.branches.end());
        }
    }
    for (const MenuModifier& modifier : menu.modifiers) {
        if (modifier.brand_id == brand_id) {
            view.modifiers.insert(modifier.id);
        }
    }
    return view;
}

}  // namespace pos
