#pragma once

// Webhook bodies of the interface's shape and a way to change them, shared by the tests of the validator and of its
// fast path.

#include <boost/json/value.hpp>
#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace webhook_bodies {

inline constexpr std::string_view kCreated = R"({
  "event": "order_created",
  "event_time": "2024-05-01 12:30:00",
  "branch_id": "branch-001",
  "payload": {
    "id": "ORD-1001",
    "payment_method": "cash",
    "order_type": "DELIVERY",
    "note": "Leave at the door",
    "subtotal": 20.5,
    "tax": 3.075,
    "discount": 0,
    "total": 23.575,
    "is_schedule": 0,
    "schedule_date": null,
    "car_data": {"color": "#1a2b3c", "plate_number": "4821", "plate_letters": "ABC", "car_brand": "Toyota"},
    "customer": {"name": "Omar Haddad", "phone": "+971501234567", "address": "Marina 4"},
    "items": [
      {"id": "pizza", "quantity": 2, "price": 20.5, "note": "thin",
       "options": [{"id": "basil", "price": 0.25, "quantity": 3}]}
    ]
  }
})";

inline constexpr std::string_view kUpdated = R"({
  "event": "order_updated",
  "event_time": "2024-05-01T12:45:00.5+03:00",
  "branch_id": "branch-001",
  "payload": {"order_id": "ORD-1001", "status": "on_the_way"}
})";

// Sets the value at a JSON pointer made of keys and indices (no escapes in its last token; index == size
// appends); std::nullopt removes it. Its parent is found with Boost.JSON's at_pointer.
inline void set_at(boost::json::value& root, std::string_view pointer, const std::optional<boost::json::value>& value) {
    const std::size_t slash = pointer.rfind('/');
    REQUIRE(slash != std::string_view::npos);
    boost::json::value* node = &root.at_pointer(pointer.substr(0, slash));
    const std::string last(pointer.substr(slash + 1));
    if (node->is_array()) {
        auto& array = node->as_array();
        if (value && std::stoul(last) == array.size()) {
            array.push_back(*value);
        } else if (value) {
            array.at(std::stoul(last)) = *value;
        } else {
            array.erase(array.begin() + static_cast<std::ptrdiff_t>(std::stoul(last)));
        }
    } else if (value) {
        node->as_object()[last] = *value;
    } else {
        REQUIRE(node->as_object().erase(last) == 1);
    }
}

}  // namespace webhook_bodies
