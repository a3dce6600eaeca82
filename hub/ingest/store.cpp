#include "hub/ingest/store.hpp"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <pqxx/pqxx>
#include <variant>

#include "common/crypto/uuid.hpp"
#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
#include "common/db/savepoint.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/order_document.hpp"
#include "hub/ingest/status_rule.hpp"

namespace hub::ingest {
namespace {

/// One unit of work for the batch: an order with its inbox row, or an inbox row alone.
struct Job {
    std::string partner_id;
    std::optional<Validated> order;
    InboxRecord inbox;
    /// Its entry of the insert_orders statement (a JSON object without its position "i"), built by the
    /// submitting coroutine so that the database worker only joins entries; empty for a job stored one by one
    /// (order_updated).
    std::string entry;
};

/// The entry of an order_created (with its new hub order id and payload hash) or of an inbox row alone.
std::string make_entry(const std::string& partner_id, const std::optional<Validated>& order, const InboxRecord& r) {
    boost::json::object e;
    if (order) {
        const auto& created = std::get<OrderCreated>(order->payload);
        e["id"] = common::crypto::uuid_v7();
        e["h"] = payload_hash(order->envelope, created);
        e["d"] = order_document(order->envelope, created);
    } else {
        e["st"] = r.http_status;
        e["oc"] = r.outcome;
        e["ec"] = r.error_code;
    }
    e["ro"] = r.replay_of;
    e["p"] = partner_id;
    e["rq"] = r.request_id;
    e["ev"] = r.event;
    e["ex"] = r.external_id;
    e["hd"] = r.headers_json;  // text: cast to jsonb by the statement, never spliced into the array
    // The raw body, whatever its bytes, travels in the statement's binary parameter (store_bulk adds its offset):
    // as base64 inside the array it was most of the text PostgreSQL's JSON parser reads character by character.
    e["bl"] = r.body.size();
    return boost::json::serialize(e);
}

std::string insert_inbox(pqxx::transaction_base& tx, const InboxRecord& r) {
    auto row = tx.exec_prepared1(db::kInsertInbox, r.partner_id, r.request_id, r.event, r.external_id, r.order_id,
                                 r.headers_json, pqxx::binarystring(r.body.data(), r.body.size()),
                                 static_cast<int>(r.http_status), r.outcome, r.error_code, r.replay_of);
    return row[0].as<std::string>();
}

void set_inbox(InboxRecord& inbox, const char* outcome, unsigned status, const char* code = "") {
    inbox.outcome = outcome;
    inbox.http_status = status;
    inbox.error_code = code;
}

StoreOutcome apply_update(pqxx::transaction_base& tx, Job& job) {
    const auto& v = *job.order;
    const auto& update = std::get<OrderUpdated>(v.payload);
    StoreOutcome out;
    const std::string time = v.envelope.event_time.to_sql();
    const bool has_offset = v.envelope.event_time.offset_minutes.has_value();
    // The platform's order id first; the hub order id that order_created answered also names the order.
    auto rows = tx.exec_prepared(db::kOrderForUpdateByExternalId, job.partner_id, update.order_id, time, has_offset);
    if (rows.empty())
        rows = tx.exec_prepared(db::kOrderForUpdateById, job.partner_id, update.order_id, time, has_offset);
    if (rows.empty()) {
        out.kind = StoreOutcome::Kind::order_not_found;
        set_inbox(job.inbox, "rejected", 404, "order_not_found");
    } else {
        const auto& r = rows[0];
        out.order_id = r[0].as<std::string>();
        const std::string branch = r[1].as<std::string>();
        const std::string current = r[2].as<std::string>();
        const auto current_time = r[3].as<std::int64_t>();
        const auto event_time = r[4].as<std::int64_t>();
        if (branch != v.envelope.branch_id) {
            out.kind = StoreOutcome::Kind::branch_mismatch;
            set_inbox(job.inbox, "rejected", 422, "branch_mismatch");
        } else {
            out.applied = update_applies(current, current_time, update.status, event_time);
            auto inserted = tx.exec_prepared(db::kInsertPlatformStatus, out.order_id, branch, job.partner_id,
                                             update.status, event_time, out.applied);
            if (inserted.empty()) {
                out.kind = StoreOutcome::Kind::repeated;
                out.applied = false;
                set_inbox(job.inbox, "duplicate", 200);
            } else {
                out.kind = StoreOutcome::Kind::appended;
                set_inbox(job.inbox, out.applied ? "applied" : "logged", 200);
                if (out.applied) {
                    tx.exec_prepared0(db::kApplyStatus, out.order_id, update.status, event_time);
                    if (update.status == "cancelled") tx.exec_prepared(db::kCancelPendingJob, out.order_id);
                }
            }
        }
    }
    job.inbox.order_id = out.order_id;
    out.inbox_id = insert_inbox(tx, job.inbox);
    return out;
}

StoreOutcome apply(pqxx::transaction_base& tx, Job& job) {
    StoreOutcome out;
    if (!job.order) {
        out.inbox_id = insert_inbox(tx, job.inbox);
        return out;
    }
    if (std::holds_alternative<OrderUpdated>(job.order->payload)) return apply_update(tx, job);
    const auto& v = *job.order;
    const auto& created = std::get<OrderCreated>(v.payload);
    const std::string hash = payload_hash(v.envelope, created);
    const std::string new_id = common::crypto::uuid_v7();
    auto row = tx.exec_prepared1(db::kInsertOrder, new_id, job.partner_id, hash,
                                 boost::json::serialize(order_document(v.envelope, created)));
    if (!row[0].is_null()) {
        out.kind = StoreOutcome::Kind::created;
        out.order_id = row[0].as<std::string>();
        set_inbox(job.inbox, "stored", 200);
    } else if (!row[1].as<bool>()) {
        out.kind = StoreOutcome::Kind::unknown_branch;
        set_inbox(job.inbox, "rejected", 422, "unknown_branch");
    } else {
        // The (partner, payload.id) exists: an exact repeat, or another order under a used id.
        auto existing = tx.exec_prepared1(db::kOrderByExternalId, job.partner_id, created.external_id);
        if (existing[1].as<std::string>() == hash) {
            out.kind = StoreOutcome::Kind::duplicate;
            out.order_id = existing[0].as<std::string>();
            set_inbox(job.inbox, "duplicate", 200);
        } else {
            out.kind = StoreOutcome::Kind::conflict;
            set_inbox(job.inbox, "conflict", 409, "order_id_conflict");
        }
    }
    job.inbox.order_id = out.order_id;
    out.inbox_id = insert_inbox(tx, job.inbox);
    return out;
}

/// The JSON array of one insert_orders statement stays under this size (a single larger entry goes alone).
constexpr std::size_t kMaxStatementBytes = 4 << 20;

StoreOutcome::Kind kind_of(std::string_view kind) {
    using Kind = StoreOutcome::Kind;
    if (kind == "duplicate") return Kind::duplicate;
    if (kind == "conflict") return Kind::conflict;
    if (kind == "unknown_branch") return Kind::unknown_branch;
    return Kind::created;  // created, and `record` (an inbox row alone: only its inbox id counts)
}

/// Stores the jobs `bulk` (indexes into `jobs`) with one insert_orders statement in autocommit: one round trip
/// and one commit for the whole batch. The entries go in a JSON array, their raw bodies one after another in a
/// binary parameter. Sets their results and returns the jobs it left to the one-by-one path:
/// `pending` ones, or all of them when the statement failed for a reason other than the store being
/// unavailable (one bad job must not fail its batch). Throws when the store is unavailable.
std::vector<std::size_t> store_bulk(pqxx::connection& conn, std::span<Job> jobs, const std::vector<std::size_t>& bulk,
                                    std::span<StoreOutcome> results) {
    std::size_t size = 2;
    std::size_t body_bytes = 0;
    for (auto k : bulk) {
        size += jobs[k].entry.size() + 32;
        body_bytes += jobs[k].inbox.body.size();
    }
    std::string array;
    array.reserve(size);
    std::string bodies;
    bodies.reserve(body_bytes);
    array += '[';
    char digits[24];
    const auto append_number = [&](std::size_t v) {
        array.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
    };
    for (std::size_t n = 0; n < bulk.size(); ++n) {
        const Job& job = jobs[bulk[n]];
        if (n > 0) array += ',';
        array += "{\"i\":";
        append_number(n);
        array += ",\"bo\":";
        append_number(bodies.size());
        array += ',';
        array.append(job.entry, 1, std::string::npos);
        bodies += job.inbox.body;
    }
    array += ']';

    std::vector<bool> answered(bulk.size(), false);
    try {
        pqxx::nontransaction nt(conn);
        const auto rows = nt.exec_prepared(db::kInsertOrders, array, pqxx::binarystring(bodies.data(), bodies.size()));
        for (const auto& row : rows) {
            const auto n = static_cast<std::size_t>(row[0].as<long>());
            const std::string_view kind(row[1].c_str(), row[1].size());
            if (n >= bulk.size() || kind == "pending") continue;
            StoreOutcome& out = results[bulk[n]];
            out.kind = kind_of(kind);
            if (!row[2].is_null()) out.order_id = row[2].as<std::string>();
            out.inbox_id = row[3].as<std::string>();
            answered[n] = true;
        }
    } catch (const pqxx::broken_connection&) {
        throw;
    } catch (const std::exception&) {
        if (common::db::is_unavailable(std::current_exception())) throw;
        std::fill(answered.begin(), answered.end(), false);
    }
    std::vector<std::size_t> left;
    for (std::size_t n = 0; n < bulk.size(); ++n)
        if (!answered[n]) left.push_back(bulk[n]);
    return left;
}

/// The one-by-one path: each job in a savepoint of one transaction, as it would be stored alone.
void store_each(pqxx::connection& conn, std::span<Job> jobs, const std::vector<std::size_t>& each,
                std::span<StoreOutcome> results, std::span<std::exception_ptr> errors) {
    pqxx::work tx(conn);
    if (each.size() == 1) {
        results[each[0]] = apply(tx, jobs[each[0]]);
    } else {
        for (auto k : each) {
            errors[k] = common::db::in_savepoint(tx, [&] {
                results[k] = apply(tx, jobs[k]);
                return common::db::Keep::yes;
            });
        }
    }
    tx.commit();
}

void run_batch(pqxx::connection& conn, std::span<Job> jobs, std::span<StoreOutcome> results,
               std::span<std::exception_ptr> errors) {
    std::vector<std::size_t> bulk;
    std::vector<std::size_t> each;
    bulk.reserve(jobs.size());
    for (std::size_t k = 0; k < jobs.size(); ++k) (jobs[k].entry.empty() ? each : bulk).push_back(k);
    bool committed = false;      // some jobs are stored: they must be answered as such, whatever happens next
    std::size_t unanswered = 0;  // bulk[unanswered..] have no committed answer yet
    try {
        // One statement per few MiB of entries: bodies may be up to the body limit each, and a statement's array
        // is held whole by the hub and by its PostgreSQL backend.
        while (unanswered < bulk.size()) {
            std::vector<std::size_t> chunk;
            std::size_t bytes = 0;
            for (std::size_t n = unanswered; n < bulk.size(); ++n) {
                const std::size_t size = jobs[bulk[n]].entry.size() + jobs[bulk[n]].inbox.body.size();
                if (!chunk.empty() && bytes + size > kMaxStatementBytes) break;
                bytes += size;
                chunk.push_back(bulk[n]);
            }
            auto left = store_bulk(conn, jobs, chunk, results);
            committed = committed || left.size() < chunk.size();
            each.insert(each.end(), left.begin(), left.end());
            unanswered += chunk.size();
        }
        if (!each.empty()) store_each(conn, jobs, each, results, errors);
    } catch (...) {
        if (!committed) throw;  // nothing stored: the whole batch fails (the store is unavailable, say)
        for (std::size_t n = unanswered; n < bulk.size(); ++n) errors[bulk[n]] = std::current_exception();
        for (auto k : each) errors[k] = std::current_exception();
    }
}

}  // namespace

struct OrderStore::Impl {
    Impl(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent)
        : batcher(pool, run_batch, max_batch, max_concurrent) {}
    common::db::Batcher<Job, StoreOutcome> batcher;
};

OrderStore::OrderStore(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent)
    : impl_(std::make_unique<Impl>(pool, max_batch, max_concurrent)) {}

OrderStore::~OrderStore() = default;

boost::asio::awaitable<StoreOutcome> OrderStore::store(std::string partner_id, Validated order, InboxRecord inbox) {
    Job job{std::move(partner_id), std::move(order), std::move(inbox), {}};
    if (std::holds_alternative<OrderCreated>(job.order->payload))
        job.entry = make_entry(job.partner_id, job.order, job.inbox);
    co_return co_await impl_->batcher.submit(std::move(job));
}

boost::asio::awaitable<std::string> OrderStore::record(InboxRecord inbox) {
    Job job{inbox.partner_id, std::nullopt, std::move(inbox), {}};
    // insert_orders stores an inbox row alone without an order id; one that names an order goes one by one.
    if (job.inbox.order_id.empty()) job.entry = make_entry(job.partner_id, job.order, job.inbox);
    auto out = co_await impl_->batcher.submit(std::move(job));
    co_return out.inbox_id;
}

}  // namespace hub::ingest
