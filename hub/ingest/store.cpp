#include "hub/ingest/store.hpp"

#include <boost/json/serialize.hpp>
#include <pqxx/pqxx>
#include <variant>

#include "common/crypto/uuid.hpp"
#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
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
};

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
    if (rows.empty()) rows = tx.exec_prepared(db::kOrderForUpdateById, job.partner_id, update.order_id, time, has_offset);
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

void run_batch(pqxx::connection& conn, std::span<Job> jobs, std::span<StoreOutcome> results,
               std::span<std::exception_ptr> errors) {
    pqxx::work tx(conn);
    if (jobs.size() == 1) {
        results[0] = apply(tx, jobs[0]);
    } else {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            // A savepoint per job: one failing job must not take the others of its batch with it.
            try {
                pqxx::subtransaction sp(tx, "job");
                results[i] = apply(sp, jobs[i]);
                sp.commit();
            } catch (const pqxx::broken_connection&) {
                throw;
            } catch (const std::exception&) {
                if (common::db::is_unavailable(std::current_exception())) throw;
                errors[i] = std::current_exception();
            }
        }
    }
    tx.commit();
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
    Job job{std::move(partner_id), std::move(order), std::move(inbox)};
    co_return co_await impl_->batcher.submit(std::move(job));
}

boost::asio::awaitable<std::string> OrderStore::record(InboxRecord inbox) {
    Job job{inbox.partner_id, std::nullopt, std::move(inbox)};
    auto out = co_await impl_->batcher.submit(std::move(job));
    co_return out.inbox_id;
}

}  // namespace hub::ingest
