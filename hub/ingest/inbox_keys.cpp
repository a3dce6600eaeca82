#include "hub/ingest/inbox_keys.hpp"

#include <boost/json/object.hpp>

#include "hub/ingest/validate.hpp"

namespace hub::ingest {
namespace {

/// The id in `v`, by the rule above, or empty.
std::string id_text(const boost::json::value* v) {
    if (v == nullptr) return {};
    if (v->is_int64()) return std::to_string(v->get_int64());
    if (v->is_uint64()) return std::to_string(v->get_uint64());
    if (!v->is_string()) return {};
    return inbox_id(v->get_string());
}

}  // namespace

std::string inbox_id(std::string_view s) {
    if (s.empty() || s.size() > kMaxIdBytes) return {};
    for (char c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return {};
    return std::string(s);
}

InboxKeys inbox_keys(const boost::json::value& body) {
    InboxKeys keys;
    const auto* root = body.if_object();
    if (root == nullptr) return keys;
    keys.branch_id = id_text(root->if_contains("branch_id"));
    const auto* event = root->if_contains("event");
    if (event == nullptr || !event->is_string()) return keys;
    const std::string_view name = event->get_string();
    if (name != kEventOrderCreated && name != kEventOrderUpdated) return keys;
    keys.event = std::string(name);
    const auto* payload_value = root->if_contains("payload");
    const auto* payload = payload_value == nullptr ? nullptr : payload_value->if_object();
    if (payload != nullptr)
        keys.external_id = id_text(payload->if_contains(name == kEventOrderCreated ? "id" : "order_id"));
    return keys;
}

}  // namespace hub::ingest
