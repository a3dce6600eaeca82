#include "hub/ingest/order_document.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>

#include <array>

#include "common/crypto/digest.hpp"

namespace hub::ingest {
namespace {

// The keys of an order's document (canonical() and add_event_time()): reserved at once, so no rehash.
constexpr std::size_t kDocumentKeys = 18;

// A parsed webhook's canonical form takes about 3 KiB; beyond this buffer the arena takes from the heap.
constexpr std::size_t kArenaBytes = 4096;

boost::json::value optional_text(const std::optional<std::string>& s, const boost::json::storage_ptr& sp) {
    return s ? boost::json::value(*s, sp) : boost::json::value(nullptr, sp);
}

// Everything but the event time, in a fixed key order: the canonical form that payload_hash() digests. Every
// value comes from `sp`; changing a key, its order or a value's form changes the hash of every stored order.
boost::json::object canonical(const Envelope& envelope, const OrderCreated& o, const boost::json::storage_ptr& sp) {
    boost::json::object d(kDocumentKeys, sp);
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
    d["schedule_date"] = o.schedule_date ? boost::json::value(o.schedule_date->to_sql(), sp) : nullptr;
    d["schedule_date_has_offset"] = o.schedule_date && o.schedule_date->offset_minutes.has_value();
    if (o.car_data) {
        boost::json::object car(4, sp);
        car["color"] = o.car_data->color;
        car["plate_number"] = o.car_data->plate_number;
        car["plate_letters"] = o.car_data->plate_letters;
        car["car_brand"] = o.car_data->car_brand;
        d["car_data"] = std::move(car);
    } else {
        d["car_data"] = nullptr;
    }
    if (o.customer) {
        boost::json::object customer(3, sp);
        customer["name"] = o.customer->name;
        customer["phone"] = o.customer->phone;
        customer["address"] = optional_text(o.customer->address, sp);
        d["customer"] = std::move(customer);
    } else {
        d["customer"] = nullptr;
    }
    boost::json::array items(sp);
    boost::json::array options(sp);
    items.reserve(o.items.size());
    for (std::size_t i = 0; i < o.items.size(); ++i) {
        const auto& it = o.items[i];
        boost::json::object item(5, sp);
        item["line_no"] = i;
        item["id"] = it.id;
        item["quantity"] = it.quantity;
        item["price"] = format_money(it.price);
        item["note"] = it.note;
        items.push_back(std::move(item));
        for (std::size_t k = 0; k < it.options.size(); ++k) {
            const auto& op = it.options[k];
            boost::json::object option(5, sp);
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
    auto d = canonical(envelope, order, {});
    add_event_time(d, envelope);
    return d;
}

std::string payload_hash(const Envelope& envelope, const OrderCreated& order) {
    return common::crypto::sha256_hex(boost::json::serialize(canonical(envelope, order, {})));
}

OrderForms order_forms(const Envelope& envelope, const OrderCreated& order) {
    std::array<unsigned char, kArenaBytes> buffer;
    boost::json::monotonic_resource arena(buffer.data(), buffer.size());
    const boost::json::storage_ptr sp(&arena);
    OrderForms out;
    // One document, serialized once: the canonical text is hashed, then closed with the event time.
    out.document = boost::json::serialize(canonical(envelope, order, sp));
    out.hash = common::crypto::sha256_hex(out.document);
    boost::json::object tail(2, sp);
    add_event_time(tail, envelope);
    const std::string rest = boost::json::serialize(tail);  // {"event_time":...}: never empty
    out.document.back() = ',';
    out.document.append(rest, 1, std::string::npos);
    return out;
}

}  // namespace hub::ingest
