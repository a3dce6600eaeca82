#include "hub/ingest/store.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <pqxx/pqxx>
#include <stdexcept>
#include <variant>

#include "common/crypto/uuid.hpp"
#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
#include "common/db/savepoint.hpp"
#include "common/text/string_cursor.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/order_document.hpp"
#include "hub/ingest/pipe.hpp"
#include "hub/ingest/status_rule.hpp"
#include "hub/ingest/store_job.hpp"

namespace hub::ingest {
namespace {

using detail::Job;
using detail::kMaxStatementBytes;

/// Writes `v` at `at` as PostgreSQL's binary format writes a 32-bit integer: big-endian.
void put_be32(char* at, std::uint32_t v) {
    at[0] = static_cast<char>(v >> 24);
    at[1] = static_cast<char>(v >> 16);
    at[2] = static_cast<char>(v >> 8);
    at[3] = static_cast<char>(v);
}

/// Appends `v` as put_be32 writes it.
void append_be32(std::string& out, std::uint32_t v) {
    char bytes[4];
    put_be32(bytes, v);
    out.append(bytes, 4);
}

/// The big-endian 32-bit integer at `at`.
std::uint32_t read_be32(const char* at) {
    const auto* p = reinterpret_cast<const unsigned char*>(at);
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

/// Writes an entry's values (Job::entry) one after another, each as an element of PostgreSQL's binary array format
/// (array_send: a big-endian 32-bit length, then the bytes; -1 and no bytes for NULL), so that insert_orders_args
/// only copies each into its column. Nothing in them is parsed by the statement except the headers and the order's
/// lines, which are JSON. Writes through a common::text::StringCursor with `ahead` bytes of room: `out` holds the
/// values when the writer ends (38 values an order, each with its length).
class EntryWriter {
public:
    EntryWriter(std::string& out, std::size_t ahead) : cursor_(out, ahead) {}

    void text(std::string_view v) {
        char* p = cursor_.take(4 + v.size());
        put_be32(p, static_cast<std::uint32_t>(v.size()));
        if (!v.empty()) std::memcpy(p + 4, v.data(), v.size());
    }
    void null() { put_be32(cursor_.take(4), static_cast<std::uint32_t>(-1)); }
    void optional(const std::optional<std::string>& v) { v ? text(*v) : null(); }
    void flag(bool v) { text(v ? "t" : "f"); }
    void number(std::uint64_t v) {
        char digits[24];
        text(std::string_view(digits,
                              static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, v).ptr - digits)));
    }
    /// `inner` inside braces: a JSON object's text from its members' text.
    void object(std::string_view inner) {
        char* p = cursor_.take(4 + inner.size() + 2);
        put_be32(p, static_cast<std::uint32_t>(inner.size() + 2));
        p[4] = '{';
        if (!inner.empty()) std::memcpy(p + 5, inner.data(), inner.size());
        p[5 + inner.size()] = '}';
    }
    /// `n` NULLs.
    void nulls(std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) null();
    }

private:
    common::text::StringCursor cursor_;
};

/// The values of an order in an entry (the order's columns of the statement, from `ob` to `eto`).
constexpr std::size_t kOrderFields = 22;

/// Room for what an entry holds besides its texts: each value's length (4 bytes each), the order's id (36) and hash
/// (64), the body's sizes and the HTTP status (20 digits at most each), four flags, four amounts of money (25 bytes
/// at most: format_money of a 64-bit amount) and two times (about 32 bytes: "2024-05-01 19:30:00.500000+03:00").
constexpr std::size_t kEntryFixedBytes = detail::kEntryFields * 4 + 36 + 64 + 3 * 20 + 4 + 4 * 25 + 2 * 40;

/// About an entry's size at most: the fixed part, the inbox row's texts and the order's canonical form, which holds
/// every text of the order the entry has (and more: its keys). Taken at once, the entry is written without growing
/// (with a fixed first guess of 1 kB, most orders outgrew it: an allocation and a copy more each); should a time
/// take more than its room, the writer grows as before.
std::size_t entry_bound(const InboxRecord& r, const OrderForms* forms) {
    return kEntryFixedBytes + r.replay_of.size() + r.partner_id.size() + r.request_id.size() + r.event.size() +
           r.external_id.size() + r.branch_id.size() + r.headers_json.size() + r.origin.actor.size() +
           r.outcome.size() + r.error_code.size() + (forms != nullptr ? forms->canonical.size() : 0);
}

/// make_entry's values, in the statement's order; `forms` are `order`'s.
void write_entry(EntryWriter& w, const Validated* order, const OrderForms* forms, const InboxRecord& r) {
    const OrderCreated* created = nullptr;
    if (order) {
        created = &std::get<OrderCreated>(order->payload);
        w.text(common::crypto::uuid_v7());  // id
        w.text(forms->hash);                // h
        if (r.origin.by_operator)           // op
            w.text(r.origin.actor);
        else
            w.null();
        if (r.origin.test)  // t
            w.flag(true);
        else
            w.null();
        w.nulls(3);  // st, oc, ec: the statement decides them
    } else {
        w.nulls(4);  // id, h, op, t
        w.number(r.http_status);
        w.text(r.outcome);
        w.text(r.error_code);
    }
    w.text(r.replay_of);   // ro
    w.text(r.partner_id);  // p
    w.text(r.request_id);  // rq
    w.text(r.event);       // ev
    w.text(r.external_id);
    w.text(r.branch_id);
    w.text(r.headers_json);  // hd: cast to jsonb by the statement
    // The raw body, whatever its bytes, travels in the statement's bytea parameter (insert_orders_args adds its
    // offset): as base64 inside JSON it was most of the text PostgreSQL's JSON parser read character by character.
    w.number(r.body.size());  // bl
    if (r.body_size != 0)     // bs
        w.number(r.body_size);
    else
        w.null();
    if (created) {
        const auto& o = *created;
        const auto& envelope = order->envelope;
        w.text(envelope.branch_id);  // ob
        w.text(o.external_id);       // oe
        w.text(o.payment_method);
        w.text(o.order_type);
        w.text(o.note);
        w.text(format_money(o.subtotal));
        w.text(format_money(o.tax));
        w.text(format_money(o.discount));
        w.text(format_money(o.total));
        w.flag(o.is_schedule);
        if (o.schedule_date) {
            Timestamp::SqlText sql;
            w.text(o.schedule_date->to_sql(sql));
            w.flag(o.schedule_date->offset_minutes.has_value());
        } else {
            w.nulls(2);
        }
        if (o.car_data) {
            w.text(o.car_data->color);
            w.text(o.car_data->plate_number);
            w.text(o.car_data->plate_letters);
            w.text(o.car_data->car_brand);
        } else {
            w.nulls(4);
        }
        if (o.customer) {
            w.text(o.customer->name);
            w.text(o.customer->phone);
            w.optional(o.customer->address);
        } else {
            w.nulls(3);
        }
        w.object(forms->lines());  // ln: {"items":[...],"options":[...]}, as the canonical form has them
        Timestamp::SqlText sql;
        w.text(envelope.event_time.to_sql(sql));
        w.flag(envelope.event_time.offset_minutes.has_value());
    } else {
        w.nulls(kOrderFields);
    }
}

}  // namespace

std::string detail::make_entry(const Validated* order, const InboxRecord& r) {
    std::optional<OrderForms> forms;
    if (order) forms = order_forms(order->envelope, std::get<OrderCreated>(order->payload));
    const OrderForms* f = forms ? &*forms : nullptr;
    std::string entry;
    {
        EntryWriter w(entry, entry_bound(r, f));  // cuts `entry` to its values when it ends, here
        write_entry(w, order, f, r);
    }
    return entry;  // kEntryFields values: insert_orders_args refuses any other count
}

namespace {

using detail::make_entry;

/// Fills the inbox row's answer from the outcome table.
void set_inbox(InboxRecord& inbox, const StoreOutcome& out) {
    const OutcomeRow& row = outcome_row(out.kind);
    inbox.outcome = inbox_outcome(out.kind, out.applied);
    inbox.http_status = row.http_status;
    inbox.error_code = row.inbox_error;
}

StoreOutcome apply_update(pqxx::transaction_base& tx, Job& job) {
    const auto& v = *job.update;
    const auto& update = std::get<OrderUpdated>(v.payload);
    StoreOutcome out;
    // The platform's order id first; the hub order id that order_created answered also names the order.
    const auto rows =
        tx.exec_prepared(db::kOrderForUpdate, job.inbox.partner_id, update.order_id, v.envelope.event_time.to_sql(),
                         v.envelope.event_time.offset_minutes.has_value());
    if (rows.empty()) {
        out.kind = StoreOutcome::Kind::order_not_found;
    } else {
        const auto& r = rows[0];
        out.order_id = r["id"].as<std::string>();
        const auto branch = r["branch_id"].as<std::string>();
        const auto event_time = r["event_us"].as<std::int64_t>();
        if (branch != v.envelope.branch_id) {
            out.kind = StoreOutcome::Kind::branch_mismatch;
        } else {
            out.applied = update_applies(r["delivery_status"].c_str(), r["status_us"].as<std::int64_t>(), update.status,
                                         event_time);
            auto inserted = tx.exec_prepared(db::kInsertPlatformStatus, out.order_id, branch, job.inbox.partner_id,
                                             update.status, event_time, out.applied);
            if (inserted.empty()) {
                out.kind = StoreOutcome::Kind::repeated;
                out.applied = false;
            } else {
                out.kind = StoreOutcome::Kind::appended;
                if (out.applied) {
                    tx.exec_prepared0(db::kApplyStatus, out.order_id, update.status, event_time);
                    if (update.status == "cancelled") tx.exec_prepared(db::kCancelPendingJob, out.order_id);
                }
            }
        }
    }
    set_inbox(job.inbox, out);
    job.inbox.order_id = out.order_id;
    out.inbox_id = insert_inbox(tx, job.inbox);
    return out;
}

/// Runs insert_orders for `bulk` in `tx` and sets the results of the entries it answered; returns which it
/// answered (the others are pending).
std::vector<bool> insert_orders(pqxx::transaction_base& tx, std::span<Job> jobs, const std::vector<std::size_t>& bulk,
                                std::span<StoreOutcome> results) {
    std::vector<const Job*> listed(bulk.size());
    for (std::size_t n = 0; n < bulk.size(); ++n) listed[n] = &jobs[bulk[n]];
    std::vector<pqxx::binarystring> args;
    for (const auto& arg : detail::insert_orders_args(listed)) args.emplace_back(arg.data(), arg.size());
    std::vector<bool> answered(bulk.size(), false);
    const auto rows = tx.exec_prepared(db::kInsertOrders, pqxx::prepare::make_dynamic_params(args));
    for (const auto& row : rows) {
        const auto n = static_cast<std::size_t>(row["i"].as<long>());
        if (n >= bulk.size() || row["pending"].as<bool>()) continue;
        results[bulk[n]] = detail::answered_outcome(
            row["kind"].is_null() ? std::nullopt : std::optional<int>(row["kind"].as<int>()),
            row["order_id"].is_null() ? nullptr : row["order_id"].c_str(), row["inbox_id"].as<std::string>());
        answered[n] = true;
    }
    return answered;
}

/// An order_created on the one-by-one path: a batch of one. A payload.id that a transaction committed while the
/// statement ran is pending; running it again answers it from that order.
StoreOutcome apply_created(pqxx::transaction_base& tx, Job& job) {
    StoreOutcome out;
    for (int run = 0; run < 3; ++run)
        if (insert_orders(tx, std::span(&job, 1), {0}, std::span(&out, 1)).front()) return out;
    throw std::runtime_error("an order_created stayed pending (is its partner gone?)");
}

StoreOutcome apply(pqxx::transaction_base& tx, Job& job) {
    if (job.update) return apply_update(tx, job);
    if (job.created) return apply_created(tx, job);
    StoreOutcome out;
    out.inbox_id = insert_inbox(tx, job.inbox);
    return out;
}

/// Stores the jobs `bulk` (indexes into `jobs`) with one insert_orders statement in autocommit: one round trip
/// and one commit for the whole batch. The entries go in the statement's text[] columns, their raw bodies one after
/// another in a bytea parameter (insert_orders_args). Sets their results and returns the jobs it left to the one-by-one
/// path: `pending` ones, or all of them when the statement failed for a reason other than the store being unavailable
/// (one bad job must not fail its batch). Throws when the store is unavailable.
std::vector<std::size_t> store_bulk(pqxx::connection& conn, std::span<Job> jobs, const std::vector<std::size_t>& bulk,
                                    std::span<StoreOutcome> results) {
    std::vector<bool> answered(bulk.size(), false);
    try {
        pqxx::nontransaction nt(conn);
        answered = insert_orders(nt, jobs, bulk, results);
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

namespace {

/// The size of each of `entry`'s values as an array element (its length's four bytes and its bytes); throws when
/// the entry is not exactly kEntryFields values.
std::array<std::size_t, detail::kEntryFields> element_sizes(const std::string& entry) {
    std::array<std::size_t, detail::kEntryFields> sizes{};
    std::size_t at = 0;
    for (auto& size : sizes) {
        if (entry.size() < at + 4) throw std::logic_error("an insert_orders entry is cut short");
        const auto n = static_cast<std::int32_t>(read_be32(entry.data() + at));
        size = 4 + (n > 0 ? static_cast<std::size_t>(n) : 0);
        if (entry.size() < at + size) throw std::logic_error("an insert_orders entry is cut short");
        at += size;
    }
    if (at != entry.size()) throw std::logic_error("an insert_orders entry has more than its values");
    return sizes;
}

}  // namespace

std::vector<std::string> detail::insert_orders_args(std::span<const detail::Job* const> jobs) {
    // PostgreSQL's binary array header (array_recv): one dimension, NULLs allowed, element type text (oid 25),
    // the number of elements, lower bound 1. Numbers big-endian.
    constexpr std::size_t kHeader = 20;
    constexpr std::size_t kOffsetBytes = 4 + 10;  // an offset's element: its length and up to ten digits
    constexpr std::uint32_t kTextOid = 25;
    // Every value's size first, so that each column is allocated once.
    std::vector<std::array<std::size_t, kEntryFields>> sizes;
    sizes.reserve(jobs.size());
    std::array<std::size_t, kEntryFields> column_bytes{};
    std::size_t body_bytes = 0;
    for (const Job* job : jobs) {
        sizes.push_back(element_sizes(job->entry));
        for (std::size_t k = 0; k < kEntryFields; ++k) column_bytes[k] += sizes.back()[k];
        body_bytes += job->inbox.body.size();
    }
    std::vector<std::string> args(kEntryFields + 2);  // the columns, the body offsets' column, the bodies
    std::string& offsets = args[kEntryFields];
    std::string& bodies = args[kEntryFields + 1];
    std::string header;
    for (const std::uint32_t v : {1U, 1U, kTextOid, static_cast<std::uint32_t>(jobs.size()), 1U})
        append_be32(header, v);
    // Each column sized once and written through a cursor: appended value by value, the columns' bookkeeping (a
    // capacity check and a length update per value, 38 values an order) was most of this function's own time.
    std::array<char*, kEntryFields> cursor{};
    for (std::size_t k = 0; k < kEntryFields; ++k) {
        args[k].resize(kHeader + column_bytes[k]);
        cursor[k] = std::copy(header.begin(), header.end(), args[k].data());
    }
    offsets.reserve(kHeader + jobs.size() * kOffsetBytes);
    offsets = header;
    bodies.reserve(body_bytes);
    for (std::size_t n = 0; n < jobs.size(); ++n) {
        const char* value = jobs[n]->entry.data();
        for (std::size_t k = 0; k < kEntryFields; ++k) {
            std::memcpy(cursor[k], value, sizes[n][k]);
            cursor[k] += sizes[n][k];
            value += sizes[n][k];
        }
        EntryWriter(offsets, kOffsetBytes).number(bodies.size());
        bodies += jobs[n]->inbox.body;
    }
    return args;
}

std::string insert_inbox(pqxx::transaction_base& tx, const InboxRecord& r) {
    auto row = tx.exec_prepared1(db::kInsertInbox, r.partner_id, r.request_id, r.event, r.external_id, r.order_id,
                                 r.headers_json, pqxx::binarystring(r.body.data(), r.body.size()),
                                 static_cast<int>(r.http_status), r.outcome, r.error_code, r.replay_of, r.branch_id,
                                 static_cast<long long>(r.body_size));
    return row[0].as<std::string>();
}

struct OrderStore::Impl {
    /// Load, for the pipe: order_created requests go to it while a batch of the pool's runs with this many jobs or
    /// more on average (one group commit at a time no longer keeps up with the requests), and stay while its own
    /// statements carry kPipeStays or more and its last one was answered less than kPipeGap ago. Below, the batcher
    /// gathers at low rates (docs/performance.md, "Gathering at low rates"), which the pipe does not.
    static constexpr double kPipeFrom = 8;
    static constexpr double kPipeStays = 4;
    /// The pipe idle this long had a burst, not load (as common::db::Batcher's kBurstGap).
    static constexpr std::chrono::milliseconds kPipeGap{5};

    Impl(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent, std::chrono::microseconds gather,
         const std::optional<PipeSettings>& settings)
        : batcher(pool, run_batch, max_batch, max_concurrent, std::chrono::microseconds(1000), gather) {
        if (!settings) return;
        always = settings->always;
        pipe = std::make_unique<IngestPipe>(*settings, max_batch, [this](IngestPipe::Entry e) {
            batcher.submit_then(std::move(*e.job), std::move(e.complete), std::move(e.executor));
        });
    }

    bool through_pipe(const Job& job) const {
        if (!pipe || job.entry.empty() || !pipe->ready()) return false;
        if (always) return true;
        if (pipe->carries(kPipeStays, kPipeGap)) return true;
        return batcher.busy_with(kPipeFrom);
    }

    /// `job` comes boxed and goes to the pipe so, its pointer moved on every step, not its strings.
    boost::asio::awaitable<StoreOutcome> submit(std::unique_ptr<Job> job) {
        if (!through_pipe(*job)) return batcher.submit(std::move(*job));
        return common::db::await_completion<StoreOutcome>(
            [p = pipe.get(), job = std::move(job)](auto complete, auto executor) mutable {
                p->push(IngestPipe::Entry{std::move(job), std::move(complete), std::move(executor)});
            });
    }

    /// An order_updated, after every order_created sent to the pipe so far was answered.
    boost::asio::awaitable<StoreOutcome> store_update(std::unique_ptr<Job> job) {
        if (pipe && pipe->pending()) co_await pipe_answered();
        auto submitted = submit(std::move(job));  // named: GCC 12 destroys a co_await's temporaries twice
        co_return co_await std::move(submitted);
    }

    /// Resumes once every order_created sent to the pipe so far is answered: an order_updated that follows its
    /// order_created is stored after it, as one group commit at a time stores them.
    boost::asio::awaitable<int> pipe_answered() {
        return common::db::await_completion<int>([p = pipe.get()](auto complete, auto) {
            // Shared: after_pending keeps a std::function, which copies; it is called once.
            p->after_pending(
                [c = std::make_shared<common::db::Completion<int>>(std::move(complete))] { (*c)(nullptr, 0); });
        });
    }

    common::db::Batcher<Job, StoreOutcome> batcher;
    bool always = false;
    /// Last: destroyed first, handing back to the batcher what it has not sent.
    std::unique_ptr<IngestPipe> pipe;
};

OrderStore::OrderStore(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent,
                       std::chrono::microseconds gather, const std::optional<PipeSettings>& pipe)
    : impl_(std::make_unique<Impl>(pool, max_batch, max_concurrent, gather, pipe)) {}

OrderStore::~OrderStore() = default;

std::optional<PipeStats> OrderStore::pipe_stats() const {
    if (!impl_->pipe) return std::nullopt;
    return impl_->pipe->stats();
}

// Not a coroutine: an order_created goes to the coroutine that waits for its batch (submit()) with its job made
// here, one frame fewer per stored order (docs/performance.md); an order_updated may wait for the pipe first.
boost::asio::awaitable<StoreOutcome> OrderStore::store(Validated&& order, InboxRecord&& inbox) {
    auto job = std::make_unique<Job>();
    job->inbox = std::move(inbox);
    if (std::holds_alternative<OrderCreated>(order.payload)) {
        // The order travels as its entry; its validated form stays with the caller, freed by this thread.
        job->created = true;
        job->entry = make_entry(&order, job->inbox);
        return impl_->submit(std::move(job));
    }
    job->update = std::move(order);
    return impl_->store_update(std::move(job));
}

boost::asio::awaitable<std::string> OrderStore::record(InboxRecord&& inbox) {
    auto job = std::make_unique<Job>();
    job->inbox = std::move(inbox);
    // insert_orders stores an inbox row alone without an order id; one that names an order goes one by one.
    if (job->inbox.order_id.empty()) job->entry = make_entry(nullptr, job->inbox);
    auto out = co_await impl_->submit(std::move(job));
    co_return out.inbox_id;
}

}  // namespace hub::ingest
