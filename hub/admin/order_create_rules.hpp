#pragma once

// An order pushed by an operator (`orderhub order create`, POST /api/admin/v1/orders; product.md section 3, interface
// section 1: "pushed manually by an admin for testing or fulfilment"). Both doors build the webhook body here, store
// it through the webhook's own validation and storage path (hub/ingest/service.hpp create()) under the built-in
// partner `operator` (sql/hub/0016_operator_orders.sql), and read the POS's answer here for `--wait`.
//
// Decisions:
//   - The payload is either `file` (an order_created payload object, interface 2.5, without the envelope) or a
//     minimal one built from `items` (POS product ids, one of each), never both and never neither.
//   - The minimal payload: payload.id `op-<UUIDv7>`; order type PICK-UP (no address or car needed); payment method
//     `other`; no customer (no invented name or phone reaches the POS); every amount 0 (the hub does not know the
//     POS's prices: a file gives real ones); each item quantity 1, price 0, no options. Ids pass through unmapped
//     unless the operator maps them for the partner `operator` (`map set --partner operator`).
//   - The envelope: event order_created, event_time now (UTC, with its offset), branch_id the given branch.
//   - A test order's note starts with kTestNote (the kitchen reads the note on the POS ticket); the order is stored
//     with hub.orders.test, shown as TEST in every list, and never counted as a sale.
//   - A file whose payload id was stored before with the same order answers that order (as a platform's repeat
//     does), unless its test mark differs: refused, nothing changes.
//   - The POS's answer (`--wait`): the forwarding job in a final state (delivered, rejected, auth_failed, dead,
//     cancelled); any other state (pending, in flight, retrying, held for acceptance) is still waiting.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hub/ingest/partners.hpp"

namespace pqxx {
class transaction_base;
}

namespace hub::admin {

/// The id of the built-in partner that operator orders belong to (sql/hub/0016_operator_orders.sql).
inline constexpr std::string_view kOperatorPartnerId = "operator";

/// The start of a test order's note.
inline constexpr std::string_view kTestNote = "TEST ORDER - do not prepare";

/// The seconds `--wait` waits by default, and at most.
inline constexpr long long kDefaultWaitSeconds = 30;
inline constexpr long long kMaxWaitSeconds = 600;

/// What an operator asks for (the CLI's options; the API's body fields of the same names).
struct OrderCreateRequest {
    std::string branch;
    std::optional<boost::json::value> file;  ///< the parsed order_created payload
    std::vector<std::string> items;          ///< POS product ids
    bool test = false;
};

/// The minimal order_created payload of `items` with payload.id `external_id` (decisions above). Pure.
boost::json::object minimal_payload(const std::vector<std::string>& items, const std::string& external_id, bool test);

/// The webhook body (envelope and payload) of `request`; `external_id` names a built payload, `event_time` is the
/// envelope's. Refusals (invalid): neither or both of file and items, a file that is not a JSON object, an item id
/// that is empty, too long or not printable, more items than an order holds, an empty branch. Pure.
std::string operator_body(const OrderCreateRequest& request, const std::string& external_id,
                          const std::string& event_time);

/// The time `now` as the envelope's event_time: `YYYY-MM-DDTHH:MM:SSZ`. Pure.
std::string event_time_text(std::int64_t unix_seconds);

/// The built-in operator partner, once `branch` is known to exist. Refusals: not_found (the branch); conflict when
/// the partner is missing (a database not migrated to 0016).
ingest::Partner operator_partner(pqxx::transaction_base& tx, const std::string& branch);

/// For a payload id stored before with the same order (a duplicate): refuses (conflict) when order `id` was stored
/// with the other test mark than `test` (the hash of an order does not cover the mark).
void require_same_test_mark(pqxx::transaction_base& tx, const std::string& id, bool test);

/// The POS's answer to order `id` once its forwarding job is final: order_id, forwarding (the job's state),
/// pos_order_id, pos_http_status, pos_answer (the POS's body: JSON when it parses, else its text; null when no
/// attempt answered), last_error. nullopt while it is still waiting.
std::optional<boost::json::object> delivery_answer(pqxx::transaction_base& tx, const std::string& id);

}  // namespace hub::admin
