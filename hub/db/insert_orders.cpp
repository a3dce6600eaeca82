#include <string>

#include "hub/db/queries.hpp"
#include "hub/ingest/outcome.hpp"
#include "hub/ingest/store_job.hpp"

namespace hub::db {
namespace {

using ingest::Kind;

// x: the entries, one per element of the statement's text[] columns ({columns}: each entry's values in the order
// hub/ingest/store.cpp make_entry writes them, NULL where it has none, then its body's offset in the bytea
// parameter; sent in binary, so nothing is parsed but the headers, the lines and the typed values' text; `oe`, the
// order's payload.id, is NULL for an inbox row alone); c: the order_created entries with their branch and times; f: the
// first entry of each (partner, payload.id) with a known branch, the one to insert (in key order, so that concurrent
// batches take their unique-index locks in the same order; a manual-accept branch's job is held for its staff,
// sql/hub/0017; the order's items and options go into its own row, `lines`, as the document lists them, sql/hub/0024);
// done: those actually inserted (ON CONFLICT skips a payload.id
// stored before, or by a concurrent batch). Rows inserted by this statement are not visible to its own reads:
// a payload.id that another entry of the batch inserted is found in `done`, one stored earlier in hub.orders.
// Inbox ids are drawn first (nextval, once per row of a materialized CTE) so that each entry learns its own.
// The kinds it decides are spliced in from the outcome table ({created} ...), with what their inbox rows say
// ({kinds}: label, kind number, http status, inbox outcome, inbox error code, whether the row names the order);
// 'record' (an inbox row alone, its values in the entry) and 'pending' are the statement's own. An order pushed by
// an operator carries `op` (its actor, '' for the database user) and `t` (a test order): hub/ingest/store.hpp Origin;
// its inbox row is written only when it names the order (stored, or a repeat): a refused one is the operator's
// answer alone (hub/ingest/service.hpp create()).
constexpr std::string_view kTemplate = R"(
WITH x AS MATERIALIZED (
    SELECT (x.n - 1)::int AS i, x.id, x.h, x.op, x.t::boolean AS t, x.st::int AS st, x.oc, x.ec, x.ro, x.p, x.rq,
           x.ev, x.ex, x.br, x.hd, x.bl::int AS bl, x.bs::int AS bs, x.bo::int AS bo, x.ob, x.oe, x.pm, x.ot, x.nt,
           x.sub, x.tax, x.dis, x.tot, x.sch, x.sd, x.sdo, x.cc, x.cpn, x.cpl, x.cb, x.cn, x.cph, x.ca, x.ln, x.et,
           x.eto
    FROM unnest({columns}) WITH ORDINALITY
        AS x(id, h, op, t, st, oc, ec, ro, p, rq, ev, ex, br, hd, bl, bs, ob, oe, pm, ot, nt, sub, tax, dis, tot, sch,
             sd, sdo, cc, cpn, cpl, cb, cn, cph, ca, ln, et, eto, bo, n)
),
c AS MATERIALIZED (
    SELECT x.i, x.id, x.p, x.h, x.rq, x.op, coalesce(x.t, false) AS test, x.oe AS ext,
           b.id AS branch_id, b.brand_id, b.schedule_lead_minutes AS lead, b.manual_accept AS manual,
           b.accept_timeout_minutes AS accept_mins,
           CASE WHEN x.eto::boolean THEN x.et::timestamptz
                ELSE x.et::timestamp AT TIME ZONE pa.time_zone END AS event_time,
           CASE WHEN x.sd IS NULL THEN NULL
                WHEN x.sdo::boolean THEN x.sd::timestamptz
                ELSE x.sd::timestamp AT TIME ZONE pa.time_zone END AS schedule_date,
           x.pm, x.ot, x.nt, x.sub, x.tax, x.dis, x.tot, x.sch, x.cc, x.cpn, x.cpl, x.cb, x.cn, x.cph, x.ca, x.ln
    FROM x JOIN hub.partners pa ON pa.id = x.p
    LEFT JOIN hub.branches b ON b.id = x.ob
    WHERE x.oe IS NOT NULL
),
f AS MATERIALIZED (
    SELECT DISTINCT ON (p, ext) * FROM c WHERE branch_id IS NOT NULL ORDER BY p, ext, i
),
ins AS (
    INSERT INTO hub.orders (id, partner_id, external_id, branch_id, brand_id, payload_hash, event_time,
                            payment_method, order_type, note, subtotal, tax, discount, total, is_schedule,
                            schedule_date, car_color, car_plate_number, car_plate_letters, car_brand,
                            customer_name, customer_phone, customer_address, status_time, request_id, test, lines)
    SELECT id, p, ext, branch_id, brand_id, h, event_time, pm, ot, nt, sub::numeric, tax::numeric, dis::numeric,
           tot::numeric, sch::boolean, schedule_date, cc, cpn, cpl, cb, cn, cph, ca, event_time, rq, test, ln::jsonb
    FROM f ORDER BY p, ext
    ON CONFLICT (partner_id, external_id) DO NOTHING
    RETURNING id
),
done AS MATERIALIZED (
    SELECT f.* FROM f JOIN ins ON ins.id = f.id
),
log AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, actor,
                                      detail)
    SELECT id, branch_id, p, 'received', CASE WHEN op IS NULL THEN 'platform' ELSE 'operator' END, event_time, true,
           CASE WHEN op IS NOT NULL THEN coalesce(NULLIF(op, ''), current_user) END,
           CASE WHEN test THEN 'test order' END
    FROM done
),
job AS (
    INSERT INTO hub.forward_jobs (order_id, brand_id, due_at, due_since, state, accept_deadline)
    SELECT id, brand_id, due, due, CASE WHEN manual THEN 'awaiting_acceptance' ELSE 'pending' END,
           CASE WHEN manual THEN now() + make_interval(mins => accept_mins) END
    FROM done, LATERAL (SELECT CASE WHEN schedule_date IS NULL THEN now()
                                    ELSE greatest(now(), schedule_date - make_interval(mins => lead)) END AS due) w
),
o AS MATERIALIZED (
    SELECT x.i,
           CASE WHEN x.oe IS NULL THEN 'record'
                WHEN c.i IS NULL THEN 'pending'
                WHEN c.branch_id IS NULL THEN {unknown_branch}
                WHEN dn.id = c.id THEN {created}
                WHEN coalesce(dn.h, e.payload_hash) = c.h THEN {duplicate}
                WHEN coalesce(dn.id, e.id) IS NOT NULL THEN {conflict}
                ELSE 'pending' END AS kind,
           coalesce(dn.id, e.id) AS winner
    FROM x
    LEFT JOIN c ON c.i = x.i
    LEFT JOIN done dn ON dn.p = c.p AND dn.ext = c.ext
    LEFT JOIN LATERAL (
        SELECT ho.id, ho.payload_hash FROM hub.orders ho
        WHERE dn.id IS NULL AND c.branch_id IS NOT NULL AND ho.partner_id = c.p AND ho.external_id = c.ext LIMIT 1
    ) e ON true
),
ids AS MATERIALIZED (
    SELECT o.i, k.n, k.st, k.oc, k.ec, CASE WHEN k.names_order THEN o.winner END AS order_id,
           nextval('hub.inbox_id_seq') AS inbox_id
    FROM o LEFT JOIN (VALUES {kinds}) AS k(kind, n, st, oc, ec, names_order) ON k.kind = o.kind
    WHERE o.kind <> 'pending'
),
inbox AS (
    INSERT INTO hub.inbox (id, partner_id, request_id, event, external_id, branch_id, order_id, headers, body,
                           http_status, outcome, error_code, replay_of, body_size)
    OVERRIDING SYSTEM VALUE
    SELECT ids.inbox_id, x.p, x.rq, NULLIF(x.ev, ''), NULLIF(x.ex, ''), NULLIF(x.br, ''), ids.order_id, x.hd::jsonb,
           substring(${bodies}::bytea FROM x.bo + 1 FOR x.bl),
           CASE WHEN ids.n IS NULL THEN x.st ELSE ids.st END, CASE WHEN ids.n IS NULL THEN x.oc ELSE ids.oc END,
           CASE WHEN ids.n IS NULL THEN NULLIF(x.ec, '') ELSE ids.ec END, NULLIF(x.ro, '')::bigint, x.bs
    FROM ids JOIN x ON x.i = ids.i
    WHERE x.op IS NULL OR ids.order_id IS NOT NULL
)
SELECT o.i, o.kind = 'pending' AS pending, ids.n AS kind, ids.order_id, ids.inbox_id
FROM o LEFT JOIN ids ON ids.i = o.i)";

constexpr Kind kDecided[] = {Kind::created, Kind::duplicate, Kind::conflict, Kind::unknown_branch};

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

/// The label of a kind inside the statement (its metric word).
std::string label(Kind kind) { return quoted(ingest::outcome_row(kind).metric); }

std::string kinds_values() {
    std::string values;
    for (Kind kind : kDecided) {
        const auto& row = ingest::outcome_row(kind);
        if (!values.empty()) values += ", ";
        values += "(" + label(kind) + ", " + std::to_string(static_cast<int>(kind)) + ", " +
                  std::to_string(row.http_status) + ", " + quoted(ingest::inbox_outcome(kind)) + ", " +
                  (row.inbox_error.empty() ? std::string("NULL") : quoted(row.inbox_error)) + ", " +
                  (row.answers_order_id ? "true" : "false") + ")";
    }
    return values;
}

/// The statement's columns: kEntryFields values of each entry and its body's offset, each a text[] parameter.
std::string columns() {
    std::string list;
    for (std::size_t k = 1; k <= ingest::detail::kEntryFields + 1; ++k) {
        if (!list.empty()) list += ", ";
        list += "$" + std::to_string(k) + "::text[]";
    }
    return list;
}

void replace(std::string& text, std::string_view placeholder, const std::string& value) {
    for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size()))
        text.replace(at, placeholder.size(), value);
}

std::string build() {
    std::string sql(kTemplate);
    replace(sql, "{created}", label(Kind::created));
    replace(sql, "{duplicate}", label(Kind::duplicate));
    replace(sql, "{conflict}", label(Kind::conflict));
    replace(sql, "{unknown_branch}", label(Kind::unknown_branch));
    replace(sql, "{kinds}", kinds_values());
    replace(sql, "{columns}", columns());
    replace(sql, "{bodies}", std::to_string(ingest::detail::kEntryFields + 2));
    return sql;
}

}  // namespace

const char* insert_orders_sql() {
    static const std::string kSql = build();
    return kSql.c_str();
}

}  // namespace hub::db
