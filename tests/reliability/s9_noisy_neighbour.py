"""Scenario 9: noisy neighbours (product.md section 10). One hub serves four brands, each with its own branch and
POS host on loopback:

  DEMO  (GOOD)  the reference orderpos, healthy throughout;
  BLACK         a black hole: accepts connections and never answers (read time-outs);
  DOWN          nothing listens on its port (refused connects);
  STALL         a listener whose accept queue is full, so connects time out.

First the GOOD brand alone for a few seconds (its baseline latency), then all four under a steady platform load
while the three bad POS systems stay bad: every GOOD order must reach its POS while they are bad, and at least
1,000 orders per bad POS (300 in the short run) are left waiting. Then the bad ones recover (real orderpos
instances on their ports, sharing the POS database): every order of every brand must arrive exactly once, no job
may be dead, and the attempt log must show nothing sent to a host while its breaker was open but one probe at a
time, spaced by the probe interval. The breaker metric must have shown 2 (open) for each bad host while it was
bad and 0 for the GOOD host throughout.

Printed, not asserted: the GOOD brand's commit -> POS latency p50/p99/max alone and beside the bad neighbours,
measured from the databases (hub.orders.created_at, the order's transaction, against pos.orders.created_at, the
POS stored it; both clocks are the one PostgreSQL cluster's), and commit -> answer recorded (the delivered
attempt's attempted_at + latency_ms, the hub's clock)."""
import math
import tempfile
import threading
import time

from faultproxy import BlackHole, Stalled
from lib import (HUB, SHORT, Platform, Setup, finish, free_port, json_log, log, percentile, pos_login, psql, run,
                 scrape_metrics)

READ_TIMEOUT_MS, CONNECT_TIMEOUT_MS = 2000, 1000
FAILURES, PROBE_MS, PROBE_MAX_MS = 5, 1000, 4000
TOLERANCE = 0.05  # s: log times have millisecond precision; attempted_at and the log come from one host clock
if SHORT:  # about 1,000 orders per bad POS are expected here too; fewer than 500 fails
    BASELINE_S, FAULT_S, GOOD_RATE, BAD_RATE, NEED_STUCK = 5, 45, 40, 25, 500
else:
    BASELINE_S, FAULT_S, GOOD_RATE, BAD_RATE, NEED_STUCK = 10, 60, 100, 20, 1000
FULL_NEED_STUCK = 1000
UPDATE_RATIO, RETRY_RATIO = 0.1, 0.05  # the rest of the requests are new orders
BAD = ["BLACK", "DOWN", "STALL"]

problems = []
t_start = time.time()
setup = Setup(tempfile.mkdtemp(prefix="rel-s9-"))
if "--forward-breaker-failures" not in run(HUB, "serve", "--help"):
    problems.append("orderhub serve does not know --forward-breaker-failures: no breaker to test")
    finish(problems)

branches = setup.add_brands(BAD)
branches["DEMO"] = "DEMO-1"
good_port = setup.pos_port
setup.set_pos(good_port)
pos_good = setup.start_pos()
black = BlackHole(free_port())
stall = Stalled(free_port())
ports = {"DEMO": good_port, "BLACK": black.port, "DOWN": free_port(), "STALL": stall.port}
host = {b: f"http://127.0.0.1:{p}" for b, p in ports.items()}
for brand in BAD:  # tokens from the healthy POS: every orderpos of this run shares its database
    setup.set_pos_token(brand, ports[brand], pos_login(good_port, f"hub@{brand.lower()}.rel.test"))
log(f"POS hosts: {host}")

hub_args = ["--forward-timeout-ms", str(READ_TIMEOUT_MS), "--forward-connect-timeout-ms", str(CONNECT_TIMEOUT_MS),
            "--forward-breaker-failures", str(FAILURES), "--forward-breaker-probe-ms", str(PROBE_MS),
            "--forward-breaker-probe-max-ms", str(PROBE_MAX_MS), "--forward-give-up-after", "10m"]
hub_port = free_port()
hub = setup.start_hub(hub_port, *hub_args)


class Sampler:
    """Calls `sample()` every `every` seconds in a thread of its own (at most 15 minutes) until stop(); each call
    returns a sample to keep, or None."""

    def __init__(self, every):
        self.every = every
        self.samples = []
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        deadline = time.time() + 900
        while not self.stop_flag.is_set() and time.time() < deadline:
            got = self.sample()
            if got is not None:
                self.samples.append((time.time(), *got))
            self.stop_flag.wait(self.every)

    def stop(self):
        self.stop_flag.set()
        self.thread.join(timeout=10)


class MetricsWatch(Sampler):
    """Scrapes the hub's /metrics every 0.25 s: samples (time, {host: state}, {host: in_flight}, {host: queued})."""

    def __init__(self, port):
        self.port = port
        super().__init__(0.25)

    def sample(self):
        m = scrape_metrics(self.port)
        if not m:
            return None
        by = {"orderhub_pos_breaker_state": {}, "orderhub_pos_in_flight": {}, "orderhub_pos_queued": {}}
        for (name, labels), v in m.items():
            if name in by:
                by[name][dict(labels).get("host", "")] = v
        return by["orderhub_pos_breaker_state"], by["orderhub_pos_in_flight"], by["orderhub_pos_queued"]

    def max_of(self, field, h, since=0.0, until=float("inf")):
        vals = [s[field].get(h) for s in self.samples if since <= s[0] <= until and h in s[field]]
        return max(vals) if vals else None


def platform(brand, prefix, order_rate):
    requests = order_rate / (1 - UPDATE_RATIO - RETRY_RATIO)
    workers = max(2, math.ceil(requests / 10))  # each about 10 requests/s: pace minus a request's ~5 ms
    return Platform(lambda: hub_port, setup.webhook_path, workers=workers, update_ratio=UPDATE_RATIO,
                    retry_ratio=RETRY_RATIO, prefix=prefix, pace=max(0.0, workers / requests - 0.005),
                    branch_id=branches[brand])


class JobWatch(Sampler):
    """Counts the leased (in_flight) jobs of each brand in the database every 0.5 s: while a host's breaker is open
    its jobs must stay pending there (at most the probe leased), not claimed into a forwarder's memory. Samples
    (time, {brand: in_flight jobs})."""

    def __init__(self):
        super().__init__(0.5)

    def sample(self):
        try:
            rows = psql(setup.cluster.url, "SELECT o.brand_id || '|' || count(*) FROM hub.forward_jobs j JOIN "
                                           "hub.orders o ON o.id = j.order_id WHERE j.state = 'in_flight' "
                                           "GROUP BY o.brand_id")
        except RuntimeError:
            return None
        return ({r.split("|")[0]: int(r.split("|")[1]) for r in rows.splitlines() if r},)


watch = MetricsWatch(hub_port)

# A few orders first, so that the baseline does not measure the GOOD POS's first login and cold connections.
warm = platform("DEMO", "GW", GOOD_RATE)
warm.run(1, drain=10)
time.sleep(1)

# ---- the GOOD brand alone: its baseline ----
log(f"GOOD alone at ~{GOOD_RATE} orders/s for {BASELINE_S} s")
alone = platform("DEMO", "GA", GOOD_RATE)
alone.run(BASELINE_S, drain=10)

# ---- all four, the three bad POS systems bad ----
log(f"all brands: GOOD ~{GOOD_RATE} orders/s, each bad one ~{BAD_RATE} orders/s, for {FAULT_S} s")
t_fault = time.time()
jobs_watch = JobWatch()
senders = {"DEMO": platform("DEMO", "GN", GOOD_RATE)}
senders.update({b: platform(b, b[:2], BAD_RATE) for b in BAD})
threads = [p.run_in_thread(FAULT_S, drain=20) for p in senders.values()]
for t in threads:
    t.join(FAULT_S + 40)
t_load_end = time.time()
good_prefixes = ("GW-", "GA-", "GN-")


def jobs_by_brand():
    """{brand: {state: count}} of the forwarding jobs, and {brand: max attempts}."""
    states, attempts = {}, {}
    for line in psql(setup.cluster.url, "SELECT o.brand_id || '|' || j.state || '|' || count(*) || '|' || "
                                        "max(j.attempts) FROM hub.forward_jobs j "
                                        "JOIN hub.orders o ON o.id = j.order_id "
                                        "GROUP BY o.brand_id, j.state ORDER BY o.brand_id, j.state").splitlines():
        brand, state, n, a = line.split("|")
        states.setdefault(brand, {})[state] = int(n)
        attempts[brand] = max(attempts.get(brand, 0), int(a))
    return states, attempts


deadline = time.time() + 60
while time.time() < deadline:
    states, _ = jobs_by_brand()
    good_left = sum(n for s, n in states.get("DEMO", {}).items() if s != "delivered")
    if good_left == 0:
        break
    time.sleep(0.5)
states, attempts = jobs_by_brand()
good_left = sum(n for s, n in states.get("DEMO", {}).items() if s != "delivered")
log(f"jobs while the bad POS systems are still bad: {states}; max attempts {attempts}")
if good_left:
    problems.append(f"{good_left} GOOD orders not delivered 60 s after the load ended, with the bad POS systems bad")
stuck = {b: sum(n for s, n in states.get(b, {}).items() if s in ("pending", "in_flight")) for b in BAD}
print(f"orders waiting for the bad POS systems: {stuck} (need {NEED_STUCK} each"
      f"{'; a short run: the full run needs ' + str(FULL_NEED_STUCK) if SHORT else ''})", flush=True)
for b in BAD:
    if stuck[b] < NEED_STUCK:
        problems.append(f"only {stuck[b]} orders waiting for {b} (need {NEED_STUCK}): the load was too light")
    if states.get(b, {}).get("delivered"):
        problems.append(f"{states[b]['delivered']} {b} orders delivered while its POS was bad: the fault did not hold")
health_exists = psql(setup.cluster.url, "SELECT to_regclass('hub.pos_connection_health') IS NOT NULL") == "t"
if health_exists:
    health = dict(l.split("|") for l in psql(setup.cluster.url, "SELECT brand_id || '|' || state FROM "
                                                                 "hub.pos_connection_health").splitlines() if l)
    print(f"hub.pos_connection_health while bad: {health}", flush=True)
    problems += [f"pos_connection_health of {b} is {health.get(b)!r} while its POS is bad, not 'open'"
                 for b in BAD if health.get(b) != "open"]
    if health.get("DEMO", "closed") != "closed":
        problems.append(f"pos_connection_health of the GOOD brand is {health['DEMO']!r}")

# ---- recovery ----
jobs_watch.stop()
black.stop()
stall.stop()
log("bad POS systems recover: orderpos on their ports")
t_recover = time.time()
recovered = {b: setup.start_pos(ports[b]) for b in BAD}
deadline = time.time() + 120
while time.time() < deadline:
    states, attempts = jobs_by_brand()
    if all(set(s) == {"delivered"} for s in states.values()):
        break
    time.sleep(0.5)
t_end = time.time()
states, attempts = jobs_by_brand()
log(f"jobs after recovery: {states}; max attempts {attempts}")
watch.stop()
last_delivery = dict(l.split("|") for l in psql(
    setup.cluster.url, "SELECT o.brand_id || '|' || extract(epoch FROM max(a.attempted_at)) FROM "
                       "hub.pos_delivery_attempts a JOIN hub.orders o ON o.id = a.order_id "
                       "WHERE a.outcome = 'delivered' GROUP BY o.brand_id").splitlines() if l)
for b in BAD:
    if b in last_delivery:
        print(f"{b}: {stuck[b]} waiting orders drained {float(last_delivery[b]) - t_recover:.1f} s after its POS "
              f"came back", flush=True)
for brand, s in states.items():
    if set(s) != {"delivered"}:
        problems.append(f"{brand} jobs not all delivered 120 s after recovery: {s}")
    if s.get("dead"):
        problems.append(f"{s['dead']} {brand} jobs dead (attempts or give-up time used up in this run)")

# ---- every order exactly once ----
url, pos_url = setup.cluster.url, setup.cluster.pos_url
stored = {}  # external id -> (hub order id, brand)
for line in psql(url, "SELECT external_id || '|' || id || '|' || brand_id FROM hub.orders").splitlines():
    ext, oid, brand = line.split("|")
    stored[ext] = (oid, brand)
at_pos = {}  # external id -> [brand, ...]
for line in psql(pos_url, "SELECT partner_reference || '|' || brand_id FROM pos.orders").splitlines():
    ref, brand = line.split("|")
    at_pos.setdefault(ref.split(":", 1)[1], []).append(brand)
delivered_twice = psql(url, "SELECT count(*) FROM (SELECT order_id FROM hub.pos_delivery_attempts "
                            "WHERE outcome = 'delivered' GROUP BY order_id HAVING count(*) > 1) d")
existing = sum(1 for p in [pos_good, *recovered.values()] for e in json_log(p.log_path)
               if e.get("msg") == "order" and e.get("outcome") == "existing")
summary = []
for brand, p in [("DEMO", warm), ("DEMO", alone), *senders.items()]:
    acked = p.acked
    lost = [e for e in acked if e not in stored]
    wrong = [e for e in acked if e in stored and (stored[e][0] != acked[e] or stored[e][1] != brand)]
    missing = [e for e in acked if e in stored and not at_pos.get(e)]
    misplaced = [e for e in acked if at_pos.get(e) and at_pos[e] != [brand]]
    problems += [f"acknowledged {brand} order {e} is not stored" for e in lost[:5]]
    problems += [f"{brand} order {e} stored under another id or brand" for e in wrong[:5]]
    problems += [f"{brand} order {e} never reached its POS" for e in missing[:5]]
    problems += [f"{brand} order {e} is at the POS as {at_pos[e]}" for e in misplaced[:5]]
    problems += [f"{brand} ({p.prefix}): {b}" for b in p.bad_answers[:5]]
    if p.non200:
        problems.append(f"ingestion of {brand} answered non-200 beside the bad POS systems: {p.non200}")
    if p.gave_up:
        problems.append(f"{p.gave_up} {brand} requests never got a 200")
    summary.append(f"{brand}/{p.prefix}: ok={len(acked)} at_pos={len(acked) - len(missing)} lost={len(lost)} "
                   f"ingest_p99_ms={p.p99_ms():.1f}")
stray = [e for e in stored if not e.startswith(good_prefixes + tuple(f"{b[:2]}-" for b in BAD))]
problems += [f"order {e} of no sender" for e in stray[:5]]
if delivered_twice != "0":
    problems.append(f"{delivered_twice} orders have more than one delivered attempt")
if existing:
    problems.append(f"the POS systems were sent {existing} orders they already had (outcome existing)")

# ---- the GOOD brand's latency (printed, not asserted) ----
hub_times = {}
for line in psql(url, "SELECT o.external_id || '|' || extract(epoch FROM o.created_at) || '|' || "
                      "extract(epoch FROM a.attempted_at) + a.latency_ms / 1000.0 FROM hub.orders o "
                      "JOIN hub.pos_delivery_attempts a ON a.order_id = o.id AND a.outcome = 'delivered' "
                      "WHERE o.brand_id = 'DEMO'").splitlines():
    ext, created, answered = line.split("|")
    hub_times[ext] = (float(created), float(answered))
pos_times = {}
for line in psql(pos_url, "SELECT substr(partner_reference, 6) || '|' || extract(epoch FROM created_at) "
                          "FROM pos.orders WHERE brand_id = 'DEMO'").splitlines():
    ext, t = line.split("|")
    pos_times[ext] = float(t)


def latency(prefix):
    to_pos = [(pos_times[e] - c) * 1000 for e, (c, _) in hub_times.items() if e.startswith(prefix) and e in pos_times]
    to_answer = [(a - c) * 1000 for e, (c, a) in hub_times.items() if e.startswith(prefix)]
    return (f"{len(to_pos)} orders: commit -> POS stored p50 {percentile(to_pos, .5):.1f} ms, "
            f"p99 {percentile(to_pos, .99):.1f} ms, max {max(to_pos, default=float('nan')):.1f} ms; "
            f"commit -> POS answer received (attempted_at + latency_ms) p50 {percentile(to_answer, .5):.1f} ms, "
            f"p99 {percentile(to_answer, .99):.1f} ms")


print(f"BENCHMARK GOOD alone ({alone.workers} senders, {len(alone.acked) / BASELINE_S:.0f} orders/s): "
      f"{latency('GA-')}", flush=True)
print(f"BENCHMARK GOOD beside BLACK, DOWN and STALL ({len(senders['DEMO'].acked) / FAULT_S:.0f} orders/s): "
      f"{latency('GN-')}", flush=True)

# ---- the breakers: log, attempt log, black hole, metrics ----
events = json_log(hub.log_path)
attempt_lines = [e for e in events if e.get("msg") == "forward attempt"]
no_probe_field = sum(1 for e in attempt_lines if not isinstance(e.get("probe"), bool))
if no_probe_field:
    problems.append(f"{no_probe_field} 'forward attempt' log lines without a boolean probe field")
probe_lines = {(e.get("order_id"), e.get("host")) for e in attempt_lines if e.get("probe") is True}
for brand in ["DEMO", *BAD]:
    h = host[brand]
    changes = [e for e in events if e.get("host") == h and e.get("msg") in ("POS breaker opened",
                                                                              "POS breaker closed")]
    probing = [e["epoch"] for e in events if e.get("host") == h and e.get("msg") == "POS breaker probing"]
    windows, opened = [], None
    for e in changes:
        if e["msg"] == "POS breaker opened" and opened is None:
            opened = e
        elif e["msg"] == "POS breaker closed" and opened is not None:
            windows.append((opened["epoch"], e["epoch"]))
            opened = None
    if opened is not None:
        windows.append((opened["epoch"], None))
    opened_lines = [e for e in changes if e["msg"] == "POS breaker opened"]
    if brand == "DEMO":
        if opened_lines:
            problems.append(f"the GOOD host's breaker opened {len(opened_lines)} times: "
                            f"{[e.get('error') for e in opened_lines[:3]]}")
        continue
    if not any(e["epoch"] < t_recover for e in opened_lines):
        problems.append(f"{brand}'s breaker never opened while its POS was bad")
        continue
    if windows[-1][1] is None:
        problems.append(f"{brand}'s breaker did not close after its POS recovered")
    bad_fields = [e for e in opened_lines if not all(k in e for k in ("failures", "error", "probe_in_ms"))]
    if bad_fields:
        problems.append(f"'POS breaker opened' for {brand} without failures/error/probe_in_ms: {bad_fields[0]}")
    attempts_h = []
    for line in psql(url, "SELECT extract(epoch FROM attempted_at) || '|' || latency_ms || '|' || order_id || "
                          f"'|' || outcome FROM hub.pos_delivery_attempts WHERE url LIKE '{h}/%' "
                          "ORDER BY attempted_at").splitlines():
        t, lat, oid, outcome = line.split("|")
        attempts_h.append((float(t), int(lat) / 1000.0, oid, outcome))
    in_open, allowed, span = 0, 0, 0.0
    for o, c in windows:
        c_eff = c if c is not None else t_end
        inside = [a for a in attempts_h if o + TOLERANCE < a[0] < c_eff - TOLERANCE]
        limit = 1 + (c_eff - o) / (PROBE_MS * 0.8 / 1000)
        in_open += len(inside)
        allowed += int(limit)
        span += c_eff - o
        if len(inside) > limit:
            problems.append(f"{brand}: {len(inside)} attempts started while its breaker was open for "
                            f"{c_eff - o:.1f} s (at most {int(limit)} probes)")
        for a, b in zip(inside, inside[1:]):
            if b[0] < a[0] + a[1] - TOLERANCE:
                problems.append(f"{brand}: two attempts at once while its breaker was open: started "
                                f"{a[0]:.3f} ({a[1] * 1000:.0f} ms) and {b[0]:.3f}")
                break
        not_probes = [a for a in inside if (a[2], h) not in probe_lines]
        if not_probes:
            problems.append(f"{brand}: {len(not_probes)} attempts while its breaker was open not logged as "
                            f"probes, e.g. order {not_probes[0][2]} at {not_probes[0][0]:.3f}")
        if brand == "BLACK":  # what the black hole itself received while the breaker was open
            # From the earliest moment a probe may start (opening + 0.8 x probe-ms): a delivery sent just before the
            # breaker opened may reach the black hole a few ms after the opening's log line, and is no probe.
            first_probe = o + PROBE_MS * 0.8 / 1000 - TOLERANCE
            got = [r for r in black.requests if r[1] is not None and first_probe < r[1] < min(c_eff, t_recover)]
            sent_db = [a for a in inside if first_probe - TOLERANCE < a[0] < t_recover]
            if len(got) > len(sent_db):
                problems.append(f"BLACK received {len(got)} requests while its breaker was open, the attempt log "
                                f"has {len(sent_db)}")
    # Leased jobs of this brand while its breaker was open, once the deliveries sent before it opened have
    # timed out: the probe at most.
    settled = [(t, c.get(brand, 0)) for t, c in jobs_watch.samples
               if any(o + READ_TIMEOUT_MS / 1000 + 1 < t < (c_ if c_ is not None else t_end) for o, c_ in windows)]
    most = max((n for _, n in settled), default=None)
    if most is not None and most > 1:
        t_most = next(t for t, n in settled if n == most)
        problems.append(f"{brand}: {most} jobs leased (in_flight) at {t_most:.1f} while its breaker was open: "
                        "claimed into memory instead of left in the database")
    print(f"{brand}: at most {most} jobs leased while open ({len(settled)} samples)", flush=True)
    print(f"{brand}: breaker opened {len(opened_lines)}x (first after "
          f"{opened_lines[0]['epoch'] - t_fault:.1f} s of load: {opened_lines[0].get('error')!r}), open "
          f"{span:.1f} s in all; {in_open} attempts started while open (bound {allowed}), "
          f"{len(probing)} 'probing' lines; {len(attempts_h)} attempts in all; max attempts of a job "
          f"{attempts.get(brand)}", flush=True)
print(f"BLACK (the black hole) held {len(black.requests)} connections, "
      f"{sum(1 for r in black.requests if r[1] is not None)} with a request", flush=True)

# The metric: 2 for each bad host while it was bad (after its breaker had time to open), 0 for GOOD throughout.
if not watch.samples:
    problems.append("no /metrics scrape succeeded")
for brand in ["DEMO", *BAD]:
    h = host[brand]
    seen = watch.max_of(1, h, t_fault, t_recover)
    if brand == "DEMO":
        worst = watch.max_of(1, h)
        if worst is None:
            problems.append(f"orderhub_pos_breaker_state has no series for the GOOD host {h}")
        elif worst != 0:
            problems.append(f"orderhub_pos_breaker_state of the GOOD host reached {worst:.0f}")
        print(f"DEMO metrics: breaker max {worst}, in flight max {watch.max_of(2, h)}, queued max "
              f"{watch.max_of(3, h)}", flush=True)
        continue
    if seen != 2:
        problems.append(f"orderhub_pos_breaker_state of {brand} ({h}) peaked at {seen} while it was bad, not 2")
    final = [s[1].get(h) for s in watch.samples if s[0] > t_end - 2]
    if final and final[-1] not in (0, None):
        problems.append(f"orderhub_pos_breaker_state of {brand} is {final[-1]:.0f} after it recovered")
    print(f"{brand} metrics while bad: breaker max {seen}, in flight max {watch.max_of(2, h, t_fault, t_recover)}, "
          f"queued max {watch.max_of(3, h, t_fault, t_recover)}", flush=True)

print(f"s9_noisy_neighbour: {'; '.join(summary)}; stuck={stuck}; delivered_twice={delivered_twice} "
      f"existing={existing}; whole run {time.time() - t_start:.0f} s", flush=True)
for p in problems[:40]:
    print(f"PROBLEM: {p}", flush=True)
hub.stop()
for p in [pos_good, *recovered.values()]:
    p.stop()
finish(problems)
