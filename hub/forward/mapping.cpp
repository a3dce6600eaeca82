#include "hub/forward/mapping.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

namespace hub::forward {
namespace {

/// Writes the POS body. Money is emitted as a JSON number with exactly three decimals ("42.725", "5.000"),
/// which Boost.JSON's double serializer would not keep; strings go through Boost.JSON for escaping.
class Writer {
public:
    Writer& key(std::string_view k) {
        comma();
        out_ += boost::json::serialize(boost::json::string(k));
        out_ += ':';
        fresh_ = true;
        return *this;
    }
    Writer& str(std::string_view s) {
        comma();
        out_ += boost::json::serialize(boost::json::string(s));
        return *this;
    }
    Writer& money(ingest::Money m) {
        comma();
        out_ += ingest::format_money(m);
        return *this;
    }
    Writer& integer(std::int64_t v) {
        comma();
        out_ += std::to_string(v);
        return *this;
    }
    Writer& null() {
        comma();
        out_ += "null";
        return *this;
    }
    Writer& open(char c) {
        comma();
        out_ += c;
        fresh_ = true;
        return *this;
    }
    Writer& close(char c) {
        out_ += c;
        fresh_ = false;
        return *this;
    }
    std::string take() { return std::move(out_); }

private:
    void comma() {
        if (!fresh_) out_ += ',';
        fresh_ = false;
    }
    std::string out_;
    bool fresh_ = true;
};

const std::string& mapped(const std::map<std::string, std::string>& m, const std::string& id) {
    auto it = m.find(id);
    return it == m.end() ? id : it->second;
}

}  // namespace

std::string partner_reference(const PosSource& s) { return s.partner_label + ":" + s.external_id; }

std::string pos_order_json(const PosSource& s) {
    Writer w;
    w.open('{');
    w.key("branch_id").str(s.pos_branch_id);
    w.key("brand_id").str(s.brand_id);
    w.key("partner_reference").str(partner_reference(s));
    w.key("note").str(s.note);
    w.key("subtotal").money(s.subtotal);
    w.key("tax").money(s.tax);
    w.key("total").money(s.total);
    w.key("status").str(s.auto_accept ? "ACCEPTED" : "PENDING");
    if (s.customer_name || s.customer_phone) {
        w.key("customer").open('{');
        w.key("name");
        s.customer_name ? w.str(*s.customer_name) : w.null();
        w.key("phone");
        s.customer_phone ? w.str(*s.customer_phone) : w.null();
        w.close('}');
    }
    w.key("products").open('[');
    for (const auto& item : s.items) {
        w.open('{');
        w.key("id").str(mapped(s.item_map, item.id));
        w.key("quantity").integer(item.quantity);
        w.key("total").money(item.price * item.quantity);
        w.key("note");
        item.note.empty() ? w.null() : w.str(item.note);
        w.key("modifiers").open('[');
        for (const auto& option : item.options) {
            w.open('{');
            w.key("id").str(mapped(s.option_map, option.id));
            w.key("quantity").integer(option.quantity);
            w.key("total").money(option.price * option.quantity * item.quantity);
            w.close('}');
        }
        w.close(']');
        w.close('}');
    }
    w.close(']');
    w.close('}');
    return w.take();
}

}  // namespace hub::forward
