#include "pos/store/menu.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <string_view>

#include "pos/logic/money.hpp"
#include "pos/store/queries.hpp"

namespace pos::store {
namespace {

namespace json = boost::json;

std::string text(const json::value& v) { return json::serialize(v); }

// Counts the rows an upsert returned, telling inserts from updates.
void count_upserts(const pqxx::result& r, TableChanges& changes) {
    for (const auto& row : r) {
        if (row[0].as<bool>()) {
            ++changes.inserted;
        } else {
            ++changes.updated;
        }
    }
}

}  // namespace

MenuConflict::MenuConflict(std::vector<std::string> p)
    : std::runtime_error("the menu file contradicts the database"), problems(std::move(p)) {}

MenuLoadReport load_menu(pqxx::connection_base& c, const MenuFile& menu) {
    json::array brand_ids, brands, branches, products, product_keys, availability, modifiers, modifier_keys;
    for (const MenuBrand& b : menu.brands) {
        brand_ids.emplace_back(b.id);
        brands.push_back(json::object{{"id", b.id}, {"name", b.name}});
    }
    for (std::size_t i = 0; i < menu.branches.size(); ++i) {
        const MenuBranch& b = menu.branches[i];
        // The menu exists only when the file had no error, so entry i is /branches/i of the file.
        branches.push_back(json::object{{"ord", i}, {"id", b.id}, {"brand_id", b.brand_id}, {"name", b.name}});
    }
    for (const MenuProduct& p : menu.products) {
        products.push_back(
            json::object{{"brand_id", p.brand_id}, {"id", p.id}, {"name", p.name}, {"price", format_money(p.price)}});
        product_keys.push_back(json::object{{"brand_id", p.brand_id}, {"id", p.id}});
        for (const std::string& branch : p.branches) {
            availability.push_back(json::object{{"brand_id", p.brand_id}, {"product_id", p.id}, {"branch_id", branch}});
        }
    }
    for (const MenuModifier& m : menu.modifiers) {
        modifiers.push_back(
            json::object{{"brand_id", m.brand_id}, {"id", m.id}, {"name", m.name}, {"price", format_money(m.price)}});
        modifier_keys.push_back(json::object{{"brand_id", m.brand_id}, {"id", m.id}});
    }

    pqxx::work tx(c);
    exec(tx, sql::kLockMenu);
    std::vector<std::string> conflicts;
    for (const auto& row : exec(tx, sql::kBranchBrandConflicts, text(branches))) {
        const auto& branch = menu.branches.at(row[0].as<std::size_t>());
        conflicts.push_back("/branches/" + row[0].as<std::string>() + "/brand_id: branch " + branch.id +
                            " already belongs to brand " + row[1].as<std::string>() + ", not " + branch.brand_id);
    }
    if (!conflicts.empty()) throw MenuConflict(std::move(conflicts));

    MenuLoadReport report;
    const std::string ids = text(brand_ids);
    count_upserts(exec(tx, sql::kUpsertBrands, text(brands)), report.brands);
    count_upserts(exec(tx, sql::kUpsertBranches, text(branches)), report.branches);
    count_upserts(exec(tx, sql::kUpsertProducts, text(products)), report.products);
    count_upserts(exec(tx, sql::kUpsertModifiers, text(modifiers)), report.modifiers);
    const std::string available = text(availability);
    report.product_branches.deleted = exec(tx, sql::kDeleteStaleProductBranches, ids, available).affected_rows();
    report.product_branches.inserted = exec(tx, sql::kInsertProductBranches, available).affected_rows();
    report.products.deleted = exec(tx, sql::kDeleteStaleProducts, ids, text(product_keys)).affected_rows();
    report.modifiers.deleted = exec(tx, sql::kDeleteStaleModifiers, ids, text(modifier_keys)).affected_rows();
    tx.commit();
    return report;
}

json::object menu_lookup(std::size_t i, const std::string& brand_id, const OrderRequest& order) {
    std::set<std::string> products, modifiers;  // empty ids come from a draft whose validation reported them
    for (const OrderProduct& p : order.products) {
        if (!p.id.empty()) products.insert(p.id);
        for (const OrderModifier& m : p.modifiers) {
            if (!m.id.empty()) modifiers.insert(m.id);
        }
    }
    return json::object{{"i", i},
                        {"brand_id", brand_id},
                        {"branch_id", order.branch_id},
                        {"products", json::array(products.begin(), products.end())},
                        {"modifiers", json::array(modifiers.begin(), modifiers.end())}};
}

std::vector<MenuView> menu_views(pqxx::transaction_base& tx, const json::array& lookups) {
    std::vector<MenuView> views(lookups.size());
    for (const auto& row : exec(tx, sql::kMenuForOrders, text(lookups))) {
        const auto i = row[0].as<std::size_t>();
        if (i >= views.size()) continue;
        MenuView& view = views[i];
        const std::string_view kind(row[1].c_str(), row[1].size());
        auto id = row[2].as<std::string>();
        if (kind == "branch") {
            view.branches.insert(std::move(id));
        } else if (kind == "product") {
            view.products.insert(std::move(id));
        } else if (kind == "available") {
            view.product_branches[std::move(id)].insert(row[3].as<std::string>());
        } else if (kind == "modifier") {
            view.modifiers.insert(std::move(id));
        }
    }
    return views;
}

bool brand_exists(pqxx::transaction_base& tx, const std::string& brand_id) {
    return !exec(tx, sql::kBrandExists, brand_id).empty();
}

}  // namespace pos::store
