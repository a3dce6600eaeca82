#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <pqxx/connection_base>
#include <pqxx/result>
#include <pqxx/transaction_base>
#include <utility>

// Every SQL statement of the dashboard (its API, its event feed), in one place. Each is defined once per connection
// (prepare_dashboard, or on its first use by exec) and run by name with $n parameters only. The fragments several
// statements share (the order summary, the user's branch scope, the ISO time format) are written once and joined at
// compile time, so that every statement is still one constant.
namespace hub::dashboard {

/// One SQL statement and the name it is prepared under.
struct Statement {
    const char* name;
    const char* sql;
};

/// SQL text of N characters built at compile time: `Sql("a") + "b"` is a constant Sql<2>.
template <std::size_t N>
struct Sql {
    std::array<char, N + 1> text{};  // NUL-terminated

    constexpr Sql() = default;
    constexpr Sql(const char (&s)[N + 1]) { std::copy_n(s, N + 1, text.begin()); }  // NOLINT: implicit on purpose
    constexpr const char* c_str() const { return text.data(); }
};
template <std::size_t N>
Sql(const char (&)[N]) -> Sql<N - 1>;

template <std::size_t A, std::size_t B>
constexpr Sql<A + B> operator+(const Sql<A>& a, const Sql<B>& b) {
    Sql<A + B> out;
    std::copy_n(a.text.begin(), A, out.text.begin());
    std::copy_n(b.text.begin(), B + 1, out.text.begin() + A);
    return out;
}
template <std::size_t A, std::size_t B>
constexpr auto operator+(const Sql<A>& a, const char (&b)[B]) {
    return a + Sql<B - 1>(b);
}
template <std::size_t A, std::size_t B>
constexpr auto operator+(const char (&a)[A], const Sql<B>& b) {
    return Sql<A - 1>(a) + b;
}

namespace sql {

/// The ISO 8601 text (UTC, milliseconds, `Z`) of the timestamptz `column`; null stays null.
template <std::size_t N>
constexpr auto iso(const char (&column)[N]) {
    return "to_char(" + Sql<N - 1>(column) + R"sql( AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))sql";
}

/// True for the branch ids (in `column`) that the dashboard user `user` (a parameter, "$2") may see: every branch of
/// the user's brand, or only those of hub.dashboard_user_branches when the user has rows there.
template <std::size_t C, std::size_t U>
constexpr auto in_scope(const char (&column)[C], const char (&user)[U]) {
    return Sql<C - 1>(column) +
           " IN (SELECT b.id FROM hub.branches b JOIN hub.dashboard_users u ON u.brand_id = b.brand_id WHERE u.id = " +
           Sql<U - 1>(user) +
           " AND (NOT EXISTS (SELECT 1 FROM hub.dashboard_user_branches ub WHERE ub.user_id = u.id) OR EXISTS "
           "(SELECT 1 FROM hub.dashboard_user_branches ub WHERE ub.user_id = u.id AND ub.branch_id = b.id)))";
}

/// The columns of an order summary (read by name by summary_json): id, label, external_id, branch_id, order_type,
/// total, delivery_status, forwarding, attempts, last_error, is_schedule, schedule_date, created_at, customer_name,
/// item_count, accept_deadline and accept_seconds_left (both null unless the order waits for acceptance), test.
/// Alias o = hub.orders, p = hub.partners, j = hub.forward_jobs, joined by kSummaryFrom.
inline constexpr auto kSummaryColumns =
    "o.id, p.label, o.external_id, o.branch_id, o.order_type, o.total::text AS total, o.delivery_status, "
    "coalesce(j.state, '') AS forwarding, coalesce(j.attempts, 0) AS attempts, "
    "coalesce(j.last_error, '') AS last_error, o.is_schedule, " +
    iso("CASE WHEN j.state = 'awaiting_acceptance' THEN j.accept_deadline END") +
    " AS accept_deadline, CASE WHEN j.state = 'awaiting_acceptance' THEN "
    "greatest(0, ceil(extract(epoch FROM j.accept_deadline - now())))::bigint END AS accept_seconds_left, " +
    iso("o.schedule_date") + " AS schedule_date, " + iso("o.created_at") +
    " AS created_at, coalesce(o.customer_name, '') AS customer_name, "
    "(SELECT coalesce(sum((i->>'quantity')::int), 0) FROM jsonb_array_elements(o.lines->'items') i) AS item_count, "
    "o.test";
inline constexpr Sql kSummaryFrom =
    " FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id LEFT JOIN hub.forward_jobs j ON j.order_id = o.id";

// Sessions and users ----------------------------------------------------------------------------------------

/// $1 session token hash -> id, email, brand_id of the user of a live session (not expired, user not disabled).
inline constexpr Statement kSessionUser{"dashboard_session_user", R"(
SELECT u.id, u.email, u.brand_id FROM hub.dashboard_sessions s JOIN hub.dashboard_users u ON u.id = s.user_id
WHERE s.token_hash = $1 AND s.expires_at > now() AND u.disabled_at IS NULL)"};

inline constexpr auto kUserBranchesSql =
    "SELECT b.id, b.name FROM hub.branches b WHERE " + in_scope("b.id", "$1") + " ORDER BY b.id";
/// $1 user id -> id, name of the branches the user may see, by id.
inline constexpr Statement kUserBranches{"dashboard_user_branches", kUserBranchesSql.c_str()};

/// $1 e-mail (normalized) -> id, password_hash of a user who is not disabled.
inline constexpr Statement kLoginUser{
    "dashboard_login_user",
    "SELECT id, password_hash FROM hub.dashboard_users WHERE email = $1 AND disabled_at IS NULL"};

/// $1 user id: the user's expired sessions go when they log in again.
inline constexpr Statement kDeleteExpiredUserSessions{
    "dashboard_delete_expired_user_sessions",
    "DELETE FROM hub.dashboard_sessions WHERE user_id = $1 AND expires_at <= now()"};

/// $1 token hash, $2 user id, $3 lifetime in seconds.
inline constexpr Statement kInsertSession{"dashboard_insert_session", R"(
INSERT INTO hub.dashboard_sessions (token_hash, user_id, expires_at)
VALUES ($1, $2, now() + make_interval(secs => $3)))"};

/// $1 token hash: logout.
inline constexpr Statement kDeleteSession{"dashboard_delete_session",
                                          "DELETE FROM hub.dashboard_sessions WHERE token_hash = $1"};

// Orders and branches ---------------------------------------------------------------------------------------

// "today" starts at the given time (the browser's local midnight) or else at UTC midnight.
inline constexpr auto kListOrdersSql = "SELECT " + kSummaryColumns + kSummaryFrom + R"(
CROSS JOIN (SELECT coalesce(NULLIF($3, '')::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'))
    AS d (start)
WHERE o.branch_id = $1 AND ($2 = 'all'
    OR ($2 = 'today' AND ((o.created_at >= d.start AND o.created_at < d.start + interval '1 day')
                          OR (o.schedule_date >= d.start AND o.schedule_date < d.start + interval '1 day')))
    OR ($2 = 'active' AND o.delivery_status NOT IN ('delivered', 'cancelled'))
    OR ($2 = 'problems' AND (j.state IN ('rejected', 'auth_failed', 'dead')
                             OR (j.state IN ('pending', 'in_flight') AND j.attempts > 0 AND j.last_error IS NOT NULL))))
ORDER BY o.id DESC LIMIT $4)";
/// $1 branch, $2 filter (all, today, active, problems), $3 start of "today" (ISO 8601) or '', $4 limit -> order
/// summaries, newest first.
inline constexpr Statement kListOrders{"dashboard_list_orders", kListOrdersSql.c_str()};

inline constexpr auto kOrderDetailSql =
    "SELECT " + kSummaryColumns +
    ", o.payment_method, o.note, o.subtotal::text AS subtotal, o.tax::text AS tax, o.discount::text AS discount, "
    "o.customer_phone, o.customer_address, o.car_color, o.car_plate_number, o.car_plate_letters, o.car_brand, "
    "o.customer_name IS NOT NULL AS has_customer, " +
    iso("j.due_at") + " AS due_at, j.pos_order_id" + kSummaryFrom + " WHERE o.id = $1 AND " +
    in_scope("o.branch_id", "$2");
/// $1 order id, $2 user id -> the summary, payment_method, note, subtotal, tax, discount, customer_phone,
/// customer_address, car_color, car_plate_number, car_plate_letters, car_brand, has_customer, due_at, pos_order_id;
/// no row when the order is not in the user's scope.
inline constexpr Statement kOrderDetail{"dashboard_order_detail", kOrderDetailSql.c_str()};

inline constexpr auto kOrderTimelineSql =
    "SELECT l.id, l.status, l.source, " + iso("l.event_time") + " AS event_time, " + iso("l.received_at") +
    " AS received_at, l.applied, l.actor, l.detail "
    "FROM hub.order_status_log l WHERE l.order_id = $1 ORDER BY l.received_at, l.id";
/// $1 order id -> id, status, source, event_time, received_at, applied, actor, detail.
inline constexpr Statement kOrderTimeline{"dashboard_order_timeline", kOrderTimelineSql.c_str()};

inline constexpr auto kOrderAttemptsSql =
    "SELECT a.attempt, " + iso("a.attempted_at") +
    " AS attempted_at, a.url, a.http_status, a.latency_ms, a.outcome, a.error, a.response_excerpt "
    "FROM hub.pos_delivery_attempts a WHERE a.order_id = $1 ORDER BY a.attempted_at, a.id";
/// $1 order id -> attempt, attempted_at, url, http_status, latency_ms, outcome, error, response_excerpt.
inline constexpr Statement kOrderAttempts{"dashboard_order_attempts", kOrderAttemptsSql.c_str()};

inline constexpr auto kOrderInScopeSql = "SELECT 1 FROM hub.orders WHERE id = $1 AND " + in_scope("branch_id", "$2");
/// $1 order id, $2 user id -> one row when the order is in the user's scope.
inline constexpr Statement kOrderInScope{"dashboard_order_in_scope", kOrderInScopeSql.c_str()};

/// $1 order id -> state, in_time (the acceptance deadline is still ahead), branch_id, partner_id of its forwarding
/// job, locked until the end of the transaction (an accept or reject and the time-out sweep wait for each other).
inline constexpr Statement kJobForDecision{"dashboard_job_for_decision", R"(
SELECT j.state, coalesce(j.accept_deadline > now(), false) AS in_time, o.branch_id, o.partner_id
FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id WHERE j.order_id = $1 FOR UPDATE OF j)"};

/// $1 order id: a held order accepted by its branch's staff is due now (or at its scheduled time) and is sent with
/// status ACCEPTED (the claim reads accepted_at).
inline constexpr Statement kAcceptJob{"dashboard_accept_job", R"(
UPDATE hub.forward_jobs SET state = 'pending', accepted_at = now(), due_at = greatest(due_at, now()),
                            due_since = greatest(due_at, now()), updated_at = now()
WHERE order_id = $1 AND state = 'awaiting_acceptance')"};

/// $1 order id, $2 reason: a held order rejected by its branch's staff is never sent.
inline constexpr Statement kRejectJob{"dashboard_reject_job", R"(
UPDATE hub.forward_jobs SET state = 'merchant_rejected', last_error = 'rejected by the branch: ' || $2,
                            updated_at = now()
WHERE order_id = $1 AND state = 'awaiting_acceptance')"};

/// $1 order id, $2 branch, $3 partner, $4 status, $5 user id, $6 detail or '': a status-log row of a user's decision.
inline constexpr Statement kInsertDecision{"dashboard_insert_decision", R"(
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, actor, detail)
VALUES ($1, $2, $3, $4, 'operator', now(), true, $5, left(NULLIF($6, ''), 500)))"};

inline constexpr auto kBranchStatesSql = "SELECT b.id, " + iso("h.unreachable_since") + R"( AS unreachable_since,
    CASE WHEN h.brand_id IS NOT NULL THEN (
        SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id
        WHERE j.brand_id = b.brand_id AND j.state IN ('pending', 'in_flight') AND o.branch_id = b.id)
    END AS orders_waiting
FROM hub.branches b
LEFT JOIN hub.pos_connection_health h ON h.brand_id = b.brand_id AND h.environment = $2 AND h.state = 'open'
WHERE )" + in_scope("b.id", "$1") + " AND ($3 = '' OR b.id = $3) ORDER BY b.id";
/// $1 user id, $2 POS environment, $3 branch id or '' for all -> id, unreachable_since (ISO; null while
/// reachable), orders_waiting (null while reachable). The count runs only for branches whose POS is unreachable
/// (CASE evaluates its sub-select only when its condition holds) and walks the brand's pending and in-flight jobs
/// (forward_jobs_brand_due_idx, forward_jobs_brand_lease_idx).
inline constexpr Statement kBranchStates{"dashboard_branch_states", kBranchStatesSql.c_str()};

// Events ----------------------------------------------------------------------------------------------------

/// The events after $1, at most $2 (sql/hub/0022): the attempts and job states of hub.dashboard_events and the
/// status-log rows from hub.status_events_from() on, ids from one sequence. Each table is read on its own up to the
/// limit, so that its key serves the read (through the UNION ALL view hub.dashboard_event_log the planner sorted every
/// status-log row after $1). `where` (" AND ..." on branch_id, or "") narrows both before their limits.
template <std::size_t N>
constexpr auto events_after(const Sql<N>& where) {
    return "(SELECT id, order_id, branch_id, kind, detail FROM hub.dashboard_events WHERE id > $1" + where +
           " ORDER BY id LIMIT $2) UNION ALL (SELECT id, order_id, branch_id, 'status', status "
           "FROM hub.order_status_log WHERE id >= hub.status_events_from() AND id > $1" +
           where + " ORDER BY id LIMIT $2)";
}

/// The columns of an event: event_id, event_kind, event_detail and the order's summary, of the events `e`.
template <std::size_t N>
constexpr auto events_from(const Sql<N>& events) {
    return "SELECT e.id AS event_id, e.kind AS event_kind, coalesce(e.detail, '') AS event_detail, " + kSummaryColumns +
           kSummaryFrom + " JOIN (" + events + ") e ON e.order_id = o.id ORDER BY e.id LIMIT $2";
}

inline constexpr auto kEventsAfterSql = events_from(events_after(Sql("")));
/// $1 event id, $2 limit -> the events after $1 with their orders' summaries, oldest first.
inline constexpr Statement kEventsAfter{"dashboard_events_after", kEventsAfterSql.c_str()};

inline constexpr auto kReplayEventsSql = events_from(events_after(" AND " + in_scope("branch_id", "$3")));
/// $1 event id, $2 limit, $3 user id -> as kEventsAfter, in the branches the user may see (Last-Event-ID).
inline constexpr Statement kReplayEvents{"dashboard_replay_events", kReplayEventsSql.c_str()};

inline constexpr auto kEventIdsAfterSql = "SELECT id FROM (" + events_after(Sql("")) + ") e ORDER BY id LIMIT $2";
/// $1 event id, $2 limit -> the ids after $1 only (while no board listens the feed keeps its cursor current).
inline constexpr Statement kEventIdsAfter{"dashboard_event_ids_after", kEventIdsAfterSql.c_str()};

inline constexpr auto kEventIdSpanAfterSql =
    "SELECT count(*), coalesce(max(id), $1) FROM (" + kEventIdsAfterSql + ") w";
/// $1 event id, $2 limit -> how many of the first $2 ids after $1 there are, and the last of them ($1 when none):
/// when the count is their distance from $1, they follow it without a gap, and the feed need not read them.
inline constexpr Statement kEventIdSpanAfter{"dashboard_event_id_span_after", kEventIdSpanAfterSql.c_str()};

/// -> the newest event id, 0 when there is none.
inline constexpr Statement kNewestEventId{"dashboard_newest_event_id", R"(
SELECT greatest((SELECT coalesce(max(id), 0) FROM hub.dashboard_events),
                (SELECT coalesce(max(id), 0) FROM hub.order_status_log)))"};

/// $1 limit: events older than two days, at most $1 (dashboard_events_created_idx). One batch of the cleanup, which
/// repeats it until a batch comes back short. (Not FOR UPDATE SKIP LOCKED: orderhub_app may not lock rows of this
/// table; two hubs cleaning at once wait for each other's batch and skip the rows it deleted.)
inline constexpr Statement kDeleteOldEvents{"dashboard_delete_old_events", R"(
DELETE FROM hub.dashboard_events WHERE id IN (
    SELECT id FROM hub.dashboard_events WHERE created_at < now() - interval '2 days' LIMIT $1))"};

/// $1 limit: expired sessions, at most $1 (as kDeleteOldEvents).
inline constexpr Statement kDeleteExpiredSessions{"dashboard_delete_expired_sessions", R"(
DELETE FROM hub.dashboard_sessions WHERE token_hash IN (
    SELECT token_hash FROM hub.dashboard_sessions WHERE expires_at < now() LIMIT $1))"};

}  // namespace sql

/// Every statement above, for prepare_dashboard.
inline constexpr std::array kAllStatements{
    &sql::kSessionUser,
    &sql::kUserBranches,
    &sql::kLoginUser,
    &sql::kDeleteExpiredUserSessions,
    &sql::kInsertSession,
    &sql::kDeleteSession,
    &sql::kListOrders,
    &sql::kOrderDetail,
    &sql::kOrderTimeline,
    &sql::kOrderAttempts,
    &sql::kOrderInScope,
    &sql::kBranchStates,
    &sql::kEventsAfter,
    &sql::kReplayEvents,
    &sql::kEventIdsAfter,
    &sql::kEventIdSpanAfter,
    &sql::kNewestEventId,
    &sql::kDeleteOldEvents,
    &sql::kDeleteExpiredSessions,
    &sql::kJobForDecision,
    &sql::kAcceptJob,
    &sql::kRejectJob,
    &sql::kInsertDecision,
};

/// Defines every statement of kAllStatements on `c` (libpqxx 6.4 sends each to the server on its first use). For
/// the pool's on_connect (hub::db::prepare_serving).
inline void prepare_dashboard(pqxx::connection_base& c) {
    for (const Statement* s : kAllStatements) c.prepare(s->name, s->sql);
}

/// Runs statement `s` in `tx`. Defines it on the connection first, so that a connection set up without
/// prepare_dashboard works too: libpqxx 6.4 takes an identical definition again as a no-op (a lookup and a
/// comparison) and sends it to the server with the first execution only.
template <class... Args>
pqxx::result exec(pqxx::transaction_base& tx, const Statement& s, Args&&... args) {
    tx.conn().prepare(s.name, s.sql);
    return tx.exec_prepared(s.name, std::forward<Args>(args)...);
}

}  // namespace hub::dashboard
