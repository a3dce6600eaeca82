#include "hub/ingest/plain_webhook.hpp"

#include <boost/json/array.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <variant>

#include "common/json/parse.hpp"
#include "hub/ingest/fields.hpp"

namespace hub::ingest {
namespace {

/// The lines an order's item list has room for when it begins (most orders have fewer; more grow it).
constexpr std::size_t kItemsReserve = 4;

namespace bj = boost::json;
using fields::is_color;
using fields::is_one_of;
using fields::is_phone;
using fields::line_too_large;
using fields::text_fits;
using fields::TextRule;

/// The object or array the parser is in.
enum class Where : std::uint8_t { top, root, created, updated, car, customer, items, item, options, option };

// Each object's members, by their index in its list of names; `required` has a bit for each member that must be there.
struct Shape {
    const std::string_view* names;
    std::size_t count;
    std::uint32_t required;
};

constexpr std::array<std::string_view, 4> kRootNames = {"event", "event_time", "branch_id", "payload"};
enum RootMember : std::uint8_t { kEvent, kEventTime, kBranchId, kPayload };

constexpr std::array<std::string_view, 13> kCreatedNames = {
    "id",    "payment_method", "order_type",    "note",     "subtotal", "tax",  "discount",
    "total", "is_schedule",    "schedule_date", "car_data", "customer", "items"};
enum CreatedMember : std::uint8_t {
    kId,
    kPaymentMethod,
    kOrderType,
    kNote,
    kSubtotal,
    kTax,
    kDiscount,
    kTotal,
    kIsSchedule,
    kScheduleDate,
    kCarData,
    kCustomer,
    kItems
};

constexpr std::array<std::string_view, 2> kUpdatedNames = {"order_id", "status"};
enum UpdatedMember : std::uint8_t { kOrderId, kStatus };

constexpr std::array<std::string_view, 4> kCarNames = {"color", "plate_number", "plate_letters", "car_brand"};
enum CarMember : std::uint8_t { kColor, kPlateNumber, kPlateLetters, kCarBrand };

constexpr std::array<std::string_view, 3> kCustomerNames = {"name", "phone", "address"};
enum CustomerMember : std::uint8_t { kName, kPhone, kAddress };

constexpr std::array<std::string_view, 5> kItemNames = {"id", "quantity", "price", "note", "options"};
enum ItemMember : std::uint8_t { kItemId, kItemQuantity, kItemPrice, kItemNote, kItemOptions };

constexpr std::array<std::string_view, 3> kOptionNames = {"id", "price", "quantity"};
enum OptionMember : std::uint8_t { kOptionId, kOptionPrice, kOptionQuantity };

constexpr std::uint32_t bit(unsigned member) { return 1U << member; }

/// Every member of an object of `count` members.
constexpr std::uint32_t every(std::size_t count) { return (1U << count) - 1; }

Shape shape_of(Where where) {
    switch (where) {
        case Where::root: return {kRootNames.data(), kRootNames.size(), every(kRootNames.size())};
        case Where::created:
            return {kCreatedNames.data(), kCreatedNames.size(),
                    bit(kId) | bit(kPaymentMethod) | bit(kOrderType) | bit(kSubtotal) | bit(kTax) | bit(kDiscount) |
                        bit(kTotal) | bit(kIsSchedule) | bit(kItems)};
        case Where::updated: return {kUpdatedNames.data(), kUpdatedNames.size(), every(kUpdatedNames.size())};
        case Where::car: return {kCarNames.data(), kCarNames.size(), every(kCarNames.size())};
        case Where::customer: return {kCustomerNames.data(), kCustomerNames.size(), bit(kName) | bit(kPhone)};
        case Where::item:
            return {kItemNames.data(), kItemNames.size(), bit(kItemId) | bit(kItemQuantity) | bit(kItemPrice)};
        case Where::option: return {kOptionNames.data(), kOptionNames.size(), every(kOptionNames.size())};
        default: return {nullptr, 0, 0};
    }
}

/// A basic_parser handler that reads the body into a Validated while the parser goes, and stops the parser (an
/// error it makes) at the first thing outside the plain shape of a valid webhook: the caller then declines.
class PlainReader {
public:
    // Names required by the basic_parser handler concept.
    // NOLINTBEGIN(readability-identifier-naming)
    static constexpr std::size_t max_object_size = bj::object::max_size();
    static constexpr std::size_t max_array_size = bj::array::max_size();
    static constexpr std::size_t max_key_size = bj::string::max_size();
    static constexpr std::size_t max_string_size = bj::string::max_size();
    // NOLINTEND(readability-identifier-naming)

    explicit PlainReader(Validated& out) : out_(out) {}

    bool on_document_begin(bj::error_code&) { return true; }
    bool on_document_end(bj::error_code&) { return true; }

    bool on_object_begin(bj::error_code& ec) {
        switch (here()) {
            case Where::top: return enter(Where::root, ec);
            case Where::root:
                // The payload's event must be known before it: `event` first, as the interface lists it.
                if (member_ != kPayload || event_ == Where::top) return decline(ec);
                if (event_ == Where::created) {
                    order_ = &out_.payload.emplace<OrderCreated>();
                } else {
                    update_ = &out_.payload.emplace<OrderUpdated>();
                }
                return enter(event_, ec);
            case Where::created:
                if (member_ == kCarData) {
                    car_ = &order_->car_data.emplace();
                    return enter(Where::car, ec);
                }
                if (member_ == kCustomer) {
                    customer_ = &order_->customer.emplace();
                    return enter(Where::customer, ec);
                }
                return decline(ec);
            case Where::items:
                if (order_->items.size() == kMaxItems) return decline(ec);
                item_ = &order_->items.emplace_back();
                return enter(Where::item, ec);
            case Where::options:
                if (item_->options.size() == kMaxOptionsPerItem) return decline(ec);
                option_ = &item_->options.emplace_back();
                return enter(Where::option, ec);
            default: return decline(ec);
        }
    }

    bool on_object_end(std::size_t, bj::error_code& ec) {
        const Frame& frame = frames_[depth_];
        const std::uint32_t required = shape_of(frame.where).required;
        if ((frame.seen & required) != required) return decline(ec);
        if (frame.where == Where::created && order_->is_schedule != order_->schedule_date.has_value())
            return decline(ec);  // a date exactly when scheduled (null or absent otherwise)
        if (frame.where == Where::item) {
            // The line totals' bounds, once the item's quantity is known whatever the order of its members.
            if (line_too_large(item_->price, item_->quantity)) return decline(ec);
            for (const OrderOption& option : item_->options)
                if (line_too_large(option.price * option.quantity, item_->quantity)) return decline(ec);
        }
        --depth_;
        return true;
    }

    bool on_array_begin(bj::error_code& ec) {
        if (here() == Where::created && member_ == kItems) {
            // Room for a usual order's lines at once, not grown line by line.
            order_->items.reserve(kItemsReserve);
            return enter(Where::items, ec);
        }
        if (here() == Where::item && member_ == kItemOptions) return enter(Where::options, ec);
        return decline(ec);
    }

    bool on_array_end(std::size_t n, bj::error_code& ec) {
        if (here() == Where::items && n == 0) return decline(ec);  // at least one item
        --depth_;
        return true;
    }

    bool on_key_part(bj::string_view, std::size_t, bj::error_code& ec) { return decline(ec); }

    bool on_key(bj::string_view s, std::size_t, bj::error_code& ec) {
        const Shape shape = shape_of(here());
        const std::string_view key(s.data(), s.size());
        Frame& frame = frames_[depth_];
        // From the member after the last one found: a body that lists its members in the interface's order (as
        // most do) finds each at the first comparison. Any order finds every member.
        std::size_t i = frame.next;
        for (std::size_t k = 0; k < shape.count; ++k, ++i) {
            if (i == shape.count) i = 0;
            if (shape.names[i] != key) continue;
            if ((frame.seen & bit(i)) != 0) return decline(ec);  // a repeated key
            frame.seen |= bit(i);
            frame.next = static_cast<std::uint8_t>(i + 1);
            member_ = static_cast<std::uint8_t>(i);
            return true;
        }
        return decline(ec);  // a member the plain shape does not have
    }

    bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
        pieces_.append(s.data(), s.size());
        in_pieces_ = true;
        return true;
    }

    bool on_string(bj::string_view s, std::size_t, bj::error_code& ec) {
        if (!in_pieces_) return text(std::string_view(s.data(), s.size()), ec);
        pieces_.append(s.data(), s.size());
        in_pieces_ = false;
        const bool ok = text(pieces_, ec);
        pieces_.clear();
        return ok;
    }

    bool on_number_part(bj::string_view, bj::error_code& ec) { return decline(ec); }

    bool on_int64(std::int64_t i, bj::string_view, bj::error_code& ec) {
        switch (here()) {
            case Where::created:
                if (member_ == kIsSchedule) {
                    if (i != 0 && i != 1) return decline(ec);
                    order_->is_schedule = i == 1;
                    return true;
                }
                return money(bj::value(i), ec);
            case Where::item:
                if (member_ == kItemQuantity) return quantity(i, item_->quantity, ec);
                return money(bj::value(i), ec);
            case Where::option:
                if (member_ == kOptionQuantity) return quantity(i, option_->quantity, ec);
                return money(bj::value(i), ec);
            default: return decline(ec);
        }
    }

    bool on_uint64(std::uint64_t, bj::string_view, bj::error_code& ec) { return decline(ec); }

    bool on_double(double d, bj::string_view s, bj::error_code& ec) {
        // parse_strict keeps Boost.JSON's double of such a literal as it is; others it reads again.
        if (!common::json::exact_decimal_fraction(std::string_view(s.data(), s.size()))) return decline(ec);
        return money(bj::value(d), ec);
    }

    bool on_bool(bool, bj::error_code& ec) { return decline(ec); }

    bool on_null(bj::error_code& ec) {
        // Null where the validator takes it for absent: the member keeps its default.
        switch (here()) {
            case Where::created:
                return member_ == kNote || member_ == kScheduleDate || member_ == kCarData || member_ == kCustomer ||
                       decline(ec);
            case Where::customer: return member_ == kAddress || decline(ec);
            case Where::item: return member_ == kItemNote || decline(ec);
            default: return decline(ec);
        }
    }

    bool on_comment_part(bj::string_view, bj::error_code& ec) { return decline(ec); }
    bool on_comment(bj::string_view, bj::error_code& ec) { return decline(ec); }

private:
    struct Frame {
        Where where = Where::top;
        std::uint8_t next = 0;  // where the search for the next key starts
        std::uint32_t seen = 0;
    };

    Where here() const { return frames_[depth_].where; }

    bool enter(Where where, bj::error_code& ec) {
        if (depth_ + 1 == frames_.size()) return decline(ec);
        frames_[++depth_] = Frame{where, 0, 0};
        return true;
    }

    static bool decline(bj::error_code& ec) {
        ec = bj::error::input_error;
        return false;
    }

    /// `value` into `out` when `fits`, the member's rule, holds for it.
    static bool keep(bool fits, std::string_view value, std::string& out, bj::error_code& ec) {
        if (!fits) return decline(ec);
        out.assign(value);
        return true;
    }

    /// A text under `rule` into `out`.
    static bool keep(std::string_view value, TextRule rule, std::string& out, bj::error_code& ec) {
        return keep(text_fits(value, rule), value, out, ec);
    }

    static bool keep_time(std::string_view value, Timestamp& out, bj::error_code& ec) {
        auto parsed = parse_timestamp(value);
        if (!parsed) return decline(ec);
        out = *parsed;
        return true;
    }

    /// A string value, whole, for the member it belongs to.
    bool text(std::string_view value, bj::error_code& ec) {
        switch (here()) {
            case Where::root:
                switch (member_) {
                    case kEvent:
                        if (value == kEventOrderCreated) {
                            event_ = Where::created;
                        } else if (value == kEventOrderUpdated) {
                            event_ = Where::updated;
                        } else {
                            return decline(ec);
                        }
                        out_.envelope.event = value;
                        return true;
                    case kEventTime: return keep_time(value, out_.envelope.event_time, ec);
                    case kBranchId: return keep(value, fields::kIdRule, out_.envelope.branch_id, ec);
                    default: return decline(ec);
                }
            case Where::created:
                switch (member_) {
                    case kId: return keep(value, fields::kIdRule, order_->external_id, ec);
                    case kPaymentMethod: return keep(value, fields::kPaymentMethodRule, order_->payment_method, ec);
                    case kOrderType: return keep(is_one_of(value, kOrderTypes), value, order_->order_type, ec);
                    case kNote: return keep(value, fields::kNoteRule, order_->note, ec);
                    case kScheduleDate: return keep_time(value, order_->schedule_date.emplace(), ec);
                    default: return decline(ec);
                }
            case Where::updated:
                if (member_ == kOrderId) return keep(value, fields::kIdRule, update_->order_id, ec);
                return keep(is_one_of(value, kDeliveryStatuses), value, update_->status, ec);
            case Where::car:
                if (member_ == kColor) return keep(is_color(value), value, car_->color, ec);
                return keep(value, fields::kCarFieldRule,
                            member_ == kPlateNumber    ? car_->plate_number
                            : member_ == kPlateLetters ? car_->plate_letters
                                                       : car_->car_brand,
                            ec);
            case Where::customer:
                switch (member_) {
                    case kName: return keep(value, fields::kNameRule, customer_->name, ec);
                    case kPhone: return keep(is_phone(value), value, customer_->phone, ec);
                    default: return keep(value, fields::kAddressRule, customer_->address.emplace(), ec);
                }
            case Where::item:
                if (member_ == kItemId) return keep(value, fields::kIdRule, item_->id, ec);
                if (member_ == kItemNote) return keep(value, fields::kNoteRule, item_->note, ec);
                return decline(ec);
            case Where::option:
                if (member_ == kOptionId) return keep(value, fields::kIdRule, option_->id, ec);
                return decline(ec);
            default: return decline(ec);
        }
    }

    /// A number for a money member, through the validator's own conversion.
    bool money(const bj::value& number, bj::error_code& ec) {
        Money* target = nullptr;
        switch (here()) {
            case Where::created:
                switch (member_) {
                    case kSubtotal: target = &order_->subtotal; break;
                    case kTax: target = &order_->tax; break;
                    case kDiscount: target = &order_->discount; break;
                    case kTotal: target = &order_->total; break;
                    default: return decline(ec);
                }
                break;
            case Where::item:
                if (member_ != kItemPrice) return decline(ec);
                target = &item_->price;
                break;
            case Where::option:
                if (member_ != kOptionPrice) return decline(ec);
                target = &option_->price;
                break;
            default: return decline(ec);
        }
        const auto converted = convert_money(number);
        const Money* amount = std::get_if<Money>(&converted);
        if (amount == nullptr) return decline(ec);
        *target = *amount;
        return true;
    }

    static bool quantity(std::int64_t i, std::int64_t& out, bj::error_code& ec) {
        if (i < 1 || i > kMaxQuantity) return decline(ec);
        out = i;
        return true;
    }

    Validated& out_;
    std::array<Frame, 8> frames_{};  // top, root, payload, items, item, options, option: seven at most
    std::size_t depth_ = 0;
    std::uint8_t member_ = 0;   // the member whose value comes next, in the shape of the innermost object
    Where event_ = Where::top;  // the payload's shape, once `event` named it
    OrderCreated* order_ = nullptr;
    OrderUpdated* update_ = nullptr;
    CarData* car_ = nullptr;
    Customer* customer_ = nullptr;
    OrderItem* item_ = nullptr;
    OrderOption* option_ = nullptr;
    std::string pieces_;  // a string value that arrives in pieces (escapes)
    bool in_pieces_ = false;
};

}  // namespace

bool read_plain_webhook(std::string_view body, Validated& out) {
    // The options of parse_strict: what it refuses, this declines.
    bj::parse_options options;
    options.max_depth = common::json::ParseLimits{}.max_depth;
    options.allow_comments = false;
    options.allow_trailing_commas = false;
    options.allow_invalid_utf8 = false;
    try {
        bj::basic_parser<PlainReader> parser(options, out);
        bj::error_code ec;
        const std::size_t consumed = parser.write_some(false, body.data(), body.size(), ec);
        return !ec && consumed == body.size() && parser.done();
    } catch (const std::exception&) {
        return false;  // the full path meets the same limit and says so
    }
}

}  // namespace hub::ingest
