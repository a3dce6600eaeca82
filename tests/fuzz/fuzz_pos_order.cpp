// `POST /api/orders` bodies as the reference POS reads them: strict JSON parsing, request validation, then the
// menu check against a small fixed menu, exactly as pos/store/orders.cpp chains them (the draft of a refused
// request is checked too). Checks that an accepted order is within every bound of pos/logic/order_request.hpp
// and that every problem is keyed by a request field.

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/parse.hpp"
#include "pos/logic/menu_check.hpp"
#include "pos/logic/order_request.hpp"
#include "pos/logic/text.hpp"
#include "pos/logic/validation_errors.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using fuzz::require;

// The seeds in corpus/fuzz_pos_order/ use these ids, so that mutations reach every branch of the menu check.
const pos::MenuView& menu() {
    static const pos::MenuView view{
        .products = {"P-1", "P-2", "P-3"},
        .product_branches = {{"P-1", {"BR-1", "BR-2"}}, {"P-2", {"BR-1"}}, {"P-3", {}}},
        .modifiers = {"M-1", "M-2"},
        .branches = {"BR-1", "BR-2"},
    };
    return view;
}

bool text_ok(std::string_view text, std::size_t max_chars) { return pos::utf8_length(text) <= max_chars; }

bool required_ok(std::string_view text, std::size_t max_chars) {
    return !pos::is_blank(text) && text_ok(text, max_chars);
}

bool money_ok(pos::Money m) { return m >= 0 && m <= pos::kMaxMoney; }

bool quantity_ok(std::int64_t q) { return q >= 1 && q <= pos::kMaxQuantity; }

void check_order(const pos::OrderRequest& o) {
    require(required_ok(o.branch_id, pos::kMaxIdLength) && required_ok(o.brand_id, pos::kMaxIdLength) &&
                required_ok(o.partner_reference, pos::kMaxIdLength),
            "required ids are present and bounded");
    require(!o.note || text_ok(*o.note, pos::kMaxNoteLength), "note bound");
    require(money_ok(o.total) && money_ok(o.subtotal) && money_ok(o.tax), "money within 0..kMaxMoney");
    require(pos::parse_order_status(pos::to_string(o.status)) == o.status, "status names round-trip");
    if (o.customer) {
        require(!o.customer->name || text_ok(*o.customer->name, pos::kMaxIdLength), "customer name bound");
        require(!o.customer->phone || text_ok(*o.customer->phone, pos::kMaxPhoneLength), "customer phone bound");
    }
    require(!o.products.empty() && o.products.size() <= pos::kMaxProducts, "1-500 products");
    for (const pos::OrderProduct& p : o.products) {
        require(required_ok(p.id, pos::kMaxIdLength), "product id bound");
        require(quantity_ok(p.quantity) && money_ok(p.total), "product quantity and total bounds");
        require(!p.note || text_ok(*p.note, pos::kMaxNoteLength), "product note bound");
        require(p.modifiers.size() <= pos::kMaxModifiers, "modifiers per product bound");
        for (const pos::OrderModifier& m : p.modifiers) {
            require(required_ok(m.id, pos::kMaxIdLength), "modifier id bound");
            require(quantity_ok(m.quantity) && money_ok(m.total), "modifier quantity and total bounds");
            require(!m.note || text_ok(*m.note, pos::kMaxNoteLength), "modifier note bound");
        }
    }
}

void check_errors(const pos::ValidationErrors& errors) {
    for (const auto& [key, messages] : errors) {
        require(!key.empty() && !messages.empty(), "every error key has a message");
        for (const std::string& message : messages) require(!message.empty(), "messages are not empty");
    }
    require(errors.empty() == pos::summarize_errors(errors).empty(), "a summary exactly when there are errors");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const common::json::ParseResult parsed = common::json::parse_strict(text);
    if (!parsed.value) return 0;

    const pos::ParsedOrderRequest request = pos::parse_order_request(*parsed.value);
    require(request.order.has_value() == request.errors.empty(), "an order exactly when there is no error");
    check_errors(request.errors);
    if (request.order) check_order(*request.order);

    const pos::OrderRequest& order = request.order ? *request.order : request.draft;
    const pos::ValidationErrors menu_errors = pos::check_order_against_menu(order, menu());
    check_errors(menu_errors);
    for (const auto& [key, messages] : menu_errors) {
        require(key == "branch_id" || key.rfind("products.", 0) == 0, "menu problems name a request field");
    }
    pos::ValidationErrors all = request.errors;
    pos::merge_errors(all, menu_errors);
    check_errors(all);
    return 0;
}
