#include "hub/ingest/order_document.hpp"

#include <boost/json/serialize.hpp>

#include <optional>
#include <string_view>

#include "common/crypto/digest.hpp"
#include "common/json/writer.hpp"

namespace hub::ingest {
namespace {

// The keys of an order's document (canonical() and add_event_time()): reserved at once, so no rehash.
constexpr std::size_t kDocumentKeys = 18;

boost::json::value optional_text(const std::optional<std::string>& s) {
    return s ? boost::json::value(*s) : boost::json::value(nullptr);
}

// Everything but the event time, in a fixed key order: the canonical form that payload_hash() digests. Changing a
// key, its order or a value's form changes the hash of every stored order (and DocumentWriter must follow).
boost::json::object canonical(const Envelope& envelope, const OrderCreated& o) {
    boost::json::object d(kDocumentKeys);
    d["branch_id"] = envelope.branch_id;
    d["external_id"] = o.external_id;
    d["payment_method"] = o.payment_method;
    d["order_type"] = o.order_type;
    d["note"] = o.note;
    d["subtotal"] = format_money(o.subtotal);
    d["tax"] = format_money(o.tax);
    d["discount"] = format_money(o.discount);
    d["total"] = format_money(o.total);
    d["is_schedule"] = o.is_schedule;
    d["schedule_date"] = o.schedule_date ? boost::json::value(o.schedule_date->to_sql()) : nullptr;
    d["schedule_date_has_offset"] = o.schedule_date && o.schedule_date->offset_minutes.has_value();
    if (o.car_data) {
        boost::json::object car(4);
        car["color"] = o.car_data->color;
        car["plate_number"] = o.car_data->plate_number;
        car["plate_letters"] = o.car_data->plate_letters;
        car["car_brand"] = o.car_data->car_brand;
        d["car_data"] = std::move(car);
    } else {
        d["car_data"] = nullptr;
    }
    if (o.customer) {
        boost::json::object customer(3);
        customer["name"] = o.customer->name;
        customer["phone"] = o.customer->phone;
        customer["address"] = optional_text(o.customer->address);
        d["customer"] = std::move(customer);
    } else {
        d["customer"] = nullptr;
    }
    boost::json::array items;
    boost::json::array options;
    items.reserve(o.items.size());
    for (std::size_t i = 0; i < o.items.size(); ++i) {
        const auto& it = o.items[i];
        boost::json::object item(5);
        item["line_no"] = i;
        item["id"] = it.id;
        item["quantity"] = it.quantity;
        item["price"] = format_money(it.price);
        item["note"] = it.note;
        items.push_back(std::move(item));
        for (std::size_t k = 0; k < it.options.size(); ++k) {
            const auto& op = it.options[k];
            boost::json::object option(5);
            option["line_no"] = i;
            option["option_no"] = k;
            option["id"] = op.id;
            option["price"] = format_money(op.price);
            option["quantity"] = op.quantity;
            options.push_back(std::move(option));
        }
    }
    d["items"] = std::move(items);
    d["options"] = std::move(options);
    return d;
}

// The fields that order_document() adds to the canonical form.
void add_event_time(boost::json::object& d, const Envelope& envelope) {
    d["event_time"] = envelope.event_time.to_sql();
    d["event_time_has_offset"] = envelope.event_time.offset_minutes.has_value();
}

}  // namespace

boost::json::object order_document(const Envelope& envelope, const OrderCreated& order) {
    auto d = canonical(envelope, order);
    add_event_time(d, envelope);
    return d;
}

std::string payload_hash(const Envelope& envelope, const OrderCreated& order) {
    return common::crypto::sha256_hex(boost::json::serialize(canonical(envelope, order)));
}

namespace {

/// Writes the canonical form's text straight from the validated order, in the keys and forms of canonical(): the
/// text boost::json::serialize() gives for it, without building that document first (on the ingest path the
/// document, its strings and its serialization were about a tenth of the hub's instructions per order).
/// tests/unit/order_document_test.cpp holds the two equal for many shapes of order.
class DocumentWriter : public common::json::Writer {
public:
    using Writer::Writer;

    void optional_text(const std::optional<std::string>& s) { s ? text(*s) : null(); }
    /// Appends `prefix` as it is, then `amount` as a string with three decimals (format_money).
    void money_member(std::string_view prefix, Money amount) { text_member(prefix, format_money(amount)); }
};

/// The canonical form's text (canonical(), serialized), without the closing brace, through `w`; returns where its
/// `"items"` member begins.
std::size_t write_canonical(DocumentWriter& w, const Envelope& envelope, const OrderCreated& o) {
    w.text_member("{\"branch_id\":", envelope.branch_id);
    w.text_member(",\"external_id\":", o.external_id);
    w.text_member(",\"payment_method\":", o.payment_method);
    w.text_member(",\"order_type\":", o.order_type);
    w.text_member(",\"note\":", o.note);
    w.money_member(",\"subtotal\":", o.subtotal);
    w.money_member(",\"tax\":", o.tax);
    w.money_member(",\"discount\":", o.discount);
    w.money_member(",\"total\":", o.total);
    w.raw(",\"is_schedule\":");
    w.boolean(o.is_schedule);
    w.raw(",\"schedule_date\":");
    if (o.schedule_date) {
        Timestamp::SqlText sql;
        w.text(o.schedule_date->to_sql(sql));
    } else {
        w.null();
    }
    w.raw(",\"schedule_date_has_offset\":");
    w.boolean(o.schedule_date && o.schedule_date->offset_minutes.has_value());
    w.raw(",\"car_data\":");
    if (o.car_data) {
        w.text_member("{\"color\":", o.car_data->color);
        w.text_member(",\"plate_number\":", o.car_data->plate_number);
        w.text_member(",\"plate_letters\":", o.car_data->plate_letters);
        w.text_member(",\"car_brand\":", o.car_data->car_brand);
        w.raw("}");
    } else {
        w.null();
    }
    w.raw(",\"customer\":");
    if (o.customer) {
        w.text_member("{\"name\":", o.customer->name);
        w.text_member(",\"phone\":", o.customer->phone);
        w.raw(",\"address\":");
        w.optional_text(o.customer->address);
        w.raw("}");
    } else {
        w.null();
    }
    w.raw(",");
    const std::size_t items_at = w.size();
    w.raw("\"items\":[");
    for (std::size_t i = 0; i < o.items.size(); ++i) {
        const auto& it = o.items[i];
        w.raw(i == 0 ? "{\"line_no\":" : ",{\"line_no\":");
        w.number(i);
        w.text_member(",\"id\":", it.id);
        w.raw(",\"quantity\":");
        w.number(it.quantity);
        w.money_member(",\"price\":", it.price);
        w.text_member(",\"note\":", it.note);
        w.raw("}");
    }
    w.raw("],\"options\":[");
    bool first = true;
    for (std::size_t i = 0; i < o.items.size(); ++i) {
        for (std::size_t k = 0; k < o.items[i].options.size(); ++k) {
            const auto& op = o.items[i].options[k];
            w.raw(first ? "{\"line_no\":" : ",{\"line_no\":");
            first = false;
            w.number(i);
            w.raw(",\"option_no\":");
            w.number(k);
            w.text_member(",\"id\":", op.id);
            w.money_member(",\"price\":", op.price);
            w.raw(",\"quantity\":");
            w.number(op.quantity);
            w.raw("}");
        }
    }
    w.raw("]");
    return items_at;
}

/// Text of about this size holds the example order's canonical form; a larger order grows it.
constexpr std::size_t kDocumentReserve = 1024;

}  // namespace

OrderForms order_forms(const Envelope& envelope, const OrderCreated& order) {
    OrderForms out;
    {
        DocumentWriter w(out.canonical, kDocumentReserve);  // cuts the text to its end when it ends, here
        out.lines_at = write_canonical(w, envelope, order);
        out.lines_end = w.size();
        w.raw("}");
    }
    out.hash = common::crypto::sha256_hex(out.canonical);
    return out;
}

}  // namespace hub::ingest
