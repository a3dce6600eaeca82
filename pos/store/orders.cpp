#include "pos/store/orders.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <stdexcept>

#include "common/crypto/uuid.hpp"
#include "common/db/pool.hpp"
#include "pos/logic/menu_check.hpp"
#include "pos/logic/money.hpp"
#include "pos/store/menu.hpp"
#include "pos/store/queries.hpp"

namespace pos::store {
namespace {

namespace json = boost::json;

json::value optional_text(const std::optional<std::string>& s) { return s ? json::value(*s) : json::value(nullptr); }

// The product lines and modifiers as the JSON arrays the insert statements expand.
std::pair<json::array, json::array> order_lines(const OrderRequest& order) {
    json::array products, modifiers;
    for (std::size_t i = 0; i < order.products.size(); ++i) {
        const OrderProduct& p = order.products[i];
        products.push_back(json::object{{"line_no", i},
                                        {"product_id", p.id},
                                        {"quantity", p.quantity},
                                        {"total", format_money(p.total)},
                                        {"note", optional_text(p.note)}});
        for (std::size_t j = 0; j < p.modifiers.size(); ++j) {
            const OrderModifier& m = p.modifiers[j];
            modifiers.push_back(json::object{{"line_no", i},
                                             {"mod_no", j},
                                             {"modifier_id", m.id},
                                             {"quantity", m.quantity},
                                             {"total", format_money(m.total)},
                                             {"note", optional_text(m.note)}});
        }
    }
    return {std::move(products), std::move(modifiers)};
}

/// Entry `i` of kInsertOrders for `order`, stored as `id`, without its raw body (append_with_raw adds it).
std::string order_entry(std::size_t i, const std::string& id, const OrderRequest& order) {
    const std::optional<std::string> no_text;
    auto [products, modifiers] = order_lines(order);
    return json::serialize(
        json::object{{"i", i},
                     {"id", id},
                     {"brand_id", order.brand_id},
                     {"branch_id", order.branch_id},
                     {"reference", order.partner_reference},
                     {"status", to_string(order.status)},
                     {"note", optional_text(order.note)},
                     {"subtotal", format_money(order.subtotal)},
                     {"tax", format_money(order.tax)},
                     {"total", format_money(order.total)},
                     {"customer_name", optional_text(order.customer ? order.customer->name : no_text)},
                     {"customer_phone", optional_text(order.customer ? order.customer->phone : no_text)},
                     {"products", std::move(products)},
                     {"modifiers", std::move(modifiers)}});
}

SubmitResult invalid(ValidationErrors errors) { return {SubmitOutcome::invalid, {}, std::move(errors)}; }

/// The id of the order stored under `order`'s brand and reference, if any.
std::optional<std::string> find_order(pqxx::transaction_base& tx, const OrderRequest& order) {
    const pqxx::result found = exec(tx, sql::kFindOrder, order.brand_id, order.partner_reference);
    if (found.empty()) return std::nullopt;
    return found[0][0].as<std::string>();
}

/// The answer when the body's brand_id is missing or not the token's brand, before anything else is looked at.
std::optional<SubmitResult> refuse_brand(pqxx::transaction_base& tx, const OrderSubmission& submission) {
    if (!submission.body_brand) return invalid(submission.parsed.errors);  // brand_id missing or not a string
    const std::string& brand = *submission.body_brand;
    if (brand == submission.token_brand) return std::nullopt;
    if (brand_exists(tx, brand)) return SubmitResult{SubmitOutcome::forbidden, {}, {}};
    ValidationErrors errors = submission.parsed.errors;
    if (!errors.contains("brand_id")) add_error(errors, "brand_id", "The selected brand id is invalid.");
    return invalid(std::move(errors));
}

/// The statements of a batch hold at most about this many bytes of entries (raw bodies included); a single
/// larger entry goes alone.
constexpr std::size_t kMaxStatementBytes = 4 << 20;

/// Appends `entry` (a serialised JSON object) to the array `out`, with `"raw":` and the raw body added to it.
void append_with_raw(std::string& out, const std::string& entry, const std::string& raw_body) {
    out += out.size() > 1 ? "," : "";
    out.append(entry, 0, entry.size() - 1);
    out += ",\"raw\":";
    out += raw_body;
    out += '}';
}

/// Decides the submissions `bulk` (indexes into `submissions`, each with the token's brand) with two statements
/// for all of them: kMenuForOrders (the menu they name), then kInsertOrders in autocommit for the ones to store
/// (one commit). A repeated reference is found by the insert's unique key and answered with the stored order's
/// id, as is a valid request that fails the menu check only because the menu changed since its reference was
/// first stored. Sets `answered` for each submission it decided; throws when a statement failed (nothing of the
/// failed statement was stored; earlier answers stand).
/// Inserts the entries `to_store` (indexes into `bulk`) in statements of at most kMaxStatementBytes, answers those
/// stored, and returns those that lost their insert to an order with the same reference.
std::vector<std::size_t> store_entries(pqxx::connection_base& c, std::span<const OrderSubmission> submissions,
                                       const std::vector<std::size_t>& bulk, const std::vector<std::size_t>& to_store,
                                       const std::vector<std::string>& entries, const std::vector<std::string>& ids,
                                       std::span<SubmitResult> results, std::vector<bool>& answered) {
    std::vector<std::size_t> raced;
    for (std::size_t start = 0; start < to_store.size();) {
        std::string array = "[";
        std::size_t end = start;
        for (std::size_t bytes = 0; end < to_store.size(); ++end) {
            const std::size_t i = to_store[end];
            const std::size_t size = entries[i].size() + submissions[bulk[i]].raw_body.size();
            if (end > start && bytes + size > kMaxStatementBytes) break;
            bytes += size;
            append_with_raw(array, entries[i], submissions[bulk[i]].raw_body);
        }
        array += ']';
        std::vector<bool> stored(bulk.size(), false);
        {
            pqxx::nontransaction nt(c);
            for (const auto& row : exec(nt, sql::kInsertOrders, array)) {
                const auto i = row[0].as<std::size_t>();
                if (i < bulk.size()) stored[i] = true;
            }
        }
        for (std::size_t m = start; m < end; ++m) {
            const std::size_t i = to_store[m];
            if (stored[i]) {
                results[bulk[i]] = {SubmitOutcome::created, ids[i], {}};
                answered[bulk[i]] = true;
            } else {
                raced.push_back(i);
            }
        }
        start = end;
    }
    return raced;
}

void decide_bulk(pqxx::connection_base& c, std::span<const OrderSubmission> submissions,
                 const std::vector<std::size_t>& bulk, std::span<SubmitResult> results, std::vector<bool>& answered) {
    if (bulk.empty()) return;
    json::array lookups;
    lookups.reserve(bulk.size());
    for (std::size_t i = 0; i < bulk.size(); ++i) {
        const ParsedOrderRequest& parsed = submissions[bulk[i]].parsed;
        lookups.push_back(
            menu_lookup(i, submissions[bulk[i]].token_brand, parsed.order ? *parsed.order : parsed.draft));
    }
    std::vector<MenuView> views;
    {
        pqxx::nontransaction nt(c);
        views = menu_views(nt, lookups);
    }
    // The id of the order already stored under the reference of valid submission k, if any.
    auto stored_under_reference = [&](std::size_t k) {
        pqxx::nontransaction nt(c);
        return find_order(nt, *submissions[k].parsed.order);
    };
    // Entries to store, as kInsertOrders takes them; `ids[i]` the id given to bulk[i].
    std::vector<std::size_t> to_store;
    std::vector<std::string> entries(bulk.size());
    std::vector<std::string> ids(bulk.size());
    for (std::size_t i = 0; i < bulk.size(); ++i) {
        const std::size_t k = bulk[i];
        const ParsedOrderRequest& parsed = submissions[k].parsed;
        const OrderRequest& order = parsed.order ? *parsed.order : parsed.draft;
        ValidationErrors errors = parsed.errors;
        merge_errors(errors, check_order_against_menu(order, views[i]));
        if (!errors.empty()) {
            // A valid request is checked for its reference first (rare: only when the menu refuses it).
            if (parsed.order) {
                if (auto existing = stored_under_reference(k)) {
                    results[k] = {SubmitOutcome::existing, std::move(*existing), {}};
                    answered[k] = true;
                    continue;
                }
            }
            results[k] = invalid(std::move(errors));
            answered[k] = true;
            continue;
        }
        ids[i] = common::crypto::uuid_v7();
        entries[i] = order_entry(i, ids[i], order);
        to_store.push_back(i);
    }
    const std::vector<std::size_t> raced =
        store_entries(c, submissions, bulk, to_store, entries, ids, results, answered);
    for (const std::size_t i : raced) {
        // Stored before, by another request or an earlier entry of this batch: every copy answers with its id.
        const std::size_t k = bulk[i];
        auto existing = stored_under_reference(k);
        if (!existing) throw std::runtime_error("an order refused as a repeat is not stored");
        results[k] = {SubmitOutcome::existing, std::move(*existing), {}};
        answered[k] = true;
    }
}

SubmitResult insert_order(pqxx::work& tx, const OrderRequest& order, const std::string& raw_body) {
    const std::optional<std::string> no_text;
    const auto& customer_name = order.customer ? order.customer->name : no_text;
    const auto& customer_phone = order.customer ? order.customer->phone : no_text;
    const std::string id = common::crypto::uuid_v7();
    const pqxx::result inserted =
        exec(tx, sql::kInsertOrder, id, order.brand_id, order.branch_id, order.partner_reference,
             std::string(to_string(order.status)), nullable(order.note), format_money(order.subtotal),
             format_money(order.tax), format_money(order.total), nullable(customer_name), nullable(customer_phone),
             raw_body);
    if (inserted.empty()) {
        // A concurrent request with the same reference committed first (this INSERT waited for it).
        auto existing = find_order(tx, order);
        if (!existing) throw std::runtime_error("an order refused as a repeat is not stored");
        return {SubmitOutcome::existing, std::move(*existing), {}};
    }
    const auto [products, modifiers] = order_lines(order);
    exec(tx, sql::kInsertOrderProducts, id, json::serialize(products));
    exec(tx, sql::kInsertOrderModifiers, id, json::serialize(modifiers));
    tx.commit();
    return {SubmitOutcome::created, id, {}};
}

}  // namespace

SubmitResult submit_order(pqxx::connection_base& c, const OrderSubmission& submission) {
    pqxx::work tx(c);
    if (auto refused = refuse_brand(tx, submission)) return std::move(*refused);
    const ParsedOrderRequest& parsed = submission.parsed;
    const OrderRequest& order = parsed.order ? *parsed.order : parsed.draft;
    if (parsed.order) {
        if (auto existing = find_order(tx, order)) return {SubmitOutcome::existing, std::move(*existing), {}};
    }
    ValidationErrors errors = parsed.errors;
    merge_errors(errors,
                 check_order_against_menu(order, menu_views(tx, {menu_lookup(0, submission.token_brand, order)})[0]));
    if (!errors.empty()) return invalid(std::move(errors));
    return insert_order(tx, order, submission.raw_body);
}

void submit_orders(pqxx::connection_base& c, std::span<const OrderSubmission> submissions,
                   std::span<SubmitResult> results, std::span<std::exception_ptr> errors) {
    const std::size_t n = submissions.size();
    std::vector<bool> answered(n, false);
    // The submissions the bulk statements decide, in their order: entry i of the statements is submission bulk[i].
    std::vector<std::size_t> bulk;
    for (std::size_t k = 0; k < n; ++k) {
        // A missing brand_id or another brand's: decided alone below (rare).
        if (submissions[k].body_brand == submissions[k].token_brand) bulk.push_back(k);
    }
    std::exception_ptr unavailable;
    try {
        decide_bulk(c, submissions, bulk, results, answered);
    } catch (...) {
        // One submission the statements refused (a body PostgreSQL's jsonb does not take, say): the ones not yet
        // answered are decided one by one below, each as it would be alone, so that only that one fails.
        if (common::db::is_unavailable(std::current_exception())) unavailable = std::current_exception();
    }
    for (std::size_t k = 0; k < n; ++k) {
        if (answered[k]) continue;
        if (unavailable) {
            errors[k] = unavailable;  // the ones answered before keep their answers: those orders are stored
            continue;
        }
        try {
            results[k] = submit_order(c, submissions[k]);
        } catch (...) {
            errors[k] = std::current_exception();
            if (common::db::is_unavailable(errors[k])) unavailable = errors[k];
        }
    }
}

std::vector<OrderSummary> list_orders(pqxx::connection_base& c, std::size_t limit) {
    pqxx::read_transaction tx(c);
    std::vector<OrderSummary> orders;
    for (const auto& row : exec(tx, sql::kListOrders, limit)) {
        orders.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                          row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>(),
                          row[6].as<std::string>(), row[7].as<std::size_t>(), row[8].as<std::string>()});
    }
    return orders;
}

}  // namespace pos::store
