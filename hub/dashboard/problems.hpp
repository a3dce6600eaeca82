#pragma once

// A POS rejection in plain words: which product or modifier of the order the POS does not know, and how to fix it.
// The pure part (explain_rejection) reads the POS's 422 answer, `{"message": …, "errors": {"products.0.id": […],
// "products.0.modifiers.1.id": […]}}` (interface section 4.1, as the reference POS words it), against the order's
// lines; pos_problems adds the database part for GET orders/{id}.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace pqxx {
class transaction_base;
}

namespace hub::dashboard {

/// One option of an order line: the platform's id and the id the hub sends to the POS (its mapping, or the same).
struct LineOption {
    std::string id;
    std::string pos_id;
};

/// One line of an order, in the order the POS receives them (products[i]).
struct OrderLine {
    std::string id;      ///< the platform's item id
    std::string pos_id;  ///< the POS product id the hub sends (mapped, or the platform's id)
    std::vector<LineOption> options;
};

/// One thing the POS refused, in words for restaurant staff.
struct PosProblem {
    std::string kind;         ///< "item", "item_unavailable", "option", "branch" or "other"
    int line = -1;            ///< the order line (0-based), -1 when not about a line
    int option = -1;          ///< the option of the line (0-based), -1 when not about an option
    std::string external_id;  ///< the platform's id of the item or option ("" when unknown)
    std::string pos_id;       ///< the id the hub sent for it ("" when unknown)
    std::string pos_message;  ///< what the POS said about it ("" when its answer could not be read)
    std::string text;         ///< what is wrong, in plain words
    std::string fix;          ///< what to do ("" when there is nothing specific)
};

/// The problems the POS's answer (`http_status`, `body`: the stored excerpt of its answer) names, for an order
/// with `lines` from partner `partner_id` to branch `branch_id`. Reads the answer's `errors` keys (products.N.id,
/// products.N.modifiers.M.id, products.N.options.M.id, branch_id, other keys as "other"); when the body is not
/// JSON (e.g. cut short) it still finds the keys in the text. Empty when the answer names nothing (not a 4xx,
/// no errors): the board shows the raw answer then.
std::vector<PosProblem> explain_rejection(int http_status, std::string_view body, const std::vector<OrderLine>& lines,
                                          std::string_view partner_id, std::string_view branch_id);

/// The problems as JSON: [{kind, line, option, external_id, pos_id, pos_message, text, fix}] (line and option
/// 1-based for people, null when not about one).
boost::json::array problems_json(const std::vector<PosProblem>& problems);

/// The plain-words problems of order `order_id` (whose detail JSON is `detail`, with forwarding and attempts):
/// from its newest rejected attempt's answer while its forwarding state is "rejected", else empty.
boost::json::array pos_problems(pqxx::transaction_base& tx, const std::string& order_id,
                                const boost::json::object& detail);

}  // namespace hub::dashboard
