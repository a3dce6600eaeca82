#include "hub/ingest/order_document.hpp"

#include <boost/json/serialize.hpp>

#include "common/crypto/digest.hpp"

namespace hub::ingest {
namespace {

boost::json::value optional_text(const std::optional<std::string>& s) {
    return s ? boost::json::value(*s) : boost::json::value(nullptr);
}

// Everything but the event time, in a fixed key order: the canonical form that payload_hash() digests.
boost::json::object canonical(const Envelope& envelope, const OrderCreated& o) {
    boost::json::object d;
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
        d["car_data"] = {{"color", o.car_data->color},
                         {"plate_number", o.car_data->plate_number},
                         {"plate_letters", o.car_data->plate_letters},
                         {"car_brand", o.car_data->car_brand}};
    } else {
        d["car_data"] = nullptr;
    }
    if (o.customer) {
        d["customer"] = {
            {"name", o.customer->name}, {"phone", o.customer->phone}, {"address", optional_text(o.customer->address)}};
    } else {
        d["customer"] = nullptr;
    }
    boost::json::array items;
    boost::json::array options;
    for (std::size_t i = 0; i < o.items.size(); ++i) {
        const auto& it = o.items[i];
        items.push_back({{"line_no", i},
                         {"id", it.id},
                         {"quantity", it.quantity},
                         {"price", format_money(it.price)},
                         {"note", it.note}});
        for (std::size_t k = 0; k < it.options.size(); ++k) {
            const auto& op = it.options[k];
            options.push_back({{"line_no", i},
                               {"option_no", k},
                               {"id", op.id},
                               {"price", format_money(op.price)},
                               {"quantity", op.quantity}});
        }
    }
    d["items"] = std::move(items);
    d["options"] = std::move(options);
    return d;
}

}  // namespace

boost::json::object order_document(const Envelope& envelope, const OrderCreated& order) {
    auto d = canonical(envelope, order);
    d["event_time"] = envelope.event_time.to_sql();
    d["event_time_has_offset"] = envelope.event_time.offset_minutes.has_value();
    return d;
}

std::string payload_hash(const Envelope& envelope, const OrderCreated& order) {
    return common::crypto::sha256_hex(boost::json::serialize(canonical(envelope, order)));
}

}  // namespace hub::ingest
