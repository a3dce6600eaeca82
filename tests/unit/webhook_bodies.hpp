#pragma once

// Webhook bodies of the interface's shape, shared by the tests of the validator and of its fast path.

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

}  // namespace webhook_bodies
